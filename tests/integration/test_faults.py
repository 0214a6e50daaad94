# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Faults injected into the writing modules: a SIGKILL at random points, and two runs at once.

For each writing module a *case* gives a node tree (under a temp dir standing for ``/``), the
module's arguments, and the files it touches. Then:

* **kill**: a forked child runs the module's ``main()`` with a tracer that counts the lines it
  executes in the one write path (``module_utils/_io.py``) and SIGKILLs itself at line N,
  N drawn at random over the lines a full run executes. Afterwards every touched file holds
  exactly its old bytes or its new bytes (never a mix, never missing), and a second, complete
  run ends with the new bytes and no stray file of ours (temp files of the killed run included)
  in any directory the module writes to.
* **race**: two children run the module at the same moment with different arguments on the
  same files; both changes must be there at the end (no lost update), and each run reports
  changed exactly when it changed something.

``BAREMETAL_K3S_FAULT_TRIALS`` (default 100) sets the kills per case; the random seed is
printed, and ``BAREMETAL_K3S_FAULT_SEED`` replays a run.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.modules import (
    k3s_config_file,
    k3s_manifests,
    k3s_service,
    k3s_service_arg,
    node_lease,
    rollback,
    scheduler_config,
    static_pod_arg,
)

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import FakeNode
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import run_module

TRIALS = int(os.environ.get('BAREMETAL_K3S_FAULT_TRIALS', '100'))
SEED = int(os.environ.get('BAREMETAL_K3S_FAULT_SEED', str(int(time.time()))))
IO_FILE = os.path.realpath(_io.__file__).replace('.pyc', '.py')
SCHED = '--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml'
OWN_CONFIG = '/etc/rancher/k3s/config.yaml.d/99-baremetal-k3s-scheduler.yaml'


class _Monkey:
    """A minimal monkeypatch for a forked child (pytest's fixture is not available there)."""

    def setattr(self, obj, name, value):
        setattr(obj, name, value)


def _node(root):
    return FakeNode(root, _Monkey())


def _run(module, args, kill_at=None, counter=None):
    """Run ``module.main()``; with ``kill_at`` SIGKILL this process at that line of _io.py."""
    if kill_at is not None or counter is not None:
        seen = [0]
        ours = {}

        def tracer(frame, event, arg):
            name = frame.f_code.co_filename
            if name not in ours:
                ours[name] = os.path.realpath(name) == IO_FILE
            if not ours[name]:
                return None
            if event == 'line':
                seen[0] += 1
                if counter is not None:
                    counter[0] = seen[0]
                if kill_at is not None and seen[0] >= kill_at:
                    os.kill(os.getpid(), signal.SIGKILL)
            return tracer

        sys.settrace(tracer)
    try:
        return run_module(module, args)
    finally:
        sys.settrace(None)


def _child(fn):
    """Fork ``fn`` into a child; (pid, read end of the pipe its JSON result comes through)."""
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
    return pid, r


def _wait(pid, r):
    """(exit status, the child's JSON result or None)."""
    data = b''
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    dummy, status = os.waitpid(pid, 0)
    return status, (json.loads(data) if data else None)


def _ours(node, directories):
    """Files of ours that must not stay behind: temp files of the write path."""
    stray = []
    for d in directories:
        host = node.p(d)
        if os.path.isdir(host):
            stray += [os.path.join(d, n) for n in os.listdir(host) if _io.TEMP_INFIX in n]
    return stray


# -- the cases ---------------------------------------------------------------------------------
def _service_arg_config(node):
    node.install()
    return k3s_service_arg, {'arg': SCHED, 'backup': True}, [OWN_CONFIG]


def _service_arg_unit(node):
    unit = node.install(args=['--disable=traefik'])
    return k3s_service_arg, {'arg': SCHED, 'method': 'unit'}, [unit]


def _service_arg_absent(node):
    node.install()
    _run(k3s_service_arg, {'arg': SCHED})
    return k3s_service_arg, {'arg': SCHED, 'state': 'absent'}, [OWN_CONFIG]


SCHED_CONFIG = '/etc/rancher/k3s/kube-scheduler/config.yaml'
SCHED_KUBECONFIG = '/var/lib/rancher/k3s/server/cred/scheduler.kubeconfig'
EXTENDER = {'url_prefix': 'http://127.0.0.1:8889', 'filter_verb': 'filter', 'weight': 1, 'ignorable': True}


def _scheduler_config_new(node):
    node.write(SCHED_KUBECONFIG, 'apiVersion: v1\nkind: Config\n')
    return scheduler_config, {'path': SCHED_CONFIG, 'extender': EXTENDER, 'kubeconfig': SCHED_KUBECONFIG, 'backup': True}, [SCHED_CONFIG]


def _scheduler_config_merge(node):
    node.write(SCHED_KUBECONFIG, 'apiVersion: v1\nkind: Config\n')
    node.write(SCHED_CONFIG, 'apiVersion: kubescheduler.config.k8s.io/v1\r\nkind: KubeSchedulerConfiguration\r\n'
                             'clientConnection:\r\n  kubeconfig: %s\r\nextenders:\r\n- urlPrefix: http://other:1\r\n'
               % SCHED_KUBECONFIG)
    return scheduler_config, {'path': SCHED_CONFIG, 'name': 'csi', 'extender': EXTENDER}, [SCHED_CONFIG]


MANIFEST = '/etc/kubernetes/manifests/kube-scheduler.yaml'
POD = ('apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-scheduler\n  namespace: kube-system\nspec:\n  containers:\n'
       '  - command:\n    - kube-scheduler\n    - --kubeconfig=/etc/kubernetes/scheduler.conf\n'
       '    image: registry.k8s.io/kube-scheduler:v1.36.3\n    name: kube-scheduler\n'
       '    volumeMounts:\n    - mountPath: /etc/kubernetes/scheduler.conf\n      name: kubeconfig\n      readOnly: true\n'
       '  volumes:\n  - hostPath:\n      path: /etc/kubernetes/scheduler.conf\n      type: FileOrCreate\n    name: kubeconfig\n')


def _static_pod(node):
    node.write(MANIFEST, POD)
    node.write('/etc/kubernetes/kube-scheduler/config.yaml', 'x')
    return static_pod_arg, {'path': MANIFEST, 'arg': '--config=/etc/kubernetes/kube-scheduler/config.yaml', 'backup': True,
                            'backup_dir': '/var/backups/baremetal-k3s'}, [MANIFEST]


SERVICE_UNIT = '/etc/systemd/system/k3s.service'
SERVICE_ENV = '/etc/systemd/system/k3s.service.env'
CLUSTER_CONFIG = '/etc/rancher/k3s/config.yaml.d/50-cluster.yaml'


def _service_new(node):
    return k3s_service, {'args': ['--disable=traefik', "--node-label=owner=it's"], 'env': {'K3S_TOKEN': 'K10x::server:y'},
                         'backup': True}, [SERVICE_UNIT, SERVICE_ENV]


def _service_change(node):
    node.install(args=['--disable=traefik'], environ={'K3S_URL': 'https://a:6443'})
    return k3s_service, {'args': ['--disable=traefik', '--node-label=zone=a'], 'env': {'K3S_URL': 'https://b:6443'},
                         'type': 'exec', 'backup': True}, [SERVICE_UNIT, SERVICE_ENV]


def _service_openrc(node):
    node.write('/sbin/openrc-run', '#!/bin/sh\n', 0o755)
    node.install(init='openrc', args=['--disable=traefik'])
    return k3s_service, {'args': ['--node-label=zone=a']}, ['/etc/init.d/k3s']


def _service_absent(node):
    node.install(environ={'K3S_TOKEN': 't'})
    return k3s_service, {'state': 'absent', 'backup': True}, [SERVICE_UNIT, SERVICE_ENV]


def _config_file_new(node):
    node.write('/etc/rancher/k3s/config.yaml', 'disable: [traefik]\n')
    return k3s_config_file, {'name': '50-cluster.yaml', 'values': {'node-label+': ['zone=a'], 'token': 'x', 'v': 2},
                             'backup': True}, [CLUSTER_CONFIG]


def _config_file_change(node):
    failed, result = _run(k3s_config_file, {'name': '50-cluster.yaml', 'values': {'tls-san': ['a']}})
    assert not failed, result
    return k3s_config_file, {'name': '50-cluster.yaml', 'values': {'tls-san': ['a', 'b'], 'cluster-init': True},
                             'backup': True}, [CLUSTER_CONFIG]


def _config_file_absent(node):
    failed, result = _run(k3s_config_file, {'name': '50-cluster.yaml', 'values': {'tls-san': ['a']}})
    assert not failed, result
    return k3s_config_file, {'name': '50-cluster.yaml', 'state': 'absent'}, [CLUSTER_CONFIG]


MANIFESTS_DIR = '/var/lib/rancher/k3s/server/manifests'
MANIFESTS_RECORD = MANIFESTS_DIR + '/.baremetal-k3s-manifests-default'
MANIFESTS_FOREIGN = [MANIFESTS_DIR + '/coredns.yaml', MANIFESTS_DIR + '/admin.yaml']
NAMESPACE_YAML = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n'
NAMESPACE_JSON = '{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "%s"}}\n'


def _manifests_dir(node):
    """A server's manifests directory with k3s's own file and the administrator's: no run may touch them."""
    node.write(MANIFESTS_DIR + '/coredns.yaml', NAMESPACE_YAML % 'k3s-own')
    node.write(MANIFESTS_DIR + '/admin.yaml', NAMESPACE_YAML % 'admin')


def _manifest_list(*names):
    """[{name, content}]: a Namespace named after each file, as JSON in a .json file."""
    return [{'name': n, 'content': (NAMESPACE_JSON if n.endswith('.json') else NAMESPACE_YAML) % n.split('.')[0]}
            for n in names]


def _manifests_place(node):
    _manifests_dir(node)
    names = ('a.yaml', 'b.yml', 'c.json')
    return k3s_manifests, {'manifests': _manifest_list(*names), 'backup': True}, \
        ['%s/%s' % (MANIFESTS_DIR, n) for n in names] + [MANIFESTS_RECORD] + MANIFESTS_FOREIGN


def _manifests_change(node):
    """One replaced, one kept, one dropped (removed), one added; the record is written last."""
    _manifests_dir(node)
    failed, result = _run(k3s_manifests, {'manifests': _manifest_list('a.yaml', 'b.yml', 'c.json')})
    assert not failed, result
    wanted = [{'name': 'a.yaml', 'content': NAMESPACE_YAML % 'a-changed'}] + _manifest_list('b.yml', 'd.yaml')
    return k3s_manifests, {'manifests': wanted, 'backup': True}, \
        ['%s/%s' % (MANIFESTS_DIR, n) for n in ('a.yaml', 'b.yml', 'c.json', 'd.yaml')] + [MANIFESTS_RECORD] + MANIFESTS_FOREIGN


def _manifests_new_dir(node):
    """The manifests directory made by the run (its parent exists, as k3s made it)."""
    node.makedirs('/var/lib/rancher/k3s/server')
    return k3s_manifests, {'manifests': _manifest_list('a.yaml')}, [MANIFESTS_DIR + '/a.yaml', MANIFESTS_RECORD]


def _lease(node):
    return node_lease, {'name': 'scheduler_extender', 'owner': 'run-1', 'timeout': 0}, ['/run/baremetal-k3s/scheduler_extender.lease']


def _rollback(node):
    unit = node.install()
    failed, result = _run(k3s_service_arg, {'arg': SCHED, 'method': 'unit', 'backup': True})
    assert not failed, result
    return rollback, {'files': result['files']}, [unit]


CASES = {
    'k3s_service_arg/config': _service_arg_config,
    'k3s_service_arg/unit': _service_arg_unit,
    'k3s_service_arg/absent': _service_arg_absent,
    'node_lease': _lease,
    'k3s_manifests/place': _manifests_place,
    'k3s_manifests/change': _manifests_change,
    'k3s_manifests/new_dir': _manifests_new_dir,
    'k3s_service/new': _service_new,
    'k3s_service/change': _service_change,
    'k3s_service/openrc': _service_openrc,
    'k3s_service/absent': _service_absent,
    'k3s_config_file/new': _config_file_new,
    'k3s_config_file/change': _config_file_change,
    'k3s_config_file/absent': _config_file_absent,
    'static_pod_arg': _static_pod,
    'scheduler_config/new': _scheduler_config_new,
    'scheduler_config/merge': _scheduler_config_merge,
    'rollback': _rollback,
}


def _state(node, paths):
    """The touched files' bytes (a lease without its time stamps, which differ from run to run)."""
    out = {}
    for p in paths:
        data = node.read(p)
        if data is not None and p.endswith('.lease'):
            lease = json.loads(data)
            data = json.dumps({k: v for k, v in lease.items() if k not in ('since', 'renewed')}, sort_keys=True).encode()
        out[p] = data
    return out


@pytest.mark.parametrize('case', sorted(CASES))
def test_killed_at_random_points(tmp_path, case):
    rng = random.Random('%s-%s' % (SEED, case))
    # a reference run: the old bytes, the new bytes, and how many lines of _io.py a full run executes
    ref = _node(tmp_path / 'ref')
    module, args, paths = CASES[case](ref)
    old = _state(ref, paths)
    counter = [0]
    failed, result = _run(module, args, counter=counter)
    assert not failed, result
    new = _state(ref, paths)
    assert old != new, 'the case changes nothing: %s' % case
    total = counter[0]
    assert total > 0
    outcomes = {'old': 0, 'new': 0}
    for trial in range(TRIALS):
        node = _node(tmp_path / ('t%d' % trial))
        module, args, paths = CASES[case](node)
        kill_at = rng.randint(1, total)
        status, dummy = _wait(*_child(lambda: _run(module, args, kill_at=kill_at)))
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, \
            '%s trial %d (seed %s): the child was not killed at line %d of %d' % (case, trial, SEED, kill_at, total)
        after = _state(node, paths)
        for p in paths:
            assert after[p] in (old[p], new[p]), \
                '%s trial %d (seed %s, killed at line %d of %d): %s is neither old nor new: %r' % (
                    case, trial, SEED, kill_at, total, p, after[p])
        outcomes['new' if after == new else 'old'] += 1
        failed, result = _run(module, args)
        assert not failed, result
        assert _state(node, paths) == new
        dirs = {os.path.dirname(p) for p in paths}
        assert _ours(node, dirs) == [], '%s trial %d (seed %s): stray files %s' % (case, trial, SEED, _ours(node, dirs))
    print('%s: %d kills over %d lines of the write path (seed %s): %d left the old bytes, %d the new'
          % (case, TRIALS, total, SEED, outcomes['old'], outcomes['new']))


# -- two runs at once ----------------------------------------------------------------------------
def _race_service_arg(method):
    def setup(node):
        unit = node.install()
        extra = {'method': method} if method else {}
        args = [dict({'arg': a}, **extra) for a in ('--kube-apiserver-arg=v=2', '--kube-apiserver-arg=audit-log-maxage=3')]

        def check(node):
            return all(v in (node.read(OWN_CONFIG) or b'') + node.read(unit) for v in (b'v=2', b'audit-log-maxage=3'))
        return k3s_service_arg, args, check
    return setup


def _race_scheduler_config(node):
    node.write(SCHED_KUBECONFIG, 'apiVersion: v1\nkind: Config\n')
    node.write(SCHED_CONFIG, 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n'
                             'clientConnection:\n  kubeconfig: %s\nextenders: []\n' % SCHED_KUBECONFIG)
    args = [{'path': SCHED_CONFIG, 'name': name, 'extender': dict(EXTENDER, url_prefix=url)}
            for name, url in (('a', 'http://127.0.0.1:8001'), ('b', 'http://127.0.0.1:8002'))]

    def check(node):
        text = node.read(SCHED_CONFIG)
        return b'8001' in text and b'8002' in text
    return scheduler_config, args, check


def _race_config_file(node):
    """Two of our files in one directory at once (the directory made by one of them): both end up there."""
    args = [{'name': n, 'values': {'node-label+': [label]}} for n, label in (('50-a.yaml', 'a=1'), ('60-b.yaml', 'b=2'))]

    def check(node):
        return node.read('/etc/rancher/k3s/config.yaml.d/50-a.yaml') is not None and \
            node.read('/etc/rancher/k3s/config.yaml.d/60-b.yaml') is not None
    return k3s_config_file, args, check


def _race_manifests_sets(node):
    """Two sets at once into a directory neither finds: both make it, both place their file and their record."""
    node.makedirs('/var/lib/rancher/k3s/server')
    sets = ('csi', 'monitoring')
    args = [{'set': s, 'manifests': _manifest_list('%s.yaml' % s)} for s in sets]

    def check(node):
        return all(node.read('%s/%s.yaml' % (MANIFESTS_DIR, s)) == (NAMESPACE_YAML % s).encode() and
                   node.exists('%s/.baremetal-k3s-manifests-%s' % (MANIFESTS_DIR, s)) for s in sets)
    return k3s_manifests, args, check


def _race_manifests_one_set(node):
    """Two runs of one set with different lists: the later one wins, and no file of the earlier one is left behind
    unrecorded (without the lock both write their file, and the record written last lists only its own)."""
    _manifests_dir(node)
    args = [{'manifests': _manifest_list(n)} for n in ('a.yaml', 'b.yaml')]

    def check(node):
        ours = sorted(set(node.listdir(MANIFESTS_DIR)) - {'coredns.yaml', 'admin.yaml', os.path.basename(MANIFESTS_RECORD)})
        return len(ours) == 1 and sorted(json.loads(node.read(MANIFESTS_RECORD))['manifests']) == ours
    return k3s_manifests, args, check


RACES = {
    'k3s_manifests/sets': _race_manifests_sets,
    'k3s_manifests/one_set': _race_manifests_one_set,
    'k3s_config_file': _race_config_file,
    'k3s_service_arg/config': _race_service_arg(None),
    'k3s_service_arg/unit': _race_service_arg('unit'),
    'scheduler_config': _race_scheduler_config,
}


@pytest.mark.parametrize('case', sorted(RACES))
def test_two_runs_at_once_lose_nothing(tmp_path, case):
    rounds = max(5, TRIALS // 10)
    for n in range(rounds):
        node = _node(tmp_path / ('r%d' % n))
        module, both, check = RACES[case](node)
        start = time.time() + 0.2

        def runner(args):
            def go():
                while time.time() < start:
                    pass
                return _run(module, args)
            return go

        children = [_child(runner(args)) for args in both]
        for failed, result in [_wait(pid, r)[1] for pid, r in children]:
            assert not failed, result
            assert result['changed'] is True
        assert check(node), '%s round %d: a change was lost' % (case, n)
