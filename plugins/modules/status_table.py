#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: status_table
short_description: Print the scheduler-extender status of many servers as one plain table, and write it as JSON
version_added: 0.1.0
description:
  - Collects, for each server in O(hosts), the results it registered from M(baremetal.k3s.k3s_info) and
    M(baremetal.k3s.extender_status), and the readiness ConfigMap as C(kubectl get configmap -o json --ignore-not-found)
    printed it (O(configmap)), into one report.
  - 'Prints the report on the controller as plain lines no wider than 120 columns: a table with one line per server
    (node, platform, scheduler start and change time in UTC, restarted, extender reachable, ready, listed in the
    readiness ConfigMap), the reason each server that is not ready gives, each drift with its cause, the readiness
    ConfigMap''s entries, and a summary line (C(N of M servers ready), C(; K drifted)). Yes and no are written out,
    unknown values are C(-), and a cell too long to fit (a long node name) is cut with an ellipsis.'
  - With O(json_path), writes the same report as JSON to that file on the controller, replacing it atomically.
  - Returns the same report.
  - This is an action plugin; it runs on the controller and sends nothing to the hosts. Run it once, on C(localhost).
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
    details: Changes nothing on any host. O(json_path) is written in check mode too - it is the report asked for, on the controller.
  diff_mode:
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: all
options:
  hosts:
    description:
      - The servers to report on, in the order to print them, for example C({{ groups['server'] }}).
      - Each host's results are read from its host variables O(k3s_info_var) and O(extender_status_var). A host without
        them (unreachable, failed before, or skipped) is still listed, with C(-) and the reason.
    type: list
    elements: str
    required: true
  k3s_info_var:
    description: The name under which each host registered its M(baremetal.k3s.k3s_info) result.
    type: str
    default: status_k3s
  extender_status_var:
    description: The name under which each host registered its M(baremetal.k3s.extender_status) result.
    type: str
    default: status_extender
  configmap:
    description:
      - The registered result of C(kubectl get configmap <name> -n <namespace> -o json --ignore-not-found)
        (M(ansible.builtin.command)), run on one server.
      - Empty or skipped - the ConfigMap was not read. An empty C(stdout) with C(rc=0) - the ConfigMap does not exist.
        A non-zero C(rc) - its C(stderr) is reported.
    type: dict
    default: {}
  configmap_name:
    description: The readiness ConfigMap's name, for the report.
    type: str
    default: extender-readiness
  configmap_namespace:
    description: The readiness ConfigMap's namespace, for the report.
    type: str
    default: default
  drift_var:
    description:
      - The name under which each host holds the role C(baremetal.k3s.scheduler_extender)'s drift finding (its entry point
        C(drift) sets C(scheduler_extender_drift), a list of C({cause, detail})).
      - A host without it is reported with drift unknown (C(-)).
    type: str
    default: scheduler_extender_drift
  readiness_expected:
    description:
      - Whether each server should have an up-to-date entry in the readiness ConfigMap (the role's
        C(scheduler_extender_publish_readiness)); then a missing or stale entry is drift (cause C(readiness)).
    type: bool
    default: true
  fail_on_drift:
    description: Fail, after printing the table and writing O(json_path), when any server drifted.
    type: bool
    default: false
  json_path:
    description:
      - A file on the controller to write the report to as JSON (see RV(nodes) and RV(readiness_configmap)).
      - Its directory must exist. The file is replaced atomically - a reader sees the old or the new report, never part of one.
    type: path
notes:
  - Times are shown in UTC to the second; the JSON keeps the modules' ISO 8601 values.
  - A node is matched to the readiness ConfigMap by its node name (RV(baremetal.k3s.extender_status#module:node_name)).
seealso:
  - module: baremetal.k3s.extender_status
  - module: baremetal.k3s.k3s_info
'''

EXAMPLES = r'''
- name: Read each server's status
  hosts: server
  become: true
  tasks:
    - name: Read how the scheduler runs here
      baremetal.k3s.k3s_info:
      register: status_k3s

    - name: Ask the scheduler and the extender
      baremetal.k3s.extender_status:
        platform: "{{ status_k3s.platform }}"
        url: http://127.0.0.1:8889
      register: status_extender
      when: status_k3s.installed

    - name: Read the readiness ConfigMap on the first server
      ansible.builtin.command:
        argv: "{{ status_k3s.kubectl + ['--kubeconfig', status_k3s.admin_kubeconfig, 'get', 'configmap', 'extender-readiness',
                 '-n', 'default', '-o', 'json', '--ignore-not-found'] }}"
      register: status_configmap
      changed_when: false
      check_mode: false
      when: inventory_hostname == ansible_play_hosts[0]

- name: Print them
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Show the table and write /tmp/status.json
      baremetal.k3s.status_table:
        hosts: "{{ groups['server'] }}"
        configmap: "{{ hostvars[groups['server'][0]].status_configmap | default({}) }}"
        json_path: /tmp/status.json
      register: status

    - name: Fail unless every server is ready
      ansible.builtin.assert:
        that: status.nodes | rejectattr('ready') | list | length == 0
        fail_msg: "{{ status.summary }}"
'''

RETURN = r'''
nodes:
  description: One entry per server, in the order of O(hosts).
  returned: success
  type: list
  elements: dict
  contains:
    node:
      description: The node name the modules saw (lower-case host name), else the inventory name.
      type: str
      sample: server-1
    host:
      description: The inventory name.
      type: str
      sample: server-1
    platform:
      description: V(k3s), V(rke2) or V(kubeadm); empty when none is installed or it is unknown.
      type: str
      sample: k3s
    scheduler_started_at:
      description: When the scheduler last started, ISO 8601 in UTC; empty when unknown.
      type: str
      sample: "2026-01-13T10:00:03.412207Z"
    changed_at:
      description: The time of the change the scheduler must have restarted after, ISO 8601 in UTC; empty when unknown.
      type: str
      sample: "2026-01-13T10:00:01.000000Z"
    restarted:
      description: The scheduler started at or after RV(nodes[].changed_at); V(null) when unknown.
      type: bool
      sample: true
    extender_reachable:
      description: The extender answered the probe; V(null) when not checked.
      type: bool
      sample: true
    ready:
      description: The server is ready (see RV(baremetal.k3s.extender_status#module:ready)); V(null) when not checked.
      type: bool
      sample: true
    in_readiness_configmap:
      description: RV(nodes[].node) has an entry in the readiness ConfigMap; V(false) also when the ConfigMap could not be read.
      type: bool
      sample: true
    drifted:
      description: Something on the server is no longer as C(baremetal.k3s.install_csi) left it; V(null) when not looked at.
      type: bool
      sample: false
    drift:
      description:
        - What drifted, each with its cause - C(flag) (nothing passes the scheduler config any more), C(config) (the
          scheduler config gone, or not holding the extender as the role writes it), C(restart) (the scheduler started
          before its files changed), C(readiness) (the node's readiness entry missing or stale).
      type: list
      elements: dict
      sample: [{cause: flag, detail: "the scheduler is given no config file: nothing passes ..."}]
    msg:
      description: The server's own summary, or why it was not checked.
      type: str
      sample: ready
readiness_configmap:
  description: The readiness ConfigMap.
  returned: success
  type: dict
  contains:
    namespace:
      description: Its namespace.
      type: str
      sample: default
    name:
      description: Its name.
      type: str
      sample: extender-readiness
    found:
      description: It exists and was read.
      type: bool
      sample: true
    nodes:
      description: The entries of its C(nodes.yaml), each C({node_name, kube_scheduler, restarted}).
      type: list
      elements: dict
      sample: [{node_name: server-1, kube_scheduler: k3s@server-1, restarted: true}]
    error:
      description: Why it could not be read or understood (also given as a warning); empty when all is well.
      type: str
      sample: "nodes.yaml is not valid YAML (line 2): could not find expected ':'"
summary:
  description: The report's last line without the note on time zones.
  returned: success
  type: str
  sample: 2 of 3 servers ready; 1 drifted
json_path:
  description: The file written, empty when O(json_path) was not given.
  returned: success
  type: str
  sample: /tmp/status.json
'''
