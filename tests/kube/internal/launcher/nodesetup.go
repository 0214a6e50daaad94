package launcher

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"baremetal.k3s/tests/kube/internal/configfile"
	"baremetal.k3s/tests/kube/internal/join"
	"baremetal.k3s/tests/kube/internal/nodeconfig"
)

// newNodeAgent reads a node's settings as k3s's agent does: --node-name
// (default the host name, lower-cased), --node-ip, --node-label,
// --node-taint, --default-runtime; server is where it joins with tok.
func newNodeAgent(fl flavor, v *configfile.Values, st *stateFile, dataDir, server, tok string) (*nodeAgent, error) {
	node := nodeName(v)
	labels, err := nodeconfig.ParseLabels(v.Slice("node-label"))
	if err != nil {
		return nil, err
	}
	taints, err := nodeconfig.ParseTaints(v.Slice("node-taint"))
	if err != nil {
		return nil, err
	}
	all := nodeconfig.DefaultLabels(node, fl.prog.Name)
	for k, val := range labels {
		all[k] = val
	}
	port, err := supervisorPort(v)
	if err != nil {
		return nil, err
	}
	api, _ := strconv.Atoi(apiPort)
	sup, err := join.SupervisorURL(server, api, port)
	if err != nil {
		return nil, err
	}
	ip := ""
	if a := advertiseIP(v); a != nil {
		ip = a.String()
	}
	host, _ := os.Hostname()
	a := &nodeAgent{
		program: fl.prog.Name, st: st, agentDir: filepath.Join(dataDir, "agent"),
		server: server, supervisorURL: sup, token: tok, node: node, nodeIP: ip,
		labels: all, taints: taints, kubeletVersion: fl.version,
		annotations: map[string]string{
			fl.prog.Name + ".io/hostname":                            strings.ToLower(host),
			"volumes.kubernetes.io/controller-managed-attach-detach": "true",
			"node.alpha.kubernetes.io/ttl":                           "0",
		},
	}
	if ip != "" {
		a.annotations[fl.prog.Name+".io/internal-ip"] = ip
	}
	st.update(func(s *State) {
		s.ServerURL, s.SupervisorURL, s.NodeName, s.NodeIP = server, sup, node, ip
		s.NodeLabels, s.NodeTaints = all, taintStrings(taints)
		s.DefaultRuntime = v.String("default-runtime")
	})
	return a, nil
}
