package kubeapi

import (
	"context"
	"net/http"
	"time"

	"baremetal.k3s/tests/kube/internal/nodeconfig"
)

// Meta is the part of ObjectMeta the double reads and writes.
type Meta struct {
	Name            string            `json:"name"`
	Namespace       string            `json:"namespace,omitempty"`
	UID             string            `json:"uid,omitempty"`
	ResourceVersion string            `json:"resourceVersion,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
	Annotations     map[string]string `json:"annotations,omitempty"`
	OwnerReferences []OwnerReference  `json:"ownerReferences,omitempty"`
	// CreationTimestamp is set by the API server (RFC 3339).
	CreationTimestamp string `json:"creationTimestamp,omitempty"`
	// DeletionTimestamp is set by the API server once a delete waits for finalizers.
	DeletionTimestamp string   `json:"deletionTimestamp,omitempty"`
	Finalizers        []string `json:"finalizers,omitempty"`
}

// OwnerReference is metav1.OwnerReference.
type OwnerReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
}

// Condition is a NodeCondition.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	LastHeartbeatTime  string `json:"lastHeartbeatTime,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
}

// Node is the part of a v1 Node the double reads and writes.
type Node struct {
	APIVersion string     `json:"apiVersion,omitempty"`
	Kind       string     `json:"kind,omitempty"`
	Metadata   Meta       `json:"metadata"`
	Spec       NodeSpec   `json:"spec"`
	Status     NodeStatus `json:"status,omitempty"`
}

// NodeSpec is the part of a NodeSpec the double writes.
type NodeSpec struct {
	Taints []nodeconfig.Taint `json:"taints,omitempty"`
}

// NodeStatus is what the kubelet reports about its node.
type NodeStatus struct {
	Conditions      []Condition       `json:"conditions,omitempty"`
	Addresses       []Address         `json:"addresses,omitempty"`
	Capacity        map[string]string `json:"capacity,omitempty"`
	Allocatable     map[string]string `json:"allocatable,omitempty"`
	NodeInfo        *NodeInfo         `json:"nodeInfo,omitempty"`
	DaemonEndpoints *DaemonEndpoints  `json:"daemonEndpoints,omitempty"`
}

// Address is a NodeAddress.
type Address struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// NodeInfo is NodeSystemInfo.
type NodeInfo struct {
	MachineID               string `json:"machineID"`
	SystemUUID              string `json:"systemUUID"`
	BootID                  string `json:"bootID"`
	KernelVersion           string `json:"kernelVersion"`
	OSImage                 string `json:"osImage"`
	ContainerRuntimeVersion string `json:"containerRuntimeVersion"`
	KubeletVersion          string `json:"kubeletVersion"`
	OperatingSystem         string `json:"operatingSystem"`
	Architecture            string `json:"architecture"`
}

// DaemonEndpoints holds the kubelet's port.
type DaemonEndpoints struct {
	KubeletEndpoint struct {
		Port int `json:"Port"`
	} `json:"kubeletEndpoint"`
}

// NodeList is a v1 NodeList.
type NodeList struct {
	Items []Node `json:"items"`
}

const nodesPath = "/api/v1/nodes"

// CreateNode creates the Node (the kubelet's registration); when it exists
// already it returns the stored one and created=false.
func (c *Client) CreateNode(ctx context.Context, n Node) (stored Node, created bool, err error) {
	n.APIVersion, n.Kind = "v1", "Node"
	err = c.Do(ctx, http.MethodPost, nodesPath, n, "", &stored)
	if IsAlreadyExists(err) {
		err = c.Get(ctx, nodesPath+"/"+n.Metadata.Name, &stored)
		return stored, false, err
	}
	return stored, err == nil, err
}

// PatchNodeMeta merge-patches a Node's labels and annotations.
func (c *Client) PatchNodeMeta(ctx context.Context, name string, labels, annotations map[string]string) error {
	meta := map[string]any{}
	if labels != nil {
		meta["labels"] = labels
	}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	patch := map[string]any{"metadata": meta}
	return c.Do(ctx, http.MethodPatch, nodesPath+"/"+name, patch, MergePatch, nil)
}

// GetNode reads one Node.
func (c *Client) GetNode(ctx context.Context, name string) (Node, error) {
	var n Node
	err := c.Get(ctx, nodesPath+"/"+name, &n)
	return n, err
}

// SetNodeFinalizers replaces a Node's finalizers, as of resourceVersion rv
// (a 409 Conflict when the Node changed since it was read).
func (c *Client) SetNodeFinalizers(ctx context.Context, name, rv string, finalizers []string) error {
	if finalizers == nil {
		finalizers = []string{}
	}
	patch := map[string]any{"metadata": map[string]any{"resourceVersion": rv, "finalizers": finalizers}}
	return c.Do(ctx, http.MethodPatch, nodesPath+"/"+name, patch, MergePatch, nil)
}

// PatchNodeStatus strategic-merge-patches a Node's status (conditions by type).
func (c *Client) PatchNodeStatus(ctx context.Context, name string, st NodeStatus) error {
	return c.Do(ctx, http.MethodPatch, nodesPath+"/"+name+"/status", map[string]any{"status": st}, StrategicPatch, nil)
}

// ListNodes lists every Node.
func (c *Client) ListNodes(ctx context.Context) ([]Node, error) {
	var l NodeList
	err := c.Get(ctx, nodesPath, &l)
	return l.Items, err
}

// ReadyConditions are the kubelet's four conditions of a healthy node.
func ReadyConditions(now, since time.Time) []Condition {
	hb, tr := now.UTC().Format(time.RFC3339), since.UTC().Format(time.RFC3339)
	c := func(typ, status, reason, msg string) Condition {
		return Condition{Type: typ, Status: status, LastHeartbeatTime: hb, LastTransitionTime: tr, Reason: reason, Message: msg}
	}
	return []Condition{
		c("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
		c("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
		c("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		c("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
	}
}

// IsReady: the Node's Ready condition is True.
func IsReady(n Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

// HasTaint: the Node carries a taint with key.
func HasTaint(n Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
