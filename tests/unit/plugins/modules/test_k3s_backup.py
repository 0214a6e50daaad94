# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of k3s_backup: its real main() against fake_node's tree with a real SQLite datastore."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import tarfile

import contextlib

from ansible_collections.baremetal.k3s.plugins.modules import k3s_backup

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok

DATA = '/var/lib/rancher/k3s'
BDIR = '/var/backups/k3s'


def server(node, rows=30):
    """A k3s server's data dir in the node: kine's SQLite datastore (WAL) and the token."""
    node.makedirs(DATA + '/server/db')
    conn = sqlite3.connect(node.p(DATA + '/server/db/state.db'))
    conn.execute('PRAGMA journal_mode=WAL')
    conn.execute('CREATE TABLE kine (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, value BLOB)')
    conn.executemany('INSERT INTO kine (name, value) VALUES (?, ?)', [('/registry/x/%d' % i, b'v' * 100) for i in range(rows)])
    conn.commit()
    conn.close()
    node.write(DATA + '/server/token', 'K10hash::server:pw\n', 0o600)


def test_backup_writes_one_archive_and_its_checksum(node):
    server(node)
    node.makedirs(DATA + '/storage/pvc-1')
    node.write(DATA + '/storage/pvc-1/data.txt', 'volume data\n')
    result = module_ok(k3s_backup, {'include_storage': True})
    assert result['changed'] is True
    name = os.path.basename(result['archive'])
    assert name.startswith('k3s-backup-Node-1.Example-') and name.endswith('Z.tar.gz')
    assert node.listdir(BDIR) == [name, name + '.sha256']
    assert node.mode(BDIR) == 0o700 and node.mode(result['archive']) == 0o600
    data = node.read(result['archive'])
    assert result['sha256'] == hashlib.sha256(data).hexdigest() and result['size'] == len(data)
    assert node.read(result['sha256_file']) == ('%s  %s\n' % (result['sha256'], name)).encode()
    assert result['rows'] == 30 and result['integrity'] == 'ok' and result['datastore'] == 'sqlite'
    assert result['contents'] == ['server/db/state.db', 'server/token', 'storage/']
    with tarfile.open(node.p(result['archive'])) as tar:
        assert set(tar.getnames()) >= {'backup-manifest.json', 'server/db/state.db', 'server/token', 'storage/pvc-1/data.txt'}
        assert tar.extractfile('storage/pvc-1/data.txt').read() == b'volume data\n'


def test_check_mode_writes_nothing(node):
    server(node)
    before = node.tree()
    result = module_ok(k3s_backup, {}, check_mode=True)
    assert result['changed'] is True and result['archive'].startswith(BDIR + '/k3s-backup-')
    assert result['sha256'] == '' and result['rows'] == 0
    assert node.tree() == before


def test_free_space_refusal_writes_nothing(node):
    server(node)
    node.filesystem('/', free_mb=0, size_mb=100)
    before = node.tree()
    failed = module_fail(k3s_backup, {})
    assert 'not enough free space' in failed and 'needed' in failed and 'free 0 B' in failed
    assert node.tree() == before


def test_keep_removes_only_this_hosts_older_archives(node):
    server(node)
    old = ['k3s-backup-Node-1.Example-2026010%dT000000Z.tar.gz' % d for d in (1, 2)]
    other = ['k3s-backup-other-20200101T000000Z.tar.gz', 'README', 'k3s-backup-Node-1.Example-20200101T000000Z.tgz']
    for n in old + other:
        node.write(BDIR + '/' + n, n)
    result = module_ok(k3s_backup, {'keep': 2})
    assert result['removed'] == [BDIR + '/' + old[0]]
    assert node.listdir(BDIR) == sorted(other + [old[1], os.path.basename(result['archive']),
                                                 os.path.basename(result['sha256_file'])])


def test_refuses_an_agent_and_a_missing_token(node):
    node.makedirs(DATA + '/agent')
    assert 'no datastore' in module_fail(k3s_backup, {})
    server(node)
    node.unlink(DATA + '/server/token')
    assert 'without the token' in module_fail(k3s_backup, {})
    assert not node.exists(BDIR)


def snapshot_bytes(size=1024):
    """An etcd snapshot as etcd saves one: the database, then its sha256."""
    data = os.urandom(size)
    return data + hashlib.sha256(data).digest()


def etcd_server(node, data=DATA):
    """A server on embedded etcd: etcd's database, the token."""
    node.write(data + '/server/db/etcd/member/snap/db', os.urandom(4096))
    node.write(data + '/server/token', 'K10hash::server:pw\n', 0o600)


@contextlib.contextmanager
def k3s_runs(node, run_command):
    """k3s on the node, as the module's View runs it: ``run_command(self, argv)`` answers (``self`` is None)."""
    node.commands['k3s'] = lambda argv, stdin=None: run_command(None, argv)
    try:
        yield
    finally:
        del node.commands['k3s']


def fake_snapshot_save(node, data=DATA, name='k3s-backup-s1-s1-1769311200', content=None, say=True, calls=None):
    """k3s etcd-snapshot save as the View runs it: the file where k3s writes it, k3s's line."""
    def run_command(self, argv, **kw):  # pylint: disable=unused-argument
        if calls is not None:
            calls.append(list(argv))
        node.write(data + '/server/db/snapshots/' + name, snapshot_bytes() if content is None else content, 0o600)
        return 0, '', ('time="2026-01-25T03:20:00Z" level=info msg="Snapshot %s saved."\n' % name) if say else ''
    return run_command


def test_embedded_etcd_archive_holds_the_snapshot_and_the_token(node):
    etcd_server(node, '/data/k3s')
    node.write('/data/k3s/server/db/snapshots/earlier', 'x')
    calls = []
    with k3s_runs(node, fake_snapshot_save(node, '/data/k3s', calls=calls)):
        result = module_ok(k3s_backup, {'data_dir': '/data/k3s', 'host': 's1', 'k3s_binary': '/usr/bin/k3s'})
    assert calls == [['/usr/bin/k3s', 'etcd-snapshot', 'save', '--name', 'k3s-backup-s1', '--data-dir', '/data/k3s']]
    snapshot = '/data/k3s/server/db/snapshots/k3s-backup-s1-s1-1769311200'
    assert result['datastore'] == 'etcd' and result['snapshot'] == snapshot and result['snapshots'] == [snapshot]
    name = os.path.basename(result['archive'])
    assert name.startswith('k3s-backup-s1-') and node.listdir(BDIR) == [name, name + '.sha256']
    assert result['sha256'] == hashlib.sha256(node.read(result['archive'])).hexdigest()
    assert node.read(result['sha256_file']) == ('%s  %s\n' % (result['sha256'], name)).encode()
    assert result['contents'] == ['server/db/snapshots/k3s-backup-s1-s1-1769311200', 'server/token']
    assert result['integrity'] == 'ok'
    with tarfile.open(node.p(result['archive'])) as tar:
        assert tar.extractfile('server/db/snapshots/k3s-backup-s1-s1-1769311200').read() == node.read(snapshot)
        assert tar.extractfile('server/token').read() == b'K10hash::server:pw\n'
    assert node.read(snapshot) is not None  # k3s's snapshot stays where k3s keeps it


def test_embedded_etcd_snapshot_found_without_k3s_line(node):
    etcd_server(node)
    with k3s_runs(node, fake_snapshot_save(node, say=False)):
        result = module_ok(k3s_backup, {'host': 's1'})
    assert result['snapshot'].endswith('/k3s-backup-s1-s1-1769311200')


def test_embedded_etcd_snapshot_elsewhere_is_named(node):
    etcd_server(node)

    def run_command(self, argv, **kw):  # pylint: disable=unused-argument
        node.write('/srv/snapshots/k3s-backup-s1-s1-1', snapshot_bytes())
        return 0, '', 'msg="Snapshot k3s-backup-s1-s1-1 saved."'

    with k3s_runs(node, run_command):
        failed = module_fail(k3s_backup, {'host': 's1'})
    assert 'no snapshot file named k3s-backup-s1-s1-1 is in /var/lib/rancher/k3s/server/db/snapshots' in failed
    assert 'give that directory as snapshot_dir' in failed and not node.exists(BDIR)
    with k3s_runs(node, run_command):
        result = module_ok(k3s_backup, {'host': 's1', 'snapshot_dir': '/srv/snapshots'})
    assert result['contents'][0] == 'server/db/snapshots/k3s-backup-s1-s1-1'


def test_embedded_etcd_damaged_snapshot_leaves_no_archive(node):
    etcd_server(node)
    with k3s_runs(node, fake_snapshot_save(node, content=b'not a snapshot')):
        failed = module_fail(k3s_backup, {'host': 's1'})
    assert 'carries no integrity hash' in failed
    assert not node.exists(BDIR)


def test_embedded_etcd_failure_is_reported(node):
    etcd_server(node)
    with k3s_runs(node, lambda self, argv, **kw: (1, '', 'etcd not running')):
        failed = module_fail(k3s_backup, {})
    assert 'etcd-snapshot save --name k3s-backup-Node-1.Example failed (rc 1): etcd not running' in failed
    assert not node.exists(BDIR)


def test_embedded_etcd_check_mode_runs_nothing(node):
    etcd_server(node)
    before = node.tree()

    def never(self, argv):  # pylint: disable=unused-argument
        raise AssertionError('ran a command: %s' % argv)

    with k3s_runs(node, never):
        result = module_ok(k3s_backup, {}, check_mode=True)
    assert result['snapshot_argv'][1:3] == ['etcd-snapshot', 'save']
    assert result['archive'].startswith(BDIR + '/k3s-backup-') and result['contents'] == ['server/db/snapshots/', 'server/token']
    assert node.tree() == before


def test_embedded_etcd_free_space_counts_the_snapshot(node):
    etcd_server(node)
    node.filesystem('/', free_mb=1, size_mb=100)
    failed = module_fail(k3s_backup, {})
    assert 'not enough free space for the backup' in failed and 'the etcd snapshot 4.0 KiB twice' in failed
    assert not node.exists(BDIR)
