# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the node_lease module: one run at a time per node."""

from __future__ import annotations

import json
import time

import pytest

from ansible_collections.baremetal.k3s.plugins.modules import node_lease

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok, run_module

LEASE = '/run/baremetal-k3s/scheduler_extender.lease'


def take(**kw):
    args = {'name': 'scheduler_extender', 'timeout': 0}
    args.update(kw)
    return module_ok(node_lease, args)


def test_take_renew_and_give_back(node):
    t0 = time.time()
    r = take(holder='play one')
    assert t0 <= r['since'] <= time.time()
    # no "path" key: AnsibleModule.exit_json would add the file's stat there, its "owner" (root) over the lease's owner
    assert 'path' not in r and r['lease_file'] == LEASE
    assert r['changed'] and r['owner'] and r['files'] == [{'path': LEASE, 'action': 'created', 'backup_file': None}]
    data = json.loads(node.read(LEASE))
    assert data['owner'] == r['owner'] and data['holder'] == 'play one' and node.mode(LEASE) == 0o600
    again = take(owner=r['owner'], holder='play one')
    assert not again['changed'] and again['owner'] == r['owner']
    assert again['since'] == r['since'] == data['since']  # renewing keeps when the run took it
    back = take(owner=r['owner'], state='absent')
    assert back['changed'] and not node.exists(LEASE) and not node.exists('/run/baremetal-k3s')
    assert not take(owner=r['owner'], state='absent')['changed']


def test_a_second_run_is_refused_naming_the_holder(node):
    first = take(holder='Install CSI Baremetal (alice@ctl)')
    msg = module_fail(node_lease, {'name': 'scheduler_extender', 'timeout': 0, 'holder': 'other run'})
    assert 'held by Install CSI Baremetal (alice@ctl)' in msg and first['owner'] in msg and LEASE in msg
    failed, result = run_module(node_lease, {'name': 'scheduler_extender', 'timeout': 0}, check_mode=True)
    assert failed and result['holder'] == 'Install CSI Baremetal (alice@ctl)'
    # giving back someone else's lease leaves it
    r = take(owner='not-the-owner', state='absent')
    assert not r['changed'] and node.exists(LEASE) and any('left in place' in w for w in r['warnings'])


def test_a_lease_left_by_a_killed_run_is_taken_over(node):
    node.write(LEASE, json.dumps({'owner': 'gone', 'holder': 'killed run', 'since': time.time() - 7200}))
    r = take(holder='new run')
    assert r['changed'] and r['owner'] != 'gone'
    assert any('took over the lease' in w and 'killed run' in w for w in r['warnings'])
    assert json.loads(node.read(LEASE))['holder'] == 'new run'


@pytest.mark.parametrize('left', ['garbage', '["not", "a", "lease"]', ''])
def test_an_unreadable_lease_counts_as_stale(node, left):
    node.write(LEASE, left)
    r = take(holder='new run')
    assert r['changed'] and r['holder'] == 'new run' and r['owner']
    # the file now names the new holder, with the owner the run was given back
    data = json.loads(node.read(LEASE))
    assert data['holder'] == 'new run' and data['owner'] == r['owner'] and data['since'] == r['since']
    # the take-over is said, naming what was there
    assert any('took over the lease' in w and 'unknown' in w for w in r['warnings']), r['warnings']
    # it is the new run's lease now: a third run is refused, naming it
    assert 'held by new run' in module_fail(node_lease, {'name': 'scheduler_extender', 'timeout': 0, 'holder': 'third run'})


def test_check_mode_takes_nothing(node):
    failed, result = run_module(node_lease, {'name': 'scheduler_extender', 'timeout': 0}, check_mode=True)
    assert not failed and result['changed'] and not node.exists(LEASE)


@pytest.mark.parametrize('name', ['', '../x', 'a b', 'a/b'])
def test_bad_names(node, name):
    assert 'not a valid lease name' in module_fail(node_lease, {'name': name, 'timeout': 0})


def test_the_rollback_copies_go_with_the_lease_in_one_run(node):
    held = take(holder='install_csi')
    node.write('/etc/k3s.conf', 'token: K10secret::server:abc\n')
    copy = '/etc/k3s.conf.12.2026-11-30@06:00:00~'
    node.write(copy, 'token: K10old::server:def\n')
    files = [{'path': '/etc/k3s.conf', 'action': 'modified', 'backup_file': copy}]
    failed, r = run_module(node_lease, {'name': 'scheduler_extender', 'owner': held['owner'], 'state': 'absent',
                                        'discard': files}, diff=True)
    assert not failed and r['changed'] and r['backups_removed'] == [copy] and 'diff' not in r
    assert not node.exists(copy) and not node.exists(LEASE) and node.exists('/etc/k3s.conf')
    assert [f['path'] for f in r['files']] == [copy, LEASE]
    assert 'K10old' not in json.dumps(r)


def test_a_copy_that_is_not_a_file_keeps_the_lease_and_the_rest(node):
    held = take(holder='install_csi')
    node.write('/etc/k3s.conf', 'a: 1\n')
    node.makedirs('/etc/k3s.conf.12.2026-11-30@06:00:00~')
    files = [{'path': '/etc/k3s.conf', 'action': 'modified', 'backup_file': '/etc/k3s.conf.12.2026-11-30@06:00:00~'}]
    msg = module_fail(node_lease, {'name': 'scheduler_extender', 'owner': held['owner'], 'state': 'absent', 'discard': files})
    assert 'not a regular file' in msg and node.exists(LEASE)
    assert 'state=absent' in module_fail(node_lease, {'name': 'scheduler_extender', 'discard': files})
