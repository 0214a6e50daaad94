package launcher

import (
	"fmt"
	"os"
	"path/filepath"

	"baremetal.k3s/tests/kube/internal/configfile"
)

// RKE2PSAFile is where RKE2 writes its own PodSecurity admission
// configuration when --pod-security-admission-config-file is not given
// (rancher/rke2 pkg/rke2/psa.go defaultPSAConfigFile).
const RKE2PSAFile = "/etc/rancher/rke2/rke2-pss.yaml"

// RKE2's two default admission configurations (pkg/rke2/psa.go): privileged
// everywhere, or restricted with kube-system and two operators' namespaces
// exempt under --profile=cis.
const (
	rke2PSAPrivileged = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1beta1
    kind: PodSecurityConfiguration
    defaults:
      enforce: "privileged"
      enforce-version: "latest"
    exemptions:
      usernames: []
      runtimeClasses: []
      namespaces: []`
	rke2PSARestricted = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1beta1
    kind: PodSecurityConfiguration
    defaults:
      enforce: "restricted"
      enforce-version: "latest"
      audit: "restricted"
      audit-version: "latest"
      warn: "restricted"
      warn-version: "latest"
    exemptions:
      usernames: []
      runtimeClasses: []
      namespaces: [kube-system, cis-operator-system, tigera-operator]`
)

// withRKE2PSA puts the argument RKE2 gives kube-apiserver for PodSecurity
// first on its command line (pkg/podexecutor: "--admission-control-config-file="
// + the file, before every other argument, so that a kube-apiserver-arg
// admission-control-config-file later on the line still wins): the file of
// --pod-security-admission-config-file, else RKE2's own file at defaultFile,
// which is written again at every start (privileged, or restricted with
// --profile=cis), as RKE2 does. The file given is not read here: the real
// kube-apiserver reads it, and refuses to start on a bad one.
func withRKE2PSA(v *configfile.Values, defaultFile string, args []string) ([]string, error) {
	path := v.String("pod-security-admission-config-file")
	if path == "" {
		body := rke2PSAPrivileged
		if v.String("profile") == "cis" {
			body = rke2PSARestricted
		}
		if err := os.MkdirAll(filepath.Dir(defaultFile), 0o755); err != nil {
			return nil, err
		}
		// RKE2's ioutil.WriteFile: 0600 when created, an existing file keeps its mode
		if err := os.WriteFile(defaultFile, []byte(body), 0o600); err != nil {
			return nil, fmt.Errorf("psa: failed to write psa config %s: %w", defaultFile, err)
		}
		infof("Applying Pod Security Admission Configuration (%s)", defaultFile)
		path = defaultFile
	}
	return append([]string{"--admission-control-config-file=" + path}, args...), nil
}
