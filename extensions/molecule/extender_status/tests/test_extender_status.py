# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""baremetal.k3s.extender_status against the real k3s launcher and the reference extender, systemd and openrc."""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', 'shared'))

import bk3s_checks as c  # noqa: E402 pylint: disable=wrong-import-position,import-error

MODE = '/run/reference-extender/mode'


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
        start = time.time()
        r = _status(host, since=0, http_timeout=2)
        assert r['extender_reachable'] is False and r['ready'] is False, r
        assert 'connection refused' in r['extender_error'], r
        assert time.time() - start < 30
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
    _extender(host, 'stop')
    # the extender comes back 6 s later, while the module waits
    restart = 'rc-service reference-extender start' if _openrc(host) else 'systemctl start reference-extender'
    host.check_output("nohup sh -c 'sleep 6; %s' >/dev/null 2>&1 &" % restart)
    r = _status(host, since=0, wait='true', timeout=60, interval=1, http_timeout=2)
    assert r['ready'] is True and r['extender_reachable'] is True, r
    assert 5 <= r['elapsed'] < 60, r


def test_config_touched_after_the_restart_is_not_restarted(host):
    host.check_output('touch %s' % c.OUR_CONFIG)
    r = _status(host)
    assert r['restarted'] is False and r['ready'] is False, r
    assert 'before the change' in r['msg'], r
