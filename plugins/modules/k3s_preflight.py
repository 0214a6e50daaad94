#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_preflight
short_description: Check a host against k3s's requirements before k3s is installed or changed
version_added: 0.1.0
description:
  - Measures the host - CPUs online, memory, free disk space where k3s keeps its data, the cgroup version and its memory
    controller and, before k3s is installed, whether something already listens on k3s's TCP ports - and reports
    B(every) problem at once, so that one run names all that has to be fixed.
  - With O(fail=true) (the default) the module fails when it finds a problem, with all problems in one message and the
    measured values in the result; with O(fail=false) it only reports them (RV(ok), RV(problems)), so that a play can
    collect the problems of every host before it stops.
  - The thresholds follow k3s's published minimum hardware for the O(role) - a server 2 cores and 2 GB of memory, an
    agent 1 core and 512 MB - and can be overridden.
  - On a server it also reads what it keeps under O(data_dir) - a datastore (C(server/db/etcd), C(server/db/state.db))
    and the cluster its C(server/token) names - and refuses one that is to join another server's cluster (O(joins))
    while it holds a cluster of its own, which the join would leave behind, unless O(discard_datastore) allows it.
  - Says when the kernel enforces SELinux and k3s is not configured for it (O(selinux)).
  - Names each of O(variables) that starts with the prefix of one of the collection's roles and is no variable of
    theirs nor of a playbook the collection ships, with the nearest name, in a warning (a misspelt option is otherwise
    ignored in silence).
  - With O(read) it first reads the node as M(baremetal.k3s.k3s_info) does, in the same module run, and returns that
    read as RV(node); the checks take from it whether k3s is installed (O(fresh)) and its data directory (O(data_dir)).
    With O(checks=false) it only reads - the roles C(baremetal.k3s.k3s_server) and C(baremetal.k3s.k3s_agent) read and
    check each node with one module run, and only read it when their preflight phase does not run.
  - Never changes the node.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.INFO_MODULE
options:
  role:
    description:
      - What the host is to run; selects the default thresholds and O(ports).
    type: str
    choices: [server, agent]
    default: server
  min_cpus:
    description:
      - The fewest CPUs online (C(/sys/devices/system/cpu/online), else C(/proc/cpuinfo)).
      - Default V(2) for a server, V(1) for an agent.
    type: int
  min_memory_mb:
    description:
      - The least memory, in MiB, as installed (k3s states its requirements so).
      - It is compared with C(MemTotal) of C(/proc/meminfo), which lacks what the firmware, a GPU split and the kernel
        keep for themselves; a C(MemTotal) down to 90% of O(min_memory_mb) passes (1843 MB for 2048).
      - Default V(2048) for a server, V(512) for an agent.
    type: int
  min_disk_mb:
    description:
      - The least free space, in MiB, on the file system that holds O(data_dir) (statvfs C(f_bavail)).
      - k3s publishes no disk figure. The defaults - V(4096) for a server, V(2048) for an agent - leave room for k3s's
        unpacked binaries, the images of its packaged components and, on a server, the datastore.
    type: int
  data_dir:
    description:
      - k3s's data directory (C(--data-dir)). When it does not exist yet, the free space is measured at its nearest
        existing parent, the file system it will be created on.
      - Not given - the one O(read) found (RV(baremetal.k3s.k3s_info#module:data_dir) of RV(node)), else
        C(/var/lib/rancher/k3s).
    type: path
  ports:
    description:
      - TCP ports k3s listens on, checked with O(fresh=true).
      - Default V([6443, 10250]) (API server and supervisor, kubelet) for a server, V([10250]) for an agent.
      - Add V(2379) and V(2380) for a server with embedded etcd.
    type: list
    elements: int
  fresh:
    description:
      - Whether k3s is not installed yet (M(baremetal.k3s.k3s_info) RV(baremetal.k3s.k3s_info#module:installed) is
        false). Only then are O(ports) checked - a running k3s holds its ports itself. RV(ports_in_use) is reported either
        way.
      - Not given - whether O(read) found nothing installed; V(false) without O(read).
    type: bool
  fail:
    description:
      - V(true) - fail when a problem is found, with every problem in one message.
      - V(false) - report the problems and succeed.
    type: bool
    default: true
  joins:
    description:
      - The server whose cluster this server is to join (its name, for the message); V('') when it joins none (the
        first server, or an agent).
      - A server that joins and holds a datastore of another cluster than O(join_cluster) - or of a cluster it cannot
        tell, with no C(server/token) - is a problem unless O(discard_datastore).
    type: str
    default: ''
  join_cluster:
    description:
      - The cluster O(joins) holds - the C(K10<CA hash>) part of its C(server/token) (RV(datastore.cluster) of this
        module there); V('') when it holds none yet (a cluster this run starts).
    type: str
    default: ''
  discard_datastore:
    description:
      - Let a server that holds another cluster's datastore join O(joins) all the same; RV(datastore.foreign) then tells
        the caller to move C(server/db) and C(server/token) aside before the join, and a warning says so.
    type: bool
    default: false
  selinux:
    description:
      - Whether k3s is to run with C(selinux) (k3s's C(--selinux)), as the role writes it.
      - Not given - what k3s's own config files on the node say (C(/etc/rancher/k3s/config.yaml) and C(config.yaml.d)).
      - When the kernel enforces SELinux (C(/sys/fs/selinux/enforce) is C(1)) and k3s is not configured for it, that is
        a problem (check C(selinux)) - k3s would run its containers without SELinux support.
    type: bool
  registries:
    description:
      - The registry settings the role is to write to k3s's C(registries.yaml) - C(mirrors) and C(configs), as
        M(baremetal.k3s.k3s_registries) takes them - checked here as that module checks them, without writing. A key
        k3s does not know, a C(tls) file (C(ca_file), C(cert_file), C(key_file)) that is not a file on the node
        (containerd would fail every pull from that registry), or a C(registries.yaml) the collection did not write
        without O(registries_take_over), is a problem (check C(registries)).
      - Its secrets (passwords, tokens) are masked in every output and in the node's log.
      - Not given - not checked.
    type: raw
  registries_take_over:
    description:
      - As M(baremetal.k3s.k3s_registries)'s O(baremetal.k3s.k3s_registries#module:take_over) - an operator's
        C(registries.yaml) is to be written over (with a backup), so it is no problem.
    type: bool
    default: false
  variables:
    description:
      - Names of the inventory's variables for this host. Each that starts with a prefix of the collection's roles
        (C(k3s_server_), C(k3s_agent_), C(k3s_user_), C(k3s_backup_), C(scheduler_extender_), C(k3s_upgrade_),
        C(k3s_reset_)) and is none of their variables nor of the collection's playbooks is named in a warning with the
        nearest name (RV(unknown_variables)). Other names are ignored.
    type: list
    elements: str
    default: []
  read:
    description:
      - The options of M(baremetal.k3s.k3s_info) (O(baremetal.k3s.k3s_info#module:platform),
        O(baremetal.k3s.k3s_info#module:service), O(baremetal.k3s.k3s_info#module:manifest_path),
        O(baremetal.k3s.k3s_info#module:scratch_dirs), O(baremetal.k3s.k3s_info#module:sha256_files)), checked as that
        module checks them - read the node as it does, before the checks and in the same module run, and return that
        read as RV(node).
      - The secret values the read meets are masked in every output, as M(baremetal.k3s.k3s_info) masks them.
      - Not given - the node is not read.
    type: dict
  checks:
    description:
      - Whether the checks run.
      - V(false) - only O(read), which must be given; the result is RV(node) and RV(hostname), and O(fail) does not apply.
    type: bool
    default: true
  checks_tag:
    description:
      - Run the checks only where a task with this tag would run in this task's place - the tag and the tags the task
        inherits (its blocks', its role's, its play's; not its own) against the run's C(--tags) and C(--skip-tags), as
        Ansible selects tasks. Where it would not, O(checks) is V(false).
      - For a task tagged C(always) that reads the node whatever the run's tags and checks it only in the phase of the
        checks - the roles give V(preflight), so that C(--skip-tags preflight) or C(--tags configure) read the node and
        check nothing.
      - Resolved on the controller (the module's action plugin); not given - O(checks) alone decides.
    type: str
notes:
  - Everything is read from C(/proc) and C(/sys) - C(/sys/devices/system/cpu/online), C(/proc/cpuinfo), C(/proc/meminfo),
    C(/sys/fs/cgroup/cgroup.controllers) (cgroup v2) or C(/proc/cgroups) (v1), C(/proc/net/tcp) and C(/proc/net/tcp6)
    (sockets in state C(LISTEN) of the host's network namespace) - and statvfs; no command is run.
  - Limits of a container (cgroup CPU or memory limits) are not taken into account; the host's values are reported.
  - O(read) reads what M(baremetal.k3s.k3s_info) reads, and runs the commands it runs (C(systemctl show),
    C(<binary> --version)).
seealso:
  - module: baremetal.k3s.k3s_info
  - module: baremetal.k3s.k3s_ready
'''

EXAMPLES = r'''
- name: Check a host that is to become a k3s server
  baremetal.k3s.k3s_preflight:
    role: server
    fresh: true
    ports: [6443, 10250, 2379, 2380]

- name: Read the node as k3s_info does and check it, in one module run; the read is in node_check.node
  baremetal.k3s.k3s_preflight:
    role: agent
    read:
      platform: k3s
      service: k3s-agent
  register: node_check

- name: Collect the problems of every host, then stop once with all of them
  baremetal.k3s.k3s_preflight:
    role: agent
    min_disk_mb: 10240
    fail: false
  register: preflight

- name: Stop here when any host has a problem
  ansible.builtin.assert:
    that: ansible_play_hosts_all | map('extract', hostvars, 'preflight') | rejectattr('ok') | list | length == 0
    fail_msg: "{{ ansible_play_hosts_all | map('extract', hostvars, 'preflight') | rejectattr('ok') | map(attribute='msg') | list }}"
  run_once: true
'''

RETURN = r'''
ok:
  description: Whether no problem was found.
  returned: when the checks run (O(checks))
  type: bool
  sample: false
problems:
  description: Every problem found, in the order of the checks (cpus, memory, disk, cgroup, ports, datastore, selinux, registries).
  returned: when the checks run (O(checks))
  type: list
  elements: dict
  contains:
    check:
      description: V(cpus), V(memory), V(disk), V(cgroup), V(ports) or V(datastore).
      type: str
    msg:
      description: What is wrong, with the measured value and the threshold.
      type: str
  sample: [{check: memory, msg: "1500 MB of memory (MemTotal); a k3s server needs 2048 MB installed (min_memory_mb), that is a MemTotal of at least 1843 MB"}]
msg:
  description: One line with every problem (the failure message with O(fail=true)), or that there is none.
  returned: when the checks run (O(checks))
  type: str
  sample: "k3s preflight of node-1 (server): no problems"
hostname:
  description: The host's name (C(/proc/sys/kernel/hostname)).
  returned: always
  type: str
  sample: node-1
role:
  description: O(role).
  returned: when the checks run (O(checks))
  type: str
  sample: server
fresh:
  description: O(fresh) - given, or whether O(read) found nothing installed.
  returned: when the checks run (O(checks))
  type: bool
  sample: true
cpus:
  description: CPUs online; null when they cannot be counted.
  returned: when the checks run (O(checks))
  type: int
  sample: 4
memory_mb:
  description: C(MemTotal) in MiB; null when unknown.
  returned: when the checks run (O(checks))
  type: int
  sample: 7962
disk_free_mb:
  description: MiB available on the file system of RV(disk_path); null when unknown.
  returned: when the checks run (O(checks))
  type: int
  sample: 51200
disk_path:
  description: Where the free space was measured - O(data_dir), or its nearest existing parent.
  returned: when the checks run (O(checks))
  type: str
  sample: /var/lib
data_dir:
  description: O(data_dir) - given, or the one O(read) found, or the default.
  returned: when the checks run (O(checks))
  type: str
  sample: /var/lib/rancher/k3s
cgroup:
  description: The cgroup hierarchy.
  returned: when the checks run (O(checks))
  type: dict
  contains:
    version:
      description: V(v2) (unified), V(v1) (legacy or hybrid), or empty when neither could be read.
      type: str
    memory:
      description: Whether the memory controller is available.
      type: bool
  sample: {version: v2, memory: true}
ports:
  description: The ports checked (O(ports) or the role's).
  returned: when the checks run (O(checks))
  type: list
  elements: int
  sample: [6443, 10250]
ports_in_use:
  description: The ports of RV(ports) that a TCP socket listens on now (IPv4 or IPv6), whatever O(fresh).
  returned: when the checks run (O(checks))
  type: list
  elements: int
  sample: [10250]
min_cpus:
  description: The CPU threshold applied.
  returned: when the checks run (O(checks))
  type: int
  sample: 2
min_memory_mb:
  description: The memory threshold applied (installed memory; see O(min_memory_mb)).
  returned: when the checks run (O(checks))
  type: int
  sample: 2048
min_disk_mb:
  description: The disk threshold applied.
  returned: when the checks run (O(checks))
  type: int
  sample: 4096
selinux:
  description: C(enforcing) (true, false, or null when C(/sys/fs/selinux/enforce) holds something else) and C(configured)
    (whether k3s runs with C(selinux); null when SELinux does not enforce and O(selinux) was not given).
  returned: when the checks run (O(checks))
  type: dict
  sample: {enforcing: true, configured: false}
datastore:
  description: What a server keeps under O(data_dir) (empty for an agent).
  returned: when the checks run (O(checks))
  type: dict
  contains:
    kind:
      description: V(etcd) (C(server/db/etcd)), V(sqlite) (C(server/db/state.db)), or empty for none.
      type: str
    path:
      description: The datastore's path; empty for none.
      type: str
    cluster:
      description: The cluster C(server/token) names - its C(K10<CA hash>) part, no secret; empty without that file.
      type: str
    foreign:
      description: Whether the server is to join O(joins) while it holds another cluster's datastore.
      type: bool
  sample: {kind: sqlite, path: /var/lib/rancher/k3s/server/db/state.db, cluster: K10f3c5..., foreign: false}
unknown_variables:
  description: Each of O(variables) with a role's prefix that the collection does not know, with the nearest name it does.
  returned: when the checks run (O(checks))
  type: list
  elements: dict
  contains:
    name:
      description: The variable.
      type: str
    nearest:
      description: The nearest variable of the collection; empty when none is near.
      type: str
  sample: [{name: k3s_agent_confg, nearest: k3s_agent_config}]
node:
  description:
    - The node as O(read) read it - exactly the result of M(baremetal.k3s.k3s_info) with those options (its return
      values, RV(baremetal.k3s.k3s_info#module:installed), RV(baremetal.k3s.k3s_info#module:active),
      RV(baremetal.k3s.k3s_info#module:pending), RV(baremetal.k3s.k3s_info#module:scratch_left)...), read before the
      checks.
  returned: when O(read) is given
  type: dict
  sample: {changed: false, installed: true, platform: k3s, init: systemd, service: k3s-agent, node_role: agent, active: true,
           enabled: true, data_dir: /var/lib/rancher/k3s, node_name: agent-1, pending: [], scratch_left: [], sha256_files: []}
'''

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_info as k3s_info
from ansible_collections.baremetal.k3s.plugins.module_utils import _preflight as preflight
from ansible_collections.baremetal.k3s.plugins.module_utils import _registries as registries
from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import ViewError

ARGUMENT_SPEC = dict(
    role=dict(type='str', default='server', choices=['server', 'agent']),
    min_cpus=dict(type='int'),
    min_memory_mb=dict(type='int'),
    min_disk_mb=dict(type='int'),
    data_dir=dict(type='path'),
    ports=dict(type='list', elements='int'),
    fresh=dict(type='bool'),
    fail=dict(type='bool', default=True),
    joins=dict(type='str', default=''),
    join_cluster=dict(type='str', default=''),
    discard_datastore=dict(type='bool', default=False),
    variables=dict(type='list', elements='str', default=[]),
    selinux=dict(type='bool'),
    registries=dict(type='raw'),
    registries_take_over=dict(type='bool', default=False),
    # k3s_info's options, checked against its spec (_k3s_info.ARGUMENT_SPEC) in main
    read=dict(type='dict'),
    checks=dict(type='bool', default=True),
    # resolved by the action plugin (plugins/action/k3s_preflight.py) into checks; accepted here for its documentation
    checks_tag=dict(type='str'),
)


def hide_secrets(module):
    """Every secret of the registry settings, wherever it stands, is masked in every output."""
    registries.collect_secrets(module.params.get('registries'), module.no_log_values)


class Module(_secrets.MaskedLog, AnsibleModule):
    """AnsibleModule whose own log line on the node masks the registries' secrets too."""

    add_secrets = hide_secrets


def main():
    module = Module(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, required_if=[('checks', False, ('read',))])
    hide_secrets(module)
    read = k3s_info.read_options(module, ArgumentSpecValidator)
    try:
        # the read's secret values (--token, K3S_TOKEN...) go to no_log_values, as k3s_info's: masked everywhere
        plan = preflight.read_and_check(_io.node_view(module), module.params, read, module.no_log_values)
    except PlanError as e:
        module.fail_json(msg=e.msg, **e.details)
    except ViewError as e:
        module.fail_json(msg=str(e))
    result = _io.report(module, plan)
    if module.params['checks'] and module.params['fail'] and not result['ok']:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
