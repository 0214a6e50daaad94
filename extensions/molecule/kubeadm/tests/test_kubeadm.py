# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""kubeadm: --config and its read-only mount in the static pod, nothing else in the manifests directory;
the same flag and mount in kubeadm's stored ClusterConfiguration, from which the real kubeadm generates
the same scheduler manifest again (what `kubeadm upgrade` does)."""

from __future__ import annotations

import base64

import yaml


import bk3s_checks as c  # pylint: disable=import-error

OURS = '/etc/kubernetes/kube-scheduler/config.yaml'
MANIFESTS = '/etc/kubernetes/manifests'
MANIFEST = MANIFESTS + '/kube-scheduler.yaml'
MARK = '# baremetal.k3s.kubeadm_config'
REGEN = '/var/tmp/bk3s-regenerated-verify'


def assert_flag_and_read_only_file_mount(pod):
    """The scheduler static pod passes --config=OURS once and mounts it read-only as a File."""
    container = pod['spec']['containers'][0]
    assert container['command'].count('--config=' + OURS) == 1
    (volume,) = [v for v in pod['spec']['volumes'] if v.get('hostPath', {}).get('path') == OURS]
    assert volume['hostPath'].get('type') == 'File'
    (mount,) = [m for m in container['volumeMounts'] if m['name'] == volume['name']]
    assert mount['mountPath'] == OURS and mount['readOnly'] is True


def test_manifest_has_the_flag_and_a_read_only_file_mount(host):
    assert_flag_and_read_only_file_mount(c.yaml_file(host, MANIFEST))


def test_nothing_but_kubeadms_manifests_in_the_directory(host):
    names = sorted(host.file(MANIFESTS).listdir())
    assert names == ['etcd.yaml', 'kube-apiserver.yaml', 'kube-controller-manager.yaml', 'kube-scheduler.yaml']
    files = {f['file']: f['status'] for f in c.pods_state(host)['files']}
    assert set(files.values()) == {'ok'}, files


def test_our_config_names_the_kubeadm_scheduler_kubeconfig(host):
    cfg = c.yaml_file(host, OURS)
    assert cfg['clientConnection']['kubeconfig'] == '/etc/kubernetes/scheduler.conf'
    assert [e['urlPrefix'] for e in cfg['extenders']] == [c.EXTENDER]


def test_the_kubelet_restarted_the_real_scheduler_with_our_config(host):
    pod = c.scheduler_pod(host)
    assert pod['state'] == 'running', pod
    argv = [a.decode() for a in c.process_argv(host, pod['pid'])]
    assert argv[0] == 'kube-scheduler' and '--config=' + OURS in argv
    assert c.scheduler_healthy(host)


def test_readiness_configmap_says_restarted(host):
    (entry,) = c.readiness_nodes(host)
    assert entry['node_name'] == host.check_output('hostname').lower()
    assert entry['restarted'] is True


def stored_cluster_configuration(host):
    return c.kubectl_json(host, 'get configmap -n kube-system kubeadm-config')['data']['ClusterConfiguration']


def regenerated_manifest(host, text):
    """The kube-scheduler manifest the real kubeadm generates from ``text`` (kubeadm upgrade's source)."""
    cfg = REGEN + '.yaml'
    host.check_output('rm -rf %s && mkdir -m 0700 %s && echo %s | base64 -d > %s'
                      % (REGEN, REGEN, base64.b64encode(text.encode()).decode(), cfg))
    out = host.run('KUBEADM_INIT_DRYRUN_DIR=%s kubeadm init phase control-plane scheduler --config %s --dry-run'
                   % (REGEN, cfg))
    assert out.rc == 0, out.stderr
    return yaml.safe_load(host.file(REGEN + '/kube-scheduler.yaml').content_string)


def test_kubeadm_config_holds_the_flag_and_mount_in_the_v1beta4_shape(host):
    text = stored_cluster_configuration(host)
    cfg = yaml.safe_load(text)
    assert cfg['apiVersion'] == 'kubeadm.k8s.io/v1beta4'
    assert [a for a in cfg['scheduler']['extraArgs'] if a['name'] == 'config'] == [{'name': 'config', 'value': OURS}]
    (volume,) = [v for v in cfg['scheduler']['extraVolumes'] if v['hostPath'] == OURS]
    assert volume['mountPath'] == OURS and volume['readOnly'] is True and volume['pathType'] == 'File'
    before = host.file('/var/tmp/bk3s-kubeadm-config.before').content_string
    # kubeadm writes "scheduler: {}": the rest of the text is kubeadm's, byte for byte
    assert 'scheduler: {}\n' in before
    head, tail = before.split('scheduler: {}\n')
    assert text.startswith(head + 'scheduler: {') and text.endswith('}\n' + tail)


def test_the_real_kubeadm_regenerates_the_manifest_with_the_flag_and_mount(host):
    pod = regenerated_manifest(host, stored_cluster_configuration(host))
    assert_flag_and_read_only_file_mount(pod)
    container = pod['spec']['containers'][0]
    # what kubeadm upgrade would write runs the scheduler as the role's edit does: same arguments, same mounts
    current = c.yaml_file(host, MANIFEST)
    now = current['spec']['containers'][0]
    assert sorted(container['command']) == sorted(now['command'])
    assert sorted((v['name'], v['hostPath']['path'], v['hostPath'].get('type')) for v in pod['spec']['volumes']) == \
        sorted((v['name'], v['hostPath']['path'], v['hostPath'].get('type')) for v in current['spec']['volumes'])
    assert sorted((m['name'], m['mountPath'], m.get('readOnly', False)) for m in container['volumeMounts']) == \
        sorted((m['name'], m['mountPath'], m.get('readOnly', False)) for m in now['volumeMounts'])


def test_kubeadm_with_the_config_recorded_before_the_role_generates_no_flag(host):
    """The proof above can fail: kubeadm's own text gives a manifest without our flag."""
    pod = regenerated_manifest(host, host.file('/var/tmp/bk3s-kubeadm-config.before').content_string)
    assert not [a for a in pod['spec']['containers'][0]['command'] if a.startswith('--config')]
