package launcher

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"baremetal.k3s/tests/kube/internal/configfile"
)

// apiServerBind: k3s's --bind-address, else every address, for the API
// server and the supervisor (the double's API server takes k3s's listener's
// place on 6443; k3s binds the API server itself to 127.0.0.1:6444).
func apiServerBind(v *configfile.Values) string {
	if b := v.String("bind-address"); b != "" {
		return b
	}
	return "0.0.0.0"
}

// apiServerArgs are k3s's kube-apiserver arguments (pkg/daemons/control
// server.go) merged with --kube-apiserver-arg by GetArgs.
func apiServerArgs(v *configfile.Values, fl flavor, p pki, ds datastore, adv net.IP) []string {
	m := map[string]string{
		"allow-privileged":                   "true",
		"anonymous-auth":                     "false",
		"api-audiences":                      "https://kubernetes.default.svc.cluster.local," + fl.prog.Name,
		"authorization-mode":                 "Node,RBAC",
		"bind-address":                       apiServerBind(v),
		"cert-dir":                           filepath.Join(p.dir, "temporary-certs"),
		"client-ca-file":                     p.path("client-ca.crt"),
		"enable-admission-plugins":           "NodeRestriction",
		"kubelet-certificate-authority":      p.path("server-ca.crt"),
		"kubelet-client-certificate":         p.path("client-kube-apiserver.crt"),
		"kubelet-client-key":                 p.path("client-kube-apiserver.key"),
		"profiling":                          "false",
		"proxy-client-cert-file":             p.path("client-auth-proxy.crt"),
		"proxy-client-key-file":              p.path("client-auth-proxy.key"),
		"requestheader-allowed-names":        "system:auth-proxy",
		"requestheader-client-ca-file":       p.path("request-header-ca.crt"),
		"requestheader-extra-headers-prefix": "X-Remote-Extra-",
		"requestheader-group-headers":        "X-Remote-Group",
		"requestheader-username-headers":     "X-Remote-User",
		"secure-port":                        apiPort,
		"service-account-issuer":             "https://kubernetes.default.svc.cluster.local",
		"service-account-key-file":           p.path("service.key"),
		"service-account-signing-key-file":   p.path("service.key"),
		"service-cluster-ip-range":           serviceCIDR,
		"service-node-port-range":            v.String("service-node-port-range"),
		"tls-cert-file":                      p.path("serving-kube-apiserver.crt"),
		"tls-private-key-file":               p.path("serving-kube-apiserver.key"),
	}
	for k, val := range ds.apiServerArgs() {
		m[k] = val
	}
	if v.Bool("secrets-encryption") {
		m["encryption-provider-config"] = p.credPath(encryptionConfigName)
		m["encryption-provider-config-automatic-reload"] = "true"
	}
	if adv != nil {
		m["advertise-address"] = adv.String()
	} else {
		// no routable address: a loopback advertise address is not valid in
		// the kubernetes Endpoints, so do not reconcile them
		m["advertise-address"] = "127.0.0.1"
		m["endpoint-reconciler-type"] = "none"
	}
	return configfile.GetArgs(m, v.Slice("kube-apiserver-arg"))
}

// servingSANs are the extra names of the API server's (and supervisor's)
// certificate: --tls-san, the host name and the node name.
func servingSANs(v *configfile.Values, hostname, node string) []string {
	sans := append([]string{}, v.Slice("tls-san")...)
	for _, n := range []string{hostname, node} {
		if n != "" && !strings.EqualFold(n, "localhost") {
			sans = append(sans, n)
		}
	}
	return sans
}

func adminClient(p pki) (*http.Client, error) {
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(p.path("server-ca.crt"))
	if err != nil {
		return nil, err
	}
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(p.path("client-admin.crt"), p.path("client-admin.key"))
	if err != nil {
		return nil, err
	}
	return &http.Client{
		Timeout:   3 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}},
	}, nil
}

func readyz(c *http.Client, base string) bool {
	resp, err := c.Get(base + "/readyz")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	return resp.StatusCode == 200 && strings.TrimSpace(string(body)) == "ok"
}
