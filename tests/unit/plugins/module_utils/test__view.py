# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The read-only view of a node, on a directory tree standing for one."""

from __future__ import annotations

import os
import threading
import time

import pytest

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, Plan, PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import TIMED_OUT, RunTimeout, View, ViewError, run_bounded
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import set_module_args


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


# -- family: what runs: every program bounded in time -----------------------------------------------------------
def _gone(pid, within=5.0):
    """Whether process ``pid`` has left (or is a zombie) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open('/proc/%d/stat' % pid) as f:
                if f.read().rsplit(')', 1)[1].split()[0] in ('Z', 'X'):
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def test_family_what_runs_the_view_bounds_any_runner(node):
    """A runner that does not stop its program itself (a test's) is bounded by the View all the same."""
    release = threading.Event()
    view = View(root=str(node.tmp), runner=lambda argv: release.wait(30) and (0, '', ''), run_timeout=0.3)
    start = time.monotonic()
    with pytest.raises(RunTimeout) as caught:
        view.run(['/usr/local/bin/k3s', '--version'])
    release.set()
    assert time.monotonic() - start < 5
    assert caught.value.msg.startswith('"/usr/local/bin/k3s --version" did not finish within 0.3 s on this node and was '
                                       'stopped')
    assert isinstance(caught.value, PlanError) and isinstance(caught.value, ViewError)
    # a runner's own errors still reach the caller
    with pytest.raises(KeyError):
        View(runner=lambda argv: {}['x']).run(['x'])


def test_family_what_runs_the_modules_runner_stops_the_program_and_what_it_started(tmp_path):
    """_io.node_view: AnsibleModule.run_command, watched; the program and its children are gone when it gives up."""
    with set_module_args({}):
        module = AnsibleModule(argument_spec={})
    view = _io.node_view(module)
    marker = tmp_path / 'child'
    script = 'sleep 30 & echo $! > %s; wait' % marker
    start = time.monotonic()
    with pytest.raises(RunTimeout):
        view.run(['/bin/sh', '-c', script], timeout=0.5)
    assert time.monotonic() - start < 6
    assert _gone(int(marker.read_text()))
    rc, out, dummy = view.run(['/bin/sh', '-c', 'echo fine'], timeout=5)
    assert (rc, out) == (0, 'fine\n')
    assert view.run(['/bin/sh', '-c', 'cat'], stdin=b'in', timeout=5)[1] == 'in'


def test_family_what_runs_run_bounded_alike(tmp_path):
    marker = tmp_path / 'child'
    assert run_bounded(['/bin/sh', '-c', 'sleep 30 & echo $! > %s; wait' % marker], timeout=0.5) is TIMED_OUT
    assert _gone(int(marker.read_text()))
    assert run_bounded(['/bin/sh', '-c', 'cat; exit 3'], stdin='x', timeout=5) == (3, 'x', '')
    assert run_bounded([str(tmp_path / 'missing')], timeout=5) == (None, '', '')


def test_inode_flags_of_a_real_file(tmp_path):
    """FS_IOC_GETFLAGS on this machine's file: an int without the immutable bit, or None where the file system keeps no
    flags; None for a missing file."""
    (tmp_path / 'f').write_bytes(b'x')
    flags = View(root=str(tmp_path)).inode_flags('/f')
    assert flags is None or (isinstance(flags, int) and not flags & 0x10)
    assert View(root=str(tmp_path)).inode_flags('/missing') is None
