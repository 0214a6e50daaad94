# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of _preflight's parsers and of the View readers it uses (statvfs, cpu_count, meminfo) on a real tree."""

from __future__ import annotations

import os

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _preflight
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import View


def _tree(tmp_path, files):
    for path, text in files.items():
        host = tmp_path / path.lstrip('/')
        host.parent.mkdir(parents=True, exist_ok=True)
        host.write_text(text)
    return View(root=str(tmp_path))


def test_statvfs(tmp_path):
    view = _tree(tmp_path, {'/var/lib/x': ''})
    os.symlink('/var/lib', str(tmp_path / 'lib'))
    st = view.statvfs('/var/lib')
    assert st is not None and st.f_frsize > 0 and st.f_blocks >= st.f_bavail
    assert view.statvfs('/lib') is not None  # through a link inside the tree
    assert view.statvfs('/nothing/here') is None


@pytest.mark.parametrize('files, count', [
    ({'/sys/devices/system/cpu/online': '0-7\n'}, 8),
    ({'/sys/devices/system/cpu/online': '0,2,4-5\n'}, 4),
    ({'/sys/devices/system/cpu/online': '\n', '/proc/cpuinfo': 'processor\t: 0\nprocessor\t: 1\nprocessor\t: 2\n'}, 3),
    ({'/proc/cpuinfo': 'Processor\t: ARMv7 Processor rev 4 (v7l)\nprocessor\t: 0\nBogoMIPS\t: 38.40\n'}, 1),
    ({'/sys/devices/system/cpu/online': '3-1\n', '/proc/cpuinfo': 'processor : 0\n'}, 1),
    ({}, None),
])
def test_cpu_count(tmp_path, files, count):
    assert _tree(tmp_path, files).cpu_count() == count


def test_meminfo(tmp_path):
    view = _tree(tmp_path, {'/proc/meminfo': 'MemTotal:        8040000 kB\nMemFree:  100 kB\nHugePages_Total:       0\n'
                                             'odd line\nBad:   x kB\n'})
    assert view.meminfo() == {'MemTotal': 8040000, 'MemFree': 100, 'HugePages_Total': 0}
    assert View(root=str(tmp_path / 'none')).meminfo() == {}


@pytest.mark.parametrize('text, table', [
    ('#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t2\t40\t1\nmemory\t0\t1\t0\n', {'cpu': True, 'memory': False}),
    ('memory 7 100 1\nshort line\n', {'memory': True}),
    ('', {}),
])
def test_parse_proc_cgroups(text, table):
    assert _preflight.parse_proc_cgroups(text) == table


def test_role_defaults():
    assert _preflight.role_defaults('server') == {'cpus': 2, 'memory_mb': 2048, 'disk_mb': 4096, 'ports': (6443, 10250)}
    assert _preflight.role_defaults('agent') == {'cpus': 1, 'memory_mb': 512, 'disk_mb': 2048, 'ports': (10250,)}
    with pytest.raises(PlanError, match="role must be server or agent, not 'etcd'"):
        _preflight.role_defaults('etcd')
    assert (_preflight.memtotal_floor(2048), _preflight.memtotal_floor(512)) == (1843, 460)
