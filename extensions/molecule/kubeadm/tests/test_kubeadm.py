# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""kubeadm: --config and its read-only mount in the static pod, nothing else in the manifests directory."""

from __future__ import annotations


import bk3s_checks as c  # pylint: disable=import-error

OURS = '/etc/kubernetes/kube-scheduler/config.yaml'
MANIFESTS = '/etc/kubernetes/manifests'
MANIFEST = MANIFESTS + '/kube-scheduler.yaml'


def test_manifest_has_the_flag_and_a_read_only_file_mount(host):
    pod = c.yaml_file(host, MANIFEST)
    container = pod['spec']['containers'][0]
    assert container['command'].count('--config=' + OURS) == 1
    (volume,) = [v for v in pod['spec']['volumes'] if v.get('hostPath', {}).get('path') == OURS]
    assert volume['hostPath'].get('type') == 'File'
    (mount,) = [m for m in container['volumeMounts'] if m['name'] == volume['name']]
    assert mount['mountPath'] == OURS and mount['readOnly'] is True


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
