# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""k3s's configuration files, read the way k3s reads them.

Behaviour modelled (k3s ``pkg/configfilearg``):

* the config file is ``--config``/``-c`` from the command line, else ``$K3S_CONFIG_FILE``,
  else ``/etc/rancher/k3s/config.yaml``; next to it, ``<file>.d/`` holds drop-ins: every
  entry that is not a directory and whose name ends in ``.yaml`` or ``.yml`` (any case),
  in name order, read after the file itself;
* each file is a YAML mapping; a key's value replaces what earlier files gave it, unless
  the key ends in ``+``, which appends (a scalar counts as a one-element list);
* the keys keep the order in which they first appeared; a list gives one ``--key=item``
  per item, anything else one ``--key=value``; a one-letter key gets a single dash;
* the flags go right after the subcommand (``server``/``agent``), before the command
  line's own flags.

The YAML is read as go-yaml v2 reads it (``_goyaml``: ``yes``/``on``/``y`` are booleans,
``0o17`` is 15, a TAB before a comment is fine), values turned into text as wrangler's
``convert.ToString`` does (``fmt.Sprint``: ``true``, ``1.5``, ``1e+06``). Pure: no I/O.
"""

from __future__ import annotations

import json

from ansible_collections.baremetal.k3s.plugins.module_utils import _deps
from ansible_collections.baremetal.k3s.plugins.module_utils import _goyaml as goyaml
from ansible_collections.baremetal.k3s.plugins.module_utils import _platform

DEFAULT_CONFIG_FILE = _platform.K3S.config_file
# RKE2 is built on k3s's configfilearg: the same rules, its own default file and variable (its platform record).
RKE2_CONFIG_FILE = _platform.RKE2.config_file
SUBCOMMANDS = ('server', 'agent')


class ConfigError(ValueError):
    """A config file this module cannot read as k3s does; the message names the file, the line and what to do."""


_Pairs = goyaml.Pairs


def go_string(value):
    """What k3s makes of a config value (wrangler's ``convert.ToString``: fmt.Sprint, trimmed)."""
    return goyaml.to_k3s_string(value)


def load_yaml(data, name='config file'):
    """The (key, value) pairs of one config file, in file order (duplicates kept), as k3s reads them."""
    if not goyaml.HAS_YAML:
        raise ConfigError('reading %s needs PyYAML on the node (%s): %s'
                          % (name, _deps.install_hint('PyYAML'), goyaml.YAML_IMPORT_ERROR))
    try:
        return goyaml.load_pairs(data, name)
    except goyaml.GoYamlError as e:
        raise ConfigError(str(e)) from e


def _key_text(key):
    return go_string(key)


def dropin_names(names, is_dir=lambda name: False):
    """The drop-in files k3s reads from a ``config.yaml.d`` listing: ``*.yaml``/``*.yml`` (any case),
    not directories, in name order."""
    return [n for n in sorted(names) if n.lower().endswith(('.yaml', '.yml')) and not is_dir(n)]


def _to_list(value):
    if isinstance(value, list) and not isinstance(value, _Pairs):
        return list(value)
    if isinstance(value, str):
        return [value]
    text = go_string(value).strip()
    return [text] if text else []


def merge(documents):
    """Merge [(name, pairs)] in order; return [(key, value)] in first-seen key order."""
    order = []
    values = {}
    for dummy, pairs in documents:
        for raw_key, value in pairs:
            key = _key_text(raw_key)
            append = key.endswith('+')
            if append:
                key = key[:-1]
            if key not in values:
                order.append(key)
            if append and key in values:
                values[key] = _to_list(values[key]) + _to_list(value)
            else:
                values[key] = value
    return [(k, values[k]) for k in order]


def to_flags(merged):
    """The flags k3s makes of merged config values."""
    flags = []
    for key, value in merged:
        prefix = '-' if len(key) == 1 else '--'
        if isinstance(value, list) and not isinstance(value, _Pairs):
            flags.extend('%s%s=%s' % (prefix, key, go_string(v)) for v in value)
        else:
            flags.append('%s%s=%s' % (prefix, key, go_string(value)))
    return flags


def flag_sources(documents, name):
    """[(value, file)]: the values k3s's config ``documents`` [(path, pairs)] give flag ``name``.

    The same values, in the same order, as ``flag_values(to_flags(merge(documents)), name)``,
    each with the file that put it in the list (``key+:`` appends, ``key:`` replaces).
    """
    state = None  # (raw value, file) as merge() keeps it, or [(item, file)] once appended to
    for path, pairs in documents:
        for raw_key, value in pairs:
            key = go_string(raw_key)
            append = key.endswith('+')
            if (key[:-1] if append else key) != name:
                continue
            if append and state is not None:
                if not isinstance(state, list):
                    state = [(x, state[1]) for x in _to_list(state[0])]
                state = state + [(x, path) for x in _to_list(value)]
            else:
                state = (value, path)
    if state is None:
        return []
    if isinstance(state, list):
        return [(go_string(x), p) for x, p in state]
    value, path = state
    return [(go_string(x), path) for x in _to_list(value)] if isinstance(value, list) and not isinstance(value, _Pairs) \
        else [(go_string(value), path)]


def effective_sources(documents, cli_args, cli_source, name):
    """[(value, where)] of flag ``name`` as the server runs with it: from the command line ``cli_args``
    when it passes the flag at all (the k3s docs: the command line replaces a list the config
    files built), else from the config ``documents``."""
    from_cli = flag_values(cli_args, name)
    if from_cli:
        return [(v, cli_source) for v in from_cli]
    return flag_sources(documents, name)


def scheduler_config_of(value):
    """The file a ``kube-scheduler-arg`` value passes as ``--config``, None when it passes none.

    k3s strips the leading dashes of a component argument's key, so ``config=X``,
    ``--config=X`` and ``-config=X`` are one flag. ``kubeconfig=`` is not a config; neither is
    a bare or empty ``config``.
    """
    key, dummy, rest = value.lstrip('-').partition('=')
    return rest if key == 'config' and rest else None


def product(argv0):
    """``rke2`` when the command is RKE2's binary, else ``k3s`` (both read their config files alike)."""
    return _platform.for_binary(argv0).name


def default_config_file(argv0=None):
    """The config file the product of ``argv0`` reads when nothing names another."""
    return _platform.for_binary(argv0).config_file


def find_config_file(argv, environ=None):
    """The config file k3s (or RKE2) uses for ``argv`` (argv[0] included) and the environment."""
    environ = environ or {}
    platform = _platform.for_binary(argv[0] if argv else None)
    default = platform.config_file
    variable = platform.config_env
    if environ.get(variable):
        return environ[variable]
    for i, arg in enumerate(argv):
        for name in ('--config', '-c'):
            if arg == name:
                return argv[i + 1] if i + 1 < len(argv) else default
            if arg.startswith(name + '='):
                return arg[len(name) + 1:]
    return default


def insert_flags(argv, flags):
    """``argv`` with ``flags`` placed right after the subcommand, as k3s does (argv unchanged without one)."""
    for i, arg in enumerate(argv):
        if arg in SUBCOMMANDS:
            return list(argv[:i + 1]) + list(flags) + list(argv[i + 1:])
    return list(argv)


def flag_values(argv, *names):
    """Values given to the flag ``names`` (a flag and its aliases, without dashes) in ``argv``, in order.

    ``--name=v``, ``--name v``, ``-name=v``, any alias alike: ``flag_values(argv, 'data-dir', 'd')``.
    """
    flags = [dash + name for name in names for dash in ('--', '-')]
    values = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == '--':
            break
        for flag in flags:
            if arg == flag:
                if i + 1 < len(argv):
                    values.append(argv[i + 1])
                    i += 1
                break
            if arg.startswith(flag + '='):
                values.append(arg[len(flag) + 1:])
                break
        i += 1
    return values


def render_values(pairs, header=''):
    """A config drop-in holding ``pairs`` [(key, value)]; values written as JSON (a subset of YAML)."""
    out = [header] if header else []
    for key, value in pairs:
        if isinstance(value, list):
            out.append('%s:' % key)
            out.extend('  - %s' % json.dumps(v, ensure_ascii=False) for v in value)
        else:
            out.append('%s: %s' % (key, json.dumps(value, ensure_ascii=False)))
    return ('\n'.join(out) + '\n') if out else ''


def pairs_to_plain(pairs):
    """Turn loaded pairs into plain Python values (for writing back)."""
    if isinstance(pairs, _Pairs):
        return [(go_string(k), _plain(v)) for k, v in pairs]
    return pairs


def _plain(value):
    if isinstance(value, _Pairs):
        return dict((go_string(k), _plain(v)) for k, v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
