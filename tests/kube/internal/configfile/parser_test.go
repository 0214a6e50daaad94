package configfile

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The vectors of k3s-io/k3s pkg/configfilearg/parser_test.go, against the
// same testdata layout.

func TestFindStart(t *testing.T) {
	tests := []struct {
		name           string
		args           []string
		prefix, suffix []string
		found          bool
	}{
		{"default case", nil, nil, nil, false},
		{"simple case", []string{"server"}, []string{"server"}, []string{}, true},
		{"also simple case", []string{"server", "foo"}, []string{"server"}, []string{"foo"}, true},
		{"longer simple case", []string{"server", "foo", "bar"}, []string{"server"}, []string{"foo", "bar"}, true},
		{"not found", []string{"not-server", "foo", "bar"}, []string{"not-server", "foo", "bar"}, nil, false},
		{"command (with optional subcommands) but no flags", []string{"etcd-snapshot"}, []string{"etcd-snapshot"}, []string{}, true},
		{"command (with optional subcommands) and flags", []string{"etcd-snapshot", "-f"}, []string{"etcd-snapshot"}, []string{"-f"}, true},
		{"command and subcommand with no flags", []string{"etcd-snapshot", "list"}, []string{"etcd-snapshot", "list"}, []string{}, true},
		{"command and subcommand with flags", []string{"etcd-snapshot", "list", "-f"}, []string{"etcd-snapshot", "list"}, []string{"-f"}, true},
		{"another command and subcommand with flags", []string{"etcd-snapshot", "save", "--s3"}, []string{"etcd-snapshot", "save"}, []string{"--s3"}, true},
		{"command and too many subcommands", []string{"etcd-snapshot", "list", "delete", "foo", "bar"}, []string{"etcd-snapshot", "list"}, []string{"delete", "foo", "bar"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Parser{After: []string{"server", "agent", "etcd-snapshot:1"}}
			prefix, suffix, found := p.findStart(tt.args)
			if !reflect.DeepEqual(prefix, tt.prefix) || !reflect.DeepEqual(suffix, tt.suffix) || found != tt.found {
				t.Errorf("findStart(%q) = %q, %q, %v; want %q, %q, %v", tt.args, prefix, suffix, found, tt.prefix, tt.suffix, tt.found)
			}
		})
	}
}

func TestFindConfigFileFlag(t *testing.T) {
	tests := []struct {
		name, def, env string
		arg            []string
		want           string
	}{
		{name: "default case"},
		{name: "simple case", arg: []string{"asdf", "-c", "value"}, want: "value"},
		{name: "invalid args string", arg: []string{"-c"}},
		{name: "empty arg value", arg: []string{"-c="}},
		{name: "empty arg value override default", def: "def", arg: []string{"-c="}},
		{name: "invalid args always return no value", def: "def", arg: []string{"-c"}},
		{name: "value override default", def: "def", arg: []string{"-c", "value"}, want: "value"},
		{name: "default gets used when nothing is passed", def: "def", want: "def"},
		{name: "env override args", def: "def", env: "env", arg: []string{"-c", "value"}, want: "env"},
		{name: "garbage in start and end", def: "def", arg: []string{"before", "-c", "value", "after"}, want: "value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Parser{ConfigFlags: []string{"--config", "-c"}, EnvName: "_TEST_FLAG_ENV", DefaultConfig: tt.def}
			t.Setenv(p.EnvName, tt.env)
			if got := p.findConfigFileFlag(tt.arg); got != tt.want {
				t.Errorf("findConfigFileFlag(%q) = %q, want %q", tt.arg, got, tt.want)
			}
		})
	}
}

var testDataOutput = []string{
	"--foo-bar=bar-foo",
	"--alice=bob",
	"--a-slice=1",
	"--a-slice=1.5",
	"--a-slice=2",
	"--a-slice=",
	"--a-slice=three",
	"--isempty=",
	"-c=b",
	"--isfalse=false",
	"--islast=true",
	"--b-string=one",
	"--b-string=two",
	"--c-slice=one",
	"--c-slice=two",
	"--c-slice=three",
	"--d-slice=three",
	"--d-slice=four",
	"--f-string=beta",
	"--e-slice=one",
	"--e-slice=two",
}

func TestParse(t *testing.T) {
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name, env, def string
		arg, want      []string
		wantErr        bool
	}{
		{name: "default case", env: "_TEST_ENV", def: "./testdata/data.yaml"},
		{name: "read config file when not specified", env: "_TEST_ENV", def: "./testdata/data.yaml",
			arg: []string{"server"}, want: cat([]string{"server"}, testDataOutput)},
		{name: "ignore missing config when not set", def: "missing", arg: []string{"server"}, want: []string{"server"}},
		{name: "ignore missing config when set", def: "missing", arg: []string{"server", "-c=missing"}, want: []string{"server", "-c=missing"}},
		{name: "fail when config cannot be parsed", def: "./testdata/invalid.yaml", arg: []string{"server"}, wantErr: true},
		{name: "fail when dropin cannot be parsed", def: "./testdata/invalid-dropin.yaml", arg: []string{"server"}, wantErr: true},
		{name: "read config file", def: "missing",
			arg:  []string{"before", "server", "before", "-c", "./testdata/data.yaml", "after"},
			want: cat([]string{"before", "server"}, testDataOutput, []string{"before", "-c", "./testdata/data.yaml", "after"})},
		{name: "read single config file", def: "missing",
			arg: []string{"before", "server", "before", "-c", "./testdata/data.yaml.d/02-data.yaml", "after"},
			want: []string{"before", "server",
				"--foo-bar=bar-foo", "--b-string=two", "--c-slice=three", "--d-slice=three", "--d-slice=four",
				"--e-slice=one", "--e-slice=two",
				"before", "-c", "./testdata/data.yaml.d/02-data.yaml", "after"}},
		{name: "dropins only", def: "./testdata/dropin-only.yaml", arg: []string{"agent"},
			want: []string{"agent", "--foo-bar=bar-foo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Parser{After: []string{"server", "agent"}, ConfigFlags: []string{"-c", "--config"}, EnvName: tt.env, DefaultConfig: tt.def}
			got, err := p.Parse(tt.arg)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Parse() error = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse() = %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestFindString(t *testing.T) {
	tests := []struct {
		name, def, target, want string
		osArgs                  []string
	}{
		{"Default config does not exist", "missing", "", "", nil},
		{"A custom config exists, target exists", "./testdata/data.yaml", "alice", "bob", []string{"-c", "./testdata/data.yaml"}},
		{"A custom config exists, target does not exist", "./testdata/data.yaml", "tls", "", []string{"-c", "./testdata/data.yaml"}},
		{"Default config file does not exist but dropin exists, target does not exist", "./testdata/dropin-only.yaml", "tls", "", nil},
		{"Default config file does not exist but dropin exists, target exists", "./testdata/dropin-only.yaml", "foo-bar", "bar-foo", nil},
		{"Custom config file does not exist but dropin exists, target does not exist", "./testdata/defaultdata.yaml", "tls", "", []string{"-c", "./testdata/dropin-only.yaml"}},
		{"Custom config file does not exist but dropin exists, target exists", "./testdata/defaultdata.yaml", "foo-bar", "bar-foo", []string{"-c", "./testdata/dropin-only.yaml"}},
		{"Multiple custom configs exist, target exists in a dropin config", "./testdata/data.yaml", "f-string", "beta", []string{"-c", "./testdata/data.yaml"}},
		{"Multiple custom configs exist, multiple targets exist in multiple dropin config, replacement", "./testdata/data.yaml", "foo-bar", "bar-foo", []string{"-c", "./testdata/data.yaml"}},
		{"Multiple custom configs exist, multiple targets exist in multiple dropin config, appending", "./testdata/data.yaml", "b-string", "one,two", []string{"-c", "./testdata/data.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Parser{ConfigFlags: []string{"-c", "--config"}, EnvName: "_TEST_ENV", DefaultConfig: tt.def}
			got, err := p.FindString(tt.osArgs, tt.target)
			if err != nil || got != tt.want {
				t.Errorf("FindString() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestGetArgs(t *testing.T) {
	sched := func() map[string]string {
		return map[string]string{
			"kubeconfig":                "/d/server/cred/scheduler.kubeconfig",
			"authorization-kubeconfig":  "/d/server/cred/scheduler.kubeconfig",
			"authentication-kubeconfig": "/d/server/cred/scheduler.kubeconfig",
			"bind-address":              "127.0.0.1",
			"secure-port":               "10259",
			"profiling":                 "false",
		}
	}
	base := []string{
		"--authentication-kubeconfig=/d/server/cred/scheduler.kubeconfig",
		"--authorization-kubeconfig=/d/server/cred/scheduler.kubeconfig",
		"--bind-address=127.0.0.1",
		"--kubeconfig=/d/server/cred/scheduler.kubeconfig",
	}
	tests := []struct {
		name    string
		initial map[string]string
		extra   []string
		want    []string
	}{
		{"defaults only, sorted", sched(), nil,
			append(append([]string{}, base...), "--profiling=false", "--secure-port=10259")},
		{"config added, repeated key kept in order, default replaced", sched(),
			[]string{"config=/etc/s.yaml", "v=2", "profiling=true", "v=4"},
			append(append([]string{}, base[0], base[1], base[2], "--config=/etc/s.yaml", base[3]),
				"--profiling=true", "--secure-port=10259", "--v=2", "--v=4")},
		{"leading dashes and bare key", map[string]string{}, []string{"--leader-elect", "--config=/a"},
			[]string{"--config=/a", "--leader-elect=true"}},
		{"append and prepend to a default", map[string]string{"feature-gates": "A=true"},
			[]string{"feature-gates+=B=true", "feature-gates-=C=true"},
			[]string{"--feature-gates=C=true", "--feature-gates=A=true", "--feature-gates=B=true"}},
		{"two configs both passed", map[string]string{}, []string{"config=/a", "config=/b"},
			[]string{"--config=/a", "--config=/b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GetArgs(tt.initial, tt.extra); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("GetArgs() = %q\nwant %q", got, tt.want)
			}
		})
	}
	if v, ok := LastArgValue("config", []string{"--config=/a", "--v=2", "--config=/b"}); !ok || v != "/b" {
		t.Errorf("LastArgValue = %q, %v", v, ok)
	}
	if _, ok := LastArgValue("config", []string{"--v=2"}); ok {
		t.Errorf("LastArgValue found a missing key")
	}
}

func TestFlagParse(t *testing.T) {
	defs := ServerFlags()
	v, err := Parse(defs, []string{
		"--data-dir=/x", "-o", "/k.yaml", "--write-kubeconfig-mode", "644",
		"--kube-scheduler-arg=config=/a", "--kube-scheduler-arg", "v=2",
		"--disable=traefik", "--disable", "servicelb", "--cluster-init", "--disable-cloud-controller=false",
		"-t", "secret", "--node-name=n1", "--https-listen-port", "6443",
	})
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]string{"data-dir": "/x", "write-kubeconfig": "/k.yaml", "write-kubeconfig-mode": "644", "token": "secret", "node-name": "n1"}
	for k, want := range checks {
		if got := v.String(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if got := v.Slice("kube-scheduler-arg"); !reflect.DeepEqual(got, []string{"config=/a", "v=2"}) {
		t.Errorf("kube-scheduler-arg = %q", got)
	}
	if got := v.Slice("disable"); !reflect.DeepEqual(got, []string{"traefik", "servicelb"}) {
		t.Errorf("disable = %q", got)
	}
	if !v.Bool("cluster-init") || v.Bool("disable-cloud-controller") || !v.Bool("tls-san-security") {
		t.Errorf("bools: %v", v.Bools)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"-x"}, "flag provided but not defined: -x"},
		{[]string{"--https-listen-port=abc"}, `invalid value "abc" for flag -https-listen-port: parse error`},
		{[]string{"--data-dir"}, "flag needs an argument: -data-dir"},
	} {
		if _, err := Parse(defs, tc.args); err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%q) error = %v, want %q", tc.args, err, tc.want)
		}
	}
	if _, err := Parse(AgentFlags(), []string{"--kube-scheduler-arg=x"}); err == nil {
		t.Errorf("agent accepted --kube-scheduler-arg")
	}

	t.Setenv("K3S_KUBECONFIG_OUTPUT", "/env.yaml")
	t.Setenv("K3S_TOKEN", "envtok")
	v, err = Parse(defs, []string{"--token=clitok"})
	if err != nil {
		t.Fatal(err)
	}
	if v.String("write-kubeconfig") != "/env.yaml" || v.String("token") != "clitok" {
		t.Errorf("env handling: %q %q", v.String("write-kubeconfig"), v.String("token"))
	}
}

// The k3s double's whole path: files, then command line, in both readings of
// how a command-line repeatable flag meets the files' list.
func TestEffectiveSchedulerArgs(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(cfg, "write-kubeconfig-mode: \"0644\"\nkube-scheduler-arg:\n- v=2\nunknown-key: 1\n")
	write(filepath.Join(cfg+".d", "50-other.yaml"), "kube-scheduler-arg+:\n- leader-elect=false\n")
	write(filepath.Join(cfg+".d", "99-baremetal-k3s-scheduler.yaml"), "kube-scheduler-arg+:\n- config=/etc/rancher/k3s/kube-scheduler/config.yaml\n")
	write(filepath.Join(cfg+".d", "README.txt"), "kube-scheduler-arg: ignored\n")

	run := func(mode SliceMode, cli ...string) ([]string, []string) {
		t.Helper()
		var warnings []string
		p := DefaultParser(func(f string, a ...any) { warnings = append(warnings, f) })
		p.EnvName = "_NO_SUCH_ENV"
		args := append([]string{"k3s", "server", "--config", cfg}, cli...)
		parts, err := p.ParseParts(args)
		if err != nil || parts == nil {
			t.Fatalf("ParseParts: %v %v", parts, err)
		}
		file := ApplySliceMode(ServerFlags(), parts.File, parts.CLI, mode)
		v, err := Parse(ServerFlags(), append(file, parts.CLI...))
		if err != nil {
			t.Fatal(err)
		}
		if v.String("write-kubeconfig-mode") != "0644" {
			t.Errorf("write-kubeconfig-mode = %q", v.String("write-kubeconfig-mode"))
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "Unknown flag") {
			t.Errorf("warnings = %q", warnings)
		}
		return v.Slice("kube-scheduler-arg"), parts.Files
	}

	got, files := run(SliceAppend)
	want := []string{"v=2", "leader-elect=false", "config=/etc/rancher/k3s/kube-scheduler/config.yaml"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("files only: %q, want %q", got, want)
	}
	if len(files) != 3 {
		t.Errorf("files read: %q", files)
	}
	got, _ = run(SliceAppend, "--kube-scheduler-arg=config=/cli.yaml")
	if !reflect.DeepEqual(got, append(want, "config=/cli.yaml")) {
		t.Errorf("append mode: %q", got)
	}
	got, _ = run(SliceReplace, "--kube-scheduler-arg", "config=/cli.yaml", "--disable=traefik")
	if !reflect.DeepEqual(got, []string{"config=/cli.yaml"}) {
		t.Errorf("replace mode: %q", got)
	}
	got, _ = run(SliceReplace, "--disable=traefik")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("replace mode, no scheduler arg on the command line: %q", got)
	}

	// A later file without "+" replaces the accumulated list.
	write(filepath.Join(cfg+".d", "60-replace.yaml"), "kube-scheduler-arg:\n- v=5\n")
	got, _ = run(SliceAppend)
	if !reflect.DeepEqual(got, []string{"v=5", "config=/etc/rancher/k3s/kube-scheduler/config.yaml"}) {
		t.Errorf("replacing file: %q", got)
	}
	if s, _ := (&Parser{ConfigFlags: []string{"-c"}, DefaultConfig: cfg}).FindString(nil, "kube-scheduler-arg"); s != "v=5,config=/etc/rancher/k3s/kube-scheduler/config.yaml" {
		t.Errorf("FindString = %q", s)
	}

	if m, err := SliceModeFromEnv(); err != nil || m != SliceAppend {
		t.Errorf("default slice mode %q %v", m, err)
	}
	t.Setenv("K3S_DOUBLE_CLI_SLICE", "replace")
	if m, _ := SliceModeFromEnv(); m != SliceReplace {
		t.Errorf("slice mode %q", m)
	}
	t.Setenv("K3S_DOUBLE_CLI_SLICE", "bogus")
	if _, err := SliceModeFromEnv(); err == nil {
		t.Errorf("bogus slice mode accepted")
	}
}
