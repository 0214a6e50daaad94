package launcher

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"baremetal.k3s/tests/kube/internal/bootstrap"
	"baremetal.k3s/tests/kube/internal/configfile"
	"baremetal.k3s/tests/kube/internal/token"
)

func serverValues(t *testing.T, args ...string) *configfile.Values {
	t.Helper()
	v, err := configfile.Parse(configfile.ServerFlags(), args)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPlanDatastore(t *testing.T) {
	dir := "/var/lib/rancher/k3s/server"
	d := planDatastore(serverValues(t), dir)
	if !d.runsKine() || d.leaderElect || d.etcdServers != "unix://"+dir+"/kine.sock" ||
		!strings.Contains(strings.Join(d.kineArgs, " "), "--endpoint=sqlite://"+dir+"/db/state.db?_journal_mode=WAL") {
		t.Fatalf("default: %+v", d)
	}
	d = planDatastore(serverValues(t, "--datastore-endpoint=http://kine:2379", "--datastore-cafile=/ca.crt"), dir)
	if d.runsKine() || !d.leaderElect || d.etcdServers != "http://kine:2379" || d.apiServerArgs()["etcd-cafile"] != "/ca.crt" {
		t.Fatalf("etcd: %+v %v", d, d.apiServerArgs())
	}
	d = planDatastore(serverValues(t, "--datastore-endpoint=postgres://k3s:pw@db:5432/k3s"), dir)
	if !d.runsKine() || !d.leaderElect || d.redacted() != "postgres://k3s:****@db:5432/k3s" {
		t.Fatalf("postgres: %+v %s", d, d.redacted())
	}
	if got := redactEndpoint(d.kineArgs); strings.Contains(got, ":pw@") || !strings.Contains(got, "--endpoint=postgres://k3s:****@db") {
		t.Fatalf("kine's logged args: %s", got)
	}
	if d := planDatastore(serverValues(t, "--datastore-endpoint=sqlite:///tmp/x.db"), dir); d.leaderElect || !d.runsKine() {
		t.Fatalf("sqlite: %+v", d)
	}
}

func TestControllerManagerArgs(t *testing.T) {
	p := pki{dir: "/d/server/tls"}
	args := controllerManagerArgs(serverValues(t, "--kube-controller-manager-arg=v=2", "--kube-controller-manager-arg=leader-elect=true"), p, "/d/server/cred/controller.kubeconfig", false)
	joined := strings.Join(args, " ")
	for _, want := range []string{
		"--cluster-signing-kube-apiserver-client-cert-file=/d/server/tls/client-ca.nochain.crt",
		"--cluster-signing-kube-apiserver-client-key-file=/d/server/tls/client-ca.key",
		"--kubeconfig=/d/server/cred/controller.kubeconfig", "--use-service-account-credentials=true",
		"--service-account-private-key-file=/d/server/tls/service.key", "--root-ca-file=/d/server/tls/server-ca.crt",
		"--controllers=*,tokencleaner,-service,-route,-cloud-node-lifecycle", "--leader-elect=true", "--v=2",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing %s in %s", want, joined)
		}
	}
	if strings.Contains(joined, "--leader-elect=false") {
		t.Errorf("user's leader-elect did not replace the default: %s", joined)
	}
	args = controllerManagerArgs(serverValues(t, "--disable-cloud-controller"), p, "kc", true)
	if j := strings.Join(args, " "); strings.Contains(j, "leader-elect") || !strings.Contains(j, "--controllers=*,tokencleaner ") {
		t.Errorf("HA, no CCM: %s", j)
	}
}

func TestResolveServerToken(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tok, err := resolveServerToken(ctx, serverValues(t), dir, nil)
	if err != nil || !tok.generated || len(tok.password) != 32 {
		t.Fatalf("generated: %+v %v", tok, err)
	}
	ca := mustCA(t)
	if _, err := writeTokenFiles(dir, tok, ca); err != nil {
		t.Fatal(err)
	}
	again, err := resolveServerToken(ctx, serverValues(t), dir, nil)
	if err != nil || again.generated || again.password != tok.password {
		t.Fatalf("reused from server/token: %+v %v", again, err)
	}
	full, _ := token.Format("server:given", ca)
	for _, args := range [][]string{{"--token=given"}, {"--token", full}} {
		if got, err := resolveServerToken(ctx, serverValues(t, args...), dir, nil); err != nil || got.password != "given" {
			t.Errorf("%q: %+v %v", args, got, err)
		}
	}
	f := filepath.Join(dir, "tokenfile")
	os.WriteFile(f, []byte("fromfile\n"), 0o600)
	if got, _ := resolveServerToken(ctx, serverValues(t, "--token-file="+f, "--agent-token=agents"), dir, nil); got.password != "fromfile" || got.agentPassword() != "agents" {
		t.Errorf("token-file, agent-token: %+v", got)
	}
	t.Setenv("K3S_TOKEN", "fromenv")
	if got, _ := resolveServerToken(ctx, serverValues(t), dir, nil); got.password != "fromenv" {
		t.Errorf("K3S_TOKEN: %+v", got)
	}
}

func TestWriteTokenFiles(t *testing.T) {
	dir := t.TempDir()
	ca := mustCA(t)
	path, err := writeTokenFiles(dir, serverToken{password: "pw", agent: "agentpw"}, ca)
	if err != nil {
		t.Fatal(err)
	}
	hash, _ := token.HashCA(ca)
	if got := string(mustRead(t, path)); got != "K10"+hash+"::server:pw\n" {
		t.Fatalf("token: %q", got)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("token mode %v", st.Mode())
	}
	if l, err := os.Readlink(filepath.Join(dir, "node-token")); err != nil || l != path {
		t.Fatalf("node-token -> %q %v", l, err)
	}
	if got := string(mustRead(t, filepath.Join(dir, "agent-token"))); got != "K10"+hash+"::node:agentpw\n" {
		t.Fatalf("agent-token: %q", got)
	}
}

func mustCA(t *testing.T) []byte {
	p := pki{dir: t.TempDir()}
	if _, _, err := p.ensureCA("server-ca", "k3s-server-ca"); err != nil {
		t.Fatal(err)
	}
	return mustRead(t, p.path("server-ca.crt"))
}

type memKV map[string][]byte

func (m memKV) List(_ context.Context, prefix string) ([]bootstrap.KeyValue, error) {
	var out []bootstrap.KeyValue
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, bootstrap.KeyValue{Key: k, Value: v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func (m memKV) Create(_ context.Context, k string, v []byte) error {
	if _, ok := m[k]; ok {
		return bootstrap.ErrKeyExists
	}
	m[k] = v
	return nil
}

// A second server on the same datastore gets the first one's CA and keys;
// one with another token is refused with k3s's message.
func TestSyncBootstrapSharesTheCA(t *testing.T) {
	ctx := context.Background()
	kv := memKV{}
	servers := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	ensure := func(dir, pw string) func() error {
		return func() error {
			if _, err := (pki{dir: filepath.Join(dir, "tls")}).ensureAll(nil, nil); err != nil {
				return err
			}
			if _, err := ensureEtcdCerts(pki{dir: filepath.Join(dir, "tls")}, nil, nil); err != nil {
				return err
			}
			return writePasswd(filepath.Join(dir, "cred", "passwd"), "k3s", serverToken{password: pw})
		}
	}
	for i, want := range []string{"saved", "loaded"} {
		how, err := syncBootstrap(ctx, kv, "pw", servers[i], ensure(servers[i], "pw"))
		if err != nil || how != want {
			t.Fatalf("server %d: %q %v", i, how, err)
		}
	}
	for _, f := range []string{"tls/server-ca.crt", "tls/client-ca.key", "tls/service.key", "cred/passwd", "tls/etcd/server-ca.crt", "tls/etcd/peer-ca.key"} {
		if string(mustRead(t, filepath.Join(servers[0], f))) != string(mustRead(t, filepath.Join(servers[1], f))) {
			t.Errorf("%s differs", f)
		}
	}
	if string(mustRead(t, filepath.Join(servers[0], "tls/client-admin.crt"))) == string(mustRead(t, filepath.Join(servers[1], "tls/client-admin.crt"))) {
		t.Error("leaf certificates are the server's own")
	}
	_, err := syncBootstrap(ctx, kv, "other", servers[2], ensure(servers[2], "other"))
	if !errors.Is(err, bootstrap.ErrDifferentToken) {
		t.Fatalf("other token: %v", err)
	}
	// Two fresh servers at once: the one that stores second takes the first one's data.
	kv2 := memKV{}
	a, b := t.TempDir(), t.TempDir()
	raceEnsure := func() error {
		if err := ensure(b, "pw")(); err != nil {
			return err
		}
		if _, ok := kv2[bootstrap.StorageKey("pw")]; !ok {
			if _, err := syncBootstrap(ctx, kv2, "pw", a, ensure(a, "pw")); err != nil {
				return err
			}
		}
		return nil
	}
	how, err := syncBootstrap(ctx, kv2, "pw", b, raceEnsure)
	if err != nil || how != "loaded-after-race" {
		t.Fatalf("race: %q %v", how, err)
	}
	if string(mustRead(t, filepath.Join(a, "tls/server-ca.crt"))) != string(mustRead(t, filepath.Join(b, "tls/server-ca.crt"))) {
		t.Fatal("race: CAs differ")
	}
}
