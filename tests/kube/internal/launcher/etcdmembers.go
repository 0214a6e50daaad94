// k3s's member controller of embedded etcd (pkg/etcd/member_controller.go):
// a server's Node carries the finalizer wrangler.cattle.io/managed-etcd-controller,
// and deleting that Node removes its member from etcd before the Node goes;
// a Node annotated etcd.k3s.cattle.io/remove=true has its member removed
// and the member's name recorded in etcd.k3s.cattle.io/removed-node-name.
// k3s reacts to the Node's events; the double looks every two seconds.

package launcher

import (
	"context"
	"slices"
	"strings"
	"time"

	"baremetal.k3s/tests/kube/internal/kubeapi"
)

const (
	EtcdMemberFinalizer         = "wrangler.cattle.io/managed-etcd-controller"
	EtcdRemoveAnnotation        = "etcd.k3s.cattle.io/remove"
	EtcdRemovedMemberAnnotation = "etcd.k3s.cattle.io/removed-node-name"
	etcdMembersEvery            = 2 * time.Second
)

// memberRemoval is what the controller does for one Node: the member to
// remove (empty: none), whether to drop the finalizer, whether to record
// the removal in the annotation.
type memberRemoval struct {
	member          string
	dropFinalizer   bool
	recordAnnotated bool
}

// memberRemovalFor decides for Node n (pure: the tests table it).
func memberRemovalFor(n kubeapi.Node) (memberRemoval, bool) {
	if n.Metadata.Labels[EtcdRoleLabel] != "true" {
		return memberRemoval{}, false
	}
	member := n.Metadata.Annotations[EtcdNodeNameAnnotation]
	if n.Metadata.DeletionTimestamp != "" {
		if !slices.Contains(n.Metadata.Finalizers, EtcdMemberFinalizer) {
			return memberRemoval{}, false
		}
		return memberRemoval{member: member, dropFinalizer: true}, true
	}
	if strings.EqualFold(n.Metadata.Annotations[EtcdRemoveAnnotation], "true") && n.Metadata.Annotations[EtcdRemovedMemberAnnotation] == "" && member != "" {
		return memberRemoval{member: member, recordAnnotated: true}, true
	}
	return memberRemoval{}, false
}

// manageMembers runs the member controller until ctx ends.
func (e *managedEtcd) manageMembers(ctx context.Context, c *kubeapi.Client) {
	everyTick(ctx, etcdMembersEvery, 10*time.Second, func(ctx context.Context) { e.membersOnce(ctx, c) })
}

func (e *managedEtcd) membersOnce(ctx context.Context, c *kubeapi.Client) {
	nodes, err := c.ListNodes(ctx)
	if err != nil {
		return
	}
	for _, n := range nodes {
		act, ok := memberRemovalFor(n)
		if !ok {
			continue
		}
		if act.member != "" && act.member != e.self.name {
			if err := e.removeMemberNamed(ctx, act.member); err != nil {
				errorf("Failed to remove etcd member %s of node %s: %v", act.member, n.Metadata.Name, err)
				continue
			}
		}
		switch {
		case act.dropFinalizer:
			kept := slices.DeleteFunc(slices.Clone(n.Metadata.Finalizers), func(f string) bool { return f == EtcdMemberFinalizer })
			if err := c.SetNodeFinalizers(ctx, n.Metadata.Name, n.Metadata.ResourceVersion, kept); err != nil {
				warnf("Node %s: finalizer %s not removed yet: %v", n.Metadata.Name, EtcdMemberFinalizer, err)
			}
		case act.recordAnnotated:
			if err := c.PatchNodeMeta(ctx, n.Metadata.Name, nil, map[string]string{EtcdRemovedMemberAnnotation: act.member}); err != nil {
				warnf("Node %s: removal of member %s not recorded yet: %v", n.Metadata.Name, act.member, err)
			}
		}
	}
}

// removeMemberNamed removes the member of that name, when there is one.
func (e *managedEtcd) removeMemberNamed(ctx context.Context, name string) error {
	members, err := e.client.MemberList(ctx)
	if err != nil {
		return err
	}
	for _, m := range members {
		if m.Name != name {
			continue
		}
		if err := e.client.MemberRemove(ctx, m.ID); err != nil {
			return err
		}
		infof("Removed etcd member %s (its node was deleted or asked to leave)", name)
		e.st.event("etcd_member_removed", map[string]any{"member": name, "by": e.self.name})
	}
	return nil
}
