package launcher

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

// ensureEtcdCerts creates what is missing of k3s's etcd certificates under
// <data-dir>/server/tls/etcd (pkg/daemons/control/deps genETCDCerts): every
// k3s server has them, with or without embedded etcd. Two CAs, which are
// bootstrap data (every server of a cluster shares them):
//
//	server-ca.crt/.key          etcd-server-ca@<unix>: signs the client side
//	peer-ca.crt/.key            etcd-peer-ca@<unix>: signs the peers
//
// and this server's own leaves, each file the leaf then its CA:
//
//	server-client.crt/.key      CN etcd-server, server and client auth, the server's SANs
//	client.crt/.key             CN etcd-client, client auth (kube-apiserver, the launcher)
//	peer-server-client.crt/.key CN etcd-peer, server and client auth, the server's SANs
//
// A leaf is reissued when it is missing, not signed by its CA or lacks a
// SAN. It returns the files it wrote.
func ensureEtcdCerts(p pki, sans []string, advertise net.IP) ([]string, error) {
	t := etcdTLS{dir: p.path("etcd")}
	if err := os.MkdirAll(t.dir, 0o700); err != nil {
		return nil, err
	}
	sub := pki{dir: t.dir}
	var created []string
	dns, ips := etcdSANs(sans, advertise)
	for _, ca := range []struct {
		name, cn string
		leaves   []leafSpec
	}{
		{"server-ca", "etcd-server-ca", []leafSpec{
			{name: "server-client", cn: "etcd-server", server: true, dns: dns, ips: ips},
			{name: "client", cn: "etcd-client"},
		}},
		{"peer-ca", "etcd-peer-ca", []leafSpec{
			{name: "peer-server-client", cn: "etcd-peer", server: true, dns: dns, ips: ips},
		}},
	} {
		kp, made, err := sub.ensureCA(ca.name, ca.cn)
		if err != nil {
			return created, fmt.Errorf("etcd/%s: %w", ca.name, err)
		}
		if made {
			created = append(created, "etcd/"+ca.name)
		}
		for _, l := range ca.leaves {
			wrote, err := ensureEtcdLeaf(sub, kp, l, made)
			if err != nil {
				return created, fmt.Errorf("etcd/%s: %w", l.name, err)
			}
			if wrote {
				created = append(created, "etcd/"+l.name)
			}
		}
	}
	return created, nil
}

// etcdSANs are k3s's SANs for the etcd server and peer certificates:
// localhost, 127.0.0.1, ::1, the node IP and the server's names (host name,
// node name, --tls-san).
func etcdSANs(sans []string, advertise net.IP) ([]string, []net.IP) {
	dns := []string{"localhost"}
	ips := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
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
	return dns, ips
}

// ensureEtcdLeaf keeps <name>.crt/.key when signed by ca with every SAN, or
// issues it: server and client auth for a server leaf, client auth else, the
// CA appended to the certificate file as k3s writes it.
func ensureEtcdLeaf(p pki, ca *keyPair, spec leafSpec, force bool) (bool, error) {
	crt, keyf := p.path(spec.name+".crt"), p.path(spec.name+".key")
	if !force {
		if kp, err := loadPair(crt, keyf); err == nil && kp.cert.CheckSignatureFrom(ca.cert) == nil && sansCover(kp.cert, spec) {
			return false, nil
		}
	}
	key, der, err := newECKey()
	if err != nil {
		return false, err
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
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	}
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return false, err
	}
	if err := writePEM(keyf, "EC PRIVATE KEY", der, 0o600); err != nil {
		return false, err
	}
	chain := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})...)
	return true, writeFileAtomic(crt, chain, 0o644)
}

// etcdCertFiles are every file ensureEtcdCerts manages, relative to server/tls.
func etcdCertFiles() []string {
	var out []string
	for _, n := range []string{"server-ca", "peer-ca", "server-client", "client", "peer-server-client"} {
		out = append(out, filepath.Join("etcd", n+".crt"), filepath.Join("etcd", n+".key"))
	}
	return out
}
