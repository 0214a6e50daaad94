package launcher

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"baremetal.k3s/tests/kube/internal/bootstrap"
)

// loadBootstrap reads the bootstrap data stored under the token's password
// and writes its files under serverDir where they differ (k3s's
// storageBootstrap). It reports whether data was found; data stored under
// another token is k3s's error.
func loadBootstrap(ctx context.Context, kv bootstrap.KV, password, serverDir string) (bool, error) {
	data, err := bootstrap.Load(ctx, kv, password)
	if err != nil {
		return false, err
	}
	if data == nil {
		return false, nil
	}
	wrote, err := bootstrap.Write(serverDir, data)
	if err != nil {
		return true, err
	}
	if len(wrote) > 0 {
		infof("Reconciled bootstrap data from the datastore: wrote %s", strings.Join(wrote, ", "))
	}
	return true, nil
}

// saveBootstrap stores the server's CA certificates and keys, the service
// account key and the passwd file, encrypted with the token's password. It
// reports false when the datastore already held this token's data (another
// server stored it first).
func saveBootstrap(ctx context.Context, kv bootstrap.KV, password, serverDir string) (bool, error) {
	data, err := bootstrap.Read(serverDir)
	if err != nil {
		return false, err
	}
	return bootstrap.Save(ctx, kv, password, data)
}

// syncBootstrap loads or saves the bootstrap data around ensure (which
// creates what is missing on disk), as k3s's cluster.Bootstrap then Save
// do. It returns what happened: "loaded", "saved" or "loaded-after-race".
func syncBootstrap(ctx context.Context, kv bootstrap.KV, password, serverDir string, ensure func() error) (string, error) {
	found, err := loadBootstrap(ctx, kv, password, serverDir)
	if err != nil {
		return "", err
	}
	if err := ensure(); err != nil {
		return "", err
	}
	if found {
		return "loaded", nil
	}
	saved, err := saveBootstrap(ctx, kv, password, serverDir)
	if errors.Is(err, bootstrap.ErrDifferentToken) {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("saving bootstrap data: %w", err)
	}
	if saved {
		return "saved", nil
	}
	// Another server with the same token saved first: take its CA.
	if _, err := loadBootstrap(ctx, kv, password, serverDir); err != nil {
		return "", err
	}
	return "loaded-after-race", ensure()
}
