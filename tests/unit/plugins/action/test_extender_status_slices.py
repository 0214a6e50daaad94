# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The extender_status action: a wait runs in slices, a line between two, one result at the end.

The module executor is a fake that runs the module's real logic on a fake node (the module tests'
``Node``) with fake network functions, its arguments and its answer through JSON as on the wire;
the node's clock is the plugin's clock, and sleeping moves it on.
"""

from __future__ import annotations

import json

from unittest.mock import MagicMock

import pytest

from ansible_collections.baremetal.k3s.plugins.action import extender_status as action
from ansible_collections.baremetal.k3s.plugins.module_utils import _extender
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.test_extender_status import (
    BASE, Node, params, run_status, show)

URL = 'http://127.0.0.1:8889'
HEALTH = 'http://127.0.0.1:10251/healthz'


class FakeDisplay:
    def __init__(self, clock):
        self.clock = clock
        self.printed = []  # (fake seconds, line)

    def display(self, msg, *args, **kwargs):  # pylint: disable=unused-argument
        self.printed.append((self.clock.t, msg))


class FakeTask:
    def __init__(self, args, async_val=0):
        self.args = args
        self.async_val = async_val
        self.check_mode = False
        self.action = 'baremetal.k3s.extender_status'


class Network:
    """The extender and the scheduler health endpoint as functions of the fake time."""

    def __init__(self, clock, extender_from=None, healthy_from=0):
        self.clock = clock
        self.extender_from = extender_from
        self.healthy_from = healthy_from

    def probe(self, url, verb, *args, **kwargs):  # pylint: disable=unused-argument
        up = self.extender_from is not None and self.clock.t >= self.extender_from
        return _extender.ProbeResult(url + '/' + verb, reachable=up, status=200 if up else None,
                                     error='' if up else 'connection refused (is the extender running?)')

    def check_health(self, url, *args, **kwargs):  # pylint: disable=unused-argument
        if self.healthy_from is not None and self.clock.t >= self.healthy_from:
            return True, 200, ''
        return False, None, 'connection refused (is the component running?)'


@pytest.fixture
def node(tmp_path, monkeypatch):
    return Node(tmp_path / 'root', monkeypatch)


def run(node, network, args, async_val=0):
    """The action's run() on ``node``; (result, calls, display)."""
    calls = []

    def execute(module_name=None, module_args=None, task_vars=None, wrap_async=False, **kw):  # pylint: disable=unused-argument
        sent = json.loads(json.dumps(module_args))
        calls.append({'module': module_name, 'args': sent, 'wrap_async': wrap_async, 'at': node.clock.t})
        failed, result = run_status(sent, probe=network.probe, check_health=network.check_health)
        result['invocation'] = {'module_args': dict(params(sent))}
        return json.loads(json.dumps(result))

    connection = MagicMock()
    connection.has_native_async = False
    connection._shell.tmpdir = None
    plugin = action.ActionModule(FakeTask(args, async_val), connection, MagicMock(), MagicMock(), None, None)
    plugin._execute_module = execute
    plugin._remove_tmp_path = lambda path: None
    plugin.clock = node.clock.monotonic
    shown = FakeDisplay(node.clock)
    action.display = shown
    try:
        result = plugin.run(task_vars={'inventory_hostname': 'bk3s-server-1'})
    finally:
        action.display = action.Display()
    return result, calls, shown.printed


def base_args(**kw):
    a = {'url': URL, 'scheduler_health_url': HEALTH, 'since': str(BASE - 20), 'wait': True, 'interval': 2}
    a.update(kw)
    return a


def test_long_wait_prints_progress_and_returns_one_result(node):
    network = Network(node.clock, extender_from=50)
    result, calls, printed = run(node, network, base_args())
    assert result['ready'] is True, result
    assert result['msg'] == 'ready'
    # three slices: the extender answered in the third
    assert len(calls) == 3
    assert [c['args']['slice_seconds'] for c in calls] == [action.SLICE_SECONDS] * 3
    assert 'resume' not in calls[0]['args']
    assert [c['args']['resume']['elapsed'] for c in calls[1:]] == [pytest.approx(c['at']) for c in calls[1:]]
    # a line after each slice that did not end the wait, none more than a slice apart
    assert [line for dummy, line in printed] == [
        'bk3s-server-1: waiting 20 s of 1200 s for the extender to answer '
        '(extender %s/filter: connection refused (is the extender running?))' % URL,
        'bk3s-server-1: waiting 40 s of 1200 s for the extender to answer '
        '(extender %s/filter: connection refused (is the extender running?))' % URL,
    ]
    # the whole wait: every look of every slice (0..20 s, 20..40 s, 40..50 s, one each 2 s; a slice
    # starts with a look at once, and no fake time passes between two), the time from the first look
    assert result['attempts'] == 11 + 11 + 6
    assert result['elapsed'] == pytest.approx(50)
    assert 'waiting' not in result
    assert result['invocation']['module_args']['slice_seconds'] == 0
    assert result['invocation']['module_args']['resume'] is None
    # the same keys as one call that waits it all
    node.clock.t = 0
    dummy, one = run_status(base_args(), probe=network.probe, check_health=network.check_health)
    assert set(one) == set(result) - {'invocation'}


def test_timeout_counts_the_whole_wait(node):
    result, calls, printed = run(node, Network(node.clock), base_args(timeout=45))
    assert result['ready'] is False
    assert result['msg'].startswith('not ready within timeout (45.0 s): not ready: extender ')
    assert result['elapsed'] == pytest.approx(45)
    assert len(calls) == 3 and len(printed) == 2


def test_update_timeout_counts_the_whole_wait(node):
    # the scheduler never restarts after the change: update_timeout (30 s) ends the wait in the second slice
    result, calls, printed = run(node, Network(node.clock, extender_from=0), base_args(since=str(BASE), update_timeout=30))
    assert result['restarted'] is False
    assert result['msg'].startswith('restart not seen within update_timeout (30.0 s): ')
    assert result['elapsed'] == pytest.approx(30)
    assert len(calls) == 2
    assert printed[0][1].startswith('bk3s-server-1: waiting 20 s of 30 s for the scheduler to restart with the change '
                                    '(the scheduler started at 2026-01-13T09:59:50.000000Z, before the change')


def test_crash_loop_seen_across_slices(node):
    # k3s restarts with the change at +5 s, then its process is replaced at +15 s (first slice) and
    # at +30 s (second slice), the scheduler never healthy: the second exit is a crash loop only
    # when the second slice knows what the first one saw
    def current():
        t = node.clock.t
        if t < 5:
            return show(mono_s=990)
        if t < 15:
            return show(mono_s=1005, pid=3000, n=1)
        if t < 30:
            return show(mono_s=1015, pid=3001, n=1)
        return show(mono_s=1030, pid=3002, n=1)

    node.show = current
    result, calls, printed = run(node, Network(node.clock, extender_from=0, healthy_from=None),
                                 base_args(since=str(BASE)))
    assert result['crash_loop'] is True, result['msg']
    assert result['msg'].startswith('crash loop: k3s exited 2 times since the change')
    assert len(calls) == 2
    assert printed[0][1].startswith('bk3s-server-1: waiting 20 s of 1200 s for the kube-scheduler to answer healthy')
    assert result['elapsed'] == pytest.approx(30)


def test_one_call_without_wait_or_under_async(node):
    network = Network(node.clock, extender_from=0)
    for args, async_val in ((base_args(wait=False), 0), (base_args(), 30), (base_args(slice_seconds=5), 0)):
        result, calls, printed = run(node, network, args, async_val)
        assert len(calls) == 1 and printed == []
        assert calls[0]['args'] == args
        assert calls[0]['wrap_async'] == bool(async_val)
        assert result['ready'] is True


def test_a_failure_is_returned_at_once(node):
    result, calls, printed = run(node, Network(node.clock), base_args(interval=0))
    assert result['failed'] is True
    assert result['msg'] == 'interval must be greater than 0 with wait: true'
    assert len(calls) == 1 and printed == []


def test_progress_line_without_not_ready_prefix():
    waiting = {'for': 'the extender to answer', 'limit': 1200.0, 'elapsed': 59.6, 'attempts': 3, 'watch': {}}
    assert action.progress_line('s1', waiting, 'not ready: extender x: refused') == \
        's1: waiting 60 s of 1200 s for the extender to answer (extender x: refused)'
