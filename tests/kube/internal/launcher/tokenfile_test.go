package launcher

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"baremetal.k3s/tests/kube/internal/configfile"
)

func agentValues(t *testing.T, args ...string) *configfile.Values {
	t.Helper()
	v, err := configfile.Parse(configfile.AgentFlags(), args)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func shortFileWait(t *testing.T, period, limit time.Duration) {
	t.Helper()
	old := tokenFileWait
	tokenFileWait.period, tokenFileWait.limit = period, limit
	t.Cleanup(func() { tokenFileWait = old })
}

// k3s pkg/cli/server/server.go run(): ControlConfig.Token = cfg.Token, then
// "if cfg.TokenFile != "" { ControlConfig.Token, err = util.ReadFile(cfg.TokenFile) }"
// (and the same for AgentTokenFile over AgentToken): the file wins over
// --token, K3S_TOKEN and token: whenever both are given.
func TestServerTokenFileReplacesToken(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f, af := filepath.Join(dir, "token"), filepath.Join(dir, "agent-token")
	os.WriteFile(f, []byte("fromfile\n"), 0o600)
	os.WriteFile(af, []byte("agentsfromfile\n"), 0o600)
	got, err := resolveServerToken(ctx, serverValues(t, "--token=fromflag", "--token-file="+f,
		"--agent-token=agentsflag", "--agent-token-file="+af), filepath.Join(dir, "server"), nil)
	if err != nil || got.password != "fromfile" || got.agentPassword() != "agentsfromfile" {
		t.Fatalf("--token and --token-file: %+v %v", got, err)
	}
	t.Setenv("K3S_TOKEN", "fromenv")
	t.Setenv("K3S_AGENT_TOKEN", "agentsfromenv")
	got, err = resolveServerToken(ctx, serverValues(t, "--token-file="+f, "--agent-token-file="+af), filepath.Join(dir, "server"), nil)
	if err != nil || got.password != "fromfile" || got.agentPassword() != "agentsfromfile" {
		t.Fatalf("K3S_TOKEN and --token-file: %+v %v", got, err)
	}
	t.Setenv("K3S_TOKEN_FILE", f)
	got, err = resolveServerToken(ctx, serverValues(t, "--token=fromflag"), filepath.Join(dir, "server"), nil)
	if err != nil || got.password != "fromfile" {
		t.Fatalf("--token and K3S_TOKEN_FILE: %+v %v", got, err)
	}
}

// k3s pkg/cli/agent/agent.go Run(): "if cmds.AgentConfig.TokenFile != "" {
// token, err := util.ReadFile(...); cmds.AgentConfig.Token = token }": an
// agent's token file replaces --token / K3S_TOKEN too.
func TestAgentTokenFileReplacesToken(t *testing.T) {
	ctx := context.Background()
	f := filepath.Join(t.TempDir(), "token")
	os.WriteFile(f, []byte("  K10abc::server:fromfile \n"), 0o600)
	t.Setenv("K3S_TOKEN", "fromenv")
	for _, args := range [][]string{{"--token-file=" + f}, {"--token=fromflag", "--token-file", f}, {"-t", "fromflag", "--token-file=" + f}} {
		got, err := tokenArg(ctx, agentValues(t, args...), "token", nil)
		if err != nil || got != "K10abc::server:fromfile" {
			t.Errorf("%q: %q %v", args, got, err)
		}
	}
	if got, _ := tokenArg(ctx, agentValues(t), "token", nil); got != "fromenv" {
		t.Errorf("K3S_TOKEN alone: %q", got)
	}
}

// k3s pkg/util/file.go ReadFile: a missing file is not an error; k3s logs
// "Waiting for <path> to be available" and looks again every 2 seconds
// (tokenFileWait), so a Type=notify unit stays activating until it appears.
func TestTokenFileWaitedFor(t *testing.T) {
	if tokenFileWait.period != 2*time.Second || tokenFileWait.limit != 4*time.Minute {
		t.Fatalf("k3s waits every 2s for at most 4m, not %+v", tokenFileWait)
	}
	shortFileWait(t, 5*time.Millisecond, time.Minute)
	f := filepath.Join(t.TempDir(), "late-token")
	waits := 0
	onWait := func(path string) {
		if path != f {
			t.Errorf("waited for %s", path)
		}
		waits++
		if waits == 3 { // the file appears while the launcher waits
			os.WriteFile(f, []byte("late\n"), 0o600)
		}
	}
	got, err := readFileWaiting(context.Background(), f, onWait)
	if err != nil || got != "late" || waits != 3 {
		t.Fatalf("got %q %v after %d waits", got, err, waits)
	}
	// a server's start goes through the same wait (and the file wins over --token)
	os.Remove(f)
	waits = 0
	tok, err := resolveServerToken(context.Background(), serverValues(t, "--token=given", "--token-file="+f), t.TempDir(), onWait)
	if err != nil || tok.password != "late" || waits != 3 {
		t.Fatalf("server: got %+v %v after %d waits", tok, err, waits)
	}
	// the agent's start goes through the same wait
	os.Remove(f)
	waits = 0
	got, err = tokenArg(context.Background(), agentValues(t, "--token=given", "--token-file="+f), "token", onWait)
	if err != nil || got != "late" || waits != 3 {
		t.Fatalf("agent: got %q %v after %d waits", got, err, waits)
	}
}

// k3s pkg/util/file.go ReadFile gives up after 4 minutes with
// "Timeout while trying to read the file" (the process then exits 1);
// another read error (a directory) ends it at once; a signal ends the
// double's wait.
func TestTokenFileTimeoutAndErrors(t *testing.T) {
	shortFileWait(t, time.Millisecond, 20*time.Millisecond)
	dir := t.TempDir()
	_, err := readFileWaiting(context.Background(), filepath.Join(dir, "never"), nil)
	if err == nil || err.Error() != "Timeout while trying to read the file" {
		t.Fatalf("timeout: %v", err)
	}
	waited := false
	if _, err := readFileWaiting(context.Background(), dir, func(string) { waited = true }); err == nil || waited {
		t.Fatalf("a directory: %v (waited %v)", err, waited)
	}
	shortFileWait(t, time.Hour, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	_, err = readFileWaiting(ctx, filepath.Join(dir, "never"), func(string) { cancel() })
	if !errors.Is(err, errSignal) {
		t.Fatalf("signal: %v", err)
	}
	if got, err := readFileWaiting(ctx, "", nil); got != "" || err != nil {
		t.Fatalf("no file: %q %v", got, err)
	}
}

// The wait shows in the state file and the events (the unit is activating).
func TestWaitingForFileRecorded(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("K3S_DOUBLE_STATE", filepath.Join(dir, "state.json"))
	t.Setenv("K3S_DOUBLE_EVENTS", filepath.Join(dir, "events.jsonl"))
	st := newStateFile("agent")
	w := waitingForFile(st)
	w("/etc/rancher/k3s/token")
	w("/etc/rancher/k3s/token")
	state, _ := os.ReadFile(filepath.Join(dir, "state.json"))
	events, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if !strings.Contains(string(state), `"phase": "waiting-for-token-file"`) ||
		strings.Count(string(events), `"event":"waiting_for_file"`) != 1 || !strings.Contains(string(events), `"file":"/etc/rancher/k3s/token"`) {
		t.Fatalf("state %s\nevents %s", state, events)
	}
}
