# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Family: terminal-safe output. The one escaping and width helper every table and message uses, from tables."""

from __future__ import annotations

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal as t


@pytest.mark.parametrize('text, shown', [
    ('plain node-1', 'plain node-1'),
    ('clear\x1b[2J\x1b[H', 'clear\\x1b[2J\\x1b[H'),
    ('bell\x07', 'bell\\x07'),
    ('cr\rhidden', 'cr\\rhidden'),
    ('line\nbreak\ttab', 'line\\nbreak\\ttab'),
    ('nul\x00', 'nul\\x00'),
    ('del\x7f', 'del\\x7f'),
    ('c1\x9b31m', 'c1\\x9b31m'),
    ('rtl\u202eevil', 'rtl\\u202eevil'),
    ('zwj\u200d', 'zwj\\u200d'),
    ('line\u2028sep', 'line\\u2028sep'),
    ('private\ue000', 'private\\ue000'),
    ('undecodable\udc80\udcff', 'undecodable\\x80\\xff'),
    ('東京', '東京'),
    ('e\u0301', 'e\u0301'),
    ('back\\slash', 'back\\slash'),
])
def test_family_terminal_safe_output_escape(text, shown):
    assert t.escape(text) == shown
    assert all(not t.unprintable(c) for c in t.escape(text))


def test_family_terminal_safe_output_escape_keeps_what_it_is_told():
    assert t.escape('two\nlines\x1b', keep='\n') == 'two\nlines\\x1b'
    assert t.one_line('a\n  b\tc\x1b') == 'a b c\\x1b'
    assert t.escape(42) == '42'


@pytest.mark.parametrize('text, columns', [
    ('node-1', 6),
    ('東京', 4),
    ('ｆｕｌｌ', 8),
    ('e\u0301\u0301', 1),
    ('한국어', 6),
    ('😀', 2),
    ('a\x1b', 5),  # escaped first: a\x1b
    ('', 0),
])
def test_family_terminal_safe_output_width_in_columns(text, columns):
    assert t.width(text) == columns


@pytest.mark.parametrize('text, columns, cut', [
    ('node-1', 10, 'node-1'),
    ('node-1', 6, 'node-1'),
    ('node-12', 6, 'node-\u2026'),
    ('東京東京', 5, '東京\u2026'),
    ('東京東京', 4, '東\u2026'),
    ('e\u0301e\u0301e\u0301', 2, 'e\u0301\u2026'),
    ('abc', 1, 'a'),
    ('東京', 1, ''),
    ('abc', 0, ''),
    ('x\x1b[2J', 4, 'x\\x\u2026'),
])
def test_family_terminal_safe_output_cut(text, columns, cut):
    assert t.cut(text, columns) == cut
    assert t.width(t.cut(text, columns)) <= max(columns, 0)


def test_family_terminal_safe_output_pad():
    assert t.pad('東京', 6) == '東京  '
    assert t.width(t.pad('東京', 6)) == 6
    assert t.pad('toolong', 3) == 'toolong'


@pytest.mark.parametrize('text', [
    'node-1: ' + 'x' * 300,
    '東京-' * 80,
    'a b c ' * 60,
    'n\x1b[2J: \x07' * 40,
    'e\u0301' * 150,
])
@pytest.mark.parametrize('columns', [20, 41, 120])
def test_family_terminal_safe_output_wrap_keeps_every_line_within_the_width(text, columns):
    lines = t.wrap(text, columns, indent='  ')
    assert all(t.width(line) <= columns for line in lines)
    assert all(not t.unprintable(c) for line in lines for c in line)
    # nothing is lost: the words, joined again, are the text's
    assert ''.join(''.join(line.split()) for line in lines) == ''.join(t.one_line(text).split())
    assert lines[0].startswith('  ') and all(line.startswith('      ') for line in lines[1:])
