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
(only the names a backup writes, regular files), the sha256 its manifest records for each file,
the datastore copy's ``PRAGMA integrity_check`` or the etcd snapshot's own hash - and unpacks
into a temp directory in ``server/`` (same file system). Only then: the current ``server/db`` is
renamed aside (never deleted), the unpacked ``db`` directory (0700, its files 0600) renamed into
its place, and the token replaced atomically (its old bytes kept as
``server/token.before-restore-<time>`` when they differ). A failure between those renames puts
the previous ones back. Every write goes through ``_io`` (``temp_dir``, ``stream_file``,
``replace_dir``, ``rename_dir``, ``write_bytes``), under the locks of ``server/db`` and
``server/token`` the module holds.

An archive of embedded etcd holds ``server/db/snapshots/<file>`` instead of ``state.db``; it
lands there, and k3s itself restores it, as k3s documents it: ``k3s server --cluster-reset
--cluster-reset-restore-path=<snapshot> --token=<the archive's token>``, run in the foreground
with the service's own command line and environment (its config files k3s reads itself), must
exit 0 with k3s's ``Managed etcd cluster membership has been reset`` line. When it does not,
everything is put back: the new ``server/db`` is kept as ``server/db.failed-restore-<time>``, the
previous one and the token return. Before anything is written, the token the server is
configured with (``token-file``, ``token``, ``K3S_TOKEN``) must be the archive's: k3s reads a
token file over ``--token`` and decrypts the restored bootstrap data with it.

``step: rejoin`` is the other servers' part (k3s: "Backup and delete ${datadir}/server/db on each
peer etcd server and rejoin the nodes"): with k3s stopped and a server URL to join through, their
``server/db`` is renamed aside (kept, never deleted), so that the next start joins the restored
cluster as a new member.

Pure standard library; no Ansible import.
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import sqlite3
import tarfile
import time
import zlib

from urllib.parse import quote

from ansible_collections.baremetal.k3s.plugins.module_utils import _backup as backup
from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config as k3s_config
from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_info as k3s_info
from ansible_collections.baremetal.k3s.plugins.module_utils import _platform
from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets as secrets
from ansible_collections.baremetal.k3s.plugins.module_utils import _service as services
from ansible_collections.baremetal.k3s.plugins.module_utils import _token_file as token_file
from ansible_collections.baremetal.k3s.plugins.module_utils._backup import BackupError
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Plan, PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import file_kind, open_regular
from ansible_collections.baremetal.k3s.plugins.module_utils._view import run_foreground  # k3s's cluster reset runs there

ASIDE_INFIX = '.before-restore-'
NEW_DB_RECORD = 'new-db'  # in a stage directory: device and inode of the staged server/db (see clean_stale)
FAILED_INFIX = '.failed-restore-'
STAGE_PREFIX = '.db.restore-'
TOKEN_TEMP_PREFIX = '.token.'  # the token's temp files (_io's .token.bk3s-*.tmp; earlier releases' .token.*.tmp)
STEPS = ('restore', 'rejoin', 'discard')
DISCARD_INFIX = '.baremetal-k3s-'  # step discard: a datastore of another cluster kept aside before a server joins
# k3s's line when --cluster-reset has done its work (pkg/cluster/managed.go), then it exits 0
RESET_DONE = 'Managed etcd cluster membership has been reset'
RESET_TIMEOUT = 600
MAX_TOKEN = 4096  # bytes: a k3s token is far smaller
OUTPUT_TAIL = 20  # lines of k3s's output a failure quotes
SNAPSHOT = ':snapshot'  # inspect()'s key of the etcd snapshot member (its own name is server/db/snapshots/<file>)


def node_datastore(view, db_dir):
    """``etcd`` (``server/db/etcd``), ``sqlite`` (``server/db/state.db``) or '' (none) on the node."""
    if view.isdir(os.path.join(db_dir, 'etcd')):
        return 'etcd'
    if view.isfile(os.path.join(db_dir, 'state.db')):
        return 'sqlite'
    return ''


def _last(args, env, names, variable):
    """A flag's value as k3s takes it: the last given on the command line or in the config files, else the variable."""
    values = k3s_config.flag_values(args, *names)
    if values:
        return values[-1]
    return env.get(variable, '')


def service_command(view, service, found):
    """How the service runs k3s: {argv (unhidden), env, args (config-file flags inserted), product}.

    The secret values of all of them go into ``found`` first. PlanError when the service is not there.
    """
    try:
        init = services.read_init(view, service)
    except services.ServiceError as e:
        raise PlanError('cannot read the k3s service %s: %s' % (service, e.msg))
    argv = k3s_info.k3s_config_expand(init)
    env = dict(init.env or {})
    secrets.add(found, secrets.argv_secrets(init.raw_argv(True)) + secrets.argv_secrets(argv) + secrets.env_secrets(env))
    if 'server' not in argv[1:]:
        raise PlanError('service %s does not run "k3s server" (%s); only a server holds a datastore.'
                        % (service, ' '.join(secrets.hide_argv(argv))))
    config_file = k3s_config.find_config_file(argv, env)
    try:
        docs = services.config_documents(view, services.config_files(view, config_file))
    except services.ServiceError as e:
        raise PlanError(e.msg)
    secrets.add(found, secrets.documents_secrets(docs))
    args = k3s_config.insert_flags(argv, k3s_config.to_flags(k3s_config.merge(docs)))
    product = k3s_config.product(argv[0]).upper()
    return {'argv': argv, 'env': env, 'args': args[1:], 'product': product}


def token_secrets(text):
    """A token's secret forms: the whole token and, of a full one (``K10<hash>::<user>:<password>``), its password."""
    text = (text or '').strip()
    forms = [text] if text else []
    credentials = text.partition('::')[2]
    if credentials:
        forms += [credentials, credentials.partition(':')[2] or credentials]
    return forms


def token_sources(view, command, found):
    """[(where, text or None)]: the token the server starts with, in k3s's order (a token file over ``--token``
    over the variable); [] when none is configured (k3s then reads ``server/token``). None: the file is missing."""
    args, env, product = command['args'], command['env'], command['product']
    path = _last(args, env, ('token-file',), product + '_TOKEN_FILE')
    if path:
        text = view.read_text(path) if os.path.isabs(path) else None
        secrets.add(found, token_secrets(text))
        return [('its token file %s (token-file)' % path, text)]
    value = _last(args, env, ('token', 't'), product + '_TOKEN')
    if value:
        secrets.add(found, token_secrets(value))
        return [('its token option (token, -t or %s_TOKEN)' % product, value)]
    return []


def plan(view, params, now=None, found=None):
    """What a restore (or a rejoin) of ``params`` does; a Plan with facts only. PlanError on a refusal.

    ``params``: step (restore | rejoin), archive, sha256, data_dir, service, require_stopped, timeout.
    ``found`` (a module's ``no_log_values``) receives every secret value read on the way.
    """
    now = time.time() if now is None else now
    found = set() if found is None else found
    step = params.get('step') or 'restore'
    if step not in STEPS:
        raise PlanError('step must be one of %s, got %r.' % (', '.join(STEPS), step))
    if params.get('service'):
        services.check_service_name(params['service'])  # a name, checked whole before anything is read
    archive, expected = '', ''
    if step == 'restore':
        archive, expected = _archive_and_sum(view, params)
    service = params.get('service')
    info = {}
    if service:
        try:
            info = k3s_info.gather(view, {'platform': 'k3s', 'service': service}, found).facts
        except ValueError as e:
            raise PlanError('cannot read the k3s service %s: %s' % (service, e))
        if info.get('active') and params.get('require_stopped', True):
            raise PlanError('k3s (service %s) is running; a datastore is never replaced under a running server. Stop it '
                            'first (the restore playbook does: it stops k3s, restores, starts it again).' % service)
    data_dir = params.get('data_dir') or info.get('data_dir') or backup.DEFAULT_DATA_DIR
    if not os.path.isabs(data_dir):
        raise PlanError('data_dir must be an absolute path, got %r.' % data_dir)
    data_dir = os.path.normpath(data_dir)
    if not view.isdir(data_dir):
        raise PlanError('%s does not exist: no k3s data directory there. Give data_dir the --data-dir k3s runs with.'
                        % data_dir)
    db_dir = os.path.join(data_dir, 'server', 'db')
    token = os.path.join(data_dir, 'server', 'token')
    if view.lexists(token) and not view.isfile(token):
        st = view.stat(token)
        raise PlanError('%s is %s, not a regular file: it is not a token k3s wrote, and it is not read or replaced. '
                        'Remove it, then run again. Nothing was changed.'
                        % (token, file_kind(st.st_mode) if st else 'a symbolic link to nothing'))
    facts = {'step': step, 'archive': archive, 'sha256': expected, 'data_dir': data_dir, 'db_dir': db_dir, 'token': token,
             'db_aside': '', 'token_aside': '', 'service': service or '', 'node_datastore': node_datastore(view, db_dir),
             'datastore': '', 'rows': 0, 'revision': 0, 'restored': [], 'storage_in_archive': False, 'manifest': {},
             'snapshot': '', 'reset_argv': [], 'reset_seconds': 0.0, 'reset_message': '', 'join_url': ''}
    facts['_aside'] = _asides(view, step, data_dir, now)
    command = service_command(view, service, found) if service and info.get('installed') else None
    facts['_command'] = command
    facts['_timeout'] = params.get('timeout') or RESET_TIMEOUT
    if step == 'discard':
        return Plan(facts=facts)
    if step == 'rejoin':
        if service and not info.get('installed'):
            raise PlanError('no k3s service %s on this server (%s); a rejoin starts it again. Nothing was changed.'
                            % (service, info.get('msg') or 'not installed'))
        return Plan(facts=_plan_rejoin(facts, command))
    facts['_tokens'] = token_sources(view, command, found) if command else []
    return Plan(facts=facts)


def _asides(view, step, data_dir, now):
    """Where the previous server/db, the previous token and a failed reset's server/db go: {db, token, failed,
    real_db}. PlanError when one of those places is taken, or server/db is a link to no directory."""
    server = os.path.join(data_dir, 'server')
    db_dir = os.path.join(server, 'db')
    stamp = time.strftime(backup.STAMP_FORMAT, time.gmtime(now))
    # server/db may be a symbolic link to another disk: the datastore is replaced there, the link stays
    real_db = view.realpath(db_dir) if view.islink(db_dir) else db_dir
    if view.islink(db_dir) and not view.isdir(real_db):
        raise PlanError('%s is a symbolic link to %s, which is not a directory (its disk not mounted?); nothing was '
                        'changed. Mount it, or fix the link, and run again.' % (db_dir, real_db))
    infix = DISCARD_INFIX if step == 'discard' else ASIDE_INFIX
    asides = {'db': real_db + infix + stamp, 'token': os.path.join(server, 'token') + infix + stamp,
              'failed': real_db + FAILED_INFIX + stamp, 'real_db': real_db}
    if step == 'restore':
        taken = (asides['db'], asides['token'], asides['failed'])
    else:
        taken = ((asides['db'],) if view.lexists(db_dir) else ()) + \
            ((asides['token'],) if step == 'discard' and view.lexists(os.path.join(server, 'token')) else ())
    for path in taken:
        if view.lexists(path):
            raise PlanError('%s already exists (a restore within the same second?); nothing was changed. Run again.' % path)
    if view.exists(server) and not view.writable(os.path.join(server, 'x')):
        raise PlanError('%s cannot be written (read-only file system or no permission); run as root (become).' % server)
    return asides


def _archive_and_sum(view, params):
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
    return archive, expected


def _plan_rejoin(facts, command):
    """The refusals of a rejoin: a SQLite server, no service to read, no server URL to join through."""
    if facts['node_datastore'] == 'sqlite':
        raise PlanError('%s holds a SQLite datastore (state.db), not embedded etcd: this server is no etcd member and has '
                        'nothing to rejoin. Nothing was changed.' % facts['db_dir'])
    if command is None:
        raise PlanError('a rejoin reads how the service starts k3s (the server it joins through): give service, the k3s '
                        'service of this server. Nothing was changed.')
    url = _last(command['args'], command['env'], ('server', 's'), command['product'] + '_URL')
    if not url:
        raise PlanError('k3s on this server has no server URL to join through (no server option, -s or %s_URL): '
                        'without it, a start without server/db begins a new cluster of its own (cluster-init) '
                        'instead of joining the restored one. Restore on the server the others join through, or give '
                        'this one "server: https://<the restored server>:6443". Nothing was changed.'
                        % command['product'])
    facts['join_url'] = url
    return facts


def _member_name(info):
    name = posixpath.normpath(info.name)
    if name.startswith('/') or name == '..' or name.startswith('../'):
        return None
    return name


def inspect(tar):
    """({name: TarInfo}, storage, datastore) of the archive; BackupError for anything a backup never holds.

    The datastore is ``sqlite`` (``server/db/state.db``) or ``etcd`` (one ``server/db/snapshots/<file>``), never both.
    """
    found = {}
    storage = False
    snapshots = []
    for info in tar.getmembers():
        name = _member_name(info)
        if name is None:
            raise BackupError('the archive holds %r, a path outside the data directory; it is not a k3s_backup archive. '
                              'Nothing was changed.' % info.name)
        is_snapshot = posixpath.dirname(name) == backup.SNAPSHOT_MEMBER_DIR and \
            backup.SNAPSHOT_NAME_RE.fullmatch(posixpath.basename(name)) is not None
        if name in (backup.DB_MEMBER, backup.TOKEN_MEMBER, backup.MANIFEST) or is_snapshot:
            if not info.isfile():
                raise BackupError('%s in the archive is not a regular file; nothing was changed.' % name)
            if name in found:
                raise BackupError('%s is in the archive twice; nothing was changed.' % name)
            found[name] = info
            if is_snapshot:
                snapshots.append(name)
        elif name == backup.STORAGE_MEMBER or name.startswith(backup.STORAGE_MEMBER + '/'):
            storage = True
        else:
            raise BackupError('the archive holds %r, which a k3s_backup archive never does; nothing was changed.' % info.name)
    if backup.TOKEN_MEMBER not in found:
        raise BackupError('the archive has no %s; it is not a k3s_backup archive. Nothing was changed.' % backup.TOKEN_MEMBER)
    if len(snapshots) > 1 or (snapshots and backup.DB_MEMBER in found):
        raise BackupError('the archive holds %s: more than one datastore, which a k3s_backup archive never does. Nothing '
                          'was changed.' % ', '.join(([backup.DB_MEMBER] if backup.DB_MEMBER in found else []) + snapshots))
    if snapshots:
        found[SNAPSHOT] = found[snapshots[0]]
        return found, storage, 'etcd'
    if backup.DB_MEMBER not in found:
        raise BackupError('the archive has no datastore: neither %s (SQLite) nor %s/<file> (an etcd snapshot); it is not '
                          'a k3s_backup archive. Nothing was changed.' % (backup.DB_MEMBER, backup.SNAPSHOT_MEMBER_DIR))
    return found, storage, 'sqlite'


def _check_room(facts, server, found):
    """BackupError, before anything is written, when the data directory's file system cannot hold the unpacked files."""
    probe = server
    while not os.path.isdir(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    vfs = os.statvfs(probe)
    free = vfs.f_bavail * vfs.f_frsize
    needed = found[_datastore_member(found)].size + found[backup.TOKEN_MEMBER].size + backup.MARGIN
    if free < needed:
        raise BackupError('not enough free space in %s to unpack the datastore: needed %s (%d bytes), free %s (%d bytes). '
                          'Nothing was changed. Free space there (the datastore kept aside by an earlier restore, '
                          'server/db.before-restore-*, can go once its server is proven) and run again.'
                          % (facts['data_dir'], backup.human(needed), needed, backup.human(free), free))


def _identity(path):
    st = os.lstat(path)
    return '%d %d' % (st.st_dev, st.st_ino)


def clean_stale(directories, real_db, now):
    """Remove what killed restores left in ``directories`` (host paths): their ``.db.restore-*.tmp`` stage (the
    datastore and token copies) and the token's temp files. A stage whose ``db`` is no longer the directory it staged
    (a kill after the exchange, before the rename aside) holds the datastore that was replaced: it is moved aside next
    to ``real_db``, never removed. Returns (removed, kept aside) host paths."""
    _io.require_held(real_db)
    removed, kept = [], []
    for directory in directories:
        for path in _io.stale_temps(directory, STAGE_PREFIX):
            if not os.path.isdir(path) or os.path.islink(path):
                continue
            replaced = _replaced_in_stage(path)
            if replaced:
                aside = real_db + ASIDE_INFIX + time.strftime(backup.STAMP_FORMAT, time.gmtime(now)) + '.killed'
                n = 0
                while os.path.lexists(aside):
                    n += 1
                    aside = '%s.%d' % (aside.rsplit('.killed', 1)[0] + '.killed', n)
                _io.rename_dir(replaced, aside, guard=real_db)
                kept.append(aside)
            _io.remove_tree(path, guard=real_db)
            removed.append(path)
        for path in _io.stale_temps(directory, TOKEN_TEMP_PREFIX):
            if os.path.isfile(path):
                _io.remove_tree(path, guard=real_db)
                removed.append(path)
        _io.fsync_dir(directory)
    return removed, kept


def _replaced_in_stage(stage):
    """The stage's ``db`` when it is not the directory the stage recorded (the datastore it replaced), else None."""
    staged = os.path.join(stage, 'db')
    try:
        with open(os.path.join(stage, NEW_DB_RECORD)) as f:
            recorded = f.read().strip()
    except OSError:
        return None
    return staged if os.path.isdir(staged) and _identity(staged) != recorded else None


def _extract(tar, info, dest):
    """Unpack the member ``info`` as the new file ``dest`` in a stage (0600, fsynced)."""
    with _io.stream_file(dest, 0o600) as out:
        shutil.copyfileobj(tar.extractfile(info), out, 1 << 20)


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


def _datastore_member(found):
    return backup.DB_MEMBER if backup.DB_MEMBER in found else found[SNAPSHOT].name


def _read_member(tar, info, limit):
    if info.size > limit:
        raise BackupError('%s in the archive is %d bytes, more than a k3s token ever is; nothing was changed.'
                          % (info.name, info.size))
    return tar.extractfile(info).read()


def _check_fit(facts, datastore, archive_token):
    """BackupError, before anything is written, for an archive this server cannot take, or a token it would not use."""
    node = facts['node_datastore']
    if datastore == 'sqlite' and node == 'etcd':
        raise BackupError('%s holds embedded etcd and the archive a SQLite datastore: a SQLite archive restores a SQLite '
                          'server only. Nothing was changed.' % facts['db_dir'])
    if datastore == 'sqlite':
        return
    if node == 'sqlite':
        raise BackupError('%s holds a SQLite datastore (state.db) and the archive an etcd snapshot: a server does not '
                          'turn into an etcd member by a restore. Nothing was changed.' % facts['db_dir'])
    if facts.get('_command') is None:
        raise BackupError('an etcd snapshot is restored by k3s itself (k3s server --cluster-reset '
                          '--cluster-reset-restore-path), run with the service\'s own command line: give service, the '
                          'k3s service of this server (installed). Nothing was changed.')
    try:
        wanted = token_file.parse(archive_token.decode('ascii', 'replace'), 'server/token in the archive')
    except PlanError as e:
        raise BackupError('%s Nothing was changed.' % e.msg)
    for where, text in facts.get('_tokens') or []:
        if text is None:
            raise BackupError('k3s on this server reads the token from %s, which does not exist (k3s would wait for it, '
                              'then fail). Put the cluster\'s token there (the archive holds it as server/token) and run '
                              'again. Nothing was changed.' % where)
        try:
            configured = token_file.parse(text, where)
        except PlanError as e:
            raise BackupError('%s Nothing was changed.' % e.msg)
        if not configured.same_as(wanted):
            raise BackupError('k3s on this server takes its token from %s, and that is not the token of the cluster in the '
                              'archive (k3s reads a token file over --token, and decrypts the restored bootstrap data with '
                              'it: the restore would fail). Configure the archive\'s cluster token (the archive holds it '
                              'as server/token) and run again. Nothing was changed.' % where)


def _read_archive(tar, facts, command, tokens, found):
    """Check the archive before anything is written: (members, the datastore's member, manifest, the archive's token).

    The archive's token goes into ``found`` before anything can show it; the facts get what the archive holds.
    """
    try:
        members, storage, datastore = inspect(tar)
        manifest = {}
        if backup.MANIFEST in members:
            try:
                manifest = json.loads(tar.extractfile(members[backup.MANIFEST]).read().decode('utf-8'))
            except ValueError as e:
                raise BackupError('the archive\'s %s is not JSON (%s); nothing was changed.' % (backup.MANIFEST, e))
        archive_token = _read_member(tar, members[backup.TOKEN_MEMBER], MAX_TOKEN)
        secrets.add(found, token_secrets(archive_token.decode('utf-8', 'replace')))
        facts.update(storage_in_archive=storage, manifest=manifest, datastore=datastore)
        _check_fit(dict(facts, _command=command, _tokens=tokens), datastore, archive_token)
    except (tarfile.TarError, EOFError, zlib.error) as e:
        raise BackupError('%s cannot be read (%s); nothing was changed.' % (facts['archive'], e))
    member = _datastore_member(members)
    if datastore == 'etcd':
        facts['snapshot'] = posixpath.join(facts['data_dir'], member)
        facts['reset_argv'] = secrets.hide_argv(_reset_argv(command, facts['snapshot'], 'x'))
    return members, member, manifest, archive_token


def _stage(tar, members, member, manifest, stage, facts):
    """Unpack the datastore and the token into ``stage`` and check them (sha256, integrity); (db dir, token) there."""
    staged_db_dir = os.path.join(stage, 'db')
    _io.make_dir(staged_db_dir, 0o700)
    staged_db = os.path.join(staged_db_dir, posixpath.relpath(member, 'server/db'))
    if os.path.dirname(staged_db) != staged_db_dir:
        _io.make_dir(os.path.dirname(staged_db), 0o700)
    staged_token = os.path.join(stage, 'token')
    _extract(tar, members[member], staged_db)
    _extract(tar, members[backup.TOKEN_MEMBER], staged_token)
    for name, path in ((member, staged_db), (backup.TOKEN_MEMBER, staged_token)):
        want = ((manifest.get('files') or {}).get(name) or {}).get('sha256')
        if want and backup.file_sha256(path) != want:
            raise BackupError('%s in the archive does not match the sha256 its manifest records; nothing was '
                              'changed.' % name)
    if facts['datastore'] == 'etcd':
        backup.etcd_snapshot_check(staged_db, '%s in the archive' % member)
    else:
        facts.update(check_db(staged_db))
    # which directory this run staged: a later run tells it from the replaced datastore after a kill
    _io.write_bytes(os.path.join(stage, NEW_DB_RECORD), (_identity(staged_db_dir) + '\n').encode(), replace=False)
    return staged_db_dir, staged_token


def _clean_and_check(facts, host_path, server, db_dir, token, members):
    """What killed restores left goes first (the room check counts it); then the room for the stage is checked.
    Returns the directory the stage goes into (server/db's own, on its file system)."""
    stage_dir = os.path.dirname(db_dir)
    cleaned, kept = clean_stale(sorted({server, stage_dir, os.path.dirname(token)}), db_dir, time.time())
    facts['stale_removed'] = [_node(host_path, p) for p in cleaned]
    facts['stale_kept'] = [_node(host_path, p) for p in kept]
    _check_room(facts, stage_dir, members)
    _io.make_dir(server, 0o700, guard=db_dir)
    return stage_dir


def restore(facts, host_path, check_only=False, run=None, found=None, clock=time.monotonic):
    """Verify the archive, then (unless ``check_only``) put its datastore and token in place; returns the facts.

    An etcd snapshot is then restored by ``k3s server --cluster-reset --cluster-reset-restore-path``, run by
    ``run(argv, env, timeout) -> (rc or None on a timeout, output)`` (default :func:`run_foreground`); the archive's
    token goes into ``found`` (a module's ``no_log_values``) before anything can show it.
    """
    facts = dict(facts)
    asides = facts.pop('_aside')
    command = facts.pop('_command', None)
    tokens = facts.pop('_tokens', [])
    timeout = facts.pop('_timeout', RESET_TIMEOUT)
    archive = host_path(facts['archive'])
    digest = backup.file_sha256(archive)
    if digest != facts['sha256']:
        raise BackupError('sha256 mismatch for %s: expected %s, the file has %s. The archive is damaged or not the one '
                          'the checksum names; nothing was changed.' % (facts['archive'], facts['sha256'], digest))
    server = host_path(os.path.join(facts['data_dir'], 'server'))
    db_dir = host_path(asides.get('real_db') or facts['db_dir'])  # server/db, or the directory its link points to
    token = os.path.realpath(host_path(facts['token']))
    try:
        tar = tarfile.open(archive, 'r:gz')
    except (tarfile.TarError, OSError) as e:
        raise BackupError('%s cannot be read as a tar.gz archive (%s); nothing was changed.' % (facts['archive'], e))
    with tar:
        members, member, manifest, archive_token = _read_archive(tar, facts, command, tokens, found)
        if check_only:  # check mode writes nothing, not even a temp file: the datastore copy is checked when run
            return facts
        stage_dir = _clean_and_check(facts, host_path, server, db_dir, token, members)
        try:
            with _io.temp_dir(stage_dir, STAGE_PREFIX, guard=db_dir) as stage:
                staged_db_dir, staged_token = _stage(tar, members, member, manifest, stage, facts)
                done = _swap(facts, db_dir, staged_db_dir, token, staged_token, host_path, asides)
        except (OSError, tarfile.TarError, EOFError, zlib.error) as e:
            raise BackupError('restoring %s failed: %s. Nothing was changed.' % (facts['archive'], getattr(e, 'strerror', None) or e))
    if facts['datastore'] == 'sqlite':
        facts['restored'] = [facts['db_dir'] + '/state.db'] + facts['restored']
        return facts
    facts['restored'] = [facts['snapshot']] + facts['restored']
    return _cluster_reset(facts, command, archive_token.decode('ascii', 'replace').strip(), timeout, run or run_foreground,
                          done, host_path, asides, clock)


def _reset_argv(command, snapshot, token):
    """The service's own command line with k3s's restore flags after it (the restore path in no config file)."""
    return list(command['argv']) + ['--cluster-reset', '--cluster-reset-restore-path=%s' % snapshot, '--token=%s' % token]


def _reset_env(command):
    """The module's environment without k3s's variables, then the service's (as systemd or openrc gives them)."""
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith(_platform.ENV_PREFIXES))
    env.update(command['env'])
    env['LC_ALL'] = 'C'
    return env


def _cluster_reset(facts, command, token, timeout, run, done, host_path, asides, clock):
    """Run k3s's restore; on anything but exit 0 with k3s's line, put server/db and the token back as they were."""
    argv = _reset_argv(command, facts['snapshot'], token)
    started = clock()
    try:
        rc, output = run(argv, _reset_env(command), timeout)
    except OSError as e:
        rc, output = -1, 'cannot run %s: %s' % (argv[0], e.strerror or e)
    facts['reset_seconds'] = round(clock() - started, 1)
    lines = [line for line in (output or '').splitlines() if line.strip()]
    said = [line for line in lines if RESET_DONE in line]
    if rc == 0 and said:
        facts['reset_message'] = said[-1].strip()
        return facts
    why = ('did not end within %s s (ended: SIGTERM, then SIGKILL)' % timeout if rc is None else
           'exited %s' % rc if rc != 0 else 'exited 0 without k3s\'s "%s" line' % RESET_DONE)
    kept, problems = _put_back(facts, done, host_path, asides)
    tail = '\n'.join(secrets.hide_message(line, token_secrets(token)) for line in lines[-OUTPUT_TAIL:])
    raise BackupError('%s %s. %s Its last lines:\n%s'
                      % (' '.join(facts['reset_argv']), why,
                         ('The server is back as it was: its server/db and token were put back%s.'
                          % ((', and what the reset wrote is kept in %s' % kept) if kept else ''))
                         if not problems else 'Putting the server back failed too: %s.' % '; '.join(problems),
                         tail or '(no output)'),
                      db_failed=kept)


def _put_back(facts, done, host_path, asides):
    """Undo a swap after the reset failed: the new server/db kept aside as failed, the previous one and the token
    back. Returns (the failed copy's node path or '', problems)."""
    problems, kept = [], ''
    db_dir = host_path(asides.get('real_db') or facts['db_dir'])
    token = os.path.realpath(host_path(facts['token']))
    try:
        if facts['db_aside'] and os.path.lexists(db_dir):
            # the previous datastore back in one step; what the reset wrote kept as failed
            _io.replace_dir(host_path(facts['db_aside']), db_dir, host_path(asides['failed']), _io.Written())
            kept = asides['failed']
            facts['db_aside'] = ''
        elif os.path.lexists(db_dir):
            _io.rename_dir(db_dir, host_path(asides['failed']))
            kept = asides['failed']
        elif facts['db_aside']:
            _io.rename_dir(host_path(facts['db_aside']), db_dir)
            facts['db_aside'] = ''
    except OSError as e:
        problems.append('%s: %s' % (facts['db_dir'], e.strerror or e))
    try:
        if facts['token_aside']:
            with open(host_path(facts['token_aside']), 'rb') as f:
                _io.write_bytes(token, f.read())
            _io.remove_tree(host_path(facts['token_aside']), guard=token)
            facts['token_aside'] = ''
        elif done.get('token_created'):
            _io.remove_tree(token)
    except OSError as e:
        problems.append('%s: %s' % (facts['token'], e.strerror or e))
    facts['restored'] = []
    return kept, problems


def _node(host_path, path):
    """The node's path of the host ``path`` (``host_path`` maps the other way)."""
    root = host_path('/')
    return path if root in ('', '/') else '/' + os.path.relpath(path, root)


def rejoin(facts, host_path, check_only=False):
    """Rename server/db aside (kept), so that k3s's next start joins the cluster of its server URL as a new member."""
    facts = dict(facts)
    asides = facts.pop('_aside')
    for key in ('_command', '_tokens', '_timeout'):
        facts.pop(key, None)
    db_dir = host_path(asides.get('real_db') or facts['db_dir'])  # through a link to another disk: the directory there
    if not os.path.lexists(db_dir):
        return facts
    if check_only:
        facts['db_aside'] = asides['db']
        return facts
    aside = host_path(asides['db'])
    if os.path.lexists(aside):
        raise BackupError('%s already exists; nothing was changed. Run again.' % asides['db'])
    try:
        _io.rename_dir(db_dir, aside)
        if asides.get('real_db', facts['db_dir']) != facts['db_dir']:
            _io.make_dir(db_dir, 0o700)  # server/db stays a link to that disk, to an empty directory k3s joins into
    except OSError as e:
        raise BackupError('moving %s aside failed: %s. Nothing was changed.' % (facts['db_dir'], e.strerror or e))
    facts['db_aside'] = asides['db']
    return facts


def discard(facts, host_path, check_only=False):
    """Rename server/db and server/token aside (kept, no longer used), so that k3s's next start joins another cluster
    as a new member instead of running the one this server held. Both or neither: a failure puts back what moved."""
    facts = dict(facts)
    asides = facts.pop('_aside')
    for key in ('_command', '_tokens', '_timeout'):
        facts.pop(key, None)
    moves = [(asides.get('real_db') or facts['db_dir'], asides['db'], 'db_aside'), (facts['token'], asides['token'], 'token_aside')]
    moves = [m for m in moves if os.path.lexists(host_path(m[0]))]
    if check_only:
        facts.update((key, dest) for dummy, dest, key in moves)
        return facts
    written = _io.Written()
    try:
        for path, dest, key in moves:
            _io.rename_dir(host_path(path), host_path(dest), written, guard=host_path(path))
            facts[key] = dest
        if moves and asides.get('real_db', facts['db_dir']) != facts['db_dir']:
            _io.make_dir(host_path(facts['db_dir']), 0o700)  # server/db stays a link to that disk, to an empty directory
    except OSError as e:
        written.put_back()
        raise BackupError('moving %s aside failed: %s. Nothing was changed.' % (facts['db_dir'], e.strerror or e))
    return facts


def _swap(facts, db_dir, staged_db_dir, token, staged_token, host_path, asides):
    """The renames: current db aside, staged db in, token replaced; undone in reverse when one fails.

    Sets ``facts['restored']`` to the token when it was written; returns {token_created} for a later undo.
    """
    written = _io.Written()
    done = {'token_created': False}
    try:
        if os.path.lexists(db_dir):
            aside = host_path(asides['db'])
            if os.path.lexists(aside):
                raise BackupError('%s already exists; nothing was changed. Run again.' % asides['db'])
            _io.replace_dir(staged_db_dir, db_dir, aside, written)
            facts['db_aside'] = asides['db']
        else:
            _io.rename_dir(staged_db_dir, db_dir, written, undo='remove', guard=db_dir)
        facts['restored'] = _swap_token(facts, token, staged_token, (asides['token'], host_path(asides['token'])), written,
                                        done)
    except BaseException:
        facts['db_aside'] = facts['token_aside'] = ''
        written.put_back()
        raise
    return done


def _swap_token(facts, token, staged_token, token_aside, written, done):
    """The token replaced when the archive's differs, its old bytes kept beside it (``token_aside``: node and host
    path); [the token] when it was written."""
    with open(staged_token, 'rb') as f:  # this run's own staged file
        new_token = f.read()
    old_token = None
    if os.path.exists(token):
        with open_regular(token, facts['token']) as f:  # a FIFO planted since the plan is refused, never waited on
            old_token = f.read()
    if old_token == new_token:
        return []
    if old_token is not None:
        _io.write_bytes(token_aside[1], old_token, 0o600, written, replace=False, guard=token)
        facts['token_aside'] = token_aside[0]
    _io.write_bytes(token, new_token, 0o600, written)
    done['token_created'] = old_token is None
    return [facts['token']]
