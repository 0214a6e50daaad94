# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""k3s_backup's restore_nodes.yml (the end of a restore), run by ansible-playbook on localhost: the restored API's
Nodes (a kubectl that prints them), and the agents as k3s_info reads them there (given as extra vars in place of the
nodes' answers). An agent whose Node the restored datastore does not know is restarted (here its service cannot be:
that is said) or, with k3s_backup_restart_unknown_nodes=false, named with what to do; an agent it knows is left alone;
one that cannot be reached is named; a kubectl that fails leaves every agent unchecked and says so. The restore never
fails for it."""

from __future__ import annotations

import pytest

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: After the restore
      ansible.builtin.include_role:
        name: baremetal.k3s.k3s_backup
        tasks_from: restore_nodes
      vars:
        _k3s_backup_others: [agent-1, agent-2, agent-3]
    - name: Show it
      ansible.builtin.debug:
        msg: "{{ {'nodes': k3s_backup_unknown_nodes, 'report': k3s_backup_nodes_report} }}"
"""
INVENTORY = """
[agent]
agent-1 ansible_connection=local
agent-2 ansible_connection=local
agent-3 ansible_connection=local
"""


def _agent(host, service='bk3s-test-no-such-agent'):
    return {'item': host, 'installed': True, 'node_name': host, 'service': service, 'init': 'systemd', 'changed': False}


@pytest.fixture(name='run')
def fixture_run(tmp_path, playbook):
    inventory = tmp_path / 'inventory.ini'
    inventory.write_text(INVENTORY)

    def run(nodes_known, rc=0, **extra):
        kubectl = tmp_path / 'kubectl'
        kubectl.write_text('#!/bin/sh\nprintf "%s"\necho "the API is gone" >&2\nexit %d\n'
                           % (''.join(n + '\\n' for n in nodes_known), rc))
        kubectl.chmod(0o755)
        others = {'results': [_agent('agent-1'), _agent('agent-2'), {'item': 'agent-3', 'unreachable': True,
                                                                     'msg': 'ssh: no route to host'}]}
        variables = {'_k3s_backup_node': {'kubectl': [str(kubectl)], 'admin_kubeconfig': '/dev/null'},
                     '_k3s_backup_other_nodes': others, 'k3s_backup_ready_timeout': 5}
        variables.update(extra)
        code, results, err = playbook(PLAYBOOK, variables, args=['-i', str(inventory)])
        assert code == 0, err
        return results['Show it']['msg']
    return run


def test_an_agent_the_restored_datastore_does_not_know_is_restarted(run):
    out = run(['server-1', 'agent-1'])
    assert [(n['host'], n['node_name']) for n in out['nodes']] == [('agent-2', 'agent-2')]
    assert out['nodes'][0]['outcome'].startswith('not restarted: bk3s-test-no-such-agent could not be restarted there (')
    assert out['report'].startswith('agent-2 (Node agent-2) was not in the restored datastore: not restarted: ')
    assert out['report'].endswith('; not reached or read, so not checked: agent-3'), out['report']


def test_without_the_restart_it_is_named_with_what_to_do(run):
    out = run(['server-1', 'agent-1'], k3s_backup_restart_unknown_nodes=False)
    assert out['report'] == ('agent-2 (Node agent-2) was not in the restored datastore: not restarted '
                             '(k3s_backup_restart_unknown_nodes is false): restart bk3s-test-no-such-agent there, or run '
                             'baremetal.k3s.site on it, so that it registers again; not reached or read, so not checked: '
                             'agent-3')


def test_every_agent_known_is_left_alone(run):
    out = run(['server-1', 'agent-1', 'agent-2'])
    assert out['nodes'] == []
    assert out['report'] == 'not reached or read, so not checked: agent-3; nodes the restored datastore did not know: none'


def test_nodes_that_cannot_be_listed_leave_the_agents_unchecked_and_say_so(run):
    out = run([], rc=1)
    assert out['nodes'] == []
    assert out['report'].startswith('the Nodes could not be listed on the restored API (the API is gone): the other '
                                    'nodes were not checked'), out['report']
