#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: pod_security_labels
short_description: Set a namespace's own PodSecurity labels through the API, leaving labels others set alone
version_added: 0.1.0
description:
  - Sets the C(pod-security.kubernetes.io/<mode>) and C(pod-security.kubernetes.io/<mode>-version) labels given in
    O(namespaces) on those namespaces, through the platform's own kubectl on the node - so that, for example, a cluster
    that enforces C(restricted) by default lets one namespace run C(privileged) pods, explicitly.
  - The labels it set are recorded in the namespace's annotation C(baremetal.k3s/pod-security-labels). A label the
    collection did not set is never changed or removed (a warning names it); a label it set that is no longer given is
    removed, on every namespace that holds the record (a namespace left out of O(namespaces) loses the labels the
    collection set on it).
  - Every name, key, level and version is checked before anything is asked; a namespace that does not exist is refused
    before any namespace is changed. Each namespace is written by one merge patch conditional on its resourceVersion.
  - In check mode the patches are sent as server-side dry runs - the API server validates them and stores nothing.
  - The API server's PodSecurity warnings about existing pods (raising a namespace's enforce level) are returned per
    namespace.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._kubectl
  - baremetal.k3s._kubectl.KUBECTL
attributes:
  check_mode:
    support: full
    details: The patches are sent as server-side dry runs; nothing is stored.
  diff_mode:
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: posix
options:
  namespaces:
    description:
      - Namespace name to its labels - C(enforce), C(enforce_version), C(audit), C(audit_version), C(warn),
        C(warn_version) (levels C(privileged), C(baseline), C(restricted); versions C(latest) or C(v1.<minor>)).
      - Empty - the labels the collection set are removed everywhere.
    type: dict
    default: {}
seealso:
  - module: baremetal.k3s.pod_security_admission
  - module: baremetal.k3s.pod_security_report
'''

EXAMPLES = r'''
- name: Let the monitoring namespace keep privileged pods once restricted is enforced by default
  baremetal.k3s.pod_security_labels:
    kubectl: [/usr/local/bin/k3s, kubectl]
    namespaces:
      monitoring: {enforce: privileged, warn: baseline}
'''

RETURN = r'''
changed:
  description: Whether a namespace was (in check mode, would be) changed.
  returned: always
  type: bool
  sample: true
namespaces:
  description:
    - One entry per namespace given or holding the collection's record - C(namespace), C(set) (labels set, with their
      values), C(removed) (labels removed), C(left_alone) (labels given that the collection did not set and left as
      they are), C(warnings) (the API server's PodSecurity warnings about its existing pods).
  returned: always
  type: list
  elements: dict
  sample:
    - namespace: monitoring
      set: {pod-security.kubernetes.io/enforce: privileged}
      removed: []
      left_alone: []
      warnings: []
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _pod_security_labels as labels
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils import _kubectl

ARGUMENT_SPEC = dict(
    _kubectl.OPTIONS,
    namespaces=dict(type='dict', default={}),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        plan = labels.plan_and_patch(_io.node_view(module), module.params, module.check_mode)
    except PlanError as e:
        module.fail_json(msg=e.msg, **e.details)
    changed = plan.facts.pop('changed')
    result = _io.report(module, plan)
    result['changed'] = changed
    module.exit_json(**result)


if __name__ == '__main__':
    main()
