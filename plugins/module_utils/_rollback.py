# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.rollback``: undo exactly what a run's writing modules reported.

Every writing module of this collection returns ``files: [{path, action, backup_file}]``.
A run that changed a file twice (two tasks on one config drop-in) reports it twice; the
*first* entry holds the file as it was before the run. ``restore`` gives every file its
state before the run (a created file goes, a modified or removed one gets its first backup
back) and drops the backups; ``discard`` only drops the backups, once the change is proven.
"""

from __future__ import annotations

import os
import re

from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, Plan, PlanError

ACTIONS = ('created', 'modified', 'removed')
# what _io.backup_file (and Ansible's backup_local) names a copy of <name>: <name>.<pid>.<YYYY-mm-dd@HH:MM:SS>~, with a
# counter before the "~" when that name was taken
BACKUP_SUFFIX = r'\.[0-9]+\.[0-9]{4}-[0-9]{2}-[0-9]{2}@[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?~'


def is_backup_name(backup, path):
    """Whether ``backup``'s name is one this collection gives a copy of ``path`` (the directory is not judged here)."""
    return re.fullmatch(re.escape(os.path.basename(path)) + BACKUP_SUFFIX, os.path.basename(backup)) is not None


def _absolute(value, label):
    if not isinstance(value, str) or not os.path.isabs(value) or os.path.normpath(value) != value.rstrip('/') or \
            '\x00' in value:
        raise PlanError('%s %r is not an absolute, normalized path (no "..", ".", "//"): the files lists of this '
                        'collection\'s modules hold only such paths; give the list a module returned, unchanged.'
                        % (label, value))


def check_entries(files):
    """Refuse, before anything is read or locked, an entry that is not what a module of this collection returns: a
    relative path, or a backup_file that is the live file, another file's copy, or no copy at all."""
    if not isinstance(files, list):
        raise PlanError('files must be a list of the "files" the modules of this collection return, not %r' % (files,))
    for index, entry in enumerate(files):
        label = 'files[%d]' % index
        if not isinstance(entry, dict) or not entry.get('path') or entry.get('action') not in ACTIONS:
            raise PlanError('files must be the "files" lists the modules of this collection return ([{path, action, '
                            'backup_file}], action one of %s); %s is %r' % (', '.join(ACTIONS), label, entry))
        _absolute(entry['path'], label + '.path')
        backup = entry.get('backup_file')
        if backup in (None, ''):
            continue
        _absolute(backup, label + '.backup_file')
        if backup == entry['path'] or not is_backup_name(backup, entry['path']):
            raise PlanError('%s.backup_file %s is not a backup this collection made of %s (named %s.<pid>.<YYYY-mm-dd@'
                            'HH:MM:SS>~); it is not removed, and nothing was changed. Give the files list a module '
                            'returned, unchanged.' % (label, backup, entry['path'], os.path.basename(entry['path'])))
    live = set(e['path'] for e in files)
    for index, entry in enumerate(files):
        if entry.get('backup_file') in live:
            raise PlanError('files[%d].backup_file %s is a file the run changed, not a backup; nothing was changed.'
                            % (index, entry['backup_file']))


def first_entries(files):
    """The first entry of each path, in order: the state before the run."""
    check_entries(files)
    seen = {}
    for entry in files:
        seen.setdefault(entry['path'], entry)
    return list(seen.values())


def paths(params):
    """The files a rollback of ``params['files']`` may write: each path and each backup (checked first)."""
    check_entries(params.get('files') or [])
    out = []
    for entry in params.get('files') or []:
        if isinstance(entry, dict):
            for key in ('path', 'backup_file'):
                if isinstance(entry.get(key), str) and entry[key] not in out:
                    out.append(entry[key])
    return out


def plan(view, params):
    """The Plan: the files back as they were (``restore``), and the backups gone."""
    files = params.get('files') or []
    firsts = first_entries(files)
    backups = []
    for entry in files:
        if entry.get('backup_file') and entry['backup_file'] not in backups:
            backups.append(entry['backup_file'])
    changes = []
    restored = []
    warnings = []
    if params.get('mode', 'restore') == 'restore':
        for entry in firsts:
            current = view.read(entry['path'])
            if entry['action'] == 'created':
                before = None
            else:
                if not entry.get('backup_file'):
                    raise PlanError('%s was %s but no backup was taken (the task ran with backup: false), so it cannot be '
                                    'put back; nothing was restored.' % (entry['path'], entry['action']))
                before = view.read(entry['backup_file'])
                if before is None:
                    # Backups are removed only after every file is back: one that is gone means an earlier
                    # rollback of this run got that far (and was cut off while removing the backups).
                    warnings.append('the backup %s of %s is gone: an earlier rollback of this run already put the file '
                                    'back; left as it is.' % (entry['backup_file'], entry['path']))
                    continue
            changes.append(Change(entry['path'], current, before, mode=view.mode(entry['backup_file'])
                                  if entry.get('backup_file') else None))
            restored.append(entry['path'])
    for backup in backups:
        if view.islink(backup) or (view.lexists(backup) and not view.isfile(backup)):
            raise PlanError('the backup %s is not a regular file (a symbolic link, a directory...): this collection\'s '
                            'backups are copies; it is not removed, and nothing was changed.' % backup)
    for backup in backups:
        if backup not in [c.path for c in changes]:
            changes.append(Change(backup, view.read(backup), None))
    plan_ = Plan(changes, warnings=warnings)
    plan_.facts = {'restored': [p for p in restored if p in plan_.paths],
                   'backups_removed': [b for b in backups if b in plan_.paths]}
    return plan_


def hidden_plan(plan_, no_log_values):
    """``plan_`` with a diff that shows no secret the files hold (a token in a unit, an env file, a config file); the
    values also go to ``no_log_values``, so Ansible masks them in the whole result."""
    # here, not at the top: the secret finders read YAML and units (several thousand lines a module run compiles on the
    # node), and node_lease, which drops copies without showing them, needs none of it
    from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets  # pylint: disable=import-outside-toplevel

    found = []
    for change in plan_.changes:
        found += _secrets.file_secrets(change.before) + _secrets.file_secrets(change.after)
    _secrets.add(no_log_values, found)
    return _secrets.hidden_plan(plan_, found)
