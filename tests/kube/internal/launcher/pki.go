package launcher

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// pki holds the file paths under <data-dir>/server/tls, named as k3s names them.
type pki struct {
	dir string
}

func (p pki) path(name string) string { return filepath.Join(p.dir, name) }

// credPath is a file under <data-dir>/server/cred, next to tls.
func (p pki) credPath(name string) string { return filepath.Join(filepath.Dir(p.dir), "cred", name) }

type keyPair struct {
	cert *x509.Certificate
	key  crypto.Signer
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readPEM(path string) (*pem.Block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, fmt.Errorf("%s: no PEM data", path)
	}
	return b, nil
}

func loadPair(certPath, keyPath string) (*keyPair, error) {
	cb, err := readPEM(certPath)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	kb, err := readPEM(keyPath)
	if err != nil {
		return nil, err
	}
	var key any
	switch kb.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(kb.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(kb.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(kb.Bytes)
	}
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: not a signing key", keyPath)
	}
	return &keyPair{cert: cert, key: signer}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

func newECKey() (*ecdsa.PrivateKey, []byte, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalECPrivateKey(k)
	return k, der, err
}

const validity = 10 * 365 * 24 * time.Hour

// ensureCA loads <name>.crt/.key or creates a self-signed CA; created tells which.
func (p pki) ensureCA(name, cn string) (*keyPair, bool, error) {
	crt, keyf := p.path(name+".crt"), p.path(name+".key")
	if kp, err := loadPair(crt, keyf); err == nil {
		return kp, false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	key, der, err := newECKey()
	if err != nil {
		return nil, false, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s@%d", cn, time.Now().Unix())},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, false, err
	}
	if err := writePEM(keyf, "EC PRIVATE KEY", der, 0o600); err != nil {
		return nil, false, err
	}
	if err := writePEM(crt, "CERTIFICATE", certDER, 0o644); err != nil {
		return nil, false, err
	}
	cert, _ := x509.ParseCertificate(certDER)
	return &keyPair{cert: cert, key: key}, true, nil
}

type leafSpec struct {
	name   string // file base name (under tls/; may hold a directory)
	cn     string
	orgs   []string
	server bool
	dns    []string
	ips    []net.IP
	chain  bool // the certificate file holds the CA after the certificate
}

// schedulerServingCert is the scheduler's serving certificate and key (.crt,
// .key) under tls/, as k3s names them (pkg/daemons/control/deps).
const schedulerServingCert = "kube-scheduler/kube-scheduler"

// ensureLeaf loads <name>.crt/.key when present and signed by ca, else issues it.
func (p pki) ensureLeaf(ca *keyPair, spec leafSpec, force bool) error {
	crt, keyf := p.path(spec.name+".crt"), p.path(spec.name+".key")
	if !force {
		if kp, err := loadPair(crt, keyf); err == nil && kp.cert.CheckSignatureFrom(ca.cert) == nil && sansCover(kp.cert, spec) {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(crt), 0o755); err != nil {
		return err
	}
	key, der, err := newECKey()
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: spec.cn, Organization: spec.orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		DNSNames:     spec.dns,
		IPAddresses:  spec.ips,
	}
	if spec.server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return err
	}
	if err := writePEM(keyf, "EC PRIVATE KEY", der, 0o600); err != nil {
		return err
	}
	if spec.chain {
		out := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER})
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})...)
		return writeFileAtomic(crt, out, 0o644)
	}
	return writePEM(crt, "CERTIFICATE", certDER, 0o644)
}

func sansCover(c *x509.Certificate, spec leafSpec) bool {
	have := map[string]bool{}
	for _, d := range c.DNSNames {
		have[d] = true
	}
	for _, ip := range c.IPAddresses {
		have[ip.String()] = true
	}
	for _, d := range spec.dns {
		if !have[d] {
			return false
		}
	}
	for _, ip := range spec.ips {
		if !have[ip.String()] {
			return false
		}
	}
	return true
}

// ensureServiceKey creates the service-account signing key once (RSA, as k3s).
func (p pki) ensureServiceKey() error {
	path := p.path("service.key")
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	return writePEM(path, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(k), 0o600)
}

// ensureAll creates what is missing; files already there are reused.
func (p pki) ensureAll(sans []string, advertise net.IP) (created []string, err error) {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return nil, err
	}
	cas := map[string]*keyPair{}
	forced := map[string]bool{}
	for _, c := range []struct{ name, cn string }{
		{"server-ca", "k3s-server-ca"},
		{"client-ca", "k3s-client-ca"},
		{"request-header-ca", "k3s-request-header-ca"},
	} {
		kp, made, err := p.ensureCA(c.name, c.cn)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		cas[c.name] = kp
		forced[c.name] = made
		if made {
			created = append(created, c.name)
		}
	}
	dns := []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	ips := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.43.0.1")}
	if advertise != nil && !advertise.IsLoopback() {
		ips = append(ips, advertise)
	}
	for _, s := range sans {
		if ip := net.ParseIP(s); ip != nil {
			ips = append(ips, ip)
		} else if s != "" {
			dns = append(dns, s)
		}
	}
	leaves := []struct {
		ca   string
		spec leafSpec
	}{
		{"server-ca", leafSpec{name: "serving-kube-apiserver", cn: "kube-apiserver", server: true, dns: dns, ips: ips}},
		{"client-ca", leafSpec{name: "client-admin", cn: "system:admin", orgs: []string{"system:masters"}}},
		{"client-ca", leafSpec{name: "client-scheduler", cn: "system:kube-scheduler"}},
		{"client-ca", leafSpec{name: "client-controller", cn: "system:kube-controller-manager"}},
		{"client-ca", leafSpec{name: "client-kube-apiserver", cn: "system:apiserver", orgs: []string{"system:masters"}}},
		{"request-header-ca", leafSpec{name: "client-auth-proxy", cn: "system:auth-proxy"}},
		// The scheduler listens on 127.0.0.1 only: localhost and 127.0.0.1, what its
		// own self-signed certificate would hold.
		{"server-ca", leafSpec{name: schedulerServingCert, cn: "kube-scheduler", server: true, chain: true,
			dns: []string{"localhost"}, ips: []net.IP{net.ParseIP("127.0.0.1")}}},
	}
	for _, l := range leaves {
		_, statErr := os.Stat(p.path(l.spec.name + ".crt"))
		if err := p.ensureLeaf(cas[l.ca], l.spec, forced[l.ca]); err != nil {
			return nil, fmt.Errorf("%s: %w", l.spec.name, err)
		}
		if statErr != nil || forced[l.ca] {
			created = append(created, l.spec.name)
		}
	}
	if _, err := os.Stat(p.path("service.key")); err != nil {
		created = append(created, "service.key")
	}
	if err := p.ensureServiceKey(); err != nil {
		return created, err
	}
	return created, p.ensureNoChain()
}

// ensureNoChain writes server-ca.nochain.crt and client-ca.nochain.crt, the
// CA certificates alone, which k3s gives the controller-manager's signers
// (the double's CAs are self-signed, so they equal the CA files).
func (p pki) ensureNoChain() error {
	for _, ca := range []string{"server-ca", "client-ca"} {
		b, err := readPEM(p.path(ca + ".crt"))
		if err != nil {
			return err
		}
		want := pem.EncodeToMemory(b)
		if old, err := os.ReadFile(p.path(ca + ".nochain.crt")); err == nil && string(old) == string(want) {
			continue
		}
		if err := writeFileAtomic(p.path(ca+".nochain.crt"), want, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// kubeconfig renders a kubeconfig. With embed, the certificate and key data
// are inlined (the file given to users); else file paths are used (k3s's cred/).
func kubeconfig(server, caFile, certFile, keyFile string, embed bool) (string, error) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n")
	if embed {
		ca, err := os.ReadFile(caFile)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "    certificate-authority-data: %s\n", base64.StdEncoding.EncodeToString(ca))
	} else {
		fmt.Fprintf(&b, "    certificate-authority: %s\n", caFile)
	}
	fmt.Fprintf(&b, "    server: %s\n  name: default\ncontexts:\n- context:\n    cluster: default\n    user: default\n  name: default\ncurrent-context: default\npreferences: {}\nusers:\n- name: default\n  user:\n", server)
	if embed {
		c, err := os.ReadFile(certFile)
		if err != nil {
			return "", err
		}
		k, err := os.ReadFile(keyFile)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "    client-certificate-data: %s\n    client-key-data: %s\n",
			base64.StdEncoding.EncodeToString(c), base64.StdEncoding.EncodeToString(k))
	} else {
		fmt.Fprintf(&b, "    client-certificate: %s\n    client-key: %s\n", certFile, keyFile)
	}
	return b.String(), nil
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	if err := os.Chmod(tmp, mode); err != nil { // umask-proof
		return err
	}
	return os.Rename(tmp, path)
}
