#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_registries
short_description: Write containerd's registry mirrors, auth and TLS to k3s's registries.yaml
version_added: 0.1.0
description:
  - Writes O(mirrors) and O(configs) in k3s's C(registries.yaml) format (k3s and RKE2 read it when their agent starts,
    servers included), mode 0600 and owned by root after every write (a file taken over too), with a marker as its
    first line that makes the file the collection's.
  - Strings are written so that k3s's YAML reader reads them back exactly (a character outside the Basic Multilingual
    Plane as itself); the file is read back before it is written, and refused when it would not give k3s the settings
    given.
  - A symbolic link on the way to O(path) that is not root's, or a directory on the way that another user may write,
    is refused before anything is read or written there.
  - Every key is checked against the format k3s reads (k3s drops keys it does not know, so a misspelt one would do
    nothing); registry names, endpoint URLs and file paths are checked before anything is read for writing.
  - The same options give the same bytes (keys sorted, strings double-quoted), so a re-run changes nothing.
  - With no mirrors and no configs, the collection's file is removed and a file the collection did not write is left
    as it is. A file the collection did not write is never written over unless O(take_over=true), which keeps a backup.
  - C(password), C(auth) and C(identity_token) are never shown - not in the result, the diff (which shows
    C((hidden)); an operator's file taken over too, whatever the shape of its values), the invocation and its log line
    on the node, warnings or messages; given where k3s does not read them (under O(mirrors)) they are refused.
  - The module never restarts k3s; RV(changed) tells the caller that the node should be restarted to use the file.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.FILES
options:
  mirrors:
    description:
      - Registry name (C(docker.io), C(registry.example:5000), C(*) for every registry) to its mirror -
        C(endpoint) (a list of http or https URLs, tried in order) and C(rewrite) (repository regular expression to
        its replacement).
    type: dict
    default: {}
  configs:
    description:
      - Registry host to its settings - C(auth) (C(username), C(password), C(auth), C(identity_token)) and C(tls)
        (C(ca_file), C(cert_file), C(key_file) as absolute paths on the node, C(insecure_skip_verify)).
    type: dict
    default: {}
  platform:
    description: Whose registries.yaml - its place is the platform's (C(/etc/rancher/k3s/registries.yaml) for k3s).
    type: str
    choices: [k3s, rke2]
    default: k3s
  path:
    description: Another place for the file (k3s's C(private-registry) option); default - the platform's.
    type: path
  take_over:
    description: Write over a registries.yaml the collection did not write (a backup of it is kept).
    type: bool
    default: false
seealso:
  - module: baremetal.k3s.k3s_config_file
'''

EXAMPLES = r'''
- name: Pull docker.io images through the internal mirror, with a password
  baremetal.k3s.k3s_registries:
    mirrors:
      docker.io:
        endpoint: [https://registry.example:5000]
    configs:
      registry.example:5000:
        auth: {username: puller, password: "{{ vault_registry_password }}"}
        tls: {ca_file: /etc/ssl/certs/internal-ca.pem}
  notify: Restart k3s
'''

RETURN = r'''
changed:
  description: Whether the file was (or, in check mode, would be) written or removed.
  returned: always
  type: bool
  sample: true
path:
  description: The registries.yaml.
  returned: always
  type: str
  sample: /etc/rancher/k3s/registries.yaml
owned:
  description: Whether the file is (after this run) the collection's.
  returned: always
  type: bool
  sample: true
taken_over:
  description: True when a file the collection did not write was replaced (O(take_over=true)).
  returned: always
  type: bool
  sample: false
mirrors:
  description: The registry names given a mirror.
  returned: always
  type: list
  elements: str
  sample: [docker.io]
configs:
  description: The registry hosts given settings.
  returned: always
  type: list
  elements: str
  sample: ["registry.example:5000"]
files:
  description: The file written or removed, with what was done to it; empty when nothing changed.
  returned: always
  type: list
  elements: dict
  sample: [{path: /etc/rancher/k3s/registries.yaml, action: created, backup_file: null}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _registries as registries
from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

ARGUMENT_SPEC = registries.ARGUMENT_SPEC


def hide_secrets(module):
    """Every secret the options hold, wherever it stands (under mirrors by mistake too), is masked in every output."""
    registries.add_secrets(module.params, module.no_log_values)


class Module(_secrets.MaskedLog, AnsibleModule):
    """AnsibleModule whose own log line on the node (journal or syslog: "Invoked with ...") masks the secrets too."""

    add_secrets = hide_secrets


def main():
    module = Module(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    hide_secrets(module)
    params = registries.with_path(module.params)
    try:
        result = _io.locked_apply(module, lambda: registries.plan(_io.node_view(module), params, module.no_log_values),
                                  paths=[params['path']], backup=params['take_over'])
    except (PlanError, _io.ApplyError) as e:
        module.fail_json(msg=e.msg, **getattr(e, 'details', {}))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
