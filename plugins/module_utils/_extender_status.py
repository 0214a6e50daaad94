# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.extender_status``: did the kube-scheduler restart since a change, is it
healthy, and does its extender answer?

``status(view, params)`` looks at the node through the view (``systemctl``/``journalctl``/``crictl``
through ``view.run``, ``/proc``, ``/run/openrc``, ``/var/log`` and the clocks through the view and
``_service_clock``), probes the scheduler's health endpoint and the extender over the network
(``_extender``; both functions can be handed in), and returns a Plan with no changes whose
``facts`` are the module's result. With ``wait`` it looks again every ``interval`` seconds
(``view.clock.sleep``) until ready, a crash loop, or a timeout. Bad input and a service that
is not installed raise :class:`StatusError`.
"""

from __future__ import annotations

import os

from ansible_collections.baremetal.k3s.plugins.module_utils import _extender
from ansible_collections.baremetal.k3s.plugins.module_utils import _platform
from ansible_collections.baremetal.k3s.plugins.module_utils import _service as services
from ansible_collections.baremetal.k3s.plugins.module_utils import _service_clock as sc
from ansible_collections.baremetal.k3s.plugins.module_utils._scheduler_config_schema import parse_go_duration
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Plan, PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import RunTimeout, ViewError

OPENRC_RUN = '/sbin/openrc-run'
SYSTEMD_RUNTIME = '/run/systemd/system'
INIT_D = '/etc/init.d'
LOG_DIR = '/var/log'
LOG_TAIL = 64 * 1024  # bytes of an openrc service log read for its last lines

# Searched before the node's PATH: where a platform ships crictl (RKE2: in its data dir), then /usr/local/bin.
CRICTL_DIRS = tuple(p.format(p.crictl_dir) for p in _platform.PLATFORMS.values() if p.crictl_dir) + ('/usr/local/bin',)


class StatusError(PlanError):
    """Bad input or a service that is not installed: the module fails with this message."""


def node_name(view):
    """The node name k3s and the kubelet use by default: the host name in lower case."""
    return view.hostname().strip().lower()


def status(view, params, probe=_extender.probe, check_health=_extender.check_health):
    """Look at the node (once, or until ready with ``wait``); a Plan whose facts are the module's result.

    ``params`` are the module's parameters (every option present, defaults filled in).
    ``probe(url, verb, node_names, node_cache_capable, ca_file, cert_file, key_file, insecure, timeout)``
    returns an :class:`_extender.ProbeResult`; ``check_health(url, timeout)`` returns
    ``(healthy, status, error)``. Raises :class:`StatusError`.
    """
    try:
        return Plan(facts=ExtenderStatus(view, params, probe, check_health).run())
    except (_extender.ExtenderProbeError, ViewError) as e:
        raise StatusError(str(e)) from e


WATCH_FIELDS = ('base', 'identities', 'healthy_seen', 'exits', 'looks')


def save_watch(watch):
    """A crash watch's state as JSON-ready data, to carry a wait on in the next call (``resume.watch``)."""
    return dict((name, getattr(watch, name)) for name in WATCH_FIELDS)


def _tuples(value):
    """JSON gives lists where the watch kept tuples (the identities): back to tuples, nested too."""
    if isinstance(value, (list, tuple)):
        return tuple(_tuples(v) for v in value)
    return value


def restore_watch(watch, state):
    """Put a state from :func:`save_watch` (after a JSON round trip) back into ``watch``."""
    if not isinstance(state, dict) or any(name not in state for name in WATCH_FIELDS):
        raise StatusError('resume.watch must be the waiting.watch of an earlier result (got %r)' % (state,))
    base = state['base']
    try:
        watch.base = dict(base) if isinstance(base, dict) else None
        watch.identities = [_tuples(i) for i in state['identities'] or []]
        watch.healthy_seen = bool(state['healthy_seen'])
        watch.exits = int(state['exits'])
        watch.looks = int(state['looks'])
    except (TypeError, ValueError) as e:
        raise StatusError('resume.watch must be the waiting.watch of an earlier result; it cannot be read (%s)' % e) from e


def seconds(value, name):
    """A timeout given as seconds (number) or as a Go duration ("15s", "500ms"), as seconds."""
    if isinstance(value, bool):
        raise StatusError('%s must be seconds or a duration such as "15s" (got %r)' % (name, value))
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return parse_go_duration(text) / 1e9
    except ValueError as e:
        raise StatusError('%s must be seconds or a duration such as "15s" (got %r): %s' % (name, value, e)) from e


# what each extender to probe carries besides its name, URL and verb
_TARGET_KEYS = ('ca_file', 'cert_file', 'key_file', 'insecure', 'server_name', 'ca_data', 'cert_data', 'key_data',
                'node_cache_capable')


class ExtenderStatus:
    """Looks at one node: service, scheduler start, scheduler health, extender."""

    def __init__(self, view, params, probe=_extender.probe, check_health=_extender.check_health):
        self.view = view
        self.probe = probe
        self.check_health = check_health
        p = params
        self.p = p
        self.platform = p['platform']
        self.record = _platform.get(self.platform)
        self.service = p['service'] or self.record.server_service
        self.node = node_name(view)
        self.init = self._detect_init(p['init'])
        self.since = self._since()
        self.watch = sc.CrashWatch(since_known=self.since is not None)
        self.scheduler_pid = None  # the process whose environment the scheduler's HTTP client reads
        self._environ = None
        self._check_tls_files()
        self.targets = self._targets()
        if p['url']:
            try:
                _extender.validate_url(p['url'], 'url')
            except _extender.ExtenderProbeError as e:
                raise StatusError(str(e)) from e
        elif p['require_extender'] and not self.listed:
            raise StatusError('url is required (the extender to probe, e.g. http://127.0.0.1:8889) unless require_extender is false')
        if p['scheduler_health_url']:
            try:
                health = _extender.validate_url(p['scheduler_health_url'])
            except _extender.ExtenderProbeError as e:
                raise StatusError('scheduler_health_url: %s' % e) from e
            if p['scheduler_ca_file'] and health.scheme != 'https':
                raise StatusError('scheduler_ca_file verifies TLS, but scheduler_health_url %s is not https://; give the '
                                  'https:// endpoint or leave scheduler_ca_file out' % p['scheduler_health_url'])
        p['http_timeout'] = seconds(p['http_timeout'], 'http_timeout')
        for key in ('http_timeout', 'update_timeout', 'timeout', 'interval', 'journal_lines'):
            if p[key] < 0:
                raise StatusError('%s must not be negative (got %s)' % (key, p[key]))
        if (p.get('slice_seconds') or 0) < 0:
            raise StatusError('slice_seconds must not be negative (got %s)' % p['slice_seconds'])
        resume = p.get('resume') or {}
        for key in ('elapsed', 'attempts'):
            if not isinstance(resume.get(key, 0), (int, float)) or isinstance(resume.get(key), bool) or resume.get(key, 0) < 0:
                raise StatusError('resume.%s must be a number of 0 or more (got %r); resume is the waiting of an '
                                  'earlier result' % (key, resume.get(key)))
        if p['http_timeout'] == 0:
            raise StatusError('http_timeout must be greater than 0')
        if p['wait'] and p['interval'] == 0:
            raise StatusError('interval must be greater than 0 with wait: true')
        if not (p['verb'] or '').strip('/'):
            raise StatusError('verb must not be empty')
        if p['key_file'] and not p['cert_file']:
            raise StatusError('key_file needs cert_file')
        if bool(p.get('cert_file') or p.get('cert_data')) != bool(p.get('key_file') or p.get('key_data')) and \
                (p.get('cert_data') or p.get('key_data')):
            raise StatusError('give a client certificate (cert_file or cert_data) and its key (key_file or key_data), or neither')
        init_script = os.path.join(INIT_D, self.service)
        if self.init == 'openrc' and not view.exists(init_script):
            raise StatusError('service %s is not installed: %s does not exist' % (self.service, init_script))
        self.systemctl = None
        if self.init == 'systemd':
            self.systemctl = view.which('systemctl')
            if not self.systemctl:
                raise StatusError('systemctl is not on the node\'s PATH although systemd runs (%s exists); set init' % SYSTEMD_RUNTIME)

    # ------------------------------------------------------------------ input
    @property
    def listed(self):
        """Whether the extenders come as the ``extenders`` list (else the single ``url``)."""
        return bool(self.p.get('extenders'))

    def _targets(self):
        """The extenders to probe, each a dict with name, url, verb, its TLS settings, node_cache_capable,
        http_timeout and required: the ``extenders`` list checked item by item, or the single ``url``."""
        p = self.p
        items = p.get('extenders') or []
        if not items:
            if not p['url']:
                return []
            return [dict(name=p['url'], url=p['url'], verb=p['verb'], required=True, http_timeout=None,
                         **dict((k, p.get(k)) for k in _TARGET_KEYS))]
        if p['url']:
            raise StatusError('give the extenders either as url (one) or as extenders (a list), not both')
        targets, names, errs = [], {}, []
        for i, item in enumerate(items):
            where = 'extenders[%d]' % i
            name, url = item.get('name') or '', item.get('url') or ''
            if name in names:
                errs.append('%s.name %r is also extenders[%d].name; give each extender its own name' % (where, name, names[name]))
            names.setdefault(name, i)
            try:
                _extender.validate_url(url)
            except _extender.ExtenderProbeError as e:
                errs.append('%s.url: %s' % (where, e))
            if not (item.get('verb') or '').strip('/'):
                errs.append('%s.verb must not be empty' % where)
            for key in ('ca_file', 'cert_file', 'key_file'):
                if item.get(key) and not self.view.isfile(item[key]):
                    errs.append('%s.%s %s does not exist or is not a file' % (where, key, item[key]))
            if bool(item.get('cert_file') or item.get('cert_data')) != bool(item.get('key_file') or item.get('key_data')):
                errs.append('%s: give a client certificate (cert_file or cert_data) and its key (key_file or key_data), or '
                            'neither' % where)
            timeout = None
            if item.get('http_timeout') not in (None, ''):
                try:
                    timeout = seconds(item['http_timeout'], '%s.http_timeout' % where)
                except StatusError as e:
                    errs.append(e.msg)
                else:
                    if timeout <= 0:
                        errs.append('%s.http_timeout must be greater than 0' % where)
            targets.append(dict(name=name, url=url, verb=item.get('verb') or 'filter',
                                required=item.get('required', True) is not False, http_timeout=timeout,
                                **dict((k, item.get(k)) for k in _TARGET_KEYS)))
        if errs:
            raise StatusError('invalid extenders option: ' + '; '.join(errs))
        return targets

    def _detect_init(self, init):
        has_openrc = self.view.exists(OPENRC_RUN)
        systemd_running = self.view.isdir(SYSTEMD_RUNTIME)
        if init == 'openrc' and not has_openrc:
            raise StatusError('init is openrc but %s does not exist on this node' % OPENRC_RUN)
        if init != 'auto':
            return init
        if has_openrc and not systemd_running:
            return 'openrc'
        if systemd_running:
            return 'systemd'
        raise StatusError('cannot tell the service manager: systemd is not running (%s missing) and %s does not exist; set init'
                          % (SYSTEMD_RUNTIME, OPENRC_RUN))

    def _since(self):
        p = self.p
        if p['since'] not in (None, ''):
            try:
                return sc.parse_since(p['since'])
            except ValueError as e:
                raise StatusError('since: %s (use epoch seconds or ISO 8601, e.g. 2026-01-13T10:00:01Z)' % e) from e
        paths = ([p['config_path']] if p['config_path'] else []) + list(p['flag_paths'] or [])
        if not paths:
            return None
        mtimes = [m for m in (self.view.mtime(path) for path in paths) if m is not None]
        if not mtimes:
            raise StatusError('none of config_path/flag_paths exists (%s): cannot tell the change time; give since' % ', '.join(paths))
        return max(mtimes)

    def _check_tls_files(self):
        for key in ('ca_file', 'cert_file', 'key_file', 'scheduler_ca_file'):
            path = self.p[key]
            if path and not self.view.isfile(path):
                raise StatusError('%s %s does not exist or is not a file' % (key, path))
        if self.p['scheduler_ca_file']:
            try:
                _extender.ssl_context(ca_file=self._local(self.p['scheduler_ca_file']))
            except _extender.ExtenderProbeError as e:
                raise StatusError('scheduler_ca_file %s cannot be used to verify the scheduler: %s'
                                  % (self.p['scheduler_ca_file'], e)) from e

    def _local(self, path):
        """Where the probe opens the node's TLS file ``path`` (the path itself on a node)."""
        return self.view.host_path(self.view.realpath(path)) if path else path

    # ------------------------------------------------------------------ observation
    def _systemd(self):
        cmd = [self.systemctl, 'show', self.service, '--property=' + ','.join(sc.SYSTEMCTL_PROPERTIES)]
        rc, out, err = self.view.run(cmd)
        if rc != 0:
            raise StatusError('%s failed (rc=%s): %s' % (' '.join(cmd), rc, (err or out).strip()))
        props = sc.parse_systemctl_show(out)
        state = sc.systemd_state(props, self.view.clock)
        if state['load_state'] in ('not-found', None):
            raise StatusError('service %s is not installed (systemd LoadState=%s)' % (self.service, state['load_state']))
        return state

    def _openrc(self):
        state = sc.openrc_state(self.view, self.service)
        state['started_at'], state['resolution'], state['started_at_source'] = None, None, None
        if state['main_pid']:
            start = sc.process_start(self.view, state['main_pid'])
            if start:
                state.update(started_at=start['started_at'], resolution=start['resolution'],
                             started_at_source='/proc/%d/stat' % state['main_pid'])
        return state

    def _crictl(self):
        """crictl's node path: where a platform ships it (RKE2's data dir) and /usr/local/bin first, then the PATH."""
        for directory in CRICTL_DIRS:
            path = os.path.join(directory, 'crictl')
            if self.view.isfile(path) and self.view.mode(path) & 0o111:
                return path
        return self.view.which('crictl')

    def _static_pod_start(self):
        """(started_at, resolution, source, key): key tells one scheduler run from the next (pid or container id)."""
        attempt = sc.scheduler_pod_attempt(self.view)
        # the kubelet's count of starts tells one run from the next even when a look misses one
        logged = attempt['key'] if attempt else None
        start = sc.scheduler_process(self.view, self.p['config_path'])
        self.scheduler_pid = start['pid'] if start else None
        if start:
            return start['started_at'], start['resolution'], '/proc/%d/stat' % start['pid'], logged or start['pid']
        crictl = self._crictl()
        if crictl:
            argv = [crictl]
            if self.record.crictl_endpoint:
                argv += ['--runtime-endpoint', self.record.crictl_endpoint]
            rc, out, dummy = self.view.run(argv + ['ps', '--name', '^kube-scheduler$', '-o', 'json'])
            if rc == 0:
                found = sc.parse_crictl_ps(out)
                if found:
                    return found['started_at'], found['resolution'], 'crictl', logged or found['id'] or found['started_at']
        if attempt:
            # not running right now (exited, or waiting out the kubelet's back-off): its last start
            return attempt['started_at'], attempt['resolution'], attempt['path'], logged
        return None, None, None, None

    def journal(self):
        n = self.p['journal_lines']
        if not n:
            return []
        if self.init == 'systemd':
            journalctl = self.view.which('journalctl')
            if not journalctl:
                return []
            try:
                rc, out, err = self.view.run([journalctl, '-u', self.service, '-n', str(n), '--no-pager', '-o', 'short-iso'])
            except RunTimeout as e:
                return ['(%s)' % e.msg]
            lines = (out if rc == 0 else err or out).splitlines()
            return lines[-n:]
        try:
            data = self.view.tail(os.path.join(LOG_DIR, '%s.log' % self.service), LOG_TAIL)
        except ViewError:
            return []
        if data is None:
            return []
        return data.decode('utf-8', errors='replace').splitlines()[-n:]

    def observe(self):
        p = self.p
        state = self._systemd() if self.init == 'systemd' else self._openrc()
        if self.record.scheduler_runs == 'service':
            # the scheduler runs inside the service's process: the service's start is the scheduler's
            started_at, resolution, source = state['started_at'], state['resolution'], state['started_at_source']
            identity = state['main_pid']
            self.scheduler_pid = state['main_pid']
        else:
            started_at, resolution, source, key = self._static_pod_start()
            identity = (state['main_pid'], key) if state['main_pid'] and key is not None else None
        restarted = sc.started_since(started_at, self.since, resolution or 0.0)
        snap = {
            'active_state': state['active_state'], 'sub_state': state['sub_state'],
            'main_pid': state['main_pid'], 'n_restarts': state['n_restarts'],
            'scheduler_started_at': sc.to_iso(started_at), 'started_at_source': source,
            'restarted': restarted,
            'scheduler_healthy': None, 'scheduler_health_error': '', 'scheduler_tls_verified': None,
            'extender_reachable': False, 'extender_http_status': None, 'extender_error': '',
        }
        if p['scheduler_health_url']:
            ca_file = p['scheduler_ca_file']
            # with the CA that signs the scheduler's certificate: verified, host name included; else not verified
            healthy, status, error = self.check_health(p['scheduler_health_url'], p['http_timeout'],
                                                       ca_file=self._local(ca_file) if ca_file else None,
                                                       insecure=not ca_file)
            snap['scheduler_healthy'], snap['scheduler_health_error'] = healthy, error
            # an HTTP answer came through a TLS handshake that verified the certificate
            snap['scheduler_tls_verified'] = bool(ca_file) and status is not None
        snap['extender_proxy'] = None
        snap['extenders'] = [self.probe_one(t) for t in self.targets]
        if snap['extenders']:
            first = snap['extenders'][0]
            failing = [e for e in snap['extenders'] if not e['answering']]
            shown = failing[0] if failing else first
            snap.update(extender_reachable=not failing, extender_http_status=shown['http_status'],
                        extender_proxy=first['proxy'],
                        extender_error=('; '.join('%s: %s' % (e['name'], e['error']) for e in failing)
                                        if self.listed else first['error']))
        else:
            snap['extender_error'] = 'no url given'
        problems = self.problems(snap)
        snap['ready'] = not problems
        snap['msg'] = 'ready' if not problems else 'not ready: ' + '; '.join(problems)
        self.watch.update({'restarted': restarted, 'active_state': snap['active_state'], 'sub_state': snap['sub_state'],
                           'identity': identity, 'n_restarts': snap['n_restarts'], 'healthy': snap['scheduler_healthy']})
        snap['crash_loop'] = self.watch.crash_loop
        if snap['n_restarts'] is None and self.watch.base is not None:
            # openrc: supervise-daemon keeps no counter; report the respawns seen
            snap['n_restarts'] = self.watch.respawns
        if snap['crash_loop']:
            snap['ready'] = False
            snap['msg'] = self.crash_loop_msg(snap, problems)
        return snap

    def probe_one(self, target):
        """One extender probed as the scheduler calls it: {name, url, verb, required, answering, http_status, error,
        proxy, msg}."""
        url, verb = target['url'], target['verb']
        environ = self.scheduler_environ()
        proxy = _extender.go_proxy(url, environ)
        timeout = target['http_timeout'] or self.p['http_timeout']
        # the environment goes along so that each redirect's proxy is chosen as the scheduler's client chooses it
        res = self.probe(url, verb, [self.node], target['node_cache_capable'], self._local(target['ca_file']),
                         self._local(target['cert_file']), self._local(target['key_file']), target['insecure'], timeout,
                         **self.probe_extras(proxy, target, environ))
        shown = _extender.redact(proxy)
        through = ' through proxy %s (the scheduler\'s environment)' % shown if shown else ''
        return {'name': target['name'], 'url': url, 'verb': verb, 'required': target['required'],
                'answering': res.reachable, 'http_status': res.status, 'error': res.error, 'proxy': shown,
                'msg': 'answering' if res.reachable else '%s%s: %s' % (_extender.verb_url(url, verb), through, res.error)}

    def scheduler_environ(self):
        """The environment the scheduler runs with (k3s/RKE2 server or kube-scheduler process): where Go's HTTP
        client takes its proxy from. The last one seen while the process is gone (restarting); {} before any.

        k3s and RKE2 hide their arguments as they start, and the way they do it (gspt) zeroes the environment
        area too: /proc/<pid>/environ of a running server reads empty although the process keeps its own
        copy. A scheduler inside the service's process then runs with the environment the service was given:
        the unit's Environment= and EnvironmentFile= (openrc: the files its script sources)."""
        env = self.view.environ(self.scheduler_pid) if self.scheduler_pid else None
        if env is not None:
            if not env and self.record.scheduler_runs == 'service':
                env = self.service_environ()
            self._environ = env
        return self._environ or {}

    def service_environ(self):
        """The environment the service's unit (or init script) gives its process; {} when it cannot be read."""
        try:
            return dict(services.read_init(self.view, self.service).env or {})
        except (PlanError, ViewError):
            return {}

    def probe_extras(self, proxy, target=None, environ=None):
        """The probe's keyword arguments beyond the positional ones: only those set, so that a probe handed in
        that predates them still works."""
        t = target or self.p
        extras = dict(proxy=proxy, server_name=t.get('server_name'), ca_data=t.get('ca_data'),
                      cert_data=t.get('cert_data'), key_data=t.get('key_data'), environ=environ)
        return dict((k, v) for k, v in extras.items() if v)

    def crash_loop_msg(self, snap, problems):
        who = self.service if self.record.scheduler_runs == 'service' else 'the kube-scheduler (or %s)' % self.service
        since = 'the change at %s' % sc.to_iso(self.since) if self.since is not None else 'the first look'
        if snap['scheduler_healthy'] is None:
            health = 'its scheduler was never seen healthy (scheduler_health_url is empty)'
        else:
            health = 'its scheduler never became healthy'
        return ('crash loop: %s exited %d times since %s and %s; now: %s'
                % (who, self.watch.exits, since, health, '; '.join(problems) or 'up again, until its next exit'))

    def problems(self, snap):
        out = []
        if snap['active_state'] != 'active':
            out.append('service %s is %s (%s)' % (self.service, snap['active_state'], snap['sub_state']))
        if self.since is not None and not snap['restarted']:
            if snap['scheduler_started_at'] is None:
                out.append('no running scheduler found')
            else:
                out.append('the scheduler started at %s, before the change at %s' % (snap['scheduler_started_at'], sc.to_iso(self.since)))
        if snap['scheduler_healthy'] is False:
            out.append('kube-scheduler health (%s): %s' % (self.p['scheduler_health_url'], snap['scheduler_health_error']))
        if self.listed:
            if self.p['require_extender']:
                out.extend('extender %s (%s)' % (e['name'], e['msg']) for e in snap['extenders']
                           if e['required'] and not e['answering'])
        elif self.p['require_extender'] and not snap['extender_reachable']:
            through = ' through proxy %s (the scheduler\'s environment)' % snap['extender_proxy'] if snap.get('extender_proxy') else ''
            out.append('extender %s%s: %s' % (_extender.verb_url(self.p['url'], self.p['verb']), through, snap['extender_error']))
        return out

    # ------------------------------------------------------------------ run
    def waiting_for(self, snap):
        """(what the wait is for, its limit in seconds) for a look that is not ready, in the user's words."""
        p = self.p
        if self.since is not None and not snap['restarted']:
            return 'the scheduler to restart with the change', min(p['timeout'], p['update_timeout'])
        if snap['active_state'] != 'active':
            return 'service %s to become active' % self.service, p['timeout']
        if snap['scheduler_healthy'] is False:
            return 'the kube-scheduler to answer healthy', p['timeout']
        if self.listed:
            missing = [e['name'] for e in snap['extenders'] if e['required'] and not e['answering']]
            return 'the extenders %s to answer (of %d)' % (', '.join(missing), len(snap['extenders'])), p['timeout']
        return 'the extender to answer', p['timeout']

    def run(self):
        """The module's result: one look, or with ``wait`` looks until ready, a crash loop or a timeout.

        ``resume`` carries a wait on from an earlier call (seconds already waited, looks made, the
        crash watch); with ``slice_seconds`` a wait that is still going returns after about that many
        seconds with ``waiting`` (what to hand back as ``resume``, and what the wait is for).
        """
        p = self.p
        clock = self.view.clock
        start = clock.monotonic()
        resume = p.get('resume') or {}
        before = float(resume.get('elapsed') or 0.0)
        attempts = int(resume.get('attempts') or 0)
        if resume.get('watch'):
            restore_watch(self.watch, resume['watch'])
        paused = False
        while True:
            snap = self.observe()
            attempts += 1
            elapsed = before + clock.monotonic() - start
            if snap['ready'] or snap['crash_loop'] or not p['wait']:
                break
            restart_pending = self.since is not None and not snap['restarted']
            if restart_pending and elapsed >= p['update_timeout']:
                snap['msg'] = ('restart not seen within update_timeout (%s s): %s' % (p['update_timeout'], snap['msg']))
                break
            if elapsed >= p['timeout']:
                snap['msg'] = 'not ready within timeout (%s s): %s' % (p['timeout'], snap['msg'])
                break
            if snap['restarted'] and snap['active_state'] == 'failed':
                snap['msg'] = 'service %s failed after the restart: %s' % (self.service, snap['msg'])
                break
            deadline = min(p['timeout'], p['update_timeout']) if restart_pending else p['timeout']
            pause = max(0.0, min(p['interval'], deadline - elapsed))
            if p.get('slice_seconds') and clock.monotonic() - start + pause > p['slice_seconds']:
                paused = True
                break
            clock.sleep(pause)
        snap.update(
            platform=self.platform, init=self.init, service=self.service,
            node_name=self.node, changed_at=sc.to_iso(self.since),
            kube_scheduler=self.record.kube_scheduler(self.service, self.node),
            elapsed=round(before + clock.monotonic() - start, 3), attempts=attempts,
        )
        if paused:
            what, limit = self.waiting_for(snap)
            snap['waiting'] = {'for': what, 'limit': limit, 'elapsed': snap['elapsed'], 'attempts': attempts,
                               'watch': save_watch(self.watch)}
            return snap
        if snap['active_state'] != 'active' or snap['crash_loop']:
            snap['journal'] = self.journal()
        return snap
