# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""Byte-preserving edits of YAML and JSON documents: one edit path for every module.

A :class:`Document` is parsed with :mod:`_goyaml` (libyaml, as go-yaml reads it), which gives
every node's character span. An edit splices new text into those spans and changes nothing
else: line endings (LF or CRLF), the byte order mark, ``---``/``...``, comments, quoting,
trailing spaces and the layout of everything outside the edited span are kept. New text is
written in the style of its surroundings:

* a block sequence gets items at its own dash column and content indent (``- `` under the key
  or indented), a block mapping keys at its own column; nested new values use the
  document's mapping indent and sequence layout;
* a flow collection (``extenders: []``, ``[a, b]``) gets flow items rendered as JSON
  (``[{"urlPrefix": "..."}]``); one written one item per line gets the new item on its own
  line; a JSON document stays JSON with the file's indentation;
* scalars are written plain only when go-yaml reads them back as the same string, else in
  double quotes (``"yes"``, ``"0o17"``, ``"a: b"``); numbers, booleans and null as such.

A marker comment can be written on its own line directly above an inserted block item or
key, and :meth:`Document.items` / :meth:`Document.entries` report the comment lines directly
above each one, so a module finds its own entries again.

API: ``Document(text, name=..., document=0)``; ``find(path)``, ``get(path)``, ``entries(path)``,
``items(path)``, ``entry(path)``, ``find_marked(path, comment)``, ``accepts_comment(path)``;
``append(path, value, comment=None)``, ``add_key(path, key, value, comment=None)``,
``replace(path, value)``, ``remove(path, comment=None)``; ``text``, ``to_bytes()``, ``changed``.

Every edit is checked before it is kept: the new text is parsed again and must read (as
go-yaml reads it) exactly as the old one with that one change; a JSON document must still
be JSON. Removing what was appended, or a key that was added, gives the original bytes back.
Forms that cannot be edited safely are refused with :class:`YamlEditError`, which says which
form and what to do: an anchor or alias on the target, a merge key (``<<``) in the edited
mapping, a multi-line flow collection with comments inside or in another layout than one
item per line, a block collection with tabs in its indentation or items at inconsistent
columns, explicit (``?``) or empty keys, duplicate keys on the path, CR-only or Unicode
line breaks.
"""

from __future__ import annotations

import bisect
import json
import math
import re

from ansible_collections.baremetal.k3s.plugins.module_utils import _goyaml as gy

HAS_YAML = gy.HAS_YAML
YAML_IMPORT_ERROR = gy.YAML_IMPORT_ERROR
HAS_LIBYAML = gy.HAS_LIBYAML


class YamlEditError(gy.GoYamlError):
    """An edit this module refuses; the message names the file, the line, the form and what to do.

    Nothing was changed. A subclass of :class:`_goyaml.GoYamlError`, so one ``except`` takes both.
    """


_BY_HAND = 'edit the file by hand, or rewrite that part in plain block style'


def _path(path):
    if path is None:
        return ()
    if isinstance(path, (str, bytes)) or not isinstance(path, (list, tuple)):
        return (path,)
    return tuple(path)


def _path_text(path):
    out = ''
    for step in path:
        if isinstance(step, int) and not isinstance(step, bool):
            out += '[%d]' % step
        else:
            out += ('.' if out else '') + str(step)
    return out or '(the document)'


# ---------------------------------------------------------------- canonical trees (what go-yaml reads)
def _canon_scalar(value):
    t = gy.go_type(value)
    if t == 'float64':
        return ('val', t, 'nan' if math.isnan(value) else repr(value))
    return ('val', t, value)


def canon_value(value):
    """The canonical form of a Python value as it will be written (see :func:`_canon_node`)."""
    if isinstance(value, (dict, gy.Pairs)):
        items = value.items() if isinstance(value, dict) else list(value)
        return ('map', None, tuple((canon_value(k), canon_value(v)) for k, v in items))
    if isinstance(value, (list, tuple)):
        return ('seq', None, tuple(canon_value(v) for v in value))
    return _canon_scalar(value)


def _canon_node(node):
    """What go-yaml reads from a node, aliases kept by name: ('map'|'seq', anchor, children), ('val', type, value)."""
    if node is None:
        return None
    if node.kind == 'alias':
        return ('alias', node.value)
    if node.kind == 'scalar':
        value = gy._Decoder('keep')._scalar(node)  # pylint: disable=protected-access
        if node.anchor:
            return ('anchored', node.anchor, _canon_scalar(value))
        return _canon_scalar(value)
    if node.kind == 'sequence':
        return ('seq', node.anchor, tuple(_canon_node(c) for c in node.value))
    return ('map', node.anchor, tuple((_canon_node(k), _canon_node(v)) for k, v in node.value))


def _canon_decoded(value):
    """The same form for a value go-yaml decoded (aliases expanded, mappings as Pairs)."""
    if isinstance(value, gy.Pairs):
        return ('map', None, tuple((_canon_decoded(k), _canon_decoded(v)) for k, v in value))
    if isinstance(value, list):
        return ('seq', None, tuple(_canon_decoded(v) for v in value))
    return _canon_scalar(value)


def _strip_anchor(c):
    if c is not None and c[0] == 'anchored':
        return c[2]
    return c


def _transform(tree, path, op, arg=None, key=None):
    """``tree`` (a canonical form) with one edit applied at ``path``."""
    if not path:
        if op == 'append':
            return (tree[0], tree[1], tree[2] + (arg,))
        if op == 'add':
            return (tree[0], tree[1], tree[2] + ((key, arg),))
        if op == 'replace':
            return arg
        raise AssertionError(op)
    step, rest = path[0], path[1:]
    kind, anchor, children = tree
    children = list(children)
    if kind == 'seq':
        idx = step if step >= 0 else len(children) + step
        if not rest and op == 'remove':
            del children[idx]
        else:
            children[idx] = _transform(children[idx], rest, op, arg, key)
        return (kind, anchor, tuple(children))
    want = canon_value(step)
    for i, (k, v) in enumerate(children):
        if _strip_anchor(k) == want:
            if not rest and op == 'remove':
                del children[i]
            else:
                children[i] = (k, _transform(v, rest, op, arg, key))
            return (kind, anchor, tuple(children))
    raise KeyError(step)


# ---------------------------------------------------------------- rendering
_PLAIN_FIRST = re.compile(r'[A-Za-z0-9/_.]')
_YAML_UNPRINTABLE = re.compile('[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]')
_SURROGATE = re.compile('[\ud800-\udfff]')


def render_string(text):
    """``text`` in double quotes, as JSON writes it, with what YAML cannot hold raw escaped (\\u0085...)."""
    if _SURROGATE.search(text):
        raise ValueError('the string %r holds a lone surrogate, which neither YAML nor JSON can hold' % (text,))
    out = json.dumps(text, ensure_ascii=False)
    return _YAML_UNPRINTABLE.sub(lambda m: '\\u%04x' % ord(m.group(0)), out)


def _plain_ok(text):
    if not text or text != text.strip(' '):
        return False
    # a plain scalar may start with "-" when a non-blank follows (--config=/x): an indicator needs a blank after it
    dash = text[0] == '-' and len(text) > 1 and text[1] not in ' \t,[]{}#'
    if not (dash or _PLAIN_FIRST.match(text[0]) or text[0] > '\x7f' and text[0].isalnum()):
        return False
    if text.startswith(('...', '---')) or text.endswith(':') or ': ' in text or ' #' in text or '<<' == text:
        return False
    if not all(c == ' ' or (c.isprintable() and not c.isspace()) for c in text):
        return False
    if _YAML_UNPRINTABLE.search(text) or _SURROGATE.search(text):
        return False
    try:
        value = gy.resolve_plain(text)
    except Exception:  # pylint: disable=broad-except
        return False
    return isinstance(value, str) and value == text and gy.resolve('', text)[0] == gy.STR_TAG


def render_scalar(value, flow=False, json_mode=False):
    """``value`` (None, bool, int, float, str) as a scalar go-yaml reads back as that value and type.

    ``flow``: inside a flow collection (strings always quoted); ``json_mode``: JSON only
    (no .inf/.nan).
    """
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, int):
        if not gy.INT64_MIN <= value <= gy.UINT64_MAX:
            raise ValueError('the integer %d does not fit in 64 bits; go-yaml would read it as a float or a string' % value)
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            if json_mode:
                raise ValueError('%r has no JSON form' % value)
            if math.isnan(value):
                return '.nan'
            return '.inf' if value > 0 else '-.inf'
        return repr(value)
    if isinstance(value, str):
        if not flow and not json_mode and _plain_ok(value):
            return value
        return render_string(value)
    raise ValueError('cannot write a %s as YAML; give None, bool, int, float, str, list or dict' % type(value).__name__)


def _is_collection(value):
    return isinstance(value, (dict, list, tuple, gy.Pairs))


def _items(value):
    return list(value.items()) if isinstance(value, dict) else list(value)


def _check_key(key, json_mode):
    if _is_collection(key):
        raise ValueError('a mapping key must be a scalar, not %s' % type(key).__name__)
    if json_mode and not isinstance(key, str):
        raise ValueError('a JSON key must be a string, not %r' % (key,))


def render_flow(value, json_mode=False):
    """``value`` on one line as a flow node (JSON for strings, ``{"k": v}``, ``[a, b]``)."""
    if isinstance(value, (dict, gy.Pairs)):
        parts = []
        for k, v in _items(value):
            _check_key(k, json_mode)
            parts.append('%s: %s' % (render_scalar(k, True, json_mode), render_flow(v, json_mode)))
        return '{' + ', '.join(parts) + '}'
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(render_flow(v, json_mode) for v in value) + ']'
    return render_scalar(value, True, json_mode)


def render_json_lines(value, base, unit, json_mode=True, nl='\n'):
    """``value`` as indented JSON (json.dumps(indent=...) layout); the first line carries no indentation,
    the others ``base`` plus ``unit`` per level."""
    if isinstance(value, (dict, gy.Pairs)) and _items(value):
        inner = base + unit
        parts = []
        for k, v in _items(value):
            _check_key(k, json_mode)
            parts.append(inner + '%s: %s' % (render_scalar(k, True, json_mode),
                                             render_json_lines(v, inner, unit, json_mode, nl)))
        return '{' + nl + (',' + nl).join(parts) + nl + base + '}'
    if isinstance(value, (list, tuple)) and value:
        inner = base + unit
        parts = [inner + render_json_lines(v, inner, unit, json_mode, nl) for v in value]
        return '[' + nl + (',' + nl).join(parts) + nl + base + ']'
    return render_flow(value, json_mode)


class _Style(object):
    """How a document indents: mapping indent, dash offset under a key, content offset after a dash."""

    def __init__(self, map_indent=2, seq_offset=0, seq_content=2):
        self.map_indent = map_indent
        self.seq_offset = seq_offset
        self.seq_content = seq_content


def render_block(value, col, style):
    """Lines of ``value`` as a block node at column ``col``: the first without indentation (it follows
    ``key:`` or ``- ``, or the caller indents it), the others with their whole indentation."""
    if isinstance(value, (dict, gy.Pairs)) and _items(value):
        lines = []
        for k, v in _items(value):
            lines.extend(render_entry(k, v, col, style))
        return [lines[0][col:]] + lines[1:]
    if isinstance(value, (list, tuple)) and value:
        lines = []
        for v in value:
            lines.extend(render_item(v, col, style))
        return [lines[0][col:]] + lines[1:]
    return [render_flow(value) if _is_collection(value) else render_scalar(value)]


def render_entry(key, value, col, style):
    """Whole lines ``key: value`` at column ``col``."""
    _check_key(key, False)
    pad = ' ' * col
    head = pad + render_scalar(key) + ':'
    if isinstance(value, (dict, gy.Pairs)) and _items(value):
        sub = col + style.map_indent
        lines = render_block(value, sub, style)
        return [head, ' ' * sub + lines[0]] + lines[1:]
    if isinstance(value, (list, tuple)) and value:
        sub = col + style.seq_offset
        lines = render_block(value, sub, style)
        return [head, ' ' * sub + lines[0]] + lines[1:]
    return [head + ' ' + render_block(value, col, style)[0]]


def render_item(value, col, style, content=None):
    """Whole lines ``- value`` with the dash at column ``col`` and the content ``content`` columns after it."""
    content = style.seq_content if content is None else content
    lines = render_block(value, col + content, style)
    return [' ' * col + '-' + ' ' * (content - 1) + lines[0]] + lines[1:]


# ---------------------------------------------------------------- the document
class Entry(object):
    """One item of a sequence or one key of a mapping, as :meth:`Document.items`/:meth:`Document.entries` list them.

    ``index``; ``key`` (decoded, mappings only) and ``key_node``; ``node`` the value's node;
    ``value`` what go-yaml reads (mappings as :class:`_goyaml.Pairs`); ``data`` the same with
    mappings as dicts; ``comments`` the comment lines directly above, at the entry's column
    (block collections only), top to bottom, as written (``# ...``).
    """

    __slots__ = ('index', 'key', 'key_node', 'node', 'value', 'comments')

    def __init__(self, index, key, key_node, node, value, comments):
        self.index = index
        self.key = key
        self.key_node = key_node
        self.node = node
        self.value = value
        self.comments = comments

    @property
    def data(self):
        return gy._plain(self.value)  # pylint: disable=protected-access

    def __repr__(self):
        return '<Entry %d %r %r>' % (self.index, self.key, self.value)


def _comment_text(comment):
    if comment is None:
        return None
    if not isinstance(comment, str) or any(c in comment for c in '\r\n\x85\u2028\u2029'):
        raise ValueError('a marker comment must be one line of text, not %r' % (comment,))
    comment = comment.strip()
    if not comment.startswith('#'):
        comment = '# ' + comment
    return comment


class _Text(object):
    """Reading the text: parsed (every document, token and comment span), its style detected, offsets turned into
    lines and columns. The first of the layers :class:`Document` is made of, each with one job."""

    def __init__(self, text, name='document', document=0, backend=None):
        self.name = name
        self.backend = backend
        self.document = document
        self.was_bytes = isinstance(text, (bytes, bytearray))
        if self.was_bytes:
            try:
                text = bytes(text).decode('utf-8')
            except UnicodeDecodeError as e:
                raise YamlEditError(name, 'invalid UTF-8 at byte %d' % e.start,
                                    hint='this module edits UTF-8 files: save the file as UTF-8')
        self.original = text
        self._parse(text)

    # -- parsing ------------------------------------------------------------------------
    def _parse(self, text):
        self.text = text
        self.docs = gy.compose_all(text, self.name, self.backend)
        self.tokens = gy.scan(text, self.name, self.backend)
        for doc in self.docs:
            gy.decode(doc.root, 'keep', self.name)  # go-yaml must read it: raises GoYamlError otherwise
        if self.document >= max(len(self.docs), 1):
            raise YamlEditError(self.name, 'the file holds %d YAML documents; there is no document %d'
                                % (len(self.docs), self.document), hint='give an existing document index')
        self.doc = self.docs[self.document] if self.docs else None
        self.root = self.doc.root if self.doc is not None else None
        self.bom = text.startswith('\ufeff')
        self._comments()
        self._parents = {}
        self._aliased = set()
        for doc in self.docs:
            self._walk(doc.root, doc is self.doc)
        self._sorted_tokens()
        self.is_json = self._detect_json()
        self.style = self._detect_style()

    def _walk(self, root, record):
        stack = [(root, None, None)]
        while stack:
            node, parent, where = stack.pop()
            if node is None:
                continue
            if record:
                self._parents[id(node)] = (parent, where)
            if node.kind == 'alias':
                self._aliased.add(id(node.target))
            elif node.kind == 'sequence':
                stack.extend((c, node, ('item', i)) for i, c in enumerate(node.value))
            elif node.kind == 'mapping':
                for i, (k, v) in enumerate(node.value):
                    stack.append((k, node, ('key', i)))
                    stack.append((v, node, ('value', i)))

    def _comments(self):
        spans = []
        text = self.text
        prev = 0
        for tok in sorted(self.tokens, key=lambda t: (t.start, t.end)):
            if tok.start > prev:
                self._gap_comments(prev, tok.start, spans)
            prev = max(prev, tok.end)
        if prev < len(text):
            self._gap_comments(prev, len(text), spans)
        self.comment_spans = spans
        self.comment_starts = set(a for a, _b in spans)

    def _gap_comments(self, a, b, spans):
        text = self.text
        i = text.find('#', a, b)
        while i >= 0:
            e = i
            while e < len(text) and text[e] not in '\r\n':
                e += 1
            spans.append((i, e))
            i = text.find('#', e, b)

    def _sorted_tokens(self):
        by_kind = {}
        for tok in self.tokens:
            by_kind.setdefault(tok.kind, []).append(tok.start)
        for starts in by_kind.values():
            starts.sort()
        self._token_starts = by_kind

    def _detect_json(self):
        if self.root is None or self.root.kind not in ('mapping', 'sequence') or self.root.style != 'flow':
            return False
        if len(self.docs) != 1:
            return False
        try:
            json.loads(self.text[1:] if self.bom else self.text)
        except ValueError:
            return False
        return True

    def _detect_style(self):
        counts = {'map': {}, 'off': {}, 'content': {}}

        def count(kind, n):
            counts[kind][n] = counts[kind].get(n, 0) + 1
        stack = [self.root]
        while stack:
            node = stack.pop()
            if node is None or node.kind in ('scalar', 'alias'):
                continue
            if node.kind == 'mapping':
                for k, v in node.value:
                    stack.extend((k, v))
                    if node.style == 'block' and v.kind in ('mapping', 'sequence') and v.style == 'block' \
                            and v.line > k.line and v.value:
                        head = self._head(v, 0) if v.kind == 'sequence' else v.value[0][0].start
                        col = self.column(head)
                        if v.kind == 'mapping' and col > k.column:
                            count('map', col - k.column)
                        elif v.kind == 'sequence' and col >= k.column:
                            count('off', col - k.column)
            else:
                stack.extend(node.value)
                if node.style == 'block':
                    for i, item in enumerate(node.value):
                        dash = self._head(node, i)
                        if item.line == self.line(dash) and item.start > dash + 1 and \
                                self.text[dash + 1:item.start].strip(' ') == '':
                            count('content', item.start - dash)

        def best(kind, default):
            if not counts[kind]:
                return default
            return sorted(counts[kind].items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        return _Style(best('map', 2), best('off', 0), best('content', 2))

    # -- text helpers ---------------------------------------------------------------------
    def line_start(self, i):
        return self.text.rfind('\n', 0, i) + 1

    def line(self, i):
        return self.text.count('\n', 0, i)

    def column(self, i):
        """The YAML column of offset ``i`` (a leading byte order mark not counted)."""
        ls = self.line_start(i)
        return i - ls - (1 if ls == 0 and self.bom and i > 0 else 0)

    def _indent_of(self, i):
        """The whitespace before offset ``i`` on its line, or None when other text stands there."""
        ls = self.line_start(i)
        prefix = self.text[ls:i]
        if ls == 0 and self.bom:
            prefix = prefix[1:]
        return prefix if prefix.strip(' \t') == '' else None

    def _next_line(self, i):
        j = self.text.find('\n', i)
        return len(self.text) if j < 0 else j + 1

    def _newline_before(self, pos):
        if pos >= 2 and self.text[pos - 2:pos] == '\r\n':
            return '\r\n'
        if pos >= 1 and self.text[pos - 1] == '\n':
            return '\n'
        return self.newline

    @property
    def newline(self):
        """The file's line ending: CRLF when every line break is one, else LF."""
        lf = self.text.count('\n')
        return '\r\n' if lf and self.text.count('\r\n') == lf else '\n'

    def _where(self, node_or_index):
        if node_or_index is None:
            return None
        i = node_or_index if isinstance(node_or_index, int) else node_or_index.start
        return self.line(i) + 1

    def _refuse(self, at, form, hint=_BY_HAND):
        raise YamlEditError(self.name, 'cannot edit %s' % form, self._where(at), hint=hint)

    def to_bytes(self):
        """The current text as UTF-8 bytes."""
        return self.text.encode('utf-8')

    @property
    def changed(self):
        return self.text != self.original


class _Tree(_Text):
    """Locating nodes: a path to its node, the entries of a collection with the comment lines above each, where a
    marker comment can stand."""

    # -- navigation -----------------------------------------------------------------------
    def _key_index(self, mapping, key, path):
        ident = gy._key_identity(key)  # pylint: disable=protected-access
        found = []
        for i, (k, _v) in enumerate(mapping.value):
            try:
                decoded = gy.decode(k, 'keep', self.name)
            except gy.GoYamlError:
                continue
            if not isinstance(decoded, list) and gy._key_identity(decoded) == ident:  # pylint: disable=protected-access
                found.append(i)
        if len(found) > 1:
            self._refuse(mapping.value[found[1]][0], '%s: the key %r appears %d times in that mapping'
                         % (_path_text(path), key, len(found)), hint='remove the duplicates first')
        if found and gy._is_merge(mapping.value[found[0]][0]):  # pylint: disable=protected-access
            self._refuse(mapping.value[found[0]][0], '%s: "<<" is a merge key here' % _path_text(path))
        return found[0] if found else -1

    def _resolve(self, path, strict=True):
        """(node, chain) at ``path``; chain is [(collection, index)]. None when absent (strict: raise)."""
        node = self.root
        chain = []
        for n, step in enumerate(path):
            where = _path_text(path[:n + 1])
            if node is None or node.kind == 'scalar':
                if strict:
                    self._refuse(node, '%s: %s holds no mapping or sequence' % (where, _path_text(path[:n])),
                                 hint='check the path')
                return None, chain
            if node.kind == 'alias':
                self._refuse(node, '%s: the path goes through an alias (*%s), which repeats another node'
                             % (where, node.value), hint='edit the anchored node (&%s) by hand' % node.value)
            if node.kind == 'mapping':
                i = self._key_index(node, step, path[:n + 1])
                if i < 0:
                    if strict:
                        raise YamlEditError(self.name, '%s: no such key' % where, self._where(node),
                                            hint='add it first (add_key)')
                    return None, chain
                chain.append((node, i))
                node = node.value[i][1]
            else:
                if not isinstance(step, int) or isinstance(step, bool):
                    self._refuse(node, '%s: a sequence is indexed by a number, not %r' % (where, step),
                                 hint='check the path')
                idx = step if step >= 0 else len(node.value) + step
                if not 0 <= idx < len(node.value):
                    if strict:
                        raise YamlEditError(self.name, '%s: no item %d (the sequence has %d)'
                                            % (where, step, len(node.value)), self._where(node), hint='check the path')
                    return None, chain
                chain.append((node, idx))
                node = node.value[idx]
        return node, chain

    def find(self, path):
        """The node at ``path`` (a :class:`_goyaml.Node`), or None when it is absent."""
        return self._resolve(_path(path), strict=False)[0]

    def has(self, path):
        return self.find(path) is not None

    def get(self, path=(), default=None):
        """What go-yaml reads at ``path`` (mappings as Pairs), or ``default`` when absent."""
        node = self.find(path)
        if node is None:
            return default
        return gy.decode(node, 'keep', self.name)

    @property
    def value(self):
        """What go-yaml reads from the whole document (mappings as Pairs)."""
        return gy.decode(self.root, 'keep', self.name)

    def _head(self, coll, i):
        """Offset of entry ``i``: the ``-`` of a block item, the key of a mapping entry, else the item."""
        if coll.kind == 'sequence':
            item = coll.value[i]
            if coll.style != 'block':
                return item.start
            starts = self._token_starts.get('BlockEntry', [])
            j = bisect.bisect_left(starts, item.start) - 1
            if j < 0 or self.text[starts[j]] != '-':  # pragma: no cover - the parser found the item after a dash
                self._refuse(item, 'the item at line %d: its "-" is not where the parser says' % (item.line + 1))
            return starts[j]
        return coll.value[i][0].start

    def _comments_above(self, head, floor):
        """Start offset and texts of the comment lines directly above ``head``'s line, at its column."""
        col = self.column(head)
        start = self.line_start(head)
        texts = []
        while start > floor:
            prev = self.line_start(start - 1)
            if prev < floor:
                break
            line = self.text[prev:start].rstrip('\r\n')
            body = line[1:] if prev == 0 and self.bom else line
            stripped = body.lstrip(' ')
            hash_at = prev + (len(line) - len(stripped))
            if stripped.startswith('#') and hash_at in self.comment_starts and len(body) - len(stripped) == col:
                texts.insert(0, stripped.rstrip(' \t'))
                start = prev
            else:
                break
        return start, texts

    def _last_leaf(self, node):
        while node.kind in ('mapping', 'sequence') and node.style == 'block' and node.value:
            node = node.value[-1][1] if node.kind == 'mapping' else node.value[-1]
        return node

    def _line_after(self, node):
        """The offset where a new line can start after ``node`` (after its last line's line break)."""
        leaf = self._last_leaf(node)
        e = leaf.end
        if leaf.kind == 'scalar' and leaf.style in ('literal', 'folded'):
            ls = self.line_start(e)
            if self.text[ls:e].strip(' ') == '' and (ls < e or e > leaf.start):
                return ls
        return self._next_line(e)

    def _content_end(self, node):
        """The offset after the last character of ``node`` (a block scalar's trailing line breaks excluded)."""
        leaf = self._last_leaf(node)
        e = leaf.end
        if leaf.kind == 'scalar' and leaf.style in ('literal', 'folded'):
            while e > leaf.start and self.text[e - 1] in ' \r\n':
                e -= 1
        return e

    def _floor(self, coll, chain):
        """Where comment lines above the first entry of ``coll`` may start."""
        parent = self._parents.get(id(coll), (None, None))[0]
        if parent is None:
            # the line after the last "---", "..." or directive before the document's content
            floor = 0
            for kind in ('DocumentStart', 'DocumentEnd', 'Directive'):
                for t in self._token_starts.get(kind, []):
                    if t < coll.start:
                        floor = max(floor, self._next_line(t))
            return floor
        return self._next_line(coll.start if coll.style == 'flow' else self._indicator_before(coll))

    def _indicator_before(self, node):
        """Offset of the ``:`` or ``-`` that introduces ``node`` in its block parent (or its start)."""
        parent, where = self._parents.get(id(node), (None, None))
        if parent is None:
            return node.start
        if parent.kind == 'sequence':
            return self._head(parent, where[1]) if parent.style == 'block' else node.start
        return self._colon(parent, where[1])

    def _colon(self, mapping, i):
        key, value = mapping.value[i]
        starts = self._token_starts.get('Value', [])
        j = bisect.bisect_left(starts, key.end)
        if j >= len(starts) or starts[j] > max(value.start, key.end) or self.text[starts[j]] != ':':
            self._refuse(key, 'the mapping entry at line %d: its ":" is not where expected' % (key.line + 1))
        return starts[j]

    # -- listing --------------------------------------------------------------------------
    def _collection(self, path, kind):
        path = _path(path)
        node, chain = self._resolve(path)
        if node is None or node.kind != kind:
            what = 'nothing' if node is None else 'a %s' % node.kind
            if node is not None and node.kind == 'alias':
                what = 'an alias (*%s)' % node.value
            raise YamlEditError(self.name, '%s holds %s, not a %s' % (_path_text(path), what, kind),
                                self._where(node), hint='check the path')
        return node, chain

    def items(self, path):
        """The items of the sequence at ``path`` as :class:`Entry` (with the comment lines above each)."""
        coll, chain = self._collection(path, 'sequence')
        return self._entries(coll, chain)

    def entries(self, path=()):
        """The keys of the mapping at ``path`` as :class:`Entry` (with the comment lines above each)."""
        coll, chain = self._collection(path, 'mapping')
        return self._entries(coll, chain)

    def _entries(self, coll, chain):
        out = []
        floor = self._floor(coll, chain)
        for i in range(len(coll.value)):
            if coll.kind == 'mapping':
                key_node, node = coll.value[i]
                key = gy.decode(key_node, 'keep', self.name)
            else:
                key_node, node, key = None, coll.value[i], None
            comments = []
            if coll.style == 'block':
                head = self._head(coll, i)
                if self._indent_of(head) is not None:
                    comments = self._comments_above(head, floor)[1]
                floor = self._line_after(node)
            out.append(Entry(i, key, key_node, node, gy.decode(node, 'keep', self.name), comments))
        return out

    def accepts_comment(self, path):
        """Whether :meth:`append` (a sequence) or :meth:`add_key` (a mapping) at ``path`` can write a marker
        comment: the collection is in block style (or a null value in a block mapping), not flow or JSON."""
        path = _path(path)
        node = self.find(path)
        if self.is_json:
            return False
        if node is None:
            return not path and self._empty_root()
        if self._is_null(node):
            parent = self.find(path[:-1]) if path else None
            return parent is not None and parent.kind == 'mapping' and parent.style == 'block'
        return node.kind in ('mapping', 'sequence') and node.style == 'block'

    def entry(self, path):
        """The :class:`Entry` (with its comment lines) of the item or key at ``path``, or None when absent."""
        path = _path(path)
        if not path or self.find(path) is None:
            return None
        parent = self.find(path[:-1])
        entries = self.items(path[:-1]) if parent.kind == 'sequence' else self.entries(path[:-1])
        _node, chain = self._resolve(path)
        return entries[chain[-1][1]]

    def find_marked(self, path, comment):
        """Indices of the items (or keys) of the collection at ``path`` with ``comment`` directly above."""
        comment = _comment_text(comment)
        node = self.find(path)
        if node is None or node.kind not in ('mapping', 'sequence'):
            return []
        entries = self.items(path) if node.kind == 'sequence' else self.entries(path)
        return [e.index for e in entries if comment in e.comments]


class _Checked(_Tree):
    """What may be edited (the forms refused) and the one way text changes: spliced, parsed again and compared with
    what was meant (``_commit``)."""

    # -- checks ---------------------------------------------------------------------------
    def _check_text(self):
        text = self.text
        if '\r' in text.replace('\r\n', ''):
            self._refuse(text.replace('\r\n', '  ').find('\r'), 'a file with line breaks made of CR alone',
                         hint='convert the file to LF or CRLF line endings')
        for c, name in (('\x85', 'NEL (U+0085)'), ('\u2028', 'LINE SEPARATOR (U+2028)'),
                        ('\u2029', 'PARAGRAPH SEPARATOR (U+2029)')):
            if c in text:
                self._refuse(text.find(c), 'a file holding a %s, which YAML counts as a line break' % name,
                             hint='write it as an escape (\\u%04x) in double quotes' % ord(c))

    def _check_node(self, node, chain, what, path):
        """Refuse anchors and aliases on the target and anchors that aliases repeat on its way."""
        if node is not None and node.kind == 'alias':
            self._refuse(node, '%s: %s is an alias (*%s)' % (_path_text(path), what, node.value),
                         hint='edit the anchored node (&%s) by hand' % node.value)
        if node is not None and node.anchor:
            self._refuse(node, '%s: %s carries an anchor (&%s), so aliases (*%s) may repeat it'
                         % (_path_text(path), what, node.anchor, node.anchor))
        for coll, _i in chain:
            if coll.anchor and id(coll) in self._aliased:
                self._refuse(coll, '%s: it lies inside &%s, which an alias (*%s) repeats elsewhere'
                             % (_path_text(path), coll.anchor, coll.anchor))

    def _check_subtree(self, node, path):
        """Refuse removing or replacing a node holding an anchor that an alias outside it repeats."""
        anchors = []
        stack = [node]
        while stack:
            n = stack.pop()
            if n is None:
                continue
            if n.anchor:
                anchors.append(n)
            if n.kind == 'sequence':
                stack.extend(n.value)
            elif n.kind == 'mapping':
                for k, v in n.value:
                    stack.extend((k, v))
        for a in anchors:
            if id(a) in self._aliased:
                self._refuse(a, '%s: it holds the anchor &%s, which an alias (*%s) repeats'
                             % (_path_text(path), a.anchor, a.anchor), hint='remove the alias first, or edit by hand')

    def _check_block(self, coll, path):
        """Refuse block collections with tabs in their indentation, explicit or empty keys."""
        first = self.line_start(coll.start)
        last = self._line_after(coll)
        for line in self.text[first:last].split('\n'):
            indent = line[:len(line) - len(line.lstrip(' \t\ufeff'))]
            if '\t' in indent:
                self._refuse(first, '%s: a block collection with a tab in its indentation' % _path_text(path),
                             hint='indent with spaces')
        if coll.kind == 'mapping':
            keys = self._token_starts.get('Key', [])
            for k, _v in coll.value:
                if k.kind != 'scalar':
                    self._refuse(k, '%s: a mapping with a %s as a key' % (_path_text(path), k.kind))
                if k.start == k.end:
                    self._refuse(k, '%s: a mapping with an empty key (": value")' % _path_text(path))
                j = bisect.bisect_right(keys, k.start) - 1
                if j >= 0 and keys[j] < k.start and self.text[keys[j]] == '?':
                    self._refuse(k, '%s: a mapping with an explicit key ("? key")' % _path_text(path))
        else:
            for i, item in enumerate(coll.value):
                dash = self._head(coll, i)
                between = self.text[dash + 1:item.start]
                if '\t' in between and self.line(item.start) == self.line(dash):
                    self._refuse(dash, '%s: a block sequence with a tab after "-"' % _path_text(path),
                                 hint='write a space instead')

    def _flow_layout(self, coll, path):
        """(open, close, multiline, prefix) of a flow collection; refuses forms it cannot edit."""
        kinds = ('FlowSequenceStart',) if coll.kind == 'sequence' else ('FlowMappingStart',)
        starts = self._token_starts.get(kinds[0], [])
        j = bisect.bisect_left(starts, coll.start)
        close = coll.end - 1
        if j >= len(starts) or starts[j] >= coll.end or self.text[close] not in ']}':
            self._refuse(coll, '%s: a flow mapping written without braces (a "key: value" pair inside [ ])'
                         % _path_text(path), hint='write it as {key: value}')
        open_ = starts[j]
        for a, _b in self.comment_spans:
            if open_ < a < close:
                self._refuse(a, '%s: a flow collection ([ ] or { }) over several lines with comments inside'
                             % _path_text(path), hint='move the comments out of the brackets, or write it in block style')
        heads = [self._head(coll, i) for i in range(len(coll.value))]
        if self.line(open_) == self.line(close):
            return open_, close, False, None
        prefixes = [self._indent_of(h) for h in heads]
        if not heads or any(p is None for p in prefixes) or len(set(prefixes)) != 1 or self._indent_of(close) is None:
            self._refuse(coll, '%s: a flow collection over several lines in another layout than one item per line'
                         % _path_text(path), hint='write one item per line, or all on one line')
        return open_, close, True, prefixes[0]

    def _json_unit(self):
        """The indentation unit of a JSON document (the text one level adds), default two spaces."""
        stack = [self.root]
        while stack:
            node = stack.pop()
            if node is None or node.kind not in ('mapping', 'sequence') or not node.value:
                continue
            heads = [self._head(node, i) for i in range(len(node.value))]
            open_ = node.start
            if self.line(heads[0]) != self.line(open_):
                inner = self._indent_of(heads[0])
                outer = self._indent_of(self._line_first(open_))
                if inner is not None and outer is not None and inner.startswith(outer) and len(inner) > len(outer):
                    return inner[len(outer):]
            for i, child in enumerate(node.value):
                stack.append(child[1] if node.kind == 'mapping' else child)
        return '  '

    def _line_first(self, i):
        """Offset of the first non-blank character of ``i``'s line."""
        ls = self.line_start(i)
        j = ls + (1 if ls == 0 and self.bom else 0)
        while j < i and self.text[j] in ' \t':
            j += 1
        return j

    # -- committing ------------------------------------------------------------------------
    def _empty_root(self):
        root = self.root
        if root is None:
            return True
        return root.kind == 'scalar' and root.style == 'plain' and root.value == '' and root.tag is None and root.anchor is None

    def _commit(self, new_text, path, op, arg=None, key=None):
        """Keep ``new_text`` when it reads as the old text with the one edit; else refuse."""
        nil = _canon_scalar(None)

        def canon(docs):
            out = [_canon_node(d.root) if d.root is not None else nil for d in docs]
            return out

        def values(docs):
            return [_canon_decoded(gy.decode(d.root, 'keep', self.name)) for d in docs]

        def trim(seq):
            seq = list(seq)
            while seq and seq[-1] == nil:
                seq.pop()
            return seq
        old_canon, old_values = canon(self.docs), values(self.docs)
        idx = self.document
        while len(old_canon) <= idx:
            old_canon.append(nil)
            old_values.append(nil)
        expected_canon, expected_values = list(old_canon), list(old_values)
        try:
            if op == 'add' and not path and self._empty_root():
                expected_canon[idx] = expected_values[idx] = ('map', None, ((key, arg),))
            elif op == 'remove' and len(path) == 1 and self.root is not None and self.root.kind == 'mapping' \
                    and self.root.style == 'block' and len(self.root.value) == 1:
                expected_canon[idx] = expected_values[idx] = nil
            else:
                expected_canon[idx] = _transform(old_canon[idx], path, op, arg, key)
                expected_values[idx] = _transform(old_values[idx], path, op, arg, key)
        except (KeyError, IndexError, TypeError, ValueError) as e:  # pragma: no cover - paths were resolved before
            raise YamlEditError(self.name, 'cannot apply the edit at %s (%s)' % (_path_text(path), e),
                                hint='report this as a bug of baremetal.k3s')
        try:
            new = Document(new_text, self.name, 0, self.backend)
            if len(new.docs) > self.document:
                new = Document(new_text, self.name, self.document, self.backend)
        except gy.GoYamlError as e:
            raise YamlEditError(self.name, 'the edit at %s would make the file unreadable (%s); nothing was changed'
                                % (_path_text(path), e.problem), hint=_BY_HAND + ' (and report this)')
        if trim(canon(new.docs)) != trim(expected_canon) or trim(values(new.docs)) != trim(expected_values):
            raise YamlEditError(self.name, 'the edit at %s would change what go-yaml reads elsewhere in the file; '
                                'nothing was changed' % _path_text(path), hint=_BY_HAND + ' (and report this)')
        if self.is_json:
            try:
                json.loads(new_text[1:] if new_text.startswith('\ufeff') else new_text)
            except ValueError as e:
                raise YamlEditError(self.name, 'the edit at %s would leave the JSON document invalid (%s)'
                                    % (_path_text(path), e), hint='report this')
        original, was_bytes = self.original, self.was_bytes
        self.__dict__.update(new.__dict__)
        self.original, self.was_bytes, self.document = original, was_bytes, idx

    def _splice(self, a, b, new):
        return self.text[:a] + new + self.text[b:]

    def _insert_lines(self, pos, lines):
        """The text with whole ``lines`` inserted at the line start ``pos``."""
        text = self.text
        if pos == len(text) and text and not text.endswith('\n'):
            return text + self.newline + self.newline.join(lines)
        nl = self._newline_before(pos) if pos > 0 else self.newline
        return text[:pos] + ''.join(line + nl for line in lines) + text[pos:]

    def _delete_lines(self, ranges):
        """The text without the whole-line ``ranges`` [(start, end)]; a range reaching the end of a text
        without a final line break takes the line break before it along (the mirror of _insert_lines)."""
        merged = []
        for a, b in sorted(ranges):
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
            else:
                merged.append((a, b))
        text = self.text
        for a, b in reversed(merged):
            if b == len(text) and not text.endswith('\n') and a > 0:
                a -= 2 if text[max(a - 2, 0):a] == '\r\n' else 1
            text = text[:a] + text[b:]
        return text

    # -- edits ----------------------------------------------------------------------------
    def _value_error(self, e, path):
        hint = 'give None, booleans, integers, floats, strings, lists and dicts with scalar keys'
        if self.is_json:
            hint += ' (a JSON file: string keys, no .inf/.nan)'
        return YamlEditError(self.name, '%s: cannot write that value: %s' % (_path_text(path), e), hint=hint)


class _Inserting(_Checked):
    """Adding: an item appended to a sequence, a key added to a mapping, in block or flow style (or JSON)."""

    def append(self, path, value, comment=None):
        """Append ``value`` to the sequence at ``path``; ``comment`` goes on its own line above it (block only).

        Returns the new item's index.
        """
        try:
            return self._append(_path(path), value, comment)
        except YamlEditError:
            raise
        except ValueError as e:
            raise self._value_error(e, _path(path))

    def add_key(self, path, key, value, comment=None):
        """Add ``key: value`` at the end of the mapping at ``path`` (the key must not be there yet).

        An empty document (or one of comments only) gets a top-level mapping.
        """
        try:
            return self._add_key(_path(path), key, value, comment)
        except YamlEditError:
            raise
        except ValueError as e:
            raise self._value_error(e, _path(path))

    def _is_null(self, node):
        return node is not None and node.kind == 'scalar' and node.style == 'plain' and node.tag is None \
            and node.anchor is None and node.value in ('', '~', 'null', 'Null', 'NULL')

    def _append(self, path, value, comment):
        comment = _comment_text(comment)
        if path and self._is_null(self.find(path)):
            # "extenders:" (null): the list starts with this item
            return self._replace(path, [value], comment) or 0
        coll, chain = self._collection(path, 'sequence')
        self._check_text()
        self._check_node(coll, chain, 'the sequence', path)
        new_canon = canon_value(value)
        if coll.style == 'flow':
            new_text = self._flow_add(coll, path, value, None, comment)
        else:
            self._check_block(coll, path)
            new_text = self._block_add(coll, path, render_item, value, None, comment)
        self._commit(new_text, path, 'append', new_canon)
        return len(coll.value)

    def _add_key(self, path, key, value, comment):
        comment = _comment_text(comment)
        self._check_text()
        if not path and self._empty_root():
            return self._add_to_empty(key, value, comment)
        coll, chain = self._collection(path, 'mapping')
        self._check_node(coll, chain, 'the mapping', path)
        for k, _v in coll.value:
            if gy._is_merge(k):  # pylint: disable=protected-access
                self._refuse(k, '%s: a mapping with a merge key (<<), where which value wins depends on the reader'
                             % _path_text(path))
        if self._key_index(coll, key, path + (key,)) >= 0:
            raise YamlEditError(self.name, '%s: the key %r is already there' % (_path_text(path), key),
                                self._where(coll), hint='replace its value instead (replace)')
        if coll.style == 'flow':
            new_text = self._flow_add(coll, path, value, key, comment)
        else:
            self._check_block(coll, path)
            new_text = self._block_add(coll, path, None, value, key, comment)
        self._commit(new_text, path, 'add', canon_value(value), canon_value(key))

    def _add_to_empty(self, key, value, comment):
        lines = ([comment] if comment else []) + render_entry(key, value, 0, self.style)
        pos = len(self.text)
        if self.doc is not None:
            ends = []
            for kind in ('DocumentEnd', 'DocumentStart', 'StreamEnd'):
                starts = self._token_starts.get(kind, [])
                j = bisect.bisect_right(starts, self.doc.start + (3 if self.doc.explicit_start else 0))
                if j < len(starts):
                    ends.append(starts[j])
            if ends and min(ends) < len(self.text):
                pos = self.line_start(min(ends))
                if self.text[pos:min(ends)].strip(' ') != '':
                    self._refuse(min(ends), 'an empty document whose end marker shares a line with other text')
        new_text = self._insert_lines(pos, lines)
        self._commit(new_text, (), 'add', canon_value(value), canon_value(key))

    def _block_add(self, coll, path, render, value, key, comment):
        heads = [self._head(coll, i) for i in range(len(coll.value))]
        col = self.column(heads[0])
        for h in heads[1:]:
            if self.column(h) != col:  # pragma: no cover - YAML forbids it; kept as a guard
                self._refuse(h, '%s: entries at different columns' % _path_text(path))
        if coll.kind == 'sequence':
            offsets = set()
            for h, item in zip(heads, coll.value):
                if self.line(item.start) == self.line(h) and item.start > h + 1:
                    offsets.add(item.start - h)
            if len(offsets) > 1:
                self._refuse(coll, '%s: a block sequence whose items start at inconsistent columns after "-" (%s)'
                             % (_path_text(path), ', '.join(str(o) for o in sorted(offsets))),
                             hint='align the items, one space after each "-"')
            content = offsets.pop() if offsets else self.style.seq_content
            lines = render_item(value, col, self.style, content)
        else:
            lines = render_entry(key, value, col, self.style)
        if comment:
            lines = [' ' * col + comment] + lines
        pos = self._line_after(coll.value[-1][1] if coll.kind == 'mapping' else coll.value[-1])
        return self._insert_lines(pos, lines)

    def _flow_add(self, coll, path, value, key, comment):
        if comment:
            self._refuse(coll, '%s: a flow collection ([ ] or { }) with a marker comment: a comment cannot stand '
                         'above an item there' % _path_text(path),
                         hint='append without the comment, or rewrite the collection in block style first')
        open_, close, multiline, prefix = self._flow_layout(coll, path)
        json_mode = self.is_json
        if key is not None:
            _check_key(key, json_mode)
        n = len(coll.value)
        nl = self.newline
        if n == 0:
            expand = json_mode and (self._parent_multiline(coll) or coll is self.root) and close == open_ + 1
            if expand:
                outer = self._indent_of(self._line_first(open_)) or ''
                unit = self._json_unit()
                inner = outer + unit
                body = render_json_lines(value, inner, unit, json_mode, nl)
                if key is not None:
                    body = '%s: %s' % (render_scalar(key, True, json_mode), body)
                return self._splice(close, close, nl + inner + body + nl + outer)
            body = render_flow(value, json_mode)
            if key is not None:
                body = '%s: %s' % (render_scalar(key, True, json_mode), body)
            return self._splice(close, close, body)
        last = coll.value[-1][1] if coll.kind == 'mapping' else coll.value[-1]
        end = last.end
        if multiline:
            unit = self._json_unit()
            body = render_json_lines(value, prefix, unit, json_mode, nl)
            if key is not None:
                body = '%s: %s' % (render_scalar(key, True, json_mode), body)
            return self._splice(end, end, ',' + nl + prefix + body)
        sep = ', '
        if n > 1:
            prev = coll.value[-2][1] if coll.kind == 'mapping' else coll.value[-2]
            between = self.text[prev.end:self._head(coll, n - 1)]
            if between.strip(' ') == ',':
                sep = between
        body = render_flow(value, json_mode)
        if key is not None:
            body = '%s: %s' % (render_scalar(key, True, json_mode), body)
        return self._splice(end, end, sep + body)

    def _parent_multiline(self, coll):
        parent = self._parents.get(id(coll), (None, None))[0]
        if parent is None or parent.style != 'flow':
            return False
        return self.line(parent.start) != self.line(parent.end)


class Document(_Inserting):
    """A YAML (or JSON) text and the edits made to it; ``text`` is the current text.

    ``document``: which document of a stream to edit (the first: what k3s and kube-scheduler read).
    Paths are tuples of mapping keys (matched as go-yaml compares keys: ``'on'`` is not the key
    ``on``, which is true) and sequence indices (negative ones count from the end); a single key
    may be given alone. Raises :class:`_goyaml.GoYamlError` for a text go-yaml would not read.

    The layers: :class:`_Text` reads the text, :class:`_Tree` locates nodes, :class:`_Checked` refuses what cannot
    be edited safely and commits a checked edit, :class:`_Inserting` adds; this class removes and replaces.
    """

    def replace(self, path, value):
        """Set the value of the sequence item or mapping key at ``path`` (which must exist) to ``value``."""
        try:
            return self._replace(_path(path), value)
        except YamlEditError:
            raise
        except ValueError as e:
            raise self._value_error(e, _path(path))

    def remove(self, path, comment=None):
        """Remove the sequence item or mapping key at ``path`` (the last step is an index or a key).

        ``comment``: also remove that marker comment line directly above it (True: every comment
        line directly above it). Removing the only entry of a nested collection leaves ``[]`` or
        ``{}``; removing the only key of the document leaves an empty document.
        """
        path = _path(path)
        if not path:
            raise YamlEditError(self.name, 'remove needs a path to an item or a key', hint='give the path')
        marker = comment if comment is True else _comment_text(comment)
        node, chain = self._resolve(path)
        coll, i = chain[-1]
        self._check_text()
        self._check_node(coll, chain[:-1], 'the collection holding it', path)
        self._check_subtree(node, path)
        if coll.kind == 'mapping':
            key_node = coll.value[i][0]
            self._check_subtree(key_node, path)
            for k, _v in coll.value:
                if gy._is_merge(k):  # pylint: disable=protected-access
                    self._refuse(k, '%s: a mapping with a merge key (<<), where which value wins depends on the reader'
                                 % _path_text(path))
        if coll.style == 'flow':
            new_text = self._flow_remove(coll, i, path)
        else:
            self._check_block(coll, path[:-1])
            new_text = self._block_remove(coll, chain, i, path, marker)
        self._commit(new_text, path[:-1] + (path[-1],), 'remove')

    def _flow_remove(self, coll, i, path):
        open_, close, multiline, _prefix = self._flow_layout(coll, path[:-1])
        n = len(coll.value)
        heads = [self._head(coll, j) for j in range(n)]
        ends = [(coll.value[j][1] if coll.kind == 'mapping' else coll.value[j]).end for j in range(n)]
        if n == 1:
            if multiline:
                return self._splice(open_ + 1, close, '')
            b = ends[0]
            rest = self.text[b:close]
            if rest.strip(' ').startswith(','):
                b = b + rest.index(',') + 1
            return self._splice(heads[0], b, '')
        if i < n - 1:
            return self._splice(heads[i], heads[i + 1], '')
        return self._splice(ends[i - 1], ends[i], '')

    def _block_remove(self, coll, chain, i, path, marker):
        n = len(coll.value)
        heads = [self._head(coll, j) for j in range(n)]
        nodes = [coll.value[j][1] if coll.kind == 'mapping' else coll.value[j] for j in range(n)]
        floor = self._floor(coll, chain)
        starts_line = self._indent_of(heads[i]) is not None
        if n == 1 and coll is not self.root:
            return self._empty_slot(coll, chain, path, marker)
        if n == 1 and self.doc is not None and not self.doc.explicit_start and len(self.docs) > self.document + 1:
            self._refuse(heads[0], '%s: removing the only key of a document that has no "---" would make the next '
                         'document take its place' % _path_text(path), hint='write "---" above it first, or edit by hand')
        drop = []
        if starts_line:
            floor_i = floor if i == 0 else self._line_after(nodes[i - 1])
            top, texts = self._comments_above(heads[i], floor_i)
            lines_from = self.line_start(heads[i])
            if marker is True:
                lines_from = top
            elif marker is not None and marker in texts:
                pos = top
                for t in texts:
                    nxt = self._next_line(pos)
                    if t == marker:
                        drop.append((pos, nxt))
                    pos = nxt
        elif i == n - 1:  # pragma: no cover - only a first entry shares its line
            self._refuse(heads[i], '%s: an entry sharing its line with other text' % _path_text(path))
        if i < n - 1:
            nxt_top = self._comments_above(heads[i + 1], self._line_after(nodes[i]))[0] \
                if self._indent_of(heads[i + 1]) is not None else heads[i + 1]
            if starts_line:
                return self._delete_lines(drop + [(lines_from, nxt_top)])
            between = self.text[self._content_end(nodes[i]):heads[i + 1]]
            if any(a for a, _b in self.comment_spans if self._content_end(nodes[i]) <= a < heads[i + 1]) or \
                    between.strip(' \r\n') != '':
                self._refuse(heads[i], '%s: the first entry shares its line with "-" and comments follow it'
                             % _path_text(path))
            return self._splice(heads[i], heads[i + 1], '')
        end = self._line_after(nodes[i])
        return self._delete_lines(drop + [(lines_from, end)])

    def _empty_slot(self, coll, chain, path, marker):
        """Replace the block collection ``coll`` (its only entry being removed) with [] or {}."""
        empty = '[]' if coll.kind == 'sequence' else '{}'
        return self._replace_slot(coll, empty, path[:-1], marker, 'removing the only entry')

    def _droppable_comments(self, node, marker):
        """Offsets of the comments above ``node``'s first entry that a removal may drop (``marker`` lines)."""
        if marker is None or node.kind not in ('mapping', 'sequence') or node.style != 'block' or not node.value:
            return set()
        head = self._head(node, 0)
        if self._indent_of(head) is None:
            return set()
        top, texts = self._comments_above(head, self._floor(node, None))
        out = set()
        pos = top
        for t in texts:
            if marker is True or t == marker:
                line = self.text[pos:self._next_line(pos)]
                out.add(pos + len(line) - len(line.lstrip(' \ufeff')))
            pos = self._next_line(pos)
        return out

    def _replace_slot(self, node, inline, path, marker, why):
        """The text with the block node ``node`` replaced by the one-line ``inline`` right after its
        ``:`` or ``-`` (a comment on that line is kept: ``key: [] # note``)."""
        parent = self._parents.get(id(node), (None, None))[0]
        if parent is None:
            a, prefix = node.start, ''
        else:
            a, prefix = self._indicator_before(node) + 1, ' '
        b = self._content_end(node)
        inner = [c for c, _e in self.comment_spans if a <= c < b]
        keep = ''
        if inner and inner[0] < node.start and self.line(inner[0]) == self.line(a):
            eol = self.text.find('\n', a)
            keep = self.text[a:eol if eol >= 0 else len(self.text)].rstrip('\r')
            inner = inner[1:]
        allowed = self._droppable_comments(node, marker)
        rest = [c for c in inner if c not in allowed]
        if rest:
            self._refuse(rest[0], '%s: %s would leave [] or {} and drop the comments inside it'
                         % (_path_text(path), why),
                         hint='pass comment=True to drop the comment lines above the entry too, or remove the '
                              'comments first, or edit by hand')
        return self.text[:a] + prefix + inline + keep + self.text[b:]

    def _replace(self, path, value, comment=None):
        node, chain = self._resolve(path)
        self._check_text()
        self._check_node(node, chain, 'the value', path)
        self._check_subtree(node, path)
        parent = chain[-1][0] if chain else None
        in_flow = parent is not None and parent.style == 'flow'
        if comment and (self.is_json or in_flow or not (isinstance(value, (list, tuple)) and value)):
            self._refuse(node, '%s: a marker comment goes above a block item; here the value is written in flow style'
                         % _path_text(path), hint='append without the comment')
        if parent is not None and parent.style == 'flow':
            open_, close, multiline, prefix = self._flow_layout(parent, path[:-1])
            if multiline and _is_collection(value) and value:
                body = render_json_lines(value, prefix, self._json_unit(), self.is_json, self.newline)
            else:
                body = render_flow(value, self.is_json)
            new_text = self._splice(node.start, node.end, body)
        else:
            if parent is not None:
                self._check_block(parent, path[:-1])
            new_text = self._block_replace(node, parent, chain, value, path, comment)
        self._commit(new_text, path, 'replace', canon_value(value))

    def _block_replace(self, node, parent, chain, value, path, comment=None):
        inline_new = not (_is_collection(value) and value)
        inline_old = node.kind in ('scalar', 'alias') and node.style not in ('literal', 'folded') or \
            (node.kind in ('mapping', 'sequence') and node.style == 'flow')
        if inline_new and inline_old:
            return self._splice(node.start, node.end, render_block(value, 0, self.style)[0])
        if inline_new:
            if node.kind == 'scalar':  # a block scalar
                return self._splice(node.start, self._content_end(node), render_scalar(value))
            return self._replace_slot(node, render_block(value, 0, self.style)[0], path, None, 'replacing it')
        # a block collection
        if parent is None:
            col = 0
            lines = render_block(value, col, self.style)
            if comment:
                lines = [comment, lines[0]] + lines[1:]
            a, b = node.start, self._content_end(node)
            self._no_comments(a, b, path)
            return self._splice(a, b, self.newline.join(lines))
        indicator = self._indicator_before(node)
        if comment and parent.kind == 'sequence':
            self._refuse(node, '%s: a marker comment for a list inside a list' % _path_text(path),
                         hint='append without the comment')
        if parent.kind == 'sequence':
            dash = indicator
            if node.kind in ('mapping', 'sequence') and node.style == 'block' and self.line(node.start) == self.line(dash):
                col = self.column(node.start)
            else:
                col = self.column(dash) + self.style.seq_content
            lines = render_block(value, col, self.style)
            a, b = dash + 1, self._content_end(node)
            self._no_comments(a, b, path)
            gap = ' ' * (col - self.column(dash) - 1)
            return self._splice(a, b, gap + self.newline.join(lines))
        key = parent.value[chain[-1][1]][0]
        kcol = self.column(key.start)
        col = kcol + (self.style.map_indent if isinstance(value, (dict, gy.Pairs)) else self.style.seq_offset)
        if node.kind in ('mapping', 'sequence') and node.style == 'block' and \
                (node.kind == 'mapping') == isinstance(value, (dict, gy.Pairs)):
            col = self.column(self._head(node, 0))
        lines = render_block(value, col, self.style)
        if comment:
            lines = [comment, ' ' * col + lines[0]] + lines[1:]
        a, b = indicator + 1, self._content_end(node)
        self._no_comments(a, b, path)
        trailing = ''
        if self.line(b) == self.line(a):
            # an inline value had the key's line to itself: its comment stays on that line
            eol = self.text.find('\n', b)
            eol = len(self.text) if eol < 0 else eol
            if eol > b and self.text[eol - 1] == '\r':
                eol -= 1
            trailing, b = self.text[b:eol], eol
        return self._splice(a, b, trailing + self.newline + ' ' * col + self.newline.join(lines))

    def _no_comments(self, a, b, path):
        for s, _e in self.comment_spans:
            if a <= s < b:
                self._refuse(s, '%s: replacing the value would drop the comments inside it' % _path_text(path),
                             hint='remove those comments first, or edit by hand')
