# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A rolling change across a fleet: one server down at a time, one restart each, agents untouched.

The k3s launcher logs every start, stop and scheduler start of k3s to
/var/log/k3s-double/events.jsonl on each node (all containers share the host's clock), so
restarts can be counted and the down windows of different servers compared.
"""

from __future__ import annotations

import datetime
import itertools
import os

import testinfra
from testinfra.utils.ansible_runner import AnsibleRunner

import bk3s_checks as c  # pylint: disable=import-error

RUNNER = AnsibleRunner(os.environ['MOLECULE_INVENTORY_FILE'])


def _hosts(group):
    return {name: testinfra.get_host('ansible://%s' % name, ansible_inventory=os.environ['MOLECULE_INVENTORY_FILE'])
            for name in RUNNER.get_hosts(group)}


def _t(text):
    return datetime.datetime.fromisoformat(text.replace('Z', '+00:00'))


def _starts(events):
    return [e for e in events if e['event'] == 'start']


def _down_windows(events):
    """[(went down, scheduler back)] for every stop of k3s on one node."""
    windows = []
    down = None
    for e in events:
        if e['event'] in ('stopping', 'exit') and down is None:
            down = _t(e['time'])
        elif e['event'] == 'scheduler_started' and down is not None:
            windows.append((down, _t(e['time'])))
            down = None
    if down is not None:
        windows.append((down, datetime.datetime.max.replace(tzinfo=datetime.timezone.utc)))
    return windows


def test_each_server_restarted_exactly_once():
    # one start by the installer (prepare), one by converge, none by the idempotent run
    for name, host in _hosts('server').items():
        starts = _starts(c.launcher_events(host))
        print('%s: k3s starts %d (installer 1, converge + idempotence %d)' % (name, len(starts), len(starts) - 1))
        assert len(starts) == 2, (name, starts)


def test_agents_never_restarted():
    for name, host in _hosts('agent').items():
        starts = _starts(c.launcher_events(host))
        print('%s: k3s-agent starts %d (installer 1)' % (name, len(starts)))
        assert len(starts) == 1, (name, starts)
        assert host.service('k3s-agent').is_running


def test_no_two_servers_down_at_once():
    windows = {name: _down_windows(c.launcher_events(host)) for name, host in _hosts('server').items()}
    for name, w in windows.items():
        assert len(w) == 1, (name, w)
    longest = datetime.timedelta(0)
    for (a, wa), (b, wb) in itertools.combinations(windows.items(), 2):
        for (s1, e1), (s2, e2) in itertools.product(wa, wb):
            overlap = min(e1, e2) - max(s1, s2)
            longest = max(longest, overlap)
            assert overlap <= datetime.timedelta(0), '%s and %s were down together for %s' % (a, b, overlap)
    print('longest time two servers were down together: %s' % longest)


def test_every_server_ready_in_the_configmap():
    # Each test server is its own one-node cluster (the launchers do not join each other),
    # so each API server holds the entry of its own node.
    for name, host in _hosts('server').items():
        node = name.lower()
        assert c.readiness_nodes(host) == [{'node_name': node, 'kube_scheduler': 'k3s@' + node, 'restarted': True}]
