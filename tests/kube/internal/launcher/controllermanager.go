package launcher

import (
	"strings"

	"baremetal.k3s/tests/kube/internal/configfile"
)

const (
	controllerManagerPort = "10257"
	clusterCIDR           = "10.42.0.0/16"
)

// controllerManagerArgs are k3s's kube-controller-manager arguments
// (pkg/daemons/control/server.go controllerManager): its own kubeconfig,
// the CSR signers on the client and server CAs, service-account
// credentials, no leader election on SQLite; then --kube-controller-manager-arg
// (and the deprecated --kube-controller-arg) by GetArgs.
func controllerManagerArgs(v *configfile.Values, p pki, kubeconfig string, leaderElect bool) []string {
	m := map[string]string{
		"allocate-node-cidrs":       "true",
		"authentication-kubeconfig": kubeconfig,
		"authorization-kubeconfig":  kubeconfig,
		"bind-address":              "127.0.0.1",
		"cluster-cidr":              clusterCIDROf(v),
		"cluster-signing-kube-apiserver-client-cert-file": p.path("client-ca.nochain.crt"),
		"cluster-signing-kube-apiserver-client-key-file":  p.path("client-ca.key"),
		"cluster-signing-kubelet-client-cert-file":        p.path("client-ca.nochain.crt"),
		"cluster-signing-kubelet-client-key-file":         p.path("client-ca.key"),
		"cluster-signing-kubelet-serving-cert-file":       p.path("server-ca.nochain.crt"),
		"cluster-signing-kubelet-serving-key-file":        p.path("server-ca.key"),
		"cluster-signing-legacy-unknown-cert-file":        p.path("server-ca.nochain.crt"),
		"cluster-signing-legacy-unknown-key-file":         p.path("server-ca.key"),
		"controllers":                      "*,tokencleaner",
		"kubeconfig":                       kubeconfig,
		"profiling":                        "false",
		"root-ca-file":                     p.path("server-ca.crt"),
		"secure-port":                      controllerManagerPort,
		"service-account-private-key-file": p.path("service.key"),
		"service-cluster-ip-range":         serviceCIDR,
		"use-service-account-credentials":  "true",
	}
	if !v.Bool("disable-cloud-controller") {
		// k3s's embedded cloud-controller-manager owns these
		m["configure-cloud-routes"] = "false"
		m["controllers"] = "*,tokencleaner,-service,-route,-cloud-node-lifecycle"
	}
	if !leaderElect {
		m["leader-elect"] = "false"
	}
	extra := append(append([]string{}, v.Slice("kube-controller-manager-arg")...), v.Slice("kube-controller-arg")...)
	return configfile.GetArgs(m, extra)
}

func clusterCIDROf(v *configfile.Values) string {
	if c := v.Slice("cluster-cidr"); len(c) > 0 {
		return strings.Join(c, ",")
	}
	return clusterCIDR
}
