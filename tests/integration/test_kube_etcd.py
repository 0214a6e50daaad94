# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Three k3s servers on embedded etcd: the real etcd server (go.etcd.io/etcd/server/v3) in the k3s double.

Three node containers (BAREMETAL_K3S_IMAGE_SYSTEMD, systemd as PID 1) on a network of their own run the
k3s double of tests/kube (BAREMETAL_K3S_KUBE_DIR) as Type=notify units, with the real kube-apiserver,
kube-controller-manager and kube-scheduler v1.36.3 on etcd v3.6:

(a) ``--cluster-init`` on the first server starts a one-member cluster under server/db/etcd with k3s's
    TLS layout (server/tls/etcd), the API server on https://127.0.0.1:2379 with the etcd client
    certificate, leader election on;
(b) a server with a wrong token is refused by the first one's supervisor; two servers with
    ``--server https://<first>:6443`` and the token bootstrap from it, join as learners and are
    promoted by the etcd leader: one member list of three voters, every Node in every server's API,
    labelled etcd, with ``EtcdIsVoter`` True (MemberNotLearner);
(c) one server stopped: quorum kept, the API answers and writes on the others, the leader marks the
    stopped member Unhealthy; started again, it is a voter again;
(d) ``k3s etcd-snapshot save`` through the server (the etcd client's snapshot), then
    ``k3s server --cluster-reset --cluster-reset-restore-path`` brings back an object created before
    the snapshot and not one created after; the other servers rejoin with a new data directory, one
    of them held as a learner (K3S_DOUBLE_LEARNER_HOLD) until its hold is over.

Without the image or the k3s double the test is skipped, or fails when
BAREMETAL_K3S_REQUIRE_DOCKER=1 / BAREMETAL_K3S_REQUIRE_KUBE=1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _ready
from ansible_collections.baremetal.k3s.plugins.module_utils._view import RunTimeout
from ansible_collections.baremetal.k3s.tests.integration import kube_nodes as kn
from ansible_collections.baremetal.k3s.tests.integration.kube_nodes import (
    docker, events, kubectl, kubectl_json, node_container, sh, state, stop_unit, unit_state, wait)

IMAGE, KUBE_DIR = kn.require()

PREFIX = 'bk3s-etcd-%d' % os.getpid()
DATA = '/var/lib/rancher/k3s/server'
STATE, EVENTS = kn.STATE, kn.EVENTS
SECRET = 'etcd-fleet-secret'
# k3s's etcd leader manages learners and the EtcdIsVoter condition every 15s; the double's knob shortens it
ENV = ('K3S_DOUBLE_ETCD_MANAGE_INTERVAL=2s',)
HOLD = 45  # seconds a rejoining server asks to stay a learner (K3S_DOUBLE_LEARNER_HOLD)
MEMBER_NAME = re.compile(r'^(?P<node>.+)-[0-9a-f]{8}$')


def start_unit(name, unit, argv, env=ENV):
    """k3s as a Type=notify unit, with the double's shorter etcd management period unless told otherwise."""
    kn.start_unit(name, unit, argv, env)


def members(name):
    """The etcd member list as the server's supervisor serves it (/db/info; local requests need no credentials)."""
    out = sh(name, 'curl -sfk https://127.0.0.1:9345/db/info', check=False)
    return json.loads(out.stdout)['members'] if out.returncode == 0 else []


def voters(name):
    return sorted(m['name'] for m in members(name) if m.get('name') and not m.get('isLearner'))


def api_ready(name):
    return kubectl(name, 'get', '--raw', '/readyz', check=False).stdout == 'ok'


def etcd_conditions(name):
    """{node: (EtcdIsVoter status, reason)} of every Node in name's API."""
    out = kubectl(name, 'get', 'nodes', '-o', 'json', check=False)
    if out.returncode:
        return {}
    got = {}
    for n in json.loads(out.stdout)['items']:
        for c in n['status'].get('conditions', []):
            if c['type'] == 'EtcdIsVoter':
                got[n['metadata']['name']] = (c['status'], c['reason'])
    return got


def configmaps(name):
    out = kubectl(name, 'get', 'configmap', '-n', 'default', '-o', 'jsonpath={.items[*].metadata.name}', check=False)
    return set(out.stdout.split()) if out.returncode == 0 else None


class DockerView:
    """The node as k3s_ready's logic reads it (plugins/module_utils/_ready.py, unchanged), through docker exec."""

    class clock:  # noqa: N801 pylint: disable=invalid-name,too-few-public-methods
        monotonic = staticmethod(time.monotonic)
        sleep = staticmethod(time.sleep)

    def __init__(self, name):
        self.name = name

    def isfile(self, path):
        return sh(self.name, 'test -f "%s"' % path, check=False).returncode == 0

    def exists(self, path):
        return sh(self.name, 'test -e "%s"' % path, check=False).returncode == 0

    def which(self, program):
        return sh(self.name, 'command -v "%s"' % program, check=False).stdout.strip() or None

    def run(self, argv, stdin=None, timeout=None):
        """As View.run: a program that outlives ``timeout`` is a RunTimeout."""
        try:
            out = docker('exec', '-i', self.name, *argv, check=False, stdin=stdin, timeout=timeout or 120)
        except subprocess.TimeoutExpired:
            raise RunTimeout(argv, timeout or 120) from None
        return out.returncode, out.stdout, out.stderr


def k3s_ready(on, node, timeout):
    """baremetal.k3s.k3s_ready's result for node, asked on server on with etcd_member."""
    return _ready.wait(DockerView(on), {'kubectl': ['/usr/local/bin/k3s', 'kubectl'], 'node_name': node, 'timeout': timeout,
                                        'interval': 1, 'etcd_member': True, 'kubeconfig': None, 'since': None}).facts


def process_args(name, component):
    """The command line of the launcher's child running component (k3s <component> ...)."""
    out = sh(name, 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null; echo; done | grep "^/usr/local/bin/k3s %s " '
                   '| head -n 1' % component, check=False)
    return out.stdout.split()


@pytest.fixture(scope='module')
def cluster():
    """Three server containers, the first started with --cluster-init."""
    if docker('info', check=False).returncode != 0:
        if kn.REQUIRE_DOCKER:
            pytest.fail('BAREMETAL_K3S_REQUIRE_DOCKER=1 but docker does not answer (docker info failed)')
        pytest.skip('docker does not answer')
    names = {k: '%s-%s' % (PREFIX, k) for k in ('s1', 's2', 's3')}
    network = PREFIX
    docker('network', 'create', network)
    try:
        for name in names.values():
            node_container(name, network)
        for name in names.values():
            sh(name, 'systemctl is-system-running --wait >/dev/null; true', timeout=180)
        start_unit(names['s1'], 'k3s', ['server', '--cluster-init', '--token=%s' % SECRET, '--write-kubeconfig-mode=644'])
        yield names
    finally:
        for name in names.values():
            docker('rm', '-f', name, check=False)
        docker('network', 'rm', network, check=False)


@pytest.fixture(scope='module')
def token(cluster):
    s1 = cluster['s1']
    wait('the first server active (READY=1 after /readyz)', lambda: unit_state(s1, 'k3s') == 'active', 240, [(s1, 'k3s')])
    return sh(s1, 'cat %s/token' % DATA).stdout.strip()


def test_cluster_init_starts_embedded_etcd(cluster, token):
    s1 = cluster['s1']
    st = state(s1)
    assert st['datastore'] == 'etcd (embedded)' and st['datastore_etcd_servers'] == 'https://127.0.0.1:2379', st
    assert st['kine'] is False and st['leader_elect'] is True and st['bootstrap'] == 'saved', st
    assert st['etcd_start'] == 'new' and st['etcd_role'] == 'voter' and st['etcd_voter_at'], st
    name = st['etcd_member_name']
    assert MEMBER_NAME.match(name).group('node') == s1, name
    assert sh(s1, 'cat %s/db/etcd/name' % DATA).stdout == name
    assert sh(s1, 'stat -c %%a %s/db/etcd; test -d %s/db/etcd/member/wal && echo wal' % (DATA, DATA)).stdout.split() == ['700', 'wal']
    ip = sh(s1, 'hostname -i').stdout.split()[0]
    assert st['etcd_peer_url'] == 'https://%s:2380' % ip and st['etcd_initial_cluster'] == '%s=https://%s:2380' % (name, ip)
    assert [(m['name'], m['peerURLs'], m['clientURLs']) for m in members(s1)] == \
        [(name, ['https://%s:2380' % ip], ['https://%s:2379' % ip])]
    # k3s's TLS layout: two CAs, leaves with their chain; the client certificate is the API server's
    subjects = sh(s1, 'cd %s/tls/etcd && for f in server-ca peer-ca server-client client peer-server-client; do '
                      'openssl x509 -noout -subject -in $f.crt; grep -c "BEGIN CERTIFICATE" $f.crt; done' % DATA).stdout
    cns = re.findall(r'CN ?= ?([^\s]+)', subjects)
    assert cns[0].startswith('etcd-server-ca@') and cns[1].startswith('etcd-peer-ca@') and cns[2:] == \
        ['etcd-server', 'etcd-client', 'etcd-peer'], cns
    assert [int(c) for c in subjects.split('\n') if c.isdigit()] == [1, 1, 2, 2, 2], subjects
    sh(s1, 'cd %s/tls/etcd && openssl verify -CAfile server-ca.crt server-client.crt client.crt && '
           'openssl verify -CAfile peer-ca.crt peer-server-client.crt' % DATA)
    api = process_args(s1, 'kube-apiserver')
    for want in ('--etcd-servers=https://127.0.0.1:2379', '--etcd-cafile=%s/tls/etcd/server-ca.crt' % DATA,
                 '--etcd-certfile=%s/tls/etcd/client.crt' % DATA, '--etcd-keyfile=%s/tls/etcd/client.key' % DATA):
        assert want in api, api
    assert process_args(s1, 'double-etcd') == ['/usr/local/bin/k3s', 'double-etcd', '--config-file=%s/db/etcd/config' % DATA]
    assert '--leader-elect=false' not in st['controller_manager_args']
    wait('the scheduler started', lambda: state(s1).get('scheduler_args'), 60, [(s1, 'k3s')])
    assert '--leader-elect=false' not in state(s1)['scheduler_args']
    started = events(s1, 'etcd_started')
    assert started and started[-1]['start'] == 'new' and started[-1]['member'] == name, started


def test_join_with_a_wrong_token_is_refused(cluster, token):
    s1, s3 = cluster['s1'], cluster['s3']
    ca_hash = token[3:].split('::')[0]
    out = sh(s3, 'timeout 120 k3s server --server https://%s:6443 --token=K10%s::server:not-the-secret 2>&1' % (s1, ca_hash),
             check=False, timeout=150)
    assert out.returncode == 1, out.stdout[-2000:]
    assert 'level=fatal' in out.stdout and '/v1-k3s/server-bootstrap: 401 Unauthorized' in out.stdout, out.stdout[-2000:]
    assert len(members(s1)) == 1
    sh(s3, 'rm -rf %s %s %s' % (DATA, STATE, EVENTS))


@pytest.fixture(scope='module')
def three(cluster, token):
    """The two other servers joined through the first one (started together)."""
    s1 = cluster['s1']
    for key in ('s2', 's3'):
        start_unit(cluster[key], 'k3s', ['server', '--server', 'https://%s:6443' % s1, '--token=%s' % token,
                                         '--write-kubeconfig-mode=644'])
    for key in ('s2', 's3'):
        name = cluster[key]
        wait('%s active' % name, lambda n=name: unit_state(n, 'k3s') == 'active', 300, [(name, 'k3s'), (s1, 'k3s')])
    return cluster


def test_servers_join_as_learners_and_are_promoted(three):
    s1, s2, s3 = three['s1'], three['s2'], three['s3']
    names = {k: state(three[k])['etcd_member_name'] for k in ('s1', 's2', 's3')}
    for key, name in names.items():
        assert MEMBER_NAME.match(name).group('node') == three[key], names
    for server in (s1, s2, s3):
        wait('three voters seen from %s' % server, lambda s=server: voters(s) == sorted(names.values()), 120,
             [(server, 'k3s')])
    log = sh(s1, 'journalctl -u k3s --no-pager').stdout
    for key in ('s2', 's3'):
        node = three[key]
        st = state(node)
        assert st['etcd_start'] == 'join' and st['etcd_joined_via'] == 'https://%s:6443' % s1, st
        assert st['etcd_role'] == 'voter' and st['bootstrap'] == 'loaded' and st['leader_elect'] is True, st
        added, promoted = events(node, 'etcd_member_added'), events(node, 'etcd_member_promoted')
        assert len(added) == 1 and added[0]['learner'] is True and added[0]['member'] == names[key], added
        assert len(promoted) == 1 and promoted[0]['self'] is True, promoted
        print('%s: a learner for %.1fs (member added %s, voter %s)' % (node, promoted[0]['learner_seconds'], added[0]['time'],
                                                                       st['etcd_voter_at']))
        assert 'Promoted learner %s' % names[key] in log
    # the bootstrap data's CAs are shared; each server issues its own leaves
    for f in ('server-ca.crt', 'client-ca.key', 'service.key', 'etcd/server-ca.crt', 'etcd/server-ca.key', 'etcd/peer-ca.crt'):
        sums = {sh(n, 'sha256sum %s/tls/%s' % (DATA, f)).stdout.split()[0] for n in (s1, s2, s3)}
        assert len(sums) == 1, f
    leaves = {sh(n, 'sha256sum %s/tls/etcd/peer-server-client.crt' % DATA).stdout.split()[0] for n in (s1, s2, s3)}
    assert len(leaves) == 3


def test_every_node_in_every_api_and_a_voter(three):
    servers = [three[k] for k in ('s1', 's2', 's3')]
    want = {n: ('True', 'MemberNotLearner') for n in servers}
    for server in servers:
        wait('EtcdIsVoter True on every Node seen from %s' % server, lambda s=server: etcd_conditions(s) == want, 120,
             [(server, 'k3s')])
    names = {n: state(n)['etcd_member_name'] for n in servers}
    for node in kubectl_json(servers[1], 'get', 'nodes')['items']:
        meta = node['metadata']
        assert meta['labels']['node-role.kubernetes.io/etcd'] == 'true', meta
        assert meta['labels']['node-role.kubernetes.io/control-plane'] == 'true', meta
        assert meta['annotations']['etcd.k3s.cattle.io/node-name'] == names[meta['name']], meta
        ready = [c for c in node['status']['conditions'] if c['type'] == 'Ready']
        assert ready and ready[0]['status'] == 'True', node['status']['conditions']
    for server in servers:
        facts = k3s_ready(server, server, 60)
        assert facts['ready'] and facts['etcd_member'] is True, facts
    holder = kubectl(servers[2], 'get', 'lease', '-n', 'kube-system', 'kube-scheduler', '-o',
                     'jsonpath={.spec.holderIdentity}').stdout
    assert holder.rsplit('_', 1)[0] in servers, holder  # leader election on, one holder for the three


def test_quorum_kept_with_one_server_stopped(three):
    s1, s2, s3 = three['s1'], three['s2'], three['s3']
    stop_unit(s1)
    for server in (s2, s3):
        wait('%s API ready with %s stopped' % (server, s1), lambda s=server: api_ready(s), 120, [(server, 'k3s')])
    kubectl(s2, 'create', 'configmap', 'written-without-s1', '--from-literal=a=1')
    assert 'written-without-s1' in (configmaps(s3) or set())
    wait('%s marked Unhealthy by the etcd leader' % s1,
         lambda: etcd_conditions(s3).get(s1) == ('False', 'Unhealthy'), 120, [(s2, 'k3s'), (s3, 'k3s')])
    start_unit(s1, 'k3s', ['server', '--cluster-init', '--token=%s' % SECRET, '--write-kubeconfig-mode=644'])
    wait('%s active again' % s1, lambda: unit_state(s1, 'k3s') == 'active', 240, [(s1, 'k3s')])
    st = state(s1)
    assert st['etcd_start'] == 'existing' and st['etcd_role'] == 'voter', st
    assert 'written-without-s1' in (configmaps(s1) or set())
    wait('%s a voter again' % s1, lambda: etcd_conditions(s2).get(s1) == ('True', 'MemberNotLearner'), 120,
         [(s2, 'k3s'), (s3, 'k3s')])


def test_snapshot_and_cluster_reset_restore(three, token):
    s1, s2, s3 = three['s1'], three['s2'], three['s3']
    want = {n: ('True', 'MemberNotLearner') for n in (s1, s2, s3)}
    # every Node labelled etcd and named after its member before the snapshot
    wait('EtcdIsVoter True on every Node', lambda: etcd_conditions(s2) == want, 120, [(s2, 'k3s')])
    kubectl(s2, 'create', 'configmap', 'before-snapshot', '--from-literal=a=1')
    out = sh(s2, 'k3s etcd-snapshot save --name bk3s-test 2>&1').stdout
    saved = re.search(r'msg="Snapshot (bk3s-test-%s-\d+) saved\."' % re.escape(s2), out)
    assert saved, out
    snapshot = '%s/db/snapshots/%s' % (DATA, saved.group(1))
    assert sh(s2, 'stat -c %%a %s' % snapshot).stdout.strip() == '600'
    assert saved.group(1) in sh(s2, 'k3s etcd-snapshot ls 2>/dev/null').stdout
    ev = events(s2, 'etcd_snapshot_saved')
    assert ev and ev[-1]['path'] == snapshot and ev[-1]['size'] > 0, ev
    kubectl(s2, 'create', 'configmap', 'after-snapshot', '--from-literal=a=1')
    for server in (s1, s2, s3):
        stop_unit(server)

    # the restore on the server holding the snapshot: k3s's message, exit 0
    out = sh(s2, 'timeout 240 k3s server --cluster-reset --cluster-reset-restore-path=%s --token=%s 2>&1'
                 % (snapshot, token), check=False, timeout=270)
    assert out.returncode == 0, out.stdout[-3000:]
    assert 'Managed etcd cluster membership has been reset, restart without --cluster-reset flag now.' in out.stdout
    assert sh(s2, 'ls %s/db' % DATA).stdout.split().count('reset-flag') == 1
    assert [d for d in sh(s2, 'ls %s/db' % DATA).stdout.split() if d.startswith('etcd-old-')]
    again = sh(s2, 'timeout 60 k3s server --cluster-reset --token=%s 2>&1' % token, check=False, timeout=90)
    assert again.returncode == 1 and 'Managed etcd cluster membership was previously reset' in again.stdout, again.stdout[-2000:]

    start_unit(s2, 'k3s', ['server', '--server', 'https://%s:6443' % s1, '--token=%s' % token, '--write-kubeconfig-mode=644'])
    wait('the restored server active', lambda: unit_state(s2, 'k3s') == 'active', 240, [(s2, 'k3s')])
    assert len(members(s2)) == 1 and state(s2)['etcd_start'] == 'existing'
    restored = configmaps(s2) or set()
    assert 'before-snapshot' in restored and 'after-snapshot' not in restored, restored
    assert 'reset-flag' not in sh(s2, 'ls %s/db' % DATA).stdout.split()

    # the other servers rejoin with a new data directory (k3s's instruction); s3 held as a learner first
    sh(s1, 'rm -rf %s/db' % DATA)
    start_unit(s1, 'k3s', ['server', '--server', 'https://%s:6443' % s2, '--token=%s' % token, '--write-kubeconfig-mode=644'])
    wait('%s rejoined' % s1, lambda: unit_state(s1, 'k3s') == 'active', 300, [(s1, 'k3s'), (s2, 'k3s')])
    sh(s3, 'rm -rf %s/db' % DATA)
    start_unit(s3, 'k3s', ['server', '--server', 'https://%s:6443' % s2, '--token=%s' % token, '--write-kubeconfig-mode=644'],
               env=ENV + ('K3S_DOUBLE_LEARNER_HOLD=%d' % HOLD,))

    def learner():
        return [m['name'] for m in members(s2) if m.get('isLearner') and m.get('name')]

    held = wait('%s a learner' % s3, learner, 120, [(s3, 'k3s'), (s2, 'k3s')])[0]
    assert MEMBER_NAME.match(held).group('node') == s3, held
    # The Node restored from the snapshot names s3's old member: the leader marks it not a member, and
    # k3s_ready's etcd gate (asked on s2, s3's own API server waits for its promotion) holds.
    wait('%s not a member for the leader' % s3, lambda: etcd_conditions(s2).get(s3) == ('False', 'NotAMember'), 60,
         [(s2, 'k3s')])
    facts = k3s_ready(s2, s3, 3)
    unit = unit_state(s3, 'k3s')
    if learner() == [held]:  # still held after both looks (HOLD outlasts them on any sane machine)
        assert not facts['ready'] and facts['etcd_member'] is False, facts
        assert 'is not a voting etcd member: EtcdIsVoter=False (NotAMember' in facts['msg'], facts
        assert unit == 'activating'  # its API server waits for the promotion: no READY=1 yet
        print('k3s_ready on %s for %s while its member is held a learner: %s' % (s2, s3, facts['msg']))
    wait('%s rejoined' % s3, lambda: unit_state(s3, 'k3s') == 'active', 300, [(s3, 'k3s'), (s2, 'k3s')])
    names = sorted(state(n)['etcd_member_name'] for n in (s1, s2, s3))
    wait('three voters again', lambda: voters(s2) == names, 120, [(s2, 'k3s')])
    for server in (s1, s3):
        cms = configmaps(server) or set()
        assert 'before-snapshot' in cms and 'after-snapshot' not in cms, (server, cms)
    assert 'Learner %s held as a learner until' % held in sh(s2, 'journalctl -u k3s --no-pager').stdout
    promoted = events(s3, 'etcd_member_promoted')[-1]
    assert promoted['member'] == held and promoted['learner_seconds'] >= HOLD, promoted
    wait('EtcdIsVoter True on every Node after the restore', lambda: etcd_conditions(s1) == want, 120, [(s2, 'k3s')])
    facts = k3s_ready(s2, s3, 120)
    assert facts['ready'] and facts['etcd_member'] is True, facts


def test_a_deleted_server_node_leaves_etcd(three):
    """k3s's member controller: a server's Node carries its finalizer, and deleting the Node (here after its k3s
    stopped, as baremetal.k3s.reset does) removes its member before the Node goes; the two left keep a quorum."""
    s1, s2, s3 = three['s1'], three['s2'], three['s3']
    names = {n: state(n)['etcd_member_name'] for n in (s1, s2, s3)}
    wait('the member finalizer on %s' % s3, lambda: 'wrangler.cattle.io/managed-etcd-controller' in kubectl_json(
        s2, 'get', 'node', s3)['metadata'].get('finalizers', []), 60, [(s3, 'k3s')])
    stop_unit(s3)
    kubectl(s2, 'delete', 'node', s3, '--wait=true', '--timeout=90s')
    assert s3 not in kubectl(s2, 'get', 'nodes', '-o', 'name').stdout
    assert voters(s2) == sorted([names[s1], names[s2]]), members(s2)
    removed = [e for n in (s1, s2) for e in events(n, 'etcd_member_removed')]
    assert [e['member'] for e in removed] == [names[s3]], removed
    kubectl(s1, 'create', 'configmap', 'after-s3-left', '--from-literal=a=1')
    assert 'after-s3-left' in (configmaps(s2) or set())
