# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The filter scheduler_settings: the scheduler config a run works with on each platform, and what passes it."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.baremetal.k3s.plugins.filter.scheduler_settings import scheduler_settings
from ansible_collections.baremetal.k3s.plugins.module_utils import _platform

K3S_OURS = '/etc/rancher/k3s/kube-scheduler/config.yaml'
RKE2_OURS = '/etc/rancher/rke2/kube-scheduler/config.yaml'


def read(platform, scheduler_config='', version='v1.33.13+k3s1'):
    """A node as k3s_info returns it, the fields the rule reads."""
    record = _platform.get(platform).facts(node='node-1')
    return {'platform_record': record, 'scheduler_config': scheduler_config, 'kubernetes_version': version,
            'scheduler_kubeconfig': record['scheduler_kubeconfig']}


@pytest.mark.parametrize('node, config_path, ours, target, flag_arg', [
    (read('k3s'), '', K3S_OURS, K3S_OURS, '--kube-scheduler-arg=config=' + K3S_OURS),
    (read('k3s'), '/etc/sched.yaml', '/etc/sched.yaml', '/etc/sched.yaml', '--kube-scheduler-arg=config=/etc/sched.yaml'),
    # the scheduler has a config of its own: ours is merged into it, nothing more is passed
    (read('k3s', '/etc/other.yaml'), '', K3S_OURS, '/etc/other.yaml', ''),
    (read('rke2'), '', RKE2_OURS, RKE2_OURS, '--kube-scheduler-arg=config=' + RKE2_OURS),
    # kubeadm's static pod gets its --config from static_pod_arg, not from a service argument
    (read('kubeadm'), '', '/etc/kubernetes/kube-scheduler/config.yaml', '/etc/kubernetes/kube-scheduler/config.yaml', ''),
])
def test_the_scheduler_config_and_what_passes_it(node, config_path, ours, target, flag_arg):
    got = scheduler_settings(node, config_path)
    assert (got['ours'], got['target'], got['flag_arg']) == (ours, target, flag_arg)
    assert got == _platform.scheduler_settings(node, config_path), 'the module and the role apply one rule'


def test_version_and_kubeconfig_given_or_read():
    node = read('k3s')
    assert scheduler_settings(node)['kubernetes_version'] == 'v1.33.13+k3s1'
    assert scheduler_settings(node, '', 'v1.31.4')['kubernetes_version'] == 'v1.31.4'
    assert scheduler_settings(node)['kubeconfig'] == '/var/lib/rancher/k3s/server/cred/scheduler.kubeconfig'
    assert scheduler_settings(node, '', 'auto', '/etc/k.yaml')['kubeconfig'] == '/etc/k.yaml'


def test_not_a_read_is_refused():
    for bad in (None, 'k3s', {'scheduler_config': ''}):
        with pytest.raises(AnsibleFilterError, match='baremetal.k3s.k3s_info'):
            scheduler_settings(bad)
