# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.k3s_service_arg``: one k3s argument in or out of a service.

``plan(view, params)`` reads the node through the view and returns a Plan; nothing is
written here. The steps, each a function below:

1. :class:`Request` checks the options (before anything is read);
2. :class:`Service` reads the service as systemd/openrc and k3s do: the command line that
   counts, its environment, the config files and the flags k3s makes of them;
3. :func:`check_conflicts` refuses a second scheduler config in any form k3s accepts;
4. :func:`choose_targets` picks the places to edit (unit, our drop-in, our config file);
5. ``edit_unit`` / ``edit_dropin`` / ``edit_config`` compute each file's new bytes;
6. :func:`check_effect` proves, on the files as they will be, that the argument is (or is no
   longer) what k3s runs with, and names the file that masks it otherwise;
7. :func:`restart_state` compares with the running process.

Rules: an absent argument never creates a file; a file this module does not own (an
administrator's drop-in or config file) is never written; an argument k3s already gets in
any form is not added again.

Secrets (``_secrets``): the values of secret-bearing k3s options in ``arg`` and in everything
read (the command line, the service's environment, the config files, our own files) go into
the caller's ``found`` set, and are shown as ``(hidden)`` in the argument facts, the diff, the
warnings and the messages.
"""

from __future__ import annotations

import os

from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config as k3s_config
from ansible_collections.baremetal.k3s.plugins.module_utils import _pending as pending
from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets as secrets
from ansible_collections.baremetal.k3s.plugins.module_utils import _service as services
from ansible_collections.baremetal.k3s.plugins.module_utils._openrc import InitScript
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._systemd_unit import (
    ParseError,
    expand_argv,
    render_exec_start,
)

DEFAULT_DROPIN_NAME = '99-baremetal-k3s.conf'
DEFAULT_CONFIG_NAME = '99-baremetal-k3s-scheduler.yaml'
MARKER = '# Managed by baremetal.k3s.k3s_service_arg'

# k3s_service_arg's options, here so that a module that passes the flag together with other writes (scheduler_files)
# checks them as k3s_service_arg does.
ARGUMENT_SPEC = dict(
    arg=dict(type='str', required=True),
    state=dict(type='str', default='present', choices=['present', 'absent']),
    method=dict(type='str', default='auto', choices=['auto', 'unit', 'dropin', 'config']),
    service=dict(type='str'),
    path=dict(type='path'),
    backup=dict(type='bool', default=False),
    dropin_name=dict(type='str', default=DEFAULT_DROPIN_NAME),
    config_name=dict(type='str', default=DEFAULT_CONFIG_NAME),
)
LOCK_PREFIX = 'service-'


class ServiceArgError(PlanError):
    """A refusal: the message says what is wrong and what to do; nothing was changed."""


# -- 1. the request -------------------------------------------------------------------------
def validate_arg(arg):
    """The flag name of ``arg`` (``kube-scheduler-arg`` for ``--kube-scheduler-arg=x``), or an error."""
    if arg is None or arg.strip() == '':
        raise ServiceArgError('arg is empty: give one k3s argument such as '
                              '--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml.')
    bad = [c for c in arg if (ord(c) < 32 and c != '\t') or ord(c) == 127]
    if bad:
        raise ServiceArgError('arg %r holds a control character (%r); a unit file, an init script or a config file cannot '
                              'carry it. Give a single-line argument of printable characters.' % (arg, bad[0]))
    if not arg.startswith('--') or len(arg) < 3 or arg[2] in '=-':
        raise ServiceArgError('arg %r is not a k3s flag: it must start with "--" and a name, e.g. --kube-scheduler-arg=v=2.'
                              % arg)
    if arg != arg.strip():
        raise ServiceArgError('arg %r starts or ends with white space; remove it.' % arg)
    return arg[2:].split('=', 1)[0]


def config_value(arg, flag):
    """What ``arg`` gives its flag (``true`` for a bare boolean flag)."""
    rest = arg[2 + len(flag):]
    return rest[1:] if rest.startswith('=') else 'true'


def repeatable(flag):
    """Whether k3s (or RKE2) takes ``flag`` as a list, so a config file can append to it with ``flag+:``."""
    return flag.endswith(('-arg', '-extra-mount', '-extra-env')) or flag in ('node-label', 'node-taint', 'disable', 'tls-san')


def same_value(flag, a, b):
    """Whether two values of ``flag`` mean the same to k3s: a component argument's key loses its dashes."""
    if a == b:
        return True
    if flag.endswith('-arg'):
        ka, sa, va = a.lstrip('-').partition('=')
        kb, sb, vb = b.lstrip('-').partition('=')
        return (ka, sa, va) == (kb, sb, vb)
    return False


class Request:
    """The module's options, checked before the node is read."""

    def __init__(self, params):
        self.arg = params['arg']
        self.flag = validate_arg(self.arg)
        self.value = config_value(self.arg, self.flag)
        self.present = params.get('state', 'present') == 'present'
        self.method = params.get('method') or 'auto'
        self.path = params.get('path')
        self.service = self._service(params.get('service'), self.path)
        self.dropin_name = params.get('dropin_name') or DEFAULT_DROPIN_NAME
        self.config_name = params.get('config_name') or DEFAULT_CONFIG_NAME
        if '/' in self.dropin_name or '/' in self.config_name:
            raise ServiceArgError('dropin_name and config_name are file names, not paths; remove the "/".')
        if not self.dropin_name.endswith('.conf'):
            raise ServiceArgError('dropin_name %r must end in ".conf" or systemd ignores it.' % self.dropin_name)
        if not self.config_name.lower().endswith(('.yaml', '.yml')):
            raise ServiceArgError('config_name %r must end in ".yaml" or ".yml" or k3s ignores it.' % self.config_name)
        self.dropin_path = os.path.join(services.DROPIN_BASE, services.unit_name(self.service) + '.d', self.dropin_name)
        self.scheduler_config = k3s_config.scheduler_config_of(self.value) if self.flag == 'kube-scheduler-arg' else None

    @staticmethod
    def _service(service, path):
        """The service: as given, else the one ``path`` belongs to, else ``k3s``; both given must agree."""
        if path and service:
            of_path = services.service_of_path(path)
            if services.short_name(service) != of_path and os.path.basename(path).endswith(('.service', '.conf')):
                raise ServiceArgError('path %s belongs to service %s, but service is %s; give one of them, or both for '
                                      'the same service.' % (path, of_path, service))
            return services.short_name(service)
        if path:
            return services.service_of_path(path)
        services.check_service_name(service or 'k3s')
        return services.short_name(service or 'k3s')

    def holds(self, values):
        """Whether k3s gets this argument from the flag values ``values``."""
        return any(same_value(self.flag, self.value, v) for v in values)


def lock_key(params):
    """The lock a run on this service holds: one per service, covering its unit, drop-ins and config files."""
    return 'service-' + Request._service(params.get('service'), params.get('path'))  # pylint: disable=protected-access


# -- 2. the service as k3s runs it ----------------------------------------------------------
class Service:
    """The service and the k3s config files it reads, as they are (or as ``replaced`` makes them)."""

    def __init__(self, view, request):
        self.view = view
        self.init = services.read_init(view, request.service, request.path, request.dropin_path)
        if self.init.kind == 'openrc' and request.method == 'dropin':
            raise ServiceArgError('%s is an openrc init script: method=dropin needs systemd. Use method=unit or method=config.'
                                  % self.init.path)
        self.env = self.init.env
        self.cli_raw = self.init.raw_argv(True)
        self.cli = expand_argv(self.cli_raw, self.env)
        self.config_file = k3s_config.find_config_file(self.cli, self.env)
        self.config_path = os.path.join(self.config_file + '.d', request.config_name)
        self.config_files = services.config_files(view, self.config_file)
        self.own_config = view.read(self.config_path)
        if self.own_config is not None and MARKER.encode() not in self.own_config:
            raise ServiceArgError('%s exists and was not written by this module; give another config_name, or move its '
                                  'settings to another file.' % self.config_path)
        self.own_dropin = view.read(request.dropin_path) if self.init.kind == 'systemd' else None
        if self.own_dropin is not None and MARKER.encode() not in self.own_dropin:
            raise ServiceArgError('%s exists and was not written by this module; give another dropin_name or remove the file.'
                                  % request.dropin_path)
        self.docs = services.config_documents(view, self.config_files)

    @property
    def exec_path(self):
        return self.init.exec_path

    def documents(self, replaced=None):
        """The config documents with ``replaced`` {path: bytes or None} standing in for the files on disk."""
        if not replaced:
            return self.docs
        files = [p for p in self.config_files if p not in replaced]
        files += [p for p, data in replaced.items() if data is not None and os.path.dirname(p) == self.config_file + '.d']
        files = ([self.config_file] if self.config_file in files else []) + sorted(
            (p for p in files if p != self.config_file), key=os.path.basename)
        return services.config_documents(self.view, files, replaced)

    def k3s_args(self, cli, documents):
        """The command line k3s runs: the config files' flags right after the subcommand, then ``cli``'s."""
        return k3s_config.insert_flags(expand_argv(cli, self.env), k3s_config.to_flags(k3s_config.merge(documents)))

    def sources(self, cli, documents, flag):
        """[(value, where)] of ``flag`` as k3s runs with it."""
        return k3s_config.effective_sources(documents, expand_argv(cli, self.env)[1:], self.exec_path, flag)


# -- 3. conflicts ---------------------------------------------------------------------------
def check_conflicts(service, request):
    """A different scheduler config passed in any form (``config=X``, ``--config=X``, on the command
    line or in any config file but ours) is a conflict: kube-scheduler takes one ``--config``."""
    if not (request.present and request.scheduler_config):
        return
    docs = [(p, pairs) for p, pairs in service.docs if p != service.config_path]
    found = [(v, service.exec_path) for v in k3s_config.flag_values(service.cli[1:], 'kube-scheduler-arg')]
    found += k3s_config.flag_sources(docs, 'kube-scheduler-arg')
    for value, source in found:
        other = k3s_config.scheduler_config_of(value)
        if other is not None and other != request.scheduler_config:
            raise ServiceArgError(
                'a different scheduler config is already in use: --kube-scheduler-arg=%s in %s. kube-scheduler takes one '
                '--config (with two, the last wins); add the extender to that file instead (the scheduler_extender role '
                'merges into it), or remove it first.' % (value, source))


# -- 4. where to edit -------------------------------------------------------------------------
def choose_targets(service, request):
    """(targets, method reported): the places to edit, in order."""
    view = service.view
    init = service.init
    cli_values = k3s_config.flag_values(service.cli[1:], request.flag)
    in_cli = request.arg in service.cli_raw[1:]
    own_values = [v for v, src in k3s_config.flag_sources(
        [(p, pairs) for p, pairs in service.docs if p == service.config_path], request.flag)]
    in_own_config = request.holds(own_values)
    effective = [v for v, dummy in service.sources(service.cli_raw, service.docs, request.flag)]
    in_dropin = init.kind == 'systemd' and init.exec_path == request.dropin_path
    if request.method != 'auto':
        return [request.method], request.method
    if request.present:
        if in_cli:
            return [], 'dropin' if in_dropin else 'unit'
        if in_own_config:
            return [], 'config'
        if request.holds(effective):
            return [], 'elsewhere'
        if view.writable(service.config_path) and not cli_values and repeatable(request.flag):
            return ['config'], 'config'
        if view.writable(init.path):
            return ['unit'], 'unit'
        if init.kind == 'systemd':
            return ['dropin'], 'dropin'
        raise ServiceArgError('%s is read-only and openrc has no drop-ins; make the file writable or use method=config.'
                              % init.path)
    targets = []
    if in_cli:
        if in_dropin:
            targets.append('dropin')
        elif init.exec_path == init.path:
            if not view.writable(init.path):
                raise ServiceArgError('%s is read-only; %s cannot be removed from it. Make the file writable and run again.'
                                      % (init.path, request.arg))
            targets.append('unit')
        else:
            raise ServiceArgError('%s comes from the ExecStart of %s, a drop-in this module did not write; remove it there '
                                  '(this module never writes a drop-in to mask another).' % (request.arg, init.exec_path))
    if service.own_dropin is not None and 'dropin' not in targets:
        targets.append('dropin')
    if service.own_config is not None:
        targets.append('config')
    return targets, targets[0] if targets else ('config' if in_own_config else 'unit')


# -- 5. the edits -----------------------------------------------------------------------------
def edit_unit(service, request):
    """The unit (or init script) with the argument added to or removed from its command line."""
    init = service.init
    before = service.view.read(init.path)
    try:
        if init.kind == 'systemd':
            unit = services.parse_unit(before, init.path, init.facts)
            directive = unit.exec_start()[0]
            current = unit.parse_exec(directive).argv
            if request.present:
                if request.arg not in current[1:]:
                    unit.add_arg(directive, request.arg)
            else:
                unit.remove_arg(directive, request.arg)
            return Change(init.path, before, unit.render()), services.program_argv(unit.parse_exec(unit.exec_start()[0]))
        script = InitScript(before, init.path)
        if request.present:
            if request.arg not in script.parse().argv:
                script.add_arg(request.arg)
        else:
            script.remove_arg(request.arg)
        return Change(init.path, before, script.render()), [init.binary] + script.parse().argv
    except ParseError as e:
        raise ServiceArgError('%s: %s' % (init.path, e)) from e


def render_dropin(prefix, exec_path, argv, argv0_explicit, unit_path):
    head = ('%s. It replaces ExecStart of %s:\n'
            '# later installer changes to that ExecStart are masked while this file exists.\n'
            '[Service]\n'
            'ExecStart=\n' % (MARKER, unit_path))
    return (head + render_exec_start(prefix.replace('@', ''), exec_path, argv, argv0_explicit)).encode('utf-8')


def edit_dropin(service, request):
    """Our drop-in: the whole ExecStart with the argument, or no file once it equals the unit's own."""
    init = service.init
    base = init.command(with_own=False)
    current = init.command(with_own=True)
    argv = list(current.argv)
    if request.present:
        if request.arg not in argv[1:]:
            argv.append(request.arg)
    else:
        argv = argv[:1] + [a for a in argv[1:] if a != request.arg]
    if argv == base.argv and current.prefix == base.prefix:
        after = None
    else:
        after = render_dropin(current.prefix, current.path, argv, '@' in current.prefix, init.path)
    # what runs: the program, then the arguments after argv[0] (which the "@" prefix only renames)
    return Change(request.dropin_path, service.own_dropin, after, mode=0o644), [current.path] + argv[1:]


def render_config(pairs):
    header = ('%s. Keys end in "+" so k3s adds these values to, and never replaces,\n'
              '# the lists of earlier config files. Remove with state=absent.') % MARKER
    return k3s_config.render_values(pairs, header).encode('utf-8')


def edit_config_pairs(pairs, request):
    """Our config file's pairs with the value added to (or removed from) the flag's list."""
    flag, value = request.flag, request.value
    pairs = [(k, list(v) if isinstance(v, list) else v) for k, v in pairs]
    key = next((k for k, dummy in reversed(pairs) if k in (flag + '+', flag)), None)
    if key is None:
        return pairs + [(flag + '+', [value])] if request.present else pairs
    out = []
    for k, v in pairs:
        if k == key:
            values = v if isinstance(v, list) else ([] if v is None else [v])
            if request.present:
                if value not in [k3s_config.go_string(x) for x in values]:
                    values = values + [value]
            else:
                values = [x for x in values if k3s_config.go_string(x) != value]
                if not values:
                    continue
            v = values
        out.append((k, v))
    return out


def edit_config(service, request):
    """Our file in the config drop-in directory (``<flag>+:``), or no file once it holds nothing."""
    before = service.own_config
    pairs = []
    if before is not None:
        try:
            pairs = k3s_config.pairs_to_plain(k3s_config.load_yaml(before, service.config_path))
        except k3s_config.ConfigError as e:
            raise ServiceArgError('%s; fix or remove the file and run again.' % e) from e
    new_pairs = edit_config_pairs(pairs, request)
    if new_pairs == pairs:
        return Change(service.config_path, before, before), None
    after = render_config(new_pairs) if new_pairs else None
    return Change(service.config_path, before, after, mode=0o600), None


EDITS = {'unit': edit_unit, 'dropin': edit_dropin, 'config': edit_config}


# -- 6. the effect ------------------------------------------------------------------------------
def check_effect(service, request, cli_after, replaced, warnings):
    """Refuse a plan after which k3s would not run with the argument (present) or still would (absent)."""
    docs = service.documents(replaced)
    sources = service.sources(cli_after, docs, request.flag)
    holding = [src for v, src in sources if same_value(request.flag, request.value, v)]
    if request.present and not holding:
        raise ServiceArgError('%s would have no effect: %s. Nothing was changed.'
                              % (request.arg, masked_by(service, request, cli_after, docs)))
    if not request.present and holding:
        foreign = sorted(set(holding))
        msg = ('%s is still given to the service by %s, which this module does not own; remove it there'
               % (request.arg, ', '.join(foreign)))
        if request.method == 'auto':
            raise ServiceArgError(msg + '. Nothing was changed.')
        warnings.append(msg + '.')


def masked_by(service, request, cli_after, docs):
    """Why the config files' list of the flag does not carry our value."""
    if service.init.kind == 'systemd' and service.exec_path != service.init.path and request.arg not in cli_after:
        return ('the ExecStart of %s, a drop-in, replaces the one in %s; use method=dropin, or method=auto to choose'
                % (service.exec_path, service.init.path))
    if k3s_config.flag_values(expand_argv(cli_after, service.env)[1:], request.flag):
        return ('the command line in %s passes --%s, which replaces the list the config files build'
                % (service.exec_path, request.flag))
    last = None
    for path, pairs in docs:
        for raw_key, dummy in pairs:
            if k3s_config.go_string(raw_key) == request.flag:
                last = path
    if last is not None:
        return ('%s sets "%s:" without "+", which replaces the list built by the files before it, ours (%s) included; '
                'write "%s+:" there, or give config_name a name that sorts after it'
                % (last, request.flag, service.config_path, request.flag))
    return 'k3s does not pass it on (it is missing from the flags k3s builds)'


# -- 7. the running service ---------------------------------------------------------------------
def restart_state(service, request, method, changes, cli_after, warnings):
    """{running, restart_required, daemon_reload_required}: does the running process already use this state?"""
    view, init = service.view, service.init
    changed = [c.path for c in changes]
    service_changed = any(p in (init.path, request.dropin_path) for p in changed)
    config_changed = service.config_path in changed
    reload_needed = init.kind == 'systemd' and (
        service_changed or services.systemctl_show(view, init.service, 'NeedDaemonReload').get('NeedDaemonReload') == 'yes')
    state = {'running': False, 'restart_required': False, 'daemon_reload_required': bool(reload_needed)}
    pid = services.main_pid(view, init)
    if not pid:
        warnings.append('%s is not running: nothing to restart; the change applies when it starts.' % init.service)
        return state
    state['running'] = True
    desired = expand_argv(cli_after, service.env)
    running = view.cmdline(pid) or []
    started = view.process_start(pid)
    stale = False
    seen = services.running_command(running)
    # k3s rewrites its command line to the one string "<argv0> server": its arguments cannot be compared then
    hidden = (seen is not None and seen[2]) or len(running) <= 2 < len(desired)
    if running and not hidden:
        stale = running[1:] != desired[1:]
    elif started is not None:
        stale = bool(pending.newer(view, [init.path, request.dropin_path] + init.dropin_paths, started))
    if started is not None and (method == 'config' or config_changed):
        stale = stale or bool(pending.newer(view, service.config_files + [service.config_file + '.d'], started))
    state['restart_required'] = bool(service_changed or config_changed or stale)
    return state


# -- the plan -----------------------------------------------------------------------------------
def plan(view, params, found=None):
    """The Plan for ``params``: the files to write and what the module returns.

    ``found`` (a set: the module passes its ``no_log_values``) receives every secret value of
    ``arg`` and of what is read; a refusal's message shows them as ``(hidden)``.
    """
    arg = params.get('arg')
    return secrets.planned(_plan, view, params, found, secrets.argv_secrets([arg]) if isinstance(arg, str) else ())


def service_secrets(service):
    """The secret values of the service as read: its command lines, environment, config files and our own files."""
    found = secrets.argv_secrets(service.cli_raw) + secrets.argv_secrets(service.cli)
    found += secrets.env_secrets(service.env) + secrets.documents_secrets(service.docs)
    found += secrets.file_secrets(service.own_config) + secrets.file_secrets(service.own_dropin)
    if service.init.kind == 'systemd':
        for dummy, unit in service.init.chain(True):
            for directive in unit.get('Service', 'ExecStart'):
                try:
                    found += secrets.argv_secrets(unit.parse_exec(directive).argv)
                except ParseError:
                    continue
    return found


def _plan(view, params, found):
    request = Request(params)
    service = Service(view, request)
    secrets.add(found, service_secrets(service))
    check_conflicts(service, request)
    targets, method = choose_targets(service, request)
    if 'unit' in targets and not view.writable(service.init.path):
        raise ServiceArgError('%s is not writable (read-only file system or no permission), so method=unit cannot change it. '
                              'Use method=dropin (a systemd drop-in in %s that replaces ExecStart) or method=config (a '
                              'file in %s), or method=auto to choose.'
                              % (service.init.path, os.path.dirname(request.dropin_path), service.config_file + '.d'))
    if 'config' in targets:
        check_config_method(service, request)
    if '$' in request.arg and ('unit' in targets or 'dropin' in targets):
        raise ServiceArgError('arg %r holds "$", which %s would expand as a variable; use method=config, or give the value '
                              'without "$".' % (request.arg, 'systemd' if service.init.kind == 'systemd' else 'the openrc shell'))
    warnings = []
    changes = []
    cli_after = service.cli_raw
    for target in targets:
        change, argv = EDITS[target](service, request)
        changes.append(change)
        if argv is not None and not (target == 'unit' and service.exec_path != service.init.path):
            cli_after = argv  # an edit of a unit whose ExecStart a drop-in replaces changes nothing k3s runs
        if target == 'dropin' and change.after is not None and change.before != change.after:
            warnings.append('%s replaces the whole ExecStart of %s: changes the k3s installer (or anyone) makes later to '
                            'ExecStart in the unit are masked while the drop-in exists. Re-run this task after upgrading '
                            'k3s.' % (request.dropin_path, service.init.path))
    replaced = {c.path: c.after for c in changes if c.path == service.config_path}
    for change in changes:
        secrets.add(found, secrets.file_secrets(change.before) + secrets.file_secrets(change.after))
    check_effect(service, request, cli_after, replaced, warnings)
    plan_ = secrets.SecretPlan(changes, warnings=warnings)
    docs = service.documents(replaced)
    secrets.add(found, secrets.argv_secrets(cli_after) + secrets.documents_secrets(docs))
    facts = {
        'own_args': secrets.hide_argv(own_args(service, plan_.changes)),
        'method': method,
        'path': plan_.paths[0] if plan_.paths else primary_path(method, service, request),
        'paths': plan_.paths,
        'args': secrets.hide_argv(cli_after),
        'k3s_args': secrets.hide_argv(service.k3s_args(cli_after, docs)),
    }
    facts.update(restart_state(service, request, method, plan_.changes, cli_after, warnings))
    plan_.facts = facts
    plan_.warnings = [secrets.hide_message(w, found) for w in warnings]
    plan_.secrets = set(secrets.usable(found))
    return plan_


def own_args(service, changes):
    """The arguments held in this module's own files (its config drop-in, its systemd drop-in), after the changes."""
    after = {c.path: c.after for c in changes}
    out = []
    config = after.get(service.config_path, service.own_config)
    if config is not None:
        out += k3s_config.to_flags(k3s_config.merge([(service.config_path, k3s_config.load_yaml(config, service.config_path))]))
    dropin_path = service.init.own if service.init.kind == 'systemd' else None
    if dropin_path and after.get(dropin_path, service.own_dropin) is not None:
        base = service.init.command(with_own=False).argv
        unit = services.parse_unit(after.get(dropin_path, service.own_dropin), dropin_path, service.init.facts)
        lines = unit.exec_start()
        if lines:
            out += [a for a in unit.parse_exec(lines[-1]).argv[1:] if a not in base[1:]]
    return out


def check_config_method(service, request):
    """``method=config`` is safe only when the command line does not pass the flag (it may replace the files' list)."""
    cli_conflict = [a for a in service.cli[1:] if a.lstrip('-').split('=', 1)[0] == request.flag and a.startswith('-')]
    if request.present and cli_conflict:
        raise ServiceArgError('method=config is unsafe here: the command line of %s already passes %s, and k3s lets the '
                              'command line replace the config files\' list. Use method=unit (or method=auto), or move %s '
                              'from the command line into a config file first.'
                              % (service.exec_path, cli_conflict[0], cli_conflict[0]))
    if not service.view.writable(service.config_path):
        raise ServiceArgError('%s cannot be written (read-only or no permission); use method=unit or method=dropin.'
                              % service.config_path)


def primary_path(method, service, request):
    return {'dropin': request.dropin_path, 'config': service.config_path}.get(method, service.init.path)
