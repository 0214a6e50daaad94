# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import os

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _service_clock as sc
from ansible_collections.baremetal.k3s.plugins.module_utils._view import View

# 2026-01-13T10:00:00Z
BASE = 1768298400


class FakeClock:
    """Booted ``up`` seconds before ``BASE + t``; CLOCK_MONOTONIC == CLOCK_BOOTTIME (no suspend)."""

    def __init__(self, up=1000.0, t=0.0, suspended=0.0):
        self.up = up
        self.t = t
        self.suspended = suspended

    def realtime(self):
        return BASE + self.t

    def boottime(self):
        return self.up + self.t

    def monotonic(self):
        return self.up + self.t - self.suspended

    def sleep(self, seconds):
        self.t += seconds


# Recorded with: TZ=UTC systemctl show k3s --property=LoadState,ActiveState,...
SHOW_ACTIVE = """LoadState=loaded
ActiveState=active
SubState=running
MainPID=2211
ExecMainStartTimestamp=Tue 2026-01-13 09:59:50 UTC
ExecMainStartTimestampMonotonic=990000000
ActiveEnterTimestampMonotonic=995500000
NRestarts=0
"""

SHOW_NOT_FOUND = """LoadState=not-found
ActiveState=inactive
SubState=dead
MainPID=0
ExecMainStartTimestamp=
ExecMainStartTimestampMonotonic=0
ActiveEnterTimestampMonotonic=0
NRestarts=0
"""

SHOW_AUTO_RESTART = """LoadState=loaded
ActiveState=activating
SubState=auto-restart
MainPID=0
ExecMainStartTimestamp=Tue 2026-01-13 09:59:58 UTC
ExecMainStartTimestampMonotonic=998000000
ActiveEnterTimestampMonotonic=0
NRestarts=3
"""


def test_parse_systemctl_show():
    props = sc.parse_systemctl_show(SHOW_ACTIVE + '\nEnvironment=A=1 B=2\n\n')
    assert props['MainPID'] == '2211'
    assert props['Environment'] == 'A=1 B=2'
    assert props['ExecMainStartTimestamp'] == 'Tue 2026-01-13 09:59:50 UTC'


def test_systemd_state_monotonic_to_wall():
    state = sc.systemd_state(sc.parse_systemctl_show(SHOW_ACTIVE), FakeClock(up=1000))
    # booted at BASE-1000; started 990 s after boot
    assert state['started_at'] == pytest.approx(BASE - 10)
    assert state['started_at_source'] == 'ExecMainStartTimestampMonotonic'
    assert state['active_entered_at'] == pytest.approx(BASE - 4.5)
    assert (state['active_state'], state['sub_state'], state['main_pid'], state['n_restarts']) == ('active', 'running', 2211, 0)
    assert state['load_state'] == 'loaded'


@pytest.mark.parametrize('text', [
    'Tue 2026-01-13 10:59:50 CET',   # the same instant printed in Europe/Berlin
    'Tue 2026-01-13 04:59:50 EST',   # America/New_York
    'Tue 2026-01-13 23:59:50 NZDT',  # Pacific/Auckland, summer time
    'Tue 2026-01-13 03:00:00 UTC',   # a stale or wrong text must not matter either
    '',
])
def test_monotonic_wins_over_any_text_timestamp(text):
    props = sc.parse_systemctl_show(SHOW_ACTIVE)
    props['ExecMainStartTimestamp'] = text
    assert sc.systemd_state(props, FakeClock(up=1000))['started_at'] == pytest.approx(BASE - 10)


def test_suspend_between_start_and_now_is_accounted_for():
    # 300 s of suspend: CLOCK_MONOTONIC lags the wall clock by 300 s more than at start
    clock = FakeClock(up=1000, suspended=300)
    started = sc.monotonic_to_wall(690 * 10 ** 6, clock)
    # wall offset now = BASE - 700; the start happened 690 s of monotonic time after boot
    assert started == pytest.approx(BASE - 10)


def test_clock_step_moves_the_estimate_with_the_wall_clock():
    # NTP steps the wall clock forward 3600 s: the same monotonic start is now 3600 s later in wall time,
    # exactly as the change's mtime (taken after the step) would be
    before = sc.monotonic_to_wall(990 * 10 ** 6, FakeClock(up=1000))
    stepped = FakeClock(up=1000)
    stepped.realtime = lambda: BASE + 3600
    assert sc.monotonic_to_wall(990 * 10 ** 6, stepped) - before == pytest.approx(3600)


@pytest.mark.parametrize('text, expected', [
    ('Tue 2026-01-13 09:59:50 UTC', BASE - 10),
    ('2026-01-13 09:59:50 UTC', BASE - 10),
    ('Tue 2026-01-13 09:59:50.250000 UTC', BASE - 9.75),
    ('@1768298390', BASE - 10),
    ('Tue 2026-01-13 10:59:50 CET', None),
    ('Sun 2026-03-29 03:30:00 CEST', None),
    ('n/a', None),
    ('', None),
    ('garbage', None),
])
def test_parse_systemd_timestamp(text, expected):
    got = sc.parse_systemd_timestamp(text)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected)


def test_text_timestamp_is_the_fallback_only_in_utc():
    props = sc.parse_systemctl_show(SHOW_ACTIVE)
    props['ExecMainStartTimestampMonotonic'] = '0'
    state = sc.systemd_state(props, FakeClock())
    assert (state['started_at'], state['started_at_source'], state['resolution']) == (BASE - 10, 'ExecMainStartTimestamp', 1.0)
    props['ExecMainStartTimestamp'] = 'Tue 2026-01-13 10:59:50 CET'
    assert sc.systemd_state(props, FakeClock())['started_at'] is None


def test_never_started_and_not_found():
    state = sc.systemd_state(sc.parse_systemctl_show(SHOW_NOT_FOUND), FakeClock())
    assert state['load_state'] == 'not-found'
    assert state['started_at'] is None
    assert state['main_pid'] is None


def test_restarted_twice_latest_start_counts():
    clock = FakeClock(up=1000)
    since = BASE - 5  # the change
    seen = []
    for mono, n in ((990, 0), (996, 1), (999, 2)):
        text = SHOW_AUTO_RESTART.replace('998000000', str(mono * 10 ** 6)).replace('NRestarts=3', 'NRestarts=%d' % n)
        state = sc.systemd_state(sc.parse_systemctl_show(text), clock)
        seen.append((sc.started_since(state['started_at'], since, state['resolution']), state['n_restarts']))
    assert seen == [(False, 0), (True, 1), (True, 2)]


@pytest.mark.parametrize('value, expected', [
    (1768298400, BASE),
    ('1768298400', BASE),
    ('1768298400.5', BASE + 0.5),
    ('2026-01-13T10:00:00Z', BASE),
    ('2026-01-13T10:00:00', BASE),
    ('2026-01-13 10:00:00', BASE),
    ('2026-01-13T11:00:00+01:00', BASE),
    ('2026-01-13T05:00:00-0500', BASE),
    ('2026-01-13T10:00:00.123456789Z', BASE + 0.123456),
    ('2026-01-13T10:00Z', BASE),
    ('2026-01-13', BASE - 36000),
    # DST: the two 02:30 of 2026-10-25 in Europe/Berlin are one hour apart
    ('2026-10-25T02:30:00+02:00', 1792888200),
    ('2026-10-25T02:30:00+01:00', 1792891800),
    # spring forward: 03:30 CEST is 01:30 UTC
    ('2026-03-29T03:30:00+02:00', 1774747800),
])
def test_parse_since(value, expected):
    assert sc.parse_since(value) == pytest.approx(expected)


@pytest.mark.parametrize('value', ['yesterday', '2026-13-01T00:00:00Z', '2026-01-13T25:00:00Z', '', True, '13/01/2026'])
def test_parse_since_rejects(value):
    with pytest.raises(ValueError):
        sc.parse_since(value)


def test_to_iso():
    assert sc.to_iso(BASE + 0.25) == '2026-01-13T10:00:00.250000Z'
    assert sc.to_iso(None) is None


@pytest.mark.parametrize('started, since, resolution, expected', [
    (BASE, BASE, 0, True),
    (BASE - 0.001, BASE, 0, False),
    (BASE - 0.005, BASE, 0.01, True),
    (None, BASE, 0, None),
    (BASE, None, 0, None),
])
def test_started_since(started, since, resolution, expected):
    assert sc.started_since(started, since, resolution) is expected


# ---------------------------------------------------------------------------------------------
# node trees with a fake /proc, read through a View

def make_proc(root, btime=BASE - 1000, procs=(), clock=None):
    """A View of a node tree whose /proc holds ``procs``: (pid, comm, state, ppid, starttime_ticks, argv)."""
    proc = root / 'proc'
    proc.mkdir(parents=True, exist_ok=True)
    (proc / 'stat').write_text('cpu  1 2 3 4\nbtime %d\nprocesses 4000\n' % btime)
    for pid, comm, state, ppid, start, argv in procs:
        d = proc / str(pid)
        d.mkdir()
        fields = [state, str(ppid)] + ['0'] * 17 + [str(start)] + ['0'] * 10
        (d / 'stat').write_text('%d (%s) %s\n' % (pid, comm, ' '.join(fields)))
        (d / 'cmdline').write_bytes(b''.join(a.encode() + b'\0' for a in argv))
    return View(root=str(root), clock=clock or FakeClock())


def test_read_stat_with_odd_comm(tmp_path):
    # _service_clock reads /proc/<pid>/stat with the View's reader
    view = make_proc(tmp_path, procs=[(42, 'a) (b c', 'S', 1, 12345, ['x'])])
    st = view.proc_stat(42)
    assert st == {'pid': 42, 'comm': 'a) (b c', 'state': 'S', 'ppid': 1, 'starttime': 12345}
    assert view.proc_stat(43) is None


def test_process_start_uses_clocks_when_they_agree_with_btime(tmp_path):
    # the clocks say boot was at BASE-1000.4; btime truncates to BASE-1001
    clock = FakeClock(up=1000.4)
    view = make_proc(tmp_path, btime=BASE - 1001, procs=[(7, 'k3s-server', 'S', 1, 99000, ['/usr/local/bin/k3s', 'server'])], clock=clock)
    start = sc.process_start(view, 7, ticks=100)
    assert start['started_at'] == pytest.approx(BASE - 1000.4 + 990)
    assert start['resolution'] == pytest.approx(0.011)  # a clock tick, and the boot time's millisecond
    assert start['cmdline'] == ['/usr/local/bin/k3s', 'server']


def test_process_start_falls_back_to_btime(tmp_path):
    view = make_proc(tmp_path, btime=BASE - 5000, procs=[(7, 'k3s', 'S', 1, 99000, ['k3s'])], clock=FakeClock(up=1000))
    start = sc.process_start(view, 7, ticks=100)  # clocks disagree (other namespace)
    assert start['started_at'] == pytest.approx(BASE - 5000 + 990)
    assert start['resolution'] == pytest.approx(1.01)
    view.clock = None  # a view without clocks: btime
    assert sc.process_start(view, 7, ticks=100)['started_at'] == pytest.approx(BASE - 5000 + 990)


def test_zombie_and_missing_processes_have_no_start(tmp_path):
    view = make_proc(tmp_path, procs=[(8, 'kube-scheduler', 'Z', 1, 5, [])])
    assert sc.process_start(view, 8, ticks=100) is None
    assert sc.process_start(view, 9, ticks=100) is None


def test_scheduler_process_newest_and_by_config(tmp_path):
    clock = FakeClock(up=1000)
    view = make_proc(tmp_path, clock=clock, procs=[
        (100, 'kube-scheduler', 'S', 90, 50000, ['kube-scheduler', '--config=/etc/kubernetes/sched.yaml', '--v=2']),
        (200, 'kube-scheduler', 'S', 91, 80000, ['/usr/local/bin/kube-scheduler', '--config', '/etc/second.yaml']),
        (300, 'kube-scheduler', 'Z', 92, 90000, []),
        (400, 'bash', 'S', 1, 95000, ['bash', '-c', 'kube-scheduler']),
    ])
    newest = sc.scheduler_process(view, ticks=100)
    assert newest['pid'] == 200
    assert newest['started_at'] == pytest.approx(BASE - 1000 + 800)
    ours = sc.scheduler_process(view, config_path='/etc/kubernetes/sched.yaml', ticks=100)
    assert ours['pid'] == 100
    # an unknown config path: all schedulers count
    assert sc.scheduler_process(view, config_path='/nowhere.yaml', ticks=100)['pid'] == 200
    assert sc.scheduler_process(make_proc(tmp_path / 'empty', clock=clock)) is None


def test_scheduler_pod_attempt_newest_start_from_the_kubelet_logs(tmp_path):
    view = View(root=str(tmp_path), clock=FakeClock())
    assert sc.scheduler_pod_attempt(view) is None  # no /var/log/pods
    pods = tmp_path / 'var' / 'log' / 'pods'
    for pod, logs, mtime in (('kube-system_kube-scheduler-node-1_old', ('0.log', '1.log'), BASE - 600),
                             ('kube-system_kube-scheduler-node-1_new', ('2.log', '3.log', 'x.log'), BASE - 5),
                             ('kube-system_etcd-node-1_e', ('7.log',), BASE)):
        cdir = pods / pod / ('etcd' if 'etcd' in pod else 'kube-scheduler')
        cdir.mkdir(parents=True)
        for name in logs:
            (cdir / name).write_text('')
        os.utime(str(cdir), (mtime, mtime))
    (pods / 'kube-system_kube-scheduler-node-1_empty' / 'kube-scheduler').mkdir(parents=True)  # no start logged yet
    found = sc.scheduler_pod_attempt(view)
    assert found == {'key': ('kube-system_kube-scheduler-node-1_new', 3), 'started_at': BASE - 5, 'resolution': 0.01,
                     'path': '/var/log/pods/kube-system_kube-scheduler-node-1_new/kube-scheduler/3.log'}


def test_parse_crictl_ps():
    text = '''{"containers": [
      {"id": "aaa", "metadata": {"name": "kube-scheduler", "attempt": 0}, "state": "CONTAINER_EXITED", "createdAt": "1768298300000000000"},
      {"id": "bbb", "metadata": {"name": "kube-scheduler", "attempt": 1}, "state": "CONTAINER_RUNNING", "createdAt": "1768298395500000000"},
      {"id": "ccc", "metadata": {"name": "etcd", "attempt": 0}, "state": "CONTAINER_RUNNING", "createdAt": "1768298399000000000"}]}'''
    found = sc.parse_crictl_ps(text)
    assert found['id'] == 'bbb'
    assert found['started_at'] == pytest.approx(BASE - 4.5)
    assert sc.parse_crictl_ps('{"containers": []}') is None
    assert sc.parse_crictl_ps('not json') is None


# ---------------------------------------------------------------------------------------------
# openrc

def make_openrc(root, service, state='started', child_pid=None, pidfile=None, pidfile_pid=None, start_count=None):
    """openrc's state of ``service`` in the node tree ``root``; /var/run is a link to /run, as on a node."""
    run = root / 'run'
    if not (root / 'var' / 'run').exists():
        (root / 'var').mkdir(parents=True, exist_ok=True)
        os.symlink('/run', str(root / 'var' / 'run'))
    svcdir = run / 'openrc'
    (svcdir / state).mkdir(parents=True, exist_ok=True)
    os.symlink('/etc/init.d/%s' % service, str(svcdir / state / service))
    opts = svcdir / 'options' / service
    opts.mkdir(parents=True, exist_ok=True)
    if child_pid is not None:
        (opts / 'child_pid').write_text('%d' % child_pid)
    if start_count is not None:
        (opts / 'start_count').write_text('%d' % start_count)
    if pidfile is not None:
        (opts / 'pidfile').write_text(pidfile)
        (run / os.path.basename(pidfile)).write_text('%d\n' % pidfile_pid)
    return View(root=str(root), clock=FakeClock())


K3S_OPENRC_PROCS = [
    (500, 'supervise-daemo', 'S', 1, 1000, ['supervise-daemon', 'k3s', '--start', '--pidfile', '/var/run/k3s.pid', '/usr/local/bin/k3s']),
    (501, 'k3s-server', 'S', 500, 99000, ['/usr/local/bin/k3s', 'server']),
    (600, 'supervise-daemo', 'S', 1, 1000, ['supervise-daemon', 'other', '--start']),
    (601, 'other', 'S', 600, 2000, ['/usr/bin/other']),
]


def test_openrc_child_pid_option(tmp_path):
    make_proc(tmp_path, procs=K3S_OPENRC_PROCS)
    view = make_openrc(tmp_path, 'k3s', child_pid=501, start_count=2)
    assert sc.openrc_service_pid(view, 'k3s') == (501, 'child_pid')
    state = sc.openrc_state(view, 'k3s')
    assert (state['active_state'], state['main_pid'], state['n_restarts']) == ('active', 501, 2)


def test_openrc_supervisor_pidfile_leads_to_the_child(tmp_path):
    make_proc(tmp_path, procs=K3S_OPENRC_PROCS)
    # stale child_pid (that process is gone): the supervisor's pidfile is used, /var/run/k3s.pid as recorded
    view = make_openrc(tmp_path, 'k3s', child_pid=499, pidfile='/var/run/k3s.pid', pidfile_pid=500)
    assert sc.openrc_service_pid(view, 'k3s') == (501, 'pidfile')


def test_openrc_pidfile_is_read_where_it_was_recorded(tmp_path):
    # /var/run a directory of its own (no link to /run): the recorded path is the one read
    make_proc(tmp_path, procs=K3S_OPENRC_PROCS)
    (tmp_path / 'var' / 'run').mkdir(parents=True)
    (tmp_path / 'var' / 'run' / 'k3s.pid').write_text('500\n')
    view = make_openrc(tmp_path, 'k3s', pidfile='/var/run/k3s.pid', pidfile_pid=600)  # /run/k3s.pid: another supervisor
    assert sc.openrc_service_pid(view, 'k3s') == (501, 'pidfile')


def test_openrc_scan_for_supervisor(tmp_path):
    make_proc(tmp_path, procs=K3S_OPENRC_PROCS)
    view = make_openrc(tmp_path, 'k3s')
    assert sc.openrc_service_pid(view, 'k3s') == (501, 'supervise-daemon')
    assert sc.openrc_service_pid(view, 'other') == (601, 'supervise-daemon')


def test_openrc_crashed_and_stopped(tmp_path):
    make_proc(tmp_path, procs=[])
    view = make_openrc(tmp_path, 'k3s', child_pid=501)
    state = sc.openrc_state(view, 'k3s')
    assert (state['active_state'], state['sub_state'], state['main_pid']) == ('failed', 'crashed', None)
    assert sc.openrc_state(view, 'absent')['active_state'] == 'inactive'
    make_openrc(tmp_path, 'starting-one', state='starting')
    assert sc.openrc_state(view, 'starting-one')['active_state'] == 'activating'


# ---------------------------------------------------------------------------------------------
# crash loops

def look(restarted=True, active='active', sub='running', identity=3000, n=0, healthy=False):
    return {'restarted': restarted, 'active_state': active, 'sub_state': sub, 'identity': identity,
            'n_restarts': n, 'healthy': healthy}


AUTO_RESTART = {'active': 'activating', 'sub': 'auto-restart', 'identity': None}


def feed(watch, looks):
    return [watch.update(o) for o in looks]


def test_crash_loop_restarts_and_auto_restart():
    watch = sc.CrashWatch()
    verdicts = feed(watch, [
        look(restarted=False, identity=2211, n=4),   # the process from before the change
        look(identity=3000, n=0),                    # our restart: the baseline
        look(n=0, **AUTO_RESTART),                   # exit 1
        look(identity=3100, n=1),
        look(n=1, **AUTO_RESTART),                   # exit 2
    ])
    assert verdicts == [False, False, False, False, True]
    assert (watch.exits, watch.respawns, watch.base['n_restarts']) == (2, 1, 0)


def test_restart_that_applied_the_change_is_not_counted():
    watch = sc.CrashWatch()
    # pid changes 2211 -> 3000 and NRestarts 5 -> 1 (a kill-style restart counts as automatic)
    assert feed(watch, [look(restarted=False, identity=2211, n=5), look(identity=3000, n=1), look(identity=3000, n=1)]) == [False] * 3
    assert watch.exits == 0


def test_slow_start_that_never_exits_is_no_crash_loop():
    watch = sc.CrashWatch()
    assert not any(feed(watch, [look(active='activating', sub='start')] + [look()] * 50))
    assert watch.exits == 0


def test_one_exit_is_not_a_crash_loop():
    watch = sc.CrashWatch()
    assert not any(feed(watch, [look(), look(**AUTO_RESTART), look(**AUTO_RESTART), look(identity=3100, n=1)] + [look(identity=3100, n=1)] * 5))
    assert watch.exits == 1


def test_healthy_once_means_no_crash_loop():
    watch = sc.CrashWatch()
    feed(watch, [look(), look(healthy=True), look(**AUTO_RESTART), look(identity=3100, n=1), look(n=1, **AUTO_RESTART)])
    assert watch.exits == 2
    assert watch.crash_loop is False


def test_health_before_the_baseline_does_not_count():
    watch = sc.CrashWatch()
    verdicts = feed(watch, [look(restarted=False, identity=2211, healthy=True), look(), look(**AUTO_RESTART), look(identity=3100, n=1),
                            look(n=1, **AUTO_RESTART)])
    assert verdicts[-1] is True


def test_counter_catches_exits_between_looks():
    # sparse looks: each one sees a running process, the counter shows the restarts in between
    watch = sc.CrashWatch()
    assert feed(watch, [look(identity=3100, n=1), look(identity=3200, n=2), look(identity=3300, n=3)]) == [False, False, True]
    assert watch.exits == 2


def test_single_look():
    # one look: NRestarts counts automatic restarts since the manual start; all but one are exits
    assert sc.CrashWatch().update(look(n=1)) is False
    assert sc.CrashWatch().update(look(n=2)) is False
    assert sc.CrashWatch().update(look(n=3)) is True
    assert sc.CrashWatch().update(look(n=1, **AUTO_RESTART)) is False  # the one automatic restart may be ours
    assert sc.CrashWatch().update(look(n=2, **AUTO_RESTART)) is True
    assert sc.CrashWatch().update(look(active='failed', sub='failed', identity=None, n=2)) is True
    assert sc.CrashWatch().update(look(n=3, healthy=True)) is False
    assert sc.CrashWatch().update(look(restarted=False, n=9, **AUTO_RESTART)) is False


def test_openrc_pid_changes_without_counter():
    watch = sc.CrashWatch()
    assert feed(watch, [look(identity=501, n=None), look(identity=502, n=None), look(identity=503, n=None)]) == [False, False, True]
    assert watch.respawns == 2
    # crashed (no child) between two children counts once
    watch = sc.CrashWatch()
    crashed = {'active': 'failed', 'sub': 'crashed', 'identity': None, 'n': None}
    assert feed(watch, [look(identity=501, n=None), look(**crashed), look(identity=502, n=None), look(**crashed)]) == [False, False, False, True]


def test_first_look_already_gone():
    # the process that started after the change is already in auto-restart at the first look
    watch = sc.CrashWatch()
    assert feed(watch, [look(n=0, **AUTO_RESTART), look(identity=3100, n=1), look(n=1, **AUTO_RESTART)]) == [False, False, True]


def test_without_a_change_time_the_first_look_is_the_baseline():
    watch = sc.CrashWatch(since_known=False)
    assert feed(watch, [look(restarted=None, n=7), look(restarted=None, n=8), look(restarted=None, n=9)]) == [False, False, True]
    assert sc.CrashWatch(since_known=False).update(look(restarted=None, n=7)) is False


class JitterClock(FakeClock):
    """The boot clock read a few microseconds after the wall clock, by a different gap each time (a busy node)."""

    def __init__(self, gaps, **kwargs):
        super().__init__(**kwargs)
        self.gaps = list(gaps)

    def boottime(self):
        return self.up + self.t + self.gaps.pop(0)


def test_one_process_has_one_start_whatever_the_gap_between_the_clock_reads(tmp_path):
    # k3s_info's started_at tells one k3s process from the next: two reads of the same process must
    # give the same start, though the two clocks are never read at the same instant
    procs = [(7, 'k3s-server', 'S', 1, 99000, ['/usr/local/bin/k3s', 'server'])]
    first = make_proc(tmp_path / 'a', btime=BASE - 1001, procs=procs, clock=JitterClock([2e-6, 3e-6, 1e-6], up=1000.4))
    second = make_proc(tmp_path / 'b', btime=BASE - 1001, procs=procs, clock=JitterClock([250e-6, 1e-6, 40e-6], up=1000.4))
    a, b = sc.process_start(first, 7, ticks=100), sc.process_start(second, 7, ticks=100)
    assert sc.to_iso(a['started_at']) == sc.to_iso(b['started_at'])
    assert a['started_at'] == pytest.approx(BASE - 1000.4 + 990, abs=0.001)
    assert a['resolution'] == pytest.approx(0.011)
