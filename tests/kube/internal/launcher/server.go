package launcher

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"baremetal.k3s/tests/kube/internal/configfile"
)

const (
	apiPort       = "6443"
	schedulerPort = "10259"
	serviceCIDR   = "10.43.0.0/16"
)

// flavor is the distribution the launcher stands in for.
type flavor struct {
	prog    configfile.Program
	version string // printed and logged: K3sVersion or RKE2Version
	// staticScheduler: the scheduler runs as a static pod (RKE2), not as a
	// child of the launcher (k3s).
	staticScheduler bool
}

var k3sFlavor = flavor{prog: configfile.K3s, version: K3sVersion}

func rke2Flavor() flavor {
	return flavor{prog: configfile.RKE2(), version: RKE2Version, staticScheduler: true}
}

// parseCommand applies k3s's config-file insertion and flag parsing for the
// subcommand argv[i] ("server" or "agent"). ok=false means exit with code.
func parseCommand(argv []string, fl flavor, defs []configfile.Flag) (v *configfile.Values, parts *configfile.Parts, mode configfile.SliceMode, code int, ok bool) {
	parser := fl.prog.Parser(warnf)
	parts, err := parser.ParseParts(argv)
	if err != nil {
		fatalf("%v", err)
		return nil, nil, "", 1, false
	}
	if parts == nil {
		fatalf("no server or agent subcommand in %q", argv)
		return nil, nil, "", 1, false
	}
	mode, err = configfile.SliceModeFromEnv()
	if err != nil {
		fatalf("%v", err)
		return nil, nil, "", 1, false
	}
	file := configfile.ApplySliceMode(defs, parts.File, parts.CLI, mode)
	v, err = configfile.Parse(defs, append(append([]string{}, file...), parts.CLI...))
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(os.Stdout, "NAME:\n   %s %s - %s test double (baremetal.k3s)\n\nFlags as %s %s; see tests/kube/README.md.\n", fl.prog.Name, parts.Prefix[len(parts.Prefix)-1], fl.prog.Name, fl.prog.Name, fl.version)
		return nil, nil, "", 0, false
	}
	if err != nil {
		// urfave/cli prints the usage error, then k3s's main logs it fatally.
		fmt.Fprintf(os.Stderr, "Incorrect Usage: %v\n\n", err)
		fatalf("Error: %v", err)
		return nil, nil, "", 1, false
	}
	if len(v.Args) > 0 {
		warnf("Ignoring positional arguments %q", v.Args)
	}
	return v, parts, mode, 0, true
}

func durationEnv(name string, def time.Duration) (time.Duration, error) {
	s := os.Getenv(name)
	if s == "" {
		return def, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want a duration (3s) or seconds", name, s)
	}
	return time.Duration(f * float64(time.Second)), nil
}

func advertiseIP(v *configfile.Values) net.IP {
	if ip := net.ParseIP(v.String("advertise-address")); ip != nil {
		return ip
	}
	for _, s := range v.Slice("node-ip") {
		for _, part := range strings.Split(s, ",") {
			if ip := net.ParseIP(strings.TrimSpace(part)); ip != nil {
				return ip
			}
		}
	}
	ifaces, _ := net.Interfaces()
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
				return n.IP.To4()
			}
		}
	}
	return nil
}

func parseMode(s string) (os.FileMode, error) {
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return 0, fmt.Errorf("invalid write-kubeconfig-mode %q: %w", s, err)
	}
	return os.FileMode(m), nil
}

// startState opens the state file of a `server` or `agent` run of flavor fl
// and records its start in the events file.
func startState(command string, fl flavor) *stateFile {
	st := newStateFile(command)
	if fl.prog.Name != "k3s" {
		st.s.Flavor = fl.prog.Name
		st.s.K3sVersion = fl.version
	}
	st.event("start", nil)
	return st
}

// RunServer is `k3s server`.
func RunServer(argv []string) int { return runServer(argv, k3sFlavor) }

// RunRKE2Server is `rke2 server`: the k3s launcher with RKE2's paths and
// flags; the scheduler runs as a static pod (see runStaticScheduler).
func RunRKE2Server(argv []string) int { return runServer(argv, rke2Flavor()) }

func runServer(argv []string, fl flavor) int {
	st := startState("server", fl)
	v, parts, mode, code, ok := parseCommand(argv, fl, fl.prog.Server)
	if !ok {
		return code
	}
	infof("Starting %s %s (%s)", fl.prog.Name, fl.version, Commit)

	dataDir := v.String("data-dir")
	if dataDir == "" {
		dataDir = fl.prog.DataDir
	}
	dataDir, _ = filepath.Abs(dataDir)
	serverDir := filepath.Join(dataDir, "server")
	kubeconfigOut := v.String("write-kubeconfig")
	if kubeconfigOut == "" {
		kubeconfigOut = fl.prog.Kubeconfig
	}
	kcMode := os.FileMode(0o600)
	if m := v.String("write-kubeconfig-mode"); m != "" {
		var err error
		if kcMode, err = parseMode(m); err != nil {
			fatalf("%v", err)
			return 1
		}
	}
	schedArgsIn := v.Slice("kube-scheduler-arg")
	if schedArgsIn == nil {
		schedArgsIn = []string{}
	}
	files := parts.Files
	if files == nil {
		files = []string{}
	}
	infof("Config files read: %q", files)
	infof("Effective --kube-scheduler-arg (command-line slices %s): %q", mode, schedArgsIn)
	if v.Bool("cluster-init") {
		warnf("--cluster-init: the double has no embedded etcd; kine/SQLite stands in for it")
	}
	delay, err := durationEnv("K3S_DOUBLE_SCHEDULER_DELAY", 3*time.Second)
	if err != nil {
		fatalf("%v", err)
		return 1
	}
	st.update(func(s *State) {
		s.DataDir = dataDir
		s.ConfigFiles = files
		s.CLISliceMode = string(mode)
		s.KubeSchedulerArg = schedArgsIn
	})

	exit := func(code int, reason string) int {
		st.update(func(s *State) {
			s.Phase = "exited"
			s.ExitedAt = now()
			s.ExitCode = &code
			s.ExitReason = reason
		})
		st.event("exit", map[string]any{"code": code, "reason": reason})
		infof("%s double exiting with code %d: %s", fl.prog.Name, code, reason)
		return code
	}

	// Certificates, keys, kubeconfigs (created once, reused on restart).
	p := pki{dir: filepath.Join(serverDir, "tls")}
	adv := advertiseIP(v)
	created, err := p.ensureAll(v.Slice("tls-san"), adv)
	if err != nil {
		fatalf("generating certificates under %s: %v", p.dir, err)
		return exit(1, "certificates: "+err.Error())
	}
	if len(created) > 0 {
		infof("Generated certificates and keys in %s: %s", p.dir, strings.Join(created, ", "))
	} else {
		infof("Reusing certificates and keys in %s", p.dir)
	}
	credDir := filepath.Join(serverDir, "cred")
	apiURL := "https://127.0.0.1:" + apiPort
	schedKC := filepath.Join(credDir, "scheduler.kubeconfig")
	adminKC := filepath.Join(credDir, "admin.kubeconfig")
	for _, kc := range []struct{ path, user string }{{schedKC, "client-scheduler"}, {adminKC, "client-admin"}} {
		body, err := kubeconfig(apiURL, p.path("server-ca.crt"), p.path(kc.user+".crt"), p.path(kc.user+".key"), false)
		if err == nil {
			err = writeFileAtomic(kc.path, []byte(body), 0o600)
		}
		if err != nil {
			fatalf("writing %s: %v", kc.path, err)
			return exit(1, err.Error())
		}
	}
	infof("Wrote kubeconfigs %s and %s", schedKC, adminKC)

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()

	var kids []*child
	stopAll := func() {
		for i := len(kids) - 1; i >= 0; i-- {
			infof("Stopping %s (pid %d)", kids[i].name, kids[i].pid())
			kids[i].stop(15 * time.Second)
		}
	}
	self, err := os.Executable()
	if err != nil {
		fatalf("%v", err)
		return exit(1, err.Error())
	}
	kineBin := findKine(self)

	// kine on SQLite, listening on a unix socket in the server dir (as k3s).
	if err := os.MkdirAll(filepath.Join(serverDir, "db"), 0o700); err != nil {
		fatalf("%v", err)
		return exit(1, err.Error())
	}
	sock := filepath.Join(serverDir, "kine.sock")
	endpoint := v.String("datastore-endpoint")
	if endpoint == "" {
		endpoint = "sqlite://" + filepath.Join(serverDir, "db", "state.db") +
			"?_journal_mode=WAL&_busy_timeout=30000&_synchronous=NORMAL&_txlock=immediate&cache=shared"
	}
	kineArgs := []string{"--listen-address=unix://" + sock, "--endpoint=" + endpoint, "--metrics-bind-address=0"}
	infof("Running kine %s", redactEndpoint(kineArgs))
	kine, err := startChild("kine", kineBin, kineArgs, serverDir)
	if err != nil {
		fatalf("starting kine (%s): %v", kineBin, err)
		return exit(1, "kine: "+err.Error())
	}
	kids = append(kids, kine)
	st.update(func(s *State) { s.Phase = "kine"; s.KineStartedAt = now() })
	if err := waitFor(ctx, 60*time.Second, []*child{kine}, func() bool {
		c, err := net.DialTimeout("unix", sock, time.Second)
		if err == nil {
			c.Close()
			return true
		}
		return false
	}); err != nil {
		return finish(err, st, stopAll, exit)
	}
	infof("Kine available at unix://%s", sock)

	// The real kube-apiserver, loopback only.
	leaderElect := v.Bool("cluster-init") || (v.String("datastore-endpoint") != "" && !strings.HasPrefix(v.String("datastore-endpoint"), "sqlite"))
	apiDefaults := map[string]string{
		"allow-privileged":                   "true",
		"anonymous-auth":                     "false",
		"api-audiences":                      "https://kubernetes.default.svc.cluster.local," + fl.prog.Name,
		"authorization-mode":                 "Node,RBAC",
		"bind-address":                       "127.0.0.1",
		"cert-dir":                           filepath.Join(p.dir, "temporary-certs"),
		"client-ca-file":                     p.path("client-ca.crt"),
		"enable-admission-plugins":           "NodeRestriction",
		"etcd-servers":                       "unix://" + sock,
		"kubelet-client-certificate":         p.path("client-kube-apiserver.crt"),
		"kubelet-client-key":                 p.path("client-kube-apiserver.key"),
		"profiling":                          "false",
		"proxy-client-cert-file":             p.path("client-auth-proxy.crt"),
		"proxy-client-key-file":              p.path("client-auth-proxy.key"),
		"requestheader-allowed-names":        "system:auth-proxy",
		"requestheader-client-ca-file":       p.path("request-header-ca.crt"),
		"requestheader-extra-headers-prefix": "X-Remote-Extra-",
		"requestheader-group-headers":        "X-Remote-Group",
		"requestheader-username-headers":     "X-Remote-User",
		"secure-port":                        apiPort,
		"service-account-issuer":             "https://kubernetes.default.svc.cluster.local",
		"service-account-key-file":           p.path("service.key"),
		"service-account-signing-key-file":   p.path("service.key"),
		"service-cluster-ip-range":           serviceCIDR,
		"service-node-port-range":            v.String("service-node-port-range"),
		"storage-backend":                    "etcd3",
		"tls-cert-file":                      p.path("serving-kube-apiserver.crt"),
		"tls-private-key-file":               p.path("serving-kube-apiserver.key"),
	}
	if adv != nil {
		apiDefaults["advertise-address"] = adv.String()
	} else {
		// no routable address: a loopback advertise address is not valid in
		// the kubernetes Endpoints, so do not reconcile them
		apiDefaults["advertise-address"] = "127.0.0.1"
		apiDefaults["endpoint-reconciler-type"] = "none"
	}
	apiArgs := configfile.GetArgs(apiDefaults, v.Slice("kube-apiserver-arg"))
	infof("Running kube-apiserver %s", strings.Join(apiArgs, " "))
	api, err := startChild("kube-apiserver", self, append([]string{"kube-apiserver"}, apiArgs...), serverDir)
	if err != nil {
		fatalf("starting kube-apiserver: %v", err)
		stopAll()
		return exit(1, err.Error())
	}
	kids = append(kids, api)
	st.update(func(s *State) { s.Phase = "apiserver"; s.APIServerStartedAt = now() })

	client, err := adminClient(p)
	if err != nil {
		fatalf("%v", err)
		stopAll()
		return exit(1, err.Error())
	}
	if err := waitFor(ctx, 5*time.Minute, kids, func() bool { return readyz(client, apiURL) }); err != nil {
		return finish(err, st, stopAll, exit)
	}
	readyAt := time.Now()
	infof("kube-apiserver is ready (/readyz ok) %.1fs after start", readyAt.Sub(api.started).Seconds())

	if body, err := kubeconfig(apiURL, p.path("server-ca.crt"), p.path("client-admin.crt"), p.path("client-admin.key"), true); err != nil {
		warnf("kubeconfig: %v", err)
	} else if err := writeFileAtomic(kubeconfigOut, []byte(body), kcMode); err != nil {
		warnf("Unable to write kubeconfig %s: %v", kubeconfigOut, err)
	} else {
		infof("Wrote kubeconfig %s (mode %04o)", kubeconfigOut, kcMode)
	}

	sent, nerr := sdNotify("READY=1\n")
	switch {
	case nerr != nil:
		warnf("sd_notify READY=1 to %s failed: %v", os.Getenv("NOTIFY_SOCKET"), nerr)
	case sent:
		infof("Sent READY=1 to systemd (NOTIFY_SOCKET=%s)", os.Getenv("NOTIFY_SOCKET"))
	default:
		infof("NOTIFY_SOCKET not set; no systemd notification sent")
	}
	infof("%s is up and running", fl.prog.Name)
	st.event("ready", map[string]any{"notified": sent})
	st.update(func(s *State) {
		s.Phase = "api-ready"
		s.APIReadyAt = readyAt.UTC().Format(time.RFC3339Nano)
		s.ReadyNotified = sent
	})

	if fl.staticScheduler {
		return runStaticScheduler(ctx, fl, v, st, schedulerSetup{
			dataDir: dataDir, schedKC: schedKC, schedArgsIn: schedArgsIn, delay: delay, self: self, kineBin: kineBin,
		}, kids, stopAll, exit)
	}

	if v.Bool("disable-scheduler") {
		infof("kube-scheduler disabled (--disable-scheduler)")
		st.update(func(s *State) { s.Phase = "running" })
		err := waitFor(ctx, 0, kids, func() bool { return false })
		return finish(err, st, stopAll, exit)
	}

	// k3s starts the scheduler once a usable node exists; the delay stands for that.
	infof("Waiting %s for a node before starting kube-scheduler (K3S_DOUBLE_SCHEDULER_DELAY)", delay)
	st.update(func(s *State) { s.Phase = "waiting-for-node" })
	deadline := time.Now().Add(delay)
	if err := waitFor(ctx, 0, kids, func() bool { return !time.Now().Before(deadline) }); err != nil {
		return finish(err, st, stopAll, exit)
	}

	schedDefaults := map[string]string{
		"kubeconfig":                schedKC,
		"authorization-kubeconfig":  schedKC,
		"authentication-kubeconfig": schedKC,
		"bind-address":              "127.0.0.1",
		"secure-port":               schedulerPort,
		"profiling":                 "false",
	}
	if !leaderElect {
		schedDefaults["leader-elect"] = "false" // kine on SQLite: no leader election, as k3s
	}
	schedArgs := configfile.GetArgs(schedDefaults, schedArgsIn)
	schedConfig, _ := configfile.LastArgValue("config", schedArgs)
	infof("Running kube-scheduler %s", strings.Join(schedArgs, " "))
	sched, err := startChild("kube-scheduler", self, append([]string{"kube-scheduler"}, schedArgs...), serverDir)
	if err != nil {
		fatalf("starting kube-scheduler: %v", err)
		stopAll()
		return exit(1, err.Error())
	}
	kids = append(kids, sched)
	st.update(func(s *State) {
		s.Phase = "scheduler-running"
		s.SchedulerStartedAt = sched.started.UTC().Format(time.RFC3339Nano)
		s.SchedulerPID = sched.pid()
		s.SchedulerArgs = schedArgs
		s.SchedulerConfig = schedConfig
	})
	st.event("scheduler_started", map[string]any{"scheduler_pid": sched.pid(), "scheduler_config": schedConfig})

	err = waitFor(ctx, 0, kids, func() bool { return false })
	var ce *childExit
	if errors.As(err, &ce) && ce.c == sched {
		st.update(func(s *State) {
			s.SchedulerExitedAt = now()
			s.SchedulerExitReason = ce.c.reason()
		})
	}
	return finish(err, st, stopAll, exit)
}

type childExit struct{ c *child }

func (e *childExit) Error() string { return fmt.Sprintf("%s exited: %s", e.c.name, e.c.reason()) }

var errSignal = errors.New("signal")

// waitFor polls cond every 250ms until it holds, a child exits, a signal
// arrives or timeout (0 = none) passes.
func waitFor(ctx context.Context, timeout time.Duration, kids []*child, cond func() bool) error {
	var deadline <-chan time.Time
	if timeout > 0 {
		deadline = time.After(timeout)
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return nil
		}
		for _, k := range kids {
			select {
			case <-k.done:
				return &childExit{c: k}
			default:
			}
		}
		select {
		case <-ctx.Done():
			return errSignal
		case <-deadline:
			return fmt.Errorf("timed out after %s", timeout)
		case <-tick.C:
		}
	}
}

// finish stops everything and turns why into the exit code: 0 on a signal,
// 1 when a component exited or a step failed (k3s dies with its components).
func finish(why error, events *stateFile, stopAll func(), exit func(int, string) int) int {
	if errors.Is(why, errSignal) {
		events.event("stopping", nil)
		infof("Received shutdown signal, stopping components")
		stopAll()
		return exit(0, "signal")
	}
	var ce *childExit
	if errors.As(why, &ce) {
		fatalf("%s exited: %s", ce.c.name, ce.c.reason())
	} else {
		fatalf("%v", why)
	}
	stopAll()
	return exit(1, why.Error())
}

func redactEndpoint(args []string) string { return strings.Join(args, " ") }

func adminClient(p pki) (*http.Client, error) {
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(p.path("server-ca.crt"))
	if err != nil {
		return nil, err
	}
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(p.path("client-admin.crt"), p.path("client-admin.key"))
	if err != nil {
		return nil, err
	}
	return &http.Client{
		Timeout:   3 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}},
	}, nil
}

func readyz(c *http.Client, base string) bool {
	resp, err := c.Get(base + "/readyz")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	return resp.StatusCode == 200 && strings.TrimSpace(string(body)) == "ok"
}

// RunAgent is `k3s agent`: flags and config files as k3s reads them, then
// nothing to run (agents carry no scheduler) until SIGTERM/SIGINT.
func RunAgent(argv []string) int { return runAgent(argv, k3sFlavor) }

// RunRKE2Agent is `rke2 agent`, idle as `k3s agent` is.
func RunRKE2Agent(argv []string) int { return runAgent(argv, rke2Flavor()) }

func runAgent(argv []string, fl flavor) int {
	st := startState("agent", fl)
	v, parts, mode, code, ok := parseCommand(argv, fl, fl.prog.Agent)
	if !ok {
		return code
	}
	infof("Starting %s agent %s (%s)", fl.prog.Name, fl.version, Commit)
	files := parts.Files
	if files == nil {
		files = []string{}
	}
	infof("Config files read: %q; server %q", files, v.String("server"))
	st.update(func(s *State) {
		s.ConfigFiles = files
		s.CLISliceMode = string(mode)
		s.Phase = "running"
	})
	if sent, err := sdNotify("READY=1\n"); err != nil {
		warnf("sd_notify READY=1 failed: %v", err)
	} else if sent {
		infof("Sent READY=1 to systemd")
	}
	infof("Agent double: no components to run; waiting for SIGTERM")
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	<-ctx.Done()
	st.event("stopping", nil)
	code = 0
	st.update(func(s *State) { s.Phase = "exited"; s.ExitedAt = now(); s.ExitCode = &code; s.ExitReason = "signal" })
	st.event("exit", map[string]any{"code": code, "reason": "signal"})
	infof("Received shutdown signal, exiting")
	return 0
}
