// Package staticpod writes a control-plane static pod manifest the way RKE2
// does (rancher/rke2 pkg/staticpod and pkg/podexecutor, written from their
// behaviour): every "--flag=/absolute/path" argument whose file exists is
// mounted read-only at the same path (plus the certificate and key files a
// "--kubeconfig=" file names), FILE_HASH is the sha256 of those files'
// contents, extra mounts and env come from the *-extra-mount / *-extra-env
// flags, and the file is replaced through a temp file outside the manifest
// directory, only when its bytes change.
package staticpod

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// ProbeConf is one probe's timing (RKE2's staticpod.ProbeConf).
type ProbeConf struct {
	InitialDelaySeconds int32
	TimeoutSeconds      int32
	FailureThreshold    int32
	PeriodSeconds       int32
}

// Probe timings RKE2 uses unless --control-plane-probe-configuration says
// otherwise (the kubeadm values it cites).
var (
	DefaultLiveness  = ProbeConf{InitialDelaySeconds: 10, TimeoutSeconds: 15, FailureThreshold: 8, PeriodSeconds: 10}
	DefaultReadiness = ProbeConf{InitialDelaySeconds: 0, TimeoutSeconds: 15, FailureThreshold: 3, PeriodSeconds: 1}
	DefaultStartup   = ProbeConf{InitialDelaySeconds: 10, TimeoutSeconds: 5, FailureThreshold: 24, PeriodSeconds: 10}
)

// Args describe one component's pod.
type Args struct {
	Command       string
	Args          []string
	Image         string
	Dirs          []string // hostPath DirectoryOrCreate, read-write
	Files         []string // hostPath File, read-only (besides the ones found in Args)
	ExcludeFiles  []string
	HealthPort    int32
	HealthProto   string // default HTTPS
	HealthPath    string // default /healthz
	CPURequest    string
	CPULimit      string
	MemoryRequest string
	MemoryLimit   string
	ExtraMounts   []string // src:dst[:ro|rw[:type]]
	ExtraEnv      []string // NAME=value
	Liveness      ProbeConf
	Startup       ProbeConf
	CISMode       bool     // manifest mode 0600
	Environ       []string // the launcher's environment; *proxy* variables are copied in
	Warnf         func(string, ...any)
}

// The manifest types: a v1 Pod as sigs.k8s.io/yaml renders one (keys in
// alphabetical order, creationTimestamp null, empty status).
type manifest struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   metadata `json:"metadata"`
	Spec       podSpec  `json:"spec"`
	Status     struct{} `json:"status"`
}

type metadata struct {
	Annotations       map[string]string `json:"annotations,omitempty"`
	CreationTimestamp *string           `json:"creationTimestamp"`
	Labels            map[string]string `json:"labels,omitempty"`
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace"`
	UID               string            `json:"uid,omitempty"`
}

type podSpec struct {
	Containers        []container `json:"containers"`
	HostNetwork       bool        `json:"hostNetwork"`
	PriorityClassName string      `json:"priorityClassName"`
	Volumes           []volume    `json:"volumes,omitempty"`
}

type envVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type volumeMount struct {
	MountPath string `json:"mountPath"`
	Name      string `json:"name"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
}

type resources struct {
	Limits   map[string]string `json:"limits,omitempty"`
	Requests map[string]string `json:"requests,omitempty"`
}

type container struct {
	Args            []string        `json:"args,omitempty"`
	Command         []string        `json:"command"`
	Env             []envVar        `json:"env,omitempty"`
	Image           string          `json:"image"`
	ImagePullPolicy string          `json:"imagePullPolicy"`
	LivenessProbe   *probe          `json:"livenessProbe,omitempty"`
	Name            string          `json:"name"`
	Resources       resources       `json:"resources"`
	SecurityContext map[string]bool `json:"securityContext"`
	StartupProbe    *probe          `json:"startupProbe,omitempty"`
	VolumeMounts    []volumeMount   `json:"volumeMounts,omitempty"`
}

type probe struct {
	FailureThreshold    int32    `json:"failureThreshold,omitempty"`
	HTTPGet             *httpGet `json:"httpGet,omitempty"`
	InitialDelaySeconds int32    `json:"initialDelaySeconds,omitempty"`
	PeriodSeconds       int32    `json:"periodSeconds,omitempty"`
	TimeoutSeconds      int32    `json:"timeoutSeconds,omitempty"`
}

type httpGet struct {
	Host   string `json:"host"`
	Path   string `json:"path"`
	Port   int32  `json:"port"`
	Scheme string `json:"scheme"`
}

type hostPath struct {
	Path string `json:"path"`
	Type string `json:"type"`
}

type volume struct {
	HostPath hostPath `json:"hostPath"`
	Name     string   `json:"name"`
}

// Result is a rendered manifest.
type Result struct {
	Path     string   // <dir>/<command>.yaml
	Content  []byte   // YAML
	FileHash string   // env FILE_HASH
	Files    []string // the read-only file mounts, sorted
	Mode     fs.FileMode
}

// Render builds the manifest for args in dir (nothing is written).
func Render(dir string, a Args) (*Result, error) {
	found, err := filesInArgs(a.Args, a.ExcludeFiles)
	if err != nil {
		return nil, err
	}
	files := append(append([]string{}, a.Files...), found...)
	sum, err := hashFiles(files)
	if err != nil {
		return nil, err
	}
	m := manifest{APIVersion: "v1", Kind: "Pod"}
	m.Metadata = metadata{Name: a.Command, Namespace: "kube-system",
		Labels: map[string]string{"component": a.Command, "tier": "control-plane"}}
	c := container{
		Name:            a.Command,
		Image:           a.Image,
		Command:         []string{a.Command},
		Args:            a.Args,
		Env:             []envVar{{Name: "FILE_HASH", Value: sum}},
		ImagePullPolicy: "IfNotPresent",
		SecurityContext: map[string]bool{"privileged": false},
		LivenessProbe:   makeProbe(a, a.Liveness),
		StartupProbe:    makeProbe(a, a.Startup),
	}
	setResource(&c.Resources.Requests, "cpu", a.CPURequest)
	setResource(&c.Resources.Requests, "memory", a.MemoryRequest)
	setResource(&c.Resources.Limits, "cpu", a.CPULimit)
	setResource(&c.Resources.Limits, "memory", a.MemoryLimit)
	for _, kv := range a.Environ {
		name, val, _ := strings.Cut(kv, "=")
		if strings.Contains(strings.ToLower(name), "proxy") {
			c.Env = append(c.Env, envVar{Name: name, Value: val})
		}
	}
	m.Spec = podSpec{HostNetwork: true, PriorityClassName: "system-cluster-critical"}
	for i, d := range a.Dirs {
		name := fmt.Sprintf("dir%d", i)
		m.Spec.Volumes = append(m.Spec.Volumes, volume{Name: name, HostPath: hostPath{Path: d, Type: "DirectoryOrCreate"}})
		c.VolumeMounts = append(c.VolumeMounts, volumeMount{Name: name, MountPath: d})
	}
	for i, f := range files {
		name := fmt.Sprintf("file%d", i)
		m.Spec.Volumes = append(m.Spec.Volumes, volume{Name: name, HostPath: hostPath{Path: f, Type: "File"}})
		c.VolumeMounts = append(c.VolumeMounts, volumeMount{Name: name, MountPath: f, ReadOnly: true})
	}
	for i, raw := range a.ExtraMounts {
		v, vm, ok := extraMount(i, raw, a.Command, a.Warnf)
		if !ok {
			continue
		}
		m.Spec.Volumes = append(m.Spec.Volumes, v)
		c.VolumeMounts = append(c.VolumeMounts, vm)
	}
	for _, raw := range a.ExtraEnv {
		name, val, ok := strings.Cut(raw, "=")
		if !ok {
			warn(a.Warnf, "environment variable for pod %s %s was not valid", a.Command, raw)
			continue
		}
		c.Env = append(c.Env, envVar{Name: name, Value: val})
	}
	m.Spec.Containers = []container{c}
	path := filepath.Join(dir, a.Command+".yaml")

	// RKE2 sets the UID to a hash of the finished pod and the manifest path,
	// so the kubelet sees a new pod whenever anything in it changes.
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	h := md5.New()
	h.Write(body)
	fmt.Fprintf(h, "file:%s", path)
	m.Metadata.UID = hex.EncodeToString(h.Sum(nil))

	out, err := yaml.Marshal(m)
	if err != nil {
		return nil, err
	}
	mode := fs.FileMode(0o644)
	if a.CISMode {
		mode = 0o600
	}
	return &Result{Path: path, Content: out, FileHash: sum, Files: files, Mode: mode}, nil
}

// Run renders and writes the manifest; changed reports whether the file was
// (re)written.
func Run(dir string, a Args) (*Result, bool, error) {
	res, err := Render(dir, a)
	if err != nil {
		return nil, false, err
	}
	changed, err := WriteFile(res.Path, res.Content, res.Mode)
	return res, changed, err
}

// WriteFile replaces dest with content unless it already holds exactly
// those bytes. The new file is written in a temporary directory next to
// the manifest directory (never inside it, where the kubelet would read a
// half-written file or a second copy of the pod) and renamed into place.
func WriteFile(dest string, content []byte, perm fs.FileMode) (bool, error) {
	dir := filepath.Dir(dest)
	name := filepath.Base(dest)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	if existing, err := os.ReadFile(dest); err == nil && bytes.Equal(existing, content) {
		return false, nil
	}
	tmpdir, err := os.MkdirTemp(filepath.Dir(dir), name)
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmpdir)
	tmp := filepath.Join(tmpdir, name)
	if err := os.WriteFile(tmp, content, perm); err != nil {
		return false, err
	}
	return true, os.Rename(tmp, dest)
}

// Remove deletes the component's manifest (a disabled component).
func Remove(dir, command string) error {
	err := os.Remove(filepath.Join(dir, command+".yaml"))
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

func makeProbe(a Args, conf ProbeConf) *probe {
	if a.HealthPort == 0 {
		return nil
	}
	scheme, path := a.HealthProto, a.HealthPath
	if scheme == "" {
		scheme = "HTTPS"
	}
	if path == "" {
		path = "/healthz"
	}
	return &probe{
		HTTPGet:             &httpGet{Host: "localhost", Path: path, Port: a.HealthPort, Scheme: scheme},
		InitialDelaySeconds: conf.InitialDelaySeconds, TimeoutSeconds: conf.TimeoutSeconds,
		FailureThreshold: conf.FailureThreshold, PeriodSeconds: conf.PeriodSeconds,
	}
}

func setResource(m *map[string]string, name, val string) {
	if val == "" {
		return
	}
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[name] = val
}

func warn(f func(string, ...any), format string, a ...any) {
	if f != nil {
		f(format, a...)
	}
}

// extraMount parses "src:dst", "src:dst:ro|rw" or "src:dst:ro|rw:Type"; a
// missing type is detected from what src is (a directory, a socket, else a
// file; DirectoryOrCreate when src does not exist).
func extraMount(i int, raw, pod string, warnf func(string, ...any)) (volume, volumeMount, bool) {
	parts := strings.Split(raw, ":")
	ro := false
	typ := ""
	switch len(parts) {
	case 2:
	case 3, 4:
		switch strings.ToLower(parts[2]) {
		case "ro":
			ro = true
		case "rw":
		default:
			warn(warnf, "Unknown mount option: %s encountered in extra mount %s for pod %s", parts[2], raw, pod)
			return volume{}, volumeMount{}, false
		}
		if len(parts) == 4 {
			typ = parts[3]
		}
	default:
		warn(warnf, "Extra mount for pod %s %s was not valid", pod, raw)
		return volume{}, volumeMount{}, false
	}
	if typ == "" {
		st, err := os.Stat(parts[0])
		switch {
		case err != nil:
			typ = "DirectoryOrCreate"
		case st.Mode().Type() == fs.ModeSocket:
			typ = "Socket"
		case st.IsDir():
			typ = "Directory"
		default:
			typ = "File"
		}
	}
	name := fmt.Sprintf("extra-mount-%d", i)
	return volume{Name: name, HostPath: hostPath{Path: parts[0], Type: typ}},
		volumeMount{Name: name, MountPath: parts[1], ReadOnly: ro}, true
}

// filesInArgs lists, sorted and once each, the existing non-directory files
// named by "--flag=/absolute/path" arguments, plus the certificate
// authority, client certificate and client key files of a "--kubeconfig="
// file. A kubeconfig that cannot be read is an error.
func filesInArgs(args, exclude []string) ([]string, error) {
	ex := map[string]bool{}
	for _, f := range exclude {
		ex[f] = true
	}
	set := map[string]bool{}
	for _, arg := range args {
		name, val, ok := strings.Cut(arg, "=")
		if !ok || !strings.HasPrefix(val, "/") {
			continue
		}
		st, err := os.Stat(val)
		if err != nil || st.IsDir() || ex[val] {
			continue
		}
		set[val] = true
		if name == "--kubeconfig" {
			refs, err := kubeconfigFiles(val)
			if err != nil {
				return nil, err
			}
			for _, r := range refs {
				set[r] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return out, nil
}

type kubeconfig struct {
	Clusters []struct {
		Cluster struct {
			CertificateAuthority string `json:"certificate-authority"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		User struct {
			ClientCertificate string `json:"client-certificate"`
			ClientKey         string `json:"client-key"`
		} `json:"user"`
	} `json:"users"`
}

func kubeconfigFiles(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(data, &kc); err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", path, err)
	}
	var out []string
	for _, c := range kc.Clusters {
		if c.Cluster.CertificateAuthority != "" {
			out = append(out, c.Cluster.CertificateAuthority)
		}
	}
	for _, u := range kc.Users {
		if u.User.ClientKey != "" {
			out = append(out, u.User.ClientKey)
		}
		if u.User.ClientCertificate != "" {
			out = append(out, u.User.ClientCertificate)
		}
	}
	return out, nil
}

// hashFiles is the sha256 of the files' contents, in order; a file that
// cannot be read is an error (RKE2 then fails to start the component).
func hashFiles(files []string) (string, error) {
	h := sha256.New()
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, r)
		r.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
