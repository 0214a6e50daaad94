# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the k3s_killall module on a fake node: what a stopped k3s left, and only that, taken down."""

from __future__ import annotations

import os

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _killall
from ansible_collections.baremetal.k3s.plugins.modules import k3s_killall

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok, run_module

DATA = '/var/lib/rancher/k3s'
SHIM = DATA + '/data/2a9c/bin/containerd-shim-runc-v2'
POD_SHM = '/run/k3s/containerd/io.containerd.grpc.v1.cri/sandboxes/5f1e/shm'
VOLUME = '/var/lib/kubelet/pods/0b7e/volumes/kubernetes.io~projected/kube-api-access-x'
STORAGE = DATA + '/storage'  # an operator's disk for local-path volumes
MOUNTINFO = ''.join('%d 1 0:%d / %s rw - tmpfs tmpfs rw\n' % (30 + i, 40 + i, p) for i, p in enumerate([
    '/', '/mnt/keep', DATA, STORAGE, '/run/k3s/containerd/io.containerd.runtime.v2.task/k8s.io/77aa/rootfs',
    POD_SHM, VOLUME, '/run/netns/cni-11aa', '/var/lib/kubelet/pods-not-these', DATA + '/agent/containerd/x',
    '/var/lib/kubelet/plugins/csi\\040driver']))


@pytest.fixture
def stopped(node, monkeypatch):  # noqa: F811
    """A node whose k3s-agent was just stopped: two pods' shims (one with a container below it), their mounts, a
    CNI namespace, cni0 with a veth, flannel.1; and the operator's own process, mount and link."""
    node.process(1, ['/sbin/init'], ppid=0)
    node.process(4100, [SHIM, '-namespace', 'k8s.io', '-id', '77aa'], ppid=1)
    node.process(4101, ['/pause'], ppid=4100)
    node.process(4102, ['nginx: master process'], ppid=4100)
    node.process(4103, ['nginx: worker process'], ppid=4102)
    node.process(4200, ['/bin/sh', SHIM.replace('2a9c', 'b0b0') + '-v1'], ppid=1)   # a shim run through a shell
    node.process(4300, ['sleep', '3600'], ppid=1)                                    # the operator's
    node.process(4301, ['/opt/containerd-shim-runc-v2', '-namespace', 'moby'], ppid=1)  # Docker's, not k3s's
    node.write('/proc/self/mountinfo', MOUNTINFO)
    for name in ('cni0', 'flannel.1', 'veth3c41', 'keep0', 'eth0'):
        node.makedirs('/sys/class/net/' + name)
    node.symlink('../cni0', '/sys/class/net/veth3c41/master')
    node.makedirs('/run/netns')
    node.write('/run/netns/cni-11aa', '')
    node.write('/run/netns/operator', '')
    node.makedirs(POD_SHM)
    node.makedirs(VOLUME)
    node.write(VOLUME + '/token', 'left under the mount point')
    killed = []

    def kill(pid, sig):
        killed.append((pid, sig))
        for name in ('stat', 'cmdline'):
            node.unlink('/proc/%d/%s' % (pid, name))

    monkeypatch.setattr(_killall, 'KILL', kill)

    def ok(argv, stdin=None):
        if argv[:3] == ['ip', 'link', 'delete'] and os.path.isdir(node.p('/sys/class/net/' + argv[3])):
            for leftover in os.listdir(node.p('/sys/class/net/' + argv[3])):
                node.unlink('/sys/class/net/%s/%s' % (argv[3], leftover))
            os.rmdir(node.p('/sys/class/net/' + argv[3]))
        if argv[0] == 'rmdir':
            os.rmdir(node.p(argv[1]))
        return 0, '', ''

    for program in ('umount', 'ip', 'rmdir'):
        node.commands[program] = ok
    node.killed = killed
    return node


def test_the_pods_their_mounts_links_and_namespaces_go_and_nothing_else(stopped):
    r = module_ok(k3s_killall, {'iptables': False})
    assert r['changed']
    assert [p['pid'] for p in r['killed']] == [4100, 4200, 4101, 4102, 4103]
    # signalled children first: a run stopped half-way leaves no process whose shim is already gone (reparented to
    # init, the next run would not find it below a k3s shim)
    assert stopped.killed == [(pid, 9) for pid in (4103, 4102, 4101, 4200, 4100)]
    assert r['unmounted'] == [
        DATA + '/agent/containerd/x', VOLUME, '/var/lib/kubelet/plugins/csi driver', '/run/netns/cni-11aa',
        '/run/k3s/containerd/io.containerd.runtime.v2.task/k8s.io/77aa/rootfs', POD_SHM]
    assert r['netns_deleted'] == ['cni-11aa'] and r['links_deleted'] == ['veth3c41', 'cni0', 'flannel.1']
    umounted = [c[1] for c in stopped.calls if c[0] == 'umount']
    assert umounted == r['unmounted'] and DATA not in umounted and STORAGE not in umounted
    # an emptied mount point goes; one that still holds files stays
    assert not stopped.exists(POD_SHM) and stopped.exists(VOLUME + '/token')
    assert sorted(os.listdir(stopped.p('/sys/class/net'))) == ['eth0', 'keep0']
    assert stopped.exists('/proc/4300/cmdline') and stopped.exists('/proc/4301/cmdline')


def test_check_mode_says_the_same_and_touches_nothing(stopped):
    r = module_ok(k3s_killall, {'iptables': False}, check_mode=True)
    assert r['changed'] and [p['pid'] for p in r['killed']] == [4100, 4200, 4101, 4102, 4103]
    assert len(r['unmounted']) == 6 and r['links_deleted'] == ['veth3c41', 'cni0', 'flannel.1']
    assert stopped.killed == [] and not [c for c in stopped.calls if c[0] in ('umount', 'ip', 'rmdir')]


def test_a_second_run_finds_nothing(stopped):
    module_ok(k3s_killall, {'iptables': False})
    stopped.write('/proc/self/mountinfo', '30 1 0:40 / / rw - tmpfs tmpfs rw\n')
    stopped.unlink('/run/netns/cni-11aa')
    r = module_ok(k3s_killall, {'iptables': False})
    assert not r['changed'] and not any(r[k] for k in ('killed', 'unmounted', 'netns_deleted', 'links_deleted'))


@pytest.mark.parametrize('argv', [['/usr/local/bin/k3s', 'agent'], ['k3s', 'server', '--cluster-init'],
                                  ['/usr/bin/rke2', 'server']])
def test_refused_while_k3s_runs(stopped, argv):
    stopped.process(999, argv, ppid=1)
    msg = module_fail(k3s_killall, {})
    assert 'k3s still runs on this node (pid 999' in msg and 'Nothing was changed' in msg
    assert stopped.killed == [] and not [c for c in stopped.calls if c[0] in ('umount', 'ip')]


@pytest.mark.parametrize('data_dir', ['/', 'var/lib/rancher/k3s', '/var/lib/../lib/rancher/k3s'])
def test_a_data_dir_that_is_not_one_is_refused(stopped, data_dir):
    msg = module_fail(k3s_killall, {'data_dir': data_dir})
    assert 'data_dir:' in msg and 'Nothing was changed' in msg and stopped.killed == []


SAVED = '''*filter
:INPUT ACCEPT [0:0]
:KUBE-FIREWALL - [0:0]
:OPERATOR - [0:0]
-A INPUT -j KUBE-FIREWALL
-A INPUT -s 10.0.0.0/8 -j OPERATOR
-A FORWARD -s 10.42.0.0/16 -m comment --comment "Flannel forwarding" -j ACCEPT
-A FORWARD -j CNI-FORWARD
COMMIT
'''


def test_the_rules_of_kube_proxy_flannel_and_cni_are_dropped_and_the_operators_kept(stopped):
    restored = {}

    def save(argv, stdin=None):
        return 0, SAVED if argv[0] == 'iptables-save' else '', ''

    def restore(argv, stdin=None):
        restored[argv[0]] = stdin.decode()
        return 0, '', ''

    stopped.commands.update({'iptables-save': save, 'ip6tables-save': save, 'iptables-restore': restore,
                             'ip6tables-restore': restore})
    r = module_ok(k3s_killall, {})
    assert r['rules_dropped'] == {'iptables': 4}
    assert restored == {'iptables-restore': '*filter\n:INPUT ACCEPT [0:0]\n:OPERATOR - [0:0]\n'
                                            '-A INPUT -s 10.0.0.0/8 -j OPERATOR\nCOMMIT\n'}


def test_a_failing_iptables_save_stops_before_anything_changes(stopped):
    stopped.commands.update({'iptables-save': lambda argv: (1, '', 'iptables: permission denied'),
                             'iptables-restore': lambda argv, stdin=None: (0, '', '')})
    msg = module_fail(k3s_killall, {})
    assert 'iptables-save failed (rc 1): iptables: permission denied' in msg and 'iptables=false' in msg
    assert stopped.killed == []


def test_what_cannot_be_undone_is_named_and_the_rest_still_done(stopped):
    stopped.commands['umount'] = lambda argv: (32, '', 'umount: %s: target is busy.' % argv[1])
    failed, r = run_module(k3s_killall, {'iptables': False})
    assert failed and 'target is busy' in r['msg'] and 'Run again' in r['msg'] and r['changed']
    assert len(r['killed']) == 5 and r['links_deleted'] == ['veth3c41', 'cni0', 'flannel.1'] and r['unmounted'] == []
