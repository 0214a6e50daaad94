# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Print the fleet's plan as one table; fail, listing every reason, when a server's plan was refused.

Rendering lives in plugin_utils/_plan_table.py, the run every table action shares in _table_action.py.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal
from ansible_collections.baremetal.k3s.plugins.plugin_utils import _plan_table
from ansible_collections.baremetal.k3s.plugins.plugin_utils._hostvars import host_var
from ansible_collections.baremetal.k3s.plugins.plugin_utils._table_action import TableAction

SPEC = {
    'hosts': {'type': 'list', 'elements': 'str', 'required': True},
    'plan_var': {'type': 'str', 'default': 'scheduler_extender_plan'},
    'title': {'type': 'str', 'default': ''},
}


def host_plan(hostvars, host, name):
    """``host``'s plan; None when it has none (unreachable, failed before planning, unknown host)."""
    value = host_var(hostvars, host, name)
    return dict(value) if isinstance(value, Mapping) else None


class ActionModule(TableAction):
    """Runs on the controller only: it reads hostvars and prints; no module goes to a node."""

    ARGUMENT_SPEC = SPEC
    _VALID_ARGS = frozenset(SPEC)

    def table(self, args, task_vars):
        hostvars = task_vars.get('hostvars') or {}
        plans = {h: host_plan(hostvars, h, args['plan_var']) for h in args['hosts']}
        data = _plan_table.fleet(args['hosts'], plans)
        lines = _plan_table.render(data)
        if args['title']:
            lines[:0] = _terminal.wrap(args['title'], _plan_table.MAX_WIDTH)
        return data, lines

    def finish(self, result, args, data):
        del args
        if data['refused']:
            result.update(failed=True, msg=_plan_table.refusal_msg(data))
        return result
