package launcher

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"baremetal.k3s/tests/kube/internal/bootstrap"
	"baremetal.k3s/tests/kube/internal/configfile"
	"baremetal.k3s/tests/kube/internal/kubeapi"
	"baremetal.k3s/tests/kube/internal/proctitle"
	"baremetal.k3s/tests/kube/internal/supervisor"
	"baremetal.k3s/tests/kube/internal/token"
)

// RunServer is `k3s server`.
func RunServer(argv []string) int { return runServer(argv, k3sFlavor) }

// RunRKE2Server is `rke2 server`: the k3s launcher with RKE2's paths and
// flags; the scheduler runs as a static pod (see runStaticScheduler).
func RunRKE2Server(argv []string) int { return runServer(argv, rke2Flavor()) }

func runServer(argv []string, fl flavor) int {
	// as k3s's server does first thing: /proc/<pid>/cmdline shows "<argv0> server", never the flags or a token
	proctitle.Set(proctitle.Hidden("server"))
	st := startState("server", fl)
	if code, refused := refuseToldFailStart(st); refused {
		return code
	}
	v, parts, mode, code, ok := parseCommand(argv, fl, fl.prog.Server)
	if !ok {
		return code
	}
	infof("Starting %s %s (%s)", fl.prog.Name, fl.version, Commit)
	s, err := newServer(fl, v, st)
	if err != nil {
		fatalf("%v", err)
		return 1
	}
	files := parts.Files
	if files == nil {
		files = []string{}
	}
	infof("Config files read: %q", files)
	infof("Effective --kube-scheduler-arg (command-line slices %s): %q", mode, s.schedArgsIn)
	st.update(func(st *State) {
		st.DataDir = s.dataDir
		st.ConfigFiles = files
		st.CLISliceMode = string(mode)
		st.KubeSchedulerArg = s.schedArgsIn
		st.KubeControllerManagerArg = v.Slice("kube-controller-manager-arg")
	})

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	if err := s.prepare(ctx); err != nil {
		return s.finish(err)
	}
	if err := s.startAPIServer(ctx); err != nil {
		return s.finish(err)
	}
	if err := s.startNode(ctx); err != nil {
		return s.finish(err)
	}
	s.startEtcdControllers(ctx) // embedded etcd: node metadata, learners, EtcdIsVoter (etcdlearners.go)
	if fl.staticScheduler {
		return runStaticScheduler(ctx, fl, v, st, schedulerSetup{
			dataDir: s.dataDir, schedKC: s.schedKC, schedArgsIn: s.schedArgsIn, delay: s.delay, self: s.self, kineBin: s.kineBin,
		}, s.kids, s.stopAll, s.exit)
	}
	if err := s.startControllerManager(); err != nil {
		return s.finish(err)
	}
	return s.runScheduler(ctx)
}

// server is one `k3s server` (or `rke2 server`) run.
type server struct {
	fl            flavor
	v             *configfile.Values
	st            *stateFile
	dataDir       string
	serverDir     string
	kubeconfigOut string
	kcMode        os.FileMode
	schedArgsIn   []string
	delay         time.Duration
	p             pki
	adv           net.IP
	self, kineBin string
	ds            datastore
	tok           serverToken
	schedKC       string
	adminKC       string
	controllerKC  string
	supPort       int
	sup           *supervisorServer
	apiReadyAt    time.Time
	kids          []*child
	cm            *child
	stopNode      context.CancelFunc
	etcd          *managedEtcd // embedded etcd, nil on kine or an external datastore (etcdserver.go)
}

func newServer(fl flavor, v *configfile.Values, st *stateFile) (*server, error) {
	s := &server{fl: fl, v: v, st: st, kcMode: 0o600, schedArgsIn: v.Slice("kube-scheduler-arg"), stopNode: func() {}}
	s.dataDir = v.String("data-dir")
	if s.dataDir == "" {
		s.dataDir = fl.prog.DataDir
	}
	s.dataDir, _ = filepath.Abs(s.dataDir)
	s.serverDir = filepath.Join(s.dataDir, "server")
	s.kubeconfigOut = v.String("write-kubeconfig")
	if s.kubeconfigOut == "" {
		s.kubeconfigOut = fl.prog.Kubeconfig
	}
	var err error
	if m := v.String("write-kubeconfig-mode"); m != "" {
		if s.kcMode, err = parseMode(m); err != nil {
			return nil, err
		}
	}
	if s.schedArgsIn == nil {
		s.schedArgsIn = []string{}
	}
	if s.delay, err = durationEnv("K3S_DOUBLE_SCHEDULER_DELAY", 3*time.Second); err != nil {
		return nil, err
	}
	if s.supPort, err = supervisorPort(v); err != nil {
		return nil, fmt.Errorf("supervisor port: %w", err)
	}
	s.p = pki{dir: filepath.Join(s.serverDir, "tls")}
	credDir := filepath.Join(s.serverDir, "cred")
	s.schedKC = filepath.Join(credDir, "scheduler.kubeconfig")
	s.adminKC = filepath.Join(credDir, "admin.kubeconfig")
	s.controllerKC = filepath.Join(credDir, "controller.kubeconfig")
	if s.self, err = os.Executable(); err != nil {
		return nil, err
	}
	s.kineBin = findKine(s.self)
	return s, nil
}

func (s *server) exit(code int, reason string) int {
	s.st.update(func(st *State) {
		st.Phase = "exited"
		st.ExitedAt = now()
		st.ExitCode = &code
		st.ExitReason = reason
	})
	s.st.event("exit", map[string]any{"code": code, "reason": reason})
	infof("%s double exiting with code %d: %s", s.fl.prog.Name, code, reason)
	return code
}

// stopAll stops the node agent, the supervisor and the children, newest first.
func (s *server) stopAll() {
	s.stopNode()
	s.sup.close()
	for i := len(s.kids) - 1; i >= 0; i-- {
		infof("Stopping %s (pid %d)", s.kids[i].name, s.kids[i].pid())
		s.kids[i].stop(15 * time.Second)
	}
}

func (s *server) finish(err error) int {
	if errors.Is(err, errClusterResetComplete) { // k3s exits 0 after --cluster-reset
		s.stopAll()
		return s.exit(0, "cluster-reset")
	}
	return finish(err, s.st, s.stopAll, s.exit)
}

func (s *server) start(name string, path string, args []string) (*child, error) {
	c, err := startChild(name, path, args, s.serverDir)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	s.kids = append(s.kids, c)
	return c, nil
}

// prepare does what precedes the API server: the token, the datastore
// (kine unless an etcd endpoint is given), the bootstrap data shared
// through it, certificates, token files, kubeconfigs and the supervisor.
func (s *server) prepare(ctx context.Context) error {
	var err error
	if s.tok, err = resolveServerToken(ctx, s.v, s.serverDir, waitingForFile(s.st)); err != nil {
		return err
	}
	s.ds = planDatastore(s.v, s.serverDir)
	if err := s.useEmbeddedEtcd(); err != nil {
		return err
	}
	le, kine := s.ds.leaderElect, s.ds.runsKine()
	s.st.update(func(st *State) {
		st.Datastore, st.DatastoreEtcdServers, st.KineStarted, st.LeaderElect = s.ds.redacted(), s.ds.etcdServers, &kine, &le
	})
	if err := s.startKine(ctx); err != nil {
		return err
	}
	if err := s.startEmbeddedEtcd(ctx); err != nil {
		return err
	}
	if err := s.bootstrapAndCerts(ctx); err != nil {
		return err
	}
	ca, err := os.ReadFile(s.p.path("server-ca.crt"))
	if err != nil {
		return err
	}
	tf, err := writeTokenFiles(s.serverDir, s.tok, ca)
	if err != nil {
		return err
	}
	infof("Node token is available at %s", tf)
	s.st.update(func(st *State) { st.TokenFile = tf })
	if err := s.writeKubeconfigs(); err != nil {
		return err
	}
	return s.startSupervisor()
}

func (s *server) startKine(ctx context.Context) error {
	if !s.ds.runsKine() {
		infof("Datastore %s is an etcd endpoint: kube-apiserver uses it directly, no kine", s.ds.redacted())
		return nil
	}
	if err := os.MkdirAll(filepath.Join(s.serverDir, "db"), 0o700); err != nil {
		return err
	}
	infof("Running kine %s", redactEndpoint(s.ds.kineArgs))
	kine, err := s.start("kine", s.kineBin, s.ds.kineArgs)
	if err != nil {
		return err
	}
	s.st.update(func(st *State) { st.Phase = "kine"; st.KineStartedAt = now() })
	if err := waitFor(ctx, 60*time.Second, []*child{kine}, s.ds.kineReady); err != nil {
		return err
	}
	infof("Kine available at unix://%s", s.ds.sock)
	return nil
}

// bootstrapAndCerts loads the cluster's CA and keys from the datastore (or
// stores them there for the next servers), encrypted with the token, and
// creates what is missing on disk (k3s's cluster.Bootstrap, GenServerDeps, Save).
func (s *server) bootstrapAndCerts(ctx context.Context) error {
	hostname, _ := os.Hostname()
	s.adv = advertiseIP(s.v)
	sans := servingSANs(s.v, hostname, nodeName(s.v))
	ensure := func() error {
		created, err := s.p.ensureAll(sans, s.adv)
		if err != nil {
			return fmt.Errorf("generating certificates under %s: %w", s.p.dir, err)
		}
		etcdCreated, err := ensureEtcdCerts(s.p, sans, s.adv) // every k3s server has them, as the bootstrap data
		if err != nil {
			return fmt.Errorf("generating etcd certificates under %s: %w", s.p.path("etcd"), err)
		}
		created = append(created, etcdCreated...)
		if len(created) > 0 {
			infof("Generated certificates and keys in %s: %s", s.p.dir, strings.Join(created, ", "))
		} else {
			infof("Reusing certificates and keys in %s", s.p.dir)
		}
		if s.v.Bool("secrets-encryption") {
			if wrote, err := ensureEncryptionConfig(s.p.credPath(encryptionConfigName)); err != nil {
				return err
			} else if wrote {
				infof("Generated the secrets encryption configuration %s", s.p.credPath(encryptionConfigName))
			}
		}
		return writePasswd(s.p.credPath("passwd"), s.fl.prog.Name, s.tok)
	}
	if OpenKV == nil {
		warnf("No datastore client in this build: bootstrap data is not shared")
		return ensure()
	}
	kv, closeKV, err := s.ds.openKV(ctx, 2*time.Minute)
	if err != nil {
		return fmt.Errorf("starting kubernetes: preparing server: datastore %s: %w", s.ds.redacted(), err)
	}
	defer closeKV()
	how, err := syncBootstrap(ctx, kv, s.tok.password, s.serverDir, ensure)
	if err != nil {
		return fmt.Errorf("starting kubernetes: preparing server: %w", err)
	}
	infof("Bootstrap data %s (datastore key %s)", how, bootstrap.StorageKey(s.tok.password))
	s.st.update(func(st *State) { st.Bootstrap, st.BootstrapKey = how, bootstrap.StorageKey(s.tok.password) })
	s.st.event("bootstrap", map[string]any{"bootstrap": how, "generated_token": s.tok.generated})
	return nil
}

func (s *server) apiURL() string { return "https://127.0.0.1:" + apiPort }

func (s *server) writeKubeconfigs() error {
	for _, kc := range []struct{ path, user string }{
		{s.schedKC, "client-scheduler"}, {s.adminKC, "client-admin"}, {s.controllerKC, "client-controller"},
	} {
		body, err := kubeconfig(s.apiURL(), s.p.path("server-ca.crt"), s.p.path(kc.user+".crt"), s.p.path(kc.user+".key"), false)
		if err == nil {
			err = writeFileAtomic(kc.path, []byte(body), 0o600)
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", kc.path, err)
		}
	}
	infof("Wrote kubeconfigs %s, %s and %s", s.schedKC, s.adminKC, s.controllerKC)
	return nil
}

func (s *server) startSupervisor() error {
	bind := apiServerBind(s.v)
	agentCfg := supervisor.AgentConfig{HTTPSPort: 6443, SupervisorPort: s.supPort, ClusterDomain: s.v.String("cluster-domain"),
		ClusterIPRange: clusterCIDROf(s.v), ServiceIPRange: serviceCIDR, DisableCCM: s.v.Bool("disable-cloud-controller")}
	apiservers := func() []string {
		if s.adv == nil {
			return []string{"127.0.0.1:" + apiPort}
		}
		return []string{net.JoinHostPort(s.adv.String(), apiPort)}
	}
	var err error
	if s.sup, err = startSupervisor(s.p, s.fl.prog.Name, bind, s.supPort, agentCfg, apiservers); err != nil {
		return fmt.Errorf("supervisor on port %d: %w", s.supPort, err)
	}
	u := "https://" + net.JoinHostPort(bind, strconv.Itoa(s.supPort))
	infof("Supervisor (join endpoints /cacerts, /v1-%s/...) listening on %s", s.fl.prog.Name, u)
	s.st.update(func(st *State) { st.SupervisorListen = u })
	return nil
}

// startAPIServer runs the real kube-apiserver, waits for /readyz, writes
// the admin kubeconfig and tells systemd the server is ready.
func (s *server) startAPIServer(ctx context.Context) error {
	args := apiServerArgs(s.v, s.fl, s.p, s.ds, s.adv)
	if s.fl.psaFile != "" {
		var err error
		if args, err = withRKE2PSA(s.v, s.fl.psaFile, args); err != nil {
			return err
		}
	}
	infof("Running kube-apiserver %s", strings.Join(args, " "))
	api, err := s.start("kube-apiserver", s.self, append([]string{"kube-apiserver"}, args...))
	if err != nil {
		return err
	}
	s.st.update(func(st *State) { st.Phase = "apiserver"; st.APIServerStartedAt = now() })
	client, err := adminClient(s.p)
	if err != nil {
		return err
	}
	if err := waitFor(ctx, 5*time.Minute, s.kids, func() bool { return readyz(client, s.apiURL()) }); err != nil {
		return err
	}
	s.apiReadyAt = time.Now()
	s.sup.apiReady.Store(true)
	infof("kube-apiserver is ready (/readyz ok) %.1fs after start", s.apiReadyAt.Sub(api.started).Seconds())
	s.writeAdminKubeconfig()
	s.notifyReady()
	return nil
}

func (s *server) writeAdminKubeconfig() {
	body, err := kubeconfig(s.apiURL(), s.p.path("server-ca.crt"), s.p.path("client-admin.crt"), s.p.path("client-admin.key"), true)
	if err == nil {
		err = writeFileAtomic(s.kubeconfigOut, []byte(body), s.kcMode)
	}
	if err != nil {
		warnf("Unable to write kubeconfig %s: %v", s.kubeconfigOut, err)
		return
	}
	infof("Wrote kubeconfig %s (mode %04o)", s.kubeconfigOut, s.kcMode)
}

func (s *server) notifyReady() {
	sent, nerr := sdNotify("READY=1\n")
	switch {
	case nerr != nil:
		warnf("sd_notify READY=1 to %s failed: %v", os.Getenv("NOTIFY_SOCKET"), nerr)
	case sent:
		infof("Sent READY=1 to systemd (NOTIFY_SOCKET=%s)", os.Getenv("NOTIFY_SOCKET"))
	default:
		infof("NOTIFY_SOCKET not set; no systemd notification sent")
	}
	infof("%s is up and running", s.fl.prog.Name)
	s.st.event("ready", map[string]any{"notified": sent})
	s.st.update(func(st *State) {
		st.Phase = "api-ready"
		st.APIReadyAt = s.apiReadyAt.UTC().Format(time.RFC3339Nano)
		st.ReadyNotified = sent
	})
}

// startNode runs the server's own agent (k3s servers are agents too, unless
// --disable-agent): its Node registers through the local supervisor and
// gets k3s's control-plane role labels.
func (s *server) startNode(ctx context.Context) error {
	if s.v.Bool("disable-agent") {
		infof("Agent disabled (--disable-agent): this server registers no Node")
		return nil
	}
	ca, err := os.ReadFile(s.p.path("server-ca.crt"))
	if err != nil {
		return err
	}
	tok, err := token.Format("node:"+s.tok.agentPassword(), ca)
	if err != nil {
		return err
	}
	sup := "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(s.supPort))
	a, err := newNodeAgent(s.fl, s.v, s.st, s.dataDir, sup, tok)
	if err != nil {
		return err
	}
	admin, err := kubeapi.NewFromFiles(s.apiURL(), s.p.path("server-ca.crt"), s.p.path("client-admin.crt"), s.p.path("client-admin.key"))
	if err != nil {
		return err
	}
	nctx, cancel := context.WithCancel(ctx)
	s.stopNode = cancel
	go a.run(nctx)
	go setControlPlaneLabels(nctx, admin, a.node)
	return nil
}

// startControllerManager runs the real kube-controller-manager with k3s's
// arguments, unless --disable-controller-manager.
func (s *server) startControllerManager() error {
	if s.v.Bool("disable-controller-manager") {
		infof("kube-controller-manager disabled (--disable-controller-manager)")
		return nil
	}
	args := controllerManagerArgs(s.v, s.p, s.controllerKC, s.ds.leaderElect)
	infof("Running kube-controller-manager %s", strings.Join(args, " "))
	cm, err := s.start("kube-controller-manager", s.self, append([]string{"kube-controller-manager"}, args...))
	if err != nil {
		return err
	}
	s.cm = cm
	s.st.update(func(st *State) {
		st.ControllerManagerStartedAt = cm.started.UTC().Format(time.RFC3339Nano)
		st.ControllerManagerPID = cm.pid()
		st.ControllerManagerArgs = args
	})
	s.st.event("controller_manager_started", map[string]any{"controller_manager_pid": cm.pid()})
	return nil
}

// redactEndpoint joins kine's arguments for the log, a datastore
// password (postgres://user:pw@host) masked.
func redactEndpoint(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if ep, ok := strings.CutPrefix(a, "--endpoint="); ok {
			a = "--endpoint=" + (datastore{endpoint: ep}).redacted()
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
