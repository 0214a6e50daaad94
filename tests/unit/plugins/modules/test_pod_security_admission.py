# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the pod_security_admission module: the AdmissionConfiguration file, 0600, byte-stable, ours alone."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.baremetal.k3s.plugins.module_utils import _pod_security
from ansible_collections.baremetal.k3s.plugins.modules import pod_security_admission, rollback

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok, run_module

PATH = '/etc/rancher/k3s/baremetal-k3s-pod-security.yaml'


def run(**kw):
    args = {'path': PATH, 'enforce': 'restricted', 'warn': 'restricted'}
    args.update(kw)
    return module_ok(pod_security_admission, args, diff=True)


def test_written_0600_then_left_alone_then_removed(node):
    r = run()
    assert r['changed'] and r['files'] == [{'path': PATH, 'action': 'created', 'backup_file': None}]
    assert r['apiserver_arg'] == 'admission-control-config-file=' + PATH and r['owned']
    assert node.mode(PATH) == 0o600
    data = node.read(PATH)
    conf = yaml.safe_load(data)['plugins'][0]['configuration']
    assert conf['defaults']['enforce'] == 'restricted' and conf['exemptions']['namespaces'] == ['kube-system']
    again = run()
    assert not again['changed'] and again['files'] == [] and node.read(PATH) == data
    gone = run(state='absent')
    assert gone['changed'] and gone['files'][0]['action'] == 'removed' and not node.exists(PATH)
    assert not run(state='absent')['changed']


def test_settings_as_one_mapping_give_the_same_bytes_and_are_refused_by_their_name(node):
    run()
    data = node.read(PATH)
    same = module_ok(pod_security_admission, {'path': PATH, 'settings': {'enforce': 'restricted', 'warn': 'restricted'},
                                              'settings_name': 'k3s_server_pod_security'})
    assert not same['changed'] and node.read(PATH) == data
    for given, words in (({'enforce': 'strict'}, "k3s_server_pod_security.enforce 'strict' is not a PodSecurity level"),
                         ({'enforce': 'restricted', 'mode': 'x'}, 'unknown key k3s_server_pod_security.mode')):
        msg = module_fail(pod_security_admission, {'path': PATH, 'settings': given, 'settings_name': 'k3s_server_pod_security'})
        assert words in msg and 'Nothing was changed' in msg and node.read(PATH) == data
    both = module_fail(pod_security_admission, {'path': PATH, 'settings': {}, 'enforce': 'baseline'})
    assert 'mutually exclusive' in both


def test_a_backup_lets_rollback_put_the_previous_settings_back(node):
    first = run()['files']
    before = node.read(PATH)
    changed = run(enforce='baseline', backup=True)['files']
    kept = changed[0]['backup_file']
    assert changed[0]['action'] == 'modified' and node.read(kept) == before and node.mode(kept) == 0o600
    back = module_ok(rollback, {'files': changed})
    assert back['restored'] == [PATH] and node.read(PATH) == before and not node.exists(kept)
    gone = module_ok(rollback, {'files': first})  # the first run created it: its rollback removes it
    assert gone['restored'] == [PATH] and not node.exists(PATH)


def test_a_taken_over_mode_is_put_back_to_0600(node):
    run()
    node.write(PATH, node.read(PATH), mode=0o644)
    r = run(audit='baseline')
    assert r['changed'] and node.mode(PATH) == 0o600


def test_check_mode_writes_nothing(node):
    r = module_ok(pod_security_admission, {'path': PATH, 'enforce': 'restricted'}, check_mode=True)
    assert r['changed'] and not node.exists(PATH)


def test_an_operators_file_is_refused_and_kept(node):
    mine = b'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: []\n'
    node.write(PATH, mine)
    failed, result = run_module(pod_security_admission, {'path': PATH, 'enforce': 'restricted'})
    assert failed and 'not written by baremetal.k3s' in result['msg'], result
    assert node.read(PATH) == mine
    r = run(state='absent')
    assert not r['changed'] and node.read(PATH) == mine


@pytest.mark.parametrize('args, what', [
    ({'enforce': 'strict'}, 'value of enforce must be one of'),
    ({'enforce_version': 'v2.0'}, 'enforce_version'),
    ({'audit_version': 'newest'}, 'audit_version'),
    ({'exempt_namespaces': ['Bad_NS']}, 'exempt_namespaces[0]'),
    ({'exempt_runtime_classes': ['-x']}, 'exempt_runtime_classes[0]'),
    ({'enforse': 'restricted'}, 'enforse'),
])
def test_bad_input_is_refused_and_changes_nothing(node, args, what):
    node.write(PATH, _pod_security.MARKER + '\nplugins: []\n')
    before = node.tree()
    msg = module_fail(pod_security_admission, dict({'path': PATH}, **args))
    assert what in msg, msg
    assert node.tree() == before


def test_a_directory_is_refused(node):
    node.makedirs(PATH)
    assert 'is a directory' in module_fail(pod_security_admission, {'path': PATH})
