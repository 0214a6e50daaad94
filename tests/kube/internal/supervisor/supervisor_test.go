package supervisor

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"baremetal.k3s/tests/kube/internal/testpki"
)

func TestPasswdRoundTripAndAuthenticate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cred", "passwd")
	p, err := ReadPasswd(path)
	if err != nil || len(p) != 0 {
		t.Fatalf("missing file: %v %v", p, err)
	}
	p.EnsureUser("server", "k3s:server", "s3cret")
	p.EnsureUser("node", "k3s:agent", "n0de")
	if err := p.Write(path); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	data, _ := os.ReadFile(path)
	if string(data) != "n0de,node,node,k3s:agent\ns3cret,server,server,k3s:server\n" {
		t.Fatalf("passwd file:\n%s", data)
	}
	q, err := ReadPasswd(path)
	if err != nil {
		t.Fatal(err)
	}
	groups, ok := q.Authenticate("node", "n0de")
	if !ok || !reflect.DeepEqual(groups, []string{"k3s:agent", "system:authenticated"}) {
		t.Fatalf("node: %v %v", groups, ok)
	}
	for _, c := range [][2]string{{"node", "s3cret"}, {"nobody", "n0de"}, {"server", ""}} {
		if _, ok := q.Authenticate(c[0], c[1]); ok {
			t.Errorf("%v authenticated", c)
		}
	}
	os.WriteFile(path, []byte("short,line\n"), 0o600)
	if _, err := ReadPasswd(path); err == nil || !strings.Contains(err.Error(), "at least 3 columns") {
		t.Fatalf("short line: %v", err)
	}
}

func newHandler(t *testing.T) (http.Handler, *testpki.Pair, *testpki.Pair) {
	dir := t.TempDir()
	serverCA, clientCA := testpki.CA(t, "k3s-server-ca"), testpki.CA(t, "k3s-client-ca")
	sc, _ := serverCA.Write(t, dir, "server-ca")
	cc, ck := clientCA.Write(t, dir, "client-ca")
	signer, err := LoadCA(cc, ck)
	if err != nil {
		t.Fatal(err)
	}
	p := Passwd{}
	p.EnsureUser("server", "k3s"+ServerGroup, "srv")
	p.EnsureUser("node", "k3s"+AgentGroup, "agt")
	ready := false
	h := NewHandler(Config{Program: "k3s", ServerCA: sc, ClientCA: cc, Signer: signer,
		Passwd: func() Passwd { return p }, Agent: AgentConfig{HTTPSPort: 6443, SupervisorPort: 9345},
		Ready: func() bool { r := ready; ready = true; return r }, APIServers: func() []string { return []string{"10.0.0.1:6443"} }})
	return h, serverCA, clientCA
}

func call(h http.Handler, method, path, user, pass string, hdr map[string]string, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if user != "" {
		r.SetBasicAuth(user, pass)
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestHandlerAuth(t *testing.T) {
	h, serverCA, _ := newHandler(t)
	if w := call(h, "GET", "/cacerts", "", "", nil, ""); w.Code != 200 || w.Body.String() != string(serverCA.CertPEM) {
		t.Fatalf("/cacerts: %d %q", w.Code, w.Body)
	}
	if w := call(h, "GET", "/ping", "", "", nil, ""); w.Body.String() != "pong" {
		t.Fatalf("/ping: %q", w.Body)
	}
	cases := []struct {
		user, pass string
		code       int
	}{
		{"", "", 403},          // no credentials: forbidden
		{"node", "wrong", 401}, // wrong password: not authorized
		{"server", "srv", 403}, // k3s:server is not an agent role
		{"node", "agt", 200},
	}
	for _, c := range cases {
		if w := call(h, "GET", "/v1-k3s/config", c.user, c.pass, nil, ""); w.Code != c.code {
			t.Errorf("%s:%s: %d %s, want %d", c.user, c.pass, w.Code, w.Body, c.code)
		}
	}
	w := call(h, "GET", "/v1-k3s/config", "node", "agt", nil, "")
	if !strings.Contains(w.Body.String(), `"HTTPSPort":6443`) || !strings.Contains(w.Body.String(), `"SupervisorPort":9345`) {
		t.Fatalf("config: %s", w.Body)
	}
	if w := call(h, "GET", "/v1-k3s/readyz", "node", "agt", nil, ""); w.Code != 503 {
		t.Fatalf("readyz before the API server: %d", w.Code)
	}
	if w := call(h, "GET", "/v1-k3s/readyz", "node", "agt", nil, ""); w.Code != 200 || w.Body.String() != "ok" {
		t.Fatalf("readyz: %d %s", w.Code, w.Body)
	}
	if w := call(h, "GET", "/v1-k3s/apiservers", "node", "agt", nil, ""); w.Body.String() != "[\"10.0.0.1:6443\"]\n" {
		t.Fatalf("apiservers: %s", w.Body)
	}
	if w := call(h, "GET", "/v1-rke2/config", "node", "agt", nil, ""); w.Code != 404 {
		t.Fatalf("other program's path: %d", w.Code)
	}
}

func TestClientKubeletSignsTheRequest(t *testing.T) {
	h, _, clientCA := newHandler(t)
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	csr, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "ignored"}}, k)
	hdr := map[string]string{"k3s-Node-Name": "Agent-1", "k3s-Node-Password": "pw"}
	if w := call(h, "POST", "/v1-k3s/client-kubelet.crt", "node", "agt", map[string]string{"k3s-Node-Name": "a"}, string(csr)); w.Code != 400 || w.Body.String() != "node password not set" {
		t.Fatalf("no password: %d %s", w.Code, w.Body)
	}
	w := call(h, "POST", "/v1-k3s/client-kubelet.crt", "node", "agt", hdr, string(csr))
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	b, rest := pem.Decode(w.Body.Bytes())
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "system:node:agent-1" || !reflect.DeepEqual(cert.Subject.Organization, []string{"system:nodes"}) {
		t.Fatalf("subject %v", cert.Subject)
	}
	if err := cert.CheckSignatureFrom(clientCA.Cert); err != nil {
		t.Fatal(err)
	}
	if !cert.PublicKey.(*ecdsa.PublicKey).Equal(&k.PublicKey) {
		t.Fatal("not the requester's key")
	}
	if ca, _ := pem.Decode(rest); ca == nil || string(pem.EncodeToMemory(ca)) != string(clientCA.CertPEM) {
		t.Fatal("CA certificate does not follow")
	}
	if w := call(h, "GET", "/v1-k3s/client-kubelet.crt", "node", "agt", hdr, ""); w.Code != 405 {
		t.Fatalf("GET: %d", w.Code)
	}
}
