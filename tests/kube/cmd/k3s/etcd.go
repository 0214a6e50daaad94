package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"baremetal.k3s/tests/kube/internal/bootstrap"
	"baremetal.k3s/tests/kube/internal/launcher"
)

// runEtcd is `k3s double-etcd --config-file=<data-dir>/server/db/etcd/config`:
// the real etcd server (go.etcd.io/etcd/server/v3/embed, as k3s's executor
// embeds it) from the configuration file the launcher wrote, until SIGTERM
// or SIGINT (exit 0) or until etcd stops or fails (exit 1).
func runEtcd(args []string) int {
	path := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "--config-file="):
			path = strings.TrimPrefix(a, "--config-file=")
		case a == "--config-file" && i+1 < len(args):
			i++
			path = args[i]
		default:
			fmt.Fprintf(os.Stderr, "double-etcd: unknown argument %q (usage: k3s double-etcd --config-file=FILE)\n", a)
			return 2
		}
	}
	if path == "" {
		fmt.Fprintln(os.Stderr, "double-etcd: --config-file is required")
		return 2
	}
	cfg, err := embed.ConfigFromFile(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "double-etcd: %s: %v\n", path, err)
		return 1
	}
	if cfg.WarningUnaryRequestDuration == 0 {
		// etcd's own command sets this default (etcdmain); embed leaves it 0,
		// which logs every request as expensive
		cfg.WarningUnaryRequestDuration = embed.DefaultWarningUnaryRequestDuration
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "double-etcd: starting etcd: %v\n", err)
		return 1
	}
	select {
	case <-ctx.Done():
		e.Close()
		return 0
	case err := <-e.Err():
		e.Close()
		fmt.Fprintf(os.Stderr, "double-etcd: etcd exited: %v\n", err)
		return 1
	case <-e.Server.StopNotify():
		e.Close()
		fmt.Fprintln(os.Stderr, "double-etcd: etcd stopped")
		return 1
	}
}

// etcdClient is launcher.EtcdClient over go.etcd.io/etcd/client/v3.
type etcdClient struct {
	c   *clientv3.Client
	cfg clientv3.Config
}

// openEtcd is launcher.OpenEtcd: k3s's getClientConfig (2s dial timeout,
// keepalives of the API server's storage factory).
func openEtcd(ctx context.Context, endpoints []string, files launcher.TLSFiles) (launcher.EtcdClient, error) {
	t, err := tlsConfig(files)
	if err != nil {
		return nil, err
	}
	cfg := clientv3.Config{Endpoints: endpoints, TLS: t, Context: ctx, DialTimeout: 2 * time.Second,
		DialKeepAliveTime: 30 * time.Second, DialKeepAliveTimeout: 10 * time.Second, PermitWithoutStream: true,
		Logger: zap.NewNop()}
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, err
	}
	return &etcdClient{c: c, cfg: cfg}, nil
}

// mapErr turns the server's errors the launcher acts on into its own.
func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rpctypes.ErrTooManyLearners), errors.Is(err, rpctypes.ErrGRPCTooManyLearners):
		return fmt.Errorf("%w (%v)", launcher.ErrEtcdTooManyLearners, err)
	case errors.Is(err, rpctypes.ErrUnhealthy), errors.Is(err, rpctypes.ErrGRPCUnhealthy):
		return fmt.Errorf("%w (%v)", launcher.ErrEtcdUnhealthy, err)
	case errors.Is(err, rpctypes.ErrMemberLearnerNotReady), errors.Is(err, rpctypes.ErrGRPCLearnerNotReady):
		return fmt.Errorf("%w (%v)", launcher.ErrEtcdLearnerNotReady, err)
	case errors.Is(err, rpctypes.ErrMemberNotFound), errors.Is(err, rpctypes.ErrGRPCMemberNotFound):
		return fmt.Errorf("%w (%v)", launcher.ErrEtcdMemberNotFound, err)
	}
	return err
}

func (e *etcdClient) MemberList(ctx context.Context) ([]launcher.EtcdMember, error) {
	resp, err := e.c.MemberList(ctx)
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]launcher.EtcdMember, 0, len(resp.Members))
	for _, m := range resp.Members {
		out = append(out, launcher.EtcdMember{ID: m.ID, Name: m.Name, PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs, IsLearner: m.IsLearner})
	}
	return out, nil
}

func (e *etcdClient) MemberAddAsLearner(ctx context.Context, peerURLs []string) (launcher.EtcdMember, error) {
	resp, err := e.c.MemberAddAsLearner(ctx, peerURLs)
	if err != nil {
		return launcher.EtcdMember{}, mapErr(err)
	}
	m := resp.Member
	return launcher.EtcdMember{ID: m.ID, Name: m.Name, PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs, IsLearner: m.IsLearner}, nil
}

func (e *etcdClient) MemberPromote(ctx context.Context, id uint64) error {
	_, err := e.c.MemberPromote(ctx, id)
	return mapErr(err)
}

func (e *etcdClient) MemberRemove(ctx context.Context, id uint64) error {
	_, err := e.c.MemberRemove(ctx, id)
	return mapErr(err)
}

func (e *etcdClient) MemberUpdate(ctx context.Context, id uint64, peerURLs []string) error {
	_, err := e.c.MemberUpdate(ctx, id, peerURLs)
	return mapErr(err)
}

func (e *etcdClient) Status(ctx context.Context, endpoint string) (launcher.EtcdStatus, error) {
	resp, err := e.c.Status(ctx, endpoint)
	if err != nil {
		return launcher.EtcdStatus{}, mapErr(err)
	}
	return launcher.EtcdStatus{MemberID: resp.Header.MemberId, Leader: resp.Leader, IsLearner: resp.IsLearner,
		RaftIndex: resp.RaftIndex, RaftAppliedIndex: resp.RaftAppliedIndex, Errors: resp.Errors}, nil
}

func (e *etcdClient) Get(ctx context.Context, key string) ([]byte, bool, error) {
	resp, err := e.c.Get(ctx, key)
	if err != nil {
		return nil, false, mapErr(err)
	}
	if len(resp.Kvs) == 0 {
		return nil, false, nil
	}
	return resp.Kvs[0].Value, true, nil
}

func (e *etcdClient) Put(ctx context.Context, key, value string) error {
	_, err := e.c.Put(ctx, key, value)
	return mapErr(err)
}

// Snapshot is etcdutl's snapshot Save of the client's first endpoint, as
// k3s takes its snapshots.
func (e *etcdClient) Snapshot(ctx context.Context, path string) error {
	cfg := e.cfg
	cfg.Endpoints = cfg.Endpoints[:1]
	cfg.Context = ctx
	_, err := snapshot.NewV3(zap.NewNop()).Save(ctx, cfg, path)
	return err
}

func (e *etcdClient) List(ctx context.Context, prefix string) ([]bootstrap.KeyValue, error) {
	return etcdKV{e.c}.List(ctx, prefix)
}

func (e *etcdClient) Create(ctx context.Context, key string, value []byte) error {
	return etcdKV{e.c}.Create(ctx, key, value)
}

func (e *etcdClient) Close() error { return e.c.Close() }

// restoreEtcd is launcher.RestoreEtcdSnapshot: etcdutl's snapshot Restore.
func restoreEtcd(r launcher.EtcdRestore) error {
	lg, err := zap.NewProduction()
	if err != nil {
		lg = zap.NewNop()
	}
	return snapshot.NewV3(lg).Restore(snapshot.RestoreConfig{
		SnapshotPath:   r.SnapshotPath,
		Name:           r.Name,
		OutputDataDir:  r.DataDir,
		OutputWALDir:   r.WALDir,
		PeerURLs:       []string{r.PeerURL},
		InitialCluster: r.InitialCluster,
	})
}
