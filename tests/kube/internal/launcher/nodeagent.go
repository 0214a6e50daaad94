package launcher

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"baremetal.k3s/tests/kube/internal/join"
	"baremetal.k3s/tests/kube/internal/kubeapi"
	"baremetal.k3s/tests/kube/internal/nodeconfig"
	"baremetal.k3s/tests/kube/internal/token"
)

// Heartbeats of the node agent, as the kubelet's defaults: the node Lease
// every 10s, the node status at least every minute.
const (
	leaseRenewEvery  = 10 * time.Second
	statusReportEach = 6 // lease renewals
)

// nodeAgent is the part of a k3s agent the double imitates: join through
// the supervisor with the token, then register the Node in the real API
// server with the node's own credentials (system:node:<name>), and keep it
// Ready and its Lease renewed, as the kubelet does, until ctx ends.
type nodeAgent struct {
	program        string // k3s | rke2
	st             *stateFile
	agentDir       string // <data-dir>/agent
	server         string // the --server URL (servers: their own supervisor)
	supervisorURL  string
	token          string
	node           string
	nodeIP         string
	labels         map[string]string // registered: the kubelet's, k3s's and --node-label
	taints         []nodeconfig.Taint
	annotations    map[string]string
	kubeletVersion string
	onRegistered   func()
	ownsPhase      bool // `k3s agent`: the state's phase is the join's (a server keeps its own)

	since   time.Time // when the node started: its conditions' transition time
	lastErr string
}

// run joins, registers and heartbeats until ctx ends.
func (a *nodeAgent) run(ctx context.Context) {
	a.since = time.Now()
	var client *kubeapi.Client
	for client == nil {
		var err error
		if client, err = a.configure(ctx); err != nil && !a.retry(ctx, err) {
			return
		}
	}
	var uid string
	for uid == "" {
		var err error
		if uid, err = a.register(ctx, client); err != nil && !a.retry(ctx, err) {
			return
		}
	}
	if a.onRegistered != nil {
		a.onRegistered()
	}
	a.heartbeat(ctx, client, uid)
}

// joinError is a failed join step: how k3s logs it and when it retries.
type joinError struct {
	level, format string
	delay         time.Duration
	err           error
}

func (e *joinError) Error() string { return e.err.Error() }

// retry logs and records err, then waits its delay; false when ctx ended.
func (a *nodeAgent) retry(ctx context.Context, err error) bool {
	je := &joinError{level: "info", format: "%v", delay: 5 * time.Second, err: err}
	errors.As(err, &je)
	msg := je.err.Error()
	logf(je.level, je.format, je.err)
	a.st.update(func(s *State) { s.JoinError = msg; s.JoinAttempts++ })
	if msg != a.lastErr {
		a.st.event("join_error", map[string]any{"error": msg, "server": a.server})
		a.lastErr = msg
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(je.delay):
		return true
	}
}

func (a *nodeAgent) setPhase(p string) {
	if a.ownsPhase {
		a.st.update(func(s *State) { s.Phase = p })
	}
}

// configure validates the server against the token, reads its agent
// configuration and gets the kubelet's client certificate; it returns a
// client of the API server with the node's credentials.
func (a *nodeAgent) configure(ctx context.Context) (*kubeapi.Client, error) {
	a.setPhase("joining")
	password, passwordFile := a.nodePassword()
	sess, err := join.Open(ctx, a.program, a.supervisorURL, a.token, a.node, password)
	if err == nil {
		sess.PasswordFile = passwordFile
	}
	if err != nil {
		// k3s: logrus.Errorf("Failed to validate connection to cluster at %s: %v"), every 2s
		return nil, &joinError{level: "error", format: "Failed to validate connection to cluster at " + a.server + ": %v", delay: 2 * time.Second, err: err}
	}
	creds, err := a.credentials(ctx, sess)
	if err != nil {
		return nil, &joinError{level: "info", format: "Waiting to retrieve agent configuration; server is not ready: %v", delay: 5 * time.Second, err: err}
	}
	return creds, nil
}

func (a *nodeAgent) credentials(ctx context.Context, sess *join.Session) (*kubeapi.Client, error) {
	cfg, err := sess.Config(ctx)
	if err != nil {
		return nil, err
	}
	for _, f := range []string{"client-ca.crt", "server-ca.crt"} {
		data, err := sess.File(ctx, f)
		if err == nil {
			err = writeFileAtomic(filepath.Join(a.agentDir, f), data, 0o600)
		}
		if err != nil {
			return nil, err
		}
	}
	key, err := a.kubeletKey()
	if err != nil {
		return nil, err
	}
	chain, err := sess.ClientKubelet(ctx, key)
	if err != nil {
		return nil, err
	}
	certFile, keyFile := filepath.Join(a.agentDir, "client-kubelet.crt"), filepath.Join(a.agentDir, "client-kubelet.key")
	if err := writeFileAtomic(certFile, chain, 0o600); err != nil {
		return nil, err
	}
	apiURL := "https://" + net.JoinHostPort(hostOf(a.supervisorURL), strconv.Itoa(cfg.HTTPSPort))
	caFile := filepath.Join(a.agentDir, "server-ca.crt")
	kc, err := kubeconfig(apiURL, caFile, certFile, keyFile, false)
	if err == nil {
		err = writeFileAtomic(filepath.Join(a.agentDir, "kubelet.kubeconfig"), []byte(kc), 0o600)
	}
	if err != nil {
		return nil, err
	}
	a.st.update(func(s *State) { s.APIServerURL = apiURL })
	return kubeapi.NewFromFiles(apiURL, caFile, certFile, keyFile)
}

func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Hostname()
}

// kubeletKey is <agent>/client-kubelet.key, made once (the agent sends only
// a certificate request for it, as current k3s agents do).
func (a *nodeAgent) kubeletKey() (*ecdsa.PrivateKey, error) {
	path := filepath.Join(a.agentDir, "client-kubelet.key")
	if b, err := readPEM(path); err == nil {
		if k, err := x509.ParseECPrivateKey(b.Bytes); err == nil {
			return k, nil
		}
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(a.agentDir, 0o700); err != nil {
		return nil, err
	}
	return k, writePEM(path, "EC PRIVATE KEY", der, 0o600)
}

// nodePassword is /etc/rancher/node/password and that path, made once (16
// random bytes in hex, as k3s's ensureNodePassword): k3s sends it with every
// certificate request and the supervisor compares it with the hash it
// stored for the node name (a rebuilt host with a new password is refused).
// Where /etc/rancher/node cannot be written (unit tests), the agent's
// node-password.txt (k3s's old place) stands in.
func (a *nodeAgent) nodePassword() (string, string) {
	for _, p := range []string{"/etc/rancher/node/password", filepath.Join(a.agentDir, "node-password.txt")} {
		if pw := readTrimmed(p); pw != "" {
			return pw, p
		}
		pw, err := token.Random(16)
		if err != nil {
			continue
		}
		if os.MkdirAll(filepath.Dir(p), 0o755) == nil && os.WriteFile(p, []byte(pw+"\n"), 0o600) == nil {
			return pw, p
		}
	}
	return "unset", ""
}

// register creates the Node as the kubelet does (labels, annotations and
// taints at registration); a Node that exists keeps its taints and gets
// the labels and annotations again (k3s re-applies --node-label at start).
func (a *nodeAgent) register(ctx context.Context, c *kubeapi.Client) (string, error) {
	n := kubeapi.Node{Metadata: kubeapi.Meta{Name: a.node, Labels: a.labels, Annotations: a.annotations},
		Spec: kubeapi.NodeSpec{Taints: a.taints}}
	stored, created, err := c.CreateNode(ctx, n)
	if err == nil && !created {
		err = c.PatchNodeMeta(ctx, a.node, a.labels, a.annotations)
	}
	if err == nil {
		err = a.report(ctx, c, stored.Metadata.UID, true)
	}
	if err != nil {
		return "", &joinError{level: "error", format: "Unable to register node " + strconv.Quote(a.node) + " with API server: %v", delay: 5 * time.Second, err: err}
	}
	verb := map[bool]string{true: "Registered", false: "Re-registered existing"}[created]
	infof("%s node %s with the API server (%s)", verb, a.node, c.Base)
	a.setPhase("running")
	a.st.update(func(s *State) {
		s.JoinError = ""
		s.JoinedAt = now()
		s.NodeCreated = &created
	})
	a.st.event("node_registered", map[string]any{"node": a.node, "created": created, "labels": a.labels, "taints": taintStrings(a.taints)})
	return stored.Metadata.UID, nil
}

// report sends the node status (always, or only every statusReportEach
// beats) and renews the Lease.
func (a *nodeAgent) report(ctx context.Context, c *kubeapi.Client, uid string, status bool) error {
	t := time.Now()
	if status {
		st := kubeapi.NodeStatus{
			Conditions:  kubeapi.ReadyConditions(t, a.since),
			Addresses:   []kubeapi.Address{{Type: "InternalIP", Address: a.nodeIP}, {Type: "Hostname", Address: a.node}},
			Capacity:    capacity(a.agentDir),
			Allocatable: capacity(a.agentDir),
			NodeInfo:    nodeInfo(a.kubeletVersion),
		}
		st.DaemonEndpoints = &kubeapi.DaemonEndpoints{}
		st.DaemonEndpoints.KubeletEndpoint.Port = 10250
		if a.nodeIP == "" {
			st.Addresses = st.Addresses[1:]
		}
		if err := c.PatchNodeStatus(ctx, a.node, st); err != nil {
			return err
		}
	}
	if err := c.RenewNodeLease(ctx, a.node, uid, t); err != nil {
		return err
	}
	a.st.update(func(s *State) { s.NodeHeartbeatAt = now() })
	return nil
}

func (a *nodeAgent) heartbeat(ctx context.Context, c *kubeapi.Client, uid string) {
	tick := time.NewTicker(leaseRenewEvery)
	defer tick.Stop()
	failing := ""
	for i := 1; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := a.report(ctx, c, uid, i%statusReportEach == 0)
		switch {
		case err != nil && err.Error() != failing && ctx.Err() == nil:
			warnf("Failed to update node %s status or lease: %v", a.node, err)
			failing = err.Error()
		case err == nil && failing != "":
			infof("Node %s status and lease updated again", a.node)
			failing = ""
		}
	}
}

func taintStrings(ts []nodeconfig.Taint) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.String())
	}
	return out
}
