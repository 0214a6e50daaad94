package launcher

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSdNotifyAbstractAndPath(t *testing.T) {
	for _, name := range []string{"@k3s-double-test-" + time.Now().Format("150405.000000"), filepath.Join(t.TempDir(), "notify.sock")} {
		laddr := &net.UnixAddr{Name: name, Net: "unixgram"}
		if name[0] == '@' {
			laddr.Name = "\x00" + name[1:]
		}
		conn, err := net.ListenUnixgram("unixgram", laddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("NOTIFY_SOCKET", name)
		sent, err := sdNotify("READY=1\n")
		if err != nil || !sent {
			t.Fatalf("sdNotify(%q) = %v, %v", name, sent, err)
		}
		buf := make([]byte, 64)
		conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, _, err := conn.ReadFromUnix(buf)
		conn.Close()
		if err != nil || string(buf[:n]) != "READY=1\n" {
			t.Fatalf("got %q, %v", buf[:n], err)
		}
	}
	t.Setenv("NOTIFY_SOCKET", "")
	if sent, err := sdNotify("READY=1\n"); sent || err != nil {
		t.Fatalf("without NOTIFY_SOCKET: %v %v", sent, err)
	}
}

func TestPKICreatedOnceAndReused(t *testing.T) {
	p := pki{dir: filepath.Join(t.TempDir(), "tls")}
	created, err := p.ensureAll([]string{"k3s.example", "192.0.2.10"}, net.ParseIP("192.0.2.2"))
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 11 { // 3 CAs, 7 leaves (the scheduler's serving certificate too), service.key
		t.Fatalf("created %q", created)
	}
	before, _ := os.ReadFile(p.path("client-scheduler.crt"))
	created, err = p.ensureAll([]string{"k3s.example", "192.0.2.10"}, net.ParseIP("192.0.2.2"))
	if err != nil || len(created) != 0 {
		t.Fatalf("second run created %q, %v", created, err)
	}
	after, _ := os.ReadFile(p.path("client-scheduler.crt"))
	if string(before) != string(after) {
		t.Fatal("certificate regenerated")
	}
	b, _ := pem.Decode(after)
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil || c.Subject.CommonName != "system:kube-scheduler" {
		t.Fatalf("scheduler cert %v %v", c.Subject, err)
	}
	b, _ = pem.Decode(mustRead(t, p.path("serving-kube-apiserver.crt")))
	c, _ = x509.ParseCertificate(b.Bytes)
	if err := c.VerifyHostname("127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if err := c.VerifyHostname("k3s.example"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p.path("service.key")); st.Mode().Perm() != 0o600 {
		t.Fatalf("service.key mode %v", st.Mode())
	}
	kc, err := kubeconfig("https://127.0.0.1:6443", p.path("server-ca.crt"), p.path("client-admin.crt"), p.path("client-admin.key"), true)
	if err != nil || !strings.Contains(kc, "client-certificate-data: ") || !strings.Contains(kc, "server: https://127.0.0.1:6443") {
		t.Fatalf("kubeconfig %v:\n%s", err, kc)
	}
	out := filepath.Join(t.TempDir(), "k3s.yaml")
	if err := writeFileAtomic(out, []byte(kc), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", st.Mode())
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDurationEnv(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 3 * time.Second, "0": 0, "1.5": 1500 * time.Millisecond, "250ms": 250 * time.Millisecond} {
		t.Setenv("X_DELAY", in)
		if got, err := durationEnv("X_DELAY", 3*time.Second); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	t.Setenv("X_DELAY", "soon")
	if _, err := durationEnv("X_DELAY", 0); err == nil {
		t.Error("accepted soon")
	}
}

func TestEventsAppendAcrossRuns(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("K3S_DOUBLE_STATE", filepath.Join(dir, "state.json"))
	t.Setenv("K3S_DOUBLE_EVENTS", filepath.Join(dir, "log", "events.jsonl"))
	for run := 0; run < 2; run++ { // a restart appends, never truncates
		st := newStateFile("server")
		st.event("start", nil)
		st.event("exit", map[string]any{"code": 1, "reason": "kube-scheduler exited"})
	}
	data, err := os.ReadFile(filepath.Join(dir, "log", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	want := []string{"start", "exit", "start", "exit"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	for i, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d %q: %v", i, line, err)
		}
		if rec["event"] != want[i] || rec["command"] != "server" || rec["time"] == "" {
			t.Fatalf("line %d: %v", i, rec)
		}
		if _, err := time.Parse(time.RFC3339Nano, rec["time"].(string)); err != nil {
			t.Fatalf("line %d time: %v", i, err)
		}
	}
	if !strings.Contains(lines[1], `"code":1`) {
		t.Fatalf("exit code missing: %s", lines[1])
	}
}
