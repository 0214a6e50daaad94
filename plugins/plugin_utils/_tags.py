# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This plugin_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""Would a task tagged ``tag``, in the place of the running task, run on this run's ``--tags`` and ``--skip-tags``?

For a task tagged ``always`` that does the work of several phases in one module run (the read of the node and the
checks of the preflight phase): the phase's part runs where a task of that phase's tag would have run, and a task's
tags are its own and those it inherits (its blocks', its role's, its play's, an ``apply`` of an include).
"""

from __future__ import annotations

UNTAGGED = frozenset(['untagged'])


def evaluate(tags, only_tags, skip_tags):
    """Whether a task with ``tags`` runs on ``only_tags`` (``--tags``, ``['all']`` by default) and ``skip_tags``
    (``--skip-tags``): Ansible's own rule (``Taggable.evaluate_tags``), on tags already templated."""
    tags = set(tags) or UNTAGGED
    only_tags, skip_tags = set(only_tags or ()), set(skip_tags or ())
    should_run = True
    if only_tags:
        should_run = ('always' in tags
                      or ('all' in only_tags and 'never' not in tags)
                      or not tags.isdisjoint(only_tags)
                      or ('tagged' in only_tags and tags != UNTAGGED and 'never' not in tags))
    if should_run and skip_tags:
        if 'all' in skip_tags:
            should_run = 'always' in tags and 'always' not in skip_tags
        elif not tags.isdisjoint(skip_tags) or ('tagged' in skip_tags and tags != UNTAGGED):
            should_run = False
    return should_run


def _flat(tags):
    out = []
    for tag in tags or ():
        out.extend(tag if isinstance(tag, list) else [tag])
    return out


def inherited(task):
    """The tags ``task`` inherits (not its own): its parents' up to the play, as Ansible extends them (a dynamic
    include's own tags are not passed on). Ansible templates them when it selects the play's tasks, before the task
    runs."""
    try:
        value = task._get_parent_attribute('tags', omit=True)  # pylint: disable=protected-access
    except (AttributeError, KeyError):
        value = None
    return _flat(value) if isinstance(value, list) else []


def selected(task, tag, task_vars):
    """Whether a task tagged ``tag`` in the place of ``task`` would run: ``tag`` and what ``task`` inherits, against the
    run's tags (``ansible_run_tags``, ``ansible_skip_tags``)."""
    task_vars = task_vars or {}
    return evaluate([tag] + inherited(task), task_vars.get('ansible_run_tags') or ['all'],
                    task_vars.get('ansible_skip_tags') or [])
