package launcher

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"baremetal.k3s/tests/kube/internal/configfile"
	"baremetal.k3s/tests/kube/internal/supervisor"
	"baremetal.k3s/tests/kube/internal/token"
)

// serverToken holds a server's secrets: the server password (the token's
// password part, which also keys the bootstrap data) and the agents' one.
type serverToken struct {
	password  string
	agent     string // --agent-token's password; "" = the server password
	generated bool   // no token given or stored: a random one was made
}

func (t serverToken) agentPassword() string {
	if t.agent != "" {
		return t.agent
	}
	return t.password
}

// readTokenArg is --token, else the content of --token-file (k3s reads the
// file only when no token is given).
func readTokenArg(v *configfile.Values, name string) (string, error) {
	if t := v.String(name); t != "" {
		return t, nil
	}
	f := v.String(name + "-file")
	if f == "" {
		return "", nil
	}
	data, err := os.ReadFile(f)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}

// resolveServerToken: --token/--token-file/K3S_TOKEN (full K10 token or bare
// password), else <data-dir>/server/token from an earlier start, else a new
// random password (16 bytes hex, as k3s); --agent-token likewise, if given.
func resolveServerToken(v *configfile.Values, serverDir string) (serverToken, error) {
	var t serverToken
	agentRaw, err := readTokenArg(v, "agent-token")
	if err != nil {
		return t, err
	}
	if agentRaw != "" {
		if t.agent, err = token.Normalize(agentRaw); err != nil {
			return t, err
		}
	}
	raw, err := readTokenArg(v, "token")
	if err != nil {
		return t, err
	}
	if raw == "" {
		data, err := os.ReadFile(filepath.Join(serverDir, "token"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return t, err
		}
		raw = strings.TrimSpace(string(data))
	}
	if raw == "" {
		t.generated = true
		t.password, err = token.Random(16)
		return t, err
	}
	t.password, err = token.Normalize(raw)
	return t, err
}

// writePasswd sets the supervisor's users in <data-dir>/server/cred/passwd:
// "server" (k3s:server) with the server password, "node" (k3s:agent) with
// the agents' (pkg/daemons/control/deps genUsers).
func writePasswd(path, program string, t serverToken) error {
	p, err := supervisor.ReadPasswd(path)
	if err != nil {
		return err
	}
	p.EnsureUser("server", program+supervisor.ServerGroup, t.password)
	p.EnsureUser("node", program+supervisor.AgentGroup, t.agentPassword())
	return p.Write(path)
}

// writeTokenFiles writes <data-dir>/server/token (K10<CA hash>::server:<pw>,
// mode 0600), node-token as a symlink to it (k3s's "backwards
// compatibility" link) and, with --agent-token, agent-token.
func writeTokenFiles(serverDir string, t serverToken, serverCA []byte) (string, error) {
	path := filepath.Join(serverDir, "token")
	if err := writeToken(path, "server:"+t.password, serverCA); err != nil {
		return "", err
	}
	np := filepath.Join(serverDir, "node-token")
	if fi, err := os.Lstat(np); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		if err := os.RemoveAll(np); err != nil {
			return "", err
		}
		if err := os.Symlink(path, np); err != nil {
			return "", err
		}
	}
	if t.agent != "" {
		if err := writeToken(filepath.Join(serverDir, "agent-token"), "node:"+t.agent, serverCA); err != nil {
			return "", err
		}
	}
	return path, nil
}

func writeToken(path, creds string, serverCA []byte) error {
	full, err := token.Format(creds, serverCA)
	if err != nil {
		return fmt.Errorf("formatting %s: %w", path, err)
	}
	return writeFileAtomic(path, []byte(full+"\n"), 0o600)
}
