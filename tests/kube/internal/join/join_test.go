package join

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"baremetal.k3s/tests/kube/internal/supervisor"
	"baremetal.k3s/tests/kube/internal/testpki"
	"baremetal.k3s/tests/kube/internal/token"
)

func TestSupervisorURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://server:6443":        "https://server:9345",
		"https://server":             "https://server:9345",
		"https://server:9345":        "https://server:9345",
		"https://10.0.0.1:6443/":     "https://10.0.0.1:9345",
		"https://[fd00::1]:6443":     "https://[fd00::1]:9345",
		"https://lb.example.com:443": "https://lb.example.com:443",
	} {
		if got, err := SupervisorURL(in, 6443, 9345); err != nil || got != want {
			t.Errorf("%s: %s %v", in, got, err)
		}
	}
	if _, err := SupervisorURL("http://server:6443", 6443, 9345); err == nil || !strings.Contains(err.Error(), "only https:// URLs are supported") {
		t.Errorf("http: %v", err)
	}
}

// supervisorServer is the supervisor handler on TLS with a certificate of its server CA.
func supervisorServer(t *testing.T) (*httptest.Server, []byte) {
	dir := t.TempDir()
	serverCA, clientCA := testpki.CA(t, "k3s-server-ca"), testpki.CA(t, "k3s-client-ca")
	sc, _ := serverCA.Write(t, dir, "server-ca")
	cc, ck := clientCA.Write(t, dir, "client-ca")
	signer, err := supervisor.LoadCA(cc, ck)
	if err != nil {
		t.Fatal(err)
	}
	p := supervisor.Passwd{}
	p.EnsureUser("server", "k3s:server", "s3cret")
	p.EnsureUser("node", "k3s:agent", "s3cret")
	h := supervisor.NewHandler(supervisor.Config{Program: "k3s", ServerCA: sc, ClientCA: cc, Signer: signer,
		Passwd: func() supervisor.Passwd { return p }, Agent: supervisor.AgentConfig{HTTPSPort: 6443}})
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{testpki.Serving(t, serverCA).TLS(t)}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, serverCA.CertPEM
}

func TestJoinWithFullToken(t *testing.T) {
	srv, ca := supervisorServer(t)
	ctx := context.Background()
	full, _ := token.Format("server:s3cret", ca)
	s, err := Open(ctx, "k3s", srv.URL, full, "agent-1", "pw")
	if err != nil {
		t.Fatal(err)
	}
	if string(s.CACerts) != string(ca) || s.Token.Username != "node" {
		t.Fatalf("session: user %q", s.Token.Username)
	}
	cfg, err := s.Config(ctx)
	if err != nil || cfg.HTTPSPort != 6443 {
		t.Fatalf("Config = %+v, %v", cfg, err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	chain, err := s.ClientKubelet(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(chain)
	cert, _ := x509.ParseCertificate(b.Bytes)
	if cert.Subject.CommonName != "system:node:agent-1" {
		t.Fatalf("CN %s", cert.Subject.CommonName)
	}
	if f, err := s.File(ctx, "server-ca.crt"); err != nil || string(f) != string(ca) {
		t.Fatalf("server-ca.crt: %v", err)
	}
}

func TestJoinRefusals(t *testing.T) {
	srv, ca := supervisorServer(t)
	ctx := context.Background()
	other := testpki.CA(t, "another-cluster")
	wrongCA, _ := token.Format("server:s3cret", other.CertPEM)
	if _, err := Open(ctx, "k3s", srv.URL, wrongCA, "a", "pw"); err == nil ||
		!strings.HasPrefix(err.Error(), "token CA hash does not match the Cluster CA certificate hash: ") {
		t.Fatalf("wrong CA hash: %v", err)
	}
	s, err := Open(ctx, "k3s", srv.URL, "wrong-password", "a", "pw") // bare: no hash to check
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Config(ctx); err == nil || err.Error() != "failed to retrieve configuration from server: "+srv.URL+"/v1-k3s/config: 401 Unauthorized" {
		t.Fatalf("wrong password: %v", err)
	}
	full, _ := token.Format("node:s3cret", ca)
	if _, err := Open(ctx, "k3s", "https://127.0.0.1:1", full, "a", "pw"); err == nil || !strings.Contains(err.Error(), "failed to get CA certs") {
		t.Fatalf("no server: %v", err)
	}
}

// k3s pkg/agent/config/config.go getNodeNamedCrt: a 403 to a node-named
// certificate request becomes "Node password rejected, duplicate hostname or
// contents of '<password file>' may not match server node-passwd entry, try
// enabling a unique node name with the --with-node-id flag" (which the
// agent then logs as "Waiting to retrieve agent configuration; server is not
// ready: ..." every 5 seconds); other statuses stay "<url>: <status>".
func TestClientKubeletPasswordRejected(t *testing.T) {
	for code, want := range map[int]string{
		403: "Node password rejected, duplicate hostname or contents of '/etc/rancher/node/password' may not match server node-passwd entry, try enabling a unique node name with the --with-node-id flag",
		503: "/v1-k3s/client-kubelet.crt: 503 Service Unavailable",
	} {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("k3s-Node-Password") != "new-password" || r.Header.Get("k3s-Node-Name") != "agent-1" {
				t.Errorf("headers %v", r.Header)
			}
			w.WriteHeader(code)
		}))
		s := &Session{Program: "k3s", BaseURL: srv.URL, NodeName: "agent-1", Password: "new-password",
			PasswordFile: "/etc/rancher/node/password", client: srv.Client()}
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		_, err := s.ClientKubelet(context.Background(), key)
		srv.Close()
		if code == 503 {
			want = srv.URL + want
		}
		if err == nil || err.Error() != want {
			t.Errorf("%d: %v", code, err)
		}
	}
}
