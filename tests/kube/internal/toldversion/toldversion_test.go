package toldversion

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestParse(t *testing.T) {
	bin := []byte("\x7fELF\x00\x01binary bytes\xff")
	cases := []struct {
		name    string
		tail    []byte
		ok      bool
		version string
		fail    bool
	}{
		{"plain", append(append([]byte{}, bin...), "\n#baremetal-k3s-double version=v1.37.0+k3s1\n"...), true, "v1.37.0+k3s1", false},
		{"fail", append(append([]byte{}, bin...), "\n#baremetal-k3s-double version=v1.37.0+k3s1 fail=start\n"...), true, "v1.37.0+k3s1", true},
		{"fail first", []byte("x\n#baremetal-k3s-double fail=start version=v1.35.2+k3s1\n"), true, "v1.35.2+k3s1", true},
		{"rke2", []byte("x\n#baremetal-k3s-double version=v1.37.0+rke2r1\n"), true, "v1.37.0+rke2r1", false},
		{"prerelease", []byte("x\n#baremetal-k3s-double version=v1.37.0-rc1+k3s1\n"), true, "v1.37.0-rc1+k3s1", false},
		{"twice told: last wins", []byte("x\n#baremetal-k3s-double version=v1.35.0+k3s1\n\n#baremetal-k3s-double version=v1.37.0+k3s1\n"), true, "v1.37.0+k3s1", false},
		{"no trailer", bin, false, "", false},
		{"empty", nil, false, "", false},
		{"no final newline", []byte("x\n#baremetal-k3s-double version=v1.37.0+k3s1"), false, "", false},
		{"not after a newline", []byte("#baremetal-k3s-double version=v1.37.0+k3s1\n"), false, "", false},
		{"not the last line", []byte("x\n#baremetal-k3s-double version=v1.37.0+k3s1\nmore\n"), false, "", false},
		{"no version", []byte("x\n#baremetal-k3s-double fail=start\n"), false, "", false},
		{"marker only", []byte("x\n#baremetal-k3s-double\n"), false, "", false},
		{"empty version", []byte("x\n#baremetal-k3s-double version=\n"), false, "", false},
		{"no v", []byte("x\n#baremetal-k3s-double version=1.37.0+k3s1\n"), false, "", false},
		{"two parts", []byte("x\n#baremetal-k3s-double version=v1.37+k3s1\n"), false, "", false},
		{"junk suffix", []byte("x\n#baremetal-k3s-double version=v1.37.0+k3s1;rm\n"), false, "", false},
		{"version twice", []byte("x\n#baremetal-k3s-double version=v1.37.0+k3s1 version=v1.38.0+k3s1\n"), false, "", false},
		{"unknown field", []byte("x\n#baremetal-k3s-double version=v1.37.0+k3s1 fail=stop\n"), false, "", false},
		{"double space", []byte("x\n#baremetal-k3s-double  version=v1.37.0+k3s1\n"), false, "", false},
		{"other marker", []byte("x\n#baremetal-k3s-doubles version=v1.37.0+k3s1\n"), false, "", false},
		{"crlf", []byte("x\r\n#baremetal-k3s-double version=v1.37.0+k3s1\r\n"), false, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Parse(c.tail)
			if ok != c.ok || got.Version != c.version || got.FailStart != c.fail {
				t.Fatalf("Parse(%q) = %+v, %v; want version %q fail %v ok %v", c.tail, got, ok, c.version, c.fail, c.ok)
			}
			if ok && got.Line == "" {
				t.Fatalf("Parse(%q): no Line", c.tail)
			}
		})
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := bytes.Repeat([]byte{0xab}, 3*TailSize)
	told := write("told", append(append([]byte{}, big...), "\n#baremetal-k3s-double version=v1.37.1+k3s2 fail=start\n"...))
	if got, ok := Read(told); !ok || got.Version != "v1.37.1+k3s2" || !got.FailStart {
		t.Fatalf("Read(told) = %+v, %v", got, ok)
	}
	small := write("small", []byte("\n#baremetal-k3s-double version=v1.35.0+k3s1\n"))
	if got, ok := Read(small); !ok || got.Version != "v1.35.0+k3s1" {
		t.Fatalf("Read(small) = %+v, %v", got, ok)
	}
	// A trailer line longer than the tail read is not a trailer.
	long := write("long", append(append([]byte{}, big...), ("\n#baremetal-k3s-double version=v1.37.0+k3s1."+string(bytes.Repeat([]byte("a"), TailSize))+"\n")...))
	if got, ok := Read(long); ok {
		t.Fatalf("Read(long) = %+v, want not told", got)
	}
	if got, ok := Read(write("plain", big)); ok {
		t.Fatalf("Read(plain) = %+v, want not told", got)
	}
	if got, ok := Read(filepath.Join(dir, "missing")); ok {
		t.Fatalf("Read(missing) = %+v", got)
	}
	if got, ok := Read(dir); ok {
		t.Fatalf("Read(dir) = %+v", got)
	}
}
