# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.static_pod_arg``: one argument (and its hostPath mounts) in a static pod.

``plan(view, params)`` reads the manifest through the view and returns a :class:`_plan.Plan`
with one Change (the manifest's new bytes) and the facts the module returns; nothing is
written here. No Ansible import.

Reading: as the kubelet reads a manifest (sigs.k8s.io/yaml, that is go-yaml v2): through
:mod:`_goyaml`, strictly - a key set twice, an alias, a language tag, a second document
are refused. YAML in block or flow style and JSON are all read.

Editing: every change is one :mod:`_yamledit` edit (append an item, add a key, remove an
item or a key), which splices text into the file, keeps every other byte and checks that
the file then reads as before plus exactly that change. Removing what was added gives the
original bytes back. The one edit ``_yamledit`` has no call for - a block list that was
``key:`` (null) before this module added to it, emptied again - is done here
(:meth:`_Editor.restore_null`) and checked the same way.

What the module owns, and how it finds it again (``MARK`` = ``# baremetal.k3s.static_pod_arg``):

* the argument, when ``MARK`` stands on the line directly above it;
* a ``volumeMounts:`` or ``volumes:`` key it had to create, with ``MARK`` above it: removed
  again once the list holds nothing;
* the volumes named ``<volume_prefix>-...`` and the volumeMounts naming them; the line
  ``# baremetal.k3s.static_pod_arg for <argument>`` above each says which argument it serves,
  so that ``state=absent`` removes them without being given the paths again.

Where no comment can stand (a flow list ``[...]``, a JSON manifest) the argument counts as ours
when it is exactly the argument asked for or a volume of ours mounts the path it names; our
volumes there carry no owner (like those of earlier versions, below), and a key created there
is removed when the list empties. Earlier versions of this module marked the argument and a
created key with the same words as a comment at the end of their line, and wrote volumes and
mounts without a comment: both are still recognised. A volume without an owner goes with the
argument whose path it mounts, with the paths given in ``mounts``, or when no other argument of
ours stays in the command.
"""

from __future__ import annotations

import copy
import fnmatch
import hashlib
import json
import posixpath
import re
import stat

from ansible_collections.baremetal.k3s.plugins.module_utils import _goyaml as gy
from ansible_collections.baremetal.k3s.plugins.module_utils import _names
from ansible_collections.baremetal.k3s.plugins.module_utils import _pflag as pflag
from ansible_collections.baremetal.k3s.plugins.module_utils import _yamledit as ye
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, Plan, PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import ViewError

HAS_PYYAML = gy.HAS_YAML
PYYAML_IMPORT_ERROR = gy.YAML_IMPORT_ERROR

MARKER = 'baremetal.k3s.static_pod_arg'
MARK = '# ' + MARKER                # the line above an argument or a key this module added
OWNER = MARK + ' for '              # the line above a volume or mount: '<OWNER><the argument>'
DEFAULT_PATH = '/etc/kubernetes/manifests/kube-scheduler.yaml'
DEFAULT_PREFIX = 'baremetal-k3s'
DEFAULT_BACKUP_DIR = '/var/backups/baremetal-k3s'
# Directories the kubelet reads pod manifests from: every file there (not starting with '.') is a
# pod, every subdirectory an error, so no copy or config of ours may ever be written there.
STATIC_POD_DIRS = ('/etc/kubernetes/manifests', '/var/lib/rancher/*/agent/pod-manifests')
RKE2_STYLE_DIRS = ('/var/lib/rancher/*/agent/pod-manifests',)
MAX_PREFIX = 40

_LABEL = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')
_LEGACY_MARK = re.compile(r'^[ \t]*#.*\b' + re.escape(MARKER) + r'\b')  # earlier versions: at the end of the line
_ODD_BREAKS = ('\x85', '\u2028', '\u2029')
# tags the kubelet's go-yaml reads as plain data; any other (!!python/..., !local) is refused
_PLAIN_TAGS = frozenset(['!'] + ['tag:yaml.org,2002:' + t for t in
                                 ('str', 'int', 'float', 'bool', 'null', 'seq', 'map', 'binary', 'timestamp')])
_CONTAINERS = ('spec', 'containers')
_VOLUMES = ('spec', 'volumes')


class StaticPodError(PlanError):
    """A refusal: the message says what is wrong and what to do; nothing was changed."""


# -- options ------------------------------------------------------------------------------
def validate_arg(arg):
    """The flag name of ``arg`` (``config`` for ``--config=/x``), or an error."""
    if arg is None or arg.strip() == '':
        raise StaticPodError('arg is empty: give one argument such as --config=/etc/kubernetes/scheduler/config.yaml.')
    if any(c in arg for c in '\n\r' + ''.join(_ODD_BREAKS)):
        raise StaticPodError('arg %r holds a line break; give a single-line argument.' % arg)
    if '\0' in arg:
        raise StaticPodError('arg %r holds a NUL byte, which no command line can carry.' % arg)
    _check_utf8(arg, 'arg')
    if arg != arg.strip():
        raise StaticPodError('arg %r starts or ends with white space; remove it.' % arg)
    if not arg.startswith('--') or len(arg) < 3 or arg[2] in '=-':
        raise StaticPodError('arg %r is not a flag: it must start with "--" and a name, e.g. --config=/etc/kubernetes/scheduler/config.yaml.' % arg)
    return flag_name(arg)


def _check_utf8(value, what):
    try:
        value.encode('utf-8')
    except UnicodeEncodeError:
        raise StaticPodError('%s %r holds bytes that are not UTF-8; a manifest is UTF-8 text.' % (what, value))


def flag_name(item):
    """``config`` for ``--config=/x`` or ``--config``; None when ``item`` is not a long flag."""
    if not isinstance(item, str) or not item.startswith('--') or len(item) < 3:
        return None
    return item[2:].split('=', 1)[0]


def arg_path(item):
    """The absolute path an argument names: the value of ``--x=/abs``, or the item itself when it is ``/abs``."""
    if not isinstance(item, str):
        return None
    value = item.split('=', 1)[1] if item.startswith('-') and '=' in item else item
    if not value.startswith('/') or '\n' in value:
        return None
    return posixpath.normpath(value)


def validate_prefix(prefix):
    if _names.control_character(prefix):
        _names.check('volume_prefix', prefix, _names.DNS_LABEL, StaticPodError)
    if not prefix or len(prefix) > MAX_PREFIX or not _LABEL.fullmatch(prefix):
        raise StaticPodError('volume_prefix %r must be a DNS-1123 label (lower-case letters, digits and "-", starting and ending '
                             'with a letter or digit) of at most %d characters, so that volume names stay within 63.'
                             % (prefix, MAX_PREFIX))


def validate_mounts(mounts):
    """The mount paths, normalised, in order, without duplicates."""
    out = []
    for m in mounts or []:
        if not isinstance(m, str) or not m:
            raise StaticPodError('mounts holds an empty entry; give absolute host paths.')
        if any(c in m for c in '\n\r\0' + ''.join(_ODD_BREAKS)):
            raise StaticPodError('mount %r holds a line break or NUL; give a plain absolute path.' % m)
        _check_utf8(m, 'mount')
        if not m.startswith('/'):
            raise StaticPodError('mount %r is relative; give the absolute path on the node (it is mounted at the same path '
                                 'in the container).' % m)
        p = posixpath.normpath(m)
        if p == '/':
            raise StaticPodError('mount "/" would hide the whole container file system; name the files or directories needed.')
        if p not in out:
            out.append(p)
    return out


def lock_key(params):
    """The node lock a run holds: the manifest it edits."""
    return params.get('path') or DEFAULT_PATH


# -- the kubelet's directories ------------------------------------------------------------------
def in_static_pod_dir(directory, manifest_path=None, view=None):
    """Whether ``directory`` is (inside) a static-pod manifest directory, or the directory of ``manifest_path``.

    Symlinks are resolved through ``view`` (the node's); without one, paths are taken as written.
    """
    def real(path):
        return view.realpath(path) if view is not None else posixpath.normpath(path)

    candidates = (real(directory), posixpath.normpath(directory))
    for pattern in STATIC_POD_DIRS:
        for candidate in candidates:
            if fnmatch.fnmatch(candidate, pattern) or fnmatch.fnmatch(candidate, pattern + '/*'):
                return True
    if manifest_path:
        own = (real(posixpath.dirname(manifest_path)), posixpath.dirname(posixpath.normpath(manifest_path)))
        for d in own:
            for candidate in candidates:
                if candidate == d or candidate.startswith(d.rstrip('/') + '/'):
                    return True
    return False


def check_backup_dir(backup_dir, manifest_path, view=None):
    if not (backup_dir or '').startswith('/'):
        raise StaticPodError('backup_dir %r must be an absolute path, for example %s.' % (backup_dir, DEFAULT_BACKUP_DIR))
    if in_static_pod_dir(backup_dir, manifest_path, view):
        raise StaticPodError('backup_dir %s is inside a static-pod manifest directory (%s, or the directory of %s), where the '
                             'kubelet reads every file and would start the backup as a second pod; choose another '
                             'directory, for example %s.' % (backup_dir, ', '.join(STATIC_POD_DIRS), manifest_path, DEFAULT_BACKUP_DIR))


def read_manifest(view, path):
    """The manifest's bytes, read through ``view``; an error when it is not an existing file."""
    if not path or not path.startswith('/'):
        raise StaticPodError('path %r is relative; give the absolute path of the static pod manifest, e.g. %s.' % (path, DEFAULT_PATH))
    try:
        if view.isdir(path):
            raise StaticPodError('path %s is a directory; give the manifest file itself, e.g. %s.' % (path, DEFAULT_PATH))
        data = view.read(path)
    except ViewError as e:
        raise StaticPodError('cannot read %s: %s' % (path, e))
    if data is None:
        raise StaticPodError('path %s does not exist; this module edits the manifest kubeadm wrote (kubeadm init/join '
                             'creates it), it does not create one.' % path)
    return data


def path_kind(view, path):
    """The hostPath ``type`` that matches what ``path`` is on the node (through ``view``), or None when it does not exist."""
    st = view.stat(path)
    if st is None:
        return None
    for test, kind in ((stat.S_ISREG, 'File'), (stat.S_ISDIR, 'Directory'), (stat.S_ISSOCK, 'Socket'),
                       (stat.S_ISCHR, 'CharDevice'), (stat.S_ISBLK, 'BlockDevice')):
        if test(st.st_mode):
            return kind
    return 'other'


# -- reading --------------------------------------------------------------------------------
def _text(before, where):
    try:
        text = before.decode('utf-8')
    except UnicodeDecodeError as e:
        raise StaticPodError('%s is not UTF-8 text (%s); the kubelet reads UTF-8 YAML or JSON.' % (where, e))
    if text.replace('\r\n', '').count('\r') or any(c in text for c in _ODD_BREAKS):
        raise StaticPodError('%s uses line breaks other than LF or CRLF (a lone CR, NEL or U+2028/2029); convert them to LF '
                             'and run again.' % where)
    return text


def _nodes(root):
    stack = [root]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        yield node
        if node.kind == 'sequence':
            stack.extend(node.value)
        elif node.kind == 'mapping':
            for k, v in node.value:
                stack.extend((k, v))


def _document(text, where):
    """The manifest as a :class:`_yamledit.Document`, refusing what the kubelet would not read as one plain Pod."""
    try:
        doc = ye.Document(text, name=where)
    except gy.GoYamlError as e:
        raise StaticPodError('%s is not valid YAML as the kubelet reads it (go-yaml): %s; fix the syntax first.' % (where, e))
    if len(doc.docs) > 1:
        raise StaticPodError('%s holds %d YAML documents; a static pod manifest is one Pod. Split it into one file per pod.'
                             % (where, len(doc.docs)))
    if doc.root is None or (doc.root.kind == 'scalar' and doc.root.value == '' and doc.root.style == 'plain'):
        raise StaticPodError('%s is empty; it is not a static pod manifest.' % where)
    for node in _nodes(doc.root):
        if node.kind == 'alias':
            raise StaticPodError('%s uses YAML anchors and aliases (*%s, line %d); this module edits plain manifests only. '
                                 'Write the values out and run again.' % (where, node.value, node.line + 1))
        if node.tag is not None and node.tag not in _PLAIN_TAGS:
            raise StaticPodError('%s cannot be read safely: line %d carries the tag %s; the kubelet reads plain YAML '
                                 'without language tags. Remove the tag.' % (where, node.line + 1, gy.short_tag(node.tag)))
        if node.kind == 'mapping':
            seen = {}
            for k, _v in node.value:
                if k.kind != 'scalar':
                    continue
                key = gy.decode(k, 'keep', where)
                ident = (gy.go_type(key), key)
                if ident in seen:
                    raise StaticPodError('%s: the key %r appears twice at line %d and %d; the kubelet would read only one of '
                                         'them. Remove one and run again.' % (where, key, seen[ident] + 1, k.line + 1))
                seen[ident] = k.line
    return doc


def _data(doc, where):
    """What the kubelet reads from the document (strict go-yaml), mappings as dicts."""
    try:
        value = gy.decode(doc.root, 'error', where)
    except gy.GoYamlError as e:
        raise StaticPodError('%s cannot be read as the kubelet reads it: %s' % (where, e))
    return value.to_dict() if isinstance(value, gy.Pairs) else value


def _comment_arg(arg):
    """``arg`` as it stands in an owner comment: as is when printable, else as a JSON string."""
    return arg if arg.isprintable() else ye.render_string(arg)


def _owner_of(comments):
    """(the argument an owner comment names, that comment's text), or (None, None)."""
    for c in comments:
        if c.startswith(OWNER):
            rest = c[len(OWNER):]
            if rest.startswith('"'):
                try:
                    rest = json.loads(rest)
                except ValueError:
                    continue
            return rest, c
    return None, None


def _list_of(value):
    return value if isinstance(value, list) else []


class _Pod:
    """One reading of the manifest: its data as the kubelet reads it and the places this module edits."""

    def __init__(self, doc, where, container=None):
        self.doc = doc
        self.where = where
        self.load()
        data = self.data
        if not isinstance(data, dict):
            raise StaticPodError('%s is not a Kubernetes object (the document is not a mapping).' % where)
        kind = data.get('kind')
        if kind != 'Pod':
            raise StaticPodError('%s is not a Pod (kind: %s); give the static pod manifest, e.g. %s.'
                                 % (where, 'missing' if 'kind' not in data else kind, DEFAULT_PATH))
        spec = data.get('spec')
        if not isinstance(spec, dict):
            raise StaticPodError('%s has no spec mapping; it is not a usable Pod manifest.' % where)
        containers = spec.get('containers')
        if not isinstance(containers, list) or not containers:
            raise StaticPodError('%s has no containers (spec.containers is missing or empty).' % where)
        for i, c in enumerate(containers):
            if not isinstance(c, dict):
                raise StaticPodError('%s: spec.containers[%d] is not a mapping.' % (where, i))
        self.index = self._pick(container)
        self.cpath = _CONTAINERS + (self.index,)
        self.command_path = self.cpath + ('command',)
        self.mounts_path = self.cpath + ('volumeMounts',)
        c = containers[self.index]
        self.name = c.get('name') if isinstance(c.get('name'), str) else str(self.index)
        if 'command' not in c:
            raise StaticPodError('%s: container %s has no command; this module adds to an explicit command list, as kubeadm '
                                 'writes one. Adding one would replace the image\'s entrypoint.' % (where, self.name))
        command = c['command']
        if not isinstance(command, list):
            raise StaticPodError('%s: command of container %s is not a list (line %d).' % (where, self.name, self.line(self.command_path)))
        if not command:
            raise StaticPodError('%s: command of container %s is empty (line %d); an argument added to it would become the '
                                 'program. Write the program first.' % (where, self.name, self.line(self.command_path)))
        for i, item in enumerate(command):
            if not isinstance(item, str):
                raise StaticPodError('%s: command of container %s holds a non-string item at line %d.'
                                     % (where, self.name, self.line(self.command_path + (i,))))
        self._check_list(self.mounts_path, 'containers[%d].volumeMounts' % self.index, 'mounts')
        self._check_list(_VOLUMES, 'spec.volumes', 'volumes')

    def load(self):
        self.data = _data(self.doc, self.where)

    def line(self, path):
        node = self.doc.find(path)
        return node.line + 1 if node is not None else 0

    def _pick(self, container):
        names = [c.get('name') for c in self.data['spec']['containers']]
        if container:
            if container not in names:
                raise StaticPodError('%s has no container named %s (containers: %s).' % (self.where, container, ', '.join(str(n) for n in names)))
            return names.index(container)
        metadata = self.data.get('metadata')
        pod_name = metadata.get('name') if isinstance(metadata, dict) else None
        return names.index(pod_name) if pod_name in names else 0

    def _check_list(self, path, label, what):
        value = self.get(path)
        if value is None:
            return
        if not isinstance(value, list):
            raise StaticPodError('%s: %s (line %d) is not a list of %s; write it as a list, as kubeadm does.'
                                 % (self.where, label, self.line(path), what))
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise StaticPodError('%s: an item of %s (line %d) is not a mapping.' % (self.where, label, self.line(path + (i,))))

    # -- data
    def get(self, path):
        value = self.data
        for step in path:
            if isinstance(value, dict):
                value = value.get(step)
            elif isinstance(value, list) and isinstance(step, int) and -len(value) <= step < len(value):
                value = value[step]
            else:
                return None
        return value

    def argv(self):
        return list(self.get(self.command_path))

    @property
    def args_path(self):
        return self.cpath + ('args',)

    def args(self):
        """The container's ``args`` (they follow ``command`` on the process's command line), as text."""
        return [a if isinstance(a, str) else str(a) for a in _list_of(self.get(self.args_path))]

    def flags(self):
        """Every flag the process reads, pflag's way (``_pflag``), with where it stands: [(Flag, path of its first
        word)] over ``command`` (after the program) then ``args``."""
        command, args = self.argv(), self.args()
        words = command[1:] + args
        out = []
        for flag in pflag.parse(words):
            at = flag.start + 1
            path = self.command_path + (at,) if at < len(command) else self.args_path + (at - len(command),)
            out.append((flag, path))
        return out

    def place(self, path):
        """``command`` or ``args`` and the line of the item at ``path``, for a message."""
        return '%s (line %d)' % ('args' if path[:len(self.args_path)] == self.args_path else 'command', self.line(path))

    def volumes(self):
        """[(index, name, normalised hostPath path or None)]."""
        out = []
        for i, v in enumerate(_list_of(self.get(_VOLUMES))):
            host = v.get('hostPath')
            path = host.get('path') if isinstance(host, dict) else None
            out.append((i, v.get('name'), posixpath.normpath(path) if isinstance(path, str) and path.startswith('/') else None))
        return out

    def mounts(self, index=None):
        """[(index, name, normalised mountPath, has subPath)] of a container (ours by default)."""
        out = []
        c = self.data['spec']['containers'][self.index if index is None else index]
        for i, m in enumerate(_list_of(c.get('volumeMounts'))):
            mp = m.get('mountPath')
            out.append((i, m.get('name'), posixpath.normpath(mp) if isinstance(mp, str) and mp else mp,
                        bool(m.get('subPath') or m.get('subPathExpr'))))
        return out

    # -- comments
    def _entries(self, path):
        node = self.doc.find(path)
        if node is None or node.kind != 'sequence':
            return []
        return self.doc.items(path)

    def _rest_of_line(self, offset):
        text = self.doc.text
        end = text.find('\n', offset)
        return text[offset:len(text) if end < 0 else end].rstrip('\r')

    def marked(self, i):
        """Whether command item ``i`` carries our mark (the line above, or at its end as earlier versions wrote it)."""
        entry = self._entries(self.command_path)[i]
        return MARK in entry.comments or bool(_LEGACY_MARK.match(self._rest_of_line(entry.node.end)))

    def commentable(self, path):
        """Whether a comment can stand above the items of the list at ``path`` (block style, not JSON)."""
        return self.doc.accepts_comment(path)

    def owners(self, path):
        """{index: (owner argument or None, owner comment or None)} of the items of the list at ``path``."""
        return dict((e.index, _owner_of(e.comments)) for e in self._entries(path))

    def key_mark(self, parent, key):
        """How the key ``key`` of the mapping at ``parent`` is marked as ours: 'mark', 'legacy' or None."""
        node = self.doc.find(parent)
        if node is None or node.kind != 'mapping':
            return None
        for e in self.doc.entries(parent):
            if e.key == key:
                if MARK in e.comments:
                    return 'mark'
                rest = self._rest_of_line(e.key_node.end).lstrip(' \t')
                if rest.startswith(':') and _LEGACY_MARK.match(rest[1:]):
                    return 'legacy'
        return None


def _covers(mount_path, path):
    return path == mount_path or path.startswith(mount_path.rstrip('/') + '/')


def _slug(path):
    return re.sub(r'[^a-z0-9]+', '-', path.lower()).strip('-') or 'root'


def named_for(prefix, name, path):
    """Whether ``name`` is a name :func:`volume_name` gives the volume of ``path`` (with or without its hash)."""
    if not isinstance(name, str) or path is None:
        return False
    full = '%s-%s' % (prefix, _slug(path))
    if name == full:
        return True
    base, dash, digest = name.rpartition('-')
    return bool(dash) and re.match(r'^[0-9a-f]{8}$', digest) is not None and full.startswith(base)


def volume_name(prefix, path, taken):
    """A DNS-1123 label for the volume of ``path``: ``<prefix>-<path as a slug>``, hashed when too long or taken."""
    slug = _slug(path)
    name = '%s-%s' % (prefix, slug)
    if len(name) <= 63 and name not in taken:
        return name
    n = 0
    while True:
        digest = hashlib.sha256(('%s\0%d' % (path, n)).encode('utf-8', 'surrogatepass')).hexdigest()[:8]
        room = 63 - len(prefix) - 2 - len(digest)
        base = slug[:room].strip('-')
        name = '-'.join(p for p in (prefix, base, digest) if p)
        if name not in taken:
            return name
        n += 1


# -- the edits --------------------------------------------------------------------------------
class _Editor:
    """The edits of one run, each a :mod:`_yamledit` call on the pod's document, the data read again after each."""

    def __init__(self, pod):
        self.pod = pod

    @property
    def doc(self):
        return self.pod.doc

    def _do(self, edit, *args, **kwargs):
        try:
            edit(*args, **kwargs)
        except gy.GoYamlError as e:
            raise StaticPodError('%s: %s; nothing was written.' % (self.pod.where, e))
        self.pod.load()

    def append_arg(self, arg):
        path = self.pod.command_path
        self._do(self.doc.append, path, arg, comment=MARK if self.pod.commentable(path) else None)

    def remove_arg(self, i):
        path = self.pod.command_path + (i,)
        self._do(self.doc.remove, path, comment=MARK if self.pod.marked(i) else None)

    def add_item(self, parent, key, item, owner):
        """Append ``item`` to the list ``key`` of the mapping at ``parent``; create the key (marked) when missing."""
        path = parent + (key,)
        comment = OWNER + _comment_arg(owner)
        if self.doc.find(path) is not None:
            self._do(self.doc.append, path, item, comment=comment if self.pod.commentable(path) else None)
        elif self.pod.commentable(parent):
            self._do(self.doc.add_key, parent, key, None, comment=MARK)
            self._do(self.doc.append, path, item, comment=comment)
        else:
            self._do(self.doc.add_key, parent, key, [item])

    def remove_item(self, parent, key, index):
        """Remove item ``index`` of the list ``key`` at ``parent`` (its owner comment too); a list it empties goes
        back to what it was: a key we created goes, a ``key:`` we filled is null again."""
        path = parent + (key,)
        comment = self.pod.owners(path).get(index, (None, None))[1]
        if len(self.pod.get(path)) > 1:
            self._do(self.doc.remove, path + (index,), comment=comment)
            return
        mark = self.pod.key_mark(parent, key)
        node = self.doc.find(path)
        if mark is not None or not self.pod.commentable(parent):
            # a key this module created (a JSON or flow mapping cannot say so: there, an emptied list is taken to be ours)
            self._do(self.doc.remove, path + (index,), comment=comment)
            self._do(self.doc.remove, path, comment=MARK if mark == 'mark' else None)
        elif node.style == 'block':
            self.restore_null(path, index, comment)
        else:
            self._do(self.doc.remove, path + (index,), comment=comment)

    def restore_null(self, path, index, comment):
        """Remove the only item of the block list at ``path`` (and ``comment`` directly above it), leaving ``key:``.

        ``_yamledit`` would leave ``key: []``; the list was ``key:`` before this module appended to it. The lines
        of the item are deleted and the result must read as before with that list null.
        """
        doc = self.doc
        text = doc.text
        node = doc.find(path + (index,))
        dash = node.start - 1
        while dash >= 0 and text[dash] in ' \t\r\n':
            dash -= 1
        top = text.rfind('\n', 0, max(dash, 0)) + 1
        if dash < 0 or text[dash] != '-' or text[top:dash].strip(' '):
            self._do(doc.remove, path + (index,), comment=comment)
            return
        if comment and top > 0:
            above = text.rfind('\n', 0, top - 1) + 1
            line = text[above:top].rstrip('\r\n')
            if line.strip(' ') == comment and len(line) - len(line.lstrip(' ')) == dash - top:
                top = above
        end = text.find('\n', node.end)
        end = len(text) if end < 0 else end + 1
        if end == len(text) and not text.endswith('\n') and top > 0:
            top -= 2 if text[top - 2:top] == '\r\n' else 1
        expected = copy.deepcopy(self.pod.data)
        parent = expected
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = None
        try:
            new = ye.Document(_cut(text, top, end), name=self.pod.where)
            ok = _data(new, self.pod.where) == expected and len(new.docs) == len(doc.docs)
        except (gy.GoYamlError, StaticPodError):
            ok = False
        if not ok:
            raise StaticPodError('%s: removing the last item of %s would change more than that list; nothing was written. '
                                 'Please report this with the manifest.' % (self.pod.where, '.'.join(str(p) for p in path)))
        self.pod.doc = new
        self.pod.load()


def _cut(text, start, end):
    """``text`` without ``text[start:end]``."""
    return text[:start] + text[end:]


def _hint_for(flag):
    if flag == 'config':
        return (' kube-scheduler reads one --config: add the extender to that file instead (baremetal.k3s.scheduler_config '
                'merges into it), or remove it first.')
    return ' Change or remove that argument first (state=absent with the same value, if this module added it).'


# -- the plan ---------------------------------------------------------------------------------
def plan(view, params, check_mode=False):
    """What the module does to the manifest: a Plan with (at most) one Change, and its facts.

    ``params``: the module's options (path, container, arg, state, mounts, mount_arg_path,
    volume_prefix, backup, backup_dir). ``check_mode``: a mount path that does not exist yet
    counts as a file (an earlier task may create it), with a warning. Facts: path, container,
    command, volumes (ours), restart_expected. Raises :class:`StaticPodError` (a PlanError).
    """
    path = params.get('path') or DEFAULT_PATH
    try:
        return _plan(view, params, path, check_mode)
    except StaticPodError as e:
        e.details.setdefault('path', path)
        raise


def _plan(view, params, path, check_mode):
    if not HAS_PYYAML:
        raise StaticPodError('PyYAML is required on the node to read the manifest (%s).' % gy.PYYAML_PACKAGES)
    arg = params.get('arg')
    flag = validate_arg(arg)
    state = params.get('state') or 'present'
    prefix = params.get('volume_prefix') or DEFAULT_PREFIX
    validate_prefix(prefix)
    mounts = validate_mounts(params.get('mounts'))
    own_path = arg_path(arg) if params.get('mount_arg_path', True) else None
    if own_path == '/':
        own_path = None
    needed = ([own_path] if own_path else []) + [m for m in mounts if m != own_path]

    before = read_manifest(view, path)
    if params.get('backup'):
        check_backup_dir(params.get('backup_dir') or DEFAULT_BACKUP_DIR, path, view)
    pod = _Pod(_document(_text(before, path), path), path, container=params.get('container'))
    ed = _Editor(pod)
    warnings = []
    kinds = _path_kinds(view, needed, own_path, check_mode, warnings) if state == 'present' else {}
    argv = pod.argv()
    same = [i for i, a in enumerate(argv) if a == arg]
    owned = [i for i in same if _claims(pod, i, arg, own_path, prefix)]
    elsewhere = _given_elsewhere(pod, arg, flag)
    if state == 'present':
        _refuse_other_value(pod, path, arg, flag)
        if elsewhere and not owned:
            warnings.append('container %s already gets %s as %s in its %s, not added by this module; left as it is '
                            '(its process reads command and args as one command line).'
                            % (pod.name, arg, elsewhere[0], elsewhere[1]))
        elif same and not owned:
            missing = [p for p in needed if not _covered(pod, p)]
            warnings.append('%s is already in the command of container %s, not added by this module (no "%s" comment, no '
                            'volume of ours for its path); left as it is.%s'
                            % (arg, pod.name, MARK, (' These paths are not mounted into the container: %s; mount them '
                                                     'yourself, or remove the argument so that this module manages it.'
                                                     % ', '.join(missing)) if missing else ''))
        else:
            if not same:
                ed.append_arg(arg)
            _ensure_mounts(ed, needed, kinds, prefix, arg)
            _drop_unlisted(ed, arg, needed, prefix, warnings)
    else:
        if elsewhere and not owned:
            warnings.append('container %s gets %s as %s in its %s, not added by this module; left in place. Remove it by '
                            'hand if it should go.' % (pod.name, arg, elsewhere[0], elsewhere[1]))
        elif same and not owned:
            warnings.append('%s is in the command of container %s but was not added by this module (no "%s" comment, no '
                            'volume of ours for its path); left in place. Remove it by hand if it should go.' % (arg, pod.name, MARK))
        for i in reversed(owned):
            ed.remove_arg(i)
        _remove_mounts(ed, arg, needed, prefix, warnings)
    return _finish(view, path, before, ed.pod, prefix, warnings)


def _path_kinds(view, needed, own_path, check_mode, warnings):
    """{path: hostPath type} of the paths to mount, each looked up through ``view``; an error when one is missing."""
    kinds = {}
    missing = []
    for p in needed:
        kind = path_kind(view, p)
        if kind is None and check_mode:
            missing.append(p)
            kind = 'File'
        if kind is None:
            raise StaticPodError('%s does not exist on the node. The kubelet refuses a hostPath volume of type File or Directory '
                                 'whose path is missing, and the pod would never start again. Create it first (for example '
                                 'with baremetal.k3s.scheduler_config), then run this task.%s'
                                 % (p, ' If %s is not a file of the node (a URL path, a path inside the image), set '
                                       'mount_arg_path=false.' % p if p == own_path else ''))
        if kind == 'other':
            raise StaticPodError('%s is neither a file, a directory, a socket nor a device; it cannot be a hostPath volume.' % p)
        kinds[p] = kind
    if missing:
        warnings.append('%s does not exist yet; check mode assumed a file. The real run fails unless an earlier task creates it.'
                        % ', '.join(sorted(missing)))
    return kinds


def _refuse_other_value(pod, path, arg, flag):
    """An error when the process already gets ``--flag`` with another value than ``arg`` (in ``command`` or ``args``,
    in any spelling pflag reads as that flag: ``-v=2`` for ``--v``)."""
    dummy, wanted = pflag.split(arg)
    for found, where in pod.flags():
        if found.name != pflag.normalize(flag) or found.value == wanted:
            continue
        raise StaticPodError('%s already has %s in the %s of container %s, a different value for --%s than %s (its process '
                             'reads command and args as one command line, and pflag reads both spellings as one flag).%s'
                             % (path, found.text, pod.place(where), pod.name, flag, arg, _hint_for(flag)))


def _given_elsewhere(pod, arg, flag):
    """Where the process already gets exactly ``arg``'s flag and value other than as the item ``arg`` of ``command``
    (in ``args``, or spelled otherwise: ``-v=4``, ``--config /x``): the text and its place, else None."""
    dummy, wanted = pflag.split(arg)
    for found, where in pod.flags():
        if found.name == pflag.normalize(flag) and found.value == wanted and not (
                found.text == arg and where[:len(pod.command_path)] == pod.command_path):
            return found.text, pod.place(where)
    return None


def _finish(view, path, before, pod, prefix, warnings):
    """The Plan of the edited ``pod``: its one Change and the facts."""
    after = pod.doc.text.encode('utf-8')
    change = Change(path, before, after)
    if change.action and any(fnmatch.fnmatch(p, d + '/*') for d in RKE2_STYLE_DIRS
                             for p in (posixpath.normpath(path), view.realpath(path))):
        warnings.append('%s is written by RKE2 on every start, so this change is lost at its next restart; give kube-scheduler-arg '
                        'and kube-scheduler-extra-mount in the RKE2 config file instead (baremetal.k3s.k3s_service_arg).' % path)
    facts = {
        'path': path,
        'container': pod.name,
        'command': pod.argv(),
        'volumes': _ours(pod, prefix),
        'restart_expected': change.action is not None,
    }
    return Plan([change], facts=facts, warnings=warnings)


def _ours(pod, prefix):
    return [n for dummy, n, dummy2 in pod.volumes() if isinstance(n, str) and n.startswith(prefix + '-')]


def _our_volumes(pod, prefix):
    """[(name, hostPath path, owner argument or None)] of the volumes this module owns (by the prefix)."""
    owners = pod.owners(_VOLUMES)
    return [(n, hp, owners.get(i, (None, None))[0]) for i, n, hp in pod.volumes()
            if isinstance(n, str) and n.startswith(prefix + '-')]


def _claims(pod, i, arg, own_path, prefix):
    """Whether the command item ``i`` (equal to ``arg``, the argument asked for) was added by this module.

    Ours: marked; in a command list that cannot carry a comment (flow style, JSON), always; or
    a volume of ours serves it (its owner comment names it, or, without one, it mounts ``own_path``).
    """
    if pod.marked(i) or not pod.commentable(pod.command_path):
        return True
    return any(owner == arg or (owner is None and own_path and hp == own_path)
               for dummy, hp, owner in _our_volumes(pod, prefix))


def _other_ours(pod, arg, prefix):
    """The arguments of the command other than ``arg`` that this module added (marked, or served by a volume of ours)."""
    volumes = _our_volumes(pod, prefix)
    out = []
    for i, a in enumerate(pod.argv()):
        if a == arg:
            continue
        p = arg_path(a)
        if pod.marked(i) or any(owner == a or (owner is None and p is not None and hp == p) for dummy, hp, owner in volumes):
            out.append(a)
    return out


def _covered(pod, path):
    """Whether a hostPath volume mounted at its own host path (no subPath) already shows ``path`` in our container."""
    volumes = {n: hp for dummy, n, hp in pod.volumes()}
    for dummy, name, mount_path, sub in pod.mounts():
        if sub or not isinstance(mount_path, str) or not mount_path.startswith('/'):
            continue
        if volumes.get(name) == mount_path and _covers(mount_path, path):
            return True
    return False


def _ensure_mounts(ed, needed, kinds, prefix, arg):
    # a path inside a directory that is itself to be mounted needs no mount of its own
    needed = [p for p in needed if not any(q != p and _covers(q, p) for q in needed)]
    for p in needed:
        pod = ed.pod
        if _covered(pod, p):
            continue
        for dummy, name, mount_path, sub in pod.mounts():
            if mount_path == p:
                raise StaticPodError('%s: container %s already mounts volume %s at %s%s, not the host path %s; the kubelet refuses '
                                     'two mounts at one path. Remove that mount or mount the host path there yourself.'
                                     % (pod.where, pod.name, name, p, ' (with a subPath)' if sub else '', p))
        ours = [n for n, hp, dummy in _our_volumes(pod, prefix) if hp == p]
        if ours:
            name = ours[0]
        else:
            taken = set(n for dummy, n, dummy2 in pod.volumes())
            for c in range(len(pod.data['spec']['containers'])):
                taken.update(n for dummy, n, dummy2, dummy3 in pod.mounts(c))
            name = volume_name(prefix, p, taken)
            ed.add_item(('spec',), 'volumes', {'hostPath': {'path': p, 'type': kinds[p]}, 'name': name}, arg)
        ed.add_item(ed.pod.cpath, 'volumeMounts', {'mountPath': p, 'name': name, 'readOnly': True}, arg)


def _remove_mounts(ed, arg, needed, prefix, warnings):
    """Remove the volumes (and their mounts) of ours that served ``arg``, and those no argument of ours needs any more.

    Items go from the last to the first, so that each removed one is the last of its list: the comments
    someone put between them stay where they are.
    """
    pod = ed.pod
    remaining = pod.argv()
    others = _other_ours(pod, arg, prefix)
    going = []
    for name, hp, owner in _our_volumes(pod, prefix):
        if owner is not None and owner != arg and owner in remaining:
            if hp in needed:
                warnings.append('kept volume %s (%s): %s still needs it.' % (name, hp, owner))
            continue
        kept = owner == arg or hp in needed or (owner is not None and owner not in remaining)
        if not (kept or (owner is None and not others and named_for(prefix, name, hp))):
            continue
        still = [a for a in remaining if hp is not None and arg_path(a) is not None and _covers(hp, arg_path(a))]
        if still:
            warnings.append('kept volume %s (%s): %s still needs it.' % (name, hp, still[0]))
            continue
        going.append((name, hp))
    _drop_volumes(ed, going, warnings)


def _drop_unlisted(ed, arg, needed, prefix, warnings):
    """With ``arg`` present: the volumes of ours for ``arg`` whose path is no longer among ``needed`` go.

    One of the extender's TLS files left out of ``mounts`` (its extender taken out of the list) is no
    longer mounted. Only volumes whose owner comment names ``arg``: one without a comment may be anyone's.
    """
    _drop_volumes(ed, [(name, hp) for name, hp, owner in _our_volumes(ed.pod, prefix) if owner == arg and hp not in needed],
                  warnings)


def _drop_volumes(ed, going, warnings):
    """Remove the volumes ``going`` ([(name, host path)]) and their mounts in our container; one another container mounts stays."""
    pod = ed.pod
    for i, n, dummy, dummy2 in reversed(pod.mounts()):
        if any(n == name for name, dummy3 in going):
            ed.remove_item(ed.pod.cpath, 'volumeMounts', i)
    pod = ed.pod
    shared = set()
    for name, hp in going:
        if any(n == name for c in range(len(pod.data['spec']['containers'])) if c != pod.index
               for dummy, n, dummy2, dummy3 in pod.mounts(c)):
            warnings.append('kept volume %s (%s): another container of the pod mounts it.' % (name, hp))
            shared.add(name)
    for i, n, dummy in reversed(pod.volumes()):
        if n not in shared and any(n == name for name, dummy2 in going):
            ed.remove_item(('spec',), 'volumes', i)
