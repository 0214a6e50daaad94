// Package nodeconfig reads what a k3s node registers with: --node-label and
// --node-taint values (each may hold several comma-separated entries, as k3s
// joins them into the kubelet's --node-labels and --register-with-taints),
// and the labels the kubelet and k3s put on every node.
package nodeconfig

import (
	"fmt"
	"regexp"
	"runtime"
	"strings"
)

var (
	qualifiedName = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
	dnsSubdomain  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	labelValue    = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
)

// validKey: a Kubernetes qualified name ([prefix/]name).
func validKey(k string) error {
	prefix, name, hasPrefix := strings.Cut(k, "/")
	if !hasPrefix {
		name, prefix = prefix, ""
	}
	if hasPrefix && (prefix == "" || len(prefix) > 253 || !dnsSubdomain.MatchString(prefix)) {
		return fmt.Errorf("invalid key %q: prefix must be a DNS subdomain", k)
	}
	if name == "" || len(name) > 63 || !qualifiedName.MatchString(name) {
		return fmt.Errorf("invalid key %q: name must be 63 characters or less, alphanumeric, '-', '_' or '.'", k)
	}
	return nil
}

func validValue(v string) error {
	if len(v) > 63 || !labelValue.MatchString(v) {
		return fmt.Errorf("invalid value %q: must be 63 characters or less, alphanumeric, '-', '_' or '.'", v)
	}
	return nil
}

// entries splits every value on commas, dropping empty entries.
func entries(values []string) []string {
	var out []string
	for _, v := range values {
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				out = append(out, e)
			}
		}
	}
	return out
}

// ParseLabels reads --node-label values ("key=value", "key=" or "key"); a
// later value of a key wins, as in the kubelet's --node-labels map.
func ParseLabels(values []string) (map[string]string, error) {
	out := map[string]string{}
	for _, e := range entries(values) {
		k, v, _ := strings.Cut(e, "=")
		if err := validKey(k); err != nil {
			return nil, fmt.Errorf("invalid node label %q: %w", e, err)
		}
		if err := validValue(v); err != nil {
			return nil, fmt.Errorf("invalid node label %q: %w", e, err)
		}
		out[k] = v
	}
	return out, nil
}

// Role labels k3s puts on a server's Node (pkg/server: setControlPlaneRoleLabel).
const (
	ControlPlaneLabel = "node-role.kubernetes.io/control-plane"
	MasterLabel       = "node-role.kubernetes.io/master"
)

// DefaultLabels are the labels the kubelet sets on its Node (hostname, os,
// arch and their beta forms) plus the instance type k3s's cloud provider
// sets ("k3s", or "rke2").
func DefaultLabels(hostname, program string) map[string]string {
	return map[string]string{
		"kubernetes.io/hostname":           hostname,
		"kubernetes.io/os":                 runtime.GOOS,
		"kubernetes.io/arch":               runtime.GOARCH,
		"beta.kubernetes.io/os":            runtime.GOOS,
		"beta.kubernetes.io/arch":          runtime.GOARCH,
		"node.kubernetes.io/instance-type": program,
		"beta.kubernetes.io/instance-type": program,
	}
}
