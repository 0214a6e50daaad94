package launcher

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"baremetal.k3s/tests/kube/internal/configfile"
	"baremetal.k3s/tests/kube/internal/podrunner"
	"baremetal.k3s/tests/kube/internal/staticpod"
)

// RKE2SchedulerImage is the image the double names in RKE2's scheduler
// manifest (--kube-scheduler-image overrides it). Nothing pulls it.
const RKE2SchedulerImage = "index.docker.io/rancher/hardened-kubernetes:" + K8sVersion + "-rke2r1-double"

// Defaults of the pods state file and the containers' log directory.
const (
	DefaultPodsStateFile = "/run/k3s-double/pods.json"
	DefaultPodLogDir     = "/var/log/pods"
)

type schedulerSetup struct {
	dataDir     string
	schedKC     string
	schedArgsIn []string
	delay       time.Duration
	self        string
	kineBin     string
}

// rke2SchedulerArgs are the arguments RKE2 gives kube-scheduler: k3s's
// (GetArgs of its defaults and --kube-scheduler-arg), after
// --permit-port-sharing=true. RKE2 runs etcd, so leader election stays on.
func rke2SchedulerArgs(schedKC string, in []string) []string {
	defaults := map[string]string{
		"kubeconfig":                schedKC,
		"authorization-kubeconfig":  schedKC,
		"authentication-kubeconfig": schedKC,
		"bind-address":              "127.0.0.1",
		"secure-port":               schedulerPort,
		"profiling":                 "false",
	}
	return append([]string{"--permit-port-sharing=true"}, configfile.GetArgs(defaults, in)...)
}

// rke2SchedulerPodArgs builds RKE2's staticpod.Args for kube-scheduler from
// the server's flags.
func rke2SchedulerPodArgs(v *configfile.Values, dataDir string, args []string, environ []string) (staticpod.Args, error) {
	image := v.String("kube-scheduler-image")
	if image == "" {
		image = RKE2SchedulerImage
	}
	req, err := parseResources(v.Slice("control-plane-resource-requests"), "request")
	if err != nil {
		return staticpod.Args{}, err
	}
	lim, err := parseResources(v.Slice("control-plane-resource-limits"), "limit")
	if err != nil {
		return staticpod.Args{}, err
	}
	probes, err := parseProbeConf(v.Slice("control-plane-probe-configuration"))
	if err != nil {
		return staticpod.Args{}, err
	}
	get := func(m map[string]string, k, def string) string {
		if x, ok := m[k]; ok {
			return x
		}
		return def
	}
	a := staticpod.Args{
		Command:       "kube-scheduler",
		Args:          args,
		Image:         image,
		HealthPort:    10259,
		HealthProto:   "HTTPS",
		CPURequest:    get(req, "kube-scheduler-cpu-request", "100m"),
		MemoryRequest: get(req, "kube-scheduler-memory-request", "128Mi"),
		CPULimit:      get(lim, "kube-scheduler-cpu-limit", ""),
		MemoryLimit:   get(lim, "kube-scheduler-memory-limit", ""),
		ExtraMounts:   v.Slice("kube-scheduler-extra-mount"),
		ExtraEnv:      v.Slice("kube-scheduler-extra-env"),
		Liveness:      probeConf(probes, "kube-scheduler-liveness", staticpod.DefaultLiveness),
		Startup:       probeConf(probes, "kube-scheduler-startup", staticpod.DefaultStartup),
		CISMode:       v.String("profile") == "cis",
		Environ:       environ,
		Warnf:         warnf,
	}
	if !v.Bool("disable-etcd") {
		a.Files = []string{etcdNameFile(dataDir)}
	}
	return a, nil
}

func etcdNameFile(dataDir string) string {
	return filepath.Join(dataDir, "server", "db", "etcd", "name")
}

// ensureEtcdNameFile writes <data-dir>/server/db/etcd/name once, as RKE2's
// etcd does (<node>-<8 hex>); RKE2 mounts it into every control-plane pod.
func ensureEtcdNameFile(dataDir, node string) error {
	p := etcdNameFile(dataDir)
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(node+"-"+hex.EncodeToString(b)), 0o600)
}

// parseResources reads --control-plane-resource-requests/limits entries
// ("kube-scheduler-cpu=100m,kube-scheduler-memory=128Mi") into
// "<component>-<resource>-<kind>" keys, as RKE2 does.
func parseResources(vals []string, kind string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range vals {
		for _, raw := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(raw, "=")
			if !ok {
				return nil, fmt.Errorf("incorrectly formatted control plane resource %s specified: %s", kind, raw)
			}
			out[k+"-"+kind] = val
		}
	}
	return out, nil
}

func parseProbeConf(vals []string) (map[string]int32, error) {
	out := map[string]int32{}
	for _, v := range vals {
		for _, raw := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(raw, "=")
			if !ok {
				return nil, fmt.Errorf("incorrectly formatted control probe config specified: %s", raw)
			}
			n, err := strconv.ParseInt(val, 10, 32)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("invalid control plane probe config value specified: %s", raw)
			}
			out[k] = int32(n)
		}
	}
	return out, nil
}

func probeConf(m map[string]int32, prefix string, def staticpod.ProbeConf) staticpod.ProbeConf {
	set := func(dst *int32, key string) {
		if v, ok := m[prefix+"-"+key]; ok {
			*dst = v
		}
	}
	set(&def.InitialDelaySeconds, "initial-delay-seconds")
	set(&def.TimeoutSeconds, "timeout-seconds")
	set(&def.FailureThreshold, "failure-threshold")
	set(&def.PeriodSeconds, "period-seconds")
	return def
}

func nodeName(v *configfile.Values) string {
	if n := v.String("node-name"); n != "" {
		return strings.ToLower(n)
	}
	h, _ := os.Hostname()
	return strings.ToLower(h)
}

// runStaticScheduler is RKE2's way: once the API server is ready (and after
// the delay that stands for a node), write the kube-scheduler static pod
// manifest into <data-dir>/agent/pod-manifests (rewritten at every start,
// left alone when unchanged), then run the static-pod runner on that
// directory in-process, as RKE2's kubelet would. A scheduler that exits is
// restarted with the kubelet's back-off; the server stays up.
func runStaticScheduler(ctx context.Context, fl flavor, v *configfile.Values, st *stateFile, ss schedulerSetup,
	kids []*child, stopAll func(), exit func(int, string) int) int {
	manifestDir := filepath.Join(ss.dataDir, "agent", "pod-manifests")
	node := nodeName(v)
	schedArgs := rke2SchedulerArgs(ss.schedKC, ss.schedArgsIn)
	schedConfig, _ := configfile.LastArgValue("config", schedArgs)

	if v.Bool("disable-scheduler") {
		if err := staticpod.Remove(manifestDir, "kube-scheduler"); err != nil {
			warnf("%v", err)
		}
		infof("kube-scheduler disabled (--disable-scheduler); removed its manifest from %s", manifestDir)
	} else {
		infof("Waiting %s for a node before writing the kube-scheduler manifest (K3S_DOUBLE_SCHEDULER_DELAY)", ss.delay)
		st.update(func(s *State) { s.Phase = "waiting-for-node" })
		deadline := time.Now().Add(ss.delay)
		if err := waitFor(ctx, 0, kids, func() bool { return !time.Now().Before(deadline) }); err != nil {
			return finish(err, st, stopAll, exit)
		}
		if !v.Bool("disable-etcd") {
			if err := ensureEtcdNameFile(ss.dataDir, node); err != nil {
				warnf("etcd name file: %v", err)
			}
		}
		pa, err := rke2SchedulerPodArgs(v, ss.dataDir, schedArgs, os.Environ())
		if err == nil {
			var res *staticpod.Result
			var changed bool
			res, changed, err = staticpod.Run(manifestDir, pa)
			if err == nil {
				verb := "Wrote"
				if !changed {
					verb = "Unchanged"
				}
				infof("%s static pod manifest %s (FILE_HASH %s; files %s)", verb, res.Path, res.FileHash, strings.Join(res.Files, ", "))
				st.update(func(s *State) {
					s.Phase = "scheduler-manifest-written"
					s.SchedulerManifest = res.Path
					s.SchedulerFileHash = res.FileHash
					s.SchedulerArgs = schedArgs
					s.SchedulerConfig = schedConfig
				})
				st.event("scheduler_manifest_written", map[string]any{"manifest": res.Path, "changed": changed,
					"file_hash": res.FileHash, "files": res.Files, "scheduler_config": schedConfig})
			}
		}
		if err != nil {
			// RKE2 logs this fatally and exits.
			fatalf("kube-scheduler static pod: %v", err)
			stopAll()
			return exit(1, "kube-scheduler static pod: "+err.Error())
		}
	}

	r := podrunner.New(runnerOptions(manifestDir, node, ss.self, ss.kineBin, "rke2", func(ev string, f map[string]any) {
		st.event(ev, f)
		if f["component"] != "kube-scheduler" {
			return
		}
		switch ev {
		case "pod_started":
			st.update(func(s *State) {
				s.Phase = "scheduler-running"
				s.SchedulerStartedAt = now()
				s.SchedulerPID, _ = f["pid"].(int)
				s.SchedulerRestarts, _ = f["restarts"].(int)
				s.SchedulerPodState = "running"
				s.SchedulerPodReason = ""
			})
			st.event("scheduler_started", map[string]any{"scheduler_pid": f["pid"], "scheduler_config": schedConfig,
				"static_pod": true, "restarts": f["restarts"], "file_hash": f["file_hash"]})
		case "pod_exited":
			st.update(func(s *State) {
				s.Phase = "scheduler-exited"
				s.SchedulerExitedAt = now()
				s.SchedulerExitReason = fmt.Sprintf("exit code %v (%v): %v", f["code"], f["reason"], f["error"])
				s.SchedulerPodState = "waiting"
				s.SchedulerPodReason, _ = f["reason"].(string)
			})
		case "pod_hostpath_error":
			st.update(func(s *State) { s.SchedulerPodState, s.SchedulerPodReason = "waiting", "HostPathError" })
		}
	}))
	rctx, rcancel := context.WithCancel(context.Background())
	runnerDone := make(chan struct{})
	go func() {
		r.Run(rctx)
		close(runnerDone)
	}()
	stopPodsThenAll := func() {
		rcancel()
		<-runnerDone
		stopAll()
	}
	if !v.Bool("disable-scheduler") {
		infof("Static pods of %s run by the double's kubelet (sandbox: %v)", manifestDir, sandboxEnabled())
	}
	err := waitFor(ctx, 0, kids, func() bool { return false })
	return finish(err, st, stopPodsThenAll, exit)
}

// runnerOptions are the static-pod runner's settings common to the kubelet
// double and rke2 server; environment variables adjust them for tests.
func runnerOptions(dir, node, self, kineBin, component string, emit func(string, map[string]any)) podrunner.Options {
	period, err := durationEnv("K3S_DOUBLE_FILE_CHECK", 2*time.Second)
	if err != nil {
		warnf("%v; using 2s", err)
		period = 2 * time.Second
	}
	base, err := durationEnv("K3S_DOUBLE_BACKOFF_BASE", podrunner.DefaultBackoffBase)
	if err != nil {
		warnf("%v; using 10s", err)
		base = podrunner.DefaultBackoffBase
	}
	maxB, err := durationEnv("K3S_DOUBLE_BACKOFF_MAX", 0)
	if err != nil {
		warnf("%v", err)
		maxB = 0
	}
	state := os.Getenv("K3S_DOUBLE_PODS_STATE")
	if state == "" {
		state = DefaultPodsStateFile
	}
	logDir, ok := os.LookupEnv("K3S_DOUBLE_POD_LOG_DIR")
	if !ok {
		logDir = DefaultPodLogDir
	}
	root := os.Getenv("K3S_DOUBLE_SANDBOX_ROOT")
	return podrunner.Options{
		ManifestDir: dir, Period: period, NodeName: node,
		BackoffBase: base, BackoffMax: maxB,
		StateFile: state, PodLogDir: logDir,
		Resolve: podrunner.DefaultResolver(self, kineBin),
		Self:    self, Sandbox: sandboxEnabled(), SandboxRoot: root,
		Emit: func(ev string, f map[string]any) {
			f["runner_pid"] = os.Getpid()
			emit(ev, f)
		},
		Logf:      logf,
		Output:    lockedStderr{},
		Component: component,
	}
}

// sandboxEnabled: containers run in the mount-namespace sandbox unless
// K3S_DOUBLE_SANDBOX is off/0/false, or the process is not root.
func sandboxEnabled() bool {
	switch strings.ToLower(os.Getenv("K3S_DOUBLE_SANDBOX")) {
	case "0", "off", "false", "no":
		return false
	}
	return os.Geteuid() == 0
}

// lockedStderr writes container output between the launcher's log lines.
type lockedStderr struct{}

func (lockedStderr) Write(p []byte) (int, error) {
	logMu.Lock()
	defer logMu.Unlock()
	return os.Stderr.Write(p)
}

// findKine: $K3S_DOUBLE_KINE, kine next to this binary, kine on $PATH,
// /usr/local/bin/kine ("" when none exists).
func findKine(self string) string {
	if k := os.Getenv("K3S_DOUBLE_KINE"); k != "" {
		return k
	}
	cands := []string{filepath.Join(filepath.Dir(self), "kine")}
	if p, err := exec.LookPath("kine"); err == nil {
		cands = append(cands, p)
	}
	cands = append(cands, "/usr/local/bin/kine")
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c
		}
	}
	return cands[0]
}
