# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The run every table action shares (plan_table, status_table, pod_security_table).

The options are checked against the subclass's ``ARGUMENT_SPEC`` (a bad one fails, naming it); the
subclass's ``table(args, task_vars)`` gives the data and the lines, printed as they are by
``Display`` (a ``debug`` msg reaches the default callback quoted and wrapped); with a ``json_path``
option the data is also written there as JSON; the subclass's ``finish`` decides failure.
Nothing runs on a node.
"""

from __future__ import annotations

from abc import abstractmethod

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.baremetal.k3s.plugins.plugin_utils._report_file import ReportError, write_json_atomically

display = Display()


class TableError(Exception):
    """Nothing to print: the message says why."""


class TableAction(ActionBase):
    """Runs on the controller only: it reads its options (and hostvars) and prints; no module goes to a node."""

    TRANSFERS_FILES = False
    _supports_check_mode = True
    ARGUMENT_SPEC: dict = {}

    @abstractmethod
    def table(self, args, task_vars):
        """(data, lines) of the validated ``args``; raises TableError when there is nothing to print."""

    def finish(self, result, args, data):  # pylint: disable=unused-argument
        """The result to return, once the table is printed (and written); a subclass adds failure or warnings."""
        return result

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        try:
            dummy, args = self.validate_argument_spec(argument_spec=self.ARGUMENT_SPEC)
        except AnsibleActionFail as e:  # its message names every bad option
            return dict(result, failed=True, changed=False, msg=e.message)
        try:
            data, lines = self.table(args, task_vars or {})
        except TableError as e:
            return dict(result, failed=True, changed=False, msg=str(e))
        display.display('\n'.join(lines))
        if 'json_path' in self.ARGUMENT_SPEC:
            if args['json_path']:
                try:
                    write_json_atomically(args['json_path'], data)
                except ReportError as e:
                    return dict(result, failed=True, changed=False, msg=str(e))
            result['json_path'] = args['json_path'] or ''
        result.update(data, changed=False)
        return self.finish(result, args, data)
