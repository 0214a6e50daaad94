# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A namespace's own PodSecurity labels: set through the API, recorded, and the ones others set left alone."""

from __future__ import annotations

import json

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _pod_security_labels as psl
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

E = 'pod-security.kubernetes.io/enforce'
EV = 'pod-security.kubernetes.io/enforce-version'
W = 'pod-security.kubernetes.io/warn'


def ns(name, labels=None, record=None, rv='7'):
    meta = {'name': name, 'resourceVersion': rv, 'labels': dict(labels or {})}
    if record is not None:
        meta['annotations'] = {psl.RECORD: record}
    return {'metadata': meta}


class FakeApi:
    """kubectl against namespaces held in memory: get answers them, patch applies a merge patch (not a dry run)."""

    def __init__(self, *namespaces, refuse=None):
        self.ns = {n['metadata']['name']: n for n in namespaces}
        self.patches = []
        self.refuse = refuse

    def run(self, argv, stdin=None, timeout=None):
        words = argv[argv.index('--request-timeout=30s') + 1:]
        if words[0] == 'get':
            return 0, json.dumps({'items': list(self.ns.values())}), ''
        dry = '--dry-run=server' in words
        words = [w for w in words if w != '--dry-run=server']
        name, body = words[2], json.loads(words[5])
        self.patches.append((name, body, dry))
        if self.refuse == name:
            return 1, '', 'Error from server (Conflict): Operation cannot be fulfilled on namespaces "%s"' % name
        if not dry:
            meta = self.ns[name]['metadata']
            for k, v in body['metadata']['labels'].items():
                if v is None:
                    meta['labels'].pop(k, None)
                else:
                    meta['labels'][k] = v
            for k, v in body['metadata']['annotations'].items():
                ann = meta.setdefault('annotations', {})
                if v is None:
                    ann.pop(k, None)
                else:
                    ann[k] = v
        return 0, 'namespace/%s patched' % name, ''


def run(api, namespaces, check_mode=False):
    return psl.plan_and_patch(api, {'kubectl': ['k3s', 'kubectl'], 'namespaces': namespaces}, check_mode)


def test_set_recorded_then_unchanged_then_removed_again():
    api = FakeApi(ns('ops'), ns('shop'))
    plan = run(api, {'ops': {'enforce': 'privileged', 'enforce_version': 'v1.33'}})
    assert plan.facts['changed']
    (name, body, dry), = api.patches
    assert name == 'ops' and not dry and body['metadata']['resourceVersion'] == '7'
    assert body['metadata']['labels'] == {E: 'privileged', EV: 'v1.33'}
    assert api.ns['ops']['metadata']['annotations'][psl.RECORD] == E + ',' + EV
    assert not run(api, {'ops': {'enforce': 'privileged', 'enforce_version': 'v1.33'}}).facts['changed']
    assert len(api.patches) == 1
    # left out: the labels the collection set go, and so does its record
    plan = run(api, {})
    assert plan.facts['changed'] and api.ns['ops']['metadata']['labels'] == {}
    assert psl.RECORD not in api.ns['ops']['metadata']['annotations']
    assert plan.facts['namespaces'] == [{'namespace': 'ops', 'set': {}, 'removed': [E, EV], 'left_alone': [],
                                         'warnings': []}]


def test_a_label_someone_else_set_is_left_alone_and_named():
    api = FakeApi(ns('ops', {E: 'baseline', 'team': 'a'}))
    plan = run(api, {'ops': {'enforce': 'privileged', 'warn': 'restricted'}})
    assert api.ns['ops']['metadata']['labels'] == {E: 'baseline', 'team': 'a', W: 'restricted'}
    assert api.ns['ops']['metadata']['annotations'][psl.RECORD] == W
    assert plan.facts['namespaces'][0]['left_alone'] == [E]
    assert any('label %s was not set by baremetal.k3s and is left as it is' % E in w for w in plan.warnings)
    # and it stays when the collection's labels go
    run(api, {})
    assert api.ns['ops']['metadata']['labels'] == {E: 'baseline', 'team': 'a'}


def test_a_label_someone_else_set_to_the_same_value_is_not_claimed():
    api = FakeApi(ns('ops', {E: 'privileged'}))
    plan = run(api, {'ops': {'enforce': 'privileged'}})
    assert not plan.facts['changed'] and api.patches == [] and plan.warnings == []
    run(api, {})
    assert api.ns['ops']['metadata']['labels'] == {E: 'privileged'}


def test_check_mode_is_a_server_side_dry_run():
    api = FakeApi(ns('ops'))
    plan = run(api, {'ops': {'enforce': 'privileged'}}, check_mode=True)
    assert plan.facts['changed'] and api.patches[0][2] is True and api.ns['ops']['metadata']['labels'] == {}


def test_the_api_servers_warnings_are_returned():
    class Warned(FakeApi):
        def run(self, argv, stdin=None, timeout=None):
            rc, out, err = super().run(argv, stdin, timeout)
            if 'patch' in argv:
                err = ('Warning: existing pods in namespace "ops" violate the new PodSecurity enforce level '
                       '"restricted:latest"\nWarning: tool: privileged\n')
            return rc, out, err
    plan = run(Warned(ns('ops')), {'ops': {'enforce': 'restricted'}})
    assert plan.facts['namespaces'][0]['warnings'] == ['tool: privileged']


def test_a_conflict_is_refused_naming_what_was_already_set():
    api = FakeApi(ns('a'), ns('b'), refuse='b')
    with pytest.raises(PlanError) as e:
        run(api, {'a': {'warn': 'baseline'}, 'b': {'warn': 'baseline'}})
    assert 'the labels of namespace b were not set: (Conflict)' in e.value.msg and 'Already set: a.' in e.value.msg


@pytest.mark.parametrize('namespaces, what', [
    ({'Ops': {'enforce': 'privileged'}}, 'namespaces key'),
    ({'ops': {'enforse': 'privileged'}}, 'namespaces.ops.enforse'),
    ({'ops': {'enforce': 'strict'}}, 'namespaces.ops.enforce'),
    ({'ops': {'warn_version': 'v1.x'}}, 'namespaces.ops.warn_version'),
    ({'ops': 'privileged'}, 'namespaces.ops must be a mapping'),
    ({'nope': {'enforce': 'privileged'}}, 'namespace nope does not exist'),
])
def test_bad_input_is_refused_before_any_patch(namespaces, what):
    api = FakeApi(ns('ops'))
    with pytest.raises(PlanError) as e:
        run(api, namespaces)
    assert what in e.value.msg and 'Nothing was changed' in e.value.msg, e.value.msg
    assert api.patches == []
