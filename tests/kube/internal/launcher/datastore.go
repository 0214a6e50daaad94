package launcher

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"time"

	"baremetal.k3s/tests/kube/internal/bootstrap"
	"baremetal.k3s/tests/kube/internal/configfile"
)

// TLSFiles are the client certificate files for an etcd endpoint.
type TLSFiles struct{ CAFile, CertFile, KeyFile string }

// datastore is where a server keeps its state, decided as k3s does from
// --datastore-endpoint: none = kine on <data-dir>/server/db/state.db; an
// http(s):// endpoint = an etcd (or a kine serving TCP) the API server uses
// directly, no kine here; sqlite://, postgres://, mysql://, ... = kine on
// that endpoint. Kine listens on <data-dir>/server/kine.sock.
type datastore struct {
	endpoint    string // what the user gave ("" = default)
	kineArgs    []string
	sock        string
	etcdServers string // kube-apiserver --etcd-servers
	tls         TLSFiles
	// leaderElect: kine's driver asks for it (every driver but SQLite; an
	// external etcd too); k3s passes --leader-elect=false otherwise.
	leaderElect bool
	label       string // how the state file and logs name it ("etcd (embedded)"), when set
}

func (d datastore) runsKine() bool { return len(d.kineArgs) > 0 }

// defaultSQLite is k3s's default kine endpoint.
func defaultSQLite(serverDir string) string {
	return "sqlite://" + filepath.Join(serverDir, "db", "state.db") +
		"?_journal_mode=WAL&_busy_timeout=30000&_synchronous=NORMAL&_txlock=immediate&cache=shared"
}

func isEtcdEndpoint(ep string) bool {
	return strings.HasPrefix(ep, "http://") || strings.HasPrefix(ep, "https://")
}

func planDatastore(v *configfile.Values, serverDir string) datastore {
	d := datastore{
		endpoint: v.String("datastore-endpoint"),
		tls:      TLSFiles{v.String("datastore-cafile"), v.String("datastore-certfile"), v.String("datastore-keyfile")},
	}
	if isEtcdEndpoint(d.endpoint) {
		d.etcdServers = d.endpoint
		d.leaderElect = true
		return d
	}
	ep := d.endpoint
	if ep == "" {
		ep = defaultSQLite(serverDir)
	}
	d.sock = filepath.Join(serverDir, "kine.sock")
	d.etcdServers = "unix://" + d.sock
	d.kineArgs = []string{"--listen-address=unix://" + d.sock, "--endpoint=" + ep, "--metrics-bind-address=0"}
	for flag, f := range map[string]string{"--ca-file=": d.tls.CAFile, "--cert-file=": d.tls.CertFile, "--key-file=": d.tls.KeyFile} {
		if f != "" {
			d.kineArgs = append(d.kineArgs, flag+f)
		}
	}
	d.leaderElect = !strings.HasPrefix(ep, "sqlite://") || v.Bool("cluster-init")
	return d
}

// apiServerArgs are kube-apiserver's storage flags for d.
func (d datastore) apiServerArgs() map[string]string {
	m := map[string]string{"etcd-servers": d.etcdServers, "storage-backend": "etcd3"}
	if !d.runsKine() {
		for k, f := range map[string]string{"etcd-cafile": d.tls.CAFile, "etcd-certfile": d.tls.CertFile, "etcd-keyfile": d.tls.KeyFile} {
			if f != "" {
				m[k] = f
			}
		}
	}
	return m
}

// redacted is the endpoint without a password (postgres://user:pw@host).
func (d datastore) redacted() string {
	if d.label != "" {
		return d.label
	}
	ep := d.endpoint
	if ep == "" {
		return "sqlite (default)"
	}
	if i := strings.Index(ep, "://"); i >= 0 {
		if at := strings.LastIndex(ep, "@"); at > i {
			if c := strings.Index(ep[i+3:at], ":"); c >= 0 {
				return ep[:i+3+c+1] + "****" + ep[at:]
			}
		}
	}
	return ep
}

// OpenKV connects to an etcd v3 API (kine's or an etcd's) for the bootstrap
// data; cmd/k3s sets it (the etcd client stays out of this package's tests).
var OpenKV func(ctx context.Context, endpoints []string, tls TLSFiles) (bootstrap.KV, func(), error)

// openKV connects to d's etcd API, retrying until it answers or timeout.
func (d datastore) openKV(ctx context.Context, timeout time.Duration) (bootstrap.KV, func(), error) {
	tls := d.tls
	if d.runsKine() {
		tls = TLSFiles{} // kine's unix socket speaks plain gRPC
	}
	deadline := time.Now().Add(timeout)
	for {
		kv, closeFn, err := OpenKV(ctx, strings.Split(d.etcdServers, ","), tls)
		if err == nil {
			lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err = kv.List(lctx, bootstrap.Prefix+"/")
			cancel()
			if err == nil {
				return kv, closeFn, nil
			}
			closeFn()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, nil, err
		}
		infof("Waiting for the datastore at %s: %v", d.etcdServers, err)
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// waitKineSocket: kine answers on its unix socket.
func (d datastore) kineReady() bool {
	c, err := net.DialTimeout("unix", d.sock, time.Second)
	if err == nil {
		c.Close()
		return true
	}
	return false
}
