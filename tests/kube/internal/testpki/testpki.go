// Package testpki makes throwaway CAs and certificates for the double's
// unit tests (server CA, client CA, a serving certificate).
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Pair is a certificate and its key, PEM encoded.
type Pair struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
	KeyPEM  []byte
}

var serial int64

func issue(t testing.TB, tmpl *x509.Certificate, parent *Pair) *Pair {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl.SerialNumber = big.NewInt(serial)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	signer, signerCert := k, tmpl
	if parent != nil {
		signer, signerCert = parent.Key, parent.Cert
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &k.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	kd, _ := x509.MarshalECPrivateKey(k)
	return &Pair{Cert: c, Key: k,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})}
}

// CA is a self-signed CA named cn.
func CA(t testing.TB, cn string) *Pair {
	return issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}, nil)
}

// Serving is a server certificate of ca for localhost and 127.0.0.1.
func Serving(t testing.TB, ca *Pair) *Pair {
	return issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "server"}, DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}, ca)
}

// TLS is p as a tls.Certificate.
func (p *Pair) TLS(t testing.TB) tls.Certificate {
	c, err := tls.X509KeyPair(p.CertPEM, p.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Write writes <dir>/<name>.crt and .key and returns their paths.
func (p *Pair) Write(t testing.TB, dir, name string) (string, string) {
	t.Helper()
	crt, key := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(crt, p.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, p.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return crt, key
}
