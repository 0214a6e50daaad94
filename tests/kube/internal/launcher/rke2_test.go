package launcher

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"baremetal.k3s/tests/kube/internal/configfile"
	"baremetal.k3s/tests/kube/internal/staticpod"
)

func TestRKE2SchedulerArgs(t *testing.T) {
	kc := "/var/lib/rancher/rke2/server/cred/scheduler.kubeconfig"
	got := rke2SchedulerArgs(kc, []string{"config=/etc/rancher/rke2/sched.yaml", "v=2", "bind-address=0.0.0.0"})
	want := []string{"--permit-port-sharing=true",
		"--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc, "--bind-address=0.0.0.0",
		"--config=/etc/rancher/rke2/sched.yaml", "--kubeconfig=" + kc, "--profiling=false", "--secure-port=10259", "--v=2"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

func parseRKE2(t *testing.T, args ...string) *configfile.Values {
	t.Helper()
	v, err := configfile.Parse(configfile.RKE2().Server, args)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRKE2SchedulerPodArgs(t *testing.T) {
	v := parseRKE2(t, "--kube-scheduler-extra-mount=/etc/ca:/etc/ca:ro", "--kube-scheduler-extra-env=A=b",
		"--control-plane-resource-requests=kube-scheduler-cpu=250m", "--control-plane-resource-limits=kube-scheduler-memory=1Gi,kube-apiserver-cpu=1",
		"--control-plane-probe-configuration=kube-scheduler-liveness-initial-delay-seconds=3,kube-scheduler-startup-failure-threshold=5",
		"--profile=cis", "--kube-scheduler-image=example/ks:1")
	a, err := rke2SchedulerPodArgs(v, "/var/lib/rancher/rke2", []string{"--x=1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Image != "example/ks:1" || a.CPURequest != "250m" || a.MemoryRequest != "128Mi" || a.MemoryLimit != "1Gi" || a.CPULimit != "" ||
		a.Liveness.InitialDelaySeconds != 3 || a.Liveness.FailureThreshold != 8 || a.Startup.FailureThreshold != 5 || !a.CISMode ||
		!reflect.DeepEqual(a.Files, []string{"/var/lib/rancher/rke2/server/db/etcd/name"}) || a.HealthPort != 10259 ||
		!reflect.DeepEqual(a.ExtraMounts, []string{"/etc/ca:/etc/ca:ro"}) || !reflect.DeepEqual(a.ExtraEnv, []string{"A=b"}) {
		t.Fatalf("%+v", a)
	}
	v = parseRKE2(t, "--disable-etcd")
	if a, _ := rke2SchedulerPodArgs(v, "/d", nil, nil); len(a.Files) != 0 || a.Image != RKE2SchedulerImage || a.Liveness != staticpod.DefaultLiveness {
		t.Fatalf("%+v", a)
	}
	if _, err := rke2SchedulerPodArgs(parseRKE2(t, "--control-plane-probe-configuration=kube-scheduler-liveness-timeout-seconds=-1"), "/d", nil, nil); err == nil {
		t.Fatal("negative probe value accepted")
	}
	if _, err := rke2SchedulerPodArgs(parseRKE2(t, "--control-plane-resource-requests=cpu"), "/d", nil, nil); err == nil {
		t.Fatal("resource without = accepted")
	}
}

func TestEtcdNameFileOnce(t *testing.T) {
	d := t.TempDir()
	if err := ensureEtcdNameFile(d, "node1"); err != nil {
		t.Fatal(err)
	}
	b1, _ := os.ReadFile(etcdNameFile(d))
	if !strings.HasPrefix(string(b1), "node1-") || len(b1) != len("node1-")+8 {
		t.Fatalf("%q", b1)
	}
	_ = ensureEtcdNameFile(d, "node1")
	if b2, _ := os.ReadFile(etcdNameFile(d)); string(b2) != string(b1) {
		t.Fatal("name file rewritten")
	}
}

func TestParseKubeletFlags(t *testing.T) {
	// kubeadm's drop-in: $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
	o, err := parseKubeletFlags([]string{"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf", "--kubeconfig=/etc/kubernetes/kubelet.conf",
		"--config", "/var/lib/kubelet/config.yaml", "--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock",
		"--pod-infra-container-image=registry.k8s.io/pause:3.10", "--fail-swap-on=false", "--some-new-flag=x", "--another-bool",
		"--file-check-frequency", "500ms", "--hostname-override=Node-A", "-v=2"})
	if err != nil {
		t.Fatal(err)
	}
	if o.config != "/var/lib/kubelet/config.yaml" || o.period != 500*time.Millisecond || !o.periodSet || o.hostname != "Node-A" || o.manifestSet ||
		!reflect.DeepEqual(o.unknown, []string{"--some-new-flag=x", "--another-bool"}) || len(o.ignored) != 6 {
		t.Fatalf("%+v", o)
	}
	o, err = parseKubeletFlags([]string{"--pod-manifest-path=/m", "--version"})
	if err != nil || o.manifestPath != "/m" || !o.manifestSet || !o.version {
		t.Fatalf("%+v %v", o, err)
	}
	for _, bad := range [][]string{{"--file-check-frequency=soon"}, {"--kubeconfig"}, {"run"}} {
		if _, err := parseKubeletFlags(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRunKubeletConfigFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("K3S_DOUBLE_EVENTS", filepath.Join(dir, "events.jsonl"))
	// A --config that does not exist fails, as the kubelet does.
	if code := RunKubelet([]string{"kubelet", "--config=" + filepath.Join(dir, "missing.yaml")}); code != 1 {
		t.Fatalf("missing config: exit %d", code)
	}
	if code := RunKubelet([]string{"kubelet", "--version"}); code != 0 {
		t.Fatalf("--version: %d", code)
	}
}

func TestKubeadmOfflineConfig(t *testing.T) {
	got := KubeadmOfflineConfig("v1.36.3", "172.17.0.2", "node-a")
	for _, s := range []string{"kind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: 172.17.0.2\n  bindPort: 6443\n",
		"  name: node-a\n", "---\napiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.36.3\n"} {
		if !strings.Contains(got, s) {
			t.Errorf("lacks %q:\n%s", s, got)
		}
	}
	if s := KubeadmOfflineConfig("v1.36.3", "", ""); strings.Contains(s, "localAPIEndpoint") || strings.Contains(s, "name:") {
		t.Errorf("defaults should be kubeadm's:\n%s", s)
	}
}

func TestFindKine(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("K3S_DOUBLE_KINE", "")
	t.Setenv("PATH", dir)
	self := filepath.Join(dir, "bin", "kubelet")
	if err := os.MkdirAll(filepath.Dir(self), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kine"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := findKine(self); got != filepath.Join(dir, "kine") {
		t.Fatalf("PATH kine: %s", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "kine"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := findKine(self); got != filepath.Join(dir, "bin", "kine") {
		t.Fatalf("sibling kine: %s", got)
	}
	t.Setenv("K3S_DOUBLE_KINE", "/x/kine")
	if got := findKine(self); got != "/x/kine" {
		t.Fatalf("env kine: %s", got)
	}
}
