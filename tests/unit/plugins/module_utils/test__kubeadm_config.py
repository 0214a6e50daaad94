# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of _kubeadm_config: the plan on ClusterConfiguration texts (v1beta3 and v1beta4), and the
ConfigMap's read and conditional replace against the fake API server of test__readiness."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _kubeadm_config as kc
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.modules import kubeadm_config
from ansible_collections.baremetal.k3s.tests.unit.plugins.module_utils.test__readiness import KUBECTL, FakeApi
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok

CONFIG = '/etc/kubernetes/scheduler/config.yaml'
CA = '/etc/kubernetes/scheduler/extender-ca.crt'
WHERE = 'ConfigMap kube-system/kubeadm-config key ClusterConfiguration'

# what kubeadm v1.36.3 writes (kubeadm config print init-defaults, its ClusterConfiguration)
V1BETA4 = '''apiServer: {}
apiVersion: kubeadm.k8s.io/v1beta4
caCertificateValidityPeriod: 87600h0m0s
certificateValidityPeriod: 8760h0m0s
certificatesDir: /etc/kubernetes/pki
clusterName: kubernetes
controllerManager: {}
dns: {}
encryptionAlgorithm: RSA-2048
etcd:
  local:
    dataDir: /var/lib/etcd
imageRepository: registry.k8s.io
kind: ClusterConfiguration
kubernetesVersion: v1.36.3
networking:
  dnsDomain: cluster.local
  serviceSubnet: 10.96.0.0/12
proxy: {}
scheduler: {}
'''

# an older cluster's, written by hand in block style: other extraArgs and volumes of the user's
V1BETA3 = '''apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.30.4
# the scheduler's settings, see the runbook
scheduler:
  extraArgs:
    v: "2"   # more logs
    bind-address: 0.0.0.0
  extraVolumes:
  - name: tz
    hostPath: /etc/localtime
    mountPath: /etc/localtime
    readOnly: true
    pathType: File
networking:
  podSubnet: 10.244.0.0/16
'''

V1BETA4_BLOCK = '''apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
scheduler:
  extraArgs:
  - name: v
    value: "2"
'''

V1BETA3_NO_SCHEDULER = '''apiVersion: kubeadm.k8s.io/v1beta3\r
kind: ClusterConfiguration\r
clusterName: lab\r
'''

TEXTS = {'v1beta4-kubeadm': V1BETA4, 'v1beta3-block': V1BETA3, 'v1beta4-block': V1BETA4_BLOCK,
         'v1beta3-no-scheduler-crlf': V1BETA3_NO_SCHEDULER}


def data(text):
    return yaml.safe_load(text)


def config_args(d):
    args = (d.get('scheduler') or {}).get('extraArgs') or ({} if d['apiVersion'].endswith('v1beta3') else [])
    if isinstance(args, dict):
        return [args['config']] if 'config' in args else []
    return [a['value'] for a in args if a['name'] == 'config']


def volumes(d):
    return {v['mountPath']: v for v in (d.get('scheduler') or {}).get('extraVolumes') or []}


@pytest.mark.parametrize('name', sorted(TEXTS))
def test_add_rerun_and_remove_give_the_bytes_back(name):
    text = TEXTS[name]
    after, facts = kc.plan_text(text, WHERE, CONFIG, [CA])
    d = data(after)
    assert config_args(d) == [CONFIG]
    vols = volumes(d)
    for p in (CONFIG, CA):
        assert vols[p]['hostPath'] == p and vols[p]['readOnly'] is True and vols[p]['pathType'] == 'File'
        assert vols[p]['name'].startswith('baremetal-k3s-')
    assert facts['extra_args'] == [CONFIG] and len(facts['volumes']) == 2
    assert facts['api_version'] == d['apiVersion']
    # everything else reads as before
    before = data(text)
    for key in set(before) | set(d):
        if key != 'scheduler':
            assert d.get(key) == before.get(key), key
    for p, v in volumes(before).items():
        assert vols[p] == v
    # a second run changes nothing
    again, dummy = kc.plan_text(after, WHERE, CONFIG, [CA])
    assert again == after
    # absent gives the bytes back; a second absent changes nothing
    removed, facts = kc.plan_text(after, WHERE, CONFIG, state='absent')
    assert removed == text
    assert facts['extra_args'] == [] and facts['volumes'] == []
    assert kc.plan_text(removed, WHERE, CONFIG, state='absent')[0] == text


def test_v1beta4_adds_a_name_value_item_and_v1beta3_a_map_key():
    d4 = data(kc.plan_text(V1BETA4_BLOCK, WHERE, CONFIG)[0])
    assert d4['scheduler']['extraArgs'] == [{'name': 'v', 'value': '2'}, {'name': 'config', 'value': CONFIG}]
    d3 = data(kc.plan_text(V1BETA3, WHERE, CONFIG)[0])
    assert d3['scheduler']['extraArgs'] == {'v': '2', 'bind-address': '0.0.0.0', 'config': CONFIG}


def test_block_edits_carry_the_marker_and_keep_comments():
    after = kc.plan_text(V1BETA3, WHERE, CONFIG)[0]
    assert '    ' + kc.MARK + '\n    config: ' + CONFIG in after
    assert '# the scheduler\'s settings, see the runbook' in after and 'v: "2"   # more logs' in after


def test_a_mount_dropped_from_the_list_goes_on_present():
    with_ca = kc.plan_text(V1BETA3, WHERE, CONFIG, [CA])[0]
    without, facts = kc.plan_text(with_ca, WHERE, CONFIG, [])
    assert CA not in without and len(facts['volumes']) == 1
    assert kc.plan_text(without, WHERE, CONFIG, state='absent')[0] == V1BETA3


def test_a_directory_gets_pathtype_directory():
    after = kc.plan_text(V1BETA4, WHERE, CONFIG, ['/etc/kubernetes/extender'],
                         kinds={'/etc/kubernetes/extender': 'Directory'})[0]
    assert volumes(data(after))['/etc/kubernetes/extender']['pathType'] == 'Directory'


def test_a_path_already_mounted_by_the_user_gets_no_second_volume():
    text = V1BETA4_BLOCK + '''  extraVolumes:
  - name: sched
    hostPath: /etc/kubernetes/scheduler
    mountPath: /etc/kubernetes/scheduler
'''
    after, facts = kc.plan_text(text, WHERE, CONFIG, [CA])
    assert facts['volumes'] == [] and len(volumes(data(after))) == 1
    assert kc.plan_text(after, WHERE, CONFIG, state='absent')[0] == text


def test_the_users_own_config_arg_stays_on_absent():
    text = V1BETA3.replace('    bind-address: 0.0.0.0\n', '    bind-address: 0.0.0.0\n    config: %s\n' % CONFIG)
    after, facts = kc.plan_text(text, WHERE, CONFIG)
    assert config_args(data(after)) == [CONFIG] and len(facts['volumes']) == 1
    removed, facts = kc.plan_text(after, WHERE, CONFIG, state='absent')
    assert removed == text and facts['extra_args'] == [CONFIG]


def test_absent_on_a_text_without_ours_changes_nothing():
    for text in TEXTS.values():
        assert kc.plan_text(text, WHERE, CONFIG, state='absent')[0] == text


@pytest.mark.parametrize('text, words', [
    (V1BETA3.replace('v: "2"', 'config: /etc/other.yaml'),
     ["scheduler.extraArgs.config is '/etc/other.yaml'", 'kube-scheduler reads a single --config']),
    (V1BETA4_BLOCK + '  - name: config\n    value: /etc/other.yaml\n',
     ["scheduler.extraArgs[1] is '/etc/other.yaml'", 'scheduler_config']),
    (V1BETA4.replace('v1beta4', 'v1beta2'),
     ["apiVersion 'kubeadm.k8s.io/v1beta2' is not one this module knows", 'kubeadm config migrate']),
    (V1BETA4.replace('kind: ClusterConfiguration', 'kind: InitConfiguration'), ["kind is 'InitConfiguration'"]),
    (V1BETA4.replace('scheduler: {}', 'scheduler: {extraArgs: {config: /x}}'),
     ['scheduler.extraArgs is a mapping, not a list as kubeadm.k8s.io/v1beta4 reads it']),
    (V1BETA3.replace('  extraArgs:\n    v: "2"   # more logs\n    bind-address: 0.0.0.0\n', '  extraArgs: []\n'),
     ['scheduler.extraArgs is a sequence, not a mapping']),
    (V1BETA4.replace('scheduler: {}', 'scheduler:'), ['scheduler is empty (null)', 'Write it as {}']),
    (V1BETA4.replace('scheduler: {}', 'scheduler: {extraArgs: [v]}'), ['scheduler.extraArgs[0] is', '{name, value}']),
    (V1BETA4.replace('scheduler: {}', 'scheduler: {extraVolumes: [{name: x, hostPath: /srv, mountPath: %s}]}' % CONFIG),
     ["scheduler.extraVolumes[0] (x) mounts '/srv' at %s" % CONFIG]),
    ('apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkind: ClusterConfiguration\n', ['cannot be read']),
    ('- a\n', ['is not a mapping']),
])
def test_refusals_say_what_where_and_what_to_do(text, words):
    with pytest.raises(PlanError) as e:
        kc.plan_text(text, WHERE, CONFIG)
    assert e.value.msg.startswith(WHERE), e.value.msg
    for w in words:
        assert w in e.value.msg, e.value.msg


ADMISSION = '/etc/kubernetes/baremetal-k3s-pod-security.yaml'


@pytest.mark.parametrize('name', sorted(TEXTS))
def test_the_api_servers_admission_config_file_goes_into_apiserver_and_out_again(name):
    text = TEXTS[name]
    after, facts = kc.plan_text(text, WHERE, ADMISSION, component='apiServer')
    d, before = data(after), data(text)
    args = d['apiServer']['extraArgs']
    flag = 'admission-control-config-file'
    assert (args[flag] if isinstance(args, dict) else [a['value'] for a in args if a['name'] == flag]) == (
        ADMISSION if isinstance(args, dict) else [ADMISSION])
    vols = {v['mountPath']: v for v in d['apiServer']['extraVolumes']}
    assert vols[ADMISSION]['hostPath'] == ADMISSION and vols[ADMISSION]['readOnly'] is True
    assert facts['extra_args'] == [ADMISSION] and len(facts['volumes']) == 1
    assert d.get('scheduler') == before.get('scheduler')  # the scheduler's part is not touched
    assert kc.plan_text(after, WHERE, ADMISSION, component='apiServer')[0] == after
    assert kc.plan_text(after, WHERE, ADMISSION, state='absent', component='apiServer')[0] == text
    # the scheduler's --config and the API server's file live side by side, each removed alone
    both = kc.plan_text(after, WHERE, CONFIG)[0]
    assert kc.plan_text(both, WHERE, ADMISSION, state='absent', component='apiServer')[0] == kc.plan_text(text, WHERE, CONFIG)[0]


def test_another_admission_config_file_is_refused_by_name():
    text = V1BETA4.replace('apiServer: {}', 'apiServer: {extraArgs: [{name: admission-control-config-file, value: /etc/psa.yaml}]}')
    with pytest.raises(PlanError) as e:
        kc.plan_text(text, WHERE, ADMISSION, component='apiServer')
    assert "apiServer.extraArgs[0] is '/etc/psa.yaml', another file than %s" % ADMISSION in e.value.msg
    assert 'kube-apiserver reads a single --admission-control-config-file' in e.value.msg
    with pytest.raises(PlanError, match="component 'etcd' is not one this module knows"):
        kc.Request(KUBECTL, ADMISSION, component='etcd')


@pytest.mark.parametrize('config, mounts', [('relative.yaml', []), (CONFIG, ['/']), (CONFIG, ['/a\nb'])])
def test_bad_paths_are_refused(config, mounts):
    with pytest.raises(PlanError, match='absolute path|hide the whole'):
        kc.plan_text(V1BETA4, WHERE, config, mounts)


# -- the ConfigMap through kubectl ----------------------------------------------------------------
def api_with(text=V1BETA4):
    api = FakeApi()
    api.put('kubeadm-config', {'ClusterConfiguration': text}, namespace='kube-system')
    return api


def stored(api):
    return api.objects[('kube-system', 'kubeadm-config')]['data']['ClusterConfiguration']


def request(**kw):
    args = dict(kubectl=KUBECTL, config=CONFIG, kubeconfig='/etc/kubernetes/admin.conf', mounts=[CA])
    args.update(kw)
    return kc.Request(**args)


def test_sync_replaces_conditionally_and_returns_what_undoes_it():
    api = api_with()
    result = kc.sync(api.runner, request())
    assert result['changed'] and result['attempts'] == 1
    assert result['rollback']['previous'] == V1BETA4 and result['rollback']['written'] == stored(api)
    verb, obj = api.writes[-1]
    assert verb == 'replace' and obj['metadata']['resourceVersion'] and 'managedFields' not in obj['metadata']
    assert config_args(data(stored(api))) == [CONFIG]
    again = kc.sync(api.runner, request())
    assert not again['changed'] and len(api.writes) == 1
    # rollback puts the previous text back, once
    back = kc.sync(api.runner, request(state='restore', previous=result['rollback']['previous'],
                                       written=result['rollback']['written']))
    assert back['changed'] and stored(api) == V1BETA4
    assert not kc.sync(api.runner, request(state='restore', previous=V1BETA4, written='x'))['changed']


def test_restore_refuses_a_text_changed_since():
    api = api_with()
    result = kc.sync(api.runner, request())
    api.put('kubeadm-config', {'ClusterConfiguration': stored(api) + 'etcd: {}\n'}, namespace='kube-system')
    with pytest.raises(PlanError, match='changed since this collection wrote it'):
        kc.sync(api.runner, request(state='restore', **{k: result['rollback'][k] for k in ('previous', 'written')}))


def test_sync_redoes_the_change_when_another_writer_came_first():
    api = api_with()
    done = []

    def other_writer(verb, obj):
        if not done:
            done.append(1)
            api.put('kubeadm-config', {'ClusterConfiguration': V1BETA4.replace('clusterName: kubernetes', 'clusterName: k')},
                    namespace='kube-system')

    api.before_write = other_writer
    result = kc.sync(api.runner, request(), sleep=lambda s: None)
    assert result['attempts'] == 2
    text = stored(api)
    assert 'clusterName: k\n' in text and config_args(data(text)) == [CONFIG]


def test_check_mode_writes_nothing():
    api = api_with()
    result = kc.sync(api.runner, request(), check_mode=True)
    assert result['changed'] and api.writes == [] and stored(api) == V1BETA4
    assert config_args(data(result['diff']['after'])) == [CONFIG]


def test_a_missing_configmap_fails_present_and_is_nothing_to_do_for_absent():
    api = FakeApi()
    with pytest.raises(PlanError, match='the ConfigMap does not exist.*scheduler_extender_kubeadm_config: false'):
        kc.sync(api.runner, request())
    result = kc.sync(api.runner, request(state='absent'))
    assert not result['changed'] and api.writes == []


def test_a_missing_key_is_named():
    api = FakeApi()
    api.put('kubeadm-config', {'Other': 'x'}, namespace='kube-system')
    with pytest.raises(PlanError, match='has no key ClusterConfiguration .keys: Other'):
        kc.sync(api.runner, request())


# -- the module ---------------------------------------------------------------------------------
@pytest.fixture
def node(tmp_path, monkeypatch):
    api = api_with(V1BETA3)
    kubeconfig = str(tmp_path / 'admin.conf')
    with open(kubeconfig, 'w') as f:
        f.write('apiVersion: v1\nkind: Config\n')
    os.makedirs(str(tmp_path / 'extender'))

    def run_command(module, args, **kw):
        argv = list(args)
        assert argv[0] == '/usr/bin/kubectl', argv
        return api.runner(KUBECTL + argv[1:], kw.get('data'))

    monkeypatch.setattr(AnsibleModule, 'run_command', run_command)
    api.kubeconfig = kubeconfig
    api.dir = str(tmp_path / 'extender')
    return api


def test_module_present_diff_and_absent(node):
    args = {'kubectl': ['/usr/bin/kubectl'], 'kubeconfig': node.kubeconfig, 'config': CONFIG, 'mounts': [node.dir]}
    result = module_ok(kubeadm_config, args, diff=True)
    assert result['changed'] and result['api_version'] == 'kubeadm.k8s.io/v1beta3'
    assert result['diff']['before'] == V1BETA3 and result['diff']['after'] == stored(node)
    assert volumes(data(stored(node)))[node.dir]['pathType'] == 'Directory'
    result = module_ok(kubeadm_config, dict(args, state='absent'))
    assert result['changed'] and stored(node) == V1BETA3


def test_module_fails_with_the_plan_error_and_a_missing_kubeconfig(node):
    node.put('kubeadm-config', {'ClusterConfiguration': V1BETA3.replace('v: "2"', 'config: /x')}, namespace='kube-system')
    msg = module_fail(kubeadm_config, {'kubectl': ['/usr/bin/kubectl'], 'config': CONFIG})
    assert 'another scheduler config' in msg
    msg = module_fail(kubeadm_config, {'kubectl': ['/usr/bin/kubectl'], 'config': CONFIG, 'kubeconfig': '/nonexistent'})
    assert 'kubeconfig /nonexistent does not exist' in msg
