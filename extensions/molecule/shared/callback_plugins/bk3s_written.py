# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Test-only callback: the paths baremetal.k3s's modules report writing, per host, for fingerprint.py."""

from __future__ import annotations

DOCUMENTATION = '''
name: bk3s_written
type: aggregate
short_description: Record the paths baremetal.k3s modules report writing (the scenarios' fingerprints)
description:
  - For every result of a C(baremetal.k3s.*) task (loop items and parts' own results included) that holds C(files), adds each
    entry's C(path) and C(backup_file) to C(<dir>/<host>.json) on the controller, a JSON object of each
    path and the action first reported for it (C(created), C(modified), C(removed); a backup is C(created)).
  - The directory is E(BK3S_WRITTEN_DIR), else C(bk3s-written) in E(MOLECULE_EPHEMERAL_DIRECTORY); with
    neither set the callback records nothing.
  - Nested C(ansible-playbook) runs that inherit the environment and configuration add to the same files.
requirements:
  - enabled in callbacks_enabled
'''

import fcntl
import json
import os
import tempfile

from ansible.plugins.callback import CallbackBase


def written_dir():
    """Where the lists go, or '' when the callback is not to record."""
    if os.environ.get('BK3S_WRITTEN_DIR'):
        return os.environ['BK3S_WRITTEN_DIR']
    if os.environ.get('MOLECULE_EPHEMERAL_DIRECTORY'):
        return os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'bk3s-written')
    return ''


def reported_paths(result):
    """[(path, action)] of the paths and backups the ``files`` of one module result (and of its loop items) name."""
    out = []
    if not isinstance(result, dict):
        return out
    for item in result.get('files') or []:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get('path'), str) and item['path']:
            out.append((item['path'], str(item.get('action') or 'unknown')))
        if isinstance(item.get('backup_file'), str) and item['backup_file']:
            out.append((item['backup_file'], 'created'))
    for sub in result.get('results') or []:
        out.extend(reported_paths(sub))
    for part in result.values():  # a part's own result (scheduler_files' lease, config, flag)
        if isinstance(part, dict) and 'files' in part:
            out.extend(reported_paths(part))
    return out


def add(directory, host, reported):
    """Merge ``reported`` into ``directory/host.json`` (a path keeps its first action), under a lock, atomically."""
    os.makedirs(directory, exist_ok=True)
    target = os.path.join(directory, '%s.json' % host)
    with open(os.path.join(directory, '.lock'), 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(target, encoding='utf-8') as f:
                known = json.load(f)
        except FileNotFoundError:
            known = {}
        new = {path: action for path, action in reversed(reported) if path not in known}
        if not new:
            return
        known.update(new)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix='.%s.' % host, suffix='.tmp')
        with os.fdopen(fd, 'w', encoding='utf-8') as f:
            json.dump(known, f, indent=1, sort_keys=True)
            f.write('\n')
        os.replace(tmp, target)


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'bk3s_written'
    CALLBACK_NEEDS_ENABLED = True

    def _record(self, result):
        directory = written_dir()
        task = getattr(result, 'task', None) or result._task
        if not directory or not str(task.action).startswith('baremetal.k3s.'):
            return
        data = getattr(result, 'result', None) or result._result
        paths = reported_paths(data)
        if not paths:
            return
        delegated = data.get('_ansible_delegated_vars') or {}
        host = delegated.get('ansible_delegated_host') or (getattr(result, 'host', None) or result._host).get_name()
        add(directory, host, paths)

    def v2_runner_on_ok(self, result):
        self._record(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result)
