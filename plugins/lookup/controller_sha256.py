# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: controller_sha256
short_description: The sha256 of a file on the controller, read once per playbook run
version_added: 0.1.0
description:
  - Returns the sha256 of each file named, as it is on the controller, for a role to check an artifact it is about to
    copy to the nodes (a k3s binary, an images tarball) against the sha256 it was given.
  - A file is read once per C(ansible-playbook) run, not once per host. Its sha256 is kept in the run's own temporary
    directory (removed when the run ends), keyed by the file's device, inode, size and modification and change times,
    so a file replaced or changed during the run is read again. Hosts that ask at the same moment (forks) wait for the
    first one's reading instead of reading it too.
  - A relative path is looked for as M(ansible.builtin.copy) looks for its C(src) - in the role's and the playbook's
    C(files/) directories, then relative to them.
author:
  - baremetal.k3s contributors (@baremetal)
options:
  _terms:
    description: The files, as paths on the controller.
    type: list
    elements: path
    required: true
'''

EXAMPLES = r'''
- name: Refuse a binary on the controller whose sha256 is not the one given
  ansible.builtin.assert:
    that:
      - binary.exists
      - binary.sha256 == k3s_sha256
    fail_msg: "{{ binary.path }}: {{ 'no such file' if not binary.exists else 'its sha256 is ' ~ binary.sha256 }}"
  vars:
    binary: "{{ query('baremetal.k3s.controller_sha256', './k3s-v1.31.4') | first }}"
'''

RETURN = r'''
_raw:
  description: One dict per file, in order.
  type: list
  elements: dict
  contains:
    path:
      description: The file as found (a relative path resolved as M(ansible.builtin.copy) resolves it).
      type: str
    exists:
      description: Whether it is a regular file (a link is followed, as M(ansible.builtin.copy) follows it).
      type: bool
    sha256:
      description: Its sha256 as 64 lower-case hex digits; empty when it does not exist.
      type: str
'''

import errno
import fcntl
import hashlib
import os
import stat

from ansible import constants as C
from ansible.errors import AnsibleLookupError
from ansible.module_utils.common.text.converters import to_bytes, to_text
from ansible.plugins.lookup import LookupBase

from ansible_collections.baremetal.k3s.plugins.module_utils._checksums import file_sha256

CACHE = 'baremetal-k3s-sha256'


def cache_dir():
    """The directory of this run's readings, in the run's own temporary directory; None when there is none."""
    base = C.DEFAULT_LOCAL_TMP
    if not base:
        return None
    path = os.path.join(base, CACHE)
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError:
        return None
    return path


def cached_sha256(path, st, directory, read=None):
    """The sha256 of ``path`` (whose os.stat is ``st``), read once per key in ``directory`` (None: read now).

    The key is the file's identity and state: a file changed or replaced since has another one. The first caller of
    a key holds its lock while it reads; the others wait for it and take what it wrote."""
    read = read or file_sha256
    if directory is None:
        return read(path)
    key = hashlib.sha256(to_bytes('%s\0%d\0%d\0%d\0%d\0%d' % (
        path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))).hexdigest()
    entry = os.path.join(directory, key)
    try:
        lock = os.open(entry + '.lock', os.O_CREAT | os.O_RDWR | getattr(os, 'O_NOFOLLOW', 0), 0o600)
    except OSError:
        return read(path)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(entry, 'r') as f:
                known = f.read().strip()
            if len(known) == 64:
                return known
        except OSError as e:
            if e.errno != errno.ENOENT:
                return read(path)
        digest = read(path)
        tmp = '%s.%d.tmp' % (entry, os.getpid())
        try:
            with open(tmp, 'w') as f:
                f.write(digest)
            os.replace(tmp, entry)
        except OSError:
            pass  # not kept: the next host reads the file itself
        return digest
    finally:
        os.close(lock)


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        directory = cache_dir()
        out = []
        for term in terms:
            if not isinstance(term, str) or not term:
                raise AnsibleLookupError('controller_sha256: give each file as a path on the controller, not %r' % (term,))
            found = term
            if not os.path.isabs(term):
                found = self.find_file_in_search_path(variables or {}, 'files', term, ignore_missing=True)
            path = to_text(found or term)
            try:
                st = os.stat(path)
            except OSError:
                out.append({'path': path, 'exists': False, 'sha256': ''})
                continue
            if not stat.S_ISREG(st.st_mode):
                out.append({'path': path, 'exists': False, 'sha256': ''})
                continue
            try:
                digest = cached_sha256(path, st, directory)
            except OSError as e:
                raise AnsibleLookupError('controller_sha256: %s cannot be read: %s' % (path, e.strerror or e))
            out.append({'path': path, 'exists': True, 'sha256': digest})
        return out
