# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The read-only view of a node, on a directory tree standing for one."""

from __future__ import annotations

import os

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, Plan
from ansible_collections.baremetal.k3s.plugins.module_utils._view import View, ViewError


@pytest.fixture
def node(tmp_path):
    def put(path, data=b'', mode=None):
        host = tmp_path / path.lstrip('/')
        host.parent.mkdir(parents=True, exist_ok=True)
        host.write_bytes(data)
        if mode is not None:
            os.chmod(host, mode)
        return host
    view = View(root=str(tmp_path), runner=lambda argv: (0, ' '.join(argv), ''), which=lambda n: '/usr/bin/' + n,
                hostname='node-1')
    view.put = put
    view.tmp = tmp_path
    return view


def test_reads_under_its_root(node):
    node.put('/etc/rancher/k3s/config.yaml', b'a: 1\n')
    assert node.read('/etc/rancher/k3s/config.yaml') == b'a: 1\n'
    assert node.read_text('/etc/rancher/k3s/config.yaml') == 'a: 1\n'
    assert node.read('/etc/rancher/k3s/missing.yaml') is None
    assert node.read('/etc/rancher/k3s/config.yaml/under-a-file') is None
    assert node.exists('/etc/rancher/k3s/config.yaml') and node.isfile('/etc/rancher/k3s/config.yaml')
    assert node.isdir('/etc/rancher/k3s') and not node.isdir('/etc/rancher/k3s/config.yaml')
    assert node.listdir('/etc/rancher/k3s') == ['config.yaml']
    assert node.listdir('/etc/nowhere') is None and node.listdir('/etc/rancher/k3s/config.yaml') is None


def test_reading_a_directory_is_an_error(node):
    node.put('/etc/x/f')
    with pytest.raises(ViewError, match='/etc/x is a directory'):
        node.read('/etc/x')


def test_relative_paths_are_refused(node):
    with pytest.raises(ViewError, match='not an absolute path'):
        node.read('etc/passwd')


def test_absolute_symlinks_resolve_inside_the_root(node):
    # an immutable OS: /etc/rancher/k3s/config.yaml -> /usr/lib/rancher/k3s/config.yaml
    node.put('/usr/lib/rancher/k3s/config.yaml', b'from-usr\n')
    (node.tmp / 'etc/rancher/k3s').mkdir(parents=True)
    os.symlink('/usr/lib/rancher/k3s/config.yaml', str(node.tmp / 'etc/rancher/k3s/config.yaml'))
    assert node.realpath('/etc/rancher/k3s/config.yaml') == '/usr/lib/rancher/k3s/config.yaml'
    assert node.read('/etc/rancher/k3s/config.yaml') == b'from-usr\n'
    assert node.islink('/etc/rancher/k3s/config.yaml') and node.lexists('/etc/rancher/k3s/config.yaml')
    os.symlink('../../lib/x', str(node.tmp / 'etc/rancher/rel'))
    assert node.realpath('/etc/rancher/rel') == '/lib/x'
    os.symlink('/etc/loop-b', str(node.tmp / 'etc/loop-a'))
    os.symlink('/etc/loop-a', str(node.tmp / 'etc/loop-b'))
    with pytest.raises(ViewError, match='too many levels'):
        node.realpath('/etc/loop-a')
    assert not node.exists('/etc/loop-a') and node.lexists('/etc/loop-a')


def test_writable(node, tmp_path):
    node.put('/etc/systemd/system/k3s.service', b'[Service]\n')
    assert node.writable('/etc/systemd/system/k3s.service')
    assert node.writable('/etc/rancher/k3s/config.yaml.d/99.yaml')  # parents made on write
    assert node.mode('/etc/systemd/system/k3s.service') == os.stat(str(tmp_path / 'etc/systemd/system/k3s.service')).st_mode & 0o7777
    assert node.mode('/etc/nothing') is None


def test_proc_and_commands(node):
    node.put('/proc/42/cmdline', b'/usr/local/bin/k3s\0server\0--a=b\0')
    node.put('/proc/43/cmdline', b'')
    node.put('/proc/sys/kernel/hostname', b'ignored\n')
    assert node.pids() == [42, 43]
    assert node.cmdline(42) == ['/usr/local/bin/k3s', 'server', '--a=b']
    assert node.cmdline(43) == [] and node.cmdline(44) is None
    assert node.run(['systemctl', 'show', 'k3s']) == (0, 'systemctl show k3s', '')
    assert node.which('kubectl') == '/usr/bin/kubectl'
    assert node.hostname() == 'node-1'
    assert View(root=str(node.tmp)).run(['x']) == (None, '', '')
    assert View(root=str(node.tmp)).hostname() == 'ignored'


def test_a_plan_drops_changes_that_change_nothing():
    plan = Plan([Change('/a', b'x', b'x'), Change('/b', None, None), Change('/c', b'1', b'2')], facts={'k': 1})
    assert plan.paths == ['/c'] and plan.changed
    assert [c.action for c in plan.changes] == ['modified']
    assert Change('/d', None, b'1').action == 'created' and Change('/d', b'1', None).action == 'removed'
    assert not Plan([Change('/a', b'x', b'x')]).changed
    assert plan.diff() == [{'before_header': '/c', 'after_header': '/c', 'before': '1', 'after': '2'}]


def test_tail_reads_only_the_end(node):
    node.put('/var/log/k3s.log', b'x' * 100000 + b'last line\n')
    assert node.tail('/var/log/k3s.log', 10) == b'last line\n'
    assert node.tail('/var/log/k3s.log', 10 ** 6) == b'x' * 100000 + b'last line\n'
    assert node.tail('/var/log/none.log', 10) is None
    with pytest.raises(ViewError, match='is a directory'):
        node.tail('/var/log', 10)
