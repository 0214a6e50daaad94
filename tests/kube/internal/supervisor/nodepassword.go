package supervisor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"baremetal.k3s/tests/kube/internal/kubeapi"
)

// NodePasswordNamespace holds the node-password Secrets (metav1.NamespaceSystem).
const NodePasswordNamespace = "kube-system"

// MinOrphanSecretAge: a node-password Secret without a Node is deleted once
// it is this old (k3s pkg/nodepassword/controller.go MinOrphanSecretAge).
const MinOrphanSecretAge = 10 * time.Minute

// NodePasswords checks the node password an agent sends with its
// certificate requests, as k3s's supervisor does (pkg/nodepassword
// nodepassword.go, validate.go, controller.go), through the real API server:
// the first request of a node name stores a scrypt hash of its password in
// the Secret kube-system/<node>.node-password.<program> (type
// <program>.cattle.io/node-password, immutable, key "hash"); a later request
// with another password is refused with 403. Run adds the Node as the
// Secret's owner, so that the garbage collector deletes the Secret with the
// Node, and deletes Secrets that never got a Node.
type NodePasswords struct {
	Program string          // k3s | rke2
	API     *kubeapi.Client // the supervisor's credentials (system:masters)
	Ready   func() bool     // the API server is ready (k3s: the runtime core)
	Logf    func(level, format string, a ...any)

	mu       sync.Mutex
	deferred map[string]bool
}

// ErrCoreNotReady is k3s's util.ErrCoreNotReady: no API client yet (503).
var ErrCoreNotReady = errors.New("runtime core not ready")

// PasswordError is k3s's passwordError: the stored hash could not be read
// or does not match (every such error is ErrVerifyFailed, a 403).
type PasswordError struct {
	Node string
	Err  error
}

func (e *PasswordError) Error() string {
	return fmt.Sprintf("unable to verify password for node %s: %v", e.Node, e.Err)
}

func (e *PasswordError) Unwrap() error { return e.Err }

// SecretName is k3s's getSecretName: strings.ToLower(node + ".node-password." + program).
func (n *NodePasswords) SecretName(node string) string {
	return strings.ToLower(node + ".node-password." + n.Program)
}

// SecretType is k3s's SecretTypeNodePassword.
func (n *NodePasswords) SecretType() string { return n.Program + ".cattle.io/node-password" }

func (n *NodePasswords) logf(level, format string, a ...any) {
	if n.Logf != nil {
		n.Logf(level, format, a...)
	}
}

// Validate is k3s's NodeAuthValidator for a node name (lower-cased by the
// caller) and its password: 200 when the password matches the stored hash
// or was stored now, 403 (a *PasswordError) when it does not match, 503
// before the API server is ready. A Secret that cannot be created lets the
// node in and is verified later (k3s fails open there, so that nodes can
// join while a webhook blocks Secrets).
func (n *NodePasswords) Validate(ctx context.Context, node, password string) (int, error) {
	if n.Ready != nil && !n.Ready() {
		return http.StatusServiceUnavailable, ErrCoreNotReady
	}
	err := n.ensure(ctx, node, password)
	var pe *PasswordError
	switch {
	case err == nil:
		return http.StatusOK, nil
	case errors.As(err, &pe):
		return http.StatusForbidden, err
	}
	n.deferVerification(node, password)
	return http.StatusOK, nil
}

// ensure verifies the node's Secret if it exists, else creates it (k3s's
// nodePasswordController.ensure).
func (n *NodePasswords) ensure(ctx context.Context, node, password string) error {
	name := n.SecretName(node)
	err := n.verify(ctx, node, name, password)
	if !kubeapi.IsNotFound(err) {
		return err
	}
	hash, err := CreateHash(password)
	if err != nil {
		return &PasswordError{Node: node, Err: err}
	}
	immutable := true
	_, err = n.API.CreateSecret(ctx, kubeapi.Secret{
		Metadata:  kubeapi.Meta{Name: name, Namespace: NodePasswordNamespace},
		Immutable: &immutable,
		Type:      n.SecretType(),
		Data:      map[string][]byte{"hash": []byte(hash)},
	})
	if err == nil {
		return nil
	}
	if kubeapi.IsAlreadyExists(err) { // another request (or server) was first
		return n.verify(ctx, node, name, password)
	}
	if n.verify(ctx, node, name, password) == nil {
		return nil
	}
	return err
}

// verify compares password with the hash stored in the Secret name; the
// Secret's absence is a *PasswordError wrapping the API's 404.
func (n *NodePasswords) verify(ctx context.Context, node, name, password string) error {
	s, err := n.API.GetSecret(ctx, NodePasswordNamespace, name)
	if err != nil {
		return &PasswordError{Node: node, Err: err}
	}
	hash, ok := s.Data["hash"]
	if !ok {
		return &PasswordError{Node: node, Err: errors.New("password hash not found in node secret")}
	}
	if err := VerifyHash(string(hash), password); err != nil {
		return &PasswordError{Node: node, Err: err}
	}
	return nil
}

// deferVerification retries ensure every 5s until the Secret is stored or
// found to differ (k3s's verifyRemotePassword and ensureSecret).
func (n *NodePasswords) deferVerification(node, password string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.deferred == nil {
		n.deferred = map[string]bool{}
	}
	if n.deferred[node] {
		return
	}
	n.deferred[node] = true
	n.logf("info", "Password verification deferred for node %s", node)
	go func() {
		defer func() { n.mu.Lock(); delete(n.deferred, node); n.mu.Unlock() }()
		for {
			time.Sleep(5 * time.Second)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			err := n.ensure(ctx, node, password)
			cancel()
			var pe *PasswordError
			switch {
			case err == nil:
				n.logf("info", "Deferred node password secret validation complete for node %s", node)
				return
			case errors.As(err, &pe):
				n.logf("warning", "Deferred node password secret validation failed: %v", err)
				return
			}
		}
	}()
}

// Run is k3s's node-password controller until ctx ends: every period it
// makes each node-password Secret whose Node exists owned by that Node
// (onChangeNode: the garbage collector then deletes the Secret when the Node
// is deleted), and every minute it deletes Secrets older than
// MinOrphanSecretAge that have no Node (sync).
func (n *NodePasswords) Run(ctx context.Context, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	var lastSweep time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if n.Ready != nil && !n.Ready() {
			continue
		}
		sweep := time.Since(lastSweep) >= time.Minute
		if err := n.Sync(ctx, time.Now(), sweep); err != nil && ctx.Err() == nil {
			n.logf("warning", "node-password controller: %v", err)
			continue
		}
		if sweep {
			lastSweep = time.Now()
		}
	}
}

// Sync is one pass of the controller at now; sweep also deletes orphans.
func (n *NodePasswords) Sync(ctx context.Context, now time.Time, sweep bool) error {
	nodes, err := n.API.ListNodes(ctx)
	if err != nil {
		return err
	}
	secrets, err := n.API.ListSecrets(ctx, NodePasswordNamespace, "type="+n.SecretType())
	if err != nil {
		return err
	}
	byName := map[string]kubeapi.Secret{}
	for _, s := range secrets {
		byName[s.Metadata.Name] = s
	}
	withNode := map[string]bool{}
	for _, node := range nodes {
		name := n.SecretName(node.Metadata.Name)
		withNode[name] = true
		s, ok := byName[name]
		if !ok || hasOwner(s, node) {
			continue
		}
		n.logf("info", "Adding node OwnerReference to node-password secret %s", name)
		owners := append(append([]kubeapi.OwnerReference{}, s.Metadata.OwnerReferences...),
			kubeapi.OwnerReference{APIVersion: "v1", Kind: "Node", Name: node.Metadata.Name, UID: node.Metadata.UID})
		if err := n.API.SetSecretOwners(ctx, NodePasswordNamespace, name, s.Metadata.ResourceVersion, owners); err != nil {
			return err
		}
	}
	if !sweep {
		return nil
	}
	for _, s := range secrets {
		created, err := time.Parse(time.RFC3339, s.Metadata.CreationTimestamp)
		if err != nil || withNode[s.Metadata.Name] || created.After(now.Add(-MinOrphanSecretAge)) {
			continue
		}
		if err := n.API.DeleteSecret(ctx, NodePasswordNamespace, s.Metadata.Name, s.Metadata.UID); err != nil {
			n.logf("error", "Failed to delete orphaned node-password secret %s: %v", s.Metadata.Name, err)
			continue
		}
		n.logf("warning", "Deleted orphaned node-password secret %s created %s", s.Metadata.Name, s.Metadata.CreationTimestamp)
	}
	return nil
}

func hasOwner(s kubeapi.Secret, node kubeapi.Node) bool {
	for _, o := range s.Metadata.OwnerReferences {
		if o.Kind == "Node" && o.Name == node.Metadata.Name && o.UID == node.Metadata.UID {
			return true
		}
	}
	return false
}
