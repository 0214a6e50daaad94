// Package supervisor is the double's imitation of the k3s supervisor's
// join endpoints (k3s-io/k3s pkg/server/handlers): /cacerts, /ping and,
// behind the token's basic auth, /v1-<program>/config, client-kubelet.crt,
// client-ca.crt, server-ca.crt, apiservers and readyz. It serves them on a
// port of its own (the real supervisor shares 6443 with the API server).
package supervisor

import (
	"crypto/subtle"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// User is one line of k3s's server/cred/passwd: password,user,uid,groups.
type User struct {
	Password string
	Name     string
	UID      string
	Groups   []string
}

// Passwd is the supervisor's password file, by user name.
type Passwd map[string]User

// ReadPasswd reads a passwd file; a missing file is an empty Passwd.
func ReadPasswd(path string) (Passwd, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return Passwd{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	p := Passwd{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return p, nil
		}
		if err != nil {
			return nil, err
		}
		if len(rec) < 3 {
			return nil, fmt.Errorf("password file '%s' must have at least 3 columns (password, user name, user uid), found %d", path, len(rec))
		}
		u := User{Password: rec[0], Name: rec[1], UID: rec[2]}
		if len(rec) > 3 && rec[3] != "" {
			u.Groups = strings.Split(rec[3], ",")
		}
		p[u.Name] = u
	}
}

// EnsureUser sets name's password and group (k3s: "server" in k3s:server,
// "node" in k3s:agent).
func (p Passwd) EnsureUser(name, group, password string) {
	p[name] = User{Password: password, Name: name, UID: name, Groups: []string{group}}
}

// Write writes the file (mode 0600), users in name order.
func (p Passwd) Write(path string) error {
	names := make([]string, 0, len(p))
	for n := range p {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	w := csv.NewWriter(&b)
	for _, n := range names {
		u := p[n]
		if err := w.Write([]string{u.Password, u.Name, u.UID, strings.Join(u.Groups, ",")}); err != nil {
			return err
		}
	}
	w.Flush()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Authenticate checks a basic-auth user and password; it returns the user's
// groups (plus system:authenticated, as k3s's authenticator adds it).
func (p Passwd) Authenticate(name, password string) ([]string, bool) {
	u, ok := p[name]
	if !ok || subtle.ConstantTimeCompare([]byte(u.Password), []byte(password)) != 1 {
		return nil, false
	}
	return append(append([]string{}, u.Groups...), "system:authenticated"), true
}
