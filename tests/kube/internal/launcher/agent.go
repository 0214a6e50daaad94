package launcher

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"baremetal.k3s/tests/kube/internal/configfile"
	"baremetal.k3s/tests/kube/internal/proctitle"
)

// RunAgent is `k3s agent`: flags and config files as k3s reads them, then
// the node's join and registration (see nodeAgent) until SIGTERM/SIGINT.
func RunAgent(argv []string) int { return runAgent(argv, k3sFlavor) }

// RunRKE2Agent is `rke2 agent`, joining as `k3s agent` does.
func RunRKE2Agent(argv []string) int { return runAgent(argv, rke2Flavor()) }

// joinDisabled: K3S_DOUBLE_AGENT_JOIN=off keeps the agent of earlier
// doubles, which joins nothing and is ready at once.
func joinDisabled() bool {
	switch strings.ToLower(os.Getenv("K3S_DOUBLE_AGENT_JOIN")) {
	case "off", "0", "false", "no":
		return true
	}
	return false
}

func runAgent(argv []string, fl flavor) int {
	// as k3s's agent does first thing: /proc/<pid>/cmdline shows "<argv0> agent", never the flags or a token
	proctitle.Set(proctitle.Hidden("agent"))
	st := startState("agent", fl)
	if code, refused := refuseToldFailStart(st); refused {
		return code
	}
	v, parts, mode, code, ok := parseCommand(argv, fl, fl.prog.Agent)
	if !ok {
		return code
	}
	infof("Starting %s agent %s (%s)", fl.prog.Name, fl.version, Commit)
	files := parts.Files
	if files == nil {
		files = []string{}
	}
	infof("Config files read: %q; server %q", files, v.String("server"))
	st.update(func(s *State) { s.ConfigFiles = files; s.CLISliceMode = string(mode) })
	exit := func(code int, reason string) int {
		st.update(func(s *State) { s.Phase = "exited"; s.ExitedAt = now(); s.ExitCode = &code; s.ExitReason = reason })
		st.event("exit", map[string]any{"code": code, "reason": reason})
		return code
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	if joinDisabled() {
		infof("K3S_DOUBLE_AGENT_JOIN=off: joining nothing")
		st.update(func(s *State) { s.Phase = "running" })
		notifyAgentReady(st)
	} else if code, reason := startJoin(ctx, fl, v, st); code != 0 {
		fatalf("Error: %s", reason)
		return exit(code, reason)
	}
	<-ctx.Done()
	st.event("stopping", nil)
	infof("Received shutdown signal, exiting")
	return exit(0, "signal")
}

// startJoin checks the agent's --token and --server as k3s does and runs
// its node agent in the background; READY=1 follows the registration. A
// --token-file replaces --token and is waited for (tokenArg).
func startJoin(ctx context.Context, fl flavor, v *configfile.Values, st *stateFile) (int, string) {
	tok, err := tokenArg(ctx, v, "token", waitingForFile(st))
	if errors.Is(err, errSignal) {
		return 0, "" // the caller sees ctx done and exits 0
	}
	if err != nil {
		return 1, err.Error()
	}
	if tok == "" {
		return 1, "--token is required"
	}
	server := v.String("server")
	if server == "" {
		return 1, "--server is required"
	}
	a, err := newNodeAgent(fl, v, st, agentDataDir(fl, v), server, tok)
	if err != nil {
		return 1, err.Error()
	}
	a.onRegistered = func() { notifyAgentReady(st) }
	a.ownsPhase = true
	go a.run(ctx)
	return 0, ""
}

// agentDataDir is the agent's --data-dir (-d, data-dir:, K3S_DATA_DIR), else
// k3s's default /var/lib/rancher/k3s (RKE2's for rke2).
func agentDataDir(fl flavor, v *configfile.Values) string {
	if d := v.String("data-dir"); d != "" {
		return d
	}
	return fl.prog.DataDir
}

func notifyAgentReady(st *stateFile) {
	sent, err := sdNotify("READY=1\n")
	switch {
	case err != nil:
		warnf("sd_notify READY=1 failed: %v", err)
	case sent:
		infof("Sent READY=1 to systemd")
	}
	st.event("ready", map[string]any{"notified": sent})
	st.update(func(s *State) { s.ReadyNotified = sent })
}
