package kubeapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"baremetal.k3s/tests/kube/internal/nodeconfig"
)

// fakeAPI keeps Nodes and Leases by path and answers as the API server does
// for the requests the node agent makes.
type fakeAPI struct {
	mu       sync.Mutex
	objects  map[string]map[string]any
	requests []string
}

func (f *fakeAPI) status(w http.ResponseWriter, code int, reason, msg string) {
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "reason": reason, "message": msg, "code": code})
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
	var body map[string]any
	data, _ := io.ReadAll(r.Body)
	json.Unmarshal(data, &body)
	switch r.Method {
	case http.MethodPost:
		name := body["metadata"].(map[string]any)["name"].(string)
		key := r.URL.Path + "/" + name
		if _, ok := f.objects[key]; ok {
			f.status(w, 409, "AlreadyExists", name+" already exists")
			return
		}
		body["metadata"].(map[string]any)["uid"] = "uid-" + name
		f.objects[key] = body
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(body)
	case http.MethodGet:
		if r.URL.Path == "/api/v1/nodes" {
			var items []any
			for k, o := range f.objects {
				if strings.HasPrefix(k, "/api/v1/nodes/") {
					items = append(items, o)
				}
			}
			json.NewEncoder(w).Encode(map[string]any{"items": items})
			return
		}
		o, ok := f.objects[r.URL.Path]
		if !ok {
			f.status(w, 404, "NotFound", "not found")
			return
		}
		json.NewEncoder(w).Encode(o)
	case http.MethodPatch:
		key := strings.TrimSuffix(r.URL.Path, "/status")
		o, ok := f.objects[key]
		if !ok {
			f.status(w, 404, "NotFound", "not found")
			return
		}
		for k, v := range body {
			if m, ok := v.(map[string]any); ok && o[k] != nil {
				for mk, mv := range m {
					o[k].(map[string]any)[mk] = mv
				}
			} else {
				o[k] = v
			}
		}
		json.NewEncoder(w).Encode(o)
	}
}

func TestNodeRegistrationAndLease(t *testing.T) {
	f := &fakeAPI{objects: map[string]map[string]any{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c := &Client{Base: srv.URL, HTTP: srv.Client()}
	ctx := context.Background()
	n := Node{Metadata: Meta{Name: "agent-1", Labels: map[string]string{"gpu": "nvidia"}},
		Spec: NodeSpec{Taints: []nodeconfig.Taint{{Key: "gpu", Value: "true", Effect: "NoSchedule"}}}}
	stored, created, err := c.CreateNode(ctx, n)
	if err != nil || !created || stored.Metadata.UID != "uid-agent-1" || stored.Spec.Taints[0].Key != "gpu" {
		t.Fatalf("CreateNode = %+v %v %v", stored, created, err)
	}
	stored, created, err = c.CreateNode(ctx, n)
	if err != nil || created || stored.Metadata.UID != "uid-agent-1" {
		t.Fatalf("CreateNode again = %+v %v %v", stored, created, err)
	}
	if err := c.PatchNodeStatus(ctx, "agent-1", NodeStatus{Conditions: ReadyConditions(time.Now(), time.Now())}); err != nil {
		t.Fatal(err)
	}
	if err := c.PatchNodeMeta(ctx, "agent-1", map[string]string{"gpu": "amd"}, nil); err != nil {
		t.Fatal(err)
	}
	nodes, err := c.ListNodes(ctx)
	if err != nil || len(nodes) != 1 || !IsReady(nodes[0]) || !HasTaint(nodes[0], "gpu") || nodes[0].Metadata.Labels["gpu"] != "amd" {
		t.Fatalf("ListNodes = %+v %v", nodes, err)
	}
	for i := 0; i < 2; i++ {
		if err := c.RenewNodeLease(ctx, "agent-1", "uid-agent-1", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	l, err := c.GetLease(ctx, NodeLeaseNamespace, "agent-1")
	if err != nil || *l.Spec.HolderIdentity != "agent-1" || *l.Spec.LeaseDurationSeconds != 40 || l.Metadata.OwnerReferences[0].UID != "uid-agent-1" {
		t.Fatalf("lease %+v %v", l, err)
	}
	want := []string{
		"POST /api/v1/nodes application/json",
		"POST /api/v1/nodes application/json",
		"GET /api/v1/nodes/agent-1 application/json",
		"PATCH /api/v1/nodes/agent-1/status " + StrategicPatch,
		"PATCH /api/v1/nodes/agent-1 " + MergePatch,
		"GET /api/v1/nodes application/json",
		"PATCH /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/agent-1 " + MergePatch,
		"POST /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases application/json",
		"PATCH /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/agent-1 " + MergePatch,
	}
	got := strings.Join(f.requests[:len(want)], "\n")
	if got != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s", got)
	}
	if _, err := c.GetLease(ctx, NodeLeaseNamespace, "nope"); !IsNotFound(err) || err.Error() != "not found" {
		t.Fatalf("missing lease: %v", err)
	}
}
