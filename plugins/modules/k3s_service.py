#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_service
short_description: Ensure the k3s service unit (or openrc init script) and its environment file, as the k3s installer writes them
version_added: 0.1.0
description:
  - Writes the files the k3s installer (C(install.sh)) writes for a service, byte for byte in its format, without running
    the installer and without downloading anything - for air-gapped installs where the binary is put in place separately.
  - With systemd, the unit C(<systemd_dir>/<service>.service) (mode 0644) and its environment file
    C(<systemd_dir>/<service>.service.env) (mode 0600). With openrc, the init script C(/etc/init.d/<service>) (mode 0755,
    C(command_args) with the log redirection to C(/var/log/<service>.log)), the environment file
    C(/etc/rancher/k3s/<service>.env) (mode 0600) and, with a new init script, C(/etc/logrotate.d/<service>).
  - A node the installer already set up is adopted as it is - with the same options and arguments no file changes. The
    command line is compared as systemd (or openrc) reads it, so any quoting that gives the same arguments is kept.
  - A change of O(args) replaces the C(ExecStart) lines (openrc - the C(command_args) assignment) only; a change of
    O(type) the C(Type=) line only; every other byte of the unit is kept, local edits included.
  - Refuses, before writing anything, a file at the unit's path that is not the k3s unit (or init script) of O(command) -
    another C(ExecStart) binary, another subcommand - and arguments or variables a unit or environment file cannot carry.
  - The module never starts, stops, enables or restarts the service. It reports whether a restart
    (RV(restart_required)) and a systemd daemon-reload (RV(daemon_reload_required)) are needed.
  - Runs that change the same service at the same time wait for each other (the lock of M(baremetal.k3s.k3s_service_arg)).
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.FILES
options:
  state:
    description:
      - V(present) ensures the files; V(absent) removes the unit (or init script) and its environment file, as
        C(k3s-uninstall.sh) does - only when the unit is the k3s unit of O(command) starting C(<bin_dir>/k3s), and the
        environment file holds only C(KEY=value) lines. The binary, C(/etc/rancher/k3s) and the data are never touched;
        stop and disable the service first.
    type: str
    choices: [present, absent]
    default: present
  command:
    description:
      - The k3s subcommand the service runs.
    type: str
    choices: [server, agent]
    default: server
  name:
    description:
      - The installer's C(INSTALL_K3S_NAME). The service is C(k3s-<name>); without it V(k3s) for a server, C(k3s-agent) for
        an agent.
      - The installer refuses a name holding white space, C(/), C(_) or one of C([]!#$%&()*;<=>?\`{|}); so does this module,
        which also allows only letters, digits, C(-) and C(.).
    type: str
  bin_dir:
    description:
      - The installer's C(INSTALL_K3S_BIN_DIR) - the directory of the k3s binary the service starts (C(<bin_dir>/k3s)).
      - An existing unit starting the binary elsewhere gets its C(ExecStart) path changed.
    type: path
    default: /usr/local/bin
  systemd_dir:
    description:
      - The installer's C(INSTALL_K3S_SYSTEMD_DIR) - where the unit and its environment file are. Immutable OSes keep them in
        C(/usr/lib/systemd/system); choose it here, it is never guessed. Ignored with openrc.
    type: path
    default: /etc/systemd/system
  args:
    description:
      - The arguments after the subcommand (the installer's C(INSTALL_K3S_EXEC) after its first word), as k3s gets them.
      - V(null) keeps the arguments an existing unit has; a new unit gets none.
      - Each argument is written on its own line in single quotes, as the installer writes it. A backslash or C(%) is
        written escaped (C(\\), C(%%)), so that systemd passes it on unchanged (the installer writes them raw).
      - Refused - control characters but TAB (a line break would end the command), and C($) in an argument that has to be
        written (systemd or the openrc shell would expand it; use O(env) or a k3s config file). With openrc, a TAB or a run
        of spaces reaches k3s as one space (openrc splits C(command_args) before C(eval)); a warning says so.
    type: list
    elements: str
  env:
    description:
      - The variables of the environment file (C(K3S_TOKEN), C(K3S_URL), C(HTTP_PROXY), C(NO_PROXY)...), written as
        C(KEY='value') lines - C(K3S_*) and C(CONTAINERD_*) first, then the proxy variables, then any other, each group
        sorted, as the installer writes them. Unlike the installer, runs of white space inside a value are kept.
      - V(null) keeps an existing file as it is (a new one is empty). An existing file that sets exactly these variables is
        kept byte for byte.
      - Keys must be variable names; values single-line text.
      - Values of variables whose name contains C(TOKEN) are never shown in the diff or the output.
    type: dict
  type:
    description:
      - The unit's C(Type=) (the installer's C(INSTALL_K3S_TYPE)). V(null) keeps the type of an existing unit; a new unit gets
        V(notify). Ignored with openrc.
    type: str
    choices: [notify, exec]
  init:
    description:
      - The init system. V(auto) is openrc when C(/sbin/openrc-run) exists on the node (as the installer decides), else
        systemd.
    type: str
    choices: [auto, systemd, openrc]
    default: auto
  backup:
    description:
      - Keep a copy of each file before it is changed or removed, next to it, with a time stamp in its name.
    type: bool
    default: false
requirements:
  - Python 3.7 or later on the node.
notes:
  - The installer rewrites these files on every run; this module keeps them in that format, so running the installer
    afterwards (to upgrade) changes nothing that this module would not write itself.
  - Secrets - the values of k3s's secret-bearing options in O(args) in any form (C(--token=x), C(--token x), C(-t x),
    C(-t=x), C(--agent-token), C(--etcd-s3-secret-key)..., the password of C(--datastore-endpoint)) and of its variables
    in O(env) (C(K3S_TOKEN), C(K3S_AGENT_TOKEN), C(K3S_DATASTORE_ENDPOINT)'s password, C(AWS_SECRET_ACCESS_KEY)...), and
    those the existing unit and environment file hold - never appear in the diff, the result, the invocation, the
    warnings or the messages (C((hidden)) in the module's own output, masked by Ansible everywhere else). Prefer O(env)
    (C(K3S_TOKEN)) or a C(token-file) in a k3s config file to an argument, since every user can read the unit.
seealso:
  - module: baremetal.k3s.k3s_config_file
  - module: baremetal.k3s.k3s_service_arg
  - name: k3s installation options
    description: The installer's variables (INSTALL_K3S_EXEC, INSTALL_K3S_NAME, INSTALL_K3S_BIN_DIR, INSTALL_K3S_SYSTEMD_DIR...).
    link: https://docs.k3s.io/installation/configuration#configuration-with-install-script
'''

EXAMPLES = r'''
- name: The server unit, as "INSTALL_K3S_EXEC='--disable=traefik' install.sh" writes it
  baremetal.k3s.k3s_service:
    command: server
    args: [--disable=traefik]
    env:
      K3S_TOKEN_FILE: /etc/rancher/k3s/token
  register: k3s_unit

- name: Reload systemd and restart k3s when its files changed
  ansible.builtin.systemd_service:
    name: "{{ k3s_unit.service }}"
    state: restarted
    enabled: true
    daemon_reload: "{{ k3s_unit.daemon_reload_required }}"
  when: k3s_unit.restart_required

- name: An agent on an immutable OS (unit in /usr/lib, binary in /opt/bin), keeping the arguments it has
  baremetal.k3s.k3s_service:
    command: agent
    systemd_dir: /usr/lib/systemd/system
    bin_dir: /opt/bin
    env:
      K3S_URL: https://k3s.example.com:6443
      K3S_TOKEN: "{{ k3s_agent_token }}"

- name: Remove the unit and its environment file (the service stopped and disabled before)
  baremetal.k3s.k3s_service:
    command: server
    state: absent
'''

RETURN = r'''
changed:
  description: Whether a file was (or, in check mode, would be) changed.
  returned: always
  type: bool
  sample: true
unit_path:
  description: The unit file (systemd) or init script (openrc).
  returned: always
  type: str
  sample: /etc/systemd/system/k3s.service
env_path:
  description: The environment file.
  returned: always
  type: str
  sample: /etc/systemd/system/k3s.service.env
service:
  description: The service name, for M(ansible.builtin.systemd_service) or M(ansible.builtin.service).
  returned: always
  type: str
  sample: k3s
init:
  description: The init system the files are for, V(systemd) or V(openrc).
  returned: always
  type: str
  sample: systemd
command:
  description: The k3s subcommand.
  returned: always
  type: str
  sample: server
args:
  description:
    - The arguments after the subcommand, as the service runs k3s after the change (with O(args=null), those of the
      existing unit). Empty with O(state=absent). Secret values are shown as C((hidden)).
  returned: always
  type: list
  elements: str
  sample: [--disable=traefik, --node-label=zone=a, --token, (hidden)]
restart_required:
  description: True when the unit (or init script) or the environment file changed; the module never restarts anything.
  returned: always
  type: bool
  sample: true
daemon_reload_required:
  description: True when the systemd unit changed (created, modified or removed). Always false for openrc.
  returned: always
  type: bool
  sample: true
files:
  description:
    - One entry per file changed, so a caller can undo exactly this run - restore RV(files[].backup_file) over
      RV(files[].path), or remove a file this run created.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The file.
      type: str
      sample: /etc/systemd/system/k3s.service
    action:
      description: V(created), V(modified) or V(removed).
      type: str
      sample: created
    backup_file:
      description: The copy taken before the change (O(backup=true), not in check mode), else V(null).
      type: str
      sample: null
  sample: [{path: /etc/systemd/system/k3s.service, action: created, backup_file: null},
           {path: /etc/systemd/system/k3s.service.env, action: created, backup_file: null}]
backup_file:
  description: The backup of the first file changed, when O(backup=true).
  returned: when a backup was made
  type: str
  sample: /etc/systemd/system/k3s.service.12345.2026-01-01@10:00:00~
diff:
  description: Before and after of each changed file, in diff mode; secret values shown as C((hidden)).
  returned: when diff mode is on and something changed
  type: list
  elements: dict
  sample: [{before: "", after: "K3S_TOKEN=(hidden)\n", before_header: /etc/systemd/system/k3s.service.env,
            after_header: /etc/systemd/system/k3s.service.env}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _installer as installer
from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

ARGUMENT_SPEC = installer.ARGUMENT_SPEC


def hide_secrets(module):
    """Secret values of ``args`` and ``env`` never appear in the module's output (invocation included): Ansible masks them."""
    installer.add_secrets(module.params, module.no_log_values)


class Module(_secrets.MaskedLog, AnsibleModule):
    """AnsibleModule whose own log line on the node (journal or syslog: "Invoked with ...") masks the secrets too."""

    add_secrets = hide_secrets


def main():
    module = Module(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    hide_secrets(module)
    try:
        result = _io.locked_apply(module, lambda: installer.plan(_io.node_view(module), module.params, module.no_log_values),
                                  keys=[installer.lock_key(module.params)], backup=module.params['backup'])
    except (PlanError, _io.ApplyError) as e:
        module.fail_json(msg=e.msg, **getattr(e, 'details', {}))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
