# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The advisory locks (``flock``) of this collection's runs on one node: who may touch what, when.

``_io.node_lock`` is the way modules take them; this module holds the mechanism.

**The directory.** ``/run/baremetal-k3s/locks``, made 0700 where missing. On a node ``/run``
takes new entries from root alone, so no user can make it first (``/run/lock`` is
world-writable: any local user could make a directory there, 0777, and fill it with links to
root's files). Every component is opened with ``O_NOFOLLOW`` relative to the one above it and
checked on the open descriptor: a real directory, owned by root, not writable by group or
others (``/run`` itself may be world-writable if sticky, as Docker's ``--tmpfs`` makes it:
there a user could make ``baremetal-k3s`` first, and is refused). Anything else is refused,
naming the directory: nothing is opened in it.

**A lock file** is opened inside that directory's descriptor with ``O_NOFOLLOW | O_CLOEXEC``
(``O_NONBLOCK``: a planted fifo or device cannot hang or wake anything); created with
``O_EXCL``, or else checked with ``fstat`` after open: a regular file, ours, one link. It is
never truncated through a path, only through the checked descriptor.

**Keys.** A lock is named by the SHA-256 of its *form*. A file (any spelling: symlinks,
``..``, a bind mount, a directory of the path not made yet) has one form per directory that
exists above it, ``file <dev> <ino> <the rest of the path below it>``, and its lock is all
of them. The file's own inode would not do: every write renames a new one into place.
Nor would its directory alone: a run that makes the directory keys the file by the directory
above it, and a run that starts after the directory appeared must still meet it; they share
the form of that upper directory. A form names one file, so two files never share a lock.
A *name* (a service) has the form ``key <name>``.

**Order.** A run takes all its locks at once, sorted by name, so no two runs can each hold
a lock the other waits for.

**No growth.** The holder unlinks a lock file while still holding it, then closes it. A run
that was waiting on that file gets the lock of a file no longer in the directory, so after
every ``flock`` the descriptor is compared with what the name holds now (``fstat`` against
``stat``), and on a difference the lock is taken again on the file there now. The files a
killed run left are swept by later runs the same way (take the lock without waiting, check,
unlink).

Pure standard library; no Ansible import.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import stat
import tempfile
import time

LOCK_BASE = '/run'
LOCK_SUBDIRS = ('baremetal-k3s', 'locks')
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class LockError(Exception):
    """A lock could not be taken safely; ``msg`` says what was found and what to do."""

    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg


class LockTimeout(LockError):
    """Another holder kept the lock of ``what`` past the timeout; ``holder`` describes it."""

    def __init__(self, what, holder):
        super().__init__('%s is locked by %s' % (what, holder))
        self.what = what
        self.holder = holder


# -- the directory ----------------------------------------------------------------------------
def location():
    """(base, subdirectories) of this process's lock directory.

    Root's is ``/run/baremetal-k3s/locks``. A run as another user (which can only change its own
    files) gets one of its own: under ``/run/user/<uid>``, else under the temp directory.
    """
    euid = os.geteuid()
    if euid == 0:
        return LOCK_BASE, LOCK_SUBDIRS
    run_user = '/run/user/%d' % euid
    if os.path.isdir(run_user):
        return run_user, LOCK_SUBDIRS
    return tempfile.gettempdir(), ('baremetal-k3s-%d' % euid, 'locks')


def lock_dir():
    """The path of this process's lock directory."""
    base, subdirs = location()
    return os.path.join(base, *subdirs)


def _refuse_dir(path, why, system=False):
    if system:  # /run itself
        what, fix = '%s (where the lock directory %s goes)' % (path, lock_dir()), "make it root's and not writable by others"
    else:
        what, fix = 'the lock directory %s' % path, 'remove it (it holds nothing but locks and node_lease\'s leases)'
    return LockError("%s %s, so no lock is taken in it: another local user could turn this collection's locks against "
                     'root through it (a run would write into the file of their choice). Find out who made it so, %s, '
                     'then run again.' % (what, why, fix))


def _trust(fd, path, system=False):
    """Refuse the directory open at ``fd`` unless only root (or this user) can change what is in it.

    The ``system`` one (``/run``) may be writable by all if sticky: nobody else can then rename or
    remove what root made in it.
    """
    st = os.fstat(fd)
    if not stat.S_ISDIR(st.st_mode):
        raise _refuse_dir(path, 'is not a directory', system)
    if st.st_uid not in (0, os.geteuid()):
        raise _refuse_dir(path, 'is owned by uid %d, not by root' % st.st_uid, system)
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022 and not (system and mode & stat.S_ISVTX):
        raise _refuse_dir(path, 'can be written by %s (mode %04o)'
                          % ('group and others' if mode & 0o022 == 0o022 else 'others' if mode & 0o002 else 'its group',
                             mode), system)


def open_dir():
    """(descriptor, path) of the lock directory, made where missing; :class:`LockError` when it cannot be trusted."""
    base, subdirs = location()
    try:
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise LockError('cannot open %s to keep the locks in: %s.' % (base, e.strerror or e))
    path = base
    try:
        _trust(fd, path, system=True)
        for name in subdirs:
            path = os.path.join(path, name)
            made = False
            while True:
                try:
                    sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
                    break
                except FileNotFoundError:
                    try:
                        os.mkdir(name, 0o700, dir_fd=fd)
                        made = True
                    except FileExistsError:
                        pass
                    except OSError as e:
                        raise LockError('cannot make the lock directory %s: %s. The modules of this collection that '
                                        'change files run as root (become: true).' % (path, e.strerror or e))
                except OSError as e:
                    if e.errno in (errno.ELOOP, errno.ENOTDIR):
                        if _is_link(fd, name):
                            raise _refuse_dir(path, 'is a symbolic link (to %s)' % _readlink(fd, name))
                        raise _refuse_dir(path, 'is not a directory')
                    raise LockError('cannot open the lock directory %s: %s.' % (path, e.strerror or e))
            os.close(fd)
            fd = sub
            if made:
                os.fchmod(fd, 0o700)  # whatever the umask
            _trust(fd, path)
    except BaseException:
        os.close(fd)
        raise
    return fd, path


def _is_link(dirfd, name):
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dirfd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _readlink(dirfd, name):
    try:
        return os.readlink(name, dir_fd=dirfd)
    except OSError:
        return '?'


# -- names -------------------------------------------------------------------------------------
def file_forms(path):
    """The forms of the file at ``path`` (absolute, every symlink already resolved): one per existing directory above it."""
    forms = []
    rel = os.path.basename(path)
    directory = os.path.dirname(path)
    while True:
        try:
            st = os.stat(directory)
        except OSError:
            st = None  # not made yet (or not ours to see): the directories above still meet every other spelling
        if st is not None:
            forms.append('file %d %d %s' % (st.st_dev, st.st_ino, rel))
        parent = os.path.dirname(directory)
        if parent == directory:
            return forms
        rel = os.path.join(os.path.basename(directory), rel)
        directory = parent


def key_form(key):
    """The form of the lock named ``key`` (a service, a datastore): the same string, the same lock."""
    return 'key %s' % key


def wanted(keys, files):
    """{form: what it guards} of the locks named ``keys`` and of ``files`` ({what: absolute path, links resolved})."""
    out = {key_form(key): key for key in keys}
    for what, path in files.items():
        for form in file_forms(path):
            out.setdefault(form, what)
    return out


def lock_name(form):
    """The file name of the lock of ``form`` in the lock directory."""
    return hashlib.sha256(form.encode('utf-8', 'surrogateescape')).hexdigest()[:40] + '.lock'


# -- one lock file -----------------------------------------------------------------------------
def _refuse_file(dirpath, name, what):
    path = os.path.join(dirpath, name)
    return LockError('%s is %s, not a lock file of this collection: only root can write in %s, so something other than '
                     'this collection put it there. Nothing was written to it and nothing was changed; find out '
                     'what made it, remove it, then run again.' % (path, what, dirpath))


def _open(dirfd, dirpath, name):
    """A descriptor of lock file ``name`` (made if missing), checked; None when it vanished meanwhile."""
    try:
        return os.open(name, _FILE_FLAGS | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=dirfd)
    except FileExistsError:
        pass
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dirfd)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _refuse_file(dirpath, name, 'a symbolic link (to %s)' % _readlink(dirfd, name))
        raise LockError('cannot open the lock file %s: %s.' % (os.path.join(dirpath, name), e.strerror or e))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse_file(dirpath, name, 'not a regular file')
        if st.st_uid != os.geteuid():
            raise _refuse_file(dirpath, name, 'owned by uid %d' % st.st_uid)
        if st.st_nlink > 1:
            raise _refuse_file(dirpath, name, 'a hard link (one of %d names of one file)' % st.st_nlink)
    except BaseException:
        os.close(fd)
        raise
    if st.st_nlink == 0:  # its holder unlinked it between our two opens
        os.close(fd)
        return None
    return fd


def _same(fd, dirfd, name):
    """Whether ``name`` in the directory is still the file open at ``fd``."""
    try:
        now = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except OSError:
        return False
    st = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino)


def holder(fd):
    """Who holds the lock open at ``fd``, from the record its holder wrote."""
    try:
        data = json.loads(os.pread(fd, 4096, 0).decode('utf-8', 'replace') or '{}')
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return 'holder unknown'
    return 'pid %s, %s, since %s' % (data.get('pid', '?'), data.get('module') or 'a module', data.get('since', '?'))


def _lock_one(dirfd, dirpath, name, what, deadline, sleep):
    """The descriptor of ``name``, locked, still in the directory; :class:`LockTimeout` after ``deadline``."""
    pause = 0.01
    while True:
        fd = _open(dirfd, dirpath, name)
        if fd is None:  # removed between our two opens: try again
            if time.monotonic() >= deadline:
                raise LockTimeout(what, 'holder unknown')
            continue
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as e:
                    if e.errno not in (errno.EAGAIN, errno.EACCES):
                        raise
                if time.monotonic() >= deadline:
                    raise LockTimeout(what, holder(fd))
                sleep(pause)
                pause = min(pause * 2, 0.2)
            if _same(fd, dirfd, name):
                return fd
            if time.monotonic() >= deadline:
                raise LockTimeout(what, 'holder unknown')
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # its holder removed the file while we waited: lock the one that is there now


# -- a set of locks ----------------------------------------------------------------------------
class Held:
    """The locks one run holds; :meth:`release` gives them back and removes their files."""

    def __init__(self, dirfd, dirpath):
        self.dirfd = dirfd
        self.dirpath = dirpath
        self.fds = {}

    @property
    def names(self):
        return sorted(self.fds)

    def release(self):
        for name in sorted(self.fds, reverse=True):
            fd = self.fds.pop(name)
            try:
                if _same(fd, self.dirfd, name):
                    os.unlink(name, dir_fd=self.dirfd)  # still holding it: a waiter sees the name gone and retries
            except OSError:
                pass
            finally:
                os.close(fd)
        if self.dirfd is not None:
            try:
                sweep(self.dirfd)  # what killed runs left: the directory holds no more than the locks held now
            finally:
                os.close(self.dirfd)
                self.dirfd = None


def sweep(dirfd):
    """Remove the lock files nobody holds (left by killed runs); those in use stay, and what is not ours."""
    try:
        names = [n for n in os.listdir(dirfd) if n.endswith('.lock')]
    except OSError:
        return
    for name in names:
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dirfd)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_nlink != 1:
                continue  # not ours: left alone (taking its lock reports it)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if _same(fd, dirfd, name):
                os.unlink(name, dir_fd=dirfd)
        except OSError:
            pass  # held by a live run, or gone already
        finally:
            os.close(fd)


def acquire(wanted, timeout, sleep=time.sleep, record=None):
    """Take every lock of ``wanted`` ({form: what it guards, for messages}) in the order of their names.

    ``record`` (a dict) is written into each lock file for a waiter's message. Raises
    :class:`LockError` (refused) or :class:`LockTimeout`; on either, nothing stays held.
    """
    dirfd, dirpath = open_dir()
    held = Held(dirfd, dirpath)
    by_name = {}
    for form, what in wanted.items():
        by_name.setdefault(lock_name(form), what)
    deadline = time.monotonic() + timeout
    data = (json.dumps(record or {}, sort_keys=True) + '\n').encode()
    try:
        for name in sorted(by_name):
            fd = _lock_one(dirfd, dirpath, name, by_name[name], deadline, sleep)
            held.fds[name] = fd
            os.ftruncate(fd, 0)  # the descriptor checked above, never a path
            os.pwrite(fd, data, 0)
    except BaseException:
        held.release()
        raise
    return held
