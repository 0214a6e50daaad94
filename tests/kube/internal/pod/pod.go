// Package pod is the part of a v1 Pod that the static-pod runner of the test
// doubles reads, decoded as the kubelet's file source does (YAML or JSON,
// unknown fields ignored), with the kubelet's defaults for static pods. It
// has no Kubernetes imports so that its tests run without compiling Kubernetes.
package pod

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"path"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// Pod is a v1 Pod, reduced to the fields the runner uses.
type Pod struct {
	APIVersion string     `json:"apiVersion,omitempty"`
	Kind       string     `json:"kind,omitempty"`
	Metadata   ObjectMeta `json:"metadata"`
	Spec       PodSpec    `json:"spec"`
}

// ObjectMeta is metav1.ObjectMeta, reduced.
type ObjectMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	UID         string            `json:"uid,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PodSpec is v1.PodSpec, reduced.
type PodSpec struct {
	Containers                    []Container `json:"containers,omitempty"`
	Volumes                       []Volume    `json:"volumes,omitempty"`
	HostNetwork                   bool        `json:"hostNetwork,omitempty"`
	HostPID                       bool        `json:"hostPID,omitempty"`
	RestartPolicy                 string      `json:"restartPolicy,omitempty"`
	TerminationGracePeriodSeconds *int64      `json:"terminationGracePeriodSeconds,omitempty"`
	PriorityClassName             string      `json:"priorityClassName,omitempty"`
}

// Container is v1.Container, reduced.
type Container struct {
	Name         string        `json:"name"`
	Image        string        `json:"image,omitempty"`
	Command      []string      `json:"command,omitempty"`
	Args         []string      `json:"args,omitempty"`
	WorkingDir   string        `json:"workingDir,omitempty"`
	Env          []EnvVar      `json:"env,omitempty"`
	VolumeMounts []VolumeMount `json:"volumeMounts,omitempty"`
}

// EnvVar is v1.EnvVar; of valueFrom only fieldRef is understood.
type EnvVar struct {
	Name      string        `json:"name"`
	Value     string        `json:"value,omitempty"`
	ValueFrom *EnvVarSource `json:"valueFrom,omitempty"`
}

// EnvVarSource is v1.EnvVarSource, reduced.
type EnvVarSource struct {
	FieldRef *struct {
		FieldPath string `json:"fieldPath"`
	} `json:"fieldRef,omitempty"`
}

// VolumeMount is v1.VolumeMount.
type VolumeMount struct {
	Name      string `json:"name"`
	MountPath string `json:"mountPath"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
	SubPath   string `json:"subPath,omitempty"`
}

// Volume is v1.Volume: hostPath and emptyDir are understood; any other
// source is kept as raw JSON so that it can be reported.
type Volume struct {
	Name     string
	HostPath *HostPathVolumeSource
	EmptyDir *EmptyDirVolumeSource
	Other    []string // names of other volume sources set
}

// HostPathVolumeSource is v1.HostPathVolumeSource.
type HostPathVolumeSource struct {
	Path string  `json:"path"`
	Type *string `json:"type,omitempty"`
}

// EmptyDirVolumeSource is v1.EmptyDirVolumeSource, reduced.
type EmptyDirVolumeSource struct {
	Medium    string `json:"medium,omitempty"`
	SizeLimit string `json:"sizeLimit,omitempty"`
}

// UnmarshalJSON keeps hostPath and emptyDir, and records other sources.
func (v *Volume) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*v = Volume{}
	for k, val := range raw {
		switch k {
		case "name":
			if err := json.Unmarshal(val, &v.Name); err != nil {
				return fmt.Errorf("volume name: %w", err)
			}
		case "hostPath":
			v.HostPath = &HostPathVolumeSource{}
			if err := json.Unmarshal(val, v.HostPath); err != nil {
				return fmt.Errorf("volume hostPath: %w", err)
			}
		case "emptyDir":
			v.EmptyDir = &EmptyDirVolumeSource{}
			if string(val) != "null" {
				if err := json.Unmarshal(val, v.EmptyDir); err != nil {
					return fmt.Errorf("volume emptyDir: %w", err)
				}
			}
		default:
			if string(val) != "null" {
				v.Other = append(v.Other, k)
			}
		}
	}
	return nil
}

// MarshalJSON writes hostPath/emptyDir volumes.
func (v Volume) MarshalJSON() ([]byte, error) {
	m := map[string]any{"name": v.Name}
	if v.HostPath != nil {
		m["hostPath"] = v.HostPath
	}
	if v.EmptyDir != nil {
		m["emptyDir"] = v.EmptyDir
	}
	return json.Marshal(m)
}

// Decoded is one manifest file's pod after the kubelet's defaults.
type Decoded struct {
	Pod *Pod
	// FullName is the pod's name as the kubelet runs it: "<name>-<node>".
	FullName string
	// Namespace after defaulting ("default" when unset).
	Namespace string
	// UID: the manifest's own uid, else a hash of the decoded object, the
	// node and the file, as the kubelet computes it (formatting, comments and
	// key order do not change it; any value does).
	UID string
}

// Key is namespace/fullName, the kubelet's key for a pod.
func (d *Decoded) Key() string { return d.Namespace + "/" + d.FullName }

// ErrNotPod means the data is not a single Pod object.
var ErrNotPod = errors.New("not a pod")

// Decode parses data as the kubelet's file source does (tryDecodeSinglePod):
// YAML or JSON, a single object of kind Pod in v1, unknown fields ignored,
// name required; then it applies the static-pod defaults (name suffix
// "-<node>", namespace "default", UID from the content) and validates the
// parts the runner depends on.
func Decode(data []byte, file, nodeName string) (*Decoded, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: couldn't parse as pod(%v), please check config file", file, err)
	}
	var generic any
	if err := json.Unmarshal(js, &generic); err != nil {
		return nil, fmt.Errorf("%s: couldn't parse as pod(%v), please check config file", file, err)
	}
	obj, ok := generic.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: couldn't parse as pod(%w: not an object), please check config file", file, ErrNotPod)
	}
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	if kind == "" || apiVersion == "" {
		return nil, fmt.Errorf("%s: couldn't parse as pod(Object 'Kind' is missing in '%s'), please check config file", file, abbreviate(js))
	}
	if kind != "Pod" || apiVersion != "v1" {
		return nil, fmt.Errorf("%s: couldn't parse as pod(%w: %s %s), please check config file", file, ErrNotPod, apiVersion, kind)
	}
	p := &Pod{}
	if err := json.Unmarshal(js, p); err != nil {
		return nil, fmt.Errorf("%s: couldn't parse as pod(%v), please check config file", file, err)
	}
	if p.Metadata.Name == "" {
		return nil, errors.New("invalid pod: name is needed for the pod")
	}
	d := &Decoded{Pod: p, Namespace: p.Metadata.Namespace, UID: p.Metadata.UID}
	if d.Namespace == "" {
		d.Namespace = "default"
	}
	d.FullName = p.Metadata.Name + "-" + strings.ToLower(nodeName)
	if d.UID == "" {
		canon, _ := json.Marshal(generic) // map keys sorted: a canonical form
		h := fnv.New128a()
		h.Write(canon)
		fmt.Fprintf(h, "host:%s", nodeName)
		fmt.Fprintf(h, "file:%s", file)
		d.UID = hex.EncodeToString(h.Sum(nil))
	}
	if errs := Validate(p); len(errs) > 0 {
		return nil, fmt.Errorf("invalid pod: %s", strings.Join(errs, ", "))
	}
	return d, nil
}

func abbreviate(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "..."
	}
	return string(b)
}

var (
	dns1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	envNameRe    = regexp.MustCompile(`^[-._a-zA-Z][-._a-zA-Z0-9]*$`)
)

// HostPath types (v1.HostPathType).
const (
	HostPathUnset             = ""
	HostPathDirectoryOrCreate = "DirectoryOrCreate"
	HostPathDirectory         = "Directory"
	HostPathFileOrCreate      = "FileOrCreate"
	HostPathFile              = "File"
	HostPathSocket            = "Socket"
	HostPathCharDev           = "CharDevice"
	HostPathBlockDev          = "BlockDevice"
)

var validHostPathTypes = map[string]bool{
	HostPathUnset: true, HostPathDirectoryOrCreate: true, HostPathDirectory: true,
	HostPathFileOrCreate: true, HostPathFile: true, HostPathSocket: true,
	HostPathCharDev: true, HostPathBlockDev: true,
}

// Validate checks what ValidatePodCreate checks of the fields the runner
// uses; the messages follow the API server's field paths.
func Validate(p *Pod) []string {
	var errs []string
	add := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	if len(p.Metadata.Name) > 253 || !regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`).MatchString(p.Metadata.Name) {
		add("metadata.name: Invalid value: %q: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'", p.Metadata.Name)
	}
	if p.Metadata.Namespace != "" && !dns1123Label.MatchString(p.Metadata.Namespace) {
		add("metadata.namespace: Invalid value: %q", p.Metadata.Namespace)
	}
	vols := map[string]*Volume{}
	for i := range p.Spec.Volumes {
		v := &p.Spec.Volumes[i]
		fp := fmt.Sprintf("spec.volumes[%d]", i)
		if v.Name == "" {
			add("%s.name: Required value", fp)
		} else if !dns1123Label.MatchString(v.Name) {
			add("%s.name: Invalid value: %q", fp, v.Name)
		} else if vols[v.Name] != nil {
			add("%s.name: Duplicate value: %q", fp, v.Name)
		}
		vols[v.Name] = v
		n := len(v.Other)
		if v.HostPath != nil {
			n++
		}
		if v.EmptyDir != nil {
			n++
		}
		if n == 0 {
			add("%s: Required value: must specify a volume type", fp)
		} else if n > 1 {
			add("%s: Forbidden: may not specify more than 1 volume type", fp)
		}
		if hp := v.HostPath; hp != nil {
			if hp.Path == "" {
				add("%s.hostPath.path: Required value", fp)
			}
			if hp.Type != nil && !validHostPathTypes[*hp.Type] {
				add("%s.hostPath.type: Unsupported value: %q", fp, *hp.Type)
			}
			if strings.Contains(hp.Path, "..") {
				for _, el := range strings.Split(hp.Path, "/") {
					if el == ".." {
						add("%s.hostPath.path: Invalid value: %q: must not contain '..'", fp, hp.Path)
						break
					}
				}
			}
		}
	}
	if len(p.Spec.Containers) == 0 {
		add("spec.containers: Required value")
	}
	names := map[string]bool{}
	for i, c := range p.Spec.Containers {
		fp := fmt.Sprintf("spec.containers[%d]", i)
		if c.Name == "" {
			add("%s.name: Required value", fp)
		} else if !dns1123Label.MatchString(c.Name) {
			add("%s.name: Invalid value: %q", fp, c.Name)
		} else if names[c.Name] {
			add("%s.name: Duplicate value: %q", fp, c.Name)
		}
		names[c.Name] = true
		if strings.TrimSpace(c.Image) == "" {
			add("%s.image: Required value", fp)
		}
		for j, e := range c.Env {
			if e.Name == "" || !envNameRe.MatchString(e.Name) {
				add("%s.env[%d].name: Invalid value: %q", fp, j, e.Name)
			}
		}
		paths := map[string]bool{}
		for j, m := range c.VolumeMounts {
			mp := fmt.Sprintf("%s.volumeMounts[%d]", fp, j)
			if m.Name == "" {
				add("%s.name: Required value", mp)
			} else if vols[m.Name] == nil {
				add("%s.name: Not found: %q", mp, m.Name)
			}
			if m.MountPath == "" {
				add("%s.mountPath: Required value", mp)
			} else if paths[m.MountPath] {
				add("%s.mountPath: Invalid value: %q: must be unique", mp, m.MountPath)
			}
			paths[m.MountPath] = true
			if m.SubPath != "" && (path.IsAbs(m.SubPath) || hasDotDot(m.SubPath)) {
				add("%s.subPath: Invalid value: %q", mp, m.SubPath)
			}
		}
	}
	switch p.Spec.RestartPolicy {
	case "", "Always", "OnFailure", "Never":
	default:
		add("spec.restartPolicy: Unsupported value: %q", p.Spec.RestartPolicy)
	}
	return errs
}

func hasDotDot(p string) bool {
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return true
		}
	}
	return false
}

// VolumeByName returns the pod's volume called name, or nil.
func (p *Pod) VolumeByName(name string) *Volume {
	for i := range p.Spec.Volumes {
		if p.Spec.Volumes[i].Name == name {
			return &p.Spec.Volumes[i]
		}
	}
	return nil
}

// GracePeriod is terminationGracePeriodSeconds, 30 when unset.
func (p *Pod) GracePeriod() int64 {
	if g := p.Spec.TerminationGracePeriodSeconds; g != nil && *g >= 0 {
		return *g
	}
	return 30
}

// RestartPolicy is spec.restartPolicy, "Always" when unset.
func (p *Pod) RestartPolicy() string {
	if p.Spec.RestartPolicy == "" {
		return "Always"
	}
	return p.Spec.RestartPolicy
}

// EnvValue returns the value of the container's env var name ("" when absent).
func (c *Container) EnvValue(name string) string {
	v := ""
	for _, e := range c.Env {
		if e.Name == name {
			v = e.Value
		}
	}
	return v
}
