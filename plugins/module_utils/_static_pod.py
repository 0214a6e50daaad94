# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.static_pod_arg``: one argument (and its hostPath mounts) in a static pod.

No Ansible import. :func:`plan` takes the manifest's bytes and the module's options and
returns the new bytes; the module writes them through ``_io.write_file``.

Editing technique: a structure-guided line editor, not a YAML re-dump. PyYAML composes the
document (nodes with their character positions); every change is a whole-line insertion
after a node's last line, or the deletion of lines this module inserted. Nothing else in
the file is re-rendered, so every byte the module does not own is kept, and present then
absent gives back the original bytes (line endings, comments, quoting, a missing final line
break included). After the edits the new text is parsed again and must hold exactly the
old data plus (or minus) our entries; otherwise nothing is written.

What the module owns, and how it recognises it later:
- the argument, when its line carries the comment ``# baremetal.k3s.static_pod_arg``, or
  when one of our volumes mounts the path the argument names;
- volumes whose name starts with ``<volume_prefix>-``, and the volumeMounts naming them;
- a ``volumeMounts:`` / ``volumes:`` key it had to create (its line carries the same comment),
  removed again when it is empty.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import posixpath
import re
import stat

try:
    import yaml
    HAS_PYYAML = True
    PYYAML_IMPORT_ERROR = None
except ImportError as _e:  # pragma: no cover - depends on the node
    yaml = None
    HAS_PYYAML = False
    PYYAML_IMPORT_ERROR = _e

MARKER = 'baremetal.k3s.static_pod_arg'
DEFAULT_PATH = '/etc/kubernetes/manifests/kube-scheduler.yaml'
DEFAULT_PREFIX = 'baremetal-k3s'
DEFAULT_BACKUP_DIR = '/var/backups/baremetal-k3s'
# Directories the kubelet reads pod manifests from: every file there (not starting with '.') is a
# pod, every subdirectory an error, so no copy or config of ours may ever be written there.
STATIC_POD_DIRS = ('/etc/kubernetes/manifests', '/var/lib/rancher/*/agent/pod-manifests')
RKE2_STYLE_DIRS = ('/var/lib/rancher/*/agent/pod-manifests',)
MAX_PREFIX = 40

_LABEL = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')
_PLAIN = re.compile(r'^[A-Za-z0-9._/=,:@%+~^-]+$')
_MARKER_COMMENT = re.compile(r'^[ \t]*#.*\b' + re.escape(MARKER) + r'\b')
_ODD_BREAKS = ('\x85', '\u2028', '\u2029')


class StaticPodError(Exception):
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
    if arg != arg.strip():
        raise StaticPodError('arg %r starts or ends with white space; remove it.' % arg)
    if not arg.startswith('--') or len(arg) < 3 or arg[2] in '=-':
        raise StaticPodError('arg %r is not a flag: it must start with "--" and a name, e.g. --config=/etc/kubernetes/scheduler/config.yaml.' % arg)
    return flag_name(arg)


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
    if not prefix or len(prefix) > MAX_PREFIX or not _LABEL.match(prefix):
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
        if not m.startswith('/'):
            raise StaticPodError('mount %r is relative; give the absolute path on the node (it is mounted at the same path '
                                 'in the container).' % m)
        p = posixpath.normpath(m)
        if p == '/':
            raise StaticPodError('mount "/" would hide the whole container file system; name the files or directories needed.')
        if p not in out:
            out.append(p)
    return out


def in_static_pod_dir(directory, manifest_path=None):
    """Whether ``directory`` is (inside) a static-pod manifest directory, or the directory of ``manifest_path``."""
    candidates = (os.path.realpath(directory), os.path.abspath(directory))
    for pattern in STATIC_POD_DIRS:
        for candidate in candidates:
            if fnmatch.fnmatch(candidate, pattern) or fnmatch.fnmatch(candidate, pattern + '/*'):
                return True
    if manifest_path:
        own = (os.path.realpath(os.path.dirname(manifest_path)), os.path.dirname(os.path.abspath(manifest_path)))
        for d in own:
            for candidate in candidates:
                if candidate == d or candidate.startswith(d.rstrip('/') + '/'):
                    return True
    return False


def check_backup_dir(backup_dir, manifest_path):
    if not os.path.isabs(backup_dir or ''):
        raise StaticPodError('backup_dir %r must be an absolute path, for example %s.' % (backup_dir, DEFAULT_BACKUP_DIR))
    if in_static_pod_dir(backup_dir, manifest_path):
        raise StaticPodError('backup_dir %s is inside a static-pod manifest directory (%s, or the directory of %s), where the '
                             'kubelet reads every file and would start the backup as a second pod; choose another '
                             'directory, for example %s.' % (backup_dir, ', '.join(STATIC_POD_DIRS), manifest_path, DEFAULT_BACKUP_DIR))


def check_manifest_path(path):
    if not path or not os.path.isabs(path):
        raise StaticPodError('path %r is relative; give the absolute path of the static pod manifest, e.g. %s.' % (path, DEFAULT_PATH))
    if os.path.isdir(path):
        raise StaticPodError('path %s is a directory; give the manifest file itself, e.g. %s.' % (path, DEFAULT_PATH))
    if not os.path.exists(path):
        raise StaticPodError('path %s does not exist; this module edits the manifest kubeadm wrote (kubeadm init/join '
                             'creates it), it does not create one.' % path)


def path_kind(path):
    """The hostPath ``type`` that matches what ``path`` is on the node, or None when it does not exist."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    for test, kind in ((stat.S_ISREG, 'File'), (stat.S_ISDIR, 'Directory'), (stat.S_ISSOCK, 'Socket'),
                       (stat.S_ISCHR, 'CharDevice'), (stat.S_ISBLK, 'BlockDevice')):
        if test(st.st_mode):
            return kind
    return 'other'


# -- text ----------------------------------------------------------------------------------
def _line_start(text, i):
    return text.rfind('\n', 0, i) + 1


def _line_end(text, i):
    j = text.find('\n', i)
    return len(text) if j < 0 else j + 1


def _insert(text, pos, block, nl):
    """Insert whole lines ``block`` (each ending in ``nl``) at the line start ``pos``."""
    if pos == len(text) and text and not text.endswith('\n'):
        # the last line has no line break: give it ours, and leave the new last line without one
        return text + nl + block[:-len(nl)]
    return text[:pos] + block + text[pos:]


def _delete(text, start, end):
    """Delete whole lines [start, end); the mirror image of :func:`_insert`."""
    if end == len(text) and not text.endswith('\n') and start > 0:
        start -= 2 if text[max(start - 2, 0):start] == '\r\n' else 1
    return text[:start] + text[end:]


def _newline(text):
    lf = text.count('\n')
    return '\r\n' if lf and text.count('\r\n') == lf else '\n'


def _is_block(node):
    return isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and not node.flow_style


def _is_empty(node):
    return isinstance(node, yaml.ScalarNode) and node.value == '' and node.style is None and node.tag == 'tag:yaml.org,2002:null'


def _last_char(text, node):
    """Index of the last character that belongs to ``node`` (comments after it excluded)."""
    leaf = node
    while _is_block(leaf) and leaf.value:
        leaf = leaf.value[-1][1] if isinstance(leaf, yaml.MappingNode) else leaf.value[-1]
    i = leaf.end_mark.index
    while i > 0 and text[i - 1] in ' \t\r\n':
        i -= 1
    return i - 1


def _dash(text, item):
    """Index of the ``-`` that starts the sequence item ``item``."""
    j = item.start_mark.index - 1
    while j >= 0 and text[j] in ' \t\r\n':
        j -= 1
    if j < 0 or text[j] != '-' or text[_line_start(text, j):j].strip(' '):
        raise StaticPodError('cannot find the "-" of the list item at line %d; write the list in block style, one "- " per item.'
                             % (item.start_mark.line + 1))
    return j


def _item_span(text, item):
    start = _line_start(text, _dash(text, item))
    return start, _line_end(text, _last_char(text, item))


def _rest_of_line(text, i):
    return text[i:_line_end(text, i)].rstrip('\r\n')


def _double_quoted(value):
    out = []
    for c in value:
        o = ord(c)
        if c in '"\\':
            out.append('\\' + c)
        elif 0x20 <= o < 0x7f:
            out.append(c)
        elif o <= 0xff:
            out.append('\\x%02x' % o)
        elif o <= 0xffff:
            out.append('\\u%04x' % o)
        else:
            out.append('\\U%08x' % o)
    return '"%s"' % ''.join(out)


def render_scalar(value):
    """``value`` as a YAML scalar that reads back as the same string in a list item and as a mapping value."""
    candidates = []
    if _PLAIN.match(value):
        candidates.append(value)
    if value.isprintable():
        candidates.append("'%s'" % value.replace("'", "''"))
    candidates.append(_double_quoted(value))
    for cand in candidates:
        try:
            if (yaml.safe_load('- %s  # c\n' % cand) == [value]
                    and yaml.safe_load('k: %s  # c\n' % cand) == {'k': value}):
                return cand
        except yaml.YAMLError:
            continue
    raise StaticPodError('cannot write %r as a YAML string.' % value)  # pragma: no cover - double quotes always work


# -- the manifest ---------------------------------------------------------------------------
def _get(node, key, where):
    """(key node, value node) of ``key`` in the mapping ``node``, or None; a repeated key is refused."""
    found = None
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            if found is not None:
                raise StaticPodError('%s: the key %r appears twice at line %d and %d; the kubelet would read only one of '
                                     'them. Remove one and run again.' % (where, key, found[0].start_mark.line + 1, k.start_mark.line + 1))
            found = (k, v)
    return found


def _scalar(node):
    return node.value if isinstance(node, yaml.ScalarNode) else None


class Pod:
    """One parse of the manifest text: the nodes this module reads or edits, and the data."""

    def __init__(self, text, where, container=None, index=None):
        self.text = text
        self.where = where
        try:
            events = list(yaml.parse(text, Loader=yaml.SafeLoader))
        except yaml.YAMLError as e:
            raise StaticPodError('%s is not valid YAML: %s; fix the syntax first (the kubelet cannot read it either).' % (where, e))
        documents = sum(1 for e in events if isinstance(e, yaml.DocumentStartEvent))
        if documents > 1:
            raise StaticPodError('%s holds %d YAML documents; a static pod manifest is one Pod. Split it into one file per pod.'
                                 % (where, documents))
        if any(isinstance(e, yaml.AliasEvent) for e in events):
            raise StaticPodError('%s uses YAML anchors and aliases (*name); this module edits plain manifests only. '
                                 'Write the values out and run again.' % where)
        try:
            self.root = yaml.compose(text, Loader=yaml.SafeLoader)
            self.data = yaml.load(text, Loader=yaml.SafeLoader)  # nosec B506 - SafeLoader
        except yaml.YAMLError as e:
            raise StaticPodError('%s cannot be read safely: %s; the kubelet reads plain YAML without language tags.' % (where, e))
        root = self.root
        if root is None or _is_empty(root):
            raise StaticPodError('%s is empty; it is not a static pod manifest.' % where)
        if not isinstance(root, yaml.MappingNode):
            raise StaticPodError('%s is not a Kubernetes object (the document is not a mapping).' % where)
        if root.flow_style:
            raise StaticPodError('%s is written in YAML flow style ({...}). This module only edits block-style YAML, as kubeadm '
                                 'writes it, so that it can keep every other byte; rewrite it in block style and run again.' % where)
        kind = _get(root, 'kind', where)
        if kind is None or _scalar(kind[1]) != 'Pod':
            raise StaticPodError('%s is not a Pod (kind: %s); give the static pod manifest, e.g. %s.'
                                 % (where, _scalar(kind[1]) if kind else 'missing', DEFAULT_PATH))
        spec = _get(root, 'spec', where)
        if spec is None or not isinstance(spec[1], yaml.MappingNode):
            raise StaticPodError('%s has no spec mapping; it is not a usable Pod manifest.' % where)
        self.spec = spec[1]
        if self.spec.flow_style:
            raise StaticPodError('%s: spec is written in flow style ({...}); write it in block style, as kubeadm does.' % where)
        containers = _get(self.spec, 'containers', where)
        if containers is None or not isinstance(containers[1], yaml.SequenceNode) or not containers[1].value:
            raise StaticPodError('%s has no containers (spec.containers is missing or empty).' % where)
        self.containers = containers[1]
        if self.containers.flow_style:
            raise StaticPodError('%s: spec.containers is written in flow style ([...]); write it in block style.' % where)
        for i, c in enumerate(self.containers.value):
            if not isinstance(c, yaml.MappingNode):
                raise StaticPodError('%s: spec.containers[%d] is not a mapping.' % (where, i))
        if index is None:
            index = self._pick(container)
        self.index = index
        self.container = self.containers.value[index]
        self.name = _scalar((_get(self.container, 'name', where) or (None, None))[1]) or str(index)
        if self.container.flow_style:
            raise StaticPodError('%s: container %s is written in flow style ({...}); write it in block style.' % (where, self.name))
        command = _get(self.container, 'command', where)
        if command is None:
            raise StaticPodError('%s: container %s has no command; this module adds to an explicit command list, as kubeadm '
                                 'writes one. Adding one would replace the image\'s entrypoint.' % (where, self.name))
        if not isinstance(command[1], yaml.SequenceNode):
            raise StaticPodError('%s: command of container %s is not a list (line %d).' % (where, self.name, command[1].start_mark.line + 1))
        if command[1].flow_style or not command[1].value:
            raise StaticPodError('%s: command of container %s is written in flow style ([...]); write it as a block list, '
                                 'one "- " item per line, as kubeadm does.' % (where, self.name))
        self.command = command[1]
        for item in self.command.value:
            if not isinstance(item, yaml.ScalarNode):
                raise StaticPodError('%s: command of container %s holds a non-string item at line %d.'
                                     % (where, self.name, item.start_mark.line + 1))
        self.mounts_kv = self._list_key(self.container, 'volumeMounts', 'containers[%d].volumeMounts' % index)
        self.volumes_kv = self._list_key(self.spec, 'volumes', 'spec.volumes')

    def _pick(self, container):
        names = [_scalar((_get(c, 'name', self.where) or (None, None))[1]) for c in self.containers.value]
        if container:
            if container not in names:
                raise StaticPodError('%s has no container named %s (containers: %s).' % (self.where, container, ', '.join(str(n) for n in names)))
            return names.index(container)
        pod_name = None
        metadata = _get(self.root, 'metadata', self.where)
        if metadata is not None and isinstance(metadata[1], yaml.MappingNode):
            pod_name = _scalar((_get(metadata[1], 'name', self.where) or (None, None))[1])
        return names.index(pod_name) if pod_name in names else 0

    def _list_key(self, mapping, key, label):
        kv = _get(mapping, key, self.where)
        if kv is None:
            return None
        value = kv[1]
        if _is_empty(value):
            return kv
        if not isinstance(value, yaml.SequenceNode) or value.flow_style:
            raise StaticPodError('%s: %s (line %d) is not a block list; write it as "- " items, one per line, as kubeadm does.'
                                 % (self.where, label, value.start_mark.line + 1))
        for item in value.value:
            if not isinstance(item, yaml.MappingNode):
                raise StaticPodError('%s: an item of %s (line %d) is not a mapping.' % (self.where, label, item.start_mark.line + 1))
        return kv

    # -- data views
    def spec_data(self):
        return self.data['spec']

    def container_data(self, index=None):
        return self.data['spec']['containers'][self.index if index is None else index]

    def argv(self):
        return [item.value for item in self.command.value]

    def volumes(self):
        """[(index, name, normalised hostPath path or None)]."""
        out = []
        for i, v in enumerate(_list_or_empty(self.spec_data().get('volumes'))):
            host = v.get('hostPath') if isinstance(v, dict) else None
            path = host.get('path') if isinstance(host, dict) else None
            out.append((i, v.get('name') if isinstance(v, dict) else None,
                        posixpath.normpath(path) if isinstance(path, str) and path.startswith('/') else None))
        return out

    def mounts(self, index=None):
        """[(index, name, normalised mountPath, has subPath)] of a container (ours by default)."""
        out = []
        for i, m in enumerate(_list_or_empty(self.container_data(index).get('volumeMounts'))):
            if not isinstance(m, dict):
                continue
            mp = m.get('mountPath')
            out.append((i, m.get('name'), posixpath.normpath(mp) if isinstance(mp, str) and mp else mp,
                        bool(m.get('subPath') or m.get('subPathExpr'))))
        return out

    def marked(self, item_index):
        item = self.command.value[item_index]
        return bool(_MARKER_COMMENT.match(_rest_of_line(self.text, item.end_mark.index)))

    # -- layout
    def mapping_indent(self):
        for k, v in self.root.value:
            if isinstance(v, yaml.MappingNode) and not v.flow_style and v.value:
                step = v.value[0][0].start_mark.column - k.start_mark.column
                if step > 0:
                    return step
        return 2

    def sequence_offset(self):
        """Columns from a key to the "-" of its block list (0 for kubeadm's layout)."""
        todo = [self.root]
        while todo:
            node = todo.pop(0)
            if isinstance(node, yaml.MappingNode) and not node.flow_style:
                for k, v in node.value:
                    if isinstance(v, yaml.SequenceNode) and not v.flow_style and v.value:
                        return self.text_column(_dash(self.text, v.value[0])) - k.start_mark.column
                    todo.append(v)
            elif isinstance(node, yaml.SequenceNode) and not node.flow_style:
                todo.extend(node.value)
        return 0

    def text_column(self, index):
        return index - _line_start(self.text, index)


def _list_or_empty(value):
    return value if isinstance(value, list) else []


def _covers(mount_path, path):
    return path == mount_path or path.startswith(mount_path.rstrip('/') + '/')


def volume_name(prefix, path, taken):
    """A DNS-1123 label for the volume of ``path``: ``<prefix>-<path as a slug>``, hashed when too long or taken."""
    slug = re.sub(r'[^a-z0-9]+', '-', path.lower()).strip('-') or 'root'
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


# -- the edit -------------------------------------------------------------------------------
class _Editor:
    """Applies line edits to the text and the same change to the expected data, re-parsing after each."""

    def __init__(self, pod):
        self.pod = pod
        self.expected = yaml.load(pod.text, Loader=yaml.SafeLoader)  # nosec B506 - SafeLoader
        self.nl = _newline(pod.text)
        self.mi = pod.mapping_indent()
        self.so = pod.sequence_offset()

    def _reparse(self, text):
        self.pod = Pod(text, self.pod.where, index=self.pod.index)

    def _expected_container(self):
        return self.expected['spec']['containers'][self.pod.index]

    def append_arg(self, arg):
        pod = self.pod
        last = pod.command.value[-1]
        col = pod.text_column(_dash(pod.text, pod.command.value[0]))
        line = '%s- %s  # %s%s' % (' ' * col, render_scalar(arg), MARKER, self.nl)
        self._reparse(_insert(pod.text, _line_end(pod.text, _last_char(pod.text, last)), line, self.nl))
        self._expected_container()['command'].append(arg)

    def remove_arg(self, item_index):
        pod = self.pod
        start, end = _item_span(pod.text, pod.command.value[item_index])
        self._reparse(_delete(pod.text, start, end))
        del self._expected_container()['command'][item_index]

    def _append_item(self, mapping, kv, key, lines_of, parent_data, item):
        """Append a mapping item to the block list ``key`` of ``mapping``; make the key when missing."""
        text = self.pod.text
        if kv is not None and not _is_empty(kv[1]):
            seq = kv[1]
            col = self.pod.text_column(_dash(text, seq.value[0]))
            block = lines_of(col)
            pos = _line_end(text, _last_char(text, seq.value[-1]))
            parent_data[key].append(item)
        elif kv is not None:
            col = kv[0].start_mark.column + self.so
            block = lines_of(col)
            pos = _line_end(text, _last_char(text, kv[1]))
            parent_data[key] = [item]
        else:
            key_col = mapping.value[0][0].start_mark.column
            names = [k.value for k, dummy in mapping.value]
            after = len(names) - 1
            if names == sorted(names):
                before = [i for i, n in enumerate(names) if n < key]
                if before:
                    after = before[-1]
            block = '%s%s:  # %s%s' % (' ' * key_col, key, MARKER, self.nl) + lines_of(key_col + self.so)
            pos = _line_end(text, _last_char(text, mapping.value[after][1]))
            parent_data[key] = [item]
        self._reparse(_insert(text, pos, block, self.nl))

    def add_mount(self, path, name):
        def lines(col):
            pad = ' ' * (col + 2)
            return ''.join([' ' * col + '- mountPath: %s%s' % (render_scalar(path), self.nl),
                            pad + 'name: %s%s' % (render_scalar(name), self.nl),
                            pad + 'readOnly: true' + self.nl])
        self._append_item(self.pod.container, self.pod.mounts_kv, 'volumeMounts', lines, self._expected_container(),
                          {'mountPath': path, 'name': name, 'readOnly': True})

    def add_volume(self, path, name, kind):
        def lines(col):
            pad = ' ' * (col + 2)
            return ''.join([' ' * col + '- hostPath:' + self.nl,
                            pad + ' ' * self.mi + 'path: %s%s' % (render_scalar(path), self.nl),
                            pad + ' ' * self.mi + 'type: %s%s' % (kind, self.nl),
                            pad + 'name: %s%s' % (render_scalar(name), self.nl)])
        self._append_item(self.pod.spec, self.pod.volumes_kv, 'volumes', lines, self.expected['spec'],
                          {'hostPath': {'path': path, 'type': kind}, 'name': name})

    def _remove_item(self, kv, parent_data, key, index):
        start, end = _item_span(self.pod.text, kv[1].value[index])
        del parent_data[key][index]
        if not parent_data[key]:
            parent_data[key] = None  # a block list without items reads as null
        self._reparse(_delete(self.pod.text, start, end))

    def remove_mount(self, index):
        self._remove_item(self.pod.mounts_kv, self._expected_container(), 'volumeMounts', index)

    def remove_volume(self, index):
        self._remove_item(self.pod.volumes_kv, self.expected['spec'], 'volumes', index)

    def drop_own_empty_keys(self):
        """Remove a ``volumeMounts:`` / ``volumes:`` key this module made, once it holds nothing."""
        for attr, parent, key in (('mounts_kv', self._expected_container, 'volumeMounts'),
                                  ('volumes_kv', lambda: self.expected['spec'], 'volumes')):
            kv = getattr(self.pod, attr)
            if kv is None or not _is_empty(kv[1]):
                continue
            text = self.pod.text
            k = kv[0]
            start = _line_start(text, k.start_mark.index)
            rest = _rest_of_line(text, k.end_mark.index)
            if text[start:k.start_mark.index].strip(' ') or not rest.startswith(':') or not _MARKER_COMMENT.match(rest[1:]):
                continue
            del parent()[key]
            self._reparse(_delete(text, start, _line_end(text, _last_char(text, kv[1]))))

    def check(self):
        """The new text must read as exactly the expected data; anything else is refused."""
        got = yaml.load(self.pod.text, Loader=yaml.SafeLoader)  # nosec B506 - SafeLoader
        if got != self.expected:
            raise StaticPodError('%s: the edit would change more than the argument and its mounts (a layout this module does not '
                                 'handle); nothing was written. Please report this with the manifest.' % self.pod.where)


def plan(before, params, kind_of=path_kind):
    """Work out the new manifest.

    ``before``: the file's bytes. ``params``: path, container, arg, state, mounts, mount_arg_path,
    volume_prefix. ``kind_of(path)``: the hostPath type of a node path or None (see :func:`path_kind`).
    Returns ``{changed, after (bytes), command, volumes, container, warnings}``; raises StaticPodError.
    """
    if not HAS_PYYAML:
        raise StaticPodError('PyYAML is required')
    where = params.get('path') or 'the manifest'
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

    try:
        text = before.decode('utf-8')
    except UnicodeDecodeError as e:
        raise StaticPodError('%s is not UTF-8 text (%s); the kubelet reads UTF-8 YAML or JSON.' % (where, e))
    lone_cr = text.replace('\r\n', '').count('\r')
    if lone_cr or any(c in text for c in _ODD_BREAKS):
        raise StaticPodError('%s uses line breaks other than LF or CRLF (a lone CR, NEL or U+2028/2029); convert them to LF '
                             'and run again.' % where)
    stripped = re.sub(r'^(\ufeff)?(\s|#[^\n]*\n)*', '', text)
    if stripped[:1] in ('{', '['):
        raise StaticPodError('%s is a JSON manifest. The kubelet accepts JSON, but this module only edits block-style YAML (as '
                             'kubeadm writes it) so that it can keep every other byte. Convert the file to YAML first, for example '
                             'python3 -c \'import sys, json, yaml; sys.stdout.write(yaml.safe_dump(json.load(sys.stdin), '
                             'default_flow_style=False))\' < FILE > NEW (outside the manifests directory), then move NEW over '
                             'FILE, and run again.' % where)

    pod = Pod(text, where, container=params.get('container'))
    warnings = []
    ed = _Editor(pod)
    argv = pod.argv()

    kinds = {}
    if state == 'present':
        for p in needed:
            kind = kind_of(p)
            if kind is None:
                raise StaticPodError('%s does not exist on the node. The kubelet refuses a hostPath volume of type File or Directory '
                                     'whose path is missing, and the pod would never start again. Create it first (for example '
                                     'with baremetal.k3s.scheduler_config), then run this task.%s'
                                     % (p, ' If %s is not a file of the node (a URL path, a path inside the image), set '
                                           'mount_arg_path=false.' % p if p == own_path else ''))
            if kind == 'other':
                raise StaticPodError('%s is neither a file, a directory, a socket nor a device; it cannot be a hostPath volume.' % p)
            kinds[p] = kind

    def our_volumes(p):
        return [(i, n) for i, n, hp in ed.pod.volumes() if isinstance(n, str) and n.startswith(prefix + '-') and hp == p]

    same = [i for i, a in enumerate(argv) if a == arg]
    owned = [i for i in same if pod.marked(i)]
    if same and not owned and own_path and our_volumes(own_path):
        owned = list(same)

    if state == 'present':
        for i, a in enumerate(argv):
            if a == arg or flag_name(a) != flag:
                continue
            if a == '--' + flag and '=' in arg and i + 1 < len(argv):
                a = '%s %s' % (a, argv[i + 1])
            hint = (' kube-scheduler reads one --config: add the extender to that file instead (baremetal.k3s.scheduler_config '
                    'merges into it), or remove it first.' if flag == 'config' else
                    ' Change or remove that argument first (state=absent with the same value, if this module added it).')
            raise StaticPodError('%s already has %s in the command of container %s (line %d), a different value for --%s than %s.%s'
                                 % (where, a, pod.name, pod.command.value[i].start_mark.line + 1, flag, arg, hint))
        if same and not owned:
            missing = [p for p in needed if not _covered(ed.pod, p)]
            warnings.append('%s is already in the command of container %s, not added by this module (no "# %s" comment, no '
                            'volume of ours for its path); left as it is.%s'
                            % (arg, pod.name, MARKER, (' These paths are not mounted into the container: %s; mount them '
                                                       'yourself, or remove the argument so that this module manages it.'
                                                       % ', '.join(missing)) if missing else ''))
        else:
            if not same:
                ed.append_arg(arg)
            _ensure_mounts(ed, needed, kinds, prefix)
    else:
        if same and not owned:
            warnings.append('%s is in the command of container %s but was not added by this module (no "# %s" comment, no '
                            'volume of ours for its path); left in place. Remove it by hand if it should go.' % (arg, pod.name, MARKER))
        for i in reversed(owned):
            ed.remove_arg(i)
        _remove_mounts(ed, needed, prefix, warnings)
        ed.drop_own_empty_keys()

    ed.check()
    after = ed.pod.text
    return {
        'changed': after != text,
        'after': after.encode('utf-8'),
        'command': ed.pod.argv(),
        'container': ed.pod.name,
        'volumes': [n for dummy, n, dummy2 in ed.pod.volumes() if isinstance(n, str) and n.startswith(prefix + '-')],
        'warnings': warnings,
    }


def _covered(pod, path):
    """Whether a hostPath volume mounted at its own host path (no subPath) already shows ``path`` in our container."""
    volumes = {n: hp for dummy, n, hp in pod.volumes()}
    for dummy, name, mount_path, sub in pod.mounts():
        if sub or not isinstance(mount_path, str) or not mount_path.startswith('/'):
            continue
        if volumes.get(name) == mount_path and _covers(mount_path, path):
            return True
    return False


def _ensure_mounts(ed, needed, kinds, prefix):
    # a path inside a directory that is itself to be mounted needs no mount of its own
    needed = [p for p in needed if not any(q != p and _covers(q, p) for q in needed)]
    for p in needed:
        if _covered(ed.pod, p):
            continue
        for dummy, name, mount_path, sub in ed.pod.mounts():
            if mount_path == p:
                raise StaticPodError('%s: container %s already mounts volume %s at %s%s, not the host path %s; the kubelet refuses '
                                     'two mounts at one path. Remove that mount or mount the host path there yourself.'
                                     % (ed.pod.where, ed.pod.name, name, p, ' (with a subPath)' if sub else '', p))
        ours = [n for dummy, n, hp in ed.pod.volumes() if isinstance(n, str) and n.startswith(prefix + '-') and hp == p]
        if ours:
            name = ours[0]
        else:
            taken = set(n for dummy, n, dummy2 in ed.pod.volumes())
            for c in range(len(ed.pod.containers.value)):
                taken.update(n for dummy, n, dummy2, dummy3 in ed.pod.mounts(c))
            name = volume_name(prefix, p, taken)
            ed.add_volume(p, name, kinds[p])
        ed.add_mount(p, name)


def _remove_mounts(ed, needed, prefix, warnings):
    for p in needed:
        still = [a for a in ed.pod.argv() if arg_path(a) is not None and _covers(p, arg_path(a))]
        for dummy, name, hp in list(ed.pod.volumes()):
            if not (isinstance(name, str) and name.startswith(prefix + '-') and hp == p):
                continue
            if still:
                warnings.append('kept volume %s (%s): %s still needs it.' % (name, p, still[0]))
                continue
            for i, n, dummy2, dummy3 in reversed(ed.pod.mounts()):
                if n == name:
                    ed.remove_mount(i)
            others = [c for c in range(len(ed.pod.containers.value)) if c != ed.pod.index
                      and any(n == name for dummy2, n, dummy3, dummy4 in ed.pod.mounts(c))]
            if others:
                warnings.append('kept volume %s (%s): another container of the pod mounts it.' % (name, p))
                continue
            index = [i for i, n, dummy2 in ed.pod.volumes() if n == name][0]
            ed.remove_volume(index)
