# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Print the pod security report as a plain table; optionally write it as JSON (as status_table does).

Rendering lives in plugin_utils/_pod_security_table.py, the run every table action shares (the print, the JSON
file) in _table_action.py.
"""

from __future__ import annotations

from ansible_collections.baremetal.k3s.plugins.plugin_utils import _pod_security_table
from ansible_collections.baremetal.k3s.plugins.plugin_utils._table_action import TableAction, TableError

SPEC = {
    'report': {'type': 'dict', 'required': True},
    'json_path': {'type': 'path'},
    'fail_on_refused': {'type': 'bool', 'default': False},
}


class ActionModule(TableAction):
    """Runs on the controller only: it prints and writes the operator's file; no module goes to a node."""

    ARGUMENT_SPEC = SPEC
    _VALID_ARGS = frozenset(SPEC)

    def table(self, args, task_vars):
        del task_vars  # the report comes in the options
        report = args['report']
        if report.get('failed') or 'namespaces' not in report:
            raise TableError('no pod security report to print: %s' % (report.get('msg') or 'the report task did not run'))
        data = _pod_security_table.data(report)
        return data, _pod_security_table.render(data)

    def finish(self, result, args, data):
        if args['fail_on_refused'] and data['refused_pods']:
            result.update(failed=True, msg=data['summary'])
        return result
