package launcher

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"baremetal.k3s/tests/kube/internal/kubeapi"
)

// ContainerRuntimeVersion is what the double's nodes report as their
// runtime (k3s's bundled containerd; nothing runs containers here).
const ContainerRuntimeVersion = "containerd://2.1.5-k3s1"

func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// osImage is PRETTY_NAME of /etc/os-release, as the kubelet reports it.
func osImage() string {
	f, err := os.Open("/etc/os-release")
	if err != nil {
		return "Unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return "Unknown"
}

// memTotalKi is MemTotal of /proc/meminfo in KiB ("0" when unknown).
func memTotalKi() string {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return "0"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			return strings.TrimSuffix(strings.TrimSpace(v), " kB")
		}
	}
	return "0"
}

// diskKi is the size of the file system holding dir, in KiB.
func diskKi(dir string) string {
	var s syscall.Statfs_t
	if err := syscall.Statfs(dir, &s); err != nil {
		return "0"
	}
	return strconv.FormatUint(s.Blocks*uint64(s.Bsize)/1024, 10)
}

// nodeInfo is the NodeSystemInfo the kubelet would report for this host.
func nodeInfo(kubeletVersion string) *kubeapi.NodeInfo {
	machine := readTrimmed("/etc/machine-id")
	return &kubeapi.NodeInfo{
		MachineID: machine, SystemUUID: machine,
		BootID:                  readTrimmed("/proc/sys/kernel/random/boot_id"),
		KernelVersion:           readTrimmed("/proc/sys/kernel/osrelease"),
		OSImage:                 osImage(),
		ContainerRuntimeVersion: ContainerRuntimeVersion,
		KubeletVersion:          kubeletVersion,
		OperatingSystem:         runtime.GOOS,
		Architecture:            runtime.GOARCH,
	}
}

// capacity is the node's cpu, memory, pods and ephemeral storage.
func capacity(dataDir string) map[string]string {
	return map[string]string{
		"cpu":               strconv.Itoa(runtime.NumCPU()),
		"memory":            memTotalKi() + "Ki",
		"pods":              "110",
		"ephemeral-storage": diskKi(dataDir) + "Ki",
	}
}
