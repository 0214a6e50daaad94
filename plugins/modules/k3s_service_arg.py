#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_service_arg
short_description: Ensure one argument is or is not given to the k3s (or RKE2) service
version_added: 0.1.0
description:
  - Adds one argument to, or removes it from, what the k3s service starts k3s with. RKE2 reads its flags the same
    way (its own C(/etc/rancher/rke2/config.yaml.d/), variable C(RKE2_CONFIG_FILE)); a service that starts an
    C(rke2) binary is handled as RKE2.
  - Three places can hold it. The C(ExecStart) of the systemd unit (or C(command_args) of the openrc init
    script) the k3s installer wrote; a systemd drop-in that replaces C(ExecStart); or a file in
    C(/etc/rancher/k3s/config.yaml.d/) that appends to the flag's list (C(<flag>+:)), so nothing else is replaced.
  - Edits keep every byte the module does not own (comments, other flags, other sections, line endings).
    An added argument is a new line in the installer's layout; removing it gives back the file byte for byte.
  - The module never restarts k3s. It reports whether the running process already uses the change
    (RV(restart_required)) and whether systemd needs a daemon-reload (RV(daemon_reload_required)).
  - Before writing, it computes what k3s will run with - the command line systemd (or openrc) builds and the flags of
    every config file, the new one included - and refuses a change that would have no effect (a later
    C(config.yaml.d) file that sets the flag without C(+), a drop-in whose C(ExecStart) replaces the unit's), naming
    the file that masks it. An argument k3s already gets, from any file, is not added again.
  - With O(state=absent) no file is ever created, and files the module does not own (an administrator's drop-in or
    config file) are never written - when the argument comes from one of them the module fails and names it.
  - Runs that change the same service at the same time wait for each other (an advisory lock per service).
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.FILES
options:
  arg:
    description:
      - One k3s argument, starting with C(--), for example
        C(--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml).
      - It must not be empty or hold a control character (a line break, NUL...; a TAB is fine). For O(method=unit) and
        O(method=dropin) it must not hold C($), which systemd and the openrc shell would expand.
      - A different scheduler config already in use is a conflict - the module fails and names it; add the extender to
        that file instead. Every form k3s accepts counts - C(config=X), C(--config=X) and C(-config=X) as the value of
        C(--kube-scheduler-arg) on the command line (with C(=) or as the next word, one or two dashes), in C(config.yaml)
        or any C(config.yaml.d) file, with C(kube-scheduler-arg:) or C(kube-scheduler-arg+:).
    type: str
    required: true
  state:
    description:
      - V(present) ensures the argument is given, V(absent) that it is not.
    type: str
    choices: [present, absent]
    default: present
  method:
    description:
      - Where the argument is written.
      - V(unit) edits C(ExecStart) of the unit file (or C(command_args) of the openrc init script). The k3s
        installer rewrites that file on upgrade, so the argument is lost then. Fails when the file is read-only.
      - V(dropin) writes a systemd drop-in C(/etc/systemd/system/<service>.service.d/<dropin_name>) that resets
        C(ExecStart) and sets the whole new command line. Later installer changes to C(ExecStart) are masked while
        it exists (a warning says so). systemd only.
      - V(config) writes O(config_name) in the k3s config drop-in directory with the key C(<flag>+:), so k3s
        appends the value to the list of the earlier files. Refused when the service's command line already passes
        the same flag (the command line may replace the files' list).
      - V(auto) uses V(config) for a repeatable flag (C(--*-arg), RKE2's C(--*-extra-mount) and C(--*-extra-env),
        C(--node-label), C(--node-taint), C(--disable), C(--tls-san)) when the config directory is writable and the command
        line does not pass that flag; else V(unit) when the unit is writable (not on a read-only file system);
        else V(dropin). With O(state=absent) it removes the argument from every place this module could have put it.
        When the argument is already given somewhere, nothing is added.
    type: str
    choices: [auto, unit, dropin, config]
    default: auto
  service:
    description:
      - Name of the service, as the installer names it - V(k3s), V(k3s-agent) or C(k3s-<INSTALL_K3S_NAME>); V(rke2-server)
        for RKE2.
      - Its unit is looked for in C(/etc/systemd/system), C(/usr/local/lib/systemd/system), C(/usr/lib/systemd/system),
        C(/lib/systemd/system), then its init script in C(/etc/init.d).
      - Default - the service O(path) belongs to (C(k3s) for C(/etc/systemd/system/k3s.service)), else V(k3s). Given
        together with O(path), both must name the same service.
    type: str
  path:
    description:
      - Absolute path of the service's unit file or openrc init script, instead of finding it from O(service).
      - Must exist.
    type: path
  backup:
    description:
      - Keep a copy of each file before it is changed or removed, next to it, with a time stamp in its name.
    type: bool
    default: false
  dropin_name:
    description:
      - File name of the drop-in for O(method=dropin), in C(/etc/systemd/system/<service>.service.d/). Must end in C(.conf).
    type: str
    default: 99-baremetal-k3s.conf
  config_name:
    description:
      - File name for O(method=config) in the k3s config drop-in directory (C(/etc/rancher/k3s/config.yaml.d/),
        or next to the file C(--config) / C(K3S_CONFIG_FILE) names). It should sort last, so that every
        earlier file's list is extended, not replaced. Must end in C(.yaml) or C(.yml).
    type: str
    default: 99-baremetal-k3s-scheduler.yaml
requirements:
  - PyYAML on the node, to read k3s's and RKE2's config files (Debian and Ubuntu C(python3-yaml), EL C(python3-pyyaml),
    SUSE C(python3-PyYAML))
notes:
  - The unit and drop-ins are read as systemd reads them (continuation lines, comments inside them, quoting,
    C(ExecStart=) resets); the config files as k3s reads them (C(config.yaml) then C(config.yaml.d/*.yaml) in name order).
  - The values of k3s's secret-bearing options (C(--token)/C(-t) in any form, C(--agent-token), the password of
    C(--datastore-endpoint), the S3 keys, C(K3S_TOKEN) in the service's environment...) - in O(arg) or anywhere in what
    is read - never appear in the diff, the result, the invocation, the warnings or the messages (C((hidden)) in the
    module's own output, masked by Ansible everywhere else).
seealso:
  - name: k3s configuration file
    description: How k3s reads config.yaml and config.yaml.d.
    link: https://docs.k3s.io/installation/configuration#configuration-file
  - name: systemd.service
    description: ExecStart syntax and drop-ins.
    link: https://www.freedesktop.org/software/systemd/man/latest/systemd.service.html
'''

EXAMPLES = r'''
- name: Give the scheduler our config (the module picks config.yaml.d, the unit or a drop-in)
  baremetal.k3s.k3s_service_arg:
    arg: --kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml
  register: scheduler_arg

- name: Reload systemd and restart k3s when the running server does not use it yet
  ansible.builtin.systemd_service:
    name: k3s
    state: restarted
    daemon_reload: "{{ scheduler_arg.daemon_reload_required }}"
  when: scheduler_arg.restart_required

- name: Edit the unit the installer wrote, keeping a backup
  baremetal.k3s.k3s_service_arg:
    arg: --kube-scheduler-arg=v=2
    method: unit
    service: k3s
    backup: true

- name: Unit on a read-only /usr - use a drop-in
  baremetal.k3s.k3s_service_arg:
    arg: --kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml
    method: dropin
    path: /usr/lib/systemd/system/k3s.service

- name: Remove the argument from everywhere this module may have put it
  baremetal.k3s.k3s_service_arg:
    arg: --kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml
    state: absent

- name: RKE2 - the same flag, in /etc/rancher/rke2/config.yaml.d/99-baremetal-k3s-scheduler.yaml
  baremetal.k3s.k3s_service_arg:
    arg: --kube-scheduler-arg=config=/etc/rancher/rke2/kube-scheduler/config.yaml
    service: rke2-server
'''

RETURN = r'''
changed:
  description: Whether a file was (or, in check mode, would be) changed.
  returned: always
  type: bool
  sample: true
path:
  description: The file changed first, or when nothing changed the file of RV(method).
  returned: always
  type: str
  sample: /etc/rancher/k3s/config.yaml.d/99-baremetal-k3s-scheduler.yaml
paths:
  description: Every file changed (or created, or removed).
  returned: always
  type: list
  elements: str
  sample: [/etc/systemd/system/k3s.service]
own_args:
  description:
    - The arguments held in this module's own files after the change - its file in the config drop-in directory and
      its systemd drop-in (there, the arguments it adds to the unit's command line) - so a caller can take out what it
      put in without reading the files.
  returned: always
  type: list
  elements: str
  sample: [--kube-scheduler-arg=config=/etc/rancher/rke2/kube-scheduler/config.yaml, --kube-scheduler-extra-mount=/ca.pem:/ca.pem:ro]
method:
  description:
    - Where the argument is (or was taken out of) - V(unit), V(dropin) or V(config); V(elsewhere) when k3s already
      gets it from a file this module does not own (in any form k3s accepts), so nothing was added.
  returned: always
  type: str
  sample: unit
args:
  description:
    - The service's command line after the change, split as systemd (or the openrc shell) splits it, the program first -
      the path systemd runs (with the C(@) prefix, ExecStart's second word is only the argv[0] the program sees, and is
      not in this list). With V(config) this line is unchanged; see RV(k3s_args). Secret values are shown as C((hidden)).
  returned: always
  type: list
  elements: str
  sample: [/usr/local/bin/k3s, server, --disable=traefik, --kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml]
k3s_args:
  description:
    - The arguments k3s works with after reading its config files - their flags inserted right after the subcommand,
      before the command line's own - with C(${VAR}) from the service's environment files expanded. Secret values are
      shown as C((hidden)).
  returned: always
  type: list
  elements: str
  sample: [/usr/local/bin/k3s, server, --kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml, --disable=traefik]
running:
  description: Whether the service's main process is running.
  returned: always
  type: bool
  sample: true
restart_required:
  description:
    - True when the service is running and its process does not use the change yet. The process's
      C(/proc/<pid>/cmdline) is compared with the new command line; when k3s hides its arguments, or for
      V(config), the files' modification times are compared with the process start time.
    - False when the service is not running (a warning says so).
  returned: always
  type: bool
  sample: true
daemon_reload_required:
  description: True when the unit or drop-in changed or systemd reports C(NeedDaemonReload=yes). Always false for openrc.
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
      sample: /etc/rancher/k3s/config.yaml.d/99-baremetal-k3s-scheduler.yaml
    action:
      description: V(created), V(modified) or V(removed).
      type: str
      sample: created
    backup_file:
      description: The copy taken before the change (O(backup=true), not in check mode), else V(null).
      type: str
      sample: null
  sample: [{path: /etc/systemd/system/k3s.service, action: modified, backup_file: /etc/systemd/system/k3s.service.123.2026-11-22@13:00:00~}]
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
  sample: [{before: "", after: "", before_header: /etc/systemd/system/k3s.service, after_header: /etc/systemd/system/k3s.service}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets
from ansible_collections.baremetal.k3s.plugins.module_utils import _service_arg as service_arg
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

ARGUMENT_SPEC = service_arg.ARGUMENT_SPEC


def hide_secrets(module):
    """A secret in ``arg`` (``--token=x``) never appears in the module's output: Ansible masks it (those read from the
    node are added by the plan)."""
    _secrets.add(module.no_log_values, _secrets.argv_secrets([module.params.get('arg')]))


class Module(_secrets.MaskedLog, AnsibleModule):
    """AnsibleModule whose own log line on the node (journal or syslog: "Invoked with ...") masks the secrets too."""

    add_secrets = hide_secrets


def main():
    module = Module(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    hide_secrets(module)
    try:
        result = _io.locked_apply(module, lambda: service_arg.plan(_io.node_view(module), module.params, module.no_log_values),
                                  keys=[service_arg.lock_key(module.params)], backup=module.params['backup'])
    except (PlanError, _io.ApplyError) as e:
        module.fail_json(msg=e.msg, **getattr(e, 'details', {}))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
