package podrunner

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Exec is how one container's command runs: the host executable and argv.
type Exec struct {
	Binary string   // host path of the executable bound into the sandbox
	Path   string   // where it appears in the sandbox
	Argv   []string // argv[0] first
	Notes  []string // translations made (logged once per pod start)
}

// ErrUnavailable is returned by a Resolver for a command the double cannot run.
type ErrUnavailable struct{ Command string }

func (e *ErrUnavailable) Error() string {
	return fmt.Sprintf("%s is not available in the test double (no such binary); the container is not started", e.Command)
}

// Resolver maps a container's command (command[0] + the rest + args) to an Exec.
type Resolver func(command []string) (*Exec, error)

// DefaultResolver: kube-apiserver and kube-scheduler are this multi-call
// binary (self), etcd is kine (with etcd's flags translated), anything else
// is unavailable. The executable is shown at /usr/local/bin/<command[0]>
// (or at command[0] when it is an absolute path) and argv[0] is command[0],
// so /proc/<pid>/cmdline and comm are the component's own.
func DefaultResolver(self, kine string) Resolver {
	return func(command []string) (*Exec, error) {
		if len(command) == 0 {
			return nil, fmt.Errorf("no command: image entrypoints are not available in the test double")
		}
		name := filepath.Base(command[0])
		path := command[0]
		if !filepath.IsAbs(path) {
			path = "/usr/local/bin/" + name
		}
		switch name {
		case "kube-apiserver", "kube-scheduler":
			return &Exec{Binary: self, Path: path, Argv: append([]string{command[0]}, command[1:]...)}, nil
		case "etcd":
			if kine == "" {
				return nil, &ErrUnavailable{Command: "etcd (kine)"}
			}
			args, notes := EtcdToKine(command[1:])
			return &Exec{Binary: kine, Path: path, Argv: append([]string{command[0]}, args...), Notes: notes}, nil
		default:
			return nil, &ErrUnavailable{Command: name}
		}
	}
}

// KineSQLiteParams are the SQLite options k3s gives kine.
const KineSQLiteParams = "?_journal_mode=WAL&_busy_timeout=30000&_synchronous=NORMAL&_txlock=immediate&cache=shared"

// EtcdToKine translates etcd's command line into kine's (k3s-io/kine
// v0.17.5 flags): the first loopback client URL of --listen-client-urls is
// kine's --listen-address; --cert-file/--key-file are its server TLS pair;
// --trusted-ca-file (with --client-cert-auth=true) makes it verify client
// certificates; --data-dir holds kine's SQLite database (kine.db);
// --listen-metrics-urls' first URL is its metrics address (else metrics are
// off). Every other etcd flag has no kine equivalent and is dropped (notes
// lists them).
func EtcdToKine(args []string) (kine []string, notes []string) {
	vals := map[string]string{}
	var order []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			notes = append(notes, fmt.Sprintf("ignored positional argument %q", a))
			continue
		}
		name := strings.TrimLeft(a, "-")
		val, hasVal := "", false
		if j := strings.Index(name, "="); j >= 0 {
			name, val, hasVal = name[:j], name[j+1:], true
		}
		if !hasVal {
			// etcd's flags are Go flags: booleans may stand alone.
			if etcdBool[name] || i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
				val = "true"
			} else {
				val = args[i+1]
				i++
			}
		}
		if _, seen := vals[name]; !seen {
			order = append(order, name)
		}
		vals[name] = val
	}

	listen := "http://127.0.0.1:2379" // etcd's default client URL
	if v := vals["listen-client-urls"]; v != "" {
		urls := strings.Split(v, ",")
		listen = strings.TrimSpace(urls[0])
		for _, u := range urls {
			u = strings.TrimSpace(u)
			if pu, err := url.Parse(u); err == nil && isLoopback(pu.Hostname()) {
				listen = u
				break
			}
		}
	}
	kine = append(kine, "--listen-address="+listen)

	dataDir := vals["data-dir"]
	if dataDir == "" {
		name := vals["name"]
		if name == "" {
			name = "default"
		}
		dataDir = name + ".etcd" // etcd's default, relative to the working dir
	}
	kine = append(kine, "--endpoint=sqlite://"+filepath.Join(dataDir, "kine.db")+KineSQLiteParams)

	if c, k := vals["cert-file"], vals["key-file"]; c != "" && k != "" {
		kine = append(kine, "--server-cert-file="+c, "--server-key-file="+k)
		if ca := vals["trusted-ca-file"]; ca != "" && vals["client-cert-auth"] == "true" {
			kine = append(kine, "--trusted-ca-file="+ca)
		}
	}
	metrics := "0"
	if v := vals["listen-metrics-urls"]; v != "" {
		u := strings.TrimSpace(strings.Split(v, ",")[0])
		if pu, err := url.Parse(u); err == nil && pu.Host != "" {
			metrics = pu.Host
			if pu.Scheme == "http" {
				kine = append(kine, "--metrics-ignore-tls-config")
			}
		}
	}
	kine = append(kine, "--metrics-bind-address="+metrics)

	used := map[string]bool{"listen-client-urls": true, "data-dir": true, "cert-file": true, "key-file": true,
		"trusted-ca-file": true, "client-cert-auth": true, "listen-metrics-urls": true}
	var dropped []string
	for _, n := range order {
		if !used[n] {
			dropped = append(dropped, "--"+n)
		}
	}
	if len(dropped) > 0 {
		notes = append(notes, "etcd flags without a kine equivalent, dropped: "+strings.Join(dropped, " "))
	}
	return kine, notes
}

var etcdBool = map[string]bool{
	"client-cert-auth": true, "peer-client-cert-auth": true, "auto-tls": true, "peer-auto-tls": true,
	"experimental-initial-corrupt-check": true, "strict-reconfig-check": true, "enable-pprof": true,
	"force-new-cluster": true, "debug": true, "enable-v2": true,
}

func isLoopback(h string) bool {
	return h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.")
}
