# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The locks as an unprivileged local user would try to turn them against root, at their real place.

Each test forks a child into a mount namespace of its own with a fresh tmpfs on ``/run`` (0755,
as systemd mounts it) and ``/run/lock`` (1777, as Debian has it), plants there what a user with
uid 65534 could own, then runs a real module (scheduler_config, on a fake node) as root. The
victim is a root-owned file the planted links point to: it must be byte for byte as it was.
Planted: the directory the locks go in (``/run/baremetal-k3s``, and ``/run/lock/baremetal-k3s``
where earlier versions kept them), 0777 and the user's; and, in a directory root made, lock
files that are the user's symlinks to the victim, named as the run's locks (earlier versions'
names too).
"""

from __future__ import annotations

import os
import stat

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _lock
from ansible_collections.baremetal.k3s.plugins.modules import scheduler_config
from ansible_collections.baremetal.k3s.tests.integration import mount_namespace
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import run_module

NOBODY = 65534
SCHED_CONFIG = '/etc/rancher/k3s/kube-scheduler/config.yaml'
KUBECONFIG = '/var/lib/rancher/k3s/server/cred/scheduler.kubeconfig'
ARGS = {'path': SCHED_CONFIG, 'kubeconfig': KUBECONFIG, 'extender': {'url_prefix': 'http://127.0.0.1:8889'}}
NEW_DIR = '/run/baremetal-k3s'
OLD_DIR = '/run/lock/baremetal-k3s'
SECRET = b'root:$6$rounds=5000$salt$hash:19000:0:99999:7:::\n'

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='plants files as another user: needs root')


def _old_name(key):
    """The lock file name earlier versions gave the lock of ``key`` (a path string)."""
    safe = ''.join(c if c.isalnum() or c in '-_.' else '_' for c in key.strip('/'))
    return (safe or 'root')[:200] + '.lock'


def _names(node):
    """The lock file names this version uses for the config (device and inode forms of the real file)."""
    return sorted(_lock.lock_name(f) for f in _lock.file_forms(node.p(SCHED_CONFIG)))


def _mkdir(path, mode, uid):
    os.mkdir(path)
    os.chmod(path, mode)
    os.chown(path, uid, uid)


def _links(directory, names, victim, uid):
    for name in names:
        link = os.path.join(directory, name)
        os.symlink(victim, link)
        os.lchown(link, uid, uid)


def _run_planted(node, plant):
    """In a namespace of its own: fresh /run, ``plant()``, the module run; (failed, result, /run afterwards)."""
    def child():
        mount_namespace.private_mounts()
        mount_namespace.tmpfs('/run', 0o755)
        os.mkdir('/run/lock')
        os.chmod('/run/lock', 0o1777)
        plant()
        failed, result = run_module(scheduler_config, ARGS)
        after = {}
        for d, dirs, files in os.walk('/run'):
            for name in dirs + files:
                st = os.lstat(os.path.join(d, name))
                after[os.path.join(d, name)] = [stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid]
        return failed, result, after
    failed, result, after = mount_namespace.in_child(child)
    return failed, result, after


@pytest.fixture
def victim(tmp_path):
    path = tmp_path / 'shadow'
    path.write_bytes(SECRET)
    os.chmod(path, 0o640)
    return path


@pytest.fixture
def sched(node):  # noqa: F811 pylint: disable=redefined-outer-name
    mount_namespace.require()
    node.write(KUBECONFIG, 'apiVersion: v1\nkind: Config\n')
    node.write(SCHED_CONFIG, 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n'
                             'clientConnection:\n  kubeconfig: %s\n' % KUBECONFIG)
    return node


def _unchanged(sched, victim, config):  # pylint: disable=redefined-outer-name
    """The victim byte for byte as it was (and its mode, its one link), the module's own file too."""
    assert victim.read_bytes() == SECRET and stat.S_IMODE(os.stat(victim).st_mode) == 0o640
    assert os.stat(victim).st_nlink == 1
    assert sched.read(SCHED_CONFIG) == config


def test_without_anything_planted_the_lock_directory_is_made_root_only_and_left_empty(sched):
    failed, result, after = _run_planted(sched, lambda: None)
    assert not failed and result['changed'], result
    assert after[NEW_DIR] == [stat.S_IFDIR, 0o700, 0] and after[NEW_DIR + '/locks'] == [stat.S_IFDIR, 0o700, 0]
    assert sorted(after) == ['/run/baremetal-k3s', '/run/baremetal-k3s/locks', '/run/lock']  # no lock file left


def test_a_planted_lock_directory_is_refused_and_the_victim_untouched(sched, victim):
    config = sched.read(SCHED_CONFIG)
    names = _names(sched)

    def plant():
        # where earlier versions kept the locks (/run/lock is 1777: any user can make it first)
        _mkdir(OLD_DIR, 0o777, NOBODY)
        _links(OLD_DIR, [_old_name(SCHED_CONFIG)], str(victim), NOBODY)
        # where this version keeps them (on a node only root can make it: planted as if a user could)
        _mkdir(NEW_DIR, 0o777, NOBODY)
        _mkdir(NEW_DIR + '/locks', 0o777, NOBODY)
        _links(NEW_DIR + '/locks', names, str(victim), NOBODY)

    failed, result, after = _run_planted(sched, plant)
    _unchanged(sched, victim, config)
    assert failed, result
    assert result['msg'].startswith('the lock directory %s is owned by uid 65534, not by root, so no lock is taken in it'
                                    % NEW_DIR), result['msg']
    assert after[NEW_DIR] == [stat.S_IFDIR, 0o777, NOBODY]  # left as found, for the administrator
    assert sorted(p for p in after if p.startswith(NEW_DIR + '/locks/')) == ['%s/locks/%s' % (NEW_DIR, n) for n in names]


def test_planted_lock_file_symlinks_are_refused_and_the_victim_untouched(sched, victim):
    config = sched.read(SCHED_CONFIG)
    names = _names(sched)

    def plant():
        # sound directories, root's, with the user's symlinks in them named as the run's locks
        _mkdir(OLD_DIR, 0o700, 0)
        _links(OLD_DIR, [_old_name(SCHED_CONFIG)], str(victim), NOBODY)
        _mkdir(NEW_DIR, 0o755, 0)
        _mkdir(NEW_DIR + '/locks', 0o700, 0)
        _links(NEW_DIR + '/locks', names, str(victim), NOBODY)

    failed, result, dummy = _run_planted(sched, plant)
    _unchanged(sched, victim, config)
    assert failed, result
    assert result['msg'].startswith('%s/locks/%s is a symbolic link (to %s), not a lock file of this collection'
                                    % (NEW_DIR, names[0], victim)), result['msg']
