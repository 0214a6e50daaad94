# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""kubectl's PodSecurity warnings read as the API server writes them (k8s.io/pod-security-admission admission.go),
and the report built from them with the pods' owners."""

from __future__ import annotations

import json

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _pod_security_report as r
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

HEADER = 'Warning: existing pods in namespace "shop" violate the new PodSecurity enforce level "restricted:latest"'
REASONS = 'allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile'


@pytest.mark.parametrize('stderr, violations', [
    ('', []),
    (HEADER + '\nWarning: cart-5d8f7c9b8-2xkqz: ' + REASONS + '\n',
     [{'pod': 'cart-5d8f7c9b8-2xkqz', 'others': 0, 'reasons': REASONS.split(', ')}]),
    (HEADER + '\nWarning: cart-5d8f7c9b8-2xkqz (and 1 other pod): privileged\n',
     [{'pod': 'cart-5d8f7c9b8-2xkqz', 'others': 1, 'reasons': ['privileged']}]),
    (HEADER + '\nWarning: agent-x7k2p (and 12 other pods): host namespaces, hostPath volumes, hostPort\n',
     [{'pod': 'agent-x7k2p', 'others': 12, 'reasons': ['host namespaces', 'hostPath volumes', 'hostPort']}]),
    # several sets of reasons, each its own line (sorted by the API server)
    (HEADER + '\nWarning: a.b-1: runAsUser=0\nWarning: c: procMount, seLinuxOptions\n',
     [{'pod': 'a.b-1', 'others': 0, 'reasons': ['runAsUser=0']},
      {'pod': 'c', 'others': 0, 'reasons': ['procMount', 'seLinuxOptions']}]),
    # CRLF
    (HEADER + '\r\nWarning: web-0: seccompProfile\r\n', [{'pod': 'web-0', 'others': 0, 'reasons': ['seccompProfile']}]),
    # bytes, as a runner may hand them
    ((HEADER + '\nWarning: web-0: seccompProfile\n').encode(), [{'pod': 'web-0', 'others': 0, 'reasons': ['seccompProfile']}]),
    # a pod line before any header is another warning, not a pod
    ('Warning: web-0: seccompProfile\n', []),
    # not a pod name (upper case, a space): another warning
    (HEADER + '\nWarning: Web-0: seccompProfile\nWarning: web 0: seccompProfile\n', []),
    # colour codes are not a warning line kubectl writes without a terminal: kept as other
    (HEADER + '\n\x1b[33;1mWarning:\x1b[0m web-0: seccompProfile\n', []),
])
def test_pod_lines(stderr, violations):
    assert r.parse_warnings(stderr)['violations'] == violations


@pytest.mark.parametrize('stderr, key, value', [
    (HEADER + '\n', 'level', 'restricted:latest'),
    ('Warning: existing pods in namespace "x" violate the new PodSecurity enforce level "baseline:v1.33"\n', 'level',
     'baseline:v1.33'),
    ('Warning: new PodSecurity enforce level only checked against the first 3000 of 3100 existing pods\n', 'checked', 3000),
    ('Warning: new PodSecurity enforce level only checked against the first 3000 of 3100 existing pods\n', 'total', 3100),
    ('Warning: namespace "kube-system" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be '
     'ignored\n', 'exempt', True),
    ('Warning: namespace "kube-system" is exempt from Pod Security, and the policy (enforce=restricted:latest, '
     'warn=baseline:v1.30) will be ignored\n', 'exempt_policy', 'enforce=restricted:latest, warn=baseline:v1.30'),
    ('Warning: failed to list pods while checking new PodSecurity enforce level\n', 'list_failed', True),
    ('Warning: metadata.finalizers: "x": prefer a domain-qualified finalizer name\n', 'other',
     ['Warning: metadata.finalizers: "x": prefer a domain-qualified finalizer name']),
    ('Error from server (Forbidden): namespaces "x" is forbidden: User "u" cannot patch resource "namespaces"\n', 'other',
     ['Error from server (Forbidden): namespaces "x" is forbidden: User "u" cannot patch resource "namespaces"']),
    ('namespace/shop labeled (server dry run)\n', 'other', ['namespace/shop labeled (server dry run)']),
])
def test_other_lines(stderr, key, value):
    assert r.parse_warnings(stderr)[key] == value


NAMESPACES = {'items': [
    {'metadata': {'name': 'shop', 'labels': {'kubernetes.io/metadata.name': 'shop'}}},
    {'metadata': {'name': 'ops', 'labels': {'pod-security.kubernetes.io/enforce': 'privileged',
                                            'pod-security.kubernetes.io/warn': 'baseline'}}},
    {'metadata': {'name': 'kube-system'}},
    {'metadata': {'name': 'empty'}},
]}


def _pod(ns, name, kind=None, owner=None, phase='Running'):
    meta = {'namespace': ns, 'name': name}
    if kind:
        meta['ownerReferences'] = [{'kind': kind, 'name': owner, 'controller': True, 'uid': 'u'}]
    return {'metadata': meta, 'status': {'phase': phase}}


PODS = {'items': [
    _pod('shop', 'cart-5d8f7c9b8-2xkqz', 'ReplicaSet', 'cart-5d8f7c9b8'),
    _pod('shop', 'cart-5d8f7c9b8-9wq4h', 'ReplicaSet', 'cart-5d8f7c9b8'),
    _pod('shop', 'agent-x7k2p', 'DaemonSet', 'agent'),
    _pod('shop', 'db-0', 'StatefulSet', 'db'),
    _pod('shop', 'migrate-7hh2d', 'Job', 'migrate', phase='Succeeded'),
    _pod('shop', 'lone'),
    _pod('ops', 'tool'),
]}
REPLICASETS = {'items': [{'metadata': {'namespace': 'shop', 'name': 'cart-5d8f7c9b8', 'ownerReferences': [
    {'kind': 'Deployment', 'name': 'cart', 'controller': True}]}}]}


class FakeApi:
    """A View whose run answers kubectl as the API server would, and records what was asked."""

    def __init__(self, dry_runs, fail=None):
        self.asked = []
        self.dry_runs = dry_runs
        self.fail = fail or {}

    def run(self, argv, stdin=None, timeout=None):
        self.asked.append(argv)
        words = argv[argv.index('--request-timeout=30s') + 1:]
        if words[0] == 'get':
            what = words[1]
            if what in self.fail:
                return 1, '', self.fail[what]
            return 0, json.dumps({'namespaces': NAMESPACES, 'pods': PODS, 'replicasets': REPLICASETS}[what]), ''
        ns = words[4]
        return self.dry_runs.get(ns, (0, '', ''))


SHOP = ('Warning: existing pods in namespace "shop" violate the new PodSecurity enforce level "restricted:latest"\n'
        'Warning: agent-x7k2p: host namespaces, hostPath volumes\n'
        'Warning: cart-5d8f7c9b8-2xkqz (and 1 other pod): allowPrivilegeEscalation != false\n'
        'Warning: migrate-7hh2d: runAsNonRoot != true\n')


def test_the_report_names_exactly_the_pods_the_api_server_named_with_their_owners():
    view = FakeApi({'shop': (0, 'namespace/shop labeled (server dry run)\n', SHOP)})
    plan = r.plan(view, {'kubectl': ['/usr/local/bin/k3s', 'kubectl'], 'level': 'restricted', 'version': 'latest',
                         'exempt_namespaces': ['kube-system']})
    rows = {row['namespace']: row for row in plan.facts['namespaces']}
    assert [row['namespace'] for row in plan.facts['namespaces']] == ['empty', 'kube-system', 'ops', 'shop']
    shop = rows['shop']
    assert shop['status'] == 'refused' and shop['pods'] == 6
    assert [(v['pod'], v['others'], v['owner'], v['phase']) for v in shop['violations']] == [
        ('agent-x7k2p', 0, {'kind': 'DaemonSet', 'name': 'agent'}, 'Running'),
        ('cart-5d8f7c9b8-2xkqz', 1, {'kind': 'Deployment', 'name': 'cart'}, 'Running'),
        ('migrate-7hh2d', 0, {'kind': 'Job', 'name': 'migrate'}, 'Succeeded'),
    ]
    assert rows['ops']['status'] == 'own labels' and rows['ops']['labels'] == {'enforce': 'privileged', 'warn': 'baseline'}
    assert rows['kube-system']['status'] == 'exempt' and rows['empty']['status'] == 'allowed'
    assert plan.facts['refused_pods'] == 4 and not plan.changed
    assert plan.facts['summary'] == ('4 pods in 1 of 4 namespaces would be refused at restricted:latest; '
                                     '1 namespace keeps its own labels')
    # asked: the three lists and a dry run for each namespace not exempt and without its own enforce label
    dry = [a for a in view.asked if 'label' in a]
    assert [a[a.index('namespace') + 1] for a in dry] == ['empty', 'shop']
    assert dry[1][-6:] == ['--dry-run=server', '--overwrite', 'namespace', 'shop',
                           'pod-security.kubernetes.io/enforce=restricted',
                           'pod-security.kubernetes.io/enforce-version=latest'][-6:]


def test_a_failed_dry_run_is_unknown_with_its_reason():
    view = FakeApi({'shop': (1, '', 'Error from server (Forbidden): namespaces "shop" is forbidden\n')})
    plan = r.plan(view, {'kubectl': ['k'], 'level': 'baseline', 'namespaces': ['shop']})
    (row,) = plan.facts['namespaces']
    assert row['status'] == 'unknown' and 'Forbidden' in row['error']


def test_the_api_server_saying_exempt_is_reported():
    exempt = ('Warning: namespace "shop" is exempt from Pod Security, and the policy (enforce=restricted:latest) will '
              'be ignored\n')
    plan = r.plan(FakeApi({'shop': (0, '', exempt)}), {'kubectl': ['k'], 'level': 'restricted', 'namespaces': ['shop']})
    assert plan.facts['namespaces'][0]['status'] == 'exempt'


def test_a_missing_namespace_is_a_warning():
    plan = r.plan(FakeApi({}), {'kubectl': ['k'], 'level': 'restricted', 'namespaces': ['nope']})
    assert plan.facts['missing_namespaces'] == ['nope'] and plan.warnings == ['namespace nope does not exist']


@pytest.mark.parametrize('params, what', [
    ({'level': 'strict'}, 'not a PodSecurity level'),
    ({'level': 'restricted', 'version': 'v2'}, 'not a PodSecurity version'),
    ({'level': 'restricted', 'namespaces': ['Shop']}, 'namespaces[0]'),
    ({'level': 'restricted', 'exempt_namespaces': ['']}, 'exempt_namespaces[0]'),
    ({'level': 'restricted', 'kubectl': []}, 'kubectl must be'),
])
def test_bad_params_are_refused_before_asking(params, what):
    view = FakeApi({})
    with pytest.raises(PlanError) as e:
        r.plan(view, dict({'kubectl': ['k']}, **params))
    assert what in e.value.msg and view.asked == []


def test_a_failing_list_is_refused():
    with pytest.raises(PlanError) as e:
        r.plan(FakeApi({}, fail={'pods': 'error: You must be logged in to the server (Unauthorized)'}),
               {'kubectl': ['k'], 'level': 'restricted'})
    assert 'kubectl get pods --all-namespaces failed: error: You must be logged in' in e.value.msg
