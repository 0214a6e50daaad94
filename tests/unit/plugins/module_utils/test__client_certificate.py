# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of _client_certificate against a fake API server behind the kubectl runner.

:class:`FakeApi` keeps CertificateSigningRequests and ClusterRoleBindings and answers the
kubectl commands the module runs as kubectl and the API server do: ``get -o json
--ignore-not-found`` prints nothing for a missing object, ``create`` of an existing object is
AlreadyExists, an ``expirationSeconds`` under 600 is Invalid, ``certificate approve`` adds the
Approved condition, and its signer puts a certificate into ``status.certificate`` after a few
reads (as kube-controller-manager does a second or two after the approval).
"""

from __future__ import annotations

import base64
import copy
import json

import pytest

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ansible_collections.baremetal.k3s.plugins.module_utils import _client_certificate as cc
from ansible_collections.baremetal.k3s.plugins.module_utils._view import View

KUBECTL = ['/usr/local/bin/k3s', 'kubectl']
KUBECONFIG = '/etc/rancher/k3s/k3s.yaml'
LABEL = {'app.kubernetes.io/managed-by': 'baremetal.k3s'}


def make_csr(cn='alice', orgs=('cluster-admins',), key=None):
    key = key or ec.generate_private_key(ec.SECP256R1())
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)] + [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    csr = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(attrs)).sign(key, hashes.SHA256())
    return csr.public_bytes(serialization.Encoding.PEM).decode('ascii')


def cert_pem(serial):
    return '-----BEGIN CERTIFICATE-----\nMIIB%04d\n-----END CERTIFICATE-----\n' % serial


class FakeClock:
    def __init__(self):
        self.t = 0.0
        self.sleeps = []

    def monotonic(self):
        return 100.0 + self.t

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.t += seconds


class FakeApi:
    """CSRs and ClusterRoleBindings, reached as kubectl reaches them."""

    def __init__(self):
        self.objects = {}       # {(kind, name): object}
        self.calls = []
        self.sign_after = 2     # reads of an approved CSR before the signer issues it; None: never
        self.signer_denies = False
        self.refuse = {}        # {verb: stderr} to answer a write with (rc 1)
        self.serial = 0
        self.approved_reads = {}
        self.timeouts = []      # --request-timeout of every call, in seconds

    def put_csr(self, name, pem, conditions=(), certificate=None, labels=None):
        obj = {'apiVersion': 'certificates.k8s.io/v1', 'kind': 'CertificateSigningRequest',
               'metadata': {'name': name, 'resourceVersion': '1', 'labels': dict(labels if labels is not None else LABEL)},
               'spec': {'request': base64.b64encode(pem.encode()).decode(), 'signerName': cc.DEFAULT_SIGNER,
                        'usages': ['client auth'], 'expirationSeconds': 31536000},
               'status': {'conditions': [dict(c) for c in conditions]}}
        if certificate:
            obj['status']['certificate'] = base64.b64encode(certificate.encode()).decode()
        self.objects[('csr', name)] = obj
        return obj

    def put_binding(self, role, group, labels=None, subjects=None):
        obj = cc.wanted_binding(role, group)
        obj['metadata']['labels'] = dict(labels if labels is not None else LABEL)
        obj['metadata']['resourceVersion'] = '7'
        if subjects is not None:
            obj['subjects'] = subjects
        self.objects[('clusterrolebinding', obj['metadata']['name'])] = obj
        return obj

    def verbs(self):
        return [c[0] for c in self.calls]

    def writes(self):
        return [c for c in self.calls if c[0] not in ('get',)]

    def runner(self, argv, stdin=None):
        assert argv[:2] == KUBECTL, argv
        args = list(argv[2:])
        if args[:1] == ['--kubeconfig']:
            assert args[1] == KUBECONFIG
            args = args[2:]
        assert args[0] == '--request-timeout' and args[1].endswith('s') and 1 <= int(args[1][:-1]) <= 30, argv
        self.timeouts.append(int(args[1][:-1]))
        args = args[2:]
        verb = args[0]
        self.calls.append((verb, args, stdin))
        if verb in self.refuse:
            return 1, '', self.refuse[verb]
        if verb == 'get':
            assert args[3:] == ['-o', 'json', '--ignore-not-found'], args
            return self._get(args[1], args[2])
        if verb == 'certificate':
            return self._approve(args[2])
        if verb == 'delete':
            assert '--ignore-not-found' in args
            self.objects.pop((args[1], args[2]), None)
            return 0, '%s "%s" deleted\n' % (args[1], args[2]), ''
        assert args[1:] == ['-f', '-'] and stdin, args
        obj = json.loads(stdin)
        kind = {'CertificateSigningRequest': 'csr', 'ClusterRoleBinding': 'clusterrolebinding'}[obj['kind']]
        name = obj['metadata']['name']
        if verb == 'create':
            if (kind, name) in self.objects:
                return 1, '', 'Error from server (AlreadyExists): error when creating "STDIN": %s "%s" already exists\n' % (kind, name)
            if kind == 'csr' and obj['spec'].get('expirationSeconds', 600) < 600:
                return 1, '', ('The CertificateSigningRequest "%s" is invalid: spec.expirationSeconds: Invalid value: %d: '
                               'may not specify a duration less than 600 seconds (10 minutes)\n' % (name, obj['spec']['expirationSeconds']))
            obj['metadata']['resourceVersion'] = '10'
            obj.setdefault('status', {})
            self.objects[(kind, name)] = obj
            return 0, '%s/%s created\n' % (kind, name), ''
        assert verb == 'replace', args
        stored = self.objects.get((kind, name))
        assert stored is not None and obj['metadata']['resourceVersion'] == stored['metadata']['resourceVersion']
        self.objects[(kind, name)] = obj
        return 0, '%s/%s replaced\n' % (kind, name), ''

    def _get(self, kind, name):
        obj = self.objects.get((kind, name))
        if obj is None:
            return 0, '', ''
        if kind == 'csr' and cc.approved(obj) and not obj['status'].get('certificate') and self.sign_after is not None:
            self.approved_reads[name] = self.approved_reads.get(name, 0) + 1
            if self.approved_reads[name] > self.sign_after:
                if self.signer_denies:
                    obj['status']['conditions'].append({'type': 'Failed', 'status': 'True', 'reason': 'SignerValidationFailure',
                                                        'message': 'invalid usage for client certificate: server auth'})
                else:
                    self.serial += 1
                    obj['status']['certificate'] = base64.b64encode(cert_pem(self.serial).encode()).decode()
        return 0, json.dumps(obj, indent=4) + '\n', ''

    def _approve(self, name):
        obj = self.objects.get(('csr', name))
        if obj is None:
            return 1, '', 'Error from server (NotFound): certificatesigningrequests.certificates.k8s.io "%s" not found\n' % name
        obj['status'].setdefault('conditions', []).append(
            {'type': 'Approved', 'status': 'True', 'reason': 'KubectlApprove', 'message': 'This CSR was approved by kubectl certificate approve.'})
        return 0, 'certificatesigningrequest.certificates.k8s.io/%s approved\n' % name, ''


class Node(View):
    """A node whose only file is the kubectl and the kubeconfig, with a fake clock."""

    def __init__(self, files=(KUBECTL[0], KUBECONFIG)):
        super().__init__(root='/nonexistent', clock=FakeClock())
        self.files = set(files)

    def isfile(self, path):
        return path in self.files


def params(csr=None, **kw):
    p = dict(kubectl=list(KUBECTL), kubeconfig=KUBECONFIG, csr=csr, name='baremetal-k3s-user-alice',
             signer_name=cc.DEFAULT_SIGNER, expiration_seconds=31536000, usages=['client auth'], timeout=60,
             groups=['cluster-admins'], cluster_role='cluster-admin')
    p.update(kw)
    return p


def run(api, p, check_mode=False, node=None):
    return cc.plan(node or Node(), api.runner, p, check_mode=check_mode).facts


@pytest.fixture(name='api')
def fixture_api():
    return FakeApi()


@pytest.fixture(name='pem', scope='module')
def fixture_pem():
    return make_csr()


# -- the CSR -------------------------------------------------------------------------------------------
def test_create_approve_wait_then_idempotent(api, pem):
    node = Node()
    facts = run(api, params(pem), node=node)
    assert facts['changed'] and facts['csr_action'] == 'created' and facts['certificate'] == cert_pem(1)
    stored = api.objects[('csr', 'baremetal-k3s-user-alice')]
    assert base64.b64decode(stored['spec']['request']).decode() == pem.strip() + '\n'
    assert stored['spec']['signerName'] == 'kubernetes.io/kube-apiserver-client'
    assert stored['spec']['usages'] == ['client auth'] and stored['spec']['expirationSeconds'] == 31536000
    assert stored['metadata']['labels'] == LABEL
    assert api.verbs()[:4] == ['get', 'create', 'certificate', 'get'] and node.clock.sleeps == [1.0, 1.0]
    binding = api.objects[('clusterrolebinding', 'baremetal-k3s:user:cluster-admin:cluster-admins')]
    assert binding['roleRef']['name'] == 'cluster-admin' and binding['subjects'] == [
        {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'Group', 'name': 'cluster-admins'}]
    assert facts['bindings'] == [{'name': 'baremetal-k3s:user:cluster-admin:cluster-admins', 'group': 'cluster-admins',
                                  'cluster_role': 'cluster-admin', 'action': 'created'}]
    # the same request again: the issued certificate, nothing written
    api.calls = []
    again = run(api, params(pem))
    assert not again['changed'] and again['csr_action'] == 'unchanged' and again['certificate'] == cert_pem(1)
    assert again['bindings'][0]['action'] == 'unchanged' and set(api.verbs()) == {'get'}


def test_other_request_of_ours_is_replaced(api, pem):
    api.put_csr('baremetal-k3s-user-alice', make_csr(), certificate=cert_pem(99),
                conditions=[{'type': 'Approved', 'status': 'True'}])
    facts = run(api, params(pem))
    assert facts['csr_action'] == 'replaced' and facts['changed'] and facts['certificate'] == cert_pem(1)
    assert [c[0] for c in api.writes()] == ['delete', 'create', 'certificate', 'create']
    stored = api.objects[('csr', 'baremetal-k3s-user-alice')]
    assert base64.b64decode(stored['spec']['request']).decode().strip() == pem.strip()


def test_other_request_not_ours_is_refused(api, pem):
    api.put_csr('baremetal-k3s-user-alice', make_csr(), labels={})
    before = copy.deepcopy(api.objects)
    with pytest.raises(cc.CertificateError, match='not created by this collection .*kubectl delete csr baremetal-k3s-user-alice'):
        run(api, params(pem))
    assert api.objects == before and set(api.verbs()) == {'get'}


@pytest.mark.parametrize('same', [True, False])
def test_denied_csr_fails_with_its_reason_and_is_kept(api, pem, same):
    denied = {'type': 'Denied', 'status': 'True', 'reason': 'KubectlDeny', 'message': 'This CSR was denied by kubectl certificate deny.'}
    api.put_csr('baremetal-k3s-user-alice', pem if same else make_csr(), conditions=[denied])
    before = copy.deepcopy(api.objects)
    with pytest.raises(cc.CertificateError) as e:
        run(api, params(pem))
    assert 'is Denied (KubectlDeny: This CSR was denied by kubectl certificate deny.)' in e.value.msg
    assert 'kubectl delete csr baremetal-k3s-user-alice' in e.value.msg
    assert api.objects == before and set(api.verbs()) == {'get'}


def test_failed_csr_and_signer_failure(api, pem):
    api.signer_denies = True
    with pytest.raises(cc.CertificateError, match=r'is Failed \(SignerValidationFailure: invalid usage'):
        run(api, params(pem))
    # a second run sees the Failed condition at once and changes nothing
    api.calls = []
    with pytest.raises(cc.CertificateError, match='The signer could not sign it'):
        run(api, params(pem))
    assert set(api.verbs()) == {'get'}


def test_create_refused_by_the_api_names_its_reason(api, pem):
    api.refuse['create'] = ('Error from server (Forbidden): error when creating "STDIN": certificatesigningrequests.'
                            'certificates.k8s.io is forbidden: User "bob" cannot create resource\n')
    with pytest.raises(cc.CertificateError) as e:
        run(api, params(pem))
    assert 'the API refused to create CertificateSigningRequest baremetal-k3s-user-alice (Forbidden)' in e.value.msg
    assert 'User "bob" cannot create resource' in e.value.msg
    assert ('csr', 'baremetal-k3s-user-alice') not in api.objects


def test_invalid_request_refused_by_the_api(api, pem):
    # 600 passes our check; the fake API refuses 600 too for this test, as a stand-in for any Invalid answer
    api.refuse['create'] = ('The CertificateSigningRequest "baremetal-k3s-user-alice" is invalid: spec.usages[0]: '
                            'Unsupported value: "client auth"\n')
    with pytest.raises(cc.CertificateError, match=r'refused to create .*: The CertificateSigningRequest .* is invalid: spec.usages'):
        run(api, params(pem))


def test_timeout_waiting_for_the_signer(api, pem):
    api.sign_after = None
    node = Node()
    with pytest.raises(cc.CertificateError, match='approved but got no certificate within 5 s'):
        run(api, params(pem, timeout=5), node=node)
    assert sum(node.clock.sleeps) == 5
    # the calls before the wait may take 30 s each; those while waiting no more than what is left of the 5 s
    waiting = api.timeouts[api.verbs().index('certificate') + 1:]
    assert api.timeouts[0] == 30 and waiting and max(waiting) <= 5 and waiting[-1] == 1


def test_same_request_pending_is_approved(api, pem):
    api.put_csr('baremetal-k3s-user-alice', pem)
    facts = run(api, params(pem))
    assert facts['csr_action'] == 'approved' and facts['changed'] and facts['certificate'] == cert_pem(1)
    assert [c[0] for c in api.writes()] == ['certificate', 'create'] and 'CertificateSigningRequest' not in api.writes()[1][2]


def test_check_mode_writes_nothing(api, pem):
    facts = run(api, params(pem), check_mode=True)
    assert facts['changed'] and facts['csr_action'] == 'created' and facts['certificate'] == ''
    assert facts['bindings'][0]['action'] == 'created'
    assert api.objects == {} and set(api.verbs()) == {'get'}
    api.put_csr('baremetal-k3s-user-alice', make_csr())
    assert run(api, params(pem), check_mode=True)['csr_action'] == 'replaced' and api.objects[
        ('csr', 'baremetal-k3s-user-alice')]['spec']['request'] != base64.b64encode(pem.encode()).decode()
    assert set(api.verbs()) == {'get'}


# -- the bindings ------------------------------------------------------------------------------------------
def test_bindings_only_without_csr(api):
    facts = run(api, params(None, groups=['ops', 'dev'], cluster_role='view', name=None))
    assert facts['csr_action'] == 'none' and facts['certificate'] == '' and facts['changed']
    assert sorted(n for k, n in api.objects) == ['baremetal-k3s:user:view:dev', 'baremetal-k3s:user:view:ops']
    assert not run(api, params(None, groups=['ops', 'dev'], cluster_role='view'))['changed']


def test_binding_not_ours_is_refused(api):
    api.put_binding('cluster-admin', 'cluster-admins', labels={})
    before = copy.deepcopy(api.objects)
    with pytest.raises(cc.CertificateError, match='exists and was not created by this collection'):
        run(api, params(None))
    assert api.objects == before


def test_binding_subjects_set_back_and_role_recreated(api):
    api.put_binding('cluster-admin', 'cluster-admins', subjects=[{'kind': 'User', 'name': 'mallory', 'apiGroup': 'rbac.authorization.k8s.io'}])
    facts = run(api, params(None))
    assert facts['bindings'][0]['action'] == 'updated'
    assert api.objects[('clusterrolebinding', 'baremetal-k3s:user:cluster-admin:cluster-admins')]['subjects'][0]['name'] == 'cluster-admins'
    stored = api.objects[('clusterrolebinding', 'baremetal-k3s:user:cluster-admin:cluster-admins')]
    stored['roleRef']['name'] = 'view'
    facts = run(api, params(None))
    assert facts['bindings'][0]['action'] == 'recreated' and 'delete' in api.verbs()
    assert api.objects[('clusterrolebinding', 'baremetal-k3s:user:cluster-admin:cluster-admins')]['roleRef']['name'] == 'cluster-admin'


def test_no_cluster_role_no_binding(api, pem):
    facts = run(api, params(pem, cluster_role=''))
    assert facts['bindings'] == [] and not any(k == 'clusterrolebinding' for k, n in api.objects)


# -- validation: nothing runs ---------------------------------------------------------------------------------
@pytest.mark.parametrize('change, message', [
    ({'groups': ['system:masters']}, 'group system:masters cannot be requested'),
    ({'groups': ['a/b']}, 'cannot be part of a Kubernetes object name'),
    ({'groups': ['ops', 'ops']}, 'lists a group twice'),
    ({'groups': [' ops']}, 'blanks around it'),
    ({'name': 'Alice_1'}, 'is not a valid CertificateSigningRequest name'),
    ({'name': ''}, 'is not a valid CertificateSigningRequest name'),
    ({'expiration_seconds': 599}, 'expiration_seconds must be at least 600'),
    ({'usages': ['client-auth']}, 'not: client-auth'),
    ({'usages': []}, 'got none'),
    ({'signer_name': 'kube-apiserver-client'}, 'is not a signer name'),
    ({'csr': 'hello'}, 'must be a PEM certificate signing request'),
    ({'csr': '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n'}, 'does not hold a certificate signing request that can be read'),
    ({'kubectl': []}, 'kubectl must be the kubectl command'),
    ({'timeout': -1}, 'timeout must be 0 or more'),
    ({'cluster_role': 'a/b'}, 'cluster role'),
])
def test_bad_input_fails_before_kubectl(api, pem, change, message):
    p = params(pem)
    p.update(change)
    with pytest.raises(cc.CertificateError, match=message):
        run(api, p)
    assert api.calls == []


def test_csr_asking_for_system_masters_is_refused(api):
    with pytest.raises(cc.CertificateError, match='asks for the group .O. system:masters'):
        run(api, params(make_csr(orgs=('ops', 'system:masters')), groups=['ops']))
    assert api.calls == []


def test_missing_kubectl_or_kubeconfig(api, pem):
    with pytest.raises(cc.CertificateError, match='kubectl /usr/local/bin/k3s was not found'):
        run(api, params(pem), node=Node(files=(KUBECONFIG,)))
    with pytest.raises(cc.CertificateError, match='kubeconfig /etc/rancher/k3s/k3s.yaml does not exist'):
        run(api, params(pem), node=Node(files=(KUBECTL[0],)))
    assert api.calls == []


def test_csr_subject_parsing():
    der = cc.csr_der(make_csr('bob', ('a', 'b')))
    assert cc.csr_subject(der) == {'cn': ['bob'], 'o': ['a', 'b']}
    assert cc.same_request(base64.b64encode(make_csr('bob').encode()).decode(), der) is False
    assert cc.same_request('!!notbase64', der) is False


def test_name_without_csr_only_reads_and_stops_at_a_denial(api, pem):
    # no object: fine, nothing written but the binding
    facts = run(api, params(None, cluster_role=''))
    assert facts['csr_action'] == 'none' and not facts['changed'] and api.verbs() == ['get']
    assert api.calls[0][1][:3] == ['get', 'csr', 'baremetal-k3s-user-alice']
    # an issued object of ours is left alone
    api.put_csr('baremetal-k3s-user-alice', pem, certificate=cert_pem(5), conditions=[{'type': 'Approved', 'status': 'True'}])
    before = copy.deepcopy(api.objects)
    assert not run(api, params(None, cluster_role=''))['changed'] and api.objects == before
    # a denied one stops the caller, before the bindings are looked at
    api.put_csr('baremetal-k3s-user-alice', pem, conditions=[{'type': 'Denied', 'status': 'True', 'reason': 'KubectlDeny'}])
    api.calls = []
    with pytest.raises(cc.CertificateError, match='is Denied .KubectlDeny'):
        run(api, params(None))
    assert api.verbs() == ['get'] and not any(k == 'clusterrolebinding' for k, n in api.objects)
