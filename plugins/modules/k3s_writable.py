#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_writable
short_description: Find the files and directories a run would replace or remove that cannot be
version_added: 0.1.0
description:
  - Says, before anything changes, which of the given paths a run could not replace (a file renamed over, or created) or
    remove (a file, or a directory with everything in it), and why - so that a playbook can refuse on every node at once
    instead of failing half way through on one of them.
  - A path cannot be replaced or removed when it is a mount point (a bind-mounted file or directory - a rename over it
    or its removal fails with C(EBUSY)), when the directory it is in is on a read-only file system (an immutable
    C(/usr)), when it or its directory has the immutable or append-only attribute (C(chattr +i), C(chattr +a)), or - a
    directory to remove - when another file system is mounted inside it (its removal would empty that one too).
  - A path to remove that does not exist is nothing to do. Never changes the node.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.INFO_MODULE
options:
  replace:
    description: Absolute paths of files the run would put in place (replace by a rename in their directory, or create).
    type: list
    elements: str
    default: []
  remove:
    description: Absolute paths of files, or directories with all they hold, the run would remove.
    type: list
    elements: str
    default: []
  data_dir:
    description:
      - k3s's data directory. The pods' mounts (under C(/run/k3s), C(<data_dir>/agent), C(/var/lib/kubelet/pods) and
        C(/var/lib/kubelet/plugins)) are taken down by M(baremetal.k3s.k3s_killall) before a reset removes anything, so
        they do not count as mounted inside a directory to remove. Empty - every mount counts.
    type: str
    default: ''
notes:
  - Mount points are read from C(/proc/self/mountinfo), read-only file systems from C(statvfs) of the nearest existing
    directory, the attributes from the inode flags (C(FS_IOC_GETFLAGS), what C(lsattr) shows); no command is run.
seealso:
  - module: baremetal.k3s.k3s_binary
  - module: baremetal.k3s.k3s_killall
'''

EXAMPLES = r'''
- name: Find what an upgrade could not replace
  baremetal.k3s.k3s_writable:
    replace: [/usr/local/bin/k3s, /usr/local/bin/k3s.previous]
  register: places

- name: Stop before anything changes, naming every such path of every node
  ansible.builtin.assert:
    that: ansible_play_hosts_all | map('extract', hostvars, 'places') | map(attribute='refused') | flatten | length == 0
    fail_msg: "{{ dict(ansible_play_hosts_all | zip(ansible_play_hosts_all | map('extract', hostvars, 'places') | map(attribute='msg'))) }}"
  run_once: true
'''

RETURN = r'''
refused:
  description: Each path that cannot be replaced or removed, in the order given (replace first).
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The path.
      type: str
    action:
      description: V(replace) or V(remove).
      type: str
    reason:
      description: Why not.
      type: str
  sample: [{path: /usr/local/bin/k3s, action: replace,
            reason: 'is a mount point (a bind mount or a file system of its own): a rename over it fails with EBUSY'}]
msg:
  description: RV(refused) in one line; empty when every path can be replaced or removed.
  returned: always
  type: str
  sample: '/usr/local/bin/k3s is on a read-only file system (mounted at /usr), so it cannot be replaced'
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _writable as writable
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import ViewError

ARGUMENT_SPEC = dict(
    replace=dict(type='list', elements='str', default=[]),
    remove=dict(type='list', elements='str', default=[]),
    data_dir=dict(type='str', default=''),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        plan = writable.check(_io.node_view(module), module.params)
    except PlanError as e:
        module.fail_json(msg=e.msg, **e.details)
    except ViewError as e:
        module.fail_json(msg=str(e))
    module.exit_json(**_io.report(module, plan))


if __name__ == '__main__':
    main()
