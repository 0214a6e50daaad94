# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of _restore (and _backup's etcd half) on real files: etcd snapshots and their archives, k3s's cluster reset
run as a stand-in command, what is put back when it fails, a rejoin's move aside, and the foreground runner."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tarfile
import time
import zipfile

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _backup as backup
from ansible_collections.baremetal.k3s.plugins.module_utils import _restore as restore
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import View, host_path
from ansible_collections.baremetal.k3s.tests.unit.plugins.module_utils.test__backup import locked_tree  # noqa: F401 pylint: disable=unused-import

NOW = 1769311200  # 2026-01-25T03:20:00Z
HOST = 'server-1'
DATA = '/var/lib/rancher/k3s'
TOKEN = 'K10abc0000000000000000000000000000000000000000000000000000000000000::server:Zq7secretX9w'
SNAP = 'k3s-backup-server-1-server-1-1769311100'
DONE = ('time="2026-01-25T03:21:00Z" level=info msg="Managed etcd cluster membership has been reset, restart without '
        '--cluster-reset flag now. Backup and delete ${datadir}/server/db on each peer etcd server and rejoin the nodes"')

CA_ABC = 'abc' + '0' * 61  # a CA hash as k3s's token parser takes it: 64 hex digits
CA_FFF = 'fff' + '0' * 61


def snapshot_bytes(size=1024):
    """An etcd snapshot as etcd saves one: the database, then the sha256 of it (size % 512 == 32)."""
    data = os.urandom(size)
    return data + hashlib.sha256(data).digest()


def write(root, path, data, mode=0o600):
    host = host_path(root, path)
    os.makedirs(os.path.dirname(host), exist_ok=True)
    with open(host, 'wb') as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    os.chmod(host, mode)
    return host


def read(root, path):
    with open(host_path(root, path), 'rb') as f:
        return f.read()


def files(root):
    """{path: bytes} of every file under ``root`` (directories by their names): a whole-tree fingerprint."""
    out = {}
    for d, dirs, names in os.walk(root):
        for n in dirs:
            out[os.path.relpath(os.path.join(d, n), root) + '/'] = None
        for n in names:
            with open(os.path.join(d, n), 'rb') as f:
                out[os.path.relpath(os.path.join(d, n), root)] = f.read()
    return out


@pytest.fixture
def etcd(tmp_path):
    """A node root with a k3s server on embedded etcd: etcd's data, the token, a snapshot k3s took."""
    root = str(tmp_path / 'root')
    write(root, DATA + '/server/db/etcd/member/snap/db', os.urandom(4096))
    write(root, DATA + '/server/db/etcd/name', 'server-1-0a1b2c3d')
    write(root, DATA + '/server/token', TOKEN + '\n')
    write(root, DATA + '/server/db/snapshots/' + SNAP, snapshot_bytes())
    return root


def view_of(root):
    return View(root=root, hostname=HOST)


def hp(root):
    return lambda path: host_path(root, path)


def etcd_archive(root, now=NOW):
    """What k3s_backup writes for the snapshot in the fixture: (facts)."""
    facts = backup.plan(view_of(root), {'host': HOST}, now=now).facts
    facts['snapshot'] = DATA + '/server/db/snapshots/' + SNAP
    return backup.write_archive(facts, hp(root))


COMMAND = {'argv': ['/usr/local/bin/k3s', 'server', '--write-kubeconfig-mode=644'],
           'env': {'K3S_DOUBLE_ETCD_MANAGE_INTERVAL': '2s'}, 'args': ['server', '--write-kubeconfig-mode=644'],
           'product': 'K3S'}


def restore_facts(root, archive, tokens=(), now=NOW + 60, command=None):
    facts = restore.plan(view_of(root), {'archive': archive['archive'], 'service': ''}, now=now).facts
    facts['_command'] = dict(command or COMMAND)
    facts['_tokens'] = list(tokens)
    return facts


class FakeK3s:
    """``k3s server --cluster-reset``: records its call, restores "etcd" under server/db as k3s does, answers as told."""

    def __init__(self, root, rc=0, output=DONE, writes=True):
        self.root, self.rc, self.output, self.writes = root, rc, output, writes
        self.calls = []

    def __call__(self, argv, env, timeout):
        self.calls.append((list(argv), dict(env), timeout))
        if self.writes:
            write(self.root, DATA + '/server/db/etcd/member/snap/db', b'restored by k3s')
            write(self.root, DATA + '/server/db/reset-flag', b'')
        return self.rc, self.output


# -- the snapshot's own check ---------------------------------------------------------------------------------------
def test_etcd_snapshot_check_reads_the_hash_etcd_appends(tmp_path):
    good = tmp_path / 'good'
    good.write_bytes(snapshot_bytes(2048))
    assert backup.etcd_snapshot_check(str(good)) == 'ok'
    damaged = bytearray(good.read_bytes())
    damaged[100] ^= 1
    (tmp_path / 'damaged').write_bytes(bytes(damaged))
    with pytest.raises(backup.BackupError, match='fails etcd\'s integrity check'):
        backup.etcd_snapshot_check(str(tmp_path / 'damaged'))
    (tmp_path / 'short').write_bytes(good.read_bytes()[:-1])
    with pytest.raises(backup.BackupError, match='carries no integrity hash .* this one is 2079 bytes'):
        backup.etcd_snapshot_check(str(tmp_path / 'short'))
    with zipfile.ZipFile(str(tmp_path / 'snap.zip'), 'w') as z:  # k3s's etcd-snapshot-compress
        z.writestr('snap', good.read_bytes())
    assert backup.etcd_snapshot_check(str(tmp_path / 'snap.zip')) == 'ok'


@pytest.mark.parametrize('output, name', [
    ('time="x" level=info msg="Snapshot k3s-backup-s1-s1-1769311200 saved."\n', 'k3s-backup-s1-s1-1769311200'),
    ('Snapshot /var/lib/rancher/k3s/server/db/snapshots/a-b-1 saved.', 'a-b-1'),
    ('no such line', None),
])
def test_saved_snapshot_is_read_from_k3s_line(output, name):
    assert backup.saved_snapshot(output) == name


# -- backup of embedded etcd ----------------------------------------------------------------------------------------
def test_etcd_plan_names_an_archive_and_counts_the_database(etcd):
    plan = backup.plan(view_of(etcd), {'host': HOST}, now=NOW)
    facts = plan.facts
    assert facts['datastore'] == 'etcd' and facts['archive'] == '/var/backups/k3s/k3s-backup-server-1-20260125T032000Z.tar.gz'
    assert facts['snapshot_argv'] == ['/usr/local/bin/k3s', 'etcd-snapshot', 'save', '--name', 'k3s-backup-server-1']
    assert facts['snapshot_dir'] == DATA + '/server/db/snapshots'
    assert facts['contents'] == ['server/db/snapshots/', 'server/token']
    # the database twice on one file system (the snapshot, the archive), the token, the slack
    assert facts['needed_bytes'] == 2 * (4096 + backup.MARGIN) + len(TOKEN) + 1


def test_etcd_archive_holds_the_snapshot_and_the_token_checked(etcd):
    facts = etcd_archive(etcd)
    name = os.path.basename(facts['archive'])
    assert sorted(os.listdir(host_path(etcd, '/var/backups/k3s'))) == [name, name + '.sha256']
    assert facts['sha256'] == hashlib.sha256(read(etcd, facts['archive'])).hexdigest()
    assert facts['contents'] == ['server/db/snapshots/' + SNAP, 'server/token'] and facts['integrity'] == 'ok'
    with tarfile.open(host_path(etcd, facts['archive'])) as tar:
        assert tar.getnames() == ['backup-manifest.json', 'server/db/snapshots/' + SNAP, 'server/token']
        manifest = json.loads(tar.extractfile('backup-manifest.json').read())
        assert tar.extractfile('server/db/snapshots/' + SNAP).read() == read(etcd, DATA + '/server/db/snapshots/' + SNAP)
        assert tar.extractfile('server/token').read() == (TOKEN + '\n').encode()
        assert all(m.mode == 0o600 for m in tar.getmembers())
    assert manifest['datastore'] == 'etcd' and manifest['snapshot'] == 'server/db/snapshots/' + SNAP
    assert manifest['files']['server/db/snapshots/' + SNAP]['sha256'] == \
        hashlib.sha256(read(etcd, DATA + '/server/db/snapshots/' + SNAP)).hexdigest()


def test_a_damaged_snapshot_is_not_archived(etcd):
    path = host_path(etcd, DATA + '/server/db/snapshots/' + SNAP)
    with open(path, 'r+b') as f:
        f.seek(10)
        f.write(b'\xff\xfe')
    with pytest.raises(backup.BackupError, match='fails etcd\'s integrity check'):
        etcd_archive(etcd)
    assert not os.path.exists(host_path(etcd, '/var/backups/k3s'))


# -- the archive's members ------------------------------------------------------------------------------------------
def tar_of(path, members):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tarfile.open(path, 'w:gz') as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize('names, message', [
    (['server/db/snapshots/a', 'server/db/snapshots/b', 'server/token'], 'more than one datastore'),
    (['server/db/state.db', 'server/db/snapshots/a', 'server/token'], 'more than one datastore'),
    (['server/db/snapshots/.hidden', 'server/token'], 'never does'),
    (['server/db/snapshots/a/b', 'server/token'], 'never does'),
    (['server/db/snapshots/a'], 'no server/token'),
    (['server/token'], 'no datastore'),
])
def test_inspect_refuses_what_a_backup_never_holds(tmp_path, names, message):
    path = tar_of(str(tmp_path / 'x.tar.gz'), [(n, b'x') for n in names])
    with tarfile.open(path) as tar, pytest.raises(backup.BackupError, match=message):
        restore.inspect(tar)


def test_inspect_reads_an_etcd_archive(etcd):
    facts = etcd_archive(etcd)
    with tarfile.open(host_path(etcd, facts['archive'])) as tar:
        found, storage, datastore = restore.inspect(tar)
    assert datastore == 'etcd' and not storage and found[restore.SNAPSHOT].name == 'server/db/snapshots/' + SNAP


# -- restore through k3s's cluster reset ----------------------------------------------------------------------------
def test_etcd_restore_places_the_snapshot_and_runs_k3s_cluster_reset(etcd):
    archive = etcd_archive(etcd)
    before_db = files(host_path(etcd, DATA + '/server/db'))
    write(etcd, DATA + '/server/token', 'K10abc0000000000000000000000000000000000000000000000000000000000000::server:rotated\n')
    k3s = FakeK3s(etcd)
    secrets = set()
    out = restore.restore(restore_facts(etcd, archive), hp(etcd), run=k3s, found=secrets)
    snapshot = DATA + '/server/db/snapshots/' + SNAP
    assert len(k3s.calls) == 1
    argv, env, timeout = k3s.calls[0]
    assert argv == COMMAND['argv'] + ['--cluster-reset', '--cluster-reset-restore-path=' + snapshot, '--token=' + TOKEN]
    assert env['K3S_DOUBLE_ETCD_MANAGE_INTERVAL'] == '2s' and env['LC_ALL'] == 'C' and timeout == restore.RESET_TIMEOUT
    assert out['reset_argv'][-1] == '--token=(hidden)' and TOKEN not in json.dumps(out)
    assert TOKEN in secrets  # the module's no_log_values: Ansible masks it wherever it might appear
    assert out['reset_message'].startswith('time=') and restore.RESET_DONE in out['reset_message']
    assert out['datastore'] == 'etcd' and out['node_datastore'] == 'etcd' and out['snapshot'] == snapshot
    assert out['restored'] == [snapshot, DATA + '/server/token']
    # the snapshot where k3s keeps them, 0600 in 0700 directories; the previous server/db kept whole
    assert read(etcd, snapshot) == read(etcd, out['db_aside'] + '/snapshots/' + SNAP)
    assert os.stat(host_path(etcd, snapshot)).st_mode & 0o777 == 0o600
    assert os.stat(host_path(etcd, DATA + '/server/db/snapshots')).st_mode & 0o777 == 0o700
    assert out['db_aside'] == DATA + '/server/db.before-restore-20260125T032100Z'
    assert files(host_path(etcd, out['db_aside'])) == before_db
    assert read(etcd, DATA + '/server/token') == (TOKEN + '\n').encode()
    assert read(etcd, out['token_aside']) == b'K10abc0000000000000000000000000000000000000000000000000000000000000::server:rotated\n'


def test_a_rebuilt_node_without_server_db_is_restored_too(etcd):
    archive = etcd_archive(etcd)
    shutil.rmtree(host_path(etcd, DATA + '/server'))
    k3s = FakeK3s(etcd)
    out = restore.restore(restore_facts(etcd, archive), hp(etcd), run=k3s)
    assert out['node_datastore'] == '' and out['db_aside'] == '' and out['token_aside'] == ''
    assert read(etcd, DATA + '/server/token') == (TOKEN + '\n').encode() and len(k3s.calls) == 1


@pytest.mark.parametrize('rc, output, why', [
    (1, 'level=fatal msg="etcd: snapshot path does not exist"', 'exited 1'),
    (0, 'level=info msg="something else"', 'exited 0 without k3s\'s "Managed etcd cluster membership has been reset" line'),
    (None, 'level=info msg="Starting etcd for new cluster"', 'did not end within 600 s'),
])
def test_a_failed_reset_puts_the_server_back_as_it_was(etcd, rc, output, why):
    archive = etcd_archive(etcd)
    write(etcd, DATA + '/server/token', 'K10abc0000000000000000000000000000000000000000000000000000000000000::server:rotated\n')
    before = files(host_path(etcd, DATA))
    k3s = FakeK3s(etcd, rc=rc, output=output + '\nmsg="--token=%s"' % TOKEN)
    with pytest.raises(backup.BackupError) as e:
        restore.restore(restore_facts(etcd, archive), hp(etcd), run=k3s)
    assert why in e.value.msg and 'The server is back as it was' in e.value.msg, e.value.msg
    assert output in e.value.msg and TOKEN not in e.value.msg and 'Zq7secretX9w' not in e.value.msg
    failed = DATA + '/server/db.failed-restore-20260125T032100Z'
    assert e.value.details == {'db_failed': failed}
    after = files(host_path(etcd, DATA))
    kept = {k: v for k, v in after.items() if not k.startswith('server/db.failed-restore-')}
    assert kept == before  # server/db and the token exactly as they were; nothing else left
    assert read(etcd, failed + '/etcd/member/snap/db') == b'restored by k3s'  # what k3s wrote, kept to look at


def test_a_token_file_with_another_token_is_refused_before_anything_changes(etcd):
    archive = etcd_archive(etcd)
    before = files(etcd)
    k3s = FakeK3s(etcd)
    for tokens, message in (
            ([('its token file /etc/rancher/k3s/cluster-token (token-file)', 'K10%s::server:other\n' % CA_ABC)],
             'takes its token from its token file /etc/rancher/k3s/cluster-token'),
            ([('its token file /etc/rancher/k3s/cluster-token (token-file)', None)], 'which does not exist'),
            ([('its token option (token, -t or K3S_TOKEN)', 'K10%s::server:Zq7secretX9w' % CA_FFF)],
             'not the token of the cluster')):
        with pytest.raises(backup.BackupError, match='Nothing was changed') as e:
            restore.restore(restore_facts(etcd, archive, tokens), hp(etcd), run=k3s)
        assert message in e.value.msg
    assert k3s.calls == [] and files(etcd) == before
    # the same token, bare or in full, is the archive's
    out = restore.restore(restore_facts(etcd, archive, [('x', 'Zq7secretX9w')]), hp(etcd), run=k3s, check_only=True)
    assert out['datastore'] == 'etcd' and k3s.calls == [] and files(etcd) == before


def test_archives_and_servers_of_the_other_datastore_are_refused(etcd, tmp_path):
    archive = etcd_archive(etcd)
    shutil.rmtree(host_path(etcd, DATA + '/server/db/etcd'))
    write(etcd, DATA + '/server/db/state.db', b'SQLite format 3\0')
    before = files(etcd)
    with pytest.raises(backup.BackupError, match='holds a SQLite datastore .* does not turn into an etcd member'):
        restore.restore(restore_facts(etcd, archive), hp(etcd), run=FakeK3s(etcd))
    assert files(etcd) == before
    shutil.rmtree(host_path(etcd, DATA + '/server/db'))
    facts = restore_facts(etcd, archive)
    facts['_command'] = None
    with pytest.raises(backup.BackupError, match='give service'):
        restore.restore(facts, hp(etcd), run=FakeK3s(etcd))


def test_a_sqlite_archive_is_refused_on_an_etcd_server(etcd, tmp_path):
    sqlite_archive = tar_of(host_path(etcd, '/var/backups/s.tar.gz'),
                            [('server/db/state.db', b'x'), ('server/token', b'K10' + CA_ABC.encode() + b'::server:Zq7secretX9w\n')])
    digest = backup.file_sha256(sqlite_archive)
    facts = restore.plan(view_of(etcd), {'archive': '/var/backups/s.tar.gz', 'sha256': digest, 'service': ''}, now=NOW).facts
    before = files(etcd)
    with pytest.raises(backup.BackupError, match='holds embedded etcd and the archive a SQLite datastore'):
        restore.restore(facts, hp(etcd))
    assert files(etcd) == before


# -- the others rejoin -----------------------------------------------------------------------------------------------
def rejoin_facts(root, url='https://server-1:6443', env=None):
    """The plan's facts of a rejoin, for a service that runs ``k3s server [--server=url]`` with ``env``."""
    args = ['server'] + (['--server=' + url] if url else [])
    facts = {'step': 'rejoin', 'db_dir': DATA + '/server/db', 'db_aside': '',
             'node_datastore': restore.node_datastore(view_of(root), DATA + '/server/db')}
    command = {'argv': ['/usr/local/bin/k3s'] + args, 'env': env or {}, 'args': args, 'product': 'K3S'}
    return restore._plan_rejoin(facts, command)  # pylint: disable=protected-access


def test_rejoin_needs_a_server_url_and_an_etcd_member(etcd):
    assert rejoin_facts(etcd)['join_url'] == 'https://server-1:6443'
    assert rejoin_facts(etcd, url='', env={'K3S_URL': 'https://lb:6443'})['join_url'] == 'https://lb:6443'
    with pytest.raises(PlanError, match='no server URL to join through .* a new cluster of its own'):
        rejoin_facts(etcd, url='')
    shutil.rmtree(host_path(etcd, DATA + '/server/db/etcd'))
    write(etcd, DATA + '/server/db/state.db', b'x')
    with pytest.raises(PlanError, match='holds a SQLite datastore'):
        rejoin_facts(etcd)


def test_rejoin_moves_server_db_aside_whole(etcd):
    before = files(host_path(etcd, DATA + '/server/db'))
    facts = dict(rejoin_facts(etcd), _aside={'db': DATA + '/server/db.before-restore-20260125T032000Z'})
    out = restore.rejoin(dict(facts), hp(etcd), check_only=True)
    assert out['db_aside'] == DATA + '/server/db.before-restore-20260125T032000Z'
    assert files(host_path(etcd, DATA + '/server/db')) == before  # check mode moved nothing
    out = restore.rejoin(dict(facts), hp(etcd))
    assert not os.path.exists(host_path(etcd, DATA + '/server/db'))
    assert files(host_path(etcd, out['db_aside'])) == before
    assert read(etcd, DATA + '/server/token') == (TOKEN + '\n').encode()  # the token is not the datastore's
    again = restore.rejoin(dict(facts), hp(etcd))
    assert again['db_aside'] == ''  # nothing left to move


# -- the foreground runner -------------------------------------------------------------------------------------------
def test_run_foreground_returns_the_exit_code_and_the_output(tmp_path):
    rc, out = restore.run_foreground(['/bin/sh', '-c', 'echo out; echo err >&2; echo "$K3S_X"; exit 3'],
                                     {'PATH': '/bin:/usr/bin', 'K3S_X': 'from env'}, 30)
    assert rc == 3 and out.split() == ['out', 'err', 'from', 'env']


def test_run_foreground_ends_what_outlives_its_timeout_children_included(tmp_path):
    pidfile = tmp_path / 'pid'
    start = time.monotonic()
    rc, out = restore.run_foreground(['/bin/sh', '-c', 'echo started; sleep 300 & echo $! > %s; wait' % pidfile],
                                     {'PATH': '/bin:/usr/bin'}, 1)
    assert rc is None and 'started' in out
    assert time.monotonic() - start < 60
    pid = int(pidfile.read_text())
    for dummy in range(50):  # the child of the child is gone too (its whole session was ended)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        with open('/proc/%d/stat' % pid) as f:
            if f.read().split(')')[-1].split()[0] == 'Z':
                break
        time.sleep(0.1)
    else:
        pytest.fail('pid %d outlived the timeout' % pid)
