# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.k3s_backup``: a k3s server's datastore and token as one archive.

``plan(view, params, now)`` reads the node through the View only (sizes, free space, the
backup directory's listing) and returns a Plan without file changes: its facts say what the
archive will be called, what goes into it, how much room it needs and which older archives
retention removes. Bad input, a missing datastore or token, and too little free space raise
PlanError: nothing has been written then.

The archive itself does not fit ``Plan``/``Change`` (whole file contents in memory; a datastore
is MBs to GBs), so :func:`write_archive` streams it through ``_io.stream_file``: under the lock
of the backup directory, into a temp directory inside it (``.k3s-backup-*.tmp``,
``_io.temp_dir``), the archive and its ``.sha256`` fsynced and renamed into place, mode 0600 in
a 0700 directory; any failure (ENOSPC...) removes the temp directory and puts back whatever was
renamed already (``_io.Written``), so no half-written archive is ever left. Retention runs only
after both files are in place, and removes only this host's archives (:data:`ARCHIVE_RE`) and
their ``.sha256`` files.

The datastore is copied with SQLite's online backup API (``sqlite3.Connection.backup``) in one
step: SQLite holds a read transaction on the source for the whole copy, so the copy is the
datastore as it was at one instant, WAL included, while kine goes on writing. Copying
``state.db`` as a file while k3s runs is not a backup (the latest writes are in ``-wal``).

With embedded etcd (``server/db/etcd``) the datastore is not read here: k3s takes the snapshot
(:func:`etcd_snapshot_argv`, ``k3s etcd-snapshot save``, which writes it into
``server/db/snapshots``), and :func:`write_archive` puts that file and the token into the
archive the same way, checked by etcd's own integrity hash (:func:`etcd_snapshot_check`: the
sha256 etcd appends to every snapshot) instead of ``PRAGMA integrity_check``.

Pure standard library; no Ansible import.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import re
import sqlite3
import stat
import tarfile
import time
import zipfile

from urllib.parse import quote

from ansible_collections.baremetal.k3s.plugins.module_utils import _io, _names
from ansible_collections.baremetal.k3s.plugins.module_utils._checksums import file_sha256
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Plan, PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import file_kind

FORMAT = 1
ARCHIVE_PREFIX = 'k3s-backup-'
ARCHIVE_SUFFIX = '.tar.gz'
STAMP_FORMAT = '%Y%m%dT%H%M%SZ'
ARCHIVE_RE = re.compile(r'k3s-backup-(?P<host>[A-Za-z0-9._-]+)-(?P<stamp>\d{8}T\d{6}Z)\.tar\.gz')  # fullmatch
TEMP_PREFIX = '.k3s-backup-'
TEMP_SUFFIX = '.tmp'
MANIFEST = 'backup-manifest.json'
DB_MEMBER = 'server/db/state.db'
TOKEN_MEMBER = 'server/token'
STORAGE_MEMBER = 'storage'
# an etcd snapshot goes in as k3s keeps it: server/db/snapshots/<name>
SNAPSHOT_MEMBER_DIR = 'server/db/snapshots'
SNAPSHOT_NAME_RE = re.compile(r'[A-Za-z0-9_][A-Za-z0-9._-]*')  # fullmatch
# k3s's line once etcd-snapshot save has written the file (logrus: msg="Snapshot <name> saved.")
SNAPSHOT_SAVED_RE = re.compile(r'Snapshot (\S+) saved\.')
HASH_SIZE = 32  # etcd appends the sha256 of a snapshot to it
KINE_TABLE = 'kine'
# room kept above the estimate: tar headers, the manifest, file system slack
MARGIN = 1 << 20
INODES = 5  # a backup's files: the temp directory, the datastore copy, the archive, its checksum, backup_dir itself
DEFAULT_DATA_DIR = '/var/lib/rancher/k3s'
DEFAULT_BACKUP_DIR = '/var/backups/k3s'


class BackupError(Exception):
    """Writing the archive failed; nothing was left behind. ``msg`` says what happened and what to do."""

    def __init__(self, msg, **details):
        super().__init__(msg)
        self.msg = msg
        self.details = details


# -- names ---------------------------------------------------------------------------------------
def safe_host(host):
    """``host`` as it goes into an archive name: letters, digits, ``.``, ``_`` and ``-``; others become ``_``."""
    text = ''.join(c if (c.isalnum() and c.isascii()) or c in '._-' else '_' for c in (host or '').strip())
    return text or 'node'


def archive_name(host, when):
    """``k3s-backup-<host>-<YYYYmmddTHHMMSSZ>.tar.gz`` for ``when`` (seconds since the epoch, UTC)."""
    return '%s%s-%s%s' % (ARCHIVE_PREFIX, safe_host(host), time.strftime(STAMP_FORMAT, time.gmtime(when)), ARCHIVE_SUFFIX)


def own_archives(names, host):
    """The names in ``names`` that are this host's archives, oldest first."""
    mine = []
    for name in names:
        m = ARCHIVE_RE.fullmatch(name)
        if m and m.group('host') == safe_host(host):
            mine.append((m.group('stamp'), name))
    return [name for dummy, name in sorted(mine)]


def retention(existing, new_name, keep):
    """The archives to remove so that ``keep`` remain once ``new_name`` is written (``existing`` oldest first)."""
    others = [n for n in existing if n != new_name]
    excess = len(others) + 1 - keep
    return others[:excess] if excess > 0 else []


def sha256_line(digest, name):
    """The ``.sha256`` file's text, as ``sha256sum`` writes it (``sha256sum -c`` reads it)."""
    return '%s  %s\n' % (digest, name)


def parse_sha256(text):
    """The digest in a ``.sha256`` file's text, None when it holds none."""
    words = (text or '').split()
    if words and re.fullmatch(r'[0-9a-fA-F]{64}', words[0]):
        return words[0].lower()
    return None


def snapshot_member(name):
    """The archive member of the etcd snapshot file ``name``; ValueError for a name k3s never writes."""
    if not SNAPSHOT_NAME_RE.fullmatch(name or ''):
        raise ValueError('%r is not the name of an etcd snapshot file' % (name,))
    return '%s/%s' % (SNAPSHOT_MEMBER_DIR, name)


def saved_snapshot(output):
    """The snapshot name in k3s's ``Snapshot <name> saved.`` line (the last one), None without it."""
    names = SNAPSHOT_SAVED_RE.findall(output or '')
    return os.path.basename(names[-1]) if names else None


def _hash_check(stream, size, what):
    """Read ``size`` bytes of ``stream``: the last 32 must be the sha256 of the rest (etcd's snapshot hash)."""
    if size % 512 != HASH_SIZE:
        raise BackupError('%s carries no integrity hash (etcd appends a sha256 to every snapshot it saves: its size '
                          'is then 32 more than a multiple of 512, this one is %d bytes). It is not an etcd snapshot, '
                          'or was cut short; take another with k3s etcd-snapshot save.' % (what, size))
    digest = hashlib.sha256()
    left = size - HASH_SIZE
    while left > 0:
        data = stream.read(min(left, 1 << 20))
        if not data:
            raise BackupError('%s ended before its %d bytes; take another snapshot.' % (what, size))
        digest.update(data)
        left -= len(data)
    if stream.read(HASH_SIZE) != digest.digest():
        raise BackupError('%s fails etcd\'s integrity check: the sha256 appended to it does not match its content. '
                          'The snapshot is damaged; take another with k3s etcd-snapshot save.' % what)


def etcd_snapshot_check(path, what=None):
    """Check an etcd snapshot file as etcd's restore does (its appended sha256); 'ok', or BackupError.

    A ``.zip`` file (k3s's ``etcd-snapshot-compress``) must hold one snapshot, checked the same way.
    """
    what = what or path
    try:
        if path.endswith('.zip'):
            with zipfile.ZipFile(path) as z:
                infos = z.infolist()
                if len(infos) != 1:
                    raise BackupError('%s holds %d files; a compressed k3s snapshot holds one.' % (what, len(infos)))
                with z.open(infos[0]) as f:
                    _hash_check(f, infos[0].file_size, what)
        else:
            with open(path, 'rb') as f:
                _hash_check(f, os.fstat(f.fileno()).st_size, what)
    except (OSError, zipfile.BadZipFile) as e:
        raise BackupError('%s cannot be read as an etcd snapshot: %s' % (what, getattr(e, 'strerror', None) or e))
    return 'ok'


def etcd_snapshot_argv(k3s_binary, data_dir, name, snapshot_dir=None):
    """``k3s etcd-snapshot save`` for a server with embedded etcd: k3s names the file ``<name>-<node>-<unix time>``."""
    argv = [k3s_binary, 'etcd-snapshot', 'save', '--name', name]
    if data_dir and data_dir != DEFAULT_DATA_DIR:
        argv += ['--data-dir', data_dir]
    if snapshot_dir:
        argv += ['--dir', snapshot_dir]
    return argv


# -- reading through the view --------------------------------------------------------------------
def tree_size(view, path, limit=1000000):
    """(bytes, files) of the regular files under ``path`` (symlinks not followed), read through the view."""
    total, count = 0, 0
    todo = [path]
    while todo:
        current = todo.pop()
        for name in view.listdir(current) or []:
            child = os.path.join(current, name)
            if view.islink(child):
                continue
            if view.isdir(child):
                todo.append(child)
            elif view.isfile(child):
                total += view.stat(child).st_size
                count += 1
                if count > limit:
                    raise PlanError('%s holds more than %d files; leave include_storage off and back it up by other means.'
                                    % (path, limit))
    return total, count


def _nearest_dir(view, path):
    probe = path
    while not view.isdir(probe):
        if probe == '/':
            return '/'
        probe = os.path.dirname(probe)
    return probe


def _same_fs(view, a, b):
    """Whether the existing directories ``a`` and ``b`` are on one file system (their st_dev)."""
    sa, sb = view.stat(a), view.stat(b)
    return sa is None or sb is None or sa.st_dev == sb.st_dev


def _inside(path, parent):
    return path == parent or path.startswith(parent.rstrip('/') + '/')


def human(size):
    for unit in ('B', 'KiB', 'MiB', 'GiB'):
        if size < 1024 or unit == 'GiB':
            return ('%d %s' % (size, unit)) if unit == 'B' else ('%.1f %s' % (size, unit))
        size /= 1024.0
    return '%d B' % size  # pragma: no cover


def _params(view, params):
    """(data_dir, backup_dir, keep, host) of ``params``, checked; PlanError for bad input."""
    data_dir = params.get('data_dir') or DEFAULT_DATA_DIR
    backup_dir = params.get('backup_dir') or DEFAULT_BACKUP_DIR
    keep = params.get('keep')
    keep = 7 if keep is None else keep
    host = params.get('host') or view.hostname()
    if params.get('host') and _names.control_character(params['host']):
        raise PlanError('host %r holds the control character %s: it names the archive (k3s-backup-<host>-<time>.tar.gz). '
                        'Give a host name of letters, digits, ".", "_" and "-" (others become "_").'
                        % (params['host'], _names.control_character(params['host'])))
    for name, value in (('data_dir', data_dir), ('backup_dir', backup_dir)):
        if not os.path.isabs(value):
            raise PlanError('%s must be an absolute path, got %r.' % (name, value))
    if keep < 1:
        raise PlanError('keep must be 1 or more (the archive this run writes counts), got %d.' % keep)
    return os.path.normpath(data_dir), os.path.normpath(backup_dir), keep, host


def _check_places(view, data_dir, backup_dir):
    """PlanError for a data directory that is not there, or a backup directory that cannot take archives."""
    if not view.isdir(data_dir):
        raise PlanError('%s does not exist: no k3s data directory there. Give data_dir the --data-dir k3s runs with '
                        '(k3s_info returns it as data_dir).' % data_dir)
    real_data, real_backup = view.realpath(data_dir), view.realpath(backup_dir)
    if _inside(real_backup, real_data):
        raise PlanError('backup_dir %s is inside the k3s data directory %s; a restore moves parts of it aside and a '
                        'lost disk takes both. Choose a directory outside it (default %s).'
                        % (backup_dir, data_dir, DEFAULT_BACKUP_DIR))
    if view.exists(backup_dir) and not view.isdir(backup_dir):
        raise PlanError('backup_dir %s exists and is not a directory; choose another path.' % backup_dir)
    probe = backup_dir
    while probe != '/':
        # a symbolic link to nothing on the way: making backup_dir would create its target (an unmounted disk's place)
        if view.islink(probe) and not view.exists(probe):
            raise PlanError('backup_dir: %s is a symbolic link to %s, which does not exist; no archive is written through '
                            'it. Create the target (mount its disk), or remove the link; nothing was changed.'
                            % (probe, os.readlink(view.host_path(probe))))
        probe = os.path.dirname(probe)


def _datastore(view, data_dir):
    """(``etcd`` or ``sqlite``, server/db, state.db, token) of the server; PlanError without a datastore or token."""
    db_dir = os.path.join(data_dir, 'server', 'db')
    state_db = os.path.join(db_dir, 'state.db')
    token = os.path.join(data_dir, 'server', 'token')
    if view.isdir(os.path.join(db_dir, 'etcd')):
        datastore = 'etcd'
    elif view.isfile(state_db):
        datastore = 'sqlite'
    else:
        raise PlanError('no datastore in %s: neither %s (SQLite) nor %s/etcd (embedded etcd). A server on an external '
                        'datastore (datastore-endpoint) keeps its state in that database: back it up there. An agent '
                        'has no datastore.' % (db_dir, state_db, db_dir), data_dir=data_dir)
    if view.lexists(token) and not view.isfile(token):
        st = view.stat(token)
        raise PlanError('%s is %s, not a regular file: it is not the token k3s wrote there, and it is not read. Remove '
                        'it, or give the data directory of a k3s server; nothing was changed.'
                        % (token, file_kind(st.st_mode) if st else 'a symbolic link to nothing'), data_dir=data_dir)
    if not view.isfile(token):
        raise PlanError('%s is missing: without the token a restored datastore cannot be decrypted (its bootstrap data '
                        'is encrypted with it). Is %s the data directory of a k3s server?' % (token, data_dir))
    return datastore, db_dir, state_db, token


def _etcd_needs(view, params, facts, db_dir, backup_dir):
    """(contents, bytes needed in backup_dir, what they are) of an etcd snapshot; the snapshot's facts set.

    k3s writes the snapshot (about as big as etcd's database) into its snapshot directory; the archive then reads it
    from there: no temp copy in backup_dir. PlanError when the snapshot directory's own file system cannot hold it.
    """
    snapshot_dir = os.path.normpath(params.get('snapshot_dir') or os.path.join(db_dir, 'snapshots'))
    if not os.path.isabs(snapshot_dir):
        raise PlanError('snapshot_dir must be an absolute path, got %r.' % params.get('snapshot_dir'))
    etcd_db = os.path.join(db_dir, 'etcd', 'member', 'snap', 'db')
    db_size = view.stat(etcd_db).st_size if view.isfile(etcd_db) else 0
    name = 'k3s-backup-%s' % safe_host(facts['host'])
    facts.update(snapshot_name=name, snapshot_dir=snapshot_dir, snapshot='',
                 snapshot_argv=etcd_snapshot_argv(params.get('k3s_binary') or '/usr/local/bin/k3s', facts['data_dir'],
                                                  name))
    needed = db_size + view.stat(facts['token']).st_size + MARGIN
    snap_fs = _nearest_dir(view, snapshot_dir)
    snap_vfs = view.statvfs(snap_fs)
    same_fs = _same_fs(view, snap_fs, _nearest_dir(view, backup_dir))
    snap_needed = db_size + MARGIN
    if same_fs:
        needed += snap_needed
    elif snap_vfs is not None and snap_vfs.f_bavail * snap_vfs.f_frsize < snap_needed:
        free = snap_vfs.f_bavail * snap_vfs.f_frsize
        raise PlanError('not enough free space for the etcd snapshot in %s (file system of %s): needed %s (%d bytes: '
                        'etcd\'s database %s and 1 MiB of slack), free %s (%d bytes). Nothing was written. Free space '
                        'there (k3s etcd-snapshot delete removes older snapshots).'
                        % (snapshot_dir, snap_fs, human(snap_needed), snap_needed, human(db_size), human(free), free),
                        needed_bytes=snap_needed, free_bytes=free)
    what = (('the etcd snapshot %s twice - the snapshot, then the archive - ' if same_fs
             else 'the etcd snapshot %s in the archive, ') % human(db_size))
    return [SNAPSHOT_MEMBER_DIR + '/', TOKEN_MEMBER], needed, what


def _sqlite_needs(view, params, facts):
    """(contents, bytes needed in backup_dir, what they are, storage bytes) of a SQLite datastore (and storage)."""
    state_db, storage = facts['state_db'], facts['storage']
    db_size = sum((view.stat(p).st_size if view.isfile(p) else 0) for p in (state_db, state_db + '-wal'))
    contents = [DB_MEMBER, TOKEN_MEMBER]
    storage_size = 0
    if params.get('include_storage') and view.isdir(storage):
        storage_size, facts['storage_files'] = tree_size(view, storage)
        contents.append(STORAGE_MEMBER + '/')
    # the copy of the datastore (temp) and the archive (compressed, at most about as big as what goes in)
    needed = 2 * db_size + view.stat(facts['token']).st_size + storage_size + MARGIN
    return contents, needed, 'the datastore copy %s twice - the copy, then the archive - ' % human(db_size), storage_size


def _stale(view, backup_dir):
    """(paths, bytes, files) of the temp directories killed backups left in backup_dir: removed before this one
    writes, so they count as free."""
    stale = [os.path.join(backup_dir, n) for n in _io.temp_names(view.listdir(backup_dir) or [], TEMP_PREFIX)]
    stale_bytes, stale_files = 0, 0
    for path in stale:
        if view.isdir(path) and not view.islink(path):
            size, files = tree_size(view, path)
            stale_bytes, stale_files = stale_bytes + size, stale_files + files + 1
    return stale, stale_bytes, stale_files


def _check_room(view, backup_dir, needed, what, storage_size):
    """PlanError when backup_dir's file system has too few free inodes or bytes; (needed, free) facts otherwise."""
    where = _nearest_dir(view, backup_dir)
    vfs = view.statvfs(where)
    stale, stale_bytes, stale_files = _stale(view, backup_dir)
    free = vfs.f_bavail * vfs.f_frsize if vfs is not None else 0
    reclaimed = (' (%s of it in temp files of an earlier, killed backup, removed first: %s)'
                 % (human(stale_bytes), ', '.join(stale))) if stale_bytes else ''
    if vfs is not None and vfs.f_files and vfs.f_favail + stale_files < INODES:
        raise PlanError('no free inodes for the backup in %s (file system of %s): it has %d of %d inodes left and a backup '
                        'makes %d files (the temp directory, the datastore copy, the archive, its checksum)%s; the disk '
                        'may have free bytes, but no file can be created. Nothing was written. Remove files there (df -i '
                        'shows the inodes), or give backup_dir another file system.'
                        % (backup_dir, where, vfs.f_favail, vfs.f_files, INODES,
                           (', counting the %d of temp files of an earlier, killed backup, removed first: %s'
                            % (stale_files, ', '.join(stale))) if stale_files else ''),
                        needed_bytes=needed, free_bytes=free)
    if vfs is not None and free + stale_bytes < needed:
        raise PlanError('not enough free space for the backup in %s (file system of %s): needed %s (%d bytes: %s%sthe '
                        'token and 1 MiB of slack), free %s (%d bytes)%s. Nothing was written. Free space there (older '
                        'archives count: retention removes them only after a new one is written), or give backup_dir '
                        'a larger file system.'
                        % (backup_dir, where, human(needed), needed, what,
                           ('the storage %s, ' % human(storage_size)) if storage_size else '', human(free + stale_bytes),
                           free + stale_bytes, reclaimed),
                        needed_bytes=needed, free_bytes=free)
    return {'needed_bytes': needed, 'free_bytes': free, 'stale_temps': stale}


def _archive_facts(view, facts, now):
    """The archive's name and the older ones retention removes; (facts, warnings). PlanError when the name is taken."""
    backup_dir, host = facts['backup_dir'], facts['host']
    if not view.writable(os.path.join(backup_dir, 'x')):
        raise PlanError('%s cannot be written (read-only file system or no permission); run as root (become) or '
                        'choose another backup_dir.' % backup_dir)
    warnings = []
    mode = view.mode(backup_dir)
    if mode is not None and mode & 0o077:
        warnings.append('%s is mode %04o: other users can list (or read) the archives, which hold the cluster\'s secrets '
                        'and token. chmod 0700 it.' % (backup_dir, mode))
    name = archive_name(host, now)
    existing = own_archives(view.listdir(backup_dir) or [], host)
    if name in existing:
        raise PlanError('%s already exists in %s (a backup within the same second); run again.' % (name, backup_dir))
    removed = retention(existing, name, facts['keep'])
    facts.update(archive=os.path.join(backup_dir, name), sha256_file=os.path.join(backup_dir, name + '.sha256'),
                 removed=[os.path.join(backup_dir, n) for n in removed],
                 created=time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now)))
    return facts, warnings


def plan(view, params, now=None):
    """What a backup of ``params`` writes and removes; a Plan with facts only. PlanError on a refusal."""
    now = time.time() if now is None else now
    data_dir, backup_dir, keep, host = _params(view, params)
    _check_places(view, data_dir, backup_dir)
    datastore, db_dir, state_db, token = _datastore(view, data_dir)
    facts = {'data_dir': data_dir, 'backup_dir': backup_dir, 'datastore': datastore, 'host': host, 'keep': keep,
             'removed': [], 'contents': [], 'rows': 0, 'revision': 0, 'integrity': '', 'size': 0, 'sha256': '',
             'archive': '', 'sha256_file': '', 'needed_bytes': 0, 'free_bytes': 0, 'snapshot_argv': [],
             'storage_files': 0, 'state_db': state_db, 'token': token, 'storage': os.path.join(data_dir, 'storage')}
    storage_size = 0
    if datastore == 'etcd':
        contents, needed, what = _etcd_needs(view, params, facts, db_dir, backup_dir)
    else:
        contents, needed, what, storage_size = _sqlite_needs(view, params, facts)
    facts.update(needed_bytes=needed)
    facts.update(_check_room(view, backup_dir, needed, what, storage_size))
    facts, warnings = _archive_facts(view, facts, now)
    facts.update(contents=contents, storage=facts['storage'] if STORAGE_MEMBER + '/' in contents else '')
    return Plan(facts=facts, warnings=warnings)


# -- writing --------------------------------------------------------------------------------------
def sqlite_copy(source, dest):
    """Copy SQLite database ``source`` to the new file ``dest`` with the online backup API; check the copy.

    One backup step (``pages=-1``): the source is read under one read transaction, so the copy is
    one instant of it, its WAL included, whatever kine writes meanwhile. The copy is switched to
    ``journal_mode=DELETE`` (one self-contained file), then checked: ``PRAGMA integrity_check``
    must answer ``ok`` and kine's table must be readable. Returns {rows, revision, integrity}.
    The source is opened read-only; SQLite may create its ``-wal``/``-shm`` when they are missing.
    """
    src = sqlite3.connect('file:%s?mode=ro' % quote(source), uri=True, timeout=60)
    try:
        dst = sqlite3.connect(dest)
        try:
            src.backup(dst)
            dst.execute('PRAGMA journal_mode=DELETE').fetchall()
            integrity = [row[0] for row in dst.execute('PRAGMA integrity_check').fetchall()]
            if integrity != ['ok']:
                raise BackupError('the copy of %s fails PRAGMA integrity_check: %s. The datastore itself may be damaged; '
                                  'check it with sqlite3 %s "PRAGMA integrity_check".'
                                  % (source, '; '.join(str(i) for i in integrity[:5]), source))
            try:
                rows, revision = dst.execute('SELECT COUNT(*), COALESCE(MAX(id), 0) FROM %s' % KINE_TABLE).fetchone()
            except sqlite3.DatabaseError as e:
                raise BackupError('the copy of %s has no readable %s table (%s): is it kine\'s datastore?'
                                  % (source, KINE_TABLE, e))
        finally:
            dst.close()
    finally:
        src.close()
    return {'rows': int(rows), 'revision': int(revision), 'integrity': 'ok'}


def _add_file(tar, host_file, arcname, data=None):
    """Add a regular file (or ``data`` bytes) as ``arcname``, mode 0600, owned by root."""
    info = tarfile.TarInfo(arcname)
    info.mode = 0o600
    info.uid = info.gid = 0
    info.uname = info.gname = 'root'
    if data is None:
        st = os.stat(host_file)
        info.size, info.mtime = st.st_size, int(st.st_mtime)
        with open(host_file, 'rb') as f:
            tar.addfile(info, f)
    else:
        info.size, info.mtime = len(data), int(time.time())
        tar.addfile(info, io.BytesIO(data))


def _storage_filter(info):
    """Storage members as they are, but owned by number (names may not exist on the restoring node)."""
    if not (info.isfile() or info.isdir() or info.issym()):
        return None  # sockets, fifos, devices: not data
    info.uname = info.gname = ''
    return info


def _out_of_inodes(path):
    """Whether the file system of ``path`` (host path) has no inode left for an unprivileged file (statvfs)."""
    while not os.path.isdir(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)  # a backup_dir this run made is gone again by now
    try:
        vfs = os.statvfs(path)
    except OSError:
        return False
    return bool(vfs.f_files) and vfs.f_favail == 0


def _copy_datastore(facts, host_path, tmp):
    """(the file that goes into the archive, its member name, {rows, revision, integrity}) of the datastore."""
    if facts['datastore'] == 'etcd':
        # the snapshot k3s wrote, checked by the hash etcd appended to it, read from where k3s keeps it
        copy = host_path(facts['snapshot'])
        member = snapshot_member(os.path.basename(facts['snapshot']))
        return copy, member, {'rows': 0, 'revision': 0, 'integrity': etcd_snapshot_check(copy, facts['snapshot'])}
    copy = os.path.join(tmp, 'state.db')
    stats = sqlite_copy(host_path(facts['state_db']), copy)
    os.chmod(copy, 0o600)
    return copy, DB_MEMBER, stats


def _manifest(facts, copy, member, token, stats):
    manifest = {
        'format': FORMAT, 'host': facts['host'], 'created': facts['created'], 'data_dir': facts['data_dir'],
        'datastore': facts['datastore'], 'rows': stats['rows'], 'revision': stats['revision'],
        'integrity': stats['integrity'],
        'files': {member: {'size': os.path.getsize(copy), 'sha256': file_sha256(copy)},
                  TOKEN_MEMBER: {'size': os.path.getsize(token), 'sha256': file_sha256(token)}},
        'storage': bool(facts.get('storage')),
    }
    if facts['datastore'] == 'etcd':
        manifest['snapshot'] = member
    return (json.dumps(manifest, indent=2, sort_keys=True) + '\n').encode()


def _write_files(facts, host_path, backup_dir, written, opener):
    """Write the archive and its ``.sha256`` into place (by _io's rules); (stats, member, size, sha256)."""
    name = os.path.basename(facts['archive'])
    final = os.path.join(backup_dir, name)
    with _io.temp_dir(backup_dir, TEMP_PREFIX) as tmp:
        copy, member, stats = _copy_datastore(facts, host_path, tmp)
        token = host_path(facts['token'])
        manifest = _manifest(facts, copy, member, token, stats)
        for path in (final, final + '.sha256'):
            if os.path.lexists(path):
                raise BackupError('%s appeared while the backup was written; nothing was replaced. Run again.' % path)
        with _io.stream_file(final, 0o600, written, workdir=tmp, opener=opener) as raw:
            with tarfile.open(fileobj=raw, mode='w:gz') as tar:
                _add_file(tar, None, MANIFEST, manifest)
                _add_file(tar, copy, member)
                _add_file(tar, token, TOKEN_MEMBER)
                if facts.get('storage'):
                    tar.add(host_path(facts['storage']), arcname=STORAGE_MEMBER, recursive=True, filter=_storage_filter)
        digest = file_sha256(final)
        with _io.stream_file(final + '.sha256', 0o600, written, workdir=tmp, opener=opener) as f:
            f.write(sha256_line(digest, name).encode())
    return stats, member, os.path.getsize(final), digest


def _failed(e, facts, backup_dir):
    """The BackupError that says why writing failed (a full disk, no inode left), nothing being left behind."""
    reason = getattr(e, 'strerror', None) or getattr(e, 'msg', None) or str(e)
    full = getattr(e, 'errno', None) == errno.ENOSPC or 'disk is full' in str(e)
    # SQLite says "unable to open database file" when it cannot create one: with no inode left, say so
    inodes = (full or isinstance(e, sqlite3.Error)) and _out_of_inodes(backup_dir)
    return BackupError('the backup into %s failed: %s.%s Nothing was left behind (the temp files were removed).'
                       % (facts['backup_dir'], reason,
                          ' The file system has no free inode left (df -i): no file can be created there, '
                          'whatever the free bytes; remove files there or choose another backup_dir.' if inodes else
                          ' The file system is full: free space there or choose another backup_dir.' if full else ''))


def _retention(facts, host_path):
    """Remove the older archives (and their .sha256) plan chose; (removed, warnings)."""
    removed, warnings = [], []
    for path in facts['removed']:
        for victim in (path, path + '.sha256'):
            real = host_path(victim)
            # only this host's archives (plan checked the name) and regular files
            try:
                if ARCHIVE_RE.fullmatch(os.path.basename(path)) and os.path.lexists(real) and \
                        stat.S_ISREG(os.lstat(real).st_mode):
                    _io.remove_tree(real)
                    removed.append(victim)
            except OSError as e:
                warnings.append('retention could not remove %s: %s; the new archive is written, remove it by hand.'
                                % (victim, e.strerror or e))
    return removed, warnings


def write_archive(facts, host_path, opener=open):
    """Write the archive ``facts`` (from :func:`plan`) describe; returns facts updated with what was written.

    ``host_path(node_path)`` maps node paths (``_io`` ROOT). The archive and its checksum are streamed into a temp
    directory in the backup directory, then renamed (``_io.stream_file``); on any failure the temp directory, an
    archive already renamed and a backup directory this run made are removed before BackupError is raised.
    ``opener`` opens the archive's temp file for writing (tests hand in one that runs out of space).
    """
    facts = dict(facts)
    backup_dir = host_path(facts['backup_dir'])
    written = _io.Written()
    _io.make_dir(backup_dir, 0o700, written)
    for stale in _io.stale_temps(backup_dir, TEMP_PREFIX):
        try:
            _io.remove_tree(stale, guard=backup_dir)
        except OSError:
            pass  # the room check counted it as free; the write will say what is missing
    try:
        stats, member, size, digest = _write_files(facts, host_path, backup_dir, written, opener)
    except BaseException as e:
        written.put_back()
        if isinstance(e, (OSError, sqlite3.Error, tarfile.TarError, ValueError, _io.ApplyError)):
            raise _failed(e, facts, backup_dir)
        raise
    removed, facts['warnings'] = _retention(facts, host_path)
    facts.update(stats)
    contents = [member if c == SNAPSHOT_MEMBER_DIR + '/' else c for c in facts['contents']]
    facts.update(size=size, sha256=digest, removed=removed, contents=contents)
    return facts
