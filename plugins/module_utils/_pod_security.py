# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.pod_security_admission``: the PodSecurity admission defaults of a cluster.

kube-apiserver's PodSecurity admission reads its cluster-wide defaults and exemptions from an
``AdmissionConfiguration`` file (``--admission-control-config-file``; on k3s a ``kube-apiserver-arg``)
whose ``PodSecurity`` plugin entry holds a ``PodSecurityConfiguration``
(``pod-security.admission.config.k8s.io/v1``): a level (``privileged``, ``baseline``, ``restricted``) and a
version (``latest`` or ``v1.<minor>``) for each mode (``enforce``, ``audit``, ``warn``), and exempt
namespaces, usernames and runtime classes. The API server refuses to start on a file it cannot read
(an unknown level, a version that is not ``latest`` or ``v1.<minor>``, a namespace that is not a
DNS-1123 label, a runtime class that is not a DNS-1123 subdomain, an empty or repeated name): every one
of those is refused here first, naming the option, before anything is read for writing.

The file is the collection's when its first line is :data:`MARKER`; it is rendered from the options
alone (same options, same bytes), mode 0600 and root's after every write. A file at the path that is
not ours is never written over or removed.

Pure standard library; no Ansible import.
"""

from __future__ import annotations

import re

from ansible_collections.baremetal.k3s.plugins.module_utils import _names as names
from ansible_collections.baremetal.k3s.plugins.module_utils import _yamledit as yamledit
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, Plan, PlanError

MARKER = ('# Managed by baremetal.k3s (pod_security_admission): the PodSecurity admission defaults, '
          'rewritten from the role\'s variables.')

LEVELS = ('privileged', 'baseline', 'restricted')
MODES = ('enforce', 'audit', 'warn')
# pod-security-admission api.ParseVersion: "latest", or v1.<minor> with no leading zero
VERSION = re.compile(r'latest|v1\.(?:0|[1-9][0-9]*)')
EXEMPTIONS = (('exempt_namespaces', 'namespaces'), ('exempt_usernames', 'usernames'),
              ('exempt_runtime_classes', 'runtimeClasses'))
KEYS = tuple(m for mode in MODES for m in (mode, mode + '_version')) + tuple(k for k, dummy in EXEMPTIONS)
# k3s's own system pods must keep running (the hardening guide exempts kube-system too)
DEFAULT_EXEMPT_NAMESPACES = ('kube-system',)
ARG_KEY = 'admission-control-config-file'


def apiserver_arg(path):
    """The kube-apiserver argument that makes the API server read ``path``, as k3s's kube-apiserver-arg takes it."""
    return '%s=%s' % (ARG_KEY, path)


def _level(where, value):
    if value not in LEVELS:
        raise PlanError('%s %r is not a PodSecurity level: use one of %s. Nothing was changed.'
                        % (where, value, ', '.join(LEVELS)))
    return value


def _version(where, value):
    if not isinstance(value, str) or not VERSION.fullmatch(value):
        raise PlanError('%s %r is not a PodSecurity version: use "latest" or "v1.<minor>" (for example v1.33), as the '
                        'API server reads it. Nothing was changed.' % (where, value))
    return value


def _username(where, value):
    if not isinstance(value, str) or not value:
        raise PlanError('%s %r is not a user name: give a non-empty string (for example '
                        'system:serviceaccount:kube-system:replicaset-controller). Nothing was changed.' % (where, value))
    bad = names.control_character(value)
    if bad:
        raise PlanError('%s %r holds the control character %s: give the user name as the API server knows it. Nothing '
                        'was changed.' % (where, value, bad))
    try:
        yamledit.render_string(value)
    except ValueError as e:
        raise PlanError('%s: %s. Nothing was changed.' % (where, e)) from e
    return value


_NAME_CHECKS = {
    'exempt_namespaces': lambda where, v: names.check(where, v, names.DNS_LABEL, PlanError,
                                                      'a namespace name, as the API server requires. Nothing was changed'),
    'exempt_runtime_classes': lambda where, v: names.check(where, v, names.DNS_SUBDOMAIN, PlanError,
                                                           'a RuntimeClass name. Nothing was changed'),
    'exempt_usernames': _username,
}


def settings(given, where=''):
    """The validated settings: every key of :data:`KEYS` filled in (levels ``privileged``, versions ``latest``,
    ``kube-system`` exempt when no namespaces are given); an unknown key, level, version or name is refused by name.
    ``where`` prefixes the option names in messages (a role's variable: ``k3s_server_pod_security.``)."""
    given = {} if given is None else given
    if not isinstance(given, dict):
        raise PlanError('%s must be a mapping of %s; got %s. Nothing was changed.'
                        % (where.rstrip('.') or 'the settings', ', '.join(KEYS), type(given).__name__))
    unknown = sorted(str(k) for k in given if k not in KEYS)
    if unknown:
        raise PlanError('%s: unknown %s %s; the PodSecurity settings are %s. Nothing was changed.'
                        % (where.rstrip('.') or 'settings', 'key' if len(unknown) == 1 else 'keys',
                           ', '.join(where + k for k in unknown), ', '.join(KEYS)))
    out = {}
    for mode in MODES:
        level = given.get(mode)
        out[mode] = _level(where + mode, 'privileged' if level is None else level)
        version = given.get(mode + '_version')
        out[mode + '_version'] = _version(where + mode + '_version', 'latest' if version is None else version)
    for key, dummy in EXEMPTIONS:
        value = given.get(key)
        if value is None:
            value = list(DEFAULT_EXEMPT_NAMESPACES) if key == 'exempt_namespaces' else []
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise PlanError('%s must be a list of names; got %r. Nothing was changed.' % (where + key, value))
        seen = set()
        for i, item in enumerate(value):
            item_where = '%s%s[%d]' % (where, key, i)
            _NAME_CHECKS[key](item_where, item)
            if item in seen:
                raise PlanError('%s %r is given twice: the API server refuses a repeated name. Nothing was changed.'
                                % (item_where, item))
            seen.add(item)
        out[key] = list(value)
    return out


def _string(value):
    return yamledit.render_string(value)


def render(s):
    """The file's bytes for validated settings ``s``: the marker, then the AdmissionConfiguration."""
    lines = [MARKER,
             'apiVersion: apiserver.config.k8s.io/v1',
             'kind: AdmissionConfiguration',
             'plugins:',
             '  - name: PodSecurity',
             '    configuration:',
             '      apiVersion: pod-security.admission.config.k8s.io/v1',
             '      kind: PodSecurityConfiguration',
             '      defaults:']
    for mode in MODES:
        lines.append('        %s: %s' % (mode, _string(s[mode])))
        lines.append('        %s-version: %s' % (mode, _string(s[mode + '_version'])))
    lines.append('      exemptions:')
    for key, field in EXEMPTIONS:
        lines.append('        %s: [%s]' % (field, ', '.join(_string(v) for v in s[key])))
    return ('\n'.join(lines) + '\n').encode('utf-8')


def owned(data):
    """True when the file's first line is our marker."""
    return data is not None and data.split(b'\n', 1)[0].rstrip(b'\r') == MARKER.encode()


def plan(view, params):
    """The Plan: write our file (``state: present``), remove it (``absent``), or refuse a file that is not ours."""
    path = params['path']
    if not isinstance(path, str) or not path.startswith('/'):
        raise PlanError('path %r must be an absolute path on the node. Nothing was changed.' % (path,))
    present = params.get('state', 'present') == 'present'
    s = None
    if present and params.get('settings') is not None:
        s = settings(params['settings'], (params.get('settings_name') or 'settings') + '.')
    elif present:
        s = settings({k: params.get(k) for k in KEYS if params.get(k) is not None})
    if view.isdir(path):
        raise PlanError('%s is a directory; give the path of the admission configuration file. Nothing was changed.'
                        % path)
    before = view.read(path)
    ours = owned(before)
    facts = {'path': path, 'apiserver_arg': apiserver_arg(path), 'settings': s or {}, 'owned': ours}
    if not present:
        if before is None or not ours:
            return Plan([], facts, warnings=[] if before is None else [
                '%s was not written by baremetal.k3s (its first line is not our marker): it is left as it is.' % path])
        facts['owned'] = False
        return Plan([Change(path, before, None, secret=True)], facts)
    if before is not None and not ours:
        raise PlanError('%s exists and was not written by baremetal.k3s (its first line is not our marker), so it is '
                        'left as it is and nothing was changed. Move it away (its settings go into the role\'s '
                        'pod security variable), or give the collection another path.' % path, path=path)
    facts['owned'] = True
    # root's alone after every write, as kube-apiserver's other configuration files are
    return Plan([Change(path, before, render(s), mode=0o600, owner='root', group='root', secret=True)], facts)
