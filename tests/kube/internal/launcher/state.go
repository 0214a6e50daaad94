package launcher

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// DefaultStateFile is where the launcher records its progress (K3S_DOUBLE_STATE overrides).
const DefaultStateFile = "/run/k3s-double/state.json"

// DefaultEventsFile is the launcher's history across restarts and reboots, one JSON
// object per line (K3S_DOUBLE_EVENTS overrides): start, ready, scheduler_started,
// stopping, exit. Tests count restarts and compare down windows of nodes from it.
const DefaultEventsFile = "/var/log/k3s-double/events.jsonl"

// State is the launcher's state file, rewritten at each step.
type State struct {
	PID                 int      `json:"pid"`
	Command             string   `json:"command"`
	Phase               string   `json:"phase"`
	K8sVersion          string   `json:"k8s_version"`
	K3sVersion          string   `json:"k3s_version"`
	StartedAt           string   `json:"started_at"`
	DataDir             string   `json:"data_dir,omitempty"`
	ConfigFiles         []string `json:"config_files"`
	CLISliceMode        string   `json:"cli_slice_mode"`
	KubeSchedulerArg    []string `json:"kube_scheduler_arg"`
	KineStartedAt       string   `json:"kine_started_at,omitempty"`
	APIServerStartedAt  string   `json:"apiserver_started_at,omitempty"`
	APIReadyAt          string   `json:"api_ready_at,omitempty"`
	ReadyNotified       bool     `json:"ready_notified"`
	SchedulerStartedAt  string   `json:"scheduler_started_at,omitempty"`
	SchedulerPID        int      `json:"scheduler_pid,omitempty"`
	SchedulerArgs       []string `json:"scheduler_args"`
	SchedulerConfig     string   `json:"scheduler_config"`
	SchedulerVersion    string   `json:"scheduler_version,omitempty"`
	SchedulerExitedAt   string   `json:"scheduler_exited_at,omitempty"`
	SchedulerExitReason string   `json:"scheduler_exit_reason,omitempty"`
	ExitedAt            string   `json:"exited_at,omitempty"`
	ExitCode            *int     `json:"exit_code,omitempty"`
	ExitReason          string   `json:"exit_reason,omitempty"`
	// Servers: token files, datastore, bootstrap data, supervisor, controller-manager.
	TokenFile                   string   `json:"token_file,omitempty"`
	Datastore                   string   `json:"datastore,omitempty"`
	DatastoreEtcdServers        string   `json:"datastore_etcd_servers,omitempty"`
	KineStarted                 *bool    `json:"kine,omitempty"`
	LeaderElect                 *bool    `json:"leader_elect,omitempty"`
	Bootstrap                   string   `json:"bootstrap,omitempty"`
	BootstrapKey                string   `json:"bootstrap_key,omitempty"`
	SupervisorListen            string   `json:"supervisor_listen,omitempty"`
	ControllerManagerStartedAt  string   `json:"controller_manager_started_at,omitempty"`
	ControllerManagerPID        int      `json:"controller_manager_pid,omitempty"`
	ControllerManagerArgs       []string `json:"controller_manager_args,omitempty"`
	ControllerManagerExitedAt   string   `json:"controller_manager_exited_at,omitempty"`
	ControllerManagerExitReason string   `json:"controller_manager_exit_reason,omitempty"`
	KubeControllerManagerArg    []string `json:"kube_controller_manager_arg,omitempty"`
	SchedulerWaitedForNode      string   `json:"scheduler_waited_for_node,omitempty"`
	// The node this server or agent registers (servers: unless --disable-agent).
	ServerURL       string            `json:"server_url,omitempty"`
	SupervisorURL   string            `json:"supervisor_url,omitempty"`
	APIServerURL    string            `json:"api_server_url,omitempty"`
	NodeName        string            `json:"node_name,omitempty"`
	NodeIP          string            `json:"node_ip,omitempty"`
	NodeLabels      map[string]string `json:"node_labels,omitempty"`
	NodeTaints      []string          `json:"node_taints,omitempty"`
	DefaultRuntime  string            `json:"default_runtime,omitempty"`
	JoinAttempts    int               `json:"join_attempts,omitempty"`
	JoinError       string            `json:"join_error,omitempty"`
	JoinedAt        string            `json:"joined_at,omitempty"`
	NodeCreated     *bool             `json:"node_created,omitempty"`
	NodeHeartbeatAt string            `json:"node_heartbeat_at,omitempty"`
	// RKE2 only (empty, so absent, for k3s):
	Flavor             string `json:"flavor,omitempty"`
	SchedulerManifest  string `json:"scheduler_manifest,omitempty"`
	SchedulerFileHash  string `json:"scheduler_file_hash,omitempty"`
	SchedulerRestarts  int    `json:"scheduler_restarts,omitempty"`
	SchedulerPodState  string `json:"scheduler_pod_state,omitempty"`
	SchedulerPodReason string `json:"scheduler_pod_reason,omitempty"`
	// Embedded etcd (k3s servers with cluster-init, or joining one): etcd*.go.
	EtcdMemberName     string `json:"etcd_member_name,omitempty"`
	EtcdMemberID       string `json:"etcd_member_id,omitempty"` // hex, as etcdctl prints it
	EtcdRole           string `json:"etcd_role,omitempty"`      // starting | learner | voter
	EtcdStart          string `json:"etcd_start,omitempty"`     // new | join | existing | reset
	EtcdPeerURL        string `json:"etcd_peer_url,omitempty"`
	EtcdClientURL      string `json:"etcd_client_url,omitempty"`
	EtcdInitialCluster string `json:"etcd_initial_cluster,omitempty"`
	EtcdJoinedVia      string `json:"etcd_joined_via,omitempty"`
	EtcdPID            int    `json:"etcd_pid,omitempty"`
	EtcdStartedAt      string `json:"etcd_started_at,omitempty"`
	EtcdVoterAt        string `json:"etcd_voter_at,omitempty"`
	EtcdLeaderSeenAt   string `json:"etcd_leader_seen_at,omitempty"` // last learner management run as the etcd leader
	EtcdClusterReset   bool   `json:"etcd_cluster_reset,omitempty"`
}

type stateFile struct {
	mu     sync.Mutex
	path   string
	events string
	s      State
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func newStateFile(command string) *stateFile {
	p := os.Getenv("K3S_DOUBLE_STATE")
	if p == "" {
		p = DefaultStateFile
	}
	ev := os.Getenv("K3S_DOUBLE_EVENTS")
	if ev == "" {
		ev = DefaultEventsFile
	}
	return &stateFile{path: p, events: ev, s: State{
		PID: os.Getpid(), Command: command, Phase: "starting",
		K8sVersion: K8sVersion, K3sVersion: K3sVersion, StartedAt: now(),
		ConfigFiles: []string{}, KubeSchedulerArg: []string{}, SchedulerArgs: []string{},
	}}
}

// update applies f and rewrites the file atomically.
func (sf *stateFile) update(f func(*State)) {
	sf.mu.Lock()
	defer sf.mu.Unlock()
	if f != nil {
		f(&sf.s)
	}
	data, err := json.MarshalIndent(sf.s, "", "  ")
	if err != nil {
		warnf("state file: %v", err)
		return
	}
	if err := os.MkdirAll(filepath.Dir(sf.path), 0o755); err != nil {
		warnf("state file: %v", err)
		return
	}
	tmp := sf.path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		warnf("state file: %v", err)
		return
	}
	if err := os.Rename(tmp, sf.path); err != nil {
		warnf("state file: %v", err)
	}
}

// event appends one line {"time", "event", "pid", "command", ...extra} to the events file.
func (sf *stateFile) event(name string, extra map[string]any) {
	rec := map[string]any{"time": now(), "event": name, "pid": os.Getpid(), "command": sf.s.Command}
	for k, v := range extra {
		rec[k] = v
	}
	data, err := json.Marshal(rec)
	if err != nil {
		warnf("events file: %v", err)
		return
	}
	sf.mu.Lock()
	defer sf.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(sf.events), 0o755); err != nil {
		warnf("events file: %v", err)
		return
	}
	f, err := os.OpenFile(sf.events, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		warnf("events file: %v", err)
		return
	}
	defer f.Close()
	if _, err := f.Write(append(data, '\n')); err != nil {
		warnf("events file: %v", err)
	}
}
