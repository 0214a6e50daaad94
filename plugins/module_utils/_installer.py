# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.k3s_service``: the k3s service files, in the k3s installer's own format.

What k3s's ``install.sh`` leaves on a node for a service, and nothing else:

* systemd: ``<systemd_dir>/<service>.service`` (0644) and its environment file
  ``<systemd_dir>/<service>.service.env`` (0600);
* openrc (``/sbin/openrc-run`` present): ``/etc/init.d/<service>`` (0755), the environment
  file ``/etc/rancher/k3s/<service>.env`` (0600) and, with a new init script,
  ``/etc/logrotate.d/<service>`` for its log.

The unit is the installer's text; ``ExecStart`` (``command_args`` for openrc) is
``<bin_dir>/k3s`` then ``    <command> \\`` and one line per argument: a TAB, the argument in
single quotes (``'`` written ``'\\''``), a space and a backslash, then an empty line (openrc:
the log redirection line, ``"`` written ``\\"``). The environment file holds ``KEY='value'``
lines, ``K3S_*``/``CONTAINERD_*`` first, then the proxy variables, each group sorted.

A node the installer set up is adopted as it is: the command line is compared as systemd (or
openrc) reads it, so a unit whose arguments already are the requested ones is never written,
whatever its quoting; an argument change replaces the ``ExecStart`` lines (or the
``command_args`` assignment) only, every other byte of the file is kept.

Secrets (``_secrets``: ``--token``/``-t``, ``--agent-token``, a ``--datastore-endpoint``
password, ``K3S_TOKEN``, ``AWS_SECRET_ACCESS_KEY``...) in the options or in the files read are
collected into the caller's ``found`` set and shown as ``(hidden)`` in the diff, the ``args``
fact, the warnings and the messages.

``plan(view, params, found)`` reads the node through the view and returns a Plan; nothing is
written here. Pure standard library; no Ansible import.
"""

from __future__ import annotations

import os
import re

from ansible_collections.baremetal.k3s.plugins.module_utils import _names
from ansible_collections.baremetal.k3s.plugins.module_utils import _openrc as openrc
from ansible_collections.baremetal.k3s.plugins.module_utils import _platform
from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets as secrets
from ansible_collections.baremetal.k3s.plugins.module_utils import _service as services
from ansible_collections.baremetal.k3s.plugins.module_utils import _systemd_unit as systemd
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import ViewError

COMMANDS = ('server', 'agent')
TYPES = ('notify', 'exec')
INITS = ('auto', 'systemd', 'openrc')
DEFAULT_BIN_DIR = '/usr/local/bin'
DEFAULT_SYSTEMD_DIR = '/etc/systemd/system'
DEFAULT_TYPE = 'notify'
OPENRC_RUN = '/sbin/openrc-run'
INITD_DIR = '/etc/init.d'
OPENRC_ENV_DIR = '/etc/rancher/k3s'
LOGROTATE_DIR = '/etc/logrotate.d'
LOG_DIR = '/var/log'
WANTS_DIR = '/etc/systemd/system/multi-user.target.wants'
RUNLEVEL_DIR = '/etc/runlevels/default'
HIDDEN = secrets.HIDDEN

UNIT_MODE = 0o644
SCRIPT_MODE = 0o755
ENV_MODE = 0o600
LOGROTATE_MODE = 0o644

# The installer refuses a service name holding one of these (its sed expression).
_INVALID_NAME = re.compile(r'[][!#$%&()*;<=>?\\_`{|}/\s]')
_VAR_NAME = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
_K3S_VARS = re.compile(r'^(K3S|CONTAINERD)_')
_PROXY_VARS = re.compile(r'^(NO|HTTP|HTTPS)_PROXY', re.I)
_ENV_LINE = re.compile(r'^\s*(export\s+)?[A-Za-z_][A-Za-z0-9_]*=')
_COMMAND_LINE = re.compile(r'^(\s*)command=("?)([^"\n]*)\2[ \t]*$')
_ARGS_ASSIGN = re.compile(r'^(\s*)command_args=')

UNIT_HEAD = '''[Unit]
Description=Lightweight Kubernetes
Documentation=https://k3s.io
Wants=network-online.target
After=network-online.target

[Install]
WantedBy=multi-user.target

[Service]
Type=%(type)s
EnvironmentFile=-/etc/default/%%N
EnvironmentFile=-/etc/sysconfig/%%N
EnvironmentFile=-%(env_path)s
KillMode=process
Delegate=yes
User=root
# Having non-zero Limit*s causes performance problems due to accounting overhead
# in the kernel. We recommend using cgroups to do container-local accounting.
LimitNOFILE=1048576
LimitNPROC=infinity
LimitCORE=infinity
TasksMax=infinity
TimeoutStartSec=0
Restart=always
RestartSec=5s
ExecStartPre=-/sbin/modprobe br_netfilter
ExecStartPre=-/sbin/modprobe overlay
'''

SCRIPT_HEAD = '''#!/sbin/openrc-run

depend() {
    after network-online
    want cgroups
}

start_pre() {
    rm -f /tmp/k3s.*
}

supervisor=supervise-daemon
name=%(service)s
command="%(binary)s"
'''

SCRIPT_TAIL = '''
output_log=%(log_file)s
error_log=%(log_file)s

pidfile="/var/run/%(service)s.pid"
respawn_delay=5
respawn_max=0

set -o allexport
if [ -f /etc/environment ]; then . /etc/environment; fi
if [ -f %(env_path)s ]; then . %(env_path)s; fi
set +o allexport
'''

LOGROTATE = '''%(log_file)s {
\tmissingok
\tnotifempty
\tcopytruncate
}
'''


class InstallerError(PlanError):
    """A refusal: the message says what is wrong and what to do; nothing was changed."""


# -- names and paths ------------------------------------------------------------------------------
def service_name(command, name=''):
    """The service the installer makes for ``command`` and ``INSTALL_K3S_NAME``: k3s, k3s-agent, k3s-<name>."""
    if name:
        result = 'k3s-' + name
    elif command == 'server':
        result = 'k3s'
    else:
        result = 'k3s-' + command
    bad = _INVALID_NAME.search(result) or re.search(r'[^A-Za-z0-9.-]', result)
    if bad:
        raise InstallerError('name %r gives the service name %r, which holds %r: the k3s installer (or systemd) refuses '
                             'it. Use letters, digits, "-" and "." only.' % (name, result, bad.group(0)))
    return result


class Layout:
    """Where the files of one service are, for one init system."""

    def __init__(self, init, service, bin_dir, systemd_dir):
        self.init = init
        self.service = service
        self.bin_dir = bin_dir
        self.binary = '%s/k3s' % bin_dir
        self.log_file = '%s/%s.log' % (LOG_DIR, service)
        if init == 'systemd':
            self.unit = '%s/%s.service' % (systemd_dir, service)
            self.env = self.unit + '.env'
            self.logrotate = None
        else:
            self.unit = '%s/%s' % (INITD_DIR, service)
            self.env = '%s/%s.env' % (OPENRC_ENV_DIR, service)
            self.logrotate = '%s/%s' % (LOGROTATE_DIR, service)

    @property
    def unit_mode(self):
        return UNIT_MODE if self.init == 'systemd' else SCRIPT_MODE


# -- quoting --------------------------------------------------------------------------------------
def installer_quote(arg):
    """The installer's quoting of one argument: single quotes, ``'`` written ``'\\''``."""
    return "'" + arg.replace("'", "'\\''") + "'"


def installer_quote_openrc(arg):
    """The installer's quoting inside ``command_args="..."``: as for systemd, then ``"`` written ``\\"``."""
    return installer_quote(arg).replace('"', '\\"')


def unit_quote(arg):
    """One ExecStart argument that systemd reads back as ``arg``: the installer's quoting, and for a
    backslash or ``%`` (which the installer writes raw, so that systemd would unescape or expand
    them) the escaped form."""
    try:
        return systemd.quote_arg(arg)
    except systemd.ParseError as e:
        raise InstallerError(str(e)) from e


def collapse(arg):
    """What openrc passes on of ``arg``: it expands ``$command_args`` unquoted, so runs of blanks become one space."""
    return re.sub(r'[ \t]+', ' ', arg)


def script_quote(arg, warnings):
    """One argument inside ``command_args="..."`` that openrc passes on as ``arg``.

    A TAB or a run of spaces cannot pass through openrc (it splits ``$command_args`` before
    ``eval``): the installer's form is written, as the installer does, with a warning.
    """
    if '\t' in arg or '  ' in arg:
        warnings.append('argument %s holds a TAB or several spaces in a row: openrc splits command_args at white space '
                        'before eval, so k3s gets %s (the k3s installer writes the same). Put the value in a k3s config '
                        'file (baremetal.k3s.k3s_config_file) to pass it unchanged.' % (show(arg), show(collapse(arg))))
        return installer_quote_openrc(arg)
    try:
        return openrc.quote_arg(arg)
    except systemd.ParseError as e:
        raise InstallerError(str(e)) from e


def show(arg):
    """``arg`` for a message, a secret flag's value hidden (``plan`` hides the rest of every message)."""
    return repr(secrets.hide_argv([arg])[0])


def secrets_of(args):
    """Secret values in ``args`` (``--token=x``, ``--token x``, ``-t x``, a datastore password...)."""
    return secrets.argv_secrets(args)


# -- rendering --------------------------------------------------------------------------------------
def exec_lines(command, args, quote):
    """``<command> \\`` and one ``\\t'<arg>' \\`` line per argument (CMD_K3S_EXEC of the installer)."""
    return ['%s \\' % command] + ['\t%s \\' % quote(a) for a in args]


def render_exec_start(binary, command, args, quote=unit_quote, eol='\n'):
    """The ExecStart lines, in the installer's layout, ending with the empty line."""
    body = exec_lines(command, args, quote)
    lines = ['ExecStart=%s \\' % binary, '    ' + body[0]] + body[1:]
    return eol.join(lines + ['']) + eol


def render_unit(layout, command, args, unit_type=DEFAULT_TYPE, quote=unit_quote):
    """The whole systemd unit the installer writes."""
    head = UNIT_HEAD % {'type': unit_type, 'env_path': layout.env}
    return (head + render_exec_start(layout.binary, command, args, quote)).encode('utf-8')


def command_args_lines(command, args, log_file, quote):
    """The ``command_args="..."`` assignment of the installer's init script, as lines."""
    lines = exec_lines(command, args, quote)
    lines[0] = 'command_args="' + lines[0]
    return lines + ['    >>%s 2>&1"' % log_file]


def render_script(layout, command, args, quote):
    """The whole openrc init script the installer writes."""
    values = {'service': layout.service, 'binary': layout.binary, 'log_file': layout.log_file, 'env_path': layout.env}
    text = SCRIPT_HEAD % values + '\n'.join(command_args_lines(command, args, layout.log_file, quote)) + '\n' \
        + SCRIPT_TAIL % values
    return text.encode('utf-8')


def render_logrotate(layout):
    return (LOGROTATE % {'log_file': layout.log_file}).encode('utf-8')


def env_order(env):
    """The variables in the installer's order: K3S_*/CONTAINERD_*, then proxies, then the others, each sorted."""
    keys = sorted(env)
    first = [k for k in keys if _K3S_VARS.match(k)]
    second = [k for k in keys if k not in first and _PROXY_VARS.match(k)]
    return first + second + [k for k in keys if k not in first and k not in second]


def render_env(env):
    """The environment file: one ``KEY='value'`` line per variable (``'`` written ``'\\''``)."""
    return ''.join("%s='%s'\n" % (k, env[k].replace("'", "'\\''")) for k in env_order(env)).encode('utf-8')


# -- the request ------------------------------------------------------------------------------------
def _abs_dir(value, option):
    if not value or not os.path.isabs(value):
        raise InstallerError('%s %r is not an absolute path; give one such as %s.'
                             % (option, value, DEFAULT_BIN_DIR if option == 'bin_dir' else DEFAULT_SYSTEMD_DIR))
    if any(c in value for c in ' \t\n\r\x00"\'\\$`%'):
        raise InstallerError('%s %r holds white space, a quote, "\\", "$", "`" or "%%", which the unit (or init script) '
                             'cannot carry unquoted as the installer writes it; use a plain path.' % (option, value))
    return os.path.normpath(value).rstrip('/') or '/'


def validate_args(args):
    """The arguments as strings; control characters (but TAB) are refused."""
    if args is None:
        return None
    out = []
    for i, arg in enumerate(args):
        if arg is None or isinstance(arg, (dict, list)):
            raise InstallerError('args[%d] is %r: every argument must be a string.' % (i, arg))
        arg = str(arg)
        bad = [c for c in arg if (ord(c) < 32 and c != '\t') or ord(c) == 127 or '\ud800' <= c <= '\udfff']
        if bad:
            raise InstallerError('args[%d] %s holds the control character %r: a unit file or init script cannot carry it '
                                 '(a line break would end the command). Give single-line arguments.' % (i, show(arg), bad[0]))
        out.append(arg)
    return out


def validate_env(env):
    """The environment as {name: text}; names must be variable names, values single-line text."""
    if env is None:
        return None
    out = {}
    for key, value in env.items():
        option = 'env.%s' % (key.encode('unicode_escape').decode('ascii') if isinstance(key, str) else key)
        _names.check(option, key, _names.ENV_KEY, InstallerError, what='a valid variable name',
                     hint='systemd and the shell would ignore or refuse it (an environment file line is KEY=value)')
        if value is None or isinstance(value, (dict, list)):
            raise InstallerError('%s must be a string, not %s.' % (option, 'null' if value is None else type(value).__name__))
        if isinstance(value, bool):
            value = 'true' if value else 'false'
        value = str(value)
        bad = [c for c in value if (ord(c) < 32 and c != '\t') or ord(c) == 127 or '\ud800' <= c <= '\udfff']
        if bad:
            raise InstallerError('%s holds the control character %r; an environment file line cannot carry it (a line '
                                 'break would start another assignment). Give a single-line value.' % (option, bad[0]))
        out[key] = value
    return out


class Request:
    """The module's options, checked before the node is read."""

    def __init__(self, params):
        self.command = params.get('command') or 'server'
        if self.command not in COMMANDS:
            raise InstallerError('command %r is not one of %s.' % (self.command, ', '.join(COMMANDS)))
        self.name = params.get('name') or ''
        self.service = service_name(self.command, self.name)
        self.bin_dir = _abs_dir(params.get('bin_dir') or DEFAULT_BIN_DIR, 'bin_dir')
        self.systemd_dir = _abs_dir(params.get('systemd_dir') or DEFAULT_SYSTEMD_DIR, 'systemd_dir')
        self.args = validate_args(params.get('args'))
        self.env = validate_env(params.get('env'))
        self.type = params.get('type')
        if self.type is not None and self.type not in TYPES:
            raise InstallerError('type %r is not one of %s.' % (self.type, ', '.join(TYPES)))
        self.init = params.get('init') or 'auto'
        if self.init not in INITS:
            raise InstallerError('init %r is not one of %s.' % (self.init, ', '.join(INITS)))
        self.present = (params.get('state') or 'present') == 'present'

    def secret_values(self):
        """Values to hide: secret flags of ``args``, secret variables of ``env``."""
        return secrets.argv_secrets(self.args) + secrets.env_secrets(self.env)


def lock_key(params):
    """The lock a run holds: the service's, as k3s_service_arg takes it."""
    return 'service-' + service_name(params.get('command') or 'server', params.get('name') or '')


def choose_init(view, request):
    if request.init != 'auto':
        return request.init
    return 'openrc' if view.exists(OPENRC_RUN) else 'systemd'


# -- the files as they are ----------------------------------------------------------------------------
def _read(view, path):
    try:
        if view.isdir(path):
            raise InstallerError('%s is a directory; move it away, or give another name.' % path)
        return view.read(path)
    except ViewError as e:
        raise InstallerError(str(e)) from e


class Edit:
    """Physical lines ``start``..``end`` replaced by ``lines`` (Line objects)."""

    def __init__(self, start, end, lines):
        self.start, self.end, self.lines = start, end, lines


def apply_edits(lines, edits):
    lines = list(lines)
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        lines[e.start:e.end + 1] = e.lines
    return systemd.encode(''.join(ln.text + ln.eol for ln in lines))


def _text_lines(text, eol):
    return [systemd.Line(t, eol) for t in text.split(eol)[:-1]]


class SystemdUnit:
    """An existing unit at the service's path, checked to be the k3s unit of the command."""

    def __init__(self, view, layout, request, data):
        self.path = layout.unit
        self.layout = layout
        self.data = data
        facts = services.unit_facts(view, layout.service, layout.unit)
        self.unit = services.parse_unit(data, layout.unit, facts)
        if not self.unit.has_section('Service'):
            raise InstallerError('%s has no [Service] section: it is not the unit of a k3s service. Give another name (or '
                                 'systemd_dir), or move the file away.' % self.path)
        lines = self.unit.exec_start()
        if len(lines) != 1:
            raise InstallerError('%s has %s ExecStart= line: it is not a k3s unit the installer wrote. Fix or move the file.'
                                 % (self.path, 'no' if not lines else '%d times an' % len(lines)))
        self.directive = lines[0]
        try:
            self.cmd = self.unit.parse_exec(self.directive)
        except systemd.ParseError as e:
            raise InstallerError('%s: %s' % (self.path, e)) from e
        if os.path.basename(self.cmd.path) != _platform.K3S.binary:
            raise InstallerError('%s starts %s, not k3s: it is not a k3s unit, and this module never writes over another '
                                 'service. Give another name (or systemd_dir), or move the file away.'
                                 % (self.path, self.cmd.path))
        argv = list(self.cmd.argv)
        if len(argv) < 2 or argv[1] != request.command:
            raise InstallerError('%s is the unit of "k3s %s", not of "k3s %s"; give command=%s (or another name), or move '
                                 'the file away.' % (self.path, argv[1] if len(argv) > 1 else '', request.command,
                                                     argv[1] if len(argv) > 1 else 'server'))
        self.args = argv[2:]
        self.eol = self.unit.lines[self.directive.start].eol or '\n'

    @property
    def type(self):
        found = self.unit.get('Service', 'Type')
        return found[-1].value if found else None

    def current_block(self):
        d = self.directive
        return ''.join(ln.text + ln.eol for ln in self.unit.lines[d.start:d.end + 1])

    def runs(self, argv):
        return self.cmd.prefix == '' and list(self.cmd.argv) == argv and self.cmd.path == self.layout.binary

    def plan_bytes(self, request, args, warnings):
        """The unit's new bytes: the ExecStart lines (and the Type= line) replaced when they differ."""
        layout = self.layout
        edits = []
        argv = [layout.binary, request.command] + args
        same = self.current_block() in (render_exec_start(layout.binary, request.command, args, installer_quote, self.eol),
                                        render_exec_start(layout.binary, request.command, args, unit_quote, self.eol))
        if not same and not self.runs(argv):
            check_dollar(args, 'systemd')
            block = render_exec_start(layout.binary, request.command, args, unit_quote, self.eol)
            edits.append(Edit(self.directive.start, self.directive.end, _text_lines(block, self.eol)))
        if request.type is not None and self.type != request.type:
            found = self.unit.get('Service', 'Type')
            if found:
                d = found[-1]
                edits.append(Edit(d.start, d.end, [systemd.Line('Type=%s' % request.type, self.unit.lines[d.end].eol or self.eol)]))
            else:
                header = max(i for name, i in self.unit.sections if name == 'Service')
                edits.append(Edit(header + 1, header, [systemd.Line('Type=%s' % request.type, self.eol)]))
        if not edits:
            return self.data
        after = apply_edits(self.unit.lines, edits)
        check = services.parse_unit(after, self.path, self.unit.specifiers)
        cmd = check.parse_exec(check.exec_start()[0])
        types = check.get('Service', 'Type')
        if list(cmd.argv) != argv or (request.type is not None and (not types or types[-1].value != request.type)):
            raise InstallerError('%s: the new ExecStart would not read back as %r; nothing was changed. Edit the unit by hand.'
                                 % (self.path, [show(a) for a in argv]))
        return after

    def check_env_reference(self, warnings):
        names = [d.value.lstrip('-') for d in self.unit.get('Service', 'EnvironmentFile')]
        if self.layout.env not in names:
            warnings.append('%s does not read %s (no EnvironmentFile=-%s line): the environment file has no effect on the '
                            'service.' % (self.path, self.layout.env, self.layout.env))


class OpenrcScript:
    """An existing init script at the service's path, checked to be the k3s script of the command."""

    def __init__(self, layout, request, data):
        self.path = layout.unit
        self.layout = layout
        self.data = data
        try:
            self.script = openrc.InitScript(data, self.path)
            self.parsed = self.script.parse()
        except systemd.ParseError as e:
            raise InstallerError('%s. It is not an init script of k3s the installer wrote; fix or move the file.' % e) from e
        self.command_line = None
        for i, line in enumerate(self.script.lines):
            m = _COMMAND_LINE.match(line.text)
            if m:
                self.command_line = (i, m.group(1), m.group(3))
        binary = self.command_line[2] if self.command_line else None
        if binary is None or os.path.basename(binary) != _platform.K3S.binary:
            raise InstallerError('%s starts %s, not k3s: it is not a k3s init script, and this module never writes over '
                                 'another service. Give another name, or move the file away.' % (self.path, binary or 'no command'))
        argv = list(self.parsed.argv)
        if not argv or argv[0] != request.command:
            raise InstallerError('%s is the init script of "k3s %s", not of "k3s %s"; give command=%s (or another name), '
                                 'or move the file away.' % (self.path, argv[0] if argv else '', request.command,
                                                             argv[0] if argv else 'server'))
        self.binary = binary
        self.args = argv[1:]
        self.eol = self.script.lines[self.script.start].eol or '\n'

    def _region(self):
        """(indent, assignment text from ``command_args=`` to its closing quote, tail of the last line)."""
        s = self.script
        first = s.lines[s.start].text
        indent = _ARGS_ASSIGN.match(first).group(1)
        end_line, close = s.close
        parts = []
        for i in range(s.start, end_line + 1):
            text = s.lines[i].text
            lo = len(indent) if i == s.start else 0
            hi = close + 1 if i == end_line else len(text)
            parts.append(text[lo:hi] + ('' if i == end_line else s.lines[i].eol))
        return indent, ''.join(parts), s.lines[end_line].text[close + 1:]

    def plan_bytes(self, request, args, warnings):
        """The script's new bytes: ``command_args`` (and ``command=``) replaced when they differ."""
        layout = self.layout
        s = self.script
        edits = []
        indent, region, tail = self._region()
        installer_form = self.eol.join(command_args_lines(request.command, args, layout.log_file, installer_quote_openrc))
        expected = openrc.InitScript(('%s\n' % '\n'.join(command_args_lines(request.command, [], layout.log_file, str)))
                                     .encode('utf-8')).parse()
        same = region == installer_form or (
            list(self.parsed.argv) == [request.command] + args and self.parsed.redirections == expected.redirections)
        if not same:
            check_dollar(args, 'openrc')
            lines = command_args_lines(request.command, args, layout.log_file, lambda a: script_quote(a, warnings))
            lines[0] = indent + lines[0]
            lines[-1] += tail
            new = [systemd.Line(t, self.eol) for t in lines]
            new[-1].eol = s.lines[s.close[0]].eol
            edits.append(Edit(s.start, s.close[0], new))
        if self.binary != layout.binary:
            idx, ind, dummy = self.command_line
            edits.append(Edit(idx, idx, [systemd.Line('%scommand="%s"' % (ind, layout.binary), s.lines[idx].eol)]))
        if not edits:
            return self.data
        after = apply_edits(s.lines, edits)
        check = openrc.InitScript(after, self.path).parse()
        if check.argv != [request.command] + [collapse(a) for a in args] or check.redirections != expected.redirections:
            raise InstallerError('%s: the new command_args would not read back as intended; nothing was changed. Edit the '
                                 'init script by hand.' % self.path)
        return after


def check_dollar(args, init):
    """Refuse ``$`` in an argument that is about to be written: systemd (or the openrc shell) would expand it."""
    for arg in args:
        if '$' in arg:
            raise InstallerError('argument %s holds "$", which %s would expand as a variable. Put the value in env (k3s '
                                 'reads its K3S_* variables itself) or in a k3s config file (baremetal.k3s.k3s_config_file).'
                                 % (show(arg), 'systemd' if init == 'systemd' else 'the openrc shell'))


def read_existing(view, layout, request, data):
    if layout.init == 'systemd':
        return SystemdUnit(view, layout, request, data)
    return OpenrcScript(layout, request, data)


def env_matches(data, env, init='systemd'):
    """Whether the environment file ``data`` sets exactly ``env``, as its reader reads it: systemd's EnvironmentFile=
    (no ``export`` keyword, lines it cannot take ignored), or the openrc init script's shell, which sources it."""
    try:
        ignored = []
        found = systemd.parse_environment_file(data, shell=init != 'systemd', ignored=ignored)
    except systemd.ParseError:
        return False
    return found == env and not ignored


def is_env_file(data):
    """Whether ``data`` is an environment file (``KEY=value`` lines, comments, blank lines), as the installer writes them."""
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError:
        return False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith(('#', ';')) and not _ENV_LINE.match(line):
            return False
    return True


# -- the plan ---------------------------------------------------------------------------------------
def redact(text, values=()):
    """``text`` with every secret shown as ``(hidden)``: ``values``, and what the text itself says is secret."""
    return secrets.hide_text(text, values)


def other_units(view, layout):
    """Units of the same name in systemd's other unit directories (one shadows the other)."""
    name = layout.service + '.service'
    return [os.path.join(d, name) for d in services.UNIT_DIRS
            if os.path.join(d, name) != layout.unit and view.lexists(os.path.join(d, name))]


def exec_dropins(view, layout):
    """Drop-ins of the unit that set ExecStart (they replace the unit's command line)."""
    found = []
    for path in services.dropin_files(view, layout.service):
        try:
            unit = services.parse_unit(view.read(path) or b'', path)
        except PlanError:
            continue
        if unit.get('Service', 'ExecStart'):
            found.append(path)
    return found


def plan_present(view, request, layout, warnings):
    data = _read(view, layout.unit)
    changes = []
    if data is None:
        if view.islink(layout.unit):
            raise InstallerError('%s is a symbolic link to %s, which does not exist (a masked unit?); unmask or remove it '
                                 'first.' % (layout.unit, view.realpath(layout.unit)))
        args = request.args or []
        check_dollar(args, layout.init)
        if layout.init == 'systemd':
            after = render_unit(layout, request.command, args, request.type or DEFAULT_TYPE)
        else:
            after = render_script(layout, request.command, args, lambda a: script_quote(a, warnings))
        changes.append(Change(layout.unit, None, after, mode=layout.unit_mode))
        if layout.logrotate and not view.lexists(layout.logrotate):
            changes.append(Change(layout.logrotate, None, render_logrotate(layout), mode=LOGROTATE_MODE))
    else:
        existing = read_existing(view, layout, request, data)
        args = existing.args if request.args is None else request.args
        after = existing.plan_bytes(request, args, warnings)
        changes.append(Change(layout.unit, data, after, mode=layout.unit_mode))
        if layout.init == 'systemd':
            existing.check_env_reference(warnings)
    env_before = _read(view, layout.env)
    # what systemd does not see of the file as it is (an "export" line sets nothing for the service)
    unseen = systemd.ignored_assignments(env_before, layout.env) if env_before is not None and layout.init == 'systemd' \
        else []
    if request.env is None:
        env_after = b'' if env_before is None else env_before
        warnings.extend('%s. Give env to have the file written as KEY=value lines, or fix the line.' % m for m in unseen)
    elif env_before is not None and env_matches(env_before, request.env, layout.init):
        env_after = env_before
    else:
        env_after = render_env(request.env)
        warnings.extend('%s; the file is written again from env as KEY=value lines.' % m for m in unseen)
    changes.insert(1, Change(layout.env, env_before, env_after, mode=ENV_MODE, secret=True))
    if layout.init == 'systemd':
        for other in other_units(view, layout):
            warnings.append('%s also exists: systemd loads the unit of %s.service from the first directory of its search path '
                            '(/etc/systemd/system before /usr/lib/systemd/system); remove the one that is not meant.'
                            % (other, layout.service))
        for path in exec_dropins(view, layout):
            warnings.append('%s sets ExecStart for %s.service: it replaces the command line of %s, so args there are not what '
                            'k3s runs with.' % (path, layout.service, layout.unit))
    return changes, args


def plan_absent(view, request, layout, warnings):
    changes = []
    data = _read(view, layout.unit)
    if data is not None:
        existing = read_existing(view, layout, request, data)
        binary = existing.cmd.path if layout.init == 'systemd' else existing.binary
        if binary != layout.binary:
            raise InstallerError('%s starts %s, not %s: it is not the installer\'s unit for these options; give bin_dir=%s '
                                 'to remove it. Nothing was removed.' % (layout.unit, binary, layout.binary,
                                                                         os.path.dirname(binary)))
        changes.append(Change(layout.unit, data, None))
    env = _read(view, layout.env)
    if env is not None:
        if not is_env_file(env):
            raise InstallerError('%s is not an environment file (KEY=value lines) as the installer writes it; it is not '
                                 'removed. Move it away by hand. Nothing was removed.' % layout.env)
        changes.append(Change(layout.env, env, None, secret=True))
    enabled = os.path.join(WANTS_DIR, layout.service + '.service') if layout.init == 'systemd' \
        else os.path.join(RUNLEVEL_DIR, layout.service)
    if data is not None and view.lexists(enabled):
        warnings.append('%s is still enabled (%s): disable it (%s) before or after removing its files, or the link is left '
                        'dangling.' % (layout.service, enabled, 'systemctl disable %s' % layout.service
                                       if layout.init == 'systemd' else 'rc-update delete %s default' % layout.service))
    return changes


def add_secrets(params, found):
    """The secret values of the options ``args`` and ``env``, as given, into ``found`` (no_log_values)."""
    secrets.add(found, param_secrets(params))


def param_secrets(params):
    """The secret values of the options ``args`` and ``env``, as given (before any check)."""
    args = params.get('args')
    env = params.get('env')
    found = []
    if isinstance(args, (list, tuple)):
        found += secrets.argv_secrets([a if isinstance(a, str) else str(a) for a in args])
    if isinstance(env, dict):
        found += secrets.env_secrets({k: v if isinstance(v, str) else str(v) for k, v in env.items()
                                      if v is not None and not isinstance(v, (bool, dict, list))})
    return found


def plan(view, params, found=None):
    """The Plan for ``params``: the service's files in the installer's format, and what the module returns.

    ``found`` (a set: the module passes its ``no_log_values``) receives every secret value of the
    options and of the files read; a refusal's message shows them as ``(hidden)``.
    """
    return secrets.planned(_plan, view, params, found, param_secrets(params))


def _plan(view, params, found):
    request = Request(params)
    init = choose_init(view, request)
    layout = Layout(init, request.service, request.bin_dir, request.systemd_dir)
    for path in (layout.unit, layout.env):
        try:
            secrets.add(found, secrets.file_secrets(None if view.isdir(path) else view.read(path)))
        except ViewError:
            pass
    warnings = []
    if request.present:
        changes, args = plan_present(view, request, layout, warnings)
    else:
        changes, args = plan_absent(view, request, layout, warnings), []
    for change in changes:
        secrets.add(found, secrets.file_secrets(change.before))
        secrets.add(found, secrets.file_secrets(change.after))
    secrets.add(found, request.secret_values())
    result = secrets.SecretPlan(changes, warnings=[secrets.hide_message(w, found) for w in warnings], secrets=found)
    for change in result.changes:
        if change.after is not None and not view.writable(change.path):
            hint = '; give systemd_dir=/etc/systemd/system' if init == 'systemd' and change.path == layout.unit else ''
            raise InstallerError('%s cannot be written (read-only file system or no permission)%s. Nothing was changed.'
                                 % (change.path, hint))
    changed = set(result.paths)
    service_changed = bool(changed & {layout.unit, layout.env})
    result.facts = {
        'unit_path': layout.unit,
        'env_path': layout.env,
        'service': layout.service,
        'init': init,
        'command': request.command,
        'args': secrets.hide_argv(args),
        'restart_required': bool(request.present and service_changed),
        'daemon_reload_required': bool(init == 'systemd' and layout.unit in changed),
    }
    return result


# The options of module baremetal.k3s.k3s_service (also the installer part of baremetal.k3s.k3s_files).
ARGUMENT_SPEC = dict(
    state=dict(type='str', default='present', choices=['present', 'absent']),
    command=dict(type='str', default='server', choices=list(COMMANDS)),
    name=dict(type='str'),
    bin_dir=dict(type='path', default=DEFAULT_BIN_DIR),
    systemd_dir=dict(type='path', default=DEFAULT_SYSTEMD_DIR),
    args=dict(type='list', elements='str'),
    env=dict(type='dict'),
    type=dict(type='str', choices=list(TYPES)),
    init=dict(type='str', default='auto', choices=list(INITS)),
    backup=dict(type='bool', default=False),
)
