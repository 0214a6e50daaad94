// Package toldversion reads the version a built k3s double is told to
// report. Tests that upgrade a node from one k3s version to another need
// two binaries that report different versions; the double's components stay
// the real Kubernetes it was built with, so the version is only a label:
// a copy of the binary with one trailer line appended (tell-version.sh),
//
//	\n#baremetal-k3s-double version=v1.37.0+k3s1\n
//	\n#baremetal-k3s-double version=v1.37.0+k3s1 fail=start\n
//
// reports that version (k3s --version, the start log line, the Nodes'
// kubeletVersion) and, with fail=start, refuses to start as a server or
// agent (a binary that cannot run on this node). An ELF executable runs
// unchanged with bytes appended after its last section.
package toldversion

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
)

// Marker starts the trailer line.
const Marker = "#baremetal-k3s-double"

// FailStart is the field that makes `server` and `agent` exit at once.
const FailStart = "fail=start"

// TailSize is how many bytes at the end of the file are read: the trailer
// must fit (anything longer is not a trailer).
const TailSize = 512

// Told is what a trailer says.
type Told struct {
	Version   string // e.g. v1.37.0+k3s1
	FailStart bool
	Line      string // the trailer line as found, without newlines
}

var versionRE = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$`)

// Parse reads the trailer from the last bytes of a file (tail). ok is false
// when there is none or it is malformed: no "\n<Marker> ...\n" as the last
// line, a field other than version=<v> (once) and fail=start (at most once),
// or a version that is not vX.Y.Z with an optional -/+ suffix.
func Parse(tail []byte) (t Told, ok bool) {
	if !bytes.HasSuffix(tail, []byte("\n")) {
		return Told{}, false
	}
	body := tail[:len(tail)-1]
	nl := bytes.LastIndexByte(body, '\n')
	if nl < 0 { // the line must follow a newline (the binary's end)
		return Told{}, false
	}
	line := string(body[nl+1:])
	fields := strings.Split(line, " ")
	if fields[0] != Marker || len(fields) < 2 {
		return Told{}, false
	}
	t.Line = line
	for _, f := range fields[1:] {
		switch {
		case strings.HasPrefix(f, "version=") && t.Version == "":
			t.Version = strings.TrimPrefix(f, "version=")
			if !versionRE.MatchString(t.Version) {
				return Told{}, false
			}
		case f == FailStart && !t.FailStart:
			t.FailStart = true
		default:
			return Told{}, false
		}
	}
	if t.Version == "" {
		return Told{}, false
	}
	return t, true
}

// Read parses the trailer of the file at path (its last TailSize bytes).
func Read(path string) (Told, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Told{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return Told{}, false
	}
	n := fi.Size()
	if n > TailSize {
		n = TailSize
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, fi.Size()-n); err != nil && err != io.EOF {
		return Told{}, false
	}
	return Parse(buf)
}

// Self is the trailer of the running executable (/proc/self/exe).
func Self() (Told, bool) { return Read("/proc/self/exe") }
