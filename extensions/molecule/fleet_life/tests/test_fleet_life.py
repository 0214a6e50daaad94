# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A k3s cluster made by baremetal.k3s.site from bare nodes: what the real API server says of it.

Every node's k3s double logs each start and stop to /var/log/k3s-double/events.jsonl (the
containers share the host's clock), so restarts are counted and the down windows of the two
servers compared. The scheduler's leader is the kube-system/kube-scheduler Lease of the real API.
"""

from __future__ import annotations

import datetime
import json
import os

import testinfra
import yaml
from testinfra.utils.ansible_runner import AnsibleRunner

import bk3s_checks as c  # pylint: disable=import-error

RUNNER = AnsibleRunner(os.environ['MOLECULE_INVENTORY_FILE'])
KUBECTL = 'k3s kubectl --kubeconfig /etc/rancher/k3s/k3s.yaml '


def _hosts(group):
    return {name: testinfra.get_host('ansible://%s' % name, ansible_inventory=os.environ['MOLECULE_INVENTORY_FILE'])
            for name in RUNNER.get_hosts(group)}


SERVERS = _hosts('server')
AGENTS = _hosts('agent')
FIRST = SERVERS['bk3s-life-server-1']


def _json(args):
    return json.loads(FIRST.check_output(KUBECTL + args + ' -o json'))


def _starts(host):
    return [e for e in c.launcher_events(host) if e['event'] == 'start']


def test_every_node_is_ready_in_the_api_with_its_labels_and_taints():
    nodes = {n['metadata']['name']: n for n in _json('get nodes')['items']}
    assert set(nodes) == set(SERVERS) | set(AGENTS), sorted(nodes)
    for name, node in nodes.items():
        ready = [cond for cond in node['status']['conditions'] if cond['type'] == 'Ready']
        assert ready and ready[0]['status'] == 'True', (name, node['status']['conditions'])
    for name in SERVERS:
        labels = nodes[name]['metadata']['labels']
        assert labels.get('tier') == 'control' and labels.get('node-role.kubernetes.io/control-plane') == 'true', labels
        assert labels.get('rack') == 'r1', labels  # the servers' option rolled out in side_effect
    edge = nodes['bk3s-life-agent-1']
    assert edge['metadata']['labels'].get('tier') == 'edge' and edge['metadata']['labels'].get('zone') == 'b'
    assert {'key': 'dedicated', 'value': 'edge', 'effect': 'NoSchedule'} in edge['spec'].get('taints', [])
    gpu = nodes['bk3s-life-agent-gpu']
    assert gpu['metadata']['labels'].get('gpu') == 'nvidia'


def test_the_gpu_agent_runs_the_nvidia_runtime_and_the_cluster_has_its_runtimeclass():
    rc = _json('get runtimeclass nvidia')
    assert rc['handler'] == 'nvidia'
    state = c.launcher_state(AGENTS['bk3s-life-agent-gpu'])
    assert state.get('default_runtime') == 'nvidia', state


def test_both_servers_are_one_cluster_with_one_scheduler_leader():
    lease = _json('get lease -n kube-system kube-scheduler')
    holder = lease['spec'].get('holderIdentity', '')
    assert any(holder.startswith(name) for name in SERVERS), holder
    other = SERVERS['bk3s-life-server-2']
    names = json.loads(other.check_output(KUBECTL + 'get nodes -o json'))['items']
    assert len(names) == len(SERVERS) + len(AGENTS)


def test_the_token_is_written_0600_and_never_shown():
    for host in list(SERVERS.values())[1:] + list(AGENTS.values()):
        f = host.file('/etc/rancher/k3s/cluster-token')
        assert f.exists and f.mode == 0o600 and f.user == 'root'
        assert f.content_string.strip().startswith('K10')
    token = FIRST.file('/var/lib/rancher/k3s/server/token').content_string.strip()
    for host in list(SERVERS.values()) + list(AGENTS.values()):
        for path in ('/etc/rancher/k3s/config.yaml.d/40-baremetal-k3s-server.yaml',
                     '/etc/rancher/k3s/config.yaml.d/40-baremetal-k3s-agent.yaml'):
            f = host.file(path)
            if f.exists:
                assert token not in f.content_string and f.mode == 0o600


# side_effect's changed registries (molecule.yml's life_registries_changed), as k3s reads registries.yaml
REGISTRIES = {
    'mirrors': {
        'docker.io': {'endpoint': ['https://registry.life.internal:5000', 'https://registry-2.life.internal']},
        'registry.k8s.io': {'endpoint': ['https://registry.life.internal:5000'], 'rewrite': {'^(.*)$': 'k8s/$1'}},
    },
    'configs': {
        'registry.life.internal:5000': {
            'auth': {'username': 'puller', 'password': 'life-reg-pass-V2m4Kx9'},
            'tls': {'ca_file': '/etc/ssl/certs/life-ca.pem', 'insecure_skip_verify': False},
        },
    },
}


def test_every_node_has_the_changed_registries_in_k3s_format():
    for name, host in list(SERVERS.items()) + list(AGENTS.items()):
        f = host.file('/etc/rancher/k3s/registries.yaml')
        assert f.exists and f.mode == 0o600 and f.user == 'root', name
        text = f.content_string
        assert text.startswith('#'), (name, text)  # the collection's marker line
        assert yaml.safe_load(text) == REGISTRIES, (name, text)


def test_the_units_are_in_the_installers_format():
    for name, host in list(SERVERS.items()) + list(AGENTS.items()):
        unit = 'k3s' if name in SERVERS else 'k3s-agent'
        text = host.file('/etc/systemd/system/%s.service' % unit).content_string
        assert 'ExecStart=/usr/local/bin/k3s \\\n    %s \\\n' % ('server' if name in SERVERS else 'agent') in text
        assert host.file('/etc/systemd/system/%s.service.env' % unit).mode == 0o600


def test_restarts_and_the_servers_down_windows():
    # servers: one start at converge, none on the no-op re-run, none by the agents'
    # change, one by their own changed option and registries, one by install_csi, none by the last site.yml; then
    # the leader killed at the end of side_effect restarted once more (systemd's Restart=always)
    kill = json.load(open('/tmp/bk3s-life.json'))['leader_kill']
    killed_at = datetime.datetime.fromtimestamp(kill['killed_at'], datetime.timezone.utc)
    for name, host in SERVERS.items():
        starts = [c.event_time(e['time']) for e in _starts(host)]
        before = [t for t in starts if t < killed_at]
        assert len(before) == 3, (name, starts)
        assert len(starts) - len(before) == (1 if name == kill['server'] else 0), (name, kill, starts)
    overlap = c.longest_overlap({name: c.down_windows(c.launcher_events(host)) for name, host in SERVERS.items()})
    # agents: one start at converge; one more each for the agents' changed registries, which for
    # agent-1 came with its changed label (one restart for both); none by the servers' changes
    agent_starts = {name: len(_starts(host)) for name, host in AGENTS.items()}
    assert agent_starts == {'bk3s-life-agent-1': 2, 'bk3s-life-agent-gpu': 2}, agent_starts
    figures = json.load(open('/tmp/bk3s-life.json'))
    print('\nfleet_life: k3s starts per server %s; per agent %s; longest time both servers were down together %s; '
          'no-op re-run of site.yml %s'
          % ({n: len(_starts(h)) for n, h in SERVERS.items()}, agent_starts, overlap, figures['noop_rerun_seconds']))
    assert overlap <= datetime.timedelta(0)


def test_through_the_rolling_changes_a_scheduler_led_and_every_new_pod_was_bound():
    """The probe on the datastore host watched the servers' option change and install_csi."""
    r = json.load(open('/tmp/bk3s-life.json'))['rollout']
    print('\nfleet_life rollout (servers\' changed option, then install_csi), watched %(seconds)s s, a sample every '
          '%(interval_seconds)s s: %(samples)d samples, %(samples_without_api)d without an API answer, '
          '%(samples_without_leader)d without a live scheduler leader in %(leaderless_runs)d runs; handovers of '
          'the Lease took %(longest_handover_seconds)s s at most, the longest time without a live leader '
          '%(longest_without_leader_seconds)s s; leaders in turn %(leaders_in_turn)s; %(pods_created)d pods created '
          '(%(pod_creates_refused)d refused), %(pods_bound)d bound, the slowest in %(longest_bind_seconds)s s; '
          'per node %(pods_per_node)s' % r)
    assert r['samples'] >= 20 and r['pods_created'] >= 10, r
    # one API server always answered: the servers were never down together
    assert r['samples_without_api'] == 0, r
    # both servers were restarted, so the lead moved at least once
    assert len(r['leaders_in_turn']) >= 2 and r['handovers'], r
    # a stopping scheduler releases its Lease and the other takes it at its next retry (2 s); a leader
    # that died without releasing it is taken over only after the Lease's duration (15 s), and counts
    # as gone once it has not renewed for renew_within_seconds: test_the_probe_sees_a_leader_killed_...
    # shows both bounds failing on such a leader
    assert r['longest_handover_seconds'] < r['lease_duration_seconds'], r['handovers']
    assert r['longest_without_leader_seconds'] < r['lease_duration_seconds'] - r['renew_within_seconds'], r['handovers']
    # every pod the probe sent was created (one no API server answered in time was sent again) and bound
    assert r['unbound'] == [] and r['pod_creates_refused'] == 0 and r['pod_create_unresolved'] is None, r


def test_the_probe_sees_a_leader_killed_without_releasing_its_lease():
    """side_effect SIGKILLed the leading kube-scheduler while the probe watched: its Lease was left held."""
    kill = json.load(open('/tmp/bk3s-life.json'))['leader_kill']
    r, holder = kill['figures'], kill['holder']
    print('\nfleet_life leader kill: %s killed at %.3f; handovers %s; longest without a live leader %s s; '
          '%d samples without one' % (holder, kill['killed_at'], r['handovers'], r['longest_without_leader_seconds'],
                                      r['samples_without_leader']))
    assert r['samples_without_api'] == 0, r['errors']  # the other server's API answered throughout
    # it saw the killed scheduler lead, and another after it
    assert holder in r['leaders_in_turn'][:-1], r['leaders_in_turn']
    assert kill['next_holder'] in r['leaders_in_turn'], (kill['next_holder'], r['leaders_in_turn'])
    # liveness is what the leader does: its last renewal was before the kill, so no sample later than the
    # kill plus the renew window counts it live, though its Lease named it for the Lease's whole duration
    assert r['last_live'][holder] <= kill['killed_at'] + r['renew_within_seconds'], (r['last_live'], kill)
    assert r['samples_without_leader'] > 0, r
    # the gap: nothing released the Lease, and the next scheduler could take it only after the Lease's
    # duration without a renewal (client-go's rule; a slow machine only lengthens it), so both bounds the
    # rollout test asserts fail here
    (handover,) = [h for h in r['handovers'] if h['from'] == holder]
    assert not handover['released'], handover
    assert not handover['seconds'] < r['lease_duration_seconds'], handover
    assert not r['longest_without_leader_seconds'] < r['lease_duration_seconds'] - r['renew_within_seconds'], r['handovers']


def test_two_servers_publishing_at_once_both_land_in_the_readiness_configmap():
    """install_csi's publish phase with scheduler_extender_serial 2 wrote a new ConfigMap from both servers."""
    entries = c.readiness_nodes(FIRST, name='extender-readiness-pair')
    assert sorted(e['node_name'] for e in entries) == sorted(SERVERS), entries
