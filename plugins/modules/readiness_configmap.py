#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: readiness_configmap
short_description: Publish or withdraw nodes' entries in the readiness ConfigMap of a scheduler extender
version_added: 0.1.0
description:
  - Adds, updates or removes one node's entry in the C(nodes.yaml) key of a ConfigMap, in the format of CSI Baremetal's
    operator - a C(nodes) list of C({node_name, kube_scheduler, restarted}) - which CSI Baremetal's extender reads to learn
    which kube-schedulers run with it.
  - Talks to the API server with the platform's own kubectl on the node (C(k3s kubectl), RKE2's
    C(/var/lib/rancher/rke2/bin/kubectl), kubeadm's C(kubectl)), as O(kubectl) gives it; no Kubernetes client library
    and no other collection is needed.
  - Other nodes' entries, other data keys, labels and annotations are kept. The list is written sorted by node name, in
    the text Ansible's C(to_nice_yaml) filter gives with C(indent=2). A new ConfigMap gets the label
    C(app.kubernetes.io/managed-by=baremetal.k3s).
  - Safe with many nodes writing at once - every write is conditional. C(kubectl replace) sends the
    C(metadata.resourceVersion) it read and the API server refuses it (Conflict) when another writer changed the
    ConfigMap since; C(kubectl create) is refused (AlreadyExists) when another writer created it first. The ConfigMap is
    then read again and the change redone, up to 20 times, with a short random pause in between.
  - Nothing is written when this node's entry already is as wanted, or, with O(state=absent), when there is no
    ConfigMap or no entry.
  - With O(nodes), the entries of several nodes of the cluster are written at once, one write for all of them - what
    a rollout that proved several servers publishes at its end, through one server's API.
author:
  - baremetal.k3s contributors (@baremetal)
requirements:
  - PyYAML on the node (Debian and Ubuntu C(python3-yaml), EL C(python3-pyyaml), SUSE C(python3-PyYAML))
  - the platform's kubectl on the node, and a kubeconfig that may read and write ConfigMaps in O(namespace)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._kubectl
  - baremetal.k3s._kubectl.KUBECTL
attributes:
  check_mode:
    support: full
    details: The ConfigMap is read (and, when it does not exist, the namespace looked up); nothing is written.
  diff_mode:
    support: full
    details: Before and after text of C(nodes.yaml).
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: posix
options:
  name:
    description: Name of the ConfigMap.
    type: str
    default: extender-readiness
  namespace:
    description:
      - Namespace of the ConfigMap; it must exist. CSI Baremetal's operator reads the ConfigMap from its own namespace.
    type: str
    default: default
  node_name:
    description:
      - The node whose entry this is, the name it registers with (M(baremetal.k3s.k3s_info) RV(baremetal.k3s.k3s_info#module:node_name)).
      - One of O(node_name) and O(nodes) is required.
    type: str
  nodes:
    description:
      - Several nodes' entries, written at once. Each takes the keys of the single entry - C(node_name) (required),
        C(kube_scheduler), C(restarted), C(state) - and O(kube_scheduler), O(restarted) and O(state) do not apply then.
      - Every node of the cluster this kubectl talks to; a node named twice is refused.
    type: list
    elements: dict
    suboptions:
      node_name:
        description: As O(node_name).
        type: str
        required: true
      kube_scheduler:
        description: As O(kube_scheduler).
        type: str
      restarted:
        description: As O(restarted).
        type: bool
        default: false
      state:
        description: As O(state).
        type: str
        choices: [present, absent]
        default: present
  kube_scheduler:
    description:
      - The C(kube_scheduler) of the entry, the scheduler's name (M(baremetal.k3s.extender_status) returns it - C(k3s@<node>)
        on k3s, C(kube-scheduler-<node>) for static pods).
      - Required with O(state=present).
    type: str
  restarted:
    description: The C(restarted) of the entry - whether the scheduler restarted with the extender.
    type: bool
    default: false
  state:
    description: V(present) adds or updates this node's entry; V(absent) removes it (the ConfigMap stays).
    type: str
    choices: [present, absent]
    default: present
notes:
  - Each kubectl call is bounded by C(--request-timeout 30s).
  - A C(nodes.yaml) that is not such a list, or an entry without C(node_name), is refused rather than overwritten, as it
    may hold other nodes' entries. So is a change to an C(immutable) ConfigMap.
seealso:
  - module: baremetal.k3s.k3s_info
  - module: baremetal.k3s.extender_status
  - name: Optimistic concurrency in the Kubernetes API
    description: How resourceVersion makes a replace conditional.
    link: https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions
'''

EXAMPLES = r'''
- name: Read how the platform runs here
  baremetal.k3s.k3s_info:
  register: node

- name: Publish that this node's scheduler restarted with the extender
  baremetal.k3s.readiness_configmap:
    kubectl: "{{ node.kubectl }}"
    kubeconfig: "{{ node.admin_kubeconfig }}"
    namespace: csi-baremetal
    node_name: "{{ node.node_name }}"
    kube_scheduler: "k3s@{{ node.node_name }}"
    restarted: true

- name: Publish the entries of every server a rollout proved, in one write through the first one's API
  baremetal.k3s.readiness_configmap:
    kubectl: "{{ node.kubectl }}"
    kubeconfig: "{{ node.admin_kubeconfig }}"
    namespace: csi-baremetal
    nodes:
      - {node_name: server-1, kube_scheduler: k3s@server-1, restarted: true}
      - {node_name: server-2, kube_scheduler: k3s@server-2, restarted: true}
  run_once: true
- name: Withdraw this node
  baremetal.k3s.readiness_configmap:
    kubectl: [/var/lib/rancher/rke2/bin/kubectl]
    kubeconfig: /etc/rancher/rke2/rke2.yaml
    namespace: csi-baremetal
    node_name: "{{ node.node_name }}"
    state: absent
'''

RETURN = r'''
nodes:
  description: The C(nodes) list of C(nodes.yaml) after the change (in check mode, as it would be), sorted by node name.
  returned: success
  type: list
  elements: dict
  sample: [{kube_scheduler: k3s@server-1, node_name: server-1, restarted: true}]
attempts:
  description: How many times the ConfigMap was read and the change tried; more than 1 when another writer came first.
  returned: success
  type: int
  sample: 1
diff:
  description: Before and after text of C(nodes.yaml).
  returned: in diff mode
  type: dict
  sample: {before: "nodes: []\n", after: "nodes:\n- kube_scheduler: k3s@server-1\n  node_name: server-1\n  restarted: true\n"}
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _deps
from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _readiness as readiness
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils import _kubectl


ARGUMENT_SPEC = dict(
    _kubectl.OPTIONS,
    name=dict(type='str', default='extender-readiness'),
    namespace=dict(type='str', default='default'),
    node_name=dict(type='str'),
    nodes=dict(type='list', elements='dict', options=dict(
        node_name=dict(type='str', required=True),
        kube_scheduler=dict(type='str'),
        restarted=dict(type='bool', default=False),
        state=dict(type='str', default='present', choices=['present', 'absent']),
    )),
    kube_scheduler=dict(type='str'),
    restarted=dict(type='bool', default=False),
    state=dict(type='str', default='present', choices=['present', 'absent']),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                           mutually_exclusive=[('node_name', 'nodes')], required_one_of=[('node_name', 'nodes')])
    if not readiness.HAS_YAML:
        module.fail_json(msg=_deps.missing_lib_msg('PyYAML'), exception=str(readiness.YAML_IMPORT_ERROR))
    params = module.params
    try:
        request = readiness.Request(
            kubectl=params['kubectl'], kubeconfig=params['kubeconfig'], name=params['name'],
            namespace=params['namespace'], node_name=params['node_name'], state=params['state'],
            kube_scheduler=params['kube_scheduler'], restarted=params['restarted'], nodes=params['nodes'])
        view = _io.node_view(module)
        readiness.check_files(view, request.kubectl, request.kubeconfig)
        result = readiness.publish(view.run, request, check_mode=module.check_mode)
    except PlanError as e:
        module.fail_json(msg=e.msg, **e.details)
    diff = result.pop('diff')
    if module._diff:
        header = '%s: %s' % (request.where, readiness.DATA_KEY)
        result['diff'] = dict(before=diff['before'], after=diff['after'], before_header=header, after_header=header)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
