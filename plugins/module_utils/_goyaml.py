# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""YAML read the way go-yaml v2 reads it: one emulation for k3s and kube-scheduler.

k3s reads ``config.yaml`` and its drop-ins with gopkg.in/yaml.v2 into a ``yaml.MapSlice``
(keys in file order, duplicates kept); kube-scheduler reads its KubeSchedulerConfiguration
with sigs.k8s.io/yaml, which decodes with the same go-yaml v2 into ``interface{}`` (strict:
duplicate keys refused) and turns the result into JSON. Both parse with go-yaml's port of
libyaml, so this module parses with libyaml too (PyYAML's C parser) and only emulates the
decoding: YAML 1.1 scalars as go-yaml v2 resolves them (``y``/``yes``/``on`` are booleans,
``0o17`` and ``017`` are 15, ``08`` and ``1e3`` are floats, ``1:30`` and timestamps are text),
merge keys, anchors and aliases, explicit tags. Every rule here was checked against the real
Go code by ``tests/integration/test_goyaml_oracle.py``.

Without libyaml (PyYAML built without it) the pure-Python parser is used; it refuses some
files go-yaml reads (a tab before a trailing comment), and its refusals then say so.

API:

* :func:`load` the first document as go-yaml decodes it into ``interface{}``; mappings are
  :class:`Pairs` (``duplicate_keys='keep'``: yaml.MapSlice, k3s) or :class:`GoMap`
  (``'error'``: strict decoding, sigs.k8s.io/yaml strict; ``'last'``: non-strict);
* :func:`load_pairs` a k3s config file's (key, value) pairs;
* :func:`yaml_to_json` / :func:`load_json` sigs.k8s.io/yaml's YAMLToJSON(Strict) and its value;
* :func:`compose_all` / :func:`compose` the node tree with character spans into the text;
* :func:`to_go_string` Go's ``fmt.Sprint`` of a decoded value, :func:`to_k3s_string` wrangler's
  ``convert.ToString`` (what k3s makes of a config value);
* :class:`GoYamlError` every refusal, naming the file, the line and what to do.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import struct

try:
    import yaml
    HAS_YAML = True
    YAML_IMPORT_ERROR = None
except ImportError as _e:  # pragma: no cover - PyYAML is on every supported node
    yaml = None
    HAS_YAML = False
    YAML_IMPORT_ERROR = _e

_CLOADER = getattr(yaml, 'CBaseLoader', None) if HAS_YAML else None
HAS_LIBYAML = bool(HAS_YAML and getattr(yaml, '__with_libyaml__', False) and _CLOADER is not None)

PYYAML_PACKAGES = ('Debian/Ubuntu: apt-get install python3-yaml; EL 8/9: dnf install python3-pyyaml; '
                   'SUSE: zypper install python3-PyYAML')
LIBYAML_HINT = ('PyYAML with libyaml, as the distribution packages ship it (%s); a PyYAML installed '
                'by pip from source without the libyaml headers lacks it' % PYYAML_PACKAGES)

STR_TAG = 'tag:yaml.org,2002:str'
INT_TAG = 'tag:yaml.org,2002:int'
FLOAT_TAG = 'tag:yaml.org,2002:float'
BOOL_TAG = 'tag:yaml.org,2002:bool'
NULL_TAG = 'tag:yaml.org,2002:null'
TIMESTAMP_TAG = 'tag:yaml.org,2002:timestamp'
BINARY_TAG = 'tag:yaml.org,2002:binary'
MERGE_TAG = 'tag:yaml.org,2002:merge'
SEQ_TAG = 'tag:yaml.org,2002:seq'
MAP_TAG = 'tag:yaml.org,2002:map'
_LONG_PREFIX = 'tag:yaml.org,2002:'

DUPLICATE_KEYS = ('error', 'keep', 'last')
INT64_MIN = -(2 ** 63)
INT64_MAX = 2 ** 63 - 1
UINT64_MAX = 2 ** 64 - 1


class GoYamlError(ValueError):
    """go-yaml would refuse this document too (or, without libyaml, this node cannot tell).

    ``name`` the file, ``line``/``column`` 1-based (None when unknown), ``problem`` what is wrong.
    """

    def __init__(self, name, problem, line=None, column=None, hint=None):
        self.name = name
        self.problem = problem
        self.line = line
        self.column = column
        self.hint = hint
        where = name
        if line is not None:
            where += ' line %d' % line
            if column is not None:
                where += ', column %d' % column
        msg = '%s: %s' % (where, problem)
        if hint:
            msg += '; ' + hint
        super().__init__(msg)


_DEFAULT_HINT = 'go-yaml (k3s, kube-scheduler) refuses it too: fix the file at that place'


def short_tag(tag):
    """``!!int`` for ``tag:yaml.org,2002:int`` (go-yaml's shortTag)."""
    if tag and tag.startswith(_LONG_PREFIX):
        return '!!' + tag[len(_LONG_PREFIX):]
    return tag


# ---------------------------------------------------------------- values
class Pairs(list):
    """A YAML mapping as go-yaml's yaml.MapSlice: a list of (key, value), file order, duplicates kept."""

    go_type = 'yaml.MapSlice'

    def keys(self):
        return [k for k, _v in self]

    def values(self):
        return [v for _k, v in self]

    def get(self, key, default=None):
        """The value of the last pair whose key equals ``key`` as Go compares it (type and value)."""
        ident = _key_identity(key)
        found = default
        for k, v in self:
            if _key_identity(k) == ident:
                found = v
        return found

    def __contains__(self, key):
        ident = _key_identity(key)
        return any(_key_identity(k) == ident for k, _v in self)

    def to_dict(self):
        """A plain dict (later keys win; nested mappings converted too)."""
        return dict((k, _plain(v)) for k, v in self)


class GoMap(Pairs):
    """A YAML mapping as go-yaml decodes it into map[interface{}]interface{}: unique keys.

    Kept in first-insertion order (Go's map has none); a key set again keeps its place.
    """

    go_type = 'map[interface {}]interface {}'


def _plain(value):
    if isinstance(value, Pairs):
        return value.to_dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class _NaNKey(object):
    """A NaN map key: equal to nothing, as in Go."""


def _key_identity(key):
    """How Go compares two interface{} map keys: type and value (1, 1.0 and true differ; NaN never equal)."""
    if key is None:
        return ('nil',)
    if isinstance(key, bool):
        return ('bool', key)
    if isinstance(key, int):
        return ('int' if INT64_MIN <= key <= INT64_MAX else 'uint64', key)
    if isinstance(key, float):
        if math.isnan(key):
            return ('nan', _NaNKey())
        return ('float64', key + 0.0)
    if isinstance(key, str):
        return ('string', key)
    return ('other', id(key))


def go_type(value):
    """The Go type go-yaml gives ``value`` when decoding into interface{} (``int``, ``yaml.MapSlice``...)."""
    if value is None:
        return 'nil'
    if isinstance(value, bool):
        return 'bool'
    if isinstance(value, int):
        return 'int' if INT64_MIN <= value <= INT64_MAX else 'uint64'
    if isinstance(value, float):
        return 'float64'
    if isinstance(value, str):
        return 'string'
    if isinstance(value, Pairs):
        return value.go_type
    if isinstance(value, list):
        return '[]interface {}'
    return type(value).__name__


# ---------------------------------------------------------------- Go number formatting
def _shortest_digits(value):
    """(digits, dp): abs(value) == 0.<digits> * 10**dp with the fewest digits that round-trip."""
    text = repr(abs(value))
    if 'e' in text:
        mant, exp = text.split('e')
        exp = int(exp)
    else:
        mant, exp = text, 0
    intpart, _sep, frac = mant.partition('.')
    if frac == '0':
        frac = ''
    all_digits = intpart + frac
    stripped = all_digits.lstrip('0')
    dp = len(intpart) + exp - (len(all_digits) - len(stripped))
    return stripped.rstrip('0') or '0', dp


def _shortest_digits32(value):
    """(digits, dp) of the float32 nearest ``value`` (Go's FormatFloat(v, 'g', -1, 32))."""
    f32 = struct.unpack('>f', struct.pack('>f', value))[0]
    for prec in range(1, 10):
        text = '%.*e' % (prec - 1, abs(f32))
        if struct.unpack('>f', struct.pack('>f', float(text)))[0] == abs(f32):
            mant, exp = text.split('e')
            digits = mant.replace('.', '').rstrip('0') or '0'
            return digits, int(exp) + 1
    return _shortest_digits(f32)  # pragma: no cover - 9 digits always round-trip a float32


def _fmt_e(neg, digits, dp, min_exp_digits=2):
    exp = dp - 1
    mant = digits[0] + ('.' + digits[1:] if len(digits) > 1 else '')
    return '%s%se%s%0*d' % ('-' if neg else '', mant, '-' if exp < 0 else '+', min_exp_digits, abs(exp))


def _fmt_f(neg, digits, dp):
    sign = '-' if neg else ''
    if dp <= 0:
        return sign + '0.' + '0' * (-dp) + digits
    if dp >= len(digits):
        return sign + digits + '0' * (dp - len(digits))
    return sign + digits[:dp] + '.' + digits[dp:]


def _go_format_g(value, bits=64):
    """strconv.FormatFloat(value, 'g', -1, bits), also fmt's %v: %e when the exponent is < -4 or >= 6."""
    if math.isnan(value):
        return 'NaN'
    if math.isinf(value):
        return '+Inf' if value > 0 else '-Inf'
    neg = math.copysign(1.0, value) < 0
    if value == 0:
        return '-0' if neg else '0'
    if bits == 32:
        try:
            digits, dp = _shortest_digits32(value)
        except OverflowError:
            return '+Inf' if value > 0 else '-Inf'
    else:
        digits, dp = _shortest_digits(value)
    exp = dp - 1
    if exp < -4 or exp >= 6:
        return _fmt_e(neg, digits, dp)
    return _fmt_f(neg, digits, dp)


def _go_json_float(value):
    """encoding/json's float64: %f between 1e-6 and 1e21, else %e with e-07 cleaned to e-7."""
    if math.isnan(value) or math.isinf(value):
        raise ValueError('json: unsupported value: %s' % _go_format_g(value))
    neg = math.copysign(1.0, value) < 0
    if value == 0:
        return '-0' if neg else '0'
    digits, dp = _shortest_digits(value)
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        text = _fmt_e(neg, digits, dp)
        if text[-4:-2] == 'e-' and text[-2] == '0':
            text = text[:-2] + text[-1]
        return text
    return _fmt_f(neg, digits, dp)


def to_go_string(value):
    """Go's ``fmt.Sprint`` of a value go-yaml decoded into interface{} (``<nil>``, ``1e+06``, ``[a b]``)."""
    if value is None:
        return '<nil>'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_format_g(value)
    if isinstance(value, GoMap):
        items = sorted(value, key=lambda kv: _sort_key(kv[0]))
        return 'map[' + ' '.join('%s:%s' % (to_go_string(k), to_go_string(v)) for k, v in items) + ']'
    if isinstance(value, Pairs):
        return '[' + ' '.join('{%s %s}' % (to_go_string(k), to_go_string(v)) for k, v in value) + ']'
    if isinstance(value, list):
        return '[' + ' '.join(to_go_string(v) for v in value) + ']'
    return str(value)


def _sort_key(key):
    # fmt sorts map keys of one type by value; across types the order is Go's type order (not stable).
    order = {'nil': 0, 'bool': 1, 'int': 2, 'uint64': 3, 'float64': 4, 'string': 5}
    t = go_type(key)
    if t == 'float64' and math.isnan(key):
        return (order[t], 0, float('-inf'))
    return (order.get(t, 9), 1, key if t != 'nil' else 0)


def to_k3s_string(value):
    """What k3s makes of a config value: wrangler ``convert.ToString``.

    The first item of a list (none for an empty list), then ``fmt.Sprint``, white space
    trimmed; nil gives "".
    """
    if isinstance(value, list) and not isinstance(value, Pairs):
        if not value:
            return ''
        value = value[0]
    if value is None:
        return ''
    return to_go_string(value).strip(_GO_SPACE)


# unicode.IsSpace, what Go's strings.TrimSpace removes
_GO_SPACE = (' \t\n\r\v\f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a'
             '\u2028\u2029\u202f\u205f\u3000')


# ---------------------------------------------------------------- scalar resolution (resolve.go)
# Go's math.NaN() (0x7ff8000000000001), so that a value's bits are Go's too.
GO_NAN = struct.unpack('>d', b'\x7f\xf8\x00\x00\x00\x00\x00\x01')[0]
_RESOLVE_MAP = {}
for _words, _tag, _value in (
        (('y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON'), BOOL_TAG, True),
        (('n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF'), BOOL_TAG, False),
        (('', '~', 'null', 'Null', 'NULL'), NULL_TAG, None),
        (('.nan', '.NaN', '.NAN'), FLOAT_TAG, GO_NAN),
        (('.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF'), FLOAT_TAG, float('inf')),
        (('-.inf', '-.Inf', '-.INF'), FLOAT_TAG, float('-inf')),
        (('<<',), MERGE_TAG, '<<')):
    for _word in _words:
        _RESOLVE_MAP[_word] = (_tag, _value)
_RESOLVABLE = ('', STR_TAG, BOOL_TAG, INT_TAG, FLOAT_TAG, NULL_TAG, TIMESTAMP_TAG)
_YAML_STYLE_FLOAT = re.compile(r'^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$')
_GO_DECIMAL_FLOAT = re.compile(r'^[-+]?[0-9_]*\.?[0-9_]*([eE][-+]?[0-9][0-9_]*)?$')
_DIGITS = {2: '01', 8: '01234567', 10: '0123456789', 16: '0123456789abcdefABCDEF'}


def _hint(text):
    if not text:
        return 'N'
    c = text[0]
    if c in '+-':
        return 'S'
    if c in '0123456789':
        return 'D'
    if c in 'yYnNtTfFoO~':
        return 'M'
    if c == '.':
        return '.'
    return None


def _parse_uint(s, base):
    """strconv.ParseUint(s, base, 64) for base 0 (Go prefixes) or a fixed base; None on error."""
    if not s:
        return None
    if base == 0:
        base = 10
        if s[0] == '0':
            if len(s) >= 3 and s[1] in 'bB':
                base, s = 2, s[2:]
            elif len(s) >= 3 and s[1] in 'oO':
                base, s = 8, s[2:]
            elif len(s) >= 3 and s[1] in 'xX':
                base, s = 16, s[2:]
            else:
                base, s = 8, s[1:]
            if not s and base != 8:
                return None
    if any(c not in _DIGITS[base] for c in s):
        return None
    value = int(s, base) if s else 0
    return value if value <= UINT64_MAX else None


def _parse_int(s, base):
    """strconv.ParseInt(s, base, 64); None on error."""
    if not s:
        return None
    neg = False
    body = s
    if s[0] in '+-':
        neg = s[0] == '-'
        body = s[1:]
        if not body:
            return None
    value = _parse_uint(body, base)
    if value is None:
        return None
    value = -value if neg else value
    return value if INT64_MIN <= value <= INT64_MAX else None


def _underscore_ok(s):
    """strconv's underscoreOK."""
    saw = '^'
    i = 0
    if s[:1] in ('+', '-'):
        s = s[1:]
    hexa = False
    if len(s) >= 2 and s[0] == '0' and s[1].lower() in 'box':
        i = 2
        saw = '0'
        hexa = s[1].lower() == 'x'
    while i < len(s):
        c = s[i]
        if '0' <= c <= '9' or (hexa and 'a' <= c.lower() <= 'f'):
            saw = '0'
        elif c == '_':
            if saw != '0':
                return False
            saw = '_'
        else:
            if saw == '_':
                return False
            saw = '!'
        i += 1
    return saw != '_'


def _parse_float(s):
    """strconv.ParseFloat(s, 64) for decimal text; None on error (out of range is an error)."""
    if not _GO_DECIMAL_FLOAT.match(s) or not any(c.isdigit() for c in s.split('e')[0].split('E')[0]):
        return None
    if '_' in s and not _underscore_ok(s):
        return None
    try:
        value = float(s.replace('_', ''))
    except ValueError:
        return None
    if math.isinf(value):
        return None
    return value


_TS_FORMATS = ('T', 't', ' ', '')


def _getnum(v, fixed):
    """time's getnum: one or two leading digits (exactly two when ``fixed``)."""
    if not v or v[0] not in '0123456789':
        return None, v
    if len(v) < 2 or v[1] not in '0123456789':
        if fixed:
            return None, v
        return int(v[0]), v[1:]
    return int(v[:2]), v[2:]


def _days_in(month, year):
    if month == 2:
        return 29 if (year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _time_parse(fmt, s):
    """Go's time.Parse of one of go-yaml's timestamp layouts ('T', 't', ' ' or '' = date only)."""
    if len(s) < 4 or any(c not in '0123456789' for c in s[:4]):
        return False
    year = int(s[:4])
    v = s[4:]
    if not v.startswith('-'):
        return False
    month, v = _getnum(v[1:], False)
    if month is None or not 1 <= month <= 12 or not v.startswith('-'):
        return False
    day, v = _getnum(v[1:], False)
    if day is None:
        return False
    if fmt:
        if fmt == ' ':
            if not v.startswith(' '):
                return False
            v = v.lstrip(' ')
        elif not v.startswith(fmt):
            return False
        else:
            v = v[1:]
        hour, v = _getnum(v, False)
        if hour is None or hour >= 24 or not v.startswith(':'):
            return False
        minute, v = _getnum(v[1:], False)
        if minute is None or minute >= 60 or not v.startswith(':'):
            return False
        second, v = _getnum(v[1:], False)
        if second is None or second >= 60:
            return False
        if len(v) >= 2 and v[0] in '.,' and v[1] in '0123456789':
            i = 1
            while i < len(v) and v[i] in '0123456789':
                i += 1
            v = v[i:]
        if fmt in ('T', 't'):
            if v.startswith('Z'):
                v = v[1:]
            else:
                if len(v) < 6 or v[3] != ':' or v[0] not in '+-':
                    return False
                hh, rest = _getnum(v[1:3], True)
                mm, rest2 = _getnum(v[4:6], True)
                if hh is None or mm is None or rest or rest2 or hh > 24 or mm > 60:
                    return False
                v = v[6:]
    if v:
        return False
    return 1 <= day <= _days_in(month, year)


def _is_timestamp(s):
    """go-yaml's parseTimestamp succeeds on ``s``."""
    i = 0
    while i < len(s) and s[i] in '0123456789':
        i += 1
    if i != 4 or i == len(s) or s[i] != '-':
        return False
    return any(_time_parse(fmt, s) for fmt in _TS_FORMATS)


class _ResolveError(Exception):
    pass


def resolve(tag, text):
    """go-yaml v2's resolve(tag, in): (resolved tag, value); raises _ResolveError like its failf."""
    if tag not in _RESOLVABLE:
        return tag, text
    rtag, out = _resolve(tag, text)
    if tag in ('', rtag, STR_TAG, BINARY_TAG):
        return rtag, out
    if tag == FLOAT_TAG and rtag == INT_TAG and isinstance(out, int) and INT64_MIN <= out <= INT64_MAX:
        return FLOAT_TAG, float(out)
    raise _ResolveError('cannot decode %s `%s` as a %s' % (short_tag(rtag), text, short_tag(tag)))


def _resolve(tag, text):
    hint = _hint(text)
    if hint is None or tag in (STR_TAG, BINARY_TAG):
        return STR_TAG, text
    if text in _RESOLVE_MAP:
        return _RESOLVE_MAP[text]
    if hint == '.':
        value = _parse_float(text)
        if value is not None:
            return FLOAT_TAG, value
    elif hint in ('D', 'S'):
        if tag in ('', TIMESTAMP_TAG) and _is_timestamp(text):
            return TIMESTAMP_TAG, text
        plain = text.replace('_', '')
        value = _parse_int(plain, 0)
        if value is not None:
            return INT_TAG, value
        value = _parse_uint(plain, 0)
        if value is not None:
            return INT_TAG, value
        if _YAML_STYLE_FLOAT.match(plain):
            value = _parse_float(plain)
            if value is not None:
                return FLOAT_TAG, value
        if plain.startswith('0b'):
            value = _parse_int(plain[2:], 2)
            if value is not None:
                return INT_TAG, value
            value = _parse_uint(plain[2:], 2)
            if value is not None:
                return INT_TAG, value
        elif plain.startswith('-0b'):
            value = _parse_int('-' + plain[3:], 2)
            if value is not None:
                return INT_TAG, value
    return STR_TAG, text


def resolve_plain(text):
    """The value go-yaml v2 gives the plain (unquoted, untagged) scalar ``text`` in interface{}."""
    rtag, value = resolve('', text)
    if rtag in (TIMESTAMP_TAG, MERGE_TAG):
        return text
    return value


# ---------------------------------------------------------------- nodes
class Node(object):
    """One node of a composed document.

    ``kind``: 'scalar', 'sequence', 'mapping' or 'alias'. ``style``: for a scalar 'plain',
    'single', 'double', 'literal' or 'folded'; for a collection 'block' or 'flow'. ``tag``: the
    explicit tag in full (``tag:yaml.org,2002:str``, ``!``, ``!local``), None when untagged.
    ``implicit``: a scalar go-yaml resolves (plain and untagged, or tagged ``!``). ``value``: the
    scalar's text, the list of item nodes, the list of (key node, value node), or the alias's
    anchor name. ``target``: the node an alias names. ``start``/``end``: character offsets into
    the text (end exclusive; tag and anchor included); a block collection ends where its last
    item ends. ``line``/``column`` and ``end_line``/``end_column``: 0-based, as YAML counts them.
    """

    __slots__ = ('kind', 'style', 'tag', 'implicit', 'value', 'anchor', 'target', 'start', 'end',
                 'line', 'column', 'end_line', 'end_column')

    def __init__(self, kind, style, tag, implicit, value, anchor, start, end, line, column):
        self.kind = kind
        self.style = style
        self.tag = tag
        self.implicit = implicit
        self.value = value
        self.anchor = anchor
        self.target = None
        self.start = start
        self.end = end
        self.line = line
        self.column = column
        self.end_line = line
        self.end_column = column

    @property
    def flow(self):
        return self.style == 'flow'

    @property
    def quoted(self):
        return self.style in ('single', 'double')

    def __repr__(self):
        if self.kind == 'scalar':
            what = repr(self.value)
        elif self.kind == 'alias':
            what = '*' + self.value
        else:
            what = '%d items' % len(self.value)
        return '<Node %s %s %s [%d:%d]>' % (self.kind, self.style, what, self.start, self.end)


class DocumentNode(object):
    """One document of a stream: ``root`` (None when empty), its span, whether ``---``/``...``
    are written, and its %YAML version."""

    __slots__ = ('root', 'start', 'end', 'explicit_start', 'explicit_end', 'version', 'anchors')

    def __init__(self, start, explicit_start, version):
        self.root = None
        self.start = start
        self.end = start
        self.explicit_start = explicit_start
        self.explicit_end = False
        self.version = version
        self.anchors = {}


class Token(object):
    """A token of the scanner: ``kind`` (PyYAML's token class name without 'Token'), span."""

    __slots__ = ('kind', 'start', 'end', 'line', 'column')

    def __init__(self, kind, start, end, line, column):
        self.kind = kind
        self.start = start
        self.end = end
        self.line = line
        self.column = column

    def __repr__(self):
        return '<Token %s [%d:%d]>' % (self.kind, self.start, self.end)


_SCALAR_STYLES = {None: 'plain', '': 'plain', "'": 'single', '"': 'double', '|': 'literal', '>': 'folded'}


def _as_text(data, name):
    if isinstance(data, str):
        return data
    if isinstance(data, (bytes, bytearray)):
        data = bytes(data)
        try:
            if data.startswith(b'\xff\xfe') or data.startswith(b'\xfe\xff'):
                return data.decode('utf-16')
            return data.decode('utf-8')
        except UnicodeDecodeError as e:
            raise GoYamlError(name, 'invalid UTF-8 at byte %d (%s)' % (e.start, e.reason),
                              hint='go-yaml reads UTF-8 (or UTF-16 with a byte order mark): save the file as UTF-8')
    raise TypeError('YAML text must be str or bytes, not %s' % type(data).__name__)


def _backend(backend, name):
    if not HAS_YAML:
        raise GoYamlError(name, 'reading it needs PyYAML, which is not installed on this node (%s)' % (YAML_IMPORT_ERROR,),
                          hint='install it: ' + PYYAML_PACKAGES)
    if backend is None:
        backend = 'libyaml' if HAS_LIBYAML else 'python'
    if backend == 'libyaml' and not HAS_LIBYAML:
        raise GoYamlError(name, 'reading it with libyaml needs PyYAML built with libyaml', hint='install ' + LIBYAML_HINT)
    if backend not in ('libyaml', 'python'):
        raise ValueError("backend must be None, 'libyaml' or 'python', not %r" % (backend,))
    return backend


class _Source(object):
    """The loader for ``text`` and the way its marks map to offsets into ``text``."""

    def __init__(self, text, name, backend):
        self.text = text
        self.name = name
        self.backend = _backend(backend, name)
        # libyaml does not count a leading byte order mark; the pure-Python reader does.
        self.shift = 1 if (self.backend == 'libyaml' and text.startswith('\ufeff')) else 0
        self.bom = text.startswith('\ufeff')
        loader_cls = _CLOADER if self.backend == 'libyaml' else yaml.BaseLoader
        try:
            self.loader = loader_cls(text)
        except yaml.YAMLError as e:  # the pure-Python reader checks the characters first
            raise self.error(e)

    def index(self, mark):
        return mark.index + self.shift

    def column(self, mark):
        return mark.column

    def error(self, exc):
        mark = getattr(exc, 'problem_mark', None) or getattr(exc, 'context_mark', None)
        problem = getattr(exc, 'problem', None) or str(exc)
        context = getattr(exc, 'context', None)
        if context:
            problem = '%s %s' % (context, problem)
        line = mark.line + 1 if mark is not None else None
        column = mark.column + 1 if mark is not None else None
        if self.backend == 'python':
            return GoYamlError(
                self.name, 'not valid YAML for the pure-Python parser of this node\'s PyYAML: %s' % problem, line, column,
                hint=('that parser refuses some files go-yaml (k3s, kube-scheduler) reads, such as a tab before a '
                      'trailing comment, and this PyYAML has no libyaml, so the file may well be valid: install '
                      '%s, then run again' % LIBYAML_HINT))
        return GoYamlError(self.name, 'not valid YAML: %s' % problem, line, column, hint=_DEFAULT_HINT)

    def events(self):
        loader = self.loader
        try:
            while loader.check_event():
                yield loader.get_event()
        except yaml.YAMLError as e:
            raise self.error(e)
        finally:
            dispose = getattr(loader, 'dispose', None)
            if dispose is not None:
                dispose()

    def tokens(self):
        loader = self.loader
        out = []
        try:
            while loader.check_token():
                tok = loader.get_token()
                out.append(Token(type(tok).__name__[:-5] if type(tok).__name__.endswith('Token') else type(tok).__name__,
                                 self.index(tok.start_mark), self.index(tok.end_mark),
                                 tok.start_mark.line, self.column(tok.start_mark)))
        except yaml.YAMLError as e:
            raise self.error(e)
        return out


class _Composer(object):
    """Builds go-yaml's node tree from parser events (anchors per document, redefinable)."""

    def __init__(self, source):
        self.src = source
        self.events = source.events()

    def _next(self):
        try:
            return next(self.events)
        except StopIteration:  # pragma: no cover - the parser always ends with StreamEnd
            raise GoYamlError(self.src.name, 'unexpected end of the YAML stream', hint=_DEFAULT_HINT)

    def documents(self, first_only=False):
        if self.src.backend == 'python':
            self._python_directives()
        ev = self._next()  # StreamStart
        docs = []
        while True:
            ev = self._next()
            if isinstance(ev, yaml.StreamEndEvent):
                break
            docs.append(self._document(ev))
            if first_only:
                break
        return docs

    def _document(self, ev):
        version = getattr(ev, 'version', None)
        if version is not None and tuple(version) != (1, 1):
            raise GoYamlError(self.src.name, 'found incompatible YAML document (%%YAML %s; go-yaml reads only 1.1)'
                              % '.'.join(str(v) for v in version), ev.start_mark.line + 1, ev.start_mark.column + 1,
                              hint='remove the %YAML line or write %YAML 1.1')
        doc = DocumentNode(self.src.index(ev.start_mark), bool(getattr(ev, 'explicit', False)), version)
        self.doc = doc
        doc.root = self._node(self._next())
        end = self._next()  # DocumentEnd
        doc.explicit_end = bool(getattr(end, 'explicit', False))
        doc.end = self.src.index(end.end_mark)
        return doc

    def _new(self, ev, kind, style, tag, implicit, value):
        start = self.src.index(ev.start_mark)
        node = Node(kind, style, tag, implicit, value, getattr(ev, 'anchor', None), start,
                    self.src.index(ev.end_mark), ev.start_mark.line, self.src.column(ev.start_mark))
        node.end_line = ev.end_mark.line
        node.end_column = self.src.column(ev.end_mark)
        return node

    def _python_directives(self):
        """The pure-Python parser ignores unknown directives (%FOO); go-yaml and libyaml refuse them."""
        if '%' not in self.src.text:
            return
        try:
            tokens = yaml.scan(self.src.text, Loader=yaml.BaseLoader)
            for tok in tokens:
                if isinstance(tok, yaml.DirectiveToken) and tok.name not in ('YAML', 'TAG'):
                    self._fail_at(self.src.index(tok.start_mark), 'found unknown directive name %%%s' % tok.name,
                                  hint='remove the line (go-yaml knows only %YAML and %TAG)')
        except yaml.YAMLError:
            return  # the parse reports it

    def _fail_at(self, index, problem, hint=_DEFAULT_HINT):
        line, column = _line_column(self.src.text, index)
        raise GoYamlError(self.src.name, problem, line + 1, column + 1, hint=hint)

    def _go_scanner_checks(self, node, in_flow):
        """Where go-yaml's scanner (a port of libyaml 0.1) refuses what libyaml 0.2.5 reads."""
        text = self.src.text
        if node.style == 'double':
            i = node.start + 1
            while i < node.end - 1:
                c = text[i]
                if c == '\\':
                    if text[i + 1] == '/':
                        self._fail_at(i, 'found unknown escape character "\\/" in a double-quoted scalar (go-yaml knows '
                                         'no such escape)', hint='write a plain "/" instead')
                    i += 2
                    continue
                if c == '"':
                    break
                i += 1
        if self.src.backend == 'python' and re.search('[\ud800-\udfff]', node.value):
            self._fail_at(node.start, 'found invalid Unicode character escape code (a surrogate, \\ud800-\\udfff)',
                          hint='write the character itself, or \\U and its 8 hexadecimal digits')
        if node.style == 'plain' and in_flow and '?' in node.value:
            self._fail_at(node.start + max(text.find('?', node.start, node.end) - node.start, 0),
                          'did not find expected \',\' or the end of the flow collection: go-yaml ends a plain scalar '
                          'at "?" inside [] or {}', hint='quote the value ("...") in that flow collection')

    def _node(self, ev):
        # iterative: deep documents must not exhaust Python's stack
        stack = []
        result = None
        while True:
            if isinstance(ev, yaml.AliasEvent):
                node = self._new(ev, 'alias', None, None, False, ev.anchor)
                node.anchor = None
                node.target = self.doc.anchors.get(ev.anchor)
                if node.target is None:
                    raise GoYamlError(self.src.name, "unknown anchor '%s' referenced" % ev.anchor,
                                      ev.start_mark.line + 1, ev.start_mark.column + 1,
                                      hint='define the anchor (&%s) before the alias, or remove the alias' % ev.anchor)
                done = node
            elif isinstance(ev, yaml.ScalarEvent):
                implicit = ev.implicit[0] if isinstance(ev.implicit, (tuple, list)) else bool(ev.implicit)
                node = self._new(ev, 'scalar', _SCALAR_STYLES.get(ev.style, 'plain'), ev.tag, bool(implicit), ev.value)
                self._go_scanner_checks(node, bool(stack) and stack[-1][0].style == 'flow')
                if ev.anchor is not None:
                    self.doc.anchors[ev.anchor] = node
                done = node
            elif isinstance(ev, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                kind = 'sequence' if isinstance(ev, yaml.SequenceStartEvent) else 'mapping'
                node = self._new(ev, kind, 'flow' if ev.flow_style else 'block', ev.tag, False, [])
                if ev.anchor is not None:
                    self.doc.anchors[ev.anchor] = node
                stack.append([node, None])
                ev = self._next()
                continue
            elif isinstance(ev, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                node = stack.pop()[0]
                if node.style == 'flow':
                    node.end = self.src.index(ev.end_mark)
                    node.end_line = ev.end_mark.line
                    node.end_column = self.src.column(ev.end_mark)
                elif node.value:
                    last = node.value[-1][1] if node.kind == 'mapping' else node.value[-1]
                    node.end, node.end_line, node.end_column = last.end, last.end_line, last.end_column
                done = node
            else:  # pragma: no cover - the parser's grammar forbids it
                raise GoYamlError(self.src.name, 'unexpected %s' % type(ev).__name__, hint=_DEFAULT_HINT)
            if not stack:
                result = done
                break
            parent = stack[-1]
            if parent[0].kind == 'sequence':
                parent[0].value.append(done)
            elif parent[1] is None:
                parent[1] = done
            else:
                parent[0].value.append((parent[1], done))
                parent[1] = None
            ev = self._next()
        return result


def _line_column(text, index):
    """0-based (line, column) of ``index`` (line breaks: LF, CRLF, CR), the leading BOM not counted."""
    line = text.count('\n', 0, index) + text.count('\r', 0, index) - text.count('\r\n', 0, index)
    start = max(text.rfind('\n', 0, index), text.rfind('\r', 0, index)) + 1
    column = index - start
    if start == 0 and text.startswith('\ufeff') and index > 0:
        column -= 1
    return line, column


_INNER_BOM = re.compile('(?<=[\n\r])\ufeff')


def _check_inner_bom(text, name, docs, limit=None):
    """go-yaml reads a byte order mark at a line start (other than the file's first character) as text,
    libyaml skips it: refuse it where it is not inside a scalar."""
    if '\ufeff' not in text[1:]:
        return
    spans = []

    def walk(node):
        stack = [node]
        while stack:
            n = stack.pop()
            if n is None:
                continue
            if n.kind == 'scalar':
                spans.append((n.start, n.end))
            elif n.kind == 'sequence':
                stack.extend(n.value)
            elif n.kind == 'mapping':
                for k, v in n.value:
                    stack.extend((k, v))
    for doc in docs:
        walk(doc.root)
    if text.startswith('\ufeff\ufeff'):
        raise GoYamlError(name, 'the file starts with two byte order marks (U+FEFF): go-yaml then skips the first '
                          'character of lines', 1, 1, hint='remove the second one')
    for i in (m.start() for m in _INNER_BOM.finditer(text)):
        if limit is not None and i >= limit:
            break
        if not any(a <= i < b for a, b in spans):
            line, column = _line_column(text, i)
            raise GoYamlError(name, 'a byte order mark (U+FEFF) starts this line: go-yaml reads it as part of the '
                              'next key or value, libyaml skips it', line + 1, column + 1,
                              hint='remove the character (it is left over from joining files)')


def compose_all(text, name='document', backend=None):
    """Every document of ``text`` as :class:`DocumentNode`; raises :class:`GoYamlError`."""
    text = _as_text(text, name)
    docs = _parse(text, name, backend, False)
    _check_inner_bom(text, name, docs)
    return docs


def _parse(text, name, backend, first_only):
    try:
        return _Composer(_Source(text, name, backend)).documents(first_only=first_only)
    except GoYamlError:
        # libyaml skips a byte order mark that starts a line, go-yaml does not: say so rather than
        # what libyaml then trips over
        m = _INNER_BOM.search(text)
        if text.startswith('\ufeff\ufeff') or m:
            _check_inner_bom(text, name, [], m.start() + 1 if m and not text.startswith('\ufeff\ufeff') else None)
        raise


def compose(text, name='document', backend=None):
    """The root node of the first document (None when there is none or it is empty)."""
    text = _as_text(text, name)
    docs = _first_document(text, name, backend)
    return docs[0].root if docs else None


def _first_document(text, name, backend):
    docs = _parse(text, name, backend, True)
    _check_inner_bom(text, name, docs, docs[0].end if docs else None)
    return docs


def scan(text, name='document', backend=None):
    """The scanner's tokens of ``text`` (:class:`Token`), spans as offsets into ``text``."""
    text = _as_text(text, name)
    return _Source(text, name, backend).tokens()


# ---------------------------------------------------------------- decoding (decode.go)
_ALIAS_LOW = 400000
_ALIAS_HIGH = 4000000


def _allowed_alias_ratio(count):
    if count <= _ALIAS_LOW:
        return 0.99
    if count >= _ALIAS_HIGH:
        return 0.10
    return 0.99 - 0.89 * (float(count - _ALIAS_LOW) / (_ALIAS_HIGH - _ALIAS_LOW))


def _is_merge(node):
    if node.kind != 'scalar' or node.value != '<<':
        return False
    return (node.implicit and node.tag is None) or node.tag == MERGE_TAG


class _Fail(Exception):
    def __init__(self, msg, node=None):
        super().__init__(msg)
        self.msg = msg
        self.node = node


class _Decoder(object):
    def __init__(self, duplicate_keys):
        if duplicate_keys not in DUPLICATE_KEYS:
            raise ValueError('duplicate_keys must be one of %s, not %r' % (', '.join(DUPLICATE_KEYS), duplicate_keys))
        self.slice_mode = duplicate_keys == 'keep'
        self.strict = duplicate_keys == 'error'
        self.terrors = []
        self.aliases = set()
        self.decode_count = 0
        self.alias_count = 0
        self.alias_depth = 0

    def _count(self):
        self.decode_count += 1
        if self.alias_depth > 0:
            self.alias_count += 1
        many = self.alias_count > 100 and self.decode_count > 1000
        if many and float(self.alias_count) / self.decode_count > _allowed_alias_ratio(self.decode_count):
            raise _Fail('document contains excessive aliasing')

    def _alias(self, node, func, *args):
        if id(node) in self.aliases:
            raise _Fail("anchor '%s' value contains itself" % node.value, node)
        self.aliases.add(id(node))
        self.alias_depth += 1
        try:
            return func(node.target, *args)
        finally:
            self.alias_depth -= 1
            self.aliases.discard(id(node))

    def value(self, node):
        """Unmarshal ``node`` into a fresh interface{}."""
        self._count()
        if node.kind == 'alias':
            return self._alias(node, self.value)
        if node.kind == 'scalar':
            return self._scalar(node)
        if node.kind == 'sequence':
            return [self.value(child) for child in node.value]
        if self.slice_mode:
            return self._mapping_slice(node)
        out = GoMap()
        self._mapping_into(node, out, {})
        return out

    def _scalar(self, node):
        if node.tag is None and not node.implicit:
            return node.value
        try:
            tag, resolved = resolve(node.tag or '', node.value)
        except _ResolveError as e:
            raise _Fail(str(e), node)
        if tag == BINARY_TAG:
            data = resolved.replace('\r', '').replace('\n', '')
            try:
                raw = base64.b64decode(data.encode('ascii'), validate=True) if data.isascii() else None
            except (binascii.Error, ValueError):
                raw = None
            if raw is None or (len(data) % 4 != 0):
                raise _Fail('!!binary value contains invalid base64 data', node)
            return _go_bytes_to_str(raw)
        if resolved is None:
            return None
        if tag == TIMESTAMP_TAG:
            return node.value
        return resolved

    # map[interface{}]interface{} (sigs.k8s.io/yaml, yaml.Unmarshal into interface{})
    def _mapping_into(self, node, out, index):
        for key_node, value_node in node.value:
            if _is_merge(key_node):
                self._merge(value_node, lambda n: self._into_map(n, out, index))
                continue
            key = self.value(key_node)
            if isinstance(key, list):
                raise _Fail('invalid map key: %s' % _go_sharp(key), key_node)
            value = self.value(value_node)
            ident = _key_identity(key)
            if ident in index:
                if self.strict:
                    self.terrors.append('line %d: key %s already set in map' % (value_node.line + 1, _go_sharp(key)))
                    continue
                out[index[ident]] = (key, value)
            else:
                index[ident] = len(out)
                out.append((key, value))

    def _into_map(self, node, out, index):
        self._count()
        if node.kind == 'alias':
            return self._alias(node, self._into_map, out, index)
        return self._mapping_into(node, out, index)

    # yaml.MapSlice (k3s)
    def _mapping_slice(self, node):
        out = Pairs()
        for key_node, value_node in node.value:
            if _is_merge(key_node):
                # go-yaml decodes the merged mappings into the MapSlice, then overwrites it with
                # the explicit pairs: merged keys are checked but lost.
                self._merge(value_node, self._discard)
                continue
            key = self.value(key_node)
            out.append((key, self.value(value_node)))
        return out

    def _discard(self, node):
        self._count()
        if node.kind == 'alias':
            return self._alias(node, self._discard)
        return self._mapping_slice(node)

    def _merge(self, node, into):
        def want_map():
            raise _Fail('map merge requires map or sequence of maps as the value', node)
        if node.kind == 'mapping':
            into(node)
        elif node.kind == 'alias':
            if node.target.kind != 'mapping':
                want_map()
            into(node)
        elif node.kind == 'sequence':
            for child in reversed(node.value):
                if child.kind == 'alias':
                    if child.target.kind != 'mapping':
                        want_map()
                elif child.kind != 'mapping':
                    want_map()
                into(child)
        else:
            want_map()


def _go_bytes_to_str(raw):
    """A Go string holding ``raw``: bytes that are not UTF-8 kept as surrogate escapes (U+DC80-U+DCFF),
    so ``text.encode('utf-8', 'surrogateescape')`` gives them back; Go's JSON writes each as \\ufffd."""
    return raw.decode('utf-8', 'surrogateescape')


def _go_sharp(value):
    """Roughly Go's %#v of a key (for messages)."""
    if isinstance(value, str):
        return json.dumps(value)
    return to_go_string(value)


def _decode_document(doc, duplicate_keys, name):
    decoder = _Decoder(duplicate_keys)
    if doc is None or doc.root is None:
        return None
    try:
        value = decoder.value(doc.root)
    except _Fail as e:
        node = e.node
        raise GoYamlError(name, e.msg, node.line + 1 if node is not None else None,
                          node.column + 1 if node is not None else None, hint=_DEFAULT_HINT)
    except RecursionError:
        raise GoYamlError(name, 'the document is nested too deeply for this reader',
                          hint='flatten the document (this module refuses what Python cannot recurse into)')
    if decoder.terrors:
        raise GoYamlError(name, 'yaml: unmarshal errors: ' + '; '.join(decoder.terrors),
                          hint='each key may appear once in a mapping (kube-scheduler decodes strictly): '
                               'remove the duplicates')
    return value


def decode(node, duplicate_keys='error', name='document'):
    """The value go-yaml decodes from a composed node (see :func:`load`)."""
    if node is None:
        return None
    doc = DocumentNode(node.start, False, None)
    doc.root = node
    return _decode_document(doc, duplicate_keys, name)


def load(text, duplicate_keys='error', name='document', backend=None):
    """The first document of ``text`` as go-yaml v2 decodes it into interface{}.

    ``duplicate_keys``: 'keep' decodes mappings as yaml.MapSlice does (k3s): :class:`Pairs` in file
    order, duplicates kept, the pairs a merge key (<<) brings in checked but dropped; 'error'
    as strict decoding does (sigs.k8s.io/yaml strict): :class:`GoMap`, merges applied, a key set
    twice (merged keys included) refused; 'last' like 'error' but a key set again replaces the value.
    Only the first document is read, as go-yaml's Unmarshal does. Raises :class:`GoYamlError`.
    """
    text = _as_text(text, name)
    docs = _first_document(text, name, backend)
    return _decode_document(docs[0] if docs else None, duplicate_keys, name)


def load_pairs(text, name='config file', backend=None):
    """A k3s config file's (key, value) pairs as k3s reads them (yaml.MapSlice).

    An empty file (or ``~``) gives no pairs. A top-level sequence is refused: k3s would read
    its ``{key: K, value: V}`` items as pairs, which no one means to write.
    """
    text = _as_text(text, name)
    docs = _first_document(text, name, backend)
    doc = docs[0] if docs else None
    root = doc.root if doc is not None else None
    while root is not None and root.kind == 'alias':
        root = root.target
    if root is not None and root.kind == 'sequence':
        raise GoYamlError(name, 'the file holds a sequence, not a mapping of flag names to values',
                          root.line + 1, root.column + 1, hint='write one "flag-name: value" per line')
    value = _decode_document(doc, 'keep', name)
    if value is None:
        return Pairs()
    if not isinstance(value, Pairs):
        raise GoYamlError(name, 'cannot unmarshal %s into yaml.MapSlice: the file must be a mapping of flag names '
                          'to values' % go_type(value), root.line + 1, root.column + 1,
                          hint='k3s refuses to start on it: write one "flag-name: value" per line')
    return value


# ---------------------------------------------------------------- sigs.k8s.io/yaml
def _json_key(key):
    if isinstance(key, bool):
        return 'true' if key else 'false'
    if isinstance(key, str):
        return key
    if isinstance(key, int) and INT64_MIN <= key <= INT64_MAX:
        return str(key)
    if isinstance(key, float):
        text = _go_format_g(key, 32)
        return {'+Inf': '.inf', '-Inf': '-.inf', 'NaN': '.nan'}.get(text, text)
    raise _Fail('unsupported map key of type: %s, key: %s' % ('<nil>' if key is None else go_type(key), to_go_string(key)))


def _jsonable(value):
    if isinstance(value, Pairs):
        out = {}
        for key, item in value:
            text = _json_key(key)
            if text in out:
                raise _Fail('the keys %s and another both become "%s" in JSON, and sigs.k8s.io/yaml keeps one of them '
                            'at random' % (_go_sharp(key), text))
            out[text] = _jsonable(item)
        return out
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


_JSON_ESCAPES = {'"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f',
                 '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029'}
_JSON_SPECIAL = re.compile('[\x00-\x1f"\\\\<>&\u2028\u2029\ud800-\udfff]')


def _json_escape(match):
    c = match.group(0)
    if '\ud800' <= c <= '\udfff':
        return '\\ufffd'  # a byte that is not UTF-8 (see _go_bytes_to_str)
    return _JSON_ESCAPES.get(c, '\\u%04x' % ord(c))


def _go_json_string(text):
    return '"' + _JSON_SPECIAL.sub(_json_escape, text) + '"'


def go_json_dumps(value):
    """Go's encoding/json Marshal of a JSON-able value (keys sorted, HTML escaped, Go's float format)."""
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_json_float(value)
    if isinstance(value, str):
        return _go_json_string(value)
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode('utf-8', 'surrogatepass'))
        return '{' + ','.join('%s:%s' % (_go_json_string(k), go_json_dumps(value[k])) for k in keys) + '}'
    if isinstance(value, list):
        return '[' + ','.join(go_json_dumps(v) for v in value) + ']'
    raise TypeError('not a JSON value: %r' % (value,))


def yaml_to_json(text, strict=True, name='document', backend=None):
    """sigs.k8s.io/yaml's YAMLToJSONStrict (or YAMLToJSON): the JSON text kube-scheduler decodes."""
    value = load(text, 'error' if strict else 'last', name, backend)
    try:
        return go_json_dumps(_jsonable(value))
    except _Fail as e:
        raise GoYamlError(name, e.msg, hint='write the key as a quoted string')
    except ValueError as e:
        raise GoYamlError(name, str(e), hint='.inf and .nan have no JSON form: write a number')


def load_json(text, strict=True, name='document', backend=None):
    """The JSON value of :func:`yaml_to_json`: dicts with string keys, ints and floats as JSON numbers
    (a float go-yaml read as 1.0 is the int 1 here, as JSON has it), strings, booleans, None."""
    return json.loads(yaml_to_json(text, strict, name, backend))
