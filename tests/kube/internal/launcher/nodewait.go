package launcher

import (
	"context"
	"time"

	"baremetal.k3s/tests/kube/internal/kubeapi"
	"baremetal.k3s/tests/kube/internal/nodeconfig"
)

// UninitializedTaint is the taint k3s's cloud-controller-manager removes
// once it has initialised a node; k3s starts the scheduler when a node
// without it exists.
const UninitializedTaint = "node.cloudprovider.kubernetes.io/uninitialized"

// readyNode is the first Node that is Ready and not tainted uninitialised.
func readyNode(ctx context.Context, c *kubeapi.Client) string {
	nodes, err := c.ListNodes(ctx)
	if err != nil {
		return ""
	}
	for _, n := range nodes {
		if kubeapi.IsReady(n) && !kubeapi.HasTaint(n, UninitializedTaint) {
			return n.Metadata.Name
		}
	}
	return ""
}

// setControlPlaneLabels puts k3s's role labels on a server's own Node with
// the admin's credentials (NodeRestriction keeps nodes from setting
// node-role.kubernetes.io labels on themselves), once the Node exists.
func setControlPlaneLabels(ctx context.Context, c *kubeapi.Client, node string) {
	labels := map[string]string{nodeconfig.ControlPlaneLabel: "true", nodeconfig.MasterLabel: "true"}
	for {
		err := c.PatchNodeMeta(ctx, node, labels, nil)
		if err == nil {
			infof("Control-plane role label has been set successfully on node: %s", node)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}
