# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""baremetal.k3s.upgrade from A (v1.35.4+k3s1) to B (v1.36.3+k3s1) on three etcd servers and two agents.

stage_upgrade.yml ran the upgrade as an operator runs it (its output as JSON in runs/<name>.json)
and read the fleet after each run (states/<name>.json: per host the binary's sha256, its version,
k3s's InvocationID - a new one per start - whether k3s.previous is kept and how many upgrade
scratch directories are left; the Nodes' name,
kubeletVersion, cordon and Ready; the Deployment upgrade-web's pods). figures.json: the probe's
figures (API, scheduler Lease holder, pods bound, every half second) and a bare restart-to-ready.
"""

from __future__ import annotations

import datetime
import json
import os

DIR = os.environ['MOLECULE_EPHEMERAL_DIRECTORY']
A, B, B2 = 'v1.35.4+k3s1', 'v1.36.3+k3s1', 'v1.36.4+k3s1'
SERVERS = ['bk3s-etcd-server-%d' % i for i in (1, 2, 3)]
AGENTS = ['bk3s-etcd-agent-1', 'bk3s-etcd-agent-2']


def _load(*parts):
    with open(os.path.join(DIR, *parts), encoding='utf-8') as f:
        return json.load(f)


def _run(name):
    return _load('runs', name + '.json')


def _state(name):
    raw = _load('states', name + '.json')
    hosts = {h: dict(zip(('sha256', 'version', 'invocation', 'previous', 'scratch'), lines))
             for h, lines in raw['hosts'].items()}
    nodes = {n[0]: {'version': n[1], 'cordoned': n[2] == 'true', 'ready': n[3]} for n in raw['nodes']}
    return hosts, nodes, [tuple(p) for p in raw['pods']]


def _sha(name):
    with open(os.path.join(DIR, name + '.sha256'), encoding='utf-8') as f:
        return f.read().strip()


CHECK_PLAY = "Check every node's new binary before any node changes"
CHECK_STOP = 'Stop the run before any node changes, naming every refused node and why'


def _results(run, host, rollout_only=False):
    """(task name, result) of every task that ran on the host, in order (rollout_only: not in the first play, the
    fleet-wide check, which fetches and checks every node's new binary and changes nothing)."""
    return [(t['task']['name'], t['hosts'][host]) for play in run['plays'] for t in play['tasks']
            if host in t['hosts'] and not (rollout_only and play['play']['name'] == CHECK_PLAY)]


def _failures(run):
    return {h: [(name, r) for name, r in _results(run, h) if r.get('failed') and not r.get('ignore_errors')]
            for h in SERVERS + AGENTS}


def _time(text):
    return datetime.datetime.fromisoformat(text.replace('Z', '+00:00'))


def _span(run, host):
    times = [(_time(t['task']['duration']['start']), _time(t['task']['duration']['end']))
             for play in run['plays'] if play['play']['name'] != CHECK_PLAY
             for t in play['tasks'] if host in t['hosts'] and 'end' in t['task']['duration']]
    return (max(e for _s, e in times) - min(s for s, _e in times)).total_seconds()


def test_check_mode_changed_nothing():
    run = _run('check')
    assert run['rc'] == 0, run['stderr'][-2000:]
    before, nodes_before, _pods = _state('installed')
    after, nodes_after, _pods = _state('check')
    assert after == before, (before, after)
    assert all(h['version'] == A and h['previous'] == 'no-previous' for h in after.values()), after
    assert nodes_after == nodes_before and not any(n['cordoned'] for n in nodes_after.values()), nodes_after


def test_a_node_that_does_not_come_back_is_put_back_and_the_rollout_stops_there():
    run = _run('failing')
    installed, dummy, dummy = _state('installed')
    hosts, nodes, dummy = _state('failing')
    assert run['rc'] != 0
    failures = _failures(run)
    assert not any(failures[h] for h in SERVERS + ['bk3s-etcd-agent-2']), failures
    name, result = failures['bk3s-etcd-agent-1'][-1]
    msg = result['msg']
    print('\nfleet_upgrade: the failing node, as the run reports it (%s):\n%s' % (name, json.dumps(msg, indent=1)[:3000]))
    assert msg['node'] == 'bk3s-etcd-agent-1', msg
    assert A in msg['put_back'] and 'Ready again' in msg['put_back'] and 'uncordoned' in msg['put_back'], msg
    assert 'stops here' in msg['rollout'] and msg['log'], msg
    # the servers are on B, voters, uncordoned; agent-1 back on A (restarted twice), agent-2 untouched
    for h in SERVERS:
        assert hosts[h]['sha256'] == _sha_b() and hosts[h]['version'] == B and hosts[h]['previous'] == 'previous', hosts[h]
        assert nodes[h] == {'version': B, 'cordoned': False, 'ready': 'True'}, (h, nodes[h])
    a1 = hosts['bk3s-etcd-agent-1']
    assert a1['sha256'] == _sha('k3s-a') and a1['version'] == A and a1['invocation'] != installed['bk3s-etcd-agent-1']['invocation']
    assert nodes['bk3s-etcd-agent-1'] == {'version': A, 'cordoned': False, 'ready': 'True'}, nodes
    assert hosts['bk3s-etcd-agent-2'] == installed['bk3s-etcd-agent-2'], hosts
    assert nodes['bk3s-etcd-agent-2'] == {'version': A, 'cordoned': False, 'ready': 'True'}, nodes
    assert not _results(run, 'bk3s-etcd-agent-2', rollout_only=True), 'agent-2 comes after the failed node: nothing may run there'


def _sha_b():
    return os.environ['BAREMETAL_K3S_K3S_SHA256']


def test_the_rerun_completes_and_the_drained_agents_pod_is_rescheduled():
    run = _run('fixed')
    assert run['rc'] == 0, _failures(run)
    dummy, dummy, pods_before = _state('failing')
    hosts, nodes, pods = _state('fixed')
    for h in SERVERS + AGENTS:
        assert hosts[h]['sha256'] == _sha_b() and hosts[h]['version'] == B, (h, hosts[h])
        assert nodes[h] == {'version': B, 'cordoned': False, 'ready': 'True'}, (h, nodes[h])
    # the servers were done in the failed run: nothing to do for them now
    assert all(run['stats'][h]['changed'] == 0 for h in SERVERS), run['stats']
    drained = [r for name, r in _results(run, 'bk3s-etcd-agent-2')
               if ': Drain the node' in name and r.get('action') == 'ansible.builtin.command']
    assert drained and drained[0].get('changed'), drained
    assert pods_before == [(pods_before[0][0], 'bk3s-etcd-agent-2')], pods_before
    # evicted and replaced; the replacement goes to agent-1, or back to agent-2 when agent-1 still carried the not-ready
    # taint of its own restart until agent-2 was uncordoned (the node lifecycle controller's lag, seen on a loaded CI)
    assert len(pods) == 1 and pods[0][0] != pods_before[0][0] and pods[0][1] in AGENTS, (pods_before, pods)
    print('fleet_upgrade: the Deployment\'s pod %s on agent-2 was evicted by the drain; now %s on %s'
          % (pods_before[0][0], pods[0][0], pods[0][1]))


def test_a_run_after_that_changes_nothing():
    run = _run('again')
    assert run['rc'] == 0, _failures(run)
    assert {h: s['changed'] for h, s in run['stats'].items()} == {h: 0 for h in SERVERS + AGENTS}, run['stats']
    assert _state('again') == _state('fixed')


def _refusal(run):
    """The fleet-wide check's one failure: (host it is reported on, its message)."""
    stops = [(h, r) for play in run['plays'] for t in play['tasks'] if t['task']['name'] == CHECK_STOP
             for h, r in t['hosts'].items() if r.get('failed')]
    assert len(stops) == 1, stops
    return stops[0][0], stops[0][1]['msg']


def _refused_before_any_change(name, first, refused, want):
    run = _run(name)
    assert run['rc'] != 0, name
    host, msg = _refusal(run)
    print('fleet_upgrade: %s refused before any node changed (reported on %s): %s' % (name, host, json.dumps(msg, indent=1)))
    # the first host of the play reports it, once; no other task failed (a node's refusal is noted, not failed)
    assert host == first and {h: s['failures'] for h, s in run['stats'].items()} == {h: int(h == first) for h in run['stats']}, \
        (name, run['stats'])
    assert sorted(msg['refused']) == sorted(refused), (name, msg)
    assert all(': ' in reason for reason in msg['refused'].values()), msg
    assert msg['changed'].startswith('nothing'), msg
    # no task of the rolling plays ran anywhere; no host reports a change (the scratch copies are not one)
    assert not [h for h in SERVERS + AGENTS if _results(run, h, rollout_only=True)], name
    assert all(s['changed'] == 0 for s in run['stats'].values()), (name, run['stats'])
    assert _state(name) == want, name
    return msg


def test_a_downgrade_a_minor_skip_and_agents_newer_than_the_servers_are_refused_with_nothing_changed():
    want = _state('again')
    # downgrade ran under --check, server-2 and agent-2 given a skip of a minor version instead of A: one run, both reasons
    skipping = (SERVERS[1], AGENTS[1])
    for name, first, refused in (('downgrade', SERVERS[0], SERVERS + AGENTS), ('newer', AGENTS[0], AGENTS)):
        msg = _refused_before_any_change(name, first, refused, want)
        for h in refused:
            assert 'Refuse a downgrade' in msg['refused'][h], (name, h, msg)
            if name == 'downgrade':
                why = 'skips a minor version' if h in skipping else 'a downgrade is refused'
                assert why in msg['refused'][h], (h, why, msg['refused'][h])


def test_a_bad_agent_binary_is_refused_before_any_server_changes():
    # the servers and agent-2 given B2, agent-1 an agent binary newer than B2: without the fleet-wide check the
    # servers would be upgraded first; agent-2 (B2, newer than the servers run, not than their new binary) passes
    msg = _refused_before_any_change('bad-agent', SERVERS[0], [AGENTS[0]], _state('again'))
    reason = msg['refused'][AGENTS[0]]
    assert 'Refuse a downgrade' in reason and B2 in reason, reason
    hosts, dummy, dummy = _state('bad-agent')
    again, dummy, dummy = _state('again')
    for h in SERVERS:
        assert hosts[h]['sha256'] == _sha_b() and hosts[h]['invocation'] == again[h]['invocation'], (h, hosts[h])


def test_an_upgrade_stopped_before_the_restart_is_finished_by_the_next_run():
    agent = AGENTS[1]
    before, nodes_before, dummy = _state('downgrade')
    hosts, nodes, dummy = _state('interrupted')
    # by hand: B2's file in place, B kept as previous, k3s still the same process on B
    assert hosts[agent]['sha256'] == _sha('k3s-b2') and hosts[agent]['version'] == B2, hosts[agent]
    assert hosts[agent]['invocation'] == before[agent]['invocation'] and nodes[agent]['version'] == B, (hosts, nodes)
    run = _run('resumed')
    assert run['rc'] == 0, _failures(run)
    names = [name for name, r in _results(run, agent) if not r.get('skipped')]
    assert any(': Restart k3s on the binary an earlier run put in place' in n for n in names), names
    assert not any(': Fetch the new binary' in n or ': Swap the binary' in n for n in names), names
    assert run['stats'][agent]['changed'] > 0, run['stats']
    hosts, nodes, dummy = _state('resumed')
    assert hosts[agent]['invocation'] != before[agent]['invocation'], hosts[agent]
    assert nodes[agent] == {'version': B2, 'cordoned': False, 'ready': 'True'}, nodes[agent]
    again = _run('resumed-again')
    assert again['rc'] == 0 and {h: s['changed'] for h, s in again['stats'].items()} == {agent: 0}, again['stats']
    assert _state('resumed-again') == _state('resumed')


def test_figures():
    figures = _load('figures.json')
    run = _run('failing')
    spans = {h: round(_span(run, h), 1) for h in SERVERS}
    r = figures['rollout']
    print('fleet_upgrade: upgrade per server (fetch, checks, cordon, swap, restart, ready on B, uncordon) %s s; a bare '
          'restart-to-ready of server-1 %.1f s' % (spans, figures['bare_restart_seconds']))
    print('fleet_upgrade probe: %(samples)d samples over %(seconds)s s, %(samples_without_api)d without an API answer, '
          'longest without a live scheduler leader %(longest_without_leader_seconds)s s, leaders in turn %(leaders_in_turn)s, '
          '%(pods_created)d pods created, %(pods_bound)d bound, unbound %(unbound)s' % r)
    assert r['pods_created'] > 0 and r['unbound'] == [] and r['pods_bound'] == r['pods_created'], r
    assert r['samples_without_api'] == 0, r
    assert r['longest_without_leader_seconds'] < 30, r
    assert all(s > 0 for s in spans.values()), spans


INSTALL = ': Install the files from the controller'
RUNS = ['check', 'failing', 'fixed', 'again', 'downgrade', 'newer', 'bad-agent', 'resumed', 'resumed-again']


def _copies(run, host):
    """How many times the run copied a file from the controller to the host (the new binary, in these runs)."""
    return sum(1 for name, r in _results(run, host) if name.endswith(INSTALL)
               for item in r.get('results', []) if not item.get('skipped'))


def test_each_node_is_sent_the_new_binary_once_per_run():
    # the fleet-wide check's copy, checked there, is the one the rolling plays install from
    assert {h: _copies(_run('check'), h) for h in SERVERS + AGENTS} == {h: 1 for h in SERVERS + AGENTS}
    assert {h: _copies(_run('fixed'), h) for h in SERVERS + AGENTS} == {h: int(h in AGENTS) for h in SERVERS + AGENTS}


def test_no_run_leaves_a_scratch_directory():
    # a run that succeeds, one stopped by a node that does not come back (agent-2, after it, was checked too), and
    # those refused before any node changed: none leaves its scratch copies behind
    for name in ['installed', 'interrupted'] + RUNS:
        hosts, _nodes, _pods = _state(name)
        assert {h: v['scratch'] for h, v in hosts.items()} == {h: '0' for h in SERVERS + AGENTS}, name
