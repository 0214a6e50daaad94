package launcher

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// k3s (1.31.9, 1.32.5, 1.33.1 and later; k3s-io/k3s#12172, PR #12285)
// issues the scheduler a serving certificate signed by the server CA,
// server/tls/kube-scheduler/kube-scheduler.{crt,key} (pkg/daemons/control/deps
// deps.go), the certificate file followed by the CA, and
// pkg/daemons/control/server.go scheduler() passes it as --tls-cert-file and
// --tls-private-key-file, so :10259 can be verified against server-ca.crt.
func TestSchedulerServingCertificate(t *testing.T) {
	p := pki{dir: filepath.Join(t.TempDir(), "server", "tls")}
	if _, err := p.ensureAll(nil, nil); err != nil {
		t.Fatal(err)
	}
	crt, key := p.path("kube-scheduler/kube-scheduler.crt"), p.path("kube-scheduler/kube-scheduler.key")
	args := strings.Join(schedulerArgs(p, "/kc", nil, false), " ")
	if !strings.Contains(args, "--tls-cert-file="+crt) || !strings.Contains(args, "--tls-private-key-file="+key) {
		t.Fatalf("scheduler args: %s", args)
	}
	data, err := os.ReadFile(crt)
	if err != nil {
		t.Fatal(err)
	}
	var chain []*x509.Certificate
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		chain = append(chain, c)
	}
	ca, _ := os.ReadFile(p.path("server-ca.crt"))
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	if len(chain) != 2 || chain[0].Subject.CommonName != "kube-scheduler" || !chain[1].IsCA {
		t.Fatalf("want the certificate then the server CA, got %d certificates", len(chain))
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		if _, err := chain[0].Verify(x509.VerifyOptions{DNSName: host, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
	if st, _ := os.Stat(key); st == nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key mode: %v", st)
	}
	// A probe of https://127.0.0.1:<port> that verifies against server-ca.crt succeeds.
	pair, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })}
	go srv.Serve(ln)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	resp, err := client.Get("https://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatalf("verified probe: %v", err)
	}
	resp.Body.Close()
	// Reused on the next start; a user's tls-cert-file wins (GetArgs).
	before, _ := os.ReadFile(crt)
	if created, err := p.ensureAll(nil, nil); err != nil || len(created) != 0 {
		t.Fatalf("second run created %q %v", created, err)
	}
	if after, _ := os.ReadFile(crt); string(after) != string(before) {
		t.Error("scheduler certificate reissued")
	}
	args = strings.Join(schedulerArgs(p, "/kc", []string{"tls-cert-file=/mine.crt"}, false), " ")
	if !strings.Contains(args, "--tls-cert-file=/mine.crt") || strings.Contains(args, "--tls-cert-file="+crt) {
		t.Errorf("user's tls-cert-file: %s", args)
	}
}
