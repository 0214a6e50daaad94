# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""Text that reaches an operator's terminal: what the collection prints from node data.

A node name, a file name, a process's command line or a message read on a node may hold control
characters: an escape sequence clears the screen or rewrites the line above, a carriage return
hides what came before it, a bell rings, a bidirectional override reorders what is shown. Every
table and message the collection prints goes through :func:`escape` (or :func:`one_line`), which
shows such characters as escapes (``\\x1b``, ``\\u202e``) instead of sending them.

Width is counted as a terminal counts it, in columns: an East Asian wide or fullwidth character
takes two, a combining mark or a zero-width character none (:func:`width`). :func:`cut`,
:func:`pad` and :func:`wrap` work in columns, so a table of CJK node names keeps its layout and
every line its width. Input is escaped first in each of them, so nothing unprintable is counted
or printed.

Pure standard library (unicodedata); no Ansible import.
"""

from __future__ import annotations

import unicodedata

ELLIPSIS = '\u2026'
_NAMED = {'\n': '\\n', '\r': '\\r', '\t': '\\t'}
# Unicode categories never sent to a terminal as they are: controls, format characters (bidirectional
# overrides, zero-width joiners), surrogates (undecodable bytes read with surrogateescape), private use,
# unassigned code points, line and paragraph separators.
_UNPRINTABLE = frozenset(('Cc', 'Cf', 'Cs', 'Co', 'Cn', 'Zl', 'Zp'))


def _escaped(char):
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape): the byte itself
        return '\\x%02x' % (code - 0xDC00)
    if code <= 0xFF:
        return '\\x%02x' % code
    if code <= 0xFFFF:
        return '\\u%04x' % code
    return '\\U%08x' % code


def unprintable(char):
    """Whether ``char`` must not reach a terminal as it is."""
    return unicodedata.category(char) in _UNPRINTABLE


def escape(value, keep=''):
    """``value`` as text with every character that is not printable written as an escape (``\\x1b``,
    ``\\n``, ``\\u202e``); the characters in ``keep`` (``'\\n'`` for a message of several lines) stay."""
    text = value if isinstance(value, str) else str(value)
    if not any(unprintable(c) for c in text):
        return text
    return ''.join(c if c in keep or not unprintable(c) else _escaped(c) for c in text)


def one_line(value):
    """``value`` on one line: runs of white space (line breaks included) as one space, the rest escaped."""
    text = value if isinstance(value, str) else str(value)
    return escape(' '.join(text.split()))


def char_width(char):
    """Columns ``char`` takes: 0 for a combining mark or a zero-width character, 2 for an East Asian wide or
    fullwidth one, else 1. Only for printable characters (escape first)."""
    if unicodedata.combining(char) or unicodedata.category(char) in ('Mn', 'Me', 'Cf'):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ('W', 'F') else 1


def width(value):
    """Columns ``value`` takes on a terminal, once escaped."""
    return sum(char_width(c) for c in escape(value))


def _clusters(text):
    """``text`` as (characters, columns) pieces: each base character with the zero-width ones after it."""
    pieces = []
    for c in text:
        w = char_width(c)
        if w == 0 and pieces:
            pieces[-1] = (pieces[-1][0] + c, pieces[-1][1])
        else:
            pieces.append((c, w))
    return pieces


def cut(value, columns):
    """``value`` (escaped) in at most ``columns`` columns; the last one an ellipsis when anything was cut."""
    text = escape(value)
    if width(text) <= columns:
        return text
    if columns <= 0:
        return ''
    out, used = [], 0
    room = columns - 1 if columns > 1 else columns  # one column: the first character, no room for an ellipsis
    for piece, w in _clusters(text):
        if used + w > room:
            break
        out.append(piece)
        used += w
    return ''.join(out) + (ELLIPSIS if columns > 1 else '')


def pad(value, columns):
    """``value`` (escaped) followed by spaces up to ``columns`` columns (never cut: see :func:`cut`)."""
    text = escape(value)
    return text + ' ' * max(0, columns - width(text))


def _take(word, columns):
    """(the head of ``word`` that fits in ``columns`` columns, the rest); the head holds one character at least."""
    head, used = '', 0
    pieces = _clusters(word)
    for n, (piece, w) in enumerate(pieces):
        if head and used + w > columns:
            return head, ''.join(p for p, dummy in pieces[n:])
        head += piece
        used += w
    return head, ''


def wrap(value, columns, indent='', subsequent_indent=None):
    """``value`` on one line (:func:`one_line`), broken into lines of at most ``columns`` columns, continued under
    ``subsequent_indent`` (``indent`` + four spaces unless given); a word wider than a line is broken inside it,
    filling the line it starts on (as ``textwrap`` does). Nothing is cut off."""
    later = indent + '    ' if subsequent_indent is None else subsequent_indent
    lines, current, lead = [], '', indent
    for word in [w for w in one_line(value).split(' ') if w]:
        while word:
            sep = ' ' if current else ''
            room = columns - width(lead) - width(current) - len(sep)
            if width(word) <= room:
                current += sep + word
                break
            if width(word) > columns - width(later) and room > 0:
                head, word = _take(word, room)  # too wide for any line: it starts here and goes on below
                current += sep + head
            elif not current:
                head, word = _take(word, max(1, room))
                current = head
            lines.append(lead + current)
            lead, current = later, ''
    if current or not lines:
        lines.append((lead + current) if current else indent.rstrip())
    return lines
