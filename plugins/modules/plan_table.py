#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: plan_table
short_description: Print what a rollout would change on each server as one table; fail when a server's plan was refused
version_added: 0.1.0
description:
  - Collects, for each server in O(hosts), the plan the role C(baremetal.k3s.scheduler_extender)'s entry point C(plan) set
    (host variable O(plan_var)) and prints one table on the controller - the server, its platform, each file the rollout
    would write (with its action), whether the scheduler would restart, and why (the apiVersion conversion of the
    scheduler config, a restart an earlier run left due, kubeadm's ClusterConfiguration, a scheduler not yet ready with
    the extender, the readiness entry) - then a summary line.
  - A server whose plan was refused (a module refused the node, or the node could not be read), or which has no plan at
    all (unreachable, failed before planning), fails this task with every such server's reason in one message. Run it
    once, before any server is changed, so that nothing is changed anywhere.
  - This is an action plugin; it runs on the controller and sends nothing to the hosts.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - ansible.builtin.action_common_attributes.flow
attributes:
  action:
    support: full
  async:
    support: none
  bypass_host_loop:
    support: none
  check_mode:
    support: full
    details: Reads host variables and prints; changes nothing, in check mode or not.
  diff_mode:
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: all
options:
  hosts:
    description: The servers to list, in the order to print them, for example C({{ ansible_play_hosts_all }}).
    type: list
    elements: str
    required: true
  plan_var:
    description: The host variable that holds each server's plan.
    type: str
    default: scheduler_extender_plan
  title:
    description: A line printed above the table.
    type: str
    default: ''
seealso:
  - module: baremetal.k3s.status_table
'''

EXAMPLES = r'''
- name: Plan every server at once
  hosts: server
  gather_facts: false
  become: true
  tasks:
    - name: Read and plan this server, nothing written
      ansible.builtin.include_role:
        name: baremetal.k3s.scheduler_extender
        tasks_from: plan

    - name: Print the plan; stop when a server's plan was refused
      baremetal.k3s.plan_table:
        hosts: "{{ ansible_play_hosts_all }}"
      run_once: true
'''

RETURN = r'''
servers:
  description: One plan per server, in the order of O(hosts).
  returned: always
  type: list
  elements: dict
  contains:
    server:
      description: The inventory name.
      type: str
      sample: server-1
    platform:
      description: V(k3s), V(rke2) or V(kubeadm); empty when the server could not be read.
      type: str
      sample: k3s
    node_role:
      description: V(server) or V(agent).
      type: str
      sample: server
    state:
      description: The state planned, V(present) or V(absent).
      type: str
      sample: present
    files:
      description: Each file the rollout would write, C({path, action}).
      type: list
      elements: dict
      sample: [{path: /etc/rancher/k3s/kube-scheduler/config.yaml, action: created}]
    restart:
      description: Whether the scheduler would restart.
      type: bool
      sample: true
    why:
      description: What else the plan found, one sentence each.
      type: list
      elements: str
      sample: ["kubescheduler.config.k8s.io/v1beta3 -> kubescheduler.config.k8s.io/v1 in /etc/kubernetes/scheduler.yaml"]
    noop:
      description: Nothing to do on this server - no file, no restart, the scheduler proven ready, the readiness entry current.
      type: bool
      sample: false
    error:
      description: Why the plan was refused; empty when it was not.
      type: str
      sample: ''
refused:
  description: The servers whose plan was refused or missing.
  returned: always
  type: list
  elements: str
  sample: []
to_change:
  description: The servers the rollout would change (or wait for).
  returned: always
  type: list
  elements: str
  sample: [server-1, server-2]
restarts:
  description: The servers whose scheduler would restart.
  returned: always
  type: list
  elements: str
  sample: [server-1]
summary:
  description: The summary line.
  returned: always
  type: str
  sample: 2 of 3 servers to change (2 restarts); 1 with nothing to do
'''
