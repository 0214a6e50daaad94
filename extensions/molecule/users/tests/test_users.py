# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""users: alice's certificate, signed by the real kube-controller-manager, proven against the real API server.

The key, certificate, CA and kubeconfig are on the controller (this machine), in the scenario's
ephemeral directory; the API server is reached at the container's address on the Docker bridge,
with alice's own files, as kubectl would.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import ssl
import stat
import urllib.error
import urllib.request

import yaml

from cryptography import x509

KUBE = os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'kube')
KEY = os.path.join(KUBE, 'k3s-alice.key')
CERT = os.path.join(KUBE, 'k3s-alice.crt')
CA = os.path.join(KUBE, 'k3s-ca.crt')
KUBECONFIG = os.path.join(KUBE, 'k3s-alice.kubeconfig')
SIDE_EFFECT = os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'side_effect.json')
TLS = '/var/lib/rancher/k3s/server/tls'


def kubectl_json(host, *args):
    return json.loads(host.check_output('k3s kubectl %s -o json' % ' '.join(args)))


def server_url(host):
    address = host.ansible('setup', 'gather_subset=!all,!min,network filter=ansible_default_ipv4', check=False)
    return 'https://%s:6443' % address['ansible_facts']['ansible_default_ipv4']['address']


def as_alice(url, method='GET', body=None):
    """(HTTP status, JSON) of a request with alice's certificate and key, trusting only the CA the role wrote."""
    context = ssl.create_default_context(cafile=CA)
    context.load_cert_chain(CERT, KEY)
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={'Content-Type': 'application/json'})
    try:
        with urllib.request.urlopen(request, context=context, timeout=20) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b'{}')


def test_files_are_private():
    assert stat.S_IMODE(os.stat(KUBE).st_mode) == 0o700
    for path in (KEY, CERT, CA, KUBECONFIG):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path
    assert sorted(os.listdir(KUBE)) == ['k3s-alice.crt', 'k3s-alice.key', 'k3s-alice.kubeconfig', 'k3s-ca.crt']


def test_kubeconfig_names_the_files(host):
    config = yaml.safe_load(open(KUBECONFIG, encoding='utf-8'))
    (cluster,) = config['clusters']
    (user,) = config['users']
    assert cluster['cluster'] == {'server': server_url(host), 'certificate-authority': CA}
    assert user['user'] == {'client-certificate': CERT, 'client-key': KEY}
    assert config['current-context'] == 'alice@k3s' == user['name']
    assert host.file(TLS + '/server-ca.crt').content_string == open(CA, encoding='ascii').read()


def test_certificate_signed_by_the_controller_manager_with_the_client_ca(host):
    csr = kubectl_json(host, 'get', 'csr', 'baremetal-k3s-user-alice')
    assert csr['spec']['signerName'] == 'kubernetes.io/kube-apiserver-client'
    assert csr['spec']['usages'] == ['client auth']
    assert csr['metadata']['labels'] == {'app.kubernetes.io/managed-by': 'baremetal.k3s'}
    assert [c['type'] for c in csr['status']['conditions']] == ['Approved']
    with open(CERT, 'rb') as f:
        written = f.read()
    assert base64.b64decode(csr['status']['certificate']) == written
    cert = x509.load_pem_x509_certificate(written)
    client_ca = x509.load_pem_x509_certificate(host.file(TLS + '/client-ca.crt').content)
    server_ca = x509.load_pem_x509_certificate(host.file(TLS + '/server-ca.crt').content)
    cert.verify_directly_issued_by(client_ca)  # raises unless the client CA's key signed it
    assert cert.issuer == client_ca.subject != server_ca.subject
    names = {(a.oid.dotted_string, a.value) for a in cert.subject}
    assert names == {('2.5.4.3', 'alice'), ('2.5.4.10', 'cluster-admins'), ('2.5.4.10', 'ops'),
                     ('2.5.4.7', 'Berlin'), ('2.5.4.6', 'DE')}
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]
    # side_effect renewed it for 20 days (the signer's duration is the asked one, under its one-year cap)
    days = (cert.not_valid_after_utc - cert.not_valid_before_utc).days
    assert 19 <= days <= 20


def test_selfsubjectreview_from_the_controller(host):
    status, review = as_alice(server_url(host) + '/apis/authentication.k8s.io/v1/selfsubjectreviews', 'POST',
                              {'apiVersion': 'authentication.k8s.io/v1', 'kind': 'SelfSubjectReview'})
    assert status == 201, review
    info = review['status']['userInfo']
    assert info['username'] == 'alice'
    assert set(info['groups']) == {'cluster-admins', 'ops', 'system:authenticated'}


def test_bound_group_lists_nodes(host):
    status, nodes = as_alice(server_url(host) + '/api/v1/nodes')
    assert status == 200, nodes
    assert [n['metadata']['name'] for n in nodes['items']] == [host.check_output('hostname').lower()]
    for group in ('cluster-admins', 'ops'):
        binding = kubectl_json(host, 'get', 'clusterrolebinding', 'baremetal-k3s:user:cluster-admin:' + group)
        assert binding['roleRef']['name'] == 'cluster-admin'
        assert binding['subjects'] == [{'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'Group', 'name': group}]
        assert binding['metadata']['labels'] == {'app.kubernetes.io/managed-by': 'baremetal.k3s'}


def test_unbound_identity_cannot_list_nodes(host):
    """The node list is RBAC's doing: the same API refuses a user of the cluster without the binding."""
    status, dummy = as_alice(server_url(host) + '/api/v1/namespaces/kube-system/secrets/none-such')
    assert status == 404  # cluster-admin may look: the answer is "not found", not "forbidden"
    host.check_output('k3s kubectl delete clusterrolebinding baremetal-k3s:user:cluster-admin:cluster-admins '
                      'baremetal-k3s:user:cluster-admin:ops')
    try:
        status, answer = as_alice(server_url(host) + '/api/v1/nodes')
        assert status == 403 and answer['reason'] == 'Forbidden'
    finally:
        host.check_output('k3s kubectl create clusterrolebinding baremetal-k3s:user:cluster-admin:cluster-admins '
                          '--clusterrole=cluster-admin --group=cluster-admins')
        host.check_output('k3s kubectl label clusterrolebinding baremetal-k3s:user:cluster-admin:cluster-admins '
                          'app.kubernetes.io/managed-by=baremetal.k3s')
        host.check_output('k3s kubectl create clusterrolebinding baremetal-k3s:user:cluster-admin:ops '
                          '--clusterrole=cluster-admin --group=ops')
        host.check_output('k3s kubectl label clusterrolebinding baremetal-k3s:user:cluster-admin:ops '
                          'app.kubernetes.io/managed-by=baremetal.k3s')


def test_the_defaults_bind_no_role():
    """Converge named no cluster role: no binding was made, and the API said alice may not list nodes."""
    with open(SIDE_EFFECT, encoding='utf-8') as f:
        seen = json.load(f)
    assert seen['default_bindings'] == '' and seen['default_can_list_nodes'] == 'no', seen


def test_bad_inputs_failed_and_changed_nothing(host):
    with open(SIDE_EFFECT, encoding='utf-8') as f:
        seen = json.load(f)
    assert 'holds a key of type RSA' in seen['rsa'] and 'Nothing was changed' in seen['rsa']
    assert 'must not hold system:masters' in seen['masters']
    assert 'CertificateSigningRequest baremetal-k3s-user-mallory is Denied (' in seen['denied']
    assert 'k3s_user_name is empty' in seen['empty']
    assert seen['renewed_serial'] != seen['converged_serial']
    bob = os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'bob')
    assert os.listdir(bob) == ['k3s-bob.key']
    with open(os.path.join(bob, 'k3s-bob.key'), 'rb') as f:
        key = f.read()
    assert hashlib.sha256(key).hexdigest() == seen['rsa_sha256'] and b'PRIVATE KEY' in key
    for never_made in ('eve', 'mallory', 'nobody'):  # refused before anything was made on the key host
        assert not os.path.exists(os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], never_made)), never_made
    mallory = kubectl_json(host, 'get', 'csr', 'baremetal-k3s-user-mallory')
    assert [c['type'] for c in mallory['status']['conditions']] == ['Denied'] and 'certificate' not in mallory['status']
