# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pods scheduled by the real kube-scheduler through the reference extender."""

from __future__ import annotations

import json
import time

import bk3s_checks as c  # pylint: disable=import-error

NODES = ['worker-a', 'worker-b']  # the reference extender scores nodes in name order: worker-a wins


def _apply(host, obj):
    # check_output quotes each argument for the shell itself
    host.check_output("printf '%%s' %s | " + c.KUBECTL + 'apply -f -', json.dumps(obj))


def _nodes(host):
    host.run(c.KUBECTL + 'create serviceaccount default')  # no controller-manager: make it by hand
    for name in NODES:
        _apply(host, {'apiVersion': 'v1', 'kind': 'Node', 'metadata': {'name': name, 'labels': {'bk3s': 'test'}}})
        status = {'status': {'capacity': {'cpu': '8', 'memory': '16Gi', 'pods': '110'},
                             'allocatable': {'cpu': '8', 'memory': '16Gi', 'pods': '110'},
                             'conditions': [{'type': 'Ready', 'status': 'True', 'reason': 'KubeletReady',
                                             'message': 'set by the test (no kubelet)'}]}}
        host.check_output(c.KUBECTL + "patch node %s --subresource=status --type=merge -p %s", name, json.dumps(status))
        # the API server's TaintNodesByCondition admission taints every new node not-ready; a kubelet would clear it
        host.run(c.KUBECTL + 'taint nodes %s node.kubernetes.io/not-ready:NoSchedule-', name)


def _pod(host, name):
    _apply(host, {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name, 'namespace': 'default'},
                  'spec': {'automountServiceAccountToken': False, 'nodeSelector': {'bk3s': 'test'},
                           'containers': [{'name': 'c', 'image': 'registry.invalid/pause:1'}]}})


def _bound_node(host, name, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        pod = c.kubectl_json(host, 'get pod -n default %s' % name)
        if pod['spec'].get('nodeName'):
            return pod['spec']['nodeName']
        time.sleep(1)
    return None


def test_pod_bound_where_the_extender_chose(host):
    _nodes(host)
    start = time.time()
    _pod(host, 'through-extender')
    assert _bound_node(host, 'through-extender') == 'worker-a'
    print('pod bound %.1fs after creation' % (time.time() - start))
    calls = [x for x in c.extender_calls(host) if (x.get('pod') or '').endswith('through-extender')]
    verbs = {x['verb'] for x in calls}
    assert {'filter', 'prioritize'} <= verbs, calls
    (flt,) = [x for x in calls if x['verb'] == 'filter'][:1]
    assert sorted(flt['nodes']) == NODES


def test_extender_down_and_ignorable_still_schedules(host):
    host.check_output('systemctl stop reference-extender')
    try:
        _pod(host, 'extender-down')
        assert _bound_node(host, 'extender-down') in NODES
    finally:
        host.check_output('systemctl start reference-extender')
