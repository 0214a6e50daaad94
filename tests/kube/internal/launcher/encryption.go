package launcher

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// encryptionConfigName is where k3s keeps the API server's encryption
// configuration for --secrets-encryption (<data-dir>/server/cred,
// pkg/daemons/control/deps/deps.go): an aescbc key for Secrets, then the
// identity provider so that Secrets written before are still read. The file
// is part of the bootstrap data (EncryptionConfig), so every server of the
// cluster encrypts with the same key. k3s refuses to turn encryption on for a
// cluster that ran without it; the double does not check that.
const encryptionConfigName = "encryption-config.json"

// encryptionConfig is the EncryptionConfiguration k3s writes for a new key.
func encryptionConfig(key []byte, at time.Time) ([]byte, error) {
	type keyEntry struct {
		Name   string `json:"name"`
		Secret string `json:"secret"`
	}
	provider := []map[string]any{
		{"aescbc": map[string]any{"keys": []keyEntry{{Name: "aescbckey-" + at.UTC().Format(time.RFC3339),
			Secret: base64.StdEncoding.EncodeToString(key)}}}},
		{"identity": map[string]any{}},
	}
	return json.Marshal(map[string]any{
		"kind":       "EncryptionConfiguration",
		"apiVersion": "apiserver.config.k8s.io/v1",
		"resources":  []map[string]any{{"resources": []string{"secrets"}, "providers": provider}},
	})
}

// ensureEncryptionConfig writes a new encryption configuration (a random
// 32-byte key, mode 0600) at path unless one is there; it reports whether it
// wrote one.
func ensureEncryptionConfig(path string) (bool, error) {
	if _, err := os.Stat(path); err == nil {
		return false, nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return false, err
	}
	body, err := encryptionConfig(key, time.Now())
	if err != nil {
		return false, err
	}
	if err := writeFileAtomic(path, body, 0o600); err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	return true, nil
}
