# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""k3s_node's not_ready.yml (a ready wait that timed out), run by ansible-playbook on localhost: the node's own read
(k3s_info's pending_msg and missing_token_files, given here as extra vars in place of the node's answer) puts the cause
first - k3s still runs the process from before its files changed, or it waits for a token file - and the wait's
symptom after it; with neither, the symptom alone."""

from __future__ import annotations

import pytest

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: A wait timed out
      ansible.builtin.include_role:
        name: baremetal.k3s.k3s_node
        tasks_from: not_ready
      vars:
        _k3s_node_service: {service: bk3s-test-no-such-service, init: openrc}
        k3s_node_name: server-1
        k3s_node_reason: node server-1 has no EtcdIsVoter condition yet
"""
SYMPTOM = 'node server-1 has no EtcdIsVoter condition yet'
PENDING = ('k3s still runs the process started at 2026-01-25T03:15:00.120000Z (pid 812), older than what it reads at its '
           'start: /etc/rancher/k3s/config.yaml.d/40-baremetal-k3s-server.yaml changed after k3s started.')


@pytest.mark.parametrize('info, first, waits_for', [
    ({'pending_msg': PENDING, 'missing_token_files': []}, PENDING, 'see the log below'),
    ({'pending_msg': '', 'missing_token_files': ['/etc/rancher/k3s/cluster-token']},
     'k3s waits for its token file /etc/rancher/k3s/cluster-token, which does not exist.', 'its token file'),
    ({'pending_msg': '', 'missing_token_files': []}, SYMPTOM, 'see the log below'),
], ids=['older than its files', 'token file missing', 'no cause known'])
def test_the_cause_comes_before_the_symptom(playbook, info, first, waits_for):
    rc, results, err = playbook(PLAYBOOK, {'_k3s_node_not_ready_info': info})
    assert rc != 0, err
    msg = results['Fail with them']['msg']
    assert msg['reason'].startswith(first), msg
    assert SYMPTOM in msg['reason'] and msg['waits_for'].startswith(waits_for), msg
