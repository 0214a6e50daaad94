# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Print the fleet's scheduler-extender status as a plain table; optionally write it as JSON.

A ``debug`` msg reaches the default callback as a quoted, wrapped list; ``Display`` prints
the lines as they are. The merging and rendering live in plugin_utils/_status_table.py.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal
from ansible_collections.baremetal.k3s.plugins.plugin_utils import _status_table
from ansible_collections.baremetal.k3s.plugins.plugin_utils._hostvars import host_var
from ansible_collections.baremetal.k3s.plugins.plugin_utils._report_file import ReportError, write_json_atomically

display = Display()

ARGUMENT_SPEC = {
    'hosts': {'type': 'list', 'elements': 'str', 'required': True},
    'k3s_info_var': {'type': 'str', 'default': 'status_k3s'},
    'extender_status_var': {'type': 'str', 'default': 'status_extender'},
    'configmap': {'type': 'dict', 'default': {}},
    'configmap_name': {'type': 'str', 'default': 'extender-readiness'},
    'configmap_namespace': {'type': 'str', 'default': 'default'},
    'json_path': {'type': 'path'},
    'drift_var': {'type': 'str', 'default': 'scheduler_extender_drift'},
    'readiness_expected': {'type': 'bool', 'default': True},
    'fail_on_drift': {'type': 'bool', 'default': False},
}


def host_result(hostvars, host, name):
    """The result ``host`` registered as ``name``; {} when it has none."""
    value = host_var(hostvars, host, name)
    return dict(value) if isinstance(value, Mapping) else {}


def host_list(hostvars, host, name):
    """The list ``host`` set as ``name`` (the role's drift finding); None when it has none (not looked at)."""
    value = host_var(hostvars, host, name)
    return list(value) if isinstance(value, (list, tuple)) else None


def report(args, task_vars):
    """The report of the validated ``args``, each host's results taken from ``task_vars['hostvars']``."""
    hostvars = task_vars.get('hostvars') or {}
    results = {}
    for host in args['hosts']:
        results[host] = (host_result(hostvars, host, args['k3s_info_var']),
                         host_result(hostvars, host, args['extender_status_var']),
                         host_list(hostvars, host, args['drift_var']))
    readiness = _status_table.readiness_from_kubectl(args['configmap'], args['configmap_name'], args['configmap_namespace'])
    return _status_table.fleet(args['hosts'], results, readiness, args['readiness_expected'])


def readiness_warning(readiness):
    """A problem with the readiness ConfigMap is a warning: the servers' own status is still good to read."""
    if not readiness['error']:
        return ''
    return 'readiness ConfigMap %s/%s: %s' % (readiness['namespace'], readiness['name'], readiness['error'])


class ActionModule(ActionBase):
    """Runs on the controller only: it reads hostvars and prints; no module goes to a node."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        try:
            dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        except AnsibleActionFail as e:  # its message names every bad option
            return dict(result, failed=True, changed=False, msg=e.message)
        data = report(args, task_vars or {})
        display.display('\n'.join(_status_table.render(data)))
        if args['json_path']:
            try:
                write_json_atomically(args['json_path'], data)
            except ReportError as e:
                return dict(result, failed=True, changed=False, msg=str(e))
        result.update(data, changed=False, json_path=args['json_path'] or '')
        warning = readiness_warning(data['readiness_configmap'])
        if warning:
            result['warnings'] = [_terminal.escape(warning)]
        drifted = [n['node'] for n in data['nodes'] if n['drifted']]
        if args['fail_on_drift'] and drifted:
            result.update(failed=True, msg='drift on %d of %d servers (%s): run baremetal.k3s.install_csi to put it back'
                          % (len(drifted), len(data['nodes']), ', '.join(drifted)))
        return result
