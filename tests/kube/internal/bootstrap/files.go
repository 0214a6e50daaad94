package bootstrap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// File is one bootstrap file, as k3s serialises it.
type File struct {
	Timestamp time.Time
	Content   []byte
}

// Paths maps k3s's ControlRuntimeBootstrap field names to paths under
// <data-dir>/server, for the files the double has.
var Paths = map[string]string{
	"ServerCA":           "tls/server-ca.crt",
	"ServerCAKey":        "tls/server-ca.key",
	"ClientCA":           "tls/client-ca.crt",
	"ClientCAKey":        "tls/client-ca.key",
	"RequestHeaderCA":    "tls/request-header-ca.crt",
	"RequestHeaderCAKey": "tls/request-header-ca.key",
	"ServiceKey":         "tls/service.key",
	"PasswdFile":         "cred/passwd",
	// etcd's CAs: every k3s server has them (embedded etcd or not), and the
	// servers of an embedded etcd cluster must share them.
	"ETCDServerCA":    "tls/etcd/server-ca.crt",
	"ETCDServerCAKey": "tls/etcd/server-ca.key",
	"ETCDPeerCA":      "tls/etcd/peer-ca.crt",
	"ETCDPeerCAKey":   "tls/etcd/peer-ca.key",
}

// Optional are bootstrap files a server has only with some options: the
// secrets encryption configuration (--secrets-encryption).
var Optional = map[string]string{
	"EncryptionConfig": "cred/encryption-config.json",
}

// Read serialises the files under serverDir to JSON: every one of Paths
// (all must exist) and those of Optional that exist.
func Read(serverDir string) ([]byte, error) {
	data := map[string]File{}
	for _, set := range []struct {
		files    map[string]string
		required bool
	}{{Paths, true}, {Optional, false}} {
		for name, rel := range set.files {
			p := filepath.Join(serverDir, rel)
			content, err := os.ReadFile(p)
			if os.IsNotExist(err) && !set.required {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("failed to read %s: %w", p, err)
			}
			st, err := os.Stat(p)
			if err != nil {
				return nil, err
			}
			data[name] = File{Timestamp: st.ModTime(), Content: content}
		}
	}
	return json.Marshal(data)
}

// Write puts the files of JSON data under serverDir where they differ from
// the disk (the datastore wins, so servers on one datastore share them),
// and returns the paths it wrote, sorted.
func Write(serverDir string, data []byte) ([]string, error) {
	files := map[string]File{}
	if err := json.Unmarshal(data, &files); err != nil {
		return nil, fmt.Errorf("bootstrap data: %w", err)
	}
	var wrote []string
	for name, f := range files {
		rel, ok := Paths[name]
		if !ok {
			if rel, ok = Optional[name]; !ok {
				continue
			}
		}
		p := filepath.Join(serverDir, rel)
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, f.Content) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return wrote, err
		}
		if err := os.WriteFile(p, f.Content, 0o600); err != nil {
			return wrote, fmt.Errorf("failed to write to %s: %w", p, err)
		}
		if !f.Timestamp.IsZero() {
			_ = os.Chtimes(p, f.Timestamp, f.Timestamp)
		}
		wrote = append(wrote, p)
	}
	sort.Strings(wrote)
	return wrote, nil
}
