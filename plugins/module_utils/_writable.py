# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.k3s_writable``: which of the paths a run would replace or remove cannot be.

A file is replaced by a rename in its directory (``_io``, ``k3s_binary``) and removed by an unlink; a directory is
removed with everything in it. Either fails, half way through a run, when the path is a mount point (a bind-mounted
file or directory: ``EBUSY``), when its directory is on a read-only file system (an immutable ``/usr``: ``EROFS``),
when the file or its directory has the immutable or append-only attribute (``chattr +i``/``+a``: ``EPERM``), or, for a
directory, when another file system is mounted inside it (its removal would empty that one too, then fail). :func:`check`
finds all of them through the View - ``/proc/self/mountinfo``, ``statvfs`` of the nearest existing directory, the inode
flags - so that a run can refuse before anything changes, on every node at once. Pure standard library; no Ansible
import.
"""

from __future__ import annotations

import os

from ansible_collections.baremetal.k3s.plugins.module_utils import _killall as killall
from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Plan, PlanError

IMMUTABLE = 0x10    # FS_IMMUTABLE_FL
APPEND_ONLY = 0x20  # FS_APPEND_FL
MOUNTINFO = '/proc/self/mountinfo'


def _under(path, top):
    return path == top or path.startswith(top.rstrip('/') + '/')


def mounts(view):
    """The mount points of the node (``/proc/self/mountinfo``), each once."""
    seen = []
    for point in killall.mount_points(view.read_text(MOUNTINFO) or ''):
        if point not in seen:
            seen.append(point)
    return seen


def _mount_of(points, path):
    """The mount point that holds ``path`` (the longest one above it)."""
    above = [p for p in points if _under(path, p)]
    return max(above, key=len) if above else '/'


def _attribute(flags):
    if flags is None:
        return ''
    if flags & IMMUTABLE:
        return 'immutable (chattr +i)'
    if flags & APPEND_ONLY:
        return 'append-only (chattr +a)'
    return ''


def _existing_dir(view, path):
    probe = os.path.dirname(path) or '/'
    while probe != '/' and not view.isdir(probe):
        probe = os.path.dirname(probe)
    return probe


def why_not(view, points, path, action, spared=()):
    """Why ``path`` cannot be replaced (``action`` replace: a file renamed over it, or created) or removed (remove: with
    everything in it, for a directory); '' when it can. ``spared``: directories whose mounts are taken down before the
    removal (the pods' mounts, which k3s_killall unmounts)."""
    exists = view.lexists(path)
    if action == 'remove' and not exists:
        return ''
    real = view.realpath(path)
    if exists and real in points:
        return 'is a mount point (a bind mount or a file system of its own): %s fails with EBUSY' % (
            'a rename over it' if action == 'replace' else 'its removal')
    directory = _existing_dir(view, real)
    st = view.statvfs(directory)
    if st is not None and st.f_flag & os.ST_RDONLY:
        return 'is on a read-only file system (mounted at %s)' % _terminal.escape(_mount_of(points, directory))
    attribute = _attribute(view.inode_flags(directory))
    if attribute:
        return 'is in %s, which is %s: nothing in it can be created, renamed or removed' % (
            _terminal.escape(directory), attribute)
    attribute = _attribute(view.inode_flags(real)) if exists else ''
    if attribute:
        return 'is %s' % attribute
    if action == 'remove' and view.isdir(real):
        inside = [p for p in points if _under(p, real) and p != real and not any(_under(p, s) for s in spared)]
        if inside:
            return ('has %s mounted inside it: removing the directory would empty %s too, then fail; unmount %s first'
                    % (_terminal.escape(', '.join(inside)), 'that file system' if len(inside) == 1 else 'those',
                       'it' if len(inside) == 1 else 'them'))
    return ''


def check(view, params):
    """The Plan (no changes) of ``params``: ``replace`` and ``remove`` (absolute paths), ``data_dir`` (k3s's: the
    pods' mounts under it are k3s_killall's to take down)."""
    for option in ('replace', 'remove'):
        for value in params.get(option) or []:
            if not isinstance(value, str) or not os.path.isabs(value) or '\0' in value:
                raise PlanError('%s: %s is not an absolute path; give the node path of each file or directory.'
                                % (option, _terminal.escape(repr(value))))
    points = mounts(view)
    spared = killall.mount_prefixes(params['data_dir']) if params.get('data_dir') else ()
    refused = []
    for action in ('replace', 'remove'):
        for path in params.get(action) or []:
            path = os.path.normpath(path)
            reason = why_not(view, points, path, action, spared)
            if reason:
                refused.append({'path': path, 'action': action, 'reason': reason})
    msg = '; '.join('%s %s, so it cannot be %s' % (_terminal.escape(r['path']), r['reason'],
                                                   'replaced' if r['action'] == 'replace' else 'removed')
                    for r in refused)
    return Plan(facts={'refused': refused, 'msg': msg})
