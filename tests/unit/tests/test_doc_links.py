# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every relative link of README.md, docs/*.md and roles/*/README.md points to a file that exists.

A link ``[text](target)`` outside code (fenced blocks and inline code are skipped) whose target has
no scheme is relative: the file it names, from the linking file's directory, must exist, and a
``#fragment`` into a Markdown file must be one of that file's headings, as GitHub makes their anchors
(lower case, punctuation dropped, spaces to hyphens, ``-1``, ``-2`` for repeats).
"""

from __future__ import annotations

import glob
import os
import re

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
LINK = re.compile(r'(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
FENCE = re.compile(r'^(```|~~~).*?^\1[^\n]*$', re.M | re.S)
CODE = re.compile(r'(`+).+?\1', re.S)
SCHEME = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*:')


def documents():
    found = [os.path.join(ROOT, 'README.md')]
    found += sorted(glob.glob(os.path.join(ROOT, 'docs', '*.md')))
    found += sorted(glob.glob(os.path.join(ROOT, 'roles', '*', 'README.md')))
    return found


def prose(text):
    """The text without fenced code blocks and inline code (a link shown as code is no link)."""
    return CODE.sub('', FENCE.sub('', text))


def anchors(text):
    """The anchors GitHub gives the headings of a Markdown text."""
    out, seen = set(), {}
    for line in FENCE.sub('', text).split('\n'):
        match = re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
        if not match:
            continue
        title = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', match.group(1))
        slug = re.sub(r'[^\w\- ]', '', title.replace('`', '').lower()).replace(' ', '-')
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else '%s-%d' % (slug, n))
    return out


def broken(path, text):
    """[(target, why)] for each relative link of ``text`` (the file at ``path``) that points nowhere."""
    out = []
    here = os.path.dirname(path)
    for match in LINK.finditer(prose(text)):
        target = match.group(1)
        if SCHEME.match(target) or target.startswith('//'):
            continue
        name, dummy, fragment = target.partition('#')
        dest = os.path.normpath(os.path.join(here, name)) if name else path
        if not os.path.exists(dest):
            out.append((target, 'no such file: %s' % os.path.relpath(dest, ROOT)))
            continue
        if fragment and dest.endswith('.md'):
            with open(dest) as f:
                if fragment not in anchors(f.read()):
                    out.append((target, 'no heading of %s has the anchor #%s' % (os.path.relpath(dest, ROOT), fragment)))
    return out


@pytest.mark.parametrize('path', documents(), ids=lambda p: os.path.relpath(p, ROOT))
def test_relative_links_resolve(path):
    with open(path) as f:
        text = f.read()
    assert broken(path, text) == [], '%s: broken links' % os.path.relpath(path, ROOT)


def test_the_documents_are_found_and_link():
    names = {os.path.relpath(p, ROOT) for p in documents()}
    assert {'README.md', 'docs/fleet.md', 'docs/extender.md', 'roles/k3s_server/README.md'} <= names
    with open(os.path.join(ROOT, 'README.md')) as f:
        targets = [m.group(1) for m in LINK.finditer(prose(f.read()))]
    assert 'docs/fleet.md' in targets and 'docs/developing.md' in targets


@pytest.mark.parametrize('text, expected', [
    ('[fleet](docs/fleet.md) and [x](https://example.com/missing)', []),
    ('[gone](docs/no-such-guide.md)', ['docs/no-such-guide.md']),
    ('[bad anchor](docs/fleet.md#no-such-heading)', ['docs/fleet.md#no-such-heading']),
    ('[good anchor](docs/fleet.md#rootless-servers)', []),
    ('[own](#install) and [own, gone](#no-such)', ['#no-such']),
    ('`[in code](docs/gone.md)` and\n```\n[fenced](docs/gone.md)\n```\n', []),
    ('[a [nested] text](docs/gone.md "title")', ['docs/gone.md']),
])
def test_broken_links_are_found(text, expected):
    found = broken(os.path.join(ROOT, 'README.md'), text)
    assert [target for target, dummy in found] == expected


@pytest.mark.parametrize('heading, anchor', [
    ('## Quick start: the scheduler extender (CSI Baremetal)', 'quick-start-the-scheduler-extender-csi-baremetal'),
    ("## Try it on the demo's nodes", 'try-it-on-the-demos-nodes'),
    ('## Upgrade: `baremetal.k3s.upgrade`', 'upgrade-baremetalk3supgrade'),
    ('## Grow the fleet: `--limit`', 'grow-the-fleet---limit'),
])
def test_anchors_as_github_makes_them(heading, anchor):
    assert anchor in anchors(heading + '\n')


@pytest.mark.parametrize('path', documents(), ids=lambda p: os.path.relpath(p, ROOT))
def test_code_fences_are_closed(path):
    # an unclosed fence turns the rest of the page into code (and hides its links from the test above)
    with open(path) as f:
        fences = [n for n, line in enumerate(f, 1) if line.startswith('```')]
    assert len(fences) % 2 == 0, '%s: a code fence is not closed (fences at lines %s)' % (
        os.path.relpath(path, ROOT), fences)
