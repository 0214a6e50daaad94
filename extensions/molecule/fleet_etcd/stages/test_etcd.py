# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Three servers on embedded etcd made by baremetal.k3s.site: one cluster, and a rolling change that never lost quorum.

The etcd members are real etcd (embedded by the k3s double as k3s embeds it); each server's
probe sampled its own member's /health (true only with a leader and quorum) every half second
through the rolling change and install_csi; the agent's probe watched the API, the scheduler's
Lease and new pods. Each server's double logs its starts to /var/log/k3s-double/events.jsonl.
"""

from __future__ import annotations

import datetime
import json
import os
import re

import testinfra
from testinfra.utils.ansible_runner import AnsibleRunner

import bk3s_checks as c  # pylint: disable=import-error

RUNNER = AnsibleRunner(os.environ['MOLECULE_INVENTORY_FILE'])
KUBECTL = 'k3s kubectl --kubeconfig /etc/rancher/k3s/k3s.yaml '
FIGURES = os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'etcd.json')
DB_INFO = ("python3 -c \"import json, ssl, urllib.request; "
           "print(urllib.request.urlopen('https://127.0.0.1:9345/db/info', "
           "context=ssl._create_unverified_context(), timeout=10).read().decode())\"")


def _hosts(group):
    return {name: testinfra.get_host('ansible://%s' % name, ansible_inventory=os.environ['MOLECULE_INVENTORY_FILE'])
            for name in RUNNER.get_hosts(group)}


SERVERS = _hosts('server')
AGENTS = _hosts('agent')


def _figures():
    with open(FIGURES, encoding='utf-8') as f:
        return json.load(f)


def _restore_began():
    """When restore.yml began (UTC, to the second, as the double's events write it): the stages before it end there."""
    with open(os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'restore.json'), encoding='utf-8') as f:
        return json.load(f)['began']


def _nodes(host):
    return {n['metadata']['name']: n for n in json.loads(host.check_output(KUBECTL + 'get nodes -o json'))['items']}


def _condition(node, kind):
    return next(((x['status'], x.get('reason')) for x in node['status']['conditions'] if x['type'] == kind), None)


def test_the_defaults_made_embedded_etcd_on_every_server():
    for name, host in SERVERS.items():
        state = c.launcher_state(host)
        assert state.get('kine') is False and state.get('leader_elect') is True, (name, state)
        config = host.file('/etc/rancher/k3s/config.yaml.d/40-baremetal-k3s-server.yaml').content_string
        first = name == 'bk3s-etcd-server-1'
        assert ('cluster-init: true' in config) == first, (name, config)
        assert ('server: https://bk3s-etcd-server-1:6443' in config) == (not first), (name, config)


def test_one_member_list_of_three_voters():
    lists = {}
    for name, host in SERVERS.items():
        members = json.loads(host.check_output(DB_INFO))['members']
        lists[name] = sorted((m['name'], bool(m.get('isLearner'))) for m in members)
    first = lists['bk3s-etcd-server-1']
    assert len(first) == 3 and not any(learner for dummy, learner in first), lists
    assert all(members == first for members in lists.values()), lists
    assert sorted(n.rsplit('-', 1)[0] for n, dummy in first) == sorted(SERVERS), first


def test_every_node_in_every_servers_api_and_every_server_a_voter():
    want = set(SERVERS) | set(AGENTS)
    for name, host in SERVERS.items():
        nodes = _nodes(host)
        assert set(nodes) == want, (name, sorted(nodes))
        for node_name, node in nodes.items():
            assert _condition(node, 'Ready')[0] == 'True', (name, node_name)
            if node_name in SERVERS:
                assert _condition(node, 'EtcdIsVoter') == ('True', 'MemberNotLearner'), (name, node_name)
                assert node['metadata']['labels'].get('node-role.kubernetes.io/etcd') == 'true'
                assert node['metadata']['labels'].get('rack') == 'r1'  # the rolled-out option


def test_the_rollout_restarted_each_server_and_not_the_agent():
    figures = _figures()
    for name in SERVERS:
        assert figures['after'][name] != figures['before'][name], name
    for name in AGENTS:
        assert figures['after'][name] == figures['before'][name], name
    # restore.yml starts every server again afterwards: the starts before it began (UTC, to the second)
    began = _restore_began()
    starts = {name: len([e for e in c.launcher_events(h) if e['event'] == 'start' and e['time'][:19] < began])
              for name, h in SERVERS.items()}
    print('\nfleet_etcd: k3s starts per server (converge, the changed option, install_csi): %s' % starts)
    assert all(n == 3 for n in starts.values()), starts


def test_install_csi_again_changed_nothing_and_never_were_two_servers_down_together():
    recap = dict(re.findall(r'(?m)^(\S+)\s+:\s+ok=\d+\s+changed=(\d+)\s', _figures()['install_csi_again']))
    assert sorted(recap) == sorted(SERVERS), recap  # install_csi's plays are the servers'
    assert all(n == '0' for n in recap.values()), recap
    # its restarts: none (the starts counted above); the servers' down windows before the restore, never together
    began = c.event_time(_restore_began() + 'Z')
    windows = {name: c.down_windows(c.launcher_events(h), until=began) for name, h in SERVERS.items()}
    assert all(len(w) == 2 for w in windows.values()), windows  # the changed option, then install_csi
    longest = c.longest_overlap(windows)
    print('fleet_etcd: longest time two servers were down together before the restore: %s' % longest)
    assert longest <= datetime.timedelta(0), longest


def test_every_server_ready_in_the_readiness_configmap():
    # one cluster: one ConfigMap, each server's entry published by the wait that proved it
    first = SERVERS[sorted(SERVERS)[0]]
    assert sorted(c.readiness_nodes(first), key=lambda n: n['node_name']) == [
        {'node_name': name, 'kube_scheduler': 'k3s@' + name, 'restarted': True} for name in sorted(SERVERS)]


def test_quorum_never_lost_while_the_servers_restarted_one_at_a_time():
    samples = []
    for name, text in _figures()['samples'].items():
        samples += [dict(json.loads(line), server=name) for line in text.splitlines() if line.strip()]
    samples.sort(key=lambda s: s['t'])
    healthy = [s['t'] for s in samples if s['health']]
    assert len(healthy) > 100, len(samples)
    gaps = [b - a for a, b in zip(healthy, healthy[1:])]
    longest = max(gaps)
    down = {name: sum(1 for s in samples if s['server'] == name and s['health'] is None) for name in SERVERS}
    print('fleet_etcd: %d etcd samples over %.0f s; longest time without a healthy member (leader and quorum) '
          '%.2f s; samples per server while its member did not answer %s'
          % (len(samples), samples[-1]['t'] - samples[0]['t'], longest, down))
    # three members sampled every 0.5 s: without a loss of quorum a healthy answer comes at least every
    # second or so; a restart that took quorum away would leave every member unhealthy for seconds
    assert longest < 3.0, longest
    assert all(s['health'] is not False for s in samples if s['has_leader'] is not False), \
        [s for s in samples if s['health'] is False][:5]
    assert any(n > 0 for n in down.values()), 'no member was ever down: the rollout restarted nothing'


def test_the_api_always_answered_and_the_scheduler_always_had_a_leader_soon():
    r = _figures()['rollout']
    print('fleet_etcd rollout: %(samples)d samples, %(samples_without_api)d without an API answer, longest without a '
          'live scheduler leader %(longest_without_leader_seconds)s s, leaders in turn %(leaders_in_turn)s, '
          '%(pods_created)d pods created, %(pods_bound)d bound' % r)
    assert r['samples_without_api'] == 0, r
    assert r['pods_created'] > 0 and r['pods_bound'] == r['pods_created'], r
    assert r['longest_without_leader_seconds'] < 15, r
