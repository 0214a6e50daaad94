package launcher

import (
	"context"
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

// resolveServerToken: --token/K3S_TOKEN, replaced by the contents of
// --token-file/K3S_TOKEN_FILE when that is given (waited for, see tokenArg)
// (a full K10 token or a bare password), else <data-dir>/server/token from an
// earlier start, else a new random password (16 bytes hex, as k3s);
// --agent-token likewise (--agent-token-file read first, as k3s does).
func resolveServerToken(ctx context.Context, v *configfile.Values, serverDir string, onWait func(string)) (serverToken, error) {
	var t serverToken
	agentRaw, err := tokenArg(ctx, v, "agent-token", onWait)
	if err != nil {
		return t, err
	}
	if agentRaw != "" {
		if t.agent, err = token.Normalize(agentRaw); err != nil {
			return t, err
		}
	}
	raw, err := tokenArg(ctx, v, "token", onWait)
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
