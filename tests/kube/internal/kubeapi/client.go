// Package kubeapi is a small REST client of the Kubernetes API (JSON over
// HTTPS with a client certificate), enough for the double's node agent to
// register and keep up a Node and its Lease as the kubelet does, without
// compiling client-go into every test of the launcher.
package kubeapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// Client talks to one API server.
type Client struct {
	Base string
	HTTP *http.Client
}

// NewFromFiles is a client with a CA bundle and a client certificate and key.
func NewFromFiles(base, caFile, certFile, keyFile string) (*Client, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s: no certificate", caFile)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}}
	return &Client{Base: strings.TrimRight(base, "/"), HTTP: &http.Client{Timeout: 15 * time.Second, Transport: tr}}, nil
}

// StatusError is a non-2xx answer, with the API's Status reason and message.
type StatusError struct {
	Code    int
	Reason  string
	Message string
}

func (e *StatusError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("HTTP %d %s", e.Code, e.Reason)
}

func code(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// IsNotFound: the API answered 404, as client-go's errors.IsNotFound.
func IsNotFound(err error) bool { return code(err) == http.StatusNotFound }

// IsAlreadyExists: a create met an existing object (409 AlreadyExists).
func IsAlreadyExists(err error) bool {
	return code(err) == http.StatusConflict && reason(err) == "AlreadyExists"
}

func reason(err error) string {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Reason
	}
	return ""
}

// Content types of PATCH.
const (
	MergePatch     = "application/merge-patch+json"
	StrategicPatch = "application/strategic-merge-patch+json"
)

// Do sends body (JSON-encoded unless nil) and decodes a 2xx answer into out
// (when non-nil). contentType defaults to application/json.
func (c *Client) Do(ctx context.Context, method, path string, body any, contentType string, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return err
	}
	if contentType == "" {
		contentType = "application/json"
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		se := &StatusError{Code: resp.StatusCode}
		var st struct{ Reason, Message string }
		if json.Unmarshal(data, &st) == nil {
			se.Reason, se.Message = st.Reason, st.Message
		}
		if se.Message == "" {
			se.Message = fmt.Sprintf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(data)))
		}
		return se
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// Get is Do with GET.
func (c *Client) Get(ctx context.Context, path string, out any) error {
	return c.Do(ctx, http.MethodGet, path, nil, "", out)
}
