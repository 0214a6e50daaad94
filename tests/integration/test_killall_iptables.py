# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""k3s_killall's iptables step against the real iptables-save and iptables-restore.

The node images carry no iptables, so the reset scenarios cannot show this step; the unit tests
feed it text. Here a forked child moves into a network namespace of its own (nothing it does
reaches the machine's rules), plants what kube-proxy, flannel and the CNI plugins leave (chains,
jumps to them from the built-in chains, a flannel masquerade rule with its comment, in the filter
and nat tables) next to an operator's own rules, then runs the module's read (plan) and write
(apply) steps on a real View of ``/``: the same code the module runs. Needs root and iptables.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _killall
from ansible_collections.baremetal.k3s.plugins.module_utils._view import View
from ansible_collections.baremetal.k3s.tests.integration import mount_namespace

CLONE_NEWNET = 0x40000000

# what a k3s node's rules look like after k3s stopped (a few of each kind), and the operator's own
PLANTED = (
    ['-N', 'KUBE-FIREWALL'],
    ['-N', 'KUBE-SERVICES'],
    ['-A', 'INPUT', '-m', 'conntrack', '--ctstate', 'NEW', '-j', 'KUBE-SERVICES'],
    ['-A', 'INPUT', '-j', 'KUBE-FIREWALL'],
    ['-N', 'FLANNEL-FWD'],
    ['-A', 'FORWARD', '-j', 'FLANNEL-FWD'],
    ['-A', 'FLANNEL-FWD', '-s', '10.42.0.0/16', '-m', 'comment', '--comment', 'flanneld forward', '-j', 'ACCEPT'],
    ['-N', 'CNI-FORWARD'],
    ['-A', 'FORWARD', '-m', 'comment', '--comment', 'CNI firewall plugin rules', '-j', 'CNI-FORWARD'],
    ['-t', 'nat', '-N', 'KUBE-POSTROUTING'],
    ['-t', 'nat', '-A', 'POSTROUTING', '-m', 'comment', '--comment', 'kubernetes postrouting rules',
     '-j', 'KUBE-POSTROUTING'],
    ['-t', 'nat', '-N', 'CNI-HOSTPORT-DNAT'],
    ['-t', 'nat', '-A', 'PREROUTING', '-m', 'addrtype', '--dst-type', 'LOCAL', '-j', 'CNI-HOSTPORT-DNAT'],
    ['-t', 'nat', '-A', 'POSTROUTING', '-s', '10.42.0.0/16', '-m', 'comment', '--comment', 'flanneld masq',
     '-j', 'MASQUERADE'],
)
OPERATOR = (
    ['-N', 'SITE-ADMIN'],
    ['-A', 'SITE-ADMIN', '-s', '192.0.2.0/24', '-j', 'ACCEPT'],
    ['-A', 'INPUT', '-p', 'tcp', '--dport', '22', '-j', 'SITE-ADMIN'],
    ['-A', 'FORWARD', '-d', '198.51.100.7', '-j', 'DROP'],
    ['-t', 'nat', '-A', 'POSTROUTING', '-s', '203.0.113.0/24', '-o', 'lo', '-j', 'MASQUERADE'],
)


def _runner(argv, stdin=None):
    done = subprocess.run(argv, input=stdin, capture_output=True, check=False)
    return done.returncode, done.stdout, done.stderr


def _save(table):
    return subprocess.run(['iptables-save', '-t', table], capture_output=True, check=True, text=True).stdout


def _rules(table):
    """The table's chain declarations and rules, without counters and comments of iptables-save itself."""
    return [line.split(' [')[0] for line in _save(table).splitlines() if line.startswith((':', '-A'))]


def _reset_in_own_netns():
    """In a child: a network namespace of its own, the rules planted, then the module's plan and apply."""
    if ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), 'unshare(CLONE_NEWNET)')
    for rule in OPERATOR:
        subprocess.run(['iptables'] + rule, check=True)
    operator = {table: _rules(table) for table in ('filter', 'nat')}
    for rule in PLANTED:
        subprocess.run(['iptables'] + rule, check=True)
    planted = {table: _rules(table) for table in ('filter', 'nat')}
    view = View('/', runner=_runner, which=shutil.which)
    rules = _killall.read_rules(view, True)
    planned = {'kill': [], 'unmount': [], 'netns': [], 'links': [], 'rules': rules}
    done, failed = _killall.apply(view, planned)
    again = _killall.read_rules(view, True)
    return {'operator': operator, 'planted': planted, 'after': {table: _rules(table) for table in ('filter', 'nat')},
            'done': done, 'failed': failed, 'again': sorted(again)}


@pytest.fixture(scope='module')
def outcome():
    if os.geteuid() != 0:
        pytest.skip('needs root for a network namespace and iptables')
    if not (shutil.which('iptables-save') and shutil.which('iptables-restore')):
        if os.environ.get('BAREMETAL_K3S_REQUIRE_DOCKER') == '1':
            pytest.fail('tests/run.sh installs Docker, which brings iptables: iptables-save is missing')
        pytest.skip('needs iptables-save and iptables-restore')
    return mount_namespace.in_child(_reset_in_own_netns)


def test_the_planted_rules_were_there(outcome):
    planted = '\n'.join(outcome['planted']['filter'] + outcome['planted']['nat'])
    for name in ('KUBE-SERVICES', 'KUBE-POSTROUTING', 'CNI-HOSTPORT-DNAT', 'FLANNEL-FWD', 'flanneld masq'):
        assert name in planted


def test_every_rule_kube_proxy_flannel_and_cni_leave_is_gone(outcome):
    assert outcome['failed'] == []
    after = '\n'.join(outcome['after']['filter'] + outcome['after']['nat'])
    for name in ('KUBE-', 'CNI-', 'FLANNEL', 'flannel'):
        assert name not in after, after
    # ip6tables has none planted: only the IPv4 family had rules to drop
    assert sorted(outcome['done']['rules_dropped']) == ['iptables']
    assert outcome['done']['rules_dropped']['iptables'] > 0


def test_the_operators_rules_stay_in_order(outcome):
    assert outcome['after'] == outcome['operator']


def test_a_second_run_finds_nothing_to_drop(outcome):
    assert outcome['again'] == []
