package supervisor

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"baremetal.k3s/tests/kube/internal/kubeapi"
	"baremetal.k3s/tests/kube/internal/testpki"
)

// secretsAPI answers the Secret and Node requests of NodePasswords as the
// API server does (kube-system Secrets by name, Nodes for the list).
type secretsAPI struct {
	mu       sync.Mutex
	secrets  map[string]map[string]any
	nodes    []map[string]any
	requests []string
	rv       int
}

const secretsPrefix = "/api/v1/namespaces/kube-system/secrets"

func newSecretsAPI() *secretsAPI { return &secretsAPI{secrets: map[string]map[string]any{}} }

func status(w http.ResponseWriter, code int, reason, msg string) {
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "reason": reason, "message": msg, "code": code})
}

func (f *secretsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
	var body map[string]any
	data, _ := io.ReadAll(r.Body)
	json.Unmarshal(data, &body)
	name := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, secretsPrefix), "/")
	switch {
	case r.URL.Path == "/api/v1/nodes" && r.Method == http.MethodGet:
		json.NewEncoder(w).Encode(map[string]any{"items": f.nodes})
	case r.URL.Path == secretsPrefix && r.Method == http.MethodGet:
		want := strings.TrimPrefix(r.URL.Query().Get("fieldSelector"), "type=")
		items := []any{}
		for _, s := range f.secrets {
			if s["type"] == want {
				items = append(items, s)
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"items": items})
	case r.URL.Path == secretsPrefix && r.Method == http.MethodPost:
		meta := body["metadata"].(map[string]any)
		n := meta["name"].(string)
		if _, ok := f.secrets[n]; ok {
			status(w, 409, "AlreadyExists", fmt.Sprintf("secrets %q already exists", n))
			return
		}
		f.rv++
		meta["uid"], meta["resourceVersion"] = "uid-"+n, fmt.Sprint(f.rv)
		meta["creationTimestamp"] = time.Now().UTC().Format(time.RFC3339)
		f.secrets[n] = body
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(body)
	case r.Method == http.MethodGet:
		s, ok := f.secrets[name]
		if !ok {
			status(w, 404, "NotFound", fmt.Sprintf("secrets %q not found", name))
			return
		}
		json.NewEncoder(w).Encode(s)
	case r.Method == http.MethodPatch:
		s, ok := f.secrets[name]
		if !ok {
			status(w, 404, "NotFound", "not found")
			return
		}
		meta := s["metadata"].(map[string]any)
		patch := body["metadata"].(map[string]any)
		if patch["resourceVersion"] != meta["resourceVersion"] {
			status(w, 409, "Conflict", "the object has been modified")
			return
		}
		f.rv++
		meta["ownerReferences"], meta["resourceVersion"] = patch["ownerReferences"], fmt.Sprint(f.rv)
		json.NewEncoder(w).Encode(s)
	case r.Method == http.MethodDelete:
		s, ok := f.secrets[name]
		uid, _ := body["preconditions"].(map[string]any)["uid"].(string)
		if !ok || s["metadata"].(map[string]any)["uid"] != uid {
			status(w, 409, "Conflict", "precondition failed")
			return
		}
		delete(f.secrets, name)
		json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "status": "Success"})
	default:
		status(w, 405, "MethodNotAllowed", r.Method)
	}
}

func (f *secretsAPI) count(prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.requests {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

func newNodePasswords(t *testing.T, api *secretsAPI, ready *bool) (*NodePasswords, *[]string) {
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	var logs []string
	var mu sync.Mutex
	return &NodePasswords{Program: "k3s", API: &kubeapi.Client{Base: srv.URL, HTTP: srv.Client()},
		Ready: func() bool { return *ready },
		Logf: func(level, format string, a ...any) {
			mu.Lock()
			logs = append(logs, level+" "+fmt.Sprintf(format, a...))
			mu.Unlock()
		}}, &logs
}

// k3s pkg/authenticator/hash/scrypt.go: "$1:<salt hex>:15:8:1:<base64>",
// scrypt N=2^15 r=8 p=1, 64-byte key; VerifyHash says "hash does not match".
func TestNodePasswordHashFormat(t *testing.T) {
	h, err := CreateHash("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\$1:[0-9a-f]{16}:15:8:1:[A-Za-z0-9+/]{86}$`).MatchString(h) {
		t.Fatalf("hash %q", h)
	}
	if err := VerifyHash(h, "s3cret"); err != nil {
		t.Fatal(err)
	}
	if err := VerifyHash(h, "other"); err == nil || err.Error() != "hash does not match" {
		t.Fatalf("other password: %v", err)
	}
	// The data.hash of a <node>.node-password.k3s Secret written by k3s v1.25.6
	// (shown in a public k3s tutorial): the double reads k3s's format.
	k3s := "$1:4aebe903193fe8ee:15:8:1:YVQ4KqlUfPfhjPTmzH3hLwCFxTY54GQAs0v3tAEM5/7SwtVp8lY/IWHWemmmYqPs/FL+tm3f+e69sWNm2PZy9A"
	if err := VerifyHash(k3s, "not-its-password"); err == nil || err.Error() != "hash does not match" {
		t.Fatalf("k3s's hash: %v", err)
	}
}

// k3s pkg/nodepassword/nodepassword.go ensure and validate.go
// GetNodeAuthValidator: the first request of a node name stores the hash in
// kube-system/<node>.node-password.k3s (lower case, immutable, type
// k3s.cattle.io/node-password, key "hash"); the same password passes, another
// one is ErrVerifyFailed, a 403; before the core is ready, 503.
func TestNodePasswordStoredThenChecked(t *testing.T) {
	ctx := context.Background()
	api, ready := newSecretsAPI(), true
	np, _ := newNodePasswords(t, api, &ready)
	if np.SecretName("Agent-1") != "agent-1.node-password.k3s" || np.SecretType() != "k3s.cattle.io/node-password" {
		t.Fatalf("%s %s", np.SecretName("Agent-1"), np.SecretType())
	}
	if code, err := np.Validate(ctx, "agent-1", "pw1"); code != 200 || err != nil {
		t.Fatalf("first join: %d %v", code, err)
	}
	s := api.secrets["agent-1.node-password.k3s"]
	if s == nil || s["immutable"] != true || s["type"] != "k3s.cattle.io/node-password" ||
		s["metadata"].(map[string]any)["namespace"] != "kube-system" {
		t.Fatalf("secret %v", s)
	}
	var stored kubeapi.Secret
	data, _ := json.Marshal(s)
	json.Unmarshal(data, &stored)
	if err := VerifyHash(string(stored.Data["hash"]), "pw1"); err != nil || len(stored.Data) != 1 {
		t.Fatalf("stored hash %q: %v", stored.Data, err)
	}
	if code, err := np.Validate(ctx, "agent-1", "pw1"); code != 200 || err != nil {
		t.Fatalf("same password: %d %v", code, err)
	}
	code, err := np.Validate(ctx, "agent-1", "pw2")
	if code != 403 || err == nil || err.Error() != "unable to verify password for node agent-1: hash does not match" {
		t.Fatalf("another password: %d %v", code, err)
	}
	if n := api.count("POST "); n != 1 {
		t.Fatalf("%d creates", n)
	}
	ready = false
	if code, err := np.Validate(ctx, "agent-2", "pw"); code != 503 || err != ErrCoreNotReady {
		t.Fatalf("not ready: %d %v", code, err)
	}
}

// k3s pkg/server/handlers/handlers.go ClientKubeletCert: a refused node
// password is util.SendError(err, resp, req, 403): logged "Sending HTTP 403
// response to <addr>: <err>" and answered with a metav1.Status.
func TestClientKubeletRefusesAnotherPassword(t *testing.T) {
	dir := t.TempDir()
	serverCA, clientCA := testpki.CA(t, "k3s-server-ca"), testpki.CA(t, "k3s-client-ca")
	sc, _ := serverCA.Write(t, dir, "server-ca")
	cc, ck := clientCA.Write(t, dir, "client-ca")
	signer, err := LoadCA(cc, ck)
	if err != nil {
		t.Fatal(err)
	}
	p := Passwd{}
	p.EnsureUser("node", "k3s"+AgentGroup, "agt")
	api, ready := newSecretsAPI(), true
	np, logs := newNodePasswords(t, api, &ready)
	h := NewHandler(Config{Program: "k3s", ServerCA: sc, ClientCA: cc, Signer: signer, Passwd: func() Passwd { return p },
		NodePasswords: np, Logf: np.Logf})
	csr := testCSR(t)
	hdr := map[string]string{"k3s-Node-Name": "Agent-1", "k3s-Node-Password": "first"}
	if rec := call(h, http.MethodPost, "/v1-k3s/client-kubelet.crt", "node", "agt", hdr, csr); rec.Code != 200 {
		t.Fatalf("first join: %d %s", rec.Code, rec.Body)
	}
	hdr["k3s-Node-Password"] = "rebuilt-host"
	rec := call(h, http.MethodPost, "/v1-k3s/client-kubelet.crt", "node", "agt", hdr, csr)
	var st map[string]any
	json.Unmarshal(rec.Body.Bytes(), &st)
	want := "unable to verify password for node agent-1: hash does not match"
	if rec.Code != 403 || st["kind"] != "Status" || st["reason"] != "Forbidden" || st["message"] != want || st["code"] != 403.0 {
		t.Fatalf("rebuilt host: %d %s", rec.Code, rec.Body)
	}
	if got := strings.Join(*logs, "\n"); !strings.Contains(got, "error Sending HTTP 403 response to ") || !strings.Contains(got, ": "+want) {
		t.Fatalf("log:\n%s", got)
	}
}

// k3s pkg/nodepassword/controller.go: onChangeNode gives a node's Secret an
// OwnerReference to its Node (the garbage collector deletes the Secret with
// the Node); sync deletes Secrets older than MinOrphanSecretAge (10m) that
// have no Node.
func TestNodePasswordController(t *testing.T) {
	ctx := context.Background()
	api, ready := newSecretsAPI(), true
	np, logs := newNodePasswords(t, api, &ready)
	for _, n := range []string{"agent-1", "gone", "young"} {
		if code, err := np.Validate(ctx, n, "pw"); code != 200 || err != nil {
			t.Fatal(code, err)
		}
	}
	old := time.Now().Add(-MinOrphanSecretAge - time.Minute).UTC().Format(time.RFC3339)
	for _, n := range []string{"gone", "agent-1"} { // both old; agent-1 has its Node
		api.secrets[n+".node-password.k3s"]["metadata"].(map[string]any)["creationTimestamp"] = old
	}
	api.secrets["other.node-password.k3s"] = map[string]any{"type": "Opaque", "metadata": map[string]any{
		"name": "other.node-password.k3s", "uid": "u", "creationTimestamp": old}}
	api.nodes = []map[string]any{{"metadata": map[string]any{"name": "agent-1", "uid": "node-uid-1"}}}
	if err := np.Sync(ctx, time.Now(), true); err != nil {
		t.Fatal(err)
	}
	if api.secrets["agent-1.node-password.k3s"] == nil {
		t.Fatal("the Secret of an existing Node was deleted")
	}
	owners, _ := json.Marshal(api.secrets["agent-1.node-password.k3s"]["metadata"].(map[string]any)["ownerReferences"])
	if string(owners) != `[{"apiVersion":"v1","kind":"Node","name":"agent-1","uid":"node-uid-1"}]` {
		t.Fatalf("owners %s", owners)
	}
	if _, ok := api.secrets["gone.node-password.k3s"]; ok {
		t.Error("the old orphan was kept")
	}
	for _, n := range []string{"agent-1.node-password.k3s", "young.node-password.k3s", "other.node-password.k3s"} {
		if _, ok := api.secrets[n]; !ok {
			t.Errorf("%s deleted", n)
		}
	}
	patches := api.count("PATCH ")
	if err := np.Sync(ctx, time.Now(), true); err != nil || api.count("PATCH ") != patches {
		t.Fatalf("second pass patched again: %v", err)
	}
	got := strings.Join(*logs, "\n")
	if !strings.Contains(got, "info Adding node OwnerReference to node-password secret agent-1.node-password.k3s") ||
		!strings.Contains(got, "warning Deleted orphaned node-password secret gone.node-password.k3s created "+old) {
		t.Fatalf("log:\n%s", got)
	}
}

func testCSR(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "ignored"}}, k)
	if err != nil {
		t.Fatal(err)
	}
	return string(csr)
}
