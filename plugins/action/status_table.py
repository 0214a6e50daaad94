# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Print the fleet's scheduler-extender status as a plain table; optionally write it as JSON.

The merging and rendering live in plugin_utils/_status_table.py, the run every table action
shares (the print, the JSON file) in _table_action.py.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal
from ansible_collections.baremetal.k3s.plugins.plugin_utils import _status_table
from ansible_collections.baremetal.k3s.plugins.plugin_utils._hostvars import host_var
from ansible_collections.baremetal.k3s.plugins.plugin_utils._table_action import TableAction

SPEC = {
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


class ActionModule(TableAction):
    """Runs on the controller only: it reads hostvars and prints; no module goes to a node."""

    ARGUMENT_SPEC = SPEC
    _VALID_ARGS = frozenset(SPEC)

    def table(self, args, task_vars):
        data = report(args, task_vars)
        return data, _status_table.render(data)

    def finish(self, result, args, data):
        warning = readiness_warning(data['readiness_configmap'])
        if warning:
            result['warnings'] = [_terminal.escape(warning)]
        drifted = [n['node'] for n in data['nodes'] if n['drifted']]
        if args['fail_on_drift'] and drifted:
            result.update(failed=True, msg='drift on %d of %d servers (%s): run baremetal.k3s.install_csi to put it back'
                          % (len(drifted), len(data['nodes']), ', '.join(drifted)))
        return result
