# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Several extenders as one list (side_effect.yml): <dir>/extenders/<step>.json holds the step's runs (rc, stdout,
stderr), k3s's starts during it and the scheduler config after it; <step>.status.json is status's JSON report.
Uninstall's byte-for-byte check runs in side_effect itself (shared/uninstall.yml)."""

from __future__ import annotations

import json
import os

DIR = os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'extenders')
A = ('csi-baremetal', 'http://127.0.0.1:8889')
B = ('second', 'http://127.0.0.1:8890')


def _load(name):
    with open(os.path.join(DIR, name), encoding='utf-8') as f:
        return json.load(f)


def _step(name):
    record = _load(name + '.json')
    report = _load(name + '.status.json')
    for run, (rc, out, err) in record['runs'].items():
        assert rc == 0, '%s %s failed (rc %s):\n%s\n%s' % (name, run, rc, out[-3000:], err[-3000:])
    return record, report['nodes'][0]


def _marked(config):
    return [line.split(': ', 1)[1] for line in config.splitlines() if line.startswith('# baremetal.k3s extender: ')]


def test_both_in_one_change_with_one_start_and_status_shows_each():
    record, node = _step('both')
    assert record['starts'] == 1, 'install_csi started k3s %d times for two extenders' % record['starts']
    assert _marked(record['config']) == [A[0], B[0]]
    assert [(e['name'], e['url'], e['answering']) for e in node['extenders']] == [A + (True,), B + (True,)]
    assert node['ready'] is True and node['drifted'] is False, node
    out = record['runs']['status'][1]
    assert '  %s: %s (%s): answering' % ((node['node'],) + A) in out and '  %s: %s (%s): answering' % ((node['node'],) + B) in out


def test_taking_one_out_of_the_list_removes_it_alone_with_one_start():
    before, dummy = _step('both')
    record, node = _step('remove-one')
    assert record['starts'] == 1, 'k3s started %d times' % record['starts']
    assert _marked(record['config']) == [A[0]]
    assert B[1] not in record['config']
    # csi-baremetal's entry is the same bytes as before
    entry = before['config'][before['config'].index('# baremetal.k3s extender: ' + A[0]):
                             before['config'].index('# baremetal.k3s extender: ' + B[0])]
    assert entry in record['config']
    assert [(e['name'], e['answering']) for e in node['extenders']] == [(A[0], True)]
    assert node['ready'] is True and node['drifted'] is False, node


def test_the_single_extender_variables_still_work():
    before, dummy = _step('remove-one')
    record, node = _step('single')
    assert record['starts'] == 0, 'the single-variable run restarted k3s %d times' % record['starts']
    assert record['config'] == before['config']
    assert node['ready'] is True and node['drifted'] is False, node
    assert [e['url'] for e in node['extenders']] == [A[1]]


def test_a_one_item_list_and_the_single_variables_are_the_same_entry():
    # single -> one-item list (name and URL only) -> single: nothing changes, k3s never starts
    before, dummy = _step('single')
    for name in ('list-short', 'single-again'):
        record, node = _step(name)
        assert record['starts'] == 0, '%s: k3s started %d times' % (name, record['starts'])
        assert record['config'] == before['config'], name
        assert node['ready'] is True and node['drifted'] is False, (name, node)
        assert [e['url'] for e in node['extenders']] == [A[1]], name


def test_an_extender_not_required_may_be_down_the_change_stands():
    before, dummy = _step('single-again')
    record, node = _step('optional')
    assert record['starts'] == 1, 'k3s started %d times' % record['starts']
    assert _marked(record['config']) == [A[0], 'later'] and 'http://127.0.0.1:8891' in record['config']
    assert 'required' not in record['config']
    assert [(e['name'], e['answering'], e.get('required')) for e in node['extenders']] == [
        (A[0], True, True), ('later', False, False)], node['extenders']
    assert node['ready'] is True and node['drifted'] is False, node
    # taken out of the list again: the single extender's bytes, one start
    record, node = _step('optional-gone')
    assert record['starts'] == 1 and record['config'] == before['config'], record['starts']
    assert node['ready'] is True and [e['url'] for e in node['extenders']] == [A[1]], node
