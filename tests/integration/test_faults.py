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
  in any directory the module writes to, nor a lock file of those files.
* **race**: two children run the module at the same moment with different arguments on the
  same files; both changes must be there at the end (no lost update), and each run reports
  changed exactly when it changed something. The locks' own races: one file named two ways
  (a symlink to it or to its directory, ``..``, a bind mount) and a rollback of a file while
  scheduler_config writes it (the restore never lost), each raced as often as the kills.

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

from ansible_collections.baremetal.k3s.plugins.module_utils import _backup, _binary, _io, _killall, _lock, _restore
from ansible_collections.baremetal.k3s.plugins.modules import (
    k3s_binary,
    k3s_config_file,
    k3s_files,
    k3s_backup,
    k3s_killall,
    k3s_manifests,
    k3s_restore,
    k3s_service,
    k3s_service_arg,
    k3s_registries,
    k3s_token_file,
    node_lease,
    rollback,
    scheduler_config,
    static_pod_arg,
)

from ansible_collections.baremetal.k3s.tests.integration import mount_namespace
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import FakeNode
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import run_module

TRIALS = int(os.environ.get('BAREMETAL_K3S_FAULT_TRIALS', '100'))
SEED = int(os.environ.get('BAREMETAL_K3S_FAULT_SEED', str(int(time.time()))))
IO_FILE = os.path.realpath(_io.__file__).replace('.pyc', '.py')
BACKUP_FILE = os.path.realpath(_backup.__file__).replace('.pyc', '.py')
RESTORE_FILE = os.path.realpath(_restore.__file__).replace('.pyc', '.py')
BINARY_FILE = os.path.realpath(_binary.__file__).replace('.pyc', '.py')
KILLALL_FILE = os.path.realpath(_killall.__file__).replace('.pyc', '.py')
SCHED = '--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml'
OWN_CONFIG = '/etc/rancher/k3s/config.yaml.d/99-baremetal-k3s-scheduler.yaml'


class _Monkey:
    """A minimal monkeypatch for a forked child (pytest's fixture is not available there)."""

    def setattr(self, obj, name, value):
        setattr(obj, name, value)


def _node(root):
    return FakeNode(root, _Monkey())


def _run(module, args, kill_at=None, counter=None, traced=(IO_FILE,)):
    """Run ``module.main()``; with ``kill_at`` SIGKILL this process at that line of the write path (the lines of
    ``traced``: _io.py, or the module_utils of a module that writes without it)."""
    if kill_at is not None or counter is not None:
        seen = [0]
        ours = {}

        def tracer(frame, event, arg):
            name = frame.f_code.co_filename
            if name not in ours:
                ours[name] = os.path.realpath(name).replace('.pyc', '.py') in traced
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


def _lock_files(node, paths):
    """The lock files of ``paths`` still in the lock directory (the killed run's included: the next run removes them)."""
    names = {_lock.lock_name(f) for p in paths for f in _lock.file_forms(os.path.realpath(node.p(p)))}
    return sorted(names & set(os.listdir(_lock.lock_dir())))


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


def _rollback_discard(node):
    unit = node.install()
    failed, result = _run(k3s_service_arg, {'arg': SCHED, 'method': 'unit', 'backup': True})
    assert not failed, result
    backup = unit + '.1.2026-01-01@00:00:00~'  # one name in every trial (the pid and time in it differ)
    os.rename(node.p(result['files'][0]['backup_file']), node.p(backup))
    files = [dict(result['files'][0], backup_file=backup)]
    return rollback, {'files': files, 'mode': 'discard'}, [unit, backup]


def _token_file(node):
    node.write('/var/lib/rancher/k3s/server/token', 'K10abc0000000000000000000000000000000000000000000000000000000000000::server:old\n', 0o600)
    return k3s_token_file, {'path': '/etc/rancher/k3s/cluster-token',
                            'token': 'K10abc0000000000000000000000000000000000000000000000000000000000000::server:new'}, \
        ['/etc/rancher/k3s/cluster-token']


REGISTRIES = '/etc/rancher/k3s/registries.yaml'
MIRROR = {'docker.io': {'endpoint': ['https://registry.example:5000']}}


def _registries_new(node):  # pylint: disable=unused-argument
    return k3s_registries, {'mirrors': MIRROR, 'configs': {'registry.example:5000': {
        'auth': {'username': 'puller', 'password': 'p'}}}}, [REGISTRIES]


def _registries_change(node):  # pylint: disable=unused-argument
    failed, result = _run(k3s_registries, {'mirrors': MIRROR})
    assert not failed, result
    return k3s_registries, {'mirrors': dict(MIRROR, **{'quay.io': {'endpoint': ['https://registry.example:5000']}})}, \
        [REGISTRIES]


def _token_file_replace(node):
    """A token rotation over a file another user could read: the new token lands 0600 and root's, or the old stays."""
    node.write('/etc/rancher/k3s/cluster-token', 'K10abc0000000000000000000000000000000000000000000000000000000000000'
                                                 '::server:old\n', 0o644)
    return k3s_token_file, {'path': '/etc/rancher/k3s/cluster-token', 'token': 'K10abc00000000000000000000000000000000'
                            '00000000000000000000000000000::server:new', 'replace': True}, ['/etc/rancher/k3s/cluster-token']


def _registries_take_over(node):
    """An operator's registries.yaml taken over (kept as a backup), its passwords now in a 0600 file of root's."""
    node.write(REGISTRIES, 'configs:\n  registry.example:5000:\n    auth:\n      password: >-\n        op\n', 0o644)
    return k3s_registries, {'mirrors': MIRROR, 'configs': {'registry.example:5000': {
        'auth': {'username': 'puller', 'password': 'p@ss'}}}, 'take_over': True}, [REGISTRIES]


def _token_file_absent(node):
    node.write('/etc/rancher/k3s/cluster-token', 'K10abc0000000000000000000000000000000000000000000000000000000000000::server:old\n', 0o600)
    return k3s_token_file, {'path': '/etc/rancher/k3s/cluster-token', 'state': 'absent'}, \
        ['/etc/rancher/k3s/cluster-token']


def _files(node):
    """k3s_files: four parts in one run, killed anywhere - each file old or new, as each module alone leaves it."""
    node.install(args=['--disable=traefik'])
    return k3s_files, {
        'token_file': {'path': '/etc/rancher/k3s/cluster-token',
                       'token': 'K10abc0000000000000000000000000000000000000000000000000000000000000::server:new'},
        'config_file': {'name': '50-cluster.yaml', 'values': {'token-file': '/etc/rancher/k3s/cluster-token'}},
        'registries': {'mirrors': MIRROR},
        'service': {'args': ['--disable=traefik', '--node-label=zone=a'], 'backup': True},
    }, ['/etc/rancher/k3s/cluster-token', CLUSTER_CONFIG, REGISTRIES, SERVICE_UNIT]


CASES = {
    'rollback/discard': _rollback_discard,
    'k3s_token_file': _token_file,
    'k3s_token_file/absent': _token_file_absent,
    'k3s_registries/new': _registries_new,
    'k3s_registries/change': _registries_change,
    'k3s_registries/take_over': _registries_take_over,
    'k3s_token_file/replace': _token_file_replace,
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
    'k3s_files': _files,
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
        for p in paths:  # a file that holds a secret is 0600 and root's after the run that completes
            if module in (k3s_token_file, k3s_registries) and node.exists(p):
                assert node.mode(p) == 0o600 and os.stat(node.p(p)).st_uid == 0, (case, trial, p)
        dirs = {os.path.dirname(p) for p in paths}
        assert _ours(node, dirs) == [], '%s trial %d (seed %s): stray files %s' % (case, trial, SEED, _ours(node, dirs))
        assert _lock_files(node, paths) == [], '%s trial %d (seed %s): lock files left' % (case, trial, SEED)
    print('%s: %d kills over %d lines of the write path (seed %s): %d left the old bytes, %d the new'
          % (case, TRIALS, total, SEED, outcomes['old'], outcomes['new']))


# -- two runs at once ----------------------------------------------------------------------------
# A case gives the runs to start at one moment ([(module, args)], or (module, [args, args]) when both run one
# module), a check of the node afterwards, and optionally ``before``: {index: fn} run in that child first (a
# mount namespace of its own). ROUNDS (default max(5, trials / 10)) says how often a case is raced.


def _race_service_arg(method):
    def setup(node):
        unit = node.install()
        extra = {'method': method} if method else {}
        args = [dict({'arg': a}, **extra) for a in ('--kube-apiserver-arg=v=2', '--kube-apiserver-arg=audit-log-maxage=3')]

        def check(node):
            return all(v in (node.read(OWN_CONFIG) or b'') + node.read(unit) for v in (b'v=2', b'audit-log-maxage=3'))
        return k3s_service_arg, args, check
    return setup


SCHED_EMPTY = ('apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n'
               'clientConnection:\n  kubeconfig: %s\nextenders: []\n' % SCHED_KUBECONFIG)


def _extender(name, port):
    return {'path': SCHED_CONFIG, 'name': name, 'extender': dict(EXTENDER, url_prefix='http://127.0.0.1:%d' % port)}


def _race_scheduler_config(node):
    node.write(SCHED_KUBECONFIG, 'apiVersion: v1\nkind: Config\n')
    node.write(SCHED_CONFIG, SCHED_EMPTY)
    args = [_extender('a', 8001), _extender('b', 8002)]

    def check(node):
        text = node.read(SCHED_CONFIG)
        return b'8001' in text and b'8002' in text
    return scheduler_config, args, check


# Other spellings of SCHED_CONFIG: a link to the file, a link to its directory, a ``..`` (one per round, in turn)
SPELLINGS = (
    ('/etc/scheduler-config.yaml', SCHED_CONFIG),
    ('/etc/kube-scheduler/config.yaml', os.path.dirname(SCHED_CONFIG)),
    ('/etc/rancher/k3s/kube-scheduler/../kube-scheduler/config.yaml', None),
)


def _race_spellings(node, n):
    """One file named two ways by two runs at once: one lock, both extenders kept."""
    spelled, link_to = SPELLINGS[n % len(SPELLINGS)]
    dummy, args, check = _race_scheduler_config(node)
    if link_to:
        node.symlink(link_to, spelled if link_to == SCHED_CONFIG else os.path.dirname(spelled))
    args[1]['path'] = spelled
    return [(scheduler_config, args[0]), (scheduler_config, args[1])], check


def _race_bind_mount(node, n):  # pylint: disable=unused-argument
    """The same through a bind mount of /etc/rancher/k3s on /srv/k3s, mounted in the second run's own namespace."""
    dummy, args, check = _race_scheduler_config(node)
    node.makedirs('/srv/k3s')
    args[1]['path'] = '/srv/k3s/kube-scheduler/config.yaml'

    def mount():
        mount_namespace.private_mounts()
        mount_namespace.bind_mount(node.p('/etc/rancher/k3s'), node.p('/srv/k3s'))
        assert os.path.samefile(node.p(args[1]['path']), node.p(SCHED_CONFIG))
    return [(scheduler_config, args[0]), (scheduler_config, args[1])], check, {1: mount}


def _race_rollback(node, n):  # pylint: disable=unused-argument
    """A rollback of a scheduler_config run while scheduler_config adds another extender: the restore is never lost.

    Either order is fine (the restore then ``b`` added to it, or ``b`` added then the restore); what must not
    happen is the rollback reporting the file restored while ``a`` (the run it undid) is still in it.
    """
    args = _race_scheduler_config(node)[1]
    failed, result = _run(scheduler_config, dict(args[0], backup=True))
    assert not failed, result
    assert b'8001' in node.read(SCHED_CONFIG) and result['files'][0]['backup_file']

    def check(node):
        text = node.read(SCHED_CONFIG)
        return b'8001' not in text and node.read(result['files'][0]['backup_file']) is None
    return [(rollback, {'files': result['files']}), (scheduler_config, args[1])], check


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


def _by_round(setup):
    """A case whose setup takes the round number."""
    setup.by_round = True
    return setup


RACES = {
    'k3s_manifests/sets': _race_manifests_sets,
    'k3s_manifests/one_set': _race_manifests_one_set,
    'k3s_config_file': _race_config_file,
    'k3s_service_arg/config': _race_service_arg(None),
    'k3s_service_arg/unit': _race_service_arg('unit'),
    'scheduler_config': _race_scheduler_config,
    'scheduler_config/spellings': _by_round(_race_spellings),
    'scheduler_config/bind_mount': _by_round(_race_bind_mount),
    'rollback/scheduler_config': _by_round(_race_rollback),
}
# the races of the locks themselves (one file, two spellings; rollback against a writer): as many rounds as kills
ROUNDS = {'scheduler_config/spellings': TRIALS, 'scheduler_config/bind_mount': TRIALS, 'rollback/scheduler_config': TRIALS}


def _race(setup, node, n):
    """([(module, args)], check, {child index: fn to run first}) of one round of a case."""
    case = setup(node, n) if getattr(setup, 'by_round', False) else setup(node)
    if len(case) == 3 and not isinstance(case[0], list) and not isinstance(case[2], dict):
        module, both, check = case
        return [(module, args) for args in both], check, {}
    return case[0], case[1], (case[2] if len(case) > 2 else {})


@pytest.mark.parametrize('case', sorted(RACES))
def test_two_runs_at_once_lose_nothing(tmp_path, case):
    if case.endswith('/bind_mount'):
        mount_namespace.require()
    rounds = ROUNDS.get(case, max(5, TRIALS // 10))
    for n in range(rounds):
        node = _node(tmp_path / ('r%d' % n))
        runs, check, before = _race(RACES[case], node, n)
        start = time.time() + 0.2

        def runner(i, module, args):
            def go():
                if i in before:
                    before[i]()
                while time.time() < start:
                    pass
                return _run(module, args)
            return go

        children = [_child(runner(i, module, args)) for i, (module, args) in enumerate(runs)]
        for (module, args), (status, outcome) in zip(runs, [_wait(pid, r) for pid, r in children]):
            assert outcome is not None, '%s round %d: %s died (status %s)' % (case, n, module.__name__, status)
            failed, result = outcome
            assert not failed, result
            assert result['changed'] is True
        assert check(node), '%s round %d: a change was lost' % (case, n)


# -- k3s_backup and k3s_restore: an archive streamed, a datastore directory swapped (_io.stream_file, _io.replace_dir) -
# The same kills, at random lines of their own module_utils and of _io (where their temp files, renames and exchange
# are). A backup leaves no archive under its final name that is not whole (its checksum, when there, matches it); a
# restore leaves server/db holding the old or the new datastore, never missing, never a mix; the next run completes
# and leaves no temp file of either behind.
DATA = '/var/lib/rancher/k3s'
DB_DIR = DATA + '/server/db'
TOKEN = DATA + '/server/token'
BACKUP_DIR = '/var/backups/k3s'
OLD_DB = b'the datastore before the restore'
OLD_TOKEN = b'K10old::server:before\n'


def _sqlite_server(node):
    import sqlite3  # pylint: disable=import-outside-toplevel
    node.makedirs(DB_DIR)
    conn = sqlite3.connect(node.p(DB_DIR + '/state.db'))
    conn.execute('CREATE TABLE kine (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, value BLOB)')
    conn.executemany('INSERT INTO kine (name, value) VALUES (?, ?)', [('/registry/x/%d' % i, b'v' * 200) for i in range(50)])
    conn.commit()
    conn.close()
    node.write(TOKEN, 'K10hash::server:pw\n', 0o600)


class _Clock:
    """time.time for one module run: a second of its own, so that archive and aside names never meet."""

    def __init__(self, when):
        self.when = when
        self.real = time.time

    def __enter__(self):
        time.time = lambda: self.when
        return self

    def __exit__(self, *exc):
        time.time = self.real


def _backup_archives(node):
    """{archive name: (whole, checksum state)} of the backup directory: whole when it reads as a tar.gz with its
    manifest; the checksum 'ok', 'none' or 'mismatch'."""
    import hashlib  # pylint: disable=import-outside-toplevel
    import tarfile  # pylint: disable=import-outside-toplevel
    out = {}
    names = node.listdir(BACKUP_DIR) if node.exists(BACKUP_DIR) else []
    for name in names:
        if not _backup.ARCHIVE_RE.fullmatch(name):
            continue
        try:
            with tarfile.open(node.p(BACKUP_DIR + '/' + name)) as tar:
                whole = _backup.MANIFEST in tar.getnames() and tar.extractfile(_backup.DB_MEMBER).read() != b''
        except (tarfile.TarError, EOFError, OSError, KeyError):
            whole = False
        total = node.read(BACKUP_DIR + '/' + name + '.sha256')
        digest = hashlib.sha256(node.read(BACKUP_DIR + '/' + name)).hexdigest()
        out[name] = (whole, 'none' if total is None else 'ok' if _backup.parse_sha256(total.decode()) == digest
                     else 'mismatch')
    return out


def _temps(node, directory, prefixes):
    host = node.p(directory)
    return sorted(n for n in (os.listdir(host) if os.path.isdir(host) else []) if n.startswith(prefixes))


def test_backup_killed_at_random_points(tmp_path):
    rng = random.Random('%s-k3s_backup' % SEED)
    ref = _node(tmp_path / 'ref')
    _sqlite_server(ref)
    counter = [0]
    with _Clock(1_800_000_000):
        failed, result = _run(k3s_backup, {'backup_dir': BACKUP_DIR}, counter=counter, traced=(BACKUP_FILE, IO_FILE))
    assert not failed, result
    total = counter[0]
    outcomes = {'no archive': 0, 'archive without checksum': 0, 'archive': 0}
    for trial in range(TRIALS):
        node = _node(tmp_path / ('t%d' % trial))
        _sqlite_server(node)
        kill_at = rng.randint(1, total)

        def killed():
            with _Clock(1_800_000_000):
                return _run(k3s_backup, {'backup_dir': BACKUP_DIR}, kill_at=kill_at, traced=(BACKUP_FILE, IO_FILE))
        status, dummy = _wait(*_child(killed))
        where = 'k3s_backup trial %d (seed %s, killed at line %d of %d)' % (trial, SEED, kill_at, total)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, where + ': not killed'
        archives = _backup_archives(node)
        torn = [n for n, (whole, checksum) in archives.items() if not whole or checksum == 'mismatch']
        assert torn == [], '%s: torn archive %s' % (where, archives)
        outcomes['no archive' if not archives else 'archive without checksum'
                 if any(c == 'none' for dummy2, c in archives.values()) else 'archive'] += 1
        with _Clock(1_800_000_100):
            failed, result = _run(k3s_backup, {'backup_dir': BACKUP_DIR})
        assert not failed, '%s: the next run failed: %s' % (where, result)
        assert _backup_archives(node)[os.path.basename(result['archive'])] == (True, 'ok')
        assert _temps(node, BACKUP_DIR, (_backup.TEMP_PREFIX,)) == [], '%s: temp files left' % where
        assert _lock_files(node, [DB_DIR, BACKUP_DIR]) == [], '%s: lock files left' % where
    print('k3s_backup: %d kills over %d lines of the write path (seed %s): %s; 0 torn, 0 temp files after the next run'
          % (TRIALS, total, SEED, outcomes))


def _restore_node(node):
    """A server with an archive of its datastore, then a datastore and a token that differ from the archive's."""
    _sqlite_server(node)
    with _Clock(1_700_000_000):
        failed, result = _run(k3s_backup, {'backup_dir': BACKUP_DIR})
    assert not failed, result
    new_db = _restore_new_db(node, result['archive'])
    node.write(DB_DIR + '/state.db', OLD_DB)
    node.write(TOKEN, OLD_TOKEN, 0o600)
    return {'archive': result['archive'], 'service': ''}, new_db


def _restore_new_db(node, archive):
    import tarfile  # pylint: disable=import-outside-toplevel
    with tarfile.open(node.p(archive)) as tar:
        return tar.extractfile(_backup.DB_MEMBER).read()


def _datastore(node, new_db):
    """What server/db holds: 'old', 'new', 'missing' (no server/db, or no state.db in it) or 'torn'."""
    if not os.path.isdir(node.p(DB_DIR)):
        return 'missing'
    data = node.read(DB_DIR + '/state.db')
    return 'missing' if data is None else 'old' if data == OLD_DB else 'new' if data == new_db else 'torn'


def test_restore_killed_at_random_points(tmp_path):
    rng = random.Random('%s-k3s_restore' % SEED)
    ref = _node(tmp_path / 'ref')
    args, new_db = _restore_node(ref)
    counter = [0]
    with _Clock(1_800_000_000):
        failed, result = _run(k3s_restore, args, counter=counter, traced=(RESTORE_FILE, IO_FILE))
    assert not failed, result
    assert _datastore(ref, new_db) == 'new'
    new_token = ref.read(TOKEN)
    total = counter[0]
    outcomes = {'old': 0, 'new': 0}
    kept = 0
    for trial in range(TRIALS):
        node = _node(tmp_path / ('t%d' % trial))
        args, new_db = _restore_node(node)
        kill_at = rng.randint(1, total)

        def killed():
            with _Clock(1_800_000_000):
                return _run(k3s_restore, args, kill_at=kill_at, traced=(RESTORE_FILE, IO_FILE))
        status, dummy = _wait(*_child(killed))
        where = 'k3s_restore trial %d (seed %s, killed at line %d of %d)' % (trial, SEED, kill_at, total)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, where + ': not killed'
        state = _datastore(node, new_db)
        assert state in ('old', 'new'), '%s: server/db is %s' % (where, state)
        assert node.read(TOKEN) in (OLD_TOKEN, new_token), '%s: the token is %r' % (where, node.read(TOKEN))
        outcomes[state] += 1
        with _Clock(1_800_000_100):
            failed, result = _run(k3s_restore, args)
        assert not failed, '%s: the next run failed: %s' % (where, result)
        kept += len(result['stale_kept'])
        assert _datastore(node, new_db) == 'new' and node.read(TOKEN) == new_token, where
        assert _temps(node, DATA + '/server', (_restore.STAGE_PREFIX, '.token.')) == [], '%s: temp files left' % where
        asides = _temps(node, DATA + '/server', ('db' + _restore.ASIDE_INFIX,))
        assert any(node.read('%s/server/%s/state.db' % (DATA, a)) == OLD_DB for a in asides), \
            '%s: the datastore before the restore is nowhere (%s)' % (where, asides)
        assert _lock_files(node, [DB_DIR, TOKEN]) == [], '%s: lock files left' % where
    print('k3s_restore: %d kills over %d lines of the write path (seed %s): %d left the old datastore, %d the new, %d a '
          'replaced one in the stage (kept aside by the next run); 0 missing or torn, 0 temp files after the next run'
          % (TRIALS, total, SEED, outcomes['old'], outcomes['new'], kept))


def test_restore_holds_each_step_open_and_server_db_is_never_missing(tmp_path):
    """The restore runs in a child that stops before every line of _restore.py and _io.py (so before and after each
    rename and exchange) until the parent has looked at server/db: it must hold the old or the new datastore every
    time."""
    node = _node(tmp_path / 'n')
    args, new_db = _restore_node(node)
    to_parent, from_child = os.pipe()
    to_child, from_parent = os.pipe()

    def held():
        os.close(to_parent)
        os.close(from_parent)

        def tracer(frame, event, arg):
            if os.path.realpath(frame.f_code.co_filename).replace('.pyc', '.py') not in (RESTORE_FILE, IO_FILE):
                return None
            if event == 'line':
                os.write(from_child, b'.')
                os.read(to_child, 1)
            return tracer
        sys.settrace(tracer)
        try:
            with _Clock(1_800_000_000):
                return run_module(k3s_restore, args)
        finally:
            sys.settrace(None)
            os.close(from_child)

    pid, r = _child(held)
    os.close(from_child)
    os.close(to_child)
    looks, seen = 0, set()
    while os.read(to_parent, 1):
        state = _datastore(node, new_db)
        assert state in ('old', 'new'), 'at step %d server/db is %s' % (looks, state)
        seen.add(state)
        looks += 1
        os.write(from_parent, b'.')
    status, outcome = _wait(pid, r)
    assert outcome is not None and not outcome[0], (status, outcome)
    assert seen == {'old', 'new'} and _datastore(node, new_db) == 'new', (seen, looks)
    print('k3s_restore held at %d steps: server/db never missing' % looks)


# -- k3s_binary: the old binary kept as .previous (a hard link renamed), the new one renamed over path ------------------
# Killed at random lines of _binary.py and _io.py: path is always a whole binary, the old or the new one; when it is
# the new one, .previous is the old one (so a rollback is possible); .previous is the older one or the old one. The
# next run completes and leaves no temp file or lock file.
BIN = '/usr/local/bin/k3s'
BIN_SRC = '/var/tmp/k3s-new'


def _script(version):
    return ('#!/bin/sh\necho "k3s version %s (a4f8e7a1)"\n' % version).encode()


def _binary_node(node):
    node.run_programs()
    node.write(BIN, _script('v1.30.6+k3s1'), 0o755)
    node.write(BIN + '.previous', _script('v1.29.9+k3s1'), 0o755)
    node.write(BIN_SRC, _script('v1.31.4+k3s1'), 0o755)
    import hashlib  # pylint: disable=import-outside-toplevel
    return {'path': BIN, 'src': BIN_SRC, 'sha256': hashlib.sha256(node.read(BIN_SRC)).hexdigest()}


def test_binary_killed_at_random_points(tmp_path):
    rng = random.Random('%s-k3s_binary' % SEED)
    ref = _node(tmp_path / 'ref')
    args = _binary_node(ref)
    counter = [0]
    failed, result = _run(k3s_binary, args, counter=counter, traced=(BINARY_FILE, IO_FILE))
    assert not failed and result['changed'], result
    total = counter[0]
    old, older, new = _script('v1.30.6+k3s1'), _script('v1.29.9+k3s1'), _script('v1.31.4+k3s1')
    outcomes = {}
    for trial in range(TRIALS):
        node = _node(tmp_path / ('t%d' % trial))
        args = _binary_node(node)
        kill_at = rng.randint(1, total)
        status, dummy = _wait(*_child(lambda: _run(k3s_binary, args, kill_at=kill_at, traced=(BINARY_FILE, IO_FILE))))
        where = 'k3s_binary trial %d (seed %s, killed at line %d of %d)' % (trial, SEED, kill_at, total)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, where + ': not killed'
        path, previous = node.read(BIN), node.read(BIN + '.previous')
        state = ({old: 'old', new: 'new'}.get(path, 'torn'), {older: 'older', old: 'old'}.get(previous, 'torn'))
        assert state in (('old', 'older'), ('old', 'old'), ('new', 'old')), '%s: path, .previous = %s' % (where, state)
        outcomes[state] = outcomes.get(state, 0) + 1
        failed, result = _run(k3s_binary, args)
        assert not failed, '%s: the next run failed: %s' % (where, result)
        assert node.read(BIN) == new and node.read(BIN + '.previous') == old, where
        assert _ours(node, ['/usr/local/bin']) == [], '%s: temp files left' % where
        assert _lock_files(node, [BIN, BIN + '.previous']) == [], '%s: lock files left' % where
    print('k3s_binary: %d kills over %d lines of the write path (seed %s): %s; path never torn or missing'
          % (TRIALS, total, SEED, outcomes))


# -- k3s_killall: what a stopped k3s left, taken down step by step (processes, mounts, namespaces, links, rules) -------
# Killed at random lines of _killall.py: every thing it takes down is either still there or gone (never half: the
# rules are the old or the new text), nothing of the operator's is touched, and the next run takes down the rest.
KILL_DATA = '/var/lib/rancher/k3s'
KILL_SHIM = KILL_DATA + '/data/2a9c/bin/containerd-shim-runc-v2'
KILL_MOUNTS = ['/', '/mnt/keep', KILL_DATA, KILL_DATA + '/storage',
               '/run/k3s/containerd/io.containerd.runtime.v2.task/k8s.io/77aa/rootfs',
               '/run/k3s/containerd/io.containerd.grpc.v1.cri/sandboxes/5f1e/shm',
               '/var/lib/kubelet/pods/0b7e/volumes/kubernetes.io~projected/kube-api-access-x', '/run/netns/cni-11aa']
KILL_RULES = ('*filter\n:INPUT ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n-A INPUT -j KUBE-SERVICES\n'
              '-A INPUT -s 10.9.0.0/16 -j ACCEPT\n-A FORWARD -i flannel.1 -j ACCEPT\n-A FORWARD -o cni0 -j CNI-FORWARD\n'
              'COMMIT\n')
IPTABLES = '/var/lib/fake-iptables/rules'


def _killall_node(node):
    """A node whose k3s just stopped, every command acting on the tree (so a killed run leaves what it did there)."""
    node.process(1, ['/sbin/init'], ppid=0)
    node.process(4100, [KILL_SHIM, '-namespace', 'k8s.io', '-id', '77aa'], ppid=1)
    node.process(4101, ['/pause'], ppid=4100)
    node.process(4102, ['nginx: master process'], ppid=4100)
    node.process(4300, ['sleep', '3600'], ppid=1)  # the operator's
    node.write('/proc/self/mountinfo', ''.join('%d 1 0:%d / %s rw - tmpfs tmpfs rw\n' % (30 + i, 40 + i, p)
                                               for i, p in enumerate(KILL_MOUNTS)))
    for name in ('cni0', 'flannel.1', 'veth3c41', 'eth0'):
        node.makedirs('/sys/class/net/' + name)
    node.symlink('../cni0', '/sys/class/net/veth3c41/master')
    node.write('/run/netns/cni-11aa', '')
    node.write('/run/netns/operator', '')
    node.makedirs(KILL_MOUNTS[5])
    node.write(IPTABLES, KILL_RULES)

    def kill(pid, sig):  # pylint: disable=unused-argument
        for name in ('stat', 'cmdline'):
            if node.exists('/proc/%d/%s' % (pid, name)):
                node.unlink('/proc/%d/%s' % (pid, name))
    _killall.KILL = kill

    def replace(path, data):  # as the kernel commits a change: whole or not at all
        node.write(path + '.new', data)
        os.replace(node.p(path + '.new'), node.p(path))

    def umount(argv, stdin=None):  # pylint: disable=unused-argument
        lines = node.read('/proc/self/mountinfo').decode().splitlines(True)
        replace('/proc/self/mountinfo', ''.join(line for line in lines if line.split(' ')[4] != argv[1]))
        return 0, '', ''

    def ip(argv, stdin=None):  # pylint: disable=unused-argument
        if argv[1:3] == ['netns', 'delete']:
            node.unlink('/run/netns/' + argv[3])
        elif argv[1:3] == ['link', 'delete']:
            for leftover in node.listdir('/sys/class/net/' + argv[3]):
                node.unlink('/sys/class/net/%s/%s' % (argv[3], leftover))
            os.rmdir(node.p('/sys/class/net/' + argv[3]))
        return 0, '', ''

    def rmdir(argv, stdin=None):  # pylint: disable=unused-argument
        os.rmdir(node.p(argv[1]))
        return 0, '', ''

    def save(argv, stdin=None):  # pylint: disable=unused-argument
        return 0, node.read(IPTABLES).decode(), ''

    def restore(argv, stdin):  # pylint: disable=unused-argument
        replace(IPTABLES, stdin)
        return 0, '', ''
    node.commands.update({'umount': umount, 'ip': ip, 'rmdir': rmdir, 'iptables-save': save, 'iptables-restore': restore})
    return {'data_dir': KILL_DATA, 'iptables': True}


def _killall_state(node):
    """What is there of each kind: processes, mount points, namespaces, links, the rules' text."""
    return {'procs': sorted(int(n) for n in node.listdir('/proc') if n.isdigit() and node.exists('/proc/%s/stat' % n)),
            'mounts': sorted(_killall.mount_points(node.read('/proc/self/mountinfo').decode())),
            'netns': node.listdir('/run/netns'), 'links': node.listdir('/sys/class/net'),
            'rules': node.read(IPTABLES).decode()}


@pytest.fixture(name='killall_kill')
def fixture_killall_kill():
    """_killall.KILL (the fake node's kill function, set by _killall_node) back to None after the test."""
    yield
    _killall.KILL = None


def test_killall_killed_at_random_points(tmp_path, killall_kill):  # pylint: disable=unused-argument
    rng = random.Random('%s-k3s_killall' % SEED)
    ref = _node(tmp_path / 'ref')
    args = _killall_node(ref)
    old = _killall_state(ref)
    counter = [0]
    failed, result = _run(k3s_killall, args, counter=counter, traced=(KILLALL_FILE,))
    assert not failed and result['changed'], result
    new = _killall_state(ref)
    assert new['procs'] == [1, 4300] and new['netns'] == ['operator'] and new['links'] == ['eth0']
    assert 'KUBE-' not in new['rules'] and '10.9.0.0/16' in new['rules']
    total = counter[0]
    outcomes = {'none': 0, 'some': 0, 'all': 0}
    for trial in range(TRIALS):
        node = _node(tmp_path / ('t%d' % trial))
        args = _killall_node(node)
        kill_at = rng.randint(1, total)
        status, dummy = _wait(*_child(lambda: _run(k3s_killall, args, kill_at=kill_at, traced=(KILLALL_FILE,))))
        where = 'k3s_killall trial %d (seed %s, killed at line %d of %d)' % (trial, SEED, kill_at, total)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, where + ': not killed'
        after = _killall_state(node)
        for kind in ('procs', 'mounts', 'netns', 'links'):  # each thing still there or gone, the operator's all there
            assert set(new[kind]) <= set(after[kind]) <= set(old[kind]), '%s: %s %s' % (where, kind, after[kind])
        assert after['rules'] in (old['rules'], new['rules']), '%s: the rules are neither old nor new' % where
        outcomes['none' if after == old else 'all' if after == new else 'some'] += 1
        failed, result = _run(k3s_killall, args)
        assert not failed, '%s: the next run failed: %s' % (where, result)
        assert _killall_state(node) == new, where
    print('k3s_killall: %d kills over %d lines of its steps (seed %s): %s; nothing half done, the next run finished'
          % (TRIALS, total, SEED, outcomes))
