package launcher

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"baremetal.k3s/tests/kube/internal/toldversion"
)

// tellForTest makes the launcher act as a binary with trailer t.
func tellForTest(t *testing.T, tv toldversion.Told) {
	t.Helper()
	oldTold, oldOk := Told, told
	Told, told = tv, true
	t.Cleanup(func() { Told, told = oldTold, oldOk })
}

func TestToldOr(t *testing.T) {
	if K3sVersion != BuiltK3sVersion || RKE2Version != BuiltRKE2Version {
		t.Fatalf("a test binary has no trailer: K3sVersion %q RKE2Version %q", K3sVersion, RKE2Version)
	}
	tellForTest(t, toldversion.Told{Version: "v1.37.0+k3s1"})
	if got := toldOr(BuiltK3sVersion); got != "v1.37.0+k3s1" {
		t.Fatalf("toldOr = %q", got)
	}
}

func TestToldFailStartRefusesServerAndAgent(t *testing.T) {
	line := "#baremetal-k3s-double version=v1.37.0+k3s1 fail=start"
	tellForTest(t, toldversion.Told{Version: "v1.37.0+k3s1", FailStart: true, Line: line})
	// Each command line also holds an unknown flag: a launcher that does not
	// refuse first exits on it (no state written) instead of starting.
	for _, run := range []struct {
		name string
		f    func([]string) int
		argv []string
	}{
		{"server", RunServer, []string{"k3s", "server", "--no-such-flag"}},
		{"agent", RunAgent, []string{"k3s", "agent", "--server=https://127.0.0.1:1", "--token=x", "--no-such-flag"}},
		{"rke2 agent", RunRKE2Agent, []string{"rke2", "agent", "--server=https://127.0.0.1:1", "--token=x", "--no-such-flag"}},
	} {
		t.Run(run.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("K3S_DOUBLE_STATE", filepath.Join(dir, "state.json"))
			t.Setenv("K3S_DOUBLE_EVENTS", filepath.Join(dir, "events.jsonl"))
			t.Setenv("K3S_DATA_DIR", filepath.Join(dir, "data"))
			t.Setenv("RKE2_DATA_DIR", filepath.Join(dir, "data"))
			if code := run.f(run.argv); code != 1 {
				t.Fatalf("exit code %d, want 1", code)
			}
			var st State
			data, err := os.ReadFile(filepath.Join(dir, "state.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &st); err != nil {
				t.Fatal(err)
			}
			if st.Phase != "exited" || st.ExitCode == nil || *st.ExitCode != 1 || !strings.Contains(st.ExitReason, "fail=start") || !strings.Contains(st.ExitReason, line) {
				t.Fatalf("state: phase %q code %v reason %q", st.Phase, st.ExitCode, st.ExitReason)
			}
			if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
				t.Fatalf("data dir touched before refusing: %v", err)
			}
		})
	}
}

func TestUntoldStartsNormally(t *testing.T) {
	tellForTest(t, toldversion.Told{Version: "v1.37.0+k3s1"})
	dir := t.TempDir()
	t.Setenv("K3S_DOUBLE_STATE", filepath.Join(dir, "state.json"))
	t.Setenv("K3S_DOUBLE_EVENTS", filepath.Join(dir, "events.jsonl"))
	if code, refused := refuseToldFailStart(newStateFile("agent")); refused || code != 0 {
		t.Fatalf("refused %v code %d without fail=start", refused, code)
	}
}
