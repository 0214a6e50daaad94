// Package podrunner is the static-pod part of a kubelet, for the test
// doubles: it watches a manifest directory as the kubelet's file source does
// and runs each pod's first container, checking hostPath volumes, restarting
// with the kubelet's back-off, replacing a pod whose manifest changed and
// stopping one whose manifest is gone. Containers run in a mount-namespace
// sandbox (package sandbox) that shows them only what the pod mounts.
package podrunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"baremetal.k3s/tests/kube/internal/pod"
)

// Options configure a Runner.
type Options struct {
	ManifestDir string
	// Period between directory scans (the kubelet: fileCheckFrequency, 20s,
	// plus inotify; the double polls only).
	Period      time.Duration
	NodeName    string
	BackoffBase time.Duration // 10s
	BackoffMax  time.Duration // 5m
	StateFile   string        // pods.json; "" writes none
	PodLogDir   string        // CRI-format container logs (/var/log/pods); "" writes none
	// PodDataDir holds emptyDir volumes (/var/lib/kubelet/pods).
	PodDataDir string
	Resolve    Resolver
	// Self is this binary, re-executed as the sandbox helper.
	Self string
	// Sandbox runs containers in a mount namespace; false runs the command
	// directly on the host (unit tests without root).
	Sandbox     bool
	SandboxRoot string
	// Emit appends an event to the events file.
	Emit func(event string, fields map[string]any)
	// Logf logs one line at level info, warning or error.
	Logf func(level, format string, a ...any)
	// Output receives the containers' output lines, prefixed with the pod.
	Output io.Writer
	// Component tags the process for logs ("kubelet", "rke2").
	Component string
}

// Runner runs the static pods of one manifest directory.
type Runner struct {
	o Options

	mu          sync.Mutex
	workers     map[string]*worker // by namespace/fullName
	dying       []*worker
	files       []FileStatus
	reported    map[string]string // file -> last problem reported
	dirProblem  string
	unavailable map[string]bool // commands already reported as unavailable
	startedAt   time.Time

	stateMu sync.Mutex
}

// FileStatus is one directory entry the runner saw.
type FileStatus struct {
	File   string `json:"file"`
	Status string `json:"status"` // ok | error | directory | duplicate
	Pod    string `json:"pod,omitempty"`
	UID    string `json:"uid,omitempty"`
	Error  string `json:"error,omitempty"`
}

// New returns a runner; Run starts it.
func New(o Options) *Runner {
	if o.Period <= 0 {
		o.Period = 2 * time.Second
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = DefaultBackoffBase
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = o.BackoffBase * (DefaultBackoffMax / DefaultBackoffBase)
	}
	if o.Emit == nil {
		o.Emit = func(string, map[string]any) {}
	}
	if o.Logf == nil {
		o.Logf = func(string, string, ...any) {}
	}
	if o.Output == nil {
		o.Output = io.Discard
	}
	if o.PodDataDir == "" {
		o.PodDataDir = "/var/lib/kubelet/pods"
	}
	return &Runner{o: o, workers: map[string]*worker{}, reported: map[string]string{}, unavailable: map[string]bool{}}
}

// Run scans at once, then every Period, until ctx is done; then it stops
// every pod (SIGTERM, SIGKILL after the grace period) and returns.
func (r *Runner) Run(ctx context.Context) {
	r.startedAt = time.Now()
	r.o.Logf("info", "Watching path %s for static pods (every %s)", r.o.ManifestDir, r.o.Period)
	t := time.NewTicker(r.o.Period)
	defer t.Stop()
	r.sync()
	for {
		select {
		case <-ctx.Done():
			r.stopAll("shutdown")
			return
		case <-t.C:
			r.sync()
		}
	}
}

// SyncNow scans the directory once (tests, and writers that know they
// changed a manifest).
func (r *Runner) SyncNow() { r.sync() }

func (r *Runner) stopAll(reason string) {
	r.mu.Lock()
	var all []*worker
	for _, w := range r.workers {
		all = append(all, w)
	}
	all = append(all, r.dying...)
	r.workers = map[string]*worker{}
	r.dying = nil
	r.mu.Unlock()
	for _, w := range all {
		w.stop(reason)
	}
	for _, w := range all {
		<-w.done
	}
	r.writeState()
}

type scanned struct {
	file string
	d    *pod.Decoded
}

// maxConfigLength is the kubelet's limit on a manifest's size.
const maxConfigLength = 10 << 20

// scan reads the manifest path as the kubelet's file source does
// (listConfig/extractFromDir): every entry whose name does not start with
// ".", in name order; directories and unreadable or invalid files are
// reported and skipped. A missing path yields no pods.
func (r *Runner) scan() ([]scanned, []FileStatus, error) {
	st, err := os.Stat(r.o.ManifestDir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil, errors.New("path does not exist, ignoring")
		}
		return nil, nil, err
	}
	var paths []string
	if st.Mode().IsRegular() {
		paths = []string{r.o.ManifestDir}
	} else if st.IsDir() {
		paths, err = filepath.Glob(filepath.Join(r.o.ManifestDir, "[^.]*"))
		if err != nil {
			return nil, nil, fmt.Errorf("glob failed: %v", err)
		}
		sort.Strings(paths)
	} else {
		return nil, nil, errors.New("path is not a directory or file")
	}
	var out []scanned
	var files []FileStatus
	for _, p := range paths {
		fst, err := os.Stat(p)
		if err != nil {
			files = append(files, FileStatus{File: p, Status: "error", Error: "Could not get metadata: " + err.Error()})
			continue
		}
		switch {
		case fst.IsDir():
			files = append(files, FileStatus{File: p, Status: "directory", Error: "Provided manifest path is a directory, not recursing into manifest path"})
		case fst.Mode().IsRegular():
			d, err := readManifest(p, r.o.NodeName)
			if err != nil {
				if os.IsNotExist(err) { // gone between glob and read
					continue
				}
				files = append(files, FileStatus{File: p, Status: "error", Error: "Could not process manifest file: " + err.Error()})
				continue
			}
			files = append(files, FileStatus{File: p, Status: "ok", Pod: d.Key(), UID: d.UID})
			out = append(out, scanned{file: p, d: d})
		default:
			files = append(files, FileStatus{File: p, Status: "error", Error: fmt.Sprintf("Manifest path is not a directory or file (mode %s)", fst.Mode())})
		}
	}
	return out, files, nil
}

func readManifest(p, node string) (*pod.Decoded, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigLength+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigLength {
		return nil, fmt.Errorf("%s: file too large (over %d bytes)", p, maxConfigLength)
	}
	return pod.Decode(data, p, node)
}

func (r *Runner) sync() {
	found, files, err := r.scan()
	if err != nil {
		msg := err.Error()
		r.mu.Lock()
		changed := r.dirProblem != msg
		r.dirProblem = msg
		r.mu.Unlock()
		if changed {
			r.o.Logf("error", "Unable to read config path %s: %s", r.o.ManifestDir, msg)
		}
	} else {
		r.mu.Lock()
		r.dirProblem = ""
		r.mu.Unlock()
	}

	// The kubelet keeps one pod per namespace/name: of several files with the
	// same pod, the last in name order is the one it runs.
	desired := map[string]scanned{}
	winner := map[string]string{}
	for _, s := range found {
		desired[s.d.Key()] = s
		winner[s.d.Key()] = s.file
	}
	for i := range files {
		f := &files[i]
		if f.Status == "ok" && winner[f.Pod] != f.File {
			f.Status = "duplicate"
			f.Error = fmt.Sprintf("duplicate pod name %s: %s is used instead", f.Pod, winner[f.Pod])
		}
	}
	r.reportFiles(files)

	r.mu.Lock()
	// reap stopped workers
	alive := r.dying[:0]
	for _, w := range r.dying {
		select {
		case <-w.done:
		default:
			alive = append(alive, w)
		}
	}
	r.dying = alive
	keys := make([]string, 0, len(r.workers))
	for k := range r.workers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		w := r.workers[key]
		s, ok := desired[key]
		switch {
		case !ok:
			r.o.Logf("info", "Static pod %s removed (manifest %s gone or invalid); stopping it", key, w.file)
			r.o.Emit("manifest_changed", map[string]any{"change": "removed", "file": w.file, "pod": w.d.FullName, "namespace": w.d.Namespace, "old_uid": w.d.UID})
			delete(r.workers, key)
			r.dying = append(r.dying, w)
			go w.stop("manifest removed")
		case s.d.UID != w.d.UID:
			r.o.Logf("info", "Static pod %s changed (manifest %s); replacing it", key, s.file)
			f := map[string]any{"change": "modified", "file": s.file, "old_file": w.file,
				"pod": s.d.FullName, "namespace": s.d.Namespace, "old_uid": w.d.UID, "uid": s.d.UID}
			if h := w.fileHash(); h != "" {
				f["old_file_hash"] = h
			}
			if h := fileHashOf(s.d); h != "" {
				f["file_hash"] = h
			}
			r.o.Emit("manifest_changed", f)
			r.dying = append(r.dying, w)
			go w.stop("manifest changed")
			nw := r.newWorker(s, w)
			r.workers[key] = nw
			go nw.run()
		}
	}
	dkeys := make([]string, 0, len(desired))
	for k := range desired {
		dkeys = append(dkeys, k)
	}
	sort.Strings(dkeys)
	for _, key := range dkeys {
		if _, ok := r.workers[key]; ok {
			continue
		}
		s := desired[key]
		f := map[string]any{"change": "added", "file": s.file, "pod": s.d.FullName, "namespace": s.d.Namespace, "uid": s.d.UID}
		if h := fileHashOf(s.d); h != "" {
			f["file_hash"] = h
		}
		r.o.Emit("manifest_changed", f)
		nw := r.newWorker(s, nil)
		r.workers[key] = nw
		go nw.run()
	}
	r.files = files
	r.mu.Unlock()
	r.writeState()
}

// reportFiles logs and records each problem file once per distinct problem.
func (r *Runner) reportFiles(files []FileStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, f := range files {
		seen[f.File] = true
		if f.Status == "ok" {
			delete(r.reported, f.File)
			continue
		}
		if r.reported[f.File] == f.Error {
			continue
		}
		r.reported[f.File] = f.Error
		r.o.Logf("error", "%s: %s", f.File, f.Error)
		r.o.Emit("manifest_ignored", map[string]any{"file": f.File, "reason": f.Error, "status": f.Status})
	}
	for f := range r.reported {
		if !seen[f] {
			delete(r.reported, f)
		}
	}
}

func fileHashOf(d *pod.Decoded) string {
	if len(d.Pod.Spec.Containers) == 0 {
		return ""
	}
	return d.Pod.Spec.Containers[0].EnvValue("FILE_HASH")
}

// PodsState is the runner's state file (pods.json).
type PodsState struct {
	ManifestDir string       `json:"manifest_dir"`
	NodeName    string       `json:"node_name"`
	RunnerPID   int          `json:"runner_pid"`
	Component   string       `json:"component"`
	StartedAt   string       `json:"started_at"`
	UpdatedAt   string       `json:"updated_at"`
	Period      string       `json:"period"`
	Sandbox     bool         `json:"sandbox"`
	DirError    string       `json:"dir_error,omitempty"`
	Files       []FileStatus `json:"files"`
	Pods        []PodStatus  `json:"pods"`
}

// State returns the runner's current state.
func (r *Runner) State() PodsState {
	r.mu.Lock()
	ws := make([]*worker, 0, len(r.workers)+len(r.dying))
	for _, w := range r.workers {
		ws = append(ws, w)
	}
	ws = append(ws, r.dying...)
	files := append([]FileStatus{}, r.files...)
	dirErr := r.dirProblem
	r.mu.Unlock()
	st := PodsState{
		ManifestDir: r.o.ManifestDir, NodeName: r.o.NodeName, RunnerPID: os.Getpid(), Component: r.o.Component,
		StartedAt: stamp(r.startedAt), UpdatedAt: stamp(time.Now()), Period: r.o.Period.String(),
		Sandbox: r.o.Sandbox, DirError: dirErr, Files: files, Pods: []PodStatus{},
	}
	if st.Files == nil {
		st.Files = []FileStatus{}
	}
	for _, w := range ws {
		st.Pods = append(st.Pods, w.status())
	}
	sort.SliceStable(st.Pods, func(i, j int) bool {
		if st.Pods[i].Namespace+"/"+st.Pods[i].Pod != st.Pods[j].Namespace+"/"+st.Pods[j].Pod {
			return st.Pods[i].Namespace+"/"+st.Pods[i].Pod < st.Pods[j].Namespace+"/"+st.Pods[j].Pod
		}
		return st.Pods[i].State == "terminating" // the replaced one first
	})
	return st
}

func (r *Runner) writeState() {
	if r.o.StateFile == "" {
		return
	}
	st := r.State()
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return
	}
	r.stateMu.Lock()
	defer r.stateMu.Unlock()
	if err := os.MkdirAll(filepath.Dir(r.o.StateFile), 0o755); err != nil {
		r.o.Logf("warning", "pods state file: %v", err)
		return
	}
	tmp := r.o.StateFile + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		r.o.Logf("warning", "pods state file: %v", err)
		return
	}
	if err := os.Rename(tmp, r.o.StateFile); err != nil {
		r.o.Logf("warning", "pods state file: %v", err)
	}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// reportUnavailable reports a command the double cannot run once per runner.
func (r *Runner) reportUnavailable(cmd string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unavailable[cmd] {
		return false
	}
	r.unavailable[cmd] = true
	return true
}

func containerName(d *pod.Decoded) string {
	if len(d.Pod.Spec.Containers) == 0 {
		return ""
	}
	return d.Pod.Spec.Containers[0].Name
}

func joinCmd(c *pod.Container) []string {
	return append(append([]string{}, c.Command...), c.Args...)
}
