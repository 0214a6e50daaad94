# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import importlib.util
import json
import os
import socket
import threading

import pytest

from ansible.module_utils import basic

from ansible_collections.baremetal.k3s.plugins.modules import extender_status

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import run_module

BASE = 1768298400  # 2026-01-13T10:00:00Z
_REF = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'integration', 'extender', 'reference_extender.py')
_spec = importlib.util.spec_from_file_location('reference_extender', os.path.abspath(_REF))
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)


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


class Node:
    """The fake node: systemctl/journalctl/crictl answers, /proc, /run, clocks."""

    def __init__(self, tmp_path, monkeypatch):
        self.clock = FakeClock()
        self.commands = []
        self.show = show
        self.journal = 'line 1\nline 2\nline 3\n'
        self.crictl = None
        self.proc = tmp_path / 'proc'
        self.proc.mkdir()
        (self.proc / 'stat').write_text('btime %d\n' % (BASE - 1000))
        self.run = tmp_path / 'run'
        (self.run / 'systemd' / 'system').mkdir(parents=True)
        self.init_d = tmp_path / 'init.d'
        self.init_d.mkdir()
        self.log = tmp_path / 'log'
        self.log.mkdir()
        self.pod_logs = tmp_path / 'pods'
        self.pod_logs.mkdir()
        self.openrc_run = tmp_path / 'openrc-run'
        for name, value in (('PROC_ROOT', str(self.proc)), ('RUN_ROOT', str(self.run)), ('LOG_ROOT', str(self.log)), ('POD_LOG_ROOT', str(self.pod_logs)),
                            ('OPENRC_RUN', str(self.openrc_run)), ('SYSTEMD_RUNTIME', str(self.run / 'systemd' / 'system')),
                            ('INIT_D', str(self.init_d)), ('CLOCK', self.clock)):
            monkeypatch.setattr(extender_status, name, value)
        monkeypatch.setattr(extender_status, 'node_name', lambda: 'node-1')
        node = self

        def run_command(self, args, **kwargs):  # pylint: disable=unused-argument
            node.commands.append((list(args), kwargs.get('environ_update')))
            tool = os.path.basename(args[0])
            if tool == 'systemctl':
                return 0, node.show(), ''
            if tool == 'journalctl':
                return 0, node.journal, ''
            if tool == 'crictl' and node.crictl is not None:
                return 0, node.crictl, ''
            return 1, '', 'unexpected command %r' % (args,)

        def get_bin_path(self, arg, required=False, opt_dirs=None):  # pylint: disable=unused-argument
            if arg == 'crictl' and node.crictl is None:
                return None
            return '/usr/bin/' + arg

        monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
        monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', get_bin_path)

    def use_openrc(self):
        os.rmdir(str(self.run / 'systemd' / 'system'))
        self.openrc_run.write_text('')

    def pod_start(self, uid, count, at):
        """The kubelet starts the scheduler pod's container for the count-th time at wall time ``at``."""
        cdir = self.pod_logs / ('kube-system_kube-scheduler-node-1_%s' % uid) / 'kube-scheduler'
        cdir.mkdir(parents=True, exist_ok=True)
        if (cdir / ('%d.log' % (count - 2))).exists():
            (cdir / ('%d.log' % (count - 2))).unlink()
        (cdir / ('%d.log' % count)).write_text('2026-01-13T10:00:00Z stderr F E0113 bad config\n')
        os.utime(str(cdir), (at, at))

    def process(self, pid, argv, start_s, ppid=1, state='S'):
        d = self.proc / str(pid)
        d.mkdir()
        fields = [state, str(ppid)] + ['0'] * 17 + [str(int(start_s * os.sysconf('SC_CLK_TCK')))] + ['0'] * 10
        (d / 'stat').write_text('%d (%s) %s\n' % (pid, os.path.basename(argv[0])[:15], ' '.join(fields)))
        (d / 'cmdline').write_bytes(b''.join(a.encode() + b'\0' for a in argv))


@pytest.fixture
def node(tmp_path, monkeypatch):
    return Node(tmp_path, monkeypatch)


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
    cmd, env = node.commands[0]
    assert cmd[:3] == ['/usr/bin/systemctl', 'show', 'k3s']
    assert env['TZ'] == 'UTC'


def test_not_restarted_and_extender_down_is_reported_not_failed(node):
    url = 'http://127.0.0.1:%d' % free_port()
    failed, result = run_module(extender_status, {'url': url, 'scheduler_health_url': url + '/healthz', 'since': '2026-01-13T10:00:00Z'})
    assert not failed
    assert (result['ready'], result['restarted'], result['extender_reachable'], result['scheduler_healthy']) == (False, False, False, False)
    assert result['extender_error'] == 'connection refused (is the extender running?)'
    assert result['msg'].startswith('not ready: the scheduler started at 2026-01-13T09:59:50.000000Z, before the change at 2026-01-13T10:00:00')
    assert 'extender %s/filter: connection refused' % url in result['msg']


def test_since_defaults_to_newest_mtime(node, extender, tmp_path):
    config = tmp_path / 'config.yaml'
    unit = tmp_path / 'k3s.service'
    config.write_text('x')
    unit.write_text('y')
    os.utime(str(config), (BASE - 30, BASE - 30))
    os.utime(str(unit), (BASE - 5, BASE - 5))  # after the start at BASE-10
    a = args(extender, config_path=str(config), flag_paths=[str(unit), str(tmp_path / 'missing.conf')])
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
        if node.clock.t < 4:
            return show(mono_s=990)
        return show(mono_s=1003, pid=3000, n=1)

    node.show = current
    extender.mode('error500')
    original = extender_status.ExtenderStatus.observe

    def observe(self):
        if len(looks) >= 3:
            extender.mode('ok')
        return original(self)

    extender_status.ExtenderStatus.observe = observe
    try:
        failed, result = run_module(extender_status, args(extender, since=str(BASE), wait=True, interval=2))
    finally:
        extender_status.ExtenderStatus.observe = original
    assert not failed
    assert result['ready'] is True, result
    assert result['restarted'] is True
    assert result['main_pid'] == 3000
    assert result['elapsed'] == pytest.approx(6, abs=0.5)
    assert node.clock.sleeps == [2, 2, 2]


def test_wait_restart_not_seen_within_update_timeout(node, extender):
    failed, result = run_module(extender_status, args(extender, since=str(BASE), wait=True, interval=3, update_timeout=10))
    assert not failed
    assert result['ready'] is False
    assert result['restarted'] is False
    assert result['msg'].startswith('restart not seen within update_timeout (10.0 s): not ready: the scheduler started at')
    assert node.clock.sleeps == [3, 3, 3, 1]
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
    assert node.commands[-1][0] == ['/usr/bin/journalctl', '-u', 'k3s', '-n', '2', '--no-pager', '-o', 'short-iso']


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
    node.process(4000, ['/usr/local/bin/rke2', 'server'], 100)
    node.process(4100, ['kube-scheduler', '--config=/etc/rancher/rke2/sched.yaml'], 995)
    failed, result = run_module(extender_status, args(extender, platform='rke2', config_path='/etc/rancher/rke2/sched.yaml'))
    assert not failed, result
    assert result['service'] == 'rke2-server'
    assert result['kube_scheduler'] == 'kube-scheduler-node-1'
    assert result['started_at_source'] == '/proc/4100/stat'
    assert result['scheduler_started_at'].startswith('2026-01-13T09:59:55')
    assert result['restarted'] is True
    assert node.commands[0][0][2] == 'rke2-server'


def test_kubeadm_falls_back_to_crictl(node, extender):
    node.crictl = json.dumps({'containers': [{'id': 'c1', 'metadata': {'name': 'kube-scheduler'}, 'state': 'CONTAINER_RUNNING',
                                              'createdAt': str((BASE - 2) * 10 ** 9)}]})
    failed, result = run_module(extender_status, args(extender, platform='kubeadm'))
    assert not failed, result
    assert (result['service'], result['started_at_source'], result['restarted']) == ('kubelet', 'crictl', True)
    assert result['scheduler_started_at'] == '2026-01-13T09:59:58.000000Z'
    crictl = [c for c in node.commands if c[0][0].endswith('crictl')][0][0]
    assert crictl[1:] == ['ps', '--name', '^kube-scheduler$', '-o', 'json']


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


def test_static_pod_crash_loop_under_back_off(node, extender, monkeypatch):
    # the new pod's container starts at +1 s, +12 s (back-off 10 s), +33 s (20 s), each living
    # well under a second: no look ever sees its process, the kubelet's numbered logs show each start
    scheduler_health(node, monkeypatch)
    node.process(900, ['/usr/bin/kubelet'], 100)
    node.show = lambda: show(pid=900, mono_s=100)
    starts = {2: 0, 12: 1, 34: 2}

    def kubelet(t):
        if t in starts:
            node.pod_start('new', starts[t], BASE + t - 1)

    node.clock.after_sleep = kubelet
    failed, result = run_module(extender_status, args(extender, platform='kubeadm', since=str(BASE), wait=True, interval=2))
    assert not failed, result
    assert (result['ready'], result['crash_loop'], result['restarted']) == (False, True, True)
    assert result['elapsed'] == pytest.approx(34)  # at the third start, not at the update or readiness timeout
    assert result['msg'].startswith('crash loop: the kube-scheduler (or kubelet) exited 2 times since the change')
    assert result['started_at_source'].endswith('kube-scheduler/2.log')


def test_static_pod_process_and_its_logs_are_one_start(node, extender, monkeypatch):
    # a look that sees the process and one that sees only its log are the same start: no exit counted
    scheduler_health(node, monkeypatch, healthy_from=8)
    node.process(900, ['/usr/bin/kubelet'], 100)
    node.show = lambda: show(pid=900, mono_s=100)
    node.pod_start('new', 0, BASE + 1)

    def kubelet(t):
        if t == 4:
            node.process(4100, ['kube-scheduler', '--config=/etc/kubernetes/sched.yaml'], 1001)

    node.clock.after_sleep = kubelet
    failed, result = run_module(extender_status, args(extender, platform='kubeadm', since=str(BASE), wait=True, interval=2,
                                                      config_path='/etc/kubernetes/sched.yaml'))
    assert not failed, result
    assert (result['ready'], result['crash_loop'], result['started_at_source']) == (True, False, '/proc/4100/stat')


def test_kubeadm_without_scheduler_is_not_ready(node, extender):
    failed, result = run_module(extender_status, args(extender, platform='kubeadm'))
    assert not failed
    assert (result['ready'], result['restarted'], result['scheduler_started_at']) == (False, None, None)
    assert 'no running scheduler found' in result['msg']


def test_openrc_k3s(node, extender):
    node.use_openrc()
    (node.init_d / 'k3s').write_text('#!/sbin/openrc-run\n')
    (node.run / 'openrc' / 'started').mkdir(parents=True)
    os.symlink('/etc/init.d/k3s', str(node.run / 'openrc' / 'started' / 'k3s'))
    (node.run / 'openrc' / 'options' / 'k3s').mkdir(parents=True)
    (node.run / 'openrc' / 'options' / 'k3s' / 'child_pid').write_text('501')
    node.process(500, ['supervise-daemon', 'k3s', '--start'], 5)
    node.process(501, ['/usr/local/bin/k3s', 'server'], 985, ppid=500)
    failed, result = run_module(extender_status, args(extender))
    assert not failed, result
    assert (result['init'], result['active_state'], result['main_pid'], result['restarted'], result['ready']) == ('openrc', 'active', 501, True, True)
    assert result['scheduler_started_at'] == '2026-01-13T09:59:45.000000Z'
    assert result['started_at_source'] == '/proc/501/stat'
    assert node.commands == []


def test_openrc_crashed_reports_log_tail(node, extender):
    node.use_openrc()
    (node.init_d / 'k3s').write_text('#!/sbin/openrc-run\n')
    (node.run / 'openrc' / 'started').mkdir(parents=True)
    os.symlink('/etc/init.d/k3s', str(node.run / 'openrc' / 'started' / 'k3s'))
    (node.log / 'k3s.log').write_text('a\nb\nfatal: bad scheduler config\n')
    failed, result = run_module(extender_status, args(extender, journal_lines=1))
    assert not failed
    assert (result['active_state'], result['ready']) == ('failed', False)
    assert result['journal'] == ['fatal: bad scheduler config']


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


def test_key_file_needs_cert_file(node, extender, tmp_path):
    key = tmp_path / 'k.key'
    key.write_text('k')
    failed, result = run_module(extender_status, args(extender, key_file=str(key)))
    assert failed
    assert result['msg'] == 'key_file needs cert_file'


def test_unknown_init_fails(node, extender):
    os.rmdir(str(node.run / 'systemd' / 'system'))
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
# crash loops: k3s has Restart=always / RestartSec=5s and tells systemd READY=1 before its
# scheduler reads the config, so a bad config looks like a string of fresh restarts


def scheduler_health(node, monkeypatch, healthy_from=None):
    """The kube-scheduler health endpoint: refused until fake time ``healthy_from`` (never with None)."""
    def check_health(url, timeout=5.0, ca_file=None, insecure=True):  # pylint: disable=unused-argument
        if healthy_from is not None and node.clock.t >= healthy_from:
            return True, 200, ''
        return False, None, 'connection refused'
    monkeypatch.setattr(extender_status._extender, 'check_health', check_health)


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


def test_wait_stops_early_on_a_crash_loop(node, extender, monkeypatch):
    scheduler_health(node, monkeypatch)
    used = recorded(node, CRASH_LOOP)
    failed, result = run_module(extender_status, args(extender, since=str(BASE), wait=True, interval=2, journal_lines=2))
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


def test_wait_crash_loop_seen_by_the_restart_counter(node, extender, monkeypatch):
    # looks 10 s apart each land on a running k3s: only NRestarts (and the pid) show the exits
    scheduler_health(node, monkeypatch)
    used = recorded(node, [show(mono_s=990, pid=2211, n=0), show(mono_s=1010, pid=3100, n=1),
                           show(mono_s=1019, pid=3200, n=2), show(mono_s=1028, pid=3300, n=3), show(mono_s=1037, pid=3400, n=4)])
    failed, result = run_module(extender_status, args(extender, since=str(BASE), wait=True, interval=10))
    assert not failed
    assert (result['ready'], result['crash_loop'], result['n_restarts'], result['main_pid']) == (False, True, 3, 3300)
    assert len(used) == 4
    assert result['msg'].startswith('crash loop: k3s exited 2 times since the change')
    assert result['journal'] == ['line 1', 'line 2', 'line 3']  # attached although k3s is active right now


def test_wait_slow_healthy_start_is_not_a_crash_loop(node, extender, monkeypatch):
    # one restart (ours; counted in NRestarts as a kill-style restart would be), then the
    # scheduler needs 10 s to answer: ready, no crash loop
    scheduler_health(node, monkeypatch, healthy_from=12)
    used = recorded(node, [show(mono_s=990, pid=2211, n=0), show(active='activating', sub='start', mono_s=1001, pid=3000, n=1)]
                    + [show(mono_s=1001, pid=3000, n=1)] * 20)
    failed, result = run_module(extender_status, args(extender, since=str(BASE), wait=True, interval=2))
    assert not failed
    assert (result['ready'], result['crash_loop'], result['restarted'], result['scheduler_healthy']) == (True, False, True, True)
    assert len(used) == 7
    assert node.clock.sleeps == [2] * 6
    assert result['msg'] == 'ready'
    assert 'journal' not in result


def test_single_look_sees_a_crash_loop_from_the_counter(node, extender, monkeypatch):
    scheduler_health(node, monkeypatch)
    node.show = lambda: show(active='activating', sub='auto-restart', mono_s=1010, pid=0, n=2)
    failed, result = run_module(extender_status, args(extender, since=str(BASE)))
    assert not failed
    assert (result['ready'], result['crash_loop'], result['n_restarts']) == (False, True, 2)
    assert result['msg'].startswith('crash loop: k3s exited 2 times since the change')
    # one automatic restart may be the one that applied the change
    node.show = lambda: show(active='activating', sub='auto-restart', mono_s=1010, pid=0, n=1)
    failed, result = run_module(extender_status, args(extender, since=str(BASE)))
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


def test_openrc_child_pid_changing_twice_is_a_crash_loop(node, extender, monkeypatch):
    node.use_openrc()
    scheduler_health(node, monkeypatch)
    (node.init_d / 'k3s').write_text('#!/sbin/openrc-run\n')
    (node.run / 'openrc' / 'started').mkdir(parents=True)
    os.symlink('/etc/init.d/k3s', str(node.run / 'openrc' / 'started' / 'k3s'))
    options = node.run / 'openrc' / 'options' / 'k3s'
    options.mkdir(parents=True)
    (node.log / 'k3s.log').write_text('E0113 10:00:04 scheduler config invalid\nk3s exited\n')
    node.process(500, ['supervise-daemon', 'k3s', '--start'], 5)

    def child(pid, start_s):
        node.process(pid, ['/usr/local/bin/k3s', 'server'], start_s, ppid=500)
        (options / 'child_pid').write_text(str(pid))

    child(501, 995)  # started after the change (BASE - 10)
    respawns = {2: (501, 502, 1001), 4: (502, 503, 1003)}

    def respawn(t):
        old, new, start = respawns[int(t)]
        for name in ('stat', 'cmdline'):
            (node.proc / str(old) / name).unlink()
        (node.proc / str(old)).rmdir()
        child(new, start)

    node.clock.after_sleep = respawn
    failed, result = run_module(extender_status, args(extender, since=str(BASE - 10), wait=True, interval=2, journal_lines=5))
    assert not failed, result
    assert (result['init'], result['ready'], result['crash_loop'], result['main_pid'], result['n_restarts']) == ('openrc', False, True, 503, 2)
    assert node.clock.sleeps == [2, 2]
    assert result['msg'].startswith('crash loop: k3s exited 2 times since the change at 2026-01-13T09:59:50.000000Z')
    assert result['journal'] == ['E0113 10:00:04 scheduler config invalid', 'k3s exited']
