#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: pod_security_admission
short_description: Write the cluster's PodSecurity admission defaults and exemptions (an AdmissionConfiguration file)
version_added: 0.1.0
description:
  - Writes the C(AdmissionConfiguration) file that kube-apiserver's PodSecurity admission reads its cluster-wide defaults
    from - a level and a version for each of the modes O(enforce), O(audit) and O(warn), and the exempt namespaces,
    usernames and runtime classes - mode 0600 and owned by root after every write, with a marker as its first line that
    makes the file the collection's.
  - Every value is checked as the API server checks it before anything is read for writing - an unknown level, a
    version other than C(latest) or C(v1.<minor>), a namespace that is not a DNS-1123 label, a runtime class that is not
    a DNS-1123 subdomain, an empty or repeated name - because the API server does not start on such a file.
  - The same options give the same bytes, so a re-run changes nothing.
  - RV(apiserver_arg) is the argument that makes kube-apiserver read the file (for k3s C(kube-apiserver-arg)); the
    module does not pass it and never restarts anything - RV(changed) tells the caller that the API server must be
    restarted to use the file.
  - O(state=absent) removes the collection's file; a file the collection did not write is never written over or removed.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.FILES
options:
  path:
    description: The file on the node.
    type: path
    required: true
  state:
    description: C(present) writes the file, C(absent) removes the collection's file.
    type: str
    choices: [present, absent]
    default: present
  enforce:
    description: The level whose violations refuse a pod. Not given - V(privileged).
    type: str
    choices: [privileged, baseline, restricted]
  enforce_version:
    description: The version of the Pod Security Standards O(enforce) applies - C(latest) or C(v1.<minor>). Not given - V(latest).
    type: str
  audit:
    description: The level whose violations are recorded in the audit log. Not given - V(privileged).
    type: str
    choices: [privileged, baseline, restricted]
  audit_version:
    description: The version for O(audit). Not given - V(latest).
    type: str
  warn:
    description: The level whose violations are returned to the client as warnings. Not given - V(privileged).
    type: str
    choices: [privileged, baseline, restricted]
  warn_version:
    description: The version for O(warn). Not given - V(latest).
    type: str
  exempt_namespaces:
    description:
      - Namespaces PodSecurity does not evaluate. Default - C(kube-system), where k3s's own system pods run; a list given
        replaces it (give C(kube-system) in it to keep it exempt).
    type: list
    elements: str
  exempt_usernames:
    description: Authenticated user names whose requests PodSecurity does not evaluate. Not given - none.
    type: list
    elements: str
  exempt_runtime_classes:
    description: RuntimeClass names whose pods PodSecurity does not evaluate. Not given - none.
    type: list
    elements: str
  settings:
    description:
      - All of the settings above as one mapping, as a role or an inventory holds them (for example
        C(k3s_server_pod_security)) - instead of the separate options, which may not be given with it.
      - Checked as a whole - a key that is not one of the options above is refused by name.
    type: dict
  settings_name:
    description: The name messages give O(settings) (the variable it came from), for example V(k3s_server_pod_security).
    type: str
    default: settings
  backup:
    description:
      - Keep a copy of the file, next to it and 0600, before it is changed or removed; RV(files) names it, so that
        M(baremetal.k3s.rollback) can put this run's change back.
    type: bool
    default: false
seealso:
  - module: baremetal.k3s.rollback
  - module: baremetal.k3s.k3s_config_file
  - module: baremetal.k3s.pod_security_report
'''

EXAMPLES = r'''
- name: Enforce the restricted level everywhere but kube-system
  baremetal.k3s.pod_security_admission:
    path: /etc/rancher/k3s/baremetal-k3s-pod-security.yaml
    enforce: restricted
    audit: restricted
    warn: restricted
  register: psa

- name: Pass it to the API server from the role's own config.yaml.d file
  baremetal.k3s.k3s_config_file:
    name: 40-baremetal-k3s-server.yaml
    values:
      kube-apiserver-arg+: ["{{ psa.apiserver_arg }}"]
'''

RETURN = r'''
changed:
  description: Whether the file was (or, in check mode, would be) written or removed.
  returned: always
  type: bool
  sample: true
path:
  description: The file.
  returned: always
  type: str
  sample: /etc/rancher/k3s/baremetal-k3s-pod-security.yaml
apiserver_arg:
  description: The kube-apiserver argument that makes the API server read the file.
  returned: always
  type: str
  sample: admission-control-config-file=/etc/rancher/k3s/baremetal-k3s-pod-security.yaml
settings:
  description: The settings written, every option filled in (empty with O(state=absent)).
  returned: always
  type: dict
  sample: {enforce: restricted, enforce_version: latest, audit: privileged, audit_version: latest, warn: restricted,
           warn_version: latest, exempt_namespaces: [kube-system], exempt_usernames: [], exempt_runtime_classes: []}
owned:
  description: Whether the file is (after this run) the collection's.
  returned: always
  type: bool
  sample: true
files:
  description: The file written or removed, with what was done to it; empty when nothing changed.
  returned: always
  type: list
  elements: dict
  sample: [{path: /etc/rancher/k3s/baremetal-k3s-pod-security.yaml, action: created, backup_file: null}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _pod_security as pod_security
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

_LEVEL = dict(type='str', choices=list(pod_security.LEVELS))
ARGUMENT_SPEC = dict(
    path=dict(type='path', required=True),
    state=dict(type='str', choices=['present', 'absent'], default='present'),
    enforce=_LEVEL, enforce_version=dict(type='str'),
    audit=_LEVEL, audit_version=dict(type='str'),
    warn=_LEVEL, warn_version=dict(type='str'),
    exempt_namespaces=dict(type='list', elements='str'),
    exempt_usernames=dict(type='list', elements='str'),
    exempt_runtime_classes=dict(type='list', elements='str'),
    settings=dict(type='dict'),
    settings_name=dict(type='str', default='settings'),
    backup=dict(type='bool', default=False),
)
MUTUALLY_EXCLUSIVE = [('settings', key) for key in pod_security.KEYS]


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, mutually_exclusive=MUTUALLY_EXCLUSIVE)
    try:
        result = _io.locked_apply(module, lambda: pod_security.plan(_io.node_view(module), module.params),
                                  paths=[module.params['path']], backup=module.params['backup'])
    except (PlanError, _io.ApplyError) as e:
        module.fail_json(msg=e.msg, **getattr(e, 'details', {}))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
