package token

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
)

// HashCA is the hex sha256 a token carries for a CA bundle: of the file's
// bytes when it holds one certificate (a self-signed cluster CA), else of
// the DER of the root that the bundle's first certificate chains to (so a
// renewed intermediate keeps the hash).
func HashCA(bundle []byte) (string, error) {
	certs, err := parseCerts(bundle)
	if err != nil {
		return "", err
	}
	data := bundle
	if len(certs) > 1 {
		if root := rootOf(certs); root != nil {
			data = root.Raw
		}
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// ValidateCA checks the CA bundle a server sent against the token's hash
// (a bare password carries none: nothing to check, as k3s warns and goes on).
func (i Info) ValidateCA(bundle []byte) error {
	if i.CAHash == "" {
		return nil
	}
	got, err := HashCA(bundle)
	if err != nil {
		return err
	}
	if got != i.CAHash {
		return fmt.Errorf("token CA hash does not match the Cluster CA certificate hash: %s != %s", i.CAHash, got)
	}
	return nil
}

func parseCerts(bundle []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	rest := bundle
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("data does not contain any valid RSA or ECDSA certificates")
	}
	return certs, nil
}

// rootOf: the last certificate of the first chain from certs[0] to a
// self-signed certificate among the others, or nil.
func rootOf(certs []*x509.Certificate) *x509.Certificate {
	roots, inter := x509.NewCertPool(), x509.NewCertPool()
	for _, c := range certs[1:] {
		if len(c.AuthorityKeyId) == 0 || bytes.Equal(c.AuthorityKeyId, c.SubjectKeyId) {
			roots.AddCert(c)
		} else {
			inter.AddCert(c)
		}
	}
	chains, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	if err != nil || len(chains) == 0 {
		return nil
	}
	chain := chains[0]
	return chain[len(chain)-1]
}
