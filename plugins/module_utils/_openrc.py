# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""Read and edit ``command_args`` of an openrc init script without losing a byte.

Pure Python, no Ansible import. The k3s installer writes::

    command_args="server \\
    \t'--disable=traefik' \\
        >>/var/log/k3s.log 2>&1"

The value is read twice, as openrc does: first as a shell double-quoted string
(``\\$ \\` \\" \\\\`` and backslash-newline are escapes, any other backslash stays), then
``eval`` splits it into words (single and double quotes, backslashes) and takes the
redirections (``>>file``, ``2>&1``) for itself. ``$`` expansions are kept as written.
"""

from __future__ import annotations

import re

from ansible_collections.baremetal.k3s.plugins.module_utils._systemd_unit import (
    Line,
    ParseError,
    Token,
    decode,
    encode,
    remove_token,
    split_lines,
)

_ASSIGN_RE = re.compile(r'^(\s*)command_args=')
_IFS = ' \t\n'
_DQ_ESCAPES = '$`"\\\n'


class CommandArgs:
    """The parsed ``command_args``: argv (the k3s arguments), the word tokens, the redirections."""

    def __init__(self, argv, tokens, redirections):
        self.argv = argv
        self.tokens = tokens
        self.redirections = redirections


class InitScript:
    """An openrc init script as physical lines, with ``command_args`` located in it."""

    def __init__(self, data, name='init script'):
        self.name = name
        self.lines = split_lines(decode(data))
        self._locate()

    def _locate(self):
        found = []
        idx = 0
        while idx < len(self.lines):
            m = _ASSIGN_RE.match(self.lines[idx].text)
            if not m:
                idx += 1
                continue
            start = idx
            chars, end, close = self._read_value(idx, m.end())
            found.append((start, end, chars, close, self.lines[start].text[m.end()]))
            idx = end + 1
        if not found:
            raise ParseError('%s: no command_args= line: this is not an openrc init script of k3s. '
                             'Give the path of the service\'s init script (for example /etc/init.d/k3s) or its systemd unit.'
                             % self.name)
        if len(found) > 1:
            raise ParseError('%s: command_args= is set on lines %s; keep one assignment and run again.'
                             % (self.name, ', '.join(str(f[0] + 1) for f in found)))
        self.start, self.end, self.chars, self.close, self.quote = found[0]

    def _read_value(self, idx, col):
        """Read the assigned value from (idx, col); return (chars, last line, position of the closing quote).

        ``chars`` is [(character, (line, column), escaped, (line, end column))] of the value
        after the shell's assignment-level quote removal.
        """
        line = self.lines[idx].text
        if col >= len(line) or line[col] not in '"\'':
            raise ParseError('%s line %d: command_args is not a quoted string; write it as command_args="..." and run again.'
                             % (self.name, idx + 1))
        quote = line[col]
        chars = []
        i = col + 1
        while True:
            line = self.lines[idx].text
            while i < len(line):
                c = line[i]
                if c == quote:
                    return chars, idx, (idx, i)
                if quote == '"' and c == '\\':
                    if i + 1 < len(line):
                        if line[i + 1] in _DQ_ESCAPES:
                            chars.append((line[i + 1], (idx, i), True, (idx, i + 2)))
                        else:
                            chars.append(('\\', (idx, i), False, (idx, i + 1)))
                            chars.append((line[i + 1], (idx, i + 1), False, (idx, i + 2)))
                        i += 2
                        continue
                    # backslash-newline: the line goes on without a break
                    i += 1
                    break
                chars.append((c, (idx, i), False, (idx, i + 1)))
                i += 1
            else:
                if self.lines[idx].eol:
                    chars.append(('\n', (idx, len(line)), False, (idx, len(line))))
            idx += 1
            i = 0
            if idx >= len(self.lines):
                raise ParseError('%s line %d: command_args has no closing %s quote; close it and run again.'
                                 % (self.name, self.start + 1 if hasattr(self, 'start') else idx, quote))

    def parse(self):
        """The :class:`CommandArgs` as ``eval`` would split them."""
        return split_eval(self.chars, '%s line %d' % (self.name, self.start + 1))

    def render(self):
        return encode(''.join(line.text + line.eol for line in self.lines))

    def text(self):
        return ''.join(line.text + line.eol for line in self.lines)

    def add_arg(self, arg):
        """Append ``arg``: a new line before the redirection line (installer layout), else after the last word."""
        if self.quote != '"':
            raise ParseError('%s line %d: command_args is in single quotes; write it in double quotes '
                             '(command_args="...") as the k3s installer does, then run again.' % (self.name, self.start + 1))
        quoted = quote_arg(arg)
        parsed = self.parse()
        saved = [Line(ln.text, ln.eol) for ln in self.lines]
        last = self.end
        if last > self.start:
            content = self.lines[last].text[:self.close[1]]
            last_has_words = any(t.start[0] == last for t in parsed.tokens)
            prev = self.lines[last - 1].text
            if not last_has_words and prev.endswith('\\') and (len(prev) - len(prev.rstrip('\\'))) % 2 == 1 \
                    and (not content.strip() or parsed.redirections):
                self.lines.insert(last, Line('\t%s \\' % quoted, self.lines[last - 1].eol or '\n'))
                self._locate()
                self._verify(saved, parsed.argv + [arg], parsed.redirections, 'adding %r' % (arg,))
                return
        if parsed.tokens:
            line_idx, col = parsed.tokens[-1].end
        else:
            line_idx, col = self.close
        line = self.lines[line_idx]
        sep = ' ' if parsed.tokens else ''
        line.text = line.text[:col] + sep + quoted + line.text[col:]
        self._locate()
        self._verify(saved, parsed.argv + [arg], parsed.redirections, 'adding %r' % (arg,))

    def _verify(self, saved, argv, redirections, what):
        """After an edit: command_args must read as ``argv`` with the same redirections, else the edit is undone."""
        try:
            after = self.parse()
            ok = (after.argv, after.redirections) == (argv, redirections)
        except ParseError:
            ok = False
        if not ok:
            self.lines = saved
            self._locate()
            raise ParseError('%s line %d: %s would not read back as intended; nothing was changed. Edit command_args '
                             'by hand.' % (self.name, self.start + 1, what))

    def remove_arg(self, arg):
        """Remove every argument equal to ``arg``; return how many."""
        parsed = self.parse()
        hits = [t for t in parsed.tokens if t.value == arg]
        if not hits:
            return 0
        saved = [Line(ln.text, ln.eol) for ln in self.lines]
        body = set(range(self.start, self.end + 1))
        for tok in reversed(hits):
            remove_token(self.lines, tok, self.start, body, arg)
        self._locate()
        self._verify(saved, [a for a in parsed.argv if a != arg], parsed.redirections, 'removing %r' % (arg,))
        return len(hits)


def collapse_blanks(chars):
    """``chars`` as ``eval`` receives them from openrc's unquoted ``$command_args``: field splitting
    first turns every run of blanks into one space, inside quotes too (quotes in an expansion are
    plain characters), and drops leading and trailing ones."""
    out = []
    for ch in chars:
        if ch[0] in _IFS:
            if out and out[-1][0] == ' ' and out[-1][4]:
                out[-1] = (' ', out[-1][1], False, ch[3], True)
            else:
                out.append((' ', ch[1], False, ch[3], True))
        else:
            out.append(tuple(ch[:4]) + (False,))
    while out and out[0][4]:
        out.pop(0)
    while out and out[-1][4]:
        out.pop()
    return [ch[:4] for ch in out]


def split_eval(chars, where='command_args'):
    """Split [(char, position, escaped)] as openrc's ``eval`` of ``$command_args`` does; redirections are set aside."""
    chars = collapse_blanks(chars)
    tokens = []
    redirections = []
    i = 0
    n = len(chars)
    pending_redirect = None
    while True:
        while i < n and chars[i][0] in _IFS:
            i += 1
        if i >= n:
            break
        start = i
        cur = []
        quoted = False
        quote = None
        operator = None
        while i < n:
            c = chars[i][0]
            if quote is None:
                if c in _IFS:
                    break
                if c in '<>':
                    if cur and (quoted or not ''.join(cur).isdigit()):
                        break  # the word ends here; the operator is read next
                    j = i + 1
                    while j < n and chars[j][0] in '<>&|':
                        j += 1
                    operator = ''.join(ch[0] for ch in chars[start:j])
                    i = j
                    break
                if c in ';&|':
                    raise ParseError('%s: command_args holds %r, a shell control operator; keep only arguments '
                                     'and redirections in it.' % (where, c))
                if c == '\\':
                    if i + 1 < n and chars[i + 1][0] != '\n':
                        cur.append(chars[i + 1][0])
                    i += 2
                    quoted = True
                    continue
                if c in '\'"':
                    quote = c
                    quoted = True
                    i += 1
                    continue
                cur.append(c)
                i += 1
            elif quote == "'":
                if c == "'":
                    quote = None
                else:
                    cur.append(c)
                i += 1
            else:
                if c == '"':
                    quote = None
                    i += 1
                    continue
                if c == '\\' and i + 1 < n and chars[i + 1][0] in _DQ_ESCAPES:
                    if chars[i + 1][0] != '\n':
                        cur.append(chars[i + 1][0])
                    i += 2
                    continue
                cur.append(c)
                i += 1
        if quote is not None:
            raise ParseError('%s: command_args has an unbalanced %s quote inside; close it and run again.'
                             % (where, 'single' if quote == "'" else 'double'))
        if operator is not None:
            if pending_redirect is not None:
                raise ParseError('%s: the redirection %r in command_args has no target.' % (where, pending_redirect))
            pending_redirect = operator
            continue
        word = ''.join(cur)
        if pending_redirect is not None:
            redirections.append((pending_redirect, word))
            pending_redirect = None
            continue
        tokens.append(Token(word, ''.join(ch[0] for ch in chars[start:i]), chars[start][1], chars[i - 1][3]))
    if pending_redirect is not None:
        raise ParseError('%s: the redirection %r in command_args has no target.' % (where, pending_redirect))
    return CommandArgs([t.value for t in tokens], tokens, redirections)


def quote_arg(arg):
    """``arg`` as one word inside ``command_args="..."``: single quotes as the installer writes them,
    and ``\\ " $ ``` escaped for the surrounding double quotes.

    Refused: line breaks (the assignment spans lines only by the installer's layout), NUL (no
    shell variable can hold it), other control characters, and TAB or several spaces in a row:
    openrc expands ``$command_args`` unquoted (``eval start-stop-daemon ... -- $command_args``), so
    the shell splits the value at white space before ``eval`` and such a run reaches k3s as one space.
    """
    if '\n' in arg or '\r' in arg:
        raise ParseError('an argument cannot hold a line break: %r. Give a single-line argument.' % (arg,))
    if '\x00' in arg:
        raise ParseError('an argument cannot hold a NUL byte: %r. A shell variable cannot hold it and a program\'s '
                         'arguments end there; remove it.' % (arg,))
    for c in arg:
        if (ord(c) < 32 and c != '\t') or c == '\x7f':
            raise ParseError('an argument cannot hold the control character %r: %r. Remove it.' % (c, arg))
    if '\t' in arg or '  ' in arg:
        raise ParseError('an argument in command_args cannot hold a TAB or several spaces in a row: %r. openrc expands '
                         '$command_args unquoted, so the shell splits it at white space before eval and k3s would get '
                         'a single space there. Use single spaces, or put the flag in a k3s config file (method=config).'
                         % (arg,))
    out = ["'"]
    for c in arg:
        if c == "'":
            out.append("'\\''")
        elif c in '\\"$`':
            out.append('\\' + c)
        else:
            out.append(c)
    out.append("'")
    return ''.join(out)
