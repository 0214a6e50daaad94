package launcher

import (
	"flag"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// KubeadmOfflinePhases are the `kubeadm init` phases that work without a
// kubelet, a container runtime or a reachable API server, in kubeadm's order.
// They write /etc/kubernetes/{pki/,*.conf,manifests/*.yaml} and the
// kubelet's /var/lib/kubelet/{config.yaml,kubeadm-flags.env} (kubelet-start
// then restarts the kubelet service when there is one). Preflight and the
// phases that need the API server are not run.
var KubeadmOfflinePhases = []string{"certs all", "kubeconfig all", "etcd local", "control-plane all", "kubelet-start"}

// DefaultKubeadmOfflineConfig is where kubeadm-init-offline keeps the
// configuration it generates (outside /etc/kubernetes/manifests, which the
// kubelet reads), so that later phases can be re-run with the same values.
const DefaultKubeadmOfflineConfig = "/etc/kubernetes/kubeadm-init-offline.yaml"

// KubeadmOfflineConfig renders the InitConfiguration + ClusterConfiguration
// (kubeadm.k8s.io/v1beta4) the offline init uses.
func KubeadmOfflineConfig(version, advertise, node string) string {
	var b strings.Builder
	b.WriteString("apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n")
	if advertise != "" {
		fmt.Fprintf(&b, "localAPIEndpoint:\n  advertiseAddress: %s\n  bindPort: 6443\n", advertise)
	}
	b.WriteString("nodeRegistration:\n  criSocket: unix:///var/run/containerd/containerd.sock\n  imagePullPolicy: IfNotPresent\n")
	if node != "" {
		fmt.Fprintf(&b, "  name: %s\n", node)
	}
	fmt.Fprintf(&b, "---\napiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: %s\n", version)
	return b.String()
}

// RunKubeadmInitOffline is `k3s kubeadm-init-offline`: the offline part of
// `kubeadm init` with the real kubeadm (this binary as `kubeadm`), phase by
// phase, all from one configuration file.
func RunKubeadmInitOffline(self string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kubeadm-init-offline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := fs.String("config", "", "kubeadm configuration file to use as is (it must set kubernetesVersion); default: generate "+DefaultKubeadmOfflineConfig)
	out := fs.String("write-config", DefaultKubeadmOfflineConfig, "where to write the generated configuration")
	version := fs.String("kubernetes-version", K8sVersion, "kubernetesVersion of the generated configuration")
	advertise := fs.String("apiserver-advertise-address", "", "localAPIEndpoint.advertiseAddress (default: kubeadm picks the default route's address)")
	node := fs.String("node-name", "", "nodeRegistration.name (default: the host name)")
	skip := fs.String("skip-phases", "", "comma-separated phases to leave out, e.g. kubelet-start")
	upload := fs.Bool("upload-config", false, "then wait for the API server (the kubelet must be running) and run `kubeadm init phase upload-config all`, which also binds admin.conf's group to cluster-admin")
	wait := fs.Duration("wait", 3*time.Minute, "how long --upload-config waits for the API server")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	path := *cfg
	if path == "" {
		path = *out
		if err := writeFileAtomic(path, []byte(KubeadmOfflineConfig(*version, *advertise, *node)), 0o600); err != nil {
			fmt.Fprintf(stderr, "kubeadm-init-offline: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "[kubeadm-init-offline] wrote %s\n", path)
	}
	skipped := map[string]bool{}
	for _, s := range strings.Split(*skip, ",") {
		if s = strings.TrimSpace(s); s != "" {
			skipped[s] = true
		}
	}
	for _, ph := range KubeadmOfflinePhases {
		words := strings.Fields(ph)
		if skipped[words[0]] || skipped[ph] {
			continue
		}
		argv := append(append([]string{"init", "phase"}, words...), "--config", path)
		fmt.Fprintf(stdout, "[kubeadm-init-offline] kubeadm %s\n", strings.Join(argv, " "))
		cmd := exec.Command(self, argv...)
		cmd.Args[0] = "kubeadm" // this binary is kubeadm by that name
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(stderr, "kubeadm-init-offline: kubeadm init phase %s: %v\n", ph, err)
			return 1
		}
	}
	if *upload {
		fmt.Fprintf(stdout, "[kubeadm-init-offline] waiting up to %s for the API server (/readyz)\n", *wait)
		deadline := time.Now().Add(*wait)
		for {
			kc := exec.Command(self, "kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf", "get", "--raw", "/readyz", "--request-timeout=5s")
			kc.Args[0] = "k3s"
			if out, err := kc.Output(); err == nil && strings.TrimSpace(string(out)) == "ok" {
				break
			}
			if time.Now().After(deadline) {
				fmt.Fprintf(stderr, "kubeadm-init-offline: the API server is not ready after %s (is the kubelet running?)\n", *wait)
				return 1
			}
			time.Sleep(2 * time.Second)
		}
		argv := []string{"init", "phase", "upload-config", "all", "--config", path}
		fmt.Fprintf(stdout, "[kubeadm-init-offline] kubeadm %s\n", strings.Join(argv, " "))
		cmd := exec.Command(self, argv...)
		cmd.Args[0] = "kubeadm"
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(stderr, "kubeadm-init-offline: kubeadm init phase upload-config all: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(stdout, "[kubeadm-init-offline] done: %s\n", strings.Join([]string{
		filepath.Join("/etc/kubernetes", "pki"), "/etc/kubernetes/*.conf", "/etc/kubernetes/manifests"}, ", "))
	return 0
}
