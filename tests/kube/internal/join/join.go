// Package join is the agent side of the double's k3s join: derive the
// supervisor URL from --server, download the cluster CA from /cacerts and
// check it against the token's hash (k3s-io/k3s pkg/clientaccess), then,
// authenticated as the token's "node" user, read the server's agent
// configuration and get a kubelet client certificate for a key of its own.
package join

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"baremetal.k3s/tests/kube/internal/supervisor"
	"baremetal.k3s/tests/kube/internal/token"
)

const timeout = 10 * time.Second

// SupervisorURL is where the double's supervisor answers for --server:
// the server URL with the API server's port (apiPort, k3s's 6443) replaced
// by the supervisor's; any other port (RKE2's 9345) is used as given.
func SupervisorURL(server string, apiPort, supervisorPort int) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", fmt.Errorf("Invalid server url, failed to parse: %s: %w", server, err)
	}
	if u.Scheme != "https" {
		return "", fmt.Errorf("only https:// URLs are supported, invalid scheme: %s", server)
	}
	port := u.Port()
	if port == "" || port == strconv.Itoa(apiPort) {
		port = strconv.Itoa(supervisorPort)
	}
	return "https://" + net.JoinHostPort(u.Hostname(), port), nil
}

// Session is a validated connection to a supervisor.
type Session struct {
	Program  string
	BaseURL  string
	Token    token.Info // Username is "node", as k3s's agent sets it
	CACerts  []byte
	NodeName string
	Password string // the node password header (/etc/rancher/node/password)
	// PasswordFile is where Password comes from (named when it is refused).
	PasswordFile string
	client       *http.Client
}

// Open parses the token, downloads the CA bundle and validates it against
// the token's hash (ParseAndValidateToken with WithUser("node")).
func Open(ctx context.Context, program, baseURL, tok, nodeName, nodePassword string) (*Session, error) {
	info, err := token.Parse(tok)
	if err != nil {
		return nil, err
	}
	info.Username = "node"
	ca, err := FetchCA(ctx, baseURL)
	if err != nil {
		return nil, err
	}
	if err := info.ValidateCA(ca); err != nil {
		return nil, err
	}
	return &Session{Program: program, BaseURL: baseURL, Token: info, CACerts: ca,
		NodeName: nodeName, Password: nodePassword, client: httpClient(ca)}, nil
}

func httpClient(ca []byte) *http.Client {
	cfg := &tls.Config{}
	if ca != nil {
		cfg.RootCAs = x509.NewCertPool()
		cfg.RootCAs.AppendCertsFromPEM(ca)
	} else {
		cfg.InsecureSkipVerify = true
	}
	return &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
}

// FetchCA is k3s's getCACerts: the CA bundle from /cacerts, fetched without
// verification, then fetched again verifying the server with that bundle.
// A server whose certificate the system trusts needs no bundle (nil).
func FetchCA(ctx context.Context, baseURL string) ([]byte, error) {
	u := strings.TrimRight(baseURL, "/") + "/cacerts"
	if _, err := get(ctx, &http.Client{Timeout: timeout}, u, nil); err == nil {
		return nil, nil
	}
	ca, err := get(ctx, httpClient(nil), u, nil)
	if err != nil {
		return nil, fmt.Errorf("failed to get CA certs: %w", err)
	}
	if _, err := get(ctx, httpClient(ca), u, nil); err != nil {
		return nil, fmt.Errorf("CA cert validation failed: %w", err)
	}
	return ca, nil
}

func get(ctx context.Context, c *http.Client, u string, prep func(*http.Request)) ([]byte, error) {
	return do(ctx, c, http.MethodGet, u, nil, prep)
}

func do(ctx context.Context, c *http.Client, method, u string, body []byte, prep func(*http.Request)) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if prep != nil {
		prep(req)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &HTTPError{URL: u, Status: resp.Status, Code: resp.StatusCode}
	}
	return data, nil
}

// HTTPError is a supervisor's non-2xx answer: "<url>: <status>", as k3s's
// agent reports it.
type HTTPError struct {
	URL, Status string
	Code        int
}

func (e *HTTPError) Error() string { return e.URL + ": " + e.Status }

func (s *Session) url(name string) string {
	return strings.TrimRight(s.BaseURL, "/") + "/v1-" + s.Program + "/" + name
}

func (s *Session) basicAuth(r *http.Request) { r.SetBasicAuth(s.Token.Username, s.Token.Password) }

func (s *Session) nodeHeaders(r *http.Request) {
	s.basicAuth(r)
	r.Header.Set(s.Program+"-Node-Name", s.NodeName)
	r.Header.Set(s.Program+"-Node-Password", s.Password)
}

// Config reads /v1-<program>/config.
func (s *Session) Config(ctx context.Context) (supervisor.AgentConfig, error) {
	var c supervisor.AgentConfig
	data, err := get(ctx, s.client, s.url("config"), s.basicAuth)
	if err != nil {
		return c, fmt.Errorf("failed to retrieve configuration from server: %w", err)
	}
	return c, json.Unmarshal(data, &c)
}

// File reads /v1-<program>/<name> (client-ca.crt, server-ca.crt).
func (s *Session) File(ctx context.Context, name string) ([]byte, error) {
	return get(ctx, s.client, s.url(name), s.basicAuth)
}

// ClientKubelet sends a certificate request for key and returns the
// certificate chain the server signed (system:node:<name>).
func (s *Session) ClientKubelet(ctx context.Context, key crypto.Signer) ([]byte, error) {
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:" + s.NodeName, Organization: []string{supervisor.NodesGroup}},
	}, key)
	if err != nil {
		return nil, err
	}
	out, err := do(ctx, s.client, http.MethodPost, s.url("client-kubelet.crt"), csr, s.nodeHeaders)
	var he *HTTPError
	if errors.As(err, &he) && he.Code == http.StatusForbidden {
		// k3s pkg/agent/config/config.go getNodeNamedCrt
		return nil, fmt.Errorf("Node password rejected, duplicate hostname or contents of '%s' may not match server node-passwd entry, try enabling a unique node name with the --with-node-id flag", s.PasswordFile)
	}
	return out, err
}
