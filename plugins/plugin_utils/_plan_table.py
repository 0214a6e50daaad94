# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet's plan (role baremetal.k3s.scheduler_extender, entry point plan) as one table.

Plain dicts in, plain dicts and strings out, no Ansible import: the action plugin plan_table is
a thin wrapper, and the unit tests call these functions directly.

Each server's plan is the dict the entry point sets as ``scheduler_extender_plan``: server,
platform, node_role, state, files ([{path, action}]), restart, why ([text]), noop, error. A
server with none (unreachable, or failed before it could plan) is a refusal too: nothing may
change while one server's plan is unknown.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal

HEADERS = ('SERVER', 'PLATFORM', 'FILES TO CHANGE', 'RESTART', 'WHY')
GAP = '  '
MAX_WIDTH = 120  # columns of every line the table prints
WHY_MIN = 36  # columns WHY keeps at least: files and server names give way first
NO_PLAN = 'no plan: the host was not reached, or failed before it could be planned'


def _text(value):
    return '' if value is None else ' '.join(str(value).split())


def _as_bool(value):
    if isinstance(value, bool):
        return value
    return _text(value).lower() in ('true', 'yes', '1')


def server_plan(host, plan):
    """One server's plan, normalised: every key present, an error for a missing or malformed plan."""
    if not isinstance(plan, Mapping):
        return {'server': host, 'platform': '', 'node_role': '', 'state': '', 'files': [], 'restart': False,
                'why': [], 'noop': False, 'error': NO_PLAN}
    files = []
    for entry in plan.get('files') or []:
        if isinstance(entry, Mapping):
            files.append({'path': _text(entry.get('path')), 'action': _text(entry.get('action')) or 'changed'})
    why = [_text(w) for w in (plan.get('why') or []) if _text(w)]
    return {'server': host, 'platform': _text(plan.get('platform')), 'node_role': _text(plan.get('node_role')),
            'state': _text(plan.get('state')), 'files': files, 'restart': _as_bool(plan.get('restart')), 'why': why,
            'noop': _as_bool(plan.get('noop')), 'error': _text(plan.get('error'))}


def fleet(hosts, plans):
    """The report: {servers: [plan], refused: [host], to_change: [host], restarts: [host], summary}."""
    servers = [server_plan(h, plans.get(h)) for h in hosts]
    refused = [s['server'] for s in servers if s['error']]
    to_change = [s['server'] for s in servers if not s['error'] and not s['noop']]
    restarts = [s['server'] for s in servers if not s['error'] and s['restart']]
    if refused:
        summary = ('%d of %d servers refused: nothing was changed on any server'
                   % (len(refused), len(servers)))
    else:
        summary = ('%d of %d servers to change (%d restart%s); %d with nothing to do'
                   % (len(to_change), len(servers), len(restarts), '' if len(restarts) == 1 else 's',
                      len(servers) - len(to_change)))
    return {'servers': servers, 'refused': refused, 'to_change': to_change, 'restarts': restarts, 'summary': summary}


def _cells(server):
    """The lines of one server's row: a file, and a reason, per line."""
    if server['error']:
        return [server['server'], server['platform'] or '-', ['-'], '-', ['REFUSED: ' + server['error']]]
    if server['node_role'] == 'agent':
        return [server['server'], server['platform'] or '-', ['-'], 'no', ['an agent: no kube-scheduler here']]
    files = ['%s %s' % (f['action'], f['path']) for f in server['files']] or ['-']
    why = list(server['why'])
    if server['files'] and not why:
        why = [('take our extender out' if server['state'] == 'absent' else 'put our extender in')
               + ('; the scheduler reads these files only when it starts' if server['restart'] else '')]
    if not why:
        why = ['nothing to do' if server['noop'] else 'to prove (the rolling play waits for it)']
    return [server['server'], server['platform'] or '-', files, 'yes' if server['restart'] else 'no', why]


def _fit(widths, budget):
    """The widths of SERVER, PLATFORM, FILES TO CHANGE and RESTART, and WHY's, within ``budget`` columns: FILES gives
    way first (its paths wrap), then SERVER (a name is cut, with an ellipsis), so that WHY keeps :data:`WHY_MIN`."""
    widths = list(widths)
    floors = [_terminal.width(h) for h in HEADERS[:4]]
    for i in (2, 0, 1):
        over = sum(widths) + len(GAP) * 4 + WHY_MIN - budget
        if over > 0:
            widths[i] = max(floors[i], widths[i] - over)
    return widths, max(WHY_MIN, budget - sum(widths) - len(GAP) * 4)


def render(data, width=MAX_WIDTH):
    """The table's lines, none wider than ``width`` terminal columns (a wide CJK character counts two): a server's
    files and reasons one per line, a file or a reason too long for its column continued on the next lines (never
    cut); then the summary. What is not printable (a control character in a name or a message) is escaped."""
    rows = [_cells(s) for s in data['servers']]
    natural = [_terminal.width(h) for h in HEADERS[:4]]
    for row in rows:
        for i, cell in enumerate(row[:4]):
            natural[i] = max([natural[i]] + [_terminal.width(c) for c in (cell if isinstance(cell, list) else [cell])])
    widths, why_width = _fit(natural, width)
    lines = [_line([_terminal.pad(h, w) for h, w in zip(HEADERS[:4], widths)], HEADERS[4])]
    for row in rows:
        files = [part for f in row[2] for part in _terminal.wrap(f, widths[2], subsequent_indent='  ')]
        why = [part for w in row[4] for part in _terminal.wrap(w, why_width, subsequent_indent='  ')]
        for n in range(max(len(files), len(why))):
            first = n == 0
            cells = [row[0] if first else '', row[1] if first else '', files[n] if n < len(files) else '',
                     row[3] if first else '']
            lines.append(_line([_terminal.pad(_terminal.cut(c, w), w) for c, w in zip(cells, widths)],
                               why[n] if n < len(why) else ''))
    lines.append('')
    lines.extend(_terminal.wrap(data['summary'], width))
    return lines


def _line(cells, why):
    return (GAP.join(cells) + GAP + why).rstrip()


def refusal_msg(data):
    """Every refusing server's reason together, for the failure of the run."""
    reasons = ['%s: %s' % (s['server'], s['error']) for s in data['servers'] if s['error']]
    return ('the plan was refused on %d of %d servers, so no server was changed; fix these and run again: %s'
            % (len(reasons), len(data['servers']), '; '.join(reasons)))
