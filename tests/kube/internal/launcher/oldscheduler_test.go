package launcher

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"baremetal.k3s/tests/kube/internal/toldversion"
)

func TestSchedulerBinary(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "k3s")
	old := filepath.Join(dir, OldSchedulerName)

	// built (no trailer): this binary's own kube-scheduler
	path, argv, version, err := schedulerBinary(self)
	if err != nil || path != self || strings.Join(argv, " ") != "kube-scheduler" || version != K8sVersion {
		t.Fatalf("built: %q %q %q %v", path, argv, version, err)
	}
	for _, v := range []string{"v1.28.15+k3s1", "v1.36.3+k3s1", "v1.2.7+k3s1", "v1.270.1+k3s1"} {
		tellForTest(t, toldversion.Told{Version: v})
		if path, _, version, err := schedulerBinary(self); err != nil || path != self || version != K8sVersion {
			t.Fatalf("told %s: %q %q %v, want the built scheduler", v, path, version, err)
		}
	}

	// told v1.27: the old scheduler beside the executable, or an error naming it
	tellForTest(t, toldversion.Told{Version: "v1.27.16+k3s1"})
	if _, _, _, err := schedulerBinary(self); err == nil || !strings.Contains(err.Error(), old) {
		t.Fatalf("told v1.27 without %s: err %v", old, err)
	}
	if err := os.WriteFile(old, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := schedulerBinary(self); err == nil {
		t.Fatalf("told v1.27 with a non-executable %s: no error", old)
	}
	if err := os.Chmod(old, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v1.27.16+k3s1", "v1.27.0", "v1.27.3-rc1+k3s2"} {
		tellForTest(t, toldversion.Told{Version: v})
		path, argv, version, err := schedulerBinary(self)
		if err != nil || path != old || len(argv) != 0 || version != OldSchedulerVersion {
			t.Fatalf("told %s: %q %q %q %v, want %s with no subcommand", v, path, argv, version, err, old)
		}
	}
}
