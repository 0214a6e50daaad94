# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""baremetal.k3s.scheduler_config in a JSON or flow-style list, where no marker comment can stand: the record.

The module keeps, per scheduler config, the entries it wrote there (name -> entry as written); an extender
dropped from ``extenders`` goes when its entry is still exactly as written, and a foreign entry never goes.
"""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _scheduler_config as sc

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node, scheduler_node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import SCHEDULER_KUBECONFIG as KUBECONFIG, run_scheduler_config

PATH = '/etc/rancher/k3s/kube-scheduler/config.json'
RECORD = sc.record_path(PATH)
A = {'name': 'csi-baremetal', 'url_prefix': 'http://127.0.0.1:8889', 'filter_verb': 'filter', 'prioritize_verb': 'prioritize',
     'weight': 1, 'http_timeout': '15s', 'ignorable': True}
B = {'name': 'gpu-share', 'url_prefix': 'http://127.0.0.1:12345', 'filter_verb': 'filter', 'bind_verb': 'bind'}
THEIRS = '{"urlPrefix": "http://theirs:1234", "filterVerb": "filter"}'
JSON_FILE = ('{\n  "apiVersion": "kubescheduler.config.k8s.io/v1",\n  "kind": "KubeSchedulerConfiguration",\n'
             '  "clientConnection": {"kubeconfig": "%s"},\n  "extenders": [%s]\n}\n' % (KUBECONFIG, THEIRS))
FLOW_FILE = ('apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n'
             'clientConnection:\n  kubeconfig: %s\n'
             'extenders: [{urlPrefix: "http://theirs:1234", filterVerb: filter}]   # the operator\'s\n' % KUBECONFIG)


def run(extenders=None, path=PATH, **kw):
    return run_scheduler_config(path, extenders, **kw)


def entries(scheduler_node):
    return sc.load_strict(scheduler_node.read(PATH).decode('utf-8'))['extenders']


def record(scheduler_node):
    data = scheduler_node.read(RECORD)
    return None if data is None else json.loads(data)


@pytest.mark.parametrize('start', [JSON_FILE, FLOW_FILE], ids=['json', 'flow'])
def test_dropped_from_the_list_goes_and_uninstall_gives_back_the_bytes(scheduler_node, start):
    scheduler_node.write(PATH, start)
    failed, result = run([A, B])
    assert not failed, result
    assert [f['path'] for f in result['files']] == [PATH, RECORD]
    assert [e['urlPrefix'] for e in entries(scheduler_node)] == ['http://theirs:1234', A['url_prefix'], B['url_prefix']]
    rec = record(scheduler_node)
    assert rec['path'] == PATH and sorted(rec['extenders']) == ['csi-baremetal', 'gpu-share']
    assert rec['extenders']['gpu-share'] == entries(scheduler_node)[2]
    assert scheduler_node.mode(RECORD) == 0o600
    failed, again = run([A, B])
    assert not failed and not again['changed'] and again['files'] == []
    # gpu-share taken out of the list: it goes, alone
    failed, result = run([A])
    assert not failed, result
    assert result['extender_changes'] == {'added': [], 'changed': [], 'removed': ['gpu-share']}
    assert [e['urlPrefix'] for e in entries(scheduler_node)] == ['http://theirs:1234', A['url_prefix']]
    assert sorted(record(scheduler_node)['extenders']) == ['csi-baremetal']
    # uninstall: the file's bytes back, the record and its directory gone
    failed, result = run([A], state='absent')
    assert not failed, result
    assert scheduler_node.read(PATH).decode('utf-8') == start
    assert not scheduler_node.exists(RECORD) and not scheduler_node.exists(sc.RECORD_DIR)


def test_a_changed_entry_is_replaced_in_place(scheduler_node):
    scheduler_node.write(PATH, JSON_FILE)
    assert not run([A, B])[0]
    failed, result = run([dict(A, weight=3), B])
    assert not failed, result
    assert result['extender_changes']['changed'] == ['csi-baremetal']
    assert [(e['urlPrefix'], e.get('weight')) for e in entries(scheduler_node)] == [
        ('http://theirs:1234', None), (A['url_prefix'], 3), (B['url_prefix'], None)]
    assert record(scheduler_node)['extenders']['csi-baremetal']['weight'] == 3


def test_hostile_a_foreign_entry_where_ours_was_is_never_removed(scheduler_node):
    # the operator rewrote our gpu-share entry by hand (same URL, their own fields): it is theirs now
    scheduler_node.write(PATH, JSON_FILE)
    assert not run([A, B])[0]
    text = scheduler_node.read(PATH).decode('utf-8')
    mine = json.dumps(entries(scheduler_node)[2], separators=(',', ':'))
    assert mine not in text  # the module's own spelling; edit the parsed document instead
    doc = json.loads(text)
    doc['extenders'][2]['weight'] = 5
    doc['extenders'][2]['prioritizeVerb'] = 'theirs'
    scheduler_node.write(PATH, json.dumps(doc, indent=2) + '\n')
    failed, result = run([A])
    assert not failed, result
    assert result['extender_changes']['removed'] == []
    assert entries(scheduler_node)[2] == doc['extenders'][2]
    # and uninstall of ours leaves it too
    failed, result = run([A], state='absent')
    assert not failed, result
    assert [e['urlPrefix'] for e in entries(scheduler_node)] == ['http://theirs:1234', B['url_prefix']]


def test_hostile_a_foreign_entry_with_the_url_of_a_dropped_one_elsewhere_stays(scheduler_node):
    scheduler_node.write(PATH, JSON_FILE)
    assert not run([A, B])[0]
    doc = json.loads(scheduler_node.read(PATH))
    del doc['extenders'][2]  # ours removed by hand ...
    doc['extenders'].insert(0, {'urlPrefix': B['url_prefix'], 'filterVerb': 'other'})  # ... and theirs at its URL
    scheduler_node.write(PATH, json.dumps(doc) + '\n')
    before = scheduler_node.read(PATH)
    failed, result = run([A])
    assert not failed, result
    assert result['extender_changes']['removed'] == [] and not result['changed']
    assert scheduler_node.read(PATH) == before


def test_hostile_two_entries_alike_are_nobodys(scheduler_node):
    scheduler_node.write(PATH, JSON_FILE)
    assert not run([A, B])[0]
    doc = json.loads(scheduler_node.read(PATH))
    doc['extenders'].insert(0, dict(doc['extenders'][1]))  # a foreign copy of csi-baremetal's entry
    scheduler_node.write(PATH, json.dumps(doc) + '\n')
    before = scheduler_node.read(PATH)
    failed, result = run([B])
    assert not failed, result
    assert result['extender_changes']['removed'] == []
    assert scheduler_node.read(PATH) == before


def test_hostile_the_record_of_one_file_makes_nothing_of_another_ours(scheduler_node):
    # another file holds an entry equal to our gpu-share's, under the same name in the list given for it
    other = '/etc/other/config.json'
    scheduler_node.write(other, JSON_FILE)
    scheduler_node.write(PATH, JSON_FILE)
    assert not run([A, B])[0]
    # the other file holds an entry equal to ours: the record of PATH does not make it ours
    doc = json.loads(scheduler_node.read(other))
    doc['extenders'].append(entries(scheduler_node)[2])
    scheduler_node.write(other, json.dumps(doc) + '\n')
    before = scheduler_node.read(other)
    failed, result = run([A], path=other)
    assert not failed, result
    assert [e['urlPrefix'] for e in sc.load_strict(scheduler_node.read(other).decode('utf-8'))['extenders']] == [
        'http://theirs:1234', B['url_prefix'], A['url_prefix']]
    assert scheduler_node.read(other).startswith(before[:before.rindex(b']')])


def test_the_single_option_keeps_the_record_and_a_list_run_then_drops_the_rest(scheduler_node):
    scheduler_node.write(PATH, JSON_FILE)
    assert not run([A, B])[0]
    single = {k: v for k, v in A.items() if k != 'name'}
    failed, result = run(name='csi-baremetal', extender=dict(single, weight=2))
    assert not failed, result
    assert sorted(record(scheduler_node)['extenders']) == ['csi-baremetal', 'gpu-share']
    assert record(scheduler_node)['extenders']['csi-baremetal']['weight'] == 2
    failed, result = run([dict(A, weight=2)])
    assert not failed and result['extender_changes']['removed'] == ['gpu-share'], result
    failed, result = run(name='csi-baremetal', extender=single, state='absent')
    assert not failed, result
    assert scheduler_node.read(PATH).decode('utf-8') == JSON_FILE and not scheduler_node.exists(RECORD)


def test_a_record_of_another_file_or_not_json_is_refused_and_nothing_changes(scheduler_node):
    scheduler_node.write(PATH, JSON_FILE)
    scheduler_node.write(RECORD, json.dumps({'path': '/etc/elsewhere.json', 'extenders': {}}))
    failed, result = run([A])
    assert failed and RECORD in result['msg'] and 'Remove it' in result['msg'], result
    scheduler_node.write(RECORD, 'not json')
    failed, result = run([A])
    assert failed and RECORD in result['msg'], result
    assert scheduler_node.read(PATH).decode('utf-8') == JSON_FILE


def test_a_block_file_gets_no_record(scheduler_node):
    scheduler_node.write(PATH, 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n'
                         'clientConnection:\n  kubeconfig: %s\n' % KUBECONFIG)
    failed, result = run([A, B])
    assert not failed, result
    assert [f['path'] for f in result['files']] == [PATH] and not scheduler_node.exists(RECORD)
    assert os.path.basename(RECORD).startswith('extenders-')
