#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_info
short_description: Report which Kubernetes distribution runs on this node, and how its scheduler is started
version_added: 0.1.0
description:
  - Finds the control plane of the node - k3s, RKE2 or kubeadm - and reports how its kube-scheduler is started.
  - For k3s and RKE2 it reads the service - its systemd unit and drop-ins, or its openrc init script - the way
    systemd (or openrc) and k3s read them, and reports the command line, the node's role, the config files,
    the effective C(--kube-scheduler-arg) values and the scheduler config file they name, the version and
    whether the service runs.
  - For kubeadm it reads the kube-scheduler static pod manifest - its command, the C(--config) it passes, the
    image tag - and whether the kubelet runs.
  - A service that does not exist is not an error - RV(installed) is false and RV(msg) says what was looked at.
  - Never changes the node.
  - The values of k3s's secret-bearing options on the command line, in the service's environment and in the config
    files (C(--token)/C(-t), C(--agent-token), the password of C(--datastore-endpoint), the S3 keys, C(K3S_TOKEN)...)
    are shown as C((hidden)) in RV(argv) and RV(k3s_args), and masked by Ansible everywhere else in the result.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.INFO_MODULE
options:
  platform:
    description:
      - Which distribution to look for. V(auto) tries k3s (services C(k3s), C(k3s-agent)), then RKE2
        (C(rke2-server), C(rke2-agent)), then kubeadm (O(manifest_path), else a C(kubelet) service with
        C(/etc/kubernetes/kubelet.conf), a worker).
      - With O(service) given, the platform follows from the binary the service starts (C(rke2) or C(k3s)).
    type: str
    choices: [auto, k3s, rke2, kubeadm]
    default: auto
  service:
    description:
      - Name of the service, as the installers name it - V(k3s), V(k3s-agent), C(k3s-<INSTALL_K3S_NAME>),
        V(rke2-server), V(rke2-agent); V(kubelet) for kubeadm.
      - Its unit is looked for in C(/etc/systemd/system), C(/usr/local/lib/systemd/system), C(/usr/lib/systemd/system),
        C(/lib/systemd/system), then its init script in C(/etc/init.d).
      - Default - the first of the platform's services that is installed.
      - A name that holds C(/) or white space is refused.
    type: str
  manifest_path:
    description:
      - The kube-scheduler static pod manifest of a kubeadm control plane, C(/etc/kubernetes/manifests/kube-scheduler.yaml)
        when not given.
    type: path
  scratch_dirs:
    description:
      - Directories to list the scratch directories of the collection's runs in (RV(scratch_left)) - an upgrade's
        C(.baremetal-k3s-upgrade.*) beside the binary, a download's C(baremetal-k3s-fetch.*) in the node's temporary
        directory - which a run that was killed leaves behind. Absolute paths; each is listed once, not recursed into.
      - The roles k3s_server and k3s_agent give the binary's directory and the temporary directory, so that the read
        before their install says what to remove, without a search of its own.
    type: list
    elements: path
    default: []
  sha256_files:
    description:
      - Files to read the sha256, mode and owner of (RV(sha256_files)), in the same read - the roles k3s_server and
        k3s_agent give the k3s binary they install, so that the install does not read it again.
      - Absolute paths; a symbolic link is not followed (as M(ansible.builtin.stat) does not), and only a regular file is
        read (in blocks; a FIFO or a device is never waited on).
    type: list
    elements: path
    default: []
requirements:
  - PyYAML on the node, to read k3s's and RKE2's config files (Debian and Ubuntu C(python3-yaml), EL C(python3-pyyaml),
    SUSE C(python3-PyYAML))
notes:
  - The unit and its drop-ins are read as systemd reads them (continuation lines, quoting, C(ExecStart=) resets,
    C(EnvironmentFile=) values expanded in the command line); the config files as k3s reads them (the file named by
    C(--config), else C(K3S_CONFIG_FILE), else C(/etc/rancher/k3s/config.yaml), then its C(.d/*.yaml) in name order,
    C(key+:) appending).
  - For C(--kube-scheduler-arg), the module follows the k3s documentation - values given on the command line replace
    the config files' list. k3s's own code comment says they are added to it; when both places give values a warning
    says so.
  - A unit, drop-in, init script or config file that k3s or systemd would refuse makes the module fail with a message
    that names the file and the problem.
seealso:
  - module: baremetal.k3s.k3s_service_arg
  - module: baremetal.k3s.extender_status
  - name: k3s configuration file
    description: How k3s reads config.yaml and config.yaml.d.
    link: https://docs.k3s.io/installation/configuration#configuration-file
'''

EXAMPLES = r'''
- name: Read how k3s runs here
  baremetal.k3s.k3s_info:
  register: k3s

- name: Agents carry no kube-scheduler
  ansible.builtin.debug:
    msg: "{{ inventory_hostname }} is a k3s {{ k3s.node_role }}; scheduler config: {{ k3s.scheduler_config or 'none' }}"
  when: k3s.installed

- name: Read a named install (INSTALL_K3S_NAME=edge)
  baremetal.k3s.k3s_info:
    service: k3s-edge
  register: k3s_edge

- name: Which distribution runs here, and which scheduler config does it pass
  baremetal.k3s.k3s_info:
  register: node

- name: Report it
  ansible.builtin.debug:
    msg: "{{ node.platform }} {{ node.node_role }}, scheduler config {{ node.scheduler_config or 'none' }}"
'''

RETURN = r'''
installed:
  description: Whether the service has a unit or init script. When false every other value is empty and RV(msg) says why.
  returned: always
  type: bool
  sample: true
msg:
  description: Why RV(installed) is false.
  returned: when RV(installed) is false
  type: str
  sample: no unit or init script found for service k3s (looked at /etc/systemd/system/k3s.service, ...).
platform:
  description: V(k3s), V(rke2) or V(kubeadm); V(k3s) when nothing is installed.
  returned: always
  type: str
  sample: k3s
platform_record:
  description:
    - What differs between the platforms, for the platform of RV(platform) as it applies on this node - paths under the
      data directory resolved with RV(data_dir), RV(admin_kubeconfig), RV(scheduler_kubeconfig) and RV(kubectl) as found.
      Roles read these fields instead of comparing the platform's name.
    - When nothing is installed, the record of RV(platform) with its defaults.
  returned: always
  type: dict
  contains:
    name:
      description: The platform's name, as RV(platform).
      type: str
    title:
      description: How messages name it (C(k3s), C(RKE2), C(kubeadm)).
      type: str
    binary:
      description: The basename of the binary its services start; empty for kubeadm.
      type: str
    services:
      description: Its services as its installers name them, the server's first, then the agent's.
      type: list
      elements: str
    data_dir:
      description: Its data directory (RV(data_dir)); empty for kubeadm.
      type: str
    config_file:
      description: The config file its binary reads by default; empty for kubeadm.
      type: str
    config_env:
      description: The variable that names another config file (C(K3S_CONFIG_FILE), C(RKE2_CONFIG_FILE)).
      type: str
    env_prefix:
      description: The prefix of its binary's environment variables (C(K3S_), C(RKE2_)).
      type: str
    admin_kubeconfig:
      description: As RV(admin_kubeconfig).
      type: str
    kubectl:
      description: As RV(kubectl).
      type: list
      elements: str
    kubectl_on_path:
      description: Whether kubectl is looked for on the node's PATH first (kubeadm).
      type: bool
    scheduler_kubeconfig:
      description: As RV(scheduler_kubeconfig).
      type: str
    scheduler_config:
      description: Where the role V(baremetal.k3s.scheduler_extender) puts its scheduler config when the scheduler has none.
      type: str
    scheduler_flag:
      description:
        - How a scheduler flag reaches the scheduler - V(service_arg), a C(--kube-scheduler-arg) of the service
          (M(baremetal.k3s.k3s_service_arg)); V(static_pod), the command of the scheduler's static pod
          (M(baremetal.k3s.static_pod_arg)).
      type: str
    scheduler_mount_arg:
      description: The service argument that mounts a file into the scheduler's pod (RKE2); empty when none is needed.
      type: str
    scheduler_runs:
      description: V(service) when the scheduler runs inside the service's process (k3s), V(static_pod) when it is a pod.
      type: str
    restart:
      description:
        - What applies a changed scheduler flag - V(service), a restart of the service; V(static_pod), the kubelet
          re-reading a changed manifest (the scheduler process stopped for a changed config alone).
      type: str
    scheduler_name:
      description: How the scheduler names itself on this node (C(k3s@server-1), C(kube-scheduler-server-1)).
      type: str
    scheduler_manifest:
      description: The scheduler's static pod manifest; empty for k3s.
      type: str
    scheduler_cert:
      description: The serving certificate the platform issues the scheduler; empty when it issues none.
      type: str
    scheduler_ca:
      description: The CA that signs RV(platform_record.scheduler_cert); RV(scheduler_ca_file) says whether it is in use.
      type: str
    server_ca:
      description: The cluster's server CA.
      type: str
    client_ca:
      description: The CA that signs C(kubernetes.io/kube-apiserver-client) certificates.
      type: str
    crictl_dir:
      description: Where the platform ships crictl; empty when it does not.
      type: str
    crictl_endpoint:
      description: The container runtime endpoint the platform's crictl needs; empty for crictl's default.
      type: str
    registries_file:
      description: The containerd registry settings its agent reads at start (M(baremetal.k3s.k3s_registries)); empty when it has none.
      type: str
  sample:
    name: k3s
    title: k3s
    binary: k3s
    services: [k3s, k3s-agent]
    data_dir: /var/lib/rancher/k3s
    config_file: /etc/rancher/k3s/config.yaml
    config_env: K3S_CONFIG_FILE
    env_prefix: K3S_
    admin_kubeconfig: /etc/rancher/k3s/k3s.yaml
    kubectl: [/usr/local/bin/k3s, kubectl]
    kubectl_on_path: false
    scheduler_kubeconfig: /var/lib/rancher/k3s/server/cred/scheduler.kubeconfig
    scheduler_config: /etc/rancher/k3s/kube-scheduler/config.yaml
    scheduler_flag: service_arg
    scheduler_mount_arg: ''
    scheduler_runs: service
    restart: service
    scheduler_name: k3s@server-1
    scheduler_manifest: ''
    scheduler_cert: /var/lib/rancher/k3s/server/tls/kube-scheduler/kube-scheduler.crt
    scheduler_ca: /var/lib/rancher/k3s/server/tls/server-ca.crt
    server_ca: /var/lib/rancher/k3s/server/tls/server-ca.crt
    client_ca: /var/lib/rancher/k3s/server/tls/client-ca.crt
    crictl_dir: ''
    crictl_endpoint: ''
    registries_file: /etc/rancher/k3s/registries.yaml
manifest_path:
  description: The kube-scheduler static pod manifest (kubeadm); empty for k3s and RKE2.
  returned: always
  type: str
  sample: /etc/kubernetes/manifests/kube-scheduler.yaml
data_dir:
  description: The data directory of k3s or RKE2 (C(--data-dir), else the default); empty for kubeadm.
  returned: always
  type: str
  sample: /var/lib/rancher/k3s
scheduler_kubeconfig:
  description:
    - The kubeconfig the platform gives kube-scheduler - C(<data_dir>/server/cred/scheduler.kubeconfig) for k3s and RKE2,
      the manifest's C(--kubeconfig) for kubeadm. A scheduler config file must name it in C(clientConnection.kubeconfig).
  returned: always
  type: str
  sample: /var/lib/rancher/k3s/server/cred/scheduler.kubeconfig
scheduler_ca_file:
  description:
    - The CA that signs the certificate the scheduler serves on its health port (C(127.0.0.1:10259)), so that a probe
      can verify it - C(<data_dir>/server/tls/server-ca.crt) when k3s issued the scheduler's serving certificate
      C(<data_dir>/server/tls/kube-scheduler/kube-scheduler.crt) (k3s 1.30.13, 1.31.9, 1.32.5, 1.33.1 and later) and
      no C(--kube-scheduler-arg) names another one; for RKE2 when the scheduler's static pod passes that certificate.
    - Empty when the scheduler serves a certificate of its own (older releases, kubeadm) or the node is no server;
      M(baremetal.k3s.extender_status) then probes without verifying.
  returned: always
  type: str
  sample: /var/lib/rancher/k3s/server/tls/server-ca.crt
admin_kubeconfig:
  description: The administrator's kubeconfig the platform writes (C(--write-kubeconfig), else the default).
  returned: always
  type: str
  sample: /etc/rancher/k3s/k3s.yaml
cluster_id:
  description:
    - Which cluster a server serves - the sha256 of the CA its administrator's kubeconfig trusts (its first
      C(certificate-authority-data)), the same on every server of a cluster and different between clusters. Only that
      field of the file is read.
    - Empty on an agent, and when that kubeconfig is not there or names its CA by file only.
  returned: always
  type: str
  sample: 3b5d5c3712955042212316173ccf37be800b5b2d5c1b4e4c7d0e4f6a6a0e6b9c
kubectl:
  description:
    - The platform's own kubectl, as the words a command starts with - V([<k3s binary>, kubectl]) for k3s, which ships
      kubectl as a subcommand; V([<data_dir>/bin/kubectl]) for RKE2; the C(kubectl) on the node's PATH for kubeadm
      (C(/usr/bin/kubectl) when none is found). Empty when nothing is installed.
    - M(baremetal.k3s.readiness_configmap) takes it as its O(baremetal.k3s.readiness_configmap#module:kubectl).
  returned: always
  type: list
  elements: str
  sample: [/usr/local/bin/k3s, kubectl]
init:
  description: V(systemd) or V(openrc); empty when not installed.
  returned: always
  type: str
  sample: systemd
service:
  description: The service name, without C(.service).
  returned: always
  type: str
  sample: k3s
unit_path:
  description: The unit file, or the openrc init script.
  returned: always
  type: str
  sample: /etc/systemd/system/k3s.service
dropins:
  description: The unit's drop-in files, in the order systemd applies them.
  returned: always
  type: list
  elements: str
  sample: [/etc/systemd/system/k3s.service.d/10-proxy.conf]
unit_writable:
  description: Whether RV(unit_path) can be changed (false on a read-only file system or without permission).
  returned: always
  type: bool
  sample: true
node_role:
  description: V(server) or V(agent), the subcommand on the command line; empty when not installed.
  returned: always
  type: str
  sample: server
argv:
  description: The command line the service starts, as systemd (or openrc) gives it - drop-ins applied, variables from
    the service's environment files expanded, the program first (the ExecStart path after its prefixes; with the
    C(@) prefix the word after it is only the argv[0] the program sees and is not listed). Secret values are shown as
    C((hidden)).
  returned: always
  type: list
  elements: str
  sample: [/usr/local/bin/k3s, server, --disable=traefik]
k3s_args:
  description: RV(argv) with the flags of the config files inserted right after the subcommand, as k3s does.
  returned: always
  type: list
  elements: str
  sample: [/usr/local/bin/k3s, server, --kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml, --disable=traefik]
config_file:
  description: The config file k3s uses (C(--config), else C(K3S_CONFIG_FILE), else the default), whether it exists or not.
  returned: always
  type: str
  sample: /etc/rancher/k3s/config.yaml
config_files:
  description: The config files k3s reads, in order.
  returned: always
  type: list
  elements: str
  sample: [/etc/rancher/k3s/config.yaml, /etc/rancher/k3s/config.yaml.d/99-baremetal-k3s-scheduler.yaml]
config_dir_writable:
  description: Whether a file can be written in the config drop-in directory (RV(config_file) + C(.d)).
  returned: always
  type: bool
  sample: true
scheduler_args:
  description: The effective C(--kube-scheduler-arg) values - the command line's when it gives any, else the config files'.
  returned: always
  type: list
  elements: str
  sample: [config=/etc/rancher/k3s/kube-scheduler/config.yaml]
scheduler_config:
  description: The scheduler config file of the last C(config=) (or C(--config=)) value in RV(scheduler_args); empty when none.
  returned: always
  type: str
  sample: /etc/rancher/k3s/kube-scheduler/config.yaml
scheduler_config_source:
  description: The file that sets RV(scheduler_config) - the unit, a drop-in, the init script or a config file; empty when none.
  returned: always
  type: str
  sample: /etc/rancher/k3s/config.yaml.d/99-baremetal-k3s-scheduler.yaml
version:
  description:
    - The k3s or RKE2 version from C(<binary> --version), the kube-scheduler image tag for kubeadm; empty when unknown.
  returned: always
  type: str
  sample: v1.36.3+k3s1
kubernetes_version:
  description: The Kubernetes version of the scheduler (RV(version) up to C(+)); empty when unknown.
  returned: always
  type: str
  sample: v1.36.3
active:
  description: Whether the service runs - systemd C(ActiveState=active), or C(rc-service <service> status) succeeds.
  returned: always
  type: bool
  sample: true
enabled:
  description:
    - Whether the service starts at boot - systemd C(UnitFileState=enabled) (what C(systemctl enable) makes), or the
      service in OpenRC's C(default) runlevel (what C(rc-update add) makes).
    - The roles do not start a service that was active and enabled when they read the node.
  returned: always
  type: bool
  sample: true
main_pid:
  description: The PID of the k3s process, 0 when none.
  returned: always
  type: int
  sample: 1234
started_at:
  description: When the running k3s or RKE2 process started (ISO 8601, UTC); empty when none runs.
  returned: always
  type: str
  sample: '2026-01-25T03:15:00.120000Z'
pending:
  description:
    - What the running process does not use yet - each file it reads at its start (the unit or init script, its
      drop-ins and environment files, the config files, the registries file, the token file) changed after it started,
      and its binary when that was replaced since (C(/proc/<pid>/exe) names the deleted file, or the binary is newer
      than the process). A run that wrote them and stopped before the restart leaves them so; a restart applies them.
    - Empty when nothing runs (a start applies everything), for kubeadm, and when nothing is pending.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The file.
      type: str
    changed_at:
      description: Its modification time (ISO 8601, UTC).
      type: str
    reason:
      description: What makes it pending.
      type: str
  sample: [{path: /etc/rancher/k3s/config.yaml.d/40-baremetal-k3s-server.yaml, changed_at: '2026-01-25T03:16:02.000000Z',
            reason: changed after k3s started}]
pending_msg:
  description: RV(pending) in one sentence for an operator; empty when nothing is pending.
  returned: always
  type: str
  sample: k3s still runs the process started at 2026-01-25T03:15:00.120000Z (pid 812), older than what it reads at its start ...
missing_token_files:
  description: The token files the service is told to read (C(token-file), C(agent-token-file), C(K3S_TOKEN_FILE)) that do
    not exist - k3s waits for them at its start.
  returned: always
  type: list
  elements: str
  sample: [/etc/rancher/k3s/cluster-token]
scratch_left:
  description:
    - The scratch directories directly in O(scratch_dirs) whose names the collection's runs give theirs
      (C(.baremetal-k3s-upgrade.*), C(baremetal-k3s-fetch.*)), in the order of O(scratch_dirs) and by name - real
      directories only (a symbolic link of such a name is not listed), whatever they hold; the caller removes root's.
    - Empty without O(scratch_dirs); a directory that does not exist lists nothing, one that cannot be listed gives a
      warning.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The directory.
      type: str
    uid:
      description: The uid of its owner (the roles remove only root's, 0).
      type: int
  sample: [{path: /usr/local/bin/.baremetal-k3s-upgrade.k2x9, uid: 0}]
sha256_files:
  description:
    - What is at each of O(sha256_files), in that order, as it was when the module read it.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The path, as given.
      type: str
    exists:
      description: Whether something is there (a symbolic link counts, wherever it points).
      type: bool
    sha256:
      description: The sha256 of a regular file; empty for anything else, and for a file that could not be read (with a warning).
      type: str
    mode:
      description: Its permission bits in four octal digits, as M(ansible.builtin.stat) gives them; empty when nothing is there.
      type: str
    uid:
      description: Its owner's uid; -1 when nothing is there.
      type: int
    gid:
      description: Its group's gid; -1 when nothing is there.
      type: int
  sample: [{path: /usr/local/bin/k3s, exists: true, sha256: 8b1a9953c4611296a827abf8c47804d7e6c49c6b6a4d1e0b5e9d3a7c0f2e4d61,
            mode: '0755', uid: 0, gid: 0}]
node_name:
  description:
    - The node name k3s registers - C(--node-name) from RV(k3s_args), else C(K3S_NODE_NAME) from the service's
      environment, else the host name; in lower case, as k3s makes it.
  returned: always
  type: str
  sample: server-1
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_info as k3s_info
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

# in module_utils: k3s_preflight's read takes the same options
ARGUMENT_SPEC = k3s_info.ARGUMENT_SPEC


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        # secret values read from the node (--token, K3S_TOKEN...) go to no_log_values: Ansible masks them everywhere
        plan = k3s_info.gather(_io.node_view(module), module.params, module.no_log_values)
    except PlanError as e:
        module.fail_json(msg=e.msg, **e.details)
    module.exit_json(**_io.report(module, plan))


if __name__ == '__main__':
    main()
