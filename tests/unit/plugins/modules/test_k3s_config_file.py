# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the k3s_config_file module through its real main(), read back as k3s reads its config files."""

from __future__ import annotations

from unittest.mock import patch

import pytest

from ansible.module_utils import basic

from ansible_collections.baremetal.k3s.plugins.module_utils import _config_file, _io, _k3s_config, _service
from ansible_collections.baremetal.k3s.plugins.modules import k3s_config_file

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok, set_module_args

DIR = '/etc/rancher/k3s/config.yaml.d'
CONFIG = '/etc/rancher/k3s/config.yaml'
OURS = DIR + '/50-cluster.yaml'


def ok(args, **kw):
    return module_ok(k3s_config_file, dict({'name': '50-cluster.yaml'}, **args), **kw)


def fail(args, **kw):
    return module_fail(k3s_config_file, dict({'name': '50-cluster.yaml'}, **args), **kw)


def file_flags(config_file=CONFIG):
    """The flags k3s makes of its config files on the fake node (config.yaml, then config.yaml.d in name order)."""
    view = _io.node_view(None)
    return _k3s_config.to_flags(_k3s_config.merge(_service.config_documents(view, _service.config_files(view, config_file))))


# -- round trip: k3s reads back exactly the flags the dict means ---------------------------------------------
ROUND_TRIP = [
    ({'node-label': ['yes', 'no', 'on', 'y', 'off']}, ['--node-label=%s' % v for v in ('yes', 'no', 'on', 'y', 'off')]),
    ({'x-flag': '0o17'}, ['--x-flag=0o17']),
    ({'x-flag': '0x10'}, ['--x-flag=0x10']),
    ({'x-flag': '1e3'}, ['--x-flag=1e3']),
    ({'x-flag': 'a: b'}, ['--x-flag=a: b']),
    ({'x-flag': '#x'}, ['--x-flag=#x']),
    ({'x-flag': 'a #b'}, ['--x-flag=a #b']),
    ({'node-name': 'nœud-ü', 'node-label': ['région=Zürich']}, ['--node-label=région=Zürich', '--node-name=nœud-ü']),
    ({'disable': []}, []),
    ({'cluster-init': True, 'secrets-encryption': False}, ['--cluster-init=true', '--secrets-encryption=false']),
    ({'https-listen-port': 6444, 'x-flag': 1.5, 'y-flag': 1e3}, ['--https-listen-port=6444', '--x-flag=1.5', '--y-flag=1000']),
    ({'x-flag': '', 'y-flag': '~', 'z-flag': 'null'}, ['--x-flag=', '--y-flag=~', '--z-flag=null']),
    ({'x-flag': "it's \"quoted\" \\ back"}, ['--x-flag=it\'s "quoted" \\ back']),
    ({'kubelet-arg': ['eviction-hard=memory.available<5%', 'max-pods=250']},
     ['--kubelet-arg=eviction-hard=memory.available<5%', '--kubelet-arg=max-pods=250']),
    ({'x-flag': '--dash', 'y-flag': '- a', 'z-flag': '2001-01-01', 'w-flag': '*x', 'u-flag': '&a', 'q-flag': '!x',
      'p-flag': '%x', 'o-flag': '@x', 'n-flag': '`x'},
     ['--n-flag=`x', '--o-flag=@x', '--p-flag=%x', '--q-flag=!x', '--u-flag=&a', '--w-flag=*x', '--x-flag=--dash',
      '--y-flag=- a', '--z-flag=2001-01-01']),
    ({'x-flag': 'x\ty', 'y-flag': '[a, b]', 'z-flag': '{a: b}', 'w-flag': 'a,b'},
     ['--w-flag=a,b', '--x-flag=x\ty', '--y-flag=[a, b]', '--z-flag={a: b}']),
    ({'v': 2}, ['-v=2']),
    ({'tls-san': ['a', 1, True, 2.5]}, ['--tls-san=a', '--tls-san=1', '--tls-san=true', '--tls-san=2.5']),
]


@pytest.mark.parametrize('values,flags', ROUND_TRIP, ids=['%d' % i for i in range(len(ROUND_TRIP))])
def test_round_trip_of_tricky_values(node, values, flags):
    r = ok({'values': values})
    assert r['changed'] and r['files'] == [{'path': OURS, 'action': 'created', 'backup_file': None}]
    assert file_flags() == flags == r['k3s_args']
    data = node.read(OURS)
    assert data.startswith(_config_file.MARKER.encode()) and node.mode(OURS) == 0o600
    assert data == _config_file.render(_config_file.validate_values(values))
    again = ok({'values': dict(reversed(list(values.items())))})  # key order given does not matter
    assert not again['changed'] and node.read(OURS) == data


def test_layout(node):
    ok({'values': {'disable': ['traefik', 'servicelb'], 'write-kubeconfig-mode': '0640', 'node-label+': ['a=b'], 'v': 2}})
    body = node.read(OURS).decode().split('\n', 2)[2]
    assert body == ('disable:\n  - traefik\n  - servicelb\nnode-label+:\n  - a=b\nv: 2\n'
                    'write-kubeconfig-mode: "0640"\n')


def test_keys_with_plus_append_to_earlier_files(node):
    node.write(CONFIG, 'node-label:\n- a=1\ndisable: traefik\n')
    node.write(DIR + '/10-first.yaml', 'node-label+: [b=2]\n')
    r = ok({'values': {'node-label+': ['c=3'], 'disable+': 'servicelb'}})
    assert r['k3s_args'] == file_flags() == ['--node-label=a=1', '--node-label=b=2', '--node-label=c=3',
                                             '--disable=traefik', '--disable=servicelb']
    assert r['warnings'] == [] and r['masked'] == []


def test_a_later_dropin_masking_our_key_is_a_warning(node):
    node.write(DIR + '/10-early.yaml', 'disable: [a]\n')
    node.write(DIR + '/99-local.yaml', 'disable: [x]\nnode-label+: [z]\n')
    r = ok({'values': {'disable': ['traefik'], 'node-label+': ['a'], 'tls-san': 'k3s.example'}})
    assert r['changed']
    assert len(r['warnings']) == 1 and DIR + '/99-local.yaml' in r['warnings'][0] and '"disable:"' in r['warnings'][0]
    assert r['masked'] == [{'key': 'disable', 'file': DIR + '/99-local.yaml'}]
    assert r['k3s_args'] == file_flags() == ['--disable=x', '--node-label=a', '--node-label=z', '--tls-san=k3s.example']


def test_foreign_file_is_refused(node):
    node.write(OURS, 'disable: [traefik]\n')
    before = node.tree()
    msg = fail({'values': {'disable': ['x']}})
    assert 'not written by this module' in msg and OURS in msg
    msg = fail({'state': 'absent'})
    assert 'not written by this module' in msg
    assert node.tree() == before


def test_our_file_edited_by_hand_is_written_back(node):
    ok({'values': {'disable': ['traefik']}})
    node.write(OURS, node.read(OURS) + b'extra: 1\n')
    r = ok({'values': {'disable': ['traefik']}})
    assert r['changed'] and b'extra' not in node.read(OURS)


def test_absent_removes_only_ours_and_the_directory_it_made(node):
    node.write(CONFIG, 'disable: traefik\n')
    r = ok({'values': {'tls-san': ['a']}})
    assert r['changed'] and node.exists(DIR + '/' + _io.DIR_MARKER)
    before = node.tree()
    r = ok({'state': 'absent'})
    assert r['changed'] and r['files'] == [{'path': OURS, 'action': 'removed', 'backup_file': None}]
    assert not node.exists(DIR) and node.read(CONFIG) == b'disable: traefik\n'
    assert set(before) - set(node.tree()) == {OURS, DIR + '/', DIR + '/' + _io.DIR_MARKER}
    assert r['k3s_args'] == ['--disable=traefik']
    assert not ok({'state': 'absent'})['changed']


def test_absent_keeps_a_directory_that_was_there(node):
    node.write(DIR + '/10-other.yaml', 'x: 1\n')
    ok({'values': {'y': 2}})
    ok({'state': 'absent'})
    assert node.listdir(DIR) == ['10-other.yaml']


def test_check_mode_writes_nothing(node):
    before = node.tree()
    r = ok({'values': {'x': 1, 'tls-san': 'a'}}, check_mode=True)
    assert r['changed'] and r['files'] == [{'path': OURS, 'action': 'created', 'backup_file': None}]
    assert node.tree() == before
    assert r['k3s_args'] == ['--tls-san=a', '-x=1']  # a one-letter flag gets one dash, as k3s writes it


def test_existing_file_readable_by_others_gets_a_warning(node):
    ok({'values': {'x': 1}})
    import os  # pylint: disable=import-outside-toplevel
    os.chmod(node.p(OURS), 0o644)
    r = ok({'values': {'x': 2}})
    assert any('0644' in w and 'chmod 600' in w for w in r['warnings'])


def test_immutable_os_symlink_layout(node):
    node.write('/usr/lib/rancher/k3s/config.yaml', 'disable: [traefik]\n')
    node.symlink('/usr/lib/rancher/k3s/config.yaml', CONFIG)
    r = ok({'values': {'node-label+': ['a=b']}})
    assert r['config_yaml_is_link'] is True and r['config_yaml_target'] == '/usr/lib/rancher/k3s/config.yaml'
    assert r['config_file'] == CONFIG and r['path'] == OURS
    assert r['k3s_args'] == ['--disable=traefik', '--node-label=a=b']
    assert node.read('/usr/lib/rancher/k3s/config.yaml') == b'disable: [traefik]\n'
    plain = ok({'values': {'node-label+': ['a=b']}, 'name': '60-x.yaml'})
    assert plain['config_yaml_is_link'] is True
    node.unlink(CONFIG)
    r = ok({'values': {'x': 1}, 'name': '70-y.yaml'})
    assert r['config_yaml_is_link'] is False and r['config_yaml_target'] is None


def test_rke2(node):
    node.write('/etc/rancher/rke2/config.yaml', 'cni: canal\n')
    r = ok({'values': {'cni': 'cilium'}, 'config_dir': '/etc/rancher/rke2/config.yaml.d'})
    assert r['path'] == '/etc/rancher/rke2/config.yaml.d/50-cluster.yaml' and r['service'] == 'rke2-server'
    assert r['k3s_args'] == ['--cni=cilium'] == file_flags('/etc/rancher/rke2/config.yaml')


def test_restart_required_only_when_changed_and_running(node):
    node.install()
    assert ok({'values': {'x': 1}})['restart_required'] is False  # not running
    node.service('k3s', pid=4242)
    node.process(4242, ['/usr/local/bin/k3s', 'server'])
    assert ok({'values': {'x': 2}})['restart_required'] is True
    assert ok({'values': {'x': 2}})['restart_required'] is False
    assert ok({'values': {'x': 2}, 'service': 'k3s-agent'})['restart_required'] is False


def test_whitespace_k3s_trims_is_a_warning(node):
    r = ok({'values': {'x': ' a ', 'token': ' secret '}})
    assert any("x gets 'a'" in w for w in r['warnings'])
    assert not any('secret' in w for w in r['warnings'])


# -- tokens ----------------------------------------------------------------------------------------------------
def test_diff_and_facts_hide_token_values(node):
    ok({'values': {'token': 'OLD-SECRET', 'agent-token': ['OLD-AGENT'], 'node-label': ['a']}})
    r = ok({'values': {'token': 'NEW-SECRET', 'agent-token': ['NEW-AGENT'], 'node-label': ['b'], 'token-file': '/x/tok'}},
           diff=True)
    text = repr(r['diff']) + repr(r['k3s_args']) + repr(r['warnings'])
    for secret in ('OLD-SECRET', 'OLD-AGENT', 'NEW-SECRET', 'NEW-AGENT'):
        assert secret not in text
    after = r['diff'][0]['after']
    assert 'token: (hidden)\n' in after and 'agent-token:\n  - (hidden)\n' in after and '  - b\n' in after
    assert 'token: (hidden)\n' in r['diff'][0]['before'] and '  - a\n' in r['diff'][0]['before']
    assert '--token=(hidden)' in r['k3s_args'] and '--node-label=b' in r['k3s_args']
    assert b'NEW-SECRET' in node.read(OURS)


def test_token_values_are_registered_as_no_log(node):
    seen = {}

    def exit_json(self, **kwargs):
        seen.update(no_log=set(self.no_log_values), result=kwargs)
        raise SystemExit(0)

    args = {'name': '50-cluster.yaml', 'values': {'token': 'SECRET-1', 'agent-token': ['SECRET-2'], 'node-label': ['a']}}
    with set_module_args(args), patch.object(basic.AnsibleModule, 'exit_json', exit_json), pytest.raises(SystemExit):
        k3s_config_file.main()
    assert {'SECRET-1', 'SECRET-2'} <= seen['no_log'] and 'a' not in seen['no_log']


# -- refusals: nothing written -----------------------------------------------------------------------------------
@pytest.mark.parametrize('args,words', [
    ({'name': 'x.conf', 'values': {}}, ['.yaml']),
    ({'name': 'a/b.yaml', 'values': {}}, ['file name']),
    ({'config_dir': 'etc/rancher', 'values': {}}, ['absolute']),
    ({'config_dir': '/etc/rancher/k3s', 'values': {}}, ['".d"']),
    ({'values': {'--disable': 'x'}}, ["'--disable'", 'flag name']),
    ({'values': {'a b': 'x'}}, ["'a b'"]),
    ({'values': {'x': None}}, ['x is null']),
    ({'values': {'x': {'a': 1}}}, ['x is a dict']),
    ({'values': {'x': ['a', {'b': 1}]}}, ['list of x', 'dict']),
    ({'values': {'x': [['a']]}}, ['list of x', 'list']),
    ({}, ['values']),
    ({'values': {'x': 1}, 'service': 'a b'}, ['not a valid service name']),
], ids=['not-yaml', 'slash', 'relative-dir', 'dir-not-d', 'dashes', 'space-key', 'null', 'dict', 'list-dict', 'nested-list',
        'values-missing', 'bad-service'])
def test_refusals_write_nothing(node, args, words):
    before = node.tree()
    msg = fail(args)
    for w in words:
        assert w in msg, msg
    assert node.tree() == before


def test_unreadable_other_dropin_is_named(node):
    node.write(DIR + '/10-bad.yaml', 'disable: [a\n')
    before = node.tree()
    msg = fail({'values': {'x': 1}})
    assert '10-bad.yaml' in msg and node.tree() == before


def test_read_only_directory(node):
    node.readonly.add(DIR)
    msg = fail({'values': {'x': 1}})
    assert 'cannot be written' in msg and not node.exists(OURS)


def test_backup(node):
    ok({'values': {'x': 1}})
    before = node.read(OURS)
    r = ok({'values': {'x': 2}, 'backup': True})
    assert r['files'] == [{'path': OURS, 'action': 'modified', 'backup_file': r['backup_file']}]
    assert node.read(r['backup_file']) == before and not r['backup_file'].endswith(('.yaml', '.yml'))
