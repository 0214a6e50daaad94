#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_token_file
short_description: Give a k3s node its cluster token in a 0600 file, never over a different one
version_added: 0.1.0
description:
  - Writes O(token) to O(path) (the file k3s's C(token-file) option names) when the file is missing; the file is mode
    0600 and owned by root after every write, a replaced one too.
  - A token k3s's own parser refuses is refused - a C(K10...) token without C(::) and C(<user>:<password>), or with a
    CA hash that is not the 64 hex digits of a sha256 - rather than written as if it were a bare password.
  - A symbolic link on the way to O(path) that is not root's, or a directory on the way that another user may write,
    is refused before anything is read or written there; so is a FIFO or another special file at O(path).
  - A file that already holds the same token is left as it is. The same token is k3s's reading of it - only the
    password authenticates, so C(K10<CA hash>::server:<password>) and the bare C(<password>) are the same token; two
    full tokens with different CA hashes belong to different clusters.
  - A file holding a different token is refused unless O(replace=true) - the node may have joined its cluster with it,
    and a wrong token breaks the join at the next restart. An empty token is always refused.
  - The token is never shown - not in the result, the diff (which only says that a token changed), warnings or
    messages.
  - The module never restarts k3s; RV(changed) tells the caller that the node should be restarted to use the file.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.FILES
options:
  path:
    description: The token file, as k3s's C(token-file) option gives it.
    type: path
    required: true
  token:
    description:
      - The cluster token - a full C(K10...) token as the server writes it (C(<data-dir>/server/token)) or the bare password.
      - Required with O(state=present). With O(state=absent), the file is removed only when it holds this token.
    type: str
  state:
    description:
      - V(present) writes the file; V(absent) removes it, only when it holds a k3s token (the one in O(token), when given).
        A file that holds anything else is refused and left as it is.
    type: str
    default: present
    choices: [present, absent]
  replace:
    description: Write O(token) over a file that holds a different one (a token rotation, a node moved to another cluster).
    type: bool
    default: false
seealso:
  - module: baremetal.k3s.k3s_config_file
'''

EXAMPLES = r'''
- name: Give an agent the cluster token read from the first server
  baremetal.k3s.k3s_token_file:
    path: /etc/rancher/k3s/cluster-token
    token: "{{ cluster_token }}"
  no_log: true
  notify: Restart k3s-agent

- name: Remove the token file of a node taken out of its cluster
  baremetal.k3s.k3s_token_file:
    path: /etc/rancher/k3s/cluster-token
    state: absent
'''

RETURN = r'''
changed:
  description: Whether the file was (or, in check mode, would be) written.
  returned: always
  type: bool
  sample: true
path:
  description: The token file.
  returned: always
  type: str
  sample: /etc/rancher/k3s/cluster-token
replaced:
  description: True when a different token was replaced (O(replace=true)).
  returned: always
  type: bool
  sample: false
files:
  description: The file written or removed, with what was done to it (C(created), C(modified), C(removed)); empty when nothing
    changed.
  returned: always
  type: list
  elements: dict
  sample: [{path: /etc/rancher/k3s/cluster-token, action: created, backup_file: null}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _token_file as token_file
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

ARGUMENT_SPEC = token_file.ARGUMENT_SPEC


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                           required_if=token_file.REQUIRED_IF)
    try:
        result = _io.locked_apply(module, lambda: token_file.plan(_io.node_view(module), module.params),
                                  paths=[module.params['path']])
    except (PlanError, _io.ApplyError) as e:
        module.fail_json(msg=e.msg, **getattr(e, 'details', {}))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
