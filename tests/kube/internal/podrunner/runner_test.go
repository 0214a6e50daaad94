package podrunner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The runner without the sandbox (no root needed): "sh" runs /bin/sh.
type recorder struct {
	mu     sync.Mutex
	events []map[string]any
}

func (r *recorder) emit(ev string, f map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[string]any{"event": ev, "t": time.Now()}
	for k, v := range f {
		m[k] = v
	}
	r.events = append(r.events, m)
}

func (r *recorder) find(pred func(map[string]any) bool) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, e := range r.events {
		if pred(e) {
			out = append(out, e)
		}
	}
	return out
}

func (r *recorder) wait(t *testing.T, n int, timeout time.Duration, pred func(map[string]any) bool) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := r.find(pred)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			r.mu.Lock()
			all, _ := json.MarshalIndent(r.events, "", " ")
			r.mu.Unlock()
			t.Fatalf("timed out waiting for %d events, have %d; all events:\n%s", n, len(got), all)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func is(ev string, kv ...any) func(map[string]any) bool {
	return func(m map[string]any) bool {
		if m["event"] != ev {
			return false
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if fmt.Sprint(m[kv[i].(string)]) != fmt.Sprint(kv[i+1]) {
				return false
			}
		}
		return true
	}
}

func shResolver(cmd []string) (*Exec, error) {
	switch {
	case len(cmd) > 0 && cmd[0] == "sh":
		return &Exec{Binary: "/bin/sh", Path: "/bin/sh", Argv: cmd}, nil
	case len(cmd) > 0:
		return nil, &ErrUnavailable{Command: cmd[0]}
	}
	return nil, fmt.Errorf("no command")
}

func startRunner(t *testing.T, dir string) (*Runner, *recorder, string) {
	t.Helper()
	rec := &recorder{}
	state := filepath.Join(t.TempDir(), "pods.json")
	r := New(Options{
		ManifestDir: dir, Period: 50 * time.Millisecond, NodeName: "node1",
		BackoffBase: 100 * time.Millisecond, StateFile: state, PodLogDir: filepath.Join(t.TempDir(), "pods"),
		PodDataDir: t.TempDir(), Resolve: shResolver, Emit: rec.emit,
		Logf: func(level, f string, a ...any) { t.Logf(level+": "+f, a...) },
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("runner did not stop")
		}
	})
	return r, rec, state
}

func manifest(name, script string, extra string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: kube-system
  labels: {component: %s}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: %s
    image: test
    command: [sh, -c, %q]
%s`, name, name, name, script, extra)
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestRunnerCrashLoopBackoff(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "crash.yaml"), manifest("crash", "echo starting; echo 'E1123 run.go:72] \"command failed\" err=\"boom\"' >&2; exit 3", ""))
	_, rec, state := startRunner(t, dir)
	exits := rec.wait(t, 5, 30*time.Second, is("pod_exited", "pod", "crash-node1"))
	if exits[0]["code"] != 3 || exits[0]["reason"] != "Error" || !strings.Contains(fmt.Sprint(exits[0]["error"]), "boom") {
		t.Fatalf("exit %v", exits[0])
	}
	starts := rec.find(is("pod_started", "pod", "crash-node1"))
	// Gaps before restarts 1..4: at once, then 100ms, 200ms, 400ms. Load on the machine
	// can only lengthen a gap: the backoff is checked from below (20ms of timer slack),
	// and from above only against a runaway (5s).
	for i, want := range []time.Duration{0, 100, 200, 400} {
		gap := starts[i+1]["t"].(time.Time).Sub(exits[i]["t"].(time.Time))
		lo := want * time.Millisecond
		if gap < lo-20*time.Millisecond || gap > lo+5*time.Second {
			t.Errorf("restart %d after %v, want at least %v (and not seconds more)", i+1, gap, lo)
		}
	}
	if starts[3]["restarts"] != 3 {
		t.Errorf("restarts %v", starts[3]["restarts"])
	}
	var st PodsState
	data, _ := os.ReadFile(state)
	if err := json.Unmarshal(data, &st); err != nil || len(st.Pods) != 1 {
		t.Fatalf("state %s: %v", data, err)
	}
	p := st.Pods[0]
	if p.Pod != "crash-node1" || p.Namespace != "kube-system" || p.LastExit == nil || p.LastExit.Code != 3 || p.Restarts < 4 || p.Component != "crash" {
		t.Fatalf("pod state %+v", p)
	}
	if p.State == "waiting" && p.Reason != "CrashLoopBackOff" && p.Reason != "Error" {
		t.Fatalf("waiting reason %q", p.Reason)
	}
}

func TestRunnerManifestChangeAndRemoval(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "app.yaml")
	write(t, f, manifest("app", "echo v1; exec sleep 60", ""))
	_, rec, _ := startRunner(t, dir)
	s1 := rec.wait(t, 1, 30*time.Second, is("pod_started", "pod", "app-node1"))[0]
	pid1 := s1["pid"].(int)

	// Rewriting the same pod with other formatting is no change.
	write(t, f, "# same pod\n"+manifest("app", "echo v1; exec sleep 60", ""))
	time.Sleep(300 * time.Millisecond)
	if n := len(rec.find(is("pod_started"))); n != 1 || !alive(pid1) {
		t.Fatalf("a reformatted manifest restarted the pod (%d starts)", n)
	}

	write(t, f, manifest("app", "echo v2; exec sleep 60", ""))
	rec.wait(t, 1, 30*time.Second, is("manifest_changed", "change", "modified", "pod", "app-node1"))
	s2 := rec.wait(t, 2, 30*time.Second, is("pod_started", "pod", "app-node1"))[1]
	stop := rec.wait(t, 1, 30*time.Second, is("pod_exited", "pod", "app-node1", "stop_reason", "manifest changed"))[0]
	if stop["t"].(time.Time).After(s2["t"].(time.Time)) {
		t.Fatal("the new pod started before the old one ended")
	}
	if alive(pid1) || s2["pid"] == pid1 {
		t.Fatalf("old pid %d still alive", pid1)
	}
	if stop["code"] != 143 { // SIGTERM
		t.Errorf("stop code %v", stop["code"])
	}

	os.Remove(f)
	rec.wait(t, 1, 30*time.Second, is("manifest_changed", "change", "removed"))
	rec.wait(t, 1, 30*time.Second, is("pod_exited", "stop_reason", "manifest removed"))
	if alive(s2["pid"].(int)) {
		t.Fatal("pod of a removed manifest still runs")
	}
}

func TestRunnerGracePeriodThenKill(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "stubborn.yaml")
	write(t, f, manifest("stubborn", "trap '' TERM; echo ready; while :; do sleep 0.1; done", ""))
	_, rec, _ := startRunner(t, dir)
	rec.wait(t, 1, 30*time.Second, is("pod_started"))
	time.Sleep(200 * time.Millisecond)
	t0 := time.Now()
	os.Remove(f)
	e := rec.wait(t, 1, 30*time.Second, is("pod_exited"))[0]
	if d := time.Since(t0); d < 900*time.Millisecond {
		t.Errorf("killed after %v, before the 1s grace period", d)
	}
	if e["code"] != 137 {
		t.Errorf("code %v, want 137 (SIGKILL)", e["code"])
	}
}

func TestRunnerDirectoryRules(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".hidden.yaml"), manifest("hidden", "exec sleep 60", ""))
	if err := os.Mkdir(filepath.Join(dir, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "a.yaml"), manifest("dup", "echo from-a; exec sleep 60", ""))
	write(t, filepath.Join(dir, "a.yaml.bak"), manifest("dup", "echo from-bak; exec sleep 60", ""))
	write(t, filepath.Join(dir, "notes.txt"), "just some notes\n")
	r, rec, state := startRunner(t, dir)
	s := rec.wait(t, 1, 30*time.Second, is("pod_started", "pod", "dup-node1"))[0]
	if s["manifest"] != filepath.Join(dir, "a.yaml.bak") {
		t.Errorf("of two files with one pod the last in name order should run, got %v", s["manifest"])
	}
	ign := rec.wait(t, 3, 30*time.Second, is("manifest_ignored"))
	reasons := map[string]string{}
	for _, e := range ign {
		reasons[filepath.Base(e["file"].(string))] = e["reason"].(string)
	}
	if !strings.Contains(reasons["old"], "is a directory") || !strings.Contains(reasons["a.yaml"], "duplicate pod name kube-system/dup-node1") ||
		!strings.Contains(reasons["notes.txt"], "couldn't parse as pod") {
		t.Fatalf("reasons %q", reasons)
	}
	if len(rec.find(is("pod_started", "pod", "hidden-node1"))) != 0 {
		t.Fatal("a dotfile ran")
	}
	time.Sleep(200 * time.Millisecond) // reported once, not at every scan
	if n := len(rec.find(is("manifest_ignored"))); n != 3 {
		t.Fatalf("%d manifest_ignored events", n)
	}
	r.SyncNow()
	var st PodsState
	data, _ := os.ReadFile(state)
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	// a.yaml, a.yaml.bak, notes.txt, old (.hidden.yaml is not listed)
	if len(st.Files) != 4 || st.Files[0].Status != "duplicate" || st.Files[1].Status != "ok" || st.Files[2].Status != "error" || st.Files[3].Status != "directory" {
		t.Fatalf("files %+v", st.Files)
	}
}

func TestRunnerHostPathCheckAndUnavailable(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "sched.yaml")
	write(t, filepath.Join(dir, "p.yaml"), manifest("p", "exec sleep 60", fmt.Sprintf(`    volumeMounts: [{name: cfg, mountPath: /cfg, readOnly: true}]
  volumes: [{name: cfg, hostPath: {path: %s, type: File}}]
`, cfg)))
	write(t, filepath.Join(dir, "kcm.yaml"), `apiVersion: v1
kind: Pod
metadata: {name: kube-controller-manager, namespace: kube-system}
spec:
  containers: [{name: kcm, image: i, command: [kube-controller-manager, --v=2]}]
`)
	_, rec, state := startRunner(t, dir)
	e := rec.wait(t, 1, 30*time.Second, is("pod_hostpath_error", "pod", "p-node1"))[0]
	if e["volume"] != "cfg" || e["type"] != "File" || !strings.Contains(e["error"].(string), "is not a file") {
		t.Fatalf("%v", e)
	}
	time.Sleep(100 * time.Millisecond)
	var st PodsState
	data, _ := os.ReadFile(state)
	_ = json.Unmarshal(data, &st)
	for _, p := range st.Pods {
		if p.Pod == "p-node1" && (p.State != "waiting" || p.Reason != "HostPathError") {
			t.Fatalf("pod %+v", p)
		}
	}
	if len(rec.find(is("pod_started", "pod", "p-node1"))) != 0 {
		t.Fatal("started without its volume")
	}
	write(t, cfg, "x")
	rec.wait(t, 1, 30*time.Second, is("pod_started", "pod", "p-node1"))
	sk := rec.wait(t, 1, 30*time.Second, is("pod_skipped", "pod", "kube-controller-manager-node1"))[0]
	if !strings.Contains(sk["reason"].(string), "kube-controller-manager is not available") {
		t.Fatalf("%v", sk)
	}
}

func TestRunnerLogsAndEnv(t *testing.T) {
	dir := t.TempDir()
	logDir := filepath.Join(t.TempDir(), "pods")
	rec := &recorder{}
	r := New(Options{ManifestDir: dir, Period: 50 * time.Millisecond, NodeName: "n", PodLogDir: logDir,
		Resolve: shResolver, Emit: rec.emit, BackoffBase: time.Hour})
	write(t, filepath.Join(dir, "e.yaml"), manifest("e", "echo \"A=$A B=$B H=$FILE_HASH\"; echo oops >&2; exit 0", `    args: ["$(A)"]
    env:
    - {name: A, value: one}
    - {name: B, value: "$(A)-two"}
    - {name: FILE_HASH, value: abc}
    - {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
  restartPolicy: OnFailure
`))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx)
	s := rec.wait(t, 1, 30*time.Second, is("pod_started"))[0]
	if s["file_hash"] != "abc" {
		t.Errorf("file_hash %v", s["file_hash"])
	}
	e := rec.wait(t, 1, 30*time.Second, is("pod_exited"))[0]
	if e["code"] != 0 || e["reason"] != "Completed" {
		t.Fatalf("%v", e)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(rec.find(is("pod_started"))); n != 1 {
		t.Fatalf("OnFailure restarted a completed container (%d starts)", n)
	}
	files, _ := filepath.Glob(filepath.Join(logDir, "kube-system_e-n_*", "e", "0.log"))
	if len(files) != 1 {
		t.Fatalf("log files %v", files)
	}
	data, _ := os.ReadFile(files[0])
	if !strings.Contains(string(data), " stdout F A=one B=one-two H=abc") || !strings.Contains(string(data), " stderr F oops") {
		t.Fatalf("log:\n%s", data)
	}
}
