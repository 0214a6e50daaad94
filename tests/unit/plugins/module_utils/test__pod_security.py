# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The PodSecurity admission settings: validated as the API server validates them, rendered byte-stable."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.baremetal.k3s.plugins.module_utils import _pod_security as ps
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError


def test_defaults_are_kubernetes_own_and_kube_system_is_exempt():
    s = ps.settings({})
    assert s == {'enforce': 'privileged', 'enforce_version': 'latest', 'audit': 'privileged', 'audit_version': 'latest',
                 'warn': 'privileged', 'warn_version': 'latest', 'exempt_namespaces': ['kube-system'],
                 'exempt_usernames': [], 'exempt_runtime_classes': []}


def test_the_operator_may_take_kube_system_out():
    assert ps.settings({'exempt_namespaces': []})['exempt_namespaces'] == []
    assert ps.settings({'exempt_namespaces': ['ops']})['exempt_namespaces'] == ['ops']


@pytest.mark.parametrize('given', [
    {'enforce': 'restricted', 'enforce_version': 'v1.33'},
    {'warn': 'baseline', 'warn_version': 'v1.0'},
    {'audit': 'restricted', 'audit_version': 'v1.100'},
    {'exempt_usernames': ['system:serviceaccount:kube-system:replicaset-controller', 'älice']},
    {'exempt_runtime_classes': ['nvidia', 'kata.containers']},
    {'exempt_namespaces': ['kube-system', 'gpu-operator']},
])
def test_good_settings_are_taken(given):
    s = ps.settings(given)
    for key, value in given.items():
        assert s[key] == value


@pytest.mark.parametrize('given, where, what', [
    ({'enforce': 'strict'}, 'enforce', 'is not a PodSecurity level'),
    ({'enforce': 'Restricted'}, 'enforce', 'is not a PodSecurity level'),
    ({'audit': ''}, 'audit', 'is not a PodSecurity level'),
    ({'warn': None, 'warn_version': 'v2.1'}, 'warn_version', 'is not a PodSecurity version'),
    ({'enforce_version': 'v1.01'}, 'enforce_version', 'is not a PodSecurity version'),
    ({'enforce_version': '1.33'}, 'enforce_version', 'is not a PodSecurity version'),
    ({'enforce_version': 'latest\n'}, 'enforce_version', 'is not a PodSecurity version'),
    ({'enforce_version': 'Latest'}, 'enforce_version', 'is not a PodSecurity version'),
    ({'enforce_version': 133}, 'enforce_version', 'is not a PodSecurity version'),
    ({'enforse': 'restricted'}, 'enforse', 'unknown key'),
    ({'exemptions': {'namespaces': []}}, 'exemptions', 'unknown key'),
    ({'exempt_namespaces': 'kube-system'}, 'exempt_namespaces', 'must be a list'),
    ({'exempt_namespaces': ['Kube-System']}, 'exempt_namespaces[0]', 'DNS-1123 label'),
    ({'exempt_namespaces': ['a.b']}, 'exempt_namespaces[0]', 'DNS-1123 label'),
    ({'exempt_namespaces': ['kube-system', 'kube-system']}, 'exempt_namespaces[1]', 'given twice'),
    ({'exempt_runtime_classes': ['Nvidia']}, 'exempt_runtime_classes[0]', 'Kubernetes object name'),
    ({'exempt_usernames': ['']}, 'exempt_usernames[0]', 'not a user name'),
    ({'exempt_usernames': ['bob\n']}, 'exempt_usernames[0]', 'control character'),
    ({'exempt_usernames': ['bob\ud800']}, 'exempt_usernames[0]', 'lone surrogate'),
    ({'exempt_usernames': ['bob', 'bob']}, 'exempt_usernames[1]', 'given twice'),
])
def test_bad_settings_are_refused_by_name(given, where, what):
    with pytest.raises(PlanError) as e:
        ps.settings(given, where='k3s_server_pod_security.')
    assert 'k3s_server_pod_security.' + where in e.value.msg and what in e.value.msg, e.value.msg
    assert 'Nothing was changed' in e.value.msg


def test_not_a_mapping_is_refused():
    with pytest.raises(PlanError) as e:
        ps.settings(['restricted'], where='k3s_server_pod_security.')
    assert 'k3s_server_pod_security must be a mapping' in e.value.msg


def test_render_is_what_the_api_server_reads_and_byte_stable():
    s = ps.settings({'enforce': 'restricted', 'warn': 'restricted', 'warn_version': 'v1.33',
                     'exempt_usernames': ['system:serviceaccount:ops:deployer', 'ünïcode 😀']})
    data = ps.render(s)
    assert data.startswith(ps.MARKER.encode() + b'\n') and ps.owned(data)
    assert data == ps.render(dict(s))
    doc = yaml.safe_load(data)
    assert doc['apiVersion'] == 'apiserver.config.k8s.io/v1' and doc['kind'] == 'AdmissionConfiguration'
    (plugin,) = doc['plugins']
    assert plugin['name'] == 'PodSecurity'
    conf = plugin['configuration']
    assert conf['apiVersion'] == 'pod-security.admission.config.k8s.io/v1' and conf['kind'] == 'PodSecurityConfiguration'
    assert conf['defaults'] == {'enforce': 'restricted', 'enforce-version': 'latest', 'audit': 'privileged',
                                'audit-version': 'latest', 'warn': 'restricted', 'warn-version': 'v1.33'}
    assert conf['exemptions'] == {'namespaces': ['kube-system'], 'runtimeClasses': [],
                                  'usernames': ['system:serviceaccount:ops:deployer', 'ünïcode 😀']}
    # outside the Basic Multilingual Plane as itself (go-yaml v2 refuses surrogate-pair escapes)
    assert '😀'.encode() in data


@pytest.mark.parametrize('data, ours', [
    (None, False),
    (b'', False),
    (ps.MARKER.encode() + b'\n', True),
    (ps.MARKER.encode() + b'\r\napiVersion: x\n', True),
    (b'# ' + ps.MARKER.encode() + b'\n', False),
    (b'apiVersion: apiserver.config.k8s.io/v1\n' + ps.MARKER.encode() + b'\n', False),
])
def test_owned_only_with_the_marker_first(data, ours):
    assert ps.owned(data) is ours


def test_apiserver_arg():
    assert ps.apiserver_arg('/etc/rancher/k3s/x.yaml') == 'admission-control-config-file=/etc/rancher/k3s/x.yaml'
