package supervisor

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The servers' endpoints want the token's "server" user; /db/info also
// answers loopback requests without credentials; an endpoint without a
// handler is not served.
func TestServerRoutes(t *testing.T) {
	p := Passwd{}
	p.EnsureUser("server", "k3s:server", "s3cret")
	p.EnsureUser("node", "k3s:agent", "n0de")
	cfg := Config{Program: "k3s", Passwd: func() Passwd { return p }}
	ok := func(body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) })
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "next", http.StatusTeapot) })
	h := cfg.WithServerRoutes(next, ServerRoutes{Bootstrap: ok("bootstrap"), DBInfo: ok("members")})
	for _, c := range []struct {
		path, remote, user, pw string
		code                   int
		body                   string
	}{
		{"/v1-k3s/server-bootstrap", "192.0.2.9:4000", "server", "s3cret", 200, "bootstrap"},
		{"/v1-k3s/server-bootstrap", "192.0.2.9:4000", "server", "wrong", 401, "not authorized"},
		{"/v1-k3s/server-bootstrap", "192.0.2.9:4000", "node", "n0de", 403, "forbidden"},
		{"/v1-k3s/server-bootstrap", "127.0.0.1:4000", "", "", 403, "forbidden"},
		{"/db/info", "127.0.0.1:4000", "", "", 200, "members"},
		{"/db/info", "[::1]:4000", "", "", 200, "members"},
		{"/db/info", "192.0.2.9:4000", "", "", 403, "forbidden"},
		{"/db/info", "192.0.2.9:4000", "server", "s3cret", 200, "members"},
		{"/db/snapshot", "192.0.2.9:4000", "server", "s3cret", http.StatusTeapot, "next\n"},
		{"/cacerts", "192.0.2.9:4000", "", "", http.StatusTeapot, "next\n"},
	} {
		req := httptest.NewRequest(http.MethodGet, c.path, nil)
		req.RemoteAddr = c.remote
		if c.user != "" {
			req.SetBasicAuth(c.user, c.pw)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != c.code || w.Body.String() != c.body {
			t.Errorf("%s from %s as %q: %d %q, want %d %q", c.path, c.remote, c.user, w.Code, w.Body.String(), c.code, c.body)
		}
	}
}
