# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the scheduler_files module: the scheduler config and the flag that passes it in one run give the bytes and
results of scheduler_config and k3s_service_arg, neither is written unless both plans hold, the flag goes on absent only
once nothing uses the scheduler config, and what a failed run wrote is named."""

from __future__ import annotations

import json

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.modules import k3s_service_arg
from ansible_collections.baremetal.k3s.plugins.modules import scheduler_config
from ansible_collections.baremetal.k3s.plugins.modules import scheduler_files

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node, scheduler_node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import SCHEDULER_KUBECONFIG, module_ok, run_module

CONFIG = '/etc/rancher/k3s/kube-scheduler/config.yaml'
UNIT = '/etc/systemd/system/k3s.service'
SCHED = '--kube-scheduler-arg=config=' + CONFIG
OURS = {'url_prefix': 'http://127.0.0.1:8889', 'filter_verb': 'filter', 'weight': 1, 'ignorable': True}
KEY = 'Kd4secretPRIVATEkey'
FOREIGN = ('apiVersion: kubescheduler.config.k8s.io/v1\n'
           'kind: KubeSchedulerConfiguration\n'
           'clientConnection:\n'
           '  kubeconfig: %s\n'
           'profiles:\n'
           '- schedulerName: gpu\n' % SCHEDULER_KUBECONFIG)


def options(state='present', **config):
    return {
        'config': dict({'path': CONFIG, 'state': state, 'extender': dict(OURS), 'kubernetes_version': 'v1.31.4+k3s1',
                        'kubeconfig': SCHEDULER_KUBECONFIG}, **config),
        'flag': {'arg': SCHED, 'state': state, 'method': 'unit' if state == 'present' else 'auto', 'service': 'k3s'},
    }


def strip(result):
    return {k: v for k, v in result.items() if k not in ('invocation', 'warnings', 'diff')}


@pytest.fixture
def k3s(scheduler_node):  # noqa: F811 pylint: disable=redefined-outer-name
    scheduler_node.install(args=['--disable=traefik'])
    return scheduler_node


def test_the_same_bytes_and_results_as_the_two_modules(k3s):  # pylint: disable=redefined-outer-name
    before = k3s.tree()
    r = module_ok(scheduler_files, options())
    assert r['changed'] and [f['path'] for f in r['files']] == [CONFIG, UNIT]
    written = {p: (k3s.read(p), k3s.mode(p)) for p in (CONFIG, UNIT)}
    assert [f['path'] for f in r['config']['files']] == [CONFIG] and [f['path'] for f in r['flag']['files']] == [UNIT]
    again = module_ok(scheduler_files, options())
    assert not again['changed'] and again['files'] == [] and not again['config']['changed'] and not again['flag']['changed']
    # the same options, each module on its own, from the same node
    gone = module_ok(scheduler_files, options('absent'))
    assert gone['changed'] and [f['action'] for f in gone['files']] == ['removed', 'modified'] and k3s.tree() == before
    alone_config = module_ok(scheduler_config, options()['config'])
    alone_flag = module_ok(k3s_service_arg, options()['flag'])
    assert {p: (k3s.read(p), k3s.mode(p)) for p in written} == written
    assert strip(alone_config) == strip(r['config']) and strip(alone_flag) == strip(r['flag'])


def test_check_mode_and_diff_write_nothing(k3s):  # pylint: disable=redefined-outer-name
    before = k3s.tree()
    failed, r = run_module(scheduler_files, options(), check_mode=True, diff=True)
    assert not failed and r['changed'] and len(r['files']) == 2 and k3s.tree() == before
    assert len(r['diff']) == 2 and SCHED in r['diff'][1]['after'] and 'urlPrefix: http://127.0.0.1:8889' in r['diff'][0]['after']


@pytest.mark.parametrize('part, change, what', [
    ('config', {'extender': {'url_prefix': 'not a url'}}, 'url_prefix'),      # the scheduler config's plan refuses
    ('config', {'state': 'gone'}, 'config: '),                                # its module's choices
    ('config', {'extenders': [dict(OURS, name='a')]}, 'config: '),            # its module's mutually exclusive options
    ('flag', {'arg': '--kube-scheduler-arg=config=$X'}, '$'),                 # the flag's plan refuses, after the config's
    ('flag', {'method': 'sideways'}, 'flag: '),                               # its module's choices
])
def test_a_refused_part_writes_neither(k3s, part, change, what):  # pylint: disable=redefined-outer-name
    given = options()
    given[part] = dict(given[part], **change)
    before = k3s.tree()
    failed, result = run_module(scheduler_files, given)
    assert failed and what in result['msg'], result
    assert k3s.tree() == before, 'nothing written, not even the scheduler config before the refused flag'
    assert result.get('files', []) == []


def test_another_scheduler_config_passed_stops_both(scheduler_node):  # noqa: F811 pylint: disable=redefined-outer-name
    scheduler_node.install(args=['--kube-scheduler-arg=config=/etc/other.yaml'])
    before = scheduler_node.tree()
    failed, result = run_module(scheduler_files, options())
    assert failed and '/etc/other.yaml' in result['msg'] and scheduler_node.tree() == before


def test_absent_keeps_the_flag_while_the_config_holds_more(k3s):  # pylint: disable=redefined-outer-name
    k3s.write(CONFIG, FOREIGN)
    module_ok(scheduler_files, options())
    passed = k3s.read(UNIT)
    assert SCHED.encode() in passed
    r = module_ok(scheduler_files, options('absent'))
    assert r['changed'] and [f['path'] for f in r['files']] == [CONFIG] and 'flag' not in r
    assert k3s.read(CONFIG).decode() == FOREIGN and k3s.read(UNIT) == passed, 'the user\'s settings are still passed'


def test_absent_with_no_config_takes_the_flag_out(k3s):  # pylint: disable=redefined-outer-name
    module_ok(k3s_service_arg, options()['flag'])
    r = module_ok(scheduler_files, options('absent'))
    assert r['changed'] and [f['path'] for f in r['files']] == [UNIT] and r['flag']['changed'] and not r['config']['changed']
    assert SCHED.encode() not in k3s.read(UNIT)


def test_keep_unused_takes_the_flag_out_first_and_the_file_later(k3s):  # pylint: disable=redefined-outer-name
    """A scheduler in a static pod (RKE2) mounts our file: the flag goes, the file stays as it was until a second run."""
    module_ok(scheduler_files, options())
    kept = {p: v for p, v in k3s.tree().items() if p != UNIT}
    r = module_ok(scheduler_files, options('absent', keep_unused=True))
    assert r['changed'] and [f['path'] for f in r['files']] == [UNIT] and SCHED.encode() not in k3s.read(UNIT)
    assert r['config']['unused'] is True and not r['config']['removed'] and r['config']['exists']
    assert r['config']['extenders'] == ['http://127.0.0.1:8889']
    assert {p: v for p, v in k3s.tree().items() if p != UNIT} == kept, 'the file (and its record) as they were'
    # without it, the same run deletes the file; nothing is left of ours
    gone = module_ok(scheduler_config, options('absent')['config'])
    assert gone['removed'] and not k3s.exists(CONFIG) and gone.get('unused') is None
    assert not module_ok(scheduler_files, options('absent', keep_unused=True))['changed']


def test_a_part_left_out_is_not_touched(k3s):  # pylint: disable=redefined-outer-name
    r = module_ok(scheduler_files, {'config': options()['config']})
    assert 'flag' not in r and SCHED.encode() not in k3s.read(UNIT) and k3s.exists(CONFIG)
    failed, result = run_module(scheduler_files, {})
    assert failed and 'one of the following is required' in result['msg']


def test_a_failed_flag_write_names_the_config_written_before_it(k3s, monkeypatch):  # pylint: disable=redefined-outer-name
    real = _io.write_file

    def failing(module, path, *args, **kw):
        if path.endswith('k3s.service'):
            raise OSError(28, 'No space left on device')
        return real(module, path, *args, **kw)
    monkeypatch.setattr(_io, 'write_file', failing)
    unit = k3s.read(UNIT)
    failed, result = run_module(scheduler_files, options())
    assert failed and 'No space left' in result['msg'], result
    assert [f['path'] for f in result['files']] == [CONFIG] and k3s.exists(CONFIG), 'the caller can put it back'
    assert k3s.read(UNIT) == unit


def test_an_inline_private_key_and_a_secret_flag_are_masked(k3s):  # pylint: disable=redefined-outer-name
    tls = {'key_data': KEY, 'insecure': True}
    given = options(extender=dict(OURS, tls_config=tls, enable_https=True, url_prefix='https://127.0.0.1:8889'))
    given['flag']['arg'] = '--token=Tk7secretQ'
    dummy, result = run_module(scheduler_files, given, diff=True)
    assert KEY not in json.dumps(result) and 'Tk7secretQ' not in json.dumps(result), result


LEASE = '/run/baremetal-k3s/scheduler_extender.lease'


def test_the_lease_is_taken_in_the_same_run_and_kept(k3s):  # pylint: disable=redefined-outer-name
    r = module_ok(scheduler_files, dict(options(), lease={'name': 'scheduler_extender', 'holder': 'install_csi', 'timeout': 0}))
    assert r['changed'] and [f['path'] for f in r['files']] == [CONFIG, UNIT], 'the lease file is not one of the files'
    held = json.loads(k3s.read(LEASE))
    assert r['lease']['owner'] == held['owner'] and r['lease']['holder'] == 'install_csi' == held['holder']
    assert r['lease']['since'] == held['since'] and r['lease']['lease_file'] == LEASE
    assert r['lease']['files'] == [{'path': LEASE, 'action': 'created', 'backup_file': None}]
    # another run's write waits for it, then fails naming the holder, with nothing written
    before = k3s.tree()
    failed, result = run_module(scheduler_files, dict(options('absent'), lease={'name': 'scheduler_extender', 'timeout': 0}))
    assert failed and 'held by install_csi' in result['msg'] and LEASE in result['msg'] and k3s.tree() == before
    assert 'lease' not in result


def test_a_refused_write_keeps_the_lease_it_took_for_the_caller_to_give_back(k3s):  # pylint: disable=redefined-outer-name
    given = options()
    given['flag'] = dict(given['flag'], arg='--kube-scheduler-arg=config=$X')
    failed, result = run_module(scheduler_files, dict(given, lease={'name': 'scheduler_extender', 'timeout': 0}))
    assert failed and '$' in result['msg'] and result['files'] == [] and not k3s.exists(CONFIG)
    assert result['lease']['owner'] == json.loads(k3s.read(LEASE))['owner']


def test_a_bad_lease_option_is_refused_before_anything(k3s):  # pylint: disable=redefined-outer-name
    before = k3s.tree()
    for lease, what in (({'name': '../x'}, 'name'), ({'holder': 'x'}, 'name'), ({'name': 'a', 'timeout': 'soon'}, 'timeout')):
        failed, result = run_module(scheduler_files, dict(options(), lease=lease))
        assert failed and what in result['msg'] and k3s.tree() == before, result


# -- read: the node read in the same module run, what the parts depend on taken from it -------------------------------
def read_options(state='present', **config):
    """The options of a plan that reads the node: the parts without what the read gives them."""
    given = options(state, **config)
    for part, key in (('config', 'path'), ('config', 'kubeconfig'), ('flag', 'arg'), ('flag', 'service')):
        given[part].pop(key, None)
    return dict(given, read={'platform': 'auto'})


def test_read_plans_what_the_given_options_plan_and_returns_the_read(k3s):  # pylint: disable=redefined-outer-name
    before = k3s.tree()
    failed, read = run_module(scheduler_files, read_options(), check_mode=True)
    assert not failed and k3s.tree() == before, read
    assert read['node']['installed'] and read['node']['node_role'] == 'server' and read['node']['service'] == 'k3s'
    failed, given = run_module(scheduler_files, options(), check_mode=True)
    assert not failed
    assert strip(read['config']) == strip(given['config']) and strip(read['flag']) == strip(given['flag'])
    assert read['files'] == given['files'] and [f['path'] for f in read['files']] == [CONFIG, UNIT]
    assert read['flag']['own_args'] == given['flag']['own_args']


def test_read_works_with_the_scheduler_config_already_passed_and_passes_nothing(scheduler_node):  # noqa: F811 pylint: disable=redefined-outer-name
    scheduler_node.install(args=['--kube-scheduler-arg=config=/etc/other.yaml'])
    scheduler_node.write('/etc/other.yaml', FOREIGN)
    r = module_ok(scheduler_files, read_options())
    assert r['node']['scheduler_config'] == '/etc/other.yaml' and 'flag' not in r
    assert [f['path'] for f in r['files']] == ['/etc/other.yaml'] and b'urlPrefix: http://127.0.0.1:8889' in scheduler_node.read('/etc/other.yaml')


def test_read_of_an_agent_or_of_nothing_plans_no_part(node):  # noqa: F811 pylint: disable=redefined-outer-name
    before = node.tree()
    r = module_ok(scheduler_files, read_options())
    assert not r['node']['installed'] and r['files'] == [] and 'config' not in r and node.tree() == before
    node.install(command='agent', args=['--server', 'https://10.0.0.1:6443'])
    before = node.tree()
    r = module_ok(scheduler_files, read_options())
    assert r['node']['node_role'] == 'agent' and r['files'] == [] and 'config' not in r and node.tree() == before


@pytest.mark.parametrize('part, key', [('config', 'path'), ('flag', 'arg'), ('flag', 'service')])
def test_read_refuses_what_it_takes_from_the_node(k3s, part, key):  # pylint: disable=redefined-outer-name
    given = read_options()
    given[part][key] = options()[part][key]
    before = k3s.tree()
    failed, result = run_module(scheduler_files, given)
    assert failed and '%s: %s is taken from the node with read' % (part, key) in result['msg'] and k3s.tree() == before


def test_read_is_checked_as_k3s_info_checks_it_and_needs_the_config(k3s):  # pylint: disable=redefined-outer-name
    failed, result = run_module(scheduler_files, dict(read_options(), read={'platform': 'k8s'}))
    assert failed and result['msg'].startswith('read: ') and 'k8s' in result['msg'], result
    failed, result = run_module(scheduler_files, {'flag': read_options()['flag'], 'read': {}})
    assert failed and 'config' in result['msg'], result


def test_read_masks_the_secrets_it_meets(scheduler_node):  # noqa: F811 pylint: disable=redefined-outer-name
    scheduler_node.install(args=['--token=Tk7secretQ'])
    dummy, result = run_module(scheduler_files, read_options(), check_mode=True, diff=True)
    assert 'Tk7secretQ' not in json.dumps(result), result


def test_read_names_what_it_found_when_a_part_refuses(k3s):  # pylint: disable=redefined-outer-name
    k3s.write(CONFIG, 'apiVersion: [\n')
    before = k3s.tree()
    failed, result = run_module(scheduler_files, read_options())
    assert failed and 'not valid YAML' in result['msg'] and k3s.tree() == before
    assert result['node']['platform'] == 'k3s' and result['node']['node_role'] == 'server' and result['files'] == []
