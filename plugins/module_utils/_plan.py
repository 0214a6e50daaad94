# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""What a module is about to do to the node: the contract every module of this collection follows.

Every module works in three steps::

    view = View(...)                      # module_utils/_view.py: the only reader of the node
    plan = <logic>.plan(view, params)     # pure: computes a Plan, writes nothing, raises PlanError
    result = _io.apply(module, plan)      # module_utils/_io.py: the only writer

A :class:`Plan` holds the whole new content of every file it touches (:class:`Change`:
path, bytes before, bytes after, mode for a new file) and the ``facts`` the module returns.
``apply`` writes the changes (nothing in check mode) and returns the same
``files: [{path, action, backup_file}]`` list from every writing module, so that a caller
(the role's rollback) can undo exactly one run. Read-only modules return ``facts`` only.

Pure standard library; no Ansible import.
"""

from __future__ import annotations


class PlanError(Exception):
    """A refusal before anything is written: ``msg`` says what is wrong and what to do.

    ``details`` are extra keys for the failed result (``errors``, ``path``...).
    """

    def __init__(self, msg, **details):
        super().__init__(msg)
        self.msg = msg
        self.details = details


class Change:
    """One file as it is (``before``) and as it should be (``after``); None means absent.

    ``mode`` applies when the file is created; an existing file keeps its own mode and owner.
    ``owner``/``group`` likewise, for a new file only. ``secret``: the file holds a secret (a
    token, a password): it is ``mode`` (default 0600) and root's after every write, a replaced
    file too, and so is its backup.
    """

    __slots__ = ('path', 'before', 'after', 'mode', 'owner', 'group', 'secret')

    def __init__(self, path, before, after, mode=None, owner=None, group=None, secret=False):
        self.path = path
        self.before = before
        self.after = after
        self.mode = mode
        self.owner = owner
        self.group = group
        self.secret = secret

    @property
    def action(self):
        """``created``, ``modified``, ``removed``, or None when nothing changes."""
        if self.before == self.after:
            return None
        if self.before is None:
            return 'created'
        if self.after is None:
            return 'removed'
        return 'modified'

    def __repr__(self):
        return 'Change(%r, %s)' % (self.path, self.action)


class Plan:
    """The changes a module makes (no-op changes dropped), what it returns, and its warnings."""

    def __init__(self, changes=(), facts=None, warnings=()):
        self.changes = [c for c in changes if c.action is not None]
        self.facts = dict(facts or {})
        self.warnings = list(warnings)

    @property
    def changed(self):
        return bool(self.changes)

    @property
    def paths(self):
        return [c.path for c in self.changes]

    def diff(self):
        """Ansible's diff: before and after text of each changed file."""
        return [{'before_header': c.path, 'after_header': c.path,
                 'before': _text(c.before), 'after': _text(c.after)} for c in self.changes]


def _text(data):
    return '' if data is None else data.decode('utf-8', 'replace')
