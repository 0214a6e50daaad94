package launcher

import (
	"os"
	"path/filepath"
	"testing"
)

// k3s pkg/cli/cmds/server.go (DataDirFlag: "data-dir,d", EnvVar K3S_DATA_DIR)
// and agent.go (the agent's own data-dir flag, EnvVar K3S_DATA_DIR): urfave/cli
// takes the environment variable unless the command line sets the flag, and
// pkg/configfilearg puts config-file keys on the command line (before the
// user's flags). So -d/--data-dir beats data-dir: in config.yaml(.d), which
// beats K3S_DATA_DIR, which beats /var/lib/rancher/k3s (RKE2: RKE2_DATA_DIR).
func TestDataDirFromFlagConfigAndEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("K3S_DOUBLE_STATE", filepath.Join(dir, "state.json"))
	t.Setenv("K3S_DOUBLE_EVENTS", filepath.Join(dir, "events.jsonl"))
	noConfig := filepath.Join(dir, "none.yaml")
	withConfig := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(withConfig, []byte("data-dir: /srv/from-config\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, env, config string
		args              []string
		want              string
	}{
		{"default", "", noConfig, nil, "/var/lib/rancher/k3s"},
		{"K3S_DATA_DIR", "/srv/from-env", noConfig, nil, "/srv/from-env"},
		{"config file over K3S_DATA_DIR", "/srv/from-env", withConfig, nil, "/srv/from-config"},
		{"--data-dir over config and env", "/srv/from-env", withConfig, []string{"--data-dir=/srv/from-flag"}, "/srv/from-flag"},
		{"-d over env", "/srv/from-env", noConfig, []string{"-d", "/srv/from-flag"}, "/srv/from-flag"},
	}
	for _, c := range cases {
		t.Setenv("K3S_DATA_DIR", c.env)
		t.Setenv("K3S_CONFIG_FILE", c.config)
		v, _, _, code, ok := parseCommand(append([]string{"k3s", "server"}, c.args...), k3sFlavor, k3sFlavor.prog.Server)
		if !ok {
			t.Fatalf("%s: server parse exited %d", c.name, code)
		}
		s, err := newServer(k3sFlavor, v, newStateFile("server"))
		if err != nil || s.dataDir != c.want || s.serverDir != filepath.Join(c.want, "server") {
			t.Errorf("%s: server data dir %q %v, want %q", c.name, s.dataDir, err, c.want)
		}
		v, _, _, code, ok = parseCommand(append([]string{"k3s", "agent"}, c.args...), k3sFlavor, k3sFlavor.prog.Agent)
		if !ok {
			t.Fatalf("%s: agent parse exited %d", c.name, code)
		}
		if got := agentDataDir(k3sFlavor, v); got != c.want {
			t.Errorf("%s: agent data dir %q, want %q", c.name, got, c.want)
		}
	}
	t.Setenv("K3S_CONFIG_FILE", "")
	t.Setenv("K3S_DATA_DIR", "")
	t.Setenv("RKE2_CONFIG_FILE", noConfig)
	t.Setenv("RKE2_DATA_DIR", "/srv/rke2-env")
	fl := rke2Flavor()
	v, _, _, _, ok := parseCommand([]string{"rke2", "server"}, fl, fl.prog.Server)
	s, err := newServer(fl, v, newStateFile("server"))
	if !ok || err != nil || s.dataDir != "/srv/rke2-env" {
		t.Errorf("RKE2_DATA_DIR: %q %v", s.dataDir, err)
	}
}
