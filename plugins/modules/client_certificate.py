#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: client_certificate
short_description: Have the cluster sign a client certificate request, and bind the request's groups to a cluster role
version_added: 0.1.0
description:
  - Runs on a server node and talks to the API only through the platform's own kubectl (C(k3s kubectl) with the admin
    kubeconfig, RKE2's or kubeadm's kubectl), as M(baremetal.k3s.readiness_configmap) does. No Kubernetes client library
    is needed on the node, and the private key never comes near it - only the certificate signing request (CSR) does.
  - With O(csr), looks up the CertificateSigningRequest object O(name). When it holds the same request and is issued,
    returns its certificate and changes nothing. When it holds another request (a renewal, or a run that stopped before
    the certificate came) and carries the label C(app.kubernetes.io/managed-by=baremetal.k3s), deletes it and creates it
    again. Otherwise creates it (signer O(signer_name), O(expiration_seconds), O(usages), that label), approves it
    (C(kubectl certificate approve)) and waits until the signer puts the certificate in C(status.certificate).
  - A CSR object with the condition C(Denied) or C(Failed) is never replaced - somebody took that decision. The module
    fails with the condition's reason and message; delete the object to ask again. A request the API refuses to create
    fails with the API's reason.
  - With O(cluster_role), makes sure that every group of O(groups) is bound to it by a ClusterRoleBinding named
    C(baremetal-k3s:user:<cluster_role>:<group>) with that label - created when missing, its subjects set back when they
    differ. A binding of that name without the label is not ours and is refused, never changed. Bindings of groups no
    longer given are left in place (C(kubectl delete clusterrolebinding -l app.kubernetes.io/managed-by=baremetal.k3s)
    lists and removes them all).
  - The certificate is returned as the API has it. Checking it (subject, key, expiry) belongs to the host that holds the
    key (the role C(baremetal.k3s.k3s_user) does it with C(community.crypto)).
author:
  - baremetal.k3s contributors (@baremetal)
requirements:
  - the platform's kubectl on the node, and a kubeconfig that may create, approve and delete certificatesigningrequests
    and create and replace clusterrolebindings (the admin kubeconfig)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._kubectl
  - baremetal.k3s._kubectl.KUBECTL
attributes:
  check_mode:
    support: full
    details: The CSR object and the bindings are read; nothing is created, approved, deleted or replaced, and no certificate
      is returned unless one is already issued for the same request.
  diff_mode:
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: posix
options:
  csr:
    description:
      - The certificate signing request, in PEM (C(-----BEGIN CERTIFICATE REQUEST-----)), as
        M(community.crypto.openssl_csr_pipe) returns it.
      - Not given - no CSR object is written; only the bindings are seen to (and O(name), when given, is checked).
      - A request for the group (O) C(system:masters) is refused.
    type: str
  name:
    description:
      - Name of the CertificateSigningRequest object, a DNS subdomain (lower-case letters, digits, C(-), C(.)).
      - Required with O(csr).
      - Without O(csr), the object is only read - one with the condition C(Denied) or C(Failed) fails the task, so that a
        caller stops before it makes a key for a request that would be refused; a missing object is fine.
    type: str
  signer_name:
    description: The signer (C(spec.signerName)). C(kubernetes.io/kube-apiserver-client) issues client certificates the API
      server accepts; C(kube-controller-manager) signs them with the cluster's client CA.
    type: str
    default: kubernetes.io/kube-apiserver-client
  expiration_seconds:
    description:
      - The validity asked for (C(spec.expirationSeconds)), at least V(600). The signer may give less - at most its
        C(--cluster-signing-duration), one year by default.
    type: int
    default: 31536000
  usages:
    description: The key usages asked for (C(spec.usages)).
    type: list
    elements: str
    default: [client auth]
  timeout:
    description: Seconds to wait, at most, for the signer to issue the certificate after the approval.
    type: int
    default: 60
  groups:
    description:
      - The groups to bind to O(cluster_role), usually the organizations (O) of the request. C(system:masters) is refused.
    type: list
    elements: str
    default: []
  cluster_role:
    description:
      - The ClusterRole to bind every group of O(groups) to, for example V(cluster-admin) or V(view).
      - Empty - no binding is read or written.
    type: str
    default: ""
notes:
  - Each kubectl call is bounded by C(--request-timeout 30s) (less while waiting, so that O(timeout) holds).
  - An issued CSR object is kept; C(kube-controller-manager) removes issued ones after an hour. Within that time a rerun
    with the same request returns the same certificate.
seealso:
  - module: baremetal.k3s.k3s_info
  - module: community.crypto.openssl_csr_pipe
  - name: Certificates and Certificate Signing Requests
    description: The CSR API, its signers and conditions.
    link: https://kubernetes.io/docs/reference/access-authn-authz/certificate-signing-requests/
'''

EXAMPLES = r'''
- name: Read how k3s runs here
  baremetal.k3s.k3s_info:
  register: k3s

- name: Have the cluster sign alice's request and bind her group to cluster-admin
  baremetal.k3s.client_certificate:
    kubectl: "{{ k3s.kubectl }}"
    kubeconfig: "{{ k3s.admin_kubeconfig }}"
    csr: "{{ alice_csr.csr }}"
    name: baremetal-k3s-user-alice
    expiration_seconds: 2592000
    groups: [cluster-admins]
    cluster_role: cluster-admin
  register: signed

- name: Only make sure that the group "auditors" may read everything
  baremetal.k3s.client_certificate:
    kubectl: [/usr/local/bin/k3s, kubectl]
    kubeconfig: /etc/rancher/k3s/k3s.yaml
    groups: [auditors]
    cluster_role: view
'''

RETURN = r'''
certificate:
  description:
    - The issued certificate, in PEM; empty without O(csr), and in check mode when none is issued yet.
  returned: success
  type: str
  sample: "-----BEGIN CERTIFICATE-----\nMIIB..."
csr_name:
  description: O(name).
  returned: success
  type: str
  sample: baremetal-k3s-user-alice
csr_action:
  description:
    - What happened to the CSR object - V(created), V(replaced) (it held another request), V(approved) (it held this
      request, not yet approved), V(unchanged) (this request, already issued or approved) or V(none) (no O(csr)).
    - In check mode, what would happen.
  returned: success
  type: str
  sample: created
bindings:
  description: One entry per group when O(cluster_role) is given.
  returned: success
  type: list
  elements: dict
  contains:
    name:
      description: The ClusterRoleBinding's name.
      type: str
    group:
      description: The group it binds.
      type: str
    cluster_role:
      description: The ClusterRole it binds to.
      type: str
    action:
      description: V(created), V(updated) (its subjects were set back), V(recreated) (its roleRef differed) or V(unchanged).
      type: str
  sample: [{name: "baremetal-k3s:user:cluster-admin:cluster-admins", group: cluster-admins, cluster_role: cluster-admin,
            action: created}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _client_certificate as client_certificate
from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils import _kubectl

ARGUMENT_SPEC = dict(
    _kubectl.OPTIONS,
    csr=dict(type='str'),
    name=dict(type='str'),
    signer_name=dict(type='str', default=client_certificate.DEFAULT_SIGNER),
    expiration_seconds=dict(type='int', default=31536000),
    usages=dict(type='list', elements='str', default=['client auth']),
    timeout=dict(type='int', default=60),
    groups=dict(type='list', elements='str', default=[]),
    cluster_role=dict(type='str', default=''),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                           required_by={'csr': 'name'})
    view = _io.node_view(module)
    try:
        plan = client_certificate.plan(view, view.run, module.params, check_mode=module.check_mode)
    except PlanError as e:
        module.fail_json(msg=e.msg, **e.details)
    changed = plan.facts.pop('changed')
    result = _io.report(module, plan)
    result['changed'] = changed
    module.exit_json(**result)


if __name__ == '__main__':
    main()
