package supervisor

import (
	"net"
	"net/http"
)

// ServerRoutes are the supervisor endpoints k3s serves to other servers
// and to its own CLI (pkg/server/router.go, pkg/etcd/etcd.go handler), behind
// the "server" user of the token (role <program>:server):
//
//	/v1-<program>/server-bootstrap   the bootstrap data, to a server joining embedded etcd
//	/db/info                         etcd's member list (local requests need no credentials)
//	/db/snapshot                     etcd snapshot operations (k3s etcd-snapshot)
//
// A nil handler is not served (404), as on a server without embedded etcd.
type ServerRoutes struct {
	Bootstrap http.Handler
	DBInfo    http.Handler
	Snapshot  http.Handler
}

// WithServerRoutes serves r in front of next.
func (c Config) WithServerRoutes(next http.Handler, r ServerRoutes) http.Handler {
	server := []string{c.Program + ServerGroup}
	mux := http.NewServeMux()
	mux.Handle("/", next)
	if r.Bootstrap != nil {
		mux.Handle("/v1-"+c.Program+"/server-bootstrap", c.auth(server, r.Bootstrap))
	}
	if r.DBInfo != nil {
		authed := c.auth(server, r.DBInfo)
		mux.Handle("/db/info", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if isLocal(req) { // k3s's IsLocalOrHasRole
				r.DBInfo.ServeHTTP(w, req)
				return
			}
			authed.ServeHTTP(w, req)
		}))
	}
	if r.Snapshot != nil {
		mux.Handle("/db/snapshot", c.auth(server, r.Snapshot))
	}
	return mux
}

func isLocal(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
