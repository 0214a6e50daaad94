# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The benchmark's timeline: when each task started and ended on each host, one JSON line per event,
appended to the file BENCH_TIMELINE names (nothing when it is unset). tests/bench/bench.py reads it
to say where a rollout's time goes (its step table)."""
from __future__ import annotations

import json
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = '''
name: bench_timeline
type: aggregate
short_description: the benchmark's timeline of tasks per host (tests only)
description: One JSON line per task start and end on each host, to the file in BENCH_TIMELINE.
'''


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'bench_timeline'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._path = os.environ.get('BENCH_TIMELINE', '')
        self._play = ''

    def _write(self, event, host='', task=None):
        if not self._path:
            return
        entry = {'t': time.time(), 'event': event, 'play': self._play, 'host': host,
                 'task': task.get_name() if task is not None else ''}
        with open(self._path, 'a') as f:
            f.write(json.dumps(entry) + '\n')

    def v2_playbook_on_play_start(self, play):
        self._play = play.get_name()
        self._write('play')

    def v2_runner_on_start(self, host, task):
        self._write('start', host.get_name(), task)

    def _end(self, result, event):
        self._write(event, result._host.get_name(), result._task)

    def v2_runner_on_ok(self, result):
        self._end(result, 'ok')

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._end(result, 'failed')

    def v2_runner_on_skipped(self, result):
        self._end(result, 'skipped')

    def v2_runner_on_unreachable(self, result):
        self._end(result, 'unreachable')

    def v2_playbook_on_stats(self, stats):
        self._write('end')
