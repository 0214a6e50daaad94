# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.k3s_manifests``: our files in the server's auto-deploy manifests directory.

k3s's (and RKE2's) deploy controller reads every file of ``<data-dir>/server/manifests`` and its
subdirectories whose name ends in ``.yaml``, ``.yml`` or ``.json`` (any case), except dot-files and
a file ``X`` next to which a ``X.skip`` exists; it applies each file as one AddOn named after the
part of the file name before its first dot, and picks up new and changed files by itself (every
15 s). So no restart is needed, and the directory also holds files that are not ours: k3s's own
(``ccm.yaml``, ``coredns.yaml``, ...) and the administrator's.

What this module placed is kept in a *record* in the same directory,
``.baremetal-k3s-manifests-<set>``: a dot-file without a manifest extension, which the deploy
controller skips. Only names in the record are ever overwritten or removed; a file of another
name is refused unless ``force``. ``plan`` writes the manifests first, then removes the ones
dropped from the list, then the record: a run cut off after a manifest but before the record
leaves a file holding exactly the bytes asked for, which the next run takes over as ours.

Every content is read as k3s reads it before anything is written: split into documents at
``---`` lines as apimachinery's YAMLReader splits them, a document that starts with ``{`` read as
JSON, any other as sigs.k8s.io/yaml reads YAML (``_goyaml``), and each must be a Kubernetes object
(or a list of them) with ``apiVersion``, ``kind`` and ``metadata.name``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re

from ansible_collections.baremetal.k3s.plugins.module_utils import _goyaml as goyaml
from ansible_collections.baremetal.k3s.plugins.module_utils import _names
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, Plan, PlanError

HAS_YAML = goyaml.HAS_YAML
YAML_IMPORT_ERROR = goyaml.YAML_IMPORT_ERROR

DEFAULT_DIR = '/var/lib/rancher/k3s/server/manifests'
DEFAULT_SET = 'default'
RECORD_PREFIX = '.baremetal-k3s-manifests-'
RECORD_COMMENT = ('The manifests baremetal.k3s.k3s_manifests placed in this directory; it overwrites and removes only '
                  'these. The deploy controller skips this file (its name starts with a dot).')
EXTENSIONS = ('.yaml', '.yml', '.json')
SKIP_SUFFIX = '.skip'
MODE = 0o600
# The AddOns of k3s's packaged components: k3s writes their files at every start, and deletes them when the
# component is disabled (--disable <name>), so a file of ours by that name would not last.
PACKAGED = ('ccm', 'coredns', 'local-storage', 'metrics-server', 'rolebindings', 'runtimes', 'traefik')
_NAME = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')  # an AddOn name (a DNS-1123 subdomain without dots), a set


class ManifestsError(PlanError):
    """Nothing was written; ``msg`` says what is wrong and what to do, ``errors`` lists every problem."""

    def __init__(self, msg, errors=None):
        super().__init__(msg, errors=list(errors or []))


def addon_name(filename):
    """The AddOn k3s makes of a manifest file: its name up to the first dot."""
    return os.path.basename(filename).split('.', 1)[0]


def is_manifest(filename, skips=()):
    """Whether k3s's deploy controller reads a file of this name."""
    return not filename.startswith('.') and filename not in skips and filename.lower().endswith(EXTENSIONS)


def record_path(directory, set_name):
    return os.path.join(directory, RECORD_PREFIX + set_name)


def sha256(data):
    return 'sha256:' + hashlib.sha256(data).hexdigest()


# -- the record ----------------------------------------------------------------------------------
def render_record(set_name, entries):
    """The record's bytes: {name: sha256 of what was placed}, or None when it lists nothing."""
    if not entries:
        return None
    doc = {'comment': RECORD_COMMENT, 'set': set_name, 'manifests': dict(sorted(entries.items()))}
    return (json.dumps(doc, indent=2, sort_keys=True) + '\n').encode()


def parse_record(data, path):
    """{name: sha256} of a record's bytes (None: no record)."""
    if data is None:
        return {}
    try:
        doc = json.loads(data.decode('utf-8'))
    except (UnicodeDecodeError, ValueError) as e:
        doc, error = None, str(e)
    else:
        error = 'no "manifests" mapping of file names to sha256 sums'
    if isinstance(doc, dict) and isinstance(doc.get('manifests'), dict) and \
            all(isinstance(k, str) and isinstance(v, str) for k, v in doc['manifests'].items()):
        # an entry is a file this module placed in the directory, by name alone: one that points elsewhere
        # ("../x.yaml", "/etc/x.yaml", "a/b.yaml") or holds a control character is no record of ours to follow
        outside = [k for k in sorted(doc['manifests']) if _names.problem('entry', k, _names.FILE_NAME)]
        if outside:
            raise ManifestsError('%s, the record of the manifests this module placed, lists %s, which %s not a plain file '
                                 'name inside %s (%s); nothing was removed or written. The record was edited by '
                                 'hand or planted: check it, then fix or remove it and run again.'
                                 % (path, ', '.join(repr(k) for k in outside), 'is' if len(outside) == 1 else 'are',
                                    os.path.dirname(path), _names.FILE_NAME.allowed))
        return dict(doc['manifests'])
    raise ManifestsError('%s, the record of the manifests this module placed, cannot be read (%s). Fix it, or remove it '
                         'to have every file of the directory count as foreign, then run again.' % (path, error))


# -- reading a manifest as k3s does --------------------------------------------------------------
def split_documents(text):
    """[(first line number, document text)] as apimachinery's YAMLReader splits a stream.

    A line that starts with ``---`` ends a document; only white space or a comment may follow the
    dashes (anything else: ValueError, as the reader refuses it). Every line of a document ends in
    LF, as the reader gives them (bufio.ReadLine drops a CR before LF; a last line without one
    gets one).
    """
    lines = text.split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    docs = []
    current, start = [], 1
    for number, line in enumerate(lines, 1):
        if line.endswith('\r'):
            line = line[:-1]
        if line.startswith('---'):
            rest = line[3:].strip()
            if rest and not rest.startswith('#'):
                raise ValueError('line %d: invalid Yaml document separator: %s (only a comment may follow ---; k3s '
                                 'refuses the file)' % (number, rest))
            if current:
                docs.append((start, ''.join(text + '\n' for text in current)))
            current, start = [], number + 1
            continue
        if not current:
            start = number
        current.append(line)
    if current:
        docs.append((start, ''.join(text + '\n' for text in current)))
    return docs


def _is_empty(doc):
    """Only blank lines and comments: k3s skips such a document (isEmptyYaml)."""
    return all(not text.strip() or text.strip().startswith('#') for text in doc.split('\n'))


def _objects(value):
    """The objects k3s's unstructured decoder makes of one document (a list's items get its apiVersion and kind)."""
    if not isinstance(value, dict):
        raise ValueError('it is not a mapping (a Kubernetes object) but %s' % ('null' if value is None else type(value).__name__))
    if value.get('items') is None:
        return [value]
    items = value['items']
    if not isinstance(items, list):
        raise ValueError('its "items" is not a list')
    kind = value.get('kind') if isinstance(value.get('kind'), str) else ''
    out = []
    for item in items:
        if not isinstance(item, dict):
            raise ValueError('an item of its "items" is not a mapping')
        if not item.get('kind') and not item.get('apiVersion'):
            item = dict(item, kind=kind[:-4] if kind.endswith('List') else kind, apiVersion=value.get('apiVersion'))
        out.append(item)
    return out


def check_content(name, text):
    """The number of objects k3s would apply from ``text``; ValueError says why k3s would refuse it."""
    count = 0
    for index, (line, doc) in enumerate(split_documents(text), 1):
        if _is_empty(doc):
            continue
        where = 'document %d (line %d)' % (index, line)
        if doc.lstrip(' \t\r\n').startswith('{'):
            try:
                value = json.loads(doc, parse_constant=_no_constant)
            except ValueError as e:
                lineno = getattr(e, 'lineno', None)
                raise ValueError('%s starts with "{", so k3s reads it as JSON, and it is not JSON: %s%s'
                                 % (where, getattr(e, 'msg', e), '' if lineno is None else ' (line %d)' % (line + lineno - 1)))
        else:
            try:
                # blank lines in front give the parser's messages the line numbers of the whole file
                value = goyaml.load_json('\n' * (line - 1) + doc, strict=False, name=name)
            except goyaml.GoYamlError as e:
                raise ValueError('%s is not YAML that k3s reads: %s' % (where, e))
        try:
            objects = _objects(value)
        except ValueError as e:
            raise ValueError('%s: %s' % (where, e))
        for obj in objects:
            missing = [k for k in ('apiVersion', 'kind') if not (isinstance(obj.get(k), str) and obj.get(k))]
            meta = obj.get('metadata')
            if not (isinstance(meta, dict) and isinstance(meta.get('name'), str) and meta.get('name')):
                missing.append('metadata.name')
            if missing:
                raise ValueError('%s: an object without %s' % (where, ', '.join(missing)))
            count += 1
    return count


def _no_constant(token):
    raise ValueError('%s is not JSON' % token)


# -- the directory ---------------------------------------------------------------------------------
def manifest_files(view, directory):
    """The files of ``directory`` and its subdirectories that the deploy controller reads, as paths relative to it."""
    entries, seen, stack = [], set(), ['']
    while stack:
        rel = stack.pop()
        path = os.path.join(directory, rel) if rel else directory
        real = view.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        for n in view.listdir(path) or []:
            sub = os.path.join(rel, n) if rel else n
            if view.isdir(os.path.join(directory, sub)):
                stack.append(sub)
            else:
                entries.append(sub)
    skips = {os.path.basename(e)[:-len(SKIP_SUFFIX)] for e in entries if e.endswith(SKIP_SUFFIX)}
    return sorted(e for e in entries if is_manifest(os.path.basename(e), skips)), skips


def other_records(view, directory, set_name):
    """{manifest name: set} of the records of other sets in ``directory``."""
    out = {}
    for n in view.listdir(directory) or []:
        if n.startswith(RECORD_PREFIX) and n != RECORD_PREFIX + set_name:
            path = os.path.join(directory, n)
            for name in parse_record(view.read(path), path):
                out[name] = n[len(RECORD_PREFIX):]
    return out


def _check_name(name, option='name'):
    """Why ``name`` cannot be a manifest's file name (``option`` names it), or None."""
    if not isinstance(name, str) or not name:
        return '%s: a manifest needs a name (a file name such as my-app.yaml)' % option
    problem = _names.problem(option, name, _names.FILE_NAME, 'give the file name alone, such as my-app.yaml')
    if problem:
        return problem
    if name.startswith('.'):
        return '%s %r starts with a dot, and k3s skips such files' % (option, name)
    if not name.lower().endswith(EXTENSIONS):
        return '%s %r does not end in .yaml, .yml or .json, so k3s would not read it' % (option, name)
    addon = addon_name(name)
    if len(addon) > 253 or not _NAME.fullmatch(addon):
        return ('%s %r would be k3s AddOn "%s" (the name up to the first dot), which is no valid object name: use '
                'lower-case letters, digits and "-", starting and ending with a letter or digit' % (option, name, addon))
    return None


def _manifests(params):
    items = params.get('manifests')
    if items is None:
        items = []
    if not isinstance(items, list):
        raise ManifestsError('manifests must be a list of {name, content}, not %s' % type(items).__name__)
    return items


def plan(view, params):
    """The Plan of ``baremetal.k3s.k3s_manifests``: our manifests in, the dropped ones out, the record last."""
    directory = os.path.normpath(params.get('dir') or DEFAULT_DIR)
    if not os.path.isabs(directory):
        raise ManifestsError('dir %r must be an absolute path' % (params.get('dir'),))
    set_name = params.get('set') or DEFAULT_SET
    _names.check('set', set_name, _names.DNS_LABEL, ManifestsError, 'it names the record %s<set>' % RECORD_PREFIX)
    items = _manifests(params)
    _check_directory(view, directory)
    record_file = record_path(directory, set_name)
    record_before = view.read(record_file)
    present, skips = manifest_files(view, directory)
    site = _Site(directory, parse_record(record_before, record_file), other_records(view, directory, set_name),
                 present, skips, bool(params.get('force')))
    wanted, names, errors = _wanted(items)
    site.leaving = [n for n in sorted(site.record) if n not in names]
    addons = {}
    for name, dummy in wanted:
        addons.setdefault(addon_name(name), []).append(name)
    changes, warnings, written = [], [], []
    for name, data in wanted:
        if len(addons[addon_name(name)]) > 1:
            errors.append('%s: %s are the same k3s AddOn "%s" (the name up to the first dot); k3s would apply them as one '
                          'and each would prune what the other created. Give them different names.'
                          % (name, ' and '.join(addons[addon_name(name)]), addon_name(name)))
            continue
        before, problem = _place(view, site, name, data, warnings)
        if problem:
            errors.append(problem)
            continue
        if before != data:
            written.append(name)
        changes.append(Change(os.path.join(directory, name), before, data, mode=MODE))
    if errors:
        raise ManifestsError('nothing was written to %s: %s' % (directory, '; '.join(errors)), errors)
    removed = _remove_leaving(view, site, changes, warnings)
    entries = {name: sha256(data) for name, data in wanted}
    changes.append(Change(record_file, record_before, render_record(set_name, entries), mode=MODE))
    return Plan(changes, facts={
        'dir': directory, 'set': set_name, 'record': record_file,
        'placed': [name for name, dummy in wanted], 'written': written, 'removed': removed,
        'restart_required': False,
    }, warnings=warnings)


class _Site(object):
    """What the manifests directory holds for one set: its record, the other sets', the files, the .skip names."""

    def __init__(self, directory, record, others, present, skips, force):
        self.directory = directory
        self.record = record
        self.others = others
        self.present = present
        self.skips = skips
        self.force = force
        self.leaving = []


def _check_directory(view, directory):
    """An error when the manifests directory is no directory or cannot be made."""
    parent = os.path.dirname(directory)
    if view.exists(directory) and not view.isdir(directory):
        raise ManifestsError('dir %s is not a directory' % directory)
    if not view.isdir(parent):
        raise ManifestsError(
            'dir %s cannot be made: %s does not exist, so k3s (or RKE2) has not run on this node yet. It creates its '
            '<data-dir>/server with mode 0700; create that first (ansible.builtin.file, state directory, mode 0700), or '
            'place the manifests after the first start.' % (directory, parent))


def _wanted(items):
    """([(name, bytes)], every item's name, errors) of the manifests option, each item checked alone."""
    errors, wanted = [], []
    names = [i.get('name') if isinstance(i, dict) else None for i in items]
    for index, item in enumerate(items):
        label = 'manifests[%d]' % index
        if not isinstance(item, dict):
            errors.append('%s must be a mapping {name, content}, not %r' % (label, item))
            continue
        name = item.get('name')
        problem = _check_name(name, label + '.name')
        if problem:
            errors.append(problem)
            continue
        label = '%s (%s)' % (label, name)
        if names.index(name) != index:
            errors.append('%s: the name is given twice' % label)
            continue
        content = item.get('content')
        if not isinstance(content, str):
            errors.append('%s: content must be the text of the manifest, not %s (render a data structure with '
                          'to_nice_yaml or to_json)' % (label, 'nothing' if content is None else type(content).__name__))
            continue
        try:
            check_content(name, content)
        except ValueError as e:
            errors.append('%s: %s' % (label, e))
            continue
        wanted.append((name, content.encode('utf-8')))
    return wanted, names, errors


def _place(view, site, name, data, warnings):
    """(the file's bytes before, None) when ``name`` may be written with ``data``, else (None, why not)."""
    directory, record = site.directory, site.record
    path = os.path.join(directory, name)
    addon = addon_name(name)
    clash = [p for p in site.present if addon_name(p) == addon and p != name and p not in site.leaving]
    if clash:
        return None, ('%s would be k3s AddOn "%s", like %s in %s; k3s would apply them as one and each would prune what '
                      'the other created. Give it another name.' % (name, addon, ', '.join(clash), directory))
    if view.isdir(path):
        return None, '%s is a directory in %s' % (name, directory)
    before = view.read(path)
    if name in site.others:
        return None, ('%s in %s was placed by set "%s" of this module; take it out of that set first (force does not '
                      'override another set)' % (name, directory, site.others[name]))
    if name not in record and before is not None and before != data and not site.force:
        return None, ('%s already exists in %s and was not placed by this module (k3s\'s own or the administrator\'s); '
                      'it is left alone. Choose another name, or take it over with force: true.' % (name, directory))
    if addon in PACKAGED and name not in record and not site.force:
        return None, ('%s would be k3s AddOn "%s", a packaged component that k3s rewrites at every start (and deletes '
                      'when disabled); choose another name (on RKE2 the name is free: force: true)' % (name, addon))
    if name not in record and before is not None and before != data:
        warnings.append('%s in %s was not placed by this module; taken over and replaced (force: true)' % (name, directory))
    elif name in record and before is not None and before != data and sha256(before) != record[name]:
        warnings.append('%s in %s was changed since this module placed it; those changes are replaced' % (name, directory))
    if name in site.skips:
        warnings.append('k3s skips %s: %s%s exists in %s' % (name, name, SKIP_SUFFIX, directory))
    return before, None


def _remove_leaving(view, site, changes, warnings):
    """The removals of the manifests that left the list (appended to ``changes``); their names."""
    removed = []
    for name in site.leaving:
        path = os.path.join(site.directory, name)
        before = view.read(path) if not view.isdir(path) else None
        if before is None:
            continue
        if sha256(before) != site.record[name]:
            warnings.append('%s in %s was changed since this module placed it; removed all the same, as it left the list'
                            % (name, site.directory))
        changes.append(Change(path, before, None))
        removed.append(name)
    return removed
