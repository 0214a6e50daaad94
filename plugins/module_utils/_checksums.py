# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""A mirror's checksums file, read as ``sha256sum`` writes it, and the sha256 it gives for the file a URL names.

The lines read (others - blank, ``#`` comments, other formats - are skipped, as ``sha256sum -c`` skips improperly
formatted lines):

* GNU ``sha256sum``: ``<64 hex digits><space><space or *><name>`` (``*``: binary mode); a line that starts with
  ``\\`` has a name with ``\\\\`` and ``\\n`` escapes (how sha256sum writes a name with a backslash or a line break);
* BSD style (``sha256sum --tag``, ``shasum -a 256 --tag``): ``SHA256 (<name>) = <64 hex digits>``;
* a file whose only line is the 64 hex digits alone (a ``<file>.sha256`` of a single file): that sha256, whatever
  the name.

The name a line gives is matched against the URL's path part by part from its end: ``amd64/k3s`` is the file of
``https://mirror/v1.31.4/amd64/k3s`` and not of ``.../arm64/k3s``; ``k3s`` is the file of both (a leading ``./`` is
dropped). Every line that matches counts: two that give different sha256 for the file are an ambiguous file and
refused, never the first one taken.

And the sha256 of a local file, read in blocks (:func:`file_sha256`: the controller's files, a backup's).

Pure standard library; no Ansible import.
"""

from __future__ import annotations

import hashlib
import posixpath
import re

from urllib.parse import unquote, urlsplit

_HEX = r'[0-9A-Fa-f]{64}'
_GNU = re.compile(r'(?P<escaped>\\)?(?P<hex>%s) [ *](?P<name>.+)' % _HEX)
_BSD = re.compile(r'(?P<escaped>\\)?SHA256 \((?P<name>.+)\) = (?P<hex>%s)' % _HEX)
_ALONE = re.compile(_HEX)


class ChecksumsError(ValueError):
    """The checksums file gives no sha256, or two, for the file the URL names; ``msg`` says which and what to do."""

    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg


def _unescape(name):
    out, i = [], 0
    while i < len(name):
        if name[i] == '\\' and i + 1 < len(name) and name[i + 1] in '\\n':
            out.append('\n' if name[i + 1] == 'n' else '\\')
            i += 2
            continue
        out.append(name[i])
        i += 1
    return ''.join(out)


def parse(text):
    """[(name, sha256 lower case)] of the lines of a checksums file (name None for a lone sha256)."""
    lines = [line.rstrip('\r') for line in (text or '').split('\n')]
    body = [line for line in lines if line.strip() and not line.lstrip().startswith('#')]
    if len(body) == 1 and _ALONE.fullmatch(body[0].strip()):
        return [(None, body[0].strip().lower())]
    out = []
    for line in body:
        m = _GNU.fullmatch(line) or _BSD.fullmatch(line)
        if not m:
            continue
        name = _unescape(m.group('name')) if m.group('escaped') else m.group('name')
        out.append((name, m.group('hex').lower()))
    return out


def _parts(path):
    return [p for p in posixpath.normpath(path).split('/') if p and p != '.']


def url_parts(url):
    """The parts of the path of ``url`` (percent-escapes undone), last one the file name."""
    return _parts(unquote(urlsplit(url).path))


def sha256_for(text, url):
    """The sha256 the checksums ``text`` gives for the file ``url`` names; ChecksumsError when it gives none or two."""
    want = url_parts(url)
    if not want:
        raise ChecksumsError('the URL %s names no file (its path is empty): give the URL of the binary itself.' % url)
    entries = parse(text)
    if not entries:
        raise ChecksumsError('the checksums file has no line as sha256sum writes them ("<sha256>  <file name>", or '
                             '"SHA256 (<file name>) = <sha256>"): is it the checksums file of this release?')
    found = {}
    for name, digest in entries:
        parts = want[-1:] if name is None else _parts(name)
        if parts and want[-len(parts):] == parts:
            found.setdefault(digest, []).append(name if name is not None else '(the file\'s only sha256)')
    if not found:
        raise ChecksumsError('the checksums file has no sha256 for %s (the file name of the URL %s; its %d lines name '
                             'other files): give the checksums file of this file\'s release and architecture.'
                             % ('/'.join(want[-1:]), url, len(entries)))
    if len(found) > 1:
        raise ChecksumsError('the checksums file is ambiguous for %s: %s. A file has one sha256; give a checksums file '
                             'that lists it once (or lines that name its directory too, as amd64/k3s).'
                             % (url, '; '.join('%s gives %s' % (', '.join(sorted(set(n))), d)
                                               for d, n in sorted(found.items()))))
    return next(iter(found))


def file_sha256(path, chunk=1 << 20):
    """The sha256 (hex) of the local file ``path``, read in blocks of ``chunk`` bytes."""
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(chunk), b''):
            digest.update(block)
    return digest.hexdigest()
