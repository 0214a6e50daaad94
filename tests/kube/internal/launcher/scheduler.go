package launcher

import (
	"context"
	"errors"
	"strings"
	"time"

	"baremetal.k3s/tests/kube/internal/configfile"
	"baremetal.k3s/tests/kube/internal/kubeapi"
)

// runScheduler starts kube-scheduler as k3s does, once a node can take
// pods, then runs until a signal or a component's exit.
func (s *server) runScheduler(ctx context.Context) int {
	if s.v.Bool("disable-scheduler") {
		infof("kube-scheduler disabled (--disable-scheduler)")
		s.st.update(func(st *State) { st.Phase = "running" })
		return s.wait(ctx, nil)
	}
	if err := s.waitForNode(ctx); err != nil {
		return s.finish(err)
	}
	args := schedulerArgs(s.p, s.schedKC, s.schedArgsIn, s.ds.leaderElect)
	schedConfig, _ := configfile.LastArgValue("config", args)
	path, argv, version, err := schedulerBinary(s.self)
	if err != nil {
		return s.finish(err)
	}
	infof("Running kube-scheduler %s (%s)", strings.Join(args, " "), version)
	sched, err := s.start("kube-scheduler", path, append(argv, args...))
	if err != nil {
		return s.finish(err)
	}
	s.st.update(func(st *State) {
		st.Phase = "scheduler-running"
		st.SchedulerStartedAt = sched.started.UTC().Format(time.RFC3339Nano)
		st.SchedulerPID = sched.pid()
		st.SchedulerArgs = args
		st.SchedulerConfig = schedConfig
		st.SchedulerVersion = version
	})
	s.st.event("scheduler_started", map[string]any{"scheduler_pid": sched.pid(), "scheduler_config": schedConfig,
		"scheduler_version": version})
	return s.wait(ctx, sched)
}

// schedulerArgs are k3s's kube-scheduler arguments (pkg/daemons/control/server.go
// scheduler(), with the serving certificate k3s passes since 1.31.9/1.33.1)
// and --kube-scheduler-arg.
func schedulerArgs(p pki, kubeconfig string, in []string, leaderElect bool) []string {
	m := map[string]string{
		"kubeconfig":                kubeconfig,
		"authorization-kubeconfig":  kubeconfig,
		"authentication-kubeconfig": kubeconfig,
		"bind-address":              "127.0.0.1",
		"secure-port":               schedulerPort,
		"tls-cert-file":             p.path(schedulerServingCert + ".crt"),
		"tls-private-key-file":      p.path(schedulerServingCert + ".key"),
		"profiling":                 "false",
	}
	if !leaderElect {
		m["leader-elect"] = "false" // kine on SQLite: no leader election, as k3s
	}
	return configfile.GetArgs(m, in)
}

// waitForNode is k3s's wait before the scheduler: a Node without the
// cloud-provider's uninitialized taint (the double also wants it Ready),
// unless --disable-cloud-controller; then K3S_DOUBLE_SCHEDULER_DELAY after
// the API server became ready, at least.
func (s *server) waitForNode(ctx context.Context) error {
	s.st.update(func(st *State) { st.Phase = "waiting-for-node" })
	if !s.v.Bool("disable-cloud-controller") {
		admin, err := kubeapi.NewFromFiles(s.apiURL(), s.p.path("server-ca.crt"), s.p.path("client-admin.crt"), s.p.path("client-admin.key"))
		if err != nil {
			return err
		}
		infof("Waiting for untainted node")
		var node string
		var next time.Time
		err = waitFor(ctx, 0, s.kids, func() bool {
			if time.Now().Before(next) {
				return false
			}
			next = time.Now().Add(time.Second)
			node = readyNode(ctx, admin)
			return node != ""
		})
		if err != nil {
			return err
		}
		infof("Node %s is Ready and untainted: starting kube-scheduler", node)
		s.st.update(func(st *State) { st.SchedulerWaitedForNode = node })
	}
	deadline := s.apiReadyAt.Add(s.delay)
	if time.Now().Before(deadline) {
		infof("Waiting until %s after the API server's readiness (K3S_DOUBLE_SCHEDULER_DELAY)", s.delay)
	}
	return waitFor(ctx, 0, s.kids, func() bool { return !time.Now().Before(deadline) })
}

// wait runs until a signal or a child's exit; a scheduler's or
// controller-manager's exit is recorded.
func (s *server) wait(ctx context.Context, sched *child) int {
	err := waitFor(ctx, 0, s.kids, func() bool { return false })
	var ce *childExit
	if errors.As(err, &ce) {
		switch {
		case sched != nil && ce.c == sched:
			s.st.update(func(st *State) { st.SchedulerExitedAt = now(); st.SchedulerExitReason = ce.c.reason() })
		case ce.c == s.cm:
			s.st.update(func(st *State) { st.ControllerManagerExitedAt = now(); st.ControllerManagerExitReason = ce.c.reason() })
		}
	}
	return s.finish(err)
}
