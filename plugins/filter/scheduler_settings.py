# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: scheduler_settings
short_description: The scheduler config a scheduler_extender run works with on a node, and what passes it
version_added: 0.1.0
description:
  - From a node as M(baremetal.k3s.k3s_info) read it, what the role C(baremetal.k3s.scheduler_extender) writes there -
    the same rule M(baremetal.k3s.scheduler_files) follows with its O(baremetal.k3s.scheduler_files#module:read), so
    that the plan of a playbook and the change it announces cannot differ.
author:
  - baremetal.k3s contributors (@baremetal)
positional: config_path, kubernetes_version, kubeconfig
options:
  _input:
    description: The result of M(baremetal.k3s.k3s_info) for the node.
    type: dict
    required: true
  config_path:
    description: Where our scheduler config goes when the scheduler is given none (empty - the platform's own place).
    type: str
    default: ''
  kubernetes_version:
    description: The scheduler's Kubernetes version (V(auto) - the one read).
    type: str
    default: auto
  kubeconfig:
    description: The kubeconfig our scheduler config names (empty - the one the platform gives the scheduler).
    type: str
    default: ''
'''

EXAMPLES = r'''
- name: The scheduler config this run works with
  ansible.builtin.debug:
    msg: "{{ (node | baremetal.k3s.scheduler_settings('')).target }}"
'''

RETURN = r'''
_value:
  description: What the role's tasks pass to its modules.
  type: dict
  contains:
    ours:
      description: Where our scheduler config goes when the scheduler is given none.
      type: str
    target:
      description: The scheduler config the run works with - the one the scheduler is already given, else RV(_value.ours).
      type: str
    flag_arg:
      description:
        - The service argument that passes RV(_value.ours) (C(--kube-scheduler-arg=config=...)); empty where the scheduler
          already has a config of its own (ours is merged into it) or its platform passes it otherwise (kubeadm's static
          pod).
      type: str
    kubernetes_version:
      description: The scheduler's Kubernetes version.
      type: str
    kubeconfig:
      description: The kubeconfig our scheduler config names.
      type: str
  sample:
    ours: /etc/rancher/k3s/kube-scheduler/config.yaml
    target: /etc/rancher/k3s/kube-scheduler/config.yaml
    flag_arg: --kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml
    kubernetes_version: v1.33.13+k3s1
    kubeconfig: /var/lib/rancher/k3s/server/cred/scheduler.kubeconfig
'''

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.baremetal.k3s.plugins.module_utils._platform import scheduler_settings as _settings


def scheduler_settings(node, config_path='', kubernetes_version='auto', kubeconfig=''):
    if not isinstance(node, Mapping) or not isinstance(node.get('platform_record'), Mapping):
        raise AnsibleFilterError('scheduler_settings: the input must be the result of baremetal.k3s.k3s_info for a node '
                                 'with a platform (platform_record), not %r' % (type(node).__name__,))
    return _settings(node, config_path or '', kubernetes_version or 'auto', kubeconfig or '')


class FilterModule:
    """baremetal.k3s filters."""

    def filters(self):
        return {'scheduler_settings': scheduler_settings}
