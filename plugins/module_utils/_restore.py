# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.k3s_restore``: a k3s_backup archive put back as the server's datastore and token.

``plan(view, params, now)`` reads the node through the View only: the archive and its
expected sha256, whether k3s is stopped (``k3s_info``), the data directory, and where the
current ``server/db`` will be kept (``server/db.before-restore-<time>``). It refuses, before
anything is written, a running k3s, a missing archive or checksum, and a place that is taken.

:func:`restore` then checks before it changes anything - the archive's sha256, its members
(only the names a backup writes, regular files), the datastore copy's ``PRAGMA integrity_check``
- and unpacks into a temp directory in ``server/`` (same file system). Only then: the current
``server/db`` is renamed aside (never deleted), the unpacked ``db`` directory (0700, state.db
0600) renamed into its place, and the token replaced atomically (its old bytes kept as
``server/token.before-restore-<time>`` when they differ). A failure between those renames puts
the previous ones back.

Pure standard library; no Ansible import.
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import sqlite3
import tarfile
import tempfile
import time
import zlib

from urllib.parse import quote

from ansible_collections.baremetal.k3s.plugins.module_utils import _backup as backup
from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_info as k3s_info
from ansible_collections.baremetal.k3s.plugins.module_utils._backup import BackupError
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Plan, PlanError

ASIDE_INFIX = '.before-restore-'
STAGE_PREFIX = '.db.restore-'


def plan(view, params, now=None):
    """What a restore of ``params`` (archive, sha256, data_dir, service) does; a Plan with facts only."""
    now = time.time() if now is None else now
    archive = params.get('archive') or ''
    if not os.path.isabs(archive):
        raise PlanError('archive must be the absolute path of a k3s_backup archive on the node, got %r.' % archive)
    if not view.isfile(archive):
        raise PlanError('%s does not exist on this node (or is not a file). Copy it here first (the restore playbook '
                        'does that with k3s_backup_restore_from_controller=true).' % archive)
    expected = (params.get('sha256') or '').strip().lower()
    sum_file = archive + '.sha256'
    if expected:
        if backup.parse_sha256(expected) is None:
            raise PlanError('sha256 must be 64 hex digits, got %r.' % params.get('sha256'))
    else:
        expected = backup.parse_sha256(view.read_text(sum_file, ''))
        if expected is None:
            raise PlanError('no checksum for %s: %s is missing or holds no sha256. Give the sha256 the backup returned '
                            '(sha256), or put its .sha256 file beside the archive.' % (archive, sum_file))

    service = params.get('service')
    info = {}
    if service:
        try:
            info = k3s_info.gather(view, {'platform': 'k3s', 'service': service}).facts
        except ValueError as e:
            raise PlanError('cannot read the k3s service %s: %s' % (service, e))
        if info.get('active'):
            raise PlanError('k3s (service %s) is running; a datastore is never replaced under a running server. Stop it '
                            'first (the restore playbook does: it stops k3s, restores, starts it again).' % service)
    data_dir = params.get('data_dir') or info.get('data_dir') or backup.DEFAULT_DATA_DIR
    if not os.path.isabs(data_dir):
        raise PlanError('data_dir must be an absolute path, got %r.' % data_dir)
    data_dir = os.path.normpath(data_dir)
    if not view.isdir(data_dir):
        raise PlanError('%s does not exist: no k3s data directory there. Give data_dir the --data-dir k3s runs with.'
                        % data_dir)
    server = os.path.join(data_dir, 'server')
    db_dir = os.path.join(server, 'db')
    token = os.path.join(server, 'token')
    stamp = time.strftime(backup.STAMP_FORMAT, time.gmtime(now))
    aside = db_dir + ASIDE_INFIX + stamp
    token_aside = token + ASIDE_INFIX + stamp
    for path in (aside, token_aside):
        if view.lexists(path):
            raise PlanError('%s already exists (a restore within the same second?); nothing was changed. Run again.' % path)
    if view.isdir(os.path.join(db_dir, 'etcd')):
        raise PlanError('%s holds embedded etcd; this restore puts back SQLite (kine) archives only. Restore an etcd '
                        'snapshot with k3s server --cluster-reset --cluster-reset-restore-path=<snapshot>.' % db_dir)
    if view.exists(server) and not view.writable(os.path.join(server, 'x')):
        raise PlanError('%s cannot be written (read-only file system or no permission); run as root (become).' % server)
    facts = {'archive': archive, 'sha256': expected, 'data_dir': data_dir, 'db_dir': db_dir, 'token': token,
             'db_aside': '', 'token_aside': '', 'service': service or '',
             'rows': 0, 'revision': 0, 'restored': [], 'storage_in_archive': False, 'manifest': {}}
    facts['_aside'] = {'db': aside, 'token': token_aside}
    return Plan(facts=facts)


def _member_name(info):
    name = posixpath.normpath(info.name)
    if name.startswith('/') or name == '..' or name.startswith('../'):
        return None
    return name


def inspect(tar):
    """{name: TarInfo} of the archive's datastore, token and manifest; BackupError for anything a backup never holds."""
    found = {}
    storage = False
    for info in tar.getmembers():
        name = _member_name(info)
        if name is None:
            raise BackupError('the archive holds %r, a path outside the data directory; it is not a k3s_backup archive. '
                              'Nothing was changed.' % info.name)
        if name in (backup.DB_MEMBER, backup.TOKEN_MEMBER, backup.MANIFEST):
            if not info.isfile():
                raise BackupError('%s in the archive is not a regular file; nothing was changed.' % name)
            if name in found:
                raise BackupError('%s is in the archive twice; nothing was changed.' % name)
            found[name] = info
        elif name == backup.STORAGE_MEMBER or name.startswith(backup.STORAGE_MEMBER + '/'):
            storage = True
        else:
            raise BackupError('the archive holds %r, which a k3s_backup archive never does; nothing was changed.' % info.name)
    for name in (backup.DB_MEMBER, backup.TOKEN_MEMBER):
        if name not in found:
            raise BackupError('the archive has no %s; it is not a k3s_backup archive of a SQLite server. '
                              'Nothing was changed.' % name)
    return found, storage


def _check_room(facts, server, found):
    """BackupError, before anything is written, when the data directory's file system cannot hold the unpacked files."""
    probe = server
    while not os.path.isdir(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    vfs = os.statvfs(probe)
    free = vfs.f_bavail * vfs.f_frsize
    needed = found[backup.DB_MEMBER].size + found[backup.TOKEN_MEMBER].size + backup.MARGIN
    if free < needed:
        raise BackupError('not enough free space in %s to unpack the datastore: needed %s (%d bytes), free %s (%d bytes). '
                          'Nothing was changed. Free space there (the datastore kept aside by an earlier restore, '
                          'server/db.before-restore-*, can go once its server is proven) and run again.'
                          % (facts['data_dir'], backup.human(needed), needed, backup.human(free), free))


def _extract(tar, info, dest):
    src = tar.extractfile(info)
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, 'wb') as out:
        shutil.copyfileobj(src, out, 1 << 20)
        out.flush()
        os.fsync(out.fileno())
    os.chmod(dest, 0o600)


def check_db(path):
    """{rows, revision} of the SQLite file ``path``, read-only; BackupError when it fails integrity_check."""
    conn = sqlite3.connect('file:%s?mode=ro' % quote(path), uri=True)
    try:
        integrity = [row[0] for row in conn.execute('PRAGMA integrity_check').fetchall()]
        if integrity != ['ok']:
            raise BackupError('the datastore in the archive fails PRAGMA integrity_check (%s); nothing was changed.'
                              % '; '.join(str(i) for i in integrity[:5]))
        rows, revision = conn.execute('SELECT COUNT(*), COALESCE(MAX(id), 0) FROM %s' % backup.KINE_TABLE).fetchone()
    except sqlite3.DatabaseError as e:
        raise BackupError('the datastore in the archive cannot be read as kine\'s (%s); nothing was changed.' % e)
    finally:
        conn.close()
    return {'rows': int(rows), 'revision': int(revision)}


def restore(facts, host_path, check_only=False):
    """Verify the archive, then (unless ``check_only``) put its datastore and token in place; returns the facts."""
    facts = dict(facts)
    asides = facts.pop('_aside')
    archive = host_path(facts['archive'])
    digest = backup.file_sha256(archive)
    if digest != facts['sha256']:
        raise BackupError('sha256 mismatch for %s: expected %s, the file has %s. The archive is damaged or not the one '
                          'the checksum names; nothing was changed.' % (facts['archive'], facts['sha256'], digest))
    server = host_path(os.path.join(facts['data_dir'], 'server'))
    db_dir = host_path(facts['db_dir'])
    token = os.path.realpath(host_path(facts['token']))
    try:
        tar = tarfile.open(archive, 'r:gz')
    except (tarfile.TarError, OSError) as e:
        raise BackupError('%s cannot be read as a tar.gz archive (%s); nothing was changed.' % (facts['archive'], e))
    with tar:
        try:
            found, storage = inspect(tar)
            manifest = {}
            if backup.MANIFEST in found:
                try:
                    manifest = json.loads(tar.extractfile(found[backup.MANIFEST]).read().decode('utf-8'))
                except ValueError as e:
                    raise BackupError('the archive\'s %s is not JSON (%s); nothing was changed.' % (backup.MANIFEST, e))
            facts.update(storage_in_archive=storage, manifest=manifest)
            if check_only:  # check mode writes nothing, not even a temp file: the datastore copy is checked when run
                return facts
            _check_room(facts, server, found)
            if not os.path.isdir(server):
                os.makedirs(server, 0o700)
            stage = tempfile.mkdtemp(prefix=STAGE_PREFIX, suffix='.tmp', dir=server)
        except (tarfile.TarError, EOFError, zlib.error) as e:
            raise BackupError('%s cannot be read (%s); nothing was changed.' % (facts['archive'], e))
        try:
            os.mkdir(os.path.join(stage, 'db'), 0o700)
            staged_db = os.path.join(stage, 'db', 'state.db')
            staged_token = os.path.join(stage, 'token')
            _extract(tar, found[backup.DB_MEMBER], staged_db)
            _extract(tar, found[backup.TOKEN_MEMBER], staged_token)
            for member, path in ((backup.DB_MEMBER, staged_db), (backup.TOKEN_MEMBER, staged_token)):
                want = ((manifest.get('files') or {}).get(member) or {}).get('sha256')
                if want and backup.file_sha256(path) != want:
                    raise BackupError('%s in the archive does not match the sha256 its manifest records; nothing was '
                                      'changed.' % member)
            facts.update(check_db(staged_db))
            _swap(facts, db_dir, os.path.join(stage, 'db'), token, staged_token, host_path, asides)
        except (OSError, tarfile.TarError, EOFError, zlib.error) as e:
            raise BackupError('restoring %s failed: %s. Nothing was changed.' % (facts['archive'], getattr(e, 'strerror', None) or e))
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    return facts


def _swap(facts, db_dir, staged_db_dir, token, staged_token, host_path, asides):
    """The renames: current db aside, staged db in, token replaced; undone in reverse when one fails."""
    undo = []
    try:
        if os.path.lexists(db_dir):
            aside = host_path(asides['db'])
            if os.path.lexists(aside):
                raise BackupError('%s already exists; nothing was changed. Run again.' % asides['db'])
            os.rename(db_dir, aside)
            undo.append(lambda: os.rename(aside, db_dir))
            facts['db_aside'] = asides['db']
        os.rename(staged_db_dir, db_dir)
        undo.append(lambda: shutil.rmtree(db_dir))
        restored = [facts['db_dir'] + '/state.db']
        with open(staged_token, 'rb') as f:
            new_token = f.read()
        old_token = None
        if os.path.exists(token):
            with open(token, 'rb') as f:
                old_token = f.read()
        if old_token != new_token:
            if old_token is not None:
                token_aside = host_path(asides['token'])
                shutil.copy2(token, token_aside)
                os.chmod(token_aside, 0o600)
                undo.append(lambda: os.unlink(token_aside))
                facts['token_aside'] = asides['token']
            fd, moved = tempfile.mkstemp(prefix='.token.', suffix=backup.TEMP_SUFFIX, dir=os.path.dirname(token))
            try:
                with os.fdopen(fd, 'wb') as f:
                    f.write(new_token)
                    f.flush()
                    os.fsync(f.fileno())
                os.chmod(moved, 0o600)
                os.rename(moved, token)
            finally:
                if os.path.lexists(moved):
                    os.unlink(moved)
            restored.append(facts['token'])
        facts['restored'] = restored
    except BaseException:
        facts['db_aside'] = facts['token_aside'] = ''
        for step in reversed(undo):
            try:
                step()
            except OSError:
                pass
        raise
    for path in (db_dir, os.path.dirname(db_dir)):
        backup.fsync_dir(path)
