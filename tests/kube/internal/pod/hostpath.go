package pod

import (
	"fmt"
	"os"
)

// CheckHostPath applies a hostPath volume's type check as the kubelet's
// hostPath plugin does before the container starts (pkg/volume/hostpath
// checkTypeInternal): DirectoryOrCreate/FileOrCreate create what is missing
// (0755 directory with parents / empty 0644 file, not its parent), Directory,
// File, Socket, CharDevice, BlockDevice must already be that kind, and an
// unset type is not checked.
func CheckHostPath(hp *HostPathVolumeSource) error {
	t := HostPathUnset
	if hp.Type != nil {
		t = *hp.Type
	}
	path := hp.Path
	st, statErr := os.Stat(path)
	exists := statErr == nil
	mode := os.FileMode(0)
	if exists {
		mode = st.Mode()
	}
	switch t {
	case HostPathUnset:
		return nil
	case HostPathDirectoryOrCreate:
		if !exists {
			if err := os.MkdirAll(path, 0o755); err != nil && !os.IsExist(err) {
				return err
			}
			return nil
		}
		fallthrough
	case HostPathDirectory:
		if !exists || !mode.IsDir() {
			return fmt.Errorf("hostPath type check failed: %s is not a directory", path)
		}
	case HostPathFileOrCreate:
		if !exists {
			f, err := os.OpenFile(path, os.O_CREATE, 0o644)
			if f != nil {
				f.Close()
			}
			if err != nil && !os.IsExist(err) {
				return err
			}
			return nil
		}
		fallthrough
	case HostPathFile:
		if !exists || !mode.IsRegular() {
			return fmt.Errorf("hostPath type check failed: %s is not a file", path)
		}
	case HostPathSocket:
		if !exists || mode&os.ModeSocket == 0 {
			return fmt.Errorf("hostPath type check failed: %s is not a socket file", path)
		}
	case HostPathCharDev:
		if !exists || mode&os.ModeCharDevice == 0 {
			return fmt.Errorf("hostPath type check failed: %s is not a character device", path)
		}
	case HostPathBlockDev:
		if !exists || mode&os.ModeDevice == 0 || mode&os.ModeCharDevice != 0 {
			return fmt.Errorf("hostPath type check failed: %s is not a block device", path)
		}
	default:
		return fmt.Errorf("%s is an invalid volume type", t)
	}
	return nil
}

// HostPathError is a failed hostPath check of one volume.
type HostPathError struct {
	Volume string
	Path   string
	Type   string
	Err    error
}

func (e *HostPathError) Error() string {
	return fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", e.Volume, e.Err)
}

func (e *HostPathError) Unwrap() error { return e.Err }

// CheckHostPaths checks every hostPath volume that a container of the pod
// mounts, in volume order, and returns the first failure. Volumes no
// container mounts are set up by the kubelet too, so they are checked as well.
func CheckHostPaths(p *Pod) *HostPathError {
	for _, v := range p.Spec.Volumes {
		if v.HostPath == nil {
			continue
		}
		if err := CheckHostPath(v.HostPath); err != nil {
			t := ""
			if v.HostPath.Type != nil {
				t = *v.HostPath.Type
			}
			return &HostPathError{Volume: v.Name, Path: v.HostPath.Path, Type: t, Err: err}
		}
	}
	return nil
}
