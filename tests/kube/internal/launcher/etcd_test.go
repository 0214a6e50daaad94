package launcher

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"baremetal.k3s/tests/kube/internal/bootstrap"
	"baremetal.k3s/tests/kube/internal/kubeapi"
)

func TestEtcdMemberName(t *testing.T) {
	p := etcdPaths{serverDir: filepath.Join(t.TempDir(), "server")}
	a, err := p.etcdName("srv-1", false)
	if err != nil || !regexp.MustCompile(`^srv-1-[0-9a-f]{8}$`).MatchString(a) {
		t.Fatalf("name %q, %v", a, err)
	}
	if fi, err := os.Stat(p.nameFile()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("name file: %v %v", fi, err)
	}
	if b, _ := p.etcdName("srv-1", false); b != a {
		t.Fatalf("second start renamed the member: %q -> %q", a, b)
	}
	if c, _ := p.etcdName("srv-1", true); c == a {
		t.Fatalf("a cluster reset kept the name %q", c)
	}
	if _, err := newEtcdMemberName(""); err == nil {
		t.Fatal("no node name accepted")
	}
	if got := memberNodeName("srv-1-0a1b2c3d"); got != "srv-1" {
		t.Fatalf("memberNodeName = %q", got)
	}
	if ok, err := p.initialized(); ok || err != nil {
		t.Fatalf("initialized without a WAL: %v %v", ok, err)
	}
	os.MkdirAll(p.walDir(), 0o700)
	if ok, err := p.initialized(); !ok || err != nil {
		t.Fatalf("initialized with a WAL: %v %v", ok, err)
	}
}

func readCerts(t *testing.T, path string) []*x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*x509.Certificate
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return out
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
}

// k3s's layout under server/tls/etcd: two CAs, leaves with their chain, the
// usages and SANs etcd's peers and clients check.
func TestEtcdCertLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "server")
	p := pki{dir: filepath.Join(dir, "tls")}
	node := net.ParseIP("192.0.2.7")
	created, err := ensureEtcdCerts(p, []string{"srv-1", "etcd.example"}, node)
	if err != nil || len(created) != 5 {
		t.Fatalf("created %q, %v", created, err)
	}
	for _, f := range etcdCertFiles() {
		if _, err := os.Stat(p.path(f)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	tt := etcdTLS{dir: p.path("etcd")}
	serverCA, peerCA := readCerts(t, tt.serverCA())[0], readCerts(t, tt.peerCA())[0]
	if !strings.HasPrefix(serverCA.Subject.CommonName, "etcd-server-ca@") || !strings.HasPrefix(peerCA.Subject.CommonName, "etcd-peer-ca@") ||
		!serverCA.IsCA || serverCA.Equal(peerCA) {
		t.Fatalf("CAs: %q %q", serverCA.Subject.CommonName, peerCA.Subject.CommonName)
	}
	any := []x509.ExtKeyUsage{x509.ExtKeyUsageAny}
	for _, c := range []struct {
		file, cn string
		ca       *x509.Certificate
		usage    []x509.ExtKeyUsage
		sans     bool
	}{
		{tt.serverCert(), "etcd-server", serverCA, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, true},
		{tt.client().CertFile, "etcd-client", serverCA, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, false},
		{tt.peerCert(), "etcd-peer", peerCA, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, true},
	} {
		chain := readCerts(t, c.file)
		if len(chain) != 2 || !chain[1].Equal(c.ca) {
			t.Fatalf("%s: want the leaf then its CA, got %d certificates", c.file, len(chain))
		}
		leaf := chain[0]
		pool := x509.NewCertPool()
		pool.AddCert(c.ca)
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: any}); err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if leaf.Subject.CommonName != c.cn || !reflect.DeepEqual(leaf.ExtKeyUsage, c.usage) {
			t.Fatalf("%s: CN %q usages %v", c.file, leaf.Subject.CommonName, leaf.ExtKeyUsage)
		}
		if c.sans {
			for _, host := range []string{"192.0.2.7", "127.0.0.1", "localhost", "srv-1", "etcd.example"} {
				if err := leaf.VerifyHostname(host); err != nil {
					t.Fatalf("%s: %v", c.file, err)
				}
			}
		}
	}
	if created, err := ensureEtcdCerts(p, []string{"srv-1", "etcd.example"}, node); err != nil || len(created) != 0 {
		t.Fatalf("second run created %q, %v", created, err)
	}
	// A new node IP reissues the server and peer leaves, not the CAs nor the client's.
	created, err = ensureEtcdCerts(p, []string{"srv-1"}, net.ParseIP("192.0.2.8"))
	if err != nil || !reflect.DeepEqual(created, []string{"etcd/server-client", "etcd/peer-server-client"}) {
		t.Fatalf("after an IP change created %q, %v", created, err)
	}
	// The CAs are bootstrap data: a server joining gets them with the others.
	for _, name := range []string{"ETCDServerCA", "ETCDServerCAKey", "ETCDPeerCA", "ETCDPeerCAKey"} {
		rel, ok := bootstrap.Paths[name]
		if !ok {
			t.Fatalf("bootstrap data lacks %s", name)
		}
		if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

func testMember(dir string) etcdMember {
	return etcdMember{name: "srv-1-0a1b2c3d", address: "192.0.2.7", tls: etcdTLS{dir: dir + "/tls/etcd"}, paths: etcdPaths{serverDir: dir}}
}

func TestEtcdConfigFile(t *testing.T) {
	m := testMember("/var/lib/rancher/k3s/server")
	c := m.config(false, m.newClusterInitial())
	want := map[string]string{
		"ListenClientURLs": "https://127.0.0.1:2379,https://192.0.2.7:2379", "ListenPeerURLs": "https://127.0.0.1:2380,https://192.0.2.7:2380",
		"AdvertiseClientURLs": "https://192.0.2.7:2379", "InitialAdvertisePeerURLs": "https://192.0.2.7:2380",
		"InitialCluster": "srv-1-0a1b2c3d=https://192.0.2.7:2380", "InitialClusterState": "new",
		"ListenMetricsURLs": "http://127.0.0.1:2381", "ListenClientHTTPURLs": "https://127.0.0.1:2382",
		"DataDir": "/var/lib/rancher/k3s/server/db/etcd",
	}
	got := reflect.ValueOf(c)
	for k, v := range want {
		if g := got.FieldByName(k).String(); g != v {
			t.Errorf("%s = %q, want %q", k, g, v)
		}
	}
	if c.ForceNewCluster || !c.ClientTransportSecurity.ClientCertAuth || c.ClientTransportSecurity.TrustedCAFile != "/var/lib/rancher/k3s/server/tls/etcd/server-ca.crt" ||
		c.PeerTransportSecurity.CertFile != "/var/lib/rancher/k3s/server/tls/etcd/peer-server-client.crt" || c.ElectionTimeout != 5000 || c.HeartbeatInterval != 500 {
		t.Fatalf("config %+v", c)
	}
	r := m.config(true, m.newClusterInitial())
	if !r.ForceNewCluster || r.ListenClientURLs != "https://127.0.0.1:2379" || r.ListenPeerURLs != "https://127.0.0.1:2380" ||
		r.AdvertiseClientURLs != "https://127.0.0.1:2379" {
		t.Fatalf("reset config listens beyond loopback: %+v", r)
	}
	data, err := renderEtcdConfig(c, []string{"quota-backend-bytes=8589934592", "--enable-pprof=true", "log-level=warn", "cipher-suites=[TLS_AES_128_GCM_SHA256]", "novalue"})
	if err != nil {
		t.Fatal(err)
	}
	var m2 map[string]any
	if err := yaml.Unmarshal(data, &m2); err != nil {
		t.Fatal(err)
	}
	if m2["quota-backend-bytes"] != float64(8589934592) || m2["enable-pprof"] != true || m2["log-level"] != "warn" ||
		!reflect.DeepEqual(m2["cipher-suites"], []any{"TLS_AES_128_GCM_SHA256"}) || m2["name"] != "srv-1-0a1b2c3d" ||
		m2["initial-cluster-state"] != "new" || m2["novalue"] != nil {
		t.Fatalf("rendered: %s", data)
	}
	dir := t.TempDir()
	m = testMember(dir)
	if err := m.writeConfig(m.config(false, etcdInitial{Cluster: "a=https://192.0.2.1:2380,srv-1-0a1b2c3d=https://192.0.2.7:2380", State: "existing"}), nil); err != nil {
		t.Fatal(err)
	}
	if o, err := currentEtcdInitial(m.paths.configFile()); err != nil || o.State != "existing" || !strings.HasPrefix(o.Cluster, "a=") {
		t.Fatalf("read back %+v %v", o, err)
	}
	if fi, _ := os.Stat(m.paths.configFile()); fi.Mode().Perm() != 0o600 {
		t.Fatalf("config mode %v", fi.Mode())
	}
	if u := testMember("/d").localURL(); u != "https://127.0.0.1:2379" {
		t.Fatal(u)
	}
	v6 := etcdMember{address: "2001:db8::7"}
	if v6.peerURL() != "https://[2001:db8::7]:2380" || v6.localURL() != "https://[::1]:2379" {
		t.Fatalf("IPv6: %s %s", v6.peerURL(), v6.localURL())
	}
}

func TestJoinPlan(t *testing.T) {
	self := testMember("/d")
	first := EtcdMember{ID: 1, Name: "srv-0-11111111", PeerURLs: []string{"https://192.0.2.5:2380"}, ClientURLs: []string{"https://192.0.2.5:2379"}}
	cluster, add, err := joinPlan([]EtcdMember{first}, self, "srv-1")
	if err != nil || !add || !reflect.DeepEqual(cluster, []string{"srv-0-11111111=https://192.0.2.5:2380", "srv-1-0a1b2c3d=https://192.0.2.7:2380"}) {
		t.Fatalf("new member: %q %v %v", cluster, add, err)
	}
	// Added before but not started (no name yet): not added again, named.
	unstarted := EtcdMember{ID: 2, PeerURLs: []string{"https://192.0.2.7:2380"}, IsLearner: true}
	cluster, add, err = joinPlan([]EtcdMember{first, unstarted}, self, "srv-1")
	if err != nil || add || cluster[1] != "srv-1-0a1b2c3d=https://192.0.2.7:2380" {
		t.Fatalf("unstarted: %q %v %v", cluster, add, err)
	}
	// Another member of the same node name (its etcd directory wiped, still in the cluster): k3s refuses.
	old := EtcdMember{ID: 3, Name: "srv-1-99999999", PeerURLs: []string{"https://192.0.2.7:2380"}}
	if _, _, err := joinPlan([]EtcdMember{first, old}, self, "srv-1"); err == nil || !strings.Contains(err.Error(), "duplicate node name") {
		t.Fatalf("duplicate node name: %v", err)
	}
	learner := EtcdMember{ID: 4, Name: "srv-2-22222222", ClientURLs: []string{"https://192.0.2.6:2379"}, IsLearner: true}
	third := EtcdMember{ID: 5, Name: "srv-3-33333333", ClientURLs: []string{"https://192.0.2.9:2379"}}
	me := EtcdMember{ID: 6, Name: "srv-1-0a1b2c3d", ClientURLs: []string{"https://192.0.2.7:2379"}}
	urls := joinClientURLs([]EtcdMember{third, learner, me, first}, "192.0.2.7", "192.0.2.5")
	if !reflect.DeepEqual(urls, []string{"https://192.0.2.5:2379", "https://192.0.2.9:2379"}) {
		t.Fatalf("client URLs %q", urls)
	}
}

func TestEtcdVoterCondition(t *testing.T) {
	for st, want := range map[memberStatus][3]string{
		statusVoter:     {"True", "MemberNotLearner", "Node is a voting member of the etcd cluster"},
		statusLearner:   {"False", "MemberIsLearner", "Node has not been promoted to voting member of the etcd cluster"},
		statusUnhealthy: {"False", "Unhealthy", "Node is unhealthy"},
		statusUnjoined:  {"False", "NotAMember", "Node is not a member of the etcd cluster"},
	} {
		c := etcdCondition(st, "")
		if c.Type != "EtcdIsVoter" || [3]string{c.Status, c.Reason, c.Message} != want {
			t.Errorf("%s: %+v", st, c)
		}
	}
	if c := etcdCondition(statusUnhealthy, "connection refused"); c.Message != "connection refused" {
		t.Fatal(c.Message)
	}
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	first := etcdConditionUpdate(nil, etcdCondition(statusLearner, ""), t0)
	if first == nil || first.LastTransitionTime != "2026-05-01T10:00:00Z" || first.LastHeartbeatTime != first.LastTransitionTime {
		t.Fatalf("first: %+v", first)
	}
	if u := etcdConditionUpdate(first, etcdCondition(statusLearner, ""), t0.Add(time.Minute)); u != nil {
		t.Fatalf("unchanged and fresh, yet written: %+v", u)
	}
	if u := etcdConditionUpdate(first, etcdCondition(statusLearner, ""), t0.Add(6*time.Minute)); u == nil ||
		u.LastTransitionTime != first.LastTransitionTime || u.LastHeartbeatTime != "2026-05-01T10:06:00Z" {
		t.Fatalf("heartbeat refresh: %+v", u)
	}
	if u := etcdConditionUpdate(first, etcdCondition(statusVoter, ""), t0.Add(time.Minute)); u == nil || u.Status != "True" ||
		u.LastTransitionTime != "2026-05-01T10:01:00Z" {
		t.Fatalf("promotion: %+v", u)
	}
	node := func(name, member string, etcd bool) kubeapi.Node {
		n := kubeapi.Node{Metadata: kubeapi.Meta{Name: name, Labels: map[string]string{}, Annotations: map[string]string{}}}
		if etcd {
			n.Metadata.Labels[EtcdRoleLabel] = "true"
		}
		if member != "" {
			n.Metadata.Annotations[EtcdNodeNameAnnotation] = member
		}
		return n
	}
	members := []EtcdMember{{ID: 1, Name: "a-1"}, {ID: 2, Name: "b-2", IsLearner: true}, {ID: 3}}
	got := etcdMemberNodes(members, []kubeapi.Node{node("a", "a-1", true), node("b", "b-2", true), node("c", "c-old", true), node("agent", "", false)})
	if len(got) != 3 || got["a"].ID != 1 || got["b"].ID != 2 || got["c"] != nil {
		t.Fatalf("pairs %v", got)
	}
}

func TestSnapshotFileName(t *testing.T) {
	if got := snapshotFileName("k3s-backup-srv-1", "srv-1", time.Unix(1777777777, 400e6)); got != "k3s-backup-srv-1-srv-1-1777777777" {
		t.Fatal(got)
	}
}

// fakeEtcd is an etcd client with a member list in memory.
type fakeEtcd struct {
	memKV
	kv       map[string]string
	members  []EtcdMember
	leader   uint64
	ready    map[uint64]bool // learners in sync with the leader
	applied  map[string]uint64
	promoted []uint64
	removed  []uint64
}

func (f *fakeEtcd) MemberList(context.Context) ([]EtcdMember, error) { return f.members, nil }
func (f *fakeEtcd) MemberAddAsLearner(_ context.Context, peers []string) (EtcdMember, error) {
	m := EtcdMember{ID: uint64(len(f.members) + 10), PeerURLs: peers, IsLearner: true}
	f.members = append(f.members, m)
	return m, nil
}
func (f *fakeEtcd) MemberPromote(_ context.Context, id uint64) error {
	if !f.ready[id] {
		return ErrEtcdLearnerNotReady
	}
	for i := range f.members {
		if f.members[i].ID == id {
			f.members[i].IsLearner = false
		}
	}
	f.promoted = append(f.promoted, id)
	return nil
}
func (f *fakeEtcd) MemberRemove(_ context.Context, id uint64) error {
	f.removed = append(f.removed, id)
	return nil
}
func (f *fakeEtcd) MemberUpdate(context.Context, uint64, []string) error { return nil }
func (f *fakeEtcd) Status(_ context.Context, ep string) (EtcdStatus, error) {
	return EtcdStatus{MemberID: 1, Leader: f.leader, RaftAppliedIndex: f.applied[ep]}, nil
}
func (f *fakeEtcd) Get(_ context.Context, k string) ([]byte, bool, error) {
	v, ok := f.kv[k]
	return []byte(v), ok, nil
}
func (f *fakeEtcd) Put(_ context.Context, k, v string) error { f.kv[k] = v; return nil }
func (f *fakeEtcd) Snapshot(context.Context, string) error   { return errors.New("no snapshots here") }
func (f *fakeEtcd) Close() error                             { return nil }

// The leader promotes a learner once etcd says it is in sync, leaves it a
// learner while its K3S_DOUBLE_LEARNER_HOLD runs, and evicts one that made no
// progress for 5 minutes.
func TestTrackLearnerProgress(t *testing.T) {
	ctx := context.Background()
	learner := EtcdMember{ID: 2, Name: "srv-2-22222222", ClientURLs: []string{"https://192.0.2.6:2379"}, IsLearner: true}
	f := &fakeEtcd{kv: map[string]string{}, members: []EtcdMember{{ID: 1, Name: "srv-1-x"}, learner}, leader: 1,
		ready: map[uint64]bool{}, applied: map[string]uint64{"https://192.0.2.6:2379": 40}}
	st := &stateFile{path: filepath.Join(t.TempDir(), "state.json"), events: filepath.Join(t.TempDir(), "events.jsonl")}
	e := &managedEtcd{client: f, st: st, self: testMember("/d")}

	p, _ := e.getLearnerProgress(ctx)
	if err := e.trackLearnerProgress(ctx, p, learner); err != nil || len(f.promoted) != 0 {
		t.Fatalf("not in sync, yet promoted: %v %v", f.promoted, err)
	}
	p, _ = e.getLearnerProgress(ctx)
	if p.Name != learner.Name || p.RaftAppliedIndex != 40 {
		t.Fatalf("progress %+v", p)
	}
	f.kv[learnerHoldPrefix+learner.Name] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	f.ready[2] = true
	if err := e.trackLearnerProgress(ctx, p, learner); err != nil || len(f.promoted) != 0 {
		t.Fatalf("held, yet promoted: %v %v", f.promoted, err)
	}
	f.kv[learnerHoldPrefix+learner.Name] = time.Now().Add(-time.Second).UTC().Format(time.RFC3339)
	if err := e.trackLearnerProgress(ctx, p, learner); err != nil || !reflect.DeepEqual(f.promoted, []uint64{2}) {
		t.Fatalf("hold over and in sync, not promoted: %v %v", f.promoted, err)
	}
	stalled := EtcdMember{ID: 3, Name: "srv-3-33333333", ClientURLs: []string{"https://192.0.2.9:2379"}, IsLearner: true}
	old := &learnerProgress{ID: 3, Name: stalled.Name, RaftAppliedIndex: 5, LastProgress: time.Now().Add(-6 * time.Minute)}
	f.applied["https://192.0.2.9:2379"] = 5
	if err := e.trackLearnerProgress(ctx, old, stalled); err != nil || !reflect.DeepEqual(f.removed, []uint64{3}) {
		t.Fatalf("stalled learner kept: %v %v", f.removed, err)
	}
}

func TestRunEtcdSnapshotArgs(t *testing.T) {
	for _, argv := range [][]string{{"k3s", "etcd-snapshot"}, {"k3s", "etcd-snapshot", "prune"}, {"k3s", "etcd-snapshot", "save", "extra"},
		{"k3s", "etcd-snapshot", "save", "--s3"}, {"k3s", "etcd-snapshot", "delete"}} {
		t.Setenv("K3S_CONFIG_FILE", filepath.Join(t.TempDir(), "none.yaml"))
		if err := runEtcdSnapshot(argv, os.Stdout); err == nil {
			t.Errorf("%q: no error", argv)
		}
	}
	// No server: the token file is read from --data-dir first.
	err := runEtcdSnapshot([]string{"k3s", "etcd-snapshot", "save", "--data-dir", t.TempDir()}, os.Stdout)
	if err == nil || !strings.Contains(err.Error(), "server/token") {
		t.Fatalf("without a token file: %v", err)
	}
}

// Which servers run embedded etcd (k3s's assignManagedDriver) and what
// their datastore then is.
func TestUseEmbeddedEtcd(t *testing.T) {
	for _, c := range []struct {
		args      []string
		generated bool // no token given
		wal       bool // etcd ran here before
		flavor    flavor
		managed   bool
		join      string
		err       string
	}{
		{args: nil, generated: true},
		{args: []string{"--cluster-init"}, generated: true, managed: true},
		{args: []string{"--server=https://first:6443", "--token=x"}, managed: true, join: "https://first:6443"},
		{args: []string{"--server=https://first:6443"}, generated: true}, // no token: not a member (k3s)
		{args: []string{"--cluster-init", "--datastore-endpoint=http://kine:2379"}},
		{args: []string{"--server=https://first:6443", "--token=x"}, wal: true, managed: true}, // a restart: no join
		{args: []string{"--cluster-reset", "--cluster-reset-restore-path=/s"}, managed: true},  // a restore on a new node
		{args: []string{"--cluster-reset-restore-path=/s"}, err: "--cluster-reset required with --cluster-reset-restore-path"},
		{args: []string{"--cluster-init", "--disable-etcd"}},
		{args: []string{"--server=https://first:9345", "--token=x"}, flavor: rke2Flavor()},
	} {
		dir := filepath.Join(t.TempDir(), "server")
		if c.wal {
			os.MkdirAll(filepath.Join(dir, "db", "etcd", "member", "wal"), 0o700)
		}
		fl := c.flavor
		if fl.prog.Name == "" {
			fl = k3sFlavor
		}
		s := &server{fl: fl, v: serverValues(t, c.args...), serverDir: dir, p: pki{dir: filepath.Join(dir, "tls")},
			tok: serverToken{password: "pw", generated: c.generated}, ds: datastore{label: "before"},
			st: &stateFile{path: filepath.Join(t.TempDir(), "state.json"), events: filepath.Join(t.TempDir(), "events.jsonl")}}
		err := s.useEmbeddedEtcd()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || (s.etcd != nil) != c.managed {
			t.Errorf("%q: managed %v, %v", c.args, s.etcd != nil, err)
			continue
		}
		if !c.managed {
			if s.ds.label != "before" {
				t.Errorf("%q: datastore replaced: %+v", c.args, s.ds)
			}
			continue
		}
		want := TLSFiles{CAFile: dir + "/tls/etcd/server-ca.crt", CertFile: dir + "/tls/etcd/client.crt", KeyFile: dir + "/tls/etcd/client.key"}
		if s.ds.redacted() != "etcd (embedded)" || s.ds.runsKine() || !s.ds.leaderElect || s.ds.tls != want ||
			s.ds.apiServerArgs()["etcd-servers"] != "https://127.0.0.1:2379" || s.ds.apiServerArgs()["etcd-certfile"] != want.CertFile {
			t.Errorf("%q: datastore %+v %v", c.args, s.ds, s.ds.apiServerArgs())
		}
		if s.etcd.joinURL != c.join {
			t.Errorf("%q: join %q, want %q", c.args, s.etcd.joinURL, c.join)
		}
	}
}
