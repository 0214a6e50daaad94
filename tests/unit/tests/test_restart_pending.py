# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""k3s_node's restart entry point, run by ansible-playbook on localhost (under --check, a service not installed: the
handlers' stop and start are skipped, their tasks still show that they were notified): what an earlier run wrote and
did not apply (k3s_info's pending) notifies the one restart, with the reason; nothing pending notifies nothing."""

from __future__ import annotations

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Restart entry point
      ansible.builtin.include_role:
        name: baremetal.k3s.k3s_node
        tasks_from: restart
      vars:
        _k3s_node_service: {service: k3s, init: openrc}
        k3s_node_installed: false
"""
PENDING = [{'path': '/etc/rancher/k3s/config.yaml.d/40-baremetal-k3s-server.yaml',
            'changed_at': '2026-01-25T03:16:02.000000Z', 'reason': 'changed after k3s started'}]
RESTART = 'Restart k3s for what an earlier run wrote and did not apply (k3s runs older than its files)'
HANDLER = 'Note the node\'s clock once the old process is gone'


def test_pending_restarts_once_with_the_reason(playbook):
    rc, results, err = playbook(PLAYBOOK, {'k3s_node_pending': PENDING, 'k3s_node_pending_msg': 'k3s still runs ...'},
                                args=['--check'])
    assert rc == 0, err
    assert results[RESTART]['changed'] is True and results[RESTART]['msg'] == 'k3s still runs ...'
    assert HANDLER in results, 'the restart handlers were notified'


def test_nothing_pending_restarts_nothing(playbook):
    rc, results, err = playbook(PLAYBOOK, {'k3s_node_pending': []}, args=['--check'])
    assert rc == 0, err
    assert results[RESTART].get('skipped') is True and HANDLER not in results


CLOCK = 'Note the node\'s clock before a restart (a Ready older than it is the previous start\'s)'
RESTARTED = 'Note whether this run restarted or started k3s, and since when a heartbeat is the new start\'s'


def test_the_clock_is_noted_only_where_the_start_can_start_k3s(playbook):
    """k3s ran at the read (k3s_node_running) and nothing is pending: no handler restarts it and the start finds it
    running, so the clock before it is not read on the node; k3s not running at the read: it is (a run that installs
    or starts k3s)."""
    rc, results, err = playbook(PLAYBOOK, {'k3s_node_pending': [], 'k3s_node_running': True}, args=['--check'])
    assert rc == 0, err
    assert results[CLOCK].get('skipped') is True and HANDLER not in results
    assert results[RESTARTED]['ansible_facts'] == {'_k3s_node_restarted': False, '_k3s_node_since': ''}
    rc, results, err = playbook(PLAYBOOK, {'k3s_node_pending': [], 'k3s_node_running': False}, args=['--check'])
    assert rc == 0, err
    assert results[CLOCK].get('skipped') is not True and results[CLOCK]['stdout'].isdigit()
    assert str(results[RESTARTED]['ansible_facts']['_k3s_node_since']) == results[CLOCK]['stdout']


START = 'Keep k3s enabled and running (openrc)'


def test_the_start_is_not_run_where_the_read_found_k3s_running_and_enabled(playbook):
    """A k3s that ran and was enabled when this run read the node: the start could change nothing, so it is not run
    (one module run fewer per node on a re-run); running but not enabled, it is run (it enables k3s)."""
    play = PLAYBOOK.replace('k3s_node_installed: false', 'k3s_node_installed: true')
    rc, results, err = playbook(play, {'k3s_node_pending': [], 'k3s_node_running': True, 'k3s_node_enabled': True},
                                args=['--check'])
    assert rc == 0, err
    assert results[START].get('skipped') is True
    assert results[RESTARTED]['ansible_facts'] == {'_k3s_node_restarted': False, '_k3s_node_since': ''}
    rc, results, err = playbook(play, {'k3s_node_pending': [], 'k3s_node_running': True, 'k3s_node_enabled': False},
                                args=['--check'])
    assert results[START].get('skipped') is not True, 'a k3s not enabled at the read is enabled by the start'
