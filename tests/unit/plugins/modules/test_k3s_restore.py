# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of k3s_restore: its real main() against fake_node's tree, on archives k3s_backup wrote there."""

from __future__ import annotations

import os
import tarfile

from ansible_collections.baremetal.k3s.plugins.modules import k3s_backup, k3s_restore

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.test_k3s_backup import DATA, server
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok


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
