// Package bootstrap is k3s's bootstrap data (k3s-io/k3s pkg/bootstrap and
// pkg/cluster storage.go/encrypt.go), written anew for the double: the
// cluster's CA certificates and keys, the service-account key and the
// supervisor's passwd file, as JSON, encrypted with a key derived from the
// token's password and stored in the datastore under a key derived from it
// too. Servers that share a datastore load it, so they share one CA.
package bootstrap

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"strings"
)

// Prefix is where k3s keeps bootstrap data in the datastore.
const Prefix = "/bootstrap"

// StorageKey is /bootstrap/<first 12 hex digits of sha256(passphrase)>.
func StorageKey(passphrase string) string {
	sum := sha256.Sum256([]byte(passphrase))
	return Prefix + "/" + hex.EncodeToString(sum[:])[:12]
}

func gcmFor(passphrase string, salt []byte) (cipher.AEAD, error) {
	key, err := pbkdf2.Key(sha1.New, passphrase, salt, 4096, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Encrypt seals plaintext with AES-GCM under a PBKDF2-SHA1 key (4096 rounds)
// of passphrase and a random salt: "<salt>:<base64(nonce|ciphertext)>".
func Encrypt(passphrase string, plaintext []byte) ([]byte, error) {
	raw := make([]byte, 8)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	salt := hex.EncodeToString(raw)
	gcm, err := gcmFor(passphrase, []byte(salt))
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := io.ReadFull(rand.Reader, nonce); err != nil {
		return nil, err
	}
	sealed := gcm.Seal(nonce, nonce, plaintext, nil)
	return []byte(salt + ":" + base64.StdEncoding.EncodeToString(sealed)), nil
}

// Decrypt opens what Encrypt sealed; a wrong passphrase fails GCM's check.
func Decrypt(passphrase string, ciphertext []byte) ([]byte, error) {
	salt, body, ok := strings.Cut(string(ciphertext), ":")
	if !ok {
		return nil, errors.New("invalid cipher text, not : delimited")
	}
	gcm, err := gcmFor(passphrase, []byte(salt))
	if err != nil {
		return nil, err
	}
	data, err := base64.StdEncoding.DecodeString(body)
	if err != nil {
		return nil, err
	}
	if len(data) < gcm.NonceSize() {
		return nil, errors.New("invalid cipher text, too short")
	}
	return gcm.Open(nil, data[:gcm.NonceSize()], data[gcm.NonceSize():], nil)
}
