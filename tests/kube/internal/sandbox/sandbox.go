//go:build linux

// Package sandbox runs one static-pod container of the test doubles the way
// a container runtime shows it the host: in a mount namespace of its own
// whose root is an empty tmpfs holding only /proc, /dev, /sys (read-only),
// a fresh /tmp, the runtime's /etc/hosts, /etc/resolv.conf and /etc/hostname,
// the pod's volume mounts and the executable. The process shares the host's
// PID and network namespaces (hostNetwork pods; no pid namespace), so its pid
// and ports are visible on the node as a static pod's are.
//
// The runner starts this binary again as a helper (HelperArg) in a new mount
// namespace; the helper builds the root, chroots into it and execs the
// command, so the pid the runner sees is the command's.
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// HelperArg is the hidden subcommand of the multi-call binary that runs Helper.
const HelperArg = "k3s-double-sandbox-exec"

// DefaultRoot is the directory the helper mounts the new root on (in its own
// mount namespace only; on the host it stays an empty directory).
const DefaultRoot = "/run/k3s-double/sandbox-root"

// Mount is one mount in the sandbox. Source "" with Tmpfs makes a tmpfs.
type Mount struct {
	Source   string `json:"source,omitempty"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
	Tmpfs    bool   `json:"tmpfs,omitempty"`
}

// Spec is what the helper sets up and runs.
type Spec struct {
	Root   string   `json:"root"`   // host dir to mount the root tmpfs on
	Binary string   `json:"binary"` // host path of the executable
	Path   string   `json:"path"`   // where the executable appears in the sandbox
	Argv   []string `json:"argv"`   // argv[0] included
	Env    []string `json:"env"`
	Dir    string   `json:"dir,omitempty"` // working directory in the sandbox
	Mounts []Mount  `json:"mounts"`
	// RuntimeFiles: host files bound read-only at the same path unless a
	// mount already targets that path (/etc/hosts, /etc/resolv.conf, ...).
	RuntimeFiles []string `json:"runtimeFiles,omitempty"`
}

// DefaultRuntimeFiles are the files a container runtime provides to a
// hostNetwork container: the node's resolver and host names.
var DefaultRuntimeFiles = []string{"/etc/hosts", "/etc/resolv.conf", "/etc/hostname"}

// Command returns the command that runs spec through the helper: self
// re-executed with HelperArg in a new mount namespace, in its own process
// group, killed when its parent dies. errR receives the helper's error text
// if it fails before exec and reaches EOF (nothing) when exec succeeded; the
// caller must close errW after Start.
func Command(self string, spec *Spec) (cmd *exec.Cmd, errR, errW *os.File, err error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, nil, nil, err
	}
	errR, errW, err = os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	cmd = exec.Command(self, HelperArg, string(data))
	cmd.Args[0] = filepath.Base(self)
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{errW} // fd 3 in the helper
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS,
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL,
	}
	return cmd, errR, errW, nil
}

// ReadStartError waits for the helper's verdict on errR: nil once exec
// succeeded (the pipe closed on exec), or the error it reported.
func ReadStartError(errR *os.File, timeout time.Duration) error {
	defer errR.Close()
	_ = errR.SetReadDeadline(time.Now().Add(timeout))
	b, err := io.ReadAll(io.LimitReader(errR, 64*1024))
	if len(b) > 0 {
		return errors.New(strings.TrimSpace(string(b)))
	}
	if err != nil {
		return fmt.Errorf("sandbox helper: %w", err)
	}
	return nil
}

// Helper is the helper's main: args[0] is the JSON spec. It returns only on
// failure, after writing the error to fd 3.
func Helper(args []string) int {
	errPipe := os.NewFile(3, "sandbox-errors")
	syscall.CloseOnExec(3)
	fail := func(err error) int {
		msg := "sandbox: " + err.Error()
		if errPipe != nil {
			_, _ = errPipe.WriteString(msg)
		}
		fmt.Fprintln(os.Stderr, msg)
		return 128
	}
	if len(args) != 1 {
		return fail(errors.New("usage: " + HelperArg + " SPEC-JSON"))
	}
	var spec Spec
	if err := json.Unmarshal([]byte(args[0]), &spec); err != nil {
		return fail(err)
	}
	if err := setup(&spec); err != nil {
		return fail(err)
	}
	err := syscall.Exec(spec.Path, spec.Argv, spec.Env)
	return fail(fmt.Errorf("exec %s: %w", spec.Path, err))
}

// setup builds the root and chroots into it (the caller is already in its
// own mount namespace).
func setup(s *Spec) error {
	if len(s.Argv) == 0 || s.Path == "" || s.Binary == "" {
		return errors.New("spec needs binary, path and argv")
	}
	if s.Root == "" {
		s.Root = DefaultRoot
	}
	// Nothing done here may reach the host's mount table.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making / rprivate: %w", err)
	}
	if err := os.MkdirAll(s.Root, 0o755); err != nil {
		return err
	}
	root := s.Root
	if err := syscall.Mount("tmpfs", root, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("mounting the root tmpfs on %s: %w", root, err)
	}
	in := func(p string) string { return filepath.Join(root, filepath.Clean("/"+p)) }

	// The kernel file systems, as a runtime gives them (no pid namespace:
	// the host's /proc is the right one).
	for _, m := range []struct {
		src, dst string
		flags    uintptr
		ro       bool
	}{
		{"/proc", "/proc", syscall.MS_BIND | syscall.MS_REC, false},
		{"/dev", "/dev", syscall.MS_BIND | syscall.MS_REC, false},
		{"/sys", "/sys", syscall.MS_BIND, true},
	} {
		if err := os.MkdirAll(in(m.dst), 0o755); err != nil {
			return err
		}
		if err := syscall.Mount(m.src, in(m.dst), "", m.flags, ""); err != nil {
			return fmt.Errorf("binding %s: %w", m.src, err)
		}
		if m.ro {
			if err := remountRO(in(m.dst)); err != nil {
				return fmt.Errorf("read-only %s: %w", m.dst, err)
			}
		}
	}
	if err := os.MkdirAll(in("/tmp"), 0o1777); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", in("/tmp"), "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("tmpfs /tmp: %w", err)
	}

	// The executable, before the volumes (an image's content is under them).
	if err := bind(s.Binary, in(s.Path), true); err != nil {
		return fmt.Errorf("executable %s at %s: %w", s.Binary, s.Path, err)
	}

	targets := map[string]bool{}
	for _, m := range s.Mounts {
		targets[filepath.Clean(m.Target)] = true
	}
	for _, f := range s.RuntimeFiles {
		if targets[f] {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			continue
		}
		if err := bind(f, in(f), true); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}

	// Volume mounts, parents before children (as runtimes sort them).
	mounts := append([]Mount{}, s.Mounts...)
	sort.SliceStable(mounts, func(i, j int) bool { return depth(mounts[i].Target) < depth(mounts[j].Target) })
	for _, m := range mounts {
		if !filepath.IsAbs(m.Target) {
			return fmt.Errorf("mount target %q is not absolute", m.Target)
		}
		if m.Tmpfs {
			if err := os.MkdirAll(in(m.Target), 0o755); err != nil {
				return err
			}
			flags := uintptr(syscall.MS_NOSUID | syscall.MS_NODEV)
			if m.ReadOnly {
				flags |= syscall.MS_RDONLY
			}
			if err := syscall.Mount("tmpfs", in(m.Target), "tmpfs", flags, "mode=0777"); err != nil {
				return fmt.Errorf("tmpfs %s: %w", m.Target, err)
			}
			continue
		}
		if err := bind(m.Source, in(m.Target), m.ReadOnly); err != nil {
			return fmt.Errorf("mounting %s at %s: %w", m.Source, m.Target, err)
		}
	}

	if err := syscall.Chroot(root); err != nil {
		return fmt.Errorf("chroot %s: %w", root, err)
	}
	dir := s.Dir
	if dir == "" {
		dir = "/"
	}
	if err := os.Chdir(dir); err != nil {
		return fmt.Errorf("working directory %s: %w", dir, err)
	}
	return nil
}

func depth(p string) int {
	return len(strings.Split(strings.Trim(filepath.Clean(p), "/"), "/"))
}

// bind mounts src at dst (creating an empty file or directory to mount on),
// recursively, then makes it read-only when ro.
func bind(src, dst string, ro bool) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if st.IsDir() {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		f.Close()
	}
	if err := syscall.Mount(src, dst, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return err
	}
	if ro {
		return remountRO(dst)
	}
	return nil
}

// remountRO makes the bind mount at dst read-only, keeping the flags the
// kernel will not let a bind remount drop.
func remountRO(dst string) error {
	var sfs syscall.Statfs_t
	keep := uintptr(0)
	if err := syscall.Statfs(dst, &sfs); err == nil {
		for _, f := range []struct{ st, ms uintptr }{ // statfs ST_* bit -> mount MS_* flag
			{2, syscall.MS_NOSUID}, {4, syscall.MS_NODEV}, {8, syscall.MS_NOEXEC},
			{1024, syscall.MS_NOATIME}, {2048, syscall.MS_NODIRATIME}, {4096, syscall.MS_RELATIME},
		} {
			if uintptr(sfs.Flags)&f.st != 0 {
				keep |= f.ms
			}
		}
	}
	return syscall.Mount("", dst, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY|keep, "")
}
