# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The conversion of a v1beta2/v1beta3 KubeSchedulerConfiguration to v1 (pure, no node)."""

from __future__ import annotations

import textwrap

import pytest
import yaml

from ansible_collections.baremetal.k3s.plugins.module_utils import _scheduler_config as sc

GROUP = 'kubescheduler.config.k8s.io'
KC = '/etc/kubernetes/scheduler.conf'


def exists(path):
    return path == KC


def text(body):
    return textwrap.dedent(body).lstrip('\n')


V1BETA2 = text('''
    # the operator's scheduler config
    apiVersion: kubescheduler.config.k8s.io/v1beta2
    kind: KubeSchedulerConfiguration
    healthzBindAddress: 0.0.0.0:0   # insecure serving off
    metricsBindAddress: ""
    clientConnection:
      kubeconfig: /etc/kubernetes/scheduler.conf  # kubeadm's
    profiles:
    - schedulerName: default-scheduler
      plugins:
        score:
          enabled:
          - name: NodeAffinity   # the operator's own weight
            weight: 5
          disabled:
          - name: SelectorSpread
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
        queueSort:
          enabled: []
        score:
          disabled:
          - name: '*'
          enabled:
          - name: NodeResourcesFit
            weight: 2
      pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
    extenders:
    - urlPrefix: http://gpu-share:12345
      filterVerb: filter
    ''')

V1BETA3 = text('''
    apiVersion: kubescheduler.config.k8s.io/v1beta3
    kind: KubeSchedulerConfiguration
    clientConnection:
      kubeconfig: /etc/kubernetes/scheduler.conf
    # profiles as the operator wrote them
    profiles:
    - schedulerName: default-scheduler
      plugins:
        multiPoint:
          disabled:
          - name: EBSLimits       # no AWS here
          - name: GCEPDLimits
          - name: AzureDiskLimits
          enabled:
          - name: TaintToleration
            weight: 4
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
    ''')


def converted(src):
    out, version, changes = sc.convert_to_v1(src)
    # the result is a v1 file kube-scheduler 1.36 (this module's model of it) accepts
    got, errors = sc.validate_text(out, 'v1.36.3', check_files=True, exists=exists)
    assert (got, errors) == ('v1', []), out
    return out, version, changes


def test_v1beta2_converted_with_field_changes_and_comments_kept():
    out, version, changes = converted(V1BETA2)
    assert version == 'v1beta2'
    data = yaml.safe_load(out)
    assert data['apiVersion'] == GROUP + '/v1'
    assert 'healthzBindAddress' not in data and 'metricsBindAddress' not in data
    p0, p1 = data['profiles']
    # SelectorSpread has no v1 plugin: its disabled entry is gone, ImageLocality's stays
    assert p0['plugins']['score']['disabled'] == [{'name': 'ImageLocality'}]
    assert p0['plugins']['score']['enabled'] == [{'name': 'NodeAffinity', 'weight': 5}]
    # v1beta2's default weights of the plugins v1 weighs more, pinned; NodeAffinity is the operator's own
    assert p0['plugins']['multiPoint'] == {'enabled': [{'name': 'TaintToleration', 'weight': 1},
                                                       {'name': 'InterPodAffinity', 'weight': 1}]}
    # score: disabled '*' keeps only the operator's scoring: nothing to pin
    assert 'multiPoint' not in p1['plugins']
    assert p0['pluginConfig'][0]['args']['apiVersion'] == GROUP + '/v1'
    assert 'apiVersion' not in p1['pluginConfig'][0]['args']
    # every comment and the operator's other fields kept
    for line in ('# the operator\'s scheduler config', '  kubeconfig: /etc/kubernetes/scheduler.conf  # kubeadm\'s',
                 '      - name: NodeAffinity   # the operator\'s own weight', '- urlPrefix: http://gpu-share:12345'):
        assert line in out.splitlines(), line
    assert data['extenders'] == [{'urlPrefix': 'http://gpu-share:12345', 'filterVerb': 'filter'}]
    assert changes[0] == 'apiVersion: %s/v1beta2 -> %s/v1' % (GROUP, GROUP)
    joined = '\n'.join(changes)
    for part in ('healthzBindAddress: "0.0.0.0:0" removed', 'metricsBindAddress: "" removed',
                 'profiles[0].plugins.score.disabled[0]: "SelectorSpread" removed',
                 'profiles[0].pluginConfig[0].args.apiVersion', 'profiles[0]: score weights kept',
                 'TaintToleration 1, v1 default 3', 'InterPodAffinity 1, v1 default 2'):
        assert part in joined, part
    assert 'profiles[1]' not in joined


def test_v1beta2_without_profiles_gets_the_default_profile_pinned():
    src = 'apiVersion: %s/v1beta2\nkind: KubeSchedulerConfiguration\nclientConnection:\n  kubeconfig: %s\n' % (GROUP, KC)
    out, _version, changes = converted(src)
    assert out.startswith('apiVersion: %s/v1\nkind: KubeSchedulerConfiguration\nclientConnection:\n  kubeconfig: %s\n'
                          % (GROUP, KC))
    assert yaml.safe_load(out)['profiles'] == [{'schedulerName': 'default-scheduler', 'plugins': {'multiPoint': {'enabled': [
        {'name': 'TaintToleration', 'weight': 1}, {'name': 'NodeAffinity', 'weight': 1}, {'name': 'InterPodAffinity', 'weight': 1}]}}}]
    assert sc.PIN_COMMENT in out
    assert 'profiles[0] (added' in changes[-1]


def test_v1beta3_converted_disabled_removed_plugins_dropped_weights_untouched():
    out, version, changes = converted(V1BETA3)
    assert version == 'v1beta3'
    data = yaml.safe_load(out)
    mp = data['profiles'][0]['plugins']['multiPoint']
    assert mp == {'disabled': [], 'enabled': [{'name': 'TaintToleration', 'weight': 4}]}
    assert data['profiles'][0]['pluginConfig'][0]['args']['apiVersion'] == GROUP + '/v1'
    assert '# profiles as the operator wrote them' in out
    assert out.replace('v1beta3', 'v1').count('\n') - out.count('\n') == 0
    # v1beta3 and v1 have the same default weights: no pins
    assert not any('score weights' in c for c in changes)
    assert ['EBSLimits' in c for c in changes].count(True) == 1
    assert len(changes) == 5, changes  # apiVersion, three disabled entries, the args' apiVersion


def test_json_document_stays_json():
    src = '{"apiVersion": "%s/v1beta3", "kind": "KubeSchedulerConfiguration", "clientConnection": {"kubeconfig": "%s"}}\n' % (GROUP, KC)
    out, _version, changes = converted(src)
    assert out == src.replace('v1beta3', 'v1')
    assert changes == ['apiVersion: %s/v1beta3 -> %s/v1' % (GROUP, GROUP)]


def test_converted_file_converts_no_further():
    for src in (V1BETA2, V1BETA3):
        out, _version, _changes = converted(src)
        data = sc.load_strict(out)
        assert sc.needs_conversion(data, 'v1.36.3') is None
        with pytest.raises(sc.SchedulerConfigError, match='only v1beta2 and v1beta3 are converted'):
            sc.convert_to_v1(out)


@pytest.mark.parametrize('version, k8s, expected', [
    ('v1beta2', 'v1.27.16', None),       # still read
    ('v1beta2', 'v1.28.15', 'v1beta2'),
    ('v1beta3', 'v1.28.15', None),
    ('v1beta3', 'v1.29.0+k3s1', 'v1beta3'),
    ('v1beta3', None, None),             # no target: nothing to decide
    ('v1beta1', 'v1.30', None),          # not converted (refused by check_document)
    ('v1', 'v1.36.3', None),
    ('v1beta3', 'v1.21', None),          # a downgrade: v1 is not read either
])
def test_needs_conversion(version, k8s, expected):
    data = {'apiVersion': '%s/%s' % (GROUP, version), 'kind': 'KubeSchedulerConfiguration'}
    assert sc.needs_conversion(data, k8s) == expected


@pytest.mark.parametrize('body, where', [
    ('''
     profiles:
     - plugins:
         score:
           enabled:
           - name: SelectorSpread
             weight: 1
     ''', 'profiles[0].plugins.score.enabled[0]: plugin "SelectorSpread" has no v1 form: invalid in v1'),
    ('''
     profiles:
     - schedulerName: a
     - schedulerName: b
       plugins:
         filter:
           enabled:
           - name: NodeVolumeLimits
           - name: EBSLimits
     ''', 'profiles[1].plugins.filter.enabled[1]: plugin "EBSLimits" has no v1 form'),
    ('''
     profiles:
     - plugins:
         score:
           enabled:
           - name: NodePreferAvoidPods
             weight: 10000
     ''', 'profiles[0].plugins.score.enabled[0]: plugin "NodePreferAvoidPods" has no v1 form: removed in Kubernetes 1.24'),
    ('''
     profiles:
     - pluginConfig:
       - name: SelectorSpread
         args: {}
     ''', 'profiles[0].pluginConfig[0]: configuration of plugin "SelectorSpread" has no v1 form'),
])
@pytest.mark.parametrize('version', ['v1beta2', 'v1beta3'])
def test_no_faithful_v1_form_refused_naming_the_place(version, body, where):
    src = 'apiVersion: %s/%s\nkind: KubeSchedulerConfiguration\nclientConnection:\n  kubeconfig: %s\n%s' % (
        GROUP, version, KC, textwrap.dedent(body).lstrip('\n'))
    with pytest.raises(sc.SchedulerConfigError) as e:
        sc.convert_to_v1(src)
    assert where in e.value.msg
    assert 'remove it from the list' in e.value.msg


def test_insecure_port_refused_port_zero_dropped():
    base = 'apiVersion: %s/v1beta2\nkind: KubeSchedulerConfiguration\nclientConnection:\n  kubeconfig: %s\n' % (GROUP, KC)
    with pytest.raises(sc.SchedulerConfigError) as e:
        sc.convert_to_v1(base + 'metricsBindAddress: 0.0.0.0:10251\n')
    assert 'metricsBindAddress: "0.0.0.0:10251" serves health or metrics on an insecure port' in e.value.msg
    assert '--secure-port' in e.value.msg
    out, _version, _changes = converted(base + 'metricsBindAddress: 127.0.0.1:0\n')
    assert 'metricsBindAddress' not in out


def test_invalid_source_refused_in_its_own_version():
    src = 'apiVersion: %s/v1beta3\nkind: KubeSchedulerConfiguration\nclientConnection:\n  kubeconfig: %s\nhealthzBindAddress: ""\n' % (GROUP, KC)
    with pytest.raises(sc.SchedulerConfigError) as e:
        sc.convert_to_v1(src)
    assert 'not a valid kubescheduler.config.k8s.io/v1beta3 config' in e.value.msg
    assert 'unknown field "healthzBindAddress"' in e.value.msg


def test_edit_converts_only_when_asked():
    params = {'path': '/etc/s.yaml', 'state': 'present', 'name': 'csi', 'kubernetes_version': 'v1.30.2+k3s1',
              'extender': {'url_prefix': 'http://127.0.0.1:8889', 'filter_verb': 'filter'}}
    before = V1BETA3.encode()
    with pytest.raises(sc.SchedulerConfigError, match='no longer accepts'):
        sc.edit(before, dict(params), exists=exists)
    result = sc.edit(before, dict(params, convert_api_version=True), exists=exists)
    assert result['conversion']['from'] == GROUP + '/v1beta3' and result['conversion']['to'] == GROUP + '/v1'
    assert result['api_version'] == GROUP + '/v1'
    after = result['after'].decode()
    assert after.startswith(V1BETA3.replace('v1beta3', 'v1').split('    multiPoint:')[0])
    assert '# baremetal.k3s extender: csi' in after
    # run again on what was written: nothing to convert, nothing to change
    again = sc.edit(result['after'], dict(params, convert_api_version=True), exists=exists)
    assert not again['changed'] and 'conversion' not in again and again['after'] == result['after']
    # a refusal in the conversion says why the file is converted at all
    bad = V1BETA3.replace('- name: GCEPDLimits', '- name: GCEPDLimits\n      - name: SelectorSpread').replace(
        '      enabled:\n      - name: TaintToleration', '      enabled:\n      - name: SelectorSpread\n      - name: TaintToleration')
    with pytest.raises(sc.SchedulerConfigError) as e:
        sc.edit(bad.encode(), dict(params, convert_api_version=True), exists=exists)
    assert e.value.msg.startswith('the file uses kubescheduler.config.k8s.io/v1beta3, which kube-scheduler 1.30 no longer accepts, '
                                  'and it cannot be converted')
    assert 'profiles[0].plugins.multiPoint.enabled[0]: plugin "SelectorSpread"' in e.value.msg


def test_would_convert():
    assert sc.would_convert(V1BETA3.encode(), 'v1.29.1')
    assert not sc.would_convert(V1BETA3.encode(), 'v1.28.1')
    assert not sc.would_convert(None, 'v1.29.1')
    assert not sc.would_convert(b'\xff\xfe', 'v1.29.1')
    assert not sc.would_convert(b'a: [', 'v1.29.1')
