#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_binary
short_description: Put a new k3s or RKE2 binary in place atomically, keeping the old one for a rollback
version_added: 0.1.0
description:
  - With O(state=present), puts the new binary O(src) (a file already on the node, checked against O(sha256)) at
    O(path), and keeps the binary it replaces as C(<path>.previous) (replacing an older one). With O(state=previous),
    puts C(<path>.previous) back at O(path) - the rollback of an upgrade whose node did not come back.
  - Reads each binary's version by running it with C(--version) (the first line, C(k3s version v1.31.4+k3s1 (...)) or
    C(rke2 version v1.31.4+rke2r1 (...))). Before anything is written it refuses a downgrade (unless
    O(allow_downgrade)), a skip of more than one minor version (unless O(allow_minor_skip)), a version newer than
    O(max_version), and a binary of another program than the installed one.
  - O(path) is replaced by a rename, never written in place - at every instant it is a whole binary, the old or the new
    one, and once it is the new one C(<path>.previous) holds the old one. The new bytes are copied into a temp file in
    the same directory (their sha256 checked again while copied), fsynced, mode C(0755), owned by root. The whole runs
    under the locks of O(path) and C(<path>.previous), so two runs on one node cannot interleave.
  - Does not restart k3s; the running process keeps the old binary until it is restarted.
  - When O(path) is a symbolic link, the file it points to is replaced (the link stays) and C(.previous) is kept beside
    that file.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.FILES
options:
  path:
    description:
      - The installed binary that k3s (or RKE2) runs from, for example V(/usr/local/bin/k3s).
      - Its directory (the real one) and every directory above it must be owned by root and not writable by others (one
        above it may be sticky, as /tmp), and no symbolic link on the way may belong to another user.
    type: path
    required: true
  src:
    description:
      - The new binary, a file already on the node (copy it there first). Required with O(state=present).
      - Must be a regular file (not a symbolic link), executable, owned by root and writable by nobody else, in a
        directory of root's that others cannot write, or a sticky one such as C(/tmp); its version is read by running
        it.
    type: path
  sha256:
    description:
      - The sha256 of O(src), 64 hex digits (from the release's C(sha256sum-amd64.txt)). Required with O(src); a
        different O(src) is refused and nothing is changed.
    type: str
  state:
    description:
      - V(present) - O(src) at O(path), the old binary kept as C(<path>.previous).
      - V(previous) - C(<path>.previous) back at O(path) (the rollback). C(.previous) stays, so running it again changes
        nothing.
    type: str
    choices: [present, previous]
    default: present
  allow_downgrade:
    description:
      - Allow O(src) to be older than the installed binary, and replace an installed binary whose version cannot be
        read.
    type: bool
    default: false
  allow_minor_skip:
    description:
      - Allow O(src) to be more than one minor version newer than the installed binary (v1.29 to v1.31), or of another
        major version.
    type: bool
    default: false
  max_version:
    description:
      - Refuse an O(src) newer than this version, for example the oldest server's version when upgrading agents (an
        agent must not be newer than the servers). V(v1.31.4) compares without the C(+k3sN) build; V(v1.31.4+k3s1) with
        it.
    type: str
notes:
  - The copy of O(src) to the node (M(ansible.builtin.copy), M(ansible.builtin.get_url) with its checksum) is left to the
    caller; this module only checks and installs it. O(src) stays where it is.
  - A run killed part way leaves O(path) either as it was or the new binary with C(.previous) the old one; a temp file
    it leaves (C(.<name>.bk3s-*.tmp)) is removed by the next run. A write that fails (a full disk, a read-only file
    system) is an error that says so, with O(path) and C(.previous) as they were.
seealso:
  - module: baremetal.k3s.k3s_ready
  - module: baremetal.k3s.k3s_info
'''

EXAMPLES = r'''
- name: Copy the new k3s to the node, checked by its sha256
  ansible.builtin.copy:
    src: files/k3s-v1.31.4+k3s1
    dest: /usr/local/bin/.k3s-new
    mode: "0755"
    checksum: "{{ k3s_new_sha1 }}"

- name: Put it in place, the old one kept as /usr/local/bin/k3s.previous
  baremetal.k3s.k3s_binary:
    path: /usr/local/bin/k3s
    src: /usr/local/bin/.k3s-new
    sha256: 3b0a1c9f3e5d2e7c4d0e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c
  register: binary

- name: Agents - never newer than the servers
  baremetal.k3s.k3s_binary:
    path: /usr/local/bin/k3s
    src: /usr/local/bin/.k3s-new
    sha256: 3b0a1c9f3e5d2e7c4d0e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c
    max_version: v1.31.4+k3s1

- name: The node did not come back - put the old binary back
  baremetal.k3s.k3s_binary:
    path: /usr/local/bin/k3s
    state: previous
'''

RETURN = r'''
version:
  description: The version of the binary at O(path) after the run (with O(state=previous), null when it prints none).
  returned: always
  type: str
  sample: v1.31.4+k3s1
previous_version:
  description: The version of the binary this run replaced; null when nothing was replaced (or its version could not be
    read).
  returned: always
  type: str
  sample: v1.30.6+k3s1
path:
  description: O(path).
  returned: always
  type: str
  sample: /usr/local/bin/k3s
previous_path:
  description: Where the old binary is kept, C(<path>.previous) (beside the real file when O(path) is a link).
  returned: always
  type: str
  sample: /usr/local/bin/k3s.previous
sha256:
  description: The sha256 of the binary at O(path) after the run.
  returned: always
  type: str
  sample: 3b0a1c9f3e5d2e7c4d0e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c
files:
  description:
    - The files this run wrote (none in check mode's effects, but listed), each C({path, action, backup_file}) as every
      writing module of this collection returns them; C(backup_file) is null (the old binary is C(previous_path)).
  returned: always
  type: list
  elements: dict
  sample: [{path: /usr/local/bin/k3s.previous, action: created, backup_file: null},
           {path: /usr/local/bin/k3s, action: modified, backup_file: null}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _binary as binary
from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import ViewError

ARGUMENT_SPEC = dict(
    path=dict(type='path', required=True),
    src=dict(type='path'),
    sha256=dict(type='str'),
    state=dict(type='str', choices=['present', 'previous'], default='present'),
    allow_downgrade=dict(type='bool', default=False),
    allow_minor_skip=dict(type='bool', default=False),
    max_version=dict(type='str'),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    try:
        binary.validate(params)
        view = _io.node_view(module)
        binary.check_paths(view, params)  # its own words, before the locks' check of the same rule
        with _io.node_lock(module, paths=[params['path'], binary.previous_path(view, params['path'])]):
            result = binary.apply(module, binary.plan(_io.node_view(module), params))
    except (PlanError, _io.ApplyError) as e:
        module.fail_json(msg=e.msg, **getattr(e, 'details', {}))
    except ViewError as e:
        module.fail_json(msg=str(e))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
