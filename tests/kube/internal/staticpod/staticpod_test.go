package staticpod

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"baremetal.k3s/tests/kube/internal/pod"
)

type fixture struct {
	dataDir, manifests, kc, cfg, ca, crt, key, etcdName string
}

func setup(t *testing.T) fixture {
	t.Helper()
	d := t.TempDir()
	f := fixture{
		dataDir:   d,
		manifests: filepath.Join(d, "agent", "pod-manifests"),
		kc:        filepath.Join(d, "server", "cred", "scheduler.kubeconfig"),
		cfg:       filepath.Join(d, "etc", "sched.yaml"),
		ca:        filepath.Join(d, "server", "tls", "server-ca.crt"),
		crt:       filepath.Join(d, "server", "tls", "client-scheduler.crt"),
		key:       filepath.Join(d, "server", "tls", "client-scheduler.key"),
		etcdName:  filepath.Join(d, "server", "db", "etcd", "name"),
	}
	for p, body := range map[string]string{
		f.kc: "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority: " + f.ca +
			"\n    server: https://127.0.0.1:6443\n  name: local\nusers:\n- name: u\n  user:\n    client-certificate: " + f.crt +
			"\n    client-key: " + f.key + "\n",
		f.cfg: "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
		f.ca:  "CA", f.crt: "CRT", f.key: "KEY", f.etcdName: "node-1234abcd",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f fixture) args() Args {
	return Args{
		Command: "kube-scheduler",
		Args: []string{"--permit-port-sharing=true", "--authentication-kubeconfig=" + f.kc, "--authorization-kubeconfig=" + f.kc,
			"--bind-address=127.0.0.1", "--config=" + f.cfg, "--kubeconfig=" + f.kc, "--profiling=false", "--secure-port=10259",
			"--tls-cert-file=/does/not/exist.crt", "--log-dir=" + f.dataDir},
		Image: "rancher/hardened-kubernetes:v1.36.3-rke2r1", HealthPort: 10259, HealthProto: "HTTPS",
		CPURequest: "100m", MemoryRequest: "128Mi", Files: []string{f.etcdName},
		Liveness: DefaultLiveness, Startup: DefaultStartup,
		ExtraMounts: []string{f.dataDir + "/extra:/opt/extra:ro", "/nonexistent/dir:/data", "bad", "/a:/b:xx"},
		ExtraEnv:    []string{"GODEBUG=x509sha1=1", "broken"},
		Environ:     []string{"HTTPS_PROXY=http://proxy:3128", "no_proxy=.svc", "HOME=/root"},
	}
}

func TestRenderSchedulerAsRKE2(t *testing.T) {
	f := setup(t)
	if err := os.MkdirAll(filepath.Join(f.dataDir, "extra"), 0o755); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	a := f.args()
	a.Warnf = func(format string, x ...any) { warnings = append(warnings, format) }
	res, err := Render(f.manifests, a)
	if err != nil {
		t.Fatal(err)
	}
	// The etcd name file first, then every existing file named by an
	// argument and the kubeconfig's certificate files, sorted, once each.
	wantFiles := []string{f.etcdName, f.cfg, f.kc, f.ca, f.crt, f.key}
	sortedTail := append([]string{}, wantFiles[1:]...)
	for i := range sortedTail { // sorted by path
		for j := i + 1; j < len(sortedTail); j++ {
			if sortedTail[j] < sortedTail[i] {
				sortedTail[i], sortedTail[j] = sortedTail[j], sortedTail[i]
			}
		}
	}
	wantFiles = append(wantFiles[:1], sortedTail...)
	if !reflect.DeepEqual(res.Files, wantFiles) {
		t.Fatalf("files\n%q\nwant\n%q", res.Files, wantFiles)
	}
	h := sha256.New()
	for _, p := range wantFiles {
		b, _ := os.ReadFile(p)
		h.Write(b)
	}
	if res.FileHash != hex.EncodeToString(h.Sum(nil)) {
		t.Fatal("FILE_HASH is not the sha256 of the files' contents")
	}
	if res.Path != filepath.Join(f.manifests, "kube-scheduler.yaml") || res.Mode != 0o644 {
		t.Fatalf("path %s mode %v", res.Path, res.Mode)
	}
	if len(warnings) != 3 {
		t.Errorf("warnings %q", warnings)
	}

	// What the kubelet reads back.
	d, err := pod.Decode(res.Content, res.Path, "node")
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Content)
	}
	p := d.Pod
	if p.Metadata.Name != "kube-scheduler" || p.Metadata.Namespace != "kube-system" || p.Metadata.Labels["component"] != "kube-scheduler" ||
		p.Metadata.Labels["tier"] != "control-plane" || !p.Spec.HostNetwork || p.Spec.PriorityClassName != "system-cluster-critical" || len(p.Metadata.UID) != 32 {
		t.Fatalf("pod meta/spec %+v %+v", p.Metadata, p.Spec)
	}
	if d.UID != p.Metadata.UID {
		t.Fatal("the manifest's uid should be the pod's UID")
	}
	c := p.Spec.Containers[0]
	if !reflect.DeepEqual(c.Command, []string{"kube-scheduler"}) || !reflect.DeepEqual(c.Args, a.Args) {
		t.Fatalf("command %q args %q", c.Command, c.Args)
	}
	wantEnv := []pod.EnvVar{{Name: "FILE_HASH", Value: res.FileHash}, {Name: "HTTPS_PROXY", Value: "http://proxy:3128"},
		{Name: "no_proxy", Value: ".svc"}, {Name: "GODEBUG", Value: "x509sha1=1"}}
	if !reflect.DeepEqual(c.Env, wantEnv) {
		t.Fatalf("env %+v", c.Env)
	}
	type mnt struct {
		name, src, typ, dst string
		ro                  bool
	}
	var got []mnt
	for _, m := range c.VolumeMounts {
		v := p.VolumeByName(m.Name)
		got = append(got, mnt{m.Name, v.HostPath.Path, *v.HostPath.Type, m.MountPath, m.ReadOnly})
	}
	var want []mnt
	for i, fp := range wantFiles {
		want = append(want, mnt{"file" + string(rune('0'+i)), fp, "File", fp, true})
	}
	want = append(want, mnt{"extra-mount-0", f.dataDir + "/extra", "Directory", "/opt/extra", true},
		mnt{"extra-mount-1", "/nonexistent/dir", "DirectoryOrCreate", "/data", false})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mounts\n%+v\nwant\n%+v", got, want)
	}
	text := string(res.Content)
	for _, s := range []string{"creationTimestamp: null", "status: {}", "livenessProbe:\n      failureThreshold: 8\n      httpGet:\n        host: localhost\n        path: /healthz\n        port: 10259\n        scheme: HTTPS",
		"startupProbe:\n      failureThreshold: 24", "securityContext:\n      privileged: false", "requests:\n        cpu: 100m\n        memory: 128Mi", "imagePullPolicy: IfNotPresent"} {
		if !strings.Contains(text, s) {
			t.Errorf("manifest lacks %q:\n%s", s, text)
		}
	}
}

func TestFileHashFollowsFileContents(t *testing.T) {
	f := setup(t)
	r1, err := Render(f.manifests, f.args())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.cfg, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nextenders: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r2, _ := Render(f.manifests, f.args())
	if r1.FileHash == r2.FileHash || string(r1.Content) == string(r2.Content) {
		t.Fatal("a changed config file left FILE_HASH and the manifest unchanged")
	}
	// A kubeconfig that is not YAML fails the component, as in RKE2.
	if err := os.WriteFile(f.kc, []byte("a: ["), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Render(f.manifests, f.args()); err == nil {
		t.Fatal("a broken kubeconfig was accepted")
	}
}

func TestWriteFileOnlyOnChangeAndNeverInsideTheDir(t *testing.T) {
	f := setup(t)
	res, changed, err := Run(f.manifests, f.args())
	if err != nil || !changed {
		t.Fatalf("first write: %v %v", changed, err)
	}
	st, _ := os.Stat(f.manifests)
	if st.Mode().Perm() != 0o700 {
		t.Errorf("manifest dir mode %v", st.Mode())
	}
	st1, _ := os.Stat(res.Path)
	ino1 := st1.Sys().(*syscall.Stat_t).Ino
	_, changed, err = Run(f.manifests, f.args())
	if err != nil || changed {
		t.Fatalf("unchanged rewrite: %v %v", changed, err)
	}
	st2, _ := os.Stat(res.Path)
	if st2.Sys().(*syscall.Stat_t).Ino != ino1 || !st2.ModTime().Equal(st1.ModTime()) {
		t.Fatal("identical bytes were rewritten")
	}
	a := f.args()
	a.Args = append(a.Args, "--v=2")
	a.CISMode = true
	_, changed, err = Run(f.manifests, a)
	if err != nil || !changed {
		t.Fatalf("changed write: %v %v", changed, err)
	}
	st3, _ := os.Stat(res.Path)
	if st3.Sys().(*syscall.Stat_t).Ino == ino1 || st3.Mode().Perm() != 0o600 {
		t.Fatalf("not replaced by rename, or mode %v", st3.Mode())
	}
	entries, _ := os.ReadDir(f.manifests)
	if len(entries) != 1 {
		t.Fatalf("manifest dir holds %v", entries)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(f.manifests), "kube-scheduler.yaml*"))
	if len(left) != 0 {
		t.Fatalf("temp dirs left: %v", left)
	}
	if err := Remove(f.manifests, "kube-scheduler"); err != nil {
		t.Fatal(err)
	}
	if err := Remove(f.manifests, "kube-scheduler"); err != nil {
		t.Fatal("removing a missing manifest:", err)
	}
}
