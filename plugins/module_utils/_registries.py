# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.k3s_registries``: containerd's registry settings in k3s's ``registries.yaml``.

The format is k3s's (its ``Registry`` type, read at agent start, servers included): ``mirrors``
maps a registry name (``docker.io``, ``registry.example:5000``, ``*`` for every registry) to its
``endpoint`` list (URLs tried in order) and ``rewrite`` map (repository regular expression to
replacement); ``configs`` maps a registry host to its ``auth`` (``username``, ``password``,
``auth``, ``identity_token``) and ``tls`` (``ca_file``, ``cert_file``, ``key_file``,
``insecure_skip_verify``). k3s reads the file with a YAML decoder that drops keys it does not
know, so a misspelt key silently does nothing: every key is checked here against that list.

The file is the collection's when its first line is :data:`MARKER`. Ours is rewritten from the
options (same options, same bytes: keys sorted, every string double-quoted); one that is not
ours is never written over unless ``take_over`` (with a backup) and never removed. With no
mirrors and no configs our file is removed and an operator's is left as it is.

``password``, ``auth`` and ``identity_token`` are secrets: they go into the module's
``no_log_values`` before anything is checked, and the diff shows ``(hidden)`` in their place.
"""

from __future__ import annotations

import json

from urllib.parse import urlsplit

from ansible_collections.baremetal.k3s.plugins.module_utils import _goyaml as goyaml
from ansible_collections.baremetal.k3s.plugins.module_utils import _names as names
from ansible_collections.baremetal.k3s.plugins.module_utils import _platform
from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets as secrets
from ansible_collections.baremetal.k3s.plugins.module_utils import _yamledit as yamledit
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, Plan, PlanError

MARKER = '# Managed by baremetal.k3s (k3s_registries): this file is rewritten from the role\'s variables.'

MIRROR_KEYS = ('endpoint', 'rewrite')
CONFIG_KEYS = ('auth', 'tls')
AUTH_KEYS = ('username', 'password', 'auth', 'identity_token')
SECRET_KEYS = ('password', 'auth', 'identity_token')
TLS_KEYS = ('ca_file', 'cert_file', 'key_file', 'insecure_skip_verify')
# names other tools use for the same thing, and what k3s's registries.yaml calls it
_ALIASES = {'endpoints': 'endpoint', 'rewrites': 'rewrite', 'identitytoken': 'identity_token',
            'identityToken': 'identity_token', 'insecure': 'insecure_skip_verify', 'ca': 'ca_file',
            'cert': 'cert_file', 'key': 'key_file'}

# a registry as containerd names it: a host (DNS name, IPv4 or [IPv6]) with an optional port, or "*"
REGISTRY = names.Grammar(
    'a registry name', r'\*|(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*'
    r'|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?', 253,
    'a host name or address with an optional port (docker.io, registry.example:5000, 10.0.0.5:5000, [fd00::1]:5000), '
    'or "*" for every registry')


def _where(*parts):
    out = parts[0]
    for part in parts[1:]:
        out += '[%d]' % part if isinstance(part, int) else '[%s]' % json.dumps(part)
    return out


def is_secret_key(key):
    """Whether a registries.yaml key holds a secret (``password``, ``auth``, ``identity_token``; any case, with or
    without ``_``, and ``token``): wherever it stands, misplaced or misspelt too."""
    if not isinstance(key, str):
        return False
    return key.lower().replace('_', '').replace('-', '') in ('password', 'auth', 'identitytoken', 'token')


def collect_secrets(value, found):
    """Every value under a secret key anywhere in ``value`` (also misplaced or misspelt ones) into ``found``,
    before anything is checked: a refusal may quote the options."""
    if isinstance(value, dict):
        for key, item in value.items():
            if is_secret_key(key) and isinstance(item, (str, int, float)) and not isinstance(item, bool):
                secrets.add(found, [str(item)])
            else:
                collect_secrets(item, found)
    elif isinstance(value, (list, tuple)):
        for item in value:
            collect_secrets(item, found)
    return found


def _keys(where, value, allowed):
    if not isinstance(value, dict):
        raise PlanError('%s must be a mapping with the keys %s; it is a %s.'
                        % (where, ', '.join(allowed), type(value).__name__))
    for key in value:
        if key not in allowed:
            hint = (' (k3s\'s registries.yaml calls it %s)' % _ALIASES[key]) if key in _ALIASES else ''
            raise PlanError('%s has the key %s, which k3s\'s registries.yaml does not know%s: use %s. k3s ignores keys '
                            'it does not know, so the setting would silently do nothing.'
                            % (where, json.dumps(str(key)), hint, ', '.join(allowed)))
    return value


def _text(where, value, allow_empty=False):
    if isinstance(value, bool) or not isinstance(value, str):
        raise PlanError('%s must be a string; it is a %s (quote it in YAML).' % (where, type(value).__name__))
    if not value and not allow_empty:
        raise PlanError('%s is empty; give a value or leave the key out.' % where)
    bad = names.control_character(value)
    if bad:
        raise PlanError('%s holds the control character %s; k3s would read another value than the one meant. '
                        'Remove it.' % (where, bad))
    if any('\ud800' <= c <= '\udfff' for c in value):
        raise PlanError('%s holds a lone surrogate (half of a character outside the Basic Multilingual Plane, not a '
                        'character): no YAML reader takes it. Give the character itself.' % where)
    return value


def _registry(where, name):
    return names.check(where, name, REGISTRY, PlanError)


def _endpoint(where, value):
    _text(where, value)
    try:
        url = urlsplit(value)
        url.port  # pylint: disable=pointless-statement
    except ValueError as e:
        raise PlanError('%s %s is not a URL (%s): give http(s)://host[:port][/path].' % (where, json.dumps(value), e))
    if url.scheme not in ('http', 'https') or not url.hostname or ' ' in value or url.query or url.fragment:
        raise PlanError('%s %s is not an endpoint containerd can use: give http(s)://host[:port][/path] '
                        '(a scheme of http or https, a host, no spaces, no query).' % (where, json.dumps(value)))
    return value


def _abs_path(where, value):
    _text(where, value)
    if not value.startswith('/'):
        raise PlanError('%s %s is not an absolute path; give the file\'s full path on the node.'
                        % (where, json.dumps(value)))
    return value


def validate(mirrors, configs):
    """The options checked against k3s's format; a PlanError naming the first thing that is wrong."""
    mirrors = {} if mirrors is None else mirrors
    configs = {} if configs is None else configs
    if not isinstance(mirrors, dict):
        raise PlanError('mirrors must be a mapping of registry names to {endpoint: [...], rewrite: {...}}.')
    if not isinstance(configs, dict):
        raise PlanError('configs must be a mapping of registry hosts to {auth: {...}, tls: {...}}.')
    for name, mirror in mirrors.items():
        _registry('mirrors key', name)
        where = _where('mirrors', name)
        _keys(where, mirror if mirror is not None else {}, MIRROR_KEYS)
        endpoints = (mirror or {}).get('endpoint') or []
        if not isinstance(endpoints, list):
            raise PlanError('%s must be a list of URLs.' % _where(where, 'endpoint'))
        for i, endpoint in enumerate(endpoints):
            _endpoint(_where(where, 'endpoint', i), endpoint)
        rewrites = (mirror or {}).get('rewrite') or {}
        if not isinstance(rewrites, dict):
            raise PlanError('%s must be a mapping of a repository pattern to its replacement.' % _where(where, 'rewrite'))
        for pattern, replacement in rewrites.items():
            _text(_where(where, 'rewrite') + ' key', pattern)
            _text(_where(where, 'rewrite', pattern), replacement, allow_empty=True)
    for name, config in configs.items():
        _registry('configs key', name)
        where = _where('configs', name)
        _keys(where, config if config is not None else {}, CONFIG_KEYS)
        auth = (config or {}).get('auth')
        if auth is not None:
            _keys(_where(where, 'auth'), auth, AUTH_KEYS)
            for key, value in auth.items():
                _text(_where(where, 'auth', key), value)
        tls = (config or {}).get('tls')
        if tls is not None:
            _keys(_where(where, 'tls'), tls, TLS_KEYS)
            for key in ('ca_file', 'cert_file', 'key_file'):
                if key in tls:
                    _abs_path(_where(where, 'tls', key), tls[key])
            if 'insecure_skip_verify' in tls and not isinstance(tls['insecure_skip_verify'], bool):
                raise PlanError('%s must be true or false.' % _where(where, 'tls', 'insecure_skip_verify'))
            if ('cert_file' in tls) != ('key_file' in tls):
                raise PlanError('%s gives %s without %s: a client certificate needs both.'
                                % (_where(where, 'tls'), *(('cert_file', 'key_file') if 'cert_file' in tls
                                                           else ('key_file', 'cert_file'))))


def _scalar(value):
    """A YAML scalar go-yaml v2 (k3s's reader) reads back as exactly ``value``: a string double-quoted with every
    character written as itself (one outside the Basic Multilingual Plane too: go-yaml refuses JSON's surrogate-pair
    escapes) and what YAML may not hold raw escaped (``_yamledit.render_string``)."""
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return yamledit.render_string(value)


def render(mirrors, configs, hide=False):
    """The file's bytes: the marker, then mirrors and configs, keys sorted, strings double-quoted.
    ``hide``: secrets written as ``(hidden)`` (the diff's text)."""
    lines = [MARKER]
    if mirrors:
        lines.append('mirrors:')
        for name in sorted(mirrors):
            mirror = mirrors[name] or {}
            lines.append('  %s:' % _scalar(name))
            endpoints = mirror.get('endpoint') or []
            rewrites = mirror.get('rewrite') or {}
            if not endpoints and not rewrites:
                lines[-1] += ' {}'
            if endpoints:
                lines.append('    endpoint:')
                lines.extend('      - %s' % _scalar(e) for e in endpoints)
            if rewrites:
                lines.append('    rewrite:')
                lines.extend('      %s: %s' % (_scalar(k), _scalar(rewrites[k])) for k in sorted(rewrites))
    if configs:
        lines.append('configs:')
        for name in sorted(configs):
            config = configs[name] or {}
            lines.append('  %s:' % _scalar(name))
            if not any(config.get(k) for k in CONFIG_KEYS):
                lines[-1] += ' {}'
            for section, keys in (('auth', AUTH_KEYS), ('tls', TLS_KEYS)):
                values = config.get(section) or {}
                if not values:
                    continue
                lines.append('    %s:' % section)
                for key in keys:
                    if key in values:
                        shown = secrets.HIDDEN if hide and key in SECRET_KEYS else values[key]
                        lines.append('      %s: %s' % (key, _scalar(shown)))
    return ('\n'.join(lines) + '\n').encode('utf-8')


def read_back(data, mirrors, configs):
    """Refuse to write a file that k3s's YAML reader (go-yaml v2, ``_goyaml``) would not read back as exactly the
    settings given: what is written is what k3s gets, or nothing is written."""
    want = {}
    if mirrors:
        want['mirrors'] = {name: {k: v for k, v in (mirror or {}).items() if v} for name, mirror in mirrors.items()}
    if configs:
        want['configs'] = {name: {k: v for k, v in (config or {}).items() if v} for name, config in configs.items()}
    try:
        got = goyaml.load(data.decode('utf-8'), duplicate_keys='error', name='registries.yaml')
    except (goyaml.GoYamlError, UnicodeDecodeError) as e:
        got = e
    if _plain(got) != want:
        raise PlanError('the registries.yaml this run would write does not read back in k3s\'s YAML reader (go-yaml v2) as '
                        'the settings given%s; nothing was changed. Check the values for characters YAML cannot hold.'
                        % (': %s' % secrets.hide_message(str(got)) if isinstance(got, Exception) else ''))


def _plain(value):
    """A decoded value as plain dicts and lists (go-yaml's mappings are Pairs)."""
    if isinstance(value, goyaml.Pairs):
        return {_plain(k): _plain(v) for k, v in value}
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def hide_file(text):
    """A registries.yaml's text with the value of every secret key shown as ``(hidden)``, whatever its shape (a folded
    or block value, a value on the next line, a key misplaced under ``mirrors``)."""
    return secrets.hide_yaml_keys(text, is_secret_key)


def file_secrets(data):
    """The values of the secret keys of a registries.yaml read from the node, wherever and however written."""
    return secrets.yaml_key_secrets(data.decode('utf-8', 'replace'), is_secret_key)


class RegistriesPlan(Plan):
    """A Plan whose diff shows the files with their secrets as ``(hidden)``."""

    def __init__(self, changes=(), facts=None, warnings=(), shown_after=None, secrets_found=()):
        super().__init__(changes, facts, warnings)
        self.shown_after = shown_after
        self.secrets_found = set(secrets_found)

    def diff(self):
        out = []
        for entry in super().diff():
            entry['before'] = secrets.hide_text(hide_file(entry['before']), self.secrets_found)
            entry['after'] = (self.shown_after if self.shown_after is not None
                              else secrets.hide_text(hide_file(entry['after']), self.secrets_found))
            out.append(entry)
        return out


def owned(data):
    """True when the file's first line is our marker."""
    return data is not None and data.split(b'\n', 1)[0].rstrip(b'\r') == MARKER.encode()


def tls_files_present(view, configs):
    """Refuse a TLS file of ``configs`` that is not a file on the node: containerd would fail every pull from that
    registry (its TLS setup fails), and nothing would say why before then."""
    for name in sorted(configs, key=str):
        tls = (configs[name] or {}).get('tls') or {}
        for key in ('ca_file', 'cert_file', 'key_file'):
            if key in tls and not view.isfile(tls[key]):
                raise PlanError('%s %s is %s on this node: containerd would fail every pull from %s. Put the file there '
                                'first, or fix the path. Nothing was changed.'
                                % (_where('configs', name, 'tls', key), tls[key],
                                   'a directory, not a file' if view.isdir(tls[key]) else 'not there', name))


def plan(view, params, found=None):
    """The Plan: write our file, leave it, remove it (no settings left), or refuse an operator's file."""
    found = set() if found is None else found
    path = params['path']
    mirrors = params.get('mirrors') or {}
    configs = params.get('configs') or {}
    collect_secrets(configs, found)
    collect_secrets(mirrors, found)
    validate(mirrors, configs)
    tls_files_present(view, configs)
    if view.isdir(path):
        raise PlanError('%s is a directory; give the path of registries.yaml.' % path)
    before = view.read(path)
    if before is not None:
        secrets.add(found, file_secrets(before))
    ours = owned(before)
    facts = {'path': path, 'owned': ours or before is None,
             'mirrors': sorted(mirrors), 'configs': sorted(configs), 'taken_over': False}
    if not mirrors and not configs:
        if before is None or not ours:
            facts['owned'] = ours
            return RegistriesPlan([], facts, secrets_found=found)
        facts['owned'] = False
        return RegistriesPlan([Change(path, before, None, secret=True)], facts, secrets_found=found)
    if before is not None and not ours and not params.get('take_over'):
        raise PlanError('%s exists and was not written by baremetal.k3s (its first line is not our marker), so it is '
                        'left as it is and nothing was changed. Put its settings into the registries variable and set '
                        'take_over (the roles\' k3s_server_registries_take_over / k3s_agent_registries_take_over: the '
                        'old file is kept as a backup), or move the file away.' % path, path=path)
    after = render(mirrors, configs)
    read_back(after, mirrors, configs)
    facts['owned'] = True
    facts['taken_over'] = before is not None and not ours
    return RegistriesPlan([Change(path, before, after, mode=0o600, owner='root', group='root', secret=True)], facts,
                          shown_after=render(mirrors, configs, hide=True).decode('utf-8'), secrets_found=found)


# The options of module baremetal.k3s.k3s_registries (also the registries part of baremetal.k3s.k3s_files).
ARGUMENT_SPEC = dict(
    mirrors=dict(type='dict', default={}),
    configs=dict(type='dict', default={}),
    platform=dict(type='str', choices=['k3s', 'rke2'], default='k3s'),
    path=dict(type='path'),
    take_over=dict(type='bool', default=False),
)


def add_secrets(params, found):
    """Every secret the options ``configs`` and ``mirrors`` hold, wherever it stands (under mirrors by mistake too), into
    ``found`` (no_log_values), before anything is checked."""
    collect_secrets([params.get('configs'), params.get('mirrors')], found)


def with_path(params):
    """The options with ``path`` given, or the registries file of ``platform``."""
    return dict(params, path=params['path'] or _platform.get(params['platform']).registries_file)
