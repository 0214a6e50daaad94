// A k3s server on embedded etcd: k3s's cluster.Bootstrap, managed.go and
// pkg/etcd (Start, join, Test, Reset, Restore) around the real etcd server,
// which runs as the launcher's child `k3s double-etcd --config-file=...`
// (go.etcd.io/etcd/server/v3/embed, cmd/k3s/etcd.go).

package launcher

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"baremetal.k3s/tests/kube/internal/bootstrap"
	"baremetal.k3s/tests/kube/internal/join"
	"baremetal.k3s/tests/kube/internal/supervisor"
	"baremetal.k3s/tests/kube/internal/token"
)

// serverRoutes, when set, adds a server's endpoints for other servers and
// its CLI to the supervisor (embedded etcd: /db/info, server-bootstrap,
// /db/snapshot).
var serverRoutes func(program, passwdFile string, next http.Handler) http.Handler

// managedEtcd is a server's embedded etcd member.
type managedEtcd struct {
	st        *stateFile
	p         pki
	serverDir string
	node      string
	self      etcdMember
	password  string   // the token's password: the "server" user of the other servers' supervisors
	joinURL   string   // --server: the server to join (first start only)
	extra     []string // --etcd-arg
	reset     bool     // --cluster-reset
	restore   string   // --cluster-reset-restore-path
	snapDir   string   // --etcd-snapshot-dir
	// how this start went: new | join | existing | reset
	how         string
	hold        time.Duration // K3S_DOUBLE_LEARNER_HOLD of this (joining) server
	manageEvery time.Duration // K3S_DOUBLE_ETCD_MANAGE_INTERVAL, else k3s's 15s
	child       *child
	client      EtcdClient // the local member, with the etcd client certificate
	addedAt     time.Time  // when this server added itself as a learner
	heldLogged  map[string]time.Time
}

// useEmbeddedEtcd decides as k3s's assignManagedDriver whether this server
// runs embedded etcd: it does when etcd has run here before (a WAL
// directory), or with no --datastore-endpoint and either --cluster-init or
// --server with a token. The datastore then is that etcd, on
// https://127.0.0.1:2379 with the etcd client certificate, and leader
// election stays on (k3s turns it off only for kine's SQLite).
func (s *server) useEmbeddedEtcd() error {
	v := s.v
	reset, restore := v.Bool("cluster-reset"), v.String("cluster-reset-restore-path")
	if restore != "" && !reset {
		return errors.New("invalid flag use; --cluster-reset required with --cluster-reset-restore-path")
	}
	if s.fl.prog.Name != "k3s" {
		return nil // RKE2 runs etcd as a static pod; the double stands in with kine
	}
	paths := etcdPaths{serverDir: s.serverDir}
	initialized, err := paths.initialized()
	if err != nil {
		return err
	}
	endpoint, joinURL := v.String("datastore-endpoint"), v.String("server")
	clusterInit := v.Bool("cluster-init") || (reset && restore != "") // k3s: a restore starts a cluster
	managed := initialized || (endpoint == "" && (clusterInit || (!s.tok.generated && joinURL != "")))
	if v.Bool("disable-etcd") {
		warnf("--disable-etcd (an etcd-less control-plane server) is not imitated by the double: %s runs without etcd", s.fl.prog.Name)
		return nil
	}
	if !managed {
		if reset {
			warnf("--cluster-reset: no embedded etcd in %s to reset; starting normally", paths.dbDir())
		}
		return nil
	}
	if initialized {
		joinURL = "" // k3s: an initialized member just starts; rejoining means deleting server/db
	}
	if joinURL != "" && s.tok.generated {
		return errors.New("starting kubernetes: preparing server: K3S_TOKEN is required to join a cluster")
	}
	adv := advertiseIP(v)
	address := "127.0.0.1"
	if adv != nil {
		address = adv.String()
	}
	e := &managedEtcd{
		st: s.st, p: s.p, serverDir: s.serverDir, node: nodeName(v), password: s.tok.password,
		joinURL: joinURL, extra: v.Slice("etcd-arg"), reset: reset, restore: restore, snapDir: v.String("etcd-snapshot-dir"),
		self: etcdMember{address: address, tls: etcdTLS{dir: s.p.path("etcd")}, paths: paths, expose: v.Bool("etcd-expose-metrics")},
	}
	if e.hold, err = durationEnv("K3S_DOUBLE_LEARNER_HOLD", 0); err != nil {
		return err
	}
	if e.manageEvery, err = durationEnv("K3S_DOUBLE_ETCD_MANAGE_INTERVAL", etcdManageEvery); err != nil {
		return err
	}
	if e.manageEvery <= 0 {
		return fmt.Errorf("K3S_DOUBLE_ETCD_MANAGE_INTERVAL=%q: want a positive duration", os.Getenv("K3S_DOUBLE_ETCD_MANAGE_INTERVAL"))
	}
	s.etcd = e
	s.ds = datastore{etcdServers: e.self.localURL(), tls: e.self.tls.client(), leaderElect: true, label: "etcd (embedded)"}
	serverRoutes = e.routes
	s.st.update(func(st *State) { st.EtcdPeerURL, st.EtcdClientURL = e.self.peerURL(), e.self.clientURL() })
	return nil
}

// startEmbeddedEtcd brings the member up before anything reads the
// datastore: the bootstrap data of the server joined (first join), the etcd
// certificates, then etcd as a new cluster, a learner added to the cluster
// (promoted by its leader), the member as it was, or a cluster reset; it
// returns once this member is a voter (k3s's testClusterDB: the API server
// waits for it).
func (s *server) startEmbeddedEtcd(ctx context.Context) error {
	e := s.etcd
	if e == nil {
		return nil
	}
	if OpenEtcd == nil {
		return errEtcdNotAvailable
	}
	if err := e.checkTombstone(); err != nil {
		return err
	}
	initialized, err := e.self.paths.initialized()
	if err != nil {
		return err
	}
	if e.reset && e.restore == "" {
		if _, err := os.Stat(e.self.paths.resetFlag()); err == nil {
			return fmt.Errorf("Managed etcd cluster membership was previously reset, please remove the cluster-reset flag and start k3s normally. "+
				"If you need to perform another cluster reset, you must first manually delete the file at %s", e.self.paths.resetFlag())
		}
	}
	joining := e.joinURL != "" && !initialized && !e.reset
	if joining {
		if err := e.httpBootstrap(ctx); err != nil {
			return fmt.Errorf("starting kubernetes: preparing server: failed to bootstrap cluster data: %w", err)
		}
	}
	hostname, _ := os.Hostname()
	created, err := ensureEtcdCerts(s.p, servingSANs(s.v, hostname, e.node), advertiseIP(s.v))
	if err != nil {
		return fmt.Errorf("generating etcd certificates: %w", err)
	}
	if len(created) > 0 {
		infof("Generated etcd certificates in %s: %s", e.self.tls.dir, strings.Join(created, ", "))
	}
	if e.reset {
		return s.clusterReset(ctx)
	}
	if e.self.name, err = e.self.paths.etcdName(e.node, false); err != nil {
		return err
	}
	var initial etcdInitial
	switch {
	case initialized:
		e.how = "existing"
		if initial, err = currentEtcdInitial(e.self.paths.configFile()); err != nil {
			return fmt.Errorf("reading the etcd options of %s: %w", e.self.paths.configFile(), err)
		}
		infof("Starting etcd for existing cluster member")
	case joining:
		e.how = "join"
		if initial, err = e.join(ctx); err != nil {
			return fmt.Errorf("joining etcd cluster: %w", err)
		}
	default:
		e.how = "new"
		initial = e.self.newClusterInitial()
		infof("Starting etcd for new cluster, cluster-reset=false")
	}
	if err := os.Remove(e.self.paths.resetFlag()); err == nil {
		infof("Removed %s: this start clears the earlier cluster reset", e.self.paths.resetFlag())
	}
	if err := e.run(ctx, s, e.self.config(false, initial)); err != nil {
		return err
	}
	return e.waitVoter(ctx, s.kids)
}

// run writes the configuration file, starts the etcd child and opens the
// local client.
func (e *managedEtcd) run(ctx context.Context, s *server, c etcdConfig) error {
	if err := e.self.writeConfig(c, e.extra); err != nil {
		return fmt.Errorf("writing %s: %w", e.self.paths.configFile(), err)
	}
	if err := os.Chmod(e.self.paths.dbDir(), 0o700); err != nil {
		return err
	}
	ch, err := s.start("etcd", s.self, []string{"double-etcd", "--config-file=" + e.self.paths.configFile()})
	if err != nil {
		return err
	}
	e.child = ch
	e.st.update(func(st *State) {
		st.Phase = "etcd"
		st.EtcdMemberName, st.EtcdStart, st.EtcdPID = e.self.name, e.how, ch.pid()
		st.EtcdStartedAt = ch.started.UTC().Format(time.RFC3339Nano)
		st.EtcdInitialCluster = c.InitialCluster
	})
	e.st.event("etcd_started", map[string]any{"member": e.self.name, "start": e.how, "peer_url": e.self.peerURL(),
		"initial_cluster": c.InitialCluster, "force_new_cluster": c.ForceNewCluster, "etcd_pid": ch.pid()})
	if e.client, err = OpenEtcd(ctx, []string{e.self.localURL()}, e.self.tls.client()); err != nil {
		return fmt.Errorf("etcd client: %w", err)
	}
	return nil
}

// test is k3s's ETCD.Test: the local member is a voter of a cluster that
// lists it under its name and peer URL.
func (e *managedEtcd) test(ctx context.Context) (learner bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	status, err := e.client.Status(ctx, e.self.localURL())
	if err != nil {
		return false, err
	}
	if status.IsLearner {
		return true, errors.New("this server has not yet been promoted from learner to voting member")
	}
	if len(status.Errors) > 0 {
		return false, fmt.Errorf("etcd cluster errors: %s", strings.Join(status.Errors, ", "))
	}
	members, err := e.client.MemberList(ctx)
	if err != nil {
		return false, err
	}
	var found []string
	for _, m := range members {
		for _, p := range m.PeerURLs {
			if p == e.self.peerURL() && m.Name == e.self.name {
				e.st.update(func(st *State) { st.EtcdMemberID = fmt.Sprintf("%x", m.ID) })
				return false, nil
			}
		}
		if len(m.PeerURLs) > 0 {
			found = append(found, m.Name+"="+m.PeerURLs[0])
		}
	}
	return false, fmt.Errorf("this server is a not a member of the etcd cluster. Found %v, expect: %s=%s", found, e.self.name, e.self.peerURL())
}

// waitVoter tests the member every 5s (k3s's testClusterDB) until it passes.
func (e *managedEtcd) waitVoter(ctx context.Context, kids []*child) error {
	var next time.Time
	last := ""
	err := waitFor(ctx, 0, kids, func() bool {
		if time.Now().Before(next) {
			return false
		}
		next = time.Now().Add(etcdTestEvery)
		learner, err := e.test(ctx)
		if err == nil {
			return true
		}
		role := "starting"
		if learner {
			role = "learner"
		}
		e.st.update(func(st *State) { st.EtcdRole = role })
		if msg := err.Error(); msg != last {
			infof("Failed to test data store connection: %v", err)
			last = msg
		}
		return false
	})
	if err != nil {
		return err
	}
	infof("etcd data store connection OK")
	now := time.Now()
	e.st.update(func(st *State) { st.EtcdRole, st.EtcdVoterAt = "voter", now.UTC().Format(time.RFC3339Nano) })
	if !e.addedAt.IsZero() {
		e.st.event("etcd_member_promoted", map[string]any{"member": e.self.name, "self": true,
			"learner_seconds": now.Sub(e.addedAt).Seconds()})
	}
	return nil
}

// checkTombstone: a member removed from the cluster left a tombstone; k3s
// moves its etcd directory aside so that the server joins anew.
func (e *managedEtcd) checkTombstone() error {
	if _, err := os.Stat(e.self.paths.tombstone()); err != nil {
		return nil
	}
	infof("tombstone file has been detected, removing data dir to rejoin the cluster")
	dir := e.self.paths.dbDir()
	backup := dir + "-backup-" + strconv.FormatInt(time.Now().Unix(), 10)
	if err := os.Rename(dir, backup); err != nil {
		return err
	}
	// keep the 5 newest backups (k3s's maxBackupRetention)
	olds, _ := filepath.Glob(dir + "-backup-*")
	sort.Strings(olds)
	for len(olds) > 5 {
		os.RemoveAll(olds[0])
		olds = olds[1:]
	}
	return nil
}

// supervisorSession is a connection to the joined server's supervisor as
// the token's "server" user (k3s's ParseAndValidateToken WithUser("server")).
type supervisorSession struct {
	base     string
	user, pw string
	client   *http.Client
}

func openSupervisor(ctx context.Context, serverURL, tok string) (*supervisorSession, error) {
	port, err := strconv.Atoi(envOr("K3S_DOUBLE_SUPERVISOR_PORT", strconv.Itoa(DefaultSupervisorPort)))
	if err != nil {
		return nil, fmt.Errorf("K3S_DOUBLE_SUPERVISOR_PORT: %w", err)
	}
	api, _ := strconv.Atoi(apiPort)
	base, err := join.SupervisorURL(serverURL, api, port)
	if err != nil {
		return nil, err
	}
	info, err := token.Parse(tok)
	if err != nil {
		return nil, &permanentError{err}
	}
	ca, err := join.FetchCA(ctx, base)
	if err != nil {
		return nil, err
	}
	if err := info.ValidateCA(ca); err != nil {
		return nil, &permanentError{err}
	}
	return &supervisorSession{base: base, user: "server", pw: info.Password, client: tlsClient(ca, 30*time.Second)}, nil
}

func (c *supervisorSession) do(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, strings.NewReader(string(body)))
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(c.user, c.pw)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := strings.TrimSpace(string(data))
		if len(msg) > 300 {
			msg = msg[:300]
		}
		text := fmt.Sprintf("%s%s: %s", c.base, path, resp.Status)
		if msg != "" {
			text += ": " + msg
		}
		return nil, &statusError{code: resp.StatusCode, msg: text}
	}
	return data, nil
}

// statusError is a supervisor's non-2xx answer.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

type permanentError struct{ error }

func (e *permanentError) Unwrap() error { return e.error }

// permanent: a refusal that retrying cannot change (credentials, role, no
// such endpoint on that server, a token that does not parse or whose CA
// hash does not match).
func permanent(err error) bool {
	var se *statusError
	if errors.As(err, &se) {
		return se.code == http.StatusUnauthorized || se.code == http.StatusForbidden || se.code == http.StatusNotFound
	}
	var pe *permanentError
	return errors.As(err, &pe)
}

// retryJoin runs f until it works, ctx ends or it fails for good, logging
// each distinct failure (k3s's server exits and systemd starts it again;
// the double waits in-process, every 5s).
func retryJoin(ctx context.Context, what string, f func() error) error {
	last := ""
	for {
		err := f()
		if err == nil {
			return nil
		}
		if permanent(err) || ctx.Err() != nil {
			return err
		}
		if err.Error() != last {
			infof("Waiting to %s: %v", what, err)
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return errSignal
		case <-time.After(5 * time.Second):
		}
	}
}

// httpBootstrap fetches the bootstrap data from the server joined
// (/v1-k3s/server-bootstrap) and writes its files (k3s's httpBootstrap).
func (e *managedEtcd) httpBootstrap(ctx context.Context) error {
	return retryJoin(ctx, "bootstrap from "+e.joinURL, func() error {
		c, err := openSupervisor(ctx, e.joinURL, e.password)
		if err != nil {
			return err
		}
		data, err := c.do(ctx, http.MethodGet, "/v1-k3s/server-bootstrap", nil)
		if err != nil {
			return err
		}
		wrote, err := bootstrap.Write(e.serverDir, data)
		if err != nil {
			return err
		}
		infof("Bootstrap data from %s: wrote %d files", e.joinURL, len(wrote))
		return nil
	})
}

// join adds this server as a learner through the cluster's voters (k3s's
// ETCD.join) and returns how etcd starts: the members and "existing".
func (e *managedEtcd) join(ctx context.Context) (etcdInitial, error) {
	var initial etcdInitial
	err := retryJoin(ctx, "join the etcd cluster of "+e.joinURL, func() error {
		c, err := openSupervisor(ctx, e.joinURL, e.password)
		if err != nil {
			return err
		}
		data, err := c.do(ctx, http.MethodGet, "/db/info", nil)
		if err != nil {
			return fmt.Errorf("failed to get MemberList from server: %w", err)
		}
		var info struct {
			Members []EtcdMember `json:"members"`
		}
		if err := json.Unmarshal(data, &info); err != nil {
			return err
		}
		u, _ := url.Parse(e.joinURL)
		urls := joinClientURLs(info.Members, e.self.address, u.Hostname())
		cluster, add, err := joinPlan(info.Members, e.self, e.node)
		if err != nil {
			return &permanentError{err}
		}
		if add {
			if len(urls) == 0 {
				return errors.New("no voting member of the etcd cluster to add this member through")
			}
			if err := e.addLearner(ctx, urls, cluster); err != nil {
				return err
			}
		}
		infof("Starting etcd to join cluster with members %v", cluster)
		initial = etcdInitial{Cluster: strings.Join(cluster, ","), State: "existing"}
		return nil
	})
	return initial, err
}

func (e *managedEtcd) addLearner(ctx context.Context, urls, cluster []string) error {
	cli, err := OpenEtcd(ctx, urls, e.self.tls.client())
	if err != nil {
		return err
	}
	defer cli.Close()
	actx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if e.hold > 0 {
		until := time.Now().Add(e.hold).UTC().Format(time.RFC3339)
		if err := cli.Put(actx, learnerHoldPrefix+e.self.name, until); err != nil {
			return err
		}
		infof("K3S_DOUBLE_LEARNER_HOLD=%s: the etcd leader leaves %s a learner until %s", e.hold, e.self.name, until)
	}
	infof("Adding member %s=%s to etcd cluster %v", e.self.name, e.self.peerURL(), cluster[:len(cluster)-1])
	m, err := cli.MemberAddAsLearner(actx, []string{e.self.peerURL()})
	if errors.Is(err, ErrEtcdTooManyLearners) || errors.Is(err, ErrEtcdUnhealthy) {
		return fmt.Errorf("other members are still joining the etcd cluster: %w", err)
	}
	if err != nil {
		return err
	}
	e.addedAt = time.Now()
	e.st.update(func(st *State) {
		st.EtcdRole, st.EtcdJoinedVia = "learner", e.joinURL
		st.EtcdMemberID = fmt.Sprintf("%x", m.ID)
	})
	e.st.event("etcd_member_added", map[string]any{"member": e.self.name, "id": fmt.Sprintf("%x", m.ID),
		"peer_url": e.self.peerURL(), "learner": true, "via": urls[0], "hold_seconds": e.hold.Seconds()})
	return nil
}

// clusterReset is `k3s server --cluster-reset [--cluster-reset-restore-path]`
// (k3s's ETCD.Reset and Restore): the snapshot restored into a new data
// directory when given, the member made the one member of a new cluster
// (force-new-cluster, listening on loopback only), the bootstrap data read
// back from it, then k3s's message and exit 0; the next normal start runs on
// that data.
func (s *server) clusterReset(ctx context.Context) error {
	e := s.etcd
	e.how = "reset"
	var err error
	if e.restore != "" {
		if err := e.restoreSnapshot(); err != nil {
			return err
		}
	}
	if e.self.name, err = e.self.paths.etcdName(e.node, true); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(e.self.paths.resetFlag()), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(e.self.paths.resetFlag(), nil, 0o600); err != nil {
		return err
	}
	infof("Starting etcd for new cluster, cluster-reset=true")
	if err := e.run(ctx, s, e.self.config(true, e.self.newClusterInitial())); err != nil {
		return err
	}
	var next time.Time
	err = waitFor(ctx, 0, s.kids, func() bool {
		if time.Now().Before(next) {
			return false
		}
		next = time.Now().Add(etcdTestEvery)
		if _, err := e.test(ctx); err != nil {
			// make sure the peer URL is the node's, as k3s does when the test fails
			members, lerr := e.client.MemberList(ctx)
			if lerr == nil && len(members) == 1 {
				if uerr := e.client.MemberUpdate(ctx, members[0].ID, []string{e.self.peerURL()}); uerr != nil {
					warnf("failed to update peer url: %v", uerr)
				}
			}
			return false
		}
		members, err := e.client.MemberList(ctx)
		return err == nil && len(members) == 1 && members[0].Name == e.self.name
	})
	if err != nil {
		return err
	}
	if err := s.bootstrapAndCerts(ctx); err != nil { // k3s's rebootstrap: the datastore's files win
		return err
	}
	e.st.update(func(st *State) { st.EtcdRole = "voter"; st.EtcdClusterReset = true })
	e.st.event("etcd_cluster_reset", map[string]any{"member": e.self.name, "restore_path": e.restore})
	infof("Managed etcd cluster membership has been reset, restart without --cluster-reset flag now. " +
		"Backup and delete ${datadir}/server/db on each peer etcd server and rejoin the nodes")
	return errClusterResetComplete
}

// restoreSnapshot is k3s's ETCD.Restore: the current etcd directory moved
// to etcd-old-<unix time>, the snapshot restored in its place as a
// one-member cluster of this member.
func (e *managedEtcd) restoreSnapshot() error {
	fi, err := os.Stat(e.restore)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("etcd: snapshot path does not exist: %s", e.restore)
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("etcd: snapshot path must be a file, not a directory: %s", e.restore)
	}
	if strings.HasSuffix(e.restore, ".zip") {
		return fmt.Errorf("etcd: compressed snapshots (%s) are not imitated by the double", e.restore)
	}
	if RestoreEtcdSnapshot == nil {
		return errEtcdNotAvailable
	}
	if e.self.name, err = e.self.paths.etcdName(e.node, false); err != nil {
		return err
	}
	dir := e.self.paths.dbDir()
	if _, err := os.Stat(dir); err == nil {
		old := dir + "-old-" + strconv.FormatInt(time.Now().Unix(), 10)
		if err := os.Rename(dir, old); err != nil {
			return err
		}
		infof("Pre-restore etcd database moved to %s", old)
	}
	return RestoreEtcdSnapshot(EtcdRestore{SnapshotPath: e.restore, Name: e.self.name, DataDir: dir,
		WALDir: e.self.paths.walDir(), PeerURL: e.self.peerURL(), InitialCluster: e.self.name + "=" + e.self.peerURL()})
}

// routes serves embedded etcd's supervisor endpoints.
func (e *managedEtcd) routes(program, passwdFile string, next http.Handler) http.Handler {
	cfg := supervisor.Config{Program: program, Logf: logf, Passwd: func() supervisor.Passwd {
		pw, err := supervisor.ReadPasswd(passwdFile)
		if err != nil {
			warnf("supervisor: %v", err)
		}
		return pw
	}}
	return cfg.WithServerRoutes(next, supervisor.ServerRoutes{
		Bootstrap: http.HandlerFunc(e.serveBootstrap),
		DBInfo:    http.HandlerFunc(e.serveDBInfo),
		Snapshot:  http.HandlerFunc(e.serveSnapshot),
	})
}

func httpError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure",
		"message": err.Error(), "code": code})
}

// serveBootstrap is /v1-k3s/server-bootstrap: the bootstrap files from disk.
func (e *managedEtcd) serveBootstrap(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		httpError(w, http.StatusMethodNotAllowed, errors.New("method not allowed"))
		return
	}
	data, err := bootstrap.Read(e.serverDir)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	infof("Bootstrap request from %s", r.RemoteAddr)
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}

// serveDBInfo is /db/info: the etcd member list.
func (e *managedEtcd) serveDBInfo(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		httpError(w, http.StatusMethodNotAllowed, errors.New("method not allowed"))
		return
	}
	if e.client == nil {
		httpError(w, http.StatusServiceUnavailable, errors.New("etcd is not started"))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	members, err := e.client.MemberList(ctx)
	if err != nil {
		httpError(w, http.StatusInternalServerError, fmt.Errorf("failed to get etcd MemberList: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"members": members})
}

// tlsClient trusts ca (nil: the system's roots).
func tlsClient(ca []byte, timeout time.Duration) *http.Client {
	cfg := &tls.Config{}
	if ca != nil {
		cfg.RootCAs = x509.NewCertPool()
		cfg.RootCAs.AppendCertsFromPEM(ca)
	}
	return &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
}
