# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of extender_status: its main() on fake_node's tree with fake clocks, and status() with fake network probes."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import ssl
import subprocess
import threading

import pytest

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.baremetal.k3s.plugins.module_utils import _extender_status
from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.modules import extender_status

from ansible_collections.baremetal.k3s.tests.unit.plugins.module_utils.test__readiness import FakeApi, entry
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import BOOT, FakeNode
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_ok, run_module

BASE = 1768298400  # 2026-01-13T10:00:00Z
_REF = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'integration', 'extender', 'reference_extender.py')
_spec = importlib.util.spec_from_file_location('reference_extender', os.path.abspath(_REF))
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)
CA_ON_NODE = '/var/lib/rancher/k3s/server/tls/server-ca.crt'
REAL_NODE_VIEW = _io.node_view  # the module's own, before a node fixture puts its fake in


class FakeClock:
    """Booted 1000 s before BASE; sleep() advances time instantly."""

    def __init__(self):
        self.t = 0.0
        self.sleeps = []
        self.after_sleep = None

    def realtime(self):
        return BASE + self.t

    def monotonic(self):
        return 1000.0 + self.t

    def boottime(self):
        return 1000.0 + self.t

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.t += seconds
        if self.after_sleep:
            self.after_sleep(self.t)


def show(active='active', sub='running', mono_s=990, pid=2211, n=0, load='loaded'):
    return ('LoadState=%s\nActiveState=%s\nSubState=%s\nMainPID=%d\nExecMainStartTimestamp=Tue 2026-01-13 09:59:50 UTC\n'
            'ExecMainStartTimestampMonotonic=%d\nActiveEnterTimestampMonotonic=%d\nNRestarts=%d\n'
            % (load, active, sub, pid, mono_s * 10 ** 6, mono_s * 10 ** 6, n))


class Node(FakeNode):
    """fake_node's tree, booted 1000 s before BASE (/proc/stat and the clocks), systemd running;
    ``systemctl show`` answers ``show()``, ``journalctl`` ``journal``, ``crictl ps`` ``crictl`` once set.
    Every command run is in ``calls``."""

    def __init__(self, root, monkeypatch):
        super().__init__(root, monkeypatch)
        self.clock = FakeClock()
        self.hostname = 'Node-1'
        self.units = None  # systemctl answers from self.show, not fake_node's units
        self.show = show
        self.journal = 'line 1\nline 2\nline 3\n'
        self._crictl = None
        self.commands['systemctl'] = lambda argv: (0, self.show(), '')
        self.commands['journalctl'] = lambda argv: (0, self.journal, '')
        self.write('/proc/stat', 'btime %d\n' % (BASE - 1000))
        for d in ('/run/systemd/system', '/etc/init.d', '/var/log/pods'):
            self.makedirs(d)

    @property
    def crictl(self):
        return self._crictl

    @crictl.setter
    def crictl(self, text):
        self._crictl = text
        self.commands['crictl'] = lambda argv: (0, self._crictl, '')

    def use_openrc(self):
        os.rmdir(self.p('/run/systemd/system'))
        self.write('/sbin/openrc-run', '')

    def pod_start(self, uid, count, at):
        """The kubelet starts the scheduler pod's container for the count-th time at wall time ``at``."""
        cdir = '/var/log/pods/kube-system_kube-scheduler-node-1_%s/kube-scheduler' % uid
        if self.exists('%s/%d.log' % (cdir, count - 2)):
            self.unlink('%s/%d.log' % (cdir, count - 2))
        self.write('%s/%d.log' % (cdir, count), '2026-01-13T10:00:00Z stderr F E0113 bad config\n')
        os.utime(self.p(cdir), (at, at))

    def process_at(self, pid, argv, start_s, ppid=1, state='S'):
        """A process started ``start_s`` seconds after boot."""
        self.process(pid, argv, ppid=ppid, started=BOOT + start_s, state=state)

    def gone(self, pid):
        for name in ('stat', 'cmdline'):
            self.unlink('/proc/%d/%s' % (pid, name))
        os.rmdir(self.p('/proc/%d' % pid))

    def openrc_started(self, service='k3s'):
        self.write('/etc/init.d/%s' % service, '#!/sbin/openrc-run\n')
        self.symlink('/etc/init.d/%s' % service, '/run/openrc/started/%s' % service)


@pytest.fixture
def node(tmp_path, monkeypatch):
    return Node(tmp_path / 'root', monkeypatch)


@pytest.fixture
def extender(tmp_path):
    settings = ref.Settings(mode_file=str(tmp_path / 'mode'), log=None)
    srv = ref.make_server('127.0.0.1', 0, settings)
    t = threading.Thread(target=srv.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True)
    t.start()
    srv.url = 'http://127.0.0.1:%d' % srv.server_address[1]
    srv.mode = (tmp_path / 'mode').write_text
    yield srv
    srv.shutdown()
    srv.server_close()


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def args(extender, **kw):
    base = {'url': extender.url, 'scheduler_health_url': extender.url + '/healthz', 'since': str(BASE - 20), 'http_timeout': 2}
    base.update(kw)
    return base


def params(module_args):
    """The module's parameters as AnsibleModule makes them (defaults filled in, types converted)."""
    result = ArgumentSpecValidator(extender_status.ARGUMENT_SPEC).validate(module_args)
    assert not result.error_messages, result.error_messages
    return result.validated_parameters


def run_status(module_args, **network):
    """status() on the node's view with fake network functions (probe=, check_health=); (failed, result) as run_module."""
    try:
        plan = _extender_status.status(_io.node_view(None), params(module_args), **network)
    except PlanError as e:
        return True, dict(e.details, msg=e.msg, failed=True)
    return False, dict(plan.facts, changed=False)


class RecordingModule:
    """What _io.node_view uses of an AnsibleModule; records each command with its environment."""

    def __init__(self, node):
        self.node = node
        self.runs = []

    def get_bin_path(self, name):
        return self.node.which(name)

    def run_command(self, argv, **kw):
        self.runs.append((list(argv), kw))
        return self.node.run(argv)


def test_ready_k3s_systemd(node, extender):
    failed, result = run_module(extender_status, args(extender), check_mode=True)
    assert not failed, result
    assert result['ready'] is True
    assert result['changed'] is False
    assert result['restarted'] is True
    assert result['scheduler_started_at'] == '2026-01-13T09:59:50.000000Z'
    assert result['changed_at'] == '2026-01-13T09:59:40.000000Z'
    assert result['started_at_source'] == 'ExecMainStartTimestampMonotonic'
    assert (result['extender_reachable'], result['extender_http_status'], result['extender_error']) == (True, 200, '')
    assert result['scheduler_healthy'] is True
    assert (result['active_state'], result['main_pid'], result['n_restarts']) == ('active', 2211, 0)
    assert (result['node_name'], result['kube_scheduler'], result['init'], result['service']) == ('node-1', 'k3s@node-1', 'systemd', 'k3s')
    assert result['msg'] == 'ready'
    assert 'journal' not in result
    cmd = node.calls[0]
    assert cmd[:3] == ['/usr/bin/systemctl', 'show', 'k3s']
    # the module's own node_view runs the commands in UTC
    node.write('/usr/bin/systemctl', '', mode=0o755)
    module = RecordingModule(node)
    _extender_status.status(REAL_NODE_VIEW(module), params(args(extender)))
    cmd, kw = module.runs[0]
    assert cmd[0] == node.p('/usr/bin/systemctl') and cmd[1:3] == ['show', 'k3s']
    assert kw['environ_update']['TZ'] == 'UTC'
    # arguments reach the program as given: no ~ or $VAR expansion; stdin (none here) as given
    assert kw['expand_user_and_vars'] is False and kw['binary_data'] is True and kw['data'] is None


LEASE = '/run/baremetal-k3s/scheduler_extender.lease'
COPY = '/etc/rancher/k3s/config.yaml.d/50-x.yaml.7.2026-01-13@09:59:30~'


def held_lease(node, owner='run-1'):
    """The lease and one rollback copy a writing module left (scheduler_files with its lease option)."""
    node.write(LEASE, json.dumps({'owner': owner, 'holder': 'install_csi', 'since': BASE - 30, 'renewed': BASE - 30}))
    node.write('/etc/rancher/k3s/config.yaml.d/50-x.yaml', 'a: 2\n')
    node.write(COPY, 'a: 1\n')
    return {'name': 'scheduler_extender', 'owner': owner,
            'discard': [{'path': '/etc/rancher/k3s/config.yaml.d/50-x.yaml', 'action': 'modified', 'backup_file': COPY}]}


def test_ready_gives_the_lease_back_with_the_copies_in_the_same_run(node, extender):
    failed, result = run_module(extender_status, args(extender, give_back=held_lease(node)))
    assert not failed and result['ready'] is True, result
    assert result['changed'] is True and result['given_back']['backups_removed'] == [COPY]
    assert [f['path'] for f in result['given_back']['files']] == [COPY, LEASE]
    assert not node.exists(LEASE) and not node.exists(COPY) and node.exists('/etc/rancher/k3s/config.yaml.d/50-x.yaml')
    assert 'diff' not in result['given_back']


def test_not_ready_or_check_mode_gives_nothing_back(node, extender):
    give = held_lease(node)
    extender.mode('error500')
    failed, result = run_module(extender_status, args(extender, give_back=give))
    assert not failed and result['ready'] is False and 'given_back' not in result and not result['changed']
    assert node.exists(LEASE) and node.exists(COPY)
    extender.mode('ok')
    failed, result = run_module(extender_status, args(extender, give_back=give), check_mode=True)
    assert not failed and result['ready'] is True and 'given_back' not in result
    assert node.exists(LEASE) and node.exists(COPY)


def test_a_give_back_that_fails_keeps_the_proof_and_the_lease(node, extender):
    give = held_lease(node)
    node.unlink(COPY)
    node.makedirs(COPY)  # planted: not a regular file
    result = module_ok(extender_status, args(extender, give_back=give))
    assert result['ready'] is True and 'given_back' not in result and not result['changed']
    assert any('lease was not given back' in w and 'not a regular file' in w for w in result['warnings']), result
    assert node.exists(LEASE)


def test_another_owners_lease_is_left_in_place(node, extender):
    held_lease(node, owner='another-run')
    result = module_ok(extender_status, args(extender, give_back={'name': 'scheduler_extender', 'owner': 'run-1'}))
    assert result['ready'] is True and not result['changed']
    assert node.exists(LEASE) and any('left in place' in w for w in result['warnings'])


def readiness_api(node):
    """The fake API server behind the node's k3s kubectl, and publish's options for it."""
    api = FakeApi()
    node.write('/usr/local/bin/k3s', '#!/bin/sh\nexit 99\n', mode=0o755)  # never run: the fake answers
    node.write('/etc/rancher/k3s/k3s.yaml', 'apiVersion: v1\nkind: Config\n')
    node.commands['/usr/local/bin/k3s'] = lambda argv, stdin=None: api.runner(argv, stdin)
    return api, {'kubectl': ['/usr/local/bin/k3s', 'kubectl'], 'kubeconfig': '/etc/rancher/k3s/k3s.yaml',
                 'name': 'extender-readiness', 'namespace': 'default'}


def test_ready_publishes_this_nodes_readiness_entry_in_the_same_run(node, extender):
    api, publish = readiness_api(node)
    failed, result = run_module(extender_status, args(extender, give_back=held_lease(node), publish=publish))
    assert not failed and result['ready'] is True, result
    # the entry as the wait found it: the node's name, the scheduler's, restarted since the change
    assert result['published']['changed'] is True and result['published']['nodes'] == [entry('node-1')]
    assert api.nodes() == ['node-1'] and 'diff' not in result['published']
    assert result['changed'] is True and result['given_back']['backups_removed'] == [COPY]
    # once more: the entry is there, nothing written, the task not changed by it
    result = module_ok(extender_status, args(extender, publish=publish))
    assert result['published']['changed'] is False and result['changed'] is False
    assert api.verbs()[-1] == 'get'
    # uninstall_csi's proven wait takes the entry out
    result = module_ok(extender_status, args(extender, publish=dict(publish, state='absent')))
    assert result['published']['changed'] is True and api.nodes() == []


def test_not_ready_or_check_mode_publishes_nothing(node, extender):
    api, publish = readiness_api(node)
    extender.mode('error500')
    failed, result = run_module(extender_status, args(extender, publish=publish))
    assert not failed and result['ready'] is False and 'published' not in result and not result['changed']
    extender.mode('ok')
    failed, result = run_module(extender_status, args(extender, publish=publish), check_mode=True)
    assert not failed and result['ready'] is True and 'published' not in result
    assert api.calls == []


@pytest.mark.parametrize('fault, said', [
    ('namespace', 'namespace'),
    ('kubectl', 'is not an executable file on this node'),
    ('kubeconfig', 'does not exist on this node'),
])
def test_a_publish_that_fails_keeps_the_proof_and_warns(node, extender, fault, said):
    """The scheduler is proven: a readiness write that fails is a warning for the caller to publish again, never a
    failed wait (the role would roll back a good change)."""
    api, publish = readiness_api(node)
    if fault == 'namespace':
        publish['namespace'] = 'csi-baremetal'  # not in the API
    elif fault == 'kubectl':
        node.unlink('/usr/local/bin/k3s')
    else:
        node.unlink('/etc/rancher/k3s/k3s.yaml')
    result = module_ok(extender_status, args(extender, give_back=held_lease(node), publish=publish))
    assert result['ready'] is True and 'published' not in result, result
    assert any('readiness entry was not published' in w and said in w for w in result['warnings']), result['warnings']
    # the lease and the copies went as they would without the publish
    assert result['changed'] is True and not node.exists(LEASE)
    assert api.objects == {}


def test_not_restarted_and_extender_down_is_reported_not_failed(node):
    url = 'http://127.0.0.1:%d' % free_port()
    failed, result = run_module(extender_status, {'url': url, 'scheduler_health_url': url + '/healthz', 'since': '2026-01-13T10:00:00Z'})
    assert not failed
    assert (result['ready'], result['restarted'], result['extender_reachable'], result['scheduler_healthy']) == (False, False, False, False)
    assert result['extender_error'] == 'connection refused (is the extender running?)'
    assert result['msg'].startswith('not ready: the scheduler started at 2026-01-13T09:59:50.000000Z, before the change at 2026-01-13T10:00:00')
    assert 'extender %s/filter: connection refused' % url in result['msg']


def test_since_defaults_to_newest_mtime(node, extender):
    config = node.write('/etc/rancher/k3s/kube-scheduler/config.yaml', 'x')
    unit = node.write('/etc/systemd/system/k3s.service', 'y')
    os.utime(node.p(config), (BASE - 30, BASE - 30))
    os.utime(node.p(unit), (BASE - 5, BASE - 5))  # after the start at BASE-10
    a = args(extender, config_path=config, flag_paths=[unit, '/etc/systemd/system/k3s.service.d/missing.conf'])
    del a['since']
    failed, result = run_module(extender_status, a)
    assert not failed
    assert result['changed_at'] == '2026-01-13T09:59:55.000000Z'
    assert result['restarted'] is False


def test_no_change_reference_means_no_restart_expected(node, extender):
    a = args(extender)
    del a['since']
    failed, result = run_module(extender_status, a)
    assert not failed
    assert (result['restarted'], result['changed_at'], result['ready']) == (None, None, True)


def test_wait_becomes_ready_part_way(node, extender):
    # k3s restarts after ~4 s (fake time): the start moves past `since`, but the extender
    # answers 500 until the 4th look
    looks = []

    def current():
        looks.append(node.clock.t)
        if len(looks) >= 4:  # each look starts with systemctl show: the extender answers from the 4th on
            extender.mode('ok')
        if node.clock.t < 4:
            return show(mono_s=990)
        return show(mono_s=1003, pid=3000, n=1)

    node.show = current
    extender.mode('error500')
    failed, result = run_module(extender_status, args(extender, since=str(BASE), wait=True, interval=2))
    assert not failed
    assert result['ready'] is True, result
    assert result['restarted'] is True
    assert result['main_pid'] == 3000
    assert result['elapsed'] == pytest.approx(6, abs=0.5)
    assert node.clock.sleeps == [2, 2, 2] and result['attempts'] == len(looks) == 4


def test_wait_restart_not_seen_within_update_timeout(node, extender):
    failed, result = run_module(extender_status, args(extender, since=str(BASE), wait=True, interval=3, update_timeout=10))
    assert not failed
    assert result['ready'] is False
    assert result['restarted'] is False
    assert result['msg'].startswith('restart not seen within update_timeout (10.0 s): not ready: the scheduler started at')
    assert node.clock.sleeps == [3, 3, 3, 1] and result['attempts'] == 5
    assert result['elapsed'] == pytest.approx(10, abs=0.5)


def test_wait_times_out_on_extender(node, extender):
    extender.mode('error-json')
    failed, result = run_module(extender_status, args(extender, wait=True, interval=5, timeout=12))
    assert not failed
    assert result['ready'] is False
    assert result['restarted'] is True
    assert result['extender_error'] == 'reference extender: error-json mode'
    assert result['msg'].startswith('not ready within timeout (12.0 s): ')
    assert sum(node.clock.sleeps) == pytest.approx(12)


def test_not_active_reports_journal(node, extender):
    node.show = lambda: show(active='activating', sub='auto-restart', pid=0, n=4)
    failed, result = run_module(extender_status, args(extender, journal_lines=2))
    assert not failed
    assert (result['ready'], result['active_state'], result['sub_state'], result['n_restarts']) == (False, 'activating', 'auto-restart', 4)
    assert result['journal'] == ['line 2', 'line 3']
    assert 'service k3s is activating (auto-restart)' in result['msg']
    assert node.calls[-1] == ['/usr/bin/journalctl', '-u', 'k3s', '-n', '2', '--no-pager', '-o', 'short-iso']


def test_wait_stops_when_service_failed_after_restart(node, extender):
    node.show = lambda: show(active='failed', sub='failed', pid=0, n=5)
    failed, result = run_module(extender_status, args(extender, wait=True))
    assert not failed
    assert result['msg'].startswith('service k3s failed after the restart')
    assert node.clock.sleeps == []
    assert result['journal'] == ['line 1', 'line 2', 'line 3']


def test_service_not_installed_fails(node, extender):
    node.show = lambda: show(active='inactive', sub='dead', pid=0, load='not-found', mono_s=0)
    failed, result = run_module(extender_status, args(extender, service='k3s-agent'))
    assert failed
    assert result['msg'] == 'service k3s-agent is not installed (systemd LoadState=not-found)'


def test_rke2_uses_kube_scheduler_process(node, extender):
    node.process_at(4000, ['/usr/local/bin/rke2', 'server'], 100)
    node.process_at(4100, ['kube-scheduler', '--config=/etc/rancher/rke2/sched.yaml'], 995)
    failed, result = run_module(extender_status, args(extender, platform='rke2', config_path='/etc/rancher/rke2/sched.yaml'))
    assert not failed, result
    assert result['service'] == 'rke2-server'
    assert result['kube_scheduler'] == 'kube-scheduler-node-1'
    assert result['started_at_source'] == '/proc/4100/stat'
    assert result['scheduler_started_at'].startswith('2026-01-13T09:59:55')
    assert result['restarted'] is True
    assert node.calls[0][2] == 'rke2-server'


def test_kubeadm_falls_back_to_crictl(node, extender):
    node.crictl = json.dumps({'containers': [{'id': 'c1', 'metadata': {'name': 'kube-scheduler'}, 'state': 'CONTAINER_RUNNING',
                                              'createdAt': str((BASE - 2) * 10 ** 9)}]})
    failed, result = run_module(extender_status, args(extender, platform='kubeadm'))
    assert not failed, result
    assert (result['service'], result['started_at_source'], result['restarted']) == ('kubelet', 'crictl', True)
    assert result['scheduler_started_at'] == '2026-01-13T09:59:58.000000Z'
    crictl = [c for c in node.calls if c[0].endswith('crictl')][0]
    assert crictl[1:] == ['ps', '--name', '^kube-scheduler$', '-o', 'json']


def test_rke2_crictl_from_its_data_dir_with_its_runtime_endpoint(node, extender):
    node.crictl = json.dumps({'containers': [{'id': 'c1', 'metadata': {'name': 'kube-scheduler'}, 'state': 'CONTAINER_RUNNING',
                                              'createdAt': str((BASE - 2) * 10 ** 9)}]})
    node.write('/var/lib/rancher/rke2/bin/crictl', '', mode=0o755)  # found before the one on the PATH
    failed, result = run_module(extender_status, args(extender, platform='rke2'))
    assert not failed, result
    assert (result['service'], result['started_at_source'], result['restarted']) == ('rke2-server', 'crictl', True)
    crictl = [c for c in node.calls if c[0].endswith('crictl')][0]
    assert crictl == ['/var/lib/rancher/rke2/bin/crictl', '--runtime-endpoint', 'unix:///run/k3s/containerd/containerd.sock',
                      'ps', '--name', '^kube-scheduler$', '-o', 'json']


def test_static_pod_between_starts_is_seen_in_the_kubelet_logs(node, extender):
    # no kube-scheduler process and no crictl: the kubelet holds the crashed container back
    node.pod_start('old', 0, BASE - 600)
    node.pod_start('new', 0, BASE - 5)
    failed, result = run_module(extender_status, args(extender, platform='kubeadm'))
    assert not failed, result
    assert result['restarted'] is True
    assert result['started_at_source'].endswith('/kube-system_kube-scheduler-node-1_new/kube-scheduler/0.log')
    assert result['scheduler_started_at'] == '2026-01-13T09:59:55.000000Z'
    assert 'no running scheduler found' not in result['msg']


def test_static_pod_logged_start_before_the_change_is_not_a_restart(node, extender):
    node.pod_start('old', 3, BASE - 600)
    failed, result = run_module(extender_status, args(extender, platform='kubeadm'))
    assert not failed, result
    assert (result['restarted'], result['ready']) == (False, False)
    assert 'the scheduler started at 2026-01-13T09:50:00.000000Z, before the change' in result['msg']


def test_static_pod_crash_loop_under_back_off(node, extender):
    # the new pod's container starts at +1 s, +12 s (back-off 10 s), +33 s (20 s), each living
    # well under a second: no look ever sees its process, the kubelet's numbered logs show each start
    health = scheduler_health(node)
    node.process_at(900, ['/usr/bin/kubelet'], 100)
    node.show = lambda: show(pid=900, mono_s=100)
    starts = {2: 0, 12: 1, 34: 2}

    def kubelet(t):
        if t in starts:
            node.pod_start('new', starts[t], BASE + t - 1)

    node.clock.after_sleep = kubelet
    failed, result = run_status(args(extender, platform='kubeadm', since=str(BASE), wait=True, interval=2), check_health=health)
    assert not failed, result
    assert (result['ready'], result['crash_loop'], result['restarted']) == (False, True, True)
    assert result['elapsed'] == pytest.approx(34)  # at the third start, not at the update or readiness timeout
    assert result['msg'].startswith('crash loop: the kube-scheduler (or kubelet) exited 2 times since the change')
    assert result['started_at_source'].endswith('kube-scheduler/2.log')


def test_static_pod_process_and_its_logs_are_one_start(node, extender):
    # a look that sees the process and one that sees only its log are the same start: no exit counted
    health = scheduler_health(node, healthy_from=8)
    node.process_at(900, ['/usr/bin/kubelet'], 100)
    node.show = lambda: show(pid=900, mono_s=100)
    node.pod_start('new', 0, BASE + 1)

    def kubelet(t):
        if t == 4:
            node.process_at(4100, ['kube-scheduler', '--config=/etc/kubernetes/sched.yaml'], 1001)

    node.clock.after_sleep = kubelet
    failed, result = run_status(args(extender, platform='kubeadm', since=str(BASE), wait=True, interval=2,
                                     config_path='/etc/kubernetes/sched.yaml'), check_health=health)
    assert not failed, result
    assert (result['ready'], result['crash_loop'], result['started_at_source']) == (True, False, '/proc/4100/stat')


def test_kubeadm_without_scheduler_is_not_ready(node, extender):
    failed, result = run_module(extender_status, args(extender, platform='kubeadm'))
    assert not failed
    assert (result['ready'], result['restarted'], result['scheduler_started_at']) == (False, None, None)
    assert 'no running scheduler found' in result['msg']


def test_openrc_k3s(node, extender):
    node.use_openrc()
    node.openrc_started('k3s')
    node.write('/run/openrc/options/k3s/child_pid', '501')
    node.process_at(500, ['supervise-daemon', 'k3s', '--start'], 5)
    node.process_at(501, ['/usr/local/bin/k3s', 'server'], 985, ppid=500)
    failed, result = run_module(extender_status, args(extender))
    assert not failed, result
    assert (result['init'], result['active_state'], result['main_pid'], result['restarted'], result['ready']) == ('openrc', 'active', 501, True, True)
    assert result['scheduler_started_at'] == '2026-01-13T09:59:45.000000Z'
    assert result['started_at_source'] == '/proc/501/stat'
    assert node.calls == []


def test_openrc_crashed_reports_log_tail(node, extender):
    node.use_openrc()
    node.openrc_started('k3s')
    node.write('/var/log/k3s.log', 'a\nb\nfatal: bad scheduler config\n')
    failed, result = run_module(extender_status, args(extender, journal_lines=1))
    assert not failed
    assert (result['active_state'], result['ready']) == ('failed', False)
    assert result['journal'] == ['fatal: bad scheduler config']


def test_openrc_log_tail_reads_only_the_end_of_a_long_log(node, extender):
    node.use_openrc()
    node.openrc_started('k3s')
    node.write('/var/log/k3s.log', 'old line\n' * 100000 + 'x' * 10 + '\nfatal: bad scheduler config\n')
    failed, result = run_module(extender_status, args(extender, journal_lines=1000))
    assert not failed
    assert result['journal'][-2:] == ['x' * 10, 'fatal: bad scheduler config']
    assert len('\n'.join(result['journal'])) <= _extender_status.LOG_TAIL


def test_openrc_service_not_installed(node, extender):
    node.use_openrc()
    failed, result = run_module(extender_status, args(extender))
    assert failed
    assert result['msg'].startswith('service k3s is not installed: ')


@pytest.mark.parametrize('extra, message', [
    ({'platform': 'minikube'}, 'value of platform must be one of: k3s, rke2, kubeadm, got: minikube'),
    ({'url': 'ftp://127.0.0.1:8889'}, "extender URL 'ftp://127.0.0.1:8889' must start with http:// or https://"),
    ({'url': None}, 'url is required (the extender to probe, e.g. http://127.0.0.1:8889) unless require_extender is false'),
    ({'ca_file': '/nonexistent/ca.crt'}, 'ca_file /nonexistent/ca.crt does not exist or is not a file'),
    ({'timeout': -1}, 'timeout must not be negative (got -1.0)'),
    ({'update_timeout': -0.5}, 'update_timeout must not be negative (got -0.5)'),
    ({'interval': -2}, 'interval must not be negative (got -2.0)'),
    ({'journal_lines': -1}, 'journal_lines must not be negative (got -1)'),
    ({'http_timeout': 0}, 'http_timeout must be greater than 0'),
    ({'http_timeout': '0s'}, 'http_timeout must be greater than 0'),
    ({'http_timeout': '15 seconds'}, 'http_timeout must be seconds or a duration such as "15s" (got \'15 seconds\')'),
    ({'http_timeout': '-1s'}, 'http_timeout must not be negative (got -1.0)'),
    ({'wait': True, 'interval': 0}, 'interval must be greater than 0 with wait: true'),
    ({'since': 'last tuesday'},
     "since: not epoch seconds nor an ISO 8601 date/time: 'last tuesday' (use epoch seconds or ISO 8601, e.g. 2026-01-13T10:00:01Z)"),
    ({'since': None, 'config_path': '/nonexistent/config.yaml'},
     'none of config_path/flag_paths exists (/nonexistent/config.yaml): cannot tell the change time; give since'),
    ({'scheduler_health_url': 'localhost:10259'}, "scheduler_health_url: extender URL 'localhost:10259' must start with http:// or https://"),
    ({'verb': '/'}, 'verb must not be empty'),
    ({'init': 'openrc'}, 'init is openrc but'),
])
def test_bad_input(node, extender, extra, message):
    failed, result = run_module(extender_status, args(extender, **extra))
    assert failed
    assert result['msg'].startswith(message)


@pytest.mark.parametrize('given, seconds', [(2, 2.0), (0.5, 0.5), ('3', 3.0), ('15s', 15.0), ('500ms', 0.5), ('1m30s', 90.0)])
def test_http_timeout_as_seconds_or_duration(given, seconds):
    assert _extender_status.seconds(given, 'http_timeout') == seconds


def test_slow_extender_judged_by_its_timeout(node, extender):
    """An answer later than http_timeout is a timeout; the same answer within it is ready."""
    extender.mode('slow:1.5')
    failed, result = run_module(extender_status, args(extender, http_timeout='500ms'))
    assert not failed
    assert result['ready'] is False
    assert result['extender_error'] == 'timeout: no answer within 0.5 s'
    failed, result = run_module(extender_status, args(extender, http_timeout='5s'))
    assert not failed
    assert result['ready'] is True, result['msg']


def test_key_file_needs_cert_file(node, extender):
    key = node.write('/etc/rancher/k3s/extender.key', 'k')
    failed, result = run_module(extender_status, args(extender, key_file=key))
    assert failed
    assert result['msg'] == 'key_file needs cert_file'


def test_unknown_init_fails(node, extender):
    os.rmdir(node.p('/run/systemd/system'))
    failed, result = run_module(extender_status, args(extender))
    assert failed
    assert result['msg'].startswith('cannot tell the service manager')


def test_require_extender_false_without_url(node):
    url = 'http://127.0.0.1:%d/healthz' % free_port()
    failed, result = run_module(extender_status, {'require_extender': False, 'scheduler_health_url': '', 'since': str(BASE - 20)})
    assert not failed
    assert (result['ready'], result['scheduler_healthy'], result['extender_reachable']) == (True, None, False)
    failed, result = run_module(extender_status, {'require_extender': False, 'scheduler_health_url': url, 'since': str(BASE - 20)})
    assert not failed
    assert result['ready'] is False
    assert 'kube-scheduler health (%s): connection refused' % url in result['msg']


# ---------------------------------------------------------------------------------------------
# the scheduler's health endpoint over TLS, verified with the CA that signs its certificate (k3s 1.31.9+:
# server/tls/kube-scheduler/kube-scheduler.crt from the server CA, SANs localhost and 127.0.0.1)

def _openssl(d, *argv):
    subprocess.run(['openssl'] + list(argv), cwd=d, check=True, capture_output=True)


def _sign(d, name, ca, san):
    _openssl(d, 'req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
             '-keyout', name + '.key', '-out', name + '.csr', '-subj', '/CN=kube-scheduler')
    with open(os.path.join(d, name + '.ext'), 'w') as f:
        f.write('subjectAltName=%s\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n'
                'extendedKeyUsage=serverAuth\n' % san)
    _openssl(d, 'x509', '-req', '-in', name + '.csr', '-CA', ca + '.crt', '-CAkey', ca + '.key', '-CAcreateserial',
             '-days', '2', '-out', name + '.crt', '-extfile', name + '.ext')


@pytest.fixture(scope='module')
def scheduler_pki(tmp_path_factory):
    """server-ca (and another CA); the scheduler's certificate for localhost/127.0.0.1, and one for another host."""
    if not shutil.which('openssl'):
        pytest.skip('openssl CLI not available')
    d = str(tmp_path_factory.mktemp('scheduler-pki'))
    for ca in ('server-ca', 'other-ca'):
        _openssl(d, 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
                 '-keyout', ca + '.key', '-out', ca + '.crt', '-subj', '/CN=' + ca,
                 '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign')
    _sign(d, 'kube-scheduler', 'server-ca', 'DNS:localhost,IP:127.0.0.1')
    _sign(d, 'elsewhere', 'server-ca', 'DNS:elsewhere.example')
    return d


@pytest.fixture
def tls_scheduler(tmp_path, scheduler_pki):
    """A health endpoint over TLS (the reference server's /healthz answers ok) serving ``cert`` (a name in the pki)."""
    servers = []

    def start(cert='kube-scheduler'):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(scheduler_pki, cert + '.crt'), os.path.join(scheduler_pki, cert + '.key'))
        srv = ref.make_server('127.0.0.1', 0, ref.Settings(mode_file=str(tmp_path / 'health-mode'), log=None))
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
        threading.Thread(target=srv.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True).start()
        servers.append(srv)
        return 'https://127.0.0.1:%d/healthz' % srv.server_address[1]
    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def node_ca(node, scheduler_pki, name='server-ca'):
    """The CA file copied to the node, at k3s's path; its node path."""
    with open(os.path.join(scheduler_pki, name + '.crt'), 'rb') as f:
        node.write(CA_ON_NODE, f.read())
    return CA_ON_NODE


def test_scheduler_certificate_verified_with_its_ca(node, extender, tls_scheduler, scheduler_pki):
    health = tls_scheduler()
    failed, result = run_module(extender_status, args(extender, scheduler_health_url=health,
                                                      scheduler_ca_file=node_ca(node, scheduler_pki)))
    assert not failed, result
    assert (result['ready'], result['scheduler_healthy'], result['scheduler_tls_verified']) == (True, True, True)
    assert result['scheduler_health_error'] == ''


def test_scheduler_certificate_from_another_ca_is_unhealthy(node, extender, tls_scheduler, scheduler_pki):
    health = tls_scheduler()
    failed, result = run_module(extender_status, args(extender, scheduler_health_url=health,
                                                      scheduler_ca_file=node_ca(node, scheduler_pki, 'other-ca')))
    assert not failed, result
    assert (result['ready'], result['scheduler_healthy'], result['scheduler_tls_verified']) == (False, False, False)
    assert result['scheduler_health_error'].startswith('TLS certificate verification failed: ')
    assert 'kube-scheduler health (%s): TLS certificate verification failed' % health in result['msg']


def test_scheduler_certificate_for_another_host_name_is_unhealthy(node, extender, tls_scheduler, scheduler_pki):
    health = tls_scheduler('elsewhere')
    failed, result = run_module(extender_status, args(extender, scheduler_health_url=health,
                                                      scheduler_ca_file=node_ca(node, scheduler_pki)))
    assert not failed, result
    assert (result['scheduler_healthy'], result['scheduler_tls_verified']) == (False, False)
    assert result['scheduler_health_error'].startswith('TLS certificate verification failed: ')
    assert '127.0.0.1' in result['scheduler_health_error']  # the host name that is not in the certificate


def test_scheduler_certificate_not_verified_without_a_ca(node, extender, tls_scheduler):
    # no CA given (a scheduler that signs its own certificate): the probe does not verify, as before
    health = tls_scheduler('elsewhere')
    failed, result = run_module(extender_status, args(extender, scheduler_health_url=health))
    assert not failed, result
    assert (result['ready'], result['scheduler_healthy'], result['scheduler_tls_verified']) == (True, True, False)
    failed, result = run_module(extender_status, args(extender, scheduler_health_url=''))
    assert (result['scheduler_healthy'], result['scheduler_tls_verified']) == (None, None)


def test_scheduler_ca_file_passed_to_the_health_check(node, extender):
    seen = []

    def check_health(url, timeout=5.0, ca_file=None, insecure=True):
        seen.append((ca_file, insecure))
        return True, 200, ''
    ca = node.write('/srv/ca.crt', 'x')
    failed, result = run_status(args(extender), check_health=check_health)
    assert not failed and seen == [(None, True)] and result['scheduler_tls_verified'] is False
    # a file that is not a CA is refused before any look (the check_health stand-in never sees it)
    failed, result = run_status(args(extender, scheduler_health_url='https://127.0.0.1:10259/healthz', scheduler_ca_file=ca),
                                check_health=check_health)
    assert failed and result['msg'].startswith('scheduler_ca_file /srv/ca.crt cannot be used to verify the scheduler: ')


@pytest.mark.parametrize('extra, message', [
    ({'scheduler_ca_file': '/nonexistent/server-ca.crt', 'scheduler_health_url': 'https://127.0.0.1:10259/healthz'},
     'scheduler_ca_file /nonexistent/server-ca.crt does not exist or is not a file'),
    ({'scheduler_ca_file': CA_ON_NODE}, 'scheduler_ca_file verifies TLS, but scheduler_health_url http://127.0.0.1:'),
])
def test_scheduler_ca_file_bad_input(node, extender, scheduler_pki, extra, message):
    node_ca(node, scheduler_pki)
    failed, result = run_module(extender_status, args(extender, **extra))
    assert failed
    assert result['msg'].startswith(message), result['msg']


# ---------------------------------------------------------------------------------------------
# crash loops: k3s has Restart=always / RestartSec=5s and tells systemd READY=1 before its
# scheduler reads the config, so a bad config looks like a string of fresh restarts


def scheduler_health(node, healthy_from=None):
    """A check_health for status(): the kube-scheduler health endpoint refuses until fake time ``healthy_from`` (never with None)."""
    def check_health(url, timeout=5.0, ca_file=None, insecure=True):  # pylint: disable=unused-argument
        if healthy_from is not None and node.clock.t >= healthy_from:
            return True, 200, ''
        return False, None, 'connection refused'
    return check_health


def recorded(node, looks):
    """Answer ``systemctl show`` with one recorded output per look; remembers how many were used."""
    queue = list(looks)
    used = []

    def current():
        used.append(queue.pop(0))
        return used[-1]

    node.show = current
    return used


# TZ=UTC systemctl show k3s --property=... every 2 s after the change at 10:00:00 (monotonic 1000 s):
# k3s restarted at 10:00:01 (pid 3000), exits at 10:00:05, systemd restarts it 5 s later (pid 3100), ...
CRASH_LOOP = [
    show(mono_s=990, pid=2211, n=0),                           # t=0: the old k3s, our restart pending
    show(mono_s=1001, pid=3000, n=0),                          # t=2: restarted (READY=1), scheduler not up
    show(mono_s=1001, pid=3000, n=0),                          # t=4
    show(active='activating', sub='auto-restart', mono_s=1001, pid=0, n=0),   # t=6: exited (1)
    show(active='activating', sub='auto-restart', mono_s=1001, pid=0, n=0),   # t=8
    show(mono_s=1010, pid=3100, n=1),                          # t=10: NRestarts 0 -> 1
    show(mono_s=1010, pid=3100, n=1),                          # t=12
    show(active='activating', sub='auto-restart', mono_s=1010, pid=0, n=1),   # t=14: exited (2)
    show(active='activating', sub='auto-restart', mono_s=1010, pid=0, n=1),   # t=16
    show(mono_s=1019, pid=3200, n=2),                          # t=18: NRestarts 1 -> 2
    show(mono_s=1019, pid=3200, n=2),                          # t=20
]


def test_wait_stops_early_on_a_crash_loop(node, extender):
    health = scheduler_health(node)
    used = recorded(node, CRASH_LOOP)
    failed, result = run_status(args(extender, since=str(BASE), wait=True, interval=2, journal_lines=2), check_health=health)
    assert not failed
    assert (result['ready'], result['crash_loop'], result['restarted']) == (False, True, True)
    assert len(used) == 8  # stopped at the second exit, not at timeout (1200 s)
    assert node.clock.sleeps == [2] * 7
    assert result['elapsed'] == pytest.approx(14)
    assert (result['active_state'], result['sub_state'], result['n_restarts']) == ('activating', 'auto-restart', 1)
    assert result['msg'].startswith('crash loop: k3s exited 2 times since the change at 2026-01-13T10:00:00.000000Z '
                                    'and its scheduler never became healthy; now: service k3s is activating (auto-restart); ')
    assert 'kube-scheduler health (%s/healthz): connection refused' % extender.url in result['msg']
    assert result['journal'] == ['line 2', 'line 3']


def test_wait_crash_loop_seen_by_the_restart_counter(node, extender):
    # looks 10 s apart each land on a running k3s: only NRestarts (and the pid) show the exits
    health = scheduler_health(node)
    used = recorded(node, [show(mono_s=990, pid=2211, n=0), show(mono_s=1010, pid=3100, n=1),
                           show(mono_s=1019, pid=3200, n=2), show(mono_s=1028, pid=3300, n=3), show(mono_s=1037, pid=3400, n=4)])
    failed, result = run_status(args(extender, since=str(BASE), wait=True, interval=10), check_health=health)
    assert not failed
    assert (result['ready'], result['crash_loop'], result['n_restarts'], result['main_pid']) == (False, True, 3, 3300)
    assert len(used) == 4
    assert result['msg'].startswith('crash loop: k3s exited 2 times since the change')
    assert result['journal'] == ['line 1', 'line 2', 'line 3']  # attached although k3s is active right now


def test_wait_slow_healthy_start_is_not_a_crash_loop(node, extender):
    # one restart (ours; counted in NRestarts as a kill-style restart would be), then the
    # scheduler needs 10 s to answer: ready, no crash loop
    health = scheduler_health(node, healthy_from=12)
    used = recorded(node, [show(mono_s=990, pid=2211, n=0), show(active='activating', sub='start', mono_s=1001, pid=3000, n=1)]
                    + [show(mono_s=1001, pid=3000, n=1)] * 20)
    failed, result = run_status(args(extender, since=str(BASE), wait=True, interval=2), check_health=health)
    assert not failed
    assert (result['ready'], result['crash_loop'], result['restarted'], result['scheduler_healthy']) == (True, False, True, True)
    assert len(used) == 7
    assert node.clock.sleeps == [2] * 6
    assert result['msg'] == 'ready'
    assert 'journal' not in result


def test_single_look_sees_a_crash_loop_from_the_counter(node, extender):
    health = scheduler_health(node)
    node.show = lambda: show(active='activating', sub='auto-restart', mono_s=1010, pid=0, n=2)
    failed, result = run_status(args(extender, since=str(BASE)), check_health=health)
    assert not failed
    assert (result['ready'], result['crash_loop'], result['n_restarts']) == (False, True, 2)
    assert result['msg'].startswith('crash loop: k3s exited 2 times since the change')
    # one automatic restart may be the one that applied the change
    node.show = lambda: show(active='activating', sub='auto-restart', mono_s=1010, pid=0, n=1)
    failed, result = run_status(args(extender, since=str(BASE)), check_health=health)
    assert (result['ready'], result['crash_loop']) == (False, False)
    assert result['msg'].startswith('not ready: service k3s is activating (auto-restart)')


def test_crash_loop_without_health_check(node, extender):
    # scheduler_health_url disabled: the exits alone tell the crash loop
    extender.mode('error500')
    used = recorded(node, CRASH_LOOP)
    failed, result = run_module(extender_status, args(extender, since=str(BASE), wait=True, interval=2, scheduler_health_url=''))
    assert not failed
    assert (result['ready'], result['crash_loop'], result['scheduler_healthy'], len(used)) == (False, True, None, 8)
    assert result['msg'].startswith('crash loop: k3s exited 2 times since the change at 2026-01-13T10:00:00.000000Z and its '
                                    'scheduler was never seen healthy (scheduler_health_url is empty); now: ')


def test_openrc_child_pid_changing_twice_is_a_crash_loop(node, extender):
    node.use_openrc()
    health = scheduler_health(node)
    node.openrc_started('k3s')
    node.write('/var/log/k3s.log', 'E0113 10:00:04 scheduler config invalid\nk3s exited\n')
    node.process_at(500, ['supervise-daemon', 'k3s', '--start'], 5)

    def child(pid, start_s):
        node.process_at(pid, ['/usr/local/bin/k3s', 'server'], start_s, ppid=500)
        node.write('/run/openrc/options/k3s/child_pid', str(pid))

    child(501, 995)  # started after the change (BASE - 10)
    respawns = {2: (501, 502, 1001), 4: (502, 503, 1003)}

    def respawn(t):
        old, new, start = respawns[int(t)]
        node.gone(old)
        child(new, start)

    node.clock.after_sleep = respawn
    failed, result = run_status(args(extender, since=str(BASE - 10), wait=True, interval=2, journal_lines=5), check_health=health)
    assert not failed, result
    assert (result['init'], result['ready'], result['crash_loop'], result['main_pid'], result['n_restarts']) == ('openrc', False, True, 503, 2)
    assert node.clock.sleeps == [2, 2]
    assert result['msg'].startswith('crash loop: k3s exited 2 times since the change at 2026-01-13T09:59:50.000000Z')
    assert result['journal'] == ['E0113 10:00:04 scheduler config invalid', 'k3s exited']
