# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The k3s options that carry a secret, and how a module keeps their values out of what it returns.

:data:`OPTIONS` is the one table. It comes from k3s's own flag definitions -- k3s-io/k3s
``pkg/cli/cmds/server.go`` (``k3s server``), ``pkg/cli/cmds/agent.go`` (``k3s agent``) and
``pkg/cli/cmds/etcd_snapshot.go`` (``k3s etcd-snapshot``): every flag whose value is a secret,
with its aliases (k3s's short ``-t``, etcd-snapshot's ``--s3-*`` names) and the environment
variables k3s reads it from (``K3S_*``; RKE2 builds on the same flags with ``RKE2_*`` names and
adds none that carries a secret). Flags naming a file that holds a secret (``token-file``,
``agent-token-file``, ``vpn-auth-file``) carry a path, not a secret, and are shown.

For ``datastore-endpoint`` and ``etcd-s3-proxy`` only the password of the URL or DSN is secret
(``postgres://user:PASS@host/db``, ``mysql://user:PASS@tcp(host)/db``, ``nats://TOKEN@host``,
``password=PASS`` in a key=value DSN or a query): the rest names the datastore and is shown.

A module keeps a secret out of its result in three ways, all driven by this file:

* every secret value found in the module's options or read from the node goes into
  ``module.no_log_values`` (:func:`add`), so Ansible masks it everywhere in the result -- the
  invocation, the diff, the warnings, a failure's message -- when ``exit_json``/``fail_json`` runs;
* the module's own views show ``(hidden)`` where a secret was: :func:`hide_argv`,
  :func:`hide_env` for argument lists and environments, :func:`hide_text` for file contents
  in a diff and for messages;
* :class:`SecretPlan` renders its diff through :func:`hide_text`.

Standard library (and PyYAML through ``_k3s_config`` when it is there to read config files); no Ansible import.
"""

from __future__ import annotations

import json
import re

from urllib.parse import unquote

from ansible_collections.baremetal.k3s.plugins.module_utils import _goyaml as goyaml
from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config as k3s_config
from ansible_collections.baremetal.k3s.plugins.module_utils import _openrc as openrc
from ansible_collections.baremetal.k3s.plugins.module_utils import _systemd_unit as systemd
from ansible_collections.baremetal.k3s.plugins.module_utils import _yamledit as yamledit
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Plan, PlanError

HIDDEN = '(hidden)'

WHOLE = 'whole'  # the whole value is the secret
URL = 'url'      # only the password (or token) inside a URL or DSN is


class Option:
    """One secret-bearing k3s option: its flag name, the other names k3s accepts, its variables, its kind."""

    __slots__ = ('name', 'aliases', 'env', 'kind')

    def __init__(self, name, aliases=(), env=(), kind=WHOLE):
        self.name = name
        self.aliases = tuple(aliases)
        self.env = tuple(env)
        self.kind = kind

    @property
    def names(self):
        return (self.name,) + self.aliases

    def __repr__(self):
        return 'Option(%r)' % self.name


def _product_env(suffix):
    """The variable k3s (``K3S_``) and RKE2 (``RKE2_``) read a flag from (``version.ProgramUpper + "_..."``)."""
    return ('K3S_' + suffix, 'RKE2_' + suffix)


# From k3s-io/k3s pkg/cli/cmds/server.go, agent.go and etcd_snapshot.go (flags whose value is a secret).
OPTIONS = (
    # server.go ServerToken "token,t" / agent.go AgentTokenFlag "token,t", EnvVar K3S_TOKEN
    Option('token', ('t',), _product_env('TOKEN')),
    # server.go "agent-token", EnvVar K3S_AGENT_TOKEN
    Option('agent-token', (), _product_env('AGENT_TOKEN')),
    # agent.go (and older server.go) hidden "cluster-secret", "(deprecated) use --token", EnvVar K3S_CLUSTER_SECRET
    Option('cluster-secret', (), _product_env('CLUSTER_SECRET')),
    # etcd_snapshot.go "etcd-token" (alias "t"): the token etcd-snapshot authenticates with
    Option('etcd-token'),
    # server.go "datastore-endpoint", EnvVar K3S_DATASTORE_ENDPOINT: a DSN that may hold a password
    Option('datastore-endpoint', (), _product_env('DATASTORE_ENDPOINT'), URL),
    # server.go "etcd-s3-access-key" (EnvVar AWS_ACCESS_KEY_ID); etcd_snapshot.go "s3-access-key"
    Option('etcd-s3-access-key', ('s3-access-key',), ('AWS_ACCESS_KEY_ID',)),
    # server.go "etcd-s3-secret-key" (EnvVar AWS_SECRET_ACCESS_KEY); etcd_snapshot.go "s3-secret-key"
    Option('etcd-s3-secret-key', ('s3-secret-key',), ('AWS_SECRET_ACCESS_KEY',)),
    # server.go "etcd-s3-session-token"; etcd_snapshot.go "s3-session-token" (EnvVar AWS_SESSION_TOKEN)
    Option('etcd-s3-session-token', ('s3-session-token',), ('AWS_SESSION_TOKEN',)),
    # server.go "etcd-s3-proxy"; etcd_snapshot.go "s3-proxy": a proxy URL, which may hold user:password@
    Option('etcd-s3-proxy', ('s3-proxy',), (), URL),
    # agent.go VPNAuth "vpn-auth", EnvVar K3S_VPN_AUTH: name=<provider>,joinKey=<key>[,...]
    Option('vpn-auth', (), _product_env('VPN_AUTH')),
)

_BY_NAME = {n: o for o in OPTIONS for n in o.names}
_BY_ENV = {e.upper(): o for o in OPTIONS for e in o.env}


def by_flag(name):
    """The :class:`Option` of a flag or config key (``token``, ``--token``, ``-t``, ``token+``), None when not secret."""
    if not isinstance(name, str):
        return None
    name = name.lstrip('-')
    if name.endswith('+'):
        name = name[:-1]
    return _BY_NAME.get(name)


def by_env(name):
    """The :class:`Option` k3s reads from the environment variable ``name``, None when not secret (any case: a
    ``k3s_token`` k3s does not read is hidden all the same)."""
    return _BY_ENV.get(name.upper()) if isinstance(name, str) else None


def is_secret_key(key):
    """Whether the value of the config key or flag name ``key`` holds a secret."""
    return by_flag(key) is not None


# -- the secret part of one value ----------------------------------------------------------------------
_SCHEME = re.compile(r'[A-Za-z][A-Za-z0-9+.-]*://')
_DSN_PASSWORD = re.compile(r"(?:^|(?<=[\s?&;]))(?:ssl)?password=('(?:[^'\\]|\\.)*'?|[^\s&;]*)", re.I)


def _url_spans(value):
    """[(start, end)] of the secret parts of a URL or DSN: the password of ``user:password@`` (the
    token of ``nats://token@``), and every ``password=`` value."""
    spans = []
    for m in _SCHEME.finditer(value):
        rest_start = m.end()
        end = len(value)
        nxt = _SCHEME.search(value, rest_start)
        if nxt:
            end = nxt.start()
        at = value.rfind('@', rest_start, end)
        if at > rest_start:
            colon = value.find(':', rest_start, at)
            if colon >= 0:
                if at > colon + 1:
                    spans.append((colon + 1, at))
            elif value[m.start():m.end()].lower().startswith('nats'):
                spans.append((rest_start, at))
    for m in _DSN_PASSWORD.finditer(value):
        start, stop = m.span(1)
        if stop > start:
            spans.append((start, stop))
    spans.sort()
    merged = []
    for start, stop in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(stop, merged[-1][1]))
        else:
            merged.append((start, stop))
    return merged


def _strip_quotes(text):
    if len(text) >= 2 and text[0] == text[-1] and text[0] in '\'"':
        return text[1:-1]
    return text


def secret_parts(option, value):
    """The secret substrings of ``value`` given to ``option`` (none for an empty value)."""
    if option is None or value is None or isinstance(value, bool):
        return []
    value = value if isinstance(value, str) else str(value)
    if not value.strip():
        return []
    if option.kind == URL:
        parts = []
        for start, stop in _url_spans(value):
            part = value[start:stop]
            parts.append(part)
            for other in (_strip_quotes(part), unquote(part)):
                if other != part:
                    parts.append(other)
        return [p for p in parts if p.strip()]
    parts = [value]
    if value.strip() != value:
        parts.append(value.strip())
    if option.name == 'vpn-auth':
        for item in value.split(','):
            key, sep, rest = item.partition('=')
            if sep and key.strip().lower() == 'joinkey' and rest.strip():
                parts.append(rest.strip())
    return parts


def hide_value(option, value):
    """``value`` as shown: ``(hidden)`` for a secret, a URL or DSN with only its password hidden."""
    if option is None or value is None or isinstance(value, bool):
        return value
    text = value if isinstance(value, str) else str(value)
    if not text.strip():
        return value
    if option.kind != URL:
        return HIDDEN
    out, last = [], 0
    for start, stop in _url_spans(text):
        out.append(text[last:start] + HIDDEN)
        last = stop
    return ''.join(out) + text[last:]


# -- where the values are: argument lists, environments, config files ------------------------------------
def _flag(word):
    """(name, has '=', value) of a ``-x``/``--x`` word, None when ``word`` is not a flag (Go's flag package,
    which k3s's CLI uses, takes one or two dashes for any flag)."""
    if not isinstance(word, str):
        return None
    word = word.strip()
    if not word.startswith('-') or word in ('-', '--'):
        return None
    body = word[2:] if word.startswith('--') else word[1:]
    if not body or body.startswith('-'):
        return None
    name, sep, value = body.partition('=')
    return name, bool(sep), value


def _walk_argv(argv):
    """(index, option, value index or None) for each secret flag of ``argv``: ``--token=x``, ``-t=x``
    (value in the same word) and ``--token x``, ``-t x`` (value in the next word)."""
    argv = list(argv or [])
    i = 0
    while i < len(argv):
        parsed = _flag(argv[i])
        option = by_flag(parsed[0]) if parsed else None
        if option is not None:
            if parsed[1]:
                yield i, option, None
            elif i + 1 < len(argv):
                yield i, option, i + 1
                i += 1
        i += 1


def argv_secrets(argv):
    """The secret values in an argument list (argv[0] and the subcommand may be in it)."""
    argv = [a if isinstance(a, str) else str(a) for a in (argv or [])]
    found = []
    for i, option, value_at in _walk_argv(argv):
        value = argv[value_at] if value_at is not None else _flag(argv[i])[2]
        found.extend(secret_parts(option, value))
    return found


def hide_argv(argv):
    """A copy of ``argv`` with each secret value shown as ``(hidden)`` (``--token=(hidden)``, ``-t (hidden)``)."""
    out = [a if isinstance(a, str) else str(a) for a in (argv or [])]
    for i, option, value_at in _walk_argv(out):
        if value_at is None:
            head, dummy, value = out[i].partition('=')
            out[i] = head + '=' + hide_value(option, value)
        else:
            out[value_at] = hide_value(option, out[value_at])
    return out


def env_secrets(env):
    """The secret values of an environment {name: value} (``K3S_TOKEN``, ``AWS_SECRET_ACCESS_KEY``...)."""
    found = []
    for key, value in (env or {}).items():
        found.extend(secret_parts(by_env(key), value))
    return found


def hide_env(env):
    """A copy of ``env`` with the values of secret variables shown as ``(hidden)``."""
    return {k: hide_value(by_env(k), v) if by_env(k) else v for k, v in (env or {}).items()}


def _scalars(value):
    """The texts k3s makes of a config value: each item of a list, a scalar, or a map as a whole."""
    items = value if isinstance(value, (list, tuple)) and not isinstance(value, dict) else [value]
    out = []
    for item in items:
        if item is None or isinstance(item, bool):
            continue
        if isinstance(item, str):
            out.append(item)
        try:
            text = k3s_config.go_string(item)
        except Exception:  # pylint: disable=broad-except
            text = str(item)
        out.append(text)
    return out


def config_secrets(pairs):
    """The secret values of config pairs [(key, value)] (or a dict), as written and as k3s reads them."""
    items = pairs.items() if isinstance(pairs, dict) else (pairs or [])
    found = []
    for key, value in items:
        try:
            key = k3s_config.go_string(key)
        except Exception:  # pylint: disable=broad-except
            key = str(key)
        option = by_flag(key)
        if option is None:
            continue
        for text in _scalars(value):
            found.extend(secret_parts(option, text))
    return found


def documents_secrets(documents):
    """The secret values of k3s config documents [(path, pairs)]."""
    found = []
    for dummy, pairs in documents or []:
        found.extend(config_secrets(pairs))
    return found


def file_secrets(data):
    """The secret values a file's bytes hold, whatever it is of a unit, an init script, an environment file
    or a k3s config file (each reading that fails is skipped)."""
    if data is None:
        return []
    if isinstance(data, str):
        data = data.encode('utf-8', 'surrogateescape')
    found = []
    try:
        found.extend(env_secrets(systemd.parse_environment_file(data, shell=True)))  # every reader's keys, export too
    except Exception:  # pylint: disable=broad-except
        pass
    try:
        unit = systemd.UnitFile(data)
        for directive in unit.exec_start():
            found.extend(argv_secrets(unit.parse_exec(directive).argv))
        for directive in unit.get('Service', 'Environment'):
            for words in systemd.split_words(directive.value):
                key, sep, value = words[0].partition('=')
                if sep:
                    found.extend(secret_parts(by_env(key), value))
    except Exception:  # pylint: disable=broad-except
        pass
    try:
        found.extend(argv_secrets(openrc.InitScript(data).parse().argv))
    except Exception:  # pylint: disable=broad-except
        pass
    try:
        found.extend(config_secrets(k3s_config.load_yaml(data)))
    except Exception:  # pylint: disable=broad-except
        pass
    return found


# -- secrets under named keys of any YAML file, whatever their shape ---------------------------------------------------
def _node_texts(node, text, seen):
    """Every text a secret value node holds: its scalars as read, and each line of them as written."""
    if node is None or id(node) in seen:
        return []
    seen.add(id(node))
    if node.kind == 'alias':
        return _node_texts(node.target, text, seen)
    if node.kind == 'scalar':
        raw = text[node.start:node.end]
        lines = [line.strip() for line in raw.splitlines()[1:]] if node.style in ('literal', 'folded') else []
        return [node.value] + [line for line in lines if line]
    out = []
    for item in node.value:
        for part in (item if isinstance(item, tuple) else (item,)):
            out.extend(_node_texts(part, text, seen))
    return out


def _secret_nodes(text, secret_key):
    """[(start, end, texts)] of every value under a key ``secret_key(name)`` says is secret, at any depth of every
    document (an alias's anchored node too); None when the text is not YAML go-yaml reads."""
    try:
        docs = goyaml.compose_all(text, name='file')
    except Exception:  # pylint: disable=broad-except
        return None
    found = []
    seen = set()

    def span(node):
        end = node.end
        while end > node.start and text[end - 1] in '\r\n':
            end -= 1
        return node.start, end

    def walk(node):
        if node is None or id(node) in seen:
            return
        seen.add(id(node))
        if node.kind == 'mapping':
            for key, value in node.value:
                if key.kind == 'scalar' and isinstance(key.value, str) and secret_key(key.value):
                    found.append(span(value) + (_node_texts(value, text, set()),))
                    if value.kind == 'alias' and value.target is not None:
                        found.append(span(value.target) + ([],))
                else:
                    walk(key)
                    walk(value)
        elif node.kind == 'sequence':
            for item in node.value:
                walk(item)
    for doc in docs:
        walk(doc.root)
    return found


_KEY_LINE = re.compile(r'^(?P<indent>[ \t]*(?:-[ \t]+)*)(?P<key>["\']?(?P<name>[^\s:"\'#][^:"\']*?)["\']?)[ \t]*:(?:[ \t]+|$)'
                       r'(?P<rest>.*)$')


def _hide_key_lines(text, secret_key):
    """The line-based fallback of :func:`hide_yaml_keys` for a text go-yaml does not read: a secret key's value and
    every following line indented deeper than the key (a block or folded value, a value on the next line)."""
    out = []
    depth = None
    for line in text.splitlines(True):
        body = line.rstrip('\r\n')
        indent = len(body) - len(body.lstrip(' \t-'))
        if depth is not None:
            if not body.strip() or indent > depth:
                out.append((body[:indent] + HIDDEN if body.strip() else body) + line[len(body):])
                continue
            depth = None
        m = _KEY_LINE.match(body)
        if m and secret_key(m.group('name')):
            depth = len(m.group('indent'))
            rest = m.group('rest').strip()
            body = body[:m.start('rest')] + (HIDDEN if rest else '')
        out.append(body + line[len(line.rstrip('\r\n')):])
    return ''.join(out)


def yaml_key_secrets(text, secret_key):
    """The values under every key ``secret_key(name)`` calls secret in the YAML ``text`` (any depth, any style: plain,
    quoted, a block or folded scalar, a value on the next line, an alias), as read and line by line as written."""
    nodes = _secret_nodes(text, secret_key)
    if nodes is None:
        lines = [line.strip() for line in _hidden_lines(text, secret_key)]
        return lines + [_strip_quotes(line) for line in lines if _strip_quotes(line) != line]
    return [t for dummy, dummy2, texts in nodes for t in texts]


def _hidden_lines(text, secret_key):
    """What the line-based fallback hides (the parts of lines it turns into ``(hidden)``)."""
    shown = _hide_key_lines(text, secret_key).splitlines()
    out = []
    for before, after in zip(text.splitlines(), shown):
        if before != after and after.endswith(HIDDEN):
            out.append(before[len(after) - len(HIDDEN):])
    return [o for o in out if o.strip()]


def hide_yaml_keys(text, secret_key):
    """``text`` (YAML) with the value under every key ``secret_key(name)`` calls secret shown as ``(hidden)``, at any
    depth and in any style (a folded ``>-`` value and a value on the next line included); the lines of a text go-yaml
    does not read are hidden by their indentation."""
    if not text:
        return text
    nodes = _secret_nodes(text, secret_key)
    if nodes is None:
        return _hide_key_lines(text, secret_key)
    spans = []
    for start, end in sorted((a, b) for a, b, dummy in nodes if b > a):
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    for start, end in reversed(spans):
        text = text[:start] + HIDDEN + text[end:]
    return text


# -- keeping them out -------------------------------------------------------------------------------------
def usable(values):
    """The values worth hiding: non-empty text (an empty string would mask every gap of the output)."""
    out = []
    for value in values or ():
        if value is None or isinstance(value, bool):
            continue
        text = value if isinstance(value, str) else str(value)
        if text.strip() and text not in out:
            out.append(text)
    return out


def add(found, values):
    """Put ``values`` into the set ``found`` (a module's ``no_log_values``, or a plan's own set), each also as
    Python's repr writes it when that differs (a control character escaped: how a list shows in a log line)."""
    if found is not None:
        for value in usable(values):
            found.add(value)
            shown = repr(value)[1:-1]
            if shown != value:
                found.add(shown)
    return found


def _forms(value):
    """The ways ``value`` is written in the files and messages of this collection: as is, quoted for
    systemd, openrc, the installer's env files, YAML and JSON, and as Python's repr shows it."""
    forms = {value, value.strip(), repr(value)[1:-1], json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
             value.replace("'", "''"), value.replace("'", "'\\''"), value.replace("'", "'\\''").replace('"', '\\"'),
             value.replace('%', '%%'), value.replace('\\', '\\\\')}
    for quote in (systemd.quote_arg, openrc.quote_arg, yamledit.render_scalar):
        try:
            forms.add(_strip_quotes(quote(value)))
        except Exception:  # pylint: disable=broad-except
            pass
    return [f for f in forms if f.strip()]


_SHORT = 8


def _alternation(names):
    return '|'.join(re.escape(n) for n in sorted(names, key=len, reverse=True))


_FLAG_NAMES = _alternation(_BY_NAME)
_ENV_NAMES = _alternation(_BY_ENV)
# --token=VALUE, -t=VALUE (a word of its own: not the tail of --kubelet-arg=x-t=1)
_FLAG_EQ = re.compile(r'(?<![A-Za-z0-9_.-])(-{1,2}(%s)=)([^\s\'"\\]*)' % _FLAG_NAMES)
# --token VALUE, '--token' 'VALUE', and the installer's layout: '--token' \<newline><TAB>'VALUE'
_FLAG_SPACE = re.compile(r'(?<![A-Za-z0-9_.-])(-{1,2}(%s)[\'"]?(?:[ \t]+|[ \t]*\\\r?\n[ \t]*)+[\'"]?)([^\s\'"\\]+)'
                         % _FLAG_NAMES)
# K3S_TOKEN=VALUE at the start of a line (an environment file: the rest of the line), or inside one
_ENV_LINE = re.compile(r'^([ \t]*(?:export[ \t]+)?(%s)=)(.*)$' % _ENV_NAMES, re.M | re.I)
_ENV_WORD = re.compile(r'(?<![A-Za-z0-9_])((%s)=)([^\s\'"\\]*)' % _ENV_NAMES, re.I)
# YAML: a config key at the start of a line, bare or quoted, with "+" or not
_YAML_KEY = re.compile(r'^(?P<key>["\']?(?P<name>[A-Za-z0-9][A-Za-z0-9-]*)\+?["\']?)[ \t]*:(?P<rest>.*)$')
_USERINFO = re.compile(r'([A-Za-z][A-Za-z0-9+.-]*://[^\s:/@\'"]*:)([^\s@\'"/]+)(@)')


def _hide_match(m, option_group=2, value_group=3, whole_line=False):
    option = by_flag(m.group(option_group)) or by_env(m.group(option_group))
    value = m.group(value_group)
    if not value.strip() or value == HIDDEN:
        return m.group(0)
    if whole_line and option is not None and option.kind != URL:
        return m.group(1) + HIDDEN
    shown = hide_value(option, value)
    return m.group(1) + (shown if shown != value else value)


def _hide_yaml(text):
    """Config-file lines: the value of a secret key (and the list items under it) shown as ``(hidden)``."""
    out = []
    hide = None
    for line in text.splitlines(True):
        body = line.rstrip('\r\n')
        eol = line[len(body):]
        stripped = body.strip()
        m = _YAML_KEY.match(body) if body and not body[0].isspace() else None
        if m:
            hide = by_flag(m.group('name'))
            rest = m.group('rest')
            value = rest.strip()
            if hide is not None and value and not value.startswith('#'):
                body = m.group('key') + ': ' + hide_value(hide, value)
        elif body and not body[0].isspace() and (not body.startswith('-') or body.startswith('---')):
            hide = None
        elif hide is not None and stripped and not stripped.startswith('#'):
            indent = body[:len(body) - len(body.lstrip())]
            item = stripped[1:].strip() if stripped.startswith('-') else stripped
            shown = hide_value(hide, item)
            body = indent + ('- ' + shown if stripped.startswith('-') else shown)
        out.append(body + eol)
    return ''.join(out)


def planned(plan, view, params, found, known):
    """``plan(view, params, found)`` with ``known`` (the secrets of the options) put into ``found`` first.

    ``found`` is a set (a module passes its ``no_log_values``; None makes a new one) that the plan
    fills with every secret it reads, before anything can quote one; a refusal's message is
    returned with all of them shown as ``(hidden)``.
    """
    found = set() if found is None else found
    add(found, known)
    try:
        return plan(view, params, found)
    except PlanError as e:
        e.msg = hide_message(e.msg, found)
        e.args = (e.msg,)
        raise


def hide_message(text, values=()):
    """A message or warning with every secret shown as ``(hidden)``: :func:`hide_text` without the patterns
    that read prose as a command line (``-t from`` is words, not a flag and its value)."""
    return hide_text(text, values, prose=True)


def hide_text(text, values=(), prose=False):
    """``text`` (a file's content for a diff, or a message) with every secret shown as ``(hidden)``.

    The known ``values`` go in every form this collection writes them; then whatever the text
    itself says is secret: a secret flag's value (``--token=x``, ``-t x``, the installer's
    ``'--token' \\`` line and the value on the next), a secret variable's (``K3S_TOKEN=x``), a
    secret config key's (``token: x`` and the list under ``agent-token:``), and the password of
    any ``scheme://user:password@`` URL.
    """
    if not text:
        return text
    forms = set()
    for value in usable(values):
        forms.update(_forms(value))
    if forms:
        # a short value is hidden where it stands alone (after "=", in quotes), not inside every longer word
        long_forms = [f for f in forms if len(f) >= _SHORT]
        short_forms = [f for f in forms if len(f) < _SHORT]
        alternatives = []
        if long_forms:
            alternatives.append('(?:%s)' % _alternation(long_forms))
        if short_forms:
            alternatives.append('(?<![A-Za-z0-9])(?:%s)(?![A-Za-z0-9])' % _alternation(short_forms))
        text = re.sub('|'.join(alternatives), HIDDEN, text)
    text = _ENV_LINE.sub(lambda m: _hide_match(m, whole_line=True), text)
    text = _ENV_WORD.sub(_hide_match, text)
    text = _FLAG_EQ.sub(_hide_match, text)
    if not prose:
        text = _FLAG_SPACE.sub(_hide_match, text)
        text = _hide_yaml(text)
    text = _USERINFO.sub(lambda m: m.group(1) + HIDDEN + m.group(3), text)
    return text


def hide_diff(diff, values=()):
    """Ansible's diff list with :func:`hide_text` applied to each before and after."""
    out = []
    for entry in diff:
        entry = dict(entry)
        for side in ('before', 'after'):
            if isinstance(entry.get(side), str):
                entry[side] = hide_text(entry[side], values)
        out.append(entry)
    return out


MASK = '********'  # how Ansible writes a no_log value in the log line of the invocation


def mask_values(value, values):
    """A copy of ``value`` (a module's options: dicts, lists, text, numbers) with every secret of ``values`` written as
    ``********`` wherever it stands, inside a longer text too (keys included)."""
    forms = sorted(usable(values), key=len, reverse=True)

    def mask(item):
        if isinstance(item, dict):
            return {mask(k): mask(v) for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return [mask(v) for v in item]
        if isinstance(item, str):
            for form in forms:
                item = item.replace(form, MASK)
            return item
        if item is not None and not isinstance(item, bool) and str(item) in forms:
            return MASK
        return item
    return mask(value)


class MaskedLog:
    """A mixin put before AnsibleModule: the module's own log line on the node (journal or syslog: "Invoked with ...")
    shows no secret, whole or in part.

    AnsibleModule logs each option through a URL heuristic that cuts a value at an ``@`` before the no_log values are
    masked, so a password with an ``@`` is then only partly masked. Here the options are logged with every secret
    already written as ``********``. ``add_secrets(self)`` (the module's) puts the secrets its options hold into
    ``no_log_values`` first.
    """

    def add_secrets(self):
        """Put the secrets of the module's options into ``no_log_values`` (the module says which they are)."""

    def _log_invocation(self):
        self.add_secrets()
        params = self.params  # pylint: disable=access-member-before-definition
        self.params = mask_values(params, self.no_log_values)
        try:
            super()._log_invocation()  # pylint: disable=no-member
        finally:
            self.params = params


class SecretPlan(Plan):
    """A Plan whose diff shows no secret: ``secrets`` (the values found) and what the files say is secret."""

    def __init__(self, changes=(), facts=None, warnings=(), secrets=()):
        super().__init__(changes, facts, warnings)
        self.secrets = set(usable(secrets))

    def diff(self):
        return hide_diff(super().diff(), self.secrets)


def hidden_plan(plan, secrets=()):
    """``plan`` as a :class:`SecretPlan` (same changes, facts and warnings) whose diff hides ``secrets``."""
    return SecretPlan(plan.changes, plan.facts, plan.warnings, secrets)
