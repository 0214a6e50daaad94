// Package token is k3s's join token (k3s-io/k3s pkg/clientaccess/token.go),
// written anew for the double: the full format K10<CA hash>::<user>:<password>,
// a bare password, formatting with the hash of the server CA bundle, and the
// check a joining node makes of the CA it downloaded.
package token

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
)

// Prefix starts every full token.
const Prefix = "K10"

const caHashLength = 64 // sha256, hex

// bootstrapToken is kubeadm's format (k3s token create); the double does
// not serve them.
var bootstrapToken = regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`)

// ErrBootstrapToken: the credentials are a kubeadm-style bootstrap token.
var ErrBootstrapToken = errors.New("bootstrap tokens (k3s token create) are not imitated by the double")

// Info is a parsed token. CAHash is empty for a bare password.
type Info struct {
	CAHash   string
	Username string
	Password string
}

// Parse reads a full token (K10<hash>::<user>:<password>, hash optional) or
// a bare password, as k3s's parseToken does.
func Parse(s string) (Info, error) {
	if s == "" {
		return Info{}, errors.New("token must not be empty")
	}
	if !strings.HasPrefix(s, Prefix) {
		if bootstrapToken.MatchString(s) {
			return Info{}, ErrBootstrapToken
		}
		s = Prefix + ":::" + s
	}
	s = s[len(Prefix):]
	var info Info
	if hash, creds, ok := strings.Cut(s, "::"); ok {
		if hash != "" && len(hash) != caHashLength {
			return Info{}, errors.New("invalid token CA hash length")
		}
		info.CAHash, s = hash, creds
	}
	if bootstrapToken.MatchString(s) {
		return Info{}, ErrBootstrapToken
	}
	user, pass, ok := strings.Cut(s, ":")
	if !ok || pass == "" {
		return Info{}, errors.New("invalid token format")
	}
	info.Username, info.Password = user, pass
	return info, nil
}

// Normalize returns the password of a full token or bare password: the
// secret k3s derives the bootstrap storage key and encryption key from.
func Normalize(s string) (string, error) {
	info, err := Parse(s)
	if err != nil {
		return "", errors.New("failed to normalize token; must be in format K10<CA-HASH>::<USERNAME>:<PASSWORD> or <PASSWORD>")
	}
	return info.Password, nil
}

// Format returns the full token for creds ("user:password") and the server
// CA bundle caPEM.
func Format(creds string, caPEM []byte) (string, error) {
	if creds == "" {
		return "", nil
	}
	hash, err := HashCA(caPEM)
	if err != nil {
		return "", err
	}
	return Prefix + hash + "::" + creds, nil
}

// Random returns n random bytes in hex, as k3s's token.Random.
func Random(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
