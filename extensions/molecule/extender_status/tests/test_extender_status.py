# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""baremetal.k3s.extender_status against the real k3s launcher and the reference extender, systemd and openrc."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile

import bk3s_checks as c  # pylint: disable=import-error

MODE = '/run/reference-extender/mode'
PROBE_POD = 'baremetal-k3s-extender-probe'  # the pod the module's probe names


def _status(host, **kw):
    args = {'platform': 'k3s', 'service': 'k3s', 'config_path': c.OUR_CONFIG, 'url': c.EXTENDER}
    args.update(kw)
    text = ' '.join('%s=%s' % (k, v) for k, v in args.items())
    try:
        return host.ansible('baremetal.k3s.extender_status', text, check=False)
    except host.ansible.AnsibleException as e:  # the module never fails on these inputs; show why if it does
        raise AssertionError(e.result) from e


def _openrc(host):
    return host.file('/sbin/openrc-run').exists and not host.file('/run/systemd/system').exists


def _extender(host, action):
    host.check_output(('rc-service reference-extender %s' if _openrc(host) else 'systemctl %s reference-extender') % action)


def test_restarted_after_the_installs_restart(host):
    r = _status(host)
    assert r['restarted'] is True and r['ready'] is True and r['extender_reachable'] is True, r
    assert r['changed'] is False and r['extender_http_status'] == 200
    assert r['init'] == ('openrc' if _openrc(host) else 'systemd')


def test_extender_down_is_reported_within_the_timeout(host):
    _extender(host, 'stop')
    try:
        r = _status(host, since=0, http_timeout=2)
        assert r['extender_reachable'] is False and r['ready'] is False, r
        assert 'connection refused' in r['extender_error'], r
        assert r['attempts'] == 1 and r['elapsed'] < 30, r  # one look, not a wait: the module's own clock
    finally:
        _extender(host, 'start')


def test_slow_extender_is_a_timeout(host):
    host.check_output("printf 'slow:8' > %s" % MODE)
    try:
        r = _status(host, since=0, http_timeout=2)
        assert r['extender_reachable'] is False and r['extender_http_status'] is None, r
        assert r['extender_error'].startswith('timeout'), r
    finally:
        host.check_output("printf 'ok' > %s" % MODE)


def test_a_wait_that_becomes_ready_part_way(host):
    """The module waits through the extender's absence and returns once it answers.

    Judged by what happened, not by a clock that load can stretch: the extender comes back
    answering 500 and turns to ok only after one of the module's looks got that 500 (the
    extender's log says so), so a module that returns ready has looked at least twice, the
    last time after the turn.
    """
    log = '/var/log/reference-extender.jsonl'
    _extender(host, 'stop')
    host.check_output("printf error500 > %s; rm -f /run/extender-turned-ok" % MODE)
    calls_before = len(host.file(log).content_string.splitlines()) if host.file(log).exists else 0
    turn = '\n'.join([
        'sleep 2',
        'rc-service reference-extender start' if _openrc(host) else 'systemctl start reference-extender',
        'i=0',
        'while [ "$(tail -n +%d %s | grep %s | grep -c \'"status": 500\')" -eq 0 ] && [ $i -lt 1500 ]; do sleep 0.2; i=$((i+1)); done'
        % (calls_before + 1, log, PROBE_POD),
        'printf ok > %s' % MODE,
        'touch /run/extender-turned-ok',
    ])
    host.check_output("printf '%%s' %s | base64 -d > /run/turn-extender.sh" % base64.b64encode(turn.encode()).decode())
    host.check_output('nohup sh /run/turn-extender.sh >/dev/null 2>&1 &')
    try:
        r = _status(host, since=0, wait='true', timeout=300, interval=1, http_timeout=2)
        assert r['ready'] is True and r['extender_reachable'] is True, r
        assert r['attempts'] >= 2, r
        assert host.file('/run/extender-turned-ok').exists, 'ready before the extender turned ok: %s' % r
        calls = [json.loads(line) for line in host.file(log).content_string.splitlines()[calls_before:]]
        results = [e['result'] for e in calls if e['pod'] == 'default/' + PROBE_POD]
        assert {'status': 500} in results and 'status' not in results[-1], calls
    finally:
        host.check_output("printf ok > %s" % MODE)


def test_config_touched_after_the_restart_is_not_restarted(host):
    host.check_output('touch %s' % c.OUR_CONFIG)
    r = _status(host)
    assert r['restarted'] is False and r['ready'] is False, r
    assert 'before the change' in r['msg'], r


def test_a_long_wait_prints_its_progress(host):
    """A wait longer than one slice (20 s) prints, while it waits, what it waits for and for how long.

    The extender is down and the wait ends at its 45 s timeout: the ad-hoc run's output has a
    progress line before the result, and the result is the one of the whole wait.
    """
    name = host.ansible.get_variables()['inventory_hostname']
    args = {'platform': 'k3s', 'service': 'k3s', 'config_path': c.OUR_CONFIG, 'url': c.EXTENDER,
            'since': 0, 'wait': True, 'timeout': 45, 'interval': 1, 'http_timeout': 2}
    ansible = os.path.join(os.path.dirname(sys.executable), 'ansible')
    _extender(host, 'stop')
    try:
        with tempfile.TemporaryDirectory() as tree:
            run = subprocess.run([ansible, '-i', os.environ['MOLECULE_INVENTORY_FILE'], name, '--tree', tree,
                                  '-m', 'baremetal.k3s.extender_status', '-a', json.dumps(args)],
                                 capture_output=True, text=True, timeout=600, check=False)
            with open(os.path.join(tree, name)) as f:
                result = json.load(f)  # what the task returned, whatever the stdout callback prints
    finally:
        _extender(host, 'start')
    out = run.stdout
    assert run.returncode == 0, (out, run.stderr)
    lines = [line for line in out.splitlines() if line.startswith('%s: waiting ' % name)]
    assert lines, out
    assert all(' s of 45 s for the extender to answer (extender %s/filter: connection refused' % c.EXTENDER in line
               for line in lines), lines
    # the lines came while waiting: before the result
    assert out.index(lines[-1]) < out.index('%s | SUCCESS' % name), out
    assert result['ready'] is False and result['msg'].startswith('not ready within timeout (45.0 s)'), result
    assert 'waiting' not in result and result['attempts'] >= 2, result
