# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""When did a service (or the kube-scheduler process) last start, in wall-clock seconds since the epoch?

Time zones and DST never enter: systemd's start time is read as a CLOCK_MONOTONIC value and
moved to the wall clock with the node's current CLOCK_REALTIME - CLOCK_MONOTONIC offset; a
process's start comes from ``/proc/<pid>/stat`` (clock ticks since boot) plus the boot time.
The text timestamps systemd prints are only a fallback, and only when printed in UTC (the
module runs ``systemctl`` with ``TZ=UTC``).

Every function that reads ``/proc`` or ``/run`` takes the root as an argument, so tests use
fake trees. No Ansible import.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import time

SYSTEMCTL_PROPERTIES = ('LoadState', 'ActiveState', 'SubState', 'MainPID', 'ExecMainStartTimestamp',
                        'ExecMainStartTimestampMonotonic', 'ActiveEnterTimestampMonotonic', 'NRestarts')
# openrc's state directory (RC_SVCDIR): /run/openrc on Linux; older layouts kept for completeness
OPENRC_SVCDIRS = ('openrc', )
OPENRC_STATES = (('started', 'active'), ('starting', 'activating'), ('stopping', 'deactivating'),
                 ('failed', 'failed'), ('inactive', 'inactive'))
BTIME_TOLERANCE = 1.5


class Clock:
    """The node's clocks. Tests pass a fake with the same methods."""

    def realtime(self):
        return time.clock_gettime(time.CLOCK_REALTIME)

    def monotonic(self):
        return time.clock_gettime(time.CLOCK_MONOTONIC)

    def boottime(self):
        return time.clock_gettime(getattr(time, 'CLOCK_BOOTTIME', time.CLOCK_MONOTONIC))

    def sleep(self, seconds):
        time.sleep(seconds)


def clk_tck():
    """Clock ticks per second, the unit of /proc/<pid>/stat starttime."""
    try:
        return os.sysconf('SC_CLK_TCK')
    except (ValueError, OSError, AttributeError):
        return 100


# ---------------------------------------------------------------------------------------------
# time values

def to_iso(epoch):
    """ISO 8601 in UTC with a ``Z`` (microseconds kept), or None."""
    if epoch is None:
        return None
    dt = datetime.datetime.fromtimestamp(epoch, tz=datetime.timezone.utc)
    return dt.strftime('%Y-%m-%dT%H:%M:%S.%fZ')


_ISO_RE = re.compile(
    r'^(?P<date>\d{4}-\d{2}-\d{2})(?:[T ](?P<time>\d{2}:\d{2}(?::\d{2})?)(?:[.,](?P<frac>\d+))?)?'
    r'\s*(?P<tz>Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?$')


def parse_since(value):
    """Epoch seconds from epoch seconds (int, float or digits) or an ISO 8601 date/time.

    A time without an offset is taken as UTC. Raises ValueError on anything else.
    """
    if isinstance(value, bool):
        raise ValueError('not a time: %r' % (value,))
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    if re.match(r'^[+-]?\d+(\.\d+)?$', text):
        return float(text)
    m = _ISO_RE.match(text)
    if not m:
        raise ValueError('not epoch seconds nor an ISO 8601 date/time: %r' % (value,))
    clock = m.group('time') or '00:00:00'
    if clock.count(':') == 1:
        clock += ':00'
    frac = (m.group('frac') or '0')[:6].ljust(6, '0')
    tz = m.group('tz')
    if tz in (None, 'Z', 'z', 'UTC'):
        offset = datetime.timedelta(0)
    else:
        digits = tz[1:].replace(':', '')
        offset = datetime.timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
        if tz[0] == '-':
            offset = -offset
    try:
        dt = datetime.datetime.strptime('%s %s %s' % (m.group('date'), clock, frac), '%Y-%m-%d %H:%M:%S %f')
    except ValueError as e:
        raise ValueError('not a valid date/time: %r (%s)' % (value, e)) from e
    return dt.replace(tzinfo=datetime.timezone(offset)).timestamp()


def started_since(started_at, since, resolution=0.0):
    """True when a start at ``started_at`` (known to ``resolution`` seconds) is at or after ``since``.

    None when either time is unknown. ``resolution`` covers values that are truncated
    (clock ticks, an integer boot time): a start in the same tick as the change counts.
    """
    if started_at is None or since is None:
        return None
    return started_at + resolution >= since


# ---------------------------------------------------------------------------------------------
# systemd

def parse_systemctl_show(text):
    """``KEY=VALUE`` lines of ``systemctl show`` into a dict (first ``=`` splits; blank lines skipped)."""
    props = {}
    for line in (text or '').splitlines():
        if '=' not in line:
            continue
        key, value = line.split('=', 1)
        props[key.strip()] = value.strip()
    return props


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def monotonic_to_wall(usec, clock):
    """Wall-clock epoch of a CLOCK_MONOTONIC value in microseconds, via the current offset.

    0 (systemd's "never") gives None.
    """
    if not usec:
        return None
    offset = clock.realtime() - clock.monotonic()
    return usec / 1e6 + offset


_SYSTEMD_TS_RE = re.compile(r'^(?:[A-Za-z]{3}\s+)?(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)\s+(\S+)$')


def parse_systemd_timestamp(text):
    """Epoch of a systemd text timestamp, only when it is unambiguous.

    ``@1700000000`` (``--timestamp=unix``) and ``Tue 2026-01-13 10:00:01 UTC`` are read;
    a local zone name (``CET``, ``EDT``...) is not, since the same name can mean different
    offsets: None is returned and the caller must rely on the monotonic value.
    """
    text = (text or '').strip()
    if not text or text == 'n/a':
        return None
    if text.startswith('@'):
        try:
            return float(text[1:])
        except ValueError:
            return None
    m = _SYSTEMD_TS_RE.match(text)
    if not m or m.group(2) not in ('UTC', 'GMT', 'Z'):
        return None
    try:
        return parse_since(m.group(1) + 'Z')
    except ValueError:
        return None


def systemd_state(props, clock):
    """Normalise ``systemctl show`` properties; the start time prefers the monotonic value."""
    main_pid = _int(props.get('MainPID'))
    started_at, source = None, None
    mono = _int(props.get('ExecMainStartTimestampMonotonic'))
    if mono:
        started_at, source = monotonic_to_wall(mono, clock), 'ExecMainStartTimestampMonotonic'
    else:
        text = parse_systemd_timestamp(props.get('ExecMainStartTimestamp'))
        if text is not None:
            started_at, source = text, 'ExecMainStartTimestamp'
    active_enter = _int(props.get('ActiveEnterTimestampMonotonic'))
    return {
        'load_state': props.get('LoadState') or None,
        'active_state': props.get('ActiveState') or None,
        'sub_state': props.get('SubState') or None,
        'main_pid': main_pid or None,
        'n_restarts': _int(props.get('NRestarts')),
        'started_at': started_at,
        'started_at_source': source,
        'active_entered_at': monotonic_to_wall(active_enter, clock) if active_enter else None,
        'resolution': 0.000001 if source == 'ExecMainStartTimestampMonotonic' else 1.0,
    }


# ---------------------------------------------------------------------------------------------
# /proc

def _read(path, mode='r'):
    try:
        with open(path, mode) as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def read_stat(pid, proc_root='/proc'):
    """Fields of ``/proc/<pid>/stat``: comm, state, ppid, starttime (ticks since boot). None if gone.

    ``comm`` may hold spaces and parentheses: the fields are split after the *last* ``)``.
    """
    text = _read(os.path.join(proc_root, str(pid), 'stat'))
    if not text or ')' not in text:
        return None
    head, tail = text.rsplit(')', 1)
    fields = tail.split()
    # tail starts at field 3 (state); starttime is field 22
    if len(fields) < 20:
        return None
    try:
        return {'pid': int(pid), 'comm': head.split('(', 1)[1] if '(' in head else '',
                'state': fields[0], 'ppid': int(fields[1]), 'starttime': int(fields[19])}
    except ValueError:
        return None


def read_cmdline(pid, proc_root='/proc'):
    """argv of a process (empty list for kernel threads, zombies and vanished processes)."""
    raw = _read(os.path.join(proc_root, str(pid), 'cmdline'), 'rb')
    if not raw:
        return []
    return [a.decode('utf-8', errors='replace') for a in raw.rstrip(b'\0').split(b'\0')]


def read_btime(proc_root='/proc'):
    """``btime`` of /proc/stat: boot time in whole epoch seconds, or None."""
    for line in (_read(os.path.join(proc_root, 'stat')) or '').splitlines():
        if line.startswith('btime '):
            return _int(line.split()[1])
    return None


def boot_time(proc_root='/proc', clock=None):
    """Boot time as (epoch seconds, resolution).

    ``btime`` is truncated to whole seconds; the clocks (CLOCK_REALTIME - CLOCK_BOOTTIME, the
    base of /proc starttime since Linux 5.3) give the fraction. They are used when they agree
    with ``btime`` to within BTIME_TOLERANCE; otherwise (another time namespace, a fake tree)
    ``btime`` wins, with a one-second resolution.
    """
    btime = read_btime(proc_root)
    if clock is not None:
        derived = clock.realtime() - clock.boottime()
        if btime is None or abs(derived - btime) <= BTIME_TOLERANCE:
            return derived, 0.0
    if btime is None:
        return None, None
    return float(btime), 1.0


def alive(pid, proc_root='/proc'):
    st = read_stat(pid, proc_root)
    return st is not None and st['state'] not in ('Z', 'X', 'x')


def process_start(pid, proc_root='/proc', clock=None, ticks=None):
    """{pid, started_at, resolution, cmdline} of a live process, or None."""
    st = read_stat(pid, proc_root)
    if st is None or st['state'] in ('Z', 'X', 'x'):
        return None
    boot, resolution = boot_time(proc_root, clock)
    if boot is None:
        return None
    ticks = ticks or clk_tck()
    return {'pid': st['pid'], 'started_at': boot + st['starttime'] / float(ticks),
            'resolution': resolution + 1.0 / ticks, 'cmdline': read_cmdline(pid, proc_root)}


def list_pids(proc_root='/proc'):
    try:
        return sorted(int(n) for n in os.listdir(proc_root) if n.isdigit())
    except OSError:
        return []


def find_processes(name, proc_root='/proc'):
    """pids whose argv[0] basename is ``name``."""
    found = []
    for pid in list_pids(proc_root):
        argv = read_cmdline(pid, proc_root)
        if argv and os.path.basename(argv[0]) == name and alive(pid, proc_root):
            found.append(pid)
    return found


def children(ppid, proc_root='/proc'):
    kids = []
    for pid in list_pids(proc_root):
        st = read_stat(pid, proc_root)
        if st is not None and st['ppid'] == ppid and st['state'] not in ('Z', 'X', 'x'):
            kids.append(pid)
    return kids


def _uses_config(argv, config_path):
    for i, arg in enumerate(argv):
        if arg == '--config=' + config_path or arg == '-config=' + config_path:
            return True
        if arg in ('--config', '-config') and i + 1 < len(argv) and argv[i + 1] == config_path:
            return True
    return False


def scheduler_process(proc_root='/proc', clock=None, config_path=None, ticks=None):
    """The kube-scheduler process (argv[0] basename ``kube-scheduler``) that started last.

    When ``config_path`` is given and some kube-scheduler uses ``--config=<config_path>``,
    only those count (a secondary scheduler must not pass for the main one). None if none runs.
    """
    starts = [s for s in (process_start(p, proc_root, clock, ticks) for p in find_processes('kube-scheduler', proc_root)) if s]
    if config_path:
        ours = [s for s in starts if _uses_config(s['cmdline'], config_path)]
        starts = ours or starts
    if not starts:
        return None
    return max(starts, key=lambda s: s['started_at'])


def scheduler_pod_attempt(log_root='/var/log/pods', container='kube-scheduler'):
    """The kubelet's newest start of the kube-scheduler static pod's container, from its logs.

    The kubelet writes each start of a container to
    ``<log_root>/<namespace>_<pod>_<uid>/<container>/<restart count>.log``, creating the file
    when it creates the container and keeping the previous one, so the container directory's
    mtime is the newest start's. This sees starts that exit between two looks (a crash loop
    under the kubelet's back-off, whose process is gone most of the time).
    Returns ``{'key': (pod directory, restart count), 'started_at', 'resolution', 'path'}`` for
    the newest start, or None when there are no such logs.
    """
    try:
        names = os.listdir(log_root)
    except OSError:
        return None
    best = None
    for name in names:
        if not name.startswith('kube-system_kube-scheduler-'):
            continue
        cdir = os.path.join(log_root, name, container)
        try:
            mtime_ns = os.stat(cdir).st_mtime_ns
            counts = [int(f[:-4]) for f in os.listdir(cdir) if f.endswith('.log') and f[:-4].isdigit()]
        except OSError:
            continue
        if counts and (best is None or mtime_ns > best[0]):
            best = (mtime_ns, name, max(counts), cdir)
    if best is None:
        return None
    mtime_ns, name, count, cdir = best
    # file times come from the kernel's coarse clock (one jiffy, up to 10 ms)
    return {'key': (name, count), 'started_at': mtime_ns / 1e9, 'resolution': 0.01,
            'path': os.path.join(cdir, '%d.log' % count)}


def parse_crictl_ps(text, name='kube-scheduler'):
    """Newest running container named ``name`` in ``crictl ps -o json``: {id, started_at} or None.

    ``createdAt`` is nanoseconds since the epoch (a string in crictl's JSON).
    """
    try:
        data = json.loads(text or '{}')
    except ValueError:
        return None
    best = None
    for c in data.get('containers') or []:
        if (c.get('metadata') or {}).get('name') != name:
            continue
        if c.get('state') not in (None, 'CONTAINER_RUNNING'):
            continue
        ns = _int(c.get('createdAt'))
        if not ns:
            continue
        if best is None or ns / 1e9 > best['started_at']:
            best = {'id': c.get('id'), 'started_at': ns / 1e9, 'resolution': 0.000001}
    return best


# ---------------------------------------------------------------------------------------------
# openrc

def openrc_svcdirs(run_root='/run'):
    return [os.path.join(run_root, d) for d in OPENRC_SVCDIRS]


def _under_run(path, run_root):
    """``/run/x`` or ``/var/run/x`` moved under ``run_root`` (tests use a fake /run)."""
    for prefix in ('/var/run/', '/run/'):
        if path.startswith(prefix):
            return os.path.join(run_root, path[len(prefix):])
    return path


def openrc_option(service, option, run_root='/run'):
    for svcdir in openrc_svcdirs(run_root):
        value = _read(os.path.join(svcdir, 'options', service, option))
        if value is not None:
            return value.strip()
    return None


def openrc_service_pid(service, proc_root='/proc', run_root='/run'):
    """pid of the process supervise-daemon runs for ``service``, and where it was found.

    openrc 0.45's supervise-daemon records the child in ``<RC_SVCDIR>/options/<svc>/child_pid``;
    the ``pidfile`` an init script sets (k3s: ``/var/run/k3s.pid``) holds the *supervisor's*
    pid, whose child is the service. Last resort: a ``supervise-daemon <svc> ...`` process's child.
    """
    pid = _int(openrc_option(service, 'child_pid', run_root))
    if pid and alive(pid, proc_root):
        return pid, 'child_pid'
    pidfiles = []
    recorded = openrc_option(service, 'pidfile', run_root)
    if recorded:
        pidfiles.append(_under_run(recorded, run_root))
    pidfiles += [os.path.join(run_root, '%s.pid' % service), os.path.join(run_root, 'supervise-%s.pid' % service)]
    for pidfile in pidfiles:
        pid = _int((_read(pidfile) or '').strip())
        if not pid or not alive(pid, proc_root):
            continue
        argv = read_cmdline(pid, proc_root)
        if argv and os.path.basename(argv[0]) == 'supervise-daemon':
            kids = children(pid, proc_root)
            if kids:
                return kids[-1], 'pidfile'
            continue
        return pid, 'pidfile'
    for sup in find_processes('supervise-daemon', proc_root):
        argv = read_cmdline(sup, proc_root)
        if len(argv) > 1 and argv[1] == service:
            kids = children(sup, proc_root)
            if kids:
                return kids[-1], 'supervise-daemon'
    return None, None


def openrc_state(service, proc_root='/proc', run_root='/run'):
    """openrc's state of ``service`` in systemd's words (active, activating, failed, inactive...).

    ``started`` with no live supervised process is openrc's "crashed": reported as ``failed``.
    """
    state = 'inactive'
    for svcdir in openrc_svcdirs(run_root):
        for directory, name in OPENRC_STATES:
            if os.path.lexists(os.path.join(svcdir, directory, service)):
                state = name
                break
        else:
            continue
        break
    pid, source = openrc_service_pid(service, proc_root, run_root)
    if state == 'active' and pid is None:
        state = 'failed'
    return {'active_state': state, 'sub_state': 'crashed' if state == 'failed' and pid is None else state,
            'main_pid': pid, 'pid_source': source,
            'n_restarts': _int(openrc_option(service, 'start_count', run_root))}


# ---------------------------------------------------------------------------------------------
# crash loops

# The main process is gone and the manager is about to start it again (or gave up): one exit
# that the restart counter does not show yet (systemd increments NRestarts when RestartSec ends).
EXIT_PENDING_SUBSTATES = ('auto-restart', 'auto-restart-queued', 'failed', 'crashed')
CRASH_LOOP_MIN_EXITS = 2


class CrashWatch:
    """Tell a crash loop from the one restart that applied the change.

    Feed one observation per look (``update``), oldest first. An observation is a dict with
    ``restarted`` (the service, or the scheduler, started at or after the change: True, False
    or None when there is no change time), ``active_state``, ``sub_state``, ``identity`` (what
    tells one run of the service from the next: the main pid, or for a static pod the service's
    pid and the scheduler's pid or container id; None while nothing runs), ``n_restarts`` (the
    manager's count of automatic restarts, or None) and ``healthy`` (the scheduler health
    endpoint: True, False, or None when not checked).

    The *baseline* is the first observation whose start is at or after the change (the first
    one at all without a change time): the restart that applied the change happens before it
    and is never counted. From the baseline on, an exit is counted for

    - each automatic restart: ``n_restarts`` above its baseline value (at the baseline itself,
      all automatic restarts but one: systemd resets ``NRestarts`` on a manual start, so more
      than one since the process that started after the change means it already exited);
    - each new identity (another main pid: the process was started again);
    - a main process that is gone while the manager restarts it (``auto-restart``, ``failed``,
      openrc ``crashed``), which the two above show only at the next start.

    The larger of the counter-based and the identity-based numbers is taken (a look can miss a
    short-lived pid; the counter cannot). A crash loop is at least ``min_exits`` exits with the
    scheduler never seen healthy since the baseline: one exit, or a slow start that never
    exits, is not enough. Once the scheduler answered healthy there is no crash loop.
    """

    def __init__(self, since_known=True, min_exits=CRASH_LOOP_MIN_EXITS):
        self.since_known = since_known
        self.min_exits = min_exits
        self.base = None
        self.identities = []
        self.healthy_seen = False
        self.exits = 0
        self.looks = 0

    @property
    def crash_loop(self):
        return self.base is not None and not self.healthy_seen and self.exits >= self.min_exits

    @property
    def respawns(self):
        """Starts seen after the baseline's (new identities), for managers without a counter."""
        return max(0, len(self.identities) - 1)

    @staticmethod
    def exit_pending(obs):
        return obs.get('sub_state') in EXIT_PENDING_SUBSTATES or obs.get('active_state') == 'failed'

    def update(self, obs):
        """Take one observation; returns True when it shows a crash loop."""
        if self.base is None:
            if self.since_known and obs.get('restarted') is not True:
                # still the process from before the change (or none yet): its restart is pending
                return False
            n0 = obs.get('n_restarts')
            prior = max(0, n0 - 1) if (self.since_known and n0) else 0
            self.base = {'n_restarts': n0, 'prior': prior}
            if obs.get('identity') is None:
                # the process that started after the change is already gone: the next one is a respawn
                self.identities.append(('gone before the first look',))
        self.looks += 1
        if obs.get('healthy') is True:
            self.healthy_seen = True
        identity = obs.get('identity')
        if identity is not None and identity not in self.identities:
            self.identities.append(identity)
        pending = 1 if self.exit_pending(obs) else 0
        exits = self.respawns + pending
        n, n0 = obs.get('n_restarts'), self.base['n_restarts']
        if n is not None and n0 is not None:
            exits = max(exits, self.base['prior'] + max(0, n - n0) + pending)
        self.exits = max(self.exits, exits)
        return self.crash_loop
