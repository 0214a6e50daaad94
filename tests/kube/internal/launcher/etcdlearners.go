// k3s's controllers of embedded etcd, once the API server runs: the
// server's own Node gets the etcd role label and member annotations
// (metadata_controller.go), and the etcd leader promotes learners and sets
// the EtcdIsVoter condition on every etcd Node (ETCD.manageLearners).

package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"baremetal.k3s/tests/kube/internal/kubeapi"
	"baremetal.k3s/tests/kube/internal/nodeconfig"
)

// memberStatus is what the leader found of a member (k3s's MemberStatus).
type memberStatus string

const (
	statusUnjoined  memberStatus = "unjoined"
	statusUnhealthy memberStatus = "unhealthy"
	statusLearner   memberStatus = "learner"
	statusVoter     memberStatus = "voter"
)

// etcdCondition is k3s's EtcdIsVoter condition for a status (message, when
// given, replaces the default one).
func etcdCondition(status memberStatus, message string) kubeapi.Condition {
	c := kubeapi.Condition{Type: EtcdVoterCondition, Status: "False"}
	switch status {
	case statusLearner:
		c.Reason, c.Message = "MemberIsLearner", "Node has not been promoted to voting member of the etcd cluster"
	case statusVoter:
		c.Status, c.Reason, c.Message = "True", "MemberNotLearner", "Node is a voting member of the etcd cluster"
	case statusUnhealthy:
		c.Reason, c.Message = "Unhealthy", "Node is unhealthy"
	default:
		c.Reason, c.Message = "NotAMember", "Node is not a member of the etcd cluster"
	}
	if message != "" {
		c.Message = message
	}
	return c
}

// etcdConditionUpdate is k3s's setEtcdStatusCondition: the condition to
// write for a Node whose current one is cur (nil: none), or nil when
// nothing changed and its heartbeat is younger than 5 minutes.
func etcdConditionUpdate(cur *kubeapi.Condition, want kubeapi.Condition, now time.Time) *kubeapi.Condition {
	stamp := now.UTC().Format(time.RFC3339)
	if cur != nil && cur.Status == want.Status && cur.Reason == want.Reason && cur.Message == want.Message {
		if hb, err := time.Parse(time.RFC3339, cur.LastHeartbeatTime); err == nil && now.Sub(hb) < etcdConditionRefresh {
			return nil
		}
		c := *cur
		c.LastHeartbeatTime = stamp
		return &c
	}
	want.LastHeartbeatTime, want.LastTransitionTime = stamp, stamp
	return &want
}

func nodeCondition(n kubeapi.Node, typ string) *kubeapi.Condition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == typ {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// etcdMemberNodes pairs members with the etcd Nodes whose node-name
// annotation names them; it returns the member of each Node (nil: none).
func etcdMemberNodes(members []EtcdMember, nodes []kubeapi.Node) map[string]*EtcdMember {
	out := map[string]*EtcdMember{}
	for _, n := range nodes {
		if n.Metadata.Labels[EtcdRoleLabel] != "true" {
			continue
		}
		out[n.Metadata.Name] = nil
		for i := range members {
			if members[i].Name != "" && members[i].Name == n.Metadata.Annotations[EtcdNodeNameAnnotation] {
				out[n.Metadata.Name] = &members[i]
				break
			}
		}
	}
	return out
}

// startEtcdControllers runs, after the API server is ready, the metadata
// of this server's Node, the leader's learner management and the member
// controller (etcdmembers.go).
func (s *server) startEtcdControllers(ctx context.Context) {
	e := s.etcd
	if e == nil {
		return
	}
	admin, err := kubeapi.NewFromFiles(s.apiURL(), s.p.path("server-ca.crt"), s.p.path("client-admin.crt"), s.p.path("client-admin.key"))
	if err != nil {
		warnf("etcd controllers: %v", err)
		return
	}
	if !s.v.Bool("disable-agent") {
		go e.setNodeMetadata(ctx, admin)
	}
	go e.manageLearners(ctx, admin)
	go e.manageMembers(ctx, admin)
}

// addMemberFinalizer puts the member controller's finalizer on this
// server's Node (a delete of the Node then waits until its member is gone).
func (e *managedEtcd) addMemberFinalizer(ctx context.Context, c *kubeapi.Client) error {
	n, err := c.GetNode(ctx, e.node)
	if err != nil || slices.Contains(n.Metadata.Finalizers, EtcdMemberFinalizer) {
		return err
	}
	return c.SetNodeFinalizers(ctx, e.node, n.Metadata.ResourceVersion, append(slices.Clone(n.Metadata.Finalizers), EtcdMemberFinalizer))
}

// setNodeMetadata labels this server's Node as k3s's metadata controller
// does: node-role.kubernetes.io/etcd, control-plane and master "true", and
// the annotations naming its member and address.
func (e *managedEtcd) setNodeMetadata(ctx context.Context, c *kubeapi.Client) {
	labels := map[string]string{EtcdRoleLabel: "true", nodeconfig.ControlPlaneLabel: "true", nodeconfig.MasterLabel: "true"}
	ann := map[string]string{EtcdNodeNameAnnotation: e.self.name, EtcdNodeAddressAnnotation: e.self.address}
	for {
		if err := c.PatchNodeMeta(ctx, e.node, labels, ann); err == nil && e.addMemberFinalizer(ctx, c) == nil {
			infof("etcd member metadata set on node %s: %s=%s", e.node, EtcdNodeNameAnnotation, e.self.name)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
	}
}

// manageLearners runs k3s's learner management every interval: on the
// etcd leader only, learners are promoted once in sync (or evicted after
// 5 minutes without progress), and every Node labelled etcd gets its
// EtcdIsVoter condition.
func (e *managedEtcd) manageLearners(ctx context.Context, c *kubeapi.Client) {
	everyTick(ctx, e.manageEvery, e.manageEvery+10*time.Second, func(ctx context.Context) { e.manageOnce(ctx, c) })
}

// everyTick runs once(ctx) every interval until ctx ends, each run bounded
// by budget.
func everyTick(ctx context.Context, interval, budget time.Duration, once func(context.Context)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rctx, cancel := context.WithTimeout(ctx, budget)
		once(rctx)
		cancel()
	}
}

type learnerProgress struct {
	ID               uint64    `json:"id,omitempty"`
	Name             string    `json:"name,omitempty"`
	RaftAppliedIndex uint64    `json:"raftAppliedIndex,omitempty"`
	LastProgress     time.Time `json:"lastProgress,omitempty"`
}

func (e *managedEtcd) manageOnce(ctx context.Context, c *kubeapi.Client) {
	status, err := e.client.Status(ctx, e.self.localURL())
	if err != nil {
		errorf("Failed to check local etcd status for learner management: %v", err)
		return
	}
	if status.MemberID != status.Leader {
		return
	}
	e.st.update(func(st *State) { st.EtcdLeaderSeenAt = now() })
	progress, err := e.getLearnerProgress(ctx)
	if err != nil {
		errorf("Failed to get recorded learner progress from etcd: %v", err)
		return
	}
	members, err := e.client.MemberList(ctx)
	if err != nil {
		errorf("Failed to get etcd members for learner management: %v", err)
		return
	}
	nodes, err := c.ListNodes(ctx)
	if err != nil {
		warnf("Failed to list nodes with etcd role: %v", err)
	}
	statuses := map[uint64]memberStatus{}
	for _, m := range members {
		statuses[m.ID] = statusVoter
		if m.IsLearner {
			statuses[m.ID] = statusLearner
			if err := e.trackLearnerProgress(ctx, progress, m); err != nil {
				errorf("Failed to track learner progress towards promotion: %v", err)
			}
		}
	}
	for name, m := range etcdMemberNodes(members, nodes) {
		status, message := statusUnjoined, ""
		if m != nil {
			status, message = statuses[m.ID], ""
			if len(m.ClientURLs) > 0 {
				if _, err := e.memberStatus(ctx, m.ClientURLs[0]); err != nil {
					status, message = statusUnhealthy, err.Error()
				}
			}
		}
		var node kubeapi.Node
		for _, n := range nodes {
			if n.Metadata.Name == name {
				node = n
			}
		}
		upd := etcdConditionUpdate(nodeCondition(node, EtcdVoterCondition), etcdCondition(status, message), time.Now())
		if upd == nil {
			continue
		}
		if err := c.PatchNodeStatus(ctx, name, kubeapi.NodeStatus{Conditions: []kubeapi.Condition{*upd}}); err != nil {
			errorf("Unable to set etcd status condition %s: %v", name, err)
			continue
		}
		if cur := nodeCondition(node, EtcdVoterCondition); cur == nil || cur.Status != upd.Status || cur.Reason != upd.Reason {
			infof("Node %s etcd status condition: %s=%s (%s)", name, EtcdVoterCondition, upd.Status, upd.Reason)
			e.st.event("etcd_condition", map[string]any{"node": name, "status": upd.Status, "reason": upd.Reason})
		}
	}
}

func (e *managedEtcd) memberStatus(ctx context.Context, endpoint string) (EtcdStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := e.client.Status(ctx, endpoint)
	if err != nil {
		return st, fmt.Errorf("failed to check etcd member status: %w", err)
	}
	if len(st.Errors) > 0 {
		return st, fmt.Errorf("etcd member has status errors: %v", st.Errors)
	}
	return st, nil
}

// learnerHeld: the member's joining server asked (K3S_DOUBLE_LEARNER_HOLD)
// to stay a learner until a time not yet passed.
func (e *managedEtcd) learnerHeld(ctx context.Context, m EtcdMember) (time.Time, bool) {
	if m.Name == "" {
		return time.Time{}, false
	}
	v, ok, err := e.client.Get(ctx, learnerHoldPrefix+m.Name)
	if err != nil || !ok {
		return time.Time{}, false
	}
	until, err := time.Parse(time.RFC3339, string(v))
	return until, err == nil && time.Now().Before(until)
}

// trackLearnerProgress is k3s's: promote the learner if etcd lets it (it is
// in sync with the leader), else record its raft applied index and evict
// it after 5 minutes without progress.
func (e *managedEtcd) trackLearnerProgress(ctx context.Context, progress *learnerProgress, m EtcdMember) error {
	if until, held := e.learnerHeld(ctx, m); held {
		if e.heldLogged[m.Name] != until {
			infof("Learner %s held as a learner until %s (K3S_DOUBLE_LEARNER_HOLD)", m.Name, until.Format(time.RFC3339))
			if e.heldLogged == nil {
				e.heldLogged = map[string]time.Time{}
			}
			e.heldLogged[m.Name] = until
		}
		return nil
	}
	err := e.client.MemberPromote(ctx, m.ID)
	if err == nil {
		infof("Promoted learner %s", m.Name)
		e.st.event("etcd_member_promoted", map[string]any{"member": m.Name, "id": fmt.Sprintf("%x", m.ID), "by": e.self.name})
		return nil
	}
	if !errors.Is(err, ErrEtcdLearnerNotReady) {
		infof("Unable to promote learner %s: %v", m.Name, err)
	}
	now := time.Now()
	if progress.Name != m.Name || progress.ID != m.ID {
		*progress = learnerProgress{ID: m.ID, Name: m.Name, LastProgress: now}
	}
	for _, ep := range m.ClientURLs {
		st, err := e.memberStatus(ctx, ep)
		if err != nil {
			continue
		}
		if progress.RaftAppliedIndex < st.RaftAppliedIndex {
			progress.RaftAppliedIndex, progress.LastProgress = st.RaftAppliedIndex, now
		}
		break
	}
	if !progress.LastProgress.Equal(now) {
		warnf("Learner %s stalled at RaftAppliedIndex=%d for %s", progress.Name, progress.RaftAppliedIndex, now.Sub(progress.LastProgress))
	}
	if now.Sub(progress.LastProgress) > learnerMaxStallTime {
		if err := e.client.MemberRemove(ctx, m.ID); err != nil {
			return err
		}
		warnf("Removed learner %s from etcd cluster", m.Name)
		return nil
	}
	data, err := json.Marshal(progress)
	if err != nil {
		return err
	}
	return e.client.Put(ctx, learnerProgressKey, string(data))
}

func (e *managedEtcd) getLearnerProgress(ctx context.Context) (*learnerProgress, error) {
	p := &learnerProgress{}
	v, ok, err := e.client.Get(ctx, learnerProgressKey)
	if err != nil || !ok {
		return p, err
	}
	return p, json.Unmarshal(v, p)
}
