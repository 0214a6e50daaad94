# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.client_certificate``: a client certificate from the cluster's CA, and RBAC for its groups.

Everything goes through the platform's own kubectl on a server node (``k3s kubectl`` with the
admin kubeconfig), reached through a *runner*: ``runner(argv, stdin) -> (rc, stdout, stderr)``.

The CertificateSigningRequest (CSR) object:

1. ``kubectl get csr NAME -o json --ignore-not-found``;
2. a ``Denied`` or ``Failed`` condition is a decision somebody (or the signer) took: it is
   reported, never overridden;
3. the same request (``spec.request`` holds the same PEM) that is issued: its certificate is
   returned, nothing changes;
4. another request under the name (a renewal, or a run that stopped half-way): our object
   (label ``app.kubernetes.io/managed-by=baremetal.k3s``) is deleted and created again; an
   object without the label is somebody else's and is refused;
5. ``kubectl create`` (the API's refusal is reported with its reason), ``kubectl certificate
   approve``, then ``kubectl get`` every second until ``status.certificate`` is set (the
   signer of ``kube-controller-manager`` signs within a second or two), bounded by a timeout.

The ClusterRoleBindings: one per group, named ``baremetal-k3s:user:<cluster role>:<group>``,
subject the group, labelled as ours; created when missing, replaced when ours differs, and a
binding of that name without our label is refused rather than touched.

Without a CSR, a ``name`` is only looked up: a Denied or Failed object fails, so that a caller
(the role) stops before it makes a key for a request that is refused anyway.

Pure logic, no Ansible import; waiting uses the view's clock.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re

from ansible_collections.baremetal.k3s.plugins.module_utils import _kubectl
from ansible_collections.baremetal.k3s.plugins.module_utils import _names
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Plan, PlanError

REQUEST_TIMEOUT = 30  # seconds, at most, that one kubectl call may take
POLL_INTERVAL = 1.0
MANAGED_BY = ('app.kubernetes.io/managed-by', 'baremetal.k3s')
BINDING_PREFIX = 'baremetal-k3s:user:'
DEFAULT_SIGNER = 'kubernetes.io/kube-apiserver-client'
MIN_EXPIRATION = 600  # the API refuses a shorter spec.expirationSeconds
FORBIDDEN_GROUPS = ('system:masters',)
KEY_USAGES = ('signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement',
              'data encipherment', 'cert sign', 'crl sign', 'encipher only', 'decipher only', 'any',
              'server auth', 'client auth', 'code signing', 'email protection', 's/mime', 'ipsec end system',
              'ipsec tunnel', 'ipsec user', 'timestamping', 'ocsp signing', 'microsoft sgc', 'netscape sgc')

_SIGNER = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+/[A-Za-z0-9._-]+$')
_PEM = re.compile(r'-----BEGIN (NEW )?CERTIFICATE REQUEST-----\s*([A-Za-z0-9+/=\s]+?)\s*-----END (NEW )?CERTIFICATE REQUEST-----')
_CERT_PEM = re.compile(r'-----BEGIN CERTIFICATE-----')
_CONTROL = re.compile(r'[\x00-\x1f\x7f]')
OID_CN = b'\x55\x04\x03'
OID_O = b'\x55\x04\x0a'


class CertificateError(PlanError):
    """Bad input, a refusal of the API, or a CSR somebody denied; ``msg`` says what to do."""


# -- the CSR's DER, as far as its subject ------------------------------------------------------------
def _der(data, pos):
    """(tag, content start, content end) of the DER element at ``pos``; ValueError on a truncated one."""
    if pos + 2 > len(data):
        raise ValueError('truncated')
    tag, length = data[pos], data[pos + 1]
    pos += 2
    if length & 0x80:
        count = length & 0x7f
        if count == 0 or count > 4 or pos + count > len(data):
            raise ValueError('bad length')
        length = int.from_bytes(data[pos:pos + count], 'big')
        pos += count
    if pos + length > len(data):
        raise ValueError('truncated')
    return tag, pos, pos + length


def _children(data, start, end):
    out = []
    while start < end:
        tag, cstart, cend = _der(data, start)
        out.append((tag, cstart, cend))
        start = cend
    return out


def csr_der(pem):
    """The DER bytes of a PEM ``CERTIFICATE REQUEST``; CertificateError when ``pem`` holds none."""
    m = _PEM.search(pem or '')
    if not m:
        raise CertificateError('csr must be a PEM certificate signing request ("-----BEGIN CERTIFICATE REQUEST-----"), '
                               'as community.crypto.openssl_csr_pipe returns it; got %r' % ((pem or '')[:60],))
    try:
        return base64.b64decode(''.join(m.group(2).split()), validate=True)
    except (binascii.Error, ValueError) as e:
        raise CertificateError('csr is not valid base64 between its PEM lines (%s): give the CSR unchanged' % e) from e


def csr_subject(der):
    """``{'cn': [...], 'o': [...]}`` of a DER CertificationRequest; CertificateError when it is not one."""
    try:
        tag, start, end = _der(der, 0)
        info = _children(der, start, end)[0]
        fields = _children(der, info[1], info[2])
        if tag != 0x30 or info[0] != 0x30 or fields[0][0] != 0x02 or fields[1][0] != 0x30:
            raise ValueError('not a CertificationRequest')
        subject = {'cn': [], 'o': []}
        for rdn in _children(der, fields[1][1], fields[1][2]):
            for atv in _children(der, rdn[1], rdn[2]):
                oid, value = _children(der, atv[1], atv[2])[:2]
                key = {OID_CN: 'cn', OID_O: 'o'}.get(der[oid[1]:oid[2]])
                if key:
                    raw = der[value[1]:value[2]]
                    subject[key].append(raw.decode('utf-16-be' if value[0] == 0x1e else 'utf-8', 'replace'))
        return subject
    except (ValueError, IndexError) as e:
        raise CertificateError('csr does not hold a certificate signing request that can be read (%s): give the CSR '
                               'openssl_csr_pipe returned, unchanged' % e) from e


def same_request(obj_request, der):
    """Whether ``spec.request`` of a CSR object (base64 of a PEM) is the request ``der``."""
    try:
        pem = base64.b64decode(obj_request or '').decode('ascii', 'replace')
        return csr_der(pem) == der
    except (CertificateError, binascii.Error, ValueError):
        return False


# -- validation ----------------------------------------------------------------------------------------
def binding_name(cluster_role, group):
    return '%s%s:%s' % (BINDING_PREFIX, cluster_role, group)


def _check_rbac_name(what, value, option):
    if isinstance(value, str) and _CONTROL.search(value):
        raise CertificateError('%s %s %r holds the control character %r: it cannot be part of a Kubernetes object name; '
                               'change it' % (option, what, value, _CONTROL.search(value).group(0)))
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise CertificateError('%s %s %r is empty or has blanks around it; give it without them' % (option, what, value))
    if '/' in value or '%' in value or value in ('.', '..'):
        raise CertificateError('%s %s %r cannot be part of a Kubernetes object name ("/", "%%", control characters, "." '
                               'and ".." are refused); change it' % (option, what, value))


def validate(params):
    """The options, checked before kubectl ever runs; returns the CSR's DER (None without csr)."""
    kubectl = params.get('kubectl') or []
    if not kubectl or not all(isinstance(a, str) and a for a in kubectl):
        raise CertificateError('kubectl must be the kubectl command as a list of non-empty words, for example '
                               '[/usr/local/bin/k3s, kubectl] (k3s_info returns it as "kubectl"); got %r' % (kubectl,))
    groups = params.get('groups') or []
    for index, group in enumerate(groups):
        if group in FORBIDDEN_GROUPS:
            raise CertificateError('group %s cannot be requested: the kube-apiserver-client signer refuses it and it would '
                                   'bypass RBAC. Request a group of your own (for example cluster-admins) and bind it to '
                                   'the cluster role cluster-admin (the option cluster_role).' % group)
        _check_rbac_name('group', group, 'groups[%d]' % index)
    if len(set(groups)) != len(groups):
        raise CertificateError('groups lists a group twice (%s); give each once' % ', '.join(groups))
    role = params.get('cluster_role') or ''
    if role:
        _check_rbac_name('cluster role', role, 'cluster_role')
        for group in groups:
            if len(binding_name(role, group)) > 253:
                raise CertificateError('the ClusterRoleBinding name %s is longer than 253 characters; use a shorter group '
                                       'or cluster role name' % binding_name(role, group))
    if params.get('timeout') is None or params['timeout'] < 0:
        raise CertificateError('timeout must be 0 or more seconds, not %r' % (params.get('timeout'),))
    name = params.get('name')
    if params.get('csr') or name is not None:
        _names.check('name', name, _names.DNS_SUBDOMAIN, CertificateError, what='a valid CertificateSigningRequest name')
    if not params.get('csr'):
        return None
    signer = params.get('signer_name') or ''
    if not _SIGNER.fullmatch(signer):
        raise CertificateError('signer_name %r is not a signer name (a domain, "/", a name, such as %s)'
                               % (signer, DEFAULT_SIGNER))
    seconds = params.get('expiration_seconds')
    if seconds is None or seconds < MIN_EXPIRATION:
        raise CertificateError('expiration_seconds must be at least %d (the API refuses less), not %r'
                               % (MIN_EXPIRATION, seconds))
    usages = params.get('usages') or []
    bad = [u for u in usages if u not in KEY_USAGES]
    if not usages or bad:
        raise CertificateError('usages must be key usages the API knows (%s); %s' % (
            ', '.join(KEY_USAGES), 'got none' if not usages else 'not: %s' % ', '.join(bad)))
    der = csr_der(params['csr'])
    subject = csr_subject(der)
    asked = [o for o in subject['o'] if o in FORBIDDEN_GROUPS]
    if asked:
        raise CertificateError('the CSR asks for the group (O) %s, which cannot be requested; make the CSR without it'
                               % asked[0])
    return der


# -- conditions ---------------------------------------------------------------------------------------
def blocking_condition(obj):
    """The first ``Denied`` or ``Failed`` condition (status not False) of a CSR object, or None."""
    for cond in ((obj.get('status') or {}).get('conditions') or []):
        if isinstance(cond, dict) and cond.get('type') in ('Denied', 'Failed') and cond.get('status', 'True') != 'False':
            return cond
    return None


def approved(obj):
    return any(isinstance(c, dict) and c.get('type') == 'Approved' and c.get('status', 'True') != 'False'
               for c in ((obj.get('status') or {}).get('conditions') or []))


def issued(obj):
    """The PEM certificate of a CSR object ('' while there is none)."""
    data = (obj.get('status') or {}).get('certificate') or ''
    if not data:
        return ''
    try:
        pem = base64.b64decode(data).decode('ascii')
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return ''
    return pem if _CERT_PEM.search(pem) else ''


def _ours(obj):
    return ((obj.get('metadata') or {}).get('labels') or {}).get(MANAGED_BY[0]) == MANAGED_BY[1]


# -- kubectl --------------------------------------------------------------------------------------------
class Api:
    """The kubectl commands this module runs; errors come back with the API's reason."""

    def __init__(self, runner, params, clock):
        self.runner = runner
        self.kubectl = list(params['kubectl'])
        self.kubeconfig = params.get('kubeconfig')
        self.clock = clock
        self.deadline = None

    def _argv(self, args):
        argv = list(self.kubectl)
        if self.kubeconfig:
            argv += ['--kubeconfig', self.kubeconfig]
        seconds = REQUEST_TIMEOUT
        if self.deadline is not None:
            seconds = max(1, min(REQUEST_TIMEOUT, int(math.ceil(self.deadline - self.clock.monotonic()))))
        return argv + ['--request-timeout', '%ds' % seconds] + list(args)

    def run(self, args, stdin=None):
        argv = self._argv(args)
        rc, out, err = self.runner(argv, stdin)
        if rc is None:
            raise CertificateError('kubectl %s was not found on this node. Give the platform\'s kubectl: k3s_info '
                                   'returns it as "kubectl".' % self.kubectl[0])
        return rc, out or '', (err or '').strip(), argv

    def failed(self, argv, rc, err, what):
        reason, message = _kubectl.api_reason(err)
        return CertificateError('%s: %s failed (exit %s)%s: %s. Check that the API server answers and that the '
                                'kubeconfig (%s) may manage certificatesigningrequests and clusterrolebindings.'
                                % (what, _kubectl.quote(argv), rc, ' (%s)' % reason if reason else '', message or 'no error output',
                                   self.kubeconfig or "kubectl's default"))

    def get(self, kind, name):
        rc, out, err, argv = self.run(['get', kind, name, '-o', 'json', '--ignore-not-found'])
        if rc != 0:
            raise self.failed(argv, rc, err, 'reading %s %s' % (kind, name))
        if not out.strip():
            return None
        try:
            obj = json.loads(out)
        except ValueError as e:
            raise CertificateError('%s printed no JSON (%s): %r' % (_kubectl.quote(argv), e, out[:200])) from e
        if not isinstance(obj, dict):
            raise CertificateError('%s printed no object: %r' % (_kubectl.quote(argv), out[:200]))
        return obj

    def write(self, verb, obj, what):
        rc, dummy, err, argv = self.run([verb, '-f', '-'], json.dumps(obj, sort_keys=True))
        if rc != 0:
            reason, message = _kubectl.api_reason(err)
            raise CertificateError('the API refused to %s %s%s: %s. Nothing else was changed; fix what it names and run '
                                   'again.' % (verb, what, ' (%s)' % reason if reason else '', message or 'exit %s' % rc))

    def delete(self, kind, name):
        rc, dummy, err, argv = self.run(['delete', kind, name, '--ignore-not-found', '--wait=false'])
        if rc != 0:
            raise self.failed(argv, rc, err, 'deleting %s %s' % (kind, name))

    def approve(self, name):
        rc, dummy, err, argv = self.run(['certificate', 'approve', name])
        if rc != 0:
            reason, message = _kubectl.api_reason(err)
            raise CertificateError('the API refused to approve CertificateSigningRequest %s%s: %s. The kubeconfig (%s) '
                                   'needs the verb "update" on certificatesigningrequests/approval and "approve" on '
                                   'the signer (resource signers).'
                                   % (name, ' (%s)' % reason if reason else '', message or 'exit %s' % rc,
                                      self.kubeconfig or "kubectl's default"))


# -- the CSR ----------------------------------------------------------------------------------------------
def _denied(name, cond):
    kind = cond.get('type')
    text = ': '.join(p for p in (cond.get('reason') or '', cond.get('message') or '') if p) or 'no reason given'
    return CertificateError('CertificateSigningRequest %s is %s (%s). %s A %s request is not replaced by this module: '
                            'when a new request is wanted, delete it (kubectl delete csr %s) and run again.'
                            % (name, kind, text, 'Somebody denied it.' if kind == 'Denied' else
                               'The signer could not sign it.', kind.lower(), name))


def new_csr(params, pem):
    return {
        'apiVersion': 'certificates.k8s.io/v1', 'kind': 'CertificateSigningRequest',
        'metadata': {'name': params['name'], 'labels': dict([MANAGED_BY])},
        'spec': {
            'request': base64.b64encode(pem.encode('ascii')).decode('ascii'),
            'signerName': params['signer_name'],
            'expirationSeconds': int(params['expiration_seconds']),
            'usages': list(params['usages']),
        },
    }


def ensure_csr(api, params, der, check_mode):
    """``(action, certificate PEM)``; action is ``unchanged``, ``created``, ``replaced`` or ``approved``."""
    name = params['name']
    current = api.get('csr', name)
    action = 'created'
    if current is not None:
        cond = blocking_condition(current)
        if cond is not None:
            raise _denied(name, cond)
        if same_request((current.get('spec') or {}).get('request'), der):
            cert = issued(current)
            if cert:
                return 'unchanged', cert
            if approved(current):
                return 'unchanged', '' if check_mode else wait(api, params, name)
            if check_mode:
                return 'approved', ''
            api.approve(name)
            return 'approved', wait(api, params, name)
        if not _ours(current):
            raise CertificateError('CertificateSigningRequest %s exists for another request and was not created by this '
                                   'collection (no label %s=%s), so it is left alone. Delete it (kubectl delete csr %s) or '
                                   'choose another name, and run again.' % ((name,) + MANAGED_BY + (name,)))
        action = 'replaced'
    if check_mode:
        return action, ''
    if current is not None:
        api.delete('csr', name)
    pem = params['csr'].strip() + '\n'
    api.write('create', new_csr(params, pem), 'CertificateSigningRequest %s' % name)
    api.approve(name)
    return action, wait(api, params, name)


def wait(api, params, name):
    """The certificate, once the signer put it in ``status.certificate``; fails on Denied/Failed or timeout."""
    clock = api.clock
    timeout = params['timeout']
    start = clock.monotonic()
    api.deadline = start + max(timeout, 1)
    try:
        while True:
            obj = api.get('csr', name)
            if obj is None:
                raise CertificateError('CertificateSigningRequest %s disappeared while waiting for its certificate; '
                                       'somebody deleted it. Run again.' % name)
            cond = blocking_condition(obj)
            if cond is not None:
                raise _denied(name, cond)
            cert = issued(obj)
            if cert:
                return cert
            elapsed = clock.monotonic() - start
            if elapsed >= timeout:
                raise CertificateError(
                    'CertificateSigningRequest %s is approved but got no certificate within %s s. The signer %s did not '
                    'sign it: check that kube-controller-manager runs with --cluster-signing-cert-file (k3s: it does) '
                    'and look at its log; then run again.' % (name, timeout, params['signer_name']))
            clock.sleep(max(0.0, min(POLL_INTERVAL, timeout - elapsed)))
    finally:
        api.deadline = None


# -- the bindings -------------------------------------------------------------------------------------------
def wanted_binding(cluster_role, group):
    return {
        'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'ClusterRoleBinding',
        'metadata': {'name': binding_name(cluster_role, group), 'labels': dict([MANAGED_BY])},
        'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': cluster_role},
        'subjects': [{'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'Group', 'name': group}],
    }


def _subjects(obj):
    return sorted((s.get('kind', ''), s.get('name', ''), s.get('apiGroup', ''), s.get('namespace', ''))
                  for s in (obj.get('subjects') or []) if isinstance(s, dict))


def ensure_binding(api, cluster_role, group, check_mode):
    """``{name, group, cluster_role, action}``: action ``unchanged``, ``created``, ``updated`` or ``recreated``."""
    want = wanted_binding(cluster_role, group)
    name = want['metadata']['name']
    current = api.get('clusterrolebinding', name)
    result = {'name': name, 'group': group, 'cluster_role': cluster_role, 'action': 'unchanged'}
    if current is None:
        result['action'] = 'created'
        if not check_mode:
            api.write('create', want, 'ClusterRoleBinding %s' % name)
        return result
    if not _ours(current):
        raise CertificateError('ClusterRoleBinding %s exists and was not created by this collection (no label %s=%s), so '
                               'it is left alone. Delete or rename it, or bind another cluster role, and run again.'
                               % ((name,) + MANAGED_BY))
    same_role = (current.get('roleRef') or {}).get('name') == cluster_role and \
        (current.get('roleRef') or {}).get('kind') == 'ClusterRole'
    if same_role and _subjects(current) == _subjects(want):
        return result
    if not same_role:  # roleRef cannot change: delete and create
        result['action'] = 'recreated'
        if not check_mode:
            api.delete('clusterrolebinding', name)
            api.write('create', want, 'ClusterRoleBinding %s' % name)
        return result
    result['action'] = 'updated'
    if not check_mode:
        obj = dict(current)
        obj['subjects'] = want['subjects']
        obj['metadata'] = dict(current.get('metadata') or {})
        obj['metadata'].pop('managedFields', None)
        api.write('replace', obj, 'ClusterRoleBinding %s' % name)
    return result


# -- the module ---------------------------------------------------------------------------------------------
def plan(view, runner, params, check_mode=False):
    """The Plan (no file changes) whose facts are the module's result, ``changed`` included."""
    der = validate(params)
    program = params['kubectl'][0]
    if not (view.isfile(program) if program.startswith('/') else view.which(program)):
        raise CertificateError('kubectl %s was not found on this node. Give the platform\'s kubectl: k3s_info returns it '
                               'as "kubectl" ([<k3s binary>, kubectl] for k3s).' % program)
    kubeconfig = params.get('kubeconfig')
    if kubeconfig and not view.isfile(kubeconfig):
        raise CertificateError('kubeconfig %s does not exist on this node. Give the platform\'s admin kubeconfig '
                               '(k3s_info returns it as "admin_kubeconfig").' % kubeconfig)
    api = Api(runner, params, view.clock)
    facts = {'csr_name': params.get('name') or '', 'csr_action': 'none', 'certificate': '', 'bindings': []}
    if der is not None:
        facts['csr_action'], facts['certificate'] = ensure_csr(api, params, der, check_mode)
    elif params.get('name'):
        current = api.get('csr', params['name'])  # only read: a denial stops the caller before it makes a key
        cond = blocking_condition(current) if current is not None else None
        if cond is not None:
            raise _denied(params['name'], cond)
    role = params.get('cluster_role') or ''
    if role:
        facts['bindings'] = [ensure_binding(api, role, g, check_mode) for g in params.get('groups') or []]
    facts['changed'] = facts['csr_action'] not in ('none', 'unchanged') or \
        any(b['action'] != 'unchanged' for b in facts['bindings'])
    return Plan(facts=facts)
