# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.k3s_config_file``: one file of ours in k3s's config drop-in directory.

The file (``/etc/rancher/k3s/config.yaml.d/<name>``, RKE2's ``/etc/rancher/rke2/config.yaml.d``)
holds the flags of one dict, written whole on every run:

* a marker header line says it is ours; a file at that name without it is someone else's and
  is never written or removed;
* keys sorted, block YAML, scalars written so that go-yaml (k3s) reads them back as the same
  text (``_yamledit.render_scalar``: ``"yes"``, ``"0o17"``, ``"a: b"`` quoted), lists one item a
  line, an empty list ``[]``; before anything is written the rendered bytes are read back as
  k3s reads them (``_k3s_config``) and must give exactly the flags the dict means;
* mode 0600 (it may carry a token), its directory made if needed.

It reads, never writes, ``config.yaml`` and the other drop-ins: the facts give the flags k3s
gets from all of them after the change, and a warning names any of our keys that a file
sorting after ours sets without ``+`` (k3s would then not run with our value). The values of
secret-bearing keys (``_secrets``: ``token``, ``t``, ``agent-token``, the password of
``datastore-endpoint``, the S3 keys...) -- ours and those of every config file read -- are
collected into the caller's ``secrets`` set and shown as ``(hidden)`` in the diff, the facts,
the warnings and the messages.

``plan(view, params, secrets)`` returns a Plan; nothing is written here. No Ansible import.
"""

from __future__ import annotations

import os
import posixpath
import re

from ansible_collections.baremetal.k3s.plugins.module_utils import _deps
from ansible_collections.baremetal.k3s.plugins.module_utils import _goyaml as goyaml
from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config as k3s_config
from ansible_collections.baremetal.k3s.plugins.module_utils import _names
from ansible_collections.baremetal.k3s.plugins.module_utils import _platform
from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets as secrets
from ansible_collections.baremetal.k3s.plugins.module_utils import _service as services
from ansible_collections.baremetal.k3s.plugins.module_utils import _yamledit as yamledit
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import ViewError

MARKER = '# Managed by baremetal.k3s.k3s_config_file'
HEADER = (MARKER + ': k3s reads this file after config.yaml and the files of this\n'
          '# directory that sort before it. Changes made here are overwritten; remove it with state=absent.\n')
DEFAULT_CONFIG_DIR = '/etc/rancher/k3s/config.yaml.d'
MODE = 0o600
HIDDEN = secrets.HIDDEN
_STYLE = yamledit._Style(map_indent=2, seq_offset=2, seq_content=2)  # pylint: disable=protected-access
_KEY_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9-]*\+?$')
_SCALARS = (str, bool, int, float)


class ConfigFileError(PlanError):
    """A refusal: the message says what is wrong and what to do; nothing was changed."""


def is_secret(key):
    """Whether the value of ``key`` must never be shown (a secret-bearing k3s option, ``_secrets.OPTIONS``)."""
    return secrets.is_secret_key(key)


# -- the request --------------------------------------------------------------------------------------
def default_service(config_dir):
    """The server service of the platform whose config directory holds ``config_dir`` (k3s otherwise)."""
    path = config_dir.rstrip('/')
    for platform in _platform.PLATFORMS.values():
        home = posixpath.dirname(platform.config_file)
        if platform.config_file and (path == home or path.startswith(home + '/')):
            return platform.server_service
    return _platform.K3S.server_service


def validate_name(name):
    _names.check('name', name, _names.FILE_NAME, ConfigFileError, hint='such as 50-cluster.yaml')
    if not name.lower().endswith(('.yaml', '.yml')):
        raise ConfigFileError('name %r must end in ".yaml" or ".yml", or k3s does not read it.' % (name,))
    return name


def validate_config_dir(config_dir):
    if not config_dir or not os.path.isabs(config_dir):
        raise ConfigFileError('config_dir %r is not an absolute path; give one such as %s.' % (config_dir, DEFAULT_CONFIG_DIR))
    config_dir = os.path.normpath(config_dir)
    if not config_dir.endswith('.d') or config_dir == '/.d':
        raise ConfigFileError('config_dir %s does not end in ".d": k3s reads drop-ins from "<config file>.d" only, such as '
                              '%s for /etc/rancher/k3s/config.yaml.' % (config_dir, DEFAULT_CONFIG_DIR))
    return config_dir


def validate_values(values):
    """[(key, value)] sorted by key; keys are k3s flag names (``+`` at the end appends), values scalars or lists of them."""
    if values is None:
        raise ConfigFileError('values is required with state=present: give the flags as a dict, e.g. {disable: [traefik]}.')
    if not isinstance(values, dict):
        raise ConfigFileError('values must be a dict of k3s flag names to values.')
    pairs = []
    for key in sorted(values, key=str):
        value = values[key]
        if not isinstance(key, str) or not _KEY_RE.fullmatch(key):
            raise ConfigFileError('key %r is not a k3s flag name: letters, digits and "-", without the leading dashes, '
                                  'optionally ending in "+" to append to the list of earlier files (e.g. node-label+).'
                                  % (key,))
        if isinstance(value, (list, tuple)):
            for item in value:
                if not isinstance(item, _SCALARS):
                    raise ConfigFileError('the list of %s holds %s; give strings, numbers or booleans.'
                                          % (key, 'null' if item is None else 'a %s' % type(item).__name__))
            value = list(value)
        elif not isinstance(value, _SCALARS):
            raise ConfigFileError('%s is %s; give a string, a number, a boolean or a list of them (k3s turns null into an '
                                  'empty flag value: write "" for that).'
                                  % (key, 'null' if value is None else 'a %s' % type(value).__name__))
        pairs.append((key, value))
    return pairs


# -- rendering and reading back ---------------------------------------------------------------------
def render(pairs):
    """The file: the marker header, then one block entry per key."""
    lines = []
    for key, value in pairs:
        try:
            lines.extend(yamledit.render_entry(key, value, 0, _STYLE))
        except ValueError as e:
            raise ConfigFileError('%s cannot be written as YAML: %s.' % (key, HIDDEN if is_secret(key) else e)) from e
    return (HEADER + ''.join(line + '\n' for line in lines)).encode('utf-8')


def expected_flags(pairs):
    """The flags the dict means (each value as k3s turns it into text)."""
    return k3s_config.to_flags(k3s_config.merge([('values', pairs)]))


def check_round_trip(pairs, data, path):
    """Read ``data`` back as k3s does: it must hold the same keys and give the same flags as ``pairs``."""
    try:
        loaded = k3s_config.load_yaml(data, path)
    except k3s_config.ConfigError as e:
        raise ConfigFileError('the rendered %s would not read back: %s. Nothing was changed.' % (path, e)) from e
    keys = [k3s_config.go_string(k) for k, dummy in loaded]
    want = [k for k, dummy in pairs]
    bad = None
    if keys != want:
        bad = next((w or k for w, k in zip(want + [None] * len(keys), keys + [None] * len(want)) if w != k), None)
    else:
        for (key, value), (dummy, read) in zip(pairs, loaded):
            if expected_flags([(key, value)]) != expected_flags([(key, read)]):
                bad = key
                break
    if bad is not None or k3s_config.to_flags(k3s_config.merge([(path, loaded)])) != expected_flags(pairs):
        raise ConfigFileError('%s would not be read by k3s as given (key %s); nothing was changed. Write the value as a '
                              'string.' % (path, bad))


def has_marker(data):
    return any(line.startswith(MARKER.encode()) for line in data.splitlines())


def redact_config(text, values=()):
    """A config file's text with every secret (``values`` and those of secret keys) shown as ``(hidden)`` (for diffs)."""
    return secrets.hide_text(text, values)


def redact_flags(flags):
    """``--key=value`` flags with the values of secret-bearing flags hidden."""
    return secrets.hide_argv(flags)


# -- the node -------------------------------------------------------------------------------------------
def files_after(view, config_file, path, after):
    """The files k3s reads once ``path`` holds ``after`` (None: gone), in k3s's order."""
    files = [p for p in services.config_files(view, config_file) if p != path]
    if after is not None:
        files.append(path)
    head = [p for p in files if p == config_file]
    return head + sorted((p for p in files if p != config_file), key=os.path.basename)


def masking(docs, path, pairs):
    """[(our key, later file)]: files sorting after ours that set one of our keys without ``+``."""
    ours = {k[:-1] if k.endswith('+') else k for k, dummy in pairs}
    found = []
    later = False
    for doc_path, doc_pairs in docs:
        if doc_path == path:
            later = True
            continue
        if not later:
            continue
        for raw_key, dummy in doc_pairs:
            key = k3s_config.go_string(raw_key)
            if key in ours and (key, doc_path) not in found:
                found.append((key, doc_path))
    return found


def running(view, service):
    """Whether the service's main process runs; False when it is not installed or cannot be read."""
    try:
        init = services.read_init(view, service)
        return bool(services.main_pid(view, init))
    except (PlanError, ViewError):
        return False


def lock_key(params):
    """The lock a run holds: the service's, as k3s_service_arg takes it for the same config files."""
    config_dir = params.get('config_dir') or DEFAULT_CONFIG_DIR
    return 'service-' + services.short_name(params.get('service') or default_service(config_dir))


def plan(view, params, found=None):
    """The Plan for ``params``: our one file in the config drop-in directory, and what the module returns.

    ``found`` (a set: the module passes its ``no_log_values``) receives every secret value of
    ``values`` and of the config files read, before anything can quote them; a refusal's message
    shows them as ``(hidden)``.
    """
    values = params.get('values')
    return secrets.planned(_plan, view, params, found, secrets.config_secrets(values) if isinstance(values, dict) else ())


def _read_ours(view, path, present, found):
    """The file's bytes (None when missing); an error when it is a directory or not ours (no marker)."""
    try:
        if view.isdir(path):
            raise ConfigFileError('%s is a directory; give another name.' % path)
        before = view.read(path)
    except ViewError as e:
        raise ConfigFileError(str(e)) from e
    if before is not None:
        secrets.add(found, secrets.file_secrets(before))
    if before is not None and not has_marker(before):
        raise ConfigFileError('%s exists and was not written by this module (no "%s" line): it is not ours to %s. Give '
                              'another name, or move its settings and remove it by hand.'
                              % (path, MARKER, 'replace' if present else 'remove'))
    return before


def _render_checked(view, path, pairs, before, warnings):
    """The file's new bytes, read back as k3s would; warnings for trimmed values and a mode others can read."""
    after = render(pairs)
    check_round_trip(pairs, after, path)
    for key, value in pairs:
        for item in (value if isinstance(value, list) else [value]):
            if isinstance(item, str) and k3s_config.go_string(item) != item:
                warnings.append('k3s trims white space from config values: %s gets %s.'
                                % (key, HIDDEN if is_secret(key) else repr(k3s_config.go_string(item))))
    mode = view.mode(path) if before is not None else None
    if mode is not None and mode & 0o077:
        warnings.append('%s has mode %04o: it may hold secrets (tokens); make it 0600 (chmod 600 %s).' % (path, mode, path))
    return after


def _plan(view, params, found):
    if not goyaml.HAS_YAML:
        raise ConfigFileError('PyYAML is needed on the node to read the k3s config files as k3s reads them. %s (%s)'
                              % (_deps.install_hint('PyYAML'), goyaml.YAML_IMPORT_ERROR))
    name = validate_name(params.get('name'))
    config_dir = validate_config_dir(params.get('config_dir') or DEFAULT_CONFIG_DIR)
    service = params.get('service') or default_service(config_dir)
    services.check_service_name(service)
    present = (params.get('state') or 'present') == 'present'
    config_file = config_dir[:-len('.d')]
    path = os.path.join(config_dir, name)
    pairs = validate_values(params.get('values')) if present else []
    before = _read_ours(view, path, present, found)
    warnings = []
    after = _render_checked(view, path, pairs, before, warnings) if present else None
    change = Change(path, before, after, mode=MODE, secret=True)
    result = secrets.SecretPlan([change], warnings=warnings)
    if result.changed and after is not None and not view.writable(path):
        raise ConfigFileError('%s cannot be written (read-only file system or no permission). Nothing was changed.' % path)
    docs = services.config_documents(view, files_after(view, config_file, path, after), {path: after})
    secrets.add(found, secrets.documents_secrets(docs))
    masked = masking(docs, path, pairs)
    for key, other in masked:
        warnings.append('%s sets "%s:" without "+" and sorts after %s, so it replaces our value: k3s will not run with '
                        'ours. Rename one of the files, or write "%s+:" there for a list.' % (other, key, name, key))
    is_link = view.islink(config_file)
    result.secrets = set(secrets.usable(found))
    result.warnings = [secrets.hide_message(w, found) for w in warnings]
    result.facts = {
        'path': path,
        'config_dir': config_dir,
        'config_file': config_file,
        'config_yaml_is_link': is_link,
        'config_yaml_target': view.realpath(config_file) if is_link else None,
        'service': service,
        'k3s_args': redact_flags(k3s_config.to_flags(k3s_config.merge(docs))),
        'masked': [{'key': k, 'file': f} for k, f in masked],
        'restart_required': bool(result.changed and running(view, service)),
    }
    return result


# The options of module baremetal.k3s.k3s_config_file (also the config_file part of baremetal.k3s.k3s_files).
ARGUMENT_SPEC = dict(
    name=dict(type='str', required=True),
    values=dict(type='dict'),
    state=dict(type='str', default='present', choices=['present', 'absent']),
    config_dir=dict(type='path', default=DEFAULT_CONFIG_DIR),
    service=dict(type='str'),
    backup=dict(type='bool', default=False),
)
REQUIRED_IF = [('state', 'present', ['values'])]


def add_secrets(params, found):
    """The secret values of the option ``values``, as given (before any check), into ``found`` (no_log_values)."""
    if isinstance(params.get('values'), dict):
        secrets.add(found, secrets.config_secrets(params['values']))
