# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After baremetal.k3s.reset took agent-2 and server-2 out: what the real API server and etcd say of the cluster left."""

from __future__ import annotations

import json
import os

import testinfra

INVENTORY = os.environ['MOLECULE_INVENTORY_FILE']
KUBECTL = 'k3s kubectl --kubeconfig /etc/rancher/k3s/k3s.yaml '
FIRST = testinfra.get_host('ansible://bk3s-etcd-server-1', ansible_inventory=INVENTORY)


def _nodes():
    return {item['metadata']['name']: item for item in json.loads(FIRST.check_output(KUBECTL + 'get nodes -o json'))['items']}


def _ready(node):
    return any(cond['type'] == 'Ready' and cond['status'] == 'True' for cond in node['status']['conditions'])


def test_the_cluster_still_serves_on_the_server_that_stays():
    assert FIRST.check_output(KUBECTL + 'get --raw /readyz') == 'ok'


def test_the_nodes_that_stay_are_ready_and_the_reset_ones_are_gone():
    nodes = _nodes()
    assert sorted(nodes) == ['bk3s-etcd-agent-1', 'bk3s-etcd-server-1', 'bk3s-etcd-server-3'], sorted(nodes)
    assert all(_ready(node) for node in nodes.values()), {name: n['status']['conditions'] for name, n in nodes.items()}


def test_the_reset_server_left_etcd_and_two_voters_serve():
    """Deleting server-2's Node took its member out of etcd (k3s's member controller): two voters, no learner."""
    members = json.loads(FIRST.check_output('curl -sfk https://127.0.0.1:9345/db/info'))['members']
    names = sorted(m.get('name', '') for m in members)
    assert len(members) == 2 and not any(m.get('isLearner') for m in members), members
    assert [n.rsplit('-', 1)[0] for n in names] == ['bk3s-etcd-server-1', 'bk3s-etcd-server-3'], names


def test_the_reset_drained_and_deleted_each_node_through_the_api():
    log = open(os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'reset.log'), encoding='utf-8').read()
    for name in ('bk3s-etcd-agent-2', 'bk3s-etcd-server-2'):
        assert 'node/%s cordoned' % name in log and 'node "%s" deleted' % name in log, log[-4000:]
