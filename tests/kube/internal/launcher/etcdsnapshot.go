// `k3s etcd-snapshot save|ls|delete` and the server side of it (k3s's
// pkg/cli/etcdsnapshot and pkg/etcd/snapshot_handler.go): the command asks
// the server's supervisor (POST /db/snapshot, as the token's "server"
// user), and the server takes the snapshot of its etcd member with the etcd
// client (etcdutl's snapshot Save) into <data-dir>/server/db/snapshots.

package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"baremetal.k3s/tests/kube/internal/configfile"
)

// snapshotRequest is k3s's etcd.SnapshotRequest.
type snapshotRequest struct {
	Operation string          `json:"operation"`
	Name      []string        `json:"name,omitempty"`
	Dir       *string         `json:"dir,omitempty"`
	Compress  *bool           `json:"compress,omitempty"`
	Retention *int            `json:"retention,omitempty"`
	S3        json.RawMessage `json:"s3,omitempty"`
}

// snapshotResult is k3s's managed.SnapshotResult.
type snapshotResult struct {
	Created []string `json:"created,omitempty"`
	Deleted []string `json:"deleted,omitempty"`
}

// snapshotFile is one row of `etcd-snapshot ls` (the fields of k3s's
// ETCDSnapshotFile the table shows).
type snapshotFile struct {
	Name     string    `json:"name"`
	Location string    `json:"location"`
	NodeName string    `json:"nodeName"`
	Size     int64     `json:"size"`
	Created  time.Time `json:"creationTime"`
}

func (e *managedEtcd) snapshotDir(req *snapshotRequest) (string, error) {
	dir := e.snapDir
	if req.Dir != nil && *req.Dir != "" {
		dir = *req.Dir
	}
	if dir == "" {
		dir = e.self.paths.snapshotDir()
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return dir, os.MkdirAll(dir, 0o700)
}

// serveSnapshot is /db/snapshot.
func (e *managedEtcd) serveSnapshot(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		httpError(w, http.StatusMethodNotAllowed, errors.New("method not allowed"))
		return
	}
	var req snapshotRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		httpError(w, http.StatusBadRequest, fmt.Errorf("decoding the snapshot request: %w", err))
		return
	}
	if len(req.S3) > 0 && string(req.S3) != "null" {
		httpError(w, http.StatusBadRequest, errors.New("etcd snapshots on S3 are not imitated by the double"))
		return
	}
	if req.Compress != nil && *req.Compress {
		httpError(w, http.StatusBadRequest, errors.New("compressed etcd snapshots are not imitated by the double"))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Minute)
	defer cancel()
	var out any
	var err error
	switch req.Operation {
	case "save":
		out, err = e.saveSnapshot(ctx, &req)
	case "list":
		out, err = e.listSnapshots(&req)
	case "delete":
		out, err = e.deleteSnapshots(&req)
	default:
		err = fmt.Errorf("etcd snapshot operation %q is not imitated by the double (save, list and delete are)", req.Operation)
	}
	if err != nil {
		errorf("etcd snapshot %s: %v", req.Operation, err)
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// saveSnapshot takes an on-demand snapshot named <name>-<node>-<unix time>
// (k3s skips it on a learner).
func (e *managedEtcd) saveSnapshot(ctx context.Context, req *snapshotRequest) (*snapshotResult, error) {
	res := &snapshotResult{}
	st, err := e.client.Status(ctx, e.self.localURL())
	if err != nil {
		return nil, fmt.Errorf("failed to check etcd status for snapshot: %w", err)
	}
	if st.IsLearner {
		warnf("Unable to take snapshot: not supported for learner")
		return res, nil
	}
	dir, err := e.snapshotDir(req)
	if err != nil {
		return nil, fmt.Errorf("failed to get etcd-snapshot-dir: %w", err)
	}
	name := "on-demand"
	if len(req.Name) > 0 && req.Name[0] != "" {
		name = req.Name[0]
	}
	file := snapshotFileName(name, e.node, time.Now())
	path := filepath.Join(dir, file)
	infof("Saving etcd snapshot to %s", path)
	if err := e.client.Snapshot(ctx, path); err != nil {
		return nil, fmt.Errorf("failed to save snapshot: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, err
	}
	var size int64
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	e.st.event("etcd_snapshot_saved", map[string]any{"name": file, "path": path, "size": size, "member": e.self.name})
	res.Created = append(res.Created, file)
	return res, nil
}

func (e *managedEtcd) listSnapshots(req *snapshotRequest) ([]snapshotFile, error) {
	dir, err := e.snapshotDir(req)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := []snapshotFile{}
	for _, de := range entries {
		fi, err := de.Info()
		if err != nil || !fi.Mode().IsRegular() || strings.HasSuffix(de.Name(), ".part") {
			continue
		}
		out = append(out, snapshotFile{Name: de.Name(), Location: "file://" + filepath.Join(dir, de.Name()),
			NodeName: e.node, Size: fi.Size(), Created: fi.ModTime().UTC().Round(time.Second)})
	}
	return out, nil
}

func (e *managedEtcd) deleteSnapshots(req *snapshotRequest) (*snapshotResult, error) {
	dir, err := e.snapshotDir(req)
	if err != nil {
		return nil, err
	}
	res := &snapshotResult{}
	for _, n := range req.Name {
		if n == "" || strings.ContainsRune(n, '/') || n == "." || n == ".." {
			continue
		}
		if err := os.Remove(filepath.Join(dir, n)); err == nil {
			infof("Removing local snapshot %s", filepath.Join(dir, n))
			res.Deleted = append(res.Deleted, n)
		}
	}
	return res, nil
}

// etcdSnapshotFlags are k3s's (pkg/cli/cmds/etcd_snapshot.go).
var etcdSnapshotFlags = []configfile.Flag{
	{Name: "debug", Kind: configfile.Bool, EnvVar: "K3S_DEBUG"},
	{Name: "config,c", EnvVar: configfile.ConfigEnv, Default: configfile.DefaultConfigFile},
	{Name: "log,l"},
	{Name: "alsologtostderr", Kind: configfile.Bool},
	{Name: "node-name", EnvVar: "K3S_NODE_NAME"},
	{Name: "data-dir,d"},
	{Name: "etcd-token,t"},
	{Name: "etcd-server,s", Default: "https://127.0.0.1:6443"},
	{Name: "dir,etcd-snapshot-dir"},
	{Name: "name", Default: "on-demand"},
	{Name: "snapshot-compress,etcd-snapshot-compress", Kind: configfile.Bool},
	{Name: "snapshot-retention,etcd-snapshot-retention", Kind: configfile.Int, Default: "5"},
	{Name: "s3,etcd-s3", Kind: configfile.Bool},
	{Name: "s3-endpoint,etcd-s3-endpoint", Default: "s3.amazonaws.com"},
	{Name: "s3-endpoint-ca,etcd-s3-endpoint-ca"},
	{Name: "s3-skip-ssl-verify,etcd-s3-skip-ssl-verify", Kind: configfile.Bool},
	{Name: "s3-access-key,etcd-s3-access-key", EnvVar: "AWS_ACCESS_KEY_ID"},
	{Name: "s3-secret-key,etcd-s3-secret-key", EnvVar: "AWS_SECRET_ACCESS_KEY"},
	{Name: "s3-session-token,etcd-s3-session-token", EnvVar: "AWS_SESSION_TOKEN"},
	{Name: "s3-bucket,etcd-s3-bucket"},
	{Name: "s3-bucket-lookup-type,etcd-s3-bucket-lookup-type"},
	{Name: "s3-region,etcd-s3-region", Default: "us-east-1"},
	{Name: "s3-retention,etcd-s3-retention", Kind: configfile.Int, Default: "5"},
	{Name: "s3-folder,etcd-s3-folder"},
	{Name: "s3-proxy,etcd-s3-proxy"},
	{Name: "s3-config-secret,etcd-s3-config-secret"},
	{Name: "s3-insecure,etcd-s3-insecure", Kind: configfile.Bool},
	{Name: "s3-timeout,etcd-s3-timeout", Kind: configfile.Duration, Default: "5m0s"},
	{Name: "output,o"},
}

// RunEtcdSnapshot is `k3s etcd-snapshot <save|ls|delete> [flags]` (argv from
// the program name).
func RunEtcdSnapshot(argv []string, stdout *os.File) int {
	if err := runEtcdSnapshot(argv, stdout); err != nil {
		fatalf("Error: %v", err)
		return 1
	}
	return 0
}

func runEtcdSnapshot(argv []string, stdout *os.File) error {
	if len(argv) < 3 || strings.HasPrefix(argv[2], "-") {
		return errors.New("etcd-snapshot: give a subcommand: save, ls (list, l), delete; prune is not imitated")
	}
	sub := argv[2]
	switch sub {
	case "save", "delete":
	case "ls", "list", "l":
		sub = "list"
	default:
		return fmt.Errorf("etcd-snapshot %s is not imitated by the double (save, ls and delete are)", sub)
	}
	parser := &configfile.Parser{
		After:         []string{"server", "agent", "etcd-snapshot:1"},
		ConfigFlags:   []string{"--config", "-c"},
		OverrideFlags: []string{"--help", "-h", "--version", "-v"},
		EnvName:       configfile.ConfigEnv,
		DefaultConfig: configfile.DefaultConfigFile,
		ValidFlags:    map[string][]string{"etcd-snapshot": configfile.FlagNames(etcdSnapshotFlags)},
		Warnf:         warnf,
	}
	parts, err := parser.ParseParts(argv)
	if err != nil {
		return err
	}
	if parts == nil {
		return errors.New("etcd-snapshot: no subcommand")
	}
	v, err := configfile.Parse(etcdSnapshotFlags, append(append([]string{}, parts.File...), parts.CLI...))
	if err != nil {
		return fmt.Errorf("Incorrect Usage: %w", err)
	}
	if v.Bool("s3") {
		return errors.New("etcd snapshots on S3 are not imitated by the double")
	}
	if v.Bool("snapshot-compress") {
		return errors.New("compressed etcd snapshots are not imitated by the double")
	}
	req := snapshotRequest{Operation: sub}
	switch sub {
	case "save":
		if len(v.Args) > 0 {
			return errors.New("this command does not take any arguments")
		}
		req.Name = []string{v.String("name")}
		zero := 0
		req.Retention = &zero // save never prunes (k3s sets retention 0)
	case "delete":
		if len(v.Args) == 0 {
			return errors.New("no snapshots given for removal")
		}
		req.Name = v.Args
	}
	if v.Set["dir"] {
		d := v.String("dir")
		req.Dir = &d
	}
	dataDir := v.String("data-dir")
	if dataDir == "" {
		dataDir = configfile.DefaultDataDir
	}
	tok := v.String("etcd-token")
	if tok == "" {
		data, err := os.ReadFile(filepath.Join(dataDir, "server", "token"))
		if err != nil {
			return err
		}
		tok = strings.TrimRight(string(data), "\n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sess, err := openSupervisor(ctx, v.String("etcd-server"), tok)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(req)
	data, err := sess.do(ctx, http.MethodPost, "/db/snapshot", body)
	if err != nil {
		return fmt.Errorf("see server log for details: %w", err)
	}
	switch sub {
	case "save", "delete":
		var res snapshotResult
		if err := json.Unmarshal(data, &res); err != nil {
			return err
		}
		for _, n := range res.Created {
			infof("Snapshot %s saved.", n)
		}
		for _, n := range res.Deleted {
			infof("Snapshot %s deleted.", n)
		}
		if sub == "delete" {
			for _, n := range req.Name {
				if !contains(res.Deleted, n) {
					warnf("Snapshot %s not found.", n)
				}
			}
		}
	case "list":
		var files []snapshotFile
		if err := json.Unmarshal(data, &files); err != nil {
			return err
		}
		sort.Slice(files, func(i, j int) bool {
			if files[i].Created.Equal(files[j].Created) {
				return files[i].Name < files[j].Name
			}
			return files[i].Created.Before(files[j].Created)
		})
		if v.String("output") == "json" {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "    ")
			return enc.Encode(map[string]any{"kind": "List", "items": files})
		}
		w := tabwriter.NewWriter(stdout, 0, 0, 1, ' ', 0)
		fmt.Fprint(w, "Name\tLocation\tSize\tCreated\n")
		for _, f := range files {
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", f.Name, f.Location, f.Size, f.Created.Format(time.RFC3339))
		}
		return w.Flush()
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
