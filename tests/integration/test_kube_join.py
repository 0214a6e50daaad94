# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Nodes joining, users signed in by CSR, servers sharing a datastore, and a SQLite backup restored.

Node containers (BAREMETAL_K3S_IMAGE_SYSTEMD, systemd as PID 1) on a network of their own run the
k3s double of tests/kube (BAREMETAL_K3S_KUBE_DIR) as Type=notify units, against the real
kube-apiserver, kube-controller-manager and kube-scheduler v1.36.3:

(a) a server and two agents (one with ``node-label gpu=nvidia``, a taint and ``default-runtime``,
    one configured by ``server:``/``token-file:`` in config.yaml) make three Nodes Ready with those
    labels and taints; agents with a wrong secret or another cluster's CA hash are refused, stay
    ``activating`` and never appear; an agent restarted re-registers its existing Node;
(b) a CertificateSigningRequest for CN=alice,O=cluster-admins (signer
    kubernetes.io/kube-apiserver-client) approved with kubectl is signed by the controller-manager,
    and the real API server authenticates the certificate (``kubectl auth whoami``);
(c) two servers on one kine (its own container, TCP 2379) are one cluster: each sees both Nodes,
    one scheduler holds kube-system/kube-scheduler and the lease moves when its server stops; a
    server with another token refuses to start;
(d) state.db copied with SQLite's online backup API while a writer creates ConfigMaps, then
    restored after ``rm -rf server/db``: what existed before the copy is back, what came after is
    not; the restored datastore with a wrong token refuses to start;
(e) as k3s: an agent's ``--token-file`` that does not exist yet is waited for (``Waiting for <file>
    to be available``, the unit stays ``activating``) and, once there, wins over ``K3S_TOKEN``;
    ``K3S_DATA_DIR`` moves the agent's files; each node's password is stored as a hash in
    ``kube-system/<node>.node-password.k3s`` owned by its Node, a rebuilt host with a new password
    is refused (403, ``Node password rejected``) until its Node is deleted, which deletes the
    Secret; the scheduler's :10259 verifies against the server CA.

Without the image or the k3s double the test is skipped, or fails when
BAREMETAL_K3S_REQUIRE_DOCKER=1 / BAREMETAL_K3S_REQUIRE_KUBE=1.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time

import pytest

from ansible_collections.baremetal.k3s.tests.integration import kube_nodes as kn
from ansible_collections.baremetal.k3s.tests.integration.kube_nodes import (
    docker, journal, kubectl, kubectl_json, node_container, peek_state, sh, start_unit, state, unit_state, wait)

IMAGE, KUBE_DIR = kn.require()

PREFIX = 'bk3s-join-%d' % os.getpid()
DATA = '/var/lib/rancher/k3s/server'
STATE = kn.STATE
GPU_TAINT = 'nvidia.com/gpu=present:NoSchedule'


def kine_container(name, network):
    """A shared datastore: kine on SQLite serving etcd's API on TCP 2379 (no systemd needed)."""
    docker('run', '-d', '--name', name, '--hostname', name, '--network', network, '--label', 'baremetal-k3s=node',
           '--label', kn.STAGE_LABEL,
           '-v', '%s:/usr/local/bin/kine:ro' % os.path.join(KUBE_DIR, 'kine'), IMAGE, 'sh', '-c',
           'mkdir -p /var/lib/kine && exec /usr/local/bin/kine --endpoint sqlite:///var/lib/kine/state.db '
           '--listen-address 0.0.0.0:2379')


def api_ready(name):
    return kubectl(name, 'get', '--raw', '/readyz', check=False).stdout == 'ok'


def node_names(name):
    out = kubectl(name, 'get', 'nodes', '-o', 'jsonpath={.items[*].metadata.name}', check=False)
    return set(out.stdout.split()) if out.returncode == 0 else set()


def ready_nodes(name):
    out = kubectl(name, 'get', 'nodes', '-o', 'json', check=False)
    if out.returncode:
        return set()
    ready = set()
    for n in json.loads(out.stdout)['items']:
        if any(c['type'] == 'Ready' and c['status'] == 'True' for c in n['status'].get('conditions', [])):
            ready.add(n['metadata']['name'])
    return ready


@pytest.fixture(scope='module')
def cluster():
    """Every container of the module, booted at once: srv + 3 agents, kine + 2 HA servers."""
    if docker('info', check=False).returncode != 0:
        if kn.REQUIRE_DOCKER:
            pytest.fail('BAREMETAL_K3S_REQUIRE_DOCKER=1 but docker does not answer (docker info failed)')
        pytest.skip('docker does not answer')
    names = {k: '%s-%s' % (PREFIX, k) for k in ('srv', 'gpu', 'agent', 'bad', 'kine', 'ha1', 'ha2')}
    network = PREFIX
    docker('network', 'create', network)
    try:
        for key, name in names.items():
            (kine_container if key == 'kine' else node_container)(name, network)
        for key, name in names.items():
            if key != 'kine':
                sh(name, 'systemctl is-system-running --wait >/dev/null; true', timeout=180)
        start_unit(names['srv'], 'k3s', ['server', '--write-kubeconfig-mode=644'])
        endpoint = '--datastore-endpoint=http://%s:2379' % names['kine']
        for key in ('ha1', 'ha2'):
            start_unit(names[key], 'k3s', ['server', '--token=ha-secret', endpoint])
        yield names
    finally:
        for name in names.values():
            docker('rm', '-f', name, check=False)
        docker('network', 'rm', network, check=False)


@pytest.fixture(scope='module')
def joined(cluster):
    """The server up, its token, and the two agents started with it."""
    srv = cluster['srv']
    wait('the server unit active (READY=1 after /readyz)', lambda: unit_state(srv, 'k3s') == 'active', 240,
         [(srv, 'k3s')])
    tok = sh(srv, 'cat %s/node-token' % DATA).stdout.strip()
    url = 'https://%s:6443' % srv
    start_unit(cluster['gpu'], 'k3s-agent', ['agent', '--server', url, '--token', tok, '--node-label', 'gpu=nvidia',
                                             '--node-taint', GPU_TAINT, '--default-runtime', 'nvidia'])
    sh(cluster['agent'], 'mkdir -p /etc/rancher/k3s && printf %s > /etc/rancher/k3s/token && '
                         'printf "server: %s\\ntoken-file: /etc/rancher/k3s/token\\nnode-label:\\n  - zone=a\\n" '
                         '> /etc/rancher/k3s/config.yaml' % (tok, url))
    start_unit(cluster['agent'], 'k3s-agent', ['agent'])
    return tok


def test_token_files(cluster, joined):
    srv = cluster['srv']
    out = sh(srv, 'stat -c "%%a %%F" %s/token; readlink %s/node-token' % (DATA, DATA)).stdout.split('\n')
    assert out[0] == '600 regular file' and out[1] == '%s/token' % DATA, out
    hash_part, creds = joined[3:].split('::')
    ca_sha = sh(srv, 'sha256sum %s/tls/server-ca.crt' % DATA).stdout.split()[0]
    assert joined.startswith('K10') and hash_part == ca_sha and creds.startswith('server:'), joined


def test_agents_join_with_labels_and_taints(cluster, joined):
    srv, gpu, agent = cluster['srv'], cluster['gpu'], cluster['agent']
    want = {srv, gpu, agent}
    wait('three Nodes Ready', lambda: ready_nodes(srv) >= want, 120, [(gpu, 'k3s-agent'), (agent, 'k3s-agent')])
    for name in (gpu, agent):
        assert unit_state(name, 'k3s-agent') == 'active'  # READY=1 once registered
    nodes = {n['metadata']['name']: n for n in kubectl_json(srv, 'get', 'nodes')['items']}
    labels = {k: n['metadata']['labels'] for k, n in nodes.items()}
    for name in want:
        assert labels[name]['kubernetes.io/hostname'] == name
        assert labels[name]['node.kubernetes.io/instance-type'] == 'k3s'
        assert labels[name]['kubernetes.io/os'] == 'linux'
    assert labels[gpu]['gpu'] == 'nvidia' and labels[agent]['zone'] == 'a'
    assert 'gpu' not in labels[agent] and 'node-role.kubernetes.io/control-plane' not in labels[gpu]
    wait('the server Node labelled control-plane',
         lambda: kubectl_json(srv, 'get', 'node', srv)['metadata']['labels'].get('node-role.kubernetes.io/master') == 'true', 30)
    assert kubectl_json(srv, 'get', 'node', srv)['metadata']['labels']['node-role.kubernetes.io/control-plane'] == 'true'
    gpu_taint = {'key': 'nvidia.com/gpu', 'value': 'present', 'effect': 'NoSchedule'}
    assert gpu_taint in nodes[gpu]['spec']['taints']
    # the controller-manager's node lifecycle controller drops node.kubernetes.io/not-ready once Ready
    wait('only the registered taints left',
         lambda: [kubectl_json(srv, 'get', 'node', n)['spec'].get('taints') for n in (gpu, agent)] == [[gpu_taint], None], 60)
    assert nodes[gpu]['status']['nodeInfo']['kubeletVersion'] == 'v1.36.3+k3s1'
    leases = kubectl(srv, 'get', 'lease', '-n', 'kube-node-lease', '-o', 'jsonpath={.items[*].spec.holderIdentity}').stdout.split()
    assert set(leases) >= want
    st = state(gpu)
    assert st['server_url'] == 'https://%s:6443' % srv and st['node_name'] == gpu and st['joined_at']
    assert st['node_labels']['gpu'] == 'nvidia' and st['node_taints'] == [GPU_TAINT]
    assert st['default_runtime'] == 'nvidia' and not st.get('join_error') and st['ready_notified']
    assert state(srv)['scheduler_waited_for_node'] in want


def test_agent_restart_reregisters(cluster, joined):
    agent = cluster['agent']
    wait('the agent joined', lambda: peek_state(agent).get('joined_at'), 120, [(agent, 'k3s-agent')])
    sh(agent, 'systemctl restart k3s-agent', timeout=120)  # returns once READY=1 came again
    st = state(agent)
    assert st['node_created'] is False and not st.get('join_error') and st['phase'] == 'running', st
    assert agent in ready_nodes(cluster['srv'])


NODE_PASSWORD = '''
import base64, hashlib, json, sys
secret, password = json.load(sys.stdin), open("/etc/rancher/node/password").read().strip()
version, salt, n, r, p, key = base64.b64decode(secret["data"]["hash"]).decode().split(":")
want = base64.b64decode(key + "=" * (-len(key) % 4))
got = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), n=2 ** int(n), r=int(r), p=int(p),
                     maxmem=128 * 1024 * 1024, dklen=len(want))
print(version, n, r, p, got == want)
'''


def node_password_secret(name, node):
    out = kubectl(name, 'get', 'secret', '-n', 'kube-system', '%s.node-password.k3s' % node, '-o', 'json', check=False)
    return json.loads(out.stdout) if out.returncode == 0 else None


def test_node_password_refuses_rebuilt_host_until_node_deleted(cluster, joined):
    """k3s pkg/nodepassword: the hash of /etc/rancher/node/password in <node>.node-password.k3s, owned by the Node."""
    srv, agent = cluster['srv'], cluster['agent']
    wait('the agent joined', lambda: peek_state(agent).get('joined_at'), 120, [(agent, 'k3s-agent')])
    uid = kubectl_json(srv, 'get', 'node', agent)['metadata']['uid']
    secret = wait('the Secret owned by the Node', lambda: (node_password_secret(srv, agent) or {}).get('metadata', {}).get(
        'ownerReferences') and node_password_secret(srv, agent), 30, [(srv, 'k3s')])
    assert secret['type'] == 'k3s.cattle.io/node-password' and secret['immutable'] is True, secret
    assert list(secret['data']) == ['hash'], secret
    assert secret['metadata']['ownerReferences'] == [{'apiVersion': 'v1', 'kind': 'Node', 'name': agent, 'uid': uid}]
    # k3s's scrypt format, checked against the agent's password file with Python's own scrypt
    check = docker('exec', '-i', agent, 'python3', '-c', NODE_PASSWORD, stdin=json.dumps(secret))
    assert check.stdout.split() == ['$1', '15', '8', '1', 'True'], check.stdout + check.stderr
    # the host is rebuilt: a new password under the same name is refused
    sh(agent, 'systemctl stop k3s-agent; rm -rf /etc/rancher/node /var/lib/rancher/k3s/agent %s' % STATE, timeout=60)
    start_unit(agent, 'k3s-agent', ['agent'])
    err = wait('the new password refused', lambda: 'Node password' in peek_state(agent).get('join_error', '') and
               peek_state(agent)['join_error'], 60, [(agent, 'k3s-agent')])
    assert err == ("Node password rejected, duplicate hostname or contents of '/etc/rancher/node/password' may not "
                   "match server node-passwd entry, try enabling a unique node name with the --with-node-id flag"), err
    assert unit_state(agent, 'k3s-agent') == 'activating'  # no READY=1
    assert ('level=info msg="Waiting to retrieve agent configuration; server is not ready: Node password rejected'
            in journal(agent, 'k3s-agent'))
    logged = sh(srv, 'journalctl -u k3s --no-pager | grep "Sending HTTP 403"', check=False).stdout
    assert 'unable to verify password for node %s: hash does not match' % agent in logged, logged
    assert node_password_secret(srv, agent)['metadata']['uid'] == secret['metadata']['uid']
    # deleting the Node deletes its Secret (garbage collector), and the host joins again by itself
    kubectl(srv, 'delete', 'node', agent)
    wait('the Secret deleted with its Node', lambda: node_password_secret(srv, agent) is None, 60, [(srv, 'k3s')])
    wait('the rebuilt agent active', lambda: unit_state(agent, 'k3s-agent') == 'active', 120, [(agent, 'k3s-agent')])
    wait('the rebuilt agent Ready', lambda: agent in ready_nodes(srv), 60)
    new_uid = kubectl_json(srv, 'get', 'node', agent)['metadata']['uid']
    wait('the new Secret owned by the new Node', lambda: ((node_password_secret(srv, agent) or {}).get('metadata', {}).get(
        'ownerReferences') or [{}])[0].get('uid') == new_uid, 30, [(srv, 'k3s')])
    assert state(agent)['node_created'] is True


def test_wrong_token_is_refused(cluster, joined):
    srv, bad = cluster['srv'], cluster['bad']
    ca_hash = joined[3:].split('::')[0]
    url = 'https://%s:6443' % srv
    start_unit(bad, 'k3s-agent', ['agent', '--server', url, '--token', 'K10%s::server:not-the-secret' % ca_hash])
    st = wait('a refused join recorded', lambda: peek_state(bad).get('join_error'), 60, [(bad, 'k3s-agent')])
    assert st.endswith('/v1-k3s/config: 401 Unauthorized'), st
    sh(bad, 'systemctl stop k3s-agent; systemctl reset-failed k3s-agent 2>/dev/null; true')
    other = 'K10%s::server:%s' % ('0' * 64, joined.split(':')[-1])  # the right secret, another cluster's CA
    start_unit(bad, 'k3s-agent', ['agent', '--server', url, '--token', other])
    wait('the CA hash mismatch recorded', lambda: 'token CA hash does not match' in peek_state(bad).get('join_error', ''), 60,
         [(bad, 'k3s-agent')])
    time.sleep(5)
    s = state(bad)
    assert s['join_attempts'] >= 2 and s['phase'] == 'joining' and not s.get('joined_at'), s
    assert unit_state(bad, 'k3s-agent') == 'activating'  # never READY=1
    assert 'level=error msg="Failed to validate connection to cluster at %s: token CA hash' % url in journal(bad, 'k3s-agent')
    assert bad not in node_names(srv)
    sh(bad, 'systemctl stop k3s-agent; systemctl reset-failed k3s-agent 2>/dev/null; true')


def test_agent_waits_for_token_file_which_wins_over_k3s_token(cluster, joined):
    """k3s pkg/util/file.go ReadFile and pkg/cli/agent/agent.go Run: the file is waited for and replaces K3S_TOKEN."""
    srv, bad = cluster['srv'], cluster['bad']
    late = '/etc/rancher/k3s/late-token'
    sh(bad, 'systemctl stop k3s-agent; systemctl reset-failed k3s-agent 2>/dev/null; rm -f %s %s; '
            'mkdir -p /etc/rancher/k3s; true' % (STATE, late))
    wrong = 'K10%s::server:not-the-secret' % joined[3:].split('::')[0]
    start_unit(bad, 'k3s-agent', ['agent', '--server', 'https://%s:6443' % srv, '--token-file', late],
               env=('K3S_TOKEN=%s' % wrong, 'K3S_DATA_DIR=/var/lib/k3s-alt'))
    waiting = 'level=info msg="Waiting for %s to be available\\n"' % late
    wait('two looks for the token file', lambda: sh(bad, 'journalctl -u k3s-agent --no-pager',
                                                    check=False).stdout.count(waiting) >= 2, 60, [(bad, 'k3s-agent')])
    assert unit_state(bad, 'k3s-agent') == 'activating'  # no READY=1 while it waits
    assert peek_state(bad)['phase'] == 'waiting-for-token-file'
    sh(bad, 'printf "%%s\\n" "%s" > %s' % (joined, late))
    wait('the agent active with the token of the file', lambda: unit_state(bad, 'k3s-agent') == 'active', 120,
         [(bad, 'k3s-agent')])
    assert bad in node_names(srv) and not state(bad).get('join_error')
    files = sh(bad, 'ls /var/lib/k3s-alt/agent; ls /var/lib/rancher/k3s/agent 2>&1; true').stdout
    assert 'client-kubelet.crt' in files and 'No such file or directory' in files, files  # K3S_DATA_DIR
    wait('its node-password Secret owned by the Node',
         lambda: (node_password_secret(srv, bad) or {}).get('metadata', {}).get('ownerReferences'), 30, [(srv, 'k3s')])
    sh(bad, 'systemctl stop k3s-agent; systemctl reset-failed k3s-agent 2>/dev/null; true')
    kubectl(srv, 'delete', 'node', bad)
    wait('its node-password Secret deleted with the Node', lambda: node_password_secret(srv, bad) is None, 60)


def test_scheduler_serving_certificate_verifies(cluster, joined):
    """k3s 1.31.9+ (pkg/daemons/control/server.go scheduler): --tls-cert-file from server/tls/kube-scheduler/."""
    srv = cluster['srv']
    crt = '%s/tls/kube-scheduler/kube-scheduler.crt' % DATA
    wait('the scheduler started', lambda: peek_state(srv).get('scheduler_started_at'), 120, [(srv, 'k3s')])
    args = state(srv)['scheduler_args']
    assert '--tls-cert-file=%s' % crt in args, args
    assert '--tls-private-key-file=%s/tls/kube-scheduler/kube-scheduler.key' % DATA in args, args
    probe = ('import ssl, urllib.request\n'
             'ctx = ssl.create_default_context(cafile="%s/tls/server-ca.crt")\n'
             'for host in ("127.0.0.1", "localhost"):\n'
             '    print(urllib.request.urlopen("https://%%s:10259/healthz" %% host, context=ctx, timeout=10).read().decode())\n'
             % DATA)
    last = []

    def verified():
        last[:] = [docker('exec', '-i', srv, 'python3', '-', stdin=probe, check=False)]
        return last[0].returncode == 0

    wait('the scheduler healthy, verified against the server CA', verified, 60, [(srv, 'k3s')])
    assert last[0].stdout.split() == ['ok', 'ok'], last[0].stdout + last[0].stderr


def test_csr_signed_by_controller_manager(cluster, joined):
    srv = cluster['srv']
    st = state(srv)
    assert st['controller_manager_pid'] and '--use-service-account-credentials=true' in st['controller_manager_args']
    sh(srv, 'cd /tmp && openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout alice.key '
            '-subj "/CN=alice/O=cluster-admins" -out alice.csr 2>/dev/null')
    csr = base64.b64encode(sh(srv, 'cat /tmp/alice.csr').stdout.encode()).decode()
    manifest = {'apiVersion': 'certificates.k8s.io/v1', 'kind': 'CertificateSigningRequest', 'metadata': {'name': 'alice'},
                'spec': {'request': csr, 'signerName': 'kubernetes.io/kube-apiserver-client', 'expirationSeconds': 86400,
                         'usages': ['client auth']}}
    docker('exec', '-i', srv, 'k3s', 'kubectl', 'create', '-f', '-', stdin=json.dumps(manifest))
    kubectl(srv, 'certificate', 'approve', 'alice')
    cert = wait('the approved CSR signed', lambda: kubectl_json(srv, 'get', 'csr', 'alice')['status'].get('certificate'), 60,
                [(srv, 'k3s')])
    docker('exec', '-i', srv, 'sh', '-c', 'base64 -d > /tmp/alice.crt', stdin=cert)
    out = kubectl(srv, '--kubeconfig', '/dev/null', '--server', 'https://%s:6443' % srv, '--certificate-authority',
                  '%s/tls/server-ca.crt' % DATA, '--client-certificate', '/tmp/alice.crt', '--client-key', '/tmp/alice.key',
                  'auth', 'whoami', '-o', 'json')
    user = json.loads(out.stdout)['status']['userInfo']
    assert user['username'] == 'alice' and 'cluster-admins' in user['groups'], user


def scheduler_holder(name):
    out = kubectl(name, 'get', 'lease', '-n', 'kube-system', 'kube-scheduler', '-o', 'jsonpath={.spec.holderIdentity}',
                  check=False)
    return out.stdout.rsplit('_', 1)[0] if out.returncode == 0 else ''


def test_servers_share_one_datastore(cluster):
    ha1, ha2, bad = cluster['ha1'], cluster['ha2'], cluster['bad']
    for name in (ha1, ha2):
        wait('%s active' % name, lambda n=name: unit_state(n, 'k3s') == 'active', 240, [(name, 'k3s')])
    for name in (ha1, ha2):
        wait('both Nodes Ready seen from %s' % name, lambda n=name: ready_nodes(n) >= {ha1, ha2}, 120, [(name, 'k3s')])
    for f in ('server-ca.crt', 'client-ca.key', 'service.key'):
        assert sh(ha1, 'sha256sum %s/tls/%s' % (DATA, f)).stdout.split()[0] == sh(ha2, 'sha256sum %s/tls/%s' % (DATA, f)).stdout.split()[0]
    states = {n: state(n) for n in (ha1, ha2)}
    assert sorted(s['bootstrap'] for s in states.values())[0] in ('loaded', 'loaded-after-race'), states
    for s in states.values():
        assert s['leader_elect'] is True and s['kine'] is False and '--leader-elect=false' not in s['scheduler_args']
    leader = wait('a scheduler leader', lambda: scheduler_holder(ha1), 60)
    assert leader in (ha1, ha2) and scheduler_holder(ha2) == leader
    follower = ha2 if leader == ha1 else ha1
    sh(leader, 'systemctl stop k3s', timeout=60)
    wait('the kube-scheduler lease taken over by %s' % follower, lambda: scheduler_holder(follower) == follower, 90,
         [(follower, 'k3s')])
    sh(bad, 'systemctl stop k3s-agent; rm -f %s; true' % STATE)
    start_unit(bad, 'k3s-ha3', ['server', '--token=another-secret', '--datastore-endpoint=http://%s:2379' % cluster['kine']])
    wait('the server with another token failed', lambda: unit_state(bad, 'k3s-ha3') == 'failed', 60, [(bad, 'k3s-ha3')])
    s = state(bad)
    assert s['exit_code'] == 1
    assert s['exit_reason'] == 'starting kubernetes: preparing server: bootstrap data already found and encrypted with different token'
    assert bad not in node_names(follower)


BACKUP = '''
import sqlite3
src = sqlite3.connect("file:%s/db/state.db?mode=ro", uri=True)
dst = sqlite3.connect("/root/state-backup.db")
src.backup(dst)
dst.close()
src.close()
''' % DATA


def configmaps(name):
    out = kubectl(name, 'get', 'configmap', '-n', 'default', '-o', 'jsonpath={.items[*].metadata.name}', check=False)
    return {c for c in out.stdout.split() if c.startswith('w-')} if out.returncode == 0 else set()


def test_sqlite_backup_and_restore(cluster, joined):
    srv = cluster['srv']
    files = sh(srv, 'ls %s/db' % DATA).stdout.split()
    assert {'state.db', 'state.db-wal', 'state.db-shm'} <= set(files), files  # kine runs SQLite in WAL mode
    stop = threading.Event()

    def writer():
        i = 0
        while not stop.is_set():
            kubectl(srv, 'create', 'configmap', 'w-%03d' % i, '--from-literal=n=%d' % i, check=False)
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        wait('the writer started', lambda: len(configmaps(srv)) >= 5, 60)
        before = configmaps(srv)
        docker('exec', '-i', srv, 'python3', '-', stdin=BACKUP)  # SQLite's online backup API
        after = configmaps(srv)
        wait('more ConfigMaps after the backup', lambda: len(configmaps(srv) - after) >= 5, 60)
    finally:
        stop.set()
        t.join(60)
    final = configmaps(srv)
    sh(srv, 'systemctl stop k3s && rm -f %s && rm -rf %s/db && mkdir -m 700 %s/db && cp /root/state-backup.db %s/db/state.db'
            % (STATE, DATA, DATA, DATA), timeout=120)
    start_unit(srv, 'k3s-wrong', ['server', '--token=not-the-token'])
    wait('the restored datastore refused with a wrong token', lambda: unit_state(srv, 'k3s-wrong') == 'failed', 60,
         [(srv, 'k3s-wrong')])
    assert state(srv)['exit_reason'].endswith('bootstrap data already found and encrypted with different token')
    start_unit(srv, 'k3s', ['server', '--write-kubeconfig-mode=644'])  # the token from server/token
    wait('the restored server active', lambda: unit_state(srv, 'k3s') == 'active', 240, [(srv, 'k3s')])
    assert state(srv)['bootstrap'] == 'loaded'
    restored = configmaps(srv)
    assert before <= restored, sorted(before - restored)
    assert not restored & (final - after), sorted(restored & (final - after))
    wait('the agents Ready again', lambda: ready_nodes(srv) >= {srv, cluster['gpu'], cluster['agent']}, 120)
