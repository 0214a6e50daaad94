# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The fleet's plan as one table: a line per file and reason, refusals and missing plans listed together."""

from __future__ import annotations

from ansible_collections.baremetal.k3s.plugins.plugin_utils import _plan_table as pt

CONFIG = '/etc/rancher/k3s/kube-scheduler/config.yaml'
DROPIN = '/etc/rancher/k3s/config.yaml.d/99-baremetal-k3s-scheduler.yaml'


def plan(server, files=(), restart=None, why=(), noop=None, error='', platform='k3s', role='server', state='present'):
    files = [{'path': p, 'action': a} for p, a in files]
    return {'server': server, 'platform': platform, 'node_role': role, 'state': state, 'files': files,
            'restart': bool(files) if restart is None else restart, 'why': list(why),
            'noop': (not files) if noop is None else noop, 'error': error}


def test_changes_and_noops_in_one_table():
    plans = {'s1': plan('s1', [(CONFIG, 'created'), (DROPIN, 'created')]),
             's2': plan('s2', [(CONFIG, 'updated')], why=['kubescheduler.config.k8s.io/v1beta3 -> '
                                                          'kubescheduler.config.k8s.io/v1 in ' + CONFIG]),
             's3': plan('s3')}
    data = pt.fleet(['s1', 's2', 's3'], plans)
    assert data['refused'] == []
    assert data['to_change'] == ['s1', 's2']
    assert data['restarts'] == ['s1', 's2']
    assert data['summary'] == '2 of 3 servers to change (2 restarts); 1 with nothing to do'
    lines = pt.render(data)
    assert max(len(line) for line in lines) <= 120
    assert lines[0].split() == ['SERVER', 'PLATFORM', 'FILES', 'TO', 'CHANGE', 'RESTART', 'WHY']
    assert lines[1].split()[:5] == ['s1', 'k3s', 'created', CONFIG, 'yes']
    # a reason too long for its column goes on under it, whole
    s2 = next(i for i, line in enumerate(lines) if line.startswith('s2 '))
    s3 = next(i for i, line in enumerate(lines) if line.startswith('s3 '))
    assert why(lines, 1, s2) == 'put our extender in; the scheduler reads these files only when it starts'
    # the second file under the first, nothing cut (a path too long for the column goes on below)
    assert files(lines, 1, s2) == ['created ' + CONFIG, 'created ' + DROPIN]
    assert lines[s2].split()[:5] == ['s2', 'k3s', 'updated', CONFIG, 'yes']
    assert 'v1beta3 -> kubescheduler.config.k8s.io/v1' in why(lines, s2, s3)
    assert lines[s3].split() == ['s3', 'k3s', '-', 'no', 'nothing', 'to', 'do']
    assert lines[-1] == data['summary']
    # the columns line up: every file starts where the header's FILES TO CHANGE does
    col = lines[0].index('FILES TO CHANGE')
    assert lines[1].index('created') == lines[2].index('created') == col


def files(lines, first, end):
    """The FILES TO CHANGE column of the lines first..end-1, a path continued on the next line joined to it."""
    start, stop = lines[0].index('FILES TO CHANGE'), lines[0].index('RESTART')
    out = []
    for line in lines[first:end]:
        cell = line[start:stop].rstrip()
        if cell.startswith('  ') and out:
            out[-1] += cell.strip()
        elif cell.strip():
            out.append(cell.strip())
    return out


def why(lines, first, end):
    """The WHY column of the lines first..end-1, continuation lines joined."""
    col = lines[0].index('WHY')
    return ' '.join(line[col:].strip() for line in lines[first:end] if line[col:].strip())


def test_refusal_and_missing_plan_are_listed_together():
    plans = {'s1': plan('s1', [(CONFIG, 'created')]),
             's2': plan('s2', error='Would the scheduler config change (present): '
                                    + CONFIG + ' is not valid YAML (line 3)'),
             's3': None}
    data = pt.fleet(['s1', 's2', 's3'], plans)
    assert data['refused'] == ['s2', 's3']
    assert data['summary'] == '2 of 3 servers refused: nothing was changed on any server'
    msg = pt.refusal_msg(data)
    assert 's2: Would the scheduler config change (present): %s is not valid YAML (line 3)' % CONFIG in msg
    assert 's3: ' + pt.NO_PLAN in msg
    assert 's1' not in msg.split('again: ', 1)[1]
    lines = pt.render(data)
    s3 = next(i for i, line in enumerate(lines) if line.startswith('s3 '))
    assert why(lines, s3, lines.index('')) == 'REFUSED: ' + pt.NO_PLAN


def test_a_malformed_plan_is_a_refusal_and_strings_are_read_as_booleans():
    data = pt.fleet(['s1', 's2'], {'s1': 'not a dict', 's2': dict(plan('s2'), restart='False', noop='True')})
    assert data['refused'] == ['s1']
    assert data['servers'][1]['restart'] is False and data['servers'][1]['noop'] is True


def test_agent_and_proof_only_rows():
    plans = {'a1': plan('a1', role='agent'), 's1': plan('s1', noop=False, why=['not ready: the extender refused'])}
    data = pt.fleet(['a1', 's1'], plans)
    lines = pt.render(data)
    assert 'an agent: no kube-scheduler here' in lines[1]
    assert lines[2].split()[:4] == ['s1', 'k3s', '-', 'no'] and 'not ready: the extender refused' in lines[2]
    assert data['to_change'] == ['s1'] and data['restarts'] == []
