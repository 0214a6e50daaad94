# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the readiness_configmap module's wiring: options, kubectl through run_command, results, failures.

The API is the fake of test__readiness behind AnsibleModule.run_command; the logic itself is
tested there.
"""

from __future__ import annotations

import os

import pytest

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _readiness
from ansible_collections.baremetal.k3s.plugins.modules import readiness_configmap
from ansible_collections.baremetal.k3s.tests.unit.plugins.module_utils.test__readiness import FakeApi, entry, nodes_yaml
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok


class Node:
    """A k3s binary and admin kubeconfig under tmp_path, and the fake API behind run_command."""

    def __init__(self, tmp_path, monkeypatch):
        self.k3s = str(tmp_path / 'k3s')
        with open(self.k3s, 'w') as f:
            f.write('#!/bin/sh\nexit 99\n')  # never run: run_command is replaced
        os.chmod(self.k3s, 0o755)
        self.kubeconfig = str(tmp_path / 'k3s.yaml')
        with open(self.kubeconfig, 'w') as f:
            f.write('apiVersion: v1\nkind: Config\n')
        self.api = FakeApi()
        self.run_kwargs = []
        node = self

        def run_command(module, args, **kw):
            node.run_kwargs.append(kw)
            argv = list(args)
            assert argv[:2] == [node.k3s, 'kubectl'], argv
            return node.api.runner(['/usr/local/bin/k3s', 'kubectl'] + argv[2:], kw.get('data'))

        monkeypatch.setattr(AnsibleModule, 'run_command', run_command)

    def args(self, **kw):
        args = {'kubectl': [self.k3s, 'kubectl'], 'kubeconfig': self.kubeconfig, 'node_name': 'server-1',
                'kube_scheduler': 'k3s@server-1', 'restarted': True}
        args.update(kw)
        return args


@pytest.fixture
def node(tmp_path, monkeypatch):
    return Node(tmp_path, monkeypatch)


def test_create_then_no_change(node):
    r = module_ok(readiness_configmap, node.args())
    assert r['changed'] and r['attempts'] == 1 and r['nodes'] == [entry('server-1')] and 'diff' not in r
    stored = node.api.objects[('default', 'extender-readiness')]
    assert stored['data']['nodes.yaml'] == nodes_yaml(entry('server-1'))
    assert node.api.calls[0][1][2:6] == ['--kubeconfig', node.kubeconfig, '--request-timeout', '30s']
    # kubectl gets its arguments untouched and the JSON without a newline added
    assert all(kw.get('expand_user_and_vars') is False and kw.get('binary_data') is True for kw in node.run_kwargs)
    r = module_ok(readiness_configmap, node.args())
    assert not r['changed'] and node.api.verbs()[-1] == 'get'


def test_defaults_and_other_names(node):
    node.api.namespaces.add('csi-baremetal')
    module_ok(readiness_configmap, node.args(name='sched-ready', namespace='csi-baremetal'))
    assert ('csi-baremetal', 'sched-ready') in node.api.objects
    args = node.args(node_name='server-2', kube_scheduler='k3s@server-2', name='sched-ready', namespace='csi-baremetal')
    del args['restarted']  # false by default
    r = module_ok(readiness_configmap, args)
    assert r['nodes'] == [entry('server-1'), entry('server-2', False)]


def test_absent(node):
    node.api.put('extender-readiness', {'nodes.yaml': nodes_yaml(entry('server-1'), entry('server-2'))})
    r = module_ok(readiness_configmap, {'kubectl': [node.k3s, 'kubectl'], 'node_name': 'server-1', 'state': 'absent'})
    assert r['changed'] and r['nodes'] == [entry('server-2')] and node.api.nodes() == ['server-2']
    assert '--kubeconfig' not in node.api.calls[0][1]
    r = module_ok(readiness_configmap, {'kubectl': [node.k3s, 'kubectl'], 'node_name': 'server-1', 'state': 'absent'})
    assert not r['changed']


def test_check_and_diff_mode(node):
    r = module_ok(readiness_configmap, node.args(), check_mode=True, diff=True)
    assert r['changed'] and node.api.writes == [] and node.api.objects == {}
    header = 'ConfigMap default/extender-readiness: nodes.yaml'
    assert r['diff'] == {'before': '', 'after': nodes_yaml(entry('server-1')), 'before_header': header, 'after_header': header}
    r = module_ok(readiness_configmap, node.args(), diff=True)
    assert r['changed'] and r['diff']['after'] == nodes_yaml(entry('server-1'))


def test_retry_is_reported_in_attempts(node):
    node.api.put('extender-readiness', {'nodes.yaml': nodes_yaml(entry('server-0'))})
    bumped = []

    def someone_else_first(verb, obj):
        if not bumped:
            bumped.append(verb)
            node.api.put('extender-readiness', {'nodes.yaml': nodes_yaml(entry('server-0'), entry('server-9'))})

    node.api.before_write = someone_else_first
    r = module_ok(readiness_configmap, node.args())
    assert r['attempts'] == 2 and node.api.nodes() == ['server-0', 'server-1', 'server-9']


def test_missing_namespace_fails_naming_it(node):
    msg = module_fail(readiness_configmap, node.args(namespace='csi-baremetal'))
    assert 'namespace csi-baremetal does not exist' in msg and 'scheduler_extender_readiness_namespace' in msg


@pytest.mark.parametrize('change, message', [
    ({'kube_scheduler': None}, 'kube_scheduler is needed with state=present'),
    ({'namespace': 'CSI'}, "'CSI' is not a valid namespace name"),
    ({'node_name': 'Server-1'}, 'is not a Kubernetes node name'),
    ({'kubectl': []}, 'kubectl must be the kubectl command'),
    ({'state': 'gone'}, 'value of state must be one of: present, absent'),
])
def test_bad_options_fail_before_kubectl_runs(node, change, message):
    assert message in module_fail(readiness_configmap, node.args(**change))
    assert node.api.calls == []


def test_missing_kubectl_or_kubeconfig(node, tmp_path, monkeypatch):
    msg = module_fail(readiness_configmap, node.args(kubectl=[str(tmp_path / 'nope'), 'kubectl']))
    assert 'nope is not an executable file on this node' in msg and 'scheduler_extender_kubectl' in msg
    monkeypatch.setattr(AnsibleModule, 'get_bin_path', lambda module, name, *a, **kw: None)
    msg = module_fail(readiness_configmap, node.args(kubectl=['kubectl']))
    assert 'kubectl kubectl is not on the PATH of this node' in msg
    msg = module_fail(readiness_configmap, node.args(kubeconfig=str(tmp_path / 'missing.yaml')))
    assert 'missing.yaml does not exist on this node' in msg and 'admin_kubeconfig' in msg
    assert node.api.calls == []


def test_kubectl_failure_is_reported(node, monkeypatch):
    monkeypatch.setattr(AnsibleModule, 'run_command',
                        lambda module, args, **kw: (1, '', 'error: You must be logged in to the server (Unauthorized)\n'))
    msg = module_fail(readiness_configmap, node.args())
    assert 'get configmap extender-readiness' in msg and 'Unauthorized' in msg and 'exit 1' in msg


def test_missing_pyyaml_names_the_packages(node, monkeypatch):
    monkeypatch.setattr(_readiness, 'HAS_YAML', False)
    msg = module_fail(readiness_configmap, node.args())
    assert 'PyYAML' in msg and 'python3-yaml' in msg and node.api.calls == []
