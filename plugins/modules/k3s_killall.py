#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_killall
short_description: Stop what a stopped k3s leaves running - pods, their mounts, CNI links and iptables rules
version_added: 0.1.0
description:
  - What k3s's own C(k3s-killall.sh) does once the service has stopped, for a node being taken out of its cluster. k3s's
    unit kills its main process only, so that a restart keeps the pods running; after a stop the containers' shims and
    the processes under them still run, their mounts stay, and the CNI links and rules stay.
  - Kills (SIGKILL) every process started from a containerd shim of k3s's data directory
    (C(<data_dir>/data/<hash>/bin/containerd-shim*)) and every process below it.
  - Unmounts what is mounted under C(/run/k3s), C(<data_dir>/agent), C(/var/lib/kubelet/pods),
    C(/var/lib/kubelet/plugins) and C(/run/netns/cni-*), deepest first, and removes a mount point left as an empty
    directory. Unlike the script, never the data directory itself nor another mount inside it (an operator's disk for
    volumes, say), and never a mount point that still holds files.
  - Deletes the CNI network namespaces (C(/run/netns/cni-*)), the links enslaved to C(cni0), and the links
    C(cni0), C(flannel.1), C(flannel-v6.1), C(kube-ipvs0), C(flannel-wg), C(flannel-wg-v6).
  - With O(iptables=true), restores the iptables and ip6tables rules without the lines that name C(KUBE-), C(CNI-) or
    flannel, as the script does, where the node has C(iptables-save) and C(iptables-restore).
  - Refuses to run while a k3s (or RKE2) server or agent process runs on the node (it would start them again); nothing
    is changed then. A running k3s is recognised as it really runs - it rewrites its command line to the one string
    C(/usr/local/bin/k3s server) (C(agent)), hiding its arguments - as well as by the command line it was started with.
  - Files are not removed here; the reset playbook removes the collection's files with the modules that wrote them.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
options:
  data_dir:
    description: k3s's data directory (its C(--data-dir)), whose C(data/*/bin/containerd-shim*) start the pods.
    type: path
    default: /var/lib/rancher/k3s
  iptables:
    description: Drop the rules of kube-proxy, flannel and the CNI plugins from iptables and ip6tables.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    details: Reports what would be killed, unmounted and deleted.
  diff_mode:
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: posix
seealso:
  - module: baremetal.k3s.k3s_service
'''

EXAMPLES = r'''
- name: Stop k3s-agent
  ansible.builtin.systemd_service:
    name: k3s-agent
    state: stopped

- name: Stop what it left running (pods, mounts, CNI links and rules)
  baremetal.k3s.k3s_killall:
'''

RETURN = r'''
killed:
  description: The processes killed, shims first (in check mode, the ones that would be).
  returned: always
  type: list
  elements: dict
  sample: [{pid: 4121, argv: [/var/lib/rancher/k3s/data/2a9c/bin/containerd-shim-runc-v2, -namespace, k8s.io]}]
unmounted:
  description: The mount points unmounted, deepest first.
  returned: always
  type: list
  elements: str
  sample: [/run/k3s/containerd/io.containerd.grpc.v1.cri/sandboxes/5f1e/shm]
netns_deleted:
  description: The CNI network namespaces deleted.
  returned: always
  type: list
  elements: str
links_deleted:
  description: The links deleted.
  returned: always
  type: list
  elements: str
  sample: [veth3c41a2f0, cni0, flannel.1]
rules_dropped:
  description: How many lines of each family's saved rules were dropped.
  returned: always
  type: dict
  sample: {iptables: 42}
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _killall as killall
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

ARGUMENT_SPEC = dict(
    data_dir=dict(type='path', default='/var/lib/rancher/k3s'),
    iptables=dict(type='bool', default=True),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    view = _io.node_view(module)
    try:
        planned = killall.plan(view, module.params)
    except PlanError as e:
        module.fail_json(msg=e.msg)
    if module.check_mode:
        done, failed = killall.would(planned), []
    else:
        done, failed = killall.apply(view, planned)
    changed = any(done[key] for key in done)
    if failed:
        module.fail_json(msg='Some of what a stopped k3s left could not be removed: %s. Run again once the cause is '
                             'mended; what was removed stays removed.' % '; '.join(failed), changed=changed, **done)
    module.exit_json(changed=changed, **done)


if __name__ == '__main__':
    main()
