# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Print the pod security report as a plain table; optionally write it as JSON (as status_table does).

Rendering lives in plugin_utils/_pod_security_table.py, the JSON file's write in plugin_utils/_report_file.py.
"""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.baremetal.k3s.plugins.plugin_utils import _pod_security_table
from ansible_collections.baremetal.k3s.plugins.plugin_utils._report_file import ReportError, write_json_atomically

display = Display()

ARGUMENT_SPEC = {
    'report': {'type': 'dict', 'required': True},
    'json_path': {'type': 'path'},
    'fail_on_refused': {'type': 'bool', 'default': False},
}


class ActionModule(ActionBase):
    """Runs on the controller only: it prints and writes the operator's file; no module goes to a node."""

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
        report = args['report']
        if report.get('failed') or 'namespaces' not in report:
            return dict(result, failed=True, changed=False,
                        msg='no pod security report to print: %s' % (report.get('msg') or 'the report task did not run'))
        data = _pod_security_table.data(report)
        display.display('\n'.join(_pod_security_table.render(data)))
        if args['json_path']:
            try:
                write_json_atomically(args['json_path'], data)
            except ReportError as e:
                return dict(result, failed=True, changed=False, msg=str(e))
        result.update(data, changed=False, json_path=args['json_path'] or '')
        if args['fail_on_refused'] and data['refused_pods']:
            result.update(failed=True, msg=data['summary'])
        return result
