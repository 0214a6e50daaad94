# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The status_table action: reads hostvars, prints the table, writes the JSON file atomically."""

from __future__ import annotations

import json
import os
import stat

from unittest.mock import MagicMock

import pytest

from ansible_collections.baremetal.k3s.plugins.action import status_table
from ansible_collections.baremetal.k3s.plugins.plugin_utils import _table_action
from ansible_collections.baremetal.k3s.plugins.plugin_utils import _report_file

HOSTS = ['server-1', 'server-2', 'server-3']


class FakeDisplay:
    """Stands in for the module's Display(): records what would be printed."""

    def __init__(self):
        self.printed = []

    def display(self, msg, *args, **kwargs):  # pylint: disable=unused-argument
        self.printed.append(msg)

    @property
    def lines(self):
        return '\n'.join(self.printed).splitlines()


class FakeTask:
    def __init__(self, args, check_mode=False):
        self.args = args
        self.check_mode = check_mode
        self.async_val = 0
        self.action = 'baremetal.k3s.status_table'


def hostvars():
    ready = {'installed': True, 'platform': 'k3s', 'node_name': 'server-1'}
    status = {'node_name': 'server-1', 'ready': True, 'restarted': True, 'extender_reachable': True, 'msg': 'ready',
              'scheduler_started_at': '2026-01-13T10:00:03.412207Z', 'changed_at': '2026-01-13T10:00:01.000000Z'}
    return {
        'server-1': {'status_k3s': ready, 'status_extender': status, 'inventory_hostname': 'server-1'},
        'server-2': {'status_k3s': dict(ready, node_name='server-2', platform='rke2'),
                     'status_extender': dict(status, node_name='server-2', ready=False, restarted=False,
                                             msg='not ready: the scheduler started before the change')},
        # server-3: unreachable, nothing registered
        'server-3': {'inventory_hostname': 'server-3'},
    }


CONFIGMAP = {'changed': False, 'rc': 0, 'stderr': '', 'stdout': json.dumps({
    'kind': 'ConfigMap', 'metadata': {'name': 'extender-readiness', 'namespace': 'default'},
    'data': {'nodes.yaml': 'nodes:\n- kube_scheduler: k3s@server-1\n  node_name: server-1\n  restarted: true\n'}})}


@pytest.fixture
def fake_display(monkeypatch):
    fake = FakeDisplay()
    monkeypatch.setattr(_table_action, 'display', fake)
    return fake


def run(args, task_vars=None, check_mode=False):
    connection = MagicMock()
    connection._shell.tmpdir = None
    action = status_table.ActionModule(FakeTask(args, check_mode), connection, MagicMock(), MagicMock(), None, None)
    return action.run(task_vars={'hostvars': hostvars()} if task_vars is None else task_vars)


def leftovers(directory):
    return sorted(n for n in os.listdir(str(directory)) if n.endswith('.tmp'))


def test_prints_the_table_once_and_returns_the_report(fake_display):
    result = run({'hosts': HOSTS, 'configmap': CONFIGMAP})
    assert len(fake_display.printed) == 1, 'one display call, so the lines arrive together'
    lines = fake_display.lines
    assert lines[0].split()[:2] == ['NODE', 'PLATFORM']
    assert lines[1].split() == ['server-1', 'k3s', '2026-01-13', '10:00:03', '2026-01-13', '10:00:01', 'yes', 'yes', 'yes', 'yes']
    assert lines[3].split() == ['server-3', '-', '-', '-', '-', '-', '-', 'no']
    assert '  server-2: the scheduler started before the change' in lines
    assert lines[-1] == '1 of 3 servers ready (times in UTC)'
    assert max(len(line) for line in lines) <= 120
    assert result['changed'] is False and not result.get('failed')
    assert [n['node'] for n in result['nodes']] == HOSTS
    assert result['readiness_configmap']['found'] is True
    assert result['summary'] == '1 of 3 servers ready'
    assert result['json_path'] == '' and 'warnings' not in result


def test_writes_the_same_data_as_json(fake_display, tmp_path):
    path = tmp_path / 'status.json'
    result = run({'hosts': HOSTS, 'configmap': CONFIGMAP, 'json_path': str(path)})
    data = json.loads(path.read_text())
    assert data['nodes'] == result['nodes'] and data['readiness_configmap'] == result['readiness_configmap']
    assert data['nodes'][0]['ready'] is True and data['nodes'][0]['restarted'] is True
    assert data['nodes'][1]['ready'] is False and data['nodes'][1]['restarted'] is False
    assert data['nodes'][2]['ready'] is None and data['nodes'][2]['in_readiness_configmap'] is False
    assert data['readiness_configmap'] == {'namespace': 'default', 'name': 'extender-readiness', 'found': True, 'error': '',
                                           'nodes': [{'node_name': 'server-1', 'kube_scheduler': 'k3s@server-1', 'restarted': True}]}
    assert result['json_path'] == str(path)
    assert leftovers(tmp_path) == []
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    assert fake_display.printed


def test_json_is_written_in_check_mode_too(fake_display, tmp_path):
    path = tmp_path / 'status.json'
    result = run({'hosts': HOSTS, 'configmap': CONFIGMAP, 'json_path': str(path)}, check_mode=True)
    assert result['changed'] is False and result['json_path'] == str(path)
    # the whole report, as the run returns it and as a run outside check mode writes it
    data = json.loads(path.read_text())
    assert data == {'nodes': result['nodes'], 'readiness_configmap': result['readiness_configmap'],
                    'summary': result['summary']}
    assert [n['node'] for n in data['nodes']] == HOSTS and data['summary'] == '1 of 3 servers ready'
    assert data['readiness_configmap']['found'] is True
    normal = tmp_path / 'normal.json'
    run({'hosts': HOSTS, 'configmap': CONFIGMAP, 'json_path': str(normal)})
    assert json.loads(normal.read_text()) == data
    assert leftovers(tmp_path) == []


def test_existing_json_keeps_its_mode(fake_display, tmp_path):
    path = tmp_path / 'status.json'
    path.write_text('old')
    path.chmod(0o640)
    run({'hosts': HOSTS, 'json_path': str(path)})
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert json.loads(path.read_text())['nodes']


def test_missing_directory_is_a_clear_error(fake_display, tmp_path):
    path = tmp_path / 'no-such-dir' / 'status.json'
    result = run({'hosts': HOSTS, 'json_path': str(path)})
    assert result['failed'] is True and result['changed'] is False
    assert result['msg'] == ('json_path %s: directory %s does not exist on the controller; create it or give another path'
                             % (path, path.parent))
    assert not path.parent.exists()
    # the table was still printed: the error is about the file only
    assert fake_display.lines[-1] == '1 of 3 servers ready (times in UTC)'


def test_directory_as_json_path_is_a_clear_error(fake_display, tmp_path):
    result = run({'hosts': HOSTS, 'json_path': str(tmp_path)})
    assert result['failed'] is True
    assert result['msg'] == 'json_path %s is a directory; give a file name, e.g. %s' % (tmp_path, tmp_path / 'status.json')


def test_unwritable_directory_is_a_clear_error(fake_display, tmp_path, monkeypatch):
    def denied(*args, **kwargs):
        raise PermissionError(13, 'Permission denied')

    # as root a mode-0500 directory would still be writable, so refuse the way the kernel would
    monkeypatch.setattr(_report_file.tempfile, 'mkstemp', denied)
    result = run({'hosts': HOSTS, 'json_path': str(tmp_path / 'status.json')})
    assert result['failed'] is True
    assert result['msg'] == ('json_path %s: cannot create a file in %s: Permission denied; give a writable directory'
                             % (tmp_path / 'status.json', tmp_path))
    assert os.listdir(str(tmp_path)) == []


def test_failed_write_leaves_the_old_file_and_no_partial_one(fake_display, tmp_path, monkeypatch):
    path = tmp_path / 'status.json'
    path.write_text('{"old": true}\n')

    def full_disk(*args, **kwargs):
        raise OSError(28, 'No space left on device')

    monkeypatch.setattr(_report_file.os, 'fsync', full_disk)
    result = run({'hosts': HOSTS, 'json_path': str(path)})
    assert result['failed'] is True
    assert result['msg'] == 'json_path %s: cannot write it: No space left on device' % path
    assert path.read_text() == '{"old": true}\n'
    assert leftovers(tmp_path) == []


def test_interrupted_write_leaves_no_partial_file(fake_display, tmp_path, monkeypatch):
    path = tmp_path / 'status.json'

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_report_file.os, 'replace', interrupted)
    with pytest.raises(KeyboardInterrupt):
        run({'hosts': HOSTS, 'json_path': str(path)})
    assert not path.exists() and leftovers(tmp_path) == []


def test_unreadable_configmap_becomes_a_warning(fake_display):
    configmap = {'rc': 1, 'stdout': '', 'stderr': 'error: the server has asked for the client to provide credentials\n'}
    result = run({'hosts': HOSTS, 'configmap': configmap, 'configmap_namespace': 'csi'})
    assert result['warnings'] == ['readiness ConfigMap csi/extender-readiness: kubectl failed (rc=1): '
                                  'error: the server has asked for the client to provide credentials']
    assert not result.get('failed')
    lines = fake_display.lines
    title = [i for i, line in enumerate(lines) if line.startswith('readiness ConfigMap')][0]
    text = ' '.join(line.strip() for line in lines[title:title + 2])  # wrapped to fit 120 columns
    assert text == ('readiness ConfigMap csi/extender-readiness: unknown (kubectl failed (rc=1): error: the server has asked '
                    'for the client to provide credentials)')


def test_other_variable_names_and_unknown_hosts(fake_display):
    variables = {'a': {'k': {'installed': True, 'platform': 'kubeadm', 'node_name': 'a'},
                       'e': {'node_name': 'a', 'ready': True, 'restarted': None, 'extender_reachable': True, 'msg': 'ready'}}}
    result = run({'hosts': ['a', 'ghost'], 'k3s_info_var': 'k', 'extender_status_var': 'e'}, task_vars={'hostvars': variables})
    assert [(n['node'], n['platform'], n['ready'], n['restarted']) for n in result['nodes']] == \
        [('a', 'kubeadm', True, None), ('ghost', '', None, None)]


def test_missing_hosts_is_refused(fake_display):
    result = run({'configmap': CONFIGMAP})
    assert result['failed'] is True
    assert 'missing required arguments: hosts' in result['msg']
    assert fake_display.printed == []


def test_unknown_option_is_refused(fake_display):
    with pytest.raises(Exception, match='Invalid options for baremetal.k3s.status_table: json'):
        run({'hosts': HOSTS, 'json': '/tmp/x.json'})


def test_drift_from_the_roles_finding_fails_only_when_asked(fake_display, tmp_path):
    variables = hostvars()
    variables['server-1']['scheduler_extender_drift'] = [{'cause': 'config', 'detail': 'edited'}]
    variables['server-2']['scheduler_extender_drift'] = []
    path = tmp_path / 'status.json'
    args = {'hosts': HOSTS, 'configmap': CONFIGMAP, 'json_path': str(path)}
    result = run(args, task_vars={'hostvars': variables})
    assert not result.get('failed') and result['summary'] == '1 of 3 servers ready; 2 drifted'
    rows = {n['node']: n for n in result['nodes']}
    # server-2: the scheduler started before the change, and its readiness entry is missing
    assert [d['cause'] for d in rows['server-2']['drift']] == ['restart', 'readiness']
    assert rows['server-1']['drift'] == [{'cause': 'config', 'detail': 'edited'}]
    assert rows['server-3']['drifted'] is None
    result = run(dict(args, fail_on_drift=True), task_vars={'hostvars': variables})
    assert result['failed'] and result['msg'].startswith('drift on 2 of 3 servers (server-1, server-2): run baremetal.k3s.install_csi')
    # the table and the JSON are there all the same
    assert '  server-1: config: edited' in fake_display.lines
    assert json.loads(path.read_text())['nodes'][0]['drift'] == [{'cause': 'config', 'detail': 'edited'}]
