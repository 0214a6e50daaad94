# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The readiness ConfigMap written by many nodes at once, against the real API server and the real kubectl.

One node container (BAREMETAL_K3S_IMAGE_SYSTEMD) runs the k3s double of tests/kube
(BAREMETAL_K3S_KUBE_DIR): the real kube-apiserver v1.36.3 on kine, and ``k3s kubectl``. Then:

* writers run ``_readiness.publish`` at the same moment, each through ``docker exec ... k3s kubectl``;
  a barrier holds every writer after its first read, so all of them write on the same
  resourceVersion and the API server answers Conflict (or AlreadyExists) to all but one. Every
  entry must be there at the end, and the retries must have happened;
* the module itself runs through Ansible on six inventory hosts at once (forks 6), with the
  docker connection into the same container, adding and then withdrawing entries;
* the API server's own answers for a missing namespace, a no-op and check mode.

Without the image or the k3s double the test is skipped, or fails when
BAREMETAL_K3S_REQUIRE_DOCKER=1 / BAREMETAL_K3S_REQUIRE_KUBE=1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
import yaml

from ansible_collections.baremetal.k3s.plugins.module_utils import _readiness as readiness
from ansible_collections.baremetal.k3s.tests.integration.kube_nodes import STAGE_LABEL

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

IMAGE = os.environ.get('BAREMETAL_K3S_IMAGE_SYSTEMD')
KUBE_DIR = os.environ.get('BAREMETAL_K3S_KUBE_DIR')
REQUIRE_DOCKER = os.environ.get('BAREMETAL_K3S_REQUIRE_DOCKER') == '1'
REQUIRE_KUBE = os.environ.get('BAREMETAL_K3S_REQUIRE_KUBE') == '1'

if not IMAGE:
    if REQUIRE_DOCKER:
        raise RuntimeError('BAREMETAL_K3S_REQUIRE_DOCKER=1 but BAREMETAL_K3S_IMAGE_SYSTEMD is not set: '
                           'build the node image (tests/lib.sh bk3s_images) and export its name.')
    pytest.skip('BAREMETAL_K3S_IMAGE_SYSTEMD is not set (the node image, tests/lib.sh bk3s_images)', allow_module_level=True)
if not (KUBE_DIR and os.access(os.path.join(KUBE_DIR, 'k3s'), os.X_OK)):
    if REQUIRE_KUBE:
        raise RuntimeError('BAREMETAL_K3S_REQUIRE_KUBE=1 but BAREMETAL_K3S_KUBE_DIR (%r) holds no k3s: build the k3s '
                           'double (tests/lib.sh bk3s_kube) and export its directory.' % KUBE_DIR)
    pytest.skip('BAREMETAL_K3S_KUBE_DIR does not hold the k3s double (tests/lib.sh bk3s_kube)', allow_module_level=True)

KUBECTL = ['/usr/local/bin/k3s', 'kubectl']
KUBECONFIG = '/etc/rancher/k3s/k3s.yaml'
WRITERS = 6


def docker(*args, check=True, stdin=None, timeout=120):
    return subprocess.run(['docker'] + list(args), input=stdin if stdin is not None else '', capture_output=True,
                          text=True, check=check, timeout=timeout)


def _wait(what, probe, timeout, name):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = probe()
        if last.returncode == 0:
            return
        time.sleep(1)
    logs = docker('exec', name, 'sh', '-c', 'tail -n 30 /tmp/k3s.log', check=False).stdout
    pytest.fail('%s within %ds: %s%s\nk3s log:\n%s' % (what, timeout, last.stdout, last.stderr, logs))


@pytest.fixture(scope='module')
def node():
    """The container's name, once the real API server answers and the default namespace exists."""
    if docker('info', check=False).returncode != 0:
        if REQUIRE_DOCKER:
            pytest.fail('BAREMETAL_K3S_REQUIRE_DOCKER=1 but docker does not answer (docker info failed)')
        pytest.skip('docker does not answer')
    name = 'bk3s-readiness-race-%d' % os.getpid()
    docker('rm', '-f', name, check=False)
    try:
        docker('run', '-d', '--name', name, '--hostname', name, '--label', 'baremetal-k3s=node',
               '--label', STAGE_LABEL,
               '--tmpfs', '/run', '--tmpfs', '/tmp',
               '-v', '%s:/usr/local/bin/k3s:ro' % os.path.join(KUBE_DIR, 'k3s'),
               '-v', '%s:/usr/local/bin/kine:ro' % os.path.join(KUBE_DIR, 'kine'),
               IMAGE, 'sleep', 'infinity')
    except subprocess.CalledProcessError as e:
        pytest.fail('cannot start %s: %s' % (IMAGE, e.stderr))
    try:
        docker('exec', '-d', name, 'sh', '-c', 'exec /usr/local/bin/k3s server --write-kubeconfig-mode=644 >/tmp/k3s.log 2>&1')
        _wait('the API server did not answer /readyz',
              lambda: docker('exec', name, *(KUBECTL + ['get', '--raw', '/readyz']), check=False), 180, name)
        _wait('the default namespace did not appear',
              lambda: docker('exec', name, *(KUBECTL + ['get', 'namespace', 'default']), check=False), 60, name)
        yield name
    finally:
        docker('rm', '-f', name, check=False)


class Runner:
    """kubectl in the node container; keeps every answer, to show what the API server said."""

    def __init__(self, name):
        self.name = name
        self.errors = []
        self.lock = threading.Lock()

    def __call__(self, argv, stdin=None):
        out = docker('exec', '-i', self.name, *argv, check=False, stdin=stdin)
        if out.returncode:
            with self.lock:
                self.errors.append(out.stderr)
        return out.returncode, out.stdout, out.stderr


def configmap(name, cm, namespace='default'):
    out = docker('exec', name, *(KUBECTL + ['get', 'configmap', cm, '-n', namespace, '-o', 'json']))
    return json.loads(out.stdout)


def node_names(obj):
    return [n['node_name'] for n in yaml.safe_load(obj['data']['nodes.yaml'])['nodes']]


def request(cm, node_name, **kw):
    args = dict(kubectl=KUBECTL, kubeconfig=KUBECONFIG, name=cm, namespace='default', node_name=node_name,
                kube_scheduler='k3s@%s' % node_name, restarted=True)
    args.update(kw)
    return readiness.Request(**args)


def race(runner, cm, names):
    """Publish ``names`` at once; every writer waits after its first read until all have read."""
    barrier = threading.Barrier(len(names), timeout=120)
    local = threading.local()

    def held_after_first_read(argv, stdin=None):
        answer = runner(argv, stdin)
        if 'get' in argv and not getattr(local, 'read', False):
            local.read = True
            barrier.wait()
        return answer

    results, failures = {}, {}

    def write(node_name):
        try:
            results[node_name] = readiness.publish(held_after_first_read, request(cm, node_name))
        except Exception as e:  # pylint: disable=broad-except
            failures[node_name] = e

    threads = [threading.Thread(target=write, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not failures, failures
    return results


def test_racing_replaces_lose_nothing(node):
    """The ConfigMap exists: all writers replace on the same resourceVersion; all but one meet Conflict and retry."""
    runner = Runner(node)
    readiness.publish(runner, request('race-replace', 'server-0'))
    names = ['server-%d' % i for i in range(1, WRITERS + 1)]
    results = race(runner, 'race-replace', names)
    obj = configmap(node, 'race-replace')
    assert node_names(obj) == ['server-0'] + names
    assert all(results[n]['changed'] for n in names)
    attempts = sorted(r['attempts'] for r in results.values())
    assert attempts[0] == 1 and attempts[-1] > 1, attempts
    conflicts = [e for e in runner.errors if 'the object has been modified' in e]
    assert len(conflicts) >= WRITERS - 1, runner.errors
    assert obj['metadata']['labels'] == {'app.kubernetes.io/managed-by': 'baremetal.k3s'}


def test_racing_creates_lose_nothing(node):
    """No ConfigMap yet: all writers create it at once; all but one meet AlreadyExists, then replace."""
    runner = Runner(node)
    names = ['server-%d' % i for i in range(WRITERS)]
    results = race(runner, 'race-create', names)
    assert node_names(configmap(node, 'race-create')) == names
    assert sum(1 for e in runner.errors if '(AlreadyExists)' in e) == WRITERS - 1, runner.errors
    assert sorted(r['attempts'] for r in results.values())[-1] > 1


def test_what_the_api_server_answers(node):
    """No-op, check mode, removal, and a namespace that does not exist, as the real API server answers them."""
    runner = Runner(node)
    docker('exec', '-i', node, *(KUBECTL + ['create', 'configmap', 'answers', '-n', 'default', '--from-literal=other=kept']))
    assert readiness.publish(runner, request('answers', 'server-1'))['changed']
    version = configmap(node, 'answers')['metadata']['resourceVersion']
    assert not readiness.publish(runner, request('answers', 'server-1'))['changed']
    r = readiness.publish(runner, request('answers', 'server-1', state='absent'), check_mode=True)
    assert r['changed'] and r['nodes'] == []
    obj = configmap(node, 'answers')
    assert obj['metadata']['resourceVersion'] == version and obj['data']['other'] == 'kept'
    assert readiness.publish(runner, request('answers', 'server-1', state='absent'))['changed']
    assert configmap(node, 'answers')['data'] == {'other': 'kept', 'nodes.yaml': 'nodes: []\n'}
    for check_mode in (True, False):
        with pytest.raises(readiness.NamespaceMissing) as e:
            readiness.publish(runner, request('answers', 'server-1', namespace='no-such-namespace'), check_mode=check_mode)
        assert 'namespace no-such-namespace does not exist' in e.value.msg


def _ansible(tmp_path, collections_path, node, state, hosts, check=False):
    """Run the module on ``hosts`` (inventory names, one node name each) at once; {host: result}."""
    inventory = tmp_path / 'inventory.yml'
    inventory.write_text(yaml.safe_dump({'all': {'hosts': {h: {} for h in hosts}, 'vars': {
        'ansible_connection': 'community.docker.docker', 'ansible_host': node,
        'ansible_python_interpreter': '/usr/bin/python3'}}}))
    args = {'kubectl': KUBECTL, 'kubeconfig': KUBECONFIG, 'name': 'race-ansible', 'node_name': '{{ inventory_hostname }}',
            'kube_scheduler': 'k3s@{{ inventory_hostname }}', 'restarted': True, 'state': state}
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path, ANSIBLE_STDOUT_CALLBACK='json',
               ANSIBLE_LOAD_CALLBACK_PLUGINS='1', ANSIBLE_HOST_KEY_CHECKING='0', ANSIBLE_NOCOLOR='1')
    argv = [os.path.join(os.path.dirname(sys.executable), 'ansible'), 'all', '-i', str(inventory), '--forks', str(len(hosts)),
            '-m', 'baremetal.k3s.readiness_configmap', '-a', json.dumps(args)] + (['--check'] if check else [])
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600, check=False)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return json.loads(out.stdout)['plays'][0]['tasks'][0]['hosts']


def test_module_through_ansible_on_many_hosts_at_once(node, tmp_path, collections_path):
    hosts = ['edge-%d' % i for i in range(WRITERS)]
    results = _ansible(tmp_path, collections_path, node, 'present', hosts)
    assert all(results[h]['changed'] for h in hosts), results
    assert node_names(configmap(node, 'race-ansible')) == hosts
    sys.stdout.write('attempts through ansible: %s\n' % sorted(r['attempts'] for r in results.values()))
    assert not any(r['changed'] for r in _ansible(tmp_path, collections_path, node, 'present', hosts).values())
    assert all(r['changed'] for r in _ansible(tmp_path, collections_path, node, 'absent', hosts[::2], check=True).values())
    assert node_names(configmap(node, 'race-ansible')) == hosts
    _ansible(tmp_path, collections_path, node, 'absent', hosts[::2])
    assert node_names(configmap(node, 'race-ansible')) == hosts[1::2]
