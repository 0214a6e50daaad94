package configfile

import "strings"

// Program is one distribution the launcher stands in for: k3s, or RKE2 (which
// is k3s's CLI and config-file code built with version.Program = "rke2", plus
// its own flags; rancher/rke2 pkg/cli/cmds).
type Program struct {
	Name       string // "k3s" | "rke2"
	ConfigFile string // default --config
	ConfigEnv  string // env var naming the config file
	DataDir    string // default --data-dir
	Kubeconfig string // default --write-kubeconfig
	Server     []Flag
	Agent      []Flag
	// AgentConfigChecked: unknown keys in an agent's config files are skipped
	// with a warning (RKE2 registers the agent's flags with the parser too);
	// k3s keeps them and the flag parser rejects them.
	AgentConfigChecked bool
}

// K3s is k3s itself; its values are the constants of k3sflags.go.
var K3s = Program{
	Name:       "k3s",
	ConfigFile: DefaultConfigFile,
	ConfigEnv:  ConfigEnv,
	DataDir:    DefaultDataDir,
	Kubeconfig: DefaultKubeconfig,
	Server:     ServerFlags(),
	Agent:      AgentFlags(),
}

// RKE2 paths (version.Program = "rke2" in k3s's code; rke2Path in rancher/rke2).
const (
	RKE2ConfigFile = "/etc/rancher/rke2/config.yaml"
	RKE2ConfigEnv  = "RKE2_CONFIG_FILE"
	RKE2DataDir    = "/var/lib/rancher/rke2"
	RKE2Kubeconfig = "/etc/rancher/rke2/rke2.yaml"
)

// k3s flags that `rke2 server` removes (dropFlag in rancher/rke2
// pkg/cli/cmds/server.go): given to rke2 they are unknown flags.
var rke2ServerDrop = setOf(
	"https-listen-port", "supervisor-port", "apiserver-port", "apiserver-bind-address",
	"advertise-port", "cluster-init", "flannel-backend", "vpn-auth", "vpn-auth-file",
	"kube-controller-arg", "kube-cloud-controller-arg", "kine-tls", "default-local-storage-path",
	"disable-network-policy", "docker", "image-service-endpoint", "pause-image",
	"flannel-iface", "flannel-conf", "flannel-cni-conf", "flannel-ipv6-masq", "flannel-external-ip",
	"rootless", "prefer-bundled-bin", "disable-helm-controller",
)

// k3s flags that `rke2 agent` removes (pkg/cli/cmds/agent.go).
var rke2AgentDrop = setOf(
	"docker", "image-service-endpoint", "pause-image", "disable-apiserver-lb",
	"flannel-iface", "flannel-conf", "flannel-cni-conf", "vpn-auth", "vpn-auth-file",
	"rootless", "prefer-bundled-bin",
)

// rke2CommonFlags are RKE2's own flags of both server and agent (pkg/cli/cmds/root.go).
var rke2CommonFlags = func() []Flag {
	fl := []Flag{
		{Name: "kube-apiserver-image", EnvVar: "RKE2_KUBE_APISERVER_IMAGE"},
		{Name: "kube-controller-manager-image", EnvVar: "RKE2_KUBE_CONTROLLER_MANAGER_IMAGE"},
		{Name: "cloud-controller-manager-image", EnvVar: "RKE2_CLOUD_CONTROLLER_MANAGER_IMAGE"},
		{Name: "kube-proxy-image", EnvVar: "RKE2_KUBE_PROXY_IMAGE"},
		{Name: "kube-scheduler-image", EnvVar: "RKE2_KUBE_SCHEDULER_IMAGE"},
		{Name: "pause-image", EnvVar: "RKE2_PAUSE_IMAGE"},
		{Name: "runtime-image", EnvVar: "RKE2_RUNTIME_IMAGE"},
		{Name: "etcd-image", EnvVar: "RKE2_ETCD_IMAGE"},
		{Name: "kubelet-path", EnvVar: "RKE2_KUBELET_PATH"},
		{Name: "cloud-provider-name", EnvVar: "RKE2_CLOUD_PROVIDER_NAME"},
		{Name: "cloud-provider-config", EnvVar: "RKE2_CLOUD_PROVIDER_CONFIG"},
		{Name: "node-name-from-cloud-provider-metadata", Kind: Bool, EnvVar: "RKE2_NODE_NAME_FROM_CLOUD_PROVIDER_METADATA"},
		{Name: "profile", EnvVar: "RKE2_CIS_PROFILE"},
		{Name: "audit-policy-file", EnvVar: "RKE2_AUDIT_POLICY_FILE"},
		{Name: "pod-security-admission-config-file", EnvVar: "RKE2_POD_SECURITY_ADMISSION_CONFIG_FILE"},
		{Name: "control-plane-resource-requests", Kind: Slice, EnvVar: "RKE2_CONTROL_PLANE_RESOURCE_REQUESTS"},
		{Name: "control-plane-resource-limits", Kind: Slice, EnvVar: "RKE2_CONTROL_PLANE_RESOURCE_LIMITS"},
		{Name: "control-plane-probe-configuration", Kind: Slice, EnvVar: "RKE2_CONTROL_PLANE_PROBE_CONFIGURATION"},
	}
	for _, c := range []string{"kube-apiserver", "kube-scheduler", "kube-controller-manager", "kube-proxy", "etcd", "cloud-controller-manager"} {
		env := "RKE2_" + strings.ToUpper(strings.ReplaceAll(c, "-", "_"))
		fl = append(fl,
			Flag{Name: c + "-extra-mount", Kind: Slice, EnvVar: env + "_EXTRA_MOUNT"},
			Flag{Name: c + "-extra-env", Kind: Slice, EnvVar: env + "_EXTRA_ENV"})
	}
	return fl
}()

// rke2ServerOnly: pkg/rke2 CNIFlag, IngressControllerFlag, ServiceLBFlag.
var rke2ServerOnly = []Flag{
	{Name: "cni", Kind: Slice, EnvVar: "RKE2_CNI"},
	{Name: "ingress-controller", Kind: Slice, EnvVar: "RKE_INGRESS_CONTROLLER"},
	{Name: "enable-servicelb", Kind: Bool, EnvVar: "RKE2_ENABLE_SERVICELB"},
}

// RKE2 is `rke2`: k3s's flags minus the dropped ones, with RKE2's defaults
// and RKE2_* environment variables, plus RKE2's own flags.
func RKE2() Program {
	return Program{
		Name:               "rke2",
		ConfigFile:         RKE2ConfigFile,
		ConfigEnv:          RKE2ConfigEnv,
		DataDir:            RKE2DataDir,
		Kubeconfig:         RKE2Kubeconfig,
		Server:             concat(rke2Flags(ServerFlags(), rke2ServerDrop), rke2ServerOnly, rke2CommonFlags),
		Agent:              concat(rke2Flags(AgentFlags(), rke2AgentDrop), rke2CommonFlags),
		AgentConfigChecked: true,
	}
}

func rke2Flags(k3s []Flag, drop map[string]bool) []Flag {
	var out []Flag
	for _, f := range k3s {
		if drop[f.Canonical()] {
			continue
		}
		if strings.HasPrefix(f.EnvVar, "K3S_") { // version.ProgramUpper + "_..."
			f.EnvVar = "RKE2_" + strings.TrimPrefix(f.EnvVar, "K3S_")
		}
		switch f.Canonical() {
		case "config":
			f.Default = RKE2ConfigFile
		case "data-dir":
			f.Default = RKE2DataDir
		case "system-default-registry":
			if f.EnvVar == "" {
				f.EnvVar = "RKE2_SYSTEM_DEFAULT_REGISTRY"
			}
		}
		out = append(out, f)
	}
	return out
}

func setOf(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Parser is the program's configfilearg parser: config files go after
// "server" or "agent"; a server's unknown config keys are skipped with a
// warning (an agent's too for RKE2).
func (p Program) Parser(warnf func(string, ...any)) *Parser {
	valid := map[string][]string{"server": FlagNames(p.Server)}
	if p.AgentConfigChecked {
		valid["agent"] = FlagNames(p.Agent)
	}
	return &Parser{
		After:         []string{"server", "agent", "etcd-snapshot:1"},
		ConfigFlags:   []string{"--config", "-c"},
		OverrideFlags: []string{"--help", "-h", "--version", "-v"},
		EnvName:       p.ConfigEnv,
		DefaultConfig: p.ConfigFile,
		ValidFlags:    valid,
		Warnf:         warnf,
	}
}
