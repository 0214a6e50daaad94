# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the rollback module: a run undone from the files its modules reported."""

from __future__ import annotations

import threading

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.modules import k3s_service_arg, rollback

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok, set_module_args

SCHED = '--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml'
MOUNT = '--kube-scheduler-extra-mount=/ca.pem:/ca.pem:ro'


def test_a_run_with_two_changes_to_one_file_is_undone_to_the_first_backup(node):
    unit = node.install(args=['--kube-scheduler-arg=v=2'])
    before = node.read(unit)
    files = []
    for arg in (SCHED, MOUNT):
        files += module_ok(k3s_service_arg, {'arg': arg, 'method': 'unit', 'backup': True})['files']
    assert [f['path'] for f in files] == [unit, unit] and all(f['backup_file'] for f in files)
    r = module_ok(rollback, {'files': files}, diff=True)
    assert r['changed'] and r['restored'] == [unit]
    assert sorted(r['backups_removed']) == sorted(f['backup_file'] for f in files)
    assert node.read(unit) == before
    assert all(not node.exists(f['backup_file']) for f in files)
    again = module_ok(rollback, {'files': files})  # a second rollback of the same run: its backups are gone
    assert not again['changed'] and any('already put the file back' in w for w in again['warnings'])


def test_created_files_go_and_their_directories_with_them(node):
    node.install()
    r = module_ok(k3s_service_arg, {'arg': SCHED, 'backup': True})
    ours = r['files'][0]['path']
    assert r['files'][0]['action'] == 'created' and node.exists(ours)
    back = module_ok(rollback, {'files': r['files']})
    assert back['restored'] == [ours] and not node.exists(ours)
    assert not node.exists('/etc/rancher/k3s/config.yaml.d')


def test_discard_keeps_the_change_and_drops_the_backups(node):
    unit = node.install()
    r = module_ok(k3s_service_arg, {'arg': SCHED, 'method': 'unit', 'backup': True})
    changed = node.read(unit)
    d = module_ok(rollback, {'files': r['files'], 'mode': 'discard'})
    assert d['restored'] == [] and d['backups_removed'] == [r['backup_file']]
    assert node.read(unit) == changed and not node.exists(r['backup_file'])


def test_check_mode_changes_nothing(node):
    unit = node.install()
    r = module_ok(k3s_service_arg, {'arg': SCHED, 'method': 'unit', 'backup': True})
    changed = node.read(unit)
    c = module_ok(rollback, {'files': r['files']}, check_mode=True)
    assert c['changed'] and node.read(unit) == changed and node.exists(r['backup_file'])


def test_bad_lists_are_refused_before_anything_changes(node):
    unit = node.install()
    r = module_ok(k3s_service_arg, {'arg': SCHED, 'method': 'unit', 'backup': False})
    assert 'no backup was taken' in module_fail(rollback, {'files': r['files']})
    assert 'files must be' in module_fail(rollback, {'files': [{'path': unit, 'action': 'edited'}]})
    assert SCHED.encode() in node.read(unit)


def test_nothing_to_undo(node):
    r = module_ok(rollback, {'files': []})
    assert not r['changed'] and r['restored'] == [] and r['files'] == []


def test_it_holds_the_lock_of_each_file_it_writes_as_the_modules_that_wrote_them(node, monkeypatch):
    """A rollback waits for another run that holds the file (or the backup) it would write, then fails naming it."""
    unit = node.install()
    r = module_ok(k3s_service_arg, {'arg': SCHED, 'method': 'unit', 'backup': True})
    changed = node.read(unit)
    monkeypatch.setattr(_io, 'LOCK_TIMEOUT', 0.3)
    for held in (unit, r['backup_file'], '/etc/systemd/system/../system/k3s.service'):
        ready, done = threading.Event(), threading.Event()

        def hold():
            with set_module_args({}):
                other = AnsibleModule(argument_spec={})
            with _io.node_lock(other, paths=[held]):  # pylint: disable=cell-var-from-loop
                ready.set()
                done.wait(60)

        thread = threading.Thread(target=hold)
        thread.start()
        try:
            assert ready.wait(60)
            msg = module_fail(rollback, {'files': r['files']})
            assert msg.startswith('another baremetal.k3s run is changing '), msg
            assert node.read(unit) == changed and node.exists(r['backup_file'])
        finally:
            done.set()
            thread.join(60)
    assert module_ok(rollback, {'files': r['files']})['restored'] == [unit]
