# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This plugin_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The fleet status the ``status_table`` action prints and writes: merging and rendering.

Each server's registered ``k3s_info`` and ``extender_status`` results, and the readiness
ConfigMap as ``kubectl get configmap -o json --ignore-not-found`` printed it, become one
JSON-ready dict; that dict becomes plain-text lines no wider than a terminal.

Plain dicts in, plain dicts and strings out, no Ansible import: the action plugin is a thin
shell around this, and the unit tests drive it directly.
"""

from __future__ import annotations

import datetime
import json

import yaml

from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal
from ansible_collections.baremetal.k3s.plugins.module_utils._service_clock import parse_since

MAX_WIDTH = 120
UNKNOWN = '-'
ELLIPSIS = _terminal.ELLIPSIS
GAP = '  '
# the readiness ConfigMap's key, as CSI Baremetal's operator reads it
NODES_KEY = 'nodes.yaml'

# (JSON key, table header, usual widest cell): a cell wider than usual (a platform or a time the
# modules never return) is cut before a node name; None: no usual width (names).
TIME_WIDTH = len('2026-01-13 10:00:03')
SERVER_COLUMNS = (
    ('node', 'NODE', None),
    ('platform', 'PLATFORM', len('kubeadm')),
    ('scheduler_started_at', 'SCHEDULER STARTED', TIME_WIDTH),
    ('changed_at', 'CHANGED AT', TIME_WIDTH),
    ('restarted', 'RESTARTED', 0),
    ('extender_reachable', 'EXTENDER', 0),
    ('ready', 'READY', 0),
    ('in_readiness_configmap', 'IN CONFIGMAP', 0),
)
READINESS_COLUMNS = (
    ('node_name', 'NODE', None),
    ('restarted', 'RESTARTED', 0),
    ('kube_scheduler', 'KUBE-SCHEDULER', None),
)


# ---------------------------------------------------------------------------------------------
# cell values

def one_line(value):
    """``value`` as text on one line: a message or a name with a newline would break the table. (Rendering escapes
    what is not printable: ``_terminal``.)"""
    return ' '.join(str(value).split())


def shorten(text, width):
    """``text`` in at most ``width`` terminal columns, printable, the last one an ellipsis when anything was cut."""
    return _terminal.cut(text, width)


def yes_no(value):
    """A boolean as ``yes``/``no``; anything else (unknown, not applicable) as ``-``."""
    if value is True:
        return 'yes'
    if value is False:
        return 'no'
    return UNKNOWN


def compact_time(value):
    """An ISO 8601 time (or epoch seconds) as ``YYYY-MM-DD HH:MM:SS`` in UTC.

    The modules return microseconds and a ``Z``; seconds are enough to compare a start with a
    change at a glance, and the shorter cell leaves room for long node names. A value that is
    no time is shown as given (the table shortens it), so nothing is silently hidden.
    """
    if value is None or value == '':
        return UNKNOWN
    try:
        epoch = parse_since(value)
    except (ValueError, OverflowError):
        return one_line(value)
    try:
        moment = datetime.datetime.fromtimestamp(epoch, tz=datetime.timezone.utc)
    except (ValueError, OverflowError, OSError):
        return one_line(value)
    return moment.strftime('%Y-%m-%d %H:%M:%S')


def as_bool(value):
    """True/False from a boolean or its YAML spellings (a hand-edited ConfigMap); None otherwise."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if value is not None else ''
    if text in ('true', 'yes', 'on'):
        return True
    if text in ('false', 'no', 'off'):
        return False
    return None


def _text(value):
    """A string field of a module result; '' when absent or null, so JSON consumers see a str."""
    return '' if value is None else str(value)


def _bool_or_none(value):
    return value if isinstance(value, bool) else None


def extender_rows(status):
    """Each extender the scheduler's status probed (``extenders`` of extender_status): name, url, answering, msg, and
    required (false: readiness does not wait for it)."""
    out = []
    for e in status.get('extenders') or []:
        if isinstance(e, dict):
            out.append({'name': _text(e.get('name')), 'url': _text(e.get('url')),
                        'answering': _bool_or_none(e.get('answering')), 'msg': _text(e.get('msg')),
                        'required': e.get('required') is not False})
    return out


def extender_cell(row):
    """The EXTENDER cell: yes/no for one extender; with several, how many answer (``1/2``), each named below the table."""
    extenders = row.get('extenders') or []
    if len(extenders) > 1:
        return '%d/%d' % (sum(1 for e in extenders if e['answering'] is True), len(extenders))
    return yes_no(row['extender_reachable'])


def _ran(result):
    """Whether a registered result is one of a task that ran (not missing, not skipped)."""
    return isinstance(result, dict) and bool(result) and not result.get('skipped')


# ---------------------------------------------------------------------------------------------
# the readiness ConfigMap

def _readiness(name, namespace, found=False, nodes=None, error=''):
    return {'namespace': namespace, 'name': name, 'found': found, 'nodes': nodes or [], 'error': error}


def _first_line(text):
    lines = [line.strip() for line in str(text or '').splitlines() if line.strip()]
    return lines[0] if lines else ''


def _kubectl_error(result):
    """What went wrong with a kubectl run, in its own words (stderr), else Ansible's (msg)."""
    reason = _first_line(result.get('stderr')) or _first_line(result.get('msg'))
    return 'kubectl failed (rc=%s): %s' % (result.get('rc'), reason or 'no error output')


def parse_readiness_nodes(text):
    """The entries of ``nodes.yaml`` as ``(nodes, error)``; nodes are ``{node_name, kube_scheduler, restarted}``.

    The role writes ``nodes: [{node_name, kube_scheduler, restarted}]``; the ConfigMap may also be
    written by hand or by another tool, so every deviation is reported rather than guessed at.
    """
    try:
        doc = yaml.safe_load(text) if text else None
    except yaml.YAMLError as e:
        where = getattr(e, 'problem_mark', None)
        at = ' (line %d)' % (where.line + 1) if where is not None else ''
        problem = getattr(e, 'problem', None) or one_line(e)
        return [], '%s is not valid YAML%s: %s' % (NODES_KEY, at, problem)
    if doc is None:
        return [], ''
    if not isinstance(doc, dict) or not isinstance(doc.get('nodes') or [], list):
        got = shorten(one_line(json.dumps(doc, default=str)), 60)
        return [], '%s must be a mapping with a list under "nodes"; got %s' % (NODES_KEY, got)
    nodes, bad = [], 0
    for entry in doc.get('nodes') or []:
        if not isinstance(entry, dict) or not entry.get('node_name'):
            bad += 1
            continue
        nodes.append({'node_name': str(entry['node_name']), 'kube_scheduler': _text(entry.get('kube_scheduler')),
                      'restarted': as_bool(entry.get('restarted'))})
    error = '%d entr%s of %s without a node_name skipped' % (bad, 'y' if bad == 1 else 'ies', NODES_KEY) if bad else ''
    return nodes, error


def readiness_from_kubectl(result, name, namespace):
    """The readiness ConfigMap from the registered result of ``kubectl get configmap -o json --ignore-not-found``.

    ``found`` is False both when the ConfigMap is absent (kubectl printed nothing, ``error`` empty)
    and when it could not be read (``error`` says why), so a reader never mistakes one for the other.
    """
    if not _ran(result):
        return _readiness(name, namespace, error='not read: no server with an active scheduler service ran kubectl')
    if result.get('rc') != 0:
        return _readiness(name, namespace, error=_kubectl_error(result))
    out = str(result.get('stdout') or '').strip()
    if not out:
        return _readiness(name, namespace)
    try:
        obj = json.loads(out)
    except ValueError as e:
        return _readiness(name, namespace, error='kubectl printed no JSON (%s): %s' % (e, shorten(one_line(out), 60)))
    if not isinstance(obj, dict) or obj.get('kind') != 'ConfigMap':
        kind = obj.get('kind') if isinstance(obj, dict) else type(obj).__name__
        what = 'a %s' % kind if kind else 'an object without a kind'
        return _readiness(name, namespace, error='kubectl returned %s, not a ConfigMap' % what)
    data = obj.get('data') or {}
    if NODES_KEY in data:
        nodes, error = parse_readiness_nodes(data[NODES_KEY])
    else:
        nodes, error = [], 'the ConfigMap has no %s key' % NODES_KEY
    if error:
        # written by hand or by another tool: say where to look and fix it
        error += '; correct it with: kubectl edit configmap %s -n %s' % (name, namespace)
    return _readiness(name, namespace, found=True, nodes=nodes, error=error)


# ---------------------------------------------------------------------------------------------
# one server

def node_name(host, k3s_info, extender_status):
    """The Kubernetes node name the module saw (lower-case host name), else the inventory name."""
    for result in (extender_status, k3s_info):
        if _ran(result) and result.get('node_name'):
            return str(result['node_name'])
    return str(host)


def server_msg(k3s_info, extender_status):
    """Why a server is not ready, in the modules' own words; '' when there is nothing to add."""
    if _ran(extender_status):
        return one_line(extender_status.get('msg') or '')
    if _ran(k3s_info):
        if k3s_info.get('unreachable'):
            return one_line('unreachable: %s' % (k3s_info.get('msg') or 'no message'))
        if k3s_info.get('failed'):
            return one_line('k3s_info failed: %s' % (k3s_info.get('msg') or 'no message'))
        if not k3s_info.get('installed'):
            return one_line(k3s_info.get('msg') or 'no k3s, RKE2 or kubeadm control plane found')
        return 'the scheduler and extender were not checked'
    return 'no status: the host was unreachable, or failed before its status was read'


def drift(files_drift, status, name, readiness, readiness_expected=True):
    """What is no longer as install_csi left it: ``[{cause, detail}]``; None when not checked.

    ``files_drift`` is the role's finding on the node (causes ``flag`` and ``config``: its
    compare.yml, in check mode), None when the role did not look. Added here from the running scheduler
    (``restart``: it started before its files changed) and, when the role publishes readiness
    (``readiness_expected``) and the ConfigMap could be read, the node's entry (``readiness``:
    missing, not ``restarted`` for a scheduler that restarted, or another ``kube_scheduler``).
    """
    if files_drift is None:
        return None
    found = [{'cause': str(d.get('cause', '')), 'detail': one_line(d.get('detail', ''))}
             for d in files_drift if isinstance(d, dict)]
    if status.get('restarted') is False and status.get('changed_at'):
        started, changed = compact_time(status.get('scheduler_started_at')), compact_time(status.get('changed_at'))
        found.append({'cause': 'restart', 'detail': 'the scheduler started at %s, before its files changed at %s: it '
                      'does not run with them until a restart' % (started, changed)})
    if readiness_expected and not readiness['error']:
        where = '%s/%s' % (readiness['namespace'], readiness['name'])
        entries = [n for n in readiness['nodes'] if n['node_name'] == name]
        if not entries:
            found.append({'cause': 'readiness', 'detail': 'no entry in the readiness ConfigMap %s%s' % (
                where, '' if readiness['found'] else ' (the ConfigMap is absent)')})
        else:
            entry, restarted, kube_scheduler = entries[-1], status.get('restarted'), _text(status.get('kube_scheduler'))
            stale = []
            # a scheduler not restarted since its files changed is the restart cause above; its entry
            # is put right by the same install_csi run
            if restarted is True and entry['restarted'] is not True:
                stale.append('restarted: %s, the scheduler: %s' % (yes_no(entry['restarted']), yes_no(restarted)))
            if kube_scheduler and entry['kube_scheduler'] != kube_scheduler:
                stale.append('kube_scheduler: %s, the scheduler: %s' % (entry['kube_scheduler'] or UNKNOWN, kube_scheduler))
            if stale:
                found.append({'cause': 'readiness', 'detail': 'its readiness entry in %s is stale (%s)'
                              % (where, '; '.join(stale))})
    return found


def server_row(host, k3s_info, extender_status, readiness, files_drift=None, readiness_expected=True):
    """One server's entry of ``nodes``: the JSON types the product tests and users rely on."""
    checked = _ran(extender_status)
    status = extender_status if checked else {}
    name = node_name(host, k3s_info, extender_status)
    listed = {n['node_name'] for n in readiness['nodes']}
    found = drift(files_drift, status, name, readiness, readiness_expected) if checked else None
    return {
        'node': name,
        'host': str(host),
        'platform': _text(k3s_info.get('platform')) if _ran(k3s_info) and k3s_info.get('installed') else '',
        'scheduler_started_at': _text(status.get('scheduler_started_at')),
        'changed_at': _text(status.get('changed_at')),
        'restarted': _bool_or_none(status.get('restarted')),
        'extender_reachable': _bool_or_none(status.get('extender_reachable')),
        'extenders': extender_rows(status),
        'ready': _bool_or_none(status.get('ready')) if checked else None,
        'in_readiness_configmap': name in listed,
        'drifted': bool(found) if found is not None else None,
        'drift': found or [],
        'msg': server_msg(k3s_info, extender_status),
    }


def fleet(hosts, results, readiness, readiness_expected=True):
    """The whole report: ``results`` maps each host to its ``(k3s_info, extender_status[, files_drift])`` results.

    ``files_drift`` is the role's drift finding (None: not looked at). Hosts keep the given order;
    a host named twice is reported once.
    """
    seen, nodes = set(), []
    for host in hosts:
        if host in seen:
            continue
        seen.add(host)
        given = tuple(results.get(host, ()))
        k3s_info, extender_status, files_drift = given + ({}, {}, None)[len(given):]
        nodes.append(server_row(host, k3s_info or {}, extender_status or {}, readiness, files_drift, readiness_expected))
    return {'nodes': nodes, 'readiness_configmap': readiness, 'summary': summary(nodes)}


def summary(nodes):
    """The one line that answers "is the fleet done?"."""
    ready = sum(1 for n in nodes if n['ready'] is True)
    drifted = sum(1 for n in nodes if n['drifted'])
    return '%d of %d servers ready' % (ready, len(nodes)) + ('; %d drifted' % drifted if drifted else '')


# ---------------------------------------------------------------------------------------------
# rendering

def fit_widths(headers, rows, width, usual=None):
    """Column widths (terminal columns: a wide CJK character counts two) whose line, gaps included, is at most ``width``.

    Each column starts as wide as its widest cell. While the line is too wide, a character is
    taken from the widest column that is wider than its ``usual`` width (a value the modules
    never return), then from the widest column of all; never below a header's width. So a
    long node name is cut, and times and yes/no stay whole.
    """
    usual = usual or [None] * len(headers)
    widths = [max([_terminal.width(h)] + [_terminal.width(r[i]) for r in rows]) for i, h in enumerate(headers)]
    budget = width - len(GAP) * (len(headers) - 1)
    while sum(widths) > budget:
        floors = [max(_terminal.width(h), u or 0) for h, u in zip(headers, usual)]
        unusual = [i for i, w in enumerate(widths) if usual[i] is not None and w > floors[i]]
        shrinkable = unusual or [i for i, w in enumerate(widths) if w > _terminal.width(headers[i])]
        if not shrinkable:
            break
        widths[max(shrinkable, key=lambda i: widths[i])] -= 1
    return widths


def table(columns, rows, width=MAX_WIDTH, indent=''):
    """Left-aligned columns under a header line; a cell is cut, with an ellipsis, only when the line would be too wide.

    ``columns`` are ``(key, header, usual width)`` as in SERVER_COLUMNS.
    """
    headers = [header for dummy, header, dummy2 in columns]
    rows = [[_terminal.one_line(c) for c in r] for r in rows]
    widths = fit_widths(headers, rows, width - _terminal.width(indent), [u for dummy, dummy2, u in columns])
    lines = []
    for cells in [headers] + rows:
        padded = [_terminal.pad(shorten(c, w), w) for c, w in zip(cells, widths)]
        lines.append(shorten((indent + GAP.join(padded)).rstrip(), width))
    return lines


def wrap(text, width=MAX_WIDTH, indent=''):
    """A message in lines of at most ``width`` columns, continued under a deeper indent: a reason is never cut off
    (a word longer than a line is broken inside it); what is not printable is escaped."""
    return _terminal.wrap(text, width, indent)


def _strip_prefix(text, prefix):
    return text[len(prefix):] if text.startswith(prefix) else text


def _server_cells(row, readiness_read):
    in_cm = yes_no(row['in_readiness_configmap']) if readiness_read else UNKNOWN
    return [row['node'], row['platform'] or UNKNOWN,
            compact_time(row['scheduler_started_at']), compact_time(row['changed_at']),
            yes_no(row['restarted']), extender_cell(row), yes_no(row['ready']), in_cm]


def _readiness_title(readiness):
    where = '%s/%s' % (readiness['namespace'], readiness['name'])
    count = len(readiness['nodes'])
    if readiness['found'] and (count or not readiness['error']):
        state = '%d node%s' % (count, '' if count == 1 else 's')
    elif readiness['found']:
        state = 'found'
    elif readiness['error']:
        state = 'unknown'
    else:
        state = 'absent'
    line = 'readiness ConfigMap %s: %s' % (where, state)
    if readiness['error']:
        line += ' (%s)' % readiness['error']
    return line


def render(data, width=MAX_WIDTH):
    """The report as lines of at most ``width`` characters: servers, why not ready, ConfigMap, summary."""
    readiness = data['readiness_configmap']
    # '-' rather than 'no' when the ConfigMap could not be read (fully): unknown is not absent
    readiness_read = not readiness['error']
    rows = [_server_cells(r, readiness_read) for r in data['nodes']]
    lines = table(SERVER_COLUMNS, rows, width)
    if not rows:
        lines.append('(no servers)')
    several = [r for r in data['nodes'] if len(r.get('extenders') or []) > 1]
    if several:
        lines += ['', 'extenders:']
        for r in several:
            for e in r['extenders']:
                optional = '' if e['required'] else ', not required'
                lines += wrap('%s: %s (%s%s): %s' % (r['node'], e['name'], e['url'], optional, e['msg'] or yes_no(e['answering'])),
                              width, indent='  ')
    reasons = [r for r in data['nodes'] if r['ready'] is not True and r['msg']]
    if reasons:
        lines += ['', 'not ready:']
        for r in reasons:
            lines += wrap('%s: %s' % (r['node'], _strip_prefix(r['msg'], 'not ready: ')), width, indent='  ')
    drifted = [r for r in data['nodes'] if r['drift']]
    if drifted:
        lines += ['', 'drift (install_csi puts it back):']
        for r in drifted:
            for d in r['drift']:
                lines += wrap('%s: %s: %s' % (r['node'], d['cause'], d['detail']), width, indent='  ')
    lines += [''] + wrap(_readiness_title(readiness), width)
    if readiness['nodes']:
        cells = [[n['node_name'], yes_no(n['restarted']), n['kube_scheduler'] or UNKNOWN] for n in readiness['nodes']]
        lines += table(READINESS_COLUMNS, cells, width, indent='  ')
    lines += ['', shorten('%s (times in UTC)' % data['summary'], width)]
    return lines
