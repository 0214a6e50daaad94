package supervisor

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"

	"golang.org/x/crypto/scrypt"
)

// Node-password hashes in k3s's format (pkg/authenticator/hash/scrypt.go):
// "$1:<salt hex>:<log2 N>:<r>:<p>:<key, unpadded base64>", scrypt with
// N=2^15, r=8, p=1, a 64-byte key and an 8-byte salt.
const (
	hashVersion = 1
	hashFormat  = "$%d:%x:%d:%d:%d:%s"
	hashN       = 15
	hashR       = 8
	hashP       = 1
	hashKeyLen  = 64
	hashSaltLen = 8
)

// errHashMismatch is k3s's VerifyHash error for another password.
var errHashMismatch = errors.New("hash does not match")

// CreateHash hashes secret as k3s stores a node password.
func CreateHash(secret string) (string, error) {
	salt := make([]byte, hashSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	dk, err := scrypt.Key([]byte(secret), salt, 1<<hashN, hashR, hashP, hashKeyLen)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(hashFormat, hashVersion, salt, hashN, hashR, hashP, base64.RawStdEncoding.EncodeToString(dk)), nil
}

// VerifyHash is nil when secret hashes to hash (parameters read from hash).
func VerifyHash(hash, secret string) error {
	var (
		version, n uint
		r, p       int
		enc        string
		salt       []byte
	)
	if _, err := fmt.Sscanf(hash, hashFormat, &version, &salt, &n, &r, &p, &enc); err != nil {
		return err
	}
	if version != hashVersion {
		return fmt.Errorf("hash version %d does not match package version %d", version, hashVersion)
	}
	dk, err := base64.RawStdEncoding.DecodeString(enc)
	if err != nil {
		return err
	}
	verify, err := scrypt.Key([]byte(secret), salt, 1<<n, r, p, len(dk))
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare(dk, verify) != 1 {
		return errHashMismatch
	}
	return nil
}
