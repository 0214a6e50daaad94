# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This plugin_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The pod security report (``baremetal.k3s.pod_security_report``'s result) as lines for people.

One line per pod the API server named (namespace, pod, its owner, phase, the reasons), one per
namespace with nothing refused or not asked (``own labels``, ``exempt``, ``unknown``), then the
notes and the summary; every line within 120 columns (the status table's rendering:
``_status_table.table``/``wrap``), node data escaped.
"""

from __future__ import annotations

from ansible_collections.baremetal.k3s.plugins.plugin_utils import _status_table

MAX_WIDTH = _status_table.MAX_WIDTH
UNKNOWN = _status_table.UNKNOWN
COLUMNS = (
    ('namespace', 'NAMESPACE', None),
    ('pod', 'POD', None),
    ('owner', 'OWNER', None),
    ('phase', 'PHASE', len('Succeeded')),
    ('status', 'STATUS', None),
)


def _owner(owner):
    return '%s/%s' % (owner.get('kind'), owner.get('name')) if isinstance(owner, dict) and owner.get('kind') else UNKNOWN


def _pod(violation):
    others = violation.get('others') or 0
    if not others:
        return violation.get('pod') or UNKNOWN
    return '%s (+%d other%s)' % (violation.get('pod'), others, '' if others == 1 else 's')


def _status(row):
    """A short cell: the reasons and the errors go below the table, wrapped, never cut."""
    status = row.get('status')
    if status == 'own labels':
        labels = row.get('labels') or {}
        return 'own label enforce=%s%s' % (
            labels.get('enforce'), (':' + labels['enforce-version']) if labels.get('enforce-version') else '')
    if status in ('exempt', 'unknown'):
        return status
    return 'nothing refused (%d pod%s)' % (row.get('pods') or 0, '' if row.get('pods') == 1 else 's')


def rows(report):
    out = []
    for row in report.get('namespaces') or []:
        violations = row.get('violations') or []
        for v in violations:
            out.append([row.get('namespace') or UNKNOWN, _pod(v), _owner(v.get('owner')), v.get('phase') or UNKNOWN,
                        'refused'])
        if not violations:
            out.append([row.get('namespace') or UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, _status(row)])
    return out


def render(report, width=MAX_WIDTH):
    """The report as lines of at most ``width`` columns: the table, why each pod is refused, notes, summary."""
    level = '%s:%s' % (report.get('level'), report.get('version'))
    lines = _status_table.wrap('PodSecurity %s: the pods the API server would refuse (server-side dry run of each '
                               'namespace\'s enforce label; nothing stored)' % level, width)
    cells = rows(report)
    lines += _status_table.table(COLUMNS, cells, width) if cells else ['(no namespaces)']
    namespaces = report.get('namespaces') or []
    why = [(r['namespace'], v) for r in namespaces for v in r.get('violations') or []]
    if why:
        lines += ['', 'why (the API server\'s words):']
        for namespace, v in why:
            lines += _status_table.wrap('%s/%s: %s' % (namespace, _pod(v), ', '.join(v.get('reasons') or [])),
                                        width, indent='  ')
    notes = [(r['namespace'], n) for r in namespaces for n in r.get('notes') or []]
    notes += [(r['namespace'], 'its own enforce label applies, not the default: not asked') for r in namespaces
              if r.get('status') == 'own labels']
    notes += [(r['namespace'], 'the dry run failed: %s' % (r.get('error') or 'no reason given')) for r in namespaces
              if r.get('status') == 'unknown']
    if notes:
        lines += ['', 'notes:']
        for namespace, note in notes:
            lines += _status_table.wrap('%s: %s' % (namespace, note), width, indent='  ')
    for missing in report.get('missing_namespaces') or []:
        lines += _status_table.wrap('namespace %s does not exist' % missing, width)
    lines += [''] + _status_table.wrap(report.get('summary') or '', width)
    return lines


def data(report):
    """What the JSON file holds: the module's report without Ansible's own keys."""
    keys = ('level', 'version', 'namespaces', 'missing_namespaces', 'refused_pods', 'summary')
    return {k: report.get(k) for k in keys}
