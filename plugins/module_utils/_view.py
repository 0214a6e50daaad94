# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The node, read-only: the one thing the modules' logic reads the node through.

A :class:`View` answers every question a ``plan()`` or a read-only module asks of the node:
file contents, directory listings, symlinks, whether a place can be written, ``/proc``,
and the output of read-only commands (``systemctl show``, ``k3s --version``). It never
changes anything. Paths are the node's paths; ``root`` maps them somewhere else, so that
tests run the real logic against a directory tree they built, with a fake ``runner`` for
commands. The collection runs commands only from here: the View's ``runner``, and
:func:`run_foreground` for the one that must run in the foreground with a timeout
(k3s_restore's ``k3s server --cluster-reset``).

Every program run through :meth:`View.run` is bounded in time: :data:`RUN_TIMEOUT` seconds unless
the caller gives its own bound. A program that is not done by then is stopped (it and every process
below it: SIGTERM, then SIGKILL) and :class:`RunTimeout` is raised, a refusal whose message names the
command and the bound. The node's runner (``_io.node_view``: ``AnsibleModule.run_command`` watched by
a :class:`ProcessWatch`) stops the program itself; any other runner (a test's) is bounded by the View
all the same.

Pure standard library; no Ansible import.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import stat
import subprocess
import threading
import time

from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

# Seconds a program run on the node may take, unless its caller gives its own bound.
RUN_TIMEOUT = 60
# Seconds between SIGTERM and SIGKILL for a program past its bound.
TERM_GRACE = 3
TIMED_OUT = object()  # what a bounded runner returns for a program it had to stop
O_NOCTTY = getattr(os, 'O_NOCTTY', 0)
FS_IOC_GETFLAGS = 0x80086601  # _IOR('f', 1, long): the inode flags lsattr shows


class ViewError(Exception):
    """The node could not be read where it had to be; the message names the path and the reason."""


class RunTimeout(ViewError, PlanError):
    """A program the collection ran on the node did not finish within its bound and was stopped.

    A refusal like any other (a PlanError: every module fails with its message, nothing half done by
    this command); ``argv`` and ``seconds`` say which and how long.
    """

    def __init__(self, argv, seconds):
        self.argv = list(argv)
        self.seconds = seconds
        PlanError.__init__(self, '"%s" did not finish within %s s on this node and was stopped. The program hangs '
                                 'there: run it by hand to see why (a dead mount, a DNS or API server that does not '
                                 'answer, a broken binary), mend that, then run again.'
                           % (quote(argv), _seconds(seconds)))


def quote(argv):
    """A command as one line of printable text (for messages)."""
    return _terminal.escape(' '.join(argv))


def _seconds(value):
    return ('%d' % value) if float(value).is_integer() else ('%.1f' % value)


class View:
    """Read-only access to the node under ``root`` (``/`` on a real node).

    ``runner(argv[, stdin]) -> (rc, stdout, stderr)`` runs a command that leaves the collection's
    files alone (``systemctl show``, ``journalctl``, ``kubectl``: what kubectl changes is the cluster's;
    ``k3s etcd-snapshot save``: the snapshot is k3s's own file, in k3s's snapshot directory),
    rc None when the program does not exist; ``which(name)`` finds a program on the node's PATH.
    Both are optional: without them every command counts as missing.
    """

    MAX_SYMLINKS = 40

    def __init__(self, root='/', runner=None, which=None, hostname=None, clock=None, run_timeout=None):
        self.root = os.path.abspath(root)
        self._runner = runner
        self.run_timeout = RUN_TIMEOUT if run_timeout is None else run_timeout
        self._which = which
        self._hostname = hostname
        self.clock = clock or Clock()

    # -- paths ------------------------------------------------------------------------------
    def host_path(self, path):
        """Where the node's absolute ``path`` is on this machine (symlinks not resolved)."""
        if not os.path.isabs(path):
            raise ViewError('%s is not an absolute path' % path)
        return host_path(self.root, path)

    def realpath(self, path):
        """``path`` with every symlink resolved, as a node path (links are read inside ``root``)."""
        if not os.path.isabs(path):
            raise ViewError('%s is not an absolute path' % path)
        parts = [p for p in os.path.normpath(path).split('/') if p]
        resolved = '/'
        hops = 0
        while parts:
            part = parts.pop(0)
            if part == '..':
                resolved = os.path.dirname(resolved)
                continue
            candidate = os.path.join(resolved, part)
            try:
                target = os.readlink(self.host_path(candidate))
            except OSError:
                resolved = candidate
                continue
            hops += 1
            if hops > self.MAX_SYMLINKS:
                raise ViewError('%s: too many levels of symbolic links' % path)
            if os.path.isabs(target):
                resolved = '/'
            parts = [p for p in target.split('/') if p and p != '.'] + parts
        return resolved

    # -- files ------------------------------------------------------------------------------
    def read(self, path):
        """The bytes of file ``path`` (symlinks followed), or None when it does not exist."""
        return self._read(path, None)

    def read_text(self, path, default=None):
        data = self.read(path)
        return default if data is None else data.decode('utf-8', 'replace')

    def tail(self, path, size):
        """The last ``size`` bytes of file ``path`` (symlinks followed), or None when it does not exist.

        For logs that grow without bound (openrc's ``/var/log/k3s.log``): only the end is read.
        """
        return self._read(path, size)

    def open_regular(self, path):
        """A binary file object of the regular file ``path`` (symlinks followed); None when it does not exist.

        Opened without blocking (``O_NONBLOCK``: a FIFO planted where a file is expected would otherwise wait for a
        writer forever, holding the run's locks) and checked with ``fstat`` on what was opened: anything but a
        regular file (a FIFO, a socket, a device, a directory) is a :class:`ViewError` naming what it is.
        """
        try:
            return open_regular(self.host_path(self.realpath(path)), path)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def _read(self, path, last):
        """The whole file, or its last ``last`` bytes; None when it does not exist."""
        f = self.open_regular(path)
        if f is None:
            return None
        try:
            with f:
                if last is None:
                    return f.read()
                length = os.fstat(f.fileno()).st_size  # 0 for /proc files: those are read whole
                if length > last:
                    f.seek(length - last)
                data = f.read()
                return data[max(0, len(data) - last):]
        except OSError as e:
            raise ViewError('cannot read %s: %s' % (path, e.strerror or e))

    def _stat(self, path, follow=True):
        try:
            target = self.realpath(path) if follow else path
            return (os.stat if follow else os.lstat)(self.host_path(target))
        except (OSError, ViewError):
            return None

    def stat(self, path):
        """``os.stat`` of ``path`` (symlinks followed), None when it does not exist."""
        return self._stat(path)

    def lstat(self, path):
        """``os.lstat`` of ``path`` (a symlink itself, not its target), None when it does not exist."""
        return self._stat(path, follow=False)

    def exists(self, path):
        return self._stat(path) is not None

    def lexists(self, path):
        return self._stat(path, follow=False) is not None

    def isdir(self, path):
        st = self._stat(path)
        return st is not None and (st.st_mode & 0o170000) == 0o040000

    def isfile(self, path):
        st = self._stat(path)
        return st is not None and (st.st_mode & 0o170000) == 0o100000

    def islink(self, path):
        return os.path.islink(self.host_path(path))

    def mode(self, path):
        """Permission bits of ``path`` (links followed), None when it does not exist."""
        st = self._stat(path)
        return None if st is None else st.st_mode & 0o7777

    def mtime(self, path):
        st = self._stat(path)
        return None if st is None else st.st_mtime

    def listdir(self, path):
        """Sorted entry names of directory ``path``; None when it is missing or not a directory."""
        try:
            return sorted(os.listdir(self.host_path(self.realpath(path))))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            raise ViewError('cannot list %s: %s' % (path, e.strerror or e))

    def statvfs(self, path):
        """``os.statvfs`` of the file system holding ``path`` (symlinks followed), None when it does not exist."""
        try:
            return os.statvfs(self.host_path(self.realpath(path)))
        except (OSError, ViewError):
            return None

    def inode_flags(self, path):
        """The inode flags of ``path`` (symlinks followed), as ``lsattr`` shows them (``FS_IOC_GETFLAGS``: immutable
        0x10, append-only 0x20); None when it does not exist or its file system keeps none."""
        import fcntl  # pylint: disable=import-outside-toplevel
        import struct  # pylint: disable=import-outside-toplevel
        try:
            fd = os.open(self.host_path(self.realpath(path)), os.O_RDONLY | os.O_NONBLOCK | O_NOCTTY | getattr(os, 'O_CLOEXEC', 0))
        except (OSError, ViewError):
            return None
        try:
            return struct.unpack('i', fcntl.ioctl(fd, FS_IOC_GETFLAGS, b'\0' * 8)[:4])[0]
        except OSError:
            return None
        finally:
            os.close(fd)

    def writable(self, path):
        """Whether ``path`` (existing or not) could be replaced: the nearest existing directory on its
        way is writable and on a read-write file system, and an existing file is writable."""
        real = self.realpath(path)
        probe = os.path.dirname(real) or '/'
        while not self.isdir(probe):
            if probe == '/':
                return False
            probe = os.path.dirname(probe)
        host = self.host_path(probe)
        try:
            if os.statvfs(host).f_flag & os.ST_RDONLY:
                return False
        except OSError:
            return False
        if not os.access(host, os.W_OK | os.X_OK):
            return False
        return not self.exists(real) or os.access(self.host_path(real), os.W_OK)

    # -- /proc ------------------------------------------------------------------------------
    def proc(self, pid, name):
        """``/proc/<pid>/<name>`` as bytes, None when the process (or the file) is gone."""
        try:
            return self.read('/proc/%d/%s' % (int(pid), name))
        except ViewError:
            return None

    def cmdline(self, pid):
        """argv of process ``pid`` (empty for a kernel thread or a zombie), None when it is gone."""
        data = self.proc(pid, 'cmdline')
        if data is None:
            return None
        return [a.decode('utf-8', 'surrogateescape') for a in data.split(b'\0')[:-1]] if data else []

    def exe(self, pid):
        """The program process ``pid`` runs, as ``/proc/<pid>/exe`` names it (`` (deleted)`` appended when that file
        was removed or replaced since), None when the process is gone or the link cannot be read."""
        try:
            return os.readlink(self.host_path('/proc/%d/exe' % int(pid)))
        except (OSError, ValueError):
            return None

    def environ(self, pid):
        """The environment process ``pid`` started with (``/proc/<pid>/environ``) as a dict, None when it is gone
        or unreadable. Read-only; later changes the process made to its own environment are not in it."""
        data = self.proc(pid, 'environ')
        if data is None:
            return None
        env = {}
        for item in data.split(b'\0'):
            name, sep, value = item.partition(b'=')
            if sep and name:
                env[name.decode('utf-8', 'surrogateescape')] = value.decode('utf-8', 'surrogateescape')
        return env

    def pids(self):
        return sorted(int(n) for n in (self.listdir('/proc') or []) if n.isdigit())

    def proc_stat(self, pid):
        """Fields of ``/proc/<pid>/stat``: comm, state, ppid, starttime (clock ticks since boot); None when gone.

        The command name may hold spaces and parentheses: fields are split after the *last* ``)``.
        """
        data = self.proc(pid, 'stat')
        if not data or b')' not in data:
            return None
        head, tail = data.decode('utf-8', 'replace').rsplit(')', 1)
        fields = tail.split()
        if len(fields) < 20:
            return None
        try:
            return {'pid': int(pid), 'comm': head.split('(', 1)[1] if '(' in head else '', 'state': fields[0],
                    'ppid': int(fields[1]), 'starttime': int(fields[19])}
        except ValueError:
            return None

    def boot_time(self):
        """``btime`` of /proc/stat: boot time in whole seconds since the epoch, or None."""
        for line in (self.read_text('/proc/stat') or '').splitlines():
            if line.startswith('btime '):
                try:
                    return int(line.split()[1])
                except (IndexError, ValueError):
                    return None
        return None

    def cpu_count(self):
        """CPUs online: ``/sys/devices/system/cpu/online`` (``0-3,6``), else the ``processor`` lines of
        ``/proc/cpuinfo``; None when neither can be read."""
        online = (self.read_text('/sys/devices/system/cpu/online') or '').strip()
        if online:
            count = 0
            try:
                for part in online.split(','):
                    first, dummy, last = part.strip().partition('-')
                    count += int(last or first) - int(first) + 1
            except ValueError:
                count = 0
            if count > 0:
                return count
        text = self.read_text('/proc/cpuinfo') or ''
        count = sum(1 for line in text.splitlines() if line.split(':', 1)[0].strip() == 'processor')
        return count or None

    def meminfo(self):
        """``/proc/meminfo`` as {field: kB} (``MemTotal``, ``MemAvailable``...); empty when it cannot be read."""
        out = {}
        for line in (self.read_text('/proc/meminfo') or '').splitlines():
            key, sep, rest = line.partition(':')
            words = rest.split()
            if sep and words:
                try:
                    out[key.strip()] = int(words[0])
                except ValueError:
                    continue
        return out

    def process_start(self, pid):
        """When process ``pid`` started, in seconds since the epoch (to a clock tick and the boot second); None when unknown."""
        stat = self.proc_stat(pid)
        btime = self.boot_time()
        if stat is None or btime is None or stat['state'] in ('Z', 'X', 'x'):
            return None
        return btime + stat['starttime'] / float(clk_tck())

    # -- commands ---------------------------------------------------------------------------
    def run(self, argv, stdin=None, timeout=None):
        """``(rc, stdout, stderr)`` of a command, with ``stdin`` (bytes or text) on its input when given;
        rc None when the program is missing. :class:`RunTimeout` when it did not finish within ``timeout``
        seconds (default :attr:`run_timeout`): it was stopped."""
        if self._runner is None:
            return None, '', ''
        argv = list(argv)
        seconds = self.run_timeout if timeout is None else timeout
        if getattr(self._runner, 'bounded', False):
            result = self._runner(argv, stdin, seconds)
        else:
            result = within(seconds, lambda: self._runner(argv) if stdin is None else self._runner(argv, stdin))
        if result is TIMED_OUT:
            raise RunTimeout(argv, seconds)
        return result

    def which(self, name):
        """The node path of program ``name`` on its PATH, None when there is none."""
        return self._which(name) if self._which is not None else None

    def hostname(self):
        if self._hostname is not None:
            return self._hostname
        text = self.read_text('/proc/sys/kernel/hostname')
        return (text or socket.gethostname()).strip()


def within(seconds, call):
    """``call()``'s result, or :data:`TIMED_OUT` when it has not returned after ``seconds`` (it goes on in a daemon
    thread, which the module's exit ends): the bound of a runner that does not stop its program itself."""
    box = {}

    def target():
        try:
            box['result'] = call()
        except BaseException as e:  # pylint: disable=broad-exception-caught  # re-raised in the caller's thread
            box['error'] = e

    worker = threading.Thread(target=target, name='baremetal-k3s-run', daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        return TIMED_OUT
    if 'error' in box:
        raise box['error']
    return box['result']


def _children(pid):
    """Every live process below ``pid`` (read from the machine's /proc), deepest last."""
    parents = {}
    try:
        names = os.listdir('/proc')
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % name, 'rb') as f:
                fields = f.read().rsplit(b')', 1)[1].split()
            parents.setdefault(int(fields[1]), []).append(int(name))
        except (OSError, IndexError, ValueError):
            continue
    out, todo = [], list(parents.get(pid, []))
    while todo:
        child = todo.pop(0)
        if child not in out:
            out.append(child)
            todo.extend(parents.get(child, []))
    return out


class ProcessWatch:
    """The bound of one started program: :meth:`start` (handed the Popen object, as ``AnsibleModule.run_command``'s
    ``before_communicate_callback`` is) arms a timer; when it fires, the program and every process below it get
    SIGTERM, then SIGKILL after :data:`TERM_GRACE` seconds, and :attr:`fired` says so. :meth:`cancel` once it ended."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.fired = False
        self._timer = None
        self._done = threading.Event()

    def start(self, proc):
        self._timer = threading.Timer(self.seconds, self._fire, [proc])
        self._timer.daemon = True
        self._timer.start()

    def cancel(self):
        self._done.set()
        if self._timer is not None:
            self._timer.cancel()

    def _fire(self, proc):
        if self._done.is_set() or proc.poll() is not None:
            return
        self.fired = True
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in [proc.pid] + _children(proc.pid):
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
            if self._done.wait(TERM_GRACE) or proc.poll() is not None and not _children(proc.pid):
                return


def run_bounded(argv, stdin=None, timeout=RUN_TIMEOUT, env=None):
    """``(rc, stdout, stderr)`` of ``argv`` (its program an executable path) as text, or :data:`TIMED_OUT` when it
    did not finish within ``timeout`` seconds (it and what it started were stopped); rc None when the program cannot
    be found. The runner of a View that has no Ansible module to run commands with (the unit tests' node); a module's
    runner is ``AnsibleModule.run_command`` bounded by the same :class:`ProcessWatch` (``_io.node_view``)."""
    data = stdin.encode('utf-8', 'surrogateescape') if isinstance(stdin, str) else stdin
    watch = ProcessWatch(RUN_TIMEOUT if timeout is None else timeout)
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd='/', close_fds=True)
    except (FileNotFoundError, NotADirectoryError):
        return None, '', ''
    watch.start(proc)
    try:
        out, err = proc.communicate(input=data)
    finally:
        watch.cancel()
    if watch.fired:
        return TIMED_OUT
    return proc.returncode, out.decode('utf-8', 'surrogateescape'), err.decode('utf-8', 'surrogateescape')


def run_foreground(argv, env, timeout):
    """(exit code, output) of ``argv`` run in its own session, in the foreground, with the environment ``env``; after
    ``timeout`` seconds it and its children are ended (SIGTERM, then SIGKILL) and the exit code is None.

    The one command that is no View question: k3s_restore's ``k3s server --cluster-reset``, which must run as the
    service would, outlive no timeout, and leave no child behind (the module's ``run_command`` does neither).
    """
    proc = subprocess.Popen(argv, env=env, cwd='/', stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, dummy = proc.communicate(timeout=timeout)
        return proc.returncode, out.decode('utf-8', 'replace')
    except subprocess.TimeoutExpired:
        for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, None)):
            try:
                os.killpg(proc.pid, sig)
            except OSError:
                pass
            try:
                out, dummy = proc.communicate(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        return None, (out or b'').decode('utf-8', 'replace')


def clk_tck():
    """Clock ticks per second, the unit of /proc/<pid>/stat starttime."""
    try:
        return os.sysconf('SC_CLK_TCK')
    except (ValueError, OSError, AttributeError):
        return 100


def host_path(root, path):
    """The node's ``path`` under ``root`` (``root`` ``/``: the path itself)."""
    if root == '/':
        return path
    return os.path.join(root, path.lstrip('/'))


class Clock:
    """The node's clocks, and sleeping. Tests hand in a fake with the same methods."""

    def realtime(self):
        return time.clock_gettime(time.CLOCK_REALTIME)

    def monotonic(self):
        return time.clock_gettime(time.CLOCK_MONOTONIC)

    def boottime(self):
        return time.clock_gettime(getattr(time, 'CLOCK_BOOTTIME', time.CLOCK_MONOTONIC))

    def sleep(self, seconds):
        time.sleep(seconds)


def open_regular(host, shown=None):
    """A binary file object of the regular file at the host path ``host`` (links followed), opened without blocking
    and checked by ``fstat``: a FIFO, socket, device or directory is a :class:`ViewError` naming ``shown`` (default
    ``host``) and what it is. FileNotFoundError/NotADirectoryError when it does not exist. The one way a file of the
    node is opened for reading: :meth:`View.open_regular`, and the modules that read a file by its host path
    (k3s_backup, k3s_restore)."""
    shown = shown or host
    try:
        fd = os.open(host, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | O_NOCTTY)
    except (FileNotFoundError, NotADirectoryError):
        raise
    except OSError as e:
        raise ViewError('cannot read %s: %s' % (shown, e.strerror or e))
    try:
        mode = os.fstat(fd).st_mode
    except OSError as e:
        os.close(fd)
        raise ViewError('cannot read %s: %s' % (shown, e.strerror or e))
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ViewError('%s is %s, not a regular file; only a regular file is read there. Remove it or give another '
                        'path' % (shown, file_kind(mode)))
    return os.fdopen(fd, 'rb')


def file_kind(mode):
    """What a file of ``st_mode`` ``mode`` is, in words (``a FIFO (named pipe)``, ``a directory``...)."""
    for test, words in ((stat.S_ISDIR, 'a directory'), (stat.S_ISFIFO, 'a FIFO (named pipe)'), (stat.S_ISSOCK, 'a socket'),
                        (stat.S_ISCHR, 'a character device'), (stat.S_ISBLK, 'a block device'),
                        (stat.S_ISLNK, 'a symbolic link'), (stat.S_ISREG, 'a regular file')):
        if test(mode):
            return words
    return 'a special file'


def is_missing(error):
    """Whether an OSError means "no such file" (also through a missing directory)."""
    return getattr(error, 'errno', None) in (errno.ENOENT, errno.ENOTDIR)
