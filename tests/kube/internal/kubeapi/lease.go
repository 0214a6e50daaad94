package kubeapi

import (
	"context"
	"net/http"
	"time"
)

// NodeLeaseNamespace holds the kubelets' heartbeat Leases.
const NodeLeaseNamespace = "kube-node-lease"

// Lease is a coordination.k8s.io/v1 Lease.
type Lease struct {
	APIVersion string    `json:"apiVersion,omitempty"`
	Kind       string    `json:"kind,omitempty"`
	Metadata   Meta      `json:"metadata"`
	Spec       LeaseSpec `json:"spec"`
}

// LeaseSpec is a Lease's spec.
type LeaseSpec struct {
	HolderIdentity       *string `json:"holderIdentity,omitempty"`
	LeaseDurationSeconds *int32  `json:"leaseDurationSeconds,omitempty"`
	AcquireTime          *string `json:"acquireTime,omitempty"`
	RenewTime            *string `json:"renewTime,omitempty"`
	LeaseTransitions     *int32  `json:"leaseTransitions,omitempty"`
}

// MicroTime formats t as metav1.MicroTime.
func MicroTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z07:00") }

func leasePath(ns, name string) string {
	return "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases/" + name
}

// GetLease reads a Lease.
func (c *Client) GetLease(ctx context.Context, ns, name string) (Lease, error) {
	var l Lease
	err := c.Get(ctx, leasePath(ns, name), &l)
	return l, err
}

// RenewNodeLease renews kube-node-lease/<node>, creating it when missing, as
// the kubelet's lease controller does (holder = node, 40s, owned by the Node).
func (c *Client) RenewNodeLease(ctx context.Context, node, nodeUID string, now time.Time) error {
	renew := MicroTime(now)
	patch := map[string]any{"spec": map[string]any{"holderIdentity": node, "renewTime": renew}}
	err := c.Do(ctx, http.MethodPatch, leasePath(NodeLeaseNamespace, node), patch, MergePatch, nil)
	if !IsNotFound(err) {
		return err
	}
	d := int32(40)
	l := Lease{APIVersion: "coordination.k8s.io/v1", Kind: "Lease",
		Metadata: Meta{Name: node, Namespace: NodeLeaseNamespace},
		Spec:     LeaseSpec{HolderIdentity: &node, LeaseDurationSeconds: &d, RenewTime: &renew}}
	if nodeUID != "" {
		l.Metadata.OwnerReferences = []OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node, UID: nodeUID}}
	}
	return c.Do(ctx, http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/"+NodeLeaseNamespace+"/leases", l, "", nil)
}
