# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the client_certificate module's wiring: its real main() on fake_node, kubectl through the view.

The API is the fake of test__client_certificate behind fake_node's k3s command; the logic
itself is tested there.
"""

from __future__ import annotations

import base64

import pytest

from ansible_collections.baremetal.k3s.plugins.modules import client_certificate
from ansible_collections.baremetal.k3s.tests.unit.plugins.module_utils.test__client_certificate import (
    FakeApi, cert_pem, make_csr)
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import FakeNode
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok

K3S = '/usr/local/bin/k3s'
KUBECONFIG = '/etc/rancher/k3s/k3s.yaml'
CSR_NAME = 'baremetal-k3s-user-alice'
BINDING = 'baremetal-k3s:user:cluster-admin:cluster-admins'


class Clock:
    def __init__(self):
        self.t = 0.0

    def monotonic(self):
        return self.t

    def sleep(self, seconds):
        self.t += seconds


class Node(FakeNode):
    """fake_node with the k3s binary and admin kubeconfig, and the fake API behind its k3s command."""

    def __init__(self, root, monkeypatch):
        super().__init__(root, monkeypatch)
        self.clock = Clock()
        self.write(K3S, '#!/bin/sh\nexit 99\n', 0o755)  # never run: the view runs commands[K3S]
        self.write(KUBECONFIG, 'apiVersion: v1\nkind: Config\n', 0o600)
        self.api = FakeApi()
        self.commands[K3S] = lambda argv, stdin=None: self.api.runner(argv, stdin)


@pytest.fixture(name='node')
def fixture_node(tmp_path, monkeypatch):
    return Node(tmp_path / 'root', monkeypatch)


@pytest.fixture(name='pem', scope='module')
def fixture_pem():
    return make_csr()


def args(pem, **kw):
    a = {'kubectl': [K3S, 'kubectl'], 'kubeconfig': KUBECONFIG, 'csr': pem, 'name': CSR_NAME,
         'groups': ['cluster-admins'], 'cluster_role': 'cluster-admin'}
    a.update(kw)
    return a


def test_signs_then_changes_nothing(node, pem):
    r = module_ok(client_certificate, args(pem))
    assert r['changed'] and r['csr_action'] == 'created' and r['certificate'] == cert_pem(1)
    assert r['csr_name'] == CSR_NAME and r['bindings'][0]['name'] == BINDING and r['bindings'][0]['action'] == 'created'
    stored = node.api.objects[('csr', CSR_NAME)]['spec']
    # the defaults of the options reach the API
    assert stored['signerName'] == 'kubernetes.io/kube-apiserver-client' and stored['expirationSeconds'] == 31536000
    assert stored['usages'] == ['client auth']
    node.api.calls = []
    r = module_ok(client_certificate, args(pem))
    assert not r['changed'] and r['csr_action'] == 'unchanged' and r['certificate'] == cert_pem(1)
    assert set(node.api.verbs()) == {'get'}


def test_check_mode_changes_nothing(node, pem):
    r = module_ok(client_certificate, args(pem), check_mode=True)
    assert r['changed'] and r['csr_action'] == 'created' and r['certificate'] == ''
    assert node.api.objects == {} and set(node.api.verbs()) == {'get'}


def test_renewal_replaces_our_old_request(node, pem):
    module_ok(client_certificate, args(make_csr()))
    r = module_ok(client_certificate, args(pem, expiration_seconds=86400))
    assert r['changed'] and r['csr_action'] == 'replaced' and r['certificate'] == cert_pem(2)
    spec = node.api.objects[('csr', CSR_NAME)]['spec']
    assert base64.b64decode(spec['request']).decode().strip() == pem.strip() and spec['expirationSeconds'] == 86400
    assert r['bindings'][0]['action'] == 'unchanged'


def test_denied_fails_naming_it(node, pem):
    denied = {'type': 'Denied', 'status': 'True', 'reason': 'KubectlDeny', 'message': 'This CSR was denied by kubectl certificate deny.'}
    node.api.put_csr(CSR_NAME, pem, conditions=[denied])
    msg = module_fail(client_certificate, args(pem))
    assert 'CertificateSigningRequest %s is Denied (KubectlDeny' % CSR_NAME in msg and 'kubectl delete csr' in msg
    assert set(node.api.verbs()) == {'get'}


def test_csr_needs_name(node, pem):
    msg = module_fail(client_certificate, {'kubectl': [K3S, 'kubectl'], 'csr': pem})
    assert 'name' in msg and node.api.calls == []


def test_system_masters_refused_before_kubectl(node, pem):
    msg = module_fail(client_certificate, args(pem, groups=['system:masters']))
    assert 'group system:masters cannot be requested' in msg and node.api.calls == []


def test_missing_kubeconfig(node, pem):
    msg = module_fail(client_certificate, args(pem, kubeconfig='/etc/rancher/k3s/other.yaml'))
    assert 'kubeconfig /etc/rancher/k3s/other.yaml does not exist on this node' in msg and node.api.calls == []


def test_bindings_only(node):
    r = module_ok(client_certificate, {'kubectl': [K3S, 'kubectl'], 'kubeconfig': KUBECONFIG, 'groups': ['auditors'],
                                       'cluster_role': 'view'})
    assert r['changed'] and r['csr_action'] == 'none' and r['certificate'] == ''
    assert ('clusterrolebinding', 'baremetal-k3s:user:view:auditors') in node.api.objects
    assert not any(kind == 'csr' for kind, name in node.api.objects)
