# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A mount namespace of this process's own (through libc: ``os.unshare`` is Python 3.12+), and what tests mount in it.

What is mounted after :func:`private_mounts` is seen by this process and its children only, and goes
with them: a tmpfs over ``/run`` to plant things where the collection keeps its locks, a bind mount to
name a file a second way. Needs root with CAP_SYS_ADMIN.
"""

from __future__ import annotations

import ctypes
import json
import os

import pytest

CLONE_NEWNS = 0x00020000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000


def _libc(name, *args):
    libc = ctypes.CDLL(None, use_errno=True)
    if getattr(libc, name)(*args) != 0:
        err = ctypes.get_errno()
        raise OSError(err, '%s: %s' % (name, os.strerror(err)))


def private_mounts():
    """Move this process into a mount namespace of its own, nothing in it shared back."""
    _libc('unshare', CLONE_NEWNS)
    _libc('mount', b'none', b'/', None, MS_REC | MS_PRIVATE, None)


def bind_mount(source, target):
    _libc('mount', os.fsencode(source), os.fsencode(target), None, MS_BIND, None)


def tmpfs(target, mode):
    """An empty tmpfs on ``target``, its root directory ``mode`` (what systemd gives /run: 0755)."""
    _libc('mount', b'tmpfs', os.fsencode(target), b'tmpfs', 0, ('mode=%o' % mode).encode())


class ChildDied(Exception):
    """The child raised or was killed before it gave its result."""


def in_child(fn):
    """Run ``fn`` in a forked child and return its JSON-able result; :class:`ChildDied` when there is none."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        code = 0
        try:
            os.write(w, json.dumps(fn()).encode())
        except BaseException:  # noqa: B036 pylint: disable=broad-except
            code = 3
        finally:
            os._exit(code)  # pylint: disable=protected-access
    os.close(w)
    data = b''
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    dummy, status = os.waitpid(pid, 0)
    if not data:
        raise ChildDied('the child gave no result (wait status %s)' % status)
    return json.loads(data)


def available():
    """Whether a mount namespace can be made here (tried in a child, which then exits)."""
    def probe():
        private_mounts()
        return True
    try:
        return in_child(probe) is True
    except ChildDied:
        return False


def require():
    """Skip the test where no namespace can be made; under tests/run.sh (root, BAREMETAL_K3S_REQUIRE_DOCKER=1) fail it."""
    if available():
        return
    if os.environ.get('BAREMETAL_K3S_REQUIRE_DOCKER') == '1':
        pytest.fail('tests/run.sh runs as root with CAP_SYS_ADMIN, but no mount namespace could be made here')
    pytest.skip('needs root with CAP_SYS_ADMIN for a private mount namespace')
