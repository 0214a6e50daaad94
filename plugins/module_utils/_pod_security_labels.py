# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.pod_security_labels``: a namespace's own PodSecurity labels, set through the API.

A namespace's ``pod-security.kubernetes.io/<mode>`` and ``<mode>-version`` labels override the
cluster's defaults for its pods. The collection sets the ones it is given on the namespaces it is
given and records which labels it set in the namespace's annotation :data:`RECORD` (label names,
comma-separated). A label the collection did not set (not in the record) is never changed or
removed; a label it set and that is no longer asked for is removed, on any namespace that holds the
record. Each namespace is written with one conditional merge patch (its resourceVersion): a
namespace changed in between is refused by the API, not overwritten. In check mode the patch is a
server-side dry run, so the API server still validates the labels.

Pure standard library; no Ansible import.
"""

from __future__ import annotations

import json

from ansible_collections.baremetal.k3s.plugins.module_utils import _kubectl
from ansible_collections.baremetal.k3s.plugins.module_utils import _names as names
from ansible_collections.baremetal.k3s.plugins.module_utils import _pod_security as pod_security
from ansible_collections.baremetal.k3s.plugins.module_utils import _pod_security_report as report
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Plan, PlanError

RECORD = 'baremetal.k3s/pod-security-labels'
PREFIX = report.LABEL_PREFIX
KEYS = tuple(k for mode in pod_security.MODES for k in (mode, mode + '_version'))


def label_name(key):
    """``enforce_version`` -> ``pod-security.kubernetes.io/enforce-version``."""
    return PREFIX + key.replace('_', '-')


def wanted_labels(namespaces):
    """``{namespace: {label: value}}`` from the option, every name, key, level and version checked first."""
    if not isinstance(namespaces, dict):
        raise PlanError('namespaces must be a mapping of namespace names to their labels ({enforce: privileged, ...}); '
                        'got %s. Nothing was changed.' % type(namespaces).__name__)
    out = {}
    for ns in sorted(namespaces, key=str):
        names.check('namespaces key', ns, names.DNS_LABEL, PlanError, 'a namespace name. Nothing was changed')
        given = namespaces[ns] or {}
        where = 'namespaces.%s.' % ns
        if not isinstance(given, dict):
            raise PlanError('%s must be a mapping of %s; got %r. Nothing was changed.' % (where[:-1], ', '.join(KEYS), given))
        unknown = sorted(str(k) for k in given if k not in KEYS)
        if unknown:
            raise PlanError('%s: unknown %s %s; a namespace\'s PodSecurity labels are %s. Nothing was changed.'
                            % (where[:-1], 'key' if len(unknown) == 1 else 'keys', ', '.join(where + k for k in unknown),
                               ', '.join(KEYS)))
        labels = {}
        for key in KEYS:
            value = given.get(key)
            if value is None:
                continue
            if key.endswith('_version'):
                pod_security._version(where + key, value)  # pylint: disable=protected-access
            else:
                pod_security._level(where + key, value)  # pylint: disable=protected-access
            labels[label_name(key)] = value
        out[ns] = labels
    return out


def recorded(ns_obj):
    """The labels the collection set on this namespace (its record), as a sorted list of label names."""
    ann = (ns_obj.get('metadata') or {}).get('annotations') or {}
    value = ann.get(RECORD) or ''
    return sorted(n for n in value.split(',') if n.startswith(PREFIX))


def changes(ns_obj, want):
    """What to do on one namespace: ``{labels: {name: value or None}, record: new record or None, kept: [...]}``;
    ``labels`` empty when nothing changes. ``kept``: labels asked for that the collection did not set (left alone)."""
    labels = (ns_obj.get('metadata') or {}).get('labels') or {}
    ours = set(recorded(ns_obj))
    patch, kept, mine = {}, [], set()
    for name, value in sorted(want.items()):
        if name in labels and name not in ours:
            if labels[name] != value:
                kept.append(name)
            continue
        mine.add(name)
        if labels.get(name) != value:
            patch[name] = value
    for name in sorted(ours - set(want)):
        if name in labels:
            patch[name] = None
    record = ','.join(sorted(mine))
    old_record = ((ns_obj.get('metadata') or {}).get('annotations') or {}).get(RECORD)
    new_record = record or None
    return {'labels': patch, 'record': new_record, 'record_changed': (old_record or None) != new_record, 'kept': kept}


def plan_and_patch(view, params, check_mode):
    """Compute every namespace's change first (all refusals before any write), then patch each that changes."""
    want = wanted_labels(params.get('namespaces') or {})
    api = report.Kubectl(view, params)
    existing = {(n.get('metadata') or {}).get('name'): n for n in api.items(['namespaces'])}
    missing = sorted(ns for ns in want if ns not in existing)
    if missing:
        raise PlanError('namespace%s %s do%s not exist: create %s first (its labels are set only on a namespace that '
                        'exists). Nothing was changed.' % ('' if len(missing) == 1 else 's', ', '.join(missing),
                                                           'es' if len(missing) == 1 else '',
                                                           'it' if len(missing) == 1 else 'them'))
    todo = []
    results = []
    for name in sorted(existing, key=str):
        ns_obj = existing[name]
        if name not in want and not recorded(ns_obj):
            continue
        c = changes(ns_obj, want.get(name, {}))
        results.append({'namespace': name, 'set': {k: v for k, v in c['labels'].items() if v is not None},
                        'removed': sorted(k for k, v in c['labels'].items() if v is None), 'left_alone': c['kept'],
                        'warnings': []})
        if c['labels'] or c['record_changed']:
            todo.append((name, ns_obj, c, results[-1]))
    warnings = ['namespace %s: label %s was not set by baremetal.k3s and is left as it is (%s=%s; asked: %s)'
                % (r['namespace'], k, k, (existing[r['namespace']]['metadata'].get('labels') or {}).get(k),
                   want[r['namespace']][k]) for r in results for k in r['left_alone']]
    for name, ns_obj, c, result in todo:
        meta = ns_obj.get('metadata') or {}
        body = {'metadata': {'resourceVersion': meta.get('resourceVersion'), 'labels': c['labels'],
                             'annotations': {RECORD: c['record']}}}
        argv = ['patch', 'namespace', name, '--type=merge', '-p', json.dumps(body, sort_keys=True)]
        if check_mode:
            argv.insert(1, '--dry-run=server')
        rc, dummy, err = api.run(argv)
        if rc != 0:
            done = [r['namespace'] for n, dummy2, dummy3, r in todo if n < name]
            reason, msg = _kubectl.api_reason(err)
            raise PlanError('the labels of namespace %s were not set: %s%s. %s' % (
                name, ('(%s) ' % reason) if reason else '', msg or 'kubectl exit %s' % rc,
                ('Already set: %s.' % ', '.join(done)) if done else 'Nothing was changed.'))
        found = report.parse_warnings(err)
        result['warnings'] = ['%s%s: %s' % (v['pod'], ' (and %d other pods)' % v['others'] if v['others'] else '',
                                            ', '.join(v['reasons'])) for v in found['violations']]
    facts = {'namespaces': results, 'changed': bool(todo)}
    return Plan([], facts, warnings=warnings)
