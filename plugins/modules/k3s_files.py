#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_files
short_description: Write a k3s node's token file, config.yaml.d file, registries.yaml and unit in one run, none unless all are valid
version_added: 0.1.0
description:
  - The writes of M(baremetal.k3s.k3s_token_file), M(baremetal.k3s.k3s_config_file), M(baremetal.k3s.k3s_registries)
    and M(baremetal.k3s.k3s_service) in one module run. Each option takes the options of its module, checked as that
    module checks them, and gives that module's result back (RV(token_file), RV(config_file), RV(registries),
    RV(service)). An option left out leaves its file alone.
  - Every part is planned before any is written, under the locks of all of them - a part its module would refuse (a
    different token already on the node, an unknown registries key, an argument with C($), an operator's file) stops
    the run with nothing written, where separate tasks would have written the parts before it.
  - Then each part is written in the order above. A write that fails puts its own part's files back; the parts written
    before it stay (as separate tasks would leave them).
  - One module run instead of four is what a re-run of a fleet costs per node - the roles C(baremetal.k3s.k3s_server)
    and C(baremetal.k3s.k3s_agent) write their files with it.
  - The secrets of every part (the token, the secret flags of the config file, registry credentials, secret arguments
    and environment variables of the unit) are masked in every output, as each module masks its own.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.FILES
options:
  token_file:
    description: The options of M(baremetal.k3s.k3s_token_file) - the cluster token file k3s's C(token-file) names.
    type: dict
  config_file:
    description: The options of M(baremetal.k3s.k3s_config_file) - one file of k3s's flags in C(config.yaml.d).
    type: dict
  registries:
    description: The options of M(baremetal.k3s.k3s_registries) - containerd's registry mirrors, auth and TLS.
    type: dict
  service:
    description: The options of M(baremetal.k3s.k3s_service) - the service unit (or OpenRC script) and its env file.
    type: dict
notes:
  - At least one of the options is required.
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: One diff per changed file, secrets hidden.
  platform:
    platforms: posix
'''

EXAMPLES = r'''
- name: Write the agent's files, restart once when any changed
  baremetal.k3s.k3s_files:
    token_file:
      path: /etc/rancher/k3s/cluster-token
      token: "{{ k3s_token }}"
    config_file:
      name: 40-agent.yaml
      service: k3s-agent
      values:
        server: https://10.0.0.10:6443
        token-file: /etc/rancher/k3s/cluster-token
    registries:
      mirrors:
        docker.io:
          endpoint: [https://mirror.example:5000]
    service:
      command: agent
  register: files
  notify: restart k3s-agent
'''

RETURN = r'''
token_file:
  description: The result of the token file's part, as M(baremetal.k3s.k3s_token_file) returns it.
  returned: when O(token_file) is given
  type: dict
config_file:
  description: The result of the config file's part, as M(baremetal.k3s.k3s_config_file) returns it.
  returned: when O(config_file) is given
  type: dict
registries:
  description: The result of the registries part, as M(baremetal.k3s.k3s_registries) returns it.
  returned: when O(registries) is given
  type: dict
service:
  description: The result of the unit's part, as M(baremetal.k3s.k3s_service) returns it.
  returned: when O(service) is given
  type: dict
files:
  description: Every file written or removed, in order - V([{path, action, backup_file}]).
  returned: always
  type: list
  elements: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _config_file as config_file
from ansible_collections.baremetal.k3s.plugins.module_utils import _installer as installer
from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _registries as registries
from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets
from ansible_collections.baremetal.k3s.plugins.module_utils import _token_file as token_file
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

# the parts, in the order they are written
PARTS = ('token_file', 'config_file', 'registries', 'service')
ARGUMENT_SPEC = {name: dict(type='dict') for name in PARTS}


def hide_secrets(module):
    """Every part's secrets, as given (before any check), into no_log_values: masked in the result, the invocation,
    the messages and the module's own log line."""
    for name, part in zip(PARTS, (token_file, config_file, registries, installer)):
        if isinstance(module.params.get(name), dict):
            part.add_secrets(module.params[name], module.no_log_values)


class Module(_secrets.MaskedLog, AnsibleModule):
    """AnsibleModule whose own log line on the node (journal or syslog: "Invoked with ...") masks the secrets too."""

    add_secrets = hide_secrets


def parts(module):
    """[(name, _io.Part)] of the options given, each planned as its own module plans it."""
    found = []
    params = _io.part_options(module, 'token_file', token_file.ARGUMENT_SPEC, required_if=token_file.REQUIRED_IF)
    if params is not None:
        found.append(('token_file', _io.Part(lambda p=params: token_file.plan(_io.node_view(module), p), paths=[params['path']])))
    params = _io.part_options(module, 'config_file', config_file.ARGUMENT_SPEC, required_if=config_file.REQUIRED_IF)
    if params is not None:
        found.append(('config_file', _io.Part(lambda p=params: config_file.plan(_io.node_view(module), p, module.no_log_values),
                                              keys=[config_file.lock_key(params)], apply_args={'backup': params['backup']})))
    params = _io.part_options(module, 'registries', registries.ARGUMENT_SPEC)
    if params is not None:
        params = registries.with_path(params)
        found.append(('registries', _io.Part(lambda p=params: registries.plan(_io.node_view(module), p, module.no_log_values),
                                             paths=[params['path']], apply_args={'backup': params['take_over']})))
    params = _io.part_options(module, 'service', installer.ARGUMENT_SPEC)
    if params is not None:
        found.append(('service', _io.Part(lambda p=params: installer.plan(_io.node_view(module), p, module.no_log_values),
                                          keys=[installer.lock_key(params)], apply_args={'backup': params['backup']})))
    return found


def main():
    module = Module(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, required_one_of=[PARTS])
    given = parts(module)
    try:
        results = _io.locked_apply_all(module, [part for dummy, part in given])
    except (PlanError, _io.ApplyError) as e:
        module.fail_json(msg=e.msg, **getattr(e, 'details', {}))
    result = _io.parts_result(results)  # each part's diff its own, its secrets hidden by its plan
    result.update((name, r) for (name, dummy), r in zip(given, results))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
