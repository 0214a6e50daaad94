package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// OldSchedulerName is the second, older real kube-scheduler (module
// tests/kube/scheduler127, v1.27.16) that build.sh puts next to k3s.
const OldSchedulerName = "kube-scheduler-1.27"

// OldSchedulerVersion is the Kubernetes it really is.
const OldSchedulerVersion = "v1.27.16"

// toldOldMinor matches a told version of the old scheduler's minor (v1.27.x).
var toldOldMinor = regexp.MustCompile(`^v1\.27\.[0-9]+([-+].*)?$`)

// schedulerBinary is the kube-scheduler a k3s server runs: this binary's own
// (Kubernetes K8sVersion, argv "kube-scheduler" first) unless it is told a
// v1.27 version; then the real kube-scheduler v1.27.16, found as
// kube-scheduler-1.27 beside the launcher's executable (self), so that an
// upgrade test from a "v1.27" binary to a "v1.36" one crosses a real
// scheduler version change (an old scheduler config in v1beta2/v1beta3 is
// read by the old one and refused by the new one). A told v1.27 without that
// file is an error: the launcher does not quietly run the new scheduler.
func schedulerBinary(self string) (path string, argv []string, version string, err error) {
	if !told || !toldOldMinor.MatchString(Told.Version) {
		return self, []string{"kube-scheduler"}, K8sVersion, nil
	}
	old := filepath.Join(filepath.Dir(self), OldSchedulerName)
	if fi, statErr := os.Stat(old); statErr != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", nil, "", fmt.Errorf("this binary is told %s, so it runs the real kube-scheduler %s, but %s is not an "+
			"executable file (put %s of the kube build beside %s)", Told.Version, OldSchedulerVersion, old, OldSchedulerName, self)
	}
	return old, nil, OldSchedulerVersion, nil
}
