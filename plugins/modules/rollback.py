#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: rollback
short_description: Put back the files a run changed, from the C(files) its modules returned
version_added: 0.1.0
description:
  - Every writing module of this collection returns RV(baremetal.k3s.k3s_service_arg#module:files) - one
    C({path, action, backup_file}) per file it created, modified or removed. Given the concatenated lists of one run,
    this module undoes exactly that run - O(mode=restore) removes the files it created and gives the others the bytes
    of their first backup (the state before the run, even when two tasks changed one file) - or, once the change is
    proven, O(mode=discard) only removes the backups.
  - Backups are removed in both modes, once every file is back. A file that is already as it should be is left alone;
    a backup that is already gone means an earlier rollback of the same run put its file back (it was cut off while
    removing the backups) - a warning says so.
  - Refuses, before touching anything, a list that needs a backup it does not have.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: The values of k3s's secret-bearing options the files hold (a token, a datastore password, an S3 key) are
      shown as C((hidden)) in the diff, and masked by Ansible everywhere in the result.
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: posix
options:
  files:
    description: The C(files) lists of the run's writing modules, concatenated in the order the tasks ran.
    type: list
    elements: dict
    required: true
  mode:
    description: V(restore) puts every file back as it was before the run; V(discard) keeps the files and drops the backups.
    type: str
    choices: [restore, discard]
    default: restore
'''

EXAMPLES = r'''
- name: Change a scheduler config and the k3s flag, restart, prove it, or put the files back
  block:
    - name: Add the extender
      baremetal.k3s.scheduler_config:
        path: /etc/rancher/k3s/kube-scheduler/config.yaml
        extender:
          url_prefix: http://127.0.0.1:8889
        kubeconfig: /var/lib/rancher/k3s/server/cred/scheduler.kubeconfig
        backup: true
      register: config
    - name: Prove it (here, a check that may fail)
      ansible.builtin.command: /usr/local/bin/check-scheduler
      changed_when: false
  rescue:
    - name: Put the files back
      baremetal.k3s.rollback:
        files: "{{ config.files | default([]) }}"
'''

RETURN = r'''
restored:
  description: The files put back (created ones removed), in order.
  returned: always
  type: list
  elements: str
  sample: [/etc/rancher/k3s/kube-scheduler/config.yaml]
backups_removed:
  description: The backups removed.
  returned: always
  type: list
  elements: str
files:
  description: What this module changed, as the writing modules report it.
  returned: always
  type: list
  elements: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _rollback as rollback
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

ARGUMENT_SPEC = dict(
    files=dict(type='list', elements='dict', required=True),
    mode=dict(type='str', default='restore', choices=['restore', 'discard']),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        # the lock of every file it puts back and every backup it removes: the same locks as the modules that wrote them
        result = _io.locked_apply(module,
                                  lambda: rollback.hidden_plan(rollback.plan(_io.node_view(module), module.params), module.no_log_values),
                                  paths=rollback.paths(module.params))
    except (PlanError, _io.ApplyError) as e:
        module.fail_json(msg=e.msg)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
