# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: sha256_for
short_description: The sha256 a checksums file gives for the file a URL names
version_added: 0.1.0
description:
  - Reads a checksums file as C(sha256sum) writes it - C(<sha256>  <name>) or C(<sha256> *<name>) (a name with a
    backslash or a line break escaped, the line then starting with C(\\)), or the BSD form C(SHA256 (<name>) = <sha256>)
    of C(sha256sum --tag) - and returns the sha256 of the file the URL names. A file whose only line is a sha256 alone
    gives that sha256. Blank lines, C(#) comments and lines of other formats are skipped.
  - A line's name is matched against the URL's path part by part from its end - C(amd64/k3s) is the file of
    C(https://mirror/v1.31.4/amd64/k3s), not of C(.../arm64/k3s); C(k3s) is the file of both.
  - Returns C(error) instead of a sha256 when no line names the file, or when the lines that do give different
    sha256 (an ambiguous file is refused, never its first line taken).
author:
  - baremetal.k3s contributors (@baremetal)
positional: url
options:
  _input:
    description: The checksums file's text.
    type: str
    required: true
  url:
    description: The URL of the file whose sha256 is wanted.
    type: str
    required: true
'''

EXAMPLES = r'''
- name: The sha256 the release's checksums file gives for the binary
  ansible.builtin.set_fact:
    binary_checksum: "{{ checksums.content | baremetal.k3s.sha256_for('https://mirror.example/v1.31.4/arm64/k3s') }}"

- name: Refuse a checksums file without it, or with two
  ansible.builtin.assert:
    that: binary_checksum.error | length == 0
    fail_msg: "{{ binary_checksum.error }}"
'''

RETURN = r'''
_value:
  description: C(sha256) (64 lower-case hex digits, empty on an error) and C(error) (empty, or what is wrong and what to do).
  type: dict
  sample: {sha256: 3b0a1c9f3e5d2e7c4d0e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c, error: ""}
'''

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.baremetal.k3s.plugins.module_utils import _checksums


def sha256_for(text, url):
    if not isinstance(url, str) or not url:
        raise AnsibleFilterError('sha256_for: give the URL of the file whose sha256 is wanted, not %r' % (url,))
    try:
        return {'sha256': _checksums.sha256_for(to_text(text or ''), url), 'error': ''}
    except _checksums.ChecksumsError as e:
        return {'sha256': '', 'error': e.msg}


class FilterModule:
    """baremetal.k3s filters."""

    def filters(self):
        return {'sha256_for': sha256_for}
