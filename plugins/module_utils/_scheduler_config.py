# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""KubeSchedulerConfiguration: versions, strict validation, and the extender merge.

Pure logic, no Ansible import. ``validate_text`` answers "would kube-scheduler accept
this file", with kube-scheduler-like messages carrying the field path. ``plan`` turns
an existing file (or none) and the module's options into the new file content, keeping
every key, value, comment and order it does not own.

YAML: the document is read as kube-scheduler reads it (``_goyaml``: go-yaml v2's scalars,
duplicate keys refused, sigs.k8s.io/yaml's JSON) and edited through ``_yamledit``, which
splices our entry into the text and leaves every other byte alone (CRLF, BOM, ``---``/``...``,
comments, indentation, ``extenders: []``, JSON). Our entry carries a marker comment
(``# baremetal.k3s extender: <name>``) that finds it again whatever its URL. In a flow or JSON
list, where no comment can stand, the module keeps a *record* instead (``RECORD_DIR``, one JSON
file per scheduler config, written with the config and removed when the last of our unmarked
entries goes): each name with the entry as written. An entry is ours by the record only while
it is exactly as written, and only one entry is; an entry another hand changed is no longer ours
and is never removed. Without a record (a file of an older version, or written by hand), a
listed extender finds its entry by its ``urlPrefix``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import posixpath
import re

from ansible_collections.baremetal.k3s.plugins.module_utils import _goyaml as goyaml
from ansible_collections.baremetal.k3s.plugins.module_utils import _platform
from ansible_collections.baremetal.k3s.plugins.module_utils import _scheduler_config_schema as schema
from ansible_collections.baremetal.k3s.plugins.module_utils import _url
from ansible_collections.baremetal.k3s.plugins.module_utils import _yamledit as yamledit
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, Plan, PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import ViewError

HAS_YAML = goyaml.HAS_YAML
YAML_IMPORT_ERROR = goyaml.YAML_IMPORT_ERROR

GROUP = schema.GROUP
KIND = schema.KIND
MARKER = '# Created by baremetal.k3s.scheduler_config; it deletes this file when our extender is removed and nothing else is left.'
MARKER_KEY = 'Created by baremetal.k3s.scheduler_config'
DEFAULT_NAME = 'default'

# apiVersion -> (first minor, last minor or None) of Kubernetes 1.x that accepts it
VERSIONS = {
    'v1beta1': (19, 22),
    'v1beta2': (22, 27),
    'v1beta3': (23, 28),
    'v1': (25, None),
}
VERSION_ORDER = ('v1beta1', 'v1beta2', 'v1beta3', 'v1')

# (platform, the scheduler kubeconfig it gives by default), offered when a config names none
PLATFORM_KUBECONFIGS = tuple((p.name, p.format(p.scheduler_kubeconfig)) for p in _platform.PLATFORMS.values())

# Directories whose every file is read by the kubelet: never put a backup there.


class SchedulerConfigError(PlanError):
    """A refusal: ``msg`` says what is wrong and what to do; ``errors`` lists field errors."""

    def __init__(self, msg, errors=None):
        super().__init__(msg, errors=list(errors or []))
        self.errors = list(errors or [])


# ---------------------------------------------------------------- versions
_K8S_VERSION = re.compile(r'^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$')


def parse_kubernetes_version(text):
    """``v1.31.4+k3s1``, ``v1.29.3+rke2r1``, ``1.30`` -> (1, 31). Raises SchedulerConfigError."""
    m = _K8S_VERSION.match(str(text).strip())
    if not m or int(m.group(1)) != 1:
        raise SchedulerConfigError(
            'kubernetes_version %r is not a Kubernetes version; give the scheduler binary\'s version, '
            'for example v1.31.4+k3s1 (k3s --version), v1.29.3+rke2r1 (rke2 --version) or 1.30' % (text,))
    return int(m.group(1)), int(m.group(2))


def accepted_versions(minor):
    """apiVersions (short) accepted by Kubernetes 1.<minor>, oldest first."""
    out = []
    for version in VERSION_ORDER:
        first, last = VERSIONS[version]
        if minor >= first and (last is None or minor <= last):
            out.append(version)
    return out


def short_version(api_version):
    """``kubescheduler.config.k8s.io/v1`` -> ``v1``; None when the group or version is unknown."""
    if not isinstance(api_version, str):
        return None
    group, sep, version = api_version.rpartition('/')
    if sep and group == GROUP and version in VERSIONS:
        return version
    return None


def resolve_api_version(api_version, kubernetes_version):
    """The short apiVersion to write for a new file."""
    minor = parse_kubernetes_version(kubernetes_version)[1] if kubernetes_version else None
    if api_version in (None, 'auto'):
        if minor is None:
            return 'v1'
        accepted = accepted_versions(minor)
        if not accepted:
            raise SchedulerConfigError(
                'Kubernetes 1.%d accepts no KubeSchedulerConfiguration version this module knows '
                '(v1beta1 starts with 1.19); give a kubernetes_version of 1.19 or later' % minor)
        return accepted[-1]
    if api_version not in VERSIONS:
        raise SchedulerConfigError('api_version %r is unknown; use one of auto, %s' % (api_version, ', '.join(VERSION_ORDER)))
    if minor is not None and api_version not in accepted_versions(minor):
        raise SchedulerConfigError(
            'kube-scheduler 1.%d does not accept %s/%s (it accepts: %s); use api_version: auto or one of those'
            % (minor, GROUP, api_version, ', '.join(accepted_versions(minor)) or 'none'))
    return api_version


# ---------------------------------------------------------------- YAML
def load_strict(text, name='the file'):
    """The document as kube-scheduler reads it: one YAML (or JSON) document, duplicate keys refused,
    turned into JSON as sigs.k8s.io/yaml does (go-yaml v2's scalars: ``y`` is true, ``0o17`` is 15).

    Returns the document (None for an empty file). Raises SchedulerConfigError.
    """
    if not goyaml.HAS_YAML:
        raise SchedulerConfigError('PyYAML is required to read a scheduler config')
    try:
        docs = goyaml.compose_all(text, name)
        if len(docs) > 1:
            raise SchedulerConfigError(
                'the file holds %d YAML documents; kube-scheduler reads a single KubeSchedulerConfiguration: '
                'keep one document and remove the others' % len(docs))
        return goyaml.load_json(text, strict=True, name=name)
    except goyaml.GoYamlError as e:
        raise SchedulerConfigError('the file is not valid YAML: %s; fix the syntax or remove the file' % (e,))


# ---------------------------------------------------------------- names
_QUALIFIED_NAME = re.compile(r'^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$')
_DNS1123_SUBDOMAIN = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')
_QN_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
           "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
           "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def qualified_name_errors(value):
    """Messages of Kubernetes' IsQualifiedName (label keys, extended resource names)."""
    errs = []
    parts = value.split('/')
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append('prefix part must be non-empty')
        else:
            if len(prefix) > 253:
                errs.append('prefix part must be no more than 253 bytes')
            if not _DNS1123_SUBDOMAIN.fullmatch(prefix):
                errs.append("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                            "characters, '-' or '.', and must start and end with an alphanumeric character")
    else:
        return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                "end with an alphanumeric character, with an optional DNS subdomain prefix and '/'"]
    if not name:
        errs.append('name part must be non-empty')
    else:
        if len(name) > 63:
            errs.append('name part must be no more than 63 bytes')
        if not _QUALIFIED_NAME.fullmatch(name):
            errs.append(_QN_MSG)
    return errs


def is_extended_resource_name(name):
    """Kubernetes' IsExtendedResourceName."""
    if '/' not in name or 'kubernetes.io/' in name:
        return False
    if name.startswith('requests.'):
        return False
    return not qualified_name_errors('requests.' + name)


# ---------------------------------------------------------------- field errors
def _q(value):
    if isinstance(value, str):
        return '"%s"' % value
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return str(value)


def invalid(path, value, detail):
    return '%s: Invalid value: %s: %s' % (path, _q(value), detail)


def required(path, detail=''):
    return '%s: Required value%s' % (path, (': ' + detail) if detail else '')


def duplicate(path, value):
    return '%s: Duplicate value: %s' % (path, _q(value))


def not_supported(path, value, supported):
    return '%s: Unsupported value: %s: supported values: %s' % (path, _q(value), ', '.join('"%s"' % s for s in supported))


def forbidden(path, detail):
    return '%s: Forbidden: %s' % (path, detail)


# ---------------------------------------------------------------- plugins
# In-tree plugins of kube-scheduler (v1 API, Kubernetes 1.36: pkg/scheduler/framework/plugins/registry.go) and the
# extension points each implements. Enabling a plugin at another point is refused
# (kube-scheduler: 'plugin "X" does not extend Y plugin'). The placement* points are alpha and refused
# as fields, but the plugins that implement them may still be named in multiPoint.
_IN_TREE_V1 = {
    'PrioritySort': ('queueSort',),
    'SchedulingGates': ('preEnqueue',),
    'NodeUnschedulable': ('filter',),
    'NodeName': ('filter',),
    'TaintToleration': ('filter', 'preScore', 'score'),
    'NodeAffinity': ('preFilter', 'filter', 'preScore', 'score'),
    'NodePorts': ('preFilter', 'filter'),
    'NodeResourcesFit': ('preFilter', 'filter', 'preScore', 'score', 'placementScore'),
    'VolumeRestrictions': ('preFilter', 'filter'),
    'NodeVolumeLimits': ('preFilter', 'filter'),
    'VolumeBinding': ('preFilter', 'filter', 'reserve', 'preBind', 'preScore', 'score'),
    'VolumeZone': ('preFilter', 'filter'),
    'PodTopologySpread': ('preFilter', 'filter', 'preScore', 'score'),
    'InterPodAffinity': ('preFilter', 'filter', 'preScore', 'score'),
    'DefaultPreemption': ('preEnqueue', 'postFilter'),
    'NodeResourcesBalancedAllocation': ('preScore', 'score'),
    'ImageLocality': ('score',),
    'DefaultBinder': ('bind',),
    'DynamicResources': ('preEnqueue', 'preFilter', 'filter', 'postFilter', 'score', 'reserve', 'preBind'),
    'NodeDeclaredFeatures': ('preFilter', 'filter'),
    'GangScheduling': ('preEnqueue', 'permit'),
    'TopologyPlacementGenerator': ('placementGenerate',),
    'PodGroupPodsCount': ('placementScore',),
}
_DEFAULT_MULTIPOINT_V1 = (
    'SchedulingGates', 'PrioritySort', 'NodeUnschedulable', 'NodeName', 'TaintToleration', 'NodeAffinity',
    'NodePorts', 'NodeResourcesFit', 'VolumeRestrictions', 'NodeVolumeLimits', 'VolumeBinding', 'VolumeZone',
    'PodTopologySpread', 'InterPodAffinity', 'DynamicResources', 'DefaultPreemption',
    'NodeResourcesBalancedAllocation', 'ImageLocality', 'DefaultBinder', 'NodeDeclaredFeatures')
# Removed in the v1 API (kube-scheduler: 'was invalid in version ...').
_INVALID_IN_V1 = ('AzureDiskLimits', 'CinderLimits', 'EBSLimits', 'GCEPDLimits')


def _plugin_set(plugins, point):
    ps = plugins.get(point) or {}
    return ps.get('enabled') or [], ps.get('disabled') or []


def _validate_plugins_v1(ppath, profile, name):
    """What kube-scheduler checks when it builds a profile's framework (v1 only)."""
    errs = []
    plugins = profile.get('plugins') or {}
    for point in schema.EXTENSION_POINTS['v1']:
        enabled, _disabled = _plugin_set(plugins, point)
        seen = set()
        for i, plugin in enumerate(enabled):
            pname = plugin.get('name', '')
            path = '%s.plugins.%s.enabled[%d]' % (ppath, point, i)
            if pname in _INVALID_IN_V1:
                if point != 'multiPoint':
                    errs.append(invalid(path, pname, 'was invalid in version "%s/v1" (KubeSchedulerConfiguration is version "%s/v1")'
                                        % (GROUP, GROUP)))
                else:
                    errs.append('%s: plugin "%s" does not exist in kube-scheduler 1.25 and later; remove it' % (path, pname))
                continue
            if pname not in _IN_TREE_V1:
                errs.append('%s: plugin "%s" does not exist; kube-scheduler has no such in-tree plugin '
                            '(known: %s)' % (path, pname, ', '.join(sorted(_IN_TREE_V1))))
                continue
            if point != 'multiPoint' and point not in _IN_TREE_V1[pname]:
                errs.append('%s: plugin "%s" does not extend %s plugin; it implements: %s'
                            % (path, pname, point, ', '.join(_IN_TREE_V1[pname])))
            if pname in seen:
                errs.append('%s: plugin "%s" already registered as "%s"' % (path, pname, point))
            seen.add(pname)
    for point, label in (('queueSort', 'queue sort'), ('bind', 'bind')):
        count = len(_effective(plugins, point))
        if point == 'queueSort' and count != 1:
            errs.append('%s: only one %s plugin required for profile with scheduler name "%s", but got %d'
                        % (ppath, label, name, count))
        if point == 'bind' and count == 0:
            errs.append('%s: at least one bind plugin is needed for profile with scheduler name "%s"' % (ppath, name))
    errs.extend(_score_weight_errors(ppath, plugins))
    return errs


# Weights of the score plugins in kube-scheduler's default multiPoint set (v1, Kubernetes 1.36).
_DEFAULT_SCORE_WEIGHTS_V1 = {'TaintToleration': 3, 'NodeAffinity': 2, 'NodeResourcesFit': 1, 'PodTopologySpread': 2,
                             'InterPodAffinity': 2, 'DynamicResources': 2, 'NodeResourcesBalancedAllocation': 1, 'ImageLocality': 1}
_MAX_INT64 = 2 ** 63 - 1


def _wrap64(value):
    return (value + 2 ** 63) % 2 ** 64 - 2 ** 63


def _merged_multipoint(plugins):
    """multiPoint.enabled after kube-scheduler merges it into its defaults: [(name, weight)], in its order."""
    mp_enabled, mp_disabled = _plugin_set(plugins, 'multiPoint')
    disabled = {p.get('name', '') for p in mp_disabled}
    custom = {p.get('name', ''): i for i, p in enumerate(mp_enabled)}
    out, replaced = [], set()
    if '*' not in disabled:
        for pname in _DEFAULT_MULTIPOINT_V1:
            if pname in disabled:
                continue
            if pname in custom:
                replaced.add(custom[pname])
                out.append((pname, mp_enabled[custom[pname]].get('weight', 0)))
            else:
                out.append((pname, _DEFAULT_SCORE_WEIGHTS_V1.get(pname, 0)))
    out.extend((p.get('name', ''), p.get('weight', 0)) for i, p in enumerate(mp_enabled) if i not in replaced)
    return out


def _score_weight_errors(ppath, plugins):
    """kube-scheduler's overflow check of the summed score weights (int64 arithmetic, so a negative weight
    followed by another score plugin trips it)."""
    score_enabled, _disabled = _plugin_set(plugins, 'score')
    entries = [(p.get('name', ''), p.get('weight', 0)) for p in score_enabled] + _merged_multipoint(plugins)
    weights = {}
    total = 0
    for pname, weight in entries:
        if 'score' not in _IN_TREE_V1.get(pname, ()) or pname in weights:
            continue
        weight = weight or 1
        weights[pname] = weight
        if weight * 100 > _wrap64(_MAX_INT64 - total):
            return ['%s.plugins: score plugin weights: total score of Score plugins could overflow (weight %d of plugin "%s"); '
                    'use weights from 1 to 100' % (ppath, weight, pname)]
        total = _wrap64(total + weight * 100)
    return []


def _effective(plugins, point):
    """Plugins that end up at ``point`` after merging defaults and expanding multiPoint."""
    enabled, disabled = _plugin_set(plugins, point)
    mp_enabled, mp_disabled = _plugin_set(plugins, 'multiPoint')
    mp_disabled_names = {p.get('name', '') for p in mp_disabled}
    names = [p.get('name', '') for p in enabled]
    disabled_names = {p.get('name', '') for p in disabled}
    multipoint = [] if '*' in mp_disabled_names else [n for n in _DEFAULT_MULTIPOINT_V1 if n not in mp_disabled_names]
    multipoint += [p.get('name', '') for p in mp_enabled if p.get('name', '') not in multipoint]
    for pname in multipoint:
        if pname in names or '*' in disabled_names or pname in disabled_names:
            continue
        if point in _IN_TREE_V1.get(pname, ()):
            names.append(pname)
    return names


# ---------------------------------------------------------------- plugin args
def _needed_plugins_v1(plugins):
    """Names of the plugins kube-scheduler instantiates for a profile (enabled anywhere, defaults included)."""
    names = {name for name, _weight in _merged_multipoint(plugins)}
    for point in schema.EXTENSION_POINTS['v1']:
        names.update(p.get('name', '') for p in _plugin_set(plugins, point)[0])
    return names


# kube-scheduler 1.36 checks NodeResourcesFitArgs only when it creates the plugin (its validatePluginConfig
# table names it "NodeResourcesFitArgs", so the profile-level check never applies).
_ARGS_CHECKED_ONLY_WHEN_NEEDED = ('NodeResourcesFit',)


# When an extender's managedResources has ignoredByScheduler: true, kube-scheduler overwrites every
# profile's NodeResourcesFitArgs.ignoredResources with those names before it creates the plugin: the
# file's own list is decoded (its types must be right) but never validated, and never used.
_REPLACED_BY_EXTENDERS = {'NodeResourcesFit': ('ignoredResources',)}


def _extenders_ignore_resources(extenders):
    """True when some extender's managedResources has ignoredByScheduler: true."""
    return isinstance(extenders, list) and any(
        isinstance(res, dict) and res.get('ignoredByScheduler')
        for ext in extenders if isinstance(ext, dict) for res in ext.get('managedResources') or [])


def _validate_args(version, apath, pname, args, needed=True, replaced=()):
    """Decode and validate one pluginConfig's args (in-tree plugins with an args type).

    ``replaced`` names fields kube-scheduler overwrites before it checks them (checked for type only).
    """
    errs = []
    typ = schema.PLUGIN_ARGS[version].get(pname)
    if typ is None:
        return errs
    if not isinstance(args, dict):
        return ['%s: args for plugin %s must be a mapping of %s fields (this module refuses %s here)'
                % (apath, pname, typ.name, schema.go_type_name(args))]
    decoded = schema.decode(typ, args, apath, errs)
    if errs or decoded is None:
        return errs
    kind = decoded.get('kind')
    if kind and kind != typ.name:
        errs.append('%s: args for plugin %s were not of type %s/%s, got %s; remove kind or set it to %s'
                    % (apath, pname, GROUP, typ.name, kind, typ.name))
    if decoded.get('apiVersion') and decoded['apiVersion'] != '%s/%s' % (GROUP, version):
        errs.append('%s.apiVersion: args must use the document\'s apiVersion %s/%s, got %s'
                    % (apath, GROUP, version, decoded['apiVersion']))
    checker = _ARGS_CHECKS.get(pname)
    if checker and (needed or pname not in _ARGS_CHECKED_ONLY_WHEN_NEEDED):
        errs.extend(checker(apath, {k: v for k, v in decoded.items() if k not in replaced}, version))
    return errs


def _args_default_preemption(path, args, _version):
    errs = []
    pct = args.get('minCandidateNodesPercentage', 10)
    absolute = args.get('minCandidateNodesAbsolute', 100)
    if pct < 0 or pct > 100:
        errs.append(invalid(path + '.minCandidateNodesPercentage', pct, 'not in valid range [0, 100]'))
    if absolute < 0:
        errs.append(invalid(path + '.minCandidateNodesAbsolute', absolute, 'not in valid range [0, inf)'))
    if pct == 0 and absolute == 0:
        errs.append(invalid(path + '.minCandidateNodesPercentage', pct, 'cannot be zero at the same time as minCandidateNodesAbsolute'))
        errs.append(invalid(path + '.minCandidateNodesAbsolute', absolute, 'cannot be zero at the same time as minCandidateNodesPercentage'))
    return errs


def _args_inter_pod_affinity(path, args, _version):
    w = args.get('hardPodAffinityWeight', 1)
    if w < 0 or w > 100:
        return [invalid(path + '.hardPodAffinityWeight', w, 'not in valid range [0, 100]')]
    return []


def _shape_errors(shape, path):
    errs = []
    if not shape:
        return [required(path, 'at least one point must be specified')]
    for i in range(1, len(shape)):
        if shape[i - 1].get('utilization', 0) >= shape[i].get('utilization', 0):
            errs.append(invalid('%s[%d].utilization' % (path, i), shape[i].get('utilization', 0), 'values must be sorted in increasing order'))
            break
    for i, point in enumerate(shape):
        u, s = point.get('utilization', 0), point.get('score', 0)
        if u < 0 or u > 100:
            errs.append(invalid('%s[%d].utilization' % (path, i), u, 'not in valid range [0, 100]'))
        if s < 0 or s > 10:
            errs.append(invalid('%s[%d].score' % (path, i), s, 'not in valid range [0, 10]'))
    return errs


def _args_balanced(path, args, _version):
    errs = []
    seen = set()
    for i, res in enumerate(args.get('resources') or []):
        rname = res.get('name', '')
        if rname in seen:
            errs.append(duplicate('%s.resources[%d].name' % (path, i), rname))
        seen.add(rname)
        weight = res.get('weight', 0) or 1  # 0 is defaulted to 1
        if weight != 1:
            errs.append(invalid('%s.resources[%d].weight' % (path, i), weight, 'must be 1'))
    return errs


def _args_fit(path, args, version):
    errs = []
    for i, res in enumerate(args.get('ignoredResources') or []):
        errs.extend(invalid('%s.ignoredResources[%d]' % (path, i), res, m) for m in qualified_name_errors(res))
    for i, group in enumerate(args.get('ignoredResourceGroups') or []):
        gpath = '%s.ignoredResourceGroups[%d]' % (path, i)
        if '/' in group:
            errs.append(invalid(gpath, group, "resource group name can't contain '/'"))
        errs.extend(invalid(gpath, group, m) for m in qualified_name_errors(group))
    if version == 'v1beta1':
        return errs
    strategy = args.get('scoringStrategy')
    if strategy is None:
        return errs  # defaulted to LeastAllocated with cpu and memory
    spath = path + '.scoringStrategy'
    stype = strategy.get('type', '')
    supported = ('LeastAllocated', 'MostAllocated', 'RequestedToCapacityRatio')
    if stype not in supported:
        errs.append(not_supported(spath + '.type', stype, supported))
    for i, res in enumerate(strategy.get('resources') or []):
        weight = res.get('weight', 0) or 1
        if weight <= 0 or weight > 100:
            errs.append(invalid('%s.resources[%d].weight' % (spath, i), weight,
                                'resource weight of %s not in valid range (0, 100]' % res.get('name', '')))
    rtcr = strategy.get('requestedToCapacityRatio')
    if stype == 'RequestedToCapacityRatio':
        if rtcr is None:
            errs.append(required(spath + '.requestedToCapacityRatio', 'must be specified when type is RequestedToCapacityRatio'))
        else:
            errs.extend(_shape_errors(rtcr.get('shape') or [], spath + '.requestedToCapacityRatio.shape'))
    elif rtcr is not None:
        errs.append(forbidden(spath + '.requestedToCapacityRatio', 'must be nil when type is not RequestedToCapacityRatio'))
    return errs


def _args_spread(path, args, version):
    errs = []
    constraints = args.get('defaultConstraints') or []
    dtype = args.get('defaultingType', '')
    if not dtype:
        dtype = 'List' if (version == 'v1beta1' and constraints) else 'System'
    if dtype not in ('System', 'List'):
        errs.append(not_supported(path + '.defaultingType', dtype, ('System', 'List')))
    elif dtype == 'System' and constraints:
        errs.append(invalid(path + '.defaultingType', dtype, 'when .defaultConstraints are not empty'))
    for i, c in enumerate(constraints):
        cpath = '%s.defaultConstraints[%d]' % (path, i)
        if c.get('maxSkew', 0) <= 0:
            errs.append(invalid(cpath + '.maxSkew', c.get('maxSkew', 0), 'not in valid range (0, inf)'))
        key = c.get('topologyKey', '')
        if not key:
            errs.append(required(cpath + '.topologyKey', 'can not be empty'))
        else:
            errs.extend(invalid(cpath + '.topologyKey', key, m) for m in qualified_name_errors(key))
        when = c.get('whenUnsatisfiable', '')
        if not when:
            errs.append(required(cpath + '.whenUnsatisfiable', 'can not be empty'))
        elif when not in ('DoNotSchedule', 'ScheduleAnyway'):
            errs.append(not_supported(cpath + '.whenUnsatisfiable', when, ('DoNotSchedule', 'ScheduleAnyway')))
        if 'labelSelector' in c:
            errs.append(forbidden(cpath + '.labelSelector', 'constraint must not define a selector, as they deduced for each pod'))
        for other in constraints[:i]:
            if other.get('topologyKey', '') == key and other.get('whenUnsatisfiable', '') == when:
                errs.append(duplicate('%s.defaultConstraints[%d]' % (path, i), '{%s, %s}' % (key, when)))
                break
    return errs


_LABEL_VALUE = re.compile(r'^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$')
_SELECTOR_OPERATORS = ('DoesNotExist', 'Exists', 'Gt', 'In', 'Lt', 'NotIn')


def label_value_errors(value):
    """Messages of Kubernetes' IsValidLabelValue."""
    errs = []
    if len(value) > 63:
        errs.append('must be no more than 63 characters')
    if not _LABEL_VALUE.fullmatch(value):
        errs.append("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and "
                    "end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
    return errs


def _is_int64(text):
    """Go's strconv.ParseInt(text, 10, 64) succeeds."""
    return bool(re.fullmatch(r'[-+]?[0-9]+', text)) and -(2 ** 63) <= int(text) <= 2 ** 63 - 1


def _selector_term_errors(term, path):
    """What component-helpers' nodeaffinity parser refuses in one node selector term (labels.NewRequirement)."""
    errs = []
    for i, req in enumerate(term.get('matchExpressions') or []):
        rpath = '%s.matchExpressions[%d]' % (path, i)
        op, values, key = req.get('operator', ''), req.get('values') or [], req.get('key', '')
        if op not in _SELECTOR_OPERATORS:
            errs.append(not_supported(rpath + '.operator', op, _SELECTOR_OPERATORS))
            continue
        qn = qualified_name_errors(key)
        if qn:
            errs.append(invalid(rpath + '.key', key, '; '.join(qn)))
        if op in ('In', 'NotIn'):
            if not values:
                errs.append(invalid(rpath + '.values', values, "for 'in', 'notin' operators, values set can't be empty"))
        elif op in ('Exists', 'DoesNotExist'):
            if values:
                errs.append(invalid(rpath + '.values', values, 'values set must be empty for exists and does not exist'))
        else:
            if len(values) != 1:
                errs.append(invalid(rpath + '.values', values, "for 'Gt', 'Lt' operators, exactly one value is required"))
            for j, value in enumerate(values):
                if not _is_int64(value):
                    errs.append(invalid('%s.values[%d]' % (rpath, j), value, "for 'Gt', 'Lt' operators, the value must be an integer"))
        for j, value in enumerate(values):
            lv = label_value_errors(value)
            if lv:
                errs.append(invalid('%s.values[%d][%s]' % (rpath, j, key), value, '; '.join(lv)))
    for i, req in enumerate(term.get('matchFields') or []):
        rpath = '%s.matchFields[%d]' % (path, i)
        if req.get('operator', '') not in ('In', 'NotIn'):
            errs.append(not_supported(rpath + '.operator', req.get('operator', ''), ('In', 'NotIn')))
        elif len(req.get('values') or []) != 1:
            errs.append(invalid(rpath + '.values', req.get('values') or [], 'must have one element'))
    return errs


def _empty_term(term):
    return not term.get('matchExpressions') and not term.get('matchFields')


def _args_node_affinity(path, args, _version):
    """Empty terms, and preferred terms of weight 0, are skipped by kube-scheduler and not checked."""
    errs = []
    affinity = args.get('addedAffinity')
    if not affinity:
        return errs
    base = path + '.addedAffinity'
    req = affinity.get('requiredDuringSchedulingIgnoredDuringExecution')
    if req is not None:
        for i, term in enumerate(req.get('nodeSelectorTerms') or []):
            if not _empty_term(term):
                errs.extend(_selector_term_errors(term, '%s.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[%d]' % (base, i)))
    for i, pref in enumerate(affinity.get('preferredDuringSchedulingIgnoredDuringExecution') or []):
        term = pref.get('preference') or {}
        if pref.get('weight', 0) != 0 and not _empty_term(term):
            errs.extend(_selector_term_errors(term, '%s.preferredDuringSchedulingIgnoredDuringExecution[%d]' % (base, i)))
    return errs


def _args_volume_binding(path, args, _version):
    errs = []
    if args.get('bindTimeoutSeconds', 600) < 0:
        errs.append(invalid(path + '.bindTimeoutSeconds', args['bindTimeoutSeconds'],
                            'invalid BindTimeoutSeconds, should not be a negative value'))
    if 'shape' in args:
        errs.append(invalid(path + '.shape', 'shape', 'unexpected field `shape`, remove it or turn on the feature gate '
                            'StorageCapacityScoring (this module assumes the gate is off, its default)'))
    return errs


def _args_dynamic_resources(path, args, _version):
    errs = []
    if args.get('filterTimeout', 0) < 0:
        errs.append(invalid(path + '.filterTimeout', schema.format_duration(args['filterTimeout']), 'must be zero or positive'))
    if 'bindingTimeout' in args:
        errs.append(forbidden(path + '.bindingTimeout', 'needs the DRADeviceBindingConditions and DRAResourceClaimDeviceStatus '
                              'feature gates, which this module cannot see; remove it'))
    return errs


_ARGS_CHECKS = {
    'DefaultPreemption': _args_default_preemption,
    'InterPodAffinity': _args_inter_pod_affinity,
    'NodeResourcesBalancedAllocation': _args_balanced,
    'NodeResourcesFit': _args_fit,
    'PodTopologySpread': _args_spread,
    'NodeAffinity': _args_node_affinity,
    'VolumeBinding': _args_volume_binding,
    'DynamicResources': _args_dynamic_resources,
}


# ---------------------------------------------------------------- whole document
def _validate_leader_election(le):
    errs = []
    if not le.get('leaderElect', True):
        return errs
    lease = le.get('leaseDuration') or 15 * 10 ** 9
    renew = le.get('renewDeadline') or 10 * 10 ** 9
    retry = le.get('retryPeriod') or 2 * 10 ** 9
    for fname, value in (('leaseDuration', lease), ('renewDeadline', renew), ('retryPeriod', retry)):
        if value <= 0:
            errs.append(invalid('leaderElection.' + fname, schema.format_duration(value), 'must be greater than zero'))
    if lease <= renew:
        errs.append(invalid('leaderElection.leaseDuration', schema.format_duration(renew), 'LeaseDuration must be greater than RenewDeadline'))
    lock = le.get('resourceLock') or 'leases'
    if lock != 'leases':
        errs.append(invalid('leaderElection.resourceLock', lock, 'resourceLock value must be "leases"'))
    return errs


def _validate_extenders(extenders, files):
    errs = []
    binders = 0
    managed = set()
    for i, ext in enumerate(extenders):
        path = 'extenders[%d]' % i
        if ext.get('prioritizeVerb') and ext.get('weight', 0) <= 0:
            errs.append(invalid(path + '.weight', ext.get('weight', 0), 'must have a positive weight applied to it'))
        if ext.get('bindVerb'):
            binders += 1
        for j, res in enumerate(ext.get('managedResources') or []):
            rpath = '%s.managedResources[%d].name' % (path, j)
            rname = res.get('name', '')
            qn = qualified_name_errors(rname)
            errs.extend(invalid(rpath, rname, m) for m in qn)
            if not qn and not is_extended_resource_name(rname):
                errs.append(invalid(rpath, rname, 'is an invalid extended resource name'))
            if rname in managed:
                errs.append(invalid(rpath, rname, 'duplicate extender managed resource name'))
            managed.add(rname)
        errs.extend(_validate_tls(path + '.tlsConfig', ext.get('tlsConfig'), files))
    if binders > 1:
        errs.append(invalid('extenders', 'found %d extenders implementing bind' % binders, 'only one extender can implement bind'))
    return errs


def _validate_tls(path, tls, files):
    """What building the extender's HTTP transport refuses (and a few deliberate refusals)."""
    errs = []
    if tls is None:
        return errs
    has_ca = bool(tls.get('caFile') or tls.get('caData'))
    if has_ca and tls.get('insecure', False):
        errs.append(invalid(path + '.insecure', True, 'specifying a root certificates file with the insecure flag is not allowed'))
    has_cert = bool(tls.get('certFile') or tls.get('certData'))
    has_key = bool(tls.get('keyFile') or tls.get('keyData'))
    if has_cert != has_key:
        errs.append(invalid(path, 'certificate without key' if has_cert else 'key without certificate',
                            'give both a client certificate (certFile or certData) and its key (keyFile or keyData), or neither'))
    for fname, marker in (('caData', 'CERTIFICATE'), ('certData', 'CERTIFICATE'), ('keyData', 'PRIVATE KEY')):
        data = tls.get(fname)
        if data and ('-----BEGIN' not in data.decode('latin-1') or marker not in data.decode('latin-1')):
            errs.append(invalid('%s.%s' % (path, fname), '<%d bytes>' % len(data),
                                'is not PEM %s data (base64 of the PEM text is expected)' % marker))
    if files is not None:
        for fname in ('certFile', 'keyFile', 'caFile'):
            fpath = tls.get(fname)
            if fpath and not files.exists(fpath):
                errs.append(invalid('%s.%s' % (path, fname), fpath, 'no such file on the node; create it first or fix the path'))
    return errs


def _validate_client_connection(cc, files):
    errs = []
    if cc.get('burst', 0) < 0:
        errs.append(invalid('clientConnection.burst', cc['burst'], 'must be non-negative'))
    kubeconfig = cc.get('kubeconfig', '')
    offer = '; '.join('%s: %s' % pair for pair in PLATFORM_KUBECONFIGS)
    if not kubeconfig:
        errs.append(required('clientConnection.kubeconfig',
                             'kube-scheduler ignores --kubeconfig when --config is given and fails with "no configuration has been '
                             'provided"; set the scheduler kubeconfig of your platform (%s)' % offer))
    elif files is not None and files.isdir(kubeconfig):
        errs.append(invalid('clientConnection.kubeconfig', kubeconfig, 'is a directory; kube-scheduler fails to load it. Use the platform\'s '
                            'scheduler kubeconfig (%s)' % offer))
    elif files is not None and not files.exists(kubeconfig):
        errs.append(invalid('clientConnection.kubeconfig', kubeconfig,
                            'no such file on the node; kube-scheduler would fail to start. Use the platform\'s scheduler '
                            'kubeconfig (%s)' % offer))
    return errs


class NodeFiles(object):
    """What the validation asks about the node's files, answered by the caller (its View): this module reads none.

    ``exists(path)`` and ``isdir(path)`` (None: the caller knows of no directory, nothing is one).
    """

    def __init__(self, exists, isdir=None):
        self.exists = exists
        self.isdir = isdir if isdir is not None else (lambda _path: False)


def _node_files(check_files, exists, isdir):
    """The NodeFiles the file checks ask, None when they are off."""
    if not check_files:
        return None
    if exists is None:
        raise ValueError('check_files needs exists (and isdir) from the caller: this module reads no file of the node')
    return NodeFiles(exists, isdir)


def validate_data(data, version, check_files=True, exists=None, isdir=None):
    """Validate a parsed document of apiVersion ``version`` (short). Returns a list of errors.

    With ``check_files``, the files it names are looked up through ``exists`` and ``isdir``, the caller's.
    """
    files = _node_files(check_files, exists, isdir)
    errors = []
    decoded = schema.decode(schema.SCHEMAS[version], data, '', errors)
    if decoded is None:
        return errors
    if errors:
        return ['strict decoding error: ' + e for e in errors]
    errs = []
    errs.extend(_validate_client_connection(decoded.get('clientConnection') or {}, files))
    errs.extend(_validate_leader_election(decoded.get('leaderElection') or {}))
    parallelism = decoded.get('parallelism', 16)
    if parallelism <= 0:
        errs.append(invalid('parallelism', parallelism, 'should be an integer value greater than zero'))
    profiles = decoded.get('profiles')
    if profiles is None or len(profiles) == 0:
        profiles = [{}]
    extenders_ignore = _extenders_ignore_resources(decoded.get('extenders'))
    errs.extend(_validate_profiles(version, profiles, extenders_ignore))
    errs.extend(_validate_queue_sort(profiles, version))
    errs.extend(_validate_scheduling_numbers(decoded))
    errs.extend(_validate_extenders(decoded.get('extenders') or [], files))
    if version == 'v1' and extenders_ignore:
        errs.extend(_validate_ignored_resources(profiles))
    return errs


def _validate_profiles(version, profiles, extenders_ignore):
    """Each profile: its scheduler name (unique), percentageOfNodesToScore, plugins and pluginConfig."""
    errs = []
    seen = {}
    for i, profile in enumerate(profiles):
        ppath = 'profiles[%d]' % i
        # kube-scheduler names a profile default-scheduler only when it is the only one
        sname = profile.get('schedulerName', 'default-scheduler' if len(profiles) == 1 else '')
        if not sname:
            errs.append(required(ppath + '.schedulerName'))
        pct = profile.get('percentageOfNodesToScore')
        if pct is not None and (pct < 0 or pct > 100):
            errs.append(invalid(ppath + '.percentageOfNodesToScore', pct, 'not in valid range [0-100]'))
        if version == 'v1':
            errs.extend(_validate_plugins_v1(ppath, profile, sname))
        errs.extend(_validate_plugin_configs(version, ppath, profile, extenders_ignore))
        if sname in seen:
            errs.append(duplicate(ppath + '.schedulerName', 'profiles[%d].schedulerName' % seen[sname]))
        seen[sname] = i
    return errs


def _validate_plugin_configs(version, ppath, profile, extenders_ignore):
    """A profile's pluginConfig entries: unique names, none invalid in v1, args present and valid."""
    errs = []
    seen_config = set()
    for j, pc in enumerate(profile.get('pluginConfig') or []):
        cpath = '%s.pluginConfig[%d]' % (ppath, j)
        pname = pc.get('name', '')
        if pname in seen_config:
            errs.append(duplicate(cpath, pname))
        seen_config.add(pname)
        if version == 'v1' and pname in _INVALID_IN_V1:
            errs.append(invalid(cpath, pname, 'was invalid in version "%s/v1" (KubeSchedulerConfiguration is version "%s/v1")' % (GROUP, GROUP)))
            continue
        if 'args' in pc:
            needed = version != 'v1' or pname in _needed_plugins_v1(profile.get('plugins') or {})
            replaced = _REPLACED_BY_EXTENDERS.get(pname, ()) if extenders_ignore else ()
            errs.extend(_validate_args(version, cpath + '.args', pname, pc['args'], needed, replaced))
        elif pname in schema.PLUGIN_ARGS[version]:
            errs.append('%s.args: args for plugin %s are missing or null; give a mapping (this module refuses an empty args)'
                        % (cpath, pname))
    return errs


def _validate_scheduling_numbers(decoded):
    """The top-level percentageOfNodesToScore and the pod backoff seconds."""
    errs = []
    pct = decoded.get('percentageOfNodesToScore')
    if pct is not None and (pct < 0 or pct > 100):
        errs.append(invalid('percentageOfNodesToScore', pct, 'not in valid range [0-100]'))
    initial = decoded.get('podInitialBackoffSeconds', 1)
    maximum = decoded.get('podMaxBackoffSeconds', 10)
    if initial <= 0:
        errs.append(invalid('podInitialBackoffSeconds', initial, 'must be greater than 0'))
    if maximum < initial:
        errs.append(invalid('podMaxBackoffSeconds', maximum, 'must be greater than or equal to PodInitialBackoffSeconds'))
    return errs


def _validate_ignored_resources(profiles):
    """kube-scheduler copies the extenders' ignoredByScheduler resources into every profile's NodeResourcesFitArgs;
    a profile without them (NodeResourcesFit neither used nor configured) fails: "can't find NodeResourcesFitArgs"."""
    errs = []
    for i, profile in enumerate(profiles):
        configured = any(pc.get('name', '') == 'NodeResourcesFit' for pc in profile.get('pluginConfig') or [])
        if not configured and 'NodeResourcesFit' not in _needed_plugins_v1(profile.get('plugins') or {}):
            errs.append(invalid('profiles[%d].pluginConfig' % i, 'NodeResourcesFit',
                                "can't find NodeResourcesFitArgs in plugin config: an extender's managedResources has "
                                'ignoredByScheduler: true, so every profile needs NodeResourcesFit enabled or configured'))
    return errs


def _queue_sort_key(profile):
    qs = (profile.get('plugins') or {}).get('queueSort') or {}
    enabled = tuple((p.get('name', ''), p.get('weight')) for p in qs.get('enabled') or [])
    disabled = tuple(p.get('name', '') for p in qs.get('disabled') or [])
    return enabled, disabled


def _queue_sort_args(profile):
    """The queue sort plugin of a profile and its pluginConfig args (None when not configured), comparable."""
    plugins = profile.get('plugins') or {}
    effective = _effective(plugins, 'queueSort')
    name = effective[0] if effective else ''
    for pc in profile.get('pluginConfig') or []:
        if pc.get('name', '') == name:
            return name, json.dumps(pc.get('args'), sort_keys=True)
    return name, None


def _args_repr(pc):
    return json.dumps(pc['args'], sort_keys=True) if 'args' in pc else None


def _validate_queue_sort_configs(profiles):
    """kube-scheduler's validateCommonQueueSort on pluginConfig: every later profile's config named like the queue
    sort plugin explicitly enabled in profiles[0] ("" when none is) must carry the same args as profiles[0]'s."""
    errs = []
    enabled = ((profiles[0].get('plugins') or {}).get('queueSort') or {}).get('enabled') or []
    name = enabled[0].get('name', '') if enabled else ''
    canon = None
    if name:
        for pc in profiles[0].get('pluginConfig') or []:
            if pc.get('name', '') == name:
                canon = _args_repr(pc)
    for i in range(1, len(profiles)):
        for j, pc in enumerate(profiles[i].get('pluginConfig') or []):
            if pc.get('name', '') == name and _args_repr(pc) != canon:
                why = 'queueSort must be the same for all profiles'
                if not name:
                    why += ' (a pluginConfig with an empty name counts as the queue sort plugin\'s)'
                errs.append(invalid('profiles[%d].pluginConfig[%d].args' % (i, j), pc.get('args'), why))
    return errs


def _validate_queue_sort(profiles, version):
    errs = []
    canon = _queue_sort_key(profiles[0])
    if len(canon[0]) > 1:
        errs.append(invalid('profiles[0].plugins.queueSort.Enabled', len(canon[0]), 'only one queue sort plugin can be enabled'))
    errs.extend(_validate_queue_sort_configs(profiles))
    for i in range(1, len(profiles)):
        if _queue_sort_key(profiles[i]) != canon:
            errs.append(invalid('profiles[%d].plugins.queueSort' % i, 'queueSort', 'must be the same for all profiles'))
        elif version == 'v1' and _queue_sort_args(profiles[i]) != _queue_sort_args(profiles[0]):
            # kube-scheduler: 'different queue sort plugin args for profile'
            errs.append(invalid('profiles[%d].pluginConfig' % i, _queue_sort_args(profiles[i])[0],
                                'the queue sort plugin\'s args must be the same for all profiles (given or left out in all of them)'))
    return errs


def check_document(data, kubernetes_version=None):
    """Kind/apiVersion checks before anything else. Returns the short apiVersion. Raises."""
    if data is None:
        raise SchedulerConfigError('the file is empty; remove it, or write a KubeSchedulerConfiguration into it')
    if not isinstance(data, dict):
        raise SchedulerConfigError('the file holds a %s, not a mapping; a scheduler config is a KubeSchedulerConfiguration mapping'
                                   % schema.go_type_name(data))
    kind = data.get('kind')
    if kind == 'Policy' or (kind is None and ('predicates' in data or 'priorities' in data)):
        raise SchedulerConfigError(
            'this is a legacy scheduler Policy file (--policy-config-file); the Policy API was removed in Kubernetes 1.23 '
            'and kube-scheduler no longer reads it. Move its extenders into a KubeSchedulerConfiguration '
            '(apiVersion %s/v1, extenders: with urlPrefix, enableHTTPS, httpTimeout as a duration like "15s"), '
            'point --config at that file and drop --policy-config-file' % GROUP)
    api_version = data.get('apiVersion')
    if kind != KIND:
        raise SchedulerConfigError('the file\'s kind is %r, not %s; point the module at the scheduler\'s --config file'
                                   % (kind, KIND))
    version = short_version(api_version)
    if version is None:
        raise SchedulerConfigError('apiVersion %r is not a KubeSchedulerConfiguration version; use %s/v1 (or %s)'
                                   % (api_version, GROUP, ', '.join(VERSION_ORDER[:-1])))
    if kubernetes_version:
        minor = parse_kubernetes_version(kubernetes_version)[1]
        accepted = accepted_versions(minor)
        if version not in accepted:
            raise SchedulerConfigError(
                'the file uses %s/%s, which kube-scheduler 1.%d no longer accepts (it accepts: %s); a k3s/RKE2 server with this '
                'file shuts down at start. Move the file to %s/%s: rename the apiVersion and check the fields that changed '
                '(see the kube-scheduler config migration notes), then run again'
                % (GROUP, version, minor, ', '.join(accepted) or 'none', GROUP, accepted[-1] if accepted else 'v1'))
    return version


# ---------------------------------------------------------------- conversion to v1
# The apiVersions converted to v1 when the target kube-scheduler no longer reads them (v1beta1 is not: its plugins
# and args changed too much for a faithful rewrite).
CONVERTIBLE = ('v1beta2', 'v1beta3')

# In-tree plugins kube-scheduler's v1 API no longer has, and what replaces each. Enabling one (or configuring it)
# has no v1 form; disabling one is dropped, as v1 has nothing to disable.
_REMOVED_PLUGINS = {
    'SelectorSpread': 'invalid in v1 (removed in Kubernetes 1.27); PodTopologySpread with its system default constraints '
                      '(defaultingType: System, on by default) spreads pods the same way: remove it from the list',
    'NodePreferAvoidPods': 'removed in Kubernetes 1.24 (the node annotation it read is no longer honoured): remove it '
                           'from the list',
    'EBSLimits': 'invalid in v1 (in-tree volume limits, removed with CSI migration); NodeVolumeLimits counts these volumes '
                 'through their CSI driver: remove it from the list',
    'GCEPDLimits': 'invalid in v1 (in-tree volume limits, removed with CSI migration); NodeVolumeLimits counts these '
                   'volumes through their CSI driver: remove it from the list',
    'AzureDiskLimits': 'invalid in v1 (in-tree volume limits, removed with CSI migration); NodeVolumeLimits counts these '
                       'volumes through their CSI driver: remove it from the list',
    'CinderLimits': 'invalid in v1 (in-tree volume limits, removed with CSI migration); NodeVolumeLimits counts these '
                    'volumes through their CSI driver: remove it from the list',
}

# v1beta2's default score weights that v1beta3 and v1 raised (v1beta2: all 1; PodTopologySpread stayed 2). A v1beta2
# profile that leaves them at their default keeps v1beta2's weight in the converted file, pinned in multiPoint.
_V1BETA2_CHANGED_WEIGHTS = (('TaintToleration', 1, 3), ('NodeAffinity', 1, 2), ('InterPodAffinity', 1, 2))

# v1beta2's insecure serving addresses: gone in v1beta3 and v1 (kube-scheduler 1.23 and later serve health and metrics
# only on the secure port). kube-scheduler 1.23 to 1.27 accepted them only empty or with port 0 (serving nothing).
_V1BETA2_ADDRESS_FIELDS = ('healthzBindAddress', 'metricsBindAddress')


def needs_conversion(data, kubernetes_version):
    """The short apiVersion to convert from, when ``data`` is a KubeSchedulerConfiguration of a version the target
    (``kubernetes_version``) no longer reads and this module can convert to v1, which it reads; else None."""
    if not kubernetes_version or not isinstance(data, dict) or data.get('kind') != KIND:
        return None
    version = short_version(data.get('apiVersion'))
    if version not in CONVERTIBLE:
        return None
    accepted = accepted_versions(parse_kubernetes_version(kubernetes_version)[1])
    if version in accepted or 'v1' not in accepted:
        return None
    return version


def would_convert(before, kubernetes_version):
    """Whether the file's bytes ``before`` (None: no file) would be converted to v1 for ``kubernetes_version``.

    A quick look that never raises (a file that cannot be read is refused later, by ``plan``)."""
    if before is None or not kubernetes_version:
        return False
    try:
        return needs_conversion(load_strict(before.decode('utf-8')), kubernetes_version) is not None
    except (SchedulerConfigError, UnicodeDecodeError):
        return False


def _address_port_zero(value):
    """True for "" and "host:0" (what kube-scheduler 1.23-1.27 still accepted: nothing served)."""
    if value == '':
        return True
    host, sep, port = value.rpartition(':')
    return bool(sep) and port == '0'


def _profile_paths(data):
    """(index, profile) of every profile in the document (none when ``profiles`` is absent, null or empty)."""
    profiles = data.get('profiles')
    return list(enumerate(profiles)) if isinstance(profiles, list) else []


def _conversion_refusals(data, version):
    """What has no faithful v1 form, each naming its path and what to do."""
    errs = []
    for field in _V1BETA2_ADDRESS_FIELDS if version == 'v1beta2' else ():
        value = data.get(field)
        if isinstance(value, str) and not _address_port_zero(value):
            errs.append('%s: %s serves health or metrics on an insecure port, which kube-scheduler 1.23 and later no longer '
                        'has (v1 has no such field); remove the key (health and metrics are served on the secure port, '
                        'flags --bind-address and --secure-port), then run again' % (field, _q(value)))
    for i, profile in _profile_paths(data):
        plugins = profile.get('plugins') if isinstance(profile, dict) else None
        for point in schema.EXTENSION_POINTS[version]:
            pset = plugins.get(point) if isinstance(plugins, dict) else None
            enabled = pset.get('enabled') if isinstance(pset, dict) else None
            for j, plugin in enumerate(enabled if isinstance(enabled, list) else []):
                pname = plugin.get('name') if isinstance(plugin, dict) else None
                if pname in _REMOVED_PLUGINS:
                    errs.append('profiles[%d].plugins.%s.enabled[%d]: plugin "%s" has no v1 form: %s'
                                % (i, point, j, pname, _REMOVED_PLUGINS[pname]))
        configs = profile.get('pluginConfig') if isinstance(profile, dict) else None
        for j, pc in enumerate(configs if isinstance(configs, list) else []):
            pname = pc.get('name') if isinstance(pc, dict) else None
            if pname in _REMOVED_PLUGINS:
                errs.append('profiles[%d].pluginConfig[%d]: configuration of plugin "%s" has no v1 form: %s, and its '
                            'pluginConfig entry' % (i, j, pname, _REMOVED_PLUGINS[pname]))
    return errs


def _score_default_kept(plugins, pname):
    """Whether a v1beta2 profile's ``plugins`` leave the default score plugin ``pname`` at its default weight."""
    score = plugins.get('score') if isinstance(plugins, dict) else None
    if not isinstance(score, dict):
        return True
    disabled = {p.get('name') for p in score.get('disabled') or [] if isinstance(p, dict)}
    enabled = {p.get('name') for p in score.get('enabled') or [] if isinstance(p, dict)}
    return '*' not in disabled and pname not in disabled and pname not in enabled


def _pins(plugins):
    """The multiPoint entries that keep v1beta2's default score weights, and the change texts."""
    pins = []
    for pname, old, new in _V1BETA2_CHANGED_WEIGHTS:
        if _score_default_kept(plugins, pname):
            pins.append((pname, old, new))
    return pins


def _pin_text(where, pins):
    return '%s: score weights kept as v1beta2 gave them by default (%s), pinned in plugins.multiPoint.enabled' % (
        where, ', '.join('%s %d, v1 default %d' % p for p in pins))


PIN_COMMENT = '# baremetal.k3s: score weights kept from v1beta2 (v1 raised the defaults of TaintToleration, NodeAffinity, InterPodAffinity)'


def _pin_profile(doc, data, pins_of):
    """Add the multiPoint pins of every profile (a profile for the default scheduler when the file has none)."""
    changes = []
    profiles = data.get('profiles')
    if not isinstance(profiles, list) or not profiles:
        pins = pins_of({})
        entry = [{'name': n, 'weight': w} for n, w, _new in pins]
        profile = {'schedulerName': 'default-scheduler', 'plugins': {'multiPoint': {'enabled': entry}}}
        if profiles is None and doc.find('profiles') is None:
            _edit(doc.add_key, (), 'profiles', [profile], comment=PIN_COMMENT if doc.accepts_comment(()) else None)
        elif profiles is None:
            _edit(doc.replace, ('profiles',), [profile])
        else:
            _edit(doc.append, ('profiles',), profile)
        changes.append(_pin_text('profiles[0] (added: the file had none, so the default scheduler\'s profile)', pins))
        return changes
    for i, profile in enumerate(profiles):
        plugins = profile.get('plugins') if isinstance(profile, dict) else None
        pins = pins_of(plugins or {})
        if not pins:
            continue
        entry = [{'name': n, 'weight': w} for n, w, _new in pins]
        ppath = ('profiles', i)
        if plugins is None:
            if doc.find(ppath + ('plugins',)) is None:
                _edit(doc.add_key, ppath, 'plugins', {'multiPoint': {'enabled': entry}},
                      comment=PIN_COMMENT if doc.accepts_comment(ppath) else None)
            else:
                _edit(doc.replace, ppath + ('plugins',), {'multiPoint': {'enabled': entry}})
        else:
            _edit(doc.add_key, ppath + ('plugins',), 'multiPoint', {'enabled': entry},
                  comment=PIN_COMMENT if doc.accepts_comment(ppath + ('plugins',)) else None)
        changes.append(_pin_text('profiles[%d]' % i, pins))
    return changes


def convert_to_v1(text, name='the file'):
    """A v1beta2 or v1beta3 document's text turned into v1, editing only what changed between the versions.

    Returns (new text, short version converted from, [change texts]). Raises SchedulerConfigError naming every field
    or plugin without a faithful v1 form. The input must be a valid document of its own version.
    """
    data = load_strict(text, name)
    check_document(data)
    version = short_version(data.get('apiVersion'))
    if version not in CONVERTIBLE:
        raise SchedulerConfigError('the file uses %s/%s; only %s are converted to v1' % (GROUP, version, ' and '.join(CONVERTIBLE)))
    errors = validate_data(data, version, check_files=False)
    if errors:
        raise SchedulerConfigError('the file is not a valid %s/%s config, so it is not converted to v1: %s; fix it first'
                                   % (GROUP, version, '; '.join(errors)), errors)
    refusals = _conversion_refusals(data, version)
    if refusals:
        raise SchedulerConfigError('the file uses %s/%s, and converting it to v1 would change what the scheduler does: %s'
                                   % (GROUP, version, '; '.join(refusals)), refusals)
    doc = _edit(yamledit.Document, text, name=name)
    changes = ['apiVersion: %s/%s -> %s/v1' % (GROUP, version, GROUP)]
    _edit(doc.replace, ('apiVersion',), '%s/v1' % GROUP)
    if version == 'v1beta2':
        for field in _V1BETA2_ADDRESS_FIELDS:
            if field in data:
                _edit(doc.remove, (field,))
                changes.append('%s: %s removed (v1 has no insecure serving; that value served nothing)'
                               % (field, _q(data[field]) if data[field] is not None else 'null'))
    for i, profile in _profile_paths(data):
        if not isinstance(profile, dict):
            continue
        plugins = profile.get('plugins')
        for point in schema.EXTENSION_POINTS[version] if isinstance(plugins, dict) else ():
            pset = plugins.get(point)
            disabled = pset.get('disabled') if isinstance(pset, dict) else None
            for j in reversed(range(len(disabled) if isinstance(disabled, list) else 0)):
                pname = disabled[j].get('name') if isinstance(disabled[j], dict) else None
                if pname in _REMOVED_PLUGINS:
                    _edit(doc.remove, ('profiles', i, 'plugins', point, 'disabled', j))
                    changes.append('profiles[%d].plugins.%s.disabled[%d]: "%s" removed (the plugin does not exist in v1, '
                                   'so there is nothing to disable)' % (i, point, j, pname))
        for j, pc in enumerate(profile.get('pluginConfig') or []):
            args = pc.get('args') if isinstance(pc, dict) else None
            if isinstance(args, dict) and args.get('apiVersion') == '%s/%s' % (GROUP, version):
                _edit(doc.replace, ('profiles', i, 'pluginConfig', j, 'args', 'apiVersion'), '%s/v1' % GROUP)
                changes.append('profiles[%d].pluginConfig[%d].args.apiVersion: %s/%s -> %s/v1' % (i, j, GROUP, version, GROUP))
    if version == 'v1beta2':
        changes.extend(_pin_profile(doc, load_strict(doc.text, name), _pins))
    return doc.text, version, changes


def validate_text(text, kubernetes_version=None, check_files=True, exists=None, isdir=None):
    """Everything: YAML, kind, apiVersion, strict decoding, rules. Returns (short version, errors).

    ``exists`` and ``isdir`` answer about the node's files (the caller's View); see validate_data.
    """
    try:
        data = load_strict(text)
        version = check_document(data, kubernetes_version)
    except SchedulerConfigError as e:
        return None, [e.msg]
    return version, validate_data(data, version, check_files=check_files, exists=exists, isdir=isdir)


# ---------------------------------------------------------------- our extender
_EXTENDER_FIELDS = (
    ('url_prefix', 'urlPrefix'), ('filter_verb', 'filterVerb'), ('preempt_verb', 'preemptVerb'),
    ('prioritize_verb', 'prioritizeVerb'), ('weight', 'weight'), ('bind_verb', 'bindVerb'),
    ('enable_https', 'enableHTTPS'), ('tls_config', 'tlsConfig'), ('http_timeout', 'httpTimeout'),
    ('node_cache_capable', 'nodeCacheCapable'), ('managed_resources', 'managedResources'), ('ignorable', 'ignorable'),
)
_TLS_FIELDS = (
    ('insecure', 'insecure'), ('server_name', 'serverName'), ('cert_file', 'certFile'), ('key_file', 'keyFile'),
    ('ca_file', 'caFile'), ('cert_data', 'certData'), ('key_data', 'keyData'), ('ca_data', 'caData'),
)


def render_extender(options, exists=None):
    """The module's snake_case extender option -> the camelCase mapping. Raises SchedulerConfigError.

    ``exists`` answers whether a TLS file named there exists on the node (the caller's View).
    """
    errs = []
    url = options.get('url_prefix') or ''
    problem = _url.url_problem(url)
    if problem:
        errs.append('extender.url_prefix %r %s' % (url, problem))
    out = {}
    for snake, camel in _EXTENDER_FIELDS:
        value = options.get(snake)
        if value is None or (isinstance(value, (str, list, dict)) and not value):
            continue  # not set ('', [] and {} count as not set, so a role can pass its variables as they are)
        if snake == 'tls_config':
            tls = {}
            for tsnake, tcamel in _TLS_FIELDS:
                tvalue = value.get(tsnake)
                if tvalue is None or tvalue == '':
                    continue
                if tsnake.endswith('_data'):
                    tvalue = base64.b64encode(tvalue.encode('utf-8')).decode('ascii')
                if tsnake.endswith('_file'):
                    if not posixpath.isabs(tvalue):
                        errs.append('extender.tls_config.%s %r must be an absolute path' % (tsnake, tvalue))
                    elif not (exists or _no_node)(tvalue):
                        errs.append('extender.tls_config.%s %s does not exist on the node; create it before adding the extender'
                                    % (tsnake, tvalue))
                tls[tcamel] = tvalue
            if tls:
                out[camel] = tls
            continue
        if snake == 'managed_resources':
            resources = []
            names = set()
            for res in value:
                item = {'name': res['name']}
                if res.get('ignored_by_scheduler') is not None:
                    item['ignoredByScheduler'] = res['ignored_by_scheduler']
                if res['name'] in names:
                    errs.append('extender.managed_resources lists %s twice; list each resource once' % res['name'])
                names.add(res['name'])
                resources.append(item)
            out[camel] = resources
            continue
        if snake == 'http_timeout':
            try:
                schema.parse_go_duration(value)
            except ValueError as e:
                errs.append('extender.http_timeout %r: %s; give a Go duration such as 15s or 1m30s' % (value, e))
        out[camel] = value
    if out.get('prioritizeVerb') and (out.get('weight') or 0) <= 0:
        errs.append('extender.weight must be greater than 0 when prioritize_verb is set (kube-scheduler: "must have a positive weight '
                    'applied to it"); set weight: 1 or more')
    if errs:
        raise SchedulerConfigError('invalid extender option: ' + '; '.join(errs), errs)
    return out


def extender_urls(data):
    if not isinstance(data, dict) or not isinstance(data.get('extenders'), list):
        return []
    return [e.get('urlPrefix') if isinstance(e, dict) else None for e in data['extenders']]


def _has_marker(text):
    return MARKER_KEY in '\n'.join(text.splitlines()[:5])


def _only_ours_left(data):
    """True when the document holds nothing but what a new file of ours holds."""
    allowed = {'apiVersion', 'kind', 'clientConnection', 'leaderElection', 'extenders'}
    if set(data) - allowed:
        return False
    if set(data.get('clientConnection') or {}) - {'kubeconfig'}:
        return False
    if set(data.get('leaderElection') or {}) - {'leaderElect'}:
        return False
    return not data.get('extenders')


def new_document(version, kubeconfig, leader_elect):
    """A new file of ours, without extenders yet (they are added as in any file)."""
    return ('%s\napiVersion: %s/%s\nkind: %s\nclientConnection:\n  kubeconfig: %s\nleaderElection:\n  leaderElect: %s\n'
            % (MARKER, GROUP, version, KIND, yamledit.render_scalar(kubeconfig), 'true' if leader_elect else 'false'))


def item_marker(name):
    """The comment line right above our extender entry: what finds it again, whatever its URL."""
    return '# baremetal.k3s extender: %s' % name


def key_marker(name):
    """The comment line above an ``extenders:`` key this module added (it goes when it empties)."""
    return '# baremetal.k3s: extenders added for %s' % name


def find_ours(doc, data, name, url, record=None):
    """(index, how) of our extender in ``extenders``: by its marker comment, else by the record (``record``: {name:
    entry as written}), else by its urlPrefix; (None, None)."""
    if not isinstance(data.get('extenders'), list):
        return None, None
    marked = doc.find_marked('extenders', item_marker(name)) if doc.find('extenders') is not None else []
    if len(marked) > 1:
        raise SchedulerConfigError('the extenders list holds %d entries marked "%s"; remove all but one by hand and run '
                                   'again' % (len(marked), item_marker(name)))
    if marked:
        return marked[0], 'marker'
    recorded = recorded_entries(doc, data, record)
    if name in recorded:
        return recorded[name], 'record'
    by_url = [i for i, e in enumerate(data['extenders']) if isinstance(e, dict) and e.get('urlPrefix') == url]
    if len(by_url) > 1:
        raise SchedulerConfigError('the extenders list holds %d entries with urlPrefix %s; kube-scheduler would call it '
                                   'that many times. Remove all but one by hand and run again' % (len(by_url), url))
    return (by_url[0], 'url') if by_url else (None, None)


def _edit(fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except goyaml.GoYamlError as e:
        raise SchedulerConfigError('%s. Nothing was changed.' % e)


def edit(before, params, exists=None, isdir=None, record=None):
    """The new bytes of the file (``after``, None to delete it) and the facts, for ``before`` (bytes or None).

    ``params``: state, name, extender, api_version, kubernetes_version, kubeconfig, leader_elect.
    ``record``: {name: entry as written} of our entries without a marker (the record file's ``extenders``); the
    result's ``record`` is the record after the edit (the same when the file does not change).
    Pure: ``exists`` and ``isdir`` answer about paths on the node (the caller's View). Raises SchedulerConfigError.
    """
    record = dict(record or {})
    if params.get('extenders') is not None:
        result = edit_many(before, params, exists=exists, isdir=isdir, record=record)
    else:
        result = _edit_one(before, params, exists=exists, isdir=isdir, record=record)
    candidates = result.pop('record_candidates', record)
    if result.get('removed') and params.get('keep_unused'):
        # a file the scheduler still mounts (a static pod) goes only once it runs without it: left as it is for now
        result.update(after=before, changed=False, removed=False, exists=True, unused=True,
                      extenders=extender_urls(load_strict(before.decode('utf-8'))))
    if result['after'] == before:
        result['record'] = record  # nothing written: the record stays as it is (no change without a write)
    else:
        result['record'] = record_after(result['after'], candidates)
    return result


def _edit_one(before, params, exists=None, isdir=None, record=None):
    """``edit`` for the ``extender`` option (one extender, ``name``)."""
    files = NodeFiles(exists or _no_node, isdir)
    state = params.get('state') or 'present'
    name = params.get('name') or DEFAULT_NAME
    ext_opts = params.get('extender') or {}
    kubernetes_version = params.get('kubernetes_version')
    ours = render_extender(ext_opts, exists=files.exists) if state == 'present' else None
    url = ext_opts.get('url_prefix') or ''
    result = {'changed': False, 'created': False, 'removed': False, 'after': before, 'exists': before is not None}
    read = _read_document(before, params, state, result)
    if read is None:
        return result
    text, data, converted, version = read
    if state == 'converted':  # only the conversion (a Kubernetes upgrade): the extenders stay as they are
        result.update(api_version='%s/%s' % (GROUP, version), extenders=extender_urls(data))
        return _finish(result, before, text, kubernetes_version, files) if converted is not None else result
    _keep_api_version(params, version, result)
    doc = _edit(yamledit.Document, text, name=params.get('path') or 'the file')
    index, how = find_ours(doc, data, name, url, record)
    marked = _accepts_marker(doc)
    if state == 'present':
        result['record_candidates'] = dict(record, **{name: ours})
        current = data['extenders'][index] if index is not None else None
        if current == ours and (how == 'marker' or not marked):
            result['extenders'] = extender_urls(data)
            result['after'] = text.encode('utf-8') if before is None else before
            return _finish(result, before, text, kubernetes_version, files)
        _put_ours(doc, data, name, ours, (index, how), marked)
    else:
        result['record_candidates'] = {n: e for n, e in record.items() if n != name}
        if index is None:
            result['extenders'] = extender_urls(data)
            return _finish(result, before, text, kubernetes_version, files) if converted is not None else result
        if _take_ours(doc, name, index, how):
            result.update(after=None, changed=True, removed=True, extenders=[], exists=False)
            return result
    return _finish(result, before, doc.text, kubernetes_version, files)


# ---------------------------------------------------------------- several extenders (the ``extenders`` option)
ITEM_MARKER_PREFIX = '# baremetal.k3s extender: '
KEY_MARKER_PREFIX = '# baremetal.k3s: extenders added for '
_LIST_NAME = re.compile(r'^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')


def _placed(message, where):
    """An ``extender.*`` message of render_extender, placed at ``where`` (``extenders[1]``)."""
    return where + message[len('extender'):] if message.startswith('extender.') else '%s: %s' % (where, message)


def _list_names(items):
    """Errors of the names of an ``extenders`` list (each present, well formed, once)."""
    errs, seen = [], {}
    for i, item in enumerate(items):
        where = 'extenders[%d]' % i
        if not isinstance(item, dict):
            errs.append('%s must be a mapping with name and url_prefix' % where)
            continue
        name = item.get('name')
        if not isinstance(name, str) or not name:
            errs.append('%s.name is required: the name in the entry\'s marker comment, for example csi-baremetal' % where)
        elif not _LIST_NAME.fullmatch(name):
            errs.append('%s.name %r must be letters, digits, "-", "_" or "." (starting and ending with a letter or digit)'
                        % (where, name))
        elif name in seen:
            errs.append('%s.name %r is also extenders[%d].name; give each extender its own name' % (where, name, seen[name]))
        else:
            seen[name] = i
    return errs


def render_extenders(items, exists=None):
    """The module's ``extenders`` list -> [(name, camelCase mapping)], the whole list checked before anything is
    written: names, each extender's options, urlPrefix once, at most one that binds. Raises SchedulerConfigError
    naming each offending item (``extenders[1].url_prefix``)."""
    if not isinstance(items, list):
        raise SchedulerConfigError('extenders must be a list of extenders, each with name and url_prefix')
    errs = _list_names(items)
    out, urls, binders = [], {}, []
    for i, item in enumerate(items):
        where = 'extenders[%d]' % i
        if not isinstance(item, dict):
            continue
        try:
            rendered = render_extender({k: v for k, v in item.items() if k != 'name'}, exists=exists)
        except SchedulerConfigError as e:
            errs.extend(_placed(m, where) for m in e.errors)
            continue
        url = rendered['urlPrefix']
        if url in urls:
            errs.append('%s.url_prefix %s is also extenders[%d].url_prefix; kube-scheduler would call it twice. Give each '
                        'extender its own URL' % (where, url, urls[url]))
        urls.setdefault(url, i)
        if rendered.get('bindVerb'):
            binders.append(i)
        out.append((item.get('name'), rendered))
    for i in binders[1:]:
        errs.append('extenders[%d].bind_verb: extenders[%d] binds too, and only one extender of the file may bind '
                    '(kube-scheduler: "only one extender can implement bind"); keep bind_verb on one of them'
                    % (i, binders[0]))
    if errs:
        raise SchedulerConfigError('invalid extenders option: ' + '; '.join(errs), errs)
    return out


def marked_entries(doc):
    """{name: [index, ...]} of the ``extenders`` entries carrying our marker comment."""
    node = doc.find('extenders')
    if node is None or node.kind != 'sequence':
        return {}
    out = {}
    for entry in doc.items('extenders'):
        for comment in entry.comments:
            if comment.startswith(ITEM_MARKER_PREFIX):
                out.setdefault(comment[len(ITEM_MARKER_PREFIX):].strip(), []).append(entry.index)
    return out


def recorded_entries(doc, data, record, marked=None):
    """{name: index} of the entries of ``extenders`` the record (``record``: {name: entry as written}) makes ours: for
    each recorded name no marker claims, the one entry no marker claims that is exactly as written. An entry changed
    since, or two alike, are nobody's: they are never edited or removed as ours."""
    entries = data.get('extenders') if isinstance(data, dict) else None
    if not record or not isinstance(entries, list):
        return {}
    if marked is None:
        marked = marked_entries(doc)
    claimed = {i for indices in marked.values() for i in indices}
    out = {}
    for name, written in sorted(record.items()):
        if name in marked:
            continue
        alike = [i for i, e in enumerate(entries) if i not in claimed and e == written]
        if len(alike) == 1 and alike[0] not in out.values():
            out[name] = alike[0]
    return out


def _find_listed(doc, data, name, url, record=None):
    """(index, how) of the listed extender ``name``: by its marker, else by the record, else by its urlPrefix among
    the entries no marker or record claims (a hand-written one, or one of an older version); (None, None)."""
    if not isinstance(data.get('extenders'), list):
        return None, None
    marked = marked_entries(doc)
    if len(marked.get(name, ())) > 1:
        raise SchedulerConfigError('the extenders list holds %d entries marked "%s"; remove all but one by hand and run '
                                   'again' % (len(marked[name]), item_marker(name)))
    if marked.get(name):
        return marked[name][0], 'marker'
    recorded = recorded_entries(doc, data, record, marked)
    if name in recorded:
        return recorded[name], 'record'
    claimed = {i for indices in marked.values() for i in indices} | set(recorded.values())
    by_url = [i for i, e in enumerate(data['extenders'])
              if i not in claimed and isinstance(e, dict) and e.get('urlPrefix') == url]
    if len(by_url) > 1:
        raise SchedulerConfigError('the extenders list holds %d entries with urlPrefix %s; kube-scheduler would call it '
                                   'that many times. Remove all but one by hand and run again' % (len(by_url), url))
    return (by_url[0], 'url') if by_url else (None, None)


def _foreign_binder(doc, data, wanted, record=None):
    """The urlPrefix of an entry that stays in the file (not ours, not taken over) and binds; None."""
    if not isinstance(data.get('extenders'), list):
        return None
    marked = marked_entries(doc)
    claimed = {i for indices in marked.values() for i in indices}
    claimed |= set(recorded_entries(doc, data, record, marked).values())
    urls = {ours['urlPrefix'] for _name, ours in wanted}
    for i, e in enumerate(data['extenders']):
        if i not in claimed and isinstance(e, dict) and e.get('urlPrefix') not in urls and e.get('bindVerb'):
            return e.get('urlPrefix')
    return None


def edit_many(before, params, exists=None, isdir=None, record=None):
    """``edit`` for the ``extenders`` list: with state=present our marked entries become exactly the list (new ones
    added, changed ones replaced in place, marked ones not listed removed); with state=absent every listed one is
    removed. Entries without our marker are never touched, unless a listed extender takes one over by its urlPrefix.
    The whole list is checked first. In a flow or JSON list the record (``record``) stands for the marker.
    Pure, like ``edit``."""
    record = dict(record or {})
    files = NodeFiles(exists or _no_node, isdir)
    state = params.get('state') or 'present'
    items = params.get('extenders')
    if state not in ('present', 'absent'):
        raise SchedulerConfigError('extenders is for state=present or state=absent; state=%s takes no extenders' % state)
    if state == 'present':
        wanted = render_extenders(items, exists=files.exists)
        if not wanted:
            raise SchedulerConfigError('extenders is empty; give at least one extender (state=absent removes the listed '
                                       'ones)')
    else:
        errs = _list_names(items) if isinstance(items, list) else ['extenders must be a list']
        if errs:
            raise SchedulerConfigError('invalid extenders option: ' + '; '.join(errs), errs)
        wanted = [(item['name'], {'urlPrefix': item.get('url_prefix') or ''}) for item in items]
    kubernetes_version = params.get('kubernetes_version')
    changes = {'added': [], 'changed': [], 'removed': []}
    result = {'changed': False, 'created': False, 'removed': False, 'after': before, 'exists': before is not None,
              'names': [name for name, _ours in wanted], 'extender_changes': changes}
    read = _read_document(before, params, state, result)
    if read is None:
        return result
    text, data, converted, version = read
    _keep_api_version(params, version, result)
    doc = _edit(yamledit.Document, text, name=params.get('path') or 'the file')
    if state == 'present':
        result['record_candidates'] = dict(wanted)
        binder = _foreign_binder(doc, data, wanted, record)
        for i, (_name, ours) in enumerate(wanted):
            if binder and ours.get('bindVerb'):
                raise SchedulerConfigError(
                    'extenders[%d].bind_verb: the file\'s extender %s binds already, and only one extender of the file may '
                    'bind; drop bind_verb or take the bindVerb out of that extender' % (i, binder))
        listed = {name for name, _ours in wanted}
        for name in [n for n in marked_entries(doc) if n not in listed]:
            _edit(doc.remove, ('extenders', marked_entries(doc)[name][0]), comment=item_marker(name))
            changes['removed'].append(name)
        for name in sorted(n for n in record if n not in listed):  # ours without a marker (flow or JSON), no longer listed
            index = recorded_entries(doc, load_strict(doc.text), record).get(name)
            if index is not None:
                _edit(doc.remove, ('extenders', index))
                changes['removed'].append(name)
        for name, ours in wanted:
            data = load_strict(doc.text)
            index, how = _find_listed(doc, data, name, ours['urlPrefix'], record)
            marked = _accepts_marker(doc)
            if index is not None and data['extenders'][index] == ours and (how in ('marker', 'record') or not marked):
                continue
            _put_ours(doc, data, name, ours, (index, how), marked)
            record.pop(name, None)  # written again: the record of the old entry no longer finds it
            changes['changed' if index is not None else 'added'].append(name)
    else:
        listed = {name for name, _ours in wanted}
        result['record_candidates'] = {n: e for n, e in record.items() if n not in listed}
        for name, ours in wanted:
            index, how = _find_listed(doc, load_strict(doc.text), name, ours['urlPrefix'], record)
            if index is None:
                continue
            _edit(doc.remove, ('extenders', index), comment=_comment_of(name, how))
            changes['removed'].append(name)
        if not changes['removed']:
            result['extenders'] = extender_urls(data)
            return _finish(result, before, text, kubernetes_version, files) if converted is not None else result
        if not doc.get('extenders'):
            keys = [c for c in _comments_above(doc, 'extenders') if c.startswith(KEY_MARKER_PREFIX)]
            if keys:
                _edit(doc.remove, 'extenders', comment=keys[0])
        if _has_marker(doc.text) and _only_ours_left(load_strict(doc.text)):
            result.update(after=None, changed=True, removed=True, extenders=[], exists=False)
            return result
    return _finish(result, before, doc.text, kubernetes_version, files)


def _read_document(before, params, state, result):
    """(text, data, converted, version) of the file an edit starts from, converted to v1 when asked
    (``converted`` is the new text, else None); None when there is nothing to edit (``result`` says why)."""
    text = _text_before(before, params, state, result)
    if text is None:
        return None
    data = load_strict(text)
    converted = _convert(text, data, params, result)
    if converted is not None:
        text = converted
        data = load_strict(text)
    return text, data, converted, check_document(data, params.get('kubernetes_version'))


def _keep_api_version(params, version, result):
    """Refuse an explicit api_version other than the file's; record the file's in ``result``."""
    if params.get('api_version') not in (None, 'auto') and params['api_version'] != version:
        raise SchedulerConfigError(
            'the file uses %s/%s but api_version is %s; this module does not convert files between versions. '
            'Use api_version: auto, or migrate the file first' % (GROUP, version, params['api_version']))
    result['api_version'] = '%s/%s' % (GROUP, version)


def _convert(text, data, params, result):
    """The file's text converted to v1 when the target scheduler no longer reads its apiVersion and
    ``convert_api_version`` allows it (None otherwise); ``result['conversion']`` says what changed."""
    if not params.get('convert_api_version') or params.get('api_version') not in (None, 'auto', 'v1'):
        return None
    version = needs_conversion(data, params.get('kubernetes_version'))
    if version is None:
        return None
    try:
        new_text, version, changes = convert_to_v1(text, name=params.get('path') or 'the file')
    except SchedulerConfigError as e:
        minor = parse_kubernetes_version(params['kubernetes_version'])[1]
        raise SchedulerConfigError(
            'the file uses %s/%s, which kube-scheduler 1.%d no longer accepts, and it cannot be converted to %s/v1 '
            '(nothing was changed): %s'
            % (GROUP, version, minor, GROUP, e.msg), e.errors)
    result['conversion'] = {'from': '%s/%s' % (GROUP, version), 'to': '%s/v1' % GROUP, 'changes': changes}
    return new_text


def _no_node(path):
    raise ValueError('looking up %s needs exists (and isdir) from the caller: this module reads no file of the node' % path)


def _text_before(before, params, state, result):
    """The document's text to edit: the file's, or a new document when there is none (None: nothing to do)."""
    if before is not None:
        try:
            return before.decode('utf-8')
        except UnicodeDecodeError:
            raise SchedulerConfigError('the file is not UTF-8 text; fix or remove it')
    version = resolve_api_version(params.get('api_version'), params.get('kubernetes_version'))
    result.update(api_version='%s/%s' % (GROUP, version), extenders=[])
    if state in ('absent', 'converted'):
        return None
    kubeconfig = params.get('kubeconfig')
    if not kubeconfig:
        raise SchedulerConfigError(
            'the file does not exist, so kubeconfig is required: kube-scheduler ignores --kubeconfig when --config is '
            'given. Set kubeconfig to the platform\'s scheduler kubeconfig (%s)' % '; '.join('%s: %s' % p for p in PLATFORM_KUBECONFIGS))
    result['created'] = True
    return new_document(version, kubeconfig, params.get('leader_elect', True))


def _accepts_marker(doc):
    """Whether our marker comment can stand where our entry goes (not in a flow or JSON document)."""
    return doc.accepts_comment('extenders') if doc.find('extenders') is not None else doc.accepts_comment(())


def _put_ours(doc, data, name, ours, found, marked):
    """Our entry into ``doc``: in place when ``found`` by its marker, else (re)appended with the marker.

    ``marked``: whether the document could hold our marker comment before this edit."""
    index, how = found
    if index is not None and (how == 'marker' or (how == 'record' and not marked)):
        _edit(doc.replace, ('extenders', index), ours)
        return
    if index is not None:  # an entry found by its URL only (an older version of this module, or hand-written)
        _edit(doc.remove, ('extenders', index), comment=True)
    if doc.find('extenders') is None:
        if not marked:
            raise SchedulerConfigError(
                'the file is JSON (or flow style) and has no "extenders" list; this module can add its entry to '
                'one but could not take the key out again exactly (a JSON file holds no marker comment). Add '
                '"extenders": [] to the file, then run again')
        _edit(doc.add_key, (), 'extenders', None, comment=key_marker(name))
    elif data.get('extenders') is None:
        raise SchedulerConfigError(
            '"extenders" is null in the file (extenders: with no value); this module could add its entry but not '
            'give the null back exactly. Write "extenders: []" or remove the key, then run again')
    _edit(doc.append, 'extenders', ours, comment=item_marker(name) if doc.accepts_comment('extenders') else None)


def _take_ours(doc, name, index, how):
    """Our entry out of ``doc`` (and the key we added). True when nothing but ours was in the file: delete it."""
    _edit(doc.remove, ('extenders', index), comment=_comment_of(name, how))
    if not doc.get('extenders') and key_marker(name) in _comments_above(doc, 'extenders'):
        _edit(doc.remove, 'extenders', comment=key_marker(name))
    return _has_marker(doc.text) and _only_ours_left(load_strict(doc.text))


def _comment_of(name, how):
    """What ``remove`` takes out above our entry found ``how``: its marker; every comment above an entry found by its
    urlPrefix (as an older version wrote it); nothing above one found by the record (we wrote none)."""
    return {'marker': item_marker(name), 'record': None}.get(how, True)


def _comments_above(doc, key):
    entry = doc.entry((key,))
    return entry.comments if entry is not None else []


def _finish(result, before, text, kubernetes_version, files):
    _final_check(text, kubernetes_version, files)
    after = text.encode('utf-8')
    result.update(after=after, changed=after != before, exists=True, extenders=extender_urls(load_strict(text)))
    return result


# ---------------------------------------------------------------- the record (our entries where no marker can stand)
RECORD_DIR = '/var/lib/baremetal-k3s/scheduler-config'
RECORD_COMMENT = ('The extenders baremetal.k3s.scheduler_config wrote into this scheduler config where no marker comment '
                  'can stand (a flow or JSON list), each as written: such an entry is ours only while it is exactly '
                  'so. Removed with the last of them.')


def record_path(config_path):
    """The record of the scheduler config ``config_path`` (as resolved on the node)."""
    digest = hashlib.sha256(config_path.encode('utf-8')).hexdigest()[:16]
    return posixpath.join(RECORD_DIR, 'extenders-%s.json' % digest)


def parse_record(data, config_path, where):
    """{name: entry} of the record's bytes ``data`` (None: no record). Raises SchedulerConfigError for a record
    that is not ours or not readable."""
    if data is None:
        return {}
    try:
        doc = json.loads(data.decode('utf-8'))
    except (UnicodeDecodeError, ValueError) as e:
        raise SchedulerConfigError('%s is not a record of this module (%s); nothing was changed. Remove it: the entries it '
                                   'names stay in %s, where a run then finds them by their urlPrefix' % (where, e, config_path))
    entries = doc.get('extenders') if isinstance(doc, dict) else None
    if not isinstance(entries, dict) or doc.get('path') != config_path or \
            not all(isinstance(k, str) and isinstance(v, dict) for k, v in entries.items()):
        raise SchedulerConfigError('%s is not a record of this module for %s; nothing was changed. Remove it: the entries it '
                                   'names stay in the file, where a run then finds them by their urlPrefix' % (where, config_path))
    return entries


def render_record(entries, config_path):
    """The record's bytes for {name: entry}; None (no record) when empty."""
    if not entries:
        return None
    doc = {'comment': RECORD_COMMENT, 'path': config_path, 'extenders': entries}
    return (json.dumps(doc, indent=2, sort_keys=True) + '\n').encode('utf-8')


def record_after(after, candidates):
    """The record once the file holds ``after``: each of ``candidates`` ({name: entry as written}) that the file holds
    exactly once without a marker (a marked entry needs no record). {} when the file is gone."""
    if after is None or not candidates:
        return {}
    text = after.decode('utf-8')
    doc = _edit(yamledit.Document, text)
    data = load_strict(text)
    return {name: candidates[name] for name in recorded_entries(doc, data, candidates)}


def plan(view, params):
    """The Plan of ``baremetal.k3s.scheduler_config``: the scheduler config with our extender in or out."""
    path = params['path']
    if not posixpath.isabs(path or ''):
        raise SchedulerConfigError('path %r must be an absolute path' % (path,))
    if view.isdir(path):
        raise SchedulerConfigError('path %s is a directory; give the scheduler config file' % path)
    if params.get('kubeconfig') and not posixpath.isabs(params['kubeconfig']):
        raise SchedulerConfigError('kubeconfig %s must be an absolute path' % params['kubeconfig'])
    before = view.read(path)
    real = view.realpath(path)
    rpath = record_path(real)
    record_before = view.read(rpath)
    record = parse_record(record_before, real, rpath)
    result = edit(before, params, exists=view.exists, isdir=view.isdir, record=record)
    new = before is None
    change = Change(path, before, result.pop('after'), mode=0o600 if new else None, owner='root' if new else None,
                    group='root' if new else None)
    new_record = result.pop('record')
    record_change = Change(rpath, record_before, record_before if new_record == record else render_record(new_record, real),
                           mode=0o600, owner='root', group='root')
    result.pop('changed')
    result['path'] = path
    result['name'] = None if params.get('extenders') is not None else (params.get('name') or DEFAULT_NAME)
    warnings = []
    conversion = result.get('conversion')
    if conversion:
        warnings.append('%s: converted from %s to %s, as kube-scheduler %s no longer reads %s (the previous file is kept as '
                        'the backup): %s' % (path, conversion['from'], conversion['to'], params.get('kubernetes_version'),
                                             conversion['from'], '; '.join(conversion['changes'])))
    return Plan([change, record_change], result, warnings)


def _final_check(text, kubernetes_version, files):
    _version, errors = validate_text(text, kubernetes_version, check_files=True, exists=files.exists, isdir=files.isdir)
    if errors:
        raise SchedulerConfigError(
            'refusing to write a scheduler config that kube-scheduler would reject (a k3s/RKE2 server shuts down on it): %s'
            % '; '.join(errors), errors)


# -- the module's options, and its write as one part of a module run -----------------------------
# scheduler_config's options, here so that a module that writes the scheduler config together with other files
# (scheduler_files) checks them as scheduler_config does.
TLS_SPEC = dict(
    insecure=dict(type='bool'),
    server_name=dict(type='str'),
    cert_file=dict(type='path'),
    key_file=dict(type='path'),
    ca_file=dict(type='path'),
    cert_data=dict(type='str'),
    key_data=dict(type='str', no_log=True),
    ca_data=dict(type='str'),
)
EXTENDER_SPEC = dict(
    url_prefix=dict(type='str', required=True),
    filter_verb=dict(type='str'),
    prioritize_verb=dict(type='str'),
    preempt_verb=dict(type='str'),
    bind_verb=dict(type='str'),
    weight=dict(type='int'),
    enable_https=dict(type='bool'),
    tls_config=dict(type='dict', options=TLS_SPEC),
    http_timeout=dict(type='str'),
    node_cache_capable=dict(type='bool'),
    managed_resources=dict(type='list', elements='dict', options=dict(
        name=dict(type='str', required=True),
        ignored_by_scheduler=dict(type='bool'),
    )),
    ignorable=dict(type='bool'),
)
ARGUMENT_SPEC = dict(
    path=dict(type='path', required=True),
    state=dict(type='str', default='present', choices=['present', 'absent', 'converted']),
    name=dict(type='str', default=DEFAULT_NAME),
    extender=dict(type='dict', options=EXTENDER_SPEC),
    extenders=dict(type='list', elements='dict', options=dict(name=dict(type='str', required=True), **EXTENDER_SPEC)),
    api_version=dict(type='str', default='auto', choices=['auto', 'v1', 'v1beta3', 'v1beta2', 'v1beta1']),
    kubernetes_version=dict(type='str'),
    convert_api_version=dict(type='bool', default=False),
    kubeconfig=dict(type='path'),
    leader_elect=dict(type='bool', default=True),
    backup=dict(type='bool', default=False),
    backup_dir=dict(type='path', default='/var/backups/baremetal-k3s'),
    keep_unused=dict(type='bool', default=False),
)
MUTUALLY_EXCLUSIVE = [('extender', 'extenders'), ('name', 'extenders')]
REQUIRED_IF = [('state', 'present', ('extender', 'extenders'), True),
               ('state', 'absent', ('extender', 'extenders'), True)]


def key_data_secrets(params):
    """The private keys given inline (tls_config.key_data) of ``params``' extender or extenders, as given."""
    found = []
    extenders = [params.get('extender')] + list(params.get('extenders') or [])
    for extender in extenders:
        tls = extender.get('tls_config') if isinstance(extender, dict) else None
        if isinstance(tls, dict) and isinstance(tls.get('key_data'), str) and tls['key_data']:
            found.append(tls['key_data'])
    return found


def lock_paths(view, params):
    """The files a write of ``params`` locks before planning: the scheduler config and the record of our entries."""
    try:
        record = record_path(view.realpath(params['path']))
    except (TypeError, AttributeError, ViewError, OSError):
        record = None  # not an absolute path: the plan refuses it
    return [params['path'], record]


def wants_backup(view, params):
    """Whether the write keeps a backup: asked for, or the existing file is converted to v1 (the backup is what a
    rollback puts back)."""
    if params['backup']:
        return True
    if not params['convert_api_version']:
        return False
    path = params['path']
    if not path or not path.startswith('/') or view.isdir(path):
        return False  # refused by the plan
    try:
        before = view.read(path)
    except (OSError, ValueError):
        return False  # the plan reads it again and says why it cannot
    return would_convert(before, params['kubernetes_version'])


def checked_plan(view, params, backup):
    """:func:`plan`, refused when the file changed meanwhile so that it now needs a conversion without a backup."""
    planned = plan(view, params)
    if planned.facts.get('conversion') and not backup:
        raise PlanError('%s changed while this run looked at it (it now needs converting to v1, which is done only with '
                        'a backup); nothing was changed. Run again.' % params['path'])
    return planned
