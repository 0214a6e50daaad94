# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Run ``baremetal.k3s.k3s_preflight``, its ``checks_tag`` resolved on the controller, where the task's tags are known.

With ``checks_tag``, the checks run only where a task tagged with it would run in this task's place - that tag and the
tags this task inherits (its blocks', its role's, its play's; not its own, ``always`` for the roles' read) against the
run's ``--tags`` and ``--skip-tags``, as Ansible selects tasks (plugin_utils/_tags.py). Where it would not,
``checks: false`` goes to the module: the read alone. The other options go to the module as given; without
``checks_tag`` this is the module's run as any module's.
"""

from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

from ansible_collections.baremetal.k3s.plugins.plugin_utils import _tags

MODULE = 'baremetal.k3s.k3s_preflight'


class ActionModule(ActionBase):

    _supports_check_mode = True
    _supports_async = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp  # no effect any longer
        args = dict(self._task.args)
        tag = args.pop('checks_tag', None)
        if tag is not None:
            if not isinstance(tag, str) or not tag.strip():
                result.update(failed=True, msg='checks_tag must be the name of a tag, not %r' % (tag,))
                return result
            if not _tags.selected(self._task, tag.strip(), task_vars):
                args['checks'] = False
        wrap_async = self._task.async_val and not self._connection.has_native_async
        result = merge_hash(result, self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars,
                                                         wrap_async=wrap_async))
        if not wrap_async:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result
