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

from unittest.mock import patch

from ansible.module_utils import basic

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


def test_embedded_etcd_runs_etcd_snapshot_save(node):
    """The test double has no etcd: the command is checked against a fake k3s that writes a snapshot file as k3s does."""
    node.makedirs('/data/k3s/server/db/etcd')
    node.write('/data/k3s/server/token', 'K10hash::server:pw\n', 0o600)
    node.write('/data/k3s/server/db/snapshots/earlier', 'x')
    calls = []

    def run_command(self, argv, **kw):  # pylint: disable=unused-argument
        calls.append(list(argv))
        node.write('/data/k3s/server/db/snapshots/k3s-backup-s1-s1-1769311200', 'snapshot')
        return 0, 'Snapshot k3s-backup-s1-s1-1769311200 saved.', ''

    with patch.object(basic.AnsibleModule, 'run_command', run_command):
        result = module_ok(k3s_backup, {'data_dir': '/data/k3s', 'host': 's1', 'k3s_binary': '/usr/bin/k3s'})
    assert calls == [['/usr/bin/k3s', 'etcd-snapshot', 'save', '--name', 'k3s-backup-s1', '--data-dir', '/data/k3s']]
    assert result['datastore'] == 'etcd' and result['archive'] == ''
    assert result['snapshots'] == ['/data/k3s/server/db/snapshots/k3s-backup-s1-s1-1769311200']
    assert not node.exists(BDIR)


def test_embedded_etcd_failure_is_reported(node):
    node.makedirs(DATA + '/server/db/etcd')
    node.write(DATA + '/server/token', 'K10hash::server:pw\n', 0o600)
    with patch.object(basic.AnsibleModule, 'run_command', lambda self, argv, **kw: (1, '', 'etcd not running')):
        failed = module_fail(k3s_backup, {})
    assert 'etcd-snapshot save --name k3s-backup-Node-1.Example failed (rc 1): etcd not running' in failed


def test_embedded_etcd_check_mode_runs_nothing(node):
    node.makedirs(DATA + '/server/db/etcd')
    node.write(DATA + '/server/token', 'K10hash::server:pw\n', 0o600)
    with patch.object(basic.AnsibleModule, 'run_command', side_effect=AssertionError('ran a command')):
        result = module_ok(k3s_backup, {}, check_mode=True)
    assert result['snapshot_argv'][1:3] == ['etcd-snapshot', 'save']
