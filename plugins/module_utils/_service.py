# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""A k3s (or RKE2) service as the node has it, read through a :class:`~._view.View`.

What starts it (the systemd unit with its drop-ins, or the openrc init script), the command
line systemd or openrc builds from that, its environment, the k3s config files it reads and
the flags k3s makes of all of it, and the running process. Used by ``k3s_service_arg``
(to plan a change) and ``k3s_info`` (to report). Reads only; the parsers it uses
(``_systemd_unit``, ``_openrc``, ``_k3s_config``) get bytes from here.
"""

from __future__ import annotations

import os
import re

from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config as k3s_config
from ansible_collections.baremetal.k3s.plugins.module_utils import _names
from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal
from ansible_collections.baremetal.k3s.plugins.module_utils._openrc import InitScript
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._systemd_unit import (
    ParseError,
    UnitFile,
    parse_environment_file,
    split_words,
)

# systemd's unit search path, as far as a k3s or RKE2 install uses it (RKE2's tarball: /usr/local/lib).
UNIT_DIRS = ('/etc/systemd/system', '/usr/local/lib/systemd/system', '/usr/lib/systemd/system', '/lib/systemd/system')
DROPIN_DIRS = ('/etc/systemd/system', '/run/systemd/system', '/usr/local/lib/systemd/system',
               '/usr/lib/systemd/system', '/lib/systemd/system')
DROPIN_BASE = '/etc/systemd/system'
INITD_DIR = '/etc/init.d'
OPENRC_ENV_FILES = ('/etc/environment',)


class ServiceError(PlanError):
    """The service cannot be read as systemd/openrc or k3s would; nothing was changed."""


class ServiceNotFound(ServiceError):
    """No unit or init script exists for the service (k3s is not installed under that name)."""


def unit_name(service):
    return service if service.endswith('.service') else service + '.service'


def short_name(service):
    return service[:-len('.service')] if service.endswith('.service') else service


def check_service_name(service):
    """Refuse a service name systemd or openrc would not have (a path, white space...)."""
    _names.check('service', service, _names.SERVICE, ServiceError, what='a valid service name')


def service_of_path(path):
    """The service a unit file or init script path belongs to (``k3s`` for ``.../k3s.service``)."""
    name = os.path.basename(path)
    if name.endswith('.conf'):  # a drop-in: <unit>.service.d/<x>.conf
        name = os.path.basename(os.path.dirname(path))[:-len('.d')]
    return short_name(name)


def find(view, service, path=None):
    """(kind, unit path): kind ``systemd`` or ``openrc``; :class:`ServiceNotFound` when there is neither."""
    check_service_name(service)
    if path:
        if not os.path.isabs(path):
            raise ServiceError('path %r is relative; give the absolute path of the unit file or init script.' % (path,))
        if view.isdir(path):
            raise ServiceError('path %s is a directory; give the unit file or init script itself.' % path)
        data = view.read(path)
        if data is None:
            raise ServiceError('path %s does not exist; give the path of the k3s unit file or init script, '
                               'or leave path out to find it from service.' % path)
        if path.endswith(('.service', '.conf')):
            return 'systemd', path
        first = data.split(b'\n', 1)[0]
        if (first.startswith(b'#!') and b'openrc-run' in first) or os.path.dirname(path) == INITD_DIR \
                or b'command_args=' in data:
            return 'openrc', path
        return 'systemd', path
    seen = []
    for directory in UNIT_DIRS:
        candidate = os.path.join(directory, unit_name(service))
        if view.lexists(candidate):
            return 'systemd', candidate
        seen.append(candidate)
    candidate = os.path.join(INITD_DIR, short_name(service))
    if view.exists(candidate):
        return 'openrc', candidate
    seen.append(candidate)
    raise ServiceNotFound('no unit or init script found for service %s (looked at %s). Install k3s first, set service '
                          'to the right name (k3s, k3s-agent, k3s-<INSTALL_K3S_NAME>, rke2-server), or give path.'
                          % (service, ', '.join(seen)))


def unit_facts(view, service, path):
    """What systemd expands ``%`` specifiers of the unit with (%n %N %H %m %b %v %o %y ...), read from the node."""
    def first_line(p):
        return (view.read_text(p) or '').strip() or None

    return {
        'unit': unit_name(service),
        'hostname': view.hostname(),
        'machine_id': first_line('/etc/machine-id'),
        'boot_id': first_line('/proc/sys/kernel/random/boot_id'),
        'kernel_release': first_line('/proc/sys/kernel/osrelease'),
        'os_release': parse_environment_file(view.read('/etc/os-release') or view.read('/usr/lib/os-release') or b''),
        'fragment_path': view.realpath(path),
    }


def parse_unit(data, path, facts=None):
    try:
        return UnitFile(data, path, specifiers=facts)
    except ParseError as e:
        raise ServiceError('%s. Fix the file (systemd would not load it either) and run again.' % e) from e


def dropin_files(view, service):
    """Drop-ins of ``service`` in systemd's order: by file name, /etc winning over /run and /usr/lib."""
    found = {}
    for directory in DROPIN_DIRS:
        for name in view.listdir(os.path.join(directory, unit_name(service) + '.d')) or []:
            if name.endswith('.conf') and name not in found:
                found[name] = os.path.join(directory, unit_name(service) + '.d', name)
    return [found[n] for n in sorted(found)]


class Systemd:
    """A systemd unit with its drop-ins: the ExecStart that counts and the environment it runs with.

    ``own`` names a drop-in of ours; :meth:`effective` can leave it out (``with_own=False``)
    to see what the service would run without it.
    """

    kind = 'systemd'

    def __init__(self, view, service, path, own=None):
        self.service = unit_name(service)
        self.path = path
        self.own = own
        data = view.read(path)
        if view.realpath(path) == '/dev/null' or not data:
            raise ServiceError('%s is masked or empty; unmask the service (systemctl unmask %s) and run again.'
                               % (path, self.service))
        self.facts = unit_facts(view, service, path)
        self.unit = parse_unit(data, path, self.facts)
        if not self.unit.has_section('Service'):
            raise ServiceError('%s has no [Service] section: it is not the unit of a service. '
                               'Give the path of the k3s service unit.' % path)
        own_lines = self.unit.exec_start()
        if not own_lines and not self.unit.get('Service', 'ExecStart'):
            raise ServiceError('%s has no ExecStart= in [Service]; it does not start k3s. '
                               'Give the unit the k3s installer wrote (k3s.service, k3s-agent.service).' % path)
        if len(own_lines) > 1:
            raise ServiceError('%s sets ExecStart= %d times (lines %s); a k3s service has one command. Remove the extra '
                               'lines (or put "ExecStart=" before the one that counts) and run again.'
                               % (path, len(own_lines), ', '.join(str(d.start + 1) for d in own_lines)))
        self.dropins = []  # [(path, UnitFile)] in systemd's order, ours included
        for dpath in dropin_files(view, service):
            self.dropins.append((dpath, parse_unit(view.read(dpath) or b'', dpath, self.facts)))
        self.binary = None
        self.env = self._environment(view)

    @property
    def dropin_paths(self):
        return [p for p, dummy in self.dropins]

    def own_unit(self):
        """The :class:`UnitFile` of our drop-in, None when there is none."""
        return next((u for p, u in self.dropins if p == self.own), None)

    def chain(self, with_own=True):
        return [(self.path, self.unit)] + [(p, u) for p, u in self.dropins if with_own or p != self.own]

    def effective(self, with_own=True):
        """(path, UnitFile, directive) of the ExecStart that counts."""
        current = []
        for fpath, unit in self.chain(with_own):
            for d in unit.get('Service', 'ExecStart'):
                if d.is_reset:
                    current = []
                else:
                    current.append((fpath, unit, d))
        if not current:
            raise ServiceError('no ExecStart= is left for %s after the drop-ins reset it; fix the drop-ins and run again.'
                               % self.service)
        if len(current) > 1:
            raise ServiceError('%s gets %d ExecStart= lines (%s); a k3s service has one command. A drop-in must reset it '
                               'with an empty "ExecStart=" line before its own.'
                               % (self.service, len(current), ', '.join('%s line %d' % (p, d.start + 1) for p, dummy, d in current)))
        return current[0]

    def command(self, with_own=True):
        """The :class:`ExecCommand` that counts."""
        fpath, unit, d = self.effective(with_own)
        try:
            return unit.parse_exec(d)
        except ParseError as e:
            raise ServiceError('%s: %s' % (fpath, e)) from e

    def raw_argv(self, with_own=True):
        """What runs: the program systemd starts (the command's path), then its arguments. With the "@" prefix
        (``@/usr/local/bin/k3s k3s-main server``) the second word is only the argv[0] the program sees, never the
        program: it is left out, as every reader here asks which program runs and with which arguments."""
        return program_argv(self.command(with_own))

    @property
    def exec_path(self):
        return self.effective(True)[0]

    def _environment(self, view):
        env = {}
        self.env_files = []  # the environment files the service reads, that exist
        for dummy, unit in self.chain(True):
            for d in unit.get('Service', 'EnvironmentFile'):
                if d.is_reset:
                    continue
                name = d.value.lstrip('-')
                name = name.replace('%N', short_name(self.service)).replace('%n', self.service)
                data = view.read(name) if os.path.isabs(name) and view.isfile(name) else None
                if data is not None:
                    env.update(parse_environment_file(data))
                    if name not in self.env_files:
                        self.env_files.append(name)
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


class Openrc:
    """An openrc init script: ``command``, ``command_args`` and the environment files."""

    kind = 'openrc'

    def __init__(self, view, service, path):
        self.service = short_name(service)
        self.path = path
        self.own = None
        self.dropins = []
        self.dropin_paths = []
        try:
            self.script = InitScript(view.read(path), path)
            self.parsed = self.script.parse()
        except ParseError as e:
            raise ServiceError('%s. Fix the init script and run again.' % e) from e
        text = self.script.text()
        m = re.search(r'^\s*command="?([^"\n]+)"?\s*$', text, re.M)
        self.binary = m.group(1) if m else '/usr/local/bin/k3s'
        m = re.search(r'^\s*pidfile="?([^"\n]+)"?\s*$', text, re.M)
        self.pidfile = m.group(1) if m else '/var/run/%s.pid' % self.service
        self.env = {}
        self.env_files = []  # the service's own environment file, when it exists (not the system-wide ones)
        for p in OPENRC_ENV_FILES + ('/etc/rancher/k3s/%s.env' % self.service,):
            data = view.read(p)
            if data is not None:
                self.env.update(parse_environment_file(data, shell=True))  # the init script sources them
                if p not in OPENRC_ENV_FILES:
                    self.env_files.append(p)

    def raw_argv(self, with_own=True):
        return [self.binary] + list(self.parsed.argv)

    @property
    def exec_path(self):
        return self.path


def program_argv(command):
    """``[program, arguments...]`` of a parsed ExecStart command (:class:`_systemd_unit.ExecCommand`): its path, then
    the words after argv[0]. Every prefix systemd accepts (``-``, ``@``, ``:``, ``+``, ``!``, ``!!``, combined) is
    off the path already; ``@`` only renames argv[0], which is not the program."""
    return [command.path] + list(command.args)


# -- a running k3s ---------------------------------------------------------------------------
# k3s (and RKE2, which runs k3s's server and agent code) hides its arguments as it starts: pkg/cli/server and
# pkg/cli/agent call gspt.SetProcTitle(os.Args[0] + " server") (" agent"), which overwrites the whole argv area,
# so /proc/<pid>/cmdline holds that one string, padded with NUL bytes, never the flags or the token.
SERVICE_SUBCOMMANDS = ('server', 'agent')
_SERVICE_PROGRAM = re.compile(r'(k3s|rke2)([-.][^/]*)?')
_GLOBAL_FLAGS = ('--debug', '-debug')


def running_command(argv):
    """``(program, subcommand, hidden)`` when ``argv`` (a process's ``/proc/<pid>/cmdline``) is a running k3s or RKE2
    server or agent, None otherwise.

    Both forms count: the title k3s sets (``['/usr/local/bin/k3s server', '', ...]``, ``hidden`` True: the arguments
    cannot be read) and the command line as started (``['/usr/local/bin/k3s', 'server', '--token=...']``: before the
    title is set, or a build that does not set it). The program is k3s or rke2 by its file name (``k3s-main`` too,
    an argv[0] the "@" prefix of a unit may give it).
    """
    if not argv or not isinstance(argv[0], str):
        return None
    title = argv[0].rstrip(' ')
    program, sep, sub = title.rpartition(' ')
    if sep and sub in SERVICE_SUBCOMMANDS and program.strip():
        found = _program_match(program.strip(), sub, True)
        if found:
            return found
    words = [a for a in argv[1:] if a not in _GLOBAL_FLAGS]
    if words and words[0] in SERVICE_SUBCOMMANDS:
        return _program_match(argv[0], words[0], False)
    return None


def _program_match(program, sub, hidden):
    if _SERVICE_PROGRAM.fullmatch(os.path.basename(program)):
        return program, sub, hidden
    return None


def read_init(view, service, path=None, own_dropin=None):
    """The :class:`Systemd` or :class:`Openrc` of ``service`` (or of the file ``path``)."""
    kind, path = find(view, service, path)
    if kind == 'systemd':
        return Systemd(view, service, path, own_dropin)
    return Openrc(view, service, path)


# -- k3s's config files --------------------------------------------------------------------
def config_files(view, config_file):
    """The files k3s reads for ``config_file``, in order: the file itself (when it exists), then its drop-ins.

    A drop-in is every ``*.yaml``/``*.yml`` entry of ``config.yaml.d`` that is not a directory itself, as k3s's
    ``os.ReadDir`` sees it: a symbolic link counts whatever it points to (k3s then fails to read one that points to
    nothing or to a directory; :func:`config_documents` says so).
    """
    directory = config_file + '.d'

    def is_dir(name):
        path = os.path.join(directory, name)
        return view.isdir(path) and not view.islink(path)

    names = k3s_config.dropin_names(view.listdir(directory) or [], is_dir=is_dir)
    files = [os.path.join(directory, n) for n in names]
    if view.exists(config_file):
        files.insert(0, config_file)
    return files


def unreadable_config(view, path):
    """Why k3s cannot read its config file ``path`` that is listed in its directory (a symbolic link to nothing, or to
    a directory), or '' when it can."""
    real = os.path.join(view.realpath(os.path.dirname(path)), os.path.basename(path))
    if view.islink(real):
        target = _terminal.escape(os.readlink(view.host_path(real)))
        if not view.exists(path):
            return 'is a symbolic link to %s, which does not exist' % target
        if view.isdir(path):
            return 'is a symbolic link to the directory %s' % target
    return ''


def config_documents(view, files, replaced=None, warnings=None):
    """[(path, pairs)] of ``files`` as k3s reads them; ``replaced`` {path: bytes or None} stands in for what is on disk.

    A listed file k3s cannot read (a dangling link, a link to a directory) stops k3s at its start: a ServiceError
    naming it, or, with a ``warnings`` list (a module that only reports), a warning there and the file left out.
    """
    replaced = replaced or {}
    docs = []
    for path in files:
        if path in replaced:
            data = replaced[path]
        else:
            why = unreadable_config(view, path)
            if why:
                problem = ('%s %s: k3s reads every *.yaml and *.yml entry of %s and does not start while one cannot be '
                           'read. Remove the link or point it at a config file.'
                           % (_terminal.escape(path), why, _terminal.escape(os.path.dirname(path))))
                if warnings is None:
                    raise ServiceError(problem)
                warnings.append(problem + ' Its settings are left out here.')
                continue
            data = view.read(path)
        if data is None:
            continue
        try:
            docs.append((path, k3s_config.load_yaml(data, path)))
        except k3s_config.ConfigError as e:
            raise ServiceError('%s. Fix or remove the file and run again.' % e) from e
    return docs


# -- the running service -------------------------------------------------------------------
def systemctl_show(view, service, *props):
    """{property: value} of ``systemctl show``; {} when systemctl is missing or fails."""
    argv = ['systemctl', 'show']
    for p in props:
        argv += ['-p', p]
    rc, out, dummy = view.run(argv + [unit_name(service)])
    if rc != 0:
        return {}
    values = {}
    for line in (out or '').splitlines():
        key, sep, value = line.partition('=')
        if sep:
            values[key] = value
    return values


def main_pid(view, init):
    """PID of the running k3s process, None when it does not run."""
    if init.kind == 'systemd':
        try:
            pid = int(systemctl_show(view, init.service, 'MainPID').get('MainPID') or 0)
        except ValueError:
            return None
        return pid or None
    data = view.read(init.pidfile) if init.pidfile else None
    try:
        supervisor = int((data or b'').decode().strip() or 0)
    except ValueError:
        return None
    if not supervisor or view.cmdline(supervisor) is None:
        return None
    for pid in view.pids():  # supervise-daemon's child is k3s itself
        stat = view.proc_stat(pid)
        if stat is not None and stat['ppid'] == supervisor:
            return pid
    return supervisor
