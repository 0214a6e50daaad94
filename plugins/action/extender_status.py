# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Run ``baremetal.k3s.extender_status``; a long wait (``wait: true``) shows its progress.

The module waits on the node and would print nothing until the wait ends (up to its 20-minute
``timeout``). Here the wait runs in slices of :data:`SLICE_SECONDS`: the module returns after a
slice with ``waiting`` (what it waits for, the seconds and looks so far, the crash watch), this
plugin prints one line and calls it again with ``resume``. The seconds already waited are measured
here, on the controller, so ``update_timeout`` and ``timeout`` count the whole wait, the time
between two slices included. The last slice's result is the task's result, as one call's would be.

One call as before: without ``wait``, under ``async``, and when the task sets ``slice_seconds`` or
``resume`` itself.
"""

from __future__ import annotations

import time

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible.utils.vars import merge_hash

from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal

display = Display()

MODULE = 'baremetal.k3s.extender_status'
SLICE_SECONDS = 20.0
INTERNAL = ('slice_seconds', 'resume')
OVERRUN = 120.0  # seconds past the module's timeout after which a wait that goes on is a fault


def progress_line(host, waiting, msg):
    """The line printed between two slices: who waits, how long of how long, for what, and what is missing; one
    line, what is not printable (a node's control characters in a name or a message) escaped."""
    detail = msg[len('not ready: '):] if msg.startswith('not ready: ') else msg
    seconds, limit = round(waiting['elapsed']), round(waiting['limit'])
    text = '%s: waiting %d s of %d s for %s (%s)' % (host, seconds, limit, waiting['for'], detail)
    return _terminal.one_line(text)


class ActionModule(ActionBase):

    _supports_check_mode = True
    _supports_async = True

    clock = staticmethod(time.monotonic)

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp  # no effect any longer
        args = dict(self._task.args)
        wrap_async = self._task.async_val and not self._connection.has_native_async
        try:
            wait = boolean(args.get('wait', False), strict=True)
        except TypeError:
            wait = False  # the module names the bad value
        sliced = wait and not self._task.async_val and not any(k in args for k in INTERNAL)
        if not sliced:
            result = merge_hash(result, self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars,
                                                             wrap_async=wrap_async))
            if not wrap_async:
                self._remove_tmp_path(self._connection._shell.tmpdir)
            return result
        host = (task_vars or {}).get('inventory_hostname') or self._play_context.remote_addr or 'node'
        try:
            limit = float(args.get('timeout', 1200)) + OVERRUN
        except (TypeError, ValueError):
            limit = 1200 + OVERRUN
        start = self.clock()
        resume = None
        while True:
            call = dict(args, slice_seconds=SLICE_SECONDS)
            if resume is not None:
                call['resume'] = dict(resume, elapsed=round(self.clock() - start, 3))
            answer = self._execute_module(module_name=MODULE, module_args=call, task_vars=task_vars)
            waiting = answer.get('waiting')
            if answer.get('failed') or not isinstance(waiting, dict):
                break
            display.display(progress_line(host, waiting, answer.get('msg') or ''))
            if self.clock() - start > limit:
                # the module ends a wait by its timeout; one that does not is a fault, not a reason to hang
                answer = {'failed': True, 'msg': 'extender_status was still waiting after %d s, past its timeout: %s'
                                                 % (round(self.clock() - start), answer.get('msg') or '')}
                break
            resume = {'attempts': waiting['attempts'], 'watch': waiting['watch']}
        self._remove_tmp_path(self._connection._shell.tmpdir)
        invocation = answer.get('invocation')
        if isinstance(invocation, dict) and isinstance(invocation.get('module_args'), dict):
            # the task's own arguments, not those of its last slice
            invocation['module_args'].update(slice_seconds=args.get('slice_seconds', 0.0), resume=args.get('resume'))
        return merge_hash(result, answer)
