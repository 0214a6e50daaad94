# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The roles' preflight.yml, run by ansible-playbook on localhost (read-only modules): one module run reads the node
and, where the preflight phase runs, checks it. The read runs whatever the run's tags; the checks exactly where the
preflight phase's task ran before it was folded in (k3s_*_preflight, and a task tagged preflight there selected by
--tags, inherited tags included, and not skipped by --skip-tags). The checks' result is _k3s_agent_preflight /
_k3s_server_preflight, the read _k3s_agent_node / _k3s_server_node."""

from __future__ import annotations

import pytest

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Caller
      tags: [caller]
      block:
        - name: Read and check, as site.yml's first play does
          ansible.builtin.include_role:
            name: baremetal.k3s.k3s_%(role)s
            tasks_from: preflight.yml
          vars:
            k3s_node_preflight_fail: false  # the checks report (this machine may have a port in use)
            k3s_server_group: all
          tags: [always]

    - name: Show
      ansible.builtin.debug:
        msg:
          checked: "{{ _k3s_%(role)s_preflight.problems is defined }}"
          read: "{{ _k3s_%(role)s_node.installed is defined and _k3s_%(role)s_node.service == '%(service)s' }}"
          hostname: "{{ _k3s_%(role)s_preflight.hostname | length > 0 }}"
      tags: [always]
"""


@pytest.mark.parametrize('args, extra, checked', [
    pytest.param([], {}, True, id='all'),
    pytest.param(['--tags', 'preflight'], {}, True, id='tags-preflight'),
    pytest.param(['--tags', 'configure'], {}, False, id='tags-configure'),
    pytest.param(['--skip-tags', 'preflight'], {}, False, id='skip-preflight'),
    pytest.param(['--tags', 'tagged'], {}, True, id='tags-tagged'),
    pytest.param(['--tags', 'untagged'], {}, False, id='tags-untagged'),
    # tags the role inherits from its caller select its preflight phase as they did
    pytest.param(['--tags', 'caller'], {}, True, id='tags-inherited'),
    pytest.param(['--tags', 'caller', '--skip-tags', 'preflight'], {}, False, id='tags-inherited-skip-preflight'),
    pytest.param([], {'k3s_agent_preflight': False}, False, id='preflight-false'),
])
def test_the_read_always_the_checks_where_the_preflight_phase_runs(playbook, args, extra, checked):
    rc, results, err = playbook(PLAYBOOK % {'role': 'agent', 'service': 'k3s-agent'}, extra, args=args)
    assert rc == 0, err
    assert results['Show']['msg'] == {'checked': checked, 'read': True, 'hostname': True}, results


@pytest.mark.parametrize('args, checked', [([], True), (['--skip-tags', 'preflight'], False)])
def test_the_server_reads_once_and_checks_in_the_same_run(playbook, args, checked):
    rc, results, err = playbook(PLAYBOOK % {'role': 'server', 'service': 'k3s'}, {}, args=args)
    assert rc == 0, err
    assert results['Show']['msg'] == {'checked': checked, 'read': True, 'hostname': True}, results
    # one module run on the node for both: the k3s_info task and the include of the preflight are gone
    assert 'Read what runs on this node now' not in results
    assert not [name for name in results if name.startswith('Check this host before anything changes')], list(results)
