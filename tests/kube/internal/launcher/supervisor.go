package launcher

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"baremetal.k3s/tests/kube/internal/configfile"
	"baremetal.k3s/tests/kube/internal/supervisor"
)

// DefaultSupervisorPort is the double's supervisor port: RKE2's (k3s serves
// its supervisor on 6443 with the API server behind it; the double lets the
// real API server own 6443, so that client certificates reach it).
const DefaultSupervisorPort = 9345

// supervisorPort: $K3S_DOUBLE_SUPERVISOR_PORT, else k3s's --supervisor-port
// when it names a port other than the API server's, else 9345.
func supervisorPort(v *configfile.Values) (int, error) {
	if s := envOr("K3S_DOUBLE_SUPERVISOR_PORT", ""); s != "" {
		return strconv.Atoi(s)
	}
	if s := v.String("supervisor-port"); s != "" && s != "0" && s != apiPort {
		return strconv.Atoi(s)
	}
	return DefaultSupervisorPort, nil
}

// supervisorServer is the supervisor's listener, serving until closed.
type supervisorServer struct {
	srv      *http.Server
	apiReady atomic.Bool
	stop     context.CancelFunc // the node-password controller
}

// startSupervisor serves the join endpoints with the API server's serving
// certificate on bind:port.
func startSupervisor(p pki, program, bind string, port int, agent supervisor.AgentConfig, apiservers func() []string) (*supervisorServer, error) {
	cert, err := tls.LoadX509KeyPair(p.path("serving-kube-apiserver.crt"), p.path("serving-kube-apiserver.key"))
	if err != nil {
		return nil, err
	}
	signer, err := supervisor.LoadCA(p.path("client-ca.crt"), p.path("client-ca.key"))
	if err != nil {
		return nil, err
	}
	passwdFile := p.credPath("passwd")
	s := &supervisorServer{}
	nodePasswords, err := newNodePasswords(p, program, s.apiReady.Load)
	if err != nil {
		return nil, err
	}
	h := supervisor.NewHandler(supervisor.Config{
		Program: program, ServerCA: p.path("server-ca.crt"), ClientCA: p.path("client-ca.crt"), Signer: signer,
		Passwd: func() supervisor.Passwd {
			pw, err := supervisor.ReadPasswd(passwdFile)
			if err != nil {
				warnf("supervisor: %v", err)
			}
			return pw
		},
		Agent: agent, Ready: s.apiReady.Load, APIServers: apiservers, Logf: logf, NodePasswords: nodePasswords,
	})
	if serverRoutes != nil { // embedded etcd's endpoints (etcdserver.go)
		h = serverRoutes(program, passwdFile, h)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(bind, strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	s.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		ErrorLog:  log.New(io.Discard, "", 0)} // agents probe with the system roots first: handshake errors are expected
	go func() {
		if err := s.srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errorf("supervisor: %v", err)
		}
	}()
	var ctx context.Context
	ctx, s.stop = context.WithCancel(context.Background())
	go nodePasswords.Run(ctx, nodePasswordSyncPeriod)
	return s, nil
}

func (s *supervisorServer) close() {
	if s != nil {
		s.stop()
		s.srv.Close()
	}
}
