# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""Read, edit and write systemd unit files without losing a byte.

Pure Python, no Ansible import. The reading follows systemd's own rules
(``systemd.syntax(7)``, ``systemd.service(5)``):

* lines end in LF, CRLF or CR; a line whose first non-blank character is ``#`` or ``;``
  is a comment, also in the middle of a continued line (it is skipped, the continuation
  goes on after it);
* a line ending in an odd number of backslashes continues on the next line, the
  backslash read as a space;
* ``[Section]`` headers, ``Key=Value`` assignments, repeated keys kept in order; an
  empty ``ExecStart=`` resets the list (drop-ins use it to replace the command);
* an ExecStart command line is split like systemd's ``extract_first_word`` with
  unquoting and C unescaping: quotes may start anywhere in a word, backslash escapes
  work in and out of quotes, an unknown escape or an unbalanced quote is an error;
  the prefixes ``-@:+!|`` are read from the first word; ``%%`` reads as ``%`` and other
  ``%`` specifiers are kept as written.

Edits touch only the bytes they own: an added argument is a new line in the
installer's style (TAB, the argument in single quotes, `` \\``) or, when the command
is not laid out that way, a space and the quoted argument after the last word; removing
it takes away exactly that line or that text again.
"""

from __future__ import annotations

import re

WHITESPACE = ' \t\n\r'
COMMENT_CHARS = '#;'
EXEC_PREFIX_CHARS = '-@:+!|'
_LINE_RE = re.compile(r'([^\r\n]*)(\r\n|\n|\r|$)')


class ParseError(ValueError):
    """The text is not what this parser can read (or edit) safely; the message says why and what to do."""


class Line:
    """One physical line: its text without the line ending, and the line ending."""

    __slots__ = ('text', 'eol')

    def __init__(self, text, eol):
        self.text = text
        self.eol = eol

    def __repr__(self):
        return 'Line(%r, %r)' % (self.text, self.eol)


class Directive:
    """One ``Key=Value`` assignment, possibly continued over several physical lines."""

    def __init__(self, section, key, value, start, end, line_numbers, chars):
        self.section = section
        self.key = key
        self.value = value
        self.start = start  # index of the first physical line
        self.end = end  # index of the last physical line (inclusive)
        self.line_numbers = line_numbers  # physical lines that make it up (comments inside excluded)
        self.chars = chars  # [(line index, column)] of every character of the joined text

    @property
    def is_reset(self):
        return self.value == ''

    def __repr__(self):
        return 'Directive(%r, %r, %r, lines %d-%d)' % (self.section, self.key, self.value, self.start + 1, self.end + 1)


class Token:
    """One word of a command line and where its text sits in the file."""

    __slots__ = ('value', 'raw', 'start', 'end')

    def __init__(self, value, raw, start, end):
        self.value = value
        self.raw = raw
        self.start = start  # (line index, column) of the first character
        self.end = end  # (line index, column) just after the last character

    def __repr__(self):
        return 'Token(%r)' % (self.value,)


class ExecCommand:
    """A parsed ExecStart: prefixes, executable path, argv (argv[0] included) and the word tokens."""

    def __init__(self, prefix, path, argv, tokens, argv_offset):
        self.prefix = prefix
        self.path = path
        self.argv = argv
        self.tokens = tokens
        self.argv_offset = argv_offset  # tokens[argv_offset + i] holds argv[i]

    @property
    def args(self):
        """The arguments after argv[0]."""
        return self.argv[1:]

    def arg_tokens(self):
        return self.tokens[self.argv_offset + 1:]


def split_lines(text):
    """Physical lines of ``text`` with their line endings; ``''.join`` gives ``text`` back."""
    lines = []
    pos = 0
    n = len(text)
    while pos < n:
        m = _LINE_RE.match(text, pos)
        lines.append(Line(m.group(1), m.group(2)))
        pos = m.end()
    return lines


def decode(data):
    """Text of ``data`` (bytes or str); bytes that are not UTF-8 survive a round trip."""
    if isinstance(data, bytes):
        if b'\x00' in data:
            raise ParseError('the file holds NUL bytes: it is not a systemd unit file. '
                             'Give the path of the unit (for example /etc/systemd/system/k3s.service).')
        return data.decode('utf-8', 'surrogateescape')
    return data


def encode(text):
    return text.encode('utf-8', 'surrogateescape')


def _odd_trailing_backslashes(text):
    n = len(text) - len(text.rstrip('\\'))
    return n % 2 == 1


class UnitFile:
    """A unit file as physical lines plus the directives read from them."""

    def __init__(self, data, name='unit file'):
        self.name = name
        text = decode(data)
        self.lines = split_lines(text)
        self.sections = []
        self.directives = []
        self._parse()

    # -- reading ---------------------------------------------------------------
    def _parse(self):
        self.sections = []
        self.directives = []
        section = None
        buf = None
        chars = None
        numbers = None
        start = None
        for idx, line in enumerate(self.lines):
            text = line.text
            if idx == 0 and text.startswith('\ufeff'):
                text = text[1:]
                offset = 1
            else:
                offset = 0
            lead = text.lstrip(WHITESPACE)
            if lead and lead[0] in COMMENT_CHARS:
                continue
            if buf is None:
                buf, chars, numbers, start = '', [], [], idx
            buf += text
            chars.extend((idx, offset + col) for col in range(len(text)))
            numbers.append(idx)
            if _odd_trailing_backslashes(buf):
                buf = buf[:-1] + ' '
                continue
            section = self._logical_line(buf, chars, numbers, start, idx, section)
            buf = None
        if buf is not None:
            # the file ends inside a continuation: systemd reads what it has
            self._logical_line(buf, chars, numbers, start, len(self.lines) - 1, section)

    def _logical_line(self, buf, chars, numbers, start, end, section):
        stripped = buf.strip(WHITESPACE)
        if not stripped:
            return section
        where = '%s line %d' % (self.name, start + 1)
        if stripped.startswith('['):
            if not stripped.endswith(']') or len(stripped) < 3:
                raise ParseError('%s: %r is not a valid [Section] header; fix the line or give the path of a systemd unit file.'
                                 % (where, stripped))
            name = stripped[1:-1]
            self.sections.append((name, start))
            return name
        if section is None:
            raise ParseError('%s: %r is outside any [Section]: this is not a systemd unit file. '
                             'Give the path of the service\'s unit (or its openrc init script).' % (where, _short(stripped)))
        if '=' not in buf:
            raise ParseError('%s: %r has no "=": this is not a valid unit file line. '
                             'Fix the line (a comment starts with # or ;) and run again.' % (where, _short(stripped)))
        eq = buf.index('=')
        key = buf[:eq].strip(WHITESPACE)
        lead = len(buf[eq + 1:]) - len(buf[eq + 1:].lstrip(WHITESPACE))
        value_start = eq + 1 + lead
        value = buf[value_start:].rstrip(WHITESPACE)
        self.directives.append(Directive(section, key, value, start, end, list(numbers), list(chars[value_start:])))
        return section

    def has_section(self, name):
        return any(s == name for s, dummy in self.sections)

    def get(self, section, key):
        """All directives ``key`` in ``section``, in file order."""
        return [d for d in self.directives if d.section == section and d.key == key]

    def render(self):
        """The file's bytes."""
        return encode(''.join(line.text + line.eol for line in self.lines))

    def text(self):
        return ''.join(line.text + line.eol for line in self.lines)

    # -- ExecStart -------------------------------------------------------------
    def exec_start(self, section='Service'):
        """The ExecStart directives that count after resets (``ExecStart=``), in order."""
        result = []
        for d in self.get(section, 'ExecStart'):
            if d.is_reset:
                result = []
            else:
                result.append(d)
        return result

    def has_exec_reset(self, section='Service'):
        return any(d.is_reset for d in self.get(section, 'ExecStart'))

    def parse_exec(self, directive):
        """The :class:`ExecCommand` of ``directive``."""
        return parse_exec_chars(directive.value, directive.chars, '%s line %d' % (self.name, directive.start + 1))

    def add_arg(self, directive, arg):
        """Append ``arg`` to the command of ``directive``, in the installer's layout when it has it."""
        quoted = quote_arg(arg)
        body = self._body_lines(directive)
        last = body[-1]
        if len(body) >= 2 and not self.lines[last].text.strip(WHITESPACE) and \
                _odd_trailing_backslashes(self.lines[body[-2]].text):
            # installer layout: ... 'arg' \ + (empty line) -> new line before the empty one
            prev = self.lines[body[-2]]
            self.lines.insert(last, Line('\t%s \\' % quoted, prev.eol or self.lines[last].eol or '\n'))
        else:
            cmd = self.parse_exec(directive)
            if not cmd.tokens:
                raise ParseError('ExecStart at line %d has no command to add %r to.' % (directive.start + 1, arg))
            line_idx, col = cmd.tokens[-1].end
            line = self.lines[line_idx]
            line.text = line.text[:col] + ' ' + quoted + line.text[col:]
        self._parse()

    def remove_arg(self, directive, arg):
        """Remove every argument equal to ``arg`` (argv[0] and the path are never touched); return how many."""
        cmd = self.parse_exec(directive)
        hits = [t for t in cmd.arg_tokens() if t.value == arg]
        if not hits:
            return 0
        body = set(self._body_lines(directive))
        # from the end, so earlier positions stay valid
        for tok in reversed(hits):
            remove_token(self.lines, tok, directive.start, body, arg)
        self._parse()
        return len(hits)

    def _body_lines(self, directive):
        return [i for i in range(directive.start, directive.end + 1)
                if self.lines[i].text.lstrip(WHITESPACE)[:1] not in ('#', ';') or i == directive.start]


def remove_token(lines, tok, first_line, body, what):
    """Take ``tok`` out of ``lines``: its whole line when it stands alone on a continued line, else its text.

    The inverse of adding a line ``<indent>'ARG' \\`` or the text `` 'ARG'`` after a word.
    """
    (sl, sc), (el, ec) = tok.start, tok.end
    if sl != el:
        raise ParseError('line %d: the argument %r is split over several lines; edit it by hand.' % (sl + 1, what))
    line = lines[sl]
    before, after = line.text[:sc], line.text[ec:]
    rest = after.strip(' \t')
    if sl != first_line and not before.strip(' \t') and rest in ('\\', '') and sl in body:
        if rest == '\\' and _odd_trailing_backslashes(line.text):
            del lines[sl]
            return
        line.text = ''
        return
    if before.strip(' \t'):
        cut = len(before) - len(before.rstrip(' \t'))
        line.text = before[:len(before) - cut] + after
    else:
        line.text = before + after[len(after) - len(after.lstrip(' \t')):]


def _short(text, limit=60):
    return text if len(text) <= limit else text[:limit] + '...'


# -- command line splitting ----------------------------------------------------
_SIMPLE_ESCAPES = {'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v',
                   '\\': '\\', '"': '"', "'": "'", 's': ' '}


def _byte_char(value):
    """A character for byte ``value`` that encodes back to that byte."""
    return chr(value) if value < 0x80 else chr(0xDC00 + value)


def _cunescape(text, i, where):
    """Unescape the sequence after the backslash at ``text[i - 1]``; return (chars, next index)."""
    if i >= len(text):
        raise ParseError('%s: the command ends in a lone backslash; remove it or write \\\\ for a backslash.' % where)
    c = text[i]
    if c in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[c], i + 1
    digits = {'x': 2, 'u': 4, 'U': 8}
    if c in digits:
        hexpart = text[i + 1:i + 1 + digits[c]]
        if len(hexpart) == digits[c] and all(h in '0123456789abcdefABCDEF' for h in hexpart):
            value = int(hexpart, 16)
            if value and value <= 0x10FFFF and not 0xD800 <= value <= 0xDFFF:
                return (_byte_char(value) if c == 'x' else chr(value)), i + 1 + digits[c]
    elif c in '01234567':
        octal = text[i:i + 3]
        if len(octal) == 3 and all(o in '01234567' for o in octal):
            value = int(octal, 8)
            if 0 < value < 256:
                return _byte_char(value), i + 3
    raise ParseError('%s: invalid escape sequence "\\%s" (systemd refuses the whole line); '
                     'write \\\\ for a backslash.' % (where, c))


def split_words(value, where='ExecStart'):
    """Split a command line like systemd; return a list of (value, raw, start, end) with indices into ``value``."""
    words = []
    i = 0
    n = len(value)
    while True:
        while i < n and value[i] in WHITESPACE:
            i += 1
        if i >= n:
            return words
        start = i
        cur = []
        quote = None
        while i < n:
            c = value[i]
            if quote is None:
                if c in WHITESPACE:
                    break
                if c == '\\':
                    chars, i = _cunescape(value, i + 1, where)
                    cur.append(chars)
                    continue
                if c in '\'"':
                    quote = c
                    i += 1
                    continue
                cur.append(c)
                i += 1
            else:
                if c == quote:
                    quote = None
                    i += 1
                    continue
                if c == '\\':
                    chars, i = _cunescape(value, i + 1, where)
                    cur.append(chars)
                    continue
                cur.append(c)
                i += 1
        if quote is not None:
            raise ParseError('%s: unbalanced %s quote in the command line (systemd ignores the whole line). '
                             'Close the quote, or write the argument as \'...\' with \'\\\'\' for a quote inside.'
                             % (where, 'single' if quote == "'" else 'double'))
        words.append((''.join(cur), value[start:i], start, i))


def resolve_percent(word):
    """``%%`` reads as ``%``; other specifiers are kept as written."""
    out = []
    i = 0
    while i < len(word):
        if word[i] == '%' and word[i + 1:i + 2] == '%':
            out.append('%')
            i += 2
        else:
            out.append(word[i])
            i += 1
    return ''.join(out)


def parse_exec_chars(value, chars, where='ExecStart'):
    """Parse an ExecStart value; ``chars`` maps its characters to (line, column) in the file (or is None)."""
    words = split_words(value, where)
    if not words:
        raise ParseError('%s: ExecStart= is empty (a reset): there is no command here.' % where)

    def pos(i):
        return (0, i) if chars is None else chars[i]

    def end_pos(e):
        if chars is None:
            return (0, e)
        line, col = chars[e - 1]
        return (line, col + 1)

    tokens = []
    for w, raw, s, e in words:
        if raw == ';':
            raise ParseError('%s: the command line holds several commands separated by ";"; '
                             'k3s units have one. Split the line by hand first.' % where)
        tokens.append(Token(resolve_percent(w), raw, pos(s), end_pos(e)))
    first = tokens[0].value
    prefix = ''
    while first and first[0] in EXEC_PREFIX_CHARS:
        prefix += first[0]
        first = first[1:]
    if not first:
        raise ParseError('%s: the command line has prefixes %r but no executable path.' % (where, prefix))
    if '@' in prefix:
        if len(tokens) < 2:
            raise ParseError('%s: the "@" prefix needs argv[0] after the executable path.' % where)
        argv = [t.value for t in tokens[1:]]
        return ExecCommand(prefix, first, argv, tokens, 1)
    argv = [first] + [t.value for t in tokens[1:]]
    return ExecCommand(prefix, first, argv, tokens, 0)


def parse_exec(value):
    """The :class:`ExecCommand` of an ExecStart value given as a string."""
    return parse_exec_chars(value, None)


def split_command(value):
    """The argv systemd builds from an ExecStart value (argv[0] included)."""
    return parse_exec(value).argv


# -- writing -------------------------------------------------------------------
def quote_arg(arg):
    """``arg`` as one ExecStart word in the installer's style ('...'), safe for systemd.

    ``'`` is written ``'\\''`` as the installer does; a backslash is doubled and ``%``
    written ``%%`` so systemd passes them on unchanged.
    """
    if '\n' in arg or '\r' in arg:
        raise ParseError('an argument cannot hold a line break: %r' % (arg,))
    return "'" + arg.replace('\\', '\\\\').replace('%', '%%').replace("'", "'\\''") + "'"


_PLAIN_WORD = re.compile(r'^[A-Za-z0-9_./:=,+@-]+$')


def render_exec_start(prefix, path, argv, argv0_explicit=False, eol='\n'):
    """An ExecStart directive for ``argv`` in the installer's layout (ends with the empty line)."""
    if argv0_explicit or '@' in prefix:
        head = '%s%s %s' % (prefix if '@' in prefix else prefix + '@', quote_arg(path) if not _PLAIN_WORD.match(path) else path,
                            _word(argv[0]))
    else:
        head = prefix + (path if _PLAIN_WORD.match(path) else quote_arg(path))
    out = ['ExecStart=%s \\' % head]
    rest = list(argv[1:])
    if rest and _PLAIN_WORD.match(rest[0]) and not rest[0].startswith('-'):
        out.append('    %s \\' % rest.pop(0))
    out.extend('\t%s \\' % quote_arg(a) for a in rest)
    out.append('')
    return eol.join(out) + eol


def _word(value):
    return value if _PLAIN_WORD.match(value) else quote_arg(value)


# -- environment ---------------------------------------------------------------
def parse_environment_file(data):
    """Variables of an ``EnvironmentFile=`` (KEY=VALUE lines, quotes removed, comments skipped)."""
    env = {}
    text = decode(data) if isinstance(data, bytes) else data
    pending = ''
    for line in text.splitlines():
        if pending:
            line = pending + line
            pending = ''
        if _odd_trailing_backslashes(line):
            pending = line[:-1]
            continue
        stripped = line.strip()
        if not stripped or stripped[0] in '#;':
            continue
        if stripped.startswith('export '):
            stripped = stripped[7:].lstrip()
        key, sep, value = stripped.partition('=')
        if not sep:
            continue
        env[key.strip()] = _env_unquote(value.strip())
    return env


def _env_unquote(value):
    out = []
    i = 0
    quote = None
    while i < len(value):
        c = value[i]
        if quote is None and c in '\'"':
            quote = c
        elif quote is not None and c == quote:
            quote = None
        elif c == '\\' and quote != "'" and i + 1 < len(value):
            i += 1
            out.append(value[i])
        else:
            out.append(c)
        i += 1
    return ''.join(out)


_VAR_RE = re.compile(r'\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$\$')


def expand_argv(argv, env):
    """argv after systemd's ``$VAR`` (split on whitespace, whole words) and ``${VAR}`` expansion."""
    out = []
    for word in argv:
        m = re.match(r'^\$([A-Za-z_][A-Za-z0-9_]*)$', word)
        if m:
            out.extend(env.get(m.group(1), '').split())
            continue

        def repl(mm):
            if mm.group(0) == '$$':
                return '$'
            return env.get(mm.group(1), '')
        out.append(_VAR_RE.sub(repl, word))
    return out
