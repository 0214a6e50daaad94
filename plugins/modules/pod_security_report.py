#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: pod_security_report
short_description: List the pods a PodSecurity level would refuse, as the API server itself evaluates them
version_added: 0.1.0
description:
  - For each namespace, asks the API server which of its existing pods the PodSecurity level O(level) (at O(version))
    would refuse, and why - by a server-side dry run of the namespace's C(pod-security.kubernetes.io/enforce) label
    (C(kubectl label --dry-run=server --overwrite namespace <ns> pod-security.kubernetes.io/enforce=<level>
    pod-security.kubernetes.io/enforce-version=<version>)), whose answer carries PodSecurity admission's warnings. Nothing
    is stored; the Pod Security Standards' rules are the API server's, not re-implemented here.
  - The API server names, for each distinct set of reasons, the first pod by name and how many other pods share those
    reasons; the report keeps exactly that (C(others) of each of RV(namespaces)' violations), with the pod's owner from its
    ownerReferences (a ReplicaSet's Deployment) and phase.
  - A namespace with its own C(pod-security.kubernetes.io/enforce) label keeps it whatever the cluster's default is - it
    is reported as such (status C(own labels)) and not asked. A namespace in O(exempt_namespaces) is reported as
    C(exempt) and not asked.
  - Talks to the API only through the platform's own kubectl on the node (O(kubectl), O(kubeconfig)).
  - Never changes the node or the cluster (a server-side dry run is not stored).
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._kubectl
  - baremetal.k3s._kubectl.KUBECTL
  - baremetal.k3s._attributes.INFO_MODULE
options:
  level:
    description: The level to evaluate the running pods against.
    type: str
    choices: [privileged, baseline, restricted]
    default: restricted
  version:
    description: The Pod Security Standards' version - C(latest) or C(v1.<minor>).
    type: str
    default: latest
  exempt_namespaces:
    description: Namespaces the cluster's PodSecurity configuration exempts (reported as exempt, not asked).
    type: list
    elements: str
    default: [kube-system]
  namespaces:
    description: Only these namespaces; empty - all.
    type: list
    elements: str
    default: []
seealso:
  - module: baremetal.k3s.pod_security_admission
  - module: baremetal.k3s.pod_security_table
'''

EXAMPLES = r'''
- name: Which running pods would the restricted level refuse?
  baremetal.k3s.pod_security_report:
    kubectl: [/usr/local/bin/k3s, kubectl]
    level: restricted
  register: pod_security
'''

RETURN = r'''
level:
  description: The level evaluated.
  returned: always
  type: str
  sample: restricted
version:
  description: The version evaluated.
  returned: always
  type: str
  sample: latest
refused_pods:
  description: How many pods the API server said the level would refuse (named pods and the others it counted).
  returned: always
  type: int
  sample: 2
summary:
  description: One line.
  returned: always
  type: str
  sample: 2 pods in 1 of 5 namespaces would be refused at restricted:latest
missing_namespaces:
  description: Namespaces of O(namespaces) that do not exist.
  returned: always
  type: list
  elements: str
  sample: []
namespaces:
  description:
    - One entry per namespace, by name - C(namespace), C(status) (C(refused), C(allowed), C(own labels), C(exempt),
      C(unknown)), C(labels) (its own C(pod-security.kubernetes.io/) labels without the prefix), C(pods) (how many it
      has), C(violations), C(notes), C(error) (why the dry run failed).
    - Each violation - C(pod) (the name the API server gave), C(others) (how many other pods share its reasons),
      C(reasons) (the API server's words), C(owner) (C({kind, name}) or null), C(phase).
  returned: always
  type: list
  elements: dict
  sample:
    - namespace: shop
      status: refused
      labels: {}
      pods: 3
      violations:
        - {pod: cart-5d8f7c9b8-2xkqz, others: 1, reasons: [allowPrivilegeEscalation != false, unrestricted capabilities],
           owner: {kind: Deployment, name: cart}, phase: Running}
      notes: []
      error: ""
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _pod_security_report as report
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils import _kubectl

ARGUMENT_SPEC = dict(
    _kubectl.OPTIONS,
    level=dict(type='str', choices=['privileged', 'baseline', 'restricted'], default='restricted'),
    version=dict(type='str', default='latest'),
    exempt_namespaces=dict(type='list', elements='str', default=['kube-system']),
    namespaces=dict(type='list', elements='str', default=[]),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        plan = report.plan(_io.node_view(module), module.params)
    except PlanError as e:
        module.fail_json(msg=e.msg, **e.details)
    module.exit_json(**_io.report(module, plan))


if __name__ == '__main__':
    main()
