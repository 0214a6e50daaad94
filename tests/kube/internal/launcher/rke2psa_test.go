package launcher

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestWithRKE2PSA(t *testing.T) {
	dir := t.TempDir()
	def := filepath.Join(dir, "etc", "rke2-pss.yaml")
	in := []string{"--allow-privileged=true", "--admission-control-config-file=/operator/own.yaml"}

	// given: its file first, nothing written
	got, err := withRKE2PSA(parseRKE2(t, "--pod-security-admission-config-file=/etc/rancher/rke2/ours.yaml"), def, in)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{"--admission-control-config-file=/etc/rancher/rke2/ours.yaml"}, in...)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if _, err := os.Stat(def); !os.IsNotExist(err) {
		t.Fatalf("default file written although the option was given: %v", err)
	}

	// not given: RKE2's privileged file, 0600, passed first
	got, err = withRKE2PSA(parseRKE2(t), def, in[:1])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"--admission-control-config-file=" + def, "--allow-privileged=true"}) {
		t.Fatalf("got %q", got)
	}
	b, err := os.ReadFile(def)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(def)
	if string(b) != rke2PSAPrivileged || st.Mode().Perm() != 0o600 || !strings.Contains(string(b), `enforce: "privileged"`) {
		t.Fatalf("%v %q", st.Mode(), b)
	}

	// written again at every start; an existing file keeps its mode; --profile=cis gives the restricted one
	if err := os.Chmod(def, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := withRKE2PSA(parseRKE2(t, "--profile=cis"), def, nil); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(def)
	st, _ = os.Stat(def)
	if string(b) != rke2PSARestricted || st.Mode().Perm() != 0o644 {
		t.Fatalf("%v %q", st.Mode(), b)
	}

	// the option from a config.yaml.d file of the rke2 server's (after config.yaml, which sets another)
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.MkdirAll(cfg+".d", 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		cfg:                                     "pod-security-admission-config-file: /etc/rancher/rke2/operator.yaml\n",
		filepath.Join(cfg+".d", "90-ours.yaml"): "pod-security-admission-config-file: /etc/rancher/rke2/ours.yaml\n",
	} {
		if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("RKE2_CONFIG_FILE", cfg)
	fl := rke2Flavor()
	v, _, _, code, ok := parseCommand([]string{"rke2", "server"}, fl, fl.prog.Server)
	if !ok {
		t.Fatalf("rke2 server parse exited %d", code)
	}
	if got, _ := withRKE2PSA(v, def, nil); !reflect.DeepEqual(got, []string{"--admission-control-config-file=/etc/rancher/rke2/ours.yaml"}) {
		t.Fatalf("from config.yaml.d: %q", got)
	}

	// a directory where the file goes: the error RKE2 gives
	if _, err := withRKE2PSA(parseRKE2(t), dir, nil); err == nil || !strings.Contains(err.Error(), "psa: failed to write psa config") {
		t.Fatalf("err %v", err)
	}
	if fl.psaFile != RKE2PSAFile || k3sFlavor.psaFile != "" {
		t.Fatal("flavors' PSA files")
	}
}
