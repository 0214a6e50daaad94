package supervisor

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
)

// Roles k3s's basic-auth users carry, and the groups allowed to fetch an
// agent's certificates and configuration (pkg/server/handlers/router.go).
const (
	ServerGroup = ":server" // "k3s:server", after the program name
	AgentGroup  = ":agent"  // "k3s:agent"
	NodesGroup  = "system:nodes"
)

// AgentConfig is what /v1-<program>/config tells an agent (a few fields of
// k3s's config.Control, under its field names).
type AgentConfig struct {
	HTTPSPort      int    `json:"HTTPSPort"`
	SupervisorPort int    `json:"SupervisorPort"`
	ClusterDomain  string `json:"ClusterDomain"`
	ClusterIPRange string `json:"ClusterIPRange"`
	ServiceIPRange string `json:"ServiceIPRange"`
	DisableCCM     bool   `json:"DisableCCM"`
}

// Config is what the handler serves.
type Config struct {
	Program    string // "k3s" | "rke2": paths /v1-<program>/..., header <program>-Node-Name
	ServerCA   string // file served at /cacerts and server-ca.crt
	ClientCA   string // file served at client-ca.crt
	Signer     *CA    // the client CA: signs client-kubelet.crt
	Passwd     func() Passwd
	Agent      AgentConfig
	Ready      func() bool     // the API server answers /readyz
	APIServers func() []string // host:port of the API servers
	Logf       func(level, format string, a ...any)
	// NodePasswords checks the node password of client-kubelet.crt
	// requests (nil: sent but not checked).
	NodePasswords *NodePasswords
}

// NewHandler returns the supervisor's handler.
func NewHandler(c Config) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/cacerts", c.file(c.ServerCA))
	mux.HandleFunc("/ping", func(w http.ResponseWriter, _ *http.Request) { text(w, http.StatusOK, "pong") })
	p := "/v1-" + c.Program
	agent := []string{c.Program + AgentGroup, NodesGroup, "system:bootstrappers"}
	mux.Handle(p+"/client-kubelet.crt", c.auth(agent, http.HandlerFunc(c.clientKubelet)))
	mux.Handle(p+"/client-ca.crt", c.auth(agent, c.file(c.ClientCA)))
	mux.Handle(p+"/server-ca.crt", c.auth(agent, c.file(c.ServerCA)))
	mux.Handle(p+"/config", c.auth(agent, http.HandlerFunc(c.config)))
	mux.Handle(p+"/apiservers", c.auth(agent, http.HandlerFunc(c.apiservers)))
	mux.Handle(p+"/readyz", c.auth(agent, http.HandlerFunc(c.readyz)))
	return mux
}

func text(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(code)
	io.WriteString(w, body)
}

func (c Config) logf(level, format string, a ...any) {
	if c.Logf != nil {
		c.Logf(level, format, a...)
	}
}

// auth is k3s's HasRole over basic auth: a wrong password is 401 "not
// authorized", no credentials or none of the roles 403 "forbidden".
func (c Config) auth(roles []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, found := r.BasicAuth()
		if !found {
			text(w, http.StatusForbidden, "forbidden")
			return
		}
		groups, ok := c.Passwd().Authenticate(user, pass)
		if !ok {
			c.logf("error", "Failed to authenticate request from %s: invalid username/password combination", r.RemoteAddr)
			text(w, http.StatusUnauthorized, "not authorized")
			return
		}
		if !hasAny(groups, roles) {
			text(w, http.StatusForbidden, "forbidden")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func hasAny(have, want []string) bool {
	for _, h := range have {
		for _, w := range want {
			if h == w {
				return true
			}
		}
	}
	return false
}

func (c Config) file(path string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		data, err := os.ReadFile(path)
		if err != nil {
			c.logf("error", "failed to read %s: %v", path, err)
			text(w, http.StatusInternalServerError, err.Error())
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write(data)
	}
}

// sendError is k3s's util.SendError: logged, and answered with a
// metav1.Status of the code's reason.
func (c Config) sendError(w http.ResponseWriter, r *http.Request, code int, err error) {
	c.logf("error", "Sending HTTP %d response to %s: %v", code, r.RemoteAddr, err)
	reason := map[int]string{http.StatusBadRequest: "BadRequest", http.StatusUnauthorized: "Unauthorized",
		http.StatusForbidden: "Forbidden", http.StatusServiceUnavailable: "ServiceUnavailable"}[code]
	if reason == "" {
		reason = "InternalError"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": "Failure", "message": err.Error(), "reason": reason, "code": code})
}

// nodeName reads the <program>-Node-Name and -Node-Password headers (both
// required, as k3s's getNodeInfo); the password is checked by NodePasswords.
func (c Config) nodeName(r *http.Request) (string, error) {
	name := r.Header.Get(c.Program + "-Node-Name")
	if name == "" {
		return "", errors.New("node name not set")
	}
	if r.Header.Get(c.Program+"-Node-Password") == "" {
		return "", errors.New("node password not set")
	}
	return strings.ToLower(name), nil
}

// clientKubelet signs the POSTed certificate request (DER) as
// system:node:<name> in system:nodes with the client CA.
func (c Config) clientKubelet(w http.ResponseWriter, r *http.Request) {
	name, err := c.nodeName(r)
	if err != nil {
		text(w, http.StatusBadRequest, err.Error())
		return
	}
	if c.NodePasswords != nil {
		if code, err := c.NodePasswords.Validate(r.Context(), name, r.Header.Get(c.Program+"-Node-Password")); err != nil {
			c.sendError(w, r, code, err)
			return
		}
	}
	if r.Method != http.MethodPost {
		text(w, http.StatusMethodNotAllowed, "the double signs only a POSTed certificate signing request")
		return
	}
	csr, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err == nil {
		var out []byte
		if out, err = c.Signer.SignClient(csr, "system:node:"+name, []string{NodesGroup}); err == nil {
			c.logf("info", "Signed client-kubelet certificate for node %s (%s)", name, r.RemoteAddr)
			w.Header().Set("Content-Type", "text/plain")
			w.Write(out)
			return
		}
	}
	text(w, http.StatusBadRequest, err.Error())
}

func (c Config) config(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(c.Agent)
}

func (c Config) apiservers(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(c.APIServers())
}

func (c Config) readyz(w http.ResponseWriter, _ *http.Request) {
	if c.Ready != nil && !c.Ready() {
		text(w, http.StatusServiceUnavailable, "runtime core not ready")
		return
	}
	text(w, http.StatusOK, "ok")
}
