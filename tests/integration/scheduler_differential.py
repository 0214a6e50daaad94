# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Differential test of our KubeSchedulerConfiguration validator against a real kube-scheduler.

Hypothesis generates KubeSchedulerConfiguration v1 documents as YAML text: valid ones and
mutations of them (unknown or mis-cased fields, wrong types, duplicate keys, YAML scalar
quirks, every validation rule broken). For each document both verdicts are computed:

* ours: ``_scheduler_config.validate_text`` (what the ``scheduler_config`` module uses);
* the scheduler's: ``kube-scheduler --config F --kubeconfig KC --secure-port=0 --write-config-to OUT``
  exits 0 when it accepts the file.

The only differences allowed are the deliberate refusals documented in the module
(``ALLOWED_DIFFERENCES``), and only in the direction "we refuse, the scheduler accepts".

The scheduler command comes from ``BAREMETAL_K3S_KUBE_SCHEDULER`` (a command line), else
``$BAREMETAL_K3S_KUBE_DIR/k3s kube-scheduler``.

CLI: ``python3 tests/integration/scheduler_differential.py --cases 10000 --workers 2 --seed S``
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import copy
import importlib.util
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import yaml
from hypothesis import HealthCheck, Phase, given, settings, seed as hypothesis_seed, strategies as st

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

GROUP = 'kubescheduler.config.k8s.io'
API_VERSION = GROUP + '/v1'
KIND = 'KubeSchedulerConfiguration'


def import_model():
    """``_scheduler_config`` from this checkout (through a symlink farm when not installed).

    Under pytest, tests/conftest.py has done this; run as a script, this file loads the same
    tests/collection_farm.py by its path."""
    spec = importlib.util.spec_from_file_location('bk3s_collection_farm', os.path.join(ROOT, 'tests', 'collection_farm.py'))
    collection_farm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(collection_farm)
    collection_farm.make_importable()
    from ansible_collections.baremetal.k3s.plugins.module_utils import _scheduler_config  # pylint: disable=import-outside-toplevel
    return _scheduler_config


# ---------------------------------------------------------------- the scheduler command
class SchedulerUnavailable(Exception):
    """No kube-scheduler command could be found."""


def scheduler_command():
    """The kube-scheduler command line (a list). Raises SchedulerUnavailable with the reason."""
    line = os.environ.get('BAREMETAL_K3S_KUBE_SCHEDULER')
    if not line and os.environ.get('BAREMETAL_K3S_KUBE_DIR'):
        line = '%s kube-scheduler' % shlex.quote(os.path.join(os.environ['BAREMETAL_K3S_KUBE_DIR'], 'k3s'))
    if not line:
        raise SchedulerUnavailable('neither BAREMETAL_K3S_KUBE_SCHEDULER (a kube-scheduler command line) nor BAREMETAL_K3S_KUBE_DIR '
                                   '(holding the k3s multi-call binary) is set')
    argv = shlex.split(line)
    exe = argv[0]
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)) and not shutil.which(exe):
        raise SchedulerUnavailable('the kube-scheduler command %r names %s, which is not an executable file' % (line, exe))
    return argv


# ---------------------------------------------------------------- fixture files
KUBECONFIG_TEXT = '''apiVersion: v1
kind: Config
clusters:
- name: differential
  cluster:
    server: https://127.0.0.1:1
    insecure-skip-tls-verify: true
users:
- name: differential
  user:
    token: differential-token
contexts:
- name: differential
  context:
    cluster: differential
    user: differential
current-context: differential
'''


def make_files(workdir, pems=None):
    """Write the kubeconfig and TLS material every document may point to. Returns a dict.

    ``pems``: the (certificate, key) to write, those a kept corpus embeds; a new pair when None."""
    files = {'dir': workdir, 'kubeconfig': os.path.join(workdir, 'scheduler.kubeconfig'),
             'missing': os.path.join(workdir, 'does-not-exist', 'file')}
    with open(files['kubeconfig'], 'w', encoding='utf-8') as f:
        f.write(KUBECONFIG_TEXT)
    cert, key = os.path.join(workdir, 'client.crt'), os.path.join(workdir, 'client.key')
    if pems:
        for path, data in ((cert, pems[0]), (key, pems[1])):
            with open(path, 'wb') as f:
                f.write(data)
    else:
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
                        '-subj', '/CN=differential', '-days', '3650', '-keyout', key, '-out', cert],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    files.update(cert=cert, key=key, ca=cert)
    with open(cert, 'rb') as f:
        files['cert_pem'] = f.read()
    with open(key, 'rb') as f:
        files['key_pem'] = f.read()
    return files


# ---------------------------------------------------------------- the schema as upstream 1.36 has it
# Extension points each in-tree plugin implements (k8s.io/kubernetes v1.36 pkg/scheduler/framework/plugins).
PLUGINS = {
    'PrioritySort': ('queueSort',),
    'SchedulingGates': ('preEnqueue',),
    'NodeUnschedulable': ('filter',),
    'NodeName': ('filter',),
    'TaintToleration': ('filter', 'preScore', 'score'),
    'NodeAffinity': ('preFilter', 'filter', 'preScore', 'score'),
    'NodePorts': ('preFilter', 'filter'),
    'NodeResourcesFit': ('preFilter', 'filter', 'preScore', 'score'),
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
}
POINTS = ('preEnqueue', 'queueSort', 'preFilter', 'filter', 'postFilter', 'preScore', 'score', 'reserve', 'permit',
          'preBind', 'bind', 'postBind')
# Plugins a profile cannot lose without a replacement.
ESSENTIAL = ('PrioritySort', 'DefaultBinder')
ARGS_PLUGINS = ('DefaultPreemption', 'InterPodAffinity', 'NodeAffinity', 'NodeResourcesBalancedAllocation', 'NodeResourcesFit',
                'PodTopologySpread', 'VolumeBinding', 'DynamicResources')
ALPHA_POINTS = ('placementGenerate', 'placementScore', 'placementFeasible', 'podGroupPostFilter')

LABEL_KEYS = ('zone', 'topology.kubernetes.io/zone', 'kubernetes.io/hostname', 'example.com/rack', 'disk_type', 'a.b-c_d',
              'node-role.kubernetes.io/worker')
BAD_LABEL_KEYS = ('', '-zone', 'zone-', 'a/b/c', 'Example.COM/x', 'x' * 64, '/zone', 'zone with space', 'ex_ample.com/x')
LABEL_VALUES = ('a', 'ssd', 'zone-1', 'v1.2_3', 'X' * 63, '')
BAD_LABEL_VALUES = ('-a', 'a-', 'x' * 64, 'has space', 'a/b')
RESOURCES = ('cpu', 'memory', 'ephemeral-storage', 'example.com/gpu', 'nvidia.com/gpu', 'hugepages-2Mi')
EXTENDED = ('example.com/gpu', 'example.com/disk-lvg', 'baremetal-csi.dell.com/hdd', 'vendor.io/foo_bar', 'a.b/c.d')
BAD_EXTENDED = ('gpu', 'kubernetes.io/gpu', 'example.com/', '/gpu', 'Example.com/gpu', 'example.com/-gpu', 'example.com/gpu/x',
                'requests.example.com/gpu', 'example.com/' + 'g' * 64, 'example.com/g pu', 'foo.kubernetes.io/bar', 'cpu')
URLS = ('http://127.0.0.1:8889', 'https://extender.example.com:8443/prefix', 'http://[::1]:8889/api', 'http://localhost')
NAMES = ('default-scheduler', 'csi-baremetal', 'second', 'custom-scheduler', 'z')

# Plain scalars that go-yaml (YAML 1.1, used by sigs.k8s.io/yaml) and PyYAML may read differently.
YAML_QUIRKS = ('y', 'n', 'Y', 'N', 'yes', 'no', 'on', 'off', 'True', 'FALSE', '~', 'null', 'Null', '0x1A', '0o17', '017', '1_000',
               '+12', '-0', '.5', '1.0', '1e3', '1.5e3', '.inf', '-.Inf', '.nan', '2001-12-14', '2001-12-14t21:59:43.10-05:00',
               '0b101', '1:30', '190:20:30', '"15"', "'true'", '15s', '"1m"', '12345678901', '-2147483649', '2147483647',
               '9223372036854775808', '=', '<<', '!!str 5', '!!int "5"', '[]', '{}', '""', '0.0', '3.4e39', '1.0e+3')

GO_YAML_SPECIAL = re.compile(r'^(y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|'
                             r'~|null|Null|NULL|[-+]?[0-9][0-9_.:eExXoObB+-]*|[-+]?\.(inf|Inf|INF|nan|NaN|NAN)|=|<<)$')


class _Dumper(yaml.SafeDumper):  # pylint: disable=too-many-ancestors
    """SafeDumper that quotes every string go-yaml could read as something else."""


def _represent_str(dumper, value):
    style = '"' if GO_YAML_SPECIAL.match(value) else None
    return dumper.represent_scalar('tag:yaml.org,2002:str', value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump(doc):
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096)


# ---------------------------------------------------------------- valid documents
def _go_duration(draw, nanos):
    """Render nanoseconds (non-negative) as one of the Go duration spellings."""
    seconds, rest = divmod(nanos, 10 ** 9)
    forms = []
    if rest == 0:
        forms.append('%ds' % seconds)
        if seconds % 60 == 0 and seconds:
            forms.append('%dm' % (seconds // 60))
        if seconds >= 60:
            forms.append('%dm%ds' % divmod(seconds, 60))
        forms.append('%dms' % (seconds * 1000))
    if rest % 10 ** 6 == 0:
        forms.append('%dms' % (nanos // 10 ** 6))
        forms.append('%d.%03ds' % (seconds, rest // 10 ** 6))
    forms.append('%dns' % nanos)
    return draw(st.sampled_from(forms))


def duration(draw, low_s, high_s):
    return _go_duration(draw, draw(st.integers(low_s * 10 ** 3, high_s * 10 ** 3)) * 10 ** 6)


@st.composite
def leader_election(draw):
    le = {}
    if draw(st.booleans()):
        le['leaderElect'] = draw(st.booleans())
    lease = draw(st.integers(3, 120))
    renew = draw(st.integers(2, lease - 1))
    retry = draw(st.integers(1, renew))
    for name, value in (('leaseDuration', lease), ('renewDeadline', renew), ('retryPeriod', retry)):
        if draw(st.booleans()):
            le[name] = _go_duration(draw, value * 10 ** 9)
    if (not le.get('leaseDuration') and le.get('renewDeadline')) or (not le.get('renewDeadline') and le.get('leaseDuration')):
        # with one side defaulted (15s/10s) keep lease > renew
        le['leaseDuration'], le['renewDeadline'] = _go_duration(draw, lease * 10 ** 9), _go_duration(draw, renew * 10 ** 9)
    if draw(st.booleans()):
        le['resourceLock'] = 'leases'
    if draw(st.booleans()):
        le['resourceName'] = draw(st.sampled_from(('kube-scheduler', 'csi-scheduler')))
    if draw(st.booleans()):
        le['resourceNamespace'] = draw(st.sampled_from(('kube-system', 'scheduling')))
    return le


@st.composite
def client_connection(draw, files):
    cc = {'kubeconfig': files['kubeconfig']}
    if draw(st.booleans()):
        cc['acceptContentTypes'] = draw(st.sampled_from(('', 'application/json', 'application/vnd.kubernetes.protobuf,application/json')))
    if draw(st.booleans()):
        cc['contentType'] = draw(st.sampled_from(('application/json', 'application/vnd.kubernetes.protobuf')))
    if draw(st.booleans()):
        cc['qps'] = draw(st.one_of(st.integers(0, 500), st.floats(0, 500, allow_nan=False).map(lambda f: round(f, 2))))
    if draw(st.booleans()):
        cc['burst'] = draw(st.integers(0, 1000))
    return dict(draw(st.permutations(list(cc.items()))))


@st.composite
def selector_term(draw):
    term = {}
    exprs = []
    for _i in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(('In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt')))
        req = {'key': draw(st.sampled_from(LABEL_KEYS)), 'operator': op}
        if op in ('In', 'NotIn'):
            req['values'] = draw(st.lists(st.sampled_from(LABEL_VALUES[:-1]), min_size=1, max_size=3, unique=True))
        elif op in ('Gt', 'Lt'):
            req['values'] = [str(draw(st.integers(-100, 10 ** 6)))]
        exprs.append(req)
    if exprs or draw(st.booleans()):
        term['matchExpressions'] = exprs
    if draw(st.booleans()):
        term['matchFields'] = [{'key': 'metadata.name', 'operator': draw(st.sampled_from(('In', 'NotIn'))),
                                'values': [draw(st.sampled_from(('node-1', 'worker.example.com')))]}]
    return term


def _resources(draw, weight_low, weight_high, names=RESOURCES):
    out = []
    for name in draw(st.lists(st.sampled_from(names), max_size=4, unique=True)):
        res = {'name': name}
        if draw(st.booleans()):
            res['weight'] = draw(st.integers(weight_low, weight_high))
        out.append(res)
    return out


def _shape(draw, min_size=1):
    utils = sorted(draw(st.lists(st.integers(0, 100), min_size=min_size, max_size=4, unique=True)))
    return [{'utilization': u, 'score': draw(st.integers(0, 10))} for u in utils]


@st.composite
def plugin_args(draw, name):  # pylint: disable=too-many-branches
    """Valid args of the in-tree plugin ``name``."""
    args = {}
    if name == 'DefaultPreemption':
        pct, absolute = draw(st.integers(0, 100)), draw(st.integers(0, 1000))
        if pct == 0 and absolute == 0:
            absolute = 1
        if draw(st.booleans()):
            args['minCandidateNodesPercentage'] = pct
        if draw(st.booleans()):
            args['minCandidateNodesAbsolute'] = absolute
    elif name == 'InterPodAffinity':
        if draw(st.booleans()):
            args['hardPodAffinityWeight'] = draw(st.integers(0, 100))
        if draw(st.booleans()):
            args['ignorePreferredTermsOfExistingPods'] = draw(st.booleans())
    elif name == 'NodeAffinity':
        if draw(st.booleans()):
            affinity = {}
            if draw(st.booleans()):
                affinity['requiredDuringSchedulingIgnoredDuringExecution'] = {
                    'nodeSelectorTerms': draw(st.lists(selector_term(), min_size=1, max_size=2))}
            if draw(st.booleans()):
                affinity['preferredDuringSchedulingIgnoredDuringExecution'] = [
                    {'weight': draw(st.integers(1, 100)), 'preference': draw(selector_term())} for _i in range(draw(st.integers(1, 2)))]
            args['addedAffinity'] = affinity
    elif name == 'NodeResourcesBalancedAllocation':
        if draw(st.booleans()):
            args['resources'] = _resources(draw, 0, 1)
    elif name == 'NodeResourcesFit':
        if draw(st.booleans()):
            args['ignoredResources'] = draw(st.lists(st.sampled_from(('example.com/foo', 'nvidia.com/gpu', 'foo')), max_size=2))
        if draw(st.booleans()):
            args['ignoredResourceGroups'] = draw(st.lists(st.sampled_from(('example.com', 'nvidia.com', 'foo_bar')), max_size=2))
        if draw(st.booleans()):
            stype = draw(st.sampled_from(('LeastAllocated', 'MostAllocated', 'RequestedToCapacityRatio')))
            strategy = {'type': stype}
            if draw(st.booleans()):
                strategy['resources'] = _resources(draw, 1, 100)
            if stype == 'RequestedToCapacityRatio':
                strategy['requestedToCapacityRatio'] = {'shape': _shape(draw)}
            args['scoringStrategy'] = strategy
    elif name == 'PodTopologySpread':
        if draw(st.booleans()):
            args['defaultingType'] = 'System'
        else:
            constraints = []
            for key, when in draw(st.lists(st.tuples(st.sampled_from(LABEL_KEYS), st.sampled_from(('DoNotSchedule', 'ScheduleAnyway'))),
                                           max_size=3, unique=True)):
                c = {'maxSkew': draw(st.integers(1, 5)), 'topologyKey': key, 'whenUnsatisfiable': when}
                if draw(st.integers(0, 3)) == 0:
                    c['nodeAffinityPolicy'] = draw(st.sampled_from(('Honor', 'Ignore')))
                if draw(st.integers(0, 3)) == 0:
                    c['nodeTaintsPolicy'] = draw(st.sampled_from(('Honor', 'Ignore')))
                constraints.append(c)
            if constraints or draw(st.booleans()):
                args['defaultConstraints'] = constraints
            args['defaultingType'] = 'List'
    elif name == 'VolumeBinding':
        if draw(st.booleans()):
            args['bindTimeoutSeconds'] = draw(st.integers(0, 3600))
    elif name == 'DynamicResources':
        if draw(st.booleans()):
            args['filterTimeout'] = duration(draw, 0, 60)
    if draw(st.integers(0, 3)) == 0:
        args['kind'] = name + 'Args'
    if draw(st.integers(0, 3)) == 0:
        args['apiVersion'] = API_VERSION
    if not args:
        # this module refuses empty args on purpose: keep valid documents clear of that
        args['kind'] = name + 'Args'
    return dict(draw(st.permutations(list(args.items()))))


def _plugin(name, weight=None):
    p = {'name': name}
    if weight is not None:
        p['weight'] = weight
    return p


@st.composite
def plugins_of_profile(draw):
    """A valid ``plugins`` mapping (the queueSort and bind points are left to the caller)."""
    plugins = {}
    optional = [p for p in PLUGINS if p not in ESSENTIAL]
    for point in draw(st.lists(st.sampled_from(('multiPoint',) + POINTS[2:-2] + ('preEnqueue', 'postBind')), max_size=4, unique=True)):
        pset = {}
        if point == 'multiPoint':
            candidates = optional
        else:
            candidates = [p for p in optional if point in PLUGINS[p]]
        disabled = draw(st.lists(st.sampled_from(optional), max_size=3, unique=True))
        if draw(st.integers(0, 5)) == 0 and point != 'multiPoint':
            disabled = ['*']
        enabled = draw(st.lists(st.sampled_from(candidates), max_size=3, unique=True)) if candidates else []
        if enabled:
            pset['enabled'] = [_plugin(n, draw(st.one_of(st.none(), st.integers(0, 10))) if point in ('score', 'multiPoint') else None)
                               for n in enabled]
        if disabled:
            pset['disabled'] = [_plugin(n) for n in disabled]
        plugins[point] = pset
    return plugins


@st.composite
def profile(draw, name):
    prof = {}
    if name is not None:
        prof['schedulerName'] = name
    if draw(st.integers(0, 3)) == 0:
        prof['percentageOfNodesToScore'] = draw(st.integers(0, 100))
    if draw(st.booleans()):
        prof['plugins'] = draw(plugins_of_profile())
    if draw(st.booleans()):
        configs = []
        for pname in draw(st.lists(st.sampled_from(ARGS_PLUGINS), min_size=1, max_size=4, unique=True)):
            configs.append({'name': pname, 'args': draw(plugin_args(pname))})
        prof['pluginConfig'] = configs
    return prof


@st.composite
def tls_config(draw, files):
    tls = {}
    if draw(st.booleans()):
        tls['serverName'] = 'extender.example.com'
    mode = draw(st.sampled_from(('none', 'files', 'data', 'insecure')))
    if mode == 'insecure':
        tls['insecure'] = True
    elif mode == 'files':
        if draw(st.booleans()):
            tls['certFile'], tls['keyFile'] = files['cert'], files['key']
        if draw(st.booleans()):
            tls['caFile'] = files['ca']
    elif mode == 'data':
        if draw(st.booleans()):
            tls['certData'] = base64.b64encode(files['cert_pem']).decode('ascii')
            tls['keyData'] = base64.b64encode(files['key_pem']).decode('ascii')
        if draw(st.booleans()):
            tls['caData'] = base64.b64encode(files['cert_pem']).decode('ascii')
    if draw(st.booleans()) and mode != 'insecure':
        tls['insecure'] = False
    return tls


@st.composite
def extender(draw, files, may_bind, resources):
    ext = {'urlPrefix': draw(st.sampled_from(URLS))}
    for verb in ('filterVerb', 'preemptVerb'):
        if draw(st.booleans()):
            ext[verb] = verb[:-4]
    if draw(st.booleans()):
        ext['prioritizeVerb'] = 'prioritize'
        ext['weight'] = draw(st.integers(1, 10))
    elif draw(st.booleans()):
        ext['weight'] = draw(st.integers(-5, 10))
    if may_bind and draw(st.booleans()):
        ext['bindVerb'] = 'bind'
    if draw(st.booleans()):
        ext['enableHTTPS'] = draw(st.booleans())
    if draw(st.booleans()):
        ext['tlsConfig'] = draw(tls_config(files))
    if draw(st.booleans()):
        ext['httpTimeout'] = duration(draw, 0, 120)
    for flag in ('nodeCacheCapable', 'ignorable'):
        if draw(st.booleans()):
            ext[flag] = draw(st.booleans())
    if resources:
        ext['managedResources'] = [dict([('name', r)] + ([('ignoredByScheduler', draw(st.booleans()))] if draw(st.booleans()) else []))
                                   for r in resources]
    return dict(draw(st.permutations(list(ext.items()))))


@st.composite
def valid_document(draw, files):  # pylint: disable=too-many-branches
    doc = {'apiVersion': API_VERSION, 'kind': KIND}
    doc['clientConnection'] = draw(client_connection(files))
    if draw(st.booleans()):
        doc['leaderElection'] = draw(leader_election())
    if draw(st.booleans()):
        doc['parallelism'] = draw(st.integers(1, 64))
    if draw(st.booleans()):
        doc['percentageOfNodesToScore'] = draw(st.integers(0, 100))
    if draw(st.booleans()):
        initial = draw(st.integers(1, 20))
        doc['podInitialBackoffSeconds'] = initial
        if draw(st.booleans()):
            doc['podMaxBackoffSeconds'] = draw(st.integers(initial, 120))
    elif draw(st.booleans()):
        doc['podMaxBackoffSeconds'] = draw(st.integers(1, 120))
    for flag in ('enableProfiling', 'enableContentionProfiling', 'delayCacheUntilActive'):
        if draw(st.integers(0, 3)) == 0:
            doc[flag] = draw(st.booleans())
    nprof = draw(st.integers(0, 3))
    if nprof:
        names = draw(st.lists(st.sampled_from(NAMES), min_size=nprof, max_size=nprof, unique=True))
        profiles = [draw(profile(names[0] if nprof > 1 or draw(st.booleans()) else None))]
        profiles += [draw(profile(n)) for n in names[1:]]
        if draw(st.integers(0, 4)) == 0:
            queue_sort = {'enabled': [{'name': 'PrioritySort'}], 'disabled': [{'name': '*'}]}
            for prof in profiles:
                prof.setdefault('plugins', {})['queueSort'] = copy.deepcopy(queue_sort)
        if draw(st.integers(0, 4)) == 0:
            prof = draw(st.sampled_from(profiles))
            prof.setdefault('plugins', {})['bind'] = {'enabled': [{'name': 'DefaultBinder'}], 'disabled': [{'name': '*'}]}
        doc['profiles'] = profiles
    elif draw(st.integers(0, 3)) == 0:
        doc['profiles'] = []
    if draw(st.booleans()):
        count = draw(st.integers(1, 3))
        binder = draw(st.integers(-1, count - 1))
        managed = draw(st.lists(st.sampled_from(EXTENDED), max_size=4, unique=True))
        split = sorted(draw(st.lists(st.integers(0, len(managed)), min_size=count - 1, max_size=count - 1)))
        bounds = [0] + split + [len(managed)]
        doc['extenders'] = [draw(extender(files, i == binder, managed[bounds[i]:bounds[i + 1]])) for i in range(count)]
    keys = draw(st.permutations([k for k in doc if k not in ('apiVersion', 'kind')]))
    head = [('apiVersion', doc['apiVersion']), ('kind', doc['kind'])]
    if draw(st.booleans()):
        head.reverse()
    return dict(head + [(k, doc[k]) for k in keys])


# ---------------------------------------------------------------- mutations
def _walk(node, path=()):
    """Every (path, container, key, value) below ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield path + (key,), node, key, value
            yield from _walk(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield path + (i,), node, i, value
            yield from _walk(value, path + (i,))


def _mappings(doc):
    out = [((), doc)]
    out += [(p, v) for p, _c, _k, v in _walk(doc) if isinstance(v, dict)]
    return out


KNOWN_MISCASED = ('enableHttps', 'EnableHTTPS', 'urlprefix', 'UrlPrefix', 'httptimeout', 'HTTPTimeout', 'kubeConfig', 'Kubeconfig',
                  'leaderelect', 'LeaderElect', 'schedulername', 'SchedulerName', 'PluginConfig', 'pluginconfig', 'multipoint',
                  'MultiPoint', 'queuesort', 'preenqueue', 'Enabled', 'Disabled', 'Name', 'Weight', 'nodecachecapable', 'bindverb',
                  'managedresources', 'ignoredbyscheduler', 'tlsconfig', 'TLSConfig', 'certfile', 'CAData', 'insecureSkipVerify',
                  'percentageofnodestoscore', 'apiversion', 'Kind', 'Args', 'args_', 'defaultconstraints', 'maxskew', 'Parallelism',
                  'httpTimeoutSeconds', 'policy', 'predicates', 'priorities', 'hardPodAffinityWeightt', 'minDomain', 'shape ',
                  'bindTimeout', 'filtertimeout', 'resourcelock', 'leaseduration', 'scoringstrategy', 'Resources', 'qPS', 'Burst',
                  'metricsBindAddress', 'healthzBindAddress', 'algorithmSource', 'hardPodAffinitySymmetricWeight', 'featureGates')


def _miscase(key):
    if not isinstance(key, str) or not key:
        return 'x'
    variants = {key.lower(), key.upper(), key[0].swapcase() + key[1:], key + 's', key.replace('HTTP', 'Http').replace('TLS', 'Tls')}
    variants.discard(key)
    return sorted(variants)


@st.composite
def m_unknown_field(draw, doc):
    path, mapping = draw(st.sampled_from(_mappings(doc)))
    existing = [k for k in mapping if isinstance(k, str)]
    if existing and draw(st.booleans()):
        old = draw(st.sampled_from(existing))
        new = draw(st.sampled_from(_miscase(old)))
        if new in mapping:
            return 'unknown-field', doc
        # rename in place, keeping the order
        items = [(new if k == old else k, v) for k, v in mapping.items()]
        mapping.clear()
        mapping.update(items)
    else:
        name = draw(st.sampled_from(KNOWN_MISCASED))
        if name in mapping:
            return 'unknown-field', doc
        mapping[name] = draw(st.sampled_from((True, 1, 'x', '15s', [], {}, None)))
    return 'unknown-field:%s' % '.'.join(str(p) for p in path), doc


def _wrong_value(draw, value):
    if isinstance(value, bool):
        return draw(st.sampled_from(('true', 1, 0, [True], {'a': 1}, 'yes')))
    if isinstance(value, int):
        return draw(st.sampled_from((str(value), float(value) + 0.5, True, [value], {'v': value}, 2 ** 31, -(2 ** 31) - 1, 2 ** 63,
                                     float(value), '%dm' % value)))
    if isinstance(value, float):
        return draw(st.sampled_from((str(value), True, [value], 1e39)))
    if isinstance(value, str):
        return draw(st.sampled_from((15, 1.5, True, [value], {'k': value}, 0, -1)))
    if isinstance(value, list):
        return draw(st.sampled_from(({'a': 1}, 'x', 1, True, {})))
    if isinstance(value, dict):
        return draw(st.sampled_from(([value], 'x', 1, True, [])))
    return 'x'


@st.composite
def m_wrong_type(draw, doc):
    nodes = [(p, c, k, v) for p, c, k, v in _walk(doc) if p[-1] not in ('apiVersion', 'kind')]
    if not nodes:
        return 'wrong-type', doc
    path, container, key, value = draw(st.sampled_from(nodes))
    container[key] = _wrong_value(draw, value)
    return 'wrong-type:%s' % '.'.join(str(p) for p in path), doc


@st.composite
def m_null(draw, doc):
    nodes = [(p, c, k) for p, c, k, _v in _walk(doc) if p[-1] not in ('apiVersion', 'kind')]
    if not nodes:
        return 'null', doc
    path, container, key = draw(st.sampled_from(nodes))
    container[key] = None
    return 'null:%s' % '.'.join(str(p) for p in path), doc


def _ensure_profile(draw, doc):
    profiles = doc.setdefault('profiles', [])
    if not profiles:
        profiles.append({})
    return draw(st.sampled_from(profiles))


def _ensure_extender(draw, doc):
    exts = doc.setdefault('extenders', [])
    if not exts:
        exts.append({'urlPrefix': 'http://127.0.0.1:8889'})
    return draw(st.sampled_from(exts))


def _bad_duration(draw):
    return draw(st.sampled_from(('0s', '-1s', '-15s', '0', '1', '15', '', '1d', '1.5', '1h2m3.5s', '+5s', '1e3s', ' 5s', '5 s', '.5s',
                                 '5.s', '1us', '1\u00b5s', '2562047h', '2562048h', '9223372036854775807ns', '9223372036854775808ns',
                                 '-0s', '1m-1s', 'ms', '5S', '5sec')))


@st.composite
def m_rule(draw, doc, files):  # pylint: disable=too-many-branches,too-many-statements
    """Break (or probe the edge of) one validation rule."""
    rule = draw(st.sampled_from((
        'prioritize-weight', 'two-binders', 'managed-duplicate', 'managed-name', 'resource-lock', 'lease-renew', 'durations',
        'backoff', 'percentage', 'parallelism', 'burst', 'unknown-plugin', 'plugin-point', 'args-range', 'spread-system',
        'balanced-weight', 'queue-sort', 'no-bind', 'scheduler-name', 'plugin-config-dup', 'args-shape', 'api-version',
        'kubeconfig', 'tls', 'alpha', 'dra-args', 'volume-shape', 'url-prefix', 'several-docs', 'label-values', 'fit-args',
        'spread-args', 'affinity-args', 'score-weight', 'queue-sort-args', 'empty-plugins', 'multi-point')))
    if rule == 'prioritize-weight':
        ext = _ensure_extender(draw, doc)
        ext['prioritizeVerb'] = 'prioritize'
        w = draw(st.sampled_from((0, -1, 1, None)))
        if w is None:
            ext.pop('weight', None)
        else:
            ext['weight'] = w
    elif rule == 'two-binders':
        doc.setdefault('extenders', [])
        while len(doc['extenders']) < 2:
            doc['extenders'].append({'urlPrefix': draw(st.sampled_from(URLS))})
        for ext in draw(st.lists(st.sampled_from(doc['extenders']), min_size=1, max_size=3)):
            ext['bindVerb'] = draw(st.sampled_from(('bind', '')))
    elif rule == 'managed-duplicate':
        name = draw(st.sampled_from(EXTENDED))
        for _i in range(2):
            ext = _ensure_extender(draw, doc)
            ext.setdefault('managedResources', []).append({'name': name})
            if draw(st.booleans()):
                doc['extenders'].append({'urlPrefix': 'http://127.0.0.1:9999'})
    elif rule == 'managed-name':
        ext = _ensure_extender(draw, doc)
        ext.setdefault('managedResources', []).append({'name': draw(st.sampled_from(BAD_EXTENDED + EXTENDED[:1]))})
    elif rule == 'resource-lock':
        le = doc.setdefault('leaderElection', {})
        le['resourceLock'] = draw(st.sampled_from(('endpoints', 'configmaps', 'endpointsleases', 'configmapsleases', 'Leases', '', 'leases')))
        if draw(st.booleans()):
            le['leaderElect'] = draw(st.booleans())
    elif rule == 'lease-renew':
        le = doc.setdefault('leaderElection', {})
        lease = draw(st.integers(1, 30))
        le['leaseDuration'] = '%ds' % lease
        le['renewDeadline'] = '%ds' % draw(st.integers(lease - 1, lease + 5))
        if draw(st.booleans()):
            le['leaderElect'] = draw(st.booleans())
    elif rule == 'durations':
        target = draw(st.sampled_from(('leaseDuration', 'renewDeadline', 'retryPeriod', 'httpTimeout')))
        if target == 'httpTimeout':
            _ensure_extender(draw, doc)['httpTimeout'] = _bad_duration(draw)
        else:
            le = doc.setdefault('leaderElection', {})
            le[target] = _bad_duration(draw)
            if draw(st.booleans()):
                le['leaderElect'] = draw(st.booleans())
    elif rule == 'backoff':
        doc['podInitialBackoffSeconds'] = draw(st.integers(-2, 12))
        if draw(st.booleans()):
            doc['podMaxBackoffSeconds'] = draw(st.integers(-2, 12))
        elif draw(st.booleans()):
            doc.pop('podMaxBackoffSeconds', None)
    elif rule == 'percentage':
        value = draw(st.sampled_from((-1, 0, 100, 101, 1000)))
        if draw(st.booleans()):
            doc['percentageOfNodesToScore'] = value
        else:
            _ensure_profile(draw, doc)['percentageOfNodesToScore'] = value
    elif rule == 'parallelism':
        doc['parallelism'] = draw(st.sampled_from((0, -1, 1)))
    elif rule == 'burst':
        doc.setdefault('clientConnection', {})['burst'] = draw(st.sampled_from((-1, 0, 1)))
        if draw(st.booleans()):
            doc['clientConnection']['qps'] = draw(st.sampled_from((-1, -0.5, 0)))
    elif rule == 'unknown-plugin':
        prof = _ensure_profile(draw, doc)
        point = draw(st.sampled_from(('multiPoint',) + POINTS))
        name = draw(st.sampled_from(('Foo', 'nodeaffinity', 'EBSLimits', 'AzureDiskLimits', 'CinderLimits', 'GCEPDLimits',
                                     'NodeResourcesLeastAllocated', 'ServiceAffinity', 'NodeLabel', 'SelectorSpread',
                                     'TopologyPlacementGenerator', 'PodGroupPodsCount', 'NodeDeclaredFeatures', 'GangScheduling')))
        which = draw(st.sampled_from(('enabled', 'disabled')))
        prof.setdefault('plugins', {}).setdefault(point, {}).setdefault(which, []).append({'name': name})
    elif rule == 'plugin-point':
        prof = _ensure_profile(draw, doc)
        point = draw(st.sampled_from(POINTS))
        name = draw(st.sampled_from(sorted(PLUGINS)))
        prof.setdefault('plugins', {}).setdefault(point, {}).setdefault('enabled', []).append({'name': name})
    elif rule == 'args-range':
        prof = _ensure_profile(draw, doc)
        name, args = draw(st.sampled_from((
            ('DefaultPreemption', {'minCandidateNodesPercentage': draw(st.sampled_from((-1, 0, 101)))}),
            ('DefaultPreemption', {'minCandidateNodesAbsolute': draw(st.sampled_from((-1, 0)))}),
            ('DefaultPreemption', {'minCandidateNodesPercentage': 0, 'minCandidateNodesAbsolute': 0}),
            ('InterPodAffinity', {'hardPodAffinityWeight': draw(st.sampled_from((-1, 101, 100, 0)))}),
            ('VolumeBinding', {'bindTimeoutSeconds': draw(st.sampled_from((-1, 0)))}),
            ('DynamicResources', {'filterTimeout': draw(st.sampled_from(('-1s', '0s', '1h')))}),
        )))
        prof['pluginConfig'] = [pc for pc in prof.get('pluginConfig') or [] if pc.get('name') != name] + [{'name': name, 'args': args}]
    elif rule == 'spread-system':
        prof = _ensure_profile(draw, doc)
        args = {'defaultingType': draw(st.sampled_from(('System', 'List', '', 'system', 'Custom'))),
                'defaultConstraints': [{'maxSkew': 1, 'topologyKey': 'zone', 'whenUnsatisfiable': 'ScheduleAnyway'}]}
        if draw(st.booleans()):
            args['defaultConstraints'] = []
        if not args['defaultingType'] and draw(st.booleans()):
            del args['defaultingType']
        prof['pluginConfig'] = [pc for pc in prof.get('pluginConfig') or [] if pc.get('name') != 'PodTopologySpread'] + [
            {'name': 'PodTopologySpread', 'args': args}]
    elif rule == 'balanced-weight':
        prof = _ensure_profile(draw, doc)
        resources = [{'name': n, 'weight': draw(st.sampled_from((0, 1, 2, -1, 100)))}
                     for n in draw(st.lists(st.sampled_from(('cpu', 'memory', 'cpu')), min_size=1, max_size=3))]
        prof['pluginConfig'] = [pc for pc in prof.get('pluginConfig') or [] if pc.get('name') != 'NodeResourcesBalancedAllocation'] + [
            {'name': 'NodeResourcesBalancedAllocation', 'args': {'resources': resources}}]
    elif rule == 'queue-sort':
        profiles = doc.setdefault('profiles', [])
        while len(profiles) < draw(st.integers(1, 2)):
            profiles.append({'schedulerName': 'p%d' % len(profiles)})
        for i, p in enumerate(profiles):
            p.setdefault('schedulerName', 'q%d' % i)
        prof = draw(st.sampled_from(profiles))
        qs = draw(st.sampled_from(({'enabled': [{'name': 'PrioritySort'}, {'name': 'PrioritySort'}]},
                                   {'disabled': [{'name': 'PrioritySort'}]}, {'disabled': [{'name': '*'}]},
                                   {'enabled': [{'name': 'PrioritySort'}]}, {'enabled': [{'name': 'PrioritySort', 'weight': 1}]},
                                   {'enabled': [{'name': 'PrioritySort'}], 'disabled': [{'name': 'PrioritySort'}]})))
        prof.setdefault('plugins', {})['queueSort'] = qs
    elif rule == 'no-bind':
        prof = _ensure_profile(draw, doc)
        where = draw(st.sampled_from(('bind', 'multiPoint')))
        prof.setdefault('plugins', {})[where] = {'disabled': [{'name': draw(st.sampled_from(('DefaultBinder', '*')))}]}
    elif rule == 'scheduler-name':
        profiles = doc.setdefault('profiles', [])
        while len(profiles) < 2:
            profiles.append({})
        for p in profiles:
            choice = draw(st.sampled_from(('drop', 'empty', 'same', 'keep')))
            if choice == 'drop':
                p.pop('schedulerName', None)
            elif choice == 'empty':
                p['schedulerName'] = ''
            elif choice == 'same':
                p['schedulerName'] = 'default-scheduler'
    elif rule == 'plugin-config-dup':
        prof = _ensure_profile(draw, doc)
        name = draw(st.sampled_from(ARGS_PLUGINS + ('ImageLocality', 'Foo')))
        prof['pluginConfig'] = (prof.get('pluginConfig') or []) + [{'name': name, 'args': {}}, {'name': name, 'args': {}}]
    elif rule == 'args-shape':
        prof = _ensure_profile(draw, doc)
        name = draw(st.sampled_from(ARGS_PLUGINS + ('ImageLocality', 'Foo', 'PrioritySort')))
        pc = {'name': name}
        form = draw(st.sampled_from(('missing', 'null', 'list', 'string', 'empty', 'api', 'kind', 'kind-other', 'unknown-in-args')))
        if form == 'null':
            pc['args'] = None
        elif form == 'list':
            pc['args'] = []
        elif form == 'string':
            pc['args'] = 'x'
        elif form == 'empty':
            pc['args'] = {}
        elif form == 'api':
            pc['args'] = {'apiVersion': draw(st.sampled_from((GROUP + '/v1beta3', GROUP + '/v1', 'v1', 'foo/v1')))}
        elif form == 'kind':
            pc['args'] = {'kind': name + 'Args'}
        elif form == 'kind-other':
            pc['args'] = {'kind': draw(st.sampled_from(('InterPodAffinityArgs', 'Foo', 'DefaultPreemptionArgs')))}
        elif form == 'unknown-in-args':
            pc['args'] = {'foo': 1}
        prof['pluginConfig'] = [c for c in prof.get('pluginConfig') or [] if c.get('name') != name] + [pc]
    elif rule == 'api-version':
        choice = draw(st.sampled_from((GROUP + '/v1beta3', GROUP + '/v1beta2', GROUP + '/v1beta1', GROUP + '/v2', 'v1',
                                       'kubescheduler.config.k8s.io', 'Policy', 'KubeSchedulerConfig', 'drop-kind', 'drop-api')))
        if choice == 'Policy' or choice == 'KubeSchedulerConfig':
            doc['kind'] = choice
        elif choice == 'drop-kind':
            doc.pop('kind', None)
        elif choice == 'drop-api':
            doc.pop('apiVersion', None)
        else:
            doc['apiVersion'] = choice
    elif rule == 'kubeconfig':
        choice = draw(st.sampled_from(('drop', 'missing', 'empty', 'relative', 'dir', 'drop-cc')))
        doc.setdefault('clientConnection', {})
        if choice == 'drop':
            doc['clientConnection'].pop('kubeconfig', None)
        elif choice == 'missing':
            doc['clientConnection']['kubeconfig'] = files['missing']
        elif choice == 'empty':
            doc['clientConnection']['kubeconfig'] = ''
        elif choice == 'relative':
            doc['clientConnection']['kubeconfig'] = 'scheduler.kubeconfig'
        elif choice == 'dir':
            doc['clientConnection']['kubeconfig'] = files['dir']
        else:
            doc.pop('clientConnection')
    elif rule == 'tls':
        ext = _ensure_extender(draw, doc)
        tls = ext.setdefault('tlsConfig', {})
        choice = draw(st.sampled_from(('missing-file', 'cert-only', 'key-only', 'non-pem', 'insecure-ca', 'not-base64', 'ca-only-data')))
        if choice == 'missing-file':
            tls[draw(st.sampled_from(('certFile', 'keyFile', 'caFile')))] = files['missing']
        elif choice == 'cert-only':
            tls.pop('keyFile', None)
            tls.pop('keyData', None)
            tls['certFile'] = files['cert']
        elif choice == 'key-only':
            tls.pop('certFile', None)
            tls.pop('certData', None)
            tls['keyData'] = base64.b64encode(files['key_pem']).decode('ascii')
        elif choice == 'non-pem':
            tls[draw(st.sampled_from(('certData', 'keyData', 'caData')))] = base64.b64encode(b'not a pem').decode('ascii')
        elif choice == 'insecure-ca':
            tls['insecure'] = True
            tls['caFile'] = files['ca']
        elif choice == 'not-base64':
            tls['caData'] = draw(st.sampled_from(('not base64!', '-----BEGIN CERTIFICATE-----', 'YQ', 'YQ==')))
        else:
            tls['caData'] = base64.b64encode(files['cert_pem']).decode('ascii')
    elif rule == 'alpha':
        name = draw(st.sampled_from(('percentageOfPlacementsToScore',) + ALPHA_POINTS))
        prof = _ensure_profile(draw, doc)
        if name == 'percentageOfPlacementsToScore':
            prof[name] = draw(st.integers(0, 100))
        else:
            prof.setdefault('plugins', {})[name] = draw(st.sampled_from(({}, {'disabled': [{'name': '*'}]})))
    elif rule == 'dra-args':
        prof = _ensure_profile(draw, doc)
        args = {draw(st.sampled_from(('bindingTimeout', 'filterTimeout'))): draw(st.sampled_from(('10s', '0s', '500ms', '-1s', '10m')))}
        prof['pluginConfig'] = [c for c in prof.get('pluginConfig') or [] if c.get('name') != 'DynamicResources'] + [
            {'name': 'DynamicResources', 'args': args}]
    elif rule == 'volume-shape':
        prof = _ensure_profile(draw, doc)
        args = {'shape': draw(st.sampled_from(([], [{'utilization': 0, 'score': 10}], [{'utilization': 50, 'score': 11}])))}
        prof['pluginConfig'] = [c for c in prof.get('pluginConfig') or [] if c.get('name') != 'VolumeBinding'] + [
            {'name': 'VolumeBinding', 'args': args}]
    elif rule == 'url-prefix':
        _ensure_extender(draw, doc)['urlPrefix'] = draw(st.sampled_from(('', 'ftp://x', '127.0.0.1:8889', 'not a url', '/path')))
    elif rule == 'several-docs':
        return 'rule:several-docs', dump(doc) + '---\n' + draw(st.sampled_from(('', dump(doc), 'foo: bar\n', '# comment\n')))
    elif rule == 'label-values':
        prof = _ensure_profile(draw, doc)
        op = draw(st.sampled_from(('In', 'NotIn', 'Exists', 'Gt', 'Lt', 'Bogus')))
        req = {'key': draw(st.sampled_from(LABEL_KEYS + BAD_LABEL_KEYS)), 'operator': op}
        if draw(st.booleans()):
            req['values'] = draw(st.lists(st.sampled_from(LABEL_VALUES + BAD_LABEL_VALUES + ('5', '-3', '1.5', '+7', '0x10')), max_size=2))
        field = draw(st.sampled_from(('matchExpressions', 'matchFields')))
        if field == 'matchFields' and draw(st.booleans()):
            req['key'] = draw(st.sampled_from(('metadata.name', 'metadata.namespace')))
        term = {field: [req]}
        if draw(st.booleans()):
            affinity = {'requiredDuringSchedulingIgnoredDuringExecution': {'nodeSelectorTerms': [term]}}
        else:
            weight = draw(st.sampled_from((1, 0, 101, -1)))
            affinity = {'preferredDuringSchedulingIgnoredDuringExecution': [{'weight': weight, 'preference': term}]}
        prof['pluginConfig'] = [c for c in prof.get('pluginConfig') or [] if c.get('name') != 'NodeAffinity'] + [
            {'name': 'NodeAffinity', 'args': {'addedAffinity': affinity}}]
    elif rule == 'fit-args':
        prof = _ensure_profile(draw, doc)
        args = {}
        choice = draw(st.sampled_from(('ignored', 'groups', 'type', 'weights', 'rtcr-missing', 'rtcr-forbidden', 'shape', 'disabled-fit')))
        if choice == 'ignored':
            args['ignoredResources'] = [draw(st.sampled_from(BAD_LABEL_KEYS + ('example.com/foo',)))]
        elif choice == 'groups':
            args['ignoredResourceGroups'] = [draw(st.sampled_from(('example.com/x', 'example.com', '-x', 'x' * 64)))]
        elif choice == 'type':
            args['scoringStrategy'] = {'type': draw(st.sampled_from(('', 'leastallocated', 'Balanced', 'MostAllocated')))}
        elif choice == 'weights':
            args['scoringStrategy'] = {'type': 'LeastAllocated', 'resources': [{'name': 'cpu', 'weight': draw(st.sampled_from((0, -1, 100, 101)))}]}
        elif choice == 'rtcr-missing':
            args['scoringStrategy'] = {'type': 'RequestedToCapacityRatio'}
        elif choice == 'rtcr-forbidden':
            args['scoringStrategy'] = {'type': 'MostAllocated', 'requestedToCapacityRatio': {'shape': [{'utilization': 0, 'score': 0}]}}
        elif choice == 'shape':
            shape = [{'utilization': draw(st.integers(-1, 101)), 'score': draw(st.integers(-1, 11))} for _i in range(draw(st.integers(0, 3)))]
            args['scoringStrategy'] = {'type': 'RequestedToCapacityRatio', 'requestedToCapacityRatio': {'shape': shape}}
        else:
            args['scoringStrategy'] = {'type': 'Bogus'}
            prof.setdefault('plugins', {})['multiPoint'] = {'disabled': [{'name': 'NodeResourcesFit'}]}
        prof['pluginConfig'] = [c for c in prof.get('pluginConfig') or [] if c.get('name') != 'NodeResourcesFit'] + [
            {'name': 'NodeResourcesFit', 'args': args}]
    elif rule == 'spread-args':
        prof = _ensure_profile(draw, doc)
        c = {'maxSkew': draw(st.sampled_from((0, -1, 1))), 'topologyKey': draw(st.sampled_from(LABEL_KEYS[:2] + BAD_LABEL_KEYS)),
             'whenUnsatisfiable': draw(st.sampled_from(('DoNotSchedule', 'ScheduleAnyway', '', 'Never')))}
        extra = draw(st.sampled_from(('none', 'selector', 'dup', 'minDomains', 'policy', 'matchLabelKeys')))
        constraints = [c]
        if extra == 'selector':
            c['labelSelector'] = {'matchLabels': {'app': 'x'}}
        elif extra == 'dup':
            constraints.append(dict(c))
        elif extra == 'minDomains':
            c['minDomains'] = draw(st.sampled_from((-1, 0, 1, 5)))
        elif extra == 'policy':
            c[draw(st.sampled_from(('nodeAffinityPolicy', 'nodeTaintsPolicy')))] = draw(st.sampled_from(('Honor', 'Ignore', 'bogus', '')))
        else:
            c['matchLabelKeys'] = draw(st.sampled_from((['app'], ['-bad'], [])))
        prof['pluginConfig'] = [x for x in prof.get('pluginConfig') or [] if x.get('name') != 'PodTopologySpread'] + [
            {'name': 'PodTopologySpread', 'args': {'defaultingType': 'List', 'defaultConstraints': constraints}}]
    elif rule == 'affinity-args':
        prof = _ensure_profile(draw, doc)
        affinity = draw(st.sampled_from(({}, {'requiredDuringSchedulingIgnoredDuringExecution': {}},
                                         {'requiredDuringSchedulingIgnoredDuringExecution': {'nodeSelectorTerms': []}},
                                         {'requiredDuringSchedulingIgnoredDuringExecution': {'nodeSelectorTerms': [{}]}},
                                         {'preferredDuringSchedulingIgnoredDuringExecution': []},
                                         {'preferredDuringSchedulingIgnoredDuringExecution': [{'weight': 1}]},
                                         {'preferredDuringSchedulingIgnoredDuringExecution': [{'weight': 1, 'preference': {}}]})))
        prof['pluginConfig'] = [c for c in prof.get('pluginConfig') or [] if c.get('name') != 'NodeAffinity'] + [
            {'name': 'NodeAffinity', 'args': {'addedAffinity': affinity}}]
    elif rule == 'score-weight':
        prof = _ensure_profile(draw, doc)
        point = draw(st.sampled_from(('score', 'multiPoint')))
        name = draw(st.sampled_from(('ImageLocality', 'TaintToleration', 'NodeResourcesBalancedAllocation')))
        weight = draw(st.sampled_from((-1, 0, 2 ** 31 - 1, 10 ** 8, 1)))
        pset = prof.setdefault('plugins', {}).setdefault(point, {})
        pset['enabled'] = [p for p in pset.get('enabled') or [] if p.get('name') != name] + [{'name': name, 'weight': weight}]
    elif rule == 'queue-sort-args':
        profiles = doc.setdefault('profiles', [])
        while len(profiles) < 2:
            profiles.append({})
        for i, p in enumerate(profiles):
            p['schedulerName'] = 'qa%d' % i
            p.setdefault('plugins', {})['queueSort'] = {'enabled': [{'name': 'PrioritySort'}]}
            if draw(st.booleans()):
                p['pluginConfig'] = [c for c in p.get('pluginConfig') or [] if c.get('name') != 'PrioritySort'] + [
                    {'name': 'PrioritySort', 'args': draw(st.sampled_from(({}, {'a': 1})))}]
    elif rule == 'empty-plugins':
        prof = _ensure_profile(draw, doc)
        prof['plugins'] = draw(st.sampled_from(({}, {'multiPoint': {}}, {'multiPoint': {'enabled': []}}, {'score': {'enabled': []}})))
    elif rule == 'multi-point':
        prof = _ensure_profile(draw, doc)
        names = draw(st.lists(st.sampled_from(sorted(PLUGINS) + ['TopologyPlacementGenerator', 'PodGroupPodsCount']), min_size=1, max_size=3))
        mp = prof.setdefault('plugins', {}).setdefault('multiPoint', {})
        mp[draw(st.sampled_from(('enabled', 'disabled')))] = [{'name': n} for n in names]
        if draw(st.booleans()):
            mp['disabled'] = [{'name': '*'}]
    return 'rule:' + rule, doc


# Text-level mutations work on the block YAML that ``dump`` writes.
_SCALAR_LINE = re.compile(r'^(\s*(?:- )?)([A-Za-z][A-Za-z0-9]*): (\S.*)$')


@st.composite
def m_duplicate_key(draw, doc):
    text = dump(doc)
    lines = text.splitlines()
    candidates = [i for i, line in enumerate(lines) if _SCALAR_LINE.match(line) and not line.lstrip().startswith('- ')]
    if not candidates:
        return 'duplicate-key', text
    i = draw(st.sampled_from(candidates))
    m = _SCALAR_LINE.match(lines[i])
    value = draw(st.sampled_from((m.group(3), '"other"', '1')))
    lines.insert(i + 1, '%s%s: %s' % (m.group(1), m.group(2), value))
    return 'duplicate-key:%s' % m.group(2), '\n'.join(lines) + '\n'


@st.composite
def m_yaml_quirk(draw, doc):
    text = dump(doc)
    lines = text.splitlines()
    candidates = [i for i, line in enumerate(lines) if _SCALAR_LINE.match(line) and _SCALAR_LINE.match(line).group(2) not in ('apiVersion', 'kind')]
    if not candidates:
        return 'yaml-quirk', text
    i = draw(st.sampled_from(candidates))
    m = _SCALAR_LINE.match(lines[i])
    token = draw(st.sampled_from(YAML_QUIRKS))
    lines[i] = '%s%s: %s' % (m.group(1), m.group(2), token)
    return 'yaml-quirk:%s=%s' % (m.group(2), token), '\n'.join(lines) + '\n'


@st.composite
def case(draw, files):
    """One test case: (label, YAML text)."""
    doc = draw(valid_document(files))
    kind = draw(st.sampled_from(('rule', 'quirk', 'valid', 'unknown', 'type', 'rule', 'null', 'rule', 'valid', 'rule', 'duplicate',
                                 'rule', 'quirk', 'valid', 'rule', 'type')))
    if kind == 'valid':
        return 'valid', dump(doc)
    if kind == 'unknown':
        label, doc = draw(m_unknown_field(doc))
    elif kind == 'type':
        label, doc = draw(m_wrong_type(doc))
    elif kind == 'null':
        label, doc = draw(m_null(doc))
    elif kind == 'duplicate':
        return draw(m_duplicate_key(doc))
    elif kind == 'quirk':
        return draw(m_yaml_quirk(doc))
    else:
        label, doc = draw(m_rule(doc, files))
        if isinstance(doc, str):
            return label, doc
        if draw(st.integers(0, 3)) == 0:
            label2, doc = draw(m_rule(doc, files))
            if isinstance(doc, str):
                return label + '+' + label2, doc
            label += '+' + label2
    return label, dump(doc)


def generate_cases(count, seed, files):
    """``count`` distinct cases, reproducible for a seed."""
    cases = {}

    @settings(max_examples=count * 2, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @hypothesis_seed(seed)
    @given(case(files))
    def collect(one):
        if len(cases) < count:
            cases.setdefault(one[1], one[0])

    collect()  # pylint: disable=no-value-for-parameter
    return [(label, text) for text, label in cases.items()]


# ---------------------------------------------------------------- verdicts
REFERENCE_VERSION = '1.36'


def scheduler_version(argv):
    """The Kubernetes version of the scheduler binary (``--version``), or the model's reference version
    when the binary does not tell (a development build says v0.0.0-master)."""
    try:
        out = subprocess.run(argv + ['--version'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return REFERENCE_VERSION
    m = re.search(r'v1\.(\d+)\.\d+\S*', out.decode('utf-8', 'replace'))
    return m.group(0) if m else REFERENCE_VERSION


def our_verdict(model, text, kubernetes_version=REFERENCE_VERSION):
    """(accepted, errors) of our validator, as the scheduler_config module computes it when told the binary's version."""
    _version, errors = model.validate_text(text, kubernetes_version=kubernetes_version, check_files=True,
                                           exists=os.path.exists, isdir=os.path.isdir)
    return not errors, list(errors)


_ERR = re.compile(r'err="((?:[^"\\]|\\.)*)"')


def reason_line(stderr):
    """The line of the scheduler's stderr that says why it refused."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    for line in lines:
        m = _ERR.search(line)
        if m and 'command failed' in line:
            return m.group(1).encode('utf-8').decode('unicode_escape', errors='replace')
    for line in reversed(lines):
        if line.startswith(('E', 'Error', 'F')):
            return line
    return lines[-1] if lines else ''


def real_verdict(argv, text, files, workdir, tag):
    """(accepted, reason) of the real kube-scheduler for the document ``text``."""
    path = os.path.join(workdir, 'config-%s.yaml' % tag)
    out = os.path.join(workdir, 'out-%s.yaml' % tag)
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text)
    try:
        proc = subprocess.run(argv + ['--config', path, '--kubeconfig', files['kubeconfig'], '--secure-port=0', '--write-config-to', out],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, check=False)
    except subprocess.TimeoutExpired:
        return None, 'timed out after 120s'
    finally:
        os.unlink(path)
    if os.path.exists(out):
        os.unlink(out)
    reason = '' if proc.returncode == 0 else reason_line(proc.stderr.decode('utf-8', 'replace'))
    return proc.returncode == 0, reason


def both_verdicts(model, argv, text, files, workdir, tag='0', kubernetes_version=REFERENCE_VERSION):
    """The two verdicts for one document: {'ours': (accepted, errors), 'real': (accepted, reason)}."""
    return {'ours': our_verdict(model, text, kubernetes_version), 'real': real_verdict(argv, text, files, workdir, tag)}


# ---------------------------------------------------------------- documented differences
def _doc(text):
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return None
    return docs[0] if docs and isinstance(docs[0], dict) else None


def _profiles(text):
    d = _doc(text)
    return [p for p in (d or {}).get('profiles') or [] if isinstance(p, dict)]


def _extenders(text):
    d = _doc(text)
    exts = (d or {}).get('extenders')
    return [e for e in exts if isinstance(e, dict)] if isinstance(exts, list) else []


def _has_tls(text, *keys):
    return any(isinstance(e.get('tlsConfig'), dict) and any(k in e['tlsConfig'] for k in keys) for e in _extenders(text))


def _has_plugin_config(text):
    return any(p.get('pluginConfig') for p in _profiles(text))


# name -> (pattern one of our errors matches, predicate on the document text). Only "we refuse, the scheduler accepts".
ALLOWED_DIFFERENCES = {
    'several-yaml-documents': (r'the file holds \d+ YAML documents', lambda text: len(re.findall(r'(?m)^---', text)) >= 1),
    'kubeconfig-missing-or-absent': (r'^clientConnection\.kubeconfig: (Required value|Invalid value)',
                                     lambda text: True),
    'tls-file-missing': (r'tlsConfig\.(certFile|keyFile|caFile): Invalid value: .*no such file', lambda text: _has_tls(text, 'certFile', 'keyFile', 'caFile')),
    'tls-cert-without-key': (r'tlsConfig: Invalid value: "(certificate without key|key without certificate)"',
                             lambda text: _has_tls(text, 'certFile', 'keyFile', 'certData', 'keyData')),
    'tls-data-not-pem': (r'tlsConfig\.(certData|keyData|caData): Invalid value: .*is not PEM', lambda text: _has_tls(text, 'certData', 'keyData', 'caData')),
    'plugin-args-missing-or-null': (r'\.args: args for plugin \w+ are missing or null', _has_plugin_config),
    'plugin-args-not-mapping': (r'\.args: args for plugin \w+ must be a mapping', _has_plugin_config),
    'plugin-args-api-version': (r"\.args\.apiVersion: args must use the document's apiVersion", _has_plugin_config),
    'alpha-feature-gated-field': (r': not supported by this module: alpha', lambda text: bool(re.search(
        r'percentageOfPlacementsToScore|placementGenerate|placementScore|placementFeasible|podGroupPostFilter', text))),
    'dra-binding-timeout': (r'\.bindingTimeout: Forbidden', lambda text: 'bindingTimeout' in text),
    'volume-binding-shape': (r'\.shape: Invalid value: "shape": unexpected field', lambda text: 'shape' in text),
    'plugin-extension-point-unsure': (r'plugins\.\w+\.enabled\[\d+\]: plugin "\w+" does not extend \w+ plugin; it implements', lambda text: True),
}


def classify(ours, real, text):
    """'agree', a documented difference's name, or 'bug:...' for an undocumented disagreement."""
    if real[0] is None:
        return 'bug:scheduler-timeout'
    if ours[0] == real[0]:
        return 'agree'
    if ours[0] and not real[0]:
        return 'bug:we-accept-scheduler-refuses'
    names = set()
    for error in ours[1]:
        matched = [name for name, (pattern, predicate) in ALLOWED_DIFFERENCES.items() if re.search(pattern, error) and predicate(text)]
        if not matched:
            return 'bug:we-refuse-scheduler-accepts'
        names.add(matched[0])
    return ','.join(sorted(names))


# ---------------------------------------------------------------- running many
def sample_of(cases, sample, sample_seed):
    """The cases to judge: all of them, or ``sample`` of them drawn by ``sample_seed`` (in corpus order)."""
    if sample is None or sample >= len(cases):
        return cases
    keep = sorted(random.Random(sample_seed).sample(range(len(cases)), sample))
    return [cases[i] for i in keep]


WORKDIR_MARK = '@SCHEDULER_DIFFERENTIAL_WORKDIR@'


def corpus_of(count, seed, workdir):
    """(files, corpus): the material in ``workdir`` and the ``count`` cases of ``seed``.

    Generating the corpus takes most of a sampled run's CPU time (about 35 of 60 s), and it is the same for the same
    generator, count and seed: it is kept under $BAREMETAL_K3S_CACHE/differential, keyed by this file's sha256,
    hypothesis's version, count and seed, with the TLS material the documents embed; each run writes that material
    into its own ``workdir`` and puts its path back into the documents. Without BAREMETAL_K3S_CACHE, generated each
    time."""
    import hashlib  # pylint: disable=import-outside-toplevel
    import json  # pylint: disable=import-outside-toplevel
    import hypothesis  # pylint: disable=import-outside-toplevel
    cache = os.environ.get('BAREMETAL_K3S_CACHE')
    path = None
    if cache:
        with open(os.path.abspath(__file__.replace('.pyc', '.py')), 'rb') as f:
            source = f.read()
        key = hashlib.sha256(source + ('\0%s\0%s\0%s' % (hypothesis.__version__, count, seed)).encode()).hexdigest()
        path = os.path.join(cache, 'differential', key[:16] + '.json')
        try:
            with open(path, encoding='utf-8') as f:
                kept = json.load(f)
            files = make_files(workdir, (kept['cert'].encode('ascii'), kept['key'].encode('ascii')))
            return files, [(label, text.replace(WORKDIR_MARK, workdir)) for label, text in kept['cases']]
        except (OSError, ValueError, KeyError, TypeError):
            pass
    files = make_files(workdir)
    corpus = generate_cases(count, seed, files)
    if path:
        kept = {'cert': files['cert_pem'].decode('ascii'), 'key': files['key_pem'].decode('ascii'),
                'cases': [(label, text.replace(workdir, WORKDIR_MARK)) for label, text in corpus]}
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path + '.tmp', 'w', encoding='utf-8') as f:
                json.dump(kept, f)
            os.replace(path + '.tmp', path)
        except OSError:
            pass
    return files, corpus


def run(count, seed, workers, argv=None, progress=None, sample=None, sample_seed=0):
    """Generate the corpus of ``count`` cases from ``seed`` and judge all of them, or ``sample`` of them
    drawn by ``sample_seed``. Returns a summary dict."""
    model = import_model()
    argv = argv or scheduler_command()
    workdir = tempfile.mkdtemp(prefix='scheduler-differential-')
    try:
        started = time.monotonic()
        files, corpus = corpus_of(count, seed, workdir)
        cases = sample_of(corpus, sample, sample_seed)
        generated = time.monotonic() - started
        version = scheduler_version(argv)

        def judge(item):
            index, (label, text) = item
            ours = our_verdict(model, text, version)
            real = real_verdict(argv, text, files, workdir, str(index))
            return label, text, ours, real, classify(ours, real, text)

        results = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            for done, result in enumerate(pool.map(judge, enumerate(cases)), 1):
                results.append(result)
                if progress and done % 500 == 0:
                    progress('%d/%d judged' % (done, len(cases)))
        summary = {'cases': len(results), 'corpus': len(corpus), 'sample_seed': sample_seed if len(cases) < len(corpus) else None,
                   'generation_seconds': generated, 'version': version, 'seconds': time.monotonic() - started,
                   'agree': 0, 'documented': {}, 'bugs': [], 'accepted': 0, 'labels': {}}
        for label, text, ours, real, verdict in results:
            summary['accepted'] += bool(real[0])
            kind = label.split(':')[0].split('+')[0]
            summary['labels'][kind] = summary['labels'].get(kind, 0) + 1
            if verdict == 'agree':
                summary['agree'] += 1
            elif verdict.startswith('bug:'):
                summary['bugs'].append({'label': label, 'text': text, 'ours': ours, 'real': real, 'verdict': verdict})
            else:
                summary['documented'][verdict] = summary['documented'].get(verdict, 0) + 1
        return summary
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def report(summary, out=sys.stdout):
    total = summary['cases']
    documented = sum(summary['documented'].values())
    out.write('cases: %d (scheduler accepted %d; our verdicts for Kubernetes %s), generated in %.1fs, total %.1fs\n'
              % (total, summary['accepted'], summary['version'], summary['generation_seconds'], summary['seconds']))
    if summary.get('sample_seed') is not None:
        out.write('a sample of %d of the corpus of %d, drawn with sample seed %d\n'
                  % (total, summary['corpus'], summary['sample_seed']))
    out.write('case kinds: %s\n' % ', '.join('%s=%d' % kv for kv in sorted(summary['labels'].items())))
    out.write('agreement: %d/%d = %.2f%%\n' % (summary['agree'], total, 100.0 * summary['agree'] / max(total, 1)))
    out.write('documented deliberate differences: %d %s\n' % (documented, sorted(summary['documented'].items())))
    out.write('undocumented disagreements: %d\n' % len(summary['bugs']))
    for bug in summary['bugs']:
        out.write('\n=== %s (%s)\n%s--- ours: %s %s\n--- kube-scheduler: %s %s\n'
                  % (bug['verdict'], bug['label'], bug['text'], 'accepts' if bug['ours'][0] else 'refuses', bug['ours'][1],
                     'accepts' if bug['real'][0] else 'refuses', bug['real'][1]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--cases', type=int, default=1000)
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--seed', type=int, default=20260101)
    parser.add_argument('--sample', type=int, default=None, help='judge this many of the corpus (default: all)')
    parser.add_argument('--sample-seed', type=int, default=0)
    args = parser.parse_args(argv)
    try:
        command = scheduler_command()
    except SchedulerUnavailable as e:
        sys.stderr.write('%s\n' % e)
        return 2
    summary = run(args.cases, args.seed, args.workers, command, progress=lambda m: sys.stderr.write(m + '\n'),
                  sample=args.sample, sample_seed=args.sample_seed)
    report(summary)
    return 1 if summary['bugs'] else 0


if __name__ == '__main__':
    sys.exit(main())
