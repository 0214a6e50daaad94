# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of k3s_restore: its real main() against fake_node's tree, on archives k3s_backup wrote there."""

from __future__ import annotations

import os
import tarfile

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _restore
from ansible_collections.baremetal.k3s.plugins.modules import k3s_backup, k3s_restore

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.test_k3s_backup import DATA, fake_snapshot_save, k3s_runs, server
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.test_secrets import assert_hidden
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.test_secrets import run as run_real
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok, run_module


def backed_up(node):
    server(node)
    result = module_ok(k3s_backup, {})
    with tarfile.open(node.p(result['archive'])) as tar:
        db = tar.extractfile('server/db/state.db').read()
    return result, db


def test_restore_puts_back_the_archive_and_keeps_the_old_db(node):
    archive, db = backed_up(node)
    node.write(DATA + '/server/db/state.db', b'newer datastore')
    node.write(DATA + '/server/db/state.db-wal', b'wal')
    result = module_ok(k3s_restore, {'archive': archive['archive'], 'service': ''})
    assert result['changed'] is True
    assert node.read(DATA + '/server/db/state.db') == db
    assert node.listdir(DATA + '/server/db') == ['state.db']
    assert node.mode(DATA + '/server/db') == 0o700 and node.mode(DATA + '/server/db/state.db') == 0o600
    aside = result['db_aside']
    assert aside.startswith(DATA + '/server/db.before-restore-') and aside.endswith('Z')
    assert node.read(aside + '/state.db') == b'newer datastore' and node.read(aside + '/state.db-wal') == b'wal'
    assert result['token_aside'] == '' and result['restored'] == [DATA + '/server/db/state.db']
    assert result['rows'] == 30 and result['manifest']['rows'] == 30


def test_restore_refuses_while_k3s_runs(node):
    archive, dummy = backed_up(node)
    node.install('server')
    node.service('k3s', pid=4242)
    before = node.tree()
    failed = module_fail(k3s_restore, {'archive': archive['archive']})
    assert 'k3s (service k3s) is running' in failed and 'Stop it first' in failed
    assert node.tree() == before


def test_restore_runs_once_the_service_is_stopped(node):
    archive, db = backed_up(node)
    node.install('server')
    node.service('k3s', pid=0)
    os.unlink(node.p(DATA + '/server/db/state.db'))
    result = module_ok(k3s_restore, {'archive': archive['archive']})
    assert result['data_dir'] == DATA and node.read(DATA + '/server/db/state.db') == db


def test_restore_refuses_a_sha256_mismatch_and_changes_nothing(node):
    archive, dummy = backed_up(node)
    before = node.tree()
    failed = module_fail(k3s_restore, {'archive': archive['archive'], 'service': '', 'sha256': '0' * 64})
    assert 'sha256 mismatch' in failed and 'nothing was changed' in failed
    assert node.tree() == before


def test_check_mode_verifies_and_writes_nothing(node):
    archive, dummy = backed_up(node)
    before = node.tree()
    result = module_ok(k3s_restore, {'archive': archive['archive'], 'service': ''}, check_mode=True)
    assert result['sha256'] == archive['sha256'] and result['restored'] == []
    assert node.tree() == before


def test_missing_archive_is_refused(node):
    server(node)
    assert 'does not exist on this node' in module_fail(k3s_restore, {'archive': '/var/backups/k3s/x.tar.gz', 'service': ''})


# -- embedded etcd -------------------------------------------------------------------------------------------------
SECRET = 'Zq7restoreX9w'
TOKEN = 'K10abc0000000000000000000000000000000000000000000000000000000000000::server:' + SECRET
DONE = 'level=info msg="Managed etcd cluster membership has been reset, restart without --cluster-reset flag now."'


def etcd_node(node, token_file=True, args=('--write-kubeconfig-mode=644',), environ=None):
    """A stopped k3s server on embedded etcd, installed as the installer does, its token in a token-file."""
    node.install('server', args=list(args), environ=environ or {'K3S_DOUBLE_ETCD_MANAGE_INTERVAL': '2s'})
    node.service('k3s', pid=0)
    if token_file:
        node.write('/etc/rancher/k3s/config.yaml.d/40-baremetal-k3s-server.yaml',
                   'cluster-init: true\ntoken-file: /etc/rancher/k3s/cluster-token\n')
        node.write('/etc/rancher/k3s/cluster-token', TOKEN + '\n', 0o600)
    node.write(DATA + '/server/db/etcd/member/snap/db', os.urandom(4096))
    node.write(DATA + '/server/token', TOKEN + '\n', 0o600)


def etcd_backed_up(node, **kw):
    etcd_node(node, **kw)
    with k3s_runs(node, fake_snapshot_save(node, name='k3s-backup-s1-s1-1')):
        return module_ok(k3s_backup, {'host': 's1'})


class ResetStandIn:
    """k3s server --cluster-reset as run_foreground would run it: writes what k3s restores, answers as told."""

    def __init__(self, node, rc=0, output=DONE):
        self.node, self.rc, self.output, self.calls = node, rc, output, []

    def __call__(self, argv, env, timeout):
        self.calls.append((argv, env, timeout))
        self.node.write(DATA + '/server/db/etcd/member/snap/db', b'restored')
        return self.rc, self.output


def test_etcd_restore_runs_k3s_cluster_reset_with_the_services_command_line(node, monkeypatch):
    archive = etcd_backed_up(node)
    k3s = ResetStandIn(node)
    monkeypatch.setattr(_restore, 'run_foreground', k3s)
    result = module_ok(k3s_restore, {'archive': archive['archive'], 'timeout': 120})
    snapshot = DATA + '/server/db/snapshots/k3s-backup-s1-s1-1'
    argv, env, timeout = k3s.calls[0]
    assert argv == ['/usr/local/bin/k3s', 'server', '--write-kubeconfig-mode=644', '--cluster-reset',
                    '--cluster-reset-restore-path=' + snapshot, '--token=' + TOKEN]
    assert env['K3S_DOUBLE_ETCD_MANAGE_INTERVAL'] == '2s' and timeout == 120
    assert result['changed'] and result['datastore'] == 'etcd' and result['snapshot'] == snapshot
    assert result['reset_argv'][-1] == '--token=(hidden)' and result['reset_message'] == DONE
    assert result['db_aside'].startswith(DATA + '/server/db.before-restore-') and result['token_aside'] == ''
    assert node.read(result['db_aside'] + '/snapshots/k3s-backup-s1-s1-1') == node.read(snapshot)
    assert node.read(DATA + '/server/db/etcd/member/snap/db') == b'restored'
    # the restore path went into no config file
    assert not any(snapshot.encode() in (data or b'') for path, (data, mode) in node.tree('/etc').items())


def test_etcd_restore_fails_and_puts_back_when_k3s_does(node, monkeypatch):
    archive = etcd_backed_up(node)
    before = node.tree(DATA)
    monkeypatch.setattr(_restore, 'run_foreground', ResetStandIn(node, rc=1, output='level=fatal msg="boom"'))
    failed, result = run_module(k3s_restore, {'archive': archive['archive']})
    assert failed and 'exited 1' in result['msg'] and 'level=fatal msg="boom"' in result['msg']
    assert result['db_failed'].startswith(DATA + '/server/db.failed-restore-')
    after = node.tree(DATA)
    assert {k: v for k, v in after.items() if '.failed-restore-' not in k} == before


def test_etcd_restore_refuses_a_token_file_of_another_cluster(node, monkeypatch):
    archive = etcd_backed_up(node)
    node.write('/etc/rancher/k3s/cluster-token', 'K10abc0000000000000000000000000000000000000000000000000000000000000::server:another\n', 0o600)
    monkeypatch.setattr(_restore, 'run_foreground', side_effect_error)
    before = node.tree()
    failed = module_fail(k3s_restore, {'archive': archive['archive']})
    assert 'its token file /etc/rancher/k3s/cluster-token (token-file)' in failed and 'Nothing was changed' in failed
    assert node.tree() == before


def side_effect_error(*args):
    raise AssertionError('k3s was run')


def test_etcd_restore_check_mode_runs_nothing_even_while_k3s_runs(node, monkeypatch):
    archive = etcd_backed_up(node)
    node.service('k3s', pid=4242)
    monkeypatch.setattr(_restore, 'run_foreground', side_effect_error)
    before = node.tree()
    result = module_ok(k3s_restore, {'archive': archive['archive'], 'require_stopped': False}, check_mode=True)
    assert result['datastore'] == 'etcd' and result['reset_argv'][-3:-1] == [
        '--cluster-reset', '--cluster-reset-restore-path=' + DATA + '/server/db/snapshots/k3s-backup-s1-s1-1']
    assert node.tree() == before
    assert 'is running' in module_fail(k3s_restore, {'archive': archive['archive']})


def test_rejoin_moves_the_datastore_aside_and_names_the_server_it_joins(node):
    etcd_node(node, args=('--server', 'https://server-1:6443'))
    before = node.tree(DATA + '/server/db')
    result = module_ok(k3s_restore, {'step': 'rejoin'}, check_mode=True)
    assert result['changed'] and result['join_url'] == 'https://server-1:6443' and node.tree(DATA + '/server/db') == before
    result = module_ok(k3s_restore, {'step': 'rejoin'})
    assert result['changed'] and result['db_aside'].startswith(DATA + '/server/db.before-restore-')
    assert not node.exists(DATA + '/server/db') and node.read(DATA + '/server/token') == (TOKEN + '\n').encode()
    assert node.read(result['db_aside'] + '/etcd/member/snap/db') == before[DATA + '/server/db/etcd/member/snap/db'][0]
    assert module_ok(k3s_restore, {'step': 'rejoin'})['changed'] is False  # nothing left to move


def test_discard_keeps_another_clusters_datastore_and_token_aside(node):
    etcd_node(node)  # a server that ran a cluster of its own, to join another one (no server URL needed yet)
    before = node.tree(DATA + '/server')
    result = module_ok(k3s_restore, {'step': 'discard'}, check_mode=True)
    assert result['changed'] and result['db_aside'].startswith(DATA + '/server/db.baremetal-k3s-')
    assert result['token_aside'].startswith(DATA + '/server/token.baremetal-k3s-') and node.tree(DATA + '/server') == before
    result = module_ok(k3s_restore, {'step': 'discard'})
    assert result['changed'] and not node.exists(DATA + '/server/db') and not node.exists(DATA + '/server/token')
    assert node.read(result['db_aside'] + '/etcd/member/snap/db') == before[DATA + '/server/db/etcd/member/snap/db'][0]
    assert node.read(result['token_aside']) == (TOKEN + '\n').encode()
    assert module_ok(k3s_restore, {'step': 'discard'})['changed'] is False  # nothing left to move


def test_discard_refuses_while_k3s_runs(node):
    etcd_node(node)
    node.service('k3s', pid=4242)
    before = node.tree()
    assert 'is running' in module_fail(k3s_restore, {'step': 'discard'})
    assert node.tree() == before


def test_rejoin_refuses_the_server_others_join_through(node):
    etcd_node(node)  # cluster-init, no server URL: without server/db it would start a cluster of its own
    before = node.tree()
    failed = module_fail(k3s_restore, {'step': 'rejoin'})
    assert 'no server URL to join through' in failed and 'Restore on the server the others join through' in failed
    assert node.tree() == before


@pytest.mark.parametrize('rc, output', [(0, DONE), (1, 'level=fatal msg="bad token %s --token=%s"' % (SECRET, TOKEN))])
def test_etcd_restore_shows_no_token(node, monkeypatch, capsys, rc, output):
    """Ansible's own exit_json/fail_json: the whole JSON result searched for the token, success and failure."""
    archive = etcd_backed_up(node)
    monkeypatch.setattr(_restore, 'run_foreground', ResetStandIn(node, rc=rc, output=output))
    failed, result, text = run_real(k3s_restore, {'archive': archive['archive']}, capsys)
    if rc:
        assert failed and 'exited 1' in result['msg'] and 'level=fatal msg="bad token' in result['msg'], text
    else:
        assert not failed and result['reset_argv'][-1] == '--token=(hidden)', text
    assert_hidden(text, SECRET)
