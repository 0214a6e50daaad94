#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: pod_security_table
short_description: Print the pod security report as one plain table, and write it as JSON
version_added: 0.1.0
description:
  - Prints the result of M(baremetal.k3s.pod_security_report) (O(report)) on the controller as plain lines no wider than
    120 columns - a line per pod the API server said the level would refuse (namespace, pod and how many other pods
    share its reasons, its owner, phase), a line per namespace with nothing refused, exempt, or keeping its own
    C(pod-security.kubernetes.io/enforce) label; below the table each refused pod's reasons in the API server's words
    (wrapped, never cut), the notes, and a summary line.
  - With O(json_path), writes the same report as JSON to that file on the controller, replacing it atomically, as
    M(baremetal.k3s.status_table) does.
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
    details: Changes nothing on any host. O(json_path) is written in check mode too - it is the report asked for, on the controller.
  diff_mode:
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: all
options:
  report:
    description: The registered result of M(baremetal.k3s.pod_security_report).
    type: dict
    required: true
  json_path:
    description:
      - A file on the controller to write the report to as JSON (RV(level), RV(version), RV(namespaces),
        RV(missing_namespaces), RV(refused_pods), RV(summary)).
      - Its directory must exist. The file is replaced atomically.
    type: path
  fail_on_refused:
    description: Fail, after printing the table and writing O(json_path), when the level would refuse any pod.
    type: bool
    default: false
seealso:
  - module: baremetal.k3s.pod_security_report
  - module: baremetal.k3s.status_table
'''

EXAMPLES = r'''
- name: Ask the API server on the first server
  hosts: server[0]
  become: true
  tasks:
    - name: Which running pods would the restricted level refuse?
      baremetal.k3s.pod_security_report:
        kubectl: [/usr/local/bin/k3s, kubectl]
        level: restricted
      register: pod_security

    - name: Show the table and write /tmp/pod-security.json
      baremetal.k3s.pod_security_table:
        report: "{{ pod_security }}"
        json_path: /tmp/pod-security.json
'''

RETURN = r'''
level:
  description: The level evaluated.
  returned: success
  type: str
  sample: restricted
version:
  description: The version evaluated.
  returned: success
  type: str
  sample: latest
namespaces:
  description: The report's namespaces (M(baremetal.k3s.pod_security_report)'s RV(baremetal.k3s.pod_security_report#module:namespaces)).
  returned: success
  type: list
  elements: dict
  sample: []
missing_namespaces:
  description: Namespaces asked for that do not exist.
  returned: success
  type: list
  elements: str
  sample: []
refused_pods:
  description: How many pods the level would refuse.
  returned: success
  type: int
  sample: 2
summary:
  description: The report's last line.
  returned: success
  type: str
  sample: 2 pods in 1 of 5 namespaces would be refused at restricted:latest
json_path:
  description: The file written, empty when O(json_path) was not given.
  returned: success
  type: str
  sample: /tmp/pod-security.json
'''
