package launcher

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is one component process. Its output goes to the launcher's stderr,
// line by line, and its last lines are kept to explain an exit.
type child struct {
	name    string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
	mu      sync.Mutex
	tail    []string
	started time.Time
}

const tailLines = 40

// ChildArgv0, when set, is argv[0] of the components this binary runs as
// its own children ("rke2" under `k3s rke2 server`, so that they report
// RKE2's version as they do under `rke2 server`).
var ChildArgv0 string

// startChild runs path args in its own process group, killed if the launcher
// dies (Pdeathsig), with NOTIFY_SOCKET removed from its environment.
func startChild(name, path string, args []string, dir string) (*child, error) {
	cmd := exec.Command(path, args...)
	if ChildArgv0 != "" && len(args) > 0 && (args[0] == "kube-apiserver" || args[0] == "kube-scheduler" || args[0] == "kube-controller-manager") {
		cmd.Args[0] = ChildArgv0 // this binary again, under the launcher's name
	}
	cmd.Dir = dir
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "NOTIFY_SOCKET=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin = nil
	cmd.Stdout = w
	cmd.Stderr = w
	c := &child{name: name, cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	c.started = time.Now()
	w.Close()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		c.copy(r)
	}()
	go func() {
		err := cmd.Wait()
		select { // let the output drain, but do not hang on a leaked pipe
		case <-copied:
		case <-time.After(2 * time.Second):
		}
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(c.done)
	}()
	return c, nil
}

func (c *child) copy(r io.ReadCloser) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			if !strings.HasSuffix(line, "\n") {
				line += "\n"
			}
			logMu.Lock()
			os.Stderr.WriteString(line)
			logMu.Unlock()
			c.mu.Lock()
			c.tail = append(c.tail, strings.TrimRight(line, "\n"))
			if len(c.tail) > tailLines {
				c.tail = c.tail[len(c.tail)-tailLines:]
			}
			c.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) exitErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// reason describes why the child exited: its exit status and the last line
// of its output that looks like an error.
func (c *child) reason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	status := "exit status 0"
	if c.err != nil {
		status = c.err.Error()
	}
	last := ""
	for i := len(c.tail) - 1; i >= 0; i-- {
		l := strings.TrimSpace(c.tail[i])
		if l == "" {
			continue
		}
		if last == "" {
			last = l
		}
		if strings.HasPrefix(l, "E") || strings.Contains(strings.ToLower(l), "error") {
			last = l
			break
		}
	}
	if last == "" {
		return status
	}
	return fmt.Sprintf("%s: %s", status, last)
}

// stop sends SIGTERM to the child's process group, then SIGKILL after grace.
func (c *child) stop(grace time.Duration) {
	select {
	case <-c.done:
		return
	default:
	}
	pgid := c.pid()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(grace):
		warnf("%s did not stop within %s, killing it", c.name, grace)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-c.done
	}
}
