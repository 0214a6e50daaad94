// Embedded etcd as k3s runs it (k3s-io/k3s pkg/etcd, pkg/cluster/managed.go,
// pkg/daemons/executor): where its files live, how its member is named, the
// configuration file it starts from, and the etcd v3 client the launcher
// manages it with. The etcd server itself is go.etcd.io/etcd/server/v3's
// embed package, run by cmd/k3s (`k3s double-etcd`); this package only plans
// and drives it, so its tests compile no etcd code.

package launcher

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"baremetal.k3s/tests/kube/internal/bootstrap"
)

// k3s's etcd ports and timings (pkg/etcd/etcd.go).
const (
	etcdClientPort     = 2379
	etcdPeerPort       = 2380
	etcdMetricsPort    = 2381
	etcdClientHTTPPort = 2382

	etcdTestEvery        = 5 * time.Second  // testClusterDB
	etcdManageEvery      = 15 * time.Second // manageTickerTime
	learnerMaxStallTime  = 5 * time.Minute
	etcdConditionRefresh = 5 * time.Minute // heartbeatInterval of the EtcdIsVoter condition
)

// Names k3s gives its etcd metadata (pkg/etcd, pkg/util).
const (
	EtcdRoleLabel             = "node-role.kubernetes.io/etcd"
	EtcdNodeNameAnnotation    = "etcd.k3s.cattle.io/node-name"
	EtcdNodeAddressAnnotation = "etcd.k3s.cattle.io/node-address"
	EtcdVoterCondition        = "EtcdIsVoter"
	learnerProgressKey        = "k3s/etcd/learnerProgress"
	// learnerHoldPrefix is the double's own key: a joining server started
	// with K3S_DOUBLE_LEARNER_HOLD writes <prefix><member name> = the time
	// until which the leader leaves it a learner.
	learnerHoldPrefix = "k3s-double/etcd/learnerHold/"
)

// EtcdMember is one member of the cluster, with etcdserverpb.Member's JSON
// names (what k3s's /db/info serves).
type EtcdMember struct {
	ID         uint64   `json:"ID,omitempty"`
	Name       string   `json:"name,omitempty"`
	PeerURLs   []string `json:"peerURLs,omitempty"`
	ClientURLs []string `json:"clientURLs,omitempty"`
	IsLearner  bool     `json:"isLearner,omitempty"`
}

// EtcdStatus is the part of a member's StatusResponse k3s reads.
type EtcdStatus struct {
	MemberID         uint64
	Leader           uint64
	IsLearner        bool
	RaftIndex        uint64
	RaftAppliedIndex uint64
	Errors           []string
}

// EtcdClient is the etcd v3 API the launcher manages its member with
// (cmd/k3s implements it with go.etcd.io/etcd/client/v3). Its bootstrap.KV
// side stores the bootstrap data as on kine.
type EtcdClient interface {
	bootstrap.KV
	MemberList(ctx context.Context) ([]EtcdMember, error)
	MemberAddAsLearner(ctx context.Context, peerURLs []string) (EtcdMember, error)
	MemberPromote(ctx context.Context, id uint64) error
	MemberRemove(ctx context.Context, id uint64) error
	MemberUpdate(ctx context.Context, id uint64, peerURLs []string) error
	// Status asks the member serving endpoint.
	Status(ctx context.Context, endpoint string) (EtcdStatus, error)
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Put(ctx context.Context, key, value string) error
	// Snapshot writes a snapshot of the client's first endpoint to path
	// (etcdutl's snapshot Save, as k3s takes one).
	Snapshot(ctx context.Context, path string) error
	Close() error
}

// Errors of the etcd server the launcher reacts to (the client maps
// rpctypes' errors onto them).
var (
	ErrEtcdTooManyLearners  = errors.New("etcdserver: too many learner members in cluster")
	ErrEtcdUnhealthy        = errors.New("etcdserver: unhealthy cluster")
	ErrEtcdLearnerNotReady  = errors.New("etcdserver: can only promote a learner member which is in sync with leader")
	ErrEtcdMemberNotFound   = errors.New("etcdserver: member not found")
	errEtcdNotAvailable     = errors.New("this build has no etcd client (cmd/k3s sets launcher.OpenEtcd)")
	errClusterResetComplete = errors.New("cluster reset complete")
)

// OpenEtcd connects to endpoints with the etcd client certificate; cmd/k3s
// sets it (as OpenKV).
var OpenEtcd func(ctx context.Context, endpoints []string, tls TLSFiles) (EtcdClient, error)

// EtcdRestore is etcdutl's snapshot RestoreConfig, as k3s fills it.
type EtcdRestore struct {
	SnapshotPath   string
	Name           string
	DataDir        string
	WALDir         string
	PeerURL        string
	InitialCluster string
}

// RestoreEtcdSnapshot restores a snapshot into a new data directory
// (go.etcd.io/etcd/etcdutl/v3/snapshot); cmd/k3s sets it.
var RestoreEtcdSnapshot func(r EtcdRestore) error

// etcdPaths are embedded etcd's files under <data-dir>/server.
type etcdPaths struct{ serverDir string }

func (p etcdPaths) dbDir() string       { return filepath.Join(p.serverDir, "db", "etcd") }
func (p etcdPaths) walDir() string      { return filepath.Join(p.dbDir(), "member", "wal") }
func (p etcdPaths) nameFile() string    { return filepath.Join(p.dbDir(), "name") }
func (p etcdPaths) configFile() string  { return filepath.Join(p.dbDir(), "config") }
func (p etcdPaths) tombstone() string   { return filepath.Join(p.dbDir(), "tombstone") }
func (p etcdPaths) resetFlag() string   { return filepath.Join(p.serverDir, "db", "reset-flag") }
func (p etcdPaths) snapshotDir() string { return filepath.Join(p.serverDir, "db", "snapshots") }

// initialized: a WAL directory exists, so etcd has run here (k3s's IsInitialized).
func (p etcdPaths) initialized() (bool, error) {
	fi, err := os.Stat(p.walDir())
	switch {
	case err == nil && fi.IsDir():
		return true, nil
	case err == nil || errors.Is(err, os.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("invalid state for wal directory %s: %w", p.walDir(), err)
	}
}

// etcdTLS are k3s's etcd certificate files under <data-dir>/server/tls/etcd
// (pkg/daemons/control/deps: ETCDServerCA, ServerETCDCert, ClientETCDCert,
// ETCDPeerCA, PeerServerClientETCDCert).
type etcdTLS struct{ dir string }

func (t etcdTLS) path(name string) string { return filepath.Join(t.dir, name) }

func (t etcdTLS) serverCA() string   { return t.path("server-ca.crt") }
func (t etcdTLS) serverCert() string { return t.path("server-client.crt") }
func (t etcdTLS) serverKey() string  { return t.path("server-client.key") }
func (t etcdTLS) peerCA() string     { return t.path("peer-ca.crt") }
func (t etcdTLS) peerCert() string   { return t.path("peer-server-client.crt") }
func (t etcdTLS) peerKey() string    { return t.path("peer-server-client.key") }

// client is what kube-apiserver and the launcher present to etcd.
func (t etcdTLS) client() TLSFiles {
	return TLSFiles{CAFile: t.serverCA(), CertFile: t.path("client.crt"), KeyFile: t.path("client.key")}
}

// newEtcdMemberName is k3s's setName: the node name and the first 8
// characters of a random UUID (8 hex digits).
func newEtcdMemberName(node string) (string, error) {
	if node == "" {
		return "", errors.New("server node name not set")
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return node + "-" + hex.EncodeToString(b), nil
}

// memberNodeName is the node name a member name was made from (k3s cuts at
// the last hyphen).
func memberNodeName(member string) string {
	if i := strings.LastIndex(member, "-"); i > 1 {
		return member[:i]
	}
	return member
}

// etcdName reads the member name of <db>/etcd/name, or makes and writes a
// new one (always with force, as k3s does on a cluster reset).
func (p etcdPaths) etcdName(node string, force bool) (string, error) {
	data, err := os.ReadFile(p.nameFile())
	if err == nil && !force && strings.TrimSpace(string(data)) != "" {
		return strings.TrimSpace(string(data)), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	name, err := newEtcdMemberName(node)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(p.dbDir(), 0o700); err != nil {
		return "", err
	}
	return name, os.WriteFile(p.nameFile(), []byte(name), 0o600)
}

func hostURL(scheme, host string, port int) string {
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// loopback is k3s's Loopback(true): 127.0.0.1, or ::1 on an IPv6 node.
func loopback(address string) string {
	if ip := net.ParseIP(address); ip != nil && ip.To4() == nil {
		return "::1"
	}
	return "127.0.0.1"
}

// joinURLs joins URLs with commas, each once.
func joinURLs(urls ...string) string {
	var out []string
	seen := map[string]bool{}
	for _, u := range urls {
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return strings.Join(out, ",")
}

// etcdSecurity is a client-transport-security or peer-transport-security block.
type etcdSecurity struct {
	CertFile       string `json:"cert-file"`
	KeyFile        string `json:"key-file"`
	ClientCertAuth bool   `json:"client-cert-auth"`
	TrustedCAFile  string `json:"trusted-ca-file"`
}

// etcdConfig is etcd's configuration file as k3s writes it to
// <data-dir>/server/db/etcd/config (executor.ETCDConfig.ToConfigFile) and
// embed.ConfigFromFile reads it.
type etcdConfig struct {
	Name                            string       `json:"name"`
	DataDir                         string       `json:"data-dir"`
	InitialAdvertisePeerURLs        string       `json:"initial-advertise-peer-urls,omitempty"`
	InitialCluster                  string       `json:"initial-cluster,omitempty"`
	InitialClusterState             string       `json:"initial-cluster-state,omitempty"`
	ForceNewCluster                 bool         `json:"force-new-cluster,omitempty"`
	ListenClientURLs                string       `json:"listen-client-urls"`
	ListenClientHTTPURLs            string       `json:"listen-client-http-urls"`
	ListenMetricsURLs               string       `json:"listen-metrics-urls"`
	ListenPeerURLs                  string       `json:"listen-peer-urls"`
	AdvertiseClientURLs             string       `json:"advertise-client-urls"`
	ClientTransportSecurity         etcdSecurity `json:"client-transport-security"`
	PeerTransportSecurity           etcdSecurity `json:"peer-transport-security"`
	SnapshotCount                   int          `json:"snapshot-count"`
	ElectionTimeout                 int          `json:"election-timeout"`
	HeartbeatInterval               int          `json:"heartbeat-interval"`
	Logger                          string       `json:"logger"`
	LogOutputs                      []string     `json:"log-outputs"`
	ExperimentalInitialCorruptCheck bool         `json:"experimental-initial-corrupt-check"`
}

// etcdInitial is how the member starts: a new cluster, joining an existing
// one, or as it was (k3s's executor.InitialOptions).
type etcdInitial struct {
	AdvertisePeerURL string `json:"initial-advertise-peer-urls,omitempty"`
	Cluster          string `json:"initial-cluster,omitempty"`
	State            string `json:"initial-cluster-state,omitempty"`
}

// etcdMember is this server's member: its name and address.
type etcdMember struct {
	name    string
	address string // the node IP (k3s's PrivateIP or the default route's address)
	tls     etcdTLS
	paths   etcdPaths
	expose  bool // --etcd-expose-metrics
}

func (m etcdMember) peerURL() string   { return hostURL("https", m.address, etcdPeerPort) }
func (m etcdMember) clientURL() string { return hostURL("https", m.address, etcdClientPort) }
func (m etcdMember) localURL() string  { return hostURL("https", loopback(m.address), etcdClientPort) }

// config is k3s's ETCD.cluster(): during a reset etcd listens on loopback
// only, so that no peer or API server reaches it mid-way.
func (m etcdMember) config(reset bool, initial etcdInitial) etcdConfig {
	lo := loopback(m.address)
	clientURLs := []string{hostURL("https", lo, etcdClientPort)}
	peerURLs := []string{hostURL("https", lo, etcdPeerPort)}
	advertise := hostURL("https", lo, etcdClientPort)
	metrics := []string{hostURL("http", lo, etcdMetricsPort)}
	if !reset {
		clientURLs = append(clientURLs, m.clientURL())
		peerURLs = append(peerURLs, m.peerURL())
		advertise = m.clientURL()
		if m.expose {
			metrics = append(metrics, hostURL("http", m.address, etcdMetricsPort))
		}
	}
	return etcdConfig{
		Name:                     m.name,
		DataDir:                  m.paths.dbDir(),
		InitialAdvertisePeerURLs: initial.AdvertisePeerURL,
		InitialCluster:           initial.Cluster,
		InitialClusterState:      initial.State,
		ForceNewCluster:          reset,
		ListenClientURLs:         joinURLs(clientURLs...),
		ListenClientHTTPURLs:     hostURL("https", lo, etcdClientHTTPPort),
		ListenMetricsURLs:        joinURLs(metrics...),
		ListenPeerURLs:           joinURLs(peerURLs...),
		AdvertiseClientURLs:      advertise,
		ClientTransportSecurity: etcdSecurity{CertFile: m.tls.serverCert(), KeyFile: m.tls.serverKey(),
			ClientCertAuth: true, TrustedCAFile: m.tls.serverCA()},
		PeerTransportSecurity: etcdSecurity{CertFile: m.tls.peerCert(), KeyFile: m.tls.peerKey(),
			ClientCertAuth: true, TrustedCAFile: m.tls.peerCA()},
		SnapshotCount:                   10000,
		ElectionTimeout:                 5000,
		HeartbeatInterval:               500,
		Logger:                          "zap",
		LogOutputs:                      []string{"stderr"},
		ExperimentalInitialCorruptCheck: true,
	}
}

// newClusterInitial starts a new one-member cluster (k3s's newCluster).
func (m etcdMember) newClusterInitial() etcdInitial {
	return etcdInitial{AdvertisePeerURL: m.peerURL(), Cluster: m.name + "=" + m.peerURL(), State: "new"}
}

// renderEtcdConfig is the file's YAML with --etcd-arg merged in as k3s does:
// key=value (leading dashes dropped), a number as a number, true/false as a
// bool, a YAML list as a list, anything else as a string.
func renderEtcdConfig(c etcdConfig, extra []string) ([]byte, error) {
	data, err := yaml.Marshal(c)
	if err != nil || len(extra) == 0 {
		return data, err
	}
	m := map[string]any{}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	for _, arg := range extra {
		k, v, ok := strings.Cut(arg, "=")
		if !ok {
			continue // k3s ignores an --etcd-arg without a value
		}
		k = strings.TrimLeft(k, "-")
		var list []string
		switch {
		case isInt(v):
			n, _ := strconv.Atoi(v)
			m[k] = n
		case strings.HasPrefix(v, "[") && yaml.Unmarshal([]byte(v), &list) == nil:
			m[k] = list
		case strings.EqualFold(v, "true"):
			m[k] = true
		case strings.EqualFold(v, "false"):
			m[k] = false
		default:
			m[k] = v
		}
	}
	return yaml.Marshal(m)
}

func isInt(s string) bool { _, err := strconv.Atoi(s); return err == nil }

// writeEtcdConfig writes the configuration file (0600 in a 0700 directory).
func (m etcdMember) writeConfig(c etcdConfig, extra []string) error {
	data, err := renderEtcdConfig(c, extra)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(m.paths.dbDir(), 0o700); err != nil {
		return err
	}
	return writeFileAtomic(m.paths.configFile(), data, 0o600)
}

// currentEtcdInitial reads the initial options of the last configuration
// file, for a member that restarts (k3s's CurrentETCDOptions).
func currentEtcdInitial(path string) (etcdInitial, error) {
	var o etcdInitial
	data, err := os.ReadFile(path)
	if err != nil {
		return o, err
	}
	return o, yaml.Unmarshal(data, &o)
}

// joinPlan decides how a server joins from the member list the cluster
// gave it (k3s's ETCD.join): whether to add itself (not when a member with
// its name and address is already there, or a member not started yet holds
// its address), the initial-cluster it starts with, and k3s's refusal of a
// second member for the same node name.
func joinPlan(members []EtcdMember, self etcdMember, node string) (cluster []string, add bool, err error) {
	add = true
	for _, mem := range members {
		name := mem.Name
		for _, peer := range mem.PeerURLs {
			u, err := url.Parse(peer)
			if err != nil {
				return nil, false, err
			}
			if name == "" && u.Hostname() == self.address {
				name = self.name
			}
			if name == self.name && u.Hostname() == self.address {
				add = false
			}
		}
		if len(mem.PeerURLs) > 0 {
			cluster = append(cluster, name+"="+mem.PeerURLs[0])
		}
		if name != self.name && memberNodeName(name) == node {
			return nil, false, errors.New("duplicate node name found, please use a unique name for this node")
		}
	}
	if add {
		cluster = append(cluster, self.name+"="+self.peerURL())
	}
	return cluster, add, nil
}

// joinClientURLs are the client URLs to add the member through (k3s's
// ClientURLs): voters only, not this node, the server joined first.
func joinClientURLs(members []EtcdMember, selfIP, joinHost string) []string {
	var urls []string
	for _, mem := range members {
		self, preferred := false, false
		for _, c := range mem.ClientURLs {
			if u, err := url.Parse(c); err == nil {
				switch u.Hostname() {
				case selfIP:
					self = true
				case joinHost:
					preferred = true
				}
			}
		}
		if mem.IsLearner || self {
			continue
		}
		if preferred {
			urls = append(append([]string{}, mem.ClientURLs...), urls...)
		} else {
			urls = append(urls, mem.ClientURLs...)
		}
	}
	return urls
}

// snapshotFileName is k3s's on-demand snapshot name: <name>-<node>-<unix time>.
func snapshotFileName(name, node string, now time.Time) string {
	return fmt.Sprintf("%s-%s-%d", name, node, now.Round(time.Second).Unix())
}
