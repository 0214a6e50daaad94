// Package launcher is the k3s double's `k3s server` and `k3s agent`: it reads
// flags and config files as k3s does, then runs kine, the real kube-apiserver
// and the real kube-scheduler (this same binary re-executed) in k3s's order.
package launcher

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"baremetal.k3s/tests/kube/internal/toldversion"
)

// Version strings of the double.
const (
	// K8sVersion is the Kubernetes the components really are.
	K8sVersion = "v1.36.3"
	// BuiltK3sVersion and BuiltRKE2Version are what a binary built here
	// reports unless it is told otherwise (below).
	BuiltK3sVersion  = K8sVersion + "+k3s1"
	BuiltRKE2Version = K8sVersion + "+rke2r1"
	Commit           = "baremetal-k3s-double"
)

// Told is the trailer of this executable (package toldversion): a copy of
// the binary told another version reports it as both k3s's and RKE2's, and
// with fail=start refuses to start as a server or agent. Only a label: the
// components stay Kubernetes K8sVersion.
var Told, told = toldversion.Self()

// K3sVersion is what `k3s --version`, the start line and the Nodes'
// kubeletVersion show; RKE2Version the same under `rke2`.
var (
	K3sVersion  = toldOr(BuiltK3sVersion)
	RKE2Version = toldOr(BuiltRKE2Version)
)

func toldOr(built string) string {
	if told {
		return Told.Version
	}
	return built
}

// refuseToldFailStart: a binary told fail=start logs why and exits 1 at
// once as `server` or `agent` (its --version still answers).
func refuseToldFailStart(st *stateFile) (int, bool) {
	if !told || !Told.FailStart {
		return 0, false
	}
	reason := fmt.Sprintf("this binary is told not to start (%s in its trailer %q)", toldversion.FailStart, Told.Line)
	fatalf("Error: %s", reason)
	code := 1
	st.update(func(s *State) { s.Phase = "exited"; s.ExitedAt = now(); s.ExitCode = &code; s.ExitReason = reason })
	st.event("exit", map[string]any{"code": code, "reason": reason})
	return code, true
}

var logMu sync.Mutex

// logf writes one logrus-style line to stderr, as k3s does (journald shows it).
func logf(level, format string, a ...any) {
	msg := strconv.Quote(fmt.Sprintf(format, a...)) // as logrus quotes a message
	logMu.Lock()
	defer logMu.Unlock()
	fmt.Fprintf(os.Stderr, "time=\"%s\" level=%s msg=%s\n", time.Now().Format(time.RFC3339Nano), level, msg)
}

func infof(format string, a ...any)  { logf("info", format, a...) }
func warnf(format string, a ...any)  { logf("warning", format, a...) }
func errorf(format string, a ...any) { logf("error", format, a...) }
func fatalf(format string, a ...any) { logf("fatal", format, a...) }
