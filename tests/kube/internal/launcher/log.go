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
)

// Version strings of the double.
const (
	K8sVersion = "v1.36.3"
	K3sVersion = K8sVersion + "+k3s1"
	// RKE2Version is what `rke2 --version` prints.
	RKE2Version = K8sVersion + "+rke2r1"
	Commit      = "baremetal-k3s-double"
)

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
