package bootstrap

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// memKV is an in-memory datastore.
type memKV map[string][]byte

func (m memKV) List(_ context.Context, prefix string) ([]KeyValue, error) {
	var out []KeyValue
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, KeyValue{k, v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func (m memKV) Create(_ context.Context, key string, value []byte) error {
	if _, ok := m[key]; ok {
		return ErrKeyExists
	}
	m[key] = value
	return nil
}

func TestStorageKey(t *testing.T) {
	// sha256("secret") = 2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b
	if got := StorageKey("secret"); got != "/bootstrap/2bb80d537b1d" {
		t.Fatalf("StorageKey = %s", got)
	}
}

func TestEncryptDecrypt(t *testing.T) {
	sealed, err := Encrypt("pw", []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	salt, _, ok := strings.Cut(string(sealed), ":")
	if !ok || len(salt) != 16 {
		t.Fatalf("sealed %q: want <16 hex salt>:<base64>", sealed)
	}
	got, err := Decrypt("pw", sealed)
	if err != nil || string(got) != "hello" {
		t.Fatalf("Decrypt = %q, %v", got, err)
	}
	if _, err := Decrypt("other", sealed); err == nil {
		t.Fatal("a wrong passphrase decrypted")
	}
	if _, err := Decrypt("pw", []byte("garbage")); err == nil {
		t.Fatal("garbage decrypted")
	}
}

func TestSaveLoadAndDifferentToken(t *testing.T) {
	ctx := context.Background()
	kv := memKV{}
	if data, err := Load(ctx, kv, "pw"); data != nil || err != nil {
		t.Fatalf("empty store: %q %v", data, err)
	}
	saved, err := Save(ctx, kv, "pw", []byte(`{"a":1}`))
	if !saved || err != nil {
		t.Fatalf("Save = %v %v", saved, err)
	}
	if saved, err := Save(ctx, kv, "pw", []byte(`{"b":2}`)); saved || err != nil {
		t.Fatalf("second Save = %v %v; want left as is", saved, err)
	}
	data, err := Load(ctx, kv, "pw")
	if err != nil || string(data) != `{"a":1}` {
		t.Fatalf("Load = %q %v", data, err)
	}
	for _, f := range []func() error{
		func() error { _, err := Load(ctx, kv, "wrong"); return err },
		func() error { _, err := Save(ctx, kv, "wrong", []byte("x")); return err },
	} {
		if err := f(); !errors.Is(err, ErrDifferentToken) || err.Error() != "bootstrap data already found and encrypted with different token" {
			t.Fatalf("wrong token: %v", err)
		}
	}
}

func TestReadWriteFiles(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	for name, rel := range Paths {
		p := filepath.Join(src, rel)
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte("content of "+name), 0o600)
	}
	if _, err := Read(t.TempDir()); err == nil {
		t.Fatal("Read of an empty dir succeeded")
	}
	data, err := Read(src)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dst, "tls"), 0o700)
	os.WriteFile(filepath.Join(dst, "tls/server-ca.crt"), []byte("content of ServerCA"), 0o600)
	wrote, err := Write(dst, data)
	if err != nil || len(wrote) != len(Paths)-1 {
		t.Fatalf("Write = %q %v; want all files but the identical one", wrote, err)
	}
	for name, rel := range Paths {
		got, _ := os.ReadFile(filepath.Join(dst, rel))
		if !bytes.Equal(got, []byte("content of "+name)) {
			t.Errorf("%s: %q", rel, got)
		}
	}
	if wrote, _ := Write(dst, data); len(wrote) != 0 {
		t.Fatalf("second Write wrote %q", wrote)
	}
}

// k3s's ControlRuntimeBootstrap carries EncryptionConfig: a server started
// with --secrets-encryption shares its key with the servers that join.
func TestOptionalFilesTravelWhenPresent(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	for name, rel := range Paths {
		p := filepath.Join(src, rel)
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte("content of "+name), 0o600)
	}
	without, err := Read(src)
	if err != nil || bytes.Contains(without, []byte("EncryptionConfig")) {
		t.Fatalf("Read without the optional file: %v %s", err, without)
	}
	os.WriteFile(filepath.Join(src, Optional["EncryptionConfig"]), []byte(`{"kind":"EncryptionConfiguration"}`), 0o600)
	with, err := Read(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dst, with); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dst, "cred/encryption-config.json"))
	if err != nil || string(got) != `{"kind":"EncryptionConfiguration"}` {
		t.Fatalf("encryption config not written from the bootstrap data: %q %v", got, err)
	}
}
