#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: node_lease
short_description: Let one run at a time change a node - take or give back a named lease
version_added: 0.1.0
description:
  - Takes (O(state=present)) or gives back (O(state=absent)) a lease named O(name) on the node, a small file in
    C(/run/baremetal-k3s/) that records who holds it and since when.
  - A run that finds the lease held by another owner waits up to O(timeout) seconds for it, then fails with a message
    naming the holder. A lease older than O(expire) seconds is a leftover of a run that was killed - it is taken
    over, with a warning.
  - The roles of this collection take one with their first write and give it back at their end (also when they fail;
    a proven change gives it back in the module run that proves it, M(baremetal.k3s.extender_status)'s
    O(baremetal.k3s.extender_status#module:give_back)), so two playbook runs against the same node never change it
    at the same time. Each module also locks the files it
    changes while it runs.
  - C(/run) is emptied at boot, so a reboot gives back every lease.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
attributes:
  check_mode:
    support: full
    details: Waits for a held lease and fails as a real run would, but takes nothing.
  diff_mode:
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: posix
options:
  name:
    description: The lease, for example V(scheduler_extender). Letters, digits, C(.), C(_) and C(-).
    type: str
    required: true
  state:
    description: V(present) takes the lease (or keeps it, for its owner), V(absent) gives it back.
    type: str
    choices: [present, absent]
    default: present
  owner:
    description:
      - Who holds it. With O(state=present), empty means a new owner (returned as RV(owner)); give the returned value
        back with O(state=absent), or to renew it.
      - With O(state=absent), a lease of another owner is left in place (a warning says so); empty gives back whatever
        lease there is.
    type: str
    default: ''
  holder:
    description: Words for others that find the lease, for example the play and the controller.
    type: str
    default: baremetal.k3s
  timeout:
    description: Seconds to wait for a lease another owner holds; V(0) fails at once.
    type: int
    default: 300
  expire:
    description: Seconds after which a lease counts as left behind by a killed run, and is taken over.
    type: int
    default: 3600
  discard:
    description:
      - With O(state=absent), the rollback copies of these files are dropped in the same run, before the lease is
        given back - the end of a change that is proven, in one module run. The entries as the writing modules
        return them in C(files) (V([{path, action, backup_file}])), as M(baremetal.k3s.rollback) takes them with
        C(mode=discard).
      - A copy that is not a regular file stops the run with nothing changed and the lease still held.
    type: list
    elements: dict
    default: []
'''

EXAMPLES = r'''
- name: One run at a time on this node
  baremetal.k3s.node_lease:
    name: scheduler_extender
    holder: "{{ ansible_play_name }}"
  register: lease

- name: Change the node
  block:
    - name: ...
      ansible.builtin.debug:
        msg: changing
  always:
    - name: Give the lease back
      baremetal.k3s.node_lease:
        name: scheduler_extender
        owner: "{{ lease.owner }}"
        state: absent

# A change kept rollback copies (backup: true) and proved itself: drop the copies as the lease goes back
- name: Write with rollback copies
  baremetal.k3s.scheduler_config:
    path: /etc/rancher/k3s/kube-scheduler/config.yaml
    extender:
      url_prefix: http://127.0.0.1:8889
    backup: true
  register: config

- name: The change proven, drop its rollback copies and give the lease back (one module run)
  baremetal.k3s.node_lease:
    name: scheduler_extender
    owner: "{{ lease.owner }}"
    state: absent
    discard: "{{ config.files }}"
'''

RETURN = r'''
owner:
  description: The owner of the lease (the value to give back with O(state=absent)).
  returned: always
  type: str
  sample: 3f2a9c0e5b8d4f61a7c2e9d0b1f3a5c7
holder:
  description: The holder's words, as recorded (another's, with O(state=absent) and a lease it holds).
  returned: always
  type: str
  sample: Install CSI Baremetal's scheduler extender
since:
  description:
    - When this holder took the lease, on the node's clock (seconds since the epoch).
    - Nothing of the holder's run happened on the node before it, so what the node did since then (a restart, log
      lines) is that run's or later.
  returned: with O(state=present)
  type: float
  sample: 1764028800.123456
lease_file:
  description: The lease file.
  returned: always
  type: str
  sample: /run/baremetal-k3s/scheduler_extender.lease
waited:
  description: Seconds spent waiting for another holder.
  returned: always
  type: float
  sample: 0.0
files:
  description: The copies dropped (O(discard)) and the lease file, when it was created or removed - V([{path, action, backup_file}]).
  returned: always
  type: list
  elements: dict
backups_removed:
  description: The rollback copies dropped.
  returned: when O(discard) is given
  type: list
  elements: str
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _lease as lease
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

ARGUMENT_SPEC = dict(
    lease.TAKE_SPEC,
    state=dict(type='str', default='present', choices=['present', 'absent']),
    owner=dict(type='str', default='', no_log=False),
    discard=dict(type='list', elements='dict', default=[]),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    view = _io.node_view(module)
    params = module.params
    try:
        if params['discard'] and params['state'] != 'absent':
            module.fail_json(msg='discard goes with state=absent: the rollback copies are dropped as the lease of the '
                                 'run that kept them is given back. Nothing was changed.')
        if params['state'] == 'absent':
            result = lease.give_back(module, view, params)
        else:
            result, dummy = lease.run(module, view, params)
    except (PlanError, _io.ApplyError) as e:
        module.fail_json(msg=e.msg)
    result.pop('diff', None)  # no diff: a copy's bytes are the file's, secrets and all
    module.exit_json(**result)


if __name__ == '__main__':
    main()
