# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The tables of docs/performance.md, made from the benchmarks' bench.json (a unit test holds the page to them).

    python3 tests/bench/doc_tables.py rollout DEFAULTS.json [PIPELINING.json]    (tests/bench/run.sh's bench.json)
    python3 tests/bench/doc_tables.py steps BENCH.json                               (where one rollout's time went)
    python3 tests/bench/doc_tables.py fleet BENCH.json [PLAYBOOK ...]             (tests/bench/fleet.sh's bench.json)

docs/bench/ keeps the bench.json of the runs the page shows.
"""

from __future__ import annotations

import json
import sys

FLEET_ROWS = {  # playbook: what its row is called
    'site': '`site` from bare nodes',
    'noop': '`site` again (no-op)',
    'floor': 'its floor: as many `ansible.builtin.stat` tasks',
    'upgrade': '`upgrade` (agents one at a time, the default)',
    'status': '`status` (servers only)',
}
FORKS = (5, 25, 50)


def _span(values, fmt='%.1f'):
    low, high = min(values), max(values)
    return fmt % low if fmt % low == fmt % high else (fmt + '-' + fmt) % (low, high)


def rollout(*results):
    """The rollout table: one column per bench.json (Ansible's defaults, then pipelining)."""
    def settings(r):
        return 'pipelining' if r['ansible']['pipelining'] == 'True' else "Ansible's defaults"
    first = results[0]
    rows = [
        ('`install_csi` on %d servers (%d agents beside them)' % (len(first['servers']), len(first['agents'])),
         lambda r: '%.1f s' % r['converge']['seconds']),
        ('the manual procedure in shell', lambda r: '%.1f s' % r['manual']['seconds']),
        ('converge ratio (target 1.5 on the defaults, 1.3 with pipelining)', lambda r: '%.2f' % r['converge_ratio']),
        ('per server: first write to scheduler serving (bare restart and wait)',
         lambda r: '%s s (%s s)' % (_span(list(r['converge']['change_to_ready_s'].values())),
                                    _span(list(r['bare_restart_s'].values())))),
        ('no-op re-run (its floor: as many `ansible.builtin.stat` tasks)',
         lambda r: '%.1f s (%.1f s)' % (r['rerun']['seconds'], r['floor']['seconds'])),
        ('tasks per server in the one-at-a-time play, run / skipped',
         lambda r: _span(['%d / %d' % (t['run'], t['skipped']) for t in r['converge']['serial_tasks'].values()], '%s')),
        ('k3s starts per server on converge / on the re-run / on the agents',
         lambda r: '%s / %s / %d' % (_span(list(r['converge']['starts'][n] for n in r['servers']), '%d'),
                                     _span(list(r['rerun']['starts'][n] for n in r['servers']), '%d'),
                                     sum(r['converge']['starts'][n] + r['rerun']['starts'][n] for n in r['agents']))),
        ('longest time two schedulers were down together', lambda r: '%.2f s' % r['converge']['two_down_s']),
    ]
    lines = ['| | %s |' % ' | '.join(settings(r) for r in results), '|---|%s' % ('---|' * len(results))]
    lines += ['| %s | %s |' % (name, ' | '.join(value(r) for r in results)) for name, value in rows]
    return '\n'.join(lines)


def steps(result):
    """Where a rollout's converge went, from the bench_timeline callback's events (bench.py's step table): each play
    with its tasks of 0.05 s or more (a play of all servers at once: its slowest server), and the one-at-a-time play
    once, per server (the range over the servers)."""
    rows, serial, play = [], None, ''
    for step, took, dummy in result['converge']['steps']:
        name = step.strip().replace('baremetal.k3s.scheduler_extender : ', '')
        if step.startswith('play: '):
            play = 'serial' if 'one at a time' in step else 'parallel'
            if play == 'serial' and serial is None:
                serial = {name.replace('play: ', 'play, per server: '): [took]}
                rows.append(serial)
            elif play == 'serial':
                serial[next(iter(serial))].append(took)
            else:
                rows.append((name, took))
        elif not step.startswith(' '):
            rows.append((name, took))
        elif play == 'serial':
            serial.setdefault(name, []).append(took)
        elif took >= 0.05:
            rows.append(('&nbsp;&nbsp;' + name, took))
    lines = ['| step | seconds |', '|---|---|']
    for row in rows:
        if isinstance(row, dict):
            for i, (name, values) in enumerate(row.items()):
                lines.append('| %s%s | %s |' % ('' if i == 0 else '&nbsp;&nbsp;', name, _span(values, '%.2f')))
        else:
            lines.append('| %s | %.2f |' % row)
    return '\n'.join(lines)


def fleet(result, playbooks=None):
    """The fleet table of one bench.json: a row per playbook (those named, in FLEET_ROWS' order)."""
    sizes = [str(s) for s in result['sizes']]
    shown = [p for p in FLEET_ROWS if p in result['playbooks'] and (not playbooks or p in playbooks)]
    lines = ['| playbook | wall s at %s agents | controller CPU s | tasks run per agent | per added agent '
             '| 1,000 agents at forks %s |' % (' / '.join(sizes), ' / '.join(map(str, FORKS))),
             '|---|---|---|---|---|---|']
    for name in shown:
        p = result['playbooks'][name]
        slope = p['wall_slope_s_per_agent']
        lines.append('| %s | %s | %s | %s | %s | %s |' % (
            FLEET_ROWS[name], ' / '.join('%.1f' % p['seconds'][s] for s in sizes),
            ' / '.join('%.1f' % p['cpu_s'][s] for s in sizes), _span([p['tasks_per_agent'][s] for s in sizes], '%.0f'),
            '%.1f s (%.1f CPU-s)' % (slope, p['cpu_slope_s_per_agent']) if slope > 0.05 else 'none',
            ' / '.join('%.0f' % (p['projection_s'][str(f)] / 60) for f in FORKS) + ' min'
            if max(p['projection_s'].values()) >= 60 else 'under a minute'))
    return '\n'.join(lines)


def main(argv):
    kind, paths = argv[0], argv[1:]
    if kind == 'rollout':
        print(rollout(*[json.load(open(p)) for p in paths]))
    elif kind == 'steps':
        print(steps(json.load(open(paths[0]))))
    else:
        print(fleet(json.load(open(paths[0])), paths[1:]))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
