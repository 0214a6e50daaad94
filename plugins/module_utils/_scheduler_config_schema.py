# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The shape of KubeSchedulerConfiguration, per apiVersion, and a strict decoder for it.

The decoder does what kube-scheduler's strict codec does to a document before
validation: unknown fields are errors at every depth, every value must have the Go
type of its field (int32 stays in range, a duration is a Go duration string, ``[]byte``
is base64), and ``null`` means "not set" except for a ``metav1.Duration`` held by
value, whose JSON unmarshaller refuses it. The result is the document with the
``null`` fields dropped and durations turned into nanoseconds, ready for the rules in
``_scheduler_config``. No Ansible import.
"""

from __future__ import annotations

import base64
import binascii
import re

GROUP = 'kubescheduler.config.k8s.io'
KIND = 'KubeSchedulerConfiguration'

# Scalar type names
STRING = 'string'
BOOL = 'bool'
INT32 = 'int32'
INT64 = 'int64'
FLOAT32 = 'float32'
DURATION = 'duration'          # metav1.Duration held by value: null is an error
DURATION_PTR = '*duration'     # *metav1.Duration: null means unset
BYTES = 'bytes'                # []byte: base64 in JSON
RAW = 'raw'                    # runtime.RawExtension: any JSON

_INT_RANGES = {
    INT32: (-(2 ** 31), 2 ** 31 - 1),
    INT64: (-(2 ** 63), 2 ** 63 - 1),
}


class Obj:
    """A Go struct: ordered JSON field names to types."""

    def __init__(self, name, fields):
        self.name = name
        self.fields = fields


class List:
    """A Go slice."""

    def __init__(self, item):
        self.item = item


class Map:
    """A Go map[string]T."""

    def __init__(self, item):
        self.item = item


# ---------------------------------------------------------------- Go durations
_DURATION_UNITS = {
    'ns': 1, 'us': 1000, '\u00b5s': 1000, '\u03bcs': 1000, 'ms': 1000000,
    's': 1000000000, 'm': 60 * 1000000000, 'h': 3600 * 1000000000,
}
_DURATION_PART = re.compile(r'(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)')


def parse_go_duration(text):
    """Return nanoseconds for a Go duration string (``time.ParseDuration``), or raise ValueError."""
    if not isinstance(text, str):
        raise ValueError('a duration must be a string such as "15s" or "1m30s"')
    s = text
    sign = 1
    if s[:1] in ('-', '+'):
        sign = -1 if s[0] == '-' else 1
        s = s[1:]
    if s == '0':
        return 0
    if not s:
        raise ValueError('time: invalid duration "%s"' % text)
    pos = 0
    total = 0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if not m:
            if re.match(r'(\d+(?:\.\d*)?|\.\d+)$', s[pos:]):
                raise ValueError('time: missing unit in duration "%s"' % text)
            raise ValueError('time: invalid duration "%s"' % text)
        number, unit = m.group(1), m.group(2)
        whole, _sep, frac = number.partition('.')
        scale = _DURATION_UNITS[unit]
        value = int(whole or '0') * scale
        if frac:
            value += int(frac) * scale // (10 ** len(frac))
        total += value
        pos = m.end()
    if total > 2 ** 63 - 1 + (1 if sign < 0 else 0):
        raise ValueError('time: invalid duration "%s"' % text)
    return sign * total


def format_duration(ns):
    """Render nanoseconds back as a short Go-like duration (for messages)."""
    if ns % 1000000000 == 0:
        return '%ds' % (ns // 1000000000)
    return '%dns' % ns


# ---------------------------------------------------------------- shared types
LEADER_ELECTION = Obj('LeaderElectionConfiguration', {
    'leaderElect': BOOL,
    'leaseDuration': DURATION,
    'renewDeadline': DURATION,
    'retryPeriod': DURATION,
    'resourceLock': STRING,
    'resourceName': STRING,
    'resourceNamespace': STRING,
})

CLIENT_CONNECTION = Obj('ClientConnectionConfiguration', {
    'kubeconfig': STRING,
    'acceptContentTypes': STRING,
    'contentType': STRING,
    'qps': FLOAT32,
    'burst': INT32,
})

PLUGIN = Obj('Plugin', {'name': STRING, 'weight': INT32})
PLUGIN_SET = Obj('PluginSet', {'enabled': List(PLUGIN), 'disabled': List(PLUGIN)})

TLS_CONFIG = Obj('ExtenderTLSConfig', {
    'insecure': BOOL,
    'serverName': STRING,
    'certFile': STRING,
    'keyFile': STRING,
    'caFile': STRING,
    'certData': BYTES,
    'keyData': BYTES,
    'caData': BYTES,
})

MANAGED_RESOURCE = Obj('ExtenderManagedResource', {'name': STRING, 'ignoredByScheduler': BOOL})

EXTENDER = Obj('Extender', {
    'urlPrefix': STRING,
    'filterVerb': STRING,
    'preemptVerb': STRING,
    'prioritizeVerb': STRING,
    'weight': INT64,
    'bindVerb': STRING,
    'enableHTTPS': BOOL,
    'tlsConfig': TLS_CONFIG,
    'httpTimeout': DURATION,
    'nodeCacheCapable': BOOL,
    'managedResources': List(MANAGED_RESOURCE),
    'ignorable': BOOL,
})

PLUGIN_CONFIG = Obj('PluginConfig', {'name': STRING, 'args': RAW})

# core/v1 types used by plugin args
LABEL_SELECTOR_REQUIREMENT = Obj('LabelSelectorRequirement', {
    'key': STRING, 'operator': STRING, 'values': List(STRING)})
LABEL_SELECTOR = Obj('LabelSelector', {
    'matchLabels': Map(STRING), 'matchExpressions': List(LABEL_SELECTOR_REQUIREMENT)})
TOPOLOGY_SPREAD_CONSTRAINT = Obj('TopologySpreadConstraint', {
    'maxSkew': INT32,
    'topologyKey': STRING,
    'whenUnsatisfiable': STRING,
    'labelSelector': LABEL_SELECTOR,
    'minDomains': INT32,
    'nodeAffinityPolicy': STRING,
    'nodeTaintsPolicy': STRING,
    'matchLabelKeys': List(STRING),
})
NODE_SELECTOR_REQUIREMENT = Obj('NodeSelectorRequirement', {
    'key': STRING, 'operator': STRING, 'values': List(STRING)})
NODE_SELECTOR_TERM = Obj('NodeSelectorTerm', {
    'matchExpressions': List(NODE_SELECTOR_REQUIREMENT),
    'matchFields': List(NODE_SELECTOR_REQUIREMENT)})
NODE_SELECTOR = Obj('NodeSelector', {'nodeSelectorTerms': List(NODE_SELECTOR_TERM)})
PREFERRED_TERM = Obj('PreferredSchedulingTerm', {'weight': INT32, 'preference': NODE_SELECTOR_TERM})
NODE_AFFINITY = Obj('NodeAffinity', {
    'requiredDuringSchedulingIgnoredDuringExecution': NODE_SELECTOR,
    'preferredDuringSchedulingIgnoredDuringExecution': List(PREFERRED_TERM)})

SHAPE_POINT = Obj('UtilizationShapePoint', {'utilization': INT32, 'score': INT32})
RESOURCE_SPEC = Obj('ResourceSpec', {'name': STRING, 'weight': INT64})
SCORING_STRATEGY = Obj('ScoringStrategy', {
    'type': STRING,
    'resources': List(RESOURCE_SPEC),
    'requestedToCapacityRatio': Obj('RequestedToCapacityRatioParam', {'shape': List(SHAPE_POINT)}),
})

_TYPE_META = {'apiVersion': STRING, 'kind': STRING}


def _args(name, fields):
    merged = dict(_TYPE_META)
    merged.update(fields)
    return Obj(name, merged)


PLUGIN_ARGS_V1 = {
    'DefaultPreemption': _args('DefaultPreemptionArgs', {
        'minCandidateNodesPercentage': INT32, 'minCandidateNodesAbsolute': INT32}),
    'InterPodAffinity': _args('InterPodAffinityArgs', {
        'hardPodAffinityWeight': INT32, 'ignorePreferredTermsOfExistingPods': BOOL}),
    'NodeAffinity': _args('NodeAffinityArgs', {'addedAffinity': NODE_AFFINITY}),
    'NodeResourcesBalancedAllocation': _args('NodeResourcesBalancedAllocationArgs', {
        'resources': List(RESOURCE_SPEC)}),
    'NodeResourcesFit': _args('NodeResourcesFitArgs', {
        'ignoredResources': List(STRING), 'ignoredResourceGroups': List(STRING),
        'scoringStrategy': SCORING_STRATEGY}),
    'PodTopologySpread': _args('PodTopologySpreadArgs', {
        'defaultConstraints': List(TOPOLOGY_SPREAD_CONSTRAINT), 'defaultingType': STRING}),
    'VolumeBinding': _args('VolumeBindingArgs', {
        'bindTimeoutSeconds': INT64, 'shape': List(SHAPE_POINT)}),
    'DynamicResources': _args('DynamicResourcesArgs', {
        'filterTimeout': DURATION_PTR, 'bindingTimeout': DURATION_PTR}),
}

# v1beta2 and v1beta3 carry the same args as v1 for the plugins they share.
PLUGIN_ARGS_V1BETA3 = {k: v for k, v in PLUGIN_ARGS_V1.items() if k != 'DynamicResources'}
PLUGIN_ARGS_V1BETA2 = dict(PLUGIN_ARGS_V1BETA3)
PLUGIN_ARGS_V1BETA1 = {
    'DefaultPreemption': PLUGIN_ARGS_V1['DefaultPreemption'],
    'InterPodAffinity': _args('InterPodAffinityArgs', {'hardPodAffinityWeight': INT32}),
    'NodeAffinity': PLUGIN_ARGS_V1['NodeAffinity'],
    'NodeResourcesFit': _args('NodeResourcesFitArgs', {
        'ignoredResources': List(STRING), 'ignoredResourceGroups': List(STRING)}),
    'NodeResourcesLeastAllocated': _args('NodeResourcesLeastAllocatedArgs', {'resources': List(RESOURCE_SPEC)}),
    'NodeResourcesMostAllocated': _args('NodeResourcesMostAllocatedArgs', {'resources': List(RESOURCE_SPEC)}),
    'RequestedToCapacityRatio': _args('RequestedToCapacityRatioArgs', {
        'shape': List(SHAPE_POINT), 'resources': List(RESOURCE_SPEC)}),
    'PodTopologySpread': PLUGIN_ARGS_V1['PodTopologySpread'],
    'VolumeBinding': _args('VolumeBindingArgs', {'bindTimeoutSeconds': INT64}),
    'NodeLabel': _args('NodeLabelArgs', {
        'presentLabels': List(STRING), 'absentLabels': List(STRING),
        'presentLabelsPreference': List(STRING), 'absentLabelsPreference': List(STRING)}),
    'ServiceAffinity': _args('ServiceAffinityArgs', {'affinityLabels': List(STRING), 'antiAffinityLabelsPreference': List(STRING)}),
}

_EXTENSION_POINTS_OLD = ('queueSort', 'preFilter', 'filter', 'postFilter', 'preScore', 'score',
                         'reserve', 'permit', 'preBind', 'bind', 'postBind')
EXTENSION_POINTS = {
    'v1beta1': _EXTENSION_POINTS_OLD,
    'v1beta2': ('preEnqueue',) + _EXTENSION_POINTS_OLD,
    'v1beta3': ('preEnqueue',) + _EXTENSION_POINTS_OLD + ('multiPoint',),
    'v1': ('preEnqueue',) + _EXTENSION_POINTS_OLD + ('multiPoint',),
}

# Fields that exist in the newest upstream types only behind alpha feature gates, or
# whose acceptance depends on gates this module cannot see. They are refused on purpose.
REFUSED_FIELDS = {
    'percentageOfPlacementsToScore': 'alpha field (feature gate TopologyAwareWorkloadScheduling)',
    'placementGenerate': 'alpha extension point (feature gate TopologyAwareWorkloadScheduling)',
    'placementScore': 'alpha extension point (feature gate TopologyAwareWorkloadScheduling)',
    'placementFeasible': 'alpha extension point (feature gate TopologyAwareWorkloadScheduling)',
    'podGroupPostFilter': 'alpha extension point (workload scheduling feature gates)',
}


def _plugins(version):
    return Obj('Plugins', {point: PLUGIN_SET for point in EXTENSION_POINTS[version]})


def _profile(version):
    fields = {'schedulerName': STRING}
    if version == 'v1':
        fields['percentageOfNodesToScore'] = INT32
    fields['plugins'] = _plugins(version)
    fields['pluginConfig'] = List(PLUGIN_CONFIG)
    return Obj('KubeSchedulerProfile', fields)


def _root(version):
    fields = {
        'apiVersion': STRING,
        'kind': STRING,
        'parallelism': INT32,
        'leaderElection': LEADER_ELECTION,
        'clientConnection': CLIENT_CONNECTION,
    }
    if version in ('v1beta1', 'v1beta2'):
        fields['healthzBindAddress'] = STRING
        fields['metricsBindAddress'] = STRING
    fields.update({
        'enableProfiling': BOOL,
        'enableContentionProfiling': BOOL,
        'percentageOfNodesToScore': INT32,
        'podInitialBackoffSeconds': INT64,
        'podMaxBackoffSeconds': INT64,
        'profiles': List(_profile(version)),
        'extenders': List(EXTENDER),
    })
    if version == 'v1':
        fields['delayCacheUntilActive'] = BOOL
    return Obj(KIND, fields)


SCHEMAS = {version: _root(version) for version in ('v1beta1', 'v1beta2', 'v1beta3', 'v1')}
PLUGIN_ARGS = {
    'v1beta1': PLUGIN_ARGS_V1BETA1,
    'v1beta2': PLUGIN_ARGS_V1BETA2,
    'v1beta3': PLUGIN_ARGS_V1BETA3,
    'v1': PLUGIN_ARGS_V1,
}


# ---------------------------------------------------------------- decoding
def go_type_name(value):
    """The JSON type name Go's decoder would report for ``value``."""
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'bool'
    if isinstance(value, (int, float)):
        return 'number'
    if isinstance(value, str):
        return 'string'
    if isinstance(value, (list, tuple)):
        return 'array'
    if isinstance(value, dict):
        return 'object'
    return type(value).__name__


def _join(path, name):
    return '%s.%s' % (path, name) if path else name


def _scalar(typ, value, path, errors):
    """Check one scalar; return the decoded value or None after recording an error."""
    if typ == RAW:
        return value
    if typ == STRING:
        if isinstance(value, str):
            return value
        errors.append('%s: cannot decode %s into a string field; quote the value' % (path, go_type_name(value)))
        return None
    if typ == BOOL:
        if isinstance(value, bool):
            return value
        errors.append('%s: cannot decode %s into a bool field; use true or false' % (path, go_type_name(value)))
        return None
    if typ in _INT_RANGES:
        if isinstance(value, float) and not isinstance(value, bool) and value.is_integer():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool):
            low, high = _INT_RANGES[typ]
            if low <= value <= high:
                return value
            errors.append('%s: %d overflows %s' % (path, value, typ))
            return None
        errors.append('%s: cannot decode %s into an %s field; give an integer' % (path, go_type_name(value), typ))
        return None
    if typ == FLOAT32:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if abs(float(value)) > 3.4028234663852886e38:
                errors.append('%s: %r overflows float32' % (path, value))
                return None
            return float(value)
        errors.append('%s: cannot decode %s into a float32 field; give a number' % (path, go_type_name(value)))
        return None
    if typ in (DURATION, DURATION_PTR):
        if not isinstance(value, str):
            errors.append('%s: cannot decode %s into a duration; give a Go duration string such as "15s" or "1m30s"'
                          % (path, go_type_name(value)))
            return None
        try:
            return parse_go_duration(value)
        except ValueError as e:
            errors.append('%s: %s; give a Go duration string such as "15s" or "1m30s"' % (path, e))
            return None
    if typ == BYTES:
        if not isinstance(value, str):
            errors.append('%s: cannot decode %s into a []byte field; give base64 text' % (path, go_type_name(value)))
            return None
        try:
            return base64.b64decode(value.replace('\r', '').replace('\n', ''), validate=True)
        except (binascii.Error, ValueError):
            errors.append('%s: illegal base64 data; []byte fields hold base64-encoded text' % path)
            return None
    raise AssertionError('unknown scalar type %r' % typ)


def decode(typ, value, path, errors):
    """Strictly decode ``value`` as ``typ``; errors are appended; returns the decoded value.

    A ``null`` field is dropped (Go leaves it unset), except a duration held by value.
    """
    if isinstance(typ, Obj):
        return _decode_object(typ, value, path, errors)
    if isinstance(typ, List):
        return _decode_list(typ, value, path, errors)
    if isinstance(typ, Map):
        return _decode_map(typ, value, path, errors)
    return _scalar(typ, value, path, errors)


def _key_text(key):
    """A mapping key as Go's decoder names it (a YAML bool key reads true/false)."""
    return key if isinstance(key, str) else str(key).lower() if isinstance(key, bool) else str(key)


def _decode_object(typ, value, path, errors):
    """A struct: known fields only (case-sensitive), null fields left unset."""
    if not isinstance(value, dict):
        errors.append('%s: cannot decode %s into %s; expected a mapping' % (path or '<document>', go_type_name(value), typ.name))
        return None
    out = {}
    for key, item in value.items():
        if not isinstance(key, str) or key not in typ.fields:
            shown = _key_text(key)
            reason = REFUSED_FIELDS.get(shown)
            if reason:
                errors.append('%s: not supported by this module: %s' % (_join(path, shown), reason))
            else:
                errors.append('unknown field "%s" (field names are case-sensitive; %s accepts: %s)'
                              % (_join(path, shown), typ.name, ', '.join(typ.fields)))
            continue
        ftype = typ.fields[key]
        fpath = _join(path, key)
        if item is None:
            if ftype == DURATION:
                errors.append('%s: time: invalid duration ""; a duration field cannot be null' % fpath)
            continue
        decoded = decode(ftype, item, fpath, errors)
        if decoded is not None:
            out[key] = decoded
    return out


def _decode_list(typ, value, path, errors):
    """A slice: a null item is its type's zero value (a duration cannot be null)."""
    if not isinstance(value, list):
        errors.append('%s: cannot decode %s into a list' % (path, go_type_name(value)))
        return None
    out = []
    for i, item in enumerate(value):
        ipath = '%s[%d]' % (path, i)
        if item is None:
            if typ.item == DURATION:
                errors.append('%s: time: invalid duration ""' % ipath)
                continue
            out.append(_zero(typ.item))
            continue
        decoded = decode(typ.item, item, ipath, errors)
        out.append(decoded if decoded is not None else _zero(typ.item))
    return out


def _decode_map(typ, value, path, errors):
    """A map: keys as Go reads them, a null value the item type's zero value."""
    if not isinstance(value, dict):
        errors.append('%s: cannot decode %s into a map' % (path, go_type_name(value)))
        return None
    out = {}
    for key, item in value.items():
        skey = _key_text(key)
        if item is None:
            out[skey] = _zero(typ.item)
            continue
        decoded = decode(typ.item, item, '%s[%s]' % (path, skey), errors)
        if decoded is not None:
            out[skey] = decoded
    return out


def _zero(typ):
    if isinstance(typ, Obj) or isinstance(typ, Map):
        return {}
    if isinstance(typ, List):
        return []
    return {STRING: '', BOOL: False, INT32: 0, INT64: 0, FLOAT32: 0.0, BYTES: b''}.get(typ)
