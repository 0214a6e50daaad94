# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A node for module tests: a directory tree standing for ``/``, and stand-ins for its commands.

The modules read the node through ``_io.node_view`` and write under ``_io.ROOT``; the
fixture points both at a temp dir, so a module's real ``main()`` runs against files the
test wrote, with node paths (``/etc/...``) in its results. Commands (``systemctl show``,
``k3s --version``, ``rc-service``) answer from what the test set.
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils._view import View, run_bounded
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import SCHEDULER_KUBECONFIG

import installer  # pylint: disable=import-error

BOOT = 1_700_000_000  # /proc/stat btime of the fake node


class _NodeView(View):
    """The View a module gets: the tree, with read-only places and commands as the test set them."""

    def __init__(self, node):
        super().__init__(root=node.root, runner=node.run, which=node.which, hostname=node.hostname, clock=node.clock)
        self.node = node

    def writable(self, path):
        real = self.realpath(path)
        if any(real == r or real.startswith(r.rstrip('/') + '/') for r in self.node.readonly):
            return False
        return super().writable(path)

    def inode_flags(self, path):
        """The flags the test set in ``node.attributes`` for ``path`` (links followed), 0 for any other existing path."""
        if not self.exists(path):
            return None
        return self.node.attributes.get(self.realpath(path), 0)

    def statvfs(self, path):
        """The file system the test set with ``node.filesystem()`` that holds ``path`` (the longest mount point
        above it), else the real one of the tree; every path asked is in ``node.statvfs_calls``."""
        self.node.statvfs_calls.append(path)
        if not self.exists(path):
            return None
        real = self.realpath(path)
        mounts = [m for m in self.node.filesystems if real == m or real.startswith(m.rstrip('/') + '/')]
        if not mounts:
            return super().statvfs(path)
        return self.node.filesystems[max(mounts, key=len)]


class FakeNode:
    """A node root under a temp dir."""

    def __init__(self, root, monkeypatch):
        self.root = str(root)
        self.readonly = set()       # node paths on a read-only file system
        self.units = {}             # systemctl show answers: {'k3s.service': {'MainPID': '0', ...}}
        self.commands = {}          # {program (argv[0]): callable(argv) -> (rc, out, err)}
        self.hostname = 'Node-1.Example'
        self.path_bins = {}         # {program: node path} found on the node's PATH
        self.calls = []
        self.clock = None           # the node's clocks (realtime, monotonic, boottime, sleep); None: the real ones
        self.filesystems = {}       # {mount point: os.statvfs_result} that View.statvfs answers (node.filesystem())
        self.statvfs_calls = []     # the node paths View.statvfs was asked about
        self.attributes = {}        # {node path: inode flags} that View.inode_flags answers (chattr +i: 0x10, +a: 0x20)
        monkeypatch.setattr(_io, 'ROOT', self.root)
        monkeypatch.setattr(_io, 'node_view', lambda module: _NodeView(self))
        for d in ('/etc/systemd/system', '/etc/rancher/k3s', '/usr/local/bin', '/proc'):
            os.makedirs(self.p(d), exist_ok=True)
        self.write('/proc/stat', 'cpu 0\nbtime %d\n' % BOOT)

    # -- files --------------------------------------------------------------------------------
    def p(self, path):
        """Where the node's ``path`` is in the tree."""
        return os.path.join(self.root, path.lstrip('/'))

    def write(self, path, data, mode=None):
        host = self.p(path)
        os.makedirs(os.path.dirname(host), exist_ok=True)
        with open(host, 'wb') as f:
            f.write(data.encode('utf-8') if isinstance(data, str) else data)
        if mode is not None:
            os.chmod(host, mode)
        return path

    def read(self, path):
        try:
            with open(self.p(path), 'rb') as f:
                return f.read()
        except FileNotFoundError:
            return None

    def exists(self, path):
        return os.path.lexists(self.p(path))

    def mode(self, path):
        return os.stat(self.p(path)).st_mode & 0o7777

    def unlink(self, path):
        os.unlink(self.p(path))

    def makedirs(self, path):
        os.makedirs(self.p(path), exist_ok=True)

    def symlink(self, target, path):
        os.makedirs(os.path.dirname(self.p(path)), exist_ok=True)
        os.symlink(target, self.p(path))

    def listdir(self, path):
        return sorted(os.listdir(self.p(path)))

    def tree(self, under='/', skip=('/proc',)):
        """{node path: (bytes or link target, mode)} of every file and symlink under ``under`` (``/proc`` left out):
        compare two trees to prove that a run touched nothing, or exactly what it should."""
        out = {}
        for d, dirs, files in os.walk(self.p(under)):
            rel = os.path.relpath(d, self.root)
            node_dir = '/' if rel == '.' else '/' + rel
            dirs[:] = [n for n in dirs if os.path.join(node_dir, n) not in skip]
            for name in files + [n for n in dirs if os.path.islink(os.path.join(d, n))]:
                host = os.path.join(d, name)
                path = os.path.join(node_dir, name)
                if os.path.islink(host):
                    out[path] = ('-> ' + os.readlink(host), None)
                else:
                    with open(host, 'rb') as f:
                        out[path] = (f.read(), os.stat(host).st_mode & 0o7777)
            out.update({os.path.join(node_dir, n) + '/': (None, None) for n in dirs})
        return out

    def socket(self, path):
        """A unix socket file at ``path``, bound (not listening) from its directory, so the tree's path length does not count."""
        import socket  # pylint: disable=import-outside-toplevel
        directory = os.path.dirname(self.p(path))
        os.makedirs(directory, exist_ok=True)
        cwd = os.getcwd()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            os.chdir(directory)
            sock.bind(os.path.basename(path))
        finally:
            os.chdir(cwd)
            sock.close()
        return path

    def fifo(self, path):
        """A named pipe at ``path`` (a file that is neither a regular file, a directory, a socket nor a device)."""
        os.makedirs(os.path.dirname(self.p(path)), exist_ok=True)
        os.mkfifo(self.p(path))
        return path

    def filesystem(self, mount, free_mb, size_mb=None, block=4096, readonly=False):
        """A file system mounted at ``mount`` with ``free_mb`` MiB available (statvfs f_bavail), ``size_mb`` in all;
        ``readonly``: mounted read-only (f_flag ST_RDONLY)."""
        size_mb = max(size_mb or 0, free_mb)
        blocks, free = size_mb * 2 ** 20 // block, free_mb * 2 ** 20 // block
        flag = os.ST_RDONLY if readonly else 0
        self.filesystems[mount] = os.statvfs_result((block, block, blocks, free, free, 1000, 500, 500, flag, 255))
        return mount

    def mountinfo(self, *points):
        """/proc/self/mountinfo with a line for each mount point in ``points`` (after the root's), as the kernel writes
        it (a space in a path as ``\\040``)."""
        lines = ['22 1 0:21 / / rw,relatime shared:1 - overlay overlay rw']
        for n, point in enumerate(points):
            escaped = point.replace(' ', '\\040')
            lines.append('%d 22 8:%d / %s rw,relatime - ext4 /dev/sd%s rw' % (30 + n, n, escaped, chr(98 + n)))
        self.write('/proc/self/mountinfo', '\n'.join(lines) + '\n')

    def install(self, command='server', args=(), init='systemd', name='', systemd_dir='/etc/systemd/system',
                bin_dir='/usr/local/bin', environ=None):
        """The files k3s's installer writes; returns the unit's (or init script's) node path."""
        files = installer.generate(command, list(args), name=name, init=init, systemd_dir=systemd_dir,
                                   bin_dir=bin_dir, environ=environ)
        return self.install_files(files)

    def install_files(self, files):
        for f in files:
            self.write(f.path, f.content, f.mode)
        return files[0].path

    # -- processes and commands ------------------------------------------------------------------
    def process(self, pid, argv, ppid=1, started=None, state='S'):
        """A process in /proc: its argv, parent and start time (epoch seconds, to a clock tick)."""
        ticks = os.sysconf('SC_CLK_TCK')
        start = int(round(((started if started is not None else BOOT + 100) - BOOT) * ticks))
        fields = [state, str(ppid)] + ['0'] * 17 + [str(start)] + ['0'] * 20
        self.write('/proc/%d/cmdline' % pid, b''.join(a.encode() + b'\0' for a in argv))
        self.write('/proc/%d/stat' % pid, '%d (%s) %s\n' % (pid, os.path.basename(argv[0]) if argv else 'x', ' '.join(fields)))

    def run_programs(self):
        """Run the node's own programs for real from now on: a command's ``argv[0]`` is the file in the tree (links
        inside the tree followed; a bare name: its ``path_bins`` entry), recorded in ``calls``; a missing or
        non-executable one answers rc None. A program that hangs is stopped as the node's runner stops it."""
        def run(argv, stdin=None, timeout=None):
            self.calls.append(list(argv))
            program = argv[0] if argv[0].startswith('/') else self.path_bins.get(argv[0])
            if program is None:
                return None, '', ''
            host = self.p(View(root=self.root).realpath(program))
            if not (os.path.isfile(host) and os.access(host, os.X_OK)):
                return None, '', ''
            return run_bounded([host] + list(argv[1:]), stdin, timeout)  # the node's own runner: it stops what hangs
        run.bounded = True
        self.run = run

    def service(self, unit, pid=0, active=None, need_reload=False, **props):
        """What ``systemctl show <unit>`` answers."""
        values = {'MainPID': str(pid), 'ActiveState': active or ('active' if pid else 'inactive'),
                  'NeedDaemonReload': 'yes' if need_reload else 'no'}
        values.update({k: str(v) for k, v in props.items()})
        self.units[unit if unit.endswith('.service') else unit + '.service'] = values

    def which(self, name):
        if name in self.path_bins:
            return self.path_bins[name]
        if name in self.commands or (name == 'systemctl' and self.units is not None):
            return '/usr/bin/' + name
        return None

    def run(self, argv, stdin=None):
        """A command through the view: systemctl show from ``units``, else ``commands[argv[0] or its name]``
        (called with ``stdin`` as a second argument when the module gave one)."""
        self.calls.append(list(argv))
        name = os.path.basename(argv[0])
        if name == 'systemctl' and argv[1:2] == ['show'] and self.units is not None:
            unit = argv[-1]
            props = [argv[i + 1] for i, a in enumerate(argv) if a == '-p']
            values = self.units.get(unit, {'MainPID': '0', 'ActiveState': 'inactive', 'LoadState': 'not-found'})
            return 0, ''.join('%s=%s\n' % (p, values.get(p, '')) for p in props), ''
        handler = self.commands.get(argv[0]) or self.commands.get(name)
        if handler is None:
            return None, '', ''
        return handler(argv) if stdin is None else handler(argv, stdin)


@pytest.fixture
def node(tmp_path, monkeypatch):
    return FakeNode(tmp_path / 'root', monkeypatch)


@pytest.fixture
def scheduler_node(node):
    """A k3s server: the fake node with the scheduler's kubeconfig in place."""
    node.write(SCHEDULER_KUBECONFIG, 'apiVersion: v1\nkind: Config\n')
    return node
