package token

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

func selfSigned(t *testing.T, cn string) ([]byte, *x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, SubjectKeyId: []byte(cn)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), c, k
}

func TestParse(t *testing.T) {
	hash := strings.Repeat("a", 64)
	for in, want := range map[string]Info{
		"secret":                         {Password: "secret"},
		"K10" + hash + "::server:s3cr3t": {CAHash: hash, Username: "server", Password: "s3cr3t"},
		"K10::node:pw":                   {Username: "node", Password: "pw"},
		"K10" + hash + "::server:a:b":    {CAHash: hash, Username: "server", Password: "a:b"},
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"":                        "token must not be empty",
		"K10abc::server:pw":       "invalid token CA hash length",
		"K10" + hash + "::pw":     "invalid token format",
		"K10" + hash + "::u:":     "invalid token format",
		"abcdef.0123456789abcdef": "bootstrap tokens",
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("Parse(%q): %v, want %q", in, err, msg)
		}
	}
}

func TestNormalize(t *testing.T) {
	for _, in := range []string{"pw", "K10::server:pw", "K10" + strings.Repeat("0", 64) + "::node:pw"} {
		if got, err := Normalize(in); err != nil || got != "pw" {
			t.Errorf("Normalize(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := Normalize("K10::"); err == nil || !strings.Contains(err.Error(), "K10<CA-HASH>::<USERNAME>:<PASSWORD>") {
		t.Errorf("Normalize(K10::) = %v", err)
	}
}

func TestFormatAndValidate(t *testing.T) {
	ca, _, _ := selfSigned(t, "k3s-server-ca")
	sum := sha256.Sum256(ca)
	full, err := Format("server:pw", ca)
	if err != nil || full != "K10"+hex.EncodeToString(sum[:])+"::server:pw" {
		t.Fatalf("Format = %q, %v", full, err)
	}
	info, _ := Parse(full)
	if err := info.ValidateCA(ca); err != nil {
		t.Fatal(err)
	}
	other, _, _ := selfSigned(t, "another-ca")
	err = info.ValidateCA(other)
	if err == nil || !strings.HasPrefix(err.Error(), "token CA hash does not match the Cluster CA certificate hash: "+info.CAHash+" != ") {
		t.Fatalf("ValidateCA(other) = %v", err)
	}
	bare, _ := Parse("pw")
	if err := bare.ValidateCA(other); err != nil {
		t.Fatalf("a bare password checks nothing: %v", err)
	}
	if s, err := Format("", ca); s != "" || err != nil {
		t.Fatalf("empty creds: %q %v", s, err)
	}
}

func TestHashCABundleUsesRoot(t *testing.T) {
	rootPEM, root, rootKey := selfSigned(t, "root")
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "intermediate"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
		SubjectKeyId: []byte("intermediate"), AuthorityKeyId: root.SubjectKeyId}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, root, &k.PublicKey, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	bundle := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), rootPEM...)
	got, err := HashCA(bundle)
	sum := sha256.Sum256(root.Raw)
	if err != nil || got != hex.EncodeToString(sum[:]) {
		t.Fatalf("HashCA(bundle) = %s, %v; want the root's DER hash", got, err)
	}
	if _, err := HashCA([]byte("nope")); err == nil {
		t.Fatal("HashCA accepted no certificate")
	}
}

func TestRandom(t *testing.T) {
	a, _ := Random(16)
	b, _ := Random(16)
	if len(a) != 32 || a == b {
		t.Fatalf("Random: %q %q", a, b)
	}
}
