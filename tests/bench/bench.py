# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rollout benchmark's measurements, on a fleet tests/bench/run.sh has started.

Every figure comes from what the nodes record themselves, on the clock host and containers
share: the k3s launcher's events (/var/log/k3s-double/events.jsonl: one "start" per k3s start)
and a poller on each server that logs kube-scheduler's /healthz turning up or down
(poll_scheduler.py). In order:

1. bare restart-to-ready per server: ``systemctl restart k3s`` and the same readiness wait,
   no Ansible (the floor a rolling restart cannot beat);
2. converge: baremetal.k3s.install_csi on the fresh fleet; k3s starts per node; per server the
   time from the first file the role wrote to its scheduler serving again; the longest time two
   schedulers were down together;
3. a no-op re-run of install_csi against a playbook of as many ansible.builtin.stat tasks on the
   same hosts as the re-run ran (Ansible's own floor);
4. uninstall, then the manual procedure scripted in shell on the same fleet (scheduler config
   written, the flag appended to ExecStart, ``systemctl daemon-reload && systemctl restart k3s``,
   one server at a time, each waited for) against the converge's time.

Writes bench.json and bench.png (matplotlib) into --out and prints the table.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import yaml

import doc_tables  # tests/bench/doc_tables.py: the table of docs/performance.md

HERE = os.path.dirname(os.path.abspath(__file__))
POLL_LOG = '/var/tmp/bk3s-poll.log'
EVENTS = '/var/log/k3s-double/events.jsonl'
SCHEDULER_CONFIG = '/etc/rancher/k3s/kube-scheduler/config.yaml'
FLAG = '--kube-scheduler-arg=config=' + SCHEDULER_CONFIG
# every file install_csi may write on a k3s server; the earliest one written is "the change"
WRITTEN = [SCHEDULER_CONFIG, '/etc/systemd/system/k3s.service',
           '/etc/systemd/system/k3s.service.d/99-baremetal-k3s.conf',
           '/etc/rancher/k3s/config.yaml.d/99-baremetal-k3s-scheduler.yaml']
READY_TIMEOUT = 180
TARGETS = {'noop_ratio': 1.2, 'converge_ratio': 1.5, 'slack_s': 2.0}


def log(msg):
    print('== %s %s' % (time.strftime('%H:%M:%S'), msg), flush=True)


def dexec(node, *argv, stdin=None, check=True):
    """docker exec ARGV on NODE (with STDIN when given); its stdout."""
    cmd = ['docker', 'exec'] + (['-i'] if stdin is not None else []) + [node] + list(argv)
    res = subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=False)
    if check and res.returncode:
        raise RuntimeError('%s: %s failed (%d): %s' % (node, ' '.join(argv), res.returncode, res.stderr.strip()))
    return res.stdout


def parse_time(stamp):
    """RFC 3339 with nanoseconds (Go's RFC3339Nano) as a unix time."""
    m = re.match(r'(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z$', stamp)
    if not m:
        raise ValueError('not an RFC 3339 UTC time: %r' % stamp)
    base = datetime.datetime.strptime(m.group(1), '%Y-%m-%dT%H:%M:%S').replace(tzinfo=datetime.timezone.utc)
    return base.timestamp() + float('0.' + (m.group(2) or '0'))


def starts_since(node, since):
    """How many times k3s started on NODE after unix time SINCE (the launcher's "start" events)."""
    out = dexec(node, 'sh', '-c', 'cat %s 2>/dev/null || true' % EVENTS)
    return sum(1 for line in out.splitlines() if line.strip()
               for ev in [json.loads(line)] if ev.get('event') == 'start' and parse_time(ev['time']) > since)


def poll_states(node):
    out = dexec(node, 'cat', POLL_LOG)
    return [(float(t), s) for t, s in (line.split() for line in out.splitlines() if line.strip())]


def down_intervals(states, start, end):
    """The [down, up) intervals of one server's scheduler that overlap [start, end]."""
    spans, down_at = [], None
    for t, s in states:
        if s == 'down' and down_at is None:
            down_at = t
        elif s == 'up' and down_at is not None:
            if t >= start and down_at <= end:
                spans.append((down_at, t))
            down_at = None
    if down_at is not None and down_at <= end:
        spans.append((down_at, end))
    return spans


def longest_overlap(intervals_by_node):
    best = 0.0
    for a, b in itertools.combinations(intervals_by_node.values(), 2):
        for (a0, a1), (b0, b1) in itertools.product(a, b):
            best = max(best, min(a1, b1) - max(a0, b0))
    return best


def wait_back_up(node, since, timeout=READY_TIMEOUT):
    """Unix time the scheduler on NODE served again after going down after SINCE."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        seen_down = False
        for t, s in poll_states(node):
            if t < since:
                continue
            if s == 'down':
                seen_down = True
            elif s == 'up' and seen_down:
                return t
        time.sleep(0.2)
    raise RuntimeError('%s: the scheduler did not go down and come back within %ds' % (node, timeout))


def file_mtime(node, path):
    out = dexec(node, 'python3', '-c', 'import os,sys; print(os.stat(sys.argv[1]).st_mtime if os.path.exists(sys.argv[1]) else "")', path)
    return float(out) if out.strip() else None


class Runner:
    """ansible-playbook against the fleet's inventory, with per-task timing."""

    def __init__(self, args):
        self.args = args
        self.env = dict(os.environ, ANSIBLE_CALLBACKS_ENABLED='ansible.posix.profile_tasks,bench_timeline',
                        ANSIBLE_CALLBACK_PLUGINS=os.path.join(HERE, 'callback_plugins'), ANSIBLE_NOCOLOR='1',
                        ANSIBLE_STDOUT_CALLBACK='ansible.builtin.default', PROFILE_TASKS_TASK_OUTPUT_LIMIT='15',
                        ANSIBLE_COLLECTIONS_PATH=args.collections)
        self.last_output = ''

    def settings(self):
        """The Ansible settings the figures depend on, as ansible-config reports them here."""
        config = os.path.join(os.path.dirname(self.args.ansible_playbook), 'ansible-config')
        out = subprocess.run([config, 'dump'], cwd=self.args.out, env=self.env, capture_output=True, text=True,
                             check=True).stdout
        found = dict(re.findall(r'^(ANSIBLE_PIPELINING|DEFAULT_FORKS)\(.*?\) = (.*)$', out, re.M))
        return {'pipelining': found.get('ANSIBLE_PIPELINING', '?'), 'forks': found.get('DEFAULT_FORKS', '?')}

    def run(self, playbook, *extra, name):
        self.timeline = os.path.join(self.args.out, name + '.timeline.jsonl')
        if os.path.exists(self.timeline):
            os.unlink(self.timeline)
        env = dict(self.env, BENCH_TIMELINE=self.timeline)
        t0 = time.time()
        res = subprocess.run([self.args.ansible_playbook, '-i', self.args.inventory, playbook] + list(extra),
                             cwd=self.args.out, env=env, capture_output=True, text=True, check=False)
        took = time.time() - t0
        with open(os.path.join(self.args.out, name + '.log'), 'w') as f:
            f.write(res.stdout + res.stderr)
        if res.returncode:
            raise RuntimeError('%s failed (exit %d); see %s.log in %s' % (playbook, res.returncode, name, self.args.out))
        self.last_output = res.stdout
        return took, recap(res.stdout), slowest_tasks(res.stdout)


def recap(out):
    """{host: {ok, changed, skipped, ...}} from PLAY RECAP."""
    hosts = {}
    for m in re.finditer(r'^(\S+)\s+:\s+((?:\w+=\d+\s*)+)$', out, re.M):
        hosts[m.group(1)] = {k: int(v) for k, v in re.findall(r'(\w+)=(\d+)', m.group(2))}
    return hosts


def slowest_tasks(out):
    """profile_tasks' TASKS RECAP: [(task, seconds)], slowest first."""
    part = out.split('TASKS RECAP', 1)[-1]
    return [(m.group(1).strip(), float(m.group(2)))
            for m in re.finditer(r'^(.+?)\s-{2,}\s+(\d+\.\d+)s$', part, re.M)]


def step_table(path, t0):
    """Where a run's time went, from the bench_timeline callback's events: [(step, seconds, detail)]. A play run
    one host at a time gets one row per task with its mean per host and the range, and a row for the controller's
    own time between that play's tasks."""
    events = [json.loads(line) for line in open(path)]
    plays = [e for e in events if e['event'] in ('play', 'end')]
    rows = [('ansible-playbook start to its first play', plays[0]['t'] - t0, '')]
    for play, after in zip(plays, plays[1:]):
        wall = after['t'] - play['t']
        mine = [e for e in events if e['play'] == play['play'] and play['t'] <= e['t'] <= after['t'] and e['host']]
        hosts = sorted({e['host'] for e in mine})
        runs = {}  # task -> {host: seconds}
        opened = {}
        for e in mine:
            key = (e['host'], e['task'])
            if e['event'] == 'start':
                opened[key] = e['t']
            elif key in opened:
                runs.setdefault(e['task'], {}).setdefault(e['host'], 0.0)
                runs[e['task']][e['host']] += e['t'] - opened.pop(key)
        serial = 'one at a time' in play['play']
        rows.append(('play: ' + play['play'], wall, '%d hosts%s' % (len(hosts), ', per host below' if serial else '')))
        if not serial:
            for task, per_host in runs.items():
                took = max(per_host.values())
                if took >= 0.05:
                    rows.append(('  ' + task, took, 'slowest host'))
            continue
        busy = 0.0
        for task, per_host in runs.items():
            took = list(per_host.values())
            busy += sum(took)
            if max(took) >= 0.05:
                rows.append(('  ' + task, sum(took) / len(hosts), '%.2f-%.2f' % (min(took), max(took))))
        rows.append(('  the controller between these tasks', (wall - busy) / max(len(hosts), 1), 'per host'))
    return rows


def serial_tasks(out):
    """{server: {run, skipped}}: the tasks of install_csi's one-at-a-time play per server, from its output
    (run: ok, changed or failed; a task skipped costs the controller only)."""
    counts, play = {}, ''
    for line in out.splitlines():
        m = re.match(r'^PLAY \[(.*)\] \*+', line)
        if m:
            play = m.group(1)
            continue
        m = re.match(r'^(ok|changed|fatal|failed|skipping): \[([^\]\s]+)', line)
        if m and 'one at a time' in play:
            entry = counts.setdefault(m.group(2), {'run': 0, 'skipped': 0})
            entry['skipped' if m.group(1) == 'skipping' else 'run'] += 1
    return counts


def floor_playbook(counts, path):
    """As many ansible.builtin.stat tasks per host as the re-run ran there, one play per count."""
    by_count = {}
    for host, n in counts.items():
        by_count.setdefault(n, []).append(host)
    plays = []
    for n, hosts in sorted(by_count.items()):
        plays.append({'name': 'Ansible floor: %d stat tasks' % n, 'hosts': ':'.join(sorted(hosts)),
                      'gather_facts': False,
                      'tasks': [{'name': 'stat %d' % i, 'ansible.builtin.stat': {'path': '/etc/hostname'}}
                                for i in range(n)]})
    with open(path, 'w') as f:
        yaml.safe_dump(plays, f, sort_keys=False)


APPEND_FLAG = r'''
import sys
path, flag = sys.argv[1], sys.argv[2]
lines = open(path).read().split('\n')
i = next(n for n, line in enumerate(lines) if line.startswith('ExecStart='))
while lines[i].endswith('\\'):
    i += 1
if lines[i].strip() == '':  # the installer's layout: each word ends in "\", an empty line ends ExecStart
    lines.insert(i, "\t'%s' \\" % flag)
else:
    lines[i] += ' \\'
    lines.insert(i + 1, "\t'%s'" % flag)
open(path, 'w').write('\n'.join(lines))
'''


def manual_procedure(servers, config_bytes):
    """The documented manual steps, scripted: each server changed, restarted and waited for in turn."""
    t0 = time.time()
    for node in servers:
        mark = time.time()
        dexec(node, 'sh', '-c', 'mkdir -p %s && cat > %s' % (os.path.dirname(SCHEDULER_CONFIG), SCHEDULER_CONFIG),
              stdin=config_bytes)
        dexec(node, 'python3', '-c', APPEND_FLAG, '/etc/systemd/system/k3s.service', FLAG)
        dexec(node, 'sh', '-c', 'systemctl daemon-reload && systemctl restart k3s')
        wait_back_up(node, mark)
    return time.time() - t0


def plot(result, path):
    import matplotlib  # pylint: disable=import-outside-toplevel
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel

    servers = result['servers']
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 3 + 0.6 * len(servers)))
    t0 = result['converge']['started']
    for i, node in enumerate(servers):
        spans = [(a - t0, b - a) for a, b in result['converge']['down'][node]]
        ax1.broken_barh(spans, (i - 0.3, 0.6), color='tab:red')
    ax1.set_yticks(range(len(servers)), servers)
    ax1.set_xlim(0, result['converge']['seconds'])
    ax1.set_xlabel('seconds into install_csi (converge): red = scheduler not serving')
    x = range(len(servers))
    ax2.bar([i - 0.2 for i in x], [result['bare_restart_s'][n] for n in servers], 0.4, label='systemctl restart k3s + wait')
    ax2.bar([i + 0.2 for i in x], [result['converge']['change_to_ready_s'][n] for n in servers], 0.4,
            label='install_csi: change to scheduler ready')
    ax2.set_xticks(list(x), servers)
    ax2.set_ylabel('seconds')
    ax2.legend(loc='lower right')
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def table(r):
    servers, agents = r['servers'], r['agents']
    conv, rerun = r['converge'], r['rerun']
    rows = [
        ('k3s starts per server, converge', ', '.join(str(conv['starts'][n]) for n in servers), '1 each',
         all(conv['starts'][n] == 1 for n in servers)),
        ('k3s starts per server, re-run', ', '.join(str(rerun['starts'][n]) for n in servers), '0',
         all(rerun['starts'][n] == 0 for n in servers)),
        ('k3s starts on %d agents, converge + re-run' % len(agents),
         str(sum(conv['starts'][n] + rerun['starts'][n] for n in agents)), '0',
         all(conv['starts'][n] + rerun['starts'][n] == 0 for n in agents)),
        ('bare restart-to-ready per server (s)', ', '.join('%.1f' % r['bare_restart_s'][n] for n in servers), '', None),
        ('install_csi change-to-ready per server (s)', ', '.join('%.1f' % conv['change_to_ready_s'][n] for n in servers),
         'bare + %.0f s' % TARGETS['slack_s'],
         all(conv['change_to_ready_s'][n] <= r['bare_restart_s'][n] + TARGETS['slack_s'] for n in servers)),
        ('tasks per server, one-at-a-time play (run/skipped)',
         ', '.join('%d/%d' % (conv['serial_tasks'][n]['run'], conv['serial_tasks'][n]['skipped'])
                   for n in servers if n in conv['serial_tasks']), '', None),
        ('longest two schedulers down together (s)', '%.2f' % conv['two_down_s'], '0', conv['two_down_s'] == 0),
        ('converge install_csi (s)', '%.1f' % conv['seconds'], '', None),
        ('no-op re-run install_csi (s)', '%.1f' % rerun['seconds'], '', None),
        ('same count of stat tasks (s)', '%.1f' % r['floor']['seconds'], '', None),
        ('no-op ratio', '%.2f' % r['noop_ratio'], '<= %.1f' % TARGETS['noop_ratio'], r['noop_ratio'] <= TARGETS['noop_ratio']),
        ('manual procedure in shell (s)', '%.1f' % r['manual']['seconds'], '', None),
        ('converge ratio', '%.2f' % r['converge_ratio'], '<= %.1f' % TARGETS['converge_ratio'],
         r['converge_ratio'] <= TARGETS['converge_ratio']),
    ]
    width = max(len(row[0]) for row in rows)
    lines = ['%d servers, %d agents; Ansible pipelining %s, forks %s'
             % (len(servers), len(agents), r['ansible']['pipelining'], r['ansible']['forks']), '',
             '%-*s  %-22s %-12s %s' % (width, 'figure', 'value', 'target', 'met')]
    for name, value, target, ok in rows:
        lines.append('%-*s  %-22s %-12s %s' % (width, name, value, target, '' if ok is None else ('yes' if ok else 'NO')))
    lines.append('')
    lines.append('where the converge went (s; the one-at-a-time play per server: mean, then the range):')
    lines.extend('  %6.2f  %-100s %s' % (took, step[:100], detail) for step, took, detail in conv.get('steps', []))
    lines.append('')
    for label, tasks in (('converge', conv['slowest']), ('no-op re-run', rerun['slowest'])):
        lines.append('slowest tasks, %s:' % label)
        lines.extend('  %6.2fs  %s' % (s, t) for t, s in tasks[:5])
    return '\n'.join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    p.add_argument('--inventory', required=True)
    p.add_argument('--collections', required=True, help='ANSIBLE_COLLECTIONS_PATH holding the installed collection')
    p.add_argument('--ansible-playbook', required=True)
    p.add_argument('--out', required=True)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    inv = yaml.safe_load(open(args.inventory))['all']['children']
    servers, agents = sorted(inv['server']['hosts']), sorted((inv.get('agent') or {}).get('hosts') or {})
    runner = Runner(args)
    result = {'servers': servers, 'agents': agents, 'targets': TARGETS, 'ansible': runner.settings()}

    log('pollers on %d servers' % len(servers))
    for node in servers:
        subprocess.run(['docker', 'cp', os.path.join(HERE, 'poll_scheduler.py'), node + ':/var/tmp/bk3s-poll.py'], check=True)
        dexec(node, 'rm', '-f', POLL_LOG)
        subprocess.run(['docker', 'exec', '-d', node, 'python3', '/var/tmp/bk3s-poll.py', POLL_LOG], check=True)
    time.sleep(1)

    log('bare restart-to-ready, one server at a time')
    result['bare_restart_s'] = {}
    for node in servers:
        t0 = time.time()
        dexec(node, 'systemctl', 'restart', 'k3s')
        result['bare_restart_s'][node] = wait_back_up(node, t0) - t0

    log('converge: baremetal.k3s.install_csi')
    t0 = time.time()
    took, dummy, slow = runner.run('baremetal.k3s.install_csi', name='converge')
    t1 = time.time()
    conv = {'started': t0, 'seconds': took, 'slowest': slow, 'starts': {}, 'down': {}, 'change_to_ready_s': {},
            'serial_tasks': serial_tasks(runner.last_output), 'steps': step_table(runner.timeline, t0)}
    for node in servers + agents:
        conv['starts'][node] = starts_since(node, t0)
    for node in servers:
        states = poll_states(node)
        conv['down'][node] = down_intervals(states, t0, t1)
        changed = [m for m in (file_mtime(node, f) for f in WRITTEN) if m and m >= t0]
        if not changed or not conv['down'][node]:
            raise RuntimeError('%s: install_csi changed no file or its scheduler never went down' % node)
        conv['change_to_ready_s'][node] = conv['down'][node][-1][1] - min(changed)
    conv['two_down_s'] = longest_overlap(conv['down'])
    result['converge'] = conv
    config_bytes = dexec(servers[0], 'cat', SCHEDULER_CONFIG)

    log('no-op re-run of install_csi')
    t0 = time.time()
    took, rec, slow = runner.run('baremetal.k3s.install_csi', name='rerun')
    result['rerun'] = {'seconds': took, 'slowest': slow, 'recap': rec,
                       'starts': {n: starts_since(n, t0) for n in servers + agents}}

    log("Ansible's floor: the same count of ansible.builtin.stat tasks on the same hosts")
    counts = {h: v['ok'] + v.get('failed', 0) for h, v in rec.items()}
    with tempfile.TemporaryDirectory() as tmp:
        floor_playbook(counts, os.path.join(tmp, 'floor.yml'))
        took = runner.run(os.path.join(tmp, 'floor.yml'), name='floor')[0]
    result['floor'] = {'seconds': took, 'tasks_per_host': counts}
    result['noop_ratio'] = result['rerun']['seconds'] / result['floor']['seconds']

    log('uninstall_csi, then the manual procedure in shell')
    runner.run('baremetal.k3s.uninstall_csi', name='uninstall')
    result['manual'] = {'seconds': manual_procedure(servers, config_bytes)}
    result['converge_ratio'] = result['converge']['seconds'] / result['manual']['seconds']

    for node in servers:
        dexec(node, 'rm', '-f', POLL_LOG)  # stops the poller
    with open(os.path.join(args.out, 'bench.json'), 'w') as f:
        json.dump(result, f, indent=2, sort_keys=True)
    text = table(result)
    with open(os.path.join(args.out, 'bench.txt'), 'w') as f:
        f.write(text + '\n')
    with open(os.path.join(args.out, 'bench.md'), 'w') as f:  # the column of docs/performance.md's table
        f.write(doc_tables.rollout(result) + '\n')
    plot(result, os.path.join(args.out, 'bench.png'))
    print()
    print(text)
    print()
    print('written: %s' % ', '.join(os.path.join(args.out, n) for n in ('bench.txt', 'bench.md', 'bench.json', 'bench.png')))


if __name__ == '__main__':
    sys.exit(main())
