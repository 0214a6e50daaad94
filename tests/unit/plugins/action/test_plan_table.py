# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The plan_table action: reads each host's plan from hostvars, prints one table, fails on any refusal."""

from __future__ import annotations

from unittest.mock import MagicMock

import pytest

from ansible.errors import AnsibleActionFail

from ansible_collections.baremetal.k3s.plugins.action import plan_table
from ansible_collections.baremetal.k3s.plugins.plugin_utils import _table_action

CONFIG = '/etc/rancher/k3s/kube-scheduler/config.yaml'


class FakeDisplay:
    def __init__(self):
        self.printed = []

    def display(self, msg, *args, **kwargs):  # pylint: disable=unused-argument
        self.printed.append(msg)


class FakeTask:
    def __init__(self, args):
        self.args = args
        self.check_mode = False
        self.async_val = 0
        self.action = 'baremetal.k3s.plan_table'


@pytest.fixture
def fake_display(monkeypatch):
    fake = FakeDisplay()
    monkeypatch.setattr(_table_action, 'display', fake)
    return fake


def plan(server, **extra):
    value = {'server': server, 'platform': 'k3s', 'node_role': 'server', 'state': 'present',
             'files': [{'path': CONFIG, 'action': 'created'}], 'restart': True, 'why': [], 'noop': False, 'error': ''}
    value.update(extra)
    return value


def run(args, hostvars):
    connection = MagicMock()
    connection._shell.tmpdir = None
    action = plan_table.ActionModule(FakeTask(args), connection, MagicMock(), MagicMock(), None, None)
    return action.run(task_vars={'hostvars': hostvars})


def test_prints_one_table_and_passes_when_every_plan_is_good(fake_display):
    result = run({'hosts': ['s1', 's2'], 'title': 'install_csi'},
                 {'s1': {'scheduler_extender_plan': plan('s1')},
                  's2': {'scheduler_extender_plan': plan('s2', files=[], restart=False, noop=True)}})
    assert not result.get('failed'), result
    assert len(fake_display.printed) == 1
    lines = fake_display.printed[0].splitlines()
    assert lines[0] == 'install_csi'
    assert lines[2].split()[:5] == ['s1', 'k3s', 'created', CONFIG, 'yes']
    assert result['to_change'] == ['s1'] and result['restarts'] == ['s1']


def test_fails_with_every_refusal_and_missing_plan(fake_display):
    result = run({'hosts': ['s1', 's2', 's3']},
                 {'s1': {'scheduler_extender_plan': plan('s1')},
                  's2': {'scheduler_extender_plan': plan('s2', error='bad YAML')},
                  's3': {'inventory_hostname': 's3'}})
    assert result['failed'] is True
    assert result['refused'] == ['s2', 's3']
    assert 's2: bad YAML' in result['msg'] and 's3: no plan' in result['msg']
    assert 'REFUSED: bad YAML' in fake_display.printed[0]


def test_unknown_option_fails():
    with pytest.raises(AnsibleActionFail, match='colour'):
        run({'hosts': ['s1'], 'colour': 'red'}, {})
