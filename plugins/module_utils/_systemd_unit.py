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
* an ExecStart command line is read as systemd 252's ``config_parse_exec`` reads it: words
  split like ``extract_first_word`` with unquoting and C unescaping (quotes may start anywhere
  in a word, backslash escapes work in and out of quotes, an invalid escape is kept verbatim
  with a warning, an unbalanced quote is an error), the prefixes ``-@:+!`` (``!!``) read from
  the first word by systemd's rules, the executable path checked (no quotes, backslashes or
  control characters, no trailing ``/``, absolute or a plain program name) and simplified,
  ``;`` separating commands, and ``%`` specifiers expanded from facts the caller gives (or,
  without them, kept as written with ``%%`` read as ``%``; an unknown specifier is refused as
  systemd refuses it). A line systemd would not load is a :class:`ParseError` saying why and
  what to do; so are lines this module will not edit (several commands, invalid escapes).

Edits touch only the bytes they own: an added argument is a new line in the
installer's style (TAB, the argument in single quotes, `` \\``) or, when the command
is not laid out that way, a space and the quoted argument after the last word; removing
it takes away exactly that line or that text again.
"""

from __future__ import annotations

import re

WHITESPACE = ' \t\n\r'
COMMENT_CHARS = '#;'
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
    """One word of a command line and where its text sits in the file.

    ``value`` is the word as the program gets it, ``raw`` as written in the file, ``word`` unquoted
    and unescaped before specifier expansion; ``live`` says specifiers were left as written.
    """

    __slots__ = ('value', 'raw', 'start', 'end', 'word', 'live')

    def __init__(self, value, raw, start, end, word=None, live=False):
        self.value = value
        self.raw = raw
        self.start = start  # (line index, column) of the first character
        self.end = end  # (line index, column) just after the last character
        self.word = value if word is None else word
        self.live = live

    def __repr__(self):
        return 'Token(%r)' % (self.value,)


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

    def __init__(self, data, name='unit file', specifiers=None):
        self.name = name
        self.specifiers = specifiers  # facts for expanding % specifiers (see specifier_table), or None
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

    def parse_exec(self, directive, specifiers=None, strict=True):
        """The :class:`ExecCommand` of ``directive`` (:class:`ParseError` for a line not to edit, see :func:`parse_exec_chars`)."""
        return parse_exec_chars(directive.value, directive.chars, '%s line %d' % (self.name, directive.start + 1),
                                self.specifiers if specifiers is None else specifiers, strict)

    def _same_directive(self, directive):
        for d in self.directives:
            if (d.section, d.key, d.start) == (directive.section, directive.key, directive.start):
                return d
        raise ParseError('%s line %d: the ExecStart= line is gone after the edit.' % (self.name, directive.start + 1))

    def _verify(self, directive, saved, before, expected, what):
        """After an edit: the command must read as ``expected``, else the edit is undone and refused."""
        try:
            after = self.parse_exec(self._same_directive(directive))
            ok = (list(after.argv), after.path, after.prefix) == (list(expected), before.path, before.prefix)
        except ParseError:
            ok = False
        if not ok:
            self.lines = saved
            self._parse()
            raise ParseError('%s line %d: %s would not read back as intended; nothing was changed. Edit the line by hand.'
                             % (self.name, directive.start + 1, what))

    def add_arg(self, directive, arg):
        """Append ``arg`` to the command of ``directive``, in the installer's layout when it has it.

        A line systemd would refuse or misread is refused (:class:`ParseError`), not edited.
        """
        quoted = quote_arg(arg)
        before = self.parse_exec(directive)
        saved = [Line(ln.text, ln.eol) for ln in self.lines]
        body = self._body_lines(directive)
        last = body[-1]
        if len(body) >= 2 and not self.lines[last].text.strip(WHITESPACE) and \
                _odd_trailing_backslashes(self.lines[body[-2]].text):
            # installer layout: ... 'arg' \ + (empty line) -> new line before the empty one
            prev = self.lines[body[-2]]
            self.lines.insert(last, Line('\t%s \\' % quoted, prev.eol or self.lines[last].eol or '\n'))
        else:
            line_idx, col = before.tokens[-1].end
            line = self.lines[line_idx]
            line.text = line.text[:col] + ' ' + quoted + line.text[col:]
        self._parse()
        self._verify(directive, saved, before, list(before.argv) + [arg], 'adding %r' % (arg,))

    def remove_arg(self, directive, arg):
        """Remove every argument equal to ``arg`` (argv[0] and the path are never touched); return how many.

        A word whose specifiers are left as written (no facts) never equals ``arg``.
        """
        cmd = self.parse_exec(directive)
        hits = [t for t in cmd.arg_tokens() if t.value == arg and not t.live]
        if not hits:
            return 0
        saved = [Line(ln.text, ln.eol) for ln in self.lines]
        body = set(self._body_lines(directive))
        # from the end, so earlier positions stay valid
        for tok in reversed(hits):
            remove_token(self.lines, tok, directive.start, body, arg)
        self._parse()
        keep = [t.value for t in cmd.arg_tokens() if not any(t is h for h in hits)]
        self._verify(directive, saved, cmd, list(cmd.argv[:1]) + keep, 'removing %r' % (arg,))
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
# systemd 252 reads an ExecStart= value in src/core/load-fragment.c config_parse_exec(): words come
# from extract_first_word(EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE) (src/basic/extract-word.c), escapes
# from cunescape_one() (src/basic/escape.c), % specifiers from unit_full_printf()
# (src/core/unit-printf.c, src/shared/specifier.c). The code below follows those rules; it is not
# a translation of that code.

PATH_MAX = 4096  # with the NUL byte (linux/limits.h)
NAME_MAX = 255
LONG_LINE_MAX = 1024 * 1024  # src/basic/fileio.h: the longest line systemd reads, and argument
_ESCAPE_BYTES = {'a': 7, 'b': 8, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11, '\\': 92, '"': 34, "'": 39, 's': 32}
_HEX = '0123456789abcdefABCDEF'
_OCT = '01234567'
_ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
_UNSAFE_PATH_CHARS = '"\'\\\x7f'  # string_is_safe(): quotes, backslash, DEL and control characters


class _Unbalanced(Exception):
    def __init__(self, quote):
        Exception.__init__(self, quote)
        self.quote = quote


class _Refusal(Exception):
    """systemd refuses the command: it fails the unit (or, with the "-" prefix, drops the line)."""


def _unichar_is_valid(c):
    """systemd's unichar_is_valid() (src/basic/utf8.c), which \\U escapes must pass."""
    return c < 0x110000 and (c & 0xFFFFF800) != 0xD800 and not 0xFDD0 <= c <= 0xFDEF and (c & 0xFFFE) != 0xFFFE


def _utf8_bytes(c):
    """UTF-8 of code point ``c`` the way systemd writes it (surrogates too, as \\u allows them)."""
    if c < 0x80:
        return bytearray([c])
    if c < 0x800:
        return bytearray([0xC0 | (c >> 6), 0x80 | (c & 0x3F)])
    if c < 0x10000:
        return bytearray([0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)])
    return bytearray([0xF0 | (c >> 18), 0x80 | ((c >> 12) & 0x3F), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)])


def _unescape_one(text, i):
    """The escape sequence after the backslash at ``text[i - 1]``: (bytes, characters used), or None
    where systemd calls it invalid (unknown letter, short or bad digits, NUL, octal above 255, \\U beyond Unicode)."""
    if i >= len(text):
        return None
    c = text[i]
    if c in _ESCAPE_BYTES:
        return bytearray([_ESCAPE_BYTES[c]]), 1
    if c in 'xuU':
        width = {'x': 2, 'u': 4, 'U': 8}[c]
        digits = text[i + 1:i + 1 + width]
        if len(digits) != width or any(d not in _HEX for d in digits):
            return None
        value = int(digits, 16)
        if value == 0:
            return None
        if c == 'x':
            return bytearray([value]), 3  # a byte, not a code point
        if c == 'U' and not _unichar_is_valid(value):
            return None
        return _utf8_bytes(value), 1 + width
    if c in _OCT:
        digits = text[i:i + 3]
        if len(digits) != 3 or any(d not in _OCT for d in digits):
            return None
        value = int(digits, 8)
        if not 0 < value <= 255:
            return None
        return bytearray([value]), 3
    return None


def _char_bytes(c):
    try:
        return c.encode('utf-8', 'surrogateescape')
    except UnicodeEncodeError:
        raise ParseError('the command line holds %r, which is not a character a file can hold.' % (c,))


class _Word(object):
    """One word as extract_first_word() returns it, and where it sits in the value."""

    __slots__ = ('text', 'start', 'end', 'next', 'bad_escapes')

    def __init__(self, text, start, end, nxt, bad_escapes):
        self.text = text  # unquoted and unescaped, specifiers not expanded
        self.start = start
        self.end = end
        self.next = nxt  # index of the next word (white space skipped)
        self.bad_escapes = bad_escapes  # invalid escape sequences, kept verbatim as systemd does


def _extract_word(value, i):
    """The word at ``value[i:]`` (None when only white space is left).

    Quotes may open and close anywhere in a word; backslash escapes work in and out of quotes.
    An invalid escape is kept as written, backslash included (systemd retries with
    EXTRACT_UNESCAPE_RELAX and logs "Ignoring unknown escape sequences"); so is a lone backslash at
    the very end outside quotes. A quote left open raises :class:`_Unbalanced`.
    """
    n = len(value)
    while i < n and value[i] in WHITESPACE:
        i += 1
    if i >= n:
        return None
    start = i
    out = bytearray()
    bad = []
    quote = None
    while i < n:
        c = value[i]
        if c == '\\':
            esc = _unescape_one(value, i + 1)
            if esc is not None:
                out += esc[0]
                i += 1 + esc[1]
                continue
            if i + 1 >= n:
                if quote is not None:
                    raise _Unbalanced(quote)
                out += b'\\'
                bad.append('\\')
                i += 1
                break
            out += b'\\' + _char_bytes(value[i + 1])
            bad.append('\\' + value[i + 1])
            i += 2
            continue
        if quote is not None:
            if c == quote:
                quote = None
            else:
                out += _char_bytes(c)
            i += 1
            continue
        if c in WHITESPACE:
            break
        if c in '\'"':
            quote = c
        else:
            out += _char_bytes(c)
        i += 1
    if quote is not None:
        raise _Unbalanced(quote)
    end = i
    while i < n and value[i] in WHITESPACE:
        i += 1
    return _Word(bytes(out).decode('utf-8', 'surrogateescape'), start, end, i, bad)


def _unbalanced_message(quote):
    return ('unbalanced %s quote in the command line. Close the quote, or write the argument as \'...\' '
            'with \'\\\'\' for a quote inside.' % ('single' if quote == "'" else 'double'))


def split_words(value, where='ExecStart', strict=True):
    """Split a command line like systemd; return a list of (value, raw, start, end) with indices into ``value``.

    ``value`` is unquoted and unescaped (specifiers are not expanded). An unbalanced quote is an
    error; so is an invalid escape sequence when ``strict`` (systemd keeps it as written, with a warning).
    """
    words = []
    i = 0
    while True:
        try:
            w = _extract_word(value, i)
        except _Unbalanced as e:
            raise ParseError('%s: %s' % (where, _unbalanced_message(e.quote)))
        if w is None:
            return words
        if strict and w.bad_escapes:
            raise ParseError('%s: %s' % (where, _bad_escape_message(w.bad_escapes[0])))
        words.append((w.text, value[w.start:w.end], w.start, w.end))
        i = w.next


def _bad_escape_message(esc):
    return ('invalid escape sequence "%s": systemd keeps it as written, backslash included, and logs '
            '"Ignoring unknown escape sequences". Write \\\\ for a backslash (or \\s, \\xNN, \\NNN, \\uNNNN '
            'for a character) and run again.' % esc)


# -- specifiers ------------------------------------------------------------------
# What unit_full_printf() knows in systemd 252 (the table in src/core/unit-printf.c with
# COMMON_SYSTEM_SPECIFIERS, COMMON_CREDS_SPECIFIERS and COMMON_TMP_SPECIFIERS of
# src/shared/specifier.h), with the fact (a key of ``specifiers``) that gives its value.
SPECIFIERS = {
    'a': ('architecture', 'the architecture as systemd names it (x86-64, arm64)'),
    'A': ('os_release', 'IMAGE_VERSION= of os-release'),
    'b': ('boot_id', 'the boot ID'),
    'B': ('os_release', 'BUILD_ID= of os-release'),
    'c': ('cgroup', 'the cgroup of the unit (deprecated)'),
    'C': ('cache_dir', 'the cache directory root'),
    'd': ('unit', 'the credentials directory'),
    'E': ('config_dir', 'the configuration directory root'),
    'f': ('unit', 'the instance (or the prefix) unescaped as a path'),
    'g': ('group', 'the group of the service manager'),
    'G': ('gid', 'the GID of the service manager'),
    'h': ('home', 'the home directory of the service manager'),
    'H': ('hostname', 'the host name'),
    'i': ('unit', 'the instance'),
    'I': ('unit', 'the instance, unescaped'),
    'j': ('unit', 'the last "-" component of the prefix'),
    'J': ('unit', 'the last "-" component of the prefix, unescaped'),
    'l': ('hostname', 'the short host name'),
    'L': ('logs_dir', 'the log directory root'),
    'm': ('machine_id', 'the machine ID'),
    'M': ('os_release', 'IMAGE_ID= of os-release'),
    'n': ('unit', 'the unit name'),
    'N': ('unit', 'the unit name without the type suffix'),
    'o': ('os_release', 'ID= of os-release'),
    'p': ('unit', 'the prefix'),
    'P': ('unit', 'the prefix, unescaped'),
    'q': ('hostname', 'the pretty host name'),
    'r': ('cgroup_slice', 'the cgroup of the slice (deprecated)'),
    'R': ('cgroup_root', 'the cgroup root (deprecated)'),
    's': ('shell', 'the shell of the service manager'),
    'S': ('state_dir', 'the state directory root'),
    't': ('runtime_dir', 'the runtime directory root'),
    'T': ('tmp_dir', 'the temporary directory'),
    'u': ('user', 'the user of the service manager'),
    'U': ('uid', 'the UID of the service manager'),
    'v': ('kernel_release', 'the kernel release'),
    'V': ('var_tmp_dir', 'the directory for larger temporary files'),
    'w': ('os_release', 'VERSION_ID= of os-release'),
    'W': ('os_release', 'VARIANT_ID= of os-release'),
    'y': ('fragment_path', 'the real path of the unit file'),
    'Y': ('fragment_path', 'the directory of the unit file'),
}
# the system service manager's own values (systemd runs as root; manager.c sets the directory roots)
SYSTEM_FACTS = {
    'user': 'root', 'uid': '0', 'group': 'root', 'gid': '0',
    'runtime_dir': '/run', 'state_dir': '/var/lib', 'cache_dir': '/var/cache', 'logs_dir': '/var/log',
    'config_dir': '/etc', 'tmp_dir': '/tmp', 'var_tmp_dir': '/var/tmp',
}
_OS_RELEASE_KEYS = {'A': 'IMAGE_VERSION', 'B': 'BUILD_ID', 'M': 'IMAGE_ID', 'o': 'ID', 'w': 'VERSION_ID', 'W': 'VARIANT_ID'}


class _Failed(object):
    """A specifier whose lookup fails in systemd (so the line is refused)."""

    def __init__(self, reason):
        self.reason = reason


def _unit_unescape(text):
    """systemd's unit_name_unescape(): "-" reads as "/", \\xNN as that byte; None when invalid."""
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == '-':
            out += b'/'
        elif c == '\\':
            digits = text[i + 2:i + 4]
            if text[i + 1:i + 2] != 'x' or len(digits) != 2 or any(d not in _HEX for d in digits):
                return None
            out.append(int(digits, 16))
            i += 3
        else:
            out += _char_bytes(c)
        i += 1
    return bytes(out).decode('utf-8', 'surrogateescape')


def _unit_path_unescape(text):
    """systemd's unit_name_path_unescape(): "-" is "/", else "/" + the unescaped text, which must be a normal path."""
    if not text:
        return None
    if text == '-':
        return '/'
    w = _unit_unescape(text)
    if w is None or w.startswith('/') or w.endswith('/'):
        return None
    path = '/' + w
    parts = path.split('/')[1:]
    if any(p in ('', '.', '..') or len(_char_bytes(p)) > NAME_MAX for p in parts) or len(_char_bytes(path)) >= PATH_MAX:
        return None
    return path


def specifier_table(facts):
    """The value of every specifier ``facts`` allow, as {letter: value}.

    ``facts`` (a dict) may give: ``unit`` (the unit name, ``k3s.service`` or ``name@instance.service``:
    %n %N %p %P %i %I %j %J %f %d), ``hostname`` (%H %l, and %q unless ``pretty_hostname``),
    ``machine_id`` (%m), ``boot_id`` (%b), ``kernel_release`` (%v), ``architecture`` (%a),
    ``os_release`` (a dict of os-release keys: %o %w %B %W %M %A), ``home`` (%h), ``shell`` (%s),
    ``fragment_path`` (the unit file with symlinks resolved: %y %Y), ``cgroup``, ``cgroup_slice``,
    ``cgroup_root`` (%c %r %R), and overrides of :data:`SYSTEM_FACTS` (%u %U %g %G %t %S %C %L %E
    %T %V), which hold the system service manager's values. A key of one character sets that
    specifier directly. A specifier without a value is left as written.
    """
    facts = dict(SYSTEM_FACTS, **dict(facts or {}))
    t = {}
    simple = {'u': 'user', 'U': 'uid', 'g': 'group', 'G': 'gid', 't': 'runtime_dir', 'S': 'state_dir',
              'C': 'cache_dir', 'L': 'logs_dir', 'E': 'config_dir', 'T': 'tmp_dir', 'V': 'var_tmp_dir',
              'm': 'machine_id', 'v': 'kernel_release', 'a': 'architecture', 'h': 'home', 's': 'shell',
              'c': 'cgroup', 'r': 'cgroup_slice', 'R': 'cgroup_root'}
    for letter, key in simple.items():
        if facts.get(key) is not None:
            t[letter] = str(facts[key])
    if facts.get('boot_id') is not None:
        t['b'] = str(facts['boot_id']).replace('-', '').lower()
    if facts.get('machine_id') is not None:
        t['m'] = str(facts['machine_id']).replace('-', '').lower()
    host = facts.get('hostname')
    if host is not None:
        t['H'] = host
        t['l'] = host.split('.', 1)[0]
        t['q'] = facts.get('pretty_hostname') or t['l']
    if facts.get('os_release') is not None:
        for letter, key in _OS_RELEASE_KEYS.items():
            t[letter] = facts['os_release'].get(key) or ''
    if facts.get('fragment_path'):
        path = facts['fragment_path']
        t['y'] = path
        t['Y'] = path.rsplit('/', 1)[0] or '/'
    unit = facts.get('unit')
    if unit:
        if '.' not in unit:
            raise ParseError('specifiers: unit %r has no type suffix; give the full unit name (k3s.service).' % unit)
        stem = unit[:unit.rindex('.')]
        prefix, at, instance = stem.partition('@')
        t['n'] = unit
        t['N'] = stem
        t['p'] = prefix
        t['i'] = instance
        last = prefix.rsplit('-', 1)[-1]
        t['j'] = last
        for letter, raw in (('P', prefix), ('I', instance), ('J', last)):
            value = _unit_unescape(raw)
            t[letter] = value if value is not None else _Failed('%r is not a valid escaped unit name part' % raw)
        path = _unit_path_unescape(instance if at else prefix)
        t['f'] = path if path is not None else _Failed('%r does not unescape to a normal path' % (instance if at else prefix))
        t['d'] = t.get('t', '/run') + '/credentials/' + unit
    for key, value in facts.items():
        if len(key) == 1 and value is not None:
            t[key] = str(value)
    return t


class SpecifierWord(str):
    """A word whose ``%`` specifiers were left as written (no facts for them).

    It compares as that text (``%%`` read as ``%``); :attr:`word` keeps the word as systemd
    reads it before expansion (``%%`` still doubled), and :func:`quote_arg` writes that back, so
    the specifiers stay live in what is written.
    """

    def __new__(cls, text, word=None):
        obj = str.__new__(cls, text)
        obj.word = text if word is None else word
        return obj


def _expand(text, table, max_length):
    """(text with specifiers expanded, letters left as written); raises :class:`_Refusal`."""
    out = []
    live = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c != '%':
            out.append(c)
            i += 1
            continue
        if i + 1 >= n:
            out.append('%')  # a stray % at the end stays
            break
        s = text[i + 1]
        i += 2
        if s == '%':
            out.append('%')
        elif s in SPECIFIERS:
            value = table.get(s) if table is not None else None
            if value is None:
                out.append('%' + s)
                live.append(s)
            elif isinstance(value, _Failed):
                raise _Refusal('the specifier %%%s cannot be resolved (%s), so systemd refuses the line. '
                               'Write %%%%%s for a literal "%%%s".' % (s, value.reason, s, s))
            else:
                out.append(value)
        elif s in _ALNUM:
            raise _Refusal('"%%%s" is not a specifier systemd 252 knows ("Failed to resolve unit specifiers"), so it '
                           'refuses the line. Write %%%%%s for a literal "%%%s".' % (s, s, s))
        else:
            out.append('%' + s)  # % before anything else stays as written
    result = ''.join(out)
    if len(_char_bytes(result)) > max_length:
        raise _Refusal('a word is %d bytes long after specifier expansion; systemd takes at most %d here '
                       'and refuses the line.' % (len(_char_bytes(result)), max_length))
    if live:
        return SpecifierWord(result, text), live
    return result, live


def expand_specifiers(text, specifiers=None, max_length=LONG_LINE_MAX):
    """``text`` (an unescaped word) with its ``%`` specifiers expanded as systemd 252 does at load time.

    ``specifiers`` are facts for :func:`specifier_table` (None: every known specifier is left as
    written; ``%%`` still reads as ``%``). An unknown specifier (``%Z``) raises :class:`ParseError`,
    as systemd refuses the line.
    """
    try:
        return _expand(text, None if specifiers is None else specifier_table(specifiers), max_length)[0]
    except _Refusal as e:
        raise ParseError(str(e))


def resolve_percent(word):
    """``%%`` reads as ``%``; other specifiers are kept as written."""
    return _expand(word, None, LONG_LINE_MAX * 4)[0]


# -- ExecStart -------------------------------------------------------------------
# config_parse_exec() prefixes: "-" ignore failure, "@" argv[0] follows, ":" no $VAR expansion, "+" full
# privileges, "!" no setuid, "!!" ambient; each once, and one of "+", "!", "!!". systemd 252 has no
# "|" prefix: it is part of the path there (and refused).
EXEC_PREFIX_CHARS = '-@:+!'
_PRIVILEGE_FLAGS = ('privileged', 'no-setuid', 'ambient')


def _read_prefix(text):
    """(prefix characters, flags, rest) of the first word."""
    flags = set()
    i = 0
    while i < len(text):
        c = text[i]
        if c == '-' and 'ignore-failure' not in flags:
            flags.add('ignore-failure')
        elif c == '@' and 'argv0' not in flags:
            flags.add('argv0')
        elif c == ':' and 'no-env-expand' not in flags:
            flags.add('no-env-expand')
        elif c == '+' and not flags.intersection(_PRIVILEGE_FLAGS):
            flags.add('privileged')
        elif c == '!' and not flags.intersection(_PRIVILEGE_FLAGS):
            flags.add('no-setuid')
        elif c == '!' and not flags.intersection(('privileged', 'ambient')):
            flags.discard('no-setuid')
            flags.add('ambient')
        else:
            break
        i += 1
    return text[:i], flags, text[i:]


def _prefix_hint(prefix, rest):
    if rest[:1] == '|':
        return ' systemd 252 has no "|" prefix: it is read as part of the path.'
    if rest[:1] in ('-', '@', ':', '+', '!'):
        return (' After the prefixes %r, %r is not a prefix any more: systemd 252 takes each of "-", "@", ":" '
                'once and only one of "+", "!", "!!", so the rest is read as the path.' % (prefix, rest[0]))
    return ''


def _simplify_path(path):
    """systemd's path_simplify(): no repeated "/", no "." components, no trailing "/"; ".." is kept."""
    parts = [p for p in path.split('/') if p not in ('', '.')]
    if path.startswith('/'):
        return '/' + '/'.join(parts)
    return '/'.join(parts) or '.'


def _check_path(path, live, prefix, rest):
    """Refuse what config_parse_exec() refuses in the executable path (after specifier expansion)."""
    hint = _prefix_hint(prefix, rest)
    if not path and not live:
        raise _Refusal('the command line has %s but no executable path ("Empty path in command line"). Write '
                       'the absolute path of the program (for example /usr/local/bin/k3s) right after the prefixes, '
                       'with no space.' % ('prefixes %r' % prefix if prefix else 'an empty first word'))
    bad = [c for c in path if c in _UNSAFE_PATH_CHARS or 0 < ord(c) < 32]
    if bad:
        raise _Refusal('the executable path %r holds %r: systemd refuses a path with quotes, backslashes or control '
                       'characters ("Executable name contains special characters"). Write the path without them '
                       '(\\s or \\x20 is a space; quotes may surround the whole path).%s' % (path, bad[0], hint))
    if path.endswith('/'):
        raise _Refusal('the executable path %r ends in "/" ("Executable path specifies a directory"). Remove the '
                       'trailing "/" and name the program.' % path)
    if live:
        if not path.startswith('/') and not path.startswith('%') and '/' in path:
            raise _Refusal('the executable path %r is neither absolute nor a plain program name ("Neither a valid '
                           'executable name nor an absolute path"). Write its absolute path.%s' % (path, hint))
        return
    if path.startswith('/'):
        parts = [p for p in path.split('/') if p not in ('', '.')]
        ok = all(len(_char_bytes(p)) <= NAME_MAX for p in parts) and len(_char_bytes(path)) < PATH_MAX
    else:
        ok = path not in ('.', '..') and '/' not in path and len(_char_bytes(path)) <= NAME_MAX
    if not ok:
        raise _Refusal('the executable path %r is neither an absolute path nor a valid program name ("Neither a '
                       'valid executable name nor an absolute path"). Write the absolute path of the program, for '
                       'example /usr/local/bin/k3s.%s' % (path, hint))


class ExecCommand:
    """A parsed ExecStart command.

    ``prefix`` (the prefix characters as written), ``flags`` (systemd's names: ignore-failure,
    privileged, no-setuid, ambient, no-env-expand), ``path`` (the executable, specifiers expanded
    and simplified as systemd does), ``argv`` (argv[0] included, specifiers expanded), ``tokens``
    (every word with its raw text and place in the file), ``words`` (each token unquoted and
    unescaped, before specifier expansion), ``unexpanded`` (specifier letters left as written for
    want of facts), ``escape_warnings`` (invalid escapes systemd keeps verbatim).
    """

    def __init__(self, prefix, path, argv, tokens, argv_offset, flags=(), unexpanded=(), escape_warnings=()):
        self.prefix = prefix
        self.path = path
        self.argv = argv
        self.tokens = tokens
        self.argv_offset = argv_offset  # tokens[argv_offset + i] holds argv[i]
        self.flags = frozenset(flags)
        self.unexpanded = tuple(unexpanded)
        self.escape_warnings = list(escape_warnings)

    @property
    def args(self):
        """The arguments after argv[0]."""
        return self.argv[1:]

    @property
    def raw_words(self):
        """Every word as written in the file (quotes and escapes included)."""
        return [t.raw for t in self.tokens]

    @property
    def words(self):
        """Every word unquoted and unescaped, before specifier expansion (prefixes included in the first)."""
        return [t.word for t in self.tokens]

    def arg_tokens(self):
        return self.tokens[self.argv_offset + 1:]

    def __repr__(self):
        return 'ExecCommand(%r, %r, %r)' % (self.prefix, self.path, self.argv)


class ExecLine:
    """Everything systemd makes of one ExecStart= value.

    ``commands``: the :class:`ExecCommand` systemd keeps, in order; ``separators``: the ";" tokens
    between them; ``ignored``: None, or why systemd dropped the rest of the line (logged, unit
    still loaded: an error under the "-" prefix, or a first word it cannot split); ``reset``: the
    value is empty (it clears the list).
    """

    def __init__(self):
        self.commands = []
        self.separators = []
        self.ignored = None
        self.reset = False


def _has_bad_utf8(value):
    return any('\udc80' <= c <= '\udcff' for c in value)


def parse_exec_line(value, chars=None, where='ExecStart', specifiers=None):
    """Read an ExecStart= value as systemd 252 does: an :class:`ExecLine`, or :class:`ParseError`
    when systemd refuses the unit for it.

    ``chars`` maps the characters of ``value`` to (line, column) in the file (None: line 0).
    ``specifiers``: facts for :func:`specifier_table`; None leaves the specifiers as written.
    """
    line = ExecLine()
    if not value.strip(WHITESPACE):
        line.reset = True
        return line
    if _has_bad_utf8(value):
        raise ParseError('%s: the line is not valid UTF-8, so systemd refuses the whole unit file. '
                         'Write the bytes as \\xNN escapes or fix the encoding.' % where)
    table = None if specifiers is None else specifier_table(specifiers)

    def pos(i):
        return (0, i) if chars is None else chars[i]

    def end_pos(e):
        if chars is None:
            return (0, e)
        ln, col = chars[e - 1]
        return (ln, col + 1)

    def token(text, word, w_start, w_end, live=False):
        return Token(text, value[w_start:w_end], pos(w_start), end_pos(w_end), word, live)

    i = 0
    while True:
        try:
            first = _extract_word(value, i)
        except _Unbalanced as e:
            line.ignored = _unbalanced_message(e.quote)  # config_parse_exec() returns 0: the line is dropped
            return line
        if first is None:
            return line
        if first.text == ';':
            line.separators.append(token(';', ';', first.start, first.end))
            i = first.next
            continue
        prefix, flags, rest = _read_prefix(first.text)
        try:
            cmd, i, more = _parse_command(value, first, prefix, flags, rest, table, token)
        except _Refusal as e:
            if 'ignore-failure' in flags:
                line.ignored = 'the "-" prefix makes systemd drop it with a warning instead of failing the unit: %s' % e
                return line
            raise ParseError('%s: %s' % (where, e))
        line.commands.append(cmd)
        if not more:
            return line
        line.separators.append(more)


def _parse_command(value, first, prefix, flags, rest, table, token):
    """One command from its first word on: (ExecCommand, index after it, separator token or None)."""
    n = len(value)
    warnings = list(first.bad_escapes)
    path, live = _expand(rest, table, PATH_MAX - 1)
    _check_path(path, live, prefix, rest)
    first_tok = token(prefix + path, first.text, first.start, first.end, bool(live))
    tokens = [first_tok]
    argv = [] if 'argv0' in flags else [path]
    unexpanded = list(live)
    if not live:
        path = _simplify_path(path)
    i = first.next
    separator = None
    while i < n:
        if value[i] == ';' and (i + 1 >= n or value[i + 1] in WHITESPACE):
            separator = token(';', ';', i, i + 1)
            i += 1
            while i < n and value[i] in WHITESPACE:
                i += 1
            break
        if value[i] == '\\' and value[i + 1:i + 2] == ';' and (i + 2 >= n or value[i + 2] in WHITESPACE):
            tokens.append(token(';', ';', i, i + 2))  # "\;" alone is a literal ";" argument
            argv.append(';')
            i += 2
            while i < n and value[i] in WHITESPACE:
                i += 1
            continue
        try:
            w = _extract_word(value, i)
        except _Unbalanced as e:
            raise _Refusal(_unbalanced_message(e.quote))
        if w is None:
            break
        text, wlive = _expand(w.text, table, LONG_LINE_MAX)
        tokens.append(token(text, w.text, w.start, w.end, bool(wlive)))
        argv.append(text)
        unexpanded.extend(wlive)
        warnings.extend(w.bad_escapes)
        i = w.next
    if not argv:
        raise _Refusal('the "@" prefix needs argv[0] after the executable path ("Empty executable name or zeroeth '
                       'argument"): write the name the program should see, e.g. ExecStart=@/usr/local/bin/k3s k3s server.')
    cmd = ExecCommand(prefix, path, argv, tokens, 1 if 'argv0' in flags else 0, flags - {'argv0'},
                      sorted(set(unexpanded)), warnings)
    return cmd, i, separator


def parse_exec_chars(value, chars, where='ExecStart', specifiers=None, strict=True):
    """The one :class:`ExecCommand` of an ExecStart value; ``chars`` maps its characters to (line, column).

    Refused (:class:`ParseError`, saying why and what to do): everything systemd refuses or
    drops, an empty value (a reset), more than one command or a ";" separator (k3s units have
    one command), and, when ``strict``, an invalid escape sequence (systemd loads it with a
    warning, keeping the backslash).
    """
    if not value.strip(WHITESPACE):
        raise ParseError('%s: ExecStart= is empty (a reset): there is no command here.' % where)
    line = parse_exec_line(value, chars, where, specifiers)
    if line.ignored is not None:
        if line.commands:
            raise ParseError('%s: systemd drops the rest of this ExecStart= line after its first command: %s'
                             % (where, line.ignored))
        raise ParseError('%s: systemd ignores this ExecStart= line, so it starts nothing: %s' % (where, line.ignored))
    if len(line.commands) > 1:
        raise ParseError('%s: the command line holds several commands separated by ";"; '
                         'k3s units have one. Split the line by hand first.' % where)
    if line.separators:
        raise ParseError('%s: the command line holds a lone ";", systemd\'s separator between several commands; '
                         'k3s units have one. Remove it (write \\; or \';\' for a ";" argument).' % where)
    if not line.commands:
        raise ParseError('%s: the command line holds no command.' % where)
    cmd = line.commands[0]
    if strict and cmd.escape_warnings:
        raise ParseError('%s: %s' % (where, _bad_escape_message(cmd.escape_warnings[0])))
    return cmd


def parse_exec(value, specifiers=None, strict=True):
    """The :class:`ExecCommand` of an ExecStart value given as a string."""
    return parse_exec_chars(value, None, specifiers=specifiers, strict=strict)


# -- writing -------------------------------------------------------------------
def check_arg(arg):
    """Refuse an argument no unit file can carry: line breaks, NUL, other control characters but TAB, bytes that are not UTF-8."""
    if '\n' in arg or '\r' in arg:
        raise ParseError('an argument cannot hold a line break: %r (a unit file line ends there). '
                         'Give a single-line argument.' % (arg,))
    if '\x00' in arg:
        raise ParseError('an argument cannot hold a NUL byte: %r. A program\'s arguments end at NUL and systemd '
                         'refuses \\x00; remove it.' % (arg,))
    for c in arg:
        if (ord(c) < 32 and c != '\t') or c == '\x7f':
            raise ParseError('an argument cannot hold the control character %r: %r. Remove it (TAB is the only '
                             'one allowed).' % (c, arg))
        if '\ud800' <= c <= '\udfff':
            raise ParseError('an argument must be valid UTF-8 text (systemd refuses a unit line that is not): %r.'
                             % (arg,))


def quote_arg(arg):
    """``arg`` as one ExecStart word in the installer's style ('...'), safe for systemd.

    ``'`` is written ``'\\''`` as the installer does; a backslash is doubled and ``%``
    written ``%%`` so systemd passes them on unchanged (a :class:`SpecifierWord` keeps its
    specifiers). Line breaks, NUL and other control characters but TAB are refused.
    """
    check_arg(arg)
    word = arg.word if isinstance(arg, SpecifierWord) else arg.replace('%', '%%')
    return "'" + word.replace('\\', '\\\\').replace("'", "'\\''") + "'"


_PLAIN_WORD = re.compile(r'^[A-Za-z0-9_./:=,+@-]+$')


def render_exec_start(prefix, path, argv, argv0_explicit=False, eol='\n'):
    """An ExecStart directive for ``argv`` in the installer's layout (ends with the empty line).

    Without ``argv0_explicit`` argv[0] is the path as written; when ``argv[0]`` differs from
    ``path`` beyond what systemd's path simplification makes of it, it is written with "@".
    """
    if not argv0_explicit and argv and argv[0] != path:
        if isinstance(argv[0], SpecifierWord) or isinstance(path, SpecifierWord) or _simplify_path(argv[0]) != path:
            argv0_explicit = True
        else:
            path = argv[0]  # systemd simplifies it back to path
    if argv0_explicit or '@' in prefix:
        head = '%s%s %s' % (prefix if '@' in prefix else prefix + '@', _word(path), _word(argv[0]))
    else:
        head = prefix + _word(path)
    out = ['ExecStart=%s \\' % head]
    rest = list(argv[1:])
    if rest and _PLAIN_WORD.fullmatch(rest[0]) and not rest[0].startswith('-'):
        out.append('    %s \\' % rest.pop(0))
    out.extend('\t%s \\' % quote_arg(a) for a in rest)
    out.append('')
    return eol.join(out) + eol


def _word(value):
    return value if _PLAIN_WORD.fullmatch(value) and not isinstance(value, SpecifierWord) else quote_arg(value)


# -- environment ---------------------------------------------------------------
_ENV_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')


def parse_environment_file(data, shell=False, ignored=None):
    """Variables of an environment file (KEY=VALUE lines, quotes removed, comments skipped).

    By default as systemd's ``EnvironmentFile=`` reads it: there is no ``export`` keyword, so
    ``export KEY=value`` gives the key ``export KEY``, which is no variable name, and systemd drops
    it (as every key outside ``[A-Za-z_][A-Za-z0-9_]*``): the service starts without it. With
    ``shell`` as a shell reads it when it sources the file (openrc's init scripts source
    ``/etc/rancher/k3s/<service>.env``): ``export KEY=value`` sets KEY. ``ignored``, a list, gets
    ``(line number, key)`` for every assignment the reader drops.
    """
    env = {}
    text = decode(data) if isinstance(data, bytes) else data
    pending, pending_no = '', 0
    for number, line in enumerate(text.splitlines(), 1):
        if pending:
            line = pending + line
            pending = ''
            number = pending_no
        if _odd_trailing_backslashes(line):
            pending, pending_no = line[:-1], number
            continue
        stripped = line.strip()
        if not stripped or stripped[0] in '#;':
            continue
        if shell and stripped.startswith('export') and stripped[6:7] in (' ', '\t'):
            stripped = stripped[7:].lstrip()
        key, sep, value = stripped.partition('=')
        if not sep:
            continue
        key = key.strip()
        if not _ENV_NAME.fullmatch(key):
            if ignored is not None:
                ignored.append((number, key))
            continue
        env[key] = _env_unquote(value.strip())
    return env


def ignored_assignments(data, path):
    """Why each assignment of the environment file ``data`` is one systemd does not see (a message per line)."""
    ignored = []
    parse_environment_file(data, ignored=ignored)
    out = []
    for number, key in ignored:
        word, rest = key[:6], key[6:]
        if word == 'export' and rest[:1] in (' ', '\t') and _ENV_NAME.fullmatch(rest.strip()):
            out.append('%s line %d sets %s with "export", which systemd\'s EnvironmentFile= does not know: systemd '
                       'ignores the line and the service starts without %s' % (path, number, rest.strip(), rest.strip()))
        else:
            out.append('%s line %d assigns %r, which is no variable name ([A-Za-z_][A-Za-z0-9_]*): systemd ignores the '
                       'line' % (path, number, key))
    return out


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
