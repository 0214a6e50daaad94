# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Family: checksums files as sha256sum writes them: the sha256 of the file the URL names, an ambiguous file refused."""

from __future__ import annotations

import pytest

from ansible_collections.baremetal.k3s.plugins.filter.sha256_for import sha256_for as sha256_filter
from ansible_collections.baremetal.k3s.plugins.module_utils import _checksums

A, B, C = 'a' * 64, 'b' * 64, 'C' * 64
URL = 'https://mirror.example/k3s/v1.31.4%2Bk3s1/'

GOOD = [  # (id, checksums text, URL, the sha256 wanted)
    ('k3s release file', '%s  k3s\n%s  k3s-airgap-images-amd64.tar\n' % (A, B), URL + 'k3s', A),
    ('binary mode star', '%s *k3s\n' % A, URL + 'k3s', A),
    ('the arch the URL names', '%s  amd64/k3s\n%s  arm64/k3s\n' % (A, B), URL + 'arm64/k3s', B),
    ('the other arch', '%s  amd64/k3s\n%s  arm64/k3s\n' % (A, B), URL + 'amd64/k3s', A),
    ('leading ./', '%s  ./arm64/k3s\n' % B, URL + 'arm64/k3s', B),
    ('a longer path in the URL', '%s  k3s\n' % A, 'https://m.example/a/b/c/k3s', A),
    ('upper-case hex', '%s  k3s\n' % C, URL + 'k3s', C.lower()),
    ('CRLF, comments, blank lines', '# release v1.31.4\r\n\r\n%s  k3s\r\n' % A, URL + 'k3s', A),
    ('BSD tag form', 'SHA256 (arm64/k3s) = %s\nSHA256 (amd64/k3s) = %s\n' % (B, A), URL + 'arm64/k3s', B),
    ('escaped name', '\\%s  k3s\\\\x\n%s  k3s\n' % (B, A), URL + 'k3s', A),
    ('one sha256 alone', '%s\n' % A, URL + 'k3s', A),
    ('two lines, one sha256', '%s  k3s\n%s  amd64/k3s\n' % (A, A), URL + 'amd64/k3s', A),
    ('a query is not the path', '%s  k3s\n' % A, URL + 'k3s?token=x', A),
    ('percent-escaped name', '%s  k3s+x\n' % A, URL + 'k3s%2Bx', A),
    ('other formats skipped', 'MD5 (k3s) = %s\n%s  k3s\n' % ('d' * 32, A), URL + 'k3s', A),
]


@pytest.mark.parametrize('text, url, want', [g[1:] for g in GOOD], ids=[g[0] for g in GOOD])
def test_checksums_files_as_sha256sum_writes_them(text, url, want):
    assert _checksums.sha256_for(text, url) == want
    assert sha256_filter(text, url) == {'sha256': want, 'error': ''}


BAD = [  # (id, checksums text, URL, words of the refusal)
    ('arm64 URL, amd64 line only', '%s  amd64/k3s\n' % A, URL + 'arm64/k3s', 'has no sha256 for k3s'),
    ('a line for another file', '%s  k3s-arm64\n' % A, URL + 'k3s', 'has no sha256 for k3s'),
    ('a name that only ends like it', '%s  xk3s\n' % A, URL + 'k3s', 'has no sha256 for k3s'),
    ('two sha256 for one name', '%s  k3s\n%s  k3s\n' % (A, B), URL + 'k3s', 'is ambiguous'),
    ('a bare name and the arch disagree', '%s  k3s\n%s  arm64/k3s\n' % (A, B), URL + 'arm64/k3s', 'is ambiguous'),
    ('BSD and GNU disagree', 'SHA256 (k3s) = %s\n%s  k3s\n' % (A, B), URL + 'k3s', 'is ambiguous'),
    ('not a checksums file', '<html>Not found</html>\n', URL + 'k3s', 'has no line as sha256sum writes them'),
    ('empty', '', URL + 'k3s', 'has no line as sha256sum writes them'),
    ('short hex', '%s  k3s\n' % A[:63], URL + 'k3s', 'has no line as sha256sum writes them'),
    ('a URL without a file', '%s  k3s\n' % A, 'https://mirror.example/', 'names no file'),
]


@pytest.mark.parametrize('text, url, words', [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_checksums_file_without_the_file_or_with_two_sha256_is_refused(text, url, words):
    with pytest.raises(_checksums.ChecksumsError) as e:
        _checksums.sha256_for(text, url)
    assert words in e.value.msg, e.value.msg
    got = sha256_filter(text, url)
    assert got['sha256'] == '' and words in got['error']
