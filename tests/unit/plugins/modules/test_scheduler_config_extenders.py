# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""baremetal.k3s.scheduler_config with ``extenders``: several extenders of ours as one list, in one change."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node, scheduler_node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import SCHEDULER_KUBECONFIG as KUBECONFIG, run_scheduler_config

PATH = '/etc/rancher/k3s/kube-scheduler/config.yaml'
A = {'name': 'csi-baremetal', 'url_prefix': 'http://127.0.0.1:8889', 'filter_verb': 'filter', 'prioritize_verb': 'prioritize',
     'weight': 1, 'http_timeout': '15s', 'ignorable': True}
B = {'name': 'gpu-share', 'url_prefix': 'http://127.0.0.1:12345', 'filter_verb': 'filter', 'bind_verb': 'bind',
     'managed_resources': [{'name': 'example.com/gpu'}]}
C = {'name': 'third', 'url_prefix': 'http://127.0.0.1:9000', 'preempt_verb': 'preempt'}
FOREIGN = ('# the operator\'s file\n'
           'apiVersion: kubescheduler.config.k8s.io/v1\n'
           'kind: KubeSchedulerConfiguration\n'
           'clientConnection:\n'
           '  kubeconfig: %s  # k3s\n'
           'extenders:\n'
           '- urlPrefix: http://theirs:1234   # hands off\n'
           '  filterVerb: filter\n' % KUBECONFIG)


def read(scheduler_node):
    data = scheduler_node.read(PATH)
    return None if data is None else data.decode('utf-8')


def run(extenders, **kw):
    return run_scheduler_config(PATH, extenders, **kw)


def urls(scheduler_node):
    return [e['urlPrefix'] for e in yaml.safe_load(read(scheduler_node))['extenders']]


def test_add_two_then_idempotent(scheduler_node):
    scheduler_node.write(PATH, FOREIGN)
    failed, result = run([A, B])
    assert not failed, result
    assert result['changed'] and result['extender_changes'] == {'added': ['csi-baremetal', 'gpu-share'], 'changed': [], 'removed': []}
    assert result['names'] == ['csi-baremetal', 'gpu-share'] and result['name'] is None
    text = read(scheduler_node)
    assert text.startswith(FOREIGN)
    assert '# baremetal.k3s extender: csi-baremetal\n- urlPrefix: http://127.0.0.1:8889\n' in text
    assert '# baremetal.k3s extender: gpu-share\n- urlPrefix: http://127.0.0.1:12345\n' in text
    assert result['extenders'] == urls(scheduler_node) == ['http://theirs:1234', 'http://127.0.0.1:8889', 'http://127.0.0.1:12345']
    failed, again = run([A, B])
    assert not failed and not again['changed'] and again['files'] == []
    assert again['extender_changes'] == {'added': [], 'changed': [], 'removed': []}


def test_change_one_replaces_it_in_place_and_leaves_the_others(scheduler_node):
    scheduler_node.write(PATH, FOREIGN)
    assert not run([A, B])[0]
    before = read(scheduler_node)
    failed, result = run([A, dict(B, url_prefix='https://127.0.0.1:12346', http_timeout='5s')])
    assert not failed, result
    assert result['extender_changes'] == {'added': [], 'changed': ['gpu-share'], 'removed': []}
    after = read(scheduler_node)
    head = before.split('# baremetal.k3s extender: gpu-share')[0]
    assert after.startswith(head)  # the foreign entry and csi-baremetal's, byte for byte
    assert urls(scheduler_node) == ['http://theirs:1234', 'http://127.0.0.1:8889', 'https://127.0.0.1:12346']
    assert yaml.safe_load(after)['extenders'][2]['httpTimeout'] == '5s'


def test_removing_one_from_the_list_removes_it_alone(scheduler_node):
    scheduler_node.write(PATH, FOREIGN)
    assert not run([A, B, C])[0]
    failed, result = run([A, C])
    assert not failed, result
    assert result['extender_changes'] == {'added': [], 'changed': [], 'removed': ['gpu-share']}
    text = read(scheduler_node)
    assert urls(scheduler_node) == ['http://theirs:1234', 'http://127.0.0.1:8889', 'http://127.0.0.1:9000']
    assert 'gpu-share' not in text and '# hands off' in text
    # and what is left is exactly as if only those two had been added
    scheduler_node.write(PATH, FOREIGN)
    assert not run([A, C])[0]
    assert read(scheduler_node) == text


def test_a_foreign_entry_is_never_touched_and_absent_gives_the_bytes_back(scheduler_node):
    scheduler_node.write(PATH, FOREIGN)
    assert not run([A, B])[0]
    failed, result = run([A, B], state='absent')
    assert not failed, result
    assert result['changed'] and not result['removed'] and result['exists']
    assert result['extender_changes']['removed'] == ['csi-baremetal', 'gpu-share']
    assert read(scheduler_node) == FOREIGN
    failed, nothing = run([A, B], state='absent')
    assert not failed and not nothing['changed'] and read(scheduler_node) == FOREIGN


def test_keep_unused_leaves_a_file_of_ours_alone_until_asked_again(scheduler_node):
    assert not run([A, B])[0]
    ours = read(scheduler_node)
    failed, kept = run([A, B], state='absent', keep_unused=True)
    assert not failed, kept
    assert kept['unused'] is True and not kept['changed'] and not kept['removed'] and kept['exists']
    assert kept['extenders'] == ['http://127.0.0.1:8889', 'http://127.0.0.1:12345'] and read(scheduler_node) == ours
    failed, gone = run([A, B], state='absent')
    assert not failed and gone['removed'] and read(scheduler_node) is None


def test_absent_of_one_keeps_the_other(scheduler_node):
    scheduler_node.write(PATH, FOREIGN)
    assert not run([A, B])[0]
    failed, result = run([dict(name='gpu-share', url_prefix='http://unused:1')], state='absent')
    assert not failed, result
    assert urls(scheduler_node) == ['http://theirs:1234', 'http://127.0.0.1:8889']


def test_no_extenders_key_no_file_and_back(scheduler_node):
    bare = FOREIGN.split('extenders:', maxsplit=1)[0]
    scheduler_node.write(PATH, bare)
    assert not run([A, B])[0]
    assert '# baremetal.k3s: extenders added for csi-baremetal\nextenders:\n' in read(scheduler_node)
    # the name that added the key leaves the list; the key stays while others are in it
    assert not run([B])[0]
    failed, result = run([B], state='absent')
    assert not failed, result
    assert read(scheduler_node) == bare

    scheduler_node.unlink(PATH)
    failed, created = run([A, B])
    assert not failed and created['created']
    failed, gone = run([B, A], state='absent')
    assert not failed and gone['removed'] and not scheduler_node.exists(PATH)


def test_an_unmarked_entry_with_a_listed_url_is_taken_over(scheduler_node):
    scheduler_node.write(PATH, FOREIGN + '- urlPrefix: %s\n  filterVerb: old\n' % A['url_prefix'])
    failed, result = run([A])
    assert not failed, result
    assert result['extender_changes']['changed'] == ['csi-baremetal']
    assert read(scheduler_node).startswith(FOREIGN + '# baremetal.k3s extender: csi-baremetal\n- urlPrefix: http://127.0.0.1:8889\n')
    assert urls(scheduler_node) == ['http://theirs:1234', A['url_prefix']]
    failed, again = run([A])
    assert not failed and not again['changed']


@pytest.mark.parametrize('extenders,message', [
    ([A, dict(A, url_prefix='http://127.0.0.1:1')], "extenders[1].name 'csi-baremetal' is also extenders[0].name"),
    ([A, dict(B, url_prefix=A['url_prefix'])], 'extenders[1].url_prefix http://127.0.0.1:8889 is also extenders[0].url_prefix'),
    ([dict(A, bind_verb='bind'), B], 'extenders[1].bind_verb: extenders[0] binds too'),
    ([A, dict(B, url_prefix='ftp://x')], "extenders[1].url_prefix 'ftp://x' must start with http://"),
    ([A, dict(C, prioritize_verb='p')], 'extenders[1].weight must be greater than 0'),
    ([A, dict(C, tls_config={'ca_file': '/no/ca.pem'})], 'extenders[1].tls_config.ca_file /no/ca.pem does not exist'),
    ([dict(A, name='two words')], "extenders[0].name 'two words' must be letters"),
    ([], 'extenders is empty'),
])
def test_refusals_name_the_item_and_write_nothing(scheduler_node, extenders, message):
    scheduler_node.write(PATH, FOREIGN)
    failed, result = run(extenders)
    assert failed and message in result['msg'], result
    assert read(scheduler_node) == FOREIGN


def test_a_foreign_binder_refuses_a_listed_binder(scheduler_node):
    text = FOREIGN.replace('  filterVerb: filter\n', '  bindVerb: bind\n')
    scheduler_node.write(PATH, text)
    failed, result = run([A, B])
    assert failed and "extenders[1].bind_verb: the file's extender http://theirs:1234 binds already" in result['msg'], result
    assert read(scheduler_node) == text


@pytest.mark.parametrize('extra', [{'extender': {'url_prefix': 'http://x'}}, {'name': 'x'}])
def test_extenders_is_exclusive_with_the_single_options(scheduler_node, extra):
    failed, result = run([A], **extra)
    assert failed and 'mutually exclusive' in result['msg'], result
    assert not scheduler_node.exists(PATH)


def test_a_new_name_never_takes_over_an_entry_another_marker_claims(scheduler_node):
    scheduler_node.write(PATH, FOREIGN)
    assert not run([A, B])[0]
    # a new extender on gpu-share's old URL, gpu-share moved: the marked entry is gpu-share's, not the newcomer's
    new = dict(C, name='newcomer', url_prefix=B['url_prefix'])
    failed, result = run([A, new, dict(B, url_prefix='http://127.0.0.1:12399')])
    assert not failed, result
    assert result['extender_changes'] == {'added': ['newcomer'], 'changed': ['gpu-share'], 'removed': []}
    text = read(scheduler_node)
    assert text.index('extender: gpu-share') < text.index('extender: newcomer')
    assert urls(scheduler_node) == ['http://theirs:1234', 'http://127.0.0.1:8889', 'http://127.0.0.1:12399', 'http://127.0.0.1:12345']
