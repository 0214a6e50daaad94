package launcher

import (
	"testing"

	"baremetal.k3s/tests/kube/internal/kubeapi"
)

// TestMemberRemovalFor follows k3s's member controller: a deleted etcd
// Node with the finalizer has its member removed and the finalizer
// dropped; remove=true is honoured once and recorded; anything else is
// left alone.
func TestMemberRemovalFor(t *testing.T) {
	etcdNode := func(ann map[string]string, finalizers []string, deleted bool) kubeapi.Node {
		n := kubeapi.Node{Metadata: kubeapi.Meta{Name: "server-2", Labels: map[string]string{EtcdRoleLabel: "true"},
			Annotations: ann, Finalizers: finalizers}}
		if deleted {
			n.Metadata.DeletionTimestamp = "2026-11-26T20:00:00Z"
		}
		return n
	}
	named := map[string]string{EtcdNodeNameAnnotation: "server-2-7f3a"}
	cases := []struct {
		name string
		node kubeapi.Node
		want memberRemoval
		ok   bool
	}{
		{"deleted, with the finalizer", etcdNode(named, []string{"other", EtcdMemberFinalizer}, true),
			memberRemoval{member: "server-2-7f3a", dropFinalizer: true}, true},
		{"deleted, member unknown", etcdNode(nil, []string{EtcdMemberFinalizer}, true),
			memberRemoval{dropFinalizer: true}, true},
		{"deleted, finalizer already gone", etcdNode(named, []string{"other"}, true), memberRemoval{}, false},
		{"asked to leave", etcdNode(map[string]string{EtcdNodeNameAnnotation: "server-2-7f3a", EtcdRemoveAnnotation: "true"}, nil, false),
			memberRemoval{member: "server-2-7f3a", recordAnnotated: true}, true},
		{"asked to leave, already left", etcdNode(map[string]string{EtcdNodeNameAnnotation: "m", EtcdRemoveAnnotation: "true",
			EtcdRemovedMemberAnnotation: "m"}, nil, false), memberRemoval{}, false},
		{"a running etcd Node", etcdNode(named, []string{EtcdMemberFinalizer}, false), memberRemoval{}, false},
		{"not an etcd Node", kubeapi.Node{Metadata: kubeapi.Meta{Name: "agent-1", Finalizers: []string{EtcdMemberFinalizer},
			DeletionTimestamp: "2026-11-26T20:00:00Z"}}, memberRemoval{}, false},
	}
	for _, c := range cases {
		got, ok := memberRemovalFor(c.node)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: got %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
