// Token files as k3s reads them: a --token-file replaces --token, and a
// file that does not exist yet is waited for.

package launcher

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"baremetal.k3s/tests/kube/internal/configfile"
)

// tokenFileWait is how k3s waits for a file it must read (pkg/util/file.go
// ReadFile): a look every 2s, for at most 4 minutes. Tests shorten it.
var tokenFileWait = struct{ period, limit time.Duration }{2 * time.Second, 4 * time.Minute}

// errFileTimeout is k3s's error when the file did not appear in time.
var errFileTimeout = errors.New("Timeout while trying to read the file")

// readFileWaiting is k3s's util.ReadFile: the file's contents, trimmed; a
// file that does not exist is looked for again every period, each time
// logging "Waiting for <path> to be available" (with logrus's trailing
// newline, as k3s writes it), until it exists or limit has passed
// (errFileTimeout). Any other read error is returned at once. onWait, if not
// nil, is called before each wait. A signal ends the wait (errSignal); k3s
// would sleep through it, see tests/kube/README.md.
func readFileWaiting(ctx context.Context, path string, onWait func(path string)) (string, error) {
	if path == "" {
		return "", nil
	}
	start := time.Now()
	for time.Since(start) < tokenFileWait.limit {
		data, err := os.ReadFile(path)
		if err == nil {
			return strings.TrimSpace(string(data)), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		infof("Waiting for %s to be available\n", path)
		if onWait != nil {
			onWait(path)
		}
		select {
		case <-ctx.Done():
			return "", errSignal
		case <-time.After(tokenFileWait.period):
		}
	}
	return "", errFileTimeout
}

// tokenArg is a secret given as flag name (token, agent-token) or as
// name-file. As k3s does (pkg/cli/server/server.go run, pkg/cli/agent/agent.go
// Run), a file named by --<name>-file (config key <name>-file:, or
// K3S_TOKEN_FILE / K3S_AGENT_TOKEN_FILE) replaces --<name> and its
// environment variable whenever both are given; the file is waited for.
func tokenArg(ctx context.Context, v *configfile.Values, name string, onWait func(path string)) (string, error) {
	if f := v.String(name + "-file"); f != "" {
		return readFileWaiting(ctx, f, onWait)
	}
	return v.String(name), nil
}

// waitingForFile records a wait for a file in the state and the events
// (once per file and run), while the unit stays activating.
func waitingForFile(st *stateFile) func(path string) {
	seen := map[string]bool{}
	return func(path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		st.update(func(s *State) { s.Phase = "waiting-for-token-file" })
		st.event("waiting_for_file", map[string]any{"file": path})
	}
}
