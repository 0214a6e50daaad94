//go:build linux

package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary is also the sandbox helper and the program run inside.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == HelperArg {
		os.Exit(Helper(os.Args[2:]))
	}
	if filepath.Base(os.Args[0]) == "sandbox-probe" {
		os.Exit(probe())
	}
	os.Exit(m.Run())
}

type probeReport struct {
	Root      []string          `json:"root"`
	Cmdline   []string          `json:"cmdline"`
	Comm      string            `json:"comm"`
	Cwd       string            `json:"cwd"`
	Env       []string          `json:"env"`
	Reads     map[string]string `json:"reads"`
	WriteErrs map[string]string `json:"write_errs"`
	Exists    map[string]bool   `json:"exists"`
}

// probe reports what the sandboxed process sees.
func probe() int {
	r := probeReport{Reads: map[string]string{}, WriteErrs: map[string]string{}, Exists: map[string]bool{}}
	ents, _ := os.ReadDir("/")
	for _, e := range ents {
		r.Root = append(r.Root, e.Name())
	}
	b, _ := os.ReadFile("/proc/self/cmdline")
	r.Cmdline = strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	c, _ := os.ReadFile("/proc/self/comm")
	r.Comm = strings.TrimSpace(string(c))
	r.Cwd, _ = os.Getwd()
	r.Env = os.Environ()
	for _, p := range []string{"/cfg/sched.yaml", "/etc/hosts"} {
		b, err := os.ReadFile(p)
		if err != nil {
			r.Reads[p] = "ERR " + err.Error()
		} else {
			r.Reads[p] = string(b)
		}
	}
	for _, p := range []string{"/cfg/new", "/data/new", "/sys/kernel/x", "/tmp/x", "/scratch/x"} {
		err := os.WriteFile(p, []byte("x"), 0o644)
		if err == nil {
			r.WriteErrs[p] = ""
		} else {
			var pe *os.PathError
			if errors.As(err, &pe) {
				r.WriteErrs[p] = pe.Err.Error()
			} else {
				r.WriteErrs[p] = err.Error()
			}
		}
	}
	for _, p := range []string{"/etc/passwd", "/usr/local/bin/sandbox-probe", "/proc/1/status", "/dev/null", os.Getenv("HOST_ONLY")} {
		_, err := os.Stat(p)
		r.Exists[p] = err == nil
	}
	out, _ := json.Marshal(r)
	os.Stdout.Write(out)
	return 0
}

func hasCapSysAdmin() bool {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<21) != 0
		}
	}
	return false
}

func TestSandbox(t *testing.T) {
	if os.Geteuid() != 0 || !hasCapSysAdmin() {
		t.Skip("needs root with CAP_SYS_ADMIN")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	host := t.TempDir()
	cfgDir := filepath.Join(host, "cfg")
	dataDir := filepath.Join(host, "data")
	hostOnly := filepath.Join(host, "secret")
	for _, d := range []string{cfgDir, dataDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "sched.yaml"), []byte("kind: KubeSchedulerConfiguration\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hostOnly, []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := &Spec{
		Root: filepath.Join(host, "root"), Binary: self, Path: "/usr/local/bin/sandbox-probe",
		Argv: []string{"sandbox-probe", "--config=/cfg/sched.yaml"}, Env: []string{"PATH=/usr/local/bin", "HOST_ONLY=" + hostOnly},
		Dir: "/data",
		Mounts: []Mount{
			{Source: cfgDir, Target: "/cfg", ReadOnly: true},
			{Source: dataDir, Target: "/data"},
			{Target: "/scratch", Tmpfs: true},
		},
		RuntimeFiles: DefaultRuntimeFiles,
	}
	cmd, errR, errW, err := Command(self, spec)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.CreateTemp(host, "out")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	errW.Close()
	if err := ReadStartError(errR, 10*time.Second); err != nil {
		t.Fatalf("start: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("probe: %v", err)
	}
	data, _ := os.ReadFile(out.Name())
	var r probeReport
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	t.Logf("probe: %s", data)
	if r.Cmdline[0] != "sandbox-probe" || r.Cmdline[1] != "--config=/cfg/sched.yaml" || r.Comm != "sandbox-probe" {
		t.Errorf("cmdline %q comm %q", r.Cmdline, r.Comm)
	}
	root := strings.Join(r.Root, " ")
	for _, want := range []string{"cfg", "data", "dev", "etc", "proc", "scratch", "sys", "tmp", "usr"} {
		if !strings.Contains(" "+root+" ", " "+want+" ") {
			t.Errorf("root lacks %s: %s", want, root)
		}
	}
	if strings.Contains(root, "home") || strings.Contains(root, "var") || strings.Contains(root, "bin ") {
		t.Errorf("root shows host directories: %s", root)
	}
	if r.Cwd != "/data" || r.Reads["/cfg/sched.yaml"] != "kind: KubeSchedulerConfiguration\n" || strings.HasPrefix(r.Reads["/etc/hosts"], "ERR") {
		t.Errorf("cwd %q reads %q", r.Cwd, r.Reads)
	}
	if r.WriteErrs["/cfg/new"] != syscall.EROFS.Error() || r.WriteErrs["/sys/kernel/x"] == "" ||
		r.WriteErrs["/data/new"] != "" || r.WriteErrs["/tmp/x"] != "" || r.WriteErrs["/scratch/x"] != "" {
		t.Errorf("writes %q", r.WriteErrs)
	}
	if b, err := os.ReadFile(filepath.Join(dataDir, "new")); err != nil || string(b) != "x" {
		t.Errorf("a read-write mount did not reach the host: %v", err)
	}
	if r.Exists["/etc/passwd"] || r.Exists[hostOnly] || !r.Exists["/usr/local/bin/sandbox-probe"] || !r.Exists["/proc/1/status"] || !r.Exists["/dev/null"] {
		t.Errorf("exists %v", r.Exists)
	}
	if len(r.Env) != 2 || r.Env[0] != "PATH=/usr/local/bin" {
		t.Errorf("env %q", r.Env)
	}
	// Nothing of the sandbox is left in the host's mount table.
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mounts), host) {
		t.Errorf("sandbox mounts leaked to the host:\n%s", mounts)
	}
}

func TestSandboxStartError(t *testing.T) {
	if os.Geteuid() != 0 || !hasCapSysAdmin() {
		t.Skip("needs root with CAP_SYS_ADMIN")
	}
	self, _ := os.Executable()
	host := t.TempDir()
	spec := &Spec{Root: filepath.Join(host, "root"), Binary: self, Path: "/usr/local/bin/sandbox-probe", Argv: []string{"x"},
		Mounts: []Mount{{Source: filepath.Join(host, "missing"), Target: "/m"}}}
	cmd, errR, errW, err := Command(self, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	errW.Close()
	serr := ReadStartError(errR, 10*time.Second)
	_ = cmd.Wait()
	if serr == nil || !strings.Contains(serr.Error(), "mounting "+filepath.Join(host, "missing")+" at /m") {
		t.Fatalf("start error %v", serr)
	}
	if cmd.ProcessState.ExitCode() != 128 {
		t.Fatalf("exit %d", cmd.ProcessState.ExitCode())
	}
}
