package proctitle

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestHelperProcess is the child of TestSetHidesTheArguments: it hides its
// arguments and waits on stdin, so that the parent reads its cmdline.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("PROCTITLE_HELPER") != "1" {
		t.Skip("only as the child of TestSetHidesTheArguments")
	}
	Save()
	Set(Hidden("server"))
	os.Stdout.WriteString("ready\n")
	buf := make([]byte, 1)
	os.Stdin.Read(buf)
	// the program's own copies of its arguments and environment are intact
	if !strings.Contains(strings.Join(os.Args, " "), "--token=s3cret") || os.Getenv("PROCTITLE_HELPER") != "1" {
		os.Exit(3)
	}
	os.Exit(0)
}

func TestSetHidesTheArguments(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=TestHelperProcess", "--", "--token=s3cret", "--data-dir=/var/lib/rancher/k3s")
	cmd.Env = append(os.Environ(), "PROCTITLE_HELPER=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 6)
	if _, err := stdout.Read(line); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cmdline")
	env, eerr := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ")
	stdin.Write([]byte("x"))
	stdin.Close()
	if werr := cmd.Wait(); werr != nil {
		t.Fatalf("child: %v", werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := os.Args[0] + " server"
	fields := bytes.Split(bytes.TrimRight(raw, "\x00"), []byte{0})
	if len(fields) != 1 || string(fields[0]) != want {
		t.Fatalf("cmdline %q: want %q then NUL bytes only", raw, want)
	}
	if bytes.Contains(raw, []byte("s3cret")) {
		t.Fatalf("cmdline still shows the token: %q", raw)
	}
	if eerr != nil || len(env) == 0 || len(bytes.Trim(env, "\x00")) != 0 {
		t.Fatalf("environ %q (%v): want NUL bytes only, as gspt leaves it", env, eerr)
	}
}
