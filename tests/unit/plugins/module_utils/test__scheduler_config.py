# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Table tests of the KubeSchedulerConfiguration model, validator and merge."""

from __future__ import annotations

import os
import textwrap

import pytest
import yaml

from ansible_collections.baremetal.k3s.plugins.module_utils import _scheduler_config as sc
from ansible_collections.baremetal.k3s.plugins.module_utils import _scheduler_config_schema as schema

GROUP = 'kubescheduler.config.k8s.io'
KUBECONFIG = '/var/lib/rancher/k3s/server/cred/scheduler.kubeconfig'
EXISTING = {KUBECONFIG, '/etc/kubernetes/scheduler.conf', '/etc/pki/ca.pem', '/etc/pki/c.pem', '/etc/pki/k.pem'}


def exists(path):
    return path in EXISTING


def doc(version, body=''):
    body = textwrap.dedent(body)
    head = 'apiVersion: %s/%s\nkind: KubeSchedulerConfiguration\n' % (GROUP, version)
    if 'clientConnection:' not in body:
        head += 'clientConnection:\n  kubeconfig: %s\n' % KUBECONFIG
    return head + body


def errors_of(text, kubernetes_version=None):
    return sc.validate_text(text, kubernetes_version, exists=exists)[1]


OURS = {'url_prefix': 'http://127.0.0.1:8889', 'filter_verb': 'filter', 'prioritize_verb': 'prioritize',
        'weight': 1, 'http_timeout': '15s', 'ignorable': True}
OURS_RENDERED = {'urlPrefix': 'http://127.0.0.1:8889', 'filterVerb': 'filter', 'prioritizeVerb': 'prioritize',
                 'weight': 1, 'httpTimeout': '15s', 'ignorable': True}

# Valid documents per apiVersion: they are valid as they are and stay valid after the merge.
VALID = {
    'v1': [
        '',
        """\
        # the operator's comment
        leaderElection:
          leaderElect: true
          leaseDuration: 1m30s
          renewDeadline: 20s
          retryPeriod: 2s
          resourceLock: leases
        parallelism: 8
        percentageOfNodesToScore: 50
        podInitialBackoffSeconds: 2
        podMaxBackoffSeconds: 20
        delayCacheUntilActive: true
        enableProfiling: false
        profiles:
          - schedulerName: default-scheduler
            percentageOfNodesToScore: 0
            plugins:
              multiPoint:
                enabled:
                  - name: NodeResourcesFit
                    weight: 3
              score:
                disabled:
                  - name: ImageLocality
            pluginConfig:
              - name: NodeResourcesFit
                args:
                  scoringStrategy:
                    type: MostAllocated
                    resources:
                      - {name: cpu, weight: 1}
                      - {name: memory, weight: 0}
              - name: PodTopologySpread
                args:
                  defaultingType: List
                  defaultConstraints:
                    - maxSkew: 1
                      topologyKey: topology.kubernetes.io/zone
                      whenUnsatisfiable: ScheduleAnyway
              - name: DefaultPreemption
                args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 5}
              - name: InterPodAffinity
                args: {hardPodAffinityWeight: 100, ignorePreferredTermsOfExistingPods: true}
              - name: NodeResourcesBalancedAllocation
                args: {resources: [{name: cpu, weight: 1}, {name: example.com/gpu}]}
              - name: VolumeBinding
                args: {bindTimeoutSeconds: 0}
              - name: DynamicResources
                args: {filterTimeout: 0s}
              - name: NodeAffinity
                args:
                  addedAffinity:
                    requiredDuringSchedulingIgnoredDuringExecution:
                      nodeSelectorTerms:
                        - matchExpressions:
                            - {key: node-role.kubernetes.io/worker, operator: Exists}
                            - {key: disks, operator: Gt, values: ["2"]}
                          matchFields:
                            - {key: metadata.name, operator: In, values: [node1]}
          - schedulerName: gpu-scheduler
            plugins:
              filter:
                enabled:
                  - name: NodeResourcesFit
              score:
                enabled:
                  - {name: NodeAffinity, weight: 5}
        extenders:
          - urlPrefix: http://gpu-share:12345/scheduler
            filterVerb: filter
            bindVerb: bind
            enableHTTPS: false
            nodeCacheCapable: true
            managedResources:
              - name: example.com/gpu-mem
                ignoredByScheduler: true
            httpTimeout: 30s
        """,
        """\
        clientConnection: {kubeconfig: /etc/kubernetes/scheduler.conf, qps: 50.5, burst: 200, contentType: application/json}
        leaderElection: {leaderElect: false, resourceLock: endpoints, leaseDuration: 1s, renewDeadline: 5s}
        extenders:
          - urlPrefix: https://topolvm:9251
            prioritizeVerb: prioritize
            weight: 100
            enableHTTPS: true
            tlsConfig:
              caFile: /etc/pki/ca.pem
              serverName: topolvm
        """,
    ],
    'v1beta3': [
        '',
        """\
        profiles:
          - schedulerName: default-scheduler
            plugins:
              multiPoint:
                enabled: [{name: Foo}]
        extenders:
          - urlPrefix: http://x:1
            filterVerb: filter
        """,
    ],
    'v1beta2': [
        """\
        healthzBindAddress: 0.0.0.0:10251
        profiles:
          - schedulerName: default-scheduler
            pluginConfig:
              - name: NodeResourcesFit
                args: {scoringStrategy: {type: LeastAllocated}}
        """,
    ],
    'v1beta1': [
        """\
        metricsBindAddress: 0.0.0.0:10251
        profiles:
          - schedulerName: default-scheduler
            pluginConfig:
              - name: PodTopologySpread
                args:
                  defaultConstraints:
                    - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
              - name: NodeResourcesLeastAllocated
                args: {resources: [{name: cpu, weight: 1}]}
        """,
    ],
}

VALID_CASES = [(v, i) for v, bodies in VALID.items() for i in range(len(bodies))]


@pytest.mark.parametrize('version,index', VALID_CASES)
def test_valid_documents_validate(version, index):
    assert errors_of(doc(version, VALID[version][index])) == []


@pytest.mark.parametrize('version,index', VALID_CASES)
def test_valid_documents_stay_valid_after_merge(version, index):
    text = doc(version, VALID[version][index])
    before = yaml.safe_load(text)
    change = sc.edit(text.encode(), {'state': 'present', 'extender': dict(OURS)}, exists=exists)
    assert change['changed'] is True
    after_text = change['after'].decode()
    assert errors_of(after_text) == []
    after = yaml.safe_load(after_text)
    # everything we do not own is kept as data ...
    foreign_before = list(before.get('extenders') or [])
    assert after['extenders'] == foreign_before + [OURS_RENDERED]
    for key in before:
        if key != 'extenders':
            assert after[key] == before[key]
    assert list(after) == list(before) + ([] if 'extenders' in before else ['extenders'])
    # ... and as text: every line of the original is still there, in order
    after_lines = after_text.splitlines()
    pos = 0
    for line in text.splitlines():
        pos = after_lines.index(line, pos) + 1
    # idempotent, and absent restores the original bytes
    again = sc.edit(change['after'], {'state': 'present', 'extender': dict(OURS)}, exists=exists)
    assert again['changed'] is False and again['after'] == change['after']
    back = sc.edit(change['after'], {'state': 'absent', 'extender': {'url_prefix': OURS['url_prefix']}}, exists=exists)
    assert back['after'] == text.encode()


# Each rule with a failing case and (part of) its message.
INVALID_V1 = [
    ('unknown field', 'extenders:\n  - {urlPrefix: "http://x", enableHttps: true}\n', 'unknown field "extenders[0].enableHttps"'),
    ('unknown nested field', 'profiles:\n  - plugins: {score: {enable: []}}\n', 'unknown field "profiles[0].plugins.score.enable"'),
    ('case sensitive', 'LeaderElection: {}\n', 'unknown field "LeaderElection"'),
    ('duplicate key', 'parallelism: 1\nparallelism: 2\n', 'already set in map'),
    ('int as string', 'parallelism: "16"\n', 'parallelism: cannot decode string into an int32'),
    ('int32 overflow', 'parallelism: 3000000000\n', 'overflows int32'),
    ('bool as string', 'delayCacheUntilActive: "true"\n', 'into a bool field'),
    ('string as int', 'profiles:\n  - schedulerName: 5\n', 'profiles[0].schedulerName: cannot decode number into a string'),
    ('duration as int', 'extenders:\n  - {urlPrefix: "http://x", httpTimeout: 5}\n', 'extenders[0].httpTimeout: cannot decode number into a duration'),
    ('bad duration', 'leaderElection: {leaseDuration: 15}\n', 'leaderElection.leaseDuration: cannot decode number'),
    ('duration unit', 'leaderElection: {leaseDuration: "15"}\n', 'missing unit in duration'),
    ('null duration', 'extenders:\n  - {urlPrefix: "http://x", httpTimeout: null}\n', 'invalid duration'),
    ('bad base64', 'extenders:\n  - {urlPrefix: "http://x", tlsConfig: {caData: "!!"}}\n', 'illegal base64'),
    ('list expected', 'profiles: {schedulerName: x}\n', 'profiles: cannot decode object into a list'),
    ('parallelism', 'parallelism: 0\n', 'parallelism: Invalid value: 0: should be an integer value greater than zero'),
    ('resourceLock', 'leaderElection: {resourceLock: endpoints}\n', 'resourceLock value must be "leases"'),
    ('lease vs renew', 'leaderElection: {leaseDuration: 10s, renewDeadline: 10s}\n', 'LeaseDuration must be greater than RenewDeadline'),
    ('lease default vs renew', 'leaderElection: {renewDeadline: 20s}\n', 'LeaseDuration must be greater than RenewDeadline'),
    ('negative retry', 'leaderElection: {retryPeriod: -1s}\n', 'leaderElection.retryPeriod: Invalid value: "-1s": must be greater than zero'),
    ('burst', 'clientConnection: {kubeconfig: %s, burst: -1}\n' % KUBECONFIG, 'clientConnection.burst: Invalid value: -1: must be non-negative'),
    ('percentage', 'percentageOfNodesToScore: 101\n', 'percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]'),
    ('profile percentage', 'profiles:\n  - percentageOfNodesToScore: -1\n', 'profiles[0].percentageOfNodesToScore'),
    ('initial backoff', 'podInitialBackoffSeconds: 0\n', 'podInitialBackoffSeconds: Invalid value: 0: must be greater than 0'),
    ('max backoff default', 'podInitialBackoffSeconds: 11\n', 'podMaxBackoffSeconds: Invalid value: 10: must be greater than or equal'),
    ('empty scheduler name', 'profiles:\n  - schedulerName: ""\n', 'profiles[0].schedulerName: Required value'),
    ('duplicate profile', 'profiles:\n  - schedulerName: a\n  - schedulerName: a\n', 'profiles[1].schedulerName: Duplicate value'),
    ('queue sort differs', 'profiles:\n  - schedulerName: a\n  - schedulerName: b\n    plugins: {queueSort: {disabled: [{name: "*"}]}}\n',
     'must be the same for all profiles'),
    ('no queue sort', 'profiles:\n  - plugins: {queueSort: {disabled: [{name: PrioritySort}]}}\n', 'only one queue sort plugin required'),
    ('no binder', 'profiles:\n  - plugins: {multiPoint: {disabled: [{name: "*"}]}}\n', 'at least one bind plugin is needed'),
    ('unknown plugin', 'profiles:\n  - plugins: {filter: {enabled: [{name: Foo}]}}\n', 'plugin "Foo" does not exist'),
    ('wrong extension point', 'profiles:\n  - plugins: {score: {enabled: [{name: NodePorts}]}}\n', 'plugin "NodePorts" does not extend score plugin'),
    ('plugin twice', 'profiles:\n  - plugins: {filter: {enabled: [{name: NodePorts}, {name: NodePorts}]}}\n', 'already registered'),
    ('removed plugin', 'profiles:\n  - plugins: {filter: {enabled: [{name: EBSLimits}]}}\n', 'was invalid in version'),
    ('duplicate pluginConfig', 'profiles:\n  - pluginConfig:\n    - {name: NodeAffinity, args: {}}\n    - {name: NodeAffinity, args: {}}\n',
     'profiles[0].pluginConfig[1]: Duplicate value: "NodeAffinity"'),
    ('args unknown field', 'profiles:\n  - pluginConfig:\n    - {name: NodeAffinity, args: {foo: 1}}\n',
     'unknown field "profiles[0].pluginConfig[0].args.foo"'),
    ('args kind', 'profiles:\n  - pluginConfig:\n    - {name: NodeAffinity, args: {kind: VolumeBindingArgs}}\n', 'were not of type'),
    ('preemption zero', 'profiles:\n  - pluginConfig:\n    - {name: DefaultPreemption, args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}}\n',
     'cannot be zero at the same time'),
    ('preemption range', 'profiles:\n  - pluginConfig:\n    - {name: DefaultPreemption, args: {minCandidateNodesPercentage: 101}}\n',
     'not in valid range [0, 100]'),
    ('hard affinity', 'profiles:\n  - pluginConfig:\n    - {name: InterPodAffinity, args: {hardPodAffinityWeight: 101}}\n',
     'hardPodAffinityWeight: Invalid value: 101'),
    ('balanced weight', 'profiles:\n  - pluginConfig:\n    - {name: NodeResourcesBalancedAllocation, args: {resources: [{name: cpu, weight: 2}]}}\n',
     'must be 1'),
    ('balanced duplicate', 'profiles:\n  - pluginConfig:\n    - {name: NodeResourcesBalancedAllocation, args: {resources: [{name: cpu}, {name: cpu}]}}\n',
     'resources[1].name: Duplicate value'),
    ('fit strategy', 'profiles:\n  - pluginConfig:\n    - {name: NodeResourcesFit, args: {scoringStrategy: {type: Foo}}}\n',
     'scoringStrategy.type: Unsupported value: "Foo"'),
    ('fit empty strategy type', 'profiles:\n  - pluginConfig:\n    - {name: NodeResourcesFit, args: {scoringStrategy: {resources: []}}}\n',
     'scoringStrategy.type: Unsupported value: ""'),
    ('fit weight', 'profiles:\n  - pluginConfig:\n    - {name: NodeResourcesFit, args: {scoringStrategy: {type: LeastAllocated, '
     'resources: [{name: cpu, weight: 101}]}}}\n',
     'not in valid range (0, 100]'),
    ('fit rtcr missing', 'profiles:\n  - pluginConfig:\n    - {name: NodeResourcesFit, args: {scoringStrategy: {type: RequestedToCapacityRatio}}}\n',
     'requestedToCapacityRatio: Required value'),
    ('fit rtcr shape', 'profiles:\n  - pluginConfig:\n    - name: NodeResourcesFit\n      args: {scoringStrategy: {type: RequestedToCapacityRatio, '
     'requestedToCapacityRatio: {shape: [{utilization: 50, score: 1}, {utilization: 10, score: 11}]}}}\n', 'values must be sorted in increasing order'),
    ('fit rtcr forbidden', 'profiles:\n  - pluginConfig:\n    - name: NodeResourcesFit\n      args: {scoringStrategy: {type: MostAllocated, '
     'requestedToCapacityRatio: {shape: [{utilization: 1, score: 1}]}}}\n', 'requestedToCapacityRatio: Forbidden'),
    ('fit ignored group', 'profiles:\n  - pluginConfig:\n    - {name: NodeResourcesFit, args: {ignoredResourceGroups: [a/b]}}\n',
     "resource group name can't contain '/'"),
    ('spread system with list', 'profiles:\n  - pluginConfig:\n    - name: PodTopologySpread\n      args:\n        defaultConstraints:\n'
     '          - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n',
     'defaultingType: Invalid value: "System": when .defaultConstraints are not empty'),
    ('spread constraint',
     'profiles:\n  - pluginConfig:\n    - name: PodTopologySpread\n      args:\n        defaultingType: List\n        defaultConstraints:\n'
     '          - {maxSkew: 0, topologyKey: "", whenUnsatisfiable: Maybe, labelSelector: {}}\n', 'maxSkew: Invalid value: 0'),
    ('spread repeated', 'profiles:\n  - pluginConfig:\n    - name: PodTopologySpread\n      args:\n        defaultingType: List\n        defaultConstraints:\n'
     '          - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n'
     '          - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n', 'defaultConstraints[1]: Duplicate value: "{zone, DoNotSchedule}"'),
    ('node affinity op', 'profiles:\n  - pluginConfig:\n    - name: NodeAffinity\n      args: {addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: '
     '{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In}]}]}}}\n', "for 'in', 'notin' operators, values set can't be empty"),
    ('volume binding', 'profiles:\n  - pluginConfig:\n    - {name: VolumeBinding, args: {bindTimeoutSeconds: -1}}\n', 'should not be a negative value'),
    ('volume binding shape', 'profiles:\n  - pluginConfig:\n    - {name: VolumeBinding, args: {shape: [{utilization: 0, score: 0}]}}\n',
     'StorageCapacityScoring'),
    ('dra timeout', 'profiles:\n  - pluginConfig:\n    - {name: DynamicResources, args: {filterTimeout: -1s}}\n', 'must be zero or positive'),
    ('weight with prioritize', 'extenders:\n  - {urlPrefix: "http://x", prioritizeVerb: p}\n',
     'extenders[0].weight: Invalid value: 0: must have a positive weight'),
    ('two binders', 'extenders:\n  - {urlPrefix: "http://x", bindVerb: b}\n  - {urlPrefix: "http://y", bindVerb: b}\n', 'only one extender can implement bind'),
    ('managed resource name', 'extenders:\n  - {urlPrefix: "http://x", managedResources: [{name: cpu}]}\n',
     'is an invalid extended resource name'),
    ('managed resource native', 'extenders:\n  - {urlPrefix: "http://x", managedResources: [{name: kubernetes.io/gpu}]}\n',
     'is an invalid extended resource name'),
    ('managed resource syntax', 'extenders:\n  - {urlPrefix: "http://x", managedResources: [{name: "a/-b"}]}\n', 'name part must consist of'),
    ('managed resource duplicate', 'extenders:\n  - {urlPrefix: "http://x", managedResources: [{name: a.io/b}]}\n'
     '  - {urlPrefix: "http://y", managedResources: [{name: a.io/b}]}\n', 'duplicate extender managed resource name'),
    ('tls insecure with ca', 'extenders:\n  - {urlPrefix: "https://x", tlsConfig: {insecure: true, caFile: /etc/pki/ca.pem}}\n',
     'with the insecure flag is not allowed'),
    ('tls missing file', 'extenders:\n  - {urlPrefix: "https://x", tlsConfig: {caFile: /nope.pem}}\n',
     'extenders[0].tlsConfig.caFile: Invalid value: "/nope.pem": no such file'),
    ('alpha field refused', 'percentageOfPlacementsToScore: 10\n', 'not supported by this module'),
]


@pytest.mark.parametrize('body,message', [(b, m) for _n, b, m in INVALID_V1], ids=[n for n, _b, _m in INVALID_V1])
def test_rule_violations_v1(body, message):
    errs = errors_of(doc('v1', body))
    assert any(message in e for e in errs), errs


@pytest.mark.parametrize('version', ['v1beta1', 'v1beta2', 'v1beta3'])
@pytest.mark.parametrize('body,message', [
    ('extenders:\n  - {urlPrefix: "http://x", prioritizeVerb: p, weight: 0}\n', 'must have a positive weight'),
    ('parallelism: -1\n', 'greater than zero'),
    ('unknownField: 1\n', 'unknown field "unknownField"'),
    ('leaderElection: {resourceLock: configmaps}\n', 'must be "leases"'),
])
def test_rule_violations_older_versions(version, body, message):
    errs = errors_of(doc(version, body))
    assert any(message in e for e in errs), errs


@pytest.mark.parametrize('version,body,message', [
    ('v1beta1', 'profiles:\n  - plugins: {multiPoint: {}}\n', 'unknown field "profiles[0].plugins.multiPoint"'),
    ('v1beta2', 'profiles:\n  - plugins: {multiPoint: {}}\n', 'unknown field'),
    ('v1beta3', 'healthzBindAddress: ":10251"\n', 'unknown field "healthzBindAddress"'),
    ('v1', 'metricsBindAddress: ":10251"\n', 'unknown field "metricsBindAddress"'),
    ('v1beta3', 'delayCacheUntilActive: true\n', 'unknown field "delayCacheUntilActive"'),
    ('v1beta2', 'profiles:\n  - pluginConfig:\n    - {name: DefaultPreemption, args: {minCandidateNodesAbsolute: -1}}\n', 'not in valid range [0, inf)'),
])
def test_fields_per_version(version, body, message):
    errs = errors_of(doc(version, body))
    assert any(message in e for e in errs), errs


@pytest.mark.parametrize('text,message', [
    ('a: [', 'not valid YAML'),
    ('kind: KubeSchedulerConfiguration\n---\nkind: KubeSchedulerConfiguration\n', '2 YAML documents'),
    ('- a\n', 'not a mapping'),
    ('', 'the file is empty'),
    ('apiVersion: v1\nkind: ConfigMap\n', "kind is 'ConfigMap'"),
    ('apiVersion: kubescheduler.config.k8s.io/v2\nkind: KubeSchedulerConfiguration\n', 'is not a KubeSchedulerConfiguration version'),
    ('{"kind": "Policy", "apiVersion": "v1", "extenders": [{"urlPrefix": "http://x", "enableHttps": false}]}', 'removed in Kubernetes 1.23'),
    ('predicates: []\npriorities: []\n', 'legacy scheduler Policy file'),
])
def test_document_errors(text, message):
    errs = errors_of(text)
    assert len(errs) == 1 and message in errs[0], errs


def test_removed_version_names_the_target():
    errs = errors_of(doc('v1beta3'), kubernetes_version='v1.29.3+rke2r1')
    assert 'no longer accepts' in errs[0] and 'kubescheduler.config.k8s.io/v1' in errs[0]


@pytest.mark.parametrize('text,message', [
    ('apiVersion: %s/v1\nkind: KubeSchedulerConfiguration\n' % GROUP, 'clientConnection.kubeconfig: Required value'),
    (doc('v1').replace(KUBECONFIG, '/nowhere'), 'clientConnection.kubeconfig: Invalid value: "/nowhere": no such file'),
])
def test_kubeconfig_is_required_and_must_exist(text, message):
    errs = errors_of(text)
    assert any(message in e and '/var/lib/rancher/rke2/server/cred/scheduler.kubeconfig' in e for e in errs), errs


@pytest.mark.parametrize('given,expected', [
    ('v1.31.4+k3s1', (1, 31)), ('v1.29.3+rke2r1', (1, 29)), ('1.30', (1, 30)), ('v1.36.3', (1, 36)), ('1.22.0-rc.1', (1, 22)),
])
def test_parse_kubernetes_version(given, expected):
    assert sc.parse_kubernetes_version(given) == expected


@pytest.mark.parametrize('given', ['2.1', 'latest', 'v1', ''])
def test_parse_kubernetes_version_refuses(given):
    with pytest.raises(sc.SchedulerConfigError, match='not a Kubernetes version'):
        sc.parse_kubernetes_version(given)


@pytest.mark.parametrize('api_version,kubernetes_version,expected', [
    ('auto', None, 'v1'), ('auto', 'v1.36.3', 'v1'), ('auto', 'v1.24.17+k3s1', 'v1beta3'), ('auto', '1.22', 'v1beta2'),
    ('auto', '1.20', 'v1beta1'), ('v1beta3', '1.28', 'v1beta3'), ('v1beta2', None, 'v1beta2'),
])
def test_resolve_api_version(api_version, kubernetes_version, expected):
    assert sc.resolve_api_version(api_version, kubernetes_version) == expected


@pytest.mark.parametrize('api_version,kubernetes_version,message', [
    ('v1beta3', '1.29', 'does not accept'), ('auto', '1.18', 'accepts no KubeSchedulerConfiguration'), ('v2', None, 'unknown'),
])
def test_resolve_api_version_refuses(api_version, kubernetes_version, message):
    with pytest.raises(sc.SchedulerConfigError, match=message):
        sc.resolve_api_version(api_version, kubernetes_version)


@pytest.mark.parametrize('text,ns', [
    ('15s', 15 * 10 ** 9), ('1m30s', 90 * 10 ** 9), ('1.5h', 5400 * 10 ** 9), ('0', 0), ('-2ms', -2 * 10 ** 6),
    ('300us', 300000), ('1h2m3s4ms5us6ns', 3723004005006), ('.5s', 5 * 10 ** 8),
])
def test_go_durations(text, ns):
    assert schema.parse_go_duration(text) == ns


@pytest.mark.parametrize('text', ['', '15', 's', '1x', '1.s.', '--1s', '1 s'])
def test_go_durations_refused(text):
    with pytest.raises(ValueError):
        schema.parse_go_duration(text)


def test_merge_keeps_foreign_extenders_and_profiles_as_text():
    text = textwrap.dedent("""\
        # scheduler config for the GPU nodes
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        clientConnection:
          kubeconfig: "%s"  # k3s's own
        profiles:
        - schedulerName: default-scheduler
        - schedulerName: gpu   # second profile
          plugins:
            score:
              enabled:
              - {name: NodeAffinity, weight: 5}
        extenders:
        - urlPrefix: 'http://gpu-share:12345'  # theirs
          filterVerb: filter
          bindVerb: bind
        - urlPrefix: http://127.0.0.1:8889
          filterVerb: old
        """ % KUBECONFIG)
    change = sc.edit(text.encode(), {'state': 'present', 'extender': dict(OURS)}, exists=exists)
    after = change['after'].decode()
    assert after.startswith(text.split('- urlPrefix: http://127.0.0.1:8889')[0])
    assert after.endswith('- urlPrefix: http://127.0.0.1:8889\n  filterVerb: filter\n  prioritizeVerb: prioritize\n'
                          '  weight: 1\n  httpTimeout: 15s\n  ignorable: true\n')
    data = yaml.safe_load(after)
    assert data['extenders'][0] == {'urlPrefix': 'http://gpu-share:12345', 'filterVerb': 'filter', 'bindVerb': 'bind'}
    assert data['profiles'] == yaml.safe_load(text)['profiles']
    assert change['extenders'] == ['http://gpu-share:12345', 'http://127.0.0.1:8889']
    removed = sc.edit(change['after'], {'state': 'absent', 'extender': {'url_prefix': 'http://127.0.0.1:8889'}}, exists=exists)
    assert yaml.safe_load(removed['after'])['extenders'] == [data['extenders'][0]]
    assert '# theirs' in removed['after'].decode() and '# second profile' in removed['after'].decode()


def test_merge_refuses_a_result_the_scheduler_rejects():
    text = doc('v1', 'extenders:\n- {urlPrefix: "http://other", bindVerb: bind}\n')
    with pytest.raises(sc.SchedulerConfigError, match='only one extender can implement bind'):
        sc.edit(text.encode(), {'state': 'present', 'extender': dict(OURS, bind_verb='bind')}, exists=exists)


def test_merge_keeps_the_file_version():
    change = sc.edit(doc('v1beta3').encode(), {'state': 'present', 'extender': dict(OURS), 'kubernetes_version': '1.26'}, exists=exists)
    assert change['api_version'] == GROUP + '/v1beta3'
    with pytest.raises(sc.SchedulerConfigError, match='does not convert files'):
        sc.edit(doc('v1beta3').encode(), {'state': 'present', 'extender': dict(OURS), 'api_version': 'v1'}, exists=exists)


def test_new_file_and_its_removal():
    params = {'state': 'present', 'extender': dict(OURS), 'kubeconfig': KUBECONFIG, 'leader_elect': False,
              'kubernetes_version': 'v1.24.3+k3s1'}
    change = sc.edit(None, params, exists=exists)
    assert change['created'] and change['api_version'] == GROUP + '/v1beta3'
    data = yaml.safe_load(change['after'])
    assert data == {'apiVersion': GROUP + '/v1beta3', 'kind': 'KubeSchedulerConfiguration',
                    'clientConnection': {'kubeconfig': KUBECONFIG}, 'leaderElection': {'leaderElect': False},
                    'extenders': [OURS_RENDERED]}
    assert change['after'].decode().startswith(sc.MARKER)
    gone = sc.edit(change['after'], {'state': 'absent', 'extender': {'url_prefix': OURS['url_prefix']}}, exists=exists)
    assert gone['after'] is None and gone['removed'] and gone['changed']


def test_created_file_with_foreign_content_is_kept():
    change = sc.edit(None, {'state': 'present', 'extender': dict(OURS), 'kubeconfig': KUBECONFIG}, exists=exists)
    text = change['after'].decode() + 'parallelism: 4\n'
    kept = sc.edit(text.encode(), {'state': 'absent', 'extender': {'url_prefix': OURS['url_prefix']}}, exists=exists)
    assert kept['after'] is not None and not kept['removed']
    assert yaml.safe_load(kept['after'])['parallelism'] == 4


def test_new_file_needs_an_existing_kubeconfig():
    with pytest.raises(sc.SchedulerConfigError, match='kubeconfig is required'):
        sc.edit(None, {'state': 'present', 'extender': dict(OURS)}, exists=exists)
    with pytest.raises(sc.SchedulerConfigError, match='no such file on the node'):
        sc.edit(None, {'state': 'present', 'extender': dict(OURS), 'kubeconfig': '/tmp/none'}, exists=exists)


@pytest.mark.parametrize('extender,message', [
    ({'url_prefix': 'ftp://x'}, 'must start with http:// or https://'),
    ({'url_prefix': '127.0.0.1:8889'}, 'must start with http:// or https://'),
    ({'url_prefix': 'http://127.0.0.1:99999'}, 'port that is not a number from 1 to 65535'),
    ({'url_prefix': 'http://h:abc/'}, 'port that is not a number from 1 to 65535'),
    ({'url_prefix': 'http://x', 'prioritize_verb': 'p', 'weight': 0}, 'weight must be greater than 0'),
    ({'url_prefix': 'http://x', 'prioritize_verb': 'p'}, 'weight must be greater than 0'),
    ({'url_prefix': 'http://x', 'http_timeout': '15'}, 'missing unit'),
    ({'url_prefix': 'http://x', 'managed_resources': [{'name': 'a.io/b'}, {'name': 'a.io/b'}]}, 'twice'),
    ({'url_prefix': 'http://x', 'tls_config': {'ca_file': 'ca.pem'}}, 'must be an absolute path'),
    ({'url_prefix': 'http://x', 'tls_config': {'ca_file': '/etc/missing.pem'}}, 'does not exist on the node'),
])
def test_extender_option_refusals(extender, message):
    with pytest.raises(sc.SchedulerConfigError, match=message):
        sc.render_extender(extender, exists=exists)


def test_render_extender_camel_case_and_tls_data():
    pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
    out = sc.render_extender({
        'url_prefix': 'https://x:1', 'bind_verb': 'bind', 'enable_https': True, 'node_cache_capable': False,
        'managed_resources': [{'name': 'a.io/b', 'ignored_by_scheduler': True}],
        'tls_config': {'ca_data': pem, 'server_name': 'x', 'insecure': None},
    }, exists=exists)
    assert out == {'urlPrefix': 'https://x:1', 'bindVerb': 'bind', 'enableHTTPS': True,
                   'tlsConfig': {'serverName': 'x', 'caData': 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo='},
                   'nodeCacheCapable': False, 'managedResources': [{'name': 'a.io/b', 'ignoredByScheduler': True}]}
    assert errors_of(doc('v1', 'extenders:\n- %s\n' % yaml.safe_dump(out, default_flow_style=True).strip())) == []


@pytest.mark.parametrize('layout,expected', [
    # (mapping indent, sequence dash offset) of the file -> how our new entry is written
    ('clientConnection:\n  kubeconfig: %s\nextenders:\n- urlPrefix: http://x\n  weight: 2\n',
     'extenders:\n- urlPrefix: http://x\n  weight: 2\n# baremetal.k3s extender: default\n- urlPrefix: http://127.0.0.1:8889\n'
     '  filterVerb: filter\n'),
    ('clientConnection:\n    kubeconfig: %s\nextenders:\n  - urlPrefix: http://x\n    weight: 2\n',
     'extenders:\n  - urlPrefix: http://x\n    weight: 2\n  # baremetal.k3s extender: default\n'
     '  - urlPrefix: http://127.0.0.1:8889\n    filterVerb: filter\n'),
    ('clientConnection: {kubeconfig: %s}\n',
     '# baremetal.k3s: extenders added for default\nextenders:\n# baremetal.k3s extender: default\n'
     '- urlPrefix: http://127.0.0.1:8889\n  filterVerb: filter\n'),
])
def test_new_entries_follow_the_files_indentation(layout, expected):
    text = 'apiVersion: %s/v1\nkind: KubeSchedulerConfiguration\n' % GROUP + layout % KUBECONFIG
    change = sc.edit(text.encode(), {'state': 'present', 'extender': dict(OURS)}, exists=exists)
    assert expected in change['after'].decode()
    back = sc.edit(change['after'], {'state': 'absent', 'extender': {'url_prefix': OURS['url_prefix']}}, exists=exists)
    assert back['after'] == text.encode()


@pytest.mark.parametrize('name,ok', [
    ('example.com/gpu', True), ('cpu', False), ('kubernetes.io/x', False), ('a/b/c', False), ('-a.io/b', False), ('a.io/' + 'x' * 64, False),
])
def test_extended_resource_names(name, ok):
    assert (not sc.qualified_name_errors(name) and sc.is_extended_resource_name(name)) is ok


# ---------------------------------------------------------------- found by the kube-scheduler differential test
# (tests/integration/test_scheduler_differential.py): each case is kube-scheduler 1.36's verdict.
@pytest.mark.parametrize('text,value', [
    ('y', True), ('Y', True), ('n', False), ('N', False), ('yes', True), ('off', False), ('~', None),
    ('1e3', 1000.0), ('1.5e3', 1500.0), ('08', 8.0), ('0o17', 15), ('0x1A', 26), ('017', 15), ('1_000', 1000),
    ('0b101', 5), ('-0b101', -5), ('+12', 12), ('.5', 0.5), ('1:30', '1:30'), ('2001-12-14', '2001-12-14'),
    ('1e400', '1e400'), ('=', '='), ('<<', '<<'), ('abc', 'abc'), ('"y"', 'y'), ("'1e3'", '1e3'),
])
def test_plain_scalars_resolve_as_go_yaml(text, value):
    assert sc.load_strict('a: %s\n' % text)['a'] == value


def test_plain_y_is_a_bool_for_a_string_field():
    errs = errors_of(doc('v1', 'extenders:\n- urlPrefix: n\n'))
    assert any('extenders[0].urlPrefix: cannot decode bool' in e for e in errs), errs


def test_merge_key_still_merges():
    assert sc.load_strict('a: &x {b: 1}\nc:\n  <<: *x\n  d: 2\n')['c'] == {'b': 1, 'd': 2}


@pytest.mark.parametrize('point,plugin', [
    ('preEnqueue', 'GangScheduling'), ('permit', 'GangScheduling'), ('filter', 'NodeDeclaredFeatures'),
    ('preEnqueue', 'DefaultPreemption'), ('score', 'DynamicResources'), ('multiPoint', 'TopologyPlacementGenerator'),
    ('multiPoint', 'PodGroupPodsCount'),
])
def test_in_tree_plugins_of_1_36(point, plugin):
    assert errors_of(doc('v1', 'profiles:\n- plugins:\n    %s:\n      enabled:\n      - name: %s\n' % (point, plugin))) == []


def test_queue_sort_args_must_match_across_profiles():
    body = ('profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: PrioritySort\n    args: {}\n'
            '- schedulerName: b\n')
    errs = errors_of(doc('v1', body))
    assert any("queue sort plugin's args must be the same" in e for e in errs), errs
    same = body + '  pluginConfig:\n  - name: PrioritySort\n    args: {}\n'
    assert errors_of(doc('v1', same)) == []


@pytest.mark.parametrize('body,ok', [
    ('profiles:\n- schedulerName: a\n- {}\n', False),
    ('profiles:\n- schedulerName: a\n- schedulerName: null\n', False),
    ('profiles:\n- {}\n', True),
    ('profiles:\n- schedulerName: null\n', True),
])
def test_default_scheduler_name_only_for_a_single_profile(body, ok):
    errs = errors_of(doc('v1', body))
    assert (errs == []) is ok, errs


def test_kubeconfig_directory_is_refused(tmp_path):
    text = doc('v1', 'clientConnection:\n  kubeconfig: %s\n' % tmp_path)
    errs = sc.validate_text(text, exists=os.path.exists, isdir=os.path.isdir)[1]
    assert any('is a directory' in e for e in errs), errs


def test_the_node_files_are_the_callers(monkeypatch):
    """The parser asks the caller's exists/isdir (the View's), never this machine's file system."""
    def no_local_io(*args):
        raise AssertionError('the parser looked at this machine: %r' % (args,))
    monkeypatch.setattr(os.path, 'isdir', no_local_io)
    monkeypatch.setattr(os.path, 'exists', no_local_io)
    asked = []
    node_dirs = {'/node/only/a-directory'}
    text = doc('v1', 'clientConnection:\n  kubeconfig: /node/only/a-directory\n')
    errs = sc.validate_text(text, exists=lambda p: asked.append(('exists', p)) or True,
                            isdir=lambda p: asked.append(('isdir', p)) or p in node_dirs)[1]
    assert any('is a directory' in e for e in errs), errs
    assert ('isdir', '/node/only/a-directory') in asked
    with pytest.raises(ValueError, match='reads no file of the node'):
        sc.validate_text(doc('v1'))
    # edit hands its isdir to the final check: a kubeconfig that is a directory on the node is refused
    with pytest.raises(sc.SchedulerConfigError, match='is a directory'):
        sc.edit(None, {'state': 'present', 'extender': dict(OURS), 'kubeconfig': KUBECONFIG}, exists=exists,
                isdir=lambda p: p == KUBECONFIG)


@pytest.mark.parametrize('weights,ok', [
    ([1, 2], True), ([-1], False), ([-1, 1], False), ([2147483647, 2147483647], True),
])
def test_score_weight_overflow_as_kube_scheduler_computes_it(weights, ok):
    names = ['ImageLocality', 'TaintToleration']
    enabled = ''.join('      - name: %s\n        weight: %d\n' % (names[i], w) for i, w in enumerate(weights))
    errs = errors_of(doc('v1', 'profiles:\n- plugins:\n    score:\n      enabled:\n' + enabled))
    assert (errs == []) is ok, errs


@pytest.mark.parametrize('term,message', [
    ('{matchExpressions: [{key: zone, operator: In, values: [-bad]}]}', 'a valid label must be an empty string'),
    ('{matchExpressions: [{key: zone, operator: Gt, values: ["-3"]}]}', 'a valid label must be an empty string'),
    ('{matchExpressions: [{key: zone, operator: Gt, values: [x]}]}', 'the value must be an integer'),
    ('{matchExpressions: [{key: zone, operator: Exists, values: [a]}]}', 'values set must be empty'),
    ('{matchFields: [{key: metadata.name, operator: In, values: [a, b]}]}', 'must have one element'),
    ('{matchFields: [{key: metadata.name, operator: Exists}]}', 'Unsupported value: "Exists"'),
])
def test_node_affinity_terms_as_labels_new_requirement(term, message):
    body = ('profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args: {addedAffinity: '
            '{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [%s]}}}\n' % term)
    errs = errors_of(doc('v1', body))
    assert any(message in e for e in errs), errs


@pytest.mark.parametrize('affinity', [
    '{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: metadata.namespace, '
    'operator: In, values: [a]}]}]}}',
    '{preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, preference: {matchExpressions: [{key: "-x", operator: Bogus}]}}]}',
    '{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: []}]}}',
])
def test_node_affinity_what_kube_scheduler_skips(affinity):
    body = 'profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args: {addedAffinity: %s}\n' % affinity
    assert errors_of(doc('v1', body)) == []


def test_fit_args_are_checked_only_when_the_plugin_is_used():
    args = '  pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Bogus}}\n'
    used = errors_of(doc('v1', 'profiles:\n- schedulerName: a\n' + args))
    assert any('Unsupported value: "Bogus"' in e for e in used), used
    unused = 'profiles:\n- schedulerName: a\n  plugins: {multiPoint: {disabled: [{name: NodeResourcesFit}]}}\n' + args
    assert errors_of(doc('v1', unused)) == []
    strict = unused.replace('type: Bogus', 'typo: LeastAllocated')
    assert any('unknown field' in e for e in errors_of(doc('v1', strict)))


def test_plugin_config_without_name_in_a_later_profile_counts_as_queue_sort():
    body = ('profiles:\n- schedulerName: a\n- schedulerName: b\n  pluginConfig:\n  - name: ~\n    args: {kind: VolumeBindingArgs}\n')
    errs = errors_of(doc('v1', body))
    assert any('queueSort must be the same for all profiles' in e for e in errs), errs
    first = 'profiles:\n- schedulerName: b\n  pluginConfig:\n  - name: ~\n    args: {kind: VolumeBindingArgs}\n- schedulerName: a\n'
    assert errors_of(doc('v1', first)) == []


@pytest.mark.parametrize('profile,ok', [
    ('- {}\n', True),
    ('- plugins: {multiPoint: {disabled: [{name: NodeResourcesFit}]}}\n', False),
    ('- plugins: {multiPoint: {disabled: [{name: NodeResourcesFit}]}, preScore: {enabled: [{name: NodeResourcesFit}]}}\n', True),
    ('- plugins: {multiPoint: {disabled: [{name: "*"}]}, queueSort: {enabled: [{name: PrioritySort}]}, '
     'bind: {enabled: [{name: DefaultBinder}]}}\n  pluginConfig: [{name: NodeResourcesFit, args: {kind: NodeResourcesFitArgs}}]\n', True),
])
def test_ignored_managed_resources_need_fit_args_in_every_profile(profile, ok):
    body = ('extenders:\n- urlPrefix: http://x\n  managedResources: [{name: example.com/gpu, ignoredByScheduler: true}]\n'
            'profiles:\n' + profile)
    errs = errors_of(doc('v1', body))
    assert (errs == []) is ok, errs


@pytest.mark.parametrize('version', ['v1', 'v1beta3'])
@pytest.mark.parametrize('ignored_by_scheduler, ok', [(True, True), (False, False)])
def test_extenders_ignored_resources_replace_the_fit_args_list(version, ignored_by_scheduler, ok):
    # kube-scheduler overwrites NodeResourcesFitArgs.ignoredResources with the extenders'
    # ignoredByScheduler names before it creates the plugin: the file's list is never checked
    body = ('extenders:\n- urlPrefix: http://x\n  managedResources: [{name: example.com/gpu, ignoredByScheduler: %s}]\n'
            'profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {ignoredResources: ["%s"]}\n'
            % (str(ignored_by_scheduler).lower(), 'x' * 64))
    errs = errors_of(doc(version, body))
    assert (errs == []) is ok, errs
    if not ok:
        assert errs == ['profiles[0].pluginConfig[0].args.ignoredResources[0]: Invalid value: "%s": '
                        'name part must be no more than 63 bytes' % ('x' * 64)], errs


def test_extenders_ignored_resources_keep_the_fit_args_types_and_groups():
    # still decoded strictly, and ignoredResourceGroups is not replaced
    head = ('extenders:\n- urlPrefix: http://x\n  managedResources: [{name: example.com/gpu, ignoredByScheduler: true}]\n'
            'profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: ')
    assert errors_of(doc('v1', head + '{ignoredResources: [1]}\n')) == [
        'profiles[0].pluginConfig[0].args.ignoredResources[0]: cannot decode number into a string field; quote the value']
    errs = errors_of(doc('v1', head + '{ignoredResources: [""], ignoredResourceGroups: [a/b]}\n'))
    assert errs and all('ignoredResourceGroups[0]' in e for e in errs), errs
    assert any("resource group name can't contain '/'" in e for e in errs), errs
