package launcher

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"baremetal.k3s/tests/kube/internal/configfile"
)

// k3s's genEncryptionConfigAndState: an aescbc key for Secrets, identity
// after it, the file 0600 under server/cred, kept once made; the API server
// gets --encryption-provider-config only with --secrets-encryption.
func TestEncryptionConfigAsK3sWritesIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cred", encryptionConfigName)
	wrote, err := ensureEncryptionConfig(path)
	if err != nil || !wrote {
		t.Fatalf("first ensure: %v %v", wrote, err)
	}
	first, _ := os.ReadFile(path)
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	var cfg struct {
		Kind, APIVersion string
		Resources        []struct {
			Resources []string
			Providers []map[string]struct {
				Keys []struct{ Name, Secret string }
			}
		}
	}
	if err := json.Unmarshal(first, &cfg); err != nil {
		t.Fatal(err)
	}
	r := cfg.Resources[0]
	key, _ := base64.StdEncoding.DecodeString(r.Providers[0]["aescbc"].Keys[0].Secret)
	if cfg.Kind != "EncryptionConfiguration" || r.Resources[0] != "secrets" || len(key) != 32 ||
		!strings.HasPrefix(r.Providers[0]["aescbc"].Keys[0].Name, "aescbckey-") {
		t.Errorf("config %s", first)
	}
	if _, ok := r.Providers[1]["identity"]; !ok {
		t.Errorf("no identity provider after aescbc: %s", first)
	}
	if wrote, err := ensureEncryptionConfig(path); err != nil || wrote {
		t.Fatalf("second ensure rewrote it: %v %v", wrote, err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(first) {
		t.Error("the key changed")
	}
}

func TestAPIServerGetsTheEncryptionConfigOnlyWhenAsked(t *testing.T) {
	p := pki{dir: "/var/lib/rancher/k3s/server/tls"}
	for _, tc := range []struct {
		args []string
		want bool
	}{{nil, false}, {[]string{"--secrets-encryption"}, true}} {
		v, err := configfile.Parse(configfile.ServerFlags(), tc.args)
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Join(apiServerArgs(v, k3sFlavor, p, datastore{}, nil), " ")
		got := strings.Contains(args, "--encryption-provider-config=/var/lib/rancher/k3s/server/cred/encryption-config.json")
		if got != tc.want {
			t.Errorf("%v: %s", tc.args, args)
		}
	}
}
