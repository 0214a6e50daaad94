package podrunner

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"baremetal.k3s/tests/kube/internal/pod"
	"baremetal.k3s/tests/kube/internal/sandbox"
)

// PodStatus is one pod in pods.json.
type PodStatus struct {
	Pod         string      `json:"pod"` // <name>-<node>, the name the kubelet gives a static pod
	Namespace   string      `json:"namespace"`
	Name        string      `json:"name"` // metadata.name in the manifest
	UID         string      `json:"uid"`
	Manifest    string      `json:"manifest"`
	Component   string      `json:"component,omitempty"` // labels.component
	Container   string      `json:"container"`
	FileHash    string      `json:"file_hash,omitempty"` // env FILE_HASH (RKE2 manifests)
	Command     []string    `json:"command"`
	State       string      `json:"state"`            // waiting | running | terminated | skipped | terminating
	Reason      string      `json:"reason,omitempty"` // ContainerCreating, CrashLoopBackOff, HostPathError, StartError, Unavailable, Completed, Error
	Message     string      `json:"message,omitempty"`
	PID         int         `json:"pid,omitempty"`
	StartedAt   string      `json:"started_at,omitempty"`
	Restarts    int         `json:"restarts"`
	NextStartAt string      `json:"next_start_at,omitempty"`
	LastExit    *ExitStatus `json:"last_exit,omitempty"`
}

// ExitStatus describes a container that ended.
type ExitStatus struct {
	Code       int    `json:"code"`
	Reason     string `json:"reason"` // Completed | Error | StartError
	Message    string `json:"message,omitempty"`
	PID        int    `json:"pid,omitempty"`
	StartedAt  string `json:"started_at,omitempty"`
	FinishedAt string `json:"finished_at"`
	StopReason string `json:"stop_reason,omitempty"` // set when the runner stopped it
}

type worker struct {
	r    *Runner
	d    *pod.Decoded
	file string
	prev *worker // a replaced pod of the same name: it must end first

	stopOnce   sync.Once
	stopCh     chan struct{}
	stopReason string
	done       chan struct{}

	mu sync.Mutex
	st PodStatus
}

func (r *Runner) newWorker(s scanned, prev *worker) *worker {
	c := s.d.Pod.Spec.Containers[0]
	w := &worker{r: r, d: s.d, file: s.file, prev: prev, stopCh: make(chan struct{}), done: make(chan struct{})}
	w.st = PodStatus{
		Pod: s.d.FullName, Namespace: s.d.Namespace, Name: s.d.Pod.Metadata.Name, UID: s.d.UID,
		Manifest: s.file, Component: s.d.Pod.Metadata.Labels["component"], Container: c.Name,
		FileHash: c.EnvValue("FILE_HASH"), Command: joinCmd(&c), State: "waiting", Reason: "ContainerCreating",
	}
	return w
}

func (w *worker) fileHash() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st.FileHash
}

func (w *worker) status() PodStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.st
	st.Command = append([]string{}, st.Command...)
	if st.LastExit != nil {
		le := *st.LastExit
		st.LastExit = &le
	}
	return st
}

func (w *worker) update(f func(*PodStatus)) {
	w.mu.Lock()
	f(&w.st)
	w.mu.Unlock()
	w.r.writeState()
}

func (w *worker) stop(reason string) {
	w.stopOnce.Do(func() {
		w.stopReason = reason
		close(w.stopCh)
	})
	<-w.done
}

// sleep waits d; false when the worker was told to stop meanwhile.
func (w *worker) sleep(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-w.stopCh:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.stopCh:
		return false
	case <-t.C:
		return true
	}
}

func (w *worker) fields(extra map[string]any) map[string]any {
	m := map[string]any{"pod": w.d.FullName, "namespace": w.d.Namespace, "manifest": w.file, "uid": w.d.UID}
	if c := w.d.Pod.Metadata.Labels["component"]; c != "" {
		m["component"] = c
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func (w *worker) logf(level, format string, a ...any) {
	w.r.o.Logf(level, "pod %s/%s: %s", w.d.Namespace, w.d.FullName, fmt.Sprintf(format, a...))
}

// run is the pod's life: wait for a replaced pod to end, set up the
// volumes (retrying), then run the container and restart it per the
// restart policy with the kubelet's back-off, until told to stop.
func (w *worker) run() {
	defer close(w.done)
	defer w.r.writeState()
	if w.prev != nil {
		select {
		case <-w.prev.done:
		case <-w.stopCh:
			w.update(func(s *PodStatus) { s.State, s.Reason = "terminated", "NeverStarted" })
			return
		}
	}
	p := w.d.Pod
	if len(p.Spec.Containers) > 1 {
		w.logf("warning", "only containers[0] (%s) runs in the double; %d more ignored", p.Spec.Containers[0].Name, len(p.Spec.Containers)-1)
	}
	c := &p.Spec.Containers[0]

	// Volume set-up: hostPath type checks, retried as the volume manager does.
	var retry retryBackoff
	for {
		herr := pod.CheckHostPaths(p)
		if herr == nil {
			break
		}
		d := retry.next()
		w.logf("error", "%v (retrying in %s)", herr, d)
		w.r.o.Emit("pod_hostpath_error", w.fields(map[string]any{"volume": herr.Volume, "path": herr.Path, "type": herr.Type, "error": herr.Err.Error()}))
		w.update(func(s *PodStatus) {
			s.State, s.Reason, s.Message = "waiting", "HostPathError", herr.Error()
			s.NextStartAt = stamp(time.Now().Add(d))
		})
		if !w.sleep(d) {
			w.update(func(s *PodStatus) { s.State, s.Reason, s.NextStartAt = "terminated", "NeverStarted", "" })
			return
		}
	}

	ex, rerr := w.r.o.Resolve(joinCmd(c))
	var unavailable *ErrUnavailable
	if errors.As(rerr, &unavailable) {
		if w.r.reportUnavailable(unavailable.Command) {
			w.r.o.Logf("warning", "%v (pod %s/%s)", rerr, w.d.Namespace, w.d.FullName)
		}
		w.r.o.Emit("pod_skipped", w.fields(map[string]any{"reason": rerr.Error()}))
		w.update(func(s *PodStatus) {
			s.State, s.Reason, s.Message, s.NextStartAt = "skipped", "Unavailable", rerr.Error(), ""
		})
		<-w.stopCh
		return
	}

	bo := newCrashBackoff(w.r.o.BackoffBase, w.r.o.BackoffMax)
	var lastFinish time.Time
	for first := true; ; first = false {
		if !first {
			if d := bo.delay(lastFinish) - time.Since(lastFinish); d > 0 {
				msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", roundDur(d), c.Name, w.d.FullName, w.d.Namespace, w.d.UID)
				w.update(func(s *PodStatus) {
					s.State, s.Reason, s.Message = "waiting", "CrashLoopBackOff", msg
					s.NextStartAt = stamp(time.Now().Add(d))
				})
				if !w.sleep(d) {
					w.update(func(s *PodStatus) { s.State, s.Reason, s.NextStartAt = "terminated", "Stopped", "" })
					return
				}
			} else if !w.sleep(0) {
				w.update(func(s *PodStatus) { s.State, s.Reason, s.NextStartAt = "terminated", "Stopped", "" })
				return
			}
			w.update(func(s *PodStatus) { s.Restarts++ })
		}
		var pr *proc
		err := rerr
		if err == nil {
			pr, err = w.start(c, ex)
		}
		if err != nil {
			lastFinish = time.Now()
			es := &ExitStatus{Code: 128, Reason: "StartError", Message: err.Error(), FinishedAt: stamp(lastFinish)}
			w.logf("error", "container %s failed to start: %v", c.Name, err)
			w.r.o.Emit("pod_exited", w.fields(map[string]any{"code": es.Code, "reason": es.Reason, "error": es.Message, "restarts": w.status().Restarts}))
			w.update(func(s *PodStatus) {
				s.State, s.Reason, s.Message, s.PID, s.StartedAt, s.LastExit = "waiting", "StartError", err.Error(), 0, "", es
			})
			if p.RestartPolicy() == "Never" {
				w.update(func(s *PodStatus) { s.State = "terminated" })
				<-w.stopCh
				return
			}
			continue
		}
		w.update(func(s *PodStatus) {
			s.State, s.Reason, s.Message, s.NextStartAt = "running", "", "", ""
			s.PID, s.StartedAt = pr.pid, stamp(pr.started)
		})
		started := map[string]any{"pid": pr.pid, "restarts": w.status().Restarts, "command": pr.argv, "sandbox": w.r.o.Sandbox}
		if fh := c.EnvValue("FILE_HASH"); fh != "" {
			started["file_hash"] = fh
		}
		w.r.o.Emit("pod_started", w.fields(started))
		w.logf("info", "container %s started, pid %d: %s", c.Name, pr.pid, strings.Join(pr.argv, " "))

		select {
		case <-pr.done:
		case <-w.stopCh:
			grace := time.Duration(p.GracePeriod()) * time.Second
			w.update(func(s *PodStatus) { s.State = "terminating" })
			w.logf("info", "stopping container %s (%s), grace period %s", c.Name, w.stopReason, grace)
			pr.stop(grace)
			es := pr.exitStatus()
			es.StopReason = w.stopReason
			w.r.o.Emit("pod_exited", w.fields(map[string]any{"code": es.Code, "reason": es.Reason, "error": es.Message,
				"pid": pr.pid, "stop_reason": w.stopReason, "restarts": w.status().Restarts}))
			w.update(func(s *PodStatus) {
				s.State, s.Reason, s.PID, s.StartedAt, s.LastExit = "terminated", "Stopped", 0, "", &es
			})
			return
		}
		es := pr.exitStatus()
		lastFinish = pr.finished
		w.logf("info", "container %s exited: code %d (%s) %s", c.Name, es.Code, es.Reason, es.Message)
		w.r.o.Emit("pod_exited", w.fields(map[string]any{"code": es.Code, "reason": es.Reason, "error": es.Message,
			"pid": pr.pid, "ran_seconds": pr.finished.Sub(pr.started).Seconds(), "restarts": w.status().Restarts}))
		w.update(func(s *PodStatus) {
			s.State, s.Reason, s.Message, s.PID, s.StartedAt, s.LastExit = "waiting", es.Reason, "", 0, "", &es
		})
		if pol := p.RestartPolicy(); pol == "Never" || (pol == "OnFailure" && es.Code == 0) {
			w.update(func(s *PodStatus) { s.State = "terminated" })
			<-w.stopCh
			return
		}
	}
}

func roundDur(d time.Duration) time.Duration {
	if d > time.Second {
		return d.Round(time.Second)
	}
	return d.Round(10 * time.Millisecond)
}

// envFor builds the container's environment: what a runtime sets (PATH,
// HOSTNAME), then the container's env in order, $(VAR) references expanded.
func (w *worker) envFor(c *pod.Container) ([]string, map[string]string) {
	hostname, _ := os.Hostname()
	vals := map[string]string{"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOSTNAME": hostname}
	order := []string{"PATH", "HOSTNAME"}
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil {
			v = ""
			if e.ValueFrom.FieldRef != nil {
				switch e.ValueFrom.FieldRef.FieldPath {
				case "metadata.name":
					v = w.d.FullName
				case "metadata.namespace":
					v = w.d.Namespace
				case "metadata.uid":
					v = w.d.UID
				case "spec.nodeName":
					v = w.r.o.NodeName
				}
			}
		} else {
			v = expand(v, vals)
		}
		if _, ok := vals[e.Name]; !ok {
			order = append(order, e.Name)
		}
		vals[e.Name] = v
	}
	env := make([]string, 0, len(order))
	for _, k := range order {
		env = append(env, k+"="+vals[k])
	}
	return env, vals
}

// expand replaces $(VAR) with its value as the kubelet does; $$ escapes a
// $ and an unknown reference is left as written.
func expand(s string, vals map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := vals[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// mounts resolves the container's volume mounts to sandbox mounts, creating
// what a container runtime creates: a missing hostPath (type unset) becomes
// a directory, a missing subPath too, an emptyDir is a per-pod directory
// (tmpfs with medium Memory).
func (w *worker) mounts(c *pod.Container) ([]sandbox.Mount, error) {
	var out []sandbox.Mount
	for _, m := range c.VolumeMounts {
		v := w.d.Pod.VolumeByName(m.Name)
		if v == nil {
			return nil, fmt.Errorf("volume %q not found", m.Name)
		}
		switch {
		case v.HostPath != nil:
			src := v.HostPath.Path
			if m.SubPath != "" {
				src = filepath.Join(src, m.SubPath)
			}
			if _, err := os.Stat(src); os.IsNotExist(err) {
				if err := os.MkdirAll(src, 0o755); err != nil {
					return nil, err
				}
			}
			out = append(out, sandbox.Mount{Source: src, Target: m.MountPath, ReadOnly: m.ReadOnly})
		case v.EmptyDir != nil:
			if v.EmptyDir.Medium == "Memory" && m.SubPath == "" {
				out = append(out, sandbox.Mount{Target: m.MountPath, ReadOnly: m.ReadOnly, Tmpfs: true})
				continue
			}
			src := filepath.Join(w.r.o.PodDataDir, w.d.UID, "volumes", "kubernetes.io~empty-dir", v.Name, m.SubPath)
			if err := os.MkdirAll(src, 0o777); err != nil {
				return nil, err
			}
			out = append(out, sandbox.Mount{Source: src, Target: m.MountPath, ReadOnly: m.ReadOnly})
		default:
			return nil, fmt.Errorf("volume %q: source %s is not supported by the test double (hostPath and emptyDir are)", v.Name, strings.Join(v.Other, ","))
		}
	}
	return out, nil
}

// proc is one running container.
type proc struct {
	argv     []string // as exec'd
	cmd      *exec.Cmd
	pid      int
	started  time.Time
	finished time.Time
	done     chan struct{}
	err      error
	tail     *tail
	logFile  *os.File
}

func (w *worker) start(c *pod.Container, ex *Exec) (*proc, error) {
	env, vals := w.envFor(c)
	argv := make([]string, len(ex.Argv))
	for i, a := range ex.Argv {
		argv[i] = expand(a, vals)
	}
	for _, n := range ex.Notes {
		w.logf("info", "%s", n)
	}
	mounts, err := w.mounts(c)
	if err != nil {
		return nil, err
	}
	var cmd *exec.Cmd
	var errR, errW *os.File
	if w.r.o.Sandbox {
		spec := &sandbox.Spec{Root: w.r.o.SandboxRoot, Binary: ex.Binary, Path: ex.Path, Argv: argv, Env: env,
			Dir: c.WorkingDir, Mounts: mounts, RuntimeFiles: sandbox.DefaultRuntimeFiles}
		cmd, errR, errW, err = sandbox.Command(w.r.o.Self, spec)
		if err != nil {
			return nil, err
		}
	} else {
		cmd = exec.Command(ex.Binary)
		cmd.Args = argv
		cmd.Env = env
		cmd.Dir = c.WorkingDir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	// Own pipes (not StdoutPipe): Wait must not close them under the readers.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errOutR, errOutW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin = nil
	cmd.Stdout = outW
	cmd.Stderr = errOutW
	pr := &proc{argv: argv, cmd: cmd, done: make(chan struct{}), tail: &tail{}}
	pr.logFile = w.openLog(c.Name)
	err = cmd.Start()
	outW.Close()
	errOutW.Close()
	if err != nil {
		outR.Close()
		errOutR.Close()
		if errW != nil {
			errW.Close()
			errR.Close()
		}
		if pr.logFile != nil {
			pr.logFile.Close()
		}
		return nil, err
	}
	pr.pid = cmd.Process.Pid
	pr.started = time.Now()
	prefix := fmt.Sprintf("[%s/%s] ", w.d.Namespace, w.d.FullName)
	var copies sync.WaitGroup
	for _, s := range []struct {
		r    *os.File
		name string
	}{{outR, "stdout"}, {errOutR, "stderr"}} {
		copies.Add(1)
		go func(r *os.File, stream string) {
			defer copies.Done()
			defer r.Close()
			pr.copyLines(r, stream, prefix, w.r.o.Output)
		}(s.r, s.name)
	}
	var startErr error
	if errW != nil {
		errW.Close()
		startErr = sandbox.ReadStartError(errR, 30*time.Second)
	}
	go func() {
		err := cmd.Wait()
		pr.finished = time.Now()
		copied := make(chan struct{})
		go func() { copies.Wait(); close(copied) }()
		select { // let the output drain, but do not hang on a pipe a child leaked
		case <-copied:
		case <-time.After(2 * time.Second):
		}
		pr.err = err
		outMu.Lock()
		if pr.logFile != nil {
			pr.logFile.Close()
			pr.logFile = nil
		}
		outMu.Unlock()
		close(pr.done)
	}()
	if startErr != nil {
		_ = syscall.Kill(-pr.pid, syscall.SIGKILL) // a helper stuck in its set-up
		<-pr.done
		return nil, startErr
	}
	return pr, nil
}

// openLog opens the container's CRI-format log file,
// <PodLogDir>/<namespace>_<pod>_<uid>/<container>/<restarts>.log, keeping
// the current and the previous one as the kubelet does.
func (w *worker) openLog(container string) *os.File {
	if w.r.o.PodLogDir == "" {
		return nil
	}
	dir := filepath.Join(w.r.o.PodLogDir, fmt.Sprintf("%s_%s_%s", w.d.Namespace, w.d.FullName, w.d.UID), container)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil
	}
	n := w.status().Restarts
	if n >= 2 {
		_ = os.Remove(filepath.Join(dir, fmt.Sprintf("%d.log", n-2)))
	}
	f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%d.log", n)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o640)
	if err != nil {
		return nil
	}
	return f
}

var outMu sync.Mutex

func (pr *proc) copyLines(r io.Reader, stream, prefix string, out io.Writer) {
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			line = strings.TrimRight(line, "\n")
			outMu.Lock()
			fmt.Fprintf(out, "%s%s\n", prefix, line)
			if pr.logFile != nil {
				fmt.Fprintf(pr.logFile, "%s %s F %s\n", time.Now().UTC().Format(time.RFC3339Nano), stream, line)
			}
			outMu.Unlock()
			pr.tail.add(line)
		}
		if err != nil {
			return
		}
	}
}

// stop sends SIGTERM to the container's process group, then SIGKILL after grace.
func (pr *proc) stop(grace time.Duration) {
	select {
	case <-pr.done:
		return
	default:
	}
	_ = syscall.Kill(-pr.pid, syscall.SIGTERM)
	select {
	case <-pr.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pr.pid, syscall.SIGKILL)
		<-pr.done
	}
}

// exitStatus reports the ended container as the kubelet does: exit code
// (128+signal when killed by one), reason Completed (0) or Error, and the
// last line of its output that reads as an error.
func (pr *proc) exitStatus() ExitStatus {
	code := 0
	if ps := pr.cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			code = ps.ExitCode()
		}
	} else if pr.err != nil {
		code = 128
	}
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	return ExitStatus{Code: code, Reason: reason, Message: pr.tail.lastError(), PID: pr.pid,
		StartedAt: stamp(pr.started), FinishedAt: stamp(pr.finished)}
}

// tail keeps a container's last output lines.
type tail struct {
	mu    sync.Mutex
	lines []string
}

const tailLines = 40

func (t *tail) add(l string) {
	t.mu.Lock()
	t.lines = append(t.lines, l)
	if len(t.lines) > tailLines {
		t.lines = t.lines[len(t.lines)-tailLines:]
	}
	t.mu.Unlock()
}

// lastError is the last line that looks like an error (klog "E..." or a
// line mentioning error), else the last non-empty line.
func (t *tail) lastError() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	last := ""
	for i := len(t.lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(t.lines[i])
		if l == "" {
			continue
		}
		if last == "" {
			last = l
		}
		if strings.HasPrefix(l, "E") || strings.Contains(strings.ToLower(l), "error") {
			return l
		}
	}
	return last
}
