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

Every reader takes a :class:`~._view.View` (the node, or a test tree standing for it) and reads
``/proc`` through the View's own readers and the clocks through ``view.clock``; the parsers
(``systemctl show``, systemd timestamps, ``crictl`` JSON) and :class:`CrashWatch` do no I/O.
No Ansible import.
"""

from __future__ import annotations

import datetime
import json
import os
import re

from ansible_collections.baremetal.k3s.plugins.module_utils import _pflag as pflag
from ansible_collections.baremetal.k3s.plugins.module_utils._view import ViewError, clk_tck

SYSTEMCTL_PROPERTIES = ('LoadState', 'ActiveState', 'SubState', 'MainPID', 'ExecMainStartTimestamp',
                        'ExecMainStartTimestampMonotonic', 'ActiveEnterTimestampMonotonic', 'NRestarts')
# openrc's state directory (RC_SVCDIR) on Linux
OPENRC_SVCDIRS = ('/run/openrc',)
OPENRC_STATES = (('started', 'active'), ('starting', 'activating'), ('stopping', 'deactivating'),
                 ('failed', 'failed'), ('inactive', 'inactive'))
BTIME_TOLERANCE = 1.5
BOOT_RESOLUTION = 0.001  # the boot time from the clocks, to the millisecond
# where the kubelet writes the logs of static pods' containers
POD_LOG_ROOT = '/var/log/pods'


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
# /proc (through the View's readers)

def _text(view, path):
    """The text of the node's file ``path``; None when it is missing or cannot be read."""
    try:
        return view.read_text(path)
    except ViewError:
        return None


def boot_time(view):
    """Boot time as (epoch seconds, resolution).

    ``btime`` is truncated to whole seconds; the clocks (CLOCK_REALTIME - CLOCK_BOOTTIME, the
    base of /proc starttime since Linux 5.3) give the fraction. They are used when they agree
    with ``btime`` to within BTIME_TOLERANCE; otherwise (another time namespace, a fake tree)
    ``btime`` wins, with a one-second resolution, as it does for a view without clocks.
    """
    btime = view.boot_time()
    clock = view.clock
    if clock is not None:
        # the two clocks are read one after the other: the gap between the reads makes the difference
        # smaller by a few microseconds, more when the process is preempted between them. The closest
        # of three readings, to the millisecond, gives the same boot time (and so the same start of a
        # process) on every read: a caller may compare two reads of one process for equality.
        derived = round(max(clock.realtime() - clock.boottime() for _reading in range(3)), 3)
        if btime is None or abs(derived - btime) <= BTIME_TOLERANCE:
            return derived, BOOT_RESOLUTION
    if btime is None:
        return None, None
    return float(btime), 1.0


def _live(stat):
    return stat is not None and stat['state'] not in ('Z', 'X', 'x')


def alive(view, pid):
    return _live(view.proc_stat(pid))


def process_start(view, pid, ticks=None):
    """{pid, started_at, resolution, cmdline} of a live process, or None."""
    st = view.proc_stat(pid)
    if not _live(st):
        return None
    boot, resolution = boot_time(view)
    if boot is None:
        return None
    ticks = ticks or clk_tck()
    return {'pid': st['pid'], 'started_at': boot + st['starttime'] / float(ticks),
            'resolution': resolution + 1.0 / ticks, 'cmdline': view.cmdline(pid) or []}


def find_processes(view, name):
    """pids whose argv[0] basename is ``name``."""
    found = []
    for pid in view.pids():
        argv = view.cmdline(pid)
        if argv and os.path.basename(argv[0]) == name and alive(view, pid):
            found.append(pid)
    return found


def children(view, ppid):
    """Live processes whose parent is ``ppid``."""
    kids = []
    for pid in view.pids():
        st = view.proc_stat(pid)
        if _live(st) and st['ppid'] == ppid:
            kids.append(pid)
    return kids


def _uses_config(argv, config_path):
    """Whether a kube-scheduler's command line reads ``config_path``: its last ``--config``, as pflag reads it."""
    return pflag.last_value(argv[1:], 'config') == config_path


def scheduler_process(view, config_path=None, ticks=None):
    """The kube-scheduler process (argv[0] basename ``kube-scheduler``) that started last.

    When ``config_path`` is given and some kube-scheduler uses ``--config=<config_path>``,
    only those count (a secondary scheduler must not pass for the main one). None if none runs.
    """
    starts = [s for s in (process_start(view, p, ticks) for p in find_processes(view, 'kube-scheduler')) if s]
    if config_path:
        ours = [s for s in starts if _uses_config(s['cmdline'], config_path)]
        starts = ours or starts
    if not starts:
        return None
    return max(starts, key=lambda s: s['started_at'])


def scheduler_pod_attempt(view, log_root=POD_LOG_ROOT, container='kube-scheduler'):
    """The kubelet's newest start of the kube-scheduler static pod's container, from its logs.

    The kubelet writes each start of a container to
    ``<log_root>/<namespace>_<pod>_<uid>/<container>/<restart count>.log``, creating the file
    when it creates the container and keeping the previous one, so the container directory's
    mtime is the newest start's. This sees starts that exit between two looks (a crash loop
    under the kubelet's back-off, whose process is gone most of the time).
    Returns ``{'key': (pod directory, restart count), 'started_at', 'resolution', 'path'}`` for
    the newest start (``path`` a node path), or None when there are no such logs.
    """
    try:
        names = view.listdir(log_root) or []
    except ViewError:
        return None
    best = None
    for name in names:
        if not name.startswith('kube-system_kube-scheduler-'):
            continue
        cdir = os.path.join(log_root, name, container)
        try:
            mtime, files = view.mtime(cdir), view.listdir(cdir) or []
        except ViewError:
            continue
        counts = [int(f[:-4]) for f in files if f.endswith('.log') and f[:-4].isdigit()]
        if mtime is not None and counts and (best is None or mtime > best[0]):
            best = (mtime, name, max(counts), cdir)
    if best is None:
        return None
    mtime, name, count, cdir = best
    # file times come from the kernel's coarse clock (one jiffy, up to 10 ms)
    return {'key': (name, count), 'started_at': mtime, 'resolution': 0.01,
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

def openrc_option(view, service, option):
    for svcdir in OPENRC_SVCDIRS:
        value = _text(view, os.path.join(svcdir, 'options', service, option))
        if value is not None:
            return value.strip()
    return None


def openrc_service_pid(view, service):
    """pid of the process supervise-daemon runs for ``service``, and where it was found.

    openrc 0.45's supervise-daemon records the child in ``<RC_SVCDIR>/options/<svc>/child_pid``;
    the ``pidfile`` an init script sets (k3s: ``/var/run/k3s.pid``, read as recorded: the view
    follows the ``/var/run`` link) holds the *supervisor's* pid, whose child is the service.
    Last resort: a ``supervise-daemon <svc> ...`` process's child.
    """
    pid = _int(openrc_option(view, service, 'child_pid'))
    if pid and alive(view, pid):
        return pid, 'child_pid'
    pidfiles = []
    recorded = openrc_option(view, service, 'pidfile')
    if recorded:
        pidfiles.append(recorded)
    pidfiles += ['/run/%s.pid' % service, '/run/supervise-%s.pid' % service]
    for pidfile in pidfiles:
        pid = _int((_text(view, pidfile) or '').strip())
        if not pid or not alive(view, pid):
            continue
        argv = view.cmdline(pid)
        if argv and os.path.basename(argv[0]) == 'supervise-daemon':
            kids = children(view, pid)
            if kids:
                return kids[-1], 'pidfile'
            continue
        return pid, 'pidfile'
    for sup in find_processes(view, 'supervise-daemon'):
        argv = view.cmdline(sup) or []
        if len(argv) > 1 and argv[1] == service:
            kids = children(view, sup)
            if kids:
                return kids[-1], 'supervise-daemon'
    return None, None


def openrc_state(view, service):
    """openrc's state of ``service`` in systemd's words (active, activating, failed, inactive...).

    ``started`` with no live supervised process is openrc's "crashed": reported as ``failed``.
    """
    state = 'inactive'
    for svcdir in OPENRC_SVCDIRS:
        for directory, name in OPENRC_STATES:
            if view.lexists(os.path.join(svcdir, directory, service)):
                state = name
                break
        else:
            continue
        break
    pid, source = openrc_service_pid(view, service)
    if state == 'active' and pid is None:
        state = 'failed'
    return {'active_state': state, 'sub_state': 'crashed' if state == 'failed' and pid is None else state,
            'main_pid': pid, 'pid_source': source,
            'n_restarts': _int(openrc_option(view, service, 'start_count'))}


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
