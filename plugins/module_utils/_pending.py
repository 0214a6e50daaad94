# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""A change written but not applied yet: a k3s (or RKE2) process older than what it reads at its start.

k3s reads its unit (or init script) and drop-ins, its environment files, its config files, its registries file and its
token file once, when it starts; its binary is what it runs. A run that wrote one of them and stopped before the restart
(a failure, a kill) leaves a node whose process does not use what its files say, and whose files say just what the next
run wants: only the process's start time, against the files' modification times, shows that the change is still
pending. :func:`pending` makes that comparison for every platform and init system (the process's start from
``/proc/<pid>/stat``, as ``_service_clock`` reads it), and for the binary also asks ``/proc/<pid>/exe``: a process whose
program is the binary's path marked ``(deleted)`` runs a file that was replaced (same version string or not).

Reads through the View; no Ansible import.
"""

from __future__ import annotations

import os

from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config as k3s_config
from ansible_collections.baremetal.k3s.plugins.module_utils import _service_clock as sc
from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal

DELETED = ' (deleted)'  # what the kernel appends to /proc/<pid>/exe when the program's file was removed or replaced


def read_at_start(view, init, config_files, k3s_args, record):
    """The files ``init`` (a ``_service`` Systemd or Openrc) starts k3s from, in the order a reader meets them: the unit
    or init script, its drop-ins, its environment files, the config files (``config_files``, as k3s lists them), the
    registries file, the token files.

    ``k3s_args``: the command line with the config files' flags inserted (secrets not hidden: only paths are read from
    it); ``record``: the node's platform record (its ``registries_file`` and ``env_prefix``). Only files that exist."""
    paths = [init.path] + list(init.dropin_paths) + list(init.env_files) + list(config_files)
    registries = _last(k3s_args[1:], 'private-registry') or record.get('registries_file') or ''
    if registries:
        paths.append(registries)
    paths += token_files(k3s_args, init.env, record)
    out = []
    for path in paths:
        if path and os.path.isabs(path) and path not in out and view.isfile(path):
            out.append(path)
    return out


def token_files(k3s_args, env, record):
    """The token files k3s reads (``--token-file``, ``--agent-token-file``, else ``K3S_TOKEN_FILE``)."""
    prefix = record.get('env_prefix') or 'K3S_'
    found = k3s_config.flag_values(k3s_args[1:], 'token-file') + k3s_config.flag_values(k3s_args[1:], 'agent-token-file')
    if not k3s_config.flag_values(k3s_args[1:], 'token-file') and env.get(prefix + 'TOKEN_FILE'):
        found.append(env[prefix + 'TOKEN_FILE'])
    return [f for f in found if f]


def _last(args, *names):
    values = k3s_config.flag_values(args, *names)
    return values[-1] if values else ''


def started(view, pid):
    """(start in epoch seconds, its resolution) of process ``pid``; (None, None) when it is gone or cannot be read."""
    if not pid:
        return None, None
    start = sc.process_start(view, pid)
    if start is None:
        return None, None
    return start['started_at'], start['resolution']


def newer(view, paths, since, resolution=0.0):
    """[(path, mtime)] of ``paths`` changed after ``since`` (a time known to ``resolution`` seconds): a file written in
    the same instant as the start does not count."""
    if since is None:
        return []
    out = []
    for path in paths:
        mtime = view.mtime(path)
        if mtime is not None and mtime > since + resolution:
            out.append((path, mtime))
    return out


def exe_replaced(view, pid, binary):
    """Whether process ``pid`` runs ``binary`` (its real path) and that file was replaced or removed since it started
    (``/proc/<pid>/exe`` names it with `` (deleted)``). False when the process runs another file: k3s execs itself
    from its data directory, so only the binary's time can tell then."""
    link = view.exe(pid)
    if not link or not link.endswith(DELETED):
        return False
    try:
        real = view.realpath(binary)
    except Exception:  # pylint: disable=broad-exception-caught  # a path the view cannot resolve is not the program
        return False
    return link[:-len(DELETED)] in (binary, real)


def pending(view, pid, files, binary):
    """What process ``pid`` does not use yet: ``{'started_at': iso or '', 'pending': [{path, changed_at, reason}]}``.

    ``files``: what the service reads at its start (:func:`read_at_start`); ``binary``: the program it starts. Empty
    when nothing runs (a start applies everything) or when the start time cannot be read."""
    since, resolution = started(view, pid)
    if since is None:
        return {'started_at': '', 'pending': []}
    entries = [{'path': path, 'changed_at': sc.to_iso(mtime), 'reason': 'changed after k3s started'}
               for path, mtime in newer(view, files, since, resolution)]
    if binary:
        if exe_replaced(view, pid, binary):
            mtime = view.mtime(binary)
            entries.append({'path': binary, 'changed_at': sc.to_iso(mtime) if mtime is not None else '',
                            'reason': 'replaced after k3s started: the process runs the deleted file'})
        else:
            entries += [{'path': path, 'changed_at': sc.to_iso(mtime), 'reason': 'replaced after k3s started'}
                        for path, mtime in newer(view, [binary], since, resolution)]
    return {'started_at': sc.to_iso(since), 'pending': entries}


def describe(service, pid, started_at, entries):
    """One sentence for an operator: which process runs older than which files, and what applies them ('' when none)."""
    if not entries:
        return ''
    what = '; '.join('%s %s (%s)' % (_terminal.escape(e['path']), e['reason'], e['changed_at'] or 'time unknown')
                     for e in entries)
    return ('%s still runs the process started at %s (pid %d), older than what it reads at its start: %s. A restart of '
            '%s applies it; the roles restart it on their next run.' % (service, started_at, pid, what, service))
