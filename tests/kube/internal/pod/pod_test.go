package pod

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustDecode(t *testing.T, data, file, node string) *Decoded {
	t.Helper()
	d, err := Decode([]byte(data), file, node)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return d
}

func TestDecodeKubeadmManifest(t *testing.T) {
	data, err := os.ReadFile("testdata/kube-scheduler.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := mustDecode(t, string(data), "/etc/kubernetes/manifests/kube-scheduler.yaml", "Node-1")
	if d.FullName != "kube-scheduler-node-1" || d.Namespace != "kube-system" || d.Key() != "kube-system/kube-scheduler-node-1" {
		t.Fatalf("name %q ns %q", d.FullName, d.Namespace)
	}
	c := d.Pod.Spec.Containers[0]
	if c.Command[0] != "kube-scheduler" || len(c.Command) != 6 || c.VolumeMounts[0].MountPath != "/etc/kubernetes/scheduler.conf" || !c.VolumeMounts[0].ReadOnly {
		t.Fatalf("container %+v", c)
	}
	v := d.Pod.VolumeByName("kubeconfig")
	if v == nil || v.HostPath == nil || *v.HostPath.Type != "FileOrCreate" {
		t.Fatalf("volume %+v", v)
	}
	if len(d.UID) != 32 || d.Pod.GracePeriod() != 30 || d.Pod.RestartPolicy() != "Always" {
		t.Fatalf("uid %q grace %d policy %s", d.UID, d.Pod.GracePeriod(), d.Pod.RestartPolicy())
	}
}

func TestUIDFollowsContentNotFormatting(t *testing.T) {
	a := "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - {name: c, image: i, command: [a, b]}\n"
	b := "# a comment\nkind: Pod\napiVersion: v1\nspec:\n  containers:\n    - image: i\n      name: c\n      command: [\"a\", \"b\"]\nmetadata:\n  name: x\n"
	c := strings.Replace(a, "[a, b]", "[a, c]", 1)
	ua := mustDecode(t, a, "/m/x.yaml", "n").UID
	if ub := mustDecode(t, b, "/m/x.yaml", "n").UID; ub != ua {
		t.Errorf("formatting changed the UID: %s %s", ua, ub)
	}
	if uc := mustDecode(t, c, "/m/x.yaml", "n").UID; uc == ua {
		t.Error("a new argument kept the UID")
	}
	if ud := mustDecode(t, a, "/m/y.yaml", "n").UID; ud == ua {
		t.Error("another file kept the UID")
	}
	if ue := mustDecode(t, a, "/m/x.yaml", "other").UID; ue == ua {
		t.Error("another node kept the UID")
	}
	// JSON is YAML too; unknown fields are ignored, as by the kubelet's decoder.
	j := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","whatever":1},"spec":{"containers":[{"name":"c","image":"i"}],"bogus":true}}`
	if _, err := Decode([]byte(j), "/m/j.json", "n"); err != nil {
		t.Fatal(err)
	}
}

func TestDecodeErrors(t *testing.T) {
	for name, tc := range map[string]struct{ data, want string }{
		"not yaml":      {"a: [", "couldn't parse as pod"},
		"no kind":       {"apiVersion: v1\nmetadata: {name: x}\n", "Object 'Kind' is missing"},
		"a deployment":  {"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n", "not a pod"},
		"a list":        {"- a\n- b\n", "not a pod"},
		"no name":       {"apiVersion: v1\nkind: Pod\nspec: {containers: [{name: c, image: i}]}\n", "name is needed"},
		"no containers": {"apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n", "spec.containers: Required value"},
		"no image":      {"apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c}]}\n", "image: Required value"},
		"bad mount": {"apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c, image: i, volumeMounts: [{name: v, mountPath: /v}]}]}\n",
			`volumeMounts[0].name: Not found: "v"`},
		"bad hostPath type": {"apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c, image: i}], volumes: [{name: v, hostPath: {path: /x, type: Fil}}]}\n",
			`hostPath.type: Unsupported value: "Fil"`},
		"upper-case name": {"apiVersion: v1\nkind: Pod\nmetadata: {name: X}\nspec: {containers: [{name: c, image: i}]}\n", "metadata.name: Invalid value"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(tc.data), "/m/f.yaml", "n")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func typ(s string) *string { return &s }

func TestCheckHostPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		path, typ, want string // want: "" ok, else error substring
	}{
		{file, "File", ""},
		{dir, "File", "is not a file"},
		{missing, "File", "is not a file"},
		{dir, "Directory", ""},
		{file, "Directory", "is not a directory"},
		{missing, "Directory", "is not a directory"},
		{file, "FileOrCreate", ""},
		{dir, "FileOrCreate", "is not a file"},
		{file, "DirectoryOrCreate", "is not a directory"},
		{missing, "", ""}, // not checked
		{file, "Socket", "is not a socket file"},
		{file, "CharDevice", "is not a character device"},
		{"/dev/null", "CharDevice", ""},
		{file, "BlockDevice", "is not a block device"},
		{file, "Bogus", "is an invalid volume type"},
	} {
		err := CheckHostPath(&HostPathVolumeSource{Path: tc.path, Type: typ(tc.typ)})
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s %q: %v, want %q", tc.path, tc.typ, err, tc.want)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatal("an unchecked type created the path")
	}
	// The *OrCreate types create what is missing: a directory with its
	// parents, a file only inside an existing directory.
	newDir := filepath.Join(dir, "a", "b")
	if err := CheckHostPath(&HostPathVolumeSource{Path: newDir, Type: typ("DirectoryOrCreate")}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(newDir); err != nil || !st.IsDir() {
		t.Fatalf("DirectoryOrCreate: %v", err)
	}
	newFile := filepath.Join(dir, "new.conf")
	if err := CheckHostPath(&HostPathVolumeSource{Path: newFile, Type: typ("FileOrCreate")}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(newFile); err != nil || !st.Mode().IsRegular() || st.Size() != 0 {
		t.Fatalf("FileOrCreate: %v", err)
	}
	if err := CheckHostPath(&HostPathVolumeSource{Path: filepath.Join(dir, "nodir", "f"), Type: typ("FileOrCreate")}); err == nil {
		t.Fatal("FileOrCreate created a parent directory")
	}

	p := &Pod{Spec: PodSpec{Volumes: []Volume{
		{Name: "ok", HostPath: &HostPathVolumeSource{Path: file, Type: typ("File")}},
		{Name: "scratch", EmptyDir: &EmptyDirVolumeSource{}},
		{Name: "cfg", HostPath: &HostPathVolumeSource{Path: missing, Type: typ("File")}},
	}}}
	herr := CheckHostPaths(p)
	if herr == nil || herr.Volume != "cfg" || herr.Path != missing || herr.Type != "File" ||
		!strings.Contains(herr.Error(), `MountVolume.SetUp failed for volume "cfg" : hostPath type check failed`) {
		t.Fatalf("CheckHostPaths: %v", herr)
	}
}
