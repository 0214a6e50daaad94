# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The one way this collection writes to a node: :func:`apply` a Plan, under :func:`node_lock`.

Every file write goes: temp file in the target's directory -> fsync -> optional backup of
the old file -> atomic rename -> mode and owner of a new file. A file is never written in
place, so a reader (systemd, k3s, the kubelet) sees the old bytes or the new ones, never
half of them. Around that:

* **Locks.** A module plans and applies under :func:`locked_apply`: it holds the lock of
  every file it writes (keyed by the file, whatever the spelling), and of the service it
  changes, so two runs on the same node cannot lose each other's change; a second run waits,
  then fails naming the holder. :func:`apply` refuses a file whose lock is not held. The
  mechanism (a root-only directory, files that cannot be planted) is module_utils/_lock.py.
* **Stale temp files.** A run killed between creating its temp file and the rename leaves
  ``.<name>.bk3s-*.tmp`` behind; the next write of that file (under the lock, so no live
  writer owns one) removes them.
* **Symlinks** are followed: the file a link points to is replaced (in its own directory)
  and the link stays. Removing a file reached through a link is refused: whether the link
  or its target is meant cannot be told.
* **Links and directories another user could plant or swap** are refused before anything is
  written (:func:`path_hazard`): a symbolic link on the way to the file (the file itself, a
  directory above it, or a link inside a link's target) that is not root's, or a directory on the
  way that another user owns or may write (a sticky one such as /tmp is allowed: there nobody
  can rename or remove root's entries). k3s_binary, the plans' :func:`apply` and the writes
  outside a plan (:func:`stream_file`, :func:`temp_dir`...) all ask it.
* **Files that hold a secret** (a ``Change`` with ``secret``: a token file, registries.yaml,
  an env file) are mode 0600 and root's after every write, a replaced file too: the new bytes
  are in a temp file of that mode and owner before they get the file's name, so the secret is
  never readable by others, not even for an instant; a backup of such a file is 0600 too.
* **Write failures** (a full disk, a quota, a read-only file system, an I/O error) are an
  :class:`ApplyError` that says which file and why (:func:`os_error`), never a traceback; the
  temp file and the directories made for it go, and the files already written are put back.
* **Directories** this collection creates hold a marker file (``.baremetal-k3s-created``);
  when a removal leaves such a directory with nothing but its marker, it goes too.
* **Several files.** If writing one file of a plan fails, those already written get their
  old bytes back before the error is reported.

Paths in a plan are the node's. :data:`ROOT` maps them (``/`` on a node); tests point it at
a directory tree, and :func:`node_view` reads the same tree, so the module under test reads
and writes only there.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import stat
import tempfile
import time

from ansible_collections.baremetal.k3s.plugins.module_utils import _lock
from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal
from ansible_collections.baremetal.k3s.plugins.module_utils._view import RUN_TIMEOUT, TIMED_OUT, ProcessWatch, View, ViewError, host_path

ROOT = '/'
DIR_MARKER = '.baremetal-k3s-created'
DIR_MARKER_TEXT = b'Created by baremetal.k3s; removed with this directory once nothing else is in it.\n'
TEMP_INFIX = '.bk3s-'
TEMP_SUFFIX = '.tmp'
LOCK_TIMEOUT = 120
RELOCKS = 5
SECRET_MODE = 0o600


class ApplyError(Exception):
    """Writing failed or was refused; files already written were put back. ``msg`` says what to do."""

    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg


def node_view(module):
    """The :class:`View` of the node this module runs on: files under :data:`ROOT`, commands through the module,
    bounded in time (a :class:`_view.ProcessWatch`: a program that hangs is stopped and the module fails naming it)."""
    def runner(argv, stdin=None, timeout=None):
        exe = argv[0]
        if os.path.isabs(exe):
            real = host_path(ROOT, exe)
            if not (os.path.isfile(real) and os.access(real, os.X_OK)):
                return None, '', ''
            exe = real
        else:
            exe = module.get_bin_path(exe)
            if exe is None:
                return None, '', ''
        watch = ProcessWatch(timeout if timeout is not None else RUN_TIMEOUT)
        try:
            # argv as given: no ~ or $VAR expansion of arguments (a path or a manifest may hold either)
            result = module.run_command([exe] + list(argv[1:]), data=stdin, binary_data=True, expand_user_and_vars=False,
                                        environ_update={'LC_ALL': 'C', 'TZ': 'UTC'},
                                        before_communicate_callback=watch.start)
        finally:
            watch.cancel()
        return TIMED_OUT if watch.fired else result

    runner.bounded = True
    return View(root=ROOT, runner=runner, which=module.get_bin_path)


def _resolved(path):
    """The host path of the file the node's ``path`` names, symlinks followed inside ROOT."""
    return host_path(ROOT, View(root=ROOT).realpath(path))


def _node_path(path):
    """The node's path of a file under ROOT (for results)."""
    if path is None or ROOT == '/':
        return path
    return '/' + os.path.relpath(path, ROOT)


def os_error(e):
    """What an OSError of a write means, in words that say what to do (a full disk, a quota, a read-only file
    system, an I/O error), for the message of an :class:`ApplyError`."""
    said = e.strerror or str(e)
    hint = {errno.ENOSPC: 'the file system is full: free some space on it', errno.EDQUOT: 'the disk quota is used up: '
            'free some space or raise the quota', errno.EROFS: 'the file system is mounted read-only',
            errno.EIO: 'the disk reported an I/O error: check it (dmesg) before running again',
            errno.EACCES: 'permission denied (an immutable file? lsattr shows it)',
            errno.EPERM: 'operation not permitted (an immutable file? lsattr shows it)'}.get(e.errno)
    return '%s (%s)' % (said, hint) if hint else said


# -- links and directories another user could plant or swap -------------------------------------------------------
def _trusted(uid):
    return uid in (0, os.geteuid())


def path_hazard(view, path, sticky_ok=True):
    """Why another user could make a write of the node's ``path`` land elsewhere, or None.

    Walks ``path`` as the kernel does (every symbolic link followed, a link's target walked in turn) through ``view``
    and returns ``('link', link, uid, None)`` for a symbolic link on the way that is not root's (a link a local user
    planted at the file or at a directory above it), or ``('dir', directory, uid, mode)`` for a directory on the way
    (the real ones, the file's own included) that another user owns or that group or others may write without the
    sticky bit. ``sticky_ok=False``: the file's own directory may not be sticky either (a binary root runs). Parts of
    the path that do not exist yet are not judged (they are made by the run, root's).
    """
    if not isinstance(path, str) or not os.path.isabs(path):
        return None
    parts = [p for p in os.path.normpath(path).split('/') if p]
    resolved = '/'
    walked = ['/']
    hops = 0
    while parts:
        part = parts.pop(0)
        if part == '..':
            resolved = os.path.dirname(resolved)
            continue
        candidate = os.path.join(resolved, part)
        try:
            st = os.lstat(view.host_path(candidate))
        except OSError:
            resolved = candidate
            continue
        if stat.S_ISLNK(st.st_mode):
            if not _trusted(st.st_uid):
                return ('link', candidate, st.st_uid, None)
            hops += 1
            if hops > View.MAX_SYMLINKS:
                return None  # a loop: the write fails on it and says so
            target = os.readlink(view.host_path(candidate))
            if os.path.isabs(target):
                resolved = '/'
            parts = [p for p in target.split('/') if p and p != '.'] + parts
            continue
        resolved = candidate
        if parts and stat.S_ISDIR(st.st_mode):
            walked.append(candidate)
    final = os.path.dirname(resolved) or '/'
    for directory in walked:
        try:
            st = os.stat(view.host_path(directory))
        except OSError:
            continue
        sticky = st.st_mode & stat.S_ISVTX and (sticky_ok or directory != final)
        if not _trusted(st.st_uid) or (st.st_mode & 0o022 and not sticky):
            return ('dir', directory, st.st_uid, stat.S_IMODE(st.st_mode))
    return None


def describe_hazard(hazard):
    """The words of a :func:`path_hazard`: what is there and why another user could swap it."""
    kind, where, uid, mode = hazard
    if kind == 'link':
        return '%s is a symbolic link owned by uid %d, not root: another user could point it anywhere' % (where, uid)
    return ('the directory %s is owned by uid %d with mode %04o: another user could put a link or a file of theirs in '
            'it' % (where, uid, mode))


def refuse_hazard(path, view=None):
    """ApplyError, before anything is written, when another user could make a write of the node's ``path`` land
    elsewhere (:func:`path_hazard`)."""
    hazard = path_hazard(view or View(root=ROOT), path)
    if hazard:
        raise ApplyError('%s: %s. Nothing was written through it and nothing was changed: remove the link (or make the '
                         'directory root\'s, chmod go-w), or give a path only root can change.'
                         % (path, describe_hazard(hazard)))


# -- locks ---------------------------------------------------------------------------------
_HELD = {}  # resolved host path -> how many node_lock blocks of this process hold its lock


def _lock_target(path):
    """The host path whose lock guards the node's file ``path`` (every symlink resolved inside ROOT)."""
    if not isinstance(path, str) or not os.path.isabs(path):
        raise _lock.LockError('%r is not an absolute path, so no lock can be taken for it.' % (path,))
    try:
        return _resolved(path)
    except ViewError as e:
        raise _lock.LockError(str(e))


def _wanted(keys, paths):
    """{form: what it guards} of the named locks ``keys`` and of the files ``paths``; {path: host path} of the files."""
    targets = {path: _lock_target(path) for path in paths}
    return _lock.wanted(keys, targets), targets


def locked(path):
    """Whether this process holds the lock of the node's file ``path`` (as spelled now)."""
    try:
        return bool(_HELD.get(_lock_target(path)))
    except _lock.LockError:
        return False


@contextlib.contextmanager
def node_lock(module, *keys, paths=(), timeout=None, sleep=time.sleep):
    """Hold the locks named ``keys`` and those of the files ``paths=[...]`` (node paths) for the block.

    A file's lock is the same whatever spelling of it is given (a symlink, ``..``, a bind mount;
    see module_utils/_lock.py). Every lock is taken at once, in one order. Waits up to
    ``timeout`` seconds (default :data:`LOCK_TIMEOUT`) for other holders, then fails the module
    naming the holder (pid, module, since when); a lock directory or lock file that is not
    what this collection makes fails it too, and so does a path another user could make land
    elsewhere (:func:`path_hazard`), before anything is read or written there. Locks go with the process, so a killed run never
    leaves one held.
    """
    paths = list(paths)
    view = View(root=ROOT)
    for path in paths:  # before anything is read through a link another user planted, or written
        try:
            refuse_hazard(path, view)
        except ApplyError as e:
            module.fail_json(msg=e.msg)
    timeout = LOCK_TIMEOUT if timeout is None else timeout
    deadline = time.monotonic() + timeout
    record = {'pid': os.getpid(), 'module': getattr(module, '_name', ''), 'what': ', '.join(list(keys) + paths),
              'since': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}
    while True:
        try:
            wanted, targets = _wanted(keys, paths)
            held = _lock.acquire(wanted, max(0.0, deadline - time.monotonic()), sleep, record)
        except _lock.LockTimeout as e:
            module.fail_json(msg='another baremetal.k3s run is changing %s on this node (%s) and did not finish within '
                                 '%ss; wait for it to end, then run again.' % (e.what, e.holder, timeout))
        except _lock.LockError as e:
            module.fail_json(msg=e.msg)
        try:
            again = _wanted(keys, paths)
        except _lock.LockError as e:
            held.release()
            module.fail_json(msg=e.msg)
        if again == (wanted, targets):
            break
        held.release()  # a directory on the way was made or removed while we waited: lock the files as they are now
    for target in targets.values():
        _HELD[target] = _HELD.get(target, 0) + 1
    try:
        yield
    finally:
        for target in targets.values():
            _HELD[target] -= 1
            if not _HELD[target]:
                del _HELD[target]
        held.release()


def locked_apply(module, plan, keys=(), paths=(), **apply_args):
    """Run ``plan()`` and :func:`apply` its Plan under the locks ``keys``, of the files ``paths`` and of every file it writes.

    ``paths`` are the files known before planning (a module's ``path`` argument); the others are
    found by planning. A path another user could make land elsewhere (:func:`path_hazard`) is
    refused before the plan reads it (:func:`node_lock`), the others before ``apply`` writes.
    A plan that writes a file whose lock is not held is set aside: the locks
    are given back and taken again with that file's (all at once, in one order, so two runs
    never deadlock), and ``plan()`` runs again on what the node holds then. Non-absolute
    ``paths`` are left to the plan to refuse.
    """
    return locked_apply_all(module, [Part(plan, keys, paths, apply_args)])[0]


class Part(object):
    """One write of :func:`locked_apply_all`: its ``plan`` function, the lock ``keys`` and ``paths`` known before
    planning, and the keyword arguments of its :func:`apply` (backup, backup_dir)."""

    def __init__(self, plan, keys=(), paths=(), apply_args=None):
        self.plan, self.keys, self.paths, self.apply_args = plan, list(keys), list(paths), dict(apply_args or {})


def locked_apply_all(module, parts, done=None):
    """:func:`locked_apply` for several writes in one module run: every part planned under one set of locks (all of
    their keys and files), then each applied in order, and a list of their results returned. A part whose plan
    refuses (PlanError), cannot read, or would write through a link the policy refuses (ApplyError, :func:`check_plan`)
    stops the run before any part is written; a write that fails puts
    back its own part's files, and the parts applied before it stay written (as separate module runs would leave them):
    ``done``, a list the caller gives, holds their results then (each part's result is appended as it is applied).
    """
    done = [] if done is None else done
    keys = list(dict.fromkeys(k for part in parts for k in part.keys))
    paths = list(dict.fromkeys(p for part in parts for p in part.paths if isinstance(p, str) and os.path.isabs(p)))
    for dummy in range(RELOCKS):
        with node_lock(module, *keys, paths=paths):
            try:
                planned = [part.plan() for part in parts]
            except ViewError as e:  # a FIFO where a file should be, a file that cannot be read: said, locks let go
                raise ApplyError('%s; nothing was changed.' % e)
            missing = [c.path for p in planned for c in p.changes if not locked(c.path)]
            if not missing:
                if len(planned) > 1:
                    for p in planned:  # the links every part would write through, refused before any part is written
                        check_plan(p)
                for part, p in zip(parts, planned):
                    done.append(apply(module, p, **part.apply_args))
                return done
        paths += [p for p in missing if p not in paths]
    raise ApplyError('the files this run writes kept changing while it planned (%s); nothing was changed. Run again.'
                     % ', '.join(paths))


def part_options(module, name, spec, **rules):
    """The options of part ``name`` of a module that writes several files in one run (``module.params[name]``, a dict),
    checked against the argument spec of the module that writes that part alone (``rules``: its mutually_exclusive,
    required_if, ...), defaults filled in; None when the part is left out. A refusal fails the module with nothing
    changed."""
    # here, not at the top: this file also imports on a node's Python without Ansible's module_utils (pure helpers)
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator  # pylint: disable=import-outside-toplevel

    given = module.params[name]
    if given is None:
        return None
    result = ArgumentSpecValidator(spec, **rules).validate(given)
    if result.error_messages:
        module.fail_json(msg='%s: %s. Nothing was changed.' % (name, '; '.join(result.error_messages)))
    return result.validated_parameters


def parts_result(results):
    """The result of a module run that applied several parts (:func:`locked_apply_all`'s list): changed when any part
    changed, every part's files in order, and one diff per changed file (each part's own, taken out of its result)."""
    result = {'changed': any(r['changed'] for r in results), 'files': [f for r in results for f in r.get('files', [])]}
    diffs = []
    for r in results:
        diff = r.pop('diff', None) or []
        diffs.extend(diff if isinstance(diff, list) else [diff])
    if diffs:
        result['diff'] = diffs
    return result


# -- one file --------------------------------------------------------------------------------
def backup_file(module, path, backup_dir=None, secret=False):  # pylint: disable=unused-argument
    """Copy ``path`` aside (mode, owner and times kept) and return the copy's path.

    The copy is ``<name>.<pid>.<time>~`` next to the file (as Ansible's ``backup_local``
    names it), or in ``backup_dir`` for files that live where a stray copy is harmful (a
    static-pod manifest directory: the kubelet reads every file in it). A name already
    taken (two changes of one file in the same second) gets a counter: no backup is ever
    overwritten.
    """
    if not os.path.exists(path):
        return None
    directory = backup_dir or os.path.dirname(path)
    if backup_dir and not os.path.isdir(backup_dir):
        # made with our marker, so it goes again with its last backup (prune_dirs); root's alone
        make_dirs(backup_dir)
        os.chmod(backup_dir, 0o700)
    stamp = time.strftime('%Y-%m-%d@%H:%M:%S', time.localtime())
    base = os.path.join(directory, '%s.%d.%s' % (os.path.basename(path), os.getpid(), stamp))
    dest, n = base + '~', 0
    while os.path.lexists(dest):
        n += 1
        dest = '%s.%d~' % (base, n)
    shutil.copy2(path, dest)
    st = os.stat(path)
    if secret:  # the copy of a file that holds a secret is root's alone, whatever the file was
        os.chown(dest, 0, 0)
        os.chmod(dest, SECRET_MODE)
    else:
        os.chown(dest, st.st_uid, st.st_gid)
    return dest


def temp_names(names, prefix):
    """The names in ``names`` of temp files or directories (``<prefix>*.tmp``) an earlier, killed write left."""
    return sorted(n for n in names if n.startswith(prefix) and n.endswith(TEMP_SUFFIX))


def stale_temps(path, prefix=None):
    """Temp files an earlier, killed write of ``path`` left in its directory (``.<name>.bk3s-*.tmp``); with
    ``prefix``, the temp files and directories (``<prefix>*.tmp``) in the directory ``path``."""
    directory, name = (path, None) if prefix is not None else os.path.split(path)
    if prefix is None:
        prefix = '.%s%s' % (name, TEMP_INFIX)
    try:
        names = os.listdir(directory or '.')
    except OSError:
        return []
    return [os.path.join(directory, n) for n in temp_names(names, prefix)]


def make_dirs(directory):
    """Create ``directory`` and its missing parents (0755), each with the marker that says we made it."""
    missing = []
    probe = directory
    while probe and not os.path.isdir(probe):
        missing.append(probe)
        probe = os.path.dirname(probe)
    for d in reversed(missing):
        os.mkdir(d, 0o755)
        with open(os.path.join(d, DIR_MARKER), 'wb') as f:
            f.write(DIR_MARKER_TEXT)
    return list(reversed(missing))


def prune_dirs(directory):
    """Remove ``directory`` and its parents while each holds nothing but our marker; return those removed."""
    removed = []
    while directory and directory != '/':
        try:
            names = os.listdir(directory)
        except OSError:
            break
        if names != [DIR_MARKER]:
            break
        os.unlink(os.path.join(directory, DIR_MARKER))
        os.rmdir(directory)
        removed.append(directory)
        directory = os.path.dirname(directory)
    return removed


def write_file(module, path, content, mode=None, owner=None, group=None, backup=False, backup_dir=None, secret=False):
    """Atomically replace ``path`` (a symlink: the file it points to) with ``content`` (bytes).

    Missing parent directories are made (0755, marked as ours). ``mode``/``owner``/``group``
    apply to a new file only: an existing file keeps its own (atomic_move carries them
    over). A ``secret`` file is ``mode`` (default 0600) and root's after every write, new or
    replaced: the temp file gets them before it is renamed into place. Returns
    ``{'backup_file': path or None}``. On a failure the temp file and the directories made
    for it are gone and ``path`` is as it was.
    """
    target = os.path.realpath(path)
    directory = os.path.dirname(target) or '.'
    existed = os.path.exists(target)
    result = {'backup_file': None}
    tmp = None
    try:
        make_dirs(directory)
        for stale in stale_temps(target):
            os.unlink(stale)
        fd, tmp = tempfile.mkstemp(prefix='.%s%s' % (os.path.basename(target), TEMP_INFIX), suffix='.tmp', dir=directory)
        with os.fdopen(fd, 'wb') as f:
            f.write(content)
            f.flush()
            if secret:
                os.fchmod(f.fileno(), SECRET_MODE if mode is None else mode)
                if os.geteuid() == 0:
                    os.fchown(f.fileno(), 0, 0)
            os.fsync(f.fileno())
        if backup and existed:
            result['backup_file'] = backup_file(module, target, backup_dir, secret)
        if secret:
            os.rename(tmp, target)  # not atomic_move: it would give the new bytes the old file's mode and owner
            fsync_dir(directory)
        else:
            if not existed and mode is not None:
                os.chmod(tmp, mode)  # atomic_move keeps an existing target's attributes; a new one gets ours
            module.atomic_move(tmp, target, unsafe_writes=False)
    except BaseException:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
        prune_dirs(directory)  # the directories made for it (those holding nothing but our marker)
        raise
    finally:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
    if secret or existed or (mode is None and owner is None and group is None):
        return result
    # Built by ansible-core itself, so the keys match the running version (SELinux too).
    file_args = module.load_file_common_arguments({'mode': mode, 'owner': owner, 'group': group}, path=target)
    module.set_fs_attributes_if_different(file_args, False)
    return result


def remove_file(module, path, backup=False, backup_dir=None):
    """Remove ``path`` (after an optional backup), then directories we made that it leaves empty."""
    result = {'backup_file': None}
    if not os.path.lexists(path):
        return result
    if backup:
        result['backup_file'] = backup_file(module, path, backup_dir)
    os.unlink(path)
    prune_dirs(os.path.dirname(path))
    return result


# -- a plan ----------------------------------------------------------------------------------
def dangling_directory_link(path):
    """``(link, target)`` for the first directory above the node's ``path`` that is a symbolic link to nothing, or None.

    Writing through it would create its target (``makedirs`` follows the link): somewhere the link's author chose, on a
    disk that may not be mounted yet. Such a link is refused as a dangling link to a file is.
    """
    directory = os.path.dirname(path)
    chain = []
    while directory and directory != '/':
        chain.append(directory)
        directory = os.path.dirname(directory)
    for directory in reversed(chain):
        host = host_path(ROOT, directory)
        if os.path.islink(host) and not os.path.exists(_resolved(directory)):
            return directory, os.readlink(host)
    return None


def check_plan(plan):
    """Refuse, before anything is written, a plan that the symlink policy does not allow."""
    view = View(root=ROOT)
    for change in plan.changes:
        refuse_hazard(change.path, view)
        dangling = dangling_directory_link(change.path)
        if dangling:
            raise ApplyError('%s is a symbolic link to %s, which does not exist: %s is not written through it (its target '
                             'directory would be created). Create the target, or remove the link, then run again; nothing '
                             'was changed.' % (dangling[0], dangling[1], change.path))
        real = host_path(ROOT, change.path)
        if os.path.islink(real):
            if change.after is None:
                raise ApplyError('%s is a symbolic link (to %s); removing it is refused because it is not clear whether the '
                                 'link or the file it points to is meant. Remove it by hand.'
                                 % (change.path, os.readlink(real)))
            if not os.path.exists(_resolved(change.path)):
                raise ApplyError('%s is a symbolic link to %s, which does not exist; fix or remove the link, then run again; nothing was '
                                 'changed.'
                                 % (change.path, os.readlink(real)))


def _put_back(module, done):
    """Best effort: give the files of ``done`` their old bytes again; the paths that could not be restored."""
    failed = []
    for change in reversed(done):
        real = _resolved(change.path)
        try:
            if change.before is None:
                remove_file(module, real)
            else:
                write_file(module, real, change.before, secret=change.secret)
        except OSError:
            failed.append(change.path)
    return failed


def warn(module, warnings):
    """Emit ``warnings``: Ansible prints them as they are, so what is not printable (a node's control characters in
    a file or node name) is escaped first; line breaks stay."""
    for warning in warnings:
        module.warn(_terminal.escape(warning, keep='\n'))


def report(module, plan):
    """The result of a read-only module: the plan's facts (it has no changes), its warnings emitted."""
    warn(module, plan.warnings)
    result = dict(plan.facts)
    result['changed'] = False
    return result


def apply(module, plan, backup=False, backup_dir=None):
    """Carry out ``plan`` (nothing in check mode) and return the module's result.

    The result holds the plan's facts, ``changed``, ``files`` ([{path, action,
    backup_file}], one per changed file, in order) and, in diff mode, ``diff``. The plan's
    warnings are emitted. Raises :class:`ApplyError` when a write fails (after putting back
    the files already written), or before anything is written when a file's lock is not held
    (:func:`locked_apply` takes them).
    """
    unlocked = [c.path for c in plan.changes if not locked(c.path)]
    if unlocked:
        raise ApplyError('%s: this run does not hold the lock of %s; nothing was changed (a module writes only under '
                         '_io.locked_apply).' % (', '.join(unlocked), 'this file' if len(unlocked) == 1 else 'these files'))
    check_plan(plan)
    if backup and backup_dir and plan.changes:
        refuse_hazard(os.path.join(backup_dir, 'backup'))
    dangling = dangling_directory_link(os.path.join(backup_dir, 'backup')) if backup and backup_dir else None
    if dangling and plan.changes:
        raise ApplyError('backup_dir: %s is a symbolic link to %s, which does not exist; no backup is written through it. '
                         'Create the target, or remove the link, then run again; nothing was changed.'
                         % (dangling[0], dangling[1]))
    backup_dir = host_path(ROOT, backup_dir) if backup_dir else None
    files = []
    done = []
    for change in plan.changes:
        entry = {'path': change.path, 'action': change.action, 'backup_file': None}
        if not module.check_mode:
            real = _resolved(change.path)
            try:
                if change.after is None:
                    written = remove_file(module, real, backup, backup_dir)
                else:
                    written = write_file(module, real, change.after, change.mode, change.owner, change.group,
                                         backup, backup_dir, change.secret)
            except OSError as e:
                failed = _put_back(module, done)
                raise ApplyError('could not %s %s: %s. %s' % (
                    'remove' if change.after is None else 'write', change.path, os_error(e),
                    ('The files written before it were put back.' if not failed else
                     'These could not be put back: %s; restore them from their backups.' % ', '.join(failed))
                    if done else 'Nothing was changed.'))
            entry['backup_file'] = _node_path(written['backup_file'])
            done.append(change)
        files.append(entry)
    warn(module, plan.warnings)
    result = dict(plan.facts)
    result.update(changed=plan.changed, files=files)
    backups = [f['backup_file'] for f in files if f['backup_file']]
    if backups:
        result['backup_file'] = backups[0]
    if module._diff and plan.changed:
        result['diff'] = plan.diff()
    return result


# -- what does not fit a Plan: a file written in blocks, a directory swapped in ----------------------------------------
# k3s_backup's archive (MBs to GBs, its bytes from SQLite's backup API) and k3s_restore's datastore directory are not
# whole file contents in memory. They are written here by the same rules: under the lock (of the file, or of a
# directory above it: k3s_backup holds backup_dir's, k3s_restore server/db's), into a temp file or directory on the
# same file system, fsynced, renamed into place, the directory fsynced; each step that changed the node is recorded
# in a :class:`Written`, whose put_back() takes them back, newest first, when a later step fails.
def held(path):
    """Whether this process holds the lock of the host ``path`` or of a directory above it (as node_lock took them)."""
    probe = os.path.realpath(path)
    while True:
        if _HELD.get(probe):
            return True
        parent = os.path.dirname(probe)
        if parent == probe:
            return False
        probe = parent


def require_held(*paths):
    """ApplyError, before anything is written, for a host path whose lock (or a lock of a directory above it) is not
    held, or that another user could make land elsewhere (:func:`refuse_hazard`)."""
    unlocked = [p for p in paths if not held(p)]
    if unlocked:
        raise ApplyError('%s: this run does not hold the lock of %s; nothing was changed (a module writes only under '
                         '_io.node_lock).' % (', '.join(_node_path(p) for p in unlocked),
                                              'this path' if len(unlocked) == 1 else 'these paths'))
    for p in paths:
        refuse_hazard(_node_path(os.path.abspath(p)))


def fsync_dir(path):
    """fsync the directory ``path`` (host path), so that the renames in it survive a crash; best effort."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_tree(path, guard=None):
    """Remove the file or directory ``path`` (host path; a link itself, never what it points to), under the lock of
    ``guard`` (default ``path``)."""
    require_held(guard or path)
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def make_dir(path, mode=0o700, written=None, guard=None):
    """Create the directory ``path`` (host path) with ``mode`` whatever the umask, its missing parents 0755, under the
    lock of ``guard`` (default ``path``); whether it was made. ``written`` records its removal (when empty)."""
    require_held(guard or path)
    if os.path.isdir(path):
        return False
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent, 0o755)
    os.mkdir(path, mode)
    os.chmod(path, mode)
    if written is not None:
        written.add(lambda: os.rmdir(path))
    return True


class Written:
    """The steps a write outside a Plan took, each with its undo; :meth:`put_back` undoes them, newest first.
    A step may also leave something to drop once the whole write has succeeded (``discard``: an old file kept under
    a temp name for the undo): :meth:`commit` does that."""

    def __init__(self):
        self.undo = []
        self.discard = []

    def add(self, undo, discard=None):
        self.undo.append(undo)
        if discard is not None:
            self.discard.append(discard)

    def put_back(self):
        """Undo every step (newest first, best effort); the errors of the steps that could not be undone."""
        failed = []
        for step in reversed(self.undo):
            try:
                step()
            except OSError as e:
                failed.append(e)
        self.undo = []
        self.commit()
        return failed

    def commit(self):
        """The write is whole: drop what was kept only for an undo (best effort: a next run sweeps a temp name)."""
        for step in reversed(self.discard):
            try:
                step()
            except OSError:
                pass
        self.discard = []
        self.undo = []


@contextlib.contextmanager
def temp_dir(directory, prefix, guard=None, mode=0o700):
    """A new directory ``<prefix>*.tmp`` in ``directory`` (host path, on the file system of what it prepares) for the
    block; removed with what it holds when the block ends, however it ends. ``guard`` is the path whose lock the
    writes are under (default ``directory``): k3s_restore stages server/db beside it, under server/db's lock. What is
    written inside counts as held while the block runs (the directory is this run's own)."""
    require_held(guard or directory)
    path = tempfile.mkdtemp(prefix=prefix, suffix=TEMP_SUFFIX, dir=directory)
    key = os.path.realpath(path)
    _HELD[key] = _HELD.get(key, 0) + 1
    try:
        os.chmod(path, mode)
        yield path
    finally:
        _HELD[key] -= 1
        if not _HELD[key]:
            del _HELD[key]
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def scratch_files(files, prefix='bk3s-'):
    """``{name: path}`` of the files ``{name: bytes}`` for the block, in a new private directory (0700, files 0600,
    made with ``O_EXCL``) of the machine's temp directory, removed with them when the block ends, however it ends.

    For a program that reads only files (Python's ``ssl`` loads a client certificate and key from files: the
    extender probe's ``cert_data``/``key_data``). They are no file of the node's and never outlive the run: no lock,
    no fsync, no backup.
    """
    directory = tempfile.mkdtemp(prefix=prefix)
    try:
        os.chmod(directory, 0o700)
        paths = {}
        for name, data in files.items():
            if os.path.basename(name) != name or name in ('', '.', '..'):
                raise ValueError('%r is not a file name' % (name,))
            paths[name] = os.path.join(directory, name)
            fd = os.open(paths[name], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, 'wb') as f:
                f.write(data)
        yield paths
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@contextlib.contextmanager
def stream_file(path, mode=0o600, written=None, workdir=None, opener=open, replace=False, guard=None,
                before_rename=None):
    """Write the file ``path`` (host path) in blocks: the block gets a binary file to write to.

    The bytes go into a temp file - ``.<name>.bk3s-*.tmp`` beside ``path`` (stale ones of a killed write removed
    first), or ``<workdir>/<name>`` in a :func:`temp_dir` on the same file system - mode ``mode``; when the block ends
    it is fsynced and renamed to ``path``, and the directory fsynced. Without ``replace``, ``path`` must not exist
    (nothing is overwritten). On any failure the temp file goes and ``path`` is as it was; once renamed, ``written``
    records how to undo it (the new file removed, or the old bytes back) for a later put-back. ``opener(path, 'wb')``
    opens the temp file (tests hand in a full disk). ``guard``: the path whose lock the write is under (default
    ``path``; a file kept aside is under the lock of the file it keeps). ``before_rename()`` runs once the new bytes
    are on the disk, just before they get the name (k3s_binary keeps the old binary then).
    """
    require_held(guard or path)
    directory = os.path.dirname(path)
    old = _old_bytes(path) if replace and written is not None else None
    if workdir is None:
        for stale in stale_temps(path):
            remove_tree(stale, guard or path)
        fd, tmp = tempfile.mkstemp(prefix='.%s%s' % (os.path.basename(path), TEMP_INFIX), suffix=TEMP_SUFFIX,
                                   dir=directory)
    else:
        tmp = os.path.join(workdir, os.path.basename(path))
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    os.close(fd)
    try:
        with opener(tmp, 'wb') as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if not replace and os.path.lexists(path):
            raise ApplyError('%s appeared while it was written; nothing was replaced. Run again.' % _node_path(path))
        if before_rename is not None:
            before_rename()
        os.rename(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    if written is not None:
        written.add(lambda: os.unlink(path) if old is None else write_bytes(path, old, mode))
    fsync_dir(directory)


NO_HARD_LINKS = (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS)


def _temp_link(source, beside):
    """A hard link of the host file ``source`` under a new temp name beside ``beside`` (``.<name>.bk3s-*.tmp``, which
    :func:`stale_temps` of ``beside`` finds); None where the file system has no hard links."""
    directory, name = os.path.split(beside)
    for dummy in range(100):
        candidate = os.path.join(directory, '.%s%s%s%s' % (name, TEMP_INFIX, os.urandom(6).hex(), TEMP_SUFFIX))
        try:
            os.link(source, candidate)
            return candidate
        except FileExistsError:
            continue
        except OSError as e:
            if e.errno in NO_HARD_LINKS:
                return None
            raise
    raise ApplyError('no free temp file name in %s; nothing was changed.' % _node_path(directory))


def _rename_link(link, target):
    """Rename the hard link ``link`` over ``target``. When both already name one file (a run killed after it made the
    link), rename(2) does nothing and leaves ``link``: it is removed then."""
    os.rename(link, target)
    if os.path.lexists(link):
        os.unlink(link)


def remove_stale(path, guard=None):
    """Remove the temp files an earlier, killed write of the host ``path`` left (under its lock, or ``guard``'s)."""
    for stale in stale_temps(path):
        remove_tree(stale, guard or path)


def keep_copy(path, dest, written, copy=None, guard=None, mode=0o755):
    """``dest`` (a host path in the directory of ``path``) names the bytes ``path`` has now: a hard link renamed over
    it, fsynced; where the file system has no hard links, ``copy(f)`` writes them into a :func:`stream_file` of
    ``dest`` (``mode``). ``written`` records the undo (the old ``dest`` back, or ``dest`` removed when there was none)
    and drops the old ``dest`` on :meth:`Written.commit`. Under the lock of ``guard`` (default ``dest``)."""
    require_held(guard or dest)
    remove_stale(dest, guard or dest)
    had = os.path.lexists(dest)
    aside = _temp_link(dest, dest) if had else None
    try:
        link = _temp_link(path, dest)
        if link is not None:
            _rename_link(link, dest)
        elif copy is None:
            raise OSError(errno.EOPNOTSUPP, 'the file system has no hard links', dest)
        else:
            with stream_file(dest, mode, replace=True, guard=guard or dest) as f:
                copy(f)
    except BaseException:
        if aside is not None:
            os.unlink(aside)
        raise
    if aside is not None:
        written.add(lambda: _rename_link(aside, dest), lambda: os.unlink(aside) if os.path.lexists(aside) else None)
    elif not had:
        written.add(lambda: os.unlink(dest))
    fsync_dir(os.path.dirname(dest))


def _old_bytes(path):
    try:
        with open(path, 'rb') as f:
            return f.read()
    except FileNotFoundError:
        return None


def write_bytes(path, data, mode=0o600, written=None, replace=True, guard=None):
    """Write the small file ``path`` (host path; a link: the file it points to) with ``data`` (a token), by
    :func:`stream_file`'s rules; its old bytes come back on a put-back of ``written``."""
    with stream_file(os.path.realpath(path), mode, written=written, replace=replace, guard=guard) as f:
        f.write(data)


# a directory swapped in: renameat2(RENAME_EXCHANGE) where the kernel and the file system have it
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_SYS_RENAMEAT2 = {'x86_64': 316, 'aarch64': 276, 'ppc64le': 357, 's390x': 347, 'armv7l': 382, 'i686': 353}


def _libc():
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def exchange(a, b):
    """Swap the names ``a`` and ``b`` in one step (renameat2 with RENAME_EXCHANGE): at every instant each path names
    one of the two directories. OSError(ENOSYS/EINVAL) where the kernel or the file system cannot."""
    libc = _libc()
    fa, fb = os.fsencode(a), os.fsencode(b)
    if libc is not None and hasattr(libc, 'renameat2'):
        rc = libc.renameat2(_AT_FDCWD, fa, _AT_FDCWD, fb, _RENAME_EXCHANGE)
    elif libc is not None and os.uname().machine in _SYS_RENAMEAT2:
        rc = libc.syscall(_SYS_RENAMEAT2[os.uname().machine], _AT_FDCWD, fa, _AT_FDCWD, fb, _RENAME_EXCHANGE)
    else:
        raise OSError(errno.ENOSYS, 'renameat2 is not available')
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), a)


def replace_dir(new, current, aside, written):
    """``current`` (host path, locked) gets the directory ``new`` (staged in a :func:`temp_dir` beside it); the one it
    had goes to ``aside``, never deleted. With an exchange where the kernel has it (``current`` is never missing);
    else ``current`` renamed aside, then ``new`` in (a short instant without it). ``written`` records the undo."""
    require_held(current)
    try:
        exchange(new, current)
    except OSError as e:
        if e.errno not in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
            raise
        os.rename(current, aside)
        try:
            os.rename(new, current)
        except OSError:
            os.rename(aside, current)
            raise
        written.add(lambda: (shutil.rmtree(current), os.rename(aside, current)))
    else:
        try:
            os.rename(new, aside)  # the replaced directory, under its aside name
        except OSError:
            exchange(new, current)
            raise
        written.add(lambda: (exchange(aside, current), shutil.rmtree(aside)))
    fsync_dir(os.path.dirname(current))


def rename_dir(path, dest, written=None, undo='back', guard=None):
    """Rename the directory ``path`` to ``dest`` (host paths in one directory; ``dest`` must not exist) and fsync
    their directory, under the lock of ``guard`` (default: ``path`` or ``dest``, whichever is held). ``written``
    records the undo: ``back`` renames it back, ``remove`` removes ``dest``."""
    require_held(guard or (path if held(path) else dest))
    if os.path.lexists(dest):
        raise ApplyError('%s already exists; nothing was changed. Run again.' % _node_path(dest))
    os.rename(path, dest)
    if written is not None:
        written.add((lambda: os.rename(dest, path)) if undo == 'back' else (lambda: shutil.rmtree(dest)))
    fsync_dir(os.path.dirname(dest))
