package launcher

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"baremetal.k3s/tests/kube/internal/podrunner"
	"sigs.k8s.io/yaml"
)

// DefaultPodManifestPath is kubeadm's staticPodPath.
const DefaultPodManifestPath = "/etc/kubernetes/manifests"

// kubeletValueFlags are kubelet flags that take a value, so that
// "--flag value" is read right; everything else given as "--flag" alone is
// taken as a boolean.
var kubeletValueFlags = map[string]bool{
	"config": true, "kubeconfig": true, "bootstrap-kubeconfig": true, "pod-manifest-path": true,
	"file-check-frequency": true, "hostname-override": true, "container-runtime-endpoint": true,
	"image-service-endpoint": true, "pod-infra-container-image": true, "node-ip": true,
	"cgroup-driver": true, "cgroup-root": true, "root-dir": true, "cert-dir": true, "v": true,
	"vmodule": true, "node-labels": true, "register-with-taints": true, "cluster-dns": true,
	"cluster-domain": true, "resolv-conf": true, "runtime-request-timeout": true,
	"volume-plugin-dir": true, "sync-frequency": true, "provider-id": true, "cloud-provider": true,
	"feature-gates": true, "eviction-hard": true, "kube-reserved": true, "system-reserved": true,
	"max-pods": true, "address": true, "port": true, "healthz-port": true, "healthz-bind-address": true,
	"tls-cert-file": true, "tls-private-key-file": true, "client-ca-file": true, "log-file": true,
	"double-backoff-base": true, "config-dir": true,
}

// kubeletOptions is what the kubelet double takes from its command line.
type kubeletOptions struct {
	manifestPath string
	manifestSet  bool
	period       time.Duration
	periodSet    bool
	hostname     string
	config       string
	backoffBase  time.Duration
	ignored      []string // flags accepted and ignored
	unknown      []string // flags the double does not know
	version      bool
	help         bool
}

func parseKubeletFlags(args []string) (*kubeletOptions, error) {
	o := &kubeletOptions{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return nil, fmt.Errorf("unknown command %q for \"kubelet\"", a)
		}
		name := strings.TrimLeft(a, "-")
		val, hasVal := "", false
		if j := strings.Index(name, "="); j >= 0 {
			name, val, hasVal = name[:j], name[j+1:], true
		}
		name = strings.ReplaceAll(name, "_", "-") // pflag's word-separator normalization
		if !hasVal && kubeletValueFlags[name] {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag needs an argument: --%s", name)
			}
			val, hasVal = args[i+1], true
			i++
		}
		switch name {
		case "pod-manifest-path":
			o.manifestPath, o.manifestSet = val, true
		case "file-check-frequency":
			d, err := time.ParseDuration(val)
			if err != nil {
				return nil, fmt.Errorf("invalid argument %q for \"--file-check-frequency\" flag: %v", val, err)
			}
			o.period, o.periodSet = d, true
		case "hostname-override":
			o.hostname = val
		case "config":
			o.config = val
		case "double-backoff-base":
			d, err := time.ParseDuration(val)
			if err != nil {
				return nil, fmt.Errorf("invalid argument %q for \"--double-backoff-base\" flag: %v", val, err)
			}
			o.backoffBase = d
		case "version":
			o.version = !hasVal || val == "true" || val == "raw"
		case "h", "help":
			o.help = true
		default:
			if kubeletValueFlags[name] || isKnownKubeletBool(name) {
				o.ignored = append(o.ignored, a)
			} else {
				o.unknown = append(o.unknown, a)
			}
		}
	}
	return o, nil
}

func isKnownKubeletBool(name string) bool {
	switch name {
	case "fail-swap-on", "anonymous-auth", "rotate-certificates", "rotate-server-certificates",
		"register-node", "enable-server", "logtostderr", "alsologtostderr", "exit-on-lock-contention",
		"protect-kernel-defaults", "serialize-image-pulls", "cgroups-per-qos", "enforce-node-allocatable":
		return true
	}
	return false
}

// kubeletConfigFile is the part of a KubeletConfiguration file the double reads.
type kubeletConfigFile struct {
	Kind               string `json:"kind"`
	StaticPodPath      string `json:"staticPodPath"`
	FileCheckFrequency string `json:"fileCheckFrequency"`
}

// klogf writes a klog-style line, as the kubelet logs.
func klogf(level, format string, a ...any) {
	c := "I"
	switch level {
	case "warning":
		c = "W"
	case "error":
		c = "E"
	case "fatal":
		c = "F"
	}
	t := time.Now()
	logMu.Lock()
	defer logMu.Unlock()
	fmt.Fprintf(os.Stderr, "%s%s %7d kubelet-double] %s\n", c, t.Format("0102 15:04:05.000000"), os.Getpid(), fmt.Sprintf(format, a...))
}

// RunKubelet is the kubelet double: a static-pod runner for
// --pod-manifest-path (or staticPodPath of --config; default
// /etc/kubernetes/manifests). Other kubelet flags are accepted and ignored.
// On SIGTERM/SIGINT it stops every pod (the real kubelet leaves them).
func RunKubelet(argv []string) int {
	o, err := parseKubeletFlags(argv[1:])
	if err != nil {
		klogf("error", "%v", err)
		return 1
	}
	if o.version {
		fmt.Printf("Kubernetes %s\n", K8sVersion)
		return 0
	}
	if o.help {
		fmt.Printf("kubelet (baremetal.k3s test double, Kubernetes %s): runs the static pods of --pod-manifest-path.\nSee tests/kube/README.md.\n", K8sVersion)
		return 0
	}
	st := newStateFile("kubelet")
	st.event("start", nil)
	klogf("info", "kubelet double %s (%s) starting; pid %d", K8sVersion, Commit, os.Getpid())
	for _, u := range o.unknown {
		klogf("warning", "unknown flag %s accepted and ignored by the kubelet double", u)
	}
	if len(o.ignored) > 0 {
		klogf("info", "flags accepted and ignored: %s", strings.Join(o.ignored, " "))
	}

	manifestPath := DefaultPodManifestPath
	if o.config != "" {
		data, err := os.ReadFile(o.config)
		if err != nil {
			// as the kubelet: a named config file must load
			klogf("error", "\"command failed\" err=\"failed to load kubelet config file, path: %s, error: %v\"", o.config, err)
			st.event("exit", map[string]any{"code": 1, "reason": "config: " + err.Error()})
			return 1
		}
		var kc kubeletConfigFile
		if err := yaml.Unmarshal(data, &kc); err != nil {
			klogf("error", "\"command failed\" err=\"failed to load kubelet config file, path: %s, error: %v\"", o.config, err)
			st.event("exit", map[string]any{"code": 1, "reason": "config: " + err.Error()})
			return 1
		}
		if kc.StaticPodPath != "" {
			manifestPath = kc.StaticPodPath
		}
		if kc.FileCheckFrequency != "" && kc.FileCheckFrequency != "0s" {
			klogf("info", "config fileCheckFrequency %s ignored: the double polls every --file-check-frequency (default 2s) and has no inotify", kc.FileCheckFrequency)
		}
	}
	if o.manifestSet {
		manifestPath = o.manifestPath // a flag wins over the config file, as in the kubelet
	}
	node := strings.ToLower(o.hostname)
	if node == "" {
		h, _ := os.Hostname()
		node = strings.ToLower(h)
	}
	self, err := os.Executable()
	if err != nil {
		klogf("error", "%v", err)
		return 1
	}
	opts := runnerOptions(manifestPath, node, self, findKine(self), "kubelet", st.event)
	opts.Logf = klogf
	if o.periodSet {
		opts.Period = o.period
	}
	if o.backoffBase > 0 {
		opts.BackoffBase = o.backoffBase
	}
	if !opts.Sandbox {
		klogf("warning", "containers run without the sandbox (not root, or K3S_DOUBLE_SANDBOX=off): they see the whole host")
	}
	r := podrunner.New(opts)

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	done := make(chan struct{})
	go func() {
		r.Run(ctx)
		close(done)
	}()
	if sent, err := sdNotify("READY=1\n"); err != nil {
		klogf("warning", "sd_notify READY=1 failed: %v", err)
	} else if sent {
		klogf("info", "Sent READY=1 to systemd")
	}
	<-ctx.Done()
	st.event("stopping", nil)
	klogf("info", "Shutting down: stopping all static pods (the double does not leave containers running)")
	<-done
	st.event("exit", map[string]any{"code": 0, "reason": "signal"})
	return 0
}
