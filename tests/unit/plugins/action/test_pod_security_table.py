# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The pod_security_table action: prints the report, writes it as JSON through the status report's write."""

from __future__ import annotations

import json

from unittest.mock import MagicMock

import pytest

from ansible_collections.baremetal.k3s.plugins.action import pod_security_table
from ansible_collections.baremetal.k3s.plugins.plugin_utils import _table_action
from ansible_collections.baremetal.k3s.tests.unit.plugins.action.test_status_table import FakeDisplay
from ansible_collections.baremetal.k3s.tests.unit.plugins.plugin_utils.test__pod_security_table import REPORT


class FakeTask:
    def __init__(self, args):
        self.args = args
        self.check_mode = False
        self.async_val = 0
        self.action = 'baremetal.k3s.pod_security_table'


@pytest.fixture(name='printed')
def fixture_printed(monkeypatch):
    fake = FakeDisplay()
    monkeypatch.setattr(_table_action, 'display', fake)
    return fake


def run(args):
    connection = MagicMock()
    connection._shell.tmpdir = None
    action = pod_security_table.ActionModule(FakeTask(args), connection, MagicMock(), MagicMock(), None, None)
    return action.run(task_vars={})


def test_prints_and_writes_the_json(printed, tmp_path):
    path = str(tmp_path / 'ps.json')
    result = run({'report': dict(REPORT, changed=False, invocation={'module_args': {}}), 'json_path': path})
    assert not result.get('failed') and result['refused_pods'] == 3 and result['json_path'] == path
    with open(path) as f:
        assert json.load(f) == {k: REPORT[k] for k in pod_security_table._pod_security_table.data(REPORT)}
    assert printed.lines[-1] == REPORT['summary']


def test_fails_on_refused_when_asked(printed):
    result = run({'report': REPORT, 'fail_on_refused': True})
    assert result['failed'] and result['msg'] == REPORT['summary'] and printed.lines


def test_a_report_that_did_not_run_is_said(printed):
    result = run({'report': {'failed': True, 'msg': 'kubectl get pods --all-namespaces failed: Unauthorized'}})
    assert result['failed'] and 'no pod security report to print: kubectl get pods' in result['msg']
    assert printed.lines == []


def test_a_json_path_in_a_missing_directory_is_refused(printed, tmp_path):
    result = run({'report': REPORT, 'json_path': str(tmp_path / 'nope' / 'ps.json')})
    assert result['failed'] and 'does not exist on the controller' in result['msg']
