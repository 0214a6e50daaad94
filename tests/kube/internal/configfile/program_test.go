package configfile

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRKE2Program(t *testing.T) {
	p := RKE2()
	if p.ConfigFile != "/etc/rancher/rke2/config.yaml" || p.ConfigEnv != "RKE2_CONFIG_FILE" ||
		p.DataDir != "/var/lib/rancher/rke2" || p.Kubeconfig != "/etc/rancher/rke2/rke2.yaml" {
		t.Fatalf("%+v", p)
	}
	for _, prog := range []Program{K3s, p} {
		for _, defs := range [][]Flag{prog.Server, prog.Agent} {
			if _, err := Parse(defs, nil); err != nil { // panics on a flag defined twice
				t.Fatalf("%s: %v", prog.Name, err)
			}
		}
	}
	byName := map[string]Flag{}
	for _, f := range p.Server {
		for _, n := range f.Names() {
			if _, dup := byName[n]; dup {
				t.Errorf("flag %s defined twice", n)
			}
			byName[n] = f
		}
	}
	for _, n := range []string{"kube-scheduler-arg", "kube-scheduler-extra-mount", "kube-scheduler-extra-env", "kube-apiserver-arg",
		"kube-apiserver-extra-mount", "cni", "profile", "kube-scheduler-image", "control-plane-probe-configuration", "pause-image", "c"} {
		if _, ok := byName[n]; !ok {
			t.Errorf("rke2 server lacks --%s", n)
		}
	}
	for _, n := range []string{"flannel-backend", "cluster-init", "https-listen-port", "docker", "disable-helm-controller"} {
		if _, ok := byName[n]; ok {
			t.Errorf("rke2 server accepts dropped --%s", n)
		}
	}
	if f := byName["token"]; f.EnvVar != "RKE2_TOKEN" {
		t.Errorf("token env %q", f.EnvVar)
	}
	if f := byName["config"]; f.EnvVar != "RKE2_CONFIG_FILE" || f.Default != "/etc/rancher/rke2/config.yaml" {
		t.Errorf("config %+v", f)
	}
	if f := byName["kube-scheduler-extra-mount"]; f.EnvVar != "RKE2_KUBE_SCHEDULER_EXTRA_MOUNT" || f.Kind != Slice {
		t.Errorf("extra-mount %+v", f)
	}
	// k3s keeps its own.
	if K3s.ConfigEnv != "K3S_CONFIG_FILE" || !reflect.DeepEqual(DefaultParser(nil).ValidFlags, map[string][]string{"server": FlagNames(ServerFlags())}) {
		t.Error("k3s parser changed")
	}
}

func TestRKE2ConfigFilesAndFlags(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("kube-scheduler-arg:\n- config=/etc/rancher/rke2/sched.yaml\ncni: canal\nflannel-backend: wireguard\nnot-a-flag: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cfg+".d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg+".d", "99-x.yaml"), []byte("kube-scheduler-extra-mount+:\n- /etc/ssl/ca.pem:/etc/ssl/ca.pem:ro\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RKE2_CONFIG_FILE", cfg)
	var warned []string
	p := RKE2()
	parts, err := p.Parser(func(f string, a ...any) { warned = append(warned, f) }).ParseParts([]string{"rke2", "server", "--kube-scheduler-arg=v=2"})
	if err != nil {
		t.Fatal(err)
	}
	wantFile := []string{"--kube-scheduler-arg=config=/etc/rancher/rke2/sched.yaml", "--cni=canal", "--kube-scheduler-extra-mount=/etc/ssl/ca.pem:/etc/ssl/ca.pem:ro"}
	if !reflect.DeepEqual(parts.File, wantFile) || len(warned) != 2 {
		t.Fatalf("file flags %q warnings %q", parts.File, warned)
	}
	v, err := Parse(p.Server, append(parts.File, parts.CLI...))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v.Slice("kube-scheduler-arg"), []string{"config=/etc/rancher/rke2/sched.yaml", "v=2"}) ||
		!reflect.DeepEqual(v.Slice("kube-scheduler-extra-mount"), []string{"/etc/ssl/ca.pem:/etc/ssl/ca.pem:ro"}) {
		t.Fatalf("%v", v.Slices)
	}
	// A dropped k3s flag on the command line is unknown to rke2.
	if _, err := Parse(p.Server, []string{"--flannel-backend=none"}); err == nil || !strings.Contains(err.Error(), "flag provided but not defined: -flannel-backend") {
		t.Fatalf("dropped flag: %v", err)
	}
	// RKE2 also skips unknown keys in an agent's files.
	warned = nil
	parts, err = p.Parser(func(f string, a ...any) { warned = append(warned, f) }).ParseParts([]string{"rke2", "agent"})
	if err != nil || len(warned) != 4 { // kube-scheduler-arg, cni (server only), flannel-backend, not-a-flag
		t.Fatalf("agent: %v %q %q", err, warned, parts.File)
	}
}
