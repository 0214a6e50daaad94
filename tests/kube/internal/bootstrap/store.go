package bootstrap

import (
	"context"
	"errors"
	"strings"
)

// KeyValue is one datastore entry.
type KeyValue struct {
	Key   string
	Value []byte
}

// KV is the part of an etcd v3 client bootstrap needs.
type KV interface {
	// List returns the entries whose key starts with prefix.
	List(ctx context.Context, prefix string) ([]KeyValue, error)
	// Create writes key if it does not exist yet; ErrKeyExists if it does.
	Create(ctx context.Context, key string, value []byte) error
}

// ErrKeyExists is Create's answer for a key that is already there.
var ErrKeyExists = errors.New("key exists")

// ErrDifferentToken is k3s's message for bootstrap data stored under
// another token.
var ErrDifferentToken = errors.New("bootstrap data already found and encrypted with different token")

// Lookup finds the bootstrap entry of password: (entry, nil) when found,
// (nil, nil) when the datastore holds none, ErrDifferentToken when it holds
// only another token's.
func Lookup(ctx context.Context, kv KV, password string) (*KeyValue, error) {
	list, err := kv.List(ctx, Prefix+"/")
	if err != nil {
		return nil, err
	}
	want := StorageKey(password)
	for i := range list {
		if list[i].Key == want {
			return &list[i], nil
		}
	}
	for _, e := range list {
		if strings.HasPrefix(e.Key, Prefix+"/") {
			return nil, ErrDifferentToken
		}
	}
	return nil, nil
}

// Load returns the decrypted bootstrap data of password, or nil when the
// datastore holds none yet.
func Load(ctx context.Context, kv KV, password string) ([]byte, error) {
	e, err := Lookup(ctx, kv, password)
	if err != nil || e == nil {
		return nil, err
	}
	return Decrypt(password, e.Value)
}

// Save stores data encrypted with password unless the datastore already
// holds bootstrap data: its own (left as is: saved reports false) or
// another token's (ErrDifferentToken).
func Save(ctx context.Context, kv KV, password string, data []byte) (saved bool, err error) {
	e, err := Lookup(ctx, kv, password)
	if err != nil || e != nil {
		return false, err
	}
	sealed, err := Encrypt(password, data)
	if err != nil {
		return false, err
	}
	err = kv.Create(ctx, StorageKey(password), sealed)
	if errors.Is(err, ErrKeyExists) {
		return false, nil // another server won the race: its data stands
	}
	return err == nil, err
}
