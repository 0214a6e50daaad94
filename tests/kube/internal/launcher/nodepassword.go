package launcher

import (
	"time"

	"baremetal.k3s/tests/kube/internal/kubeapi"
	"baremetal.k3s/tests/kube/internal/supervisor"
)

// nodePasswordSyncPeriod: how often the node-password controller looks at
// Nodes and their Secrets (k3s reacts to Node events; the double polls).
const nodePasswordSyncPeriod = 2 * time.Second

// newNodePasswords checks agents' node passwords through the local API
// server with the admin's credentials (k3s uses its supervisor's, also in
// system:masters), once ready says the API server is.
func newNodePasswords(p pki, program string, ready func() bool) (*supervisor.NodePasswords, error) {
	api, err := kubeapi.NewFromFiles("https://127.0.0.1:"+apiPort, p.path("server-ca.crt"), p.path("client-admin.crt"), p.path("client-admin.key"))
	if err != nil {
		return nil, err
	}
	return &supervisor.NodePasswords{Program: program, API: api, Ready: ready, Logf: logf}, nil
}
