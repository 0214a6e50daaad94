# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Two real kube-schedulers judge the conversion of a v1beta2/v1beta3 scheduler config to v1.

For each input: kube-scheduler v1.27.16 (``kube-scheduler-1.27`` of the kube dir, tests/kube/scheduler127)
accepts it, kube-scheduler v1.36.3 (``k3s kube-scheduler``) refuses it, ``_scheduler_config.convert_to_v1``
converts it, and v1.36.3 accepts the result. Each scheduler's ``--write-config-to`` prints its effective
config (defaults merged): per profile, the plugins each extension point runs (multiPoint expanded as the
framework expands it) and the score weights must be the same on both sides, except for what the Kubernetes
versions themselves changed (``INHERENT``, each with its reason).

Skipped without ``$BAREMETAL_K3S_KUBE_DIR`` holding both binaries; failed instead with
``BAREMETAL_K3S_REQUIRE_KUBE=1``.
"""

from __future__ import annotations

import os
import subprocess
import textwrap

import pytest
import yaml

from ansible_collections.baremetal.k3s.plugins.module_utils import _scheduler_config as sc

REQUIRE = os.environ.get('BAREMETAL_K3S_REQUIRE_KUBE') == '1'
KUBE_DIR = os.environ.get('BAREMETAL_K3S_KUBE_DIR', '')
OLD = os.path.join(KUBE_DIR, 'kube-scheduler-1.27')
NEW = os.path.join(KUBE_DIR, 'k3s')
GROUP = 'kubescheduler.config.k8s.io'

KUBECONFIG_TEXT = '''apiVersion: v1
kind: Config
clusters:
- name: judge
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: judge
  user: {token: judge-token}
contexts:
- name: judge
  context: {cluster: judge, user: judge}
current-context: judge
'''

# Extension points the framework expands a multiPoint plugin into: the points each plugin implements. v1.27.16 from
# its pkg/scheduler/framework/plugins (the interface assertions); v1.36.3 as the module models it.
IMPLEMENTS = {
    'old': {
        'PrioritySort': ('queueSort',),
        'SchedulingGates': ('preEnqueue',),
        'NodeUnschedulable': ('filter',),
        'NodeName': ('filter',),
        'TaintToleration': ('filter', 'preScore', 'score'),
        'NodeAffinity': ('preFilter', 'filter', 'preScore', 'score'),
        'NodePorts': ('preFilter', 'filter'),
        'NodeResourcesFit': ('preFilter', 'filter', 'preScore', 'score'),
        'VolumeRestrictions': ('preFilter', 'filter'),
        'NodeVolumeLimits': ('filter',),
        'EBSLimits': ('filter',),
        'GCEPDLimits': ('filter',),
        'AzureDiskLimits': ('filter',),
        'VolumeBinding': ('preFilter', 'filter', 'reserve', 'preBind', 'score'),
        'VolumeZone': ('preFilter', 'filter'),
        'PodTopologySpread': ('preFilter', 'filter', 'preScore', 'score'),
        'InterPodAffinity': ('preFilter', 'filter', 'preScore', 'score'),
        'DefaultPreemption': ('postFilter',),
        'NodeResourcesBalancedAllocation': ('preScore', 'score'),
        'ImageLocality': ('score',),
        'DefaultBinder': ('bind',),
    },
    'new': sc._IN_TREE_V1,  # pylint: disable=protected-access
}
POINTS = ('preEnqueue', 'queueSort', 'preFilter', 'filter', 'postFilter', 'preScore', 'score', 'reserve', 'permit',
          'preBind', 'bind', 'postBind')

# What differs between the two schedulers whatever the file says: (side, point, plugin) -> why.
INHERENT = {
    # the in-tree cloud volume limits: default filters in 1.27, removed with CSI migration (invalid in v1 since 1.31)
    ('old', 'filter', 'EBSLimits'): 'removed in Kubernetes 1.31 (CSI migration)',
    ('old', 'filter', 'GCEPDLimits'): 'removed in Kubernetes 1.31 (CSI migration)',
    ('old', 'filter', 'AzureDiskLimits'): 'removed in Kubernetes 1.31 (CSI migration)',
    # default plugins Kubernetes added after 1.27
    ('new', 'preEnqueue', 'DynamicResources'): 'DRA, default since 1.34',
    ('new', 'preFilter', 'DynamicResources'): 'DRA, default since 1.34',
    ('new', 'filter', 'DynamicResources'): 'DRA, default since 1.34',
    ('new', 'postFilter', 'DynamicResources'): 'DRA, default since 1.34',
    ('new', 'score', 'DynamicResources'): 'DRA, default since 1.34 (scores only pods with resource claims)',
    ('new', 'reserve', 'DynamicResources'): 'DRA, default since 1.34',
    ('new', 'preBind', 'DynamicResources'): 'DRA, default since 1.34',
    ('new', 'preFilter', 'NodeDeclaredFeatures'): 'new default plugin in 1.36',
    ('new', 'filter', 'NodeDeclaredFeatures'): 'new default plugin in 1.36',
    ('new', 'preEnqueue', 'DefaultPreemption'): 'DefaultPreemption gained a preEnqueue hook after 1.27',
    ('new', 'preFilter', 'NodeVolumeLimits'): 'NodeVolumeLimits gained a preFilter hook after 1.27',
    # v1beta2 listed VolumeBinding at no score point; multiPoint (v1beta3, v1) runs its Score everywhere,
    # which scores nothing unless storage capacity scoring is on
    ('new', 'score', 'VolumeBinding'): 'multiPoint runs VolumeBinding\'s Score (a no-op without storage capacity scoring)',
    ('new', 'preScore', 'VolumeBinding'): 'VolumeBinding gained a preScore hook after 1.27',
}


def _skip_or_fail(reason):
    if REQUIRE:
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope='module')
def workdir(tmp_path_factory):
    for exe in (OLD, NEW):
        if not (KUBE_DIR and os.path.isfile(exe) and os.access(exe, os.X_OK)):
            _skip_or_fail('%s is not an executable (set BAREMETAL_K3S_KUBE_DIR to a directory tests/kube/build.sh made)' % exe)
    d = tmp_path_factory.mktemp('judge')
    (d / 'kubeconfig').write_text(KUBECONFIG_TEXT)
    return d


def run(argv, workdir, name, text):
    """(exit status, output, effective config or None) of one scheduler reading ``text``."""
    src, out = workdir / (name + '.yaml'), workdir / (name + '.out.yaml')
    src.write_text(text)
    if out.exists():
        out.unlink()
    proc = subprocess.run(argv + ['--config', str(src), '--secure-port=0', '--write-config-to', str(out)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120, check=False)
    effective = yaml.safe_load(out.read_text()) if proc.returncode == 0 and out.exists() else None
    return proc.returncode, proc.stdout.decode('utf-8', 'replace'), effective


def effective_plugins(profile, side):
    """{point: {plugin: weight}} the framework of ``side`` (old, new) builds from a written profile (weights only at
    score)."""
    implements = IMPLEMENTS[side]
    plugins = profile.get('plugins') or {}
    multi = (plugins.get('multiPoint') or {}).get('enabled') or []
    out = {}
    for point in POINTS:
        pset = plugins.get(point) or {}
        disabled = {p['name'] for p in pset.get('disabled') or []}
        got = {}
        for p in pset.get('enabled') or []:
            got[p['name']] = p.get('weight') or 1
        if '*' not in disabled:
            for p in multi:
                if p['name'] not in got and p['name'] not in disabled and point in implements.get(p['name'], ()):
                    got[p['name']] = p.get('weight') or 1
        out[point] = {name: (weight if point == 'score' else 0) for name, weight in got.items()}
    return out


def compare(old_config, new_config):
    """Differences, per profile, as (side, point, plugin, detail); INHERENT ones left out."""
    diffs = []
    old_profiles = {p['schedulerName']: p for p in old_config['profiles']}
    new_profiles = {p['schedulerName']: p for p in new_config['profiles']}
    assert sorted(old_profiles) == sorted(new_profiles)
    for name in old_profiles:
        old, new = effective_plugins(old_profiles[name], 'old'), effective_plugins(new_profiles[name], 'new')
        for point in POINTS:
            for plugin in sorted(set(old[point]) | set(new[point])):
                if plugin not in new[point]:
                    key = ('old', point, plugin)
                elif plugin not in old[point]:
                    key = ('new', point, plugin)
                elif old[point][plugin] != new[point][plugin]:
                    diffs.append((name, point, plugin, 'weight %d -> %d' % (old[point][plugin], new[point][plugin])))
                    continue
                else:
                    continue
                if key not in INHERENT:
                    diffs.append((name, point, plugin, 'only in the %s scheduler' % key[0]))
    return diffs


def doc(version, body, workdir):
    return 'apiVersion: %s/%s\nkind: KubeSchedulerConfiguration\nclientConnection:\n  kubeconfig: %s\n%s' % (
        GROUP, version, workdir / 'kubeconfig', textwrap.dedent(body).lstrip('\n'))


CASES = {
    'v1beta2-defaults': ('v1beta2', '''
        healthzBindAddress: 0.0.0.0:0
        metricsBindAddress: 0.0.0.0:0
        extenders:
        - urlPrefix: http://127.0.0.1:8889
          filterVerb: filter
          prioritizeVerb: prioritize
          weight: 1
          httpTimeout: 15s
          ignorable: true
        '''),
    'v1beta2-profiles': ('v1beta2', '''
        # two profiles, one with its own weights
        profiles:
        - schedulerName: default-scheduler
          plugins:
            score:
              enabled:
              - name: NodeAffinity
                weight: 5
              disabled:
              - name: ImageLocality
          pluginConfig:
          - name: NodeResourcesFit
            args:
              apiVersion: kubescheduler.config.k8s.io/v1beta2
              kind: NodeResourcesFitArgs
              scoringStrategy:
                type: MostAllocated
        - schedulerName: bin-packing
          plugins:
            score:
              disabled:
              - name: '*'
              enabled:
              - name: NodeResourcesFit
                weight: 2
            filter:
              disabled:
              - name: EBSLimits
              - name: GCEPDLimits
              - name: AzureDiskLimits
        '''),
    'v1beta3-defaults': ('v1beta3', '''
        leaderElection:
          leaderElect: false
        '''),
    'v1beta3-multipoint': ('v1beta3', '''
        profiles:
        - schedulerName: default-scheduler
          plugins:
            multiPoint:
              enabled:
              - name: TaintToleration
                weight: 4
              disabled:
              - name: EBSLimits
              - name: GCEPDLimits
              - name: AzureDiskLimits
            score:
              disabled:
              - name: ImageLocality
          pluginConfig:
          - name: PodTopologySpread
            args:
              apiVersion: kubescheduler.config.k8s.io/v1beta3
              kind: PodTopologySpreadArgs
              defaultingType: List
              defaultConstraints:
              - maxSkew: 1
                topologyKey: topology.kubernetes.io/zone
                whenUnsatisfiable: ScheduleAnyway
        '''),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_old_scheduler_file_converted_for_the_new_one(workdir, case):
    version, body = CASES[case]
    src = doc(version, body, workdir)
    rc, out, old_config = run([OLD], workdir, case + '.old', src)
    assert rc == 0 and old_config is not None, 'kube-scheduler 1.27 refused the %s input:\n%s' % (version, out)
    assert old_config['apiVersion'] == '%s/%s' % (GROUP, version)
    rc, out, _config = run([NEW, 'kube-scheduler'], workdir, case + '.new-unconverted', src)
    assert rc != 0 and 'is registered for version' in out and '%s/%s' % (GROUP, version) in out, out

    converted, from_version, changes = sc.convert_to_v1(src)
    assert from_version == version and changes
    rc, out, new_config = run([NEW, 'kube-scheduler'], workdir, case + '.new', converted)
    assert rc == 0 and new_config is not None, 'kube-scheduler 1.36 refused the converted file:\n%s\n%s' % (converted, out)
    assert new_config['apiVersion'] == GROUP + '/v1'

    assert compare(old_config, new_config) == []
    # the operator's other settings survive
    for key in ('leaderElection', 'extenders', 'percentageOfNodesToScore', 'podInitialBackoffSeconds'):
        assert old_config.get(key) == new_config.get(key), key
    old_args = {(p['schedulerName'], c['name']): c['args'] for p in old_config['profiles'] for c in p.get('pluginConfig') or []}
    new_args = {(p['schedulerName'], c['name']): c['args'] for p in new_config['profiles'] for c in p.get('pluginConfig') or []}
    for key, args in old_args.items():
        if key[1] in ('NodeResourcesFit', 'PodTopologySpread', 'InterPodAffinity', 'DefaultPreemption'):
            assert dict(args, apiVersion=None) == dict(new_args[key], apiVersion=None), key


def test_converting_without_the_pins_is_caught(workdir, monkeypatch):
    """The judge sees the weight change the pins prevent (v1beta2's defaults: 1; v1's: 3, 2, 2)."""
    version, body = CASES['v1beta2-defaults']
    src = doc(version, body, workdir)
    _rc, _out, old_config = run([OLD], workdir, 'nopin.old', src)
    monkeypatch.setattr(sc, '_pins', lambda plugins: [])
    converted, _version, _changes = sc.convert_to_v1(src)
    rc, out, new_config = run([NEW, 'kube-scheduler'], workdir, 'nopin.new', converted)
    assert rc == 0, out
    assert sorted(compare(old_config, new_config)) == [
        ('default-scheduler', 'score', 'InterPodAffinity', 'weight 1 -> 2'),
        ('default-scheduler', 'score', 'NodeAffinity', 'weight 1 -> 2'),
        ('default-scheduler', 'score', 'TaintToleration', 'weight 1 -> 3'),
    ]
