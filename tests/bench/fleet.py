# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet benchmark's measurements, on bare fleets tests/bench/fleet.sh starts, one per size.

``measure`` (one fleet): runs, in order, baremetal.k3s.site from bare nodes, site again (a no-op), Ansible's
floor for that no-op (as many ansible.builtin.stat tasks on each host as the no-op ran there, one plain play per
count), baremetal.k3s.upgrade to the newer k3s double in the fleet's airgap directory, and baremetal.k3s.status,
each with profile_tasks' timings, and records for each: the wall time; the controller's CPU seconds (user +
system of the ansible-playbook process and every process below it that it waited for: its forks, the
connection's docker exec, ...; getrusage(RUSAGE_CHILDREN) before and after); the tasks actually run per
host (ok + failed of the PLAY RECAP; skipped tasks are not run) and their mean over the agents; and per
play, its wall time, its hosts and how many batches it ran in (a serial play prints its banner once per
batch). Writes size-<agents>.json.

``report`` (all sizes): per playbook, a least-squares line through the sizes for the wall time and the CPU
seconds - the slope is the cost of one more agent - and a projection for 1,000 agents at forks 5, 25 and
50, computed per play: a play's wall slope was measured with W hosts at once (the forks, or fewer when its
batch was smaller), so one more agent costs slope x W host-seconds of waiting; at 1,000 agents with f forks
those spread over min(f, the play's batch at that size) hosts at once (a batch given as a percentage grows
with the fleet, a batch given as a count does not; a play without serial has every host in its batch).
The projection is the sum over plays of intercept + 1,000 x slope x W / min(f, batch), and never less than
the controller's CPU line at 1,000 agents divided by its cores (a 2-core controller cannot run more than
2 CPU-seconds a second, whatever the forks). Writes bench.json, fleet.txt and bench.png.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import resource
import subprocess
import sys
import time

import yaml

from bench import floor_playbook, recap  # tests/bench/bench.py: Ansible's floor as a playbook, the PLAY RECAP parser
import doc_tables  # tests/bench/doc_tables.py: the table of docs/performance.md

TARGET_AGENTS = 1000
FORKS = (5, 25, 50)
PLAYBOOKS = ('site', 'noop', 'floor', 'upgrade', 'status')
HOST_LINE = re.compile(r'^(?:ok|changed|skipping|fatal|failed|rescued|ignored): \[([^\]\s]+)')
PLAY_LINE = re.compile(r'^PLAY \[(.*)\] \*+$')
ELAPSED = re.compile(r'\(\d+:\d\d:\d\d\.\d+\)\s+(\d+):(\d\d):(\d\d\.\d+)\s+\*+\s*$')


def log(msg):
    print('== %s %s' % (time.strftime('%H:%M:%S'), msg), flush=True)


def plays(out, total):
    """[{name, seconds, hosts, batches}] from a run's output, one per play name (its batches summed)."""
    found, current, marks = {}, None, []
    for line in out.splitlines():
        m = PLAY_LINE.match(line)
        if m:
            current = found.setdefault(m.group(1), {'name': m.group(1), 'seconds': 0.0, 'hosts': set(), 'batches': 0})
            current['batches'] += 1
            marks.append([current, None])
            continue
        m = ELAPSED.search(line)
        if m and marks and marks[-1][1] is None:
            marks[-1][1] = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
        m = HOST_LINE.match(line)
        if m and current is not None:
            current['hosts'].add(m.group(1))
    starts = [t for dummy, t in marks]
    for i, (play, start) in enumerate(marks):
        if start is None:
            continue
        end = next((t for t in starts[i + 1:] if t is not None), total)
        play['seconds'] += max(0.0, end - start)
    return [dict(p, hosts=sorted(p['hosts'])) for p in found.values()]


class Runner:
    def __init__(self, args):
        self.args = args
        self.env = dict(os.environ, ANSIBLE_CALLBACKS_ENABLED='ansible.posix.profile_tasks', ANSIBLE_NOCOLOR='1',
                        ANSIBLE_STDOUT_CALLBACK='ansible.builtin.default', ANSIBLE_COLLECTIONS_PATH=args.collections)

    def forks(self):
        config = os.path.join(os.path.dirname(self.args.ansible_playbook), 'ansible-config')
        out = subprocess.run([config, 'dump'], cwd=self.args.out, env=self.env, capture_output=True, text=True,
                             check=True).stdout
        found = dict(re.findall(r'^(ANSIBLE_PIPELINING|DEFAULT_FORKS)\(.*?\) = (.*)$', out, re.M))
        return int(found.get('DEFAULT_FORKS', '5')), found.get('ANSIBLE_PIPELINING', '?')

    def run(self, name, playbook, *extra):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.time()
        res = subprocess.run([self.args.ansible_playbook, '-i', self.args.inventory, playbook] + list(extra),
                             cwd=self.args.out, env=self.env, capture_output=True, text=True, check=False)
        took = time.time() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        with open(os.path.join(self.args.out, '%s-%d.log' % (name, self.args.agents)), 'w') as f:
            f.write(res.stdout + res.stderr)
        if res.returncode:  # recorded and shown in the table: the later runs still say what they cost
            log('  %s failed (exit %d); see %s-%d.log in %s' % (playbook, res.returncode, name, self.args.agents, self.args.out))
        hosts = recap(res.stdout)
        tasks = {h: v.get('ok', 0) + v.get('failed', 0) for h, v in hosts.items()}
        agents = [h for h in tasks if h in self.args.agent_names]
        return {'seconds': took, 'rc': res.returncode,
                'cpu_s': (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
                'tasks_per_host': tasks,
                'tasks_per_agent': sum(tasks[h] for h in agents) / len(agents) if agents else 0.0,
                'plays': plays(res.stdout, took)}


def measure(args):
    inv = yaml.safe_load(open(args.inventory))['all']['children']
    args.agent_names = set((inv.get('agent') or {}).get('hosts') or {})
    args.agents = len(args.agent_names)
    servers = sorted((inv.get('server') or {}).get('hosts') or {})
    os.makedirs(args.out, exist_ok=True)
    runner = Runner(args)
    forks, pipelining = runner.forks()
    newer = sorted(p for p in glob.glob(os.path.join(args.airgap, 'k3s-v*')) if not p.endswith('.sha256'))
    if not newer:
        raise RuntimeError('no newer k3s in %s for the upgrade (tests/demo.sh writes one for a bare fleet)' % args.airgap)
    sha = open(newer[-1] + '.sha256').read().split()[0]
    result = {'agents': args.agents, 'servers': servers, 'forks': forks, 'pipelining': pipelining,
              'cores': os.cpu_count(), 'load_at_start': os.getloadavg()[0], 'runs': {}}
    steps = [('site', 'baremetal.k3s.site', ()), ('noop', 'baremetal.k3s.site', ()),
             ('upgrade', 'baremetal.k3s.upgrade', ('-e', 'k3s_upgrade_binary_src=' + newer[-1],
                                                   '-e', 'k3s_upgrade_binary_sha256=' + sha)),
             ('status', 'baremetal.k3s.status', ('-e', 'status_fail_on_drift=false'))]
    for name, playbook, extra in steps:
        if name not in args.runs:
            continue
        log('%d agents: %s' % (args.agents, name))
        result['runs'][name] = runner.run(name, playbook, *extra)
        r = result['runs'][name]
        log('  %.1f s, %.1f CPU-s, %.1f tasks per agent' % (r['seconds'], r['cpu_s'], r['tasks_per_agent']))
        if name == 'noop':
            # Ansible's floor for the no-op: as many ansible.builtin.stat tasks on each host as the no-op ran there
            log('%d agents: floor' % args.agents)
            floor = os.path.join(args.out, 'floor-%d.yml' % args.agents)
            floor_playbook(r['tasks_per_host'], floor)
            result['runs']['floor'] = runner.run('floor', floor)
            f = result['runs']['floor']
            log('  %.1f s, %.1f CPU-s; the no-op is %.2fx its floor' % (f['seconds'], f['cpu_s'], r['seconds'] / f['seconds']))
    with open(os.path.join(args.out, 'size-%d.json' % args.agents), 'w') as f:
        json.dump(result, f, indent=2, sort_keys=True)


def line(xs, ys):
    """Least-squares (intercept, slope) of ys over xs; one point: (y, 0)."""
    if len(xs) < 2:
        return ys[0], 0.0
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


def batch_at(play_by_size, agents_by_size, target):
    """The play's batch (hosts at once, forks aside) at ``target`` agents, from how it grew over the sizes measured."""
    sizes = sorted(play_by_size)
    big = play_by_size[sizes[-1]]
    hosts = len(big['hosts'])
    grows = hosts > len(play_by_size[sizes[0]]['hosts'])  # the play runs on the agents
    hosts_at = hosts + (target - agents_by_size[sizes[-1]]) if grows else hosts
    if big['batches'] <= 1:
        return hosts_at
    per_batch = [math.ceil(len(play_by_size[s]['hosts']) / play_by_size[s]['batches']) for s in sizes]
    if len(set(per_batch)) == 1 and len(sizes) > 1:
        return per_batch[-1]  # a batch of a fixed count (serial: 1)
    return math.ceil(hosts_at / big['batches'])  # a percentage: as many batches, each bigger


def project(runs, sizes, forks_measured, cores):
    """{forks: seconds} at TARGET_AGENTS agents for one playbook (see the module's docstring)."""
    names = []
    for s in sizes:
        names.extend(p['name'] for p in runs[s]['plays'] if p['name'] not in names)
    out = {}
    cpu_a, cpu_b = line(sizes, [runs[s]['cpu_s'] for s in sizes])
    cpu_floor = (cpu_a + cpu_b * TARGET_AGENTS) / cores
    for f in FORKS:
        total = 0.0
        for name in names:
            by_size = {s: p for s in sizes for p in runs[s]['plays'] if p['name'] == name}
            have = sorted(by_size)
            a, b = line(have, [by_size[s]['seconds'] for s in have])
            big = by_size[have[-1]]
            width = min(forks_measured, math.ceil(len(big['hosts']) / max(1, big['batches']))) or 1
            total += a + TARGET_AGENTS * max(0.0, b) * width / min(f, batch_at(by_size, {s: s for s in have}, TARGET_AGENTS))
        out[f] = max(total, cpu_floor)
    return out, cpu_floor


def report(args):
    results = {}
    for path in glob.glob(os.path.join(args.out, 'size-*.json')):
        r = json.load(open(path))
        results[r['agents']] = r
    if not results:
        raise RuntimeError('no size-*.json in %s: run measure first' % args.out)
    sizes = sorted(results)
    first = results[sizes[0]]
    summary = {'sizes': sizes, 'servers': len(first['servers']), 'forks': first['forks'],
               'pipelining': first['pipelining'], 'cores': first['cores'], 'target_agents': TARGET_AGENTS,
               'load_at_start': {s: results[s]['load_at_start'] for s in sizes}, 'playbooks': {}}
    for name in [n for n in PLAYBOOKS if all(n in results[k]['runs'] for k in sizes)]:
        runs = {s: results[s]['runs'][name] for s in sizes}
        wall = line(sizes, [runs[s]['seconds'] for s in sizes])
        cpu = line(sizes, [runs[s]['cpu_s'] for s in sizes])
        projection, floor = project(runs, sizes, first['forks'], first['cores'])
        summary['playbooks'][name] = {
            'seconds': {s: runs[s]['seconds'] for s in sizes}, 'rc': {s: runs[s]['rc'] for s in sizes},
            'cpu_s': {s: runs[s]['cpu_s'] for s in sizes},
            'tasks_per_agent': {s: runs[s]['tasks_per_agent'] for s in sizes},
            'wall_slope_s_per_agent': wall[1], 'cpu_slope_s_per_agent': cpu[1],
            'projection_s': {str(f): v for f, v in projection.items()}, 'cpu_floor_s': floor,
            'plays': {s: runs[s]['plays'] for s in sizes}}
    summary['noop_over_floor'] = {s: results[s]['runs']['noop']['seconds'] / results[s]['runs']['floor']['seconds']
                                  for s in sizes if 'floor' in results[s]['runs']}
    with open(os.path.join(args.out, 'bench.json'), 'w') as f:
        json.dump(summary, f, indent=2, sort_keys=True)
    text = table(summary)
    with open(os.path.join(args.out, 'fleet.txt'), 'w') as f:
        f.write(text + '\n')
    with open(os.path.join(args.out, 'fleet.md'), 'w') as f:  # the table of docs/performance.md
        f.write(doc_tables.fleet(json.loads(json.dumps(summary))) + '\n')  # as bench.json has it (string keys)
    try:
        plot(summary, os.path.join(args.out, 'bench.png'))
    except ImportError:
        print('(no plot: matplotlib is not installed)')
    print()
    print(text)
    print()
    print('written: %s' % ', '.join(os.path.join(args.out, n) for n in ('fleet.txt', 'fleet.md', 'bench.json', 'bench.png')))


def table(s):
    sizes = s['sizes']
    lines = ['%d server(s); agents %s; Ansible forks %s, pipelining %s; %d cores; load average at the start %s'
             % (s['servers'], ', '.join(map(str, sizes)), s['forks'], s['pipelining'], s['cores'],
                ', '.join('%.1f' % s['load_at_start'][k] for k in sizes)), '']
    columns = ('playbook', 'wall s (per size)', 'controller CPU s', 'tasks per agent', 'slope s/agent',
               '1,000 agents, forks %s (min)' % '/'.join(map(str, FORKS)))
    lines.append('%-8s %-28s %-28s %-22s %-14s %s' % columns)
    for name in [n for n in PLAYBOOKS if n in s['playbooks']]:
        p = s['playbooks'][name]
        lines.append('%-8s %-28s %-28s %-22s %-14s %s' % (
            name, ', '.join('%.1f' % p['seconds'][k] for k in sizes), ', '.join('%.1f' % p['cpu_s'][k] for k in sizes),
            ', '.join('%.1f' % p['tasks_per_agent'][k] for k in sizes),
            '%.2f (CPU %.2f)' % (p['wall_slope_s_per_agent'], p['cpu_slope_s_per_agent']),
            ' / '.join('%.0f' % (p['projection_s'][str(f)] / 60) for f in FORKS)))
        if any(p['rc'][k] for k in sizes):
            lines.append('         FAILED at %s agents (exit %s): see its log' % (
                ', '.join(str(k) for k in sizes if p['rc'][k]), ', '.join(str(p['rc'][k]) for k in sizes if p['rc'][k])))
    if s['noop_over_floor']:
        lines += ['', 'the no-op re-run against its floor (as many ansible.builtin.stat tasks on each host, no serial): %s'
                  % ', '.join('%.2fx at %d agents' % (s['noop_over_floor'][k], k) for k in sorted(s['noop_over_floor']))]
    lines += ['', 'projection: per play, intercept + 1,000 x slope x (hosts at once when measured) / min(forks, its batch',
              'at 1,000 agents), summed; never below the CPU line at 1,000 agents / cores (fleet.py says more).']
    return '\n'.join(lines)


def plot(s, path):
    import matplotlib  # pylint: disable=import-outside-toplevel
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for name in [n for n in PLAYBOOKS if n in s['playbooks']]:
        p = s['playbooks'][name]
        ax1.plot(s['sizes'], [p['seconds'][k] for k in s['sizes']], marker='o', label=name)
        ax2.plot(s['sizes'], [p['cpu_s'][k] for k in s['sizes']], marker='o', label=name)
    ax1.set_xlabel('agents')
    ax1.set_ylabel('wall seconds')
    ax2.set_xlabel('agents')
    ax2.set_ylabel('controller CPU seconds')
    ax1.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    sub = p.add_subparsers(dest='action', required=True)
    m = sub.add_parser('measure')
    m.add_argument('--inventory', required=True)
    m.add_argument('--collections', required=True, help='ANSIBLE_COLLECTIONS_PATH holding the installed collection')
    m.add_argument('--airgap', required=True, help="the bare fleet's airgap directory (tests/demo.sh)")
    m.add_argument('--ansible-playbook', required=True)
    m.add_argument('--out', required=True)
    m.add_argument('--runs', default='site,noop,upgrade,status',
                   help='which runs, of site,noop,upgrade,status (the floor goes with noop; site is needed first on bare nodes)')
    r = sub.add_parser('report')
    r.add_argument('--out', required=True)
    args = p.parse_args()
    if args.action == 'measure':
        args.runs = set(args.runs.split(','))
        measure(args)
    else:
        report(args)


if __name__ == '__main__':
    sys.exit(main())
