package configfile

// The k3s double's view of k3s's flags (k3s-io/k3s pkg/cli/cmds server.go,
// agent.go, log.go, config.go). Every flag here is accepted; the launcher acts
// on a few and ignores the rest. A flag not listed is an error, as in k3s.

const (
	DefaultConfigFile = "/etc/rancher/k3s/config.yaml"
	DefaultDataDir    = "/var/lib/rancher/k3s"
	DefaultKubeconfig = "/etc/rancher/k3s/k3s.yaml"
	ConfigEnv         = "K3S_CONFIG_FILE"
)

var commonFlags = []Flag{
	{Name: "config,c", EnvVar: ConfigEnv, Default: DefaultConfigFile},
	{Name: "debug", Kind: Bool, EnvVar: "K3S_DEBUG"},
	{Name: "v", Kind: Int, Default: "0"},
	{Name: "vmodule"},
	{Name: "log,l"},
	{Name: "alsologtostderr", Kind: Bool},
	{Name: "data-dir,d", EnvVar: "K3S_DATA_DIR"}, // DataDirFlag (server.go) and the agent's own (agent.go)
	{Name: "token,t", EnvVar: "K3S_TOKEN"},
	{Name: "token-file", EnvVar: "K3S_TOKEN_FILE"},
	{Name: "server,s", EnvVar: "K3S_URL"},
}

// agent flags, also accepted by `k3s server` (it runs an agent too).
var nodeFlags = []Flag{
	{Name: "node-name", EnvVar: "K3S_NODE_NAME"},
	{Name: "with-node-id", Kind: Bool},
	{Name: "node-label", Kind: Slice},
	{Name: "node-taint", Kind: Slice},
	{Name: "image-credential-provider-bin-dir"},
	{Name: "image-credential-provider-config"},
	{Name: "docker", Kind: Bool},
	{Name: "container-runtime-endpoint"},
	{Name: "default-runtime"},
	{Name: "image-service-endpoint"},
	{Name: "disable-default-registry-endpoint", Kind: Bool},
	{Name: "nonroot-devices", Kind: Bool},
	{Name: "pause-image"},
	{Name: "snapshotter", EnvVar: "K3S_SNAPSHOTTER"},
	{Name: "private-registry"},
	{Name: "system-default-registry", EnvVar: "K3S_SYSTEM_DEFAULT_REGISTRY"},
	{Name: "airgap-extra-registry", Kind: Slice},
	{Name: "node-ip,i", Kind: Slice},
	{Name: "node-external-ip", Kind: Slice},
	{Name: "node-internal-dns", Kind: Slice},
	{Name: "node-external-dns", Kind: Slice},
	{Name: "resolv-conf", EnvVar: "K3S_RESOLV_CONF"},
	{Name: "flannel-iface"},
	{Name: "flannel-conf"},
	{Name: "flannel-cni-conf"},
	{Name: "vpn-auth", EnvVar: "K3S_VPN_AUTH"},
	{Name: "vpn-auth-file", EnvVar: "K3S_VPN_AUTH_FILE"},
	{Name: "kubelet-arg", Kind: Slice},
	{Name: "kube-proxy-arg", Kind: Slice},
	{Name: "protect-kernel-defaults", Kind: Bool},
	{Name: "prefer-bundled-bin", Kind: Bool},
	{Name: "selinux", Kind: Bool, EnvVar: "K3S_SELINUX"},
	{Name: "lb-server-port", Kind: Int, EnvVar: "K3S_LB_SERVER_PORT", Default: "6444"},
	{Name: "rootless", Kind: Bool},
	{Name: "enable-pprof", Kind: Bool},
	{Name: "bind-address"},
}

var serverOnlyFlags = []Flag{
	{Name: "https-listen-port", Kind: Int, Default: "6443"},
	{Name: "supervisor-port", Kind: Int},
	{Name: "apiserver-port", Kind: Int},
	{Name: "apiserver-bind-address"},
	{Name: "advertise-address"},
	{Name: "advertise-port", Kind: Int},
	{Name: "tls-san", Kind: Slice},
	{Name: "tls-san-security", Kind: Bool, Default: "true"},
	{Name: "cluster-cidr", Kind: Slice},
	{Name: "service-cidr", Kind: Slice},
	{Name: "service-node-port-range", Default: "30000-32767"},
	{Name: "cluster-dns", Kind: Slice},
	{Name: "cluster-domain", Default: "cluster.local"},
	{Name: "flannel-backend", Default: "vxlan"},
	{Name: "flannel-ipv6-masq", Kind: Bool},
	{Name: "flannel-external-ip", Kind: Bool},
	{Name: "egress-selector-mode", Default: "agent"},
	{Name: "servicelb-namespace", Default: "kube-system"},
	{Name: "write-kubeconfig,o", EnvVar: "K3S_KUBECONFIG_OUTPUT"},
	{Name: "write-kubeconfig-mode", EnvVar: "K3S_KUBECONFIG_MODE"},
	{Name: "write-kubeconfig-group", EnvVar: "K3S_KUBECONFIG_GROUP"},
	{Name: "helm-job-image"},
	{Name: "agent-token", EnvVar: "K3S_AGENT_TOKEN"},
	{Name: "agent-token-file", EnvVar: "K3S_AGENT_TOKEN_FILE"},
	{Name: "cluster-init", Kind: Bool, EnvVar: "K3S_CLUSTER_INIT"},
	{Name: "cluster-reset", Kind: Bool, EnvVar: "K3S_CLUSTER_RESET"},
	{Name: "cluster-reset-restore-path"},
	{Name: "kube-apiserver-arg", Kind: Slice},
	{Name: "etcd-arg", Kind: Slice},
	{Name: "kube-controller-manager-arg", Kind: Slice},
	{Name: "kube-scheduler-arg", Kind: Slice},
	{Name: "kube-cloud-controller-manager-arg", Kind: Slice},
	{Name: "kube-controller-arg", Kind: Slice},       // hidden, deprecated
	{Name: "kube-cloud-controller-arg", Kind: Slice}, // hidden, deprecated
	{Name: "datastore-endpoint", EnvVar: "K3S_DATASTORE_ENDPOINT"},
	{Name: "datastore-cafile", EnvVar: "K3S_DATASTORE_CAFILE"},
	{Name: "datastore-certfile", EnvVar: "K3S_DATASTORE_CERTFILE"},
	{Name: "datastore-keyfile", EnvVar: "K3S_DATASTORE_KEYFILE"},
	{Name: "kine-tls", Kind: Bool},
	{Name: "etcd-expose-metrics", Kind: Bool},
	{Name: "etcd-disable-snapshots", Kind: Bool},
	{Name: "etcd-snapshot-name", Default: "etcd-snapshot"},
	{Name: "etcd-snapshot-schedule-cron", Default: "0 */12 * * *"},
	{Name: "etcd-snapshot-retention", Kind: Int, Default: "5"},
	{Name: "etcd-snapshot-dir"},
	{Name: "etcd-snapshot-compress", Kind: Bool},
	{Name: "etcd-s3", Kind: Bool},
	{Name: "etcd-s3-endpoint", Default: "s3.amazonaws.com"},
	{Name: "etcd-s3-endpoint-ca"},
	{Name: "etcd-s3-skip-ssl-verify", Kind: Bool},
	{Name: "etcd-s3-access-key", EnvVar: "AWS_ACCESS_KEY_ID"},
	{Name: "etcd-s3-secret-key", EnvVar: "AWS_SECRET_ACCESS_KEY"},
	{Name: "etcd-s3-bucket"},
	{Name: "etcd-s3-region", Default: "us-east-1"},
	{Name: "etcd-s3-folder"},
	{Name: "etcd-s3-insecure", Kind: Bool},
	{Name: "etcd-s3-timeout", Kind: Duration, Default: "5m0s"},
	{Name: "default-local-storage-path"},
	{Name: "disable", Kind: Slice},
	{Name: "disable-scheduler", Kind: Bool},
	{Name: "disable-cloud-controller", Kind: Bool},
	{Name: "disable-kube-proxy", Kind: Bool},
	{Name: "disable-network-policy", Kind: Bool},
	{Name: "disable-helm-controller", Kind: Bool},
	{Name: "disable-apiserver", Kind: Bool},
	{Name: "disable-controller-manager", Kind: Bool},
	{Name: "disable-etcd", Kind: Bool},
	{Name: "disable-agent", Kind: Bool},
	{Name: "embedded-registry", Kind: Bool},
	{Name: "supervisor-metrics", Kind: Bool},
	{Name: "secrets-encryption", Kind: Bool},
	{Name: "secrets-encryption-provider"},
}

// ServerFlags are the flags `k3s server` accepts.
func ServerFlags() []Flag {
	return concat(commonFlags, serverOnlyFlags, nodeFlags)
}

// AgentFlags are the flags `k3s agent` accepts.
func AgentFlags() []Flag {
	return concat(commonFlags, nodeFlags, []Flag{{Name: "disable-apiserver-lb", Kind: Bool}})
}

func concat(lists ...[]Flag) []Flag {
	var out []Flag
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// DefaultParser is k3s's: config files go after "server" or "agent"; keys of
// the server's config files that are not server flags are dropped with a warning.
func DefaultParser(warnf func(string, ...any)) *Parser {
	return K3s.Parser(warnf)
}
