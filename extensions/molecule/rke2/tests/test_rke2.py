# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""RKE2: the flag in config.yaml.d, the scheduler pod RKE2 writes from it, the real scheduler running it."""

from __future__ import annotations


import yaml

import bk3s_checks as c  # pylint: disable=import-error

OURS = '/etc/rancher/rke2/kube-scheduler/config.yaml'
DROPIN = '/etc/rancher/rke2/config.yaml.d/99-baremetal-k3s-scheduler.yaml'
UNIT = '/usr/local/lib/systemd/system/rke2-server.service'
MANIFEST = '/var/lib/rancher/rke2/agent/pod-manifests/kube-scheduler.yaml'


def test_flag_appends_in_rke2s_config_dir_and_the_unit_is_untouched(host):
    assert c.yaml_file(host, DROPIN) == {'kube-scheduler-arg+': ['config=' + OURS]}
    before = c.recorded(host, '/var/tmp/bk3s-before.json')
    assert host.file(UNIT).sha256sum == c.recorded_sha256(before, UNIT)
    assert host.file('/etc/rancher/rke2/config.yaml').sha256sum == c.recorded_sha256(before, '/etc/rancher/rke2/config.yaml')


def test_our_config_names_rke2s_scheduler_kubeconfig(host):
    cfg = c.yaml_file(host, OURS)
    assert cfg['apiVersion'] == 'kubescheduler.config.k8s.io/v1'
    assert cfg['clientConnection']['kubeconfig'] == '/var/lib/rancher/rke2/server/cred/scheduler.kubeconfig'
    assert [e['urlPrefix'] for e in cfg['extenders']] == [c.EXTENDER]
    assert host.file(OURS).mode == 0o600


def test_rke2_wrote_the_pod_with_the_flag_and_the_file_mounted(host):
    pod = yaml.safe_load(host.file(MANIFEST).content_string)
    (container,) = pod['spec']['containers']
    args = container['command'] + container.get('args', [])
    assert '--config=' + OURS in args and '--v=2' in args  # the user's config.yaml value is kept
    mounted = {v['hostPath']['path'] for v in pod['spec']['volumes'] if 'hostPath' in v}
    assert OURS in mounted


def test_the_real_scheduler_runs_as_the_static_pod_with_our_config(host):
    pod = c.scheduler_pod(host)
    assert pod['state'] == 'running', pod
    argv = [a.decode() for a in c.process_argv(host, pod['pid'])]
    assert argv[0] == 'kube-scheduler' and '--config=' + OURS in argv
    assert c.scheduler_healthy(host)
    assert host.service('rke2-server').is_running


def test_readiness_configmap_says_restarted(host):
    (entry,) = c.readiness_nodes(host)
    assert entry['node_name'] == host.check_output('hostname').lower()
    assert entry['restarted'] is True
