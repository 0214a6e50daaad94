# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of k3s_ready: its real main() on fake_node, kubectl answered by a fake API whose state follows a fake clock."""

from __future__ import annotations

import json

import pytest

from ansible_collections.baremetal.k3s.plugins.modules import k3s_ready

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import FakeNode
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok, run_module

K3S = '/usr/local/bin/k3s'
KUBECONFIG = '/etc/rancher/k3s/k3s.yaml'
REFUSED = 'The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?\n'
READYZ_500 = ('Error from server (InternalServerError): an error on the server ("[+]ping ok\\n[+]log ok\\n[-]etcd failed: '
              'reason withheld\\n[+]poststarthook/start-kube-apiserver-admission-initializer ok\\n[-]poststarthook/'
              'rbac/bootstrap-roles failed: not finished\\nreadyz check failed") has prevented the request from '
              'succeeding\n')
NOT_READY = {'type': 'Ready', 'status': 'False', 'reason': 'KubeletNotReady',
             'message': 'container runtime network not ready: NetworkReady=false'}
READY = {'type': 'Ready', 'status': 'True', 'reason': 'KubeletReady', 'message': 'kubelet is posting ready status'}
PRESSURE = {'type': 'MemoryPressure', 'status': 'False', 'reason': 'KubeletHasSufficientMemory',
            'message': 'kubelet has sufficient memory available'}
UNKNOWN = dict(READY, status='Unknown', reason='NodeStatusUnknown', message='Kubelet stopped posting node status.')
LEARNER = {'type': 'EtcdIsVoter', 'status': 'False', 'reason': 'MemberIsLearner',
           'message': 'Node has not been promoted to voting member of the etcd cluster'}
VOTER = {'type': 'EtcdIsVoter', 'status': 'True', 'reason': 'MemberNotLearner',
         'message': 'Node is a voting member of the etcd cluster'}


class FakeClock:
    """sleep() advances time at once."""

    def __init__(self):
        self.t = 0.0
        self.sleeps = []

    def realtime(self):
        return 1768298400 + self.t

    def monotonic(self):
        return 1000.0 + self.t

    def boottime(self):
        return 1000.0 + self.t

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.t += seconds


class Node(FakeNode):
    """fake_node with a fake clock, an admin kubeconfig, and ``k3s kubectl`` answered by ``readyz`` and ``nodes``:
    functions of the clock's time giving kubectl's (rc, stdout, stderr) and the Node objects by name."""

    def __init__(self, root, monkeypatch):
        super().__init__(root, monkeypatch)
        self.clock = FakeClock()
        self.write(K3S, '#!/bin/sh\n', 0o755)
        self.write(KUBECONFIG, 'apiVersion: v1\nkind: Config\n')
        self.readyz = lambda t: (0, 'ok', '')
        self.nodes = lambda t: {'server-1': node_object('server-1', [PRESSURE, READY])}
        self.commands[K3S] = self.kubectl

    def kubectl(self, argv):
        assert argv[:2] == [K3S, 'kubectl'], argv
        args = argv[2:]
        if args[:1] == ['--kubeconfig']:
            args = args[2:]
        assert args[0] == '--request-timeout', argv
        args = args[2:]
        t = self.clock.t
        if args == ['get', '--raw', '/readyz']:
            return self.readyz(t)
        assert args[:2] == ['get', 'node'] and args[3:] == ['-o', 'json'], argv
        rc, dummy, err = self.readyz(t)
        if rc != 0:
            return rc, '', err
        obj = self.nodes(t).get(args[2])
        if obj is None:
            return 1, '', 'Error from server (NotFound): nodes "%s" not found\n' % args[2]
        return 0, json.dumps(obj), ''


def node_object(name, conditions):
    return {'apiVersion': 'v1', 'kind': 'Node', 'metadata': {'name': name, 'labels': {}},
            'status': {'conditions': [dict(c, lastHeartbeatTime='2026-01-13T10:00:00Z') for c in conditions]}}


@pytest.fixture
def node(tmp_path, monkeypatch):
    return Node(tmp_path / 'root', monkeypatch)


def args(**kw):
    out = {'kubectl': [K3S, 'kubectl'], 'kubeconfig': KUBECONFIG, 'node_name': 'server-1', 'timeout': 60, 'interval': 5}
    out.update(kw)
    return out


def test_ready_at_once(node):
    r = module_ok(k3s_ready, args())
    assert r['ready'] is True and r['api_ready'] is True and r['node_ready'] is True and r['timed_out'] is False
    assert r['changed'] is False and r['etcd_member'] is None and r['attempts'] == 1 and r['elapsed'] == 0
    assert r['node_conditions'] == [
        {'type': 'MemoryPressure', 'status': 'False', 'reason': 'KubeletHasSufficientMemory',
         'message': 'kubelet has sufficient memory available'},
        {'type': 'Ready', 'status': 'True', 'reason': 'KubeletReady', 'message': 'kubelet is posting ready status'}]
    assert r['msg'] == 'the API answers /readyz and node server-1 is Ready (after 1 look, 0.0 s)'
    assert node.calls == [
        [K3S, 'kubectl', '--kubeconfig', KUBECONFIG, '--request-timeout', '10s', 'get', '--raw', '/readyz'],
        [K3S, 'kubectl', '--kubeconfig', KUBECONFIG, '--request-timeout', '10s', 'get', 'node', 'server-1', '-o', 'json']]
    assert node.clock.sleeps == []


def test_readyz_failing_then_passing(node):
    node.readyz = lambda t: (1, '', REFUSED) if t < 10 else (1, '', READYZ_500) if t < 20 else (0, 'ok', '')
    r = module_ok(k3s_ready, args())
    assert r['ready'] and r['attempts'] == 5 and r['elapsed'] == 20 and node.clock.sleeps == [5, 5, 5, 5]
    assert r['msg'] == 'the API answers /readyz and node server-1 is Ready (after 5 looks, 20.0 s)'
    # no Node asked while the API is not ready
    assert sum(1 for c in node.calls if 'node' in c) == 1


@pytest.mark.parametrize('readyz, nodes, reason', [
    (lambda t: (1, '', REFUSED), None,
     'the API server does not answer /readyz: The connection to the server 127.0.0.1:6443 was refused - did you specify '
     'the right host or port?'),
    (lambda t: (1, '', READYZ_500), None,
     'the API server is not ready: /readyz reports etcd, poststarthook/rbac/bootstrap-roles failed'),
    (lambda t: (1, '', ''), None, 'the API server does not answer /readyz: exit 1'),
    (None, lambda t: {}, 'node server-1 is not registered in the API (yet)'),
    (None, lambda t: {'server-1': node_object('server-1', [PRESSURE, NOT_READY])},
     'node server-1 is not Ready: Ready=False (KubeletNotReady: container runtime network not ready: NetworkReady=false)'),
    (None, lambda t: {'server-1': node_object('server-1', [UNKNOWN])},
     'node server-1 is not Ready: Ready=Unknown (NodeStatusUnknown: Kubelet stopped posting node status.)'),
    (None, lambda t: {'server-1': node_object('server-1', [])}, 'node server-1 has no Ready condition yet'),
])
def test_timeout_names_the_last_reason(node, readyz, nodes, reason):
    if readyz:
        node.readyz = readyz
    if nodes:
        node.nodes = nodes
    failed, r = run_module(k3s_ready, args(timeout=12))
    assert failed and r['ready'] is False and r['timed_out'] is True
    assert r['msg'] == 'not ready within timeout (12 s): ' + reason
    assert node.clock.sleeps == [5, 5, 2] and r['attempts'] == 4 and r['elapsed'] == 12
    # without fail_on_timeout: the same result, not failed
    node.clock.t = 0
    r2 = module_ok(k3s_ready, args(timeout=12, fail_on_timeout=False))
    assert r2['ready'] is False and r2['msg'] == r['msg']


def test_without_a_node_name_only_the_api_server_is_waited_for(node):
    node.readyz = lambda t: (1, '', REFUSED) if t < 10 else (0, 'ok', '')
    node.nodes = lambda t: {}  # a control plane whose host registers no Node
    r = module_ok(k3s_ready, {k: v for k, v in args().items() if k != 'node_name'})
    assert r['ready'] and r['api_ready'] and not r['node_ready'] and r['attempts'] == 3 and r['node_name'] is None
    assert r['msg'] == 'the API answers /readyz (after 3 looks, 10.0 s)'
    assert not any('node' in c for c in node.calls)


def test_node_not_ready_then_ready(node):
    node.nodes = lambda t: {'server-1': node_object('server-1', [NOT_READY if t < 30 else READY])}
    r = module_ok(k3s_ready, args(interval=10))
    assert r['ready'] and r['attempts'] == 4 and r['elapsed'] == 30 and node.clock.sleeps == [10, 10, 10]
    assert r['node_conditions'][0]['status'] == 'True'


def test_node_missing_then_registered(node):
    node.nodes = lambda t: {} if t < 15 else {'server-1': node_object('server-1', [READY])}
    r = module_ok(k3s_ready, args())
    assert r['ready'] and r['attempts'] == 4


def test_other_node_does_not_count(node):
    node.nodes = lambda t: {'server-2': node_object('server-2', [READY])}
    failed, r = run_module(k3s_ready, args(timeout=0))
    assert failed and r['msg'] == 'not ready within timeout (0 s): node server-1 is not registered in the API (yet)'
    assert r['api_ready'] is True and r['node_ready'] is False and r['node_conditions'] == [] and r['attempts'] == 1


@pytest.mark.parametrize('how', ['no file', 'does not run', 'not on PATH'])
def test_kubectl_missing(node, how):
    kubectl = [K3S, 'kubectl']
    if how == 'no file':
        node.unlink(K3S)
        node.unlink(KUBECONFIG)  # would be waited for; a missing kubectl is not
    elif how == 'does not run':
        del node.commands[K3S]
    else:
        kubectl = ['kubectl']
    msg = module_fail(k3s_ready, args(kubectl=kubectl))
    assert msg == ('kubectl %s was not found on this node (%s). Give the platform\'s kubectl: k3s_info returns it as '
                   '"kubectl" ([<k3s binary>, kubectl] for k3s).' % (kubectl[0], ' '.join(kubectl)))
    assert node.clock.sleeps == []


def test_kubectl_on_path(node):
    node.commands['kubectl'] = lambda argv: node.kubectl([K3S, 'kubectl'] + argv[1:])
    assert module_ok(k3s_ready, args(kubectl=['kubectl']))['ready']
    assert node.calls[0][0] == 'kubectl'


def test_kubeconfig_appears(node):
    node.unlink(KUBECONFIG)

    def later(seconds):
        FakeClock.sleep(node.clock, seconds)
        if node.clock.t >= 10:
            node.write(KUBECONFIG, 'apiVersion: v1\nkind: Config\n')
    node.clock.sleep = later
    r = module_ok(k3s_ready, args())
    assert r['ready'] and r['attempts'] == 3
    assert node.calls[0][2:4] == ['--kubeconfig', KUBECONFIG]  # kubectl only once the kubeconfig is there
    node.unlink(KUBECONFIG)
    node.clock.sleep = lambda s: FakeClock.sleep(node.clock, s)
    failed, r = run_module(k3s_ready, args(timeout=5))
    assert failed and r['msg'] == ('not ready within timeout (5 s): kubeconfig /etc/rancher/k3s/k3s.yaml does not exist '
                                   '(yet): k3s writes it when the server starts')


def test_without_kubeconfig_kubectl_uses_its_default(node):
    a = args()
    del a['kubeconfig']
    assert module_ok(k3s_ready, a)['ready']
    assert node.calls[0] == [K3S, 'kubectl', '--request-timeout', '10s', 'get', '--raw', '/readyz']


def test_request_timeout_bounded_by_what_is_left(node):
    node.readyz = lambda t: (1, '', REFUSED)
    module_ok(k3s_ready, args(timeout=13, interval=6, fail_on_timeout=False))
    # 13 s left, then 7, then 1, then none: a last look at the deadline, bounded to kubectl's least (1 s)
    assert [c[5] for c in node.calls] == ['10s', '7s', '1s', '1s'] and node.clock.sleeps == [6, 6, 1]


@pytest.mark.parametrize('conditions, ready, reason', [
    ([READY, VOTER], True, ''),
    ([READY, LEARNER], False, 'node server-1 is not a voting etcd member: EtcdIsVoter=False (MemberIsLearner: Node has not '
                              'been promoted to voting member of the etcd cluster)'),
    ([READY, dict(LEARNER, reason='NotAMember', message='Node is not a member of the etcd cluster')], False,
     'node server-1 is not a voting etcd member: EtcdIsVoter=False (NotAMember: Node is not a member of the etcd cluster)'),
    ([READY], False, 'node server-1 has no EtcdIsVoter condition yet (k3s\'s etcd leader sets it, every 15 s, on servers '
                     'with embedded etcd)'),
    ([NOT_READY, LEARNER], False,
     'node server-1 is not Ready: Ready=False (KubeletNotReady: container runtime network not ready: NetworkReady=false); '
     'node server-1 is not a voting etcd member: EtcdIsVoter=False (MemberIsLearner: Node has not been promoted to voting '
     'member of the etcd cluster)'),
])
def test_etcd_member(node, conditions, ready, reason):
    node.nodes = lambda t: {'server-1': node_object('server-1', conditions)}
    r = module_ok(k3s_ready, args(etcd_member=True, timeout=0, fail_on_timeout=False))
    assert r['ready'] is ready and r['etcd_member'] is (VOTER in conditions)
    assert r['msg'] == ('the API answers /readyz and node server-1 is Ready and a voting etcd member (after 1 look, 0.0 s)'
                        if ready else 'not ready within timeout (0 s): ' + reason)


def test_learner_promoted_while_waiting(node):
    node.nodes = lambda t: {'server-1': node_object('server-1', [READY, LEARNER if t < 45 else VOTER])}
    r = module_ok(k3s_ready, args(etcd_member=True, timeout=120, interval=15))
    assert r['ready'] and r['etcd_member'] is True and r['elapsed'] == 45 and node.clock.sleeps == [15, 15, 15]


@pytest.mark.parametrize('out, message', [
    ('not json', "not ready within timeout (0 s): kubectl get node server-1 printed no JSON: 'not json'"),
    ('[]', "not ready within timeout (0 s): kubectl get node server-1 printed no Node: '[]'"),
])
def test_odd_kubectl_output(node, out, message):
    def kubectl(argv):
        return (0, 'ok', '') if '/readyz' in argv else (0, out, '')
    node.commands[K3S] = kubectl
    assert module_fail(k3s_ready, args(timeout=0)) == message


def test_forbidden_is_reported(node):
    def kubectl(argv):
        if '/readyz' in argv:
            return 0, 'ok', ''
        return 1, '', ('Error from server (Forbidden): nodes "server-1" is forbidden: User "system:anonymous" cannot get '
                       'resource "nodes" in API group "" at the cluster scope\n')
    node.commands[K3S] = kubectl
    assert module_fail(k3s_ready, args(timeout=0)) == (
        'not ready within timeout (0 s): kubectl get node server-1 failed: Error from server (Forbidden): nodes "server-1" '
        'is forbidden: User "system:anonymous" cannot get resource "nodes" in API group "" at the cluster scope')


@pytest.mark.parametrize('change, message', [
    ({'node_name': 'Server_1'}, "node_name 'Server_1' is not a Kubernetes node name: use lower-case letters, digits, "
                                '"-" and ".", starting and ending with a letter or digit, at most 253 characters; give the '
                                'name the node registers with, in lower case (k3s_info returns it as "node_name")'),
    ({'kubectl': []}, 'kubectl must be the kubectl command as a list of non-empty words, for example '
                      '[/usr/local/bin/k3s, kubectl] (k3s_info returns it as "kubectl"); got []'),
    ({'kubectl': [K3S, '']}, 'kubectl must be the kubectl command as a list of non-empty words, for example '
                             "[/usr/local/bin/k3s, kubectl] (k3s_info returns it as \"kubectl\"); got ['/usr/local/bin/k3s', '']"),
    ({'node_name': None, 'since': 5.0}, 'etcd_member, kubelet_version and since are read from a Node: give node_name with them'),
    ({'timeout': -1}, 'timeout must be 0 or more seconds, not -1'),
    ({'interval': 0}, 'interval must be more than 0 seconds when timeout is more than 0'),
])
def test_bad_input(node, change, message):
    assert module_fail(k3s_ready, args(**change)) == message
    assert node.calls == []


def test_a_ready_from_before_the_restart_does_not_count(node):
    """Right after a restart the API may show the previous start's Ready: with since, only a newer heartbeat counts."""
    from ansible_collections.baremetal.k3s.plugins.module_utils import _ready
    beat = {'t': '2026-11-24T10:00:00Z'}

    def kubectl(argv):
        if '--raw' in argv:
            return 0, 'ok', ''
        return 0, json.dumps({'kind': 'Node', 'status': {'conditions': [
            {'type': 'Ready', 'status': 'True', 'lastHeartbeatTime': beat['t']}]}}), ''

    node.commands['/usr/local/bin/k3s'] = kubectl
    node.write('/usr/local/bin/k3s', 'x', 0o755)
    since = _ready.epoch('2026-11-24T10:00:30Z')
    failed, r = run_module(k3s_ready, {'kubectl': ['/usr/local/bin/k3s', 'kubectl'], 'node_name': 'node-1', 'since': since,
                                       'timeout': 0, 'interval': 1})
    assert failed and 'before the restart' in r['msg'], r
    beat['t'] = '2026-11-24T10:00:29Z'  # the second before: the old process could have posted it
    failed, r = run_module(k3s_ready, {'kubectl': ['/usr/local/bin/k3s', 'kubectl'], 'node_name': 'node-1', 'since': since,
                                       'timeout': 0, 'interval': 1})
    assert failed and 'before the restart' in r['msg'], r
    beat['t'] = '2026-11-24T10:00:30Z'
    failed, r = run_module(k3s_ready, {'kubectl': ['/usr/local/bin/k3s', 'kubectl'], 'node_name': 'node-1', 'since': since,
                                       'timeout': 0, 'interval': 1})
    assert not failed and r['node_ready'], r


def test_waited_for_names_each_reason_once_in_order(node):
    """A learner held, then promoted: the wait reports that it waited for the vote, and for how many looks."""
    node.readyz = lambda t: (1, '', REFUSED) if t < 10 else (0, 'ok', '')
    node.nodes = lambda t: {'server-1': node_object('server-1', [READY, LEARNER if t < 40 else VOTER])}
    r = module_ok(k3s_ready, args(etcd_member=True, timeout=120, interval=5))
    assert r['ready'] and r['elapsed'] == 40
    assert r['waited_for'] == [
        {'reason': 'the API server does not answer /readyz: ' + REFUSED.strip(), 'at': 0.0, 'looks': 2},
        {'reason': 'node server-1 is not a voting etcd member: EtcdIsVoter=False (MemberIsLearner: Node has not been '
                   'promoted to voting member of the etcd cluster)', 'at': 10.0, 'looks': 6}]
    assert module_ok(k3s_ready, args())['waited_for'] == []


def versioned(name, version, conditions=(READY,)):
    obj = node_object(name, list(conditions))
    if version is not None:
        obj['status']['nodeInfo'] = {'kubeletVersion': version, 'kernelVersion': '6.1.0'}
    return obj


def test_kubelet_version_waits_for_the_new_version(node):
    """After a binary swap the Node may be Ready with the old version until the new k3s posts its status."""
    node.nodes = lambda t: {'server-1': versioned('server-1', 'v1.30.6+k3s1' if t < 15 else 'v1.31.4+k3s1')}
    r = module_ok(k3s_ready, args(kubelet_version='v1.31.4+k3s1', timeout=120, interval=5))
    assert r['ready'] is True and r['kubelet_version'] == 'v1.31.4+k3s1' and r['elapsed'] == 15
    assert r['msg'] == ('the API answers /readyz and node server-1 is Ready with kubeletVersion v1.31.4+k3s1 '
                        '(after 4 looks, 15.0 s)')
    assert r['waited_for'] == [{'reason': 'node server-1 reports kubeletVersion v1.30.6+k3s1, waiting for v1.31.4+k3s1',
                                'at': 0.0, 'looks': 3}]


@pytest.mark.parametrize('version, conditions, reason', [
    ('v1.30.6+k3s1', (READY,), 'node server-1 reports kubeletVersion v1.30.6+k3s1, waiting for v1.31.4+k3s1'),
    ('v1.31.4+k3s2', (READY,), 'node server-1 reports kubeletVersion v1.31.4+k3s2, waiting for v1.31.4+k3s1'),
    (None, (READY,), 'node server-1 reports kubeletVersion (none), waiting for v1.31.4+k3s1'),
    ('v1.31.4+k3s1', (NOT_READY,),
     'node server-1 is not Ready: Ready=False (KubeletNotReady: container runtime network not ready: NetworkReady=false)'),
])
def test_kubelet_version_mismatch_is_not_ready(node, version, conditions, reason):
    node.nodes = lambda t: {'server-1': versioned('server-1', version, conditions)}
    r = module_ok(k3s_ready, args(kubelet_version='v1.31.4+k3s1', timeout=0, fail_on_timeout=False))
    assert r['ready'] is False and r['kubelet_version'] == version
    assert r['msg'] == 'not ready within timeout (0 s): ' + reason
    assert module_fail(k3s_ready, args(kubelet_version='v1.31.4+k3s1', timeout=0)) == r['msg']


def test_kubelet_version_returned_but_not_required_without_the_option(node):
    node.nodes = lambda t: {'server-1': versioned('server-1', 'v1.30.6+k3s1')}
    r = module_ok(k3s_ready, args())
    assert r['ready'] is True and r['kubelet_version'] == 'v1.30.6+k3s1'
    assert r['msg'] == 'the API answers /readyz and node server-1 is Ready (after 1 look, 0.0 s)'
    node.readyz = lambda t: (1, '', REFUSED)
    assert module_ok(k3s_ready, args(timeout=0, fail_on_timeout=False))['kubelet_version'] is None


@pytest.mark.parametrize('bad', ['', ' v1.31.4+k3s1', 'v1.31.4 +k3s1'])
def test_kubelet_version_bad_input(node, bad):
    assert module_fail(k3s_ready, args(kubelet_version=bad)) == (
        'kubelet_version must be the version the Node reports, as one word (for example v1.31.4+k3s1, what "k3s --version" '
        'prints), not %r' % bad)
    assert node.calls == []
