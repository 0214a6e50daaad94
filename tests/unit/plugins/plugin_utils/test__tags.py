# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""plugin_utils/_tags.py: Ansible's own rule for selecting a task by its tags, and the tags a task inherits."""

from __future__ import annotations

import itertools

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play import Play
from ansible.vars.manager import VariableManager

from ansible_collections.baremetal.k3s.plugins.plugin_utils import _tags

TAGS = [[], ['preflight'], ['always'], ['never'], ['never', 'preflight'], ['preflight', 'k3s'], ['always', 'k3s']]
ONLY = [['all'], ['preflight'], ['configure'], ['tagged'], ['untagged'], ['always'], ['k3s'], ['never'], ['never', 'preflight']]
SKIP = [[], ['preflight'], ['all'], ['tagged'], ['untagged'], ['always'], ['k3s'], ['all', 'always'], ['never']]

# Ansible's collection loader, so that a play's task resolves its action (ansible.builtin.debug) as ansible-playbook's
pytestmark = pytest.mark.usefixtures('collection_finder')


def task_of(play_tags=(), block_tags=(), task_tags=()):
    """A task in a block in a play, each with its tags, as ansible-playbook loads them."""
    loader = DataLoader()
    play = Play.load({'hosts': 'localhost', 'gather_facts': False, 'tags': list(play_tags),
                      'tasks': [{'block': [{'name': 't', 'ansible.builtin.debug': None, 'tags': list(task_tags)}],
                                 'tags': list(block_tags)}]},
                     variable_manager=VariableManager(loader=loader), loader=loader)
    return play.tasks[0].block[0]


@pytest.mark.parametrize('tags', TAGS)
def test_evaluate_is_ansibles_rule(tags):
    """The same answer as Ansible's Taggable.evaluate_tags for every run's --tags and --skip-tags."""
    task = task_of(task_tags=tags)
    for only, skip in itertools.product(ONLY, SKIP):
        expected = task.evaluate_tags(set(only), set(skip), {})
        assert _tags.evaluate(tags, only, skip) is expected, (tags, only, skip)


def test_inherited_are_the_parents_tags_not_the_tasks_own():
    task = task_of(play_tags=['p'], block_tags=['b'], task_tags=['always'])
    assert sorted(_tags.inherited(task)) == ['b', 'p']
    assert _tags.inherited(task_of(task_tags=['always'])) == []


@pytest.mark.parametrize('run, skip, selected', [
    (['all'], [], True),
    (['preflight'], [], True),
    (['configure'], [], False),
    (['all'], ['preflight'], False),
    (['b'], [], True),  # the block's tag selects the block's tasks: a task tagged preflight there too
    (['b'], ['preflight'], False),
    (['tagged'], [], True),
    (['untagged'], [], False),
])
def test_selected_is_a_task_of_the_tag_in_the_tasks_place(run, skip, selected):
    task = task_of(block_tags=['b'], task_tags=['always'])
    assert _tags.selected(task, 'preflight', {'ansible_run_tags': run, 'ansible_skip_tags': skip}) is selected
    # without the run's tags in the variables: Ansible's defaults (all, nothing skipped)
    assert _tags.selected(task, 'preflight', {}) is True
