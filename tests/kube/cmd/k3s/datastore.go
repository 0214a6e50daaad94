package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"baremetal.k3s/tests/kube/internal/bootstrap"
	"baremetal.k3s/tests/kube/internal/launcher"
)

// etcdKV is the bootstrap data's view of an etcd v3 API (kine's or an
// etcd's), as k3s reaches it with kine's client.
type etcdKV struct{ c *clientv3.Client }

// openKV connects to endpoints (unix://, http://, https://) for launcher.OpenKV.
func openKV(_ context.Context, endpoints []string, files launcher.TLSFiles) (bootstrap.KV, func(), error) {
	cfg := clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
	if files.CAFile != "" || files.CertFile != "" {
		t, err := tlsConfig(files)
		if err != nil {
			return nil, nil, err
		}
		cfg.TLS = t
	}
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	return etcdKV{c}, func() { c.Close() }, nil
}

func tlsConfig(f launcher.TLSFiles) (*tls.Config, error) {
	t := &tls.Config{}
	if f.CAFile != "" {
		ca, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, err
		}
		t.RootCAs = x509.NewCertPool()
		if !t.RootCAs.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("%s: no certificate", f.CAFile)
		}
	}
	if f.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, err
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
}

func (e etcdKV) List(ctx context.Context, prefix string) ([]bootstrap.KeyValue, error) {
	resp, err := e.c.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	out := make([]bootstrap.KeyValue, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		out = append(out, bootstrap.KeyValue{Key: string(kv.Key), Value: kv.Value})
	}
	return out, nil
}

// Create is the transaction kine recognises as a create: the key's
// mod revision is 0, then put.
func (e etcdKV) Create(ctx context.Context, key string, value []byte) error {
	resp, err := e.c.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(value))).
		Commit()
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		return bootstrap.ErrKeyExists
	}
	return nil
}
