# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.pod_security_report``: which running pods a PodSecurity level would refuse,
as the API server itself evaluates them.

Nothing here knows the Pod Security Standards. The API server's PodSecurity admission answers a
namespace update that raises its ``pod-security.kubernetes.io/enforce`` label with warnings naming
the existing pods the new level would refuse; ``kubectl label --dry-run=server --overwrite`` sends
that update without storing it and prints the warnings on stderr, one ``Warning: <text>`` line each
(client-go's warning writer). kube-apiserver's texts (k8s.io/pod-security-admission, admission.go):

* ``existing pods in namespace "<ns>" violate the new PodSecurity enforce level "<level>:<version>"``,
  followed by one line per distinct set of reasons, sorted:
  ``<pod>: <reasons>``, ``<pod> (and 1 other pod): <reasons>``, ``<pod> (and <n> other pods): <reasons>``
  (the lexically first pod of those with the same reasons; ``<reasons>`` joined by ``", "``);
* ``new PodSecurity enforce level only checked against the first <n> of <m> existing pods``;
* ``namespace "<ns>" is exempt from Pod Security, and the policy (<modes>) will be ignored``;
* ``failed to list pods while checking new PodSecurity enforce level``.

:func:`parse_warnings` reads those (bytes or text in, no I/O); :func:`namespace_report` joins them
with the namespace's pods and their owners (ownerReferences; a ReplicaSet's Deployment) as
``kubectl get -o json`` printed them; :func:`plan` asks the API through the View.

Pure standard library; no Ansible import.
"""

from __future__ import annotations

import json
import re

from ansible_collections.baremetal.k3s.plugins.module_utils import _kubectl
from ansible_collections.baremetal.k3s.plugins.module_utils import _names as names
from ansible_collections.baremetal.k3s.plugins.module_utils import _pod_security as pod_security
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Plan, PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import RunTimeout

LABEL_PREFIX = 'pod-security.kubernetes.io/'
REQUEST_TIMEOUT = 30  # seconds one kubectl request may take
RUN_MARGIN = 30  # seconds kubectl may run past its --request-timeout before the View stops it

_WARNING = re.compile(r'Warning: (?P<text>.*)')
_HEADER = re.compile(r'existing pods in namespace "(?P<ns>[^"]*)" violate the new PodSecurity enforce level '
                     r'"(?P<level>[^"]*)"')
_POD = re.compile(r'(?P<pod>[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?)'
                  r'(?: \(and (?P<one>1) other pod\)| \(and (?P<many>[0-9]+) other pods\))?: (?P<reasons>.+)')
_PARTIAL = re.compile(r'new PodSecurity enforce level only checked against the first (?P<checked>[0-9]+) of '
                      r'(?P<total>[0-9]+) existing pods')
_EXEMPT = re.compile(r'namespace "(?P<ns>[^"]*)" is exempt from Pod Security, and the policy \((?P<policy>.*)\) '
                     r'will be ignored')
_LIST_FAILED = 'failed to list pods while checking new PodSecurity enforce level'

# the owners the report names, and the kind a ReplicaSet's pods are shown under when a Deployment owns it
OWNER_KINDS = ('Deployment', 'DaemonSet', 'StatefulSet', 'Job', 'ReplicaSet', 'CronJob', 'ReplicationController')


def _text(data):
    return data.decode('utf-8', 'replace') if isinstance(data, bytes) else (data or '')


def parse_warnings(stderr):
    """kubectl's stderr of a namespace label dry run, read into
    ``{violations: [{pod, others, reasons}], level, exempt, exempt_policy, checked, total, list_failed, other}``.

    A pod line counts only after the header line that says which namespace and level it belongs to (what comes
    before is another warning), and only with a pod name as Kubernetes allows it; every line that is not one of the
    texts above (another warning, an error) is kept in ``other``, whole.
    """
    out = {'violations': [], 'level': '', 'exempt': False, 'exempt_policy': '', 'checked': None, 'total': None,
           'list_failed': False, 'other': []}
    in_pods = False
    for line in _text(stderr).splitlines():
        line = line.rstrip('\r')
        if not line.strip():
            continue
        m = _WARNING.fullmatch(line)
        if not m:
            out['other'].append(line)
            continue
        text = m.group('text')
        header = _HEADER.fullmatch(text)
        if header:
            out['level'] = header.group('level')
            in_pods = True
            continue
        pod = _POD.fullmatch(text) if in_pods else None
        if pod and len(pod.group('pod')) <= 253:
            others = 1 if pod.group('one') else int(pod.group('many') or 0)
            out['violations'].append({'pod': pod.group('pod'), 'others': others,
                                      'reasons': [r for r in pod.group('reasons').split(', ') if r]})
            continue
        partial = _PARTIAL.fullmatch(text)
        exempt = _EXEMPT.fullmatch(text)
        if partial:
            out['checked'], out['total'] = int(partial.group('checked')), int(partial.group('total'))
        elif exempt:
            out['exempt'], out['exempt_policy'] = True, exempt.group('policy')
        elif text == _LIST_FAILED:
            out['list_failed'] = True
        else:
            out['other'].append(line)
    return out


def own_labels(namespace):
    """The namespace's own ``pod-security.kubernetes.io/*`` labels, without the prefix (``enforce``, ``warn-version``...)."""
    labels = (namespace.get('metadata') or {}).get('labels') or {}
    return {k[len(LABEL_PREFIX):]: v for k, v in sorted(labels.items())
            if isinstance(k, str) and k.startswith(LABEL_PREFIX)}


def _controller(obj):
    """The ownerReference that is ``obj``'s controller (or its first one), as {kind, name}; None without one."""
    refs = [r for r in (obj.get('metadata') or {}).get('ownerReferences') or [] if isinstance(r, dict)]
    ref = next((r for r in refs if r.get('controller')), refs[0] if refs else None)
    if not ref:
        return None
    return {'kind': str(ref.get('kind') or ''), 'name': str(ref.get('name') or '')}


def owners(pods, replicasets):
    """``{(namespace, pod): {kind, name}}``: each pod's owner, a ReplicaSet replaced by the Deployment that owns it."""
    rs_owner = {}
    for rs in replicasets:
        meta = rs.get('metadata') or {}
        owner = _controller(rs)
        if owner and owner['kind'] == 'Deployment':
            rs_owner[(meta.get('namespace'), meta.get('name'))] = owner
    out = {}
    for pod in pods:
        meta = pod.get('metadata') or {}
        owner = _controller(pod)
        if owner and owner['kind'] == 'ReplicaSet':
            owner = rs_owner.get((meta.get('namespace'), owner['name']), owner)
        out[(meta.get('namespace'), meta.get('name'))] = owner
    return out


def _owner_text(owner):
    return '%s/%s' % (owner['kind'], owner['name']) if owner else ''


def namespace_report(name, namespace, pods, owner_of, level, dry_run=None, exempted=False):
    """One namespace's row: ``status`` is ``refused`` (pods the level would refuse), ``allowed``, ``own labels``
    (its own enforce label overrides the default: not asked), ``exempt`` (by the configuration given, or the API
    said so), or ``unknown`` (the dry run failed: ``error``)."""
    mine = [p for p in pods if (p.get('metadata') or {}).get('namespace') == name]
    phases = {(p.get('metadata') or {}).get('name'): (p.get('status') or {}).get('phase') or '' for p in mine}
    row = {'namespace': name, 'status': 'allowed', 'labels': own_labels(namespace), 'pods': len(mine),
           'violations': [], 'notes': [], 'error': ''}
    if 'enforce' in row['labels']:
        row['status'] = 'own labels'
        return row
    if exempted:
        row['status'] = 'exempt'
        row['notes'].append('exempt by the PodSecurity configuration given')
        return row
    rc, stderr = dry_run if dry_run is not None else (0, '')
    found = parse_warnings(stderr)
    if found['exempt']:
        row['status'] = 'exempt'
        row['notes'].append('the API server exempts it (%s ignored)' % found['exempt_policy'])
    for v in found['violations']:
        row['violations'].append(dict(v, owner=owner_of.get((name, v['pod'])), phase=phases.get(v['pod'], '')))
    if row['violations']:
        row['status'] = 'refused'
    if found['checked'] is not None:
        row['notes'].append('the API server checked only %s of %s pods' % (found['checked'], found['total']))
    if found['list_failed']:
        row['notes'].append('the API server could not list the pods')
    if found['level'] and found['level'] != level:
        row['notes'].append('the API server evaluated %s' % found['level'])
    if rc != 0:
        row['status'] = 'unknown'
        row['error'] = _kubectl.first_line('\n'.join(found['other'])) or 'kubectl exit %s' % rc
    return row


def summary(rows, level):
    refused = [r for r in rows if r['status'] == 'refused']
    pods = sum(1 + v['others'] for r in refused for v in r['violations'])
    own = sum(1 for r in rows if r['status'] == 'own labels')
    unknown = sum(1 for r in rows if r['status'] == 'unknown')
    text = ('%d pod%s in %d of %d namespaces would be refused at %s'
            % (pods, '' if pods == 1 else 's', len(refused), len(rows), level))
    if own:
        text += '; %d namespace%s keep%s own labels' % (own, '' if own == 1 else 's', 's its' if own == 1 else ' their')
    if unknown:
        text += '; %d unknown (the dry run failed)' % unknown
    return text


# -- asking the API ------------------------------------------------------------------------------
class Kubectl:
    def __init__(self, view, params):
        kubectl = params.get('kubectl') or []
        if not kubectl or not all(isinstance(a, str) and a for a in kubectl):
            raise PlanError('kubectl must be the kubectl command as a list of non-empty words, for example '
                            '[/usr/local/bin/k3s, kubectl] (k3s_info returns it as "kubectl"); got %r' % (kubectl,))
        self.view = view
        self.base = list(kubectl) + (['--kubeconfig', params['kubeconfig']] if params.get('kubeconfig') else []) + [
            '--request-timeout=%ds' % REQUEST_TIMEOUT]

    def run(self, args):
        argv = self.base + list(args)
        try:
            rc, out, err = self.view.run(argv, timeout=REQUEST_TIMEOUT + RUN_MARGIN)
        except RunTimeout as e:
            raise PlanError('%s did not finish within %s s; nothing was changed.' % (_kubectl.quote(argv), e.seconds))
        return rc, _text(out), _text(err)

    def items(self, args):
        rc, out, err = self.run(['get'] + list(args) + ['-o', 'json'])
        if rc != 0:
            raise PlanError('kubectl get %s failed: %s' % (' '.join(args), _kubectl.first_line(err) or 'exit %s' % rc))
        try:
            doc = json.loads(out)
        except ValueError:
            raise PlanError('kubectl get %s printed no JSON: %s' % (' '.join(args), _kubectl.first_line(out)))
        items = doc.get('items') if isinstance(doc, dict) else None
        if not isinstance(items, list):
            raise PlanError('kubectl get %s printed no list: %s' % (' '.join(args), _kubectl.first_line(out)))
        return [i for i in items if isinstance(i, dict)]


def dry_run_argv(namespace, level, version):
    """The namespace update PodSecurity answers with its warnings, sent as a server-side dry run (nothing stored)."""
    return ['label', '--dry-run=server', '--overwrite', 'namespace', namespace,
            '%senforce=%s' % (LABEL_PREFIX, level), '%senforce-version=%s' % (LABEL_PREFIX, version)]


def check_params(params):
    level = params.get('level')
    if level not in pod_security.LEVELS:
        raise PlanError('level %r is not a PodSecurity level: use one of %s. Nothing was asked.'
                        % (level, ', '.join(pod_security.LEVELS)))
    version = params.get('version') or 'latest'
    if not pod_security.VERSION.fullmatch(version):
        raise PlanError('version %r is not a PodSecurity version: use "latest" or "v1.<minor>". Nothing was asked.'
                        % (version,))
    for key in ('namespaces', 'exempt_namespaces'):
        for i, ns in enumerate(params.get(key) or []):
            names.check('%s[%d]' % (key, i), ns, names.DNS_LABEL, PlanError, 'a namespace name. Nothing was asked')
    return level, version


def plan(view, params):
    """Ask the API server, namespace by namespace, which running pods ``level`` would refuse; a Plan of facts only."""
    level, version = check_params(params)
    api = Kubectl(view, params)
    namespaces = api.items(['namespaces'])
    pods = api.items(['pods', '--all-namespaces'])
    owner_of = owners(pods, api.items(['replicasets', '--all-namespaces']))
    wanted = set(params.get('namespaces') or [])
    exempt = set(params.get('exempt_namespaces') or [])
    lv = '%s:%s' % (level, version)
    rows = []
    for ns in sorted(namespaces, key=lambda n: str((n.get('metadata') or {}).get('name'))):
        name = (ns.get('metadata') or {}).get('name')
        if not isinstance(name, str) or (wanted and name not in wanted):
            continue
        needs_dry_run = 'enforce' not in own_labels(ns) and name not in exempt
        dry = None
        if needs_dry_run:
            rc, dummy, err = api.run(dry_run_argv(name, level, version))
            dry = (rc, err)
        rows.append(namespace_report(name, ns, pods, owner_of, lv, dry, exempted=name in exempt))
    missing = sorted(wanted - {r['namespace'] for r in rows})
    facts = {'level': level, 'version': version, 'namespaces': rows, 'missing_namespaces': missing,
             'refused_pods': sum(1 + v['others'] for r in rows for v in r['violations']),
             'summary': summary(rows, lv)}
    warnings = ['namespace %s does not exist' % m for m in missing]
    return Plan([], facts, warnings=warnings)
