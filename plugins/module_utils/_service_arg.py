# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.k3s_service_arg``: one k3s argument in or out of a service.

No Ansible import: the module hands in a ``host`` object that writes, removes and runs
commands (see :class:`Host`), so everything here is testable on plain files.
"""

from __future__ import annotations

import os
import re

from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config as k3s_config
from ansible_collections.baremetal.k3s.plugins.module_utils._openrc import InitScript
from ansible_collections.baremetal.k3s.plugins.module_utils._systemd_unit import (
    ParseError,
    UnitFile,
    expand_argv,
    parse_environment_file,
    render_exec_start,
    split_words,
)

# systemd's unit search path, as far as a k3s or RKE2 install uses it (RKE2's tarball: /usr/local/lib).
UNIT_DIRS = ['/etc/systemd/system', '/usr/local/lib/systemd/system', '/usr/lib/systemd/system', '/lib/systemd/system']
DROPIN_DIRS = ['/etc/systemd/system', '/run/systemd/system', '/usr/local/lib/systemd/system',
               '/usr/lib/systemd/system', '/lib/systemd/system']
DROPIN_BASE = '/etc/systemd/system'
INITD_DIR = '/etc/init.d'
OPENRC_ENV_FILES = ['/etc/environment']
DEFAULT_DROPIN_NAME = '99-baremetal-k3s.conf'
DEFAULT_CONFIG_NAME = '99-baremetal-k3s-scheduler.yaml'
MARKER = '# Managed by baremetal.k3s.k3s_service_arg'

_SERVICE_RE = re.compile(r'^[A-Za-z0-9:_.@-]+$')


class ServiceArgError(Exception):
    """A refusal: the message says what is wrong and what to do; nothing was changed."""


class ServiceNotFound(ServiceArgError):
    """No unit or init script exists for the service (k3s is not installed under that name)."""


class Host:
    """What the logic needs from the node; the module subclasses it with AnsibleModule behind it.

    A subclass gives:

    - ``write(path, content, mode)``: write ``content`` (bytes) atomically, ``mode`` for a new
      file only; returns the backup file's path or None;
    - ``remove(path)``: remove the file; returns the backup file's path or None;
    - ``run(argv)``: ``(rc, stdout, stderr)`` of ``argv``, rc None when the program is missing;
    - ``check_mode``: true when nothing may be written.
    """

    check_mode = False


def read_bytes(path):
    try:
        with open(path, 'rb') as f:
            return f.read()
    except FileNotFoundError:
        return None


def is_writable(path):
    """Whether ``path`` (existing or not) can be replaced: a writable directory on a read-write file system."""
    directory = os.path.dirname(path) or '.'
    probe = directory
    while not os.path.isdir(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            return False
        probe = parent
    try:
        if os.statvfs(probe).f_flag & os.ST_RDONLY:
            return False
    except OSError:
        return False
    if not os.access(probe, os.W_OK | os.X_OK):
        return False
    return not os.path.exists(path) or os.access(path, os.W_OK)


# -- validation ------------------------------------------------------------------
def validate_arg(arg):
    """The flag name of ``arg`` (``kube-scheduler-arg`` for ``--kube-scheduler-arg=x``), or an error."""
    if arg is None or arg.strip() == '':
        raise ServiceArgError('arg is empty: give one k3s argument such as '
                              '--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml.')
    if '\n' in arg or '\r' in arg:
        raise ServiceArgError('arg %r holds a line break; give a single-line argument.' % arg)
    if not arg.startswith('--') or len(arg) < 3 or arg[2] in '=-':
        raise ServiceArgError('arg %r is not a k3s flag: it must start with "--" and a name, e.g. --kube-scheduler-arg=v=2.' % arg)
    if arg != arg.strip():
        raise ServiceArgError('arg %r starts or ends with white space; remove it.' % arg)
    return arg[2:].split('=', 1)[0]


def check_path(path):
    if not os.path.isabs(path):
        raise ServiceArgError('path %r is relative; give the absolute path of the unit file or init script.' % path)
    if not os.path.exists(path):
        raise ServiceArgError('path %s does not exist; give the path of the k3s unit file or init script, '
                              'or leave path out to find it from service.' % path)
    if os.path.isdir(path):
        raise ServiceArgError('path %s is a directory; give the unit file or init script itself.' % path)


# -- finding the service -------------------------------------------------------------
def check_service_name(service):
    """Refuse a service name systemd or openrc would not have (a path, white space...)."""
    if not _SERVICE_RE.match(service or ''):
        raise ServiceArgError('service %r is not a valid service name (expected k3s, k3s-agent, k3s-<name> or rke2-server).' % service)


def find_service(service, path=None):
    """(kind, path): kind is ``systemd`` or ``openrc``."""
    check_service_name(service)
    if path:
        check_path(path)
        data = read_bytes(path) or b''
        if path.endswith('.service') or path.endswith('.conf'):
            return 'systemd', path
        if data.startswith(b'#!') and b'openrc-run' in data.split(b'\n', 1)[0]:
            return 'openrc', path
        if os.path.dirname(path) == INITD_DIR or b'command_args=' in data:
            return 'openrc', path
        return 'systemd', path
    name = service if service.endswith('.service') else service + '.service'
    seen = []
    for directory in UNIT_DIRS:
        candidate = os.path.join(directory, name)
        if os.path.exists(candidate):
            return 'systemd', candidate
        seen.append(candidate)
    candidate = os.path.join(INITD_DIR, service[:-len('.service')] if service.endswith('.service') else service)
    if os.path.exists(candidate):
        return 'openrc', candidate
    seen.append(candidate)
    raise ServiceNotFound('no unit or init script found for service %s (looked at %s). Install k3s first, '
                          'set service to the right name (k3s, k3s-agent, k3s-<INSTALL_K3S_NAME>, rke2-server), or give path.'
                          % (service, ', '.join(seen)))


def unit_name(service):
    return service if service.endswith('.service') else service + '.service'


def short_name(service):
    return service[:-len('.service')] if service.endswith('.service') else service


class SystemdState:
    """The unit, its drop-ins, the effective ExecStart and the environment."""

    def __init__(self, service, path, dropin_path):
        self.service = unit_name(service)
        self.path = path
        self.dropin_path = dropin_path
        data = read_bytes(path)
        if os.path.realpath(path) == '/dev/null' or data == b'':
            raise ServiceArgError('%s is masked or empty; unmask the service (systemctl unmask %s) and run again.'
                                  % (path, self.service))
        self.unit = _parse_unit(data, path)
        if not self.unit.has_section('Service'):
            raise ServiceArgError('%s has no [Service] section: it is not the unit of a service. '
                                  'Give the path of the k3s service unit.' % path)
        own = self.unit.exec_start()
        if not own and not self.unit.get('Service', 'ExecStart'):
            raise ServiceArgError('%s has no ExecStart= in [Service]; it does not start k3s. '
                                  'Give the unit the k3s installer wrote (k3s.service, k3s-agent.service).' % path)
        if len(own) > 1:
            raise ServiceArgError('%s sets ExecStart= %d times (lines %s); a k3s service has one command. '
                                  'Remove the extra lines (or put "ExecStart=" before the one that counts) and run again.'
                                  % (path, len(own), ', '.join(str(d.start + 1) for d in own)))
        self.dropins = []  # [(path, UnitFile)] in the order systemd reads them, ours included
        for dpath in dropin_files(self.service):
            if dpath == dropin_path:
                continue
            self.dropins.append((dpath, _parse_unit(read_bytes(dpath) or b'', dpath)))
        self.own_dropin = None
        own_data = read_bytes(dropin_path) if dropin_path else None
        if own_data is not None:
            if MARKER.encode() not in own_data:
                raise ServiceArgError('%s exists and was not written by this module; give another dropin_name '
                                      'or remove the file.' % dropin_path)
            self.own_dropin = _parse_unit(own_data, dropin_path)

    def _chain(self, with_own=True):
        files = [(self.path, self.unit)] + list(self.dropins)
        if with_own and self.own_dropin is not None:
            files.append((self.dropin_path, self.own_dropin))
            files.sort(key=lambda f: (f[0] != self.path, os.path.basename(f[0]) if f[0] != self.path else ''))
        elif files:
            files = [files[0]] + sorted(files[1:], key=lambda f: os.path.basename(f[0]))
        return files

    def effective(self, with_own=True):
        """(path, UnitFile, directive) of the ExecStart that counts."""
        current = []
        for fpath, unit in self._chain(with_own):
            for d in unit.get('Service', 'ExecStart'):
                if d.is_reset:
                    current = []
                else:
                    current.append((fpath, unit, d))
        if not current:
            raise ServiceArgError('no ExecStart= is left for %s after the drop-ins reset it; '
                                  'fix the drop-ins and run again.' % self.service)
        if len(current) > 1:
            raise ServiceArgError('%s gets %d ExecStart= lines (%s); a k3s service has one command. '
                                  'A drop-in must reset it with an empty "ExecStart=" line before its own.'
                                  % (self.service, len(current), ', '.join('%s line %d' % (p, d.start + 1) for p, dummy, d in current)))
        return current[0]

    def command(self, with_own=True):
        fpath, unit, d = self.effective(with_own)
        try:
            return unit.parse_exec(d)
        except ParseError as e:
            raise ServiceArgError('%s: %s' % (fpath, e)) from e

    def environment(self):
        env = {}
        for dummy, unit in self._chain(True):
            for d in unit.get('Service', 'EnvironmentFile'):
                if d.is_reset:
                    continue
                name = d.value.lstrip('-')
                name = name.replace('%N', short_name(self.service)).replace('%n', self.service)
                data = read_bytes(name) if os.path.isabs(name) and os.path.isfile(name) else None
                if data is not None:
                    env.update(parse_environment_file(data))
            for d in unit.get('Service', 'Environment'):
                try:
                    words = split_words(d.value)
                except ParseError:
                    continue
                for w in words:
                    key, sep, value = w[0].partition('=')
                    if sep:
                        env[key] = value
        return env


def _parse_unit(data, path):
    try:
        return UnitFile(data, path)
    except ParseError as e:
        raise ServiceArgError(str(e)) from e


def dropin_files(service):
    """Drop-ins of ``service`` in systemd's order (by file name; /etc wins over /run and /usr/lib)."""
    found = {}
    for directory in DROPIN_DIRS:
        d = os.path.join(directory, service + '.d')
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            if name.endswith('.conf') and name not in found:
                found[name] = os.path.join(d, name)
    return [found[n] for n in sorted(found)]


class OpenrcState:
    def __init__(self, service, path):
        self.service = short_name(service)
        self.path = path
        data = read_bytes(path)
        try:
            self.script = InitScript(data, path)
            self.parsed = self.script.parse()
        except ParseError as e:
            raise ServiceArgError(str(e)) from e
        text = self.script.text()
        m = re.search(r'^\s*command="?([^"\n]+)"?\s*$', text, re.M)
        self.binary = m.group(1) if m else '/usr/local/bin/k3s'
        m = re.search(r'^\s*pidfile="?([^"\n]+)"?\s*$', text, re.M)
        self.pidfile = m.group(1) if m else '/var/run/%s.pid' % self.service

    def environment(self):
        env = {}
        for p in OPENRC_ENV_FILES + ['/etc/rancher/k3s/%s.env' % self.service]:
            data = read_bytes(p)
            if data is not None:
                env.update(parse_environment_file(data))
        return env


# -- a service as it is (read-only; baremetal.k3s.k3s_info) -----------------------------
class ServiceCommand:
    """What starts a k3s service and from which files, read as :func:`run` reads them."""

    def __init__(self, kind, service, path, exec_path, dropins, raw_argv, env, binary, pidfile):
        self.kind = kind              # systemd | openrc
        self.service = service        # the short name (k3s, k3s-agent)
        self.path = path              # the unit file or init script
        self.exec_path = exec_path    # the file whose ExecStart (command_args) counts
        self.dropins = dropins        # drop-in files of the unit, in systemd's order
        self.raw_argv = raw_argv      # as written, ${VAR} not expanded
        self.argv = expand_argv(raw_argv, env)
        self.env = env                # the service's environment files (and Environment=)
        self.binary = binary          # the executable started
        self.pidfile = pidfile        # openrc only


def read_service(service):
    """The :class:`ServiceCommand` of ``service``; :class:`ServiceNotFound` when it has neither unit nor init script."""
    kind, path = find_service(service)
    if kind == 'systemd':
        sd = SystemdState(service, path, None)
        exec_path = sd.effective(True)[0]
        cmd = sd.command(True)
        return ServiceCommand(kind, short_name(service), path, exec_path, [p for p, dummy in sd.dropins],
                              list(cmd.argv), sd.environment(), cmd.path, None)
    orc = OpenrcState(service, path)
    return ServiceCommand(kind, short_name(service), path, path, [], [orc.binary] + orc.parsed.argv,
                          orc.environment(), orc.binary, orc.pidfile)


def flag_sources(documents, name):
    """[(value, file)]: the values k3s's config ``documents`` [(path, pairs)] give flag ``name``.

    The same values, in the same order, as ``flag_values(to_flags(merge(documents)), name)``,
    each with the file that put it in the list (``key+:`` appends, ``key:`` replaces).
    """
    state = None  # (raw value, file) as merge() keeps it, or [(item, file)] once appended to
    for path, pairs in documents:
        for raw_key, value in pairs:
            key = k3s_config.go_string(raw_key)
            append = key.endswith('+')
            if (key[:-1] if append else key) != name:
                continue
            if append and state is not None:
                if not isinstance(state, list):
                    state = [(x, state[1]) for x in k3s_config._to_list(state[0])]  # pylint: disable=protected-access
                state = state + [(x, path) for x in k3s_config._to_list(value)]  # pylint: disable=protected-access
            else:
                state = (value, path)
    if state is None:
        return []
    if isinstance(state, list):
        return [(k3s_config.go_string(x), p) for x, p in state]
    value, path = state
    if isinstance(value, list) and not isinstance(value, k3s_config._Pairs):  # pylint: disable=protected-access
        return [(k3s_config.go_string(x), path) for x in value]
    return [(k3s_config.go_string(value), path)]


# -- config files ---------------------------------------------------------------------
def config_value(arg, flag):
    rest = arg[2 + len(flag):]
    return rest[1:] if rest.startswith('=') else 'true'


def load_own_config(path):
    data = read_bytes(path)
    if data is None:
        return None, []
    try:
        pairs = k3s_config.pairs_to_plain(k3s_config.load_yaml(data, path))
    except k3s_config.ConfigError as e:
        raise ServiceArgError('%s; fix or remove the file and run again.' % e) from e
    return data, pairs


def render_config(pairs):
    header = ('%s. Keys end in "+" so k3s adds these values to, and never replaces,\n'
              '# the lists of earlier config files. Remove with state=absent.') % MARKER
    return k3s_config.render_values(pairs, header).encode('utf-8')


def edit_config_pairs(pairs, flag, value, present):
    """New pairs with ``value`` added to (or removed from) the list of ``flag``."""
    pairs = [(k, list(v) if isinstance(v, list) else v) for k, v in pairs]
    key = None
    for k, dummy in pairs:
        if k in (flag + '+', flag):
            key = k
    if present:
        if key is None:
            pairs.append((flag + '+', [value]))
            return pairs
        out = []
        for k, v in pairs:
            if k == key:
                values = v if isinstance(v, list) else ([] if v is None else [v])
                if value not in [k3s_config.go_string(x) for x in values]:
                    values = values + [value]
                v = values
            out.append((k, v))
        return out
    out = []
    for k, v in pairs:
        if k == key:
            values = v if isinstance(v, list) else ([] if v is None else [v])
            values = [x for x in values if k3s_config.go_string(x) != value]
            if not values:
                continue
            v = values
        out.append((k, v))
    return out


# -- the running service ----------------------------------------------------------------
def main_pid(host, kind, service, pidfile=None):
    """PID of the running k3s process, or None."""
    if kind == 'systemd':
        rc, out, dummy = host.run(['systemctl', 'show', '-p', 'MainPID', '--value', unit_name(service)])
        if rc != 0:
            return None
        try:
            pid = int(out.strip() or '0')
        except ValueError:
            return None
        return pid or None
    data = read_bytes(pidfile) if pidfile else None
    if not data:
        return None
    try:
        sup = int(data.decode().strip())
    except ValueError:
        return None
    if not os.path.exists('/proc/%d' % sup):
        return None
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            stat = read_bytes('/proc/%s/stat' % entry)
            if stat and _stat_fields(stat)[1] == str(sup):
                return int(entry)
    return sup


def _stat_fields(stat):
    text = stat.decode('utf-8', 'replace')
    rest = text[text.rindex(')') + 2:].split()
    return rest  # rest[0] is the state, rest[1] the parent PID, rest[19] the start time


def proc_cmdline(pid):
    data = read_bytes('/proc/%d/cmdline' % pid)
    if data is None:
        return None
    return [w.decode('utf-8', 'surrogateescape') for w in data.rstrip(b'\0').split(b'\0')]


def proc_start_time(pid):
    stat = read_bytes('/proc/%d/stat' % pid)
    if stat is None:
        return None
    ticks = int(_stat_fields(stat)[19])
    btime = None
    for line in (read_bytes('/proc/stat') or b'').decode().splitlines():
        if line.startswith('btime '):
            btime = int(line.split()[1])
    if btime is None:
        return None
    return btime + ticks / float(os.sysconf('SC_CLK_TCK'))


def need_daemon_reload(host, service):
    rc, out, dummy = host.run(['systemctl', 'show', '-p', 'NeedDaemonReload', '--value', unit_name(service)])
    return rc == 0 and out.strip() == 'yes'


def _mtime(path):
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0


# -- the run ---------------------------------------------------------------------------
class Change:
    def __init__(self, path, before, after, mode):
        self.path = path
        self.before = before
        self.after = after
        self.mode = mode


def _repeatable(flag):
    """Whether k3s (or RKE2) takes ``flag`` as a list, so a config file can append to it with ``flag+:``."""
    return flag.endswith(('-arg', '-extra-mount', '-extra-env')) or flag in ('node-label', 'node-taint', 'disable', 'tls-san')


def run(params, host):
    """Do what ``params`` ask; return the module result (without ``diff`` texts decoded yet)."""
    arg = params['arg']
    state = params['state']
    method = params['method']
    service = params['service']
    flag = validate_arg(arg)
    warnings = []
    kind, path = find_service(service, params.get('path'))
    dropin_path = os.path.join(DROPIN_BASE, unit_name(service) + '.d', params.get('dropin_name') or DEFAULT_DROPIN_NAME)
    if kind == 'openrc' and method == 'dropin':
        raise ServiceArgError('%s is an openrc init script: method=dropin needs systemd. Use method=unit or method=config.' % path)
    if '/' in (params.get('dropin_name') or '') or '/' in (params.get('config_name') or ''):
        raise ServiceArgError('dropin_name and config_name are file names, not paths; remove the "/".')
    if params.get('dropin_name') and not params['dropin_name'].endswith('.conf'):
        raise ServiceArgError('dropin_name %r must end in ".conf" or systemd ignores it.' % params['dropin_name'])
    if params.get('config_name') and not params['config_name'].lower().endswith(('.yaml', '.yml')):
        raise ServiceArgError('config_name %r must end in ".yaml" or ".yml" or k3s ignores it.' % params['config_name'])

    orc = None
    if kind == 'systemd':
        sd = SystemdState(service, path, dropin_path)
        cmd = sd.command(True)
        env = sd.environment()
        cli = list(cmd.argv)
    else:
        sd = None
        orc = OpenrcState(service, path)
        env = orc.environment()
        cli = [orc.binary] + orc.parsed.argv
    cli_expanded = expand_argv(cli, env)
    config_file = k3s_config.find_config_file(cli_expanded, env)
    config_dir = config_file + '.d'
    config_path = os.path.join(config_dir, params.get('config_name') or DEFAULT_CONFIG_NAME)
    own_config_data, own_pairs = load_own_config(config_path)
    value = config_value(arg, flag)

    try:
        other_files = [p for p in k3s_config.config_files(config_file) if p != config_path]
        other_flags = k3s_config.to_flags(k3s_config.merge(k3s_config.read_documents(other_files)))
    except (k3s_config.ConfigError, OSError) as e:
        other_flags = []
        warnings.append('could not read the k3s config files (%s); k3s will fail on them too.' % e)
    own_flags = k3s_config.to_flags(k3s_config.merge([(config_path, own_pairs)]))
    cli_flag_values = k3s_config.flag_values(cli_expanded[1:], flag)

    if state == 'present' and arg.startswith('--kube-scheduler-arg=config='):
        mine = arg[len('--kube-scheduler-arg=config='):]
        for source, values in (('the command line of %s' % path, cli_flag_values),
                               ('the k3s config files', k3s_config.flag_values(other_flags + own_flags, 'kube-scheduler-arg'))):
            for v in values:
                if v.startswith('config=') and v[len('config='):] != mine:
                    raise ServiceArgError(
                        'a different scheduler config is already in use: --kube-scheduler-arg=%s in %s. '
                        'k3s passes one --config to the scheduler; add the extender to that file instead '
                        '(the scheduler_extender role merges into it), or remove it first.' % (v, source))

    unit_writable = is_writable(path)
    config_usable = is_writable(config_path)
    in_cli = arg in cli
    in_own_config = value in [k3s_config.go_string(v) for v in _values_of(own_pairs, flag)]
    cli_conflict = [a for a in cli_expanded[1:] if a == '--' + flag or a.startswith('--' + flag + '=')
                    or a == '-' + flag or a.startswith('-' + flag + '=')]

    # which places to edit
    targets = []
    used = None
    if method == 'auto':
        if state == 'present':
            if in_cli:
                used = 'dropin' if sd is not None and sd.effective(True)[0] == dropin_path else 'unit'
            elif in_own_config:
                used = 'config'
                if cli_conflict:
                    warnings.append('%s is in %s but the command line of %s also passes %s, which may replace the '
                                    'config files\' list; move the argument to the unit (method=unit).'
                                    % (arg, config_path, path, cli_conflict[0]))
            elif config_usable and not cli_conflict and _repeatable(flag):
                targets = ['config']
            elif unit_writable:
                targets = ['unit']
            elif kind == 'systemd':
                targets = ['dropin']
            else:
                raise ServiceArgError('%s is read-only and openrc has no drop-ins; make the file writable '
                                      'or use method=config.' % path)
        else:
            if in_cli:
                fpath = sd.effective(True)[0] if sd is not None else path
                if fpath == dropin_path:
                    targets.append('dropin')
                elif unit_writable and fpath == path:
                    targets.append('unit')
                elif kind == 'systemd':
                    targets.append('dropin')
                else:
                    raise ServiceArgError('%s is read-only; cannot remove %s from it.' % (path, arg))
            if sd is not None and sd.own_dropin is not None and 'dropin' not in targets:
                targets.append('dropin')
            if own_config_data is not None:
                targets.append('config')
    else:
        targets = [method]

    if '$' in arg and ('unit' in targets or 'dropin' in targets):
        raise ServiceArgError('arg %r holds "$", which %s would expand as a variable; use method=config, '
                              'or give the value without "$".' % (arg, 'systemd' if kind == 'systemd' else 'the openrc shell'))
    if 'unit' in targets and not unit_writable:
        raise ServiceArgError('%s is not writable (read-only file system or no permission), so method=unit cannot '
                              'change it. Use method=dropin (a systemd drop-in in %s that replaces ExecStart) or '
                              'method=config (a file in %s), or method=auto to choose.'
                              % (path, os.path.dirname(dropin_path), config_dir))
    if 'config' in targets and state == 'present' and method == 'config' and cli_conflict:
        raise ServiceArgError('method=config is unsafe here: the command line of %s already passes %s, and k3s may let '
                              'the command line replace the config files\' list. Use method=unit (or method=auto), '
                              'or move %s from the command line into a config file first.'
                              % (path, cli_conflict[0], cli_conflict[0]))
    if 'config' in targets and not config_usable:
        raise ServiceArgError('%s cannot be written (missing parent directory, read-only or no permission); '
                              'use method=unit or method=dropin.' % config_path)

    changes = []
    new_cli = list(cli)
    used = targets[0] if targets else (used or ('config' if in_own_config else 'unit'))
    own_pairs_after = own_pairs
    own_exists_after = own_config_data is not None
    for target in targets:
        if target == 'unit':
            if kind == 'systemd':
                before = read_bytes(path)
                unit = _parse_unit(before, path)
                directive = unit.exec_start()[0]
                try:
                    current = unit.parse_exec(directive).argv
                    if state == 'present':
                        if arg not in current[1:]:
                            unit.add_arg(directive, arg)
                    else:
                        unit.remove_arg(directive, arg)
                except ParseError as e:
                    raise ServiceArgError('%s: %s' % (path, e)) from e
                after = unit.render()
                changes.append(Change(path, before, after, None))
                if sd.effective(True)[0] != path:
                    warnings.append('%s changed, but the ExecStart of %s overrides it; the change has no effect '
                                    'while that drop-in exists.' % (path, sd.effective(True)[0]))
                else:
                    new_cli = unit.parse_exec(unit.exec_start()[0]).argv
            else:
                before = read_bytes(path)
                script = InitScript(before, path)
                try:
                    if state == 'present':
                        if arg not in script.parse().argv:
                            script.add_arg(arg)
                    else:
                        script.remove_arg(arg)
                    new_cli = [orc.binary] + script.parse().argv
                except ParseError as e:
                    raise ServiceArgError('%s: %s' % (path, e)) from e
                changes.append(Change(path, before, script.render(), None))
        elif target == 'dropin':
            base_cmd = sd.command(False)
            cur = sd.command(True)
            argv = list(cur.argv)
            if state == 'present':
                if arg not in argv[1:]:
                    argv.append(arg)
            else:
                argv = argv[:1] + [a for a in argv[1:] if a != arg]
            before = read_bytes(dropin_path)
            if argv == base_cmd.argv and cur.prefix == base_cmd.prefix:
                after = None
            else:
                after = render_dropin(cur.prefix, cur.path, argv, '@' in cur.prefix, path)
                if state == 'present' or before is not None:
                    warnings.append('%s replaces the whole ExecStart of %s: changes the k3s installer (or anyone) makes '
                                    'later to ExecStart in the unit are masked while the drop-in exists. Re-run this '
                                    'task after upgrading k3s.' % (dropin_path, path))
            changes.append(Change(dropin_path, before, after, 0o644))
            new_cli = argv
        elif target == 'config':
            pairs = edit_config_pairs(own_pairs, flag, value, state == 'present')
            if pairs:
                after = render_config(pairs)
                if own_config_data is not None and pairs == own_pairs:
                    after = own_config_data
            else:
                after = None
            if after is None and own_config_data is not None and MARKER.encode() not in own_config_data:
                after = b'{}\n'
            changes.append(Change(config_path, own_config_data, after, 0o600))
            own_pairs_after = pairs
            own_exists_after = after is not None

    changes = [c for c in changes if c.before != c.after]
    changed = bool(changes)
    if state == 'absent' and method in ('auto', 'config'):
        still = [v for v in k3s_config.flag_values(other_flags, flag) if v == value]
        if still:
            warnings.append('%s is still set in another k3s config file (not written by this module); '
                            'remove it there.' % arg)

    backup_files = []
    files = []
    for c in changes:
        b = None
        if not host.check_mode:
            if c.after is None:
                b = host.remove(c.path)
            else:
                b = host.write(c.path, c.after, c.mode)
            if b:
                backup_files.append(b)
        action = 'created' if c.before is None else ('removed' if c.after is None else 'modified')
        files.append({'path': c.path, 'action': action, 'backup_file': b})

    args_after = new_cli
    k3s_args = k3s_config.insert_flags(expand_argv(args_after, env),
                                       flags_after(config_file, config_path, own_pairs_after, own_exists_after))
    result = {
        'changed': changed,
        'method': used,
        'path': changes[0].path if changes else _primary_path(used, path, dropin_path, config_path),
        'paths': [c.path for c in changes],
        'args': args_after,
        'k3s_args': k3s_args,
        'backup_file': backup_files[0] if backup_files else None,
        'files': files,
        'warnings': warnings,
        'changes': changes,
    }
    _restart_state(result, host, kind, service, sd, orc, used, changes,
                   expand_argv(args_after, env), config_file, config_path, path, dropin_path, warnings)
    return result


def _values_of(pairs, flag):
    out = []
    for k, v in pairs:
        if k in (flag, flag + '+'):
            out.extend(v if isinstance(v, list) else [v])
    return out


def flags_after(config_file, config_path, own_pairs, own_exists):
    """The flags k3s will make of its config files, with our file's new content."""
    dropins = [p for p in k3s_config.dropin_files(config_file) if p != config_path]
    if own_exists and os.path.dirname(config_path) == config_file + '.d':
        dropins.append(config_path)
    dropins.sort(key=os.path.basename)
    files = ([config_file] if os.path.exists(config_file) else []) + dropins
    docs = []
    try:
        for p in files:
            if p == config_path:
                docs.append((p, own_pairs))
            else:
                docs.extend(k3s_config.read_documents([p]))
    except (k3s_config.ConfigError, OSError):
        return []
    return k3s_config.to_flags(k3s_config.merge(docs))


def render_dropin(prefix, exec_path, argv, argv0_explicit, unit_path):
    return ('%s. It replaces ExecStart of %s:\n'
            '# later installer changes to that ExecStart are masked while this file exists.\n'
            '[Service]\n'
            'ExecStart=\n' % (MARKER, unit_path)
            + render_exec_start(prefix.replace('@', ''), exec_path, argv, argv0_explicit)).encode('utf-8')


def _primary_path(used, path, dropin_path, config_path):
    return {'dropin': dropin_path, 'config': config_path}.get(used, path)


def _restart_state(result, host, kind, service, sd, orc, used, changes, desired_cli, config_file, config_path,
                   path, dropin_path, warnings):
    """restart_required / daemon_reload_required / running from the running process."""
    changed_paths = [c.path for c in changes]
    pid = main_pid(host, kind, service, orc.pidfile if orc is not None else None)
    result['running'] = bool(pid)
    service_changed = any(p in (path, dropin_path) for p in changed_paths)
    config_changed = config_path in changed_paths
    reload_needed = kind == 'systemd' and (service_changed or need_daemon_reload(host, service))
    result['daemon_reload_required'] = bool(reload_needed)
    if not pid:
        result['restart_required'] = False
        warnings.append('%s is not running: nothing to restart; the change applies when it starts.' % service)
        return
    running = proc_cmdline(pid) or []
    started = proc_start_time(pid)
    stale = False
    hidden = len(running) <= 2 < len(desired_cli)
    if not hidden and running:
        stale = running[1:] != desired_cli[1:]
    elif started is not None:
        files = [path, dropin_path] + ([p for p, dummy in sd.dropins] if sd is not None else [])
        stale = any(_mtime(p) > started for p in files)
    if used == 'config' or config_changed:
        if started is not None:
            files = k3s_config.config_files(config_file) + [config_file + '.d']
            stale = stale or any(_mtime(p) > started for p in files)
    result['restart_required'] = bool(service_changed or config_changed or stale)
