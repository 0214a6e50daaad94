# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of _backup and _restore on real SQLite files: a consistent copy under a writer, retention, failures, restore."""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
import tarfile
import threading
import time

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _backup as backup
from ansible_collections.baremetal.k3s.plugins.module_utils import _io, _lock
from ansible_collections.baremetal.k3s.plugins.module_utils import _restore as restore
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import View, host_path

NOW = 1769311200  # 2026-01-25T03:20:00Z
HOST = 'server-1'
KINE_SCHEMA = ('CREATE TABLE IF NOT EXISTS kine (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, created INTEGER, '
               'deleted INTEGER, create_revision INTEGER, prev_revision INTEGER, lease INTEGER, value BLOB, old_value BLOB)')


def make_kine(path, rows=0, payload=200):
    """A kine-shaped SQLite datastore in WAL mode, as kine keeps it, with ``rows`` rows."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute('PRAGMA journal_mode=WAL')
    conn.execute(KINE_SCHEMA)
    conn.executemany('INSERT INTO kine (name, created, deleted, value) VALUES (?, 1, 0, ?)',
                     [('/registry/configmaps/default/initial-%d' % i, os.urandom(payload)) for i in range(rows)])
    conn.commit()
    return conn


def names_and_ids(path):
    conn = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    try:
        return conn.execute('SELECT id, name FROM kine ORDER BY id').fetchall()
    finally:
        conn.close()


class LockHolder:
    """What _io.node_lock needs of a module: a name, and fail_json (a lock not taken fails the test)."""

    _name = 'test'

    def fail_json(self, **kw):
        raise AssertionError(kw)


@pytest.fixture(autouse=True)
def locked_tree(tmp_path, tmp_path_factory, monkeypatch):
    """The lock of the test's whole tree held, as k3s_backup and k3s_restore hold theirs while they write: _io
    refuses a write whose lock (or a lock of a directory above it) is not held."""
    base = tmp_path_factory.mktemp('run')
    os.chmod(base, 0o755)
    monkeypatch.setattr(_lock, 'LOCK_BASE', str(base))
    monkeypatch.setattr(_io, 'ROOT', '/')
    with _io.node_lock(LockHolder(), paths=[str(tmp_path)]):
        yield


@pytest.fixture
def tree(tmp_path):
    """A node root with a k3s server's data dir: a kine datastore (WAL, its writer connection open) and a token."""
    root = str(tmp_path / 'root')
    data = os.path.join(root, 'var/lib/rancher/k3s')
    conn = make_kine(os.path.join(data, 'server/db/state.db'), rows=50)
    with open(os.path.join(data, 'server/token'), 'w') as f:
        f.write('K10abc::server:secret\n')
    os.chmod(os.path.join(data, 'server/token'), 0o600)
    yield root
    conn.close()


def view_of(root):
    return View(root=root, hostname=HOST)


def hp(root):
    return lambda path: host_path(root, path)


def listing(path):
    return sorted(os.listdir(path)) if os.path.isdir(path) else None


# -- names and retention --------------------------------------------------------------------------------------------
def test_archive_name_is_host_and_utc_time():
    assert backup.archive_name('server-1', NOW) == 'k3s-backup-server-1-20260125T032000Z.tar.gz'
    assert backup.archive_name('Bad Host/x', NOW) == 'k3s-backup-Bad_Host_x-20260125T032000Z.tar.gz'
    assert backup.ARCHIVE_RE.match(backup.archive_name('bk3s-backup_restore', NOW))


def test_own_archives_are_this_hosts_matching_names_oldest_first():
    names = ['k3s-backup-server-1-20260125T032000Z.tar.gz', 'k3s-backup-server-1-20260101T000000Z.tar.gz',
             'k3s-backup-server-1-20260101T000000Z.tar.gz.sha256', 'k3s-backup-server-2-20250101T000000Z.tar.gz',
             'k3s-backup-server-1-2026.tar.gz', 'k3s-backup-server-1-20260101T000000Z.tar.gz.bak', 'notes.txt',
             'k3s-backup-server-1-20260101T000000Z.tar']
    assert backup.own_archives(names, 'server-1') == ['k3s-backup-server-1-20260101T000000Z.tar.gz',
                                                      'k3s-backup-server-1-20260125T032000Z.tar.gz']


@pytest.mark.parametrize('existing, keep, removed', [
    (['a', 'b', 'c'], 3, ['a']),
    (['a', 'b', 'c'], 1, ['a', 'b', 'c']),
    (['a'], 3, []),
    ([], 1, []),
    (['a', 'b', 'c', 'd'], 2, ['a', 'b', 'c']),
])
def test_retention_keeps_the_newest_including_the_new_one(existing, keep, removed):
    assert backup.retention(existing, 'new', keep) == removed


def test_sha256_file_format_round_trips():
    line = backup.sha256_line('ab' * 32, 'x.tar.gz')
    assert line == 'ab' * 32 + '  x.tar.gz\n'
    assert backup.parse_sha256(line) == 'ab' * 32
    assert backup.parse_sha256('not a digest  x\n') is None
    assert backup.parse_sha256('') is None


def test_etcd_snapshot_command():
    assert backup.etcd_snapshot_argv('/usr/local/bin/k3s', '/var/lib/rancher/k3s', 'k3s-backup-s1') == \
        ['/usr/local/bin/k3s', 'etcd-snapshot', 'save', '--name', 'k3s-backup-s1']
    assert backup.etcd_snapshot_argv('/usr/bin/k3s', '/data/k3s', 'n', '/mnt/snaps') == \
        ['/usr/bin/k3s', 'etcd-snapshot', 'save', '--name', 'n', '--data-dir', '/data/k3s', '--dir', '/mnt/snaps']


# -- the copy -------------------------------------------------------------------------------------------------------
def test_copy_under_a_concurrent_writer_is_one_consistent_instant(tmp_path):
    """A writer commits pairs of rows (one transaction each) while the backup runs: the copy passes integrity_check,
    holds exactly the ids 1..n with n even (whole transactions, no gap: a prefix of the writer's history), and the
    writer really wrote before and after the copy was taken."""
    src = str(tmp_path / 'state.db')
    make_kine(src, rows=20000, payload=400).close()  # ~8 MB: the copy takes a while
    prefilled = 20000
    stop = threading.Event()
    written = [0]
    errors = []

    def writer():
        conn = sqlite3.connect(src, timeout=30)
        try:
            while not stop.is_set():
                with conn:
                    conn.execute("INSERT INTO kine (name, value) VALUES ('/registry/a', x'00')")
                    conn.execute("INSERT INTO kine (name, value) VALUES ('/registry/b', x'00')")
                written[0] += 2
        except sqlite3.Error as e:  # pragma: no cover - would fail the test below
            errors.append(e)
        finally:
            conn.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while written[0] < 200 and time.monotonic() < deadline:
            time.sleep(0.01)
        before = written[0]
        stats = backup.sqlite_copy(src, str(tmp_path / 'copy.db'))
        time.sleep(0.2)
    finally:
        stop.set()
        thread.join()
    assert not errors
    assert before >= 200
    ids = [row[0] for row in names_and_ids(str(tmp_path / 'copy.db'))]
    assert stats['integrity'] == 'ok'
    assert stats['rows'] == len(ids) == ids[-1] == stats['revision']
    assert ids == list(range(1, len(ids) + 1))
    assert (len(ids) - prefilled) % 2 == 0
    assert prefilled + before <= len(ids) < prefilled + written[0]
    # the copy is one self-contained file (no -wal to carry along)
    conn = sqlite3.connect(str(tmp_path / 'copy.db'))
    assert conn.execute('PRAGMA journal_mode').fetchone()[0] == 'delete'
    conn.close()


def test_copy_of_a_file_that_is_not_kine_fails(tmp_path):
    src = str(tmp_path / 'other.db')
    conn = sqlite3.connect(src)
    conn.execute('CREATE TABLE t (x)')
    conn.commit()
    conn.close()
    with pytest.raises(backup.BackupError, match="no readable kine table"):
        backup.sqlite_copy(src, str(tmp_path / 'copy.db'))


# -- plan -----------------------------------------------------------------------------------------------------------
def test_plan_names_the_archive_and_what_it_holds(tree):
    facts = backup.plan(view_of(tree), {'backup_dir': '/var/backups/k3s'}, now=NOW).facts
    assert facts['archive'] == '/var/backups/k3s/k3s-backup-server-1-20260125T032000Z.tar.gz'
    assert facts['contents'] == ['server/db/state.db', 'server/token']
    assert facts['datastore'] == 'sqlite'
    assert facts['needed_bytes'] > 2 * os.path.getsize(os.path.join(tree, 'var/lib/rancher/k3s/server/db/state.db'))
    assert not os.path.exists(os.path.join(tree, 'var/backups'))


@pytest.mark.parametrize('params, message', [
    ({'backup_dir': 'relative'}, 'must be an absolute path'),
    ({'keep': 0}, 'keep must be 1 or more'),
    ({'data_dir': '/nowhere'}, 'does not exist'),
    ({'backup_dir': '/var/lib/rancher/k3s/backups'}, 'inside the k3s data directory'),
])
def test_plan_refuses_bad_input(tree, params, message):
    with pytest.raises(PlanError, match=message):
        backup.plan(view_of(tree), params, now=NOW)


def test_plan_refuses_without_token_or_datastore(tree):
    os.unlink(os.path.join(tree, 'var/lib/rancher/k3s/server/token'))
    with pytest.raises(PlanError, match='without the token'):
        backup.plan(view_of(tree), {}, now=NOW)
    for name in os.listdir(os.path.join(tree, 'var/lib/rancher/k3s/server/db')):
        os.unlink(os.path.join(tree, 'var/lib/rancher/k3s/server/db', name))
    with pytest.raises(PlanError, match='no datastore'):
        backup.plan(view_of(tree), {}, now=NOW)


class SmallView(View):
    def statvfs(self, path):
        return os.statvfs_result((4096, 4096, 100, 10, 10, 100, 50, 50, 0, 255))  # 40 KiB free


def test_plan_refuses_when_free_space_is_below_the_estimate(tree):
    with pytest.raises(PlanError) as e:
        backup.plan(SmallView(root=tree, hostname=HOST), {}, now=NOW)
    assert 'not enough free space' in e.value.msg and 'free 40.0 KiB (40960 bytes)' in e.value.msg
    assert e.value.details['free_bytes'] == 40960 and e.value.details['needed_bytes'] > 40960


# -- writing --------------------------------------------------------------------------------------------------------
def test_archive_holds_the_copy_token_and_manifest_with_modes(tree):
    facts = backup.plan(view_of(tree), {}, now=NOW).facts
    out = backup.write_archive(facts, hp(tree))
    bdir = os.path.join(tree, 'var/backups/k3s')
    name = 'k3s-backup-server-1-20260125T032000Z.tar.gz'
    assert listing(bdir) == [name, name + '.sha256']
    assert os.stat(bdir).st_mode & 0o777 == 0o700
    for n in listing(bdir):
        assert os.stat(os.path.join(bdir, n)).st_mode & 0o777 == 0o600
    with open(os.path.join(bdir, name), 'rb') as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with open(os.path.join(bdir, name + '.sha256')) as f:
        assert f.read() == '%s  %s\n' % (digest, name)
    assert out['sha256'] == digest and out['size'] == os.path.getsize(os.path.join(bdir, name))
    assert out['rows'] == 50 and out['integrity'] == 'ok'
    with tarfile.open(os.path.join(bdir, name)) as tar:
        assert tar.getnames() == ['backup-manifest.json', 'server/db/state.db', 'server/token']
        assert all(m.mode == 0o600 for m in tar.getmembers())
        assert tar.extractfile('server/token').read() == b'K10abc::server:secret\n'


def test_retention_removes_only_this_hosts_older_archives(tree):
    bdir = os.path.join(tree, 'var/backups/k3s')
    os.makedirs(bdir, 0o700)
    keepers = ['k3s-backup-server-2-20200101T000000Z.tar.gz', 'notes.txt', 'k3s-backup-server-1-20200101T000000Z.tar',
               'k3s-backup-server-1-old.tar.gz']
    old = ['k3s-backup-server-1-2026010%dT000000Z.tar.gz' % d for d in (1, 2, 3)]
    for n in keepers + old + [old[0] + '.sha256']:
        with open(os.path.join(bdir, n), 'w') as f:
            f.write(n)
    facts = backup.plan(view_of(tree), {'keep': 2}, now=NOW).facts
    assert facts['removed'] == ['/var/backups/k3s/' + n for n in old[:2]]
    out = backup.write_archive(facts, hp(tree))
    assert out['removed'] == ['/var/backups/k3s/' + old[0], '/var/backups/k3s/' + old[0] + '.sha256',
                              '/var/backups/k3s/' + old[1]]
    new = 'k3s-backup-server-1-20260125T032000Z.tar.gz'
    assert listing(bdir) == sorted(keepers + [old[2], new, new + '.sha256'])


class FullDisk:
    """A file that takes ``room`` bytes, then fails as a full file system does."""

    def __init__(self, path, room):
        self.f = open(path, 'wb')  # pylint: disable=consider-using-with
        self.room = room

    def write(self, data):
        if len(data) > self.room:
            self.f.write(data[:self.room])
            self.room = 0
            raise OSError(errno.ENOSPC, 'No space left on device')
        self.room -= len(data)
        return self.f.write(data)

    def flush(self):
        self.f.flush()

    def fileno(self):
        return self.f.fileno()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()


@pytest.mark.parametrize('room', [0, 100, 4000])
def test_a_full_disk_mid_write_leaves_nothing(tree, room):
    bdir = os.path.join(tree, 'var/backups/k3s')
    os.makedirs(bdir, 0o700)
    with open(os.path.join(bdir, 'k3s-backup-server-1-20200101T000000Z.tar.gz'), 'w') as f:
        f.write('old')
    before = listing(bdir)
    facts = backup.plan(view_of(tree), {'keep': 1}, now=NOW).facts
    seen = []

    def opener(path, mode):
        seen.append(path)
        return FullDisk(path, room)

    with pytest.raises(backup.BackupError) as e:
        backup.write_archive(facts, hp(tree), opener=opener)
    assert 'No space left on device' in e.value.msg and 'file system is full' in e.value.msg
    assert seen and all(not os.path.exists(p) for p in seen)
    assert listing(bdir) == before  # no partial archive, no temp dir, retention did not run


def test_a_failure_after_the_archive_is_renamed_removes_it(tree):
    facts = backup.plan(view_of(tree), {}, now=NOW).facts
    calls = []

    def opener(path, mode):
        calls.append(path)
        if path.endswith('.sha256'):
            raise OSError(errno.ENOSPC, 'No space left on device')
        return open(path, mode)  # pylint: disable=consider-using-with

    with pytest.raises(backup.BackupError):
        backup.write_archive(facts, hp(tree), opener=opener)
    assert len(calls) == 2
    assert not os.path.exists(os.path.join(tree, 'var/backups/k3s'))  # made by this run, so removed again


def test_stale_temp_dirs_of_a_killed_run_are_removed(tree):
    bdir = os.path.join(tree, 'var/backups/k3s')
    os.makedirs(os.path.join(bdir, '.k3s-backup-dead.tmp'))
    os.makedirs(os.path.join(bdir, '.other.tmp'))
    backup.write_archive(backup.plan(view_of(tree), {}, now=NOW).facts, hp(tree))
    assert '.k3s-backup-dead.tmp' not in listing(bdir) and '.other.tmp' in listing(bdir)


# -- restore --------------------------------------------------------------------------------------------------------
def made_archive(tree):
    facts = backup.write_archive(backup.plan(view_of(tree), {}, now=NOW).facts, hp(tree))
    with tarfile.open(host_path(tree, facts['archive'])) as tar:
        db = tar.extractfile('server/db/state.db').read()
    return facts, db


def test_restore_puts_the_bytes_back_and_keeps_the_old_db_aside(tree):
    facts, db_bytes = made_archive(tree)
    dbdir = os.path.join(tree, 'var/lib/rancher/k3s/server/db')
    with open(os.path.join(dbdir, 'state.db'), 'rb') as f:
        old = f.read()
    old_names = listing(dbdir)
    with open(os.path.join(tree, 'var/lib/rancher/k3s/server/token'), 'w') as f:
        f.write('K10other::server:changed\n')
    plan = restore.plan(view_of(tree), {'archive': facts['archive']}, now=NOW + 60)
    out = restore.restore(plan.facts, hp(tree))
    with open(os.path.join(dbdir, 'state.db'), 'rb') as f:
        assert f.read() == db_bytes
    assert listing(dbdir) == ['state.db']  # no stale -wal/-shm of the old one
    assert os.stat(dbdir).st_mode & 0o777 == 0o700 and os.stat(os.path.join(dbdir, 'state.db')).st_mode & 0o777 == 0o600
    aside = os.path.join(tree, 'var/lib/rancher/k3s/server/db.before-restore-20260125T032100Z')
    assert out['db_aside'] == '/var/lib/rancher/k3s/server/db.before-restore-20260125T032100Z'
    assert listing(aside) == old_names
    with open(os.path.join(aside, 'state.db'), 'rb') as f:
        assert f.read() == old
    token = os.path.join(tree, 'var/lib/rancher/k3s/server/token')
    with open(token) as f:
        assert f.read() == 'K10abc::server:secret\n'
    assert os.stat(token).st_mode & 0o777 == 0o600
    with open(token + '.before-restore-20260125T032100Z') as f:
        assert f.read() == 'K10other::server:changed\n'
    assert out['rows'] == 50 and out['restored'] == ['/var/lib/rancher/k3s/server/db/state.db',
                                                     '/var/lib/rancher/k3s/server/token']
    assert [n for n in listing(os.path.join(tree, 'var/lib/rancher/k3s/server')) if n.startswith('.')] == []


def test_restore_after_a_lost_db_needs_no_aside(tree):
    facts, db_bytes = made_archive(tree)
    dbdir = os.path.join(tree, 'var/lib/rancher/k3s/server/db')
    for n in os.listdir(dbdir):
        os.unlink(os.path.join(dbdir, n))
    os.rmdir(dbdir)
    out = restore.restore(restore.plan(view_of(tree), {'archive': facts['archive']}, now=NOW).facts, hp(tree))
    assert out['db_aside'] == '' and out['token_aside'] == '' and out['restored'] == ['/var/lib/rancher/k3s/server/db/state.db']
    with open(os.path.join(dbdir, 'state.db'), 'rb') as f:
        assert f.read() == db_bytes


def snapshot(root):
    out = {}
    for d, dummy, files in os.walk(root):
        for n in files:
            with open(os.path.join(d, n), 'rb') as f:
                out[os.path.join(d, n)] = f.read()
    return out


def test_restore_refuses_a_sha256_mismatch_and_changes_nothing(tree):
    facts, dummy = made_archive(tree)
    with open(host_path(tree, facts['archive']), 'ab') as f:
        f.write(b'\0')
    before = snapshot(tree)
    plan = restore.plan(view_of(tree), {'archive': facts['archive']}, now=NOW)
    with pytest.raises(backup.BackupError, match='sha256 mismatch'):
        restore.restore(plan.facts, hp(tree))
    assert snapshot(tree) == before


def test_restore_refuses_an_archive_with_foreign_members(tree, tmp_path):
    evil = str(tmp_path / 'root/var/backups/evil.tar.gz')
    os.makedirs(os.path.dirname(evil))
    with tarfile.open(evil, 'w:gz') as tar:
        for name in ('server/db/state.db', 'server/token', '../../etc/passwd'):
            info = tarfile.TarInfo(name)
            info.size = 1
            tar.addfile(info, __import__('io').BytesIO(b'x'))
    with open(evil, 'rb') as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    before = snapshot(tree)
    plan = restore.plan(view_of(tree), {'archive': '/var/backups/evil.tar.gz', 'sha256': digest}, now=NOW)
    with pytest.raises(backup.BackupError, match='outside the data directory'):
        restore.restore(plan.facts, hp(tree))
    assert snapshot(tree) == before


def test_restore_check_only_writes_nothing(tree):
    facts, dummy = made_archive(tree)
    before = snapshot(tree)
    out = restore.restore(restore.plan(view_of(tree), {'archive': facts['archive']}, now=NOW).facts, hp(tree),
                          check_only=True)
    assert out['manifest']['rows'] == 50 and out['restored'] == []
    assert snapshot(tree) == before


def test_restore_plan_refuses_without_checksum(tree):
    facts, dummy = made_archive(tree)
    os.unlink(host_path(tree, facts['sha256_file']))
    with pytest.raises(PlanError, match='no checksum'):
        restore.plan(view_of(tree), {'archive': facts['archive']}, now=NOW)
    with pytest.raises(PlanError, match='64 hex digits'):
        restore.plan(view_of(tree), {'archive': facts['archive'], 'sha256': 'abc'}, now=NOW)


def test_a_full_disk_while_sqlite_copies_leaves_nothing(tree, monkeypatch):
    bdir = os.path.join(tree, 'var/backups/k3s')
    facts = backup.plan(view_of(tree), {}, now=NOW).facts

    def full(source, dest):
        with open(dest, 'wb') as f:
            f.write(b'SQLite format 3\0partial')
        raise sqlite3.OperationalError('database or disk is full')

    monkeypatch.setattr(backup, 'sqlite_copy', full)
    with pytest.raises(backup.BackupError) as e:
        backup.write_archive(facts, hp(tree))
    assert 'database or disk is full' in e.value.msg and 'file system is full' in e.value.msg
    assert not os.path.exists(bdir)


def test_a_loose_backup_dir_is_warned_about(tree):
    os.makedirs(os.path.join(tree, 'var/backups/k3s'))
    os.chmod(os.path.join(tree, 'var/backups/k3s'), 0o755)
    plan = backup.plan(view_of(tree), {}, now=NOW)
    assert plan.warnings == ['/var/backups/k3s is mode 0755: other users can list (or read) the archives, which hold '
                             'the cluster\'s secrets and token. chmod 0700 it.']


def test_restore_refuses_when_the_data_dir_has_no_room(tree, monkeypatch):
    facts, dummy = made_archive(tree)
    before = snapshot(tree)
    monkeypatch.setattr(os, 'statvfs', lambda path: os.statvfs_result((4096, 4096, 100, 1, 1, 100, 50, 50, 0, 255)))
    with pytest.raises(backup.BackupError, match=r'not enough free space in /var/lib/rancher/k3s .* free 4.0 KiB'):
        restore.restore(restore.plan(view_of(tree), {'archive': facts['archive']}, now=NOW).facts, hp(tree))
    assert snapshot(tree) == before


def test_restore_puts_the_old_db_back_when_a_later_step_fails(tree, monkeypatch):
    facts, dummy = made_archive(tree)
    server = os.path.join(tree, 'var/lib/rancher/k3s/server')
    with open(os.path.join(server, 'token'), 'w') as f:
        f.write('K10other::server:changed\n')
    before = snapshot(tree)
    real_rename = os.rename

    def rename(src, dst):
        if dst == os.path.join(server, 'token'):
            raise OSError(errno.ENOSPC, 'No space left on device')
        return real_rename(src, dst)

    monkeypatch.setattr(os, 'rename', rename)
    with pytest.raises(backup.BackupError, match='No space left on device. Nothing was changed'):
        restore.restore(restore.plan(view_of(tree), {'archive': facts['archive']}, now=NOW).facts, hp(tree))
    assert snapshot(tree) == before
    assert [n for n in listing(server) if 'restore' in n or n.startswith('.')] == []
