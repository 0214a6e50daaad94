#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_ready
short_description: Wait until the k3s API answers and a Node is Ready - the gate of a rolling restart
version_added: 0.1.0
description:
  - Waits until the API server answers C(/readyz) with C(ok) (all its readiness checks pass, the datastore's included; a
    200 with another body - a proxy's or a captive portal's page - is not the API server's answer) and the Node
    O(node_name) has the condition C(Ready=True); with O(kubelet_version) also until that Node reports that version;
    with O(etcd_member=true) also until it is a voting member of the embedded etcd cluster.
  - Talks to the API only through the platform's own kubectl on the node (O(kubectl), O(kubeconfig)), as
    M(baremetal.k3s.readiness_configmap) does - C(kubectl get --raw /readyz), then C(kubectl get node <name> -o json).
    No Kubernetes client library is needed.
  - Looks again every O(interval) seconds until everything passes or O(timeout) seconds have gone. On timeout it fails
    with what the last look found (O(fail_on_timeout=true)), or returns RV(ready=false) with that reason in RV(msg).
  - A kubeconfig that does not exist yet, an API server that refuses connections and a Node that is not registered yet
    are reasons to keep waiting (k3s writes the kubeconfig and registers the Node as it starts). A kubectl that is not
    on the node fails at once.
  - Never changes the node or the cluster.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._kubectl
  - baremetal.k3s._kubectl.KUBECTL
  - baremetal.k3s._attributes.INFO_MODULE
options:
  node_name:
    description:
      - The Node to wait for, as it registers (M(baremetal.k3s.k3s_info) RV(baremetal.k3s.k3s_info#module:node_name)).
      - Not given - only the API server's C(/readyz) is waited for (a control-plane host that registers no Node);
        O(etcd_member), O(kubelet_version) and O(since) need it.
    type: str
  etcd_member:
    description:
      - Also wait until the Node's condition C(EtcdIsVoter) is C(True).
      - k3s's etcd leader sets that condition, every 15 seconds, on every Node labelled C(node-role.kubernetes.io/etcd) -
        C(True) (reason C(MemberNotLearner)) for a voting member, C(False) while the member is a learner that has not
        been promoted yet (C(MemberIsLearner)), is unhealthy (C(Unhealthy)) or is not a member (C(NotAMember)). A server
        that joins an embedded-etcd cluster is added as a learner and promoted once it has caught up.
      - Only for servers with embedded etcd (C(cluster-init), or joined to such a server); with an external datastore
        or SQLite the condition never appears and the wait ends in a timeout.
    type: bool
    default: false
  kubelet_version:
    description:
      - Also wait until the Node reports this C(status.nodeInfo.kubeletVersion) - the version of the k3s now running on
        it, as C(k3s --version) prints it (for example V(v1.31.4+k3s1)). The kubelet posts it when it starts, so after a
        binary swap and restart the Node counts as ready only once the new k3s has reported in.
      - The comparison is exact. While it differs, the wait's reason names the version the Node reports.
      - Not given - the version is not looked at (it is still returned as RV(kubelet_version)).
    type: str
  timeout:
    description: Seconds to wait, at most. V(0) looks once.
    type: int
    default: 300
  interval:
    description: Seconds between looks.
    type: float
    default: 1
  since:
    description:
      - Seconds since the epoch (C(date +%s)) of a restart. The Node counts as Ready only when the heartbeat of its C(Ready)
        condition is at or after it - right after a restart the API may still show the C(Ready) of the previous start.
      - Leave it out when nothing restarted.
    type: float
  fail_on_timeout:
    description:
      - V(true) - fail when not ready within O(timeout), with the last reason.
      - V(false) - return RV(ready=false) and the reason in RV(msg).
    type: bool
    default: true
notes:
  - Each kubectl call is bounded by C(--request-timeout) (10 seconds, less when less of O(timeout) is left), so an API
    server that accepts connections but does not answer cannot hold the task beyond O(timeout) by much.
  - O(etcd_member) is tested against real etcd (three servers of the collection's k3s test double, which embeds etcd as
    k3s does and sets C(EtcdIsVoter) as k3s's etcd leader does) - a server rejoining after a restore, held as a learner,
    is reported as not a voting member until it is promoted.
  - A Node's C(Ready) condition is the kubelet's last report; right after a restart it may still show the report of
    before until the kubelet posts again (at its start, then when something changes).
seealso:
  - module: baremetal.k3s.k3s_info
  - module: baremetal.k3s.extender_status
'''

EXAMPLES = r'''
- name: Read how k3s runs here (kubectl, admin kubeconfig, node name)
  baremetal.k3s.k3s_info:
  register: k3s

- name: Wait until this server is back before the next one restarts
  baremetal.k3s.k3s_ready:
    kubectl: "{{ k3s.kubectl }}"
    kubeconfig: "{{ k3s.admin_kubeconfig }}"
    node_name: "{{ k3s.node_name }}"
    etcd_member: true
    timeout: 600

- name: After an upgrade, wait until this node runs the new version
  baremetal.k3s.k3s_ready:
    kubectl: [/usr/local/bin/k3s, kubectl]
    node_name: "{{ k3s.node_name }}"
    kubelet_version: v1.31.4+k3s1
    timeout: 600

- name: Ask the first server whether an agent's Node is Ready, without failing
  baremetal.k3s.k3s_ready:
    kubectl: [/usr/local/bin/k3s, kubectl]
    kubeconfig: /etc/rancher/k3s/k3s.yaml
    node_name: agent-7
    timeout: 60
    fail_on_timeout: false
  delegate_to: server-1
  register: agent_ready
'''

RETURN = r'''
ready:
  description: Whether everything passed - the API, the Node's C(Ready), with O(kubelet_version) its version and, with
    O(etcd_member=true), C(EtcdIsVoter).
  returned: always
  type: bool
  sample: true
api_ready:
  description: Whether the API server answered C(/readyz) with success at the last look.
  returned: always
  type: bool
  sample: true
node_ready:
  description: Whether the Node's condition C(Ready) was C(True) at the last look; V(false) without O(node_name).
  returned: always
  type: bool
  sample: true
etcd_member:
  description: Whether the Node's condition C(EtcdIsVoter) was C(True) at the last look; null without O(etcd_member=true)
    or when the Node was not read.
  returned: always
  type: bool
  sample: true
kubelet_version:
  description: The Node's C(status.nodeInfo.kubeletVersion) at the last look; null when the Node was not read or reports
    none.
  returned: always
  type: str
  sample: v1.31.4+k3s1
node_conditions:
  description: The Node's conditions at the last look; empty when the Node was not read.
  returned: always
  type: list
  elements: dict
  contains:
    type:
      description: The condition, for example C(Ready), C(MemoryPressure), C(EtcdIsVoter).
      type: str
    status:
      description: C(True), C(False) or C(Unknown).
      type: str
    reason:
      description: Its reason, as one CamelCase word.
      type: str
    message:
      description: Its message.
      type: str
  sample: [{type: Ready, status: "True", reason: KubeletReady, message: kubelet is posting ready status}]
msg:
  description: What was waited for and how long it took, or (not ready) the reason of the last look.
  returned: always
  type: str
  sample: "not ready within timeout (300 s): node server-2 is not Ready: Ready=False (KubeletNotReady: container runtime network not ready)"
timed_out:
  description: Whether the wait ended without everything passing.
  returned: always
  type: bool
  sample: false
node_name:
  description: O(node_name); V(null) when not given.
  returned: always
  type: str
  sample: server-1
elapsed:
  description: Seconds waited.
  returned: always
  type: float
  sample: 12.5
attempts:
  description: How many looks were taken.
  returned: always
  type: int
  sample: 3
waited_for:
  description:
    - What the wait waited for - each reason a look gave, once, in the order first seen (the first 20); empty when the
      first look passed.
  returned: always
  type: list
  elements: dict
  contains:
    reason:
      description: What was not ready, as RV(msg) words it.
      type: str
    at:
      description: Seconds into the wait when it was first seen.
      type: float
    looks:
      description: How many looks gave it.
      type: int
  sample:
    - reason: "node server-3 is not a voting etcd member: EtcdIsVoter=False (NotAMember: Node is not a member of the etcd cluster)"
      at: 0.4
      looks: 25
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _ready as ready
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils import _kubectl

ARGUMENT_SPEC = dict(
    _kubectl.OPTIONS,
    node_name=dict(type='str'),
    etcd_member=dict(type='bool', default=False),
    kubelet_version=dict(type='str'),
    timeout=dict(type='int', default=300),
    interval=dict(type='float', default=1),
    fail_on_timeout=dict(type='bool', default=True),
    since=dict(type='float'),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        plan = ready.wait(_io.node_view(module), module.params)
    except PlanError as e:
        module.fail_json(msg=e.msg, **e.details)
    result = _io.report(module, plan)
    if module.params['fail_on_timeout'] and not result['ready']:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
