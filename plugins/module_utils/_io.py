# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The one way this collection writes, backs up and removes files on a node.

Every write goes: temp file in the target's directory -> optional validation of the
temp file -> optional backup of the old file -> atomic rename -> file attributes.
A file is never written in place, so a reader (systemd, k3s, the kubelet) sees either
the old bytes or the new ones, never half of them.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import tempfile
import time

# Directories the kubelet reads pod manifests from: every file there (not starting with '.') is a
# pod, every subdirectory an error, so no copy or config of ours may ever be written there.
STATIC_POD_DIRS = ('/etc/kubernetes/manifests', '/var/lib/rancher/*/agent/pod-manifests')


def in_static_pod_dir(directory, manifest_path=None):
    """Whether ``directory`` is (inside) a static-pod manifest directory, or the directory of ``manifest_path``."""
    candidates = (os.path.realpath(directory), os.path.abspath(directory))
    for pattern in STATIC_POD_DIRS:
        for candidate in candidates:
            if fnmatch.fnmatch(candidate, pattern) or fnmatch.fnmatch(candidate, pattern + '/*'):
                return True
    if manifest_path:
        own = (os.path.realpath(os.path.dirname(manifest_path)), os.path.dirname(os.path.abspath(manifest_path)))
        for d in own:
            for candidate in candidates:
                if candidate == d or candidate.startswith(d.rstrip('/') + '/'):
                    return True
    return False


def read_bytes(path):
    """Return the file's bytes, or None when it does not exist."""
    try:
        with open(path, 'rb') as f:
            return f.read()
    except FileNotFoundError:
        return None


def backup_file(module, path, backup_dir=None):
    """Copy ``path`` aside (mode, owner and times kept) and return the copy's path.

    Without ``backup_dir`` this is Ansible's own ``backup_local`` (next to the file).
    ``backup_dir`` exists for files that live in a directory where a stray copy is
    harmful: the kubelet reads every file of a static-pod manifest directory.
    """
    if not os.path.exists(path):
        return None
    if backup_dir is None:
        return module.backup_local(path)
    os.makedirs(backup_dir, mode=0o700, exist_ok=True)
    stamp = time.strftime('%Y-%m-%d@%H:%M:%S', time.localtime())
    dest = os.path.join(backup_dir, '%s.%d.%s~' % (os.path.basename(path), os.getpid(), stamp))
    shutil.copy2(path, dest)
    st = os.stat(path)
    os.chown(dest, st.st_uid, st.st_gid)
    return dest


def write_file(module, path, content, mode=None, owner=None, group=None,
               backup=False, backup_dir=None, validate=None):
    """Atomically replace ``path`` with ``content`` (bytes).

    Missing parent directories are made (mode 0755).
    ``validate`` is a callable taking the temp file's path; it raises (or calls
    ``fail_json``) to refuse the content, in which case the target is untouched.
    ``mode``/``owner``/``group`` apply to a new file only: an existing file keeps its
    own (atomic_move carries them over), as a user who tightened a unit expects. Returns ``{'backup_file': path or None}``.
    """
    directory = os.path.dirname(path) or '.'
    existed = os.path.exists(path)
    if not os.path.isdir(directory):
        # e.g. /etc/rancher/k3s/config.yaml.d on a node that never had a drop-in
        os.makedirs(directory, 0o755)
    fd, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), dir=directory)
    result = {'backup_file': None}
    try:
        with os.fdopen(fd, 'wb') as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        if validate is not None:
            validate(tmp)
        if backup and existed:
            result['backup_file'] = backup_file(module, path, backup_dir)
        if not existed and mode is not None:
            # atomic_move keeps an existing target's attributes; a new one gets ours
            os.chmod(tmp, mode)
        module.atomic_move(tmp, path, unsafe_writes=False)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    if existed or (mode is None and owner is None and group is None):
        return result
    # Built by ansible-core itself, so the keys match the running version (SELinux too).
    file_args = module.load_file_common_arguments({'mode': mode, 'owner': owner, 'group': group}, path=path)
    module.set_fs_attributes_if_different(file_args, False)
    return result


def remove_file(module, path, backup=False, backup_dir=None):
    """Remove ``path`` (after an optional backup). Returns ``{'backup_file': ...}``."""
    result = {'backup_file': None}
    if not os.path.exists(path):
        return result
    if backup:
        result['backup_file'] = backup_file(module, path, backup_dir)
    os.unlink(path)
    return result
