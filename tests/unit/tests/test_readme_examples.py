# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The inventory examples of README.md and the guides (docs/*.md) work as written, together.

Every ```yaml block of the README or a guide that is an inventory (``all:`` with ``vars``, ``children`` or
``hosts``) is read as YAML; each variable it sets with a role's prefix must be one the collection has
(_variables.KNOWN); and no variable one example sets is shadowed by another example: set there in a
group that wins over this example's (a named group over ``all``, a host over its groups), where a
reader who combines the examples gets the other value, and nothing says so.
"""

from __future__ import annotations

import os
import re

import pytest
import yaml

from ansible_collections.baremetal.k3s.plugins.module_utils import _variables
from ansible_collections.baremetal.k3s.tests import readme_inventory

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..')
# where each inventory example lives: the two quick starts on the front page, the registries in their guide
WHERE = {'README.md': 2, os.path.join('docs', 'registries.md'): 1}
BLOCK = readme_inventory.BLOCK


def inventories(text, name=None):
    """[(line number, parsed inventory)] of a Markdown text's YAML blocks that are inventories.

    With ``name``, the line number is given as ``name:line``.
    """
    out = []
    for match in BLOCK.finditer(text):
        data = yaml.safe_load(match.group(1))
        if isinstance(data, dict) and isinstance(data.get('all'), dict) and \
                set(data['all']) & {'vars', 'children', 'hosts'}:
            line = text.count('\n', 0, match.start()) + 1
            out.append(('%s:%d' % (name, line) if name else line, data))
    return out


def documents():
    """README.md and every guide under docs/, as paths relative to the checkout."""
    return ['README.md'] + sorted(os.path.join('docs', f) for f in os.listdir(os.path.join(ROOT, 'docs'))
                                  if f.endswith('.md'))


def all_inventories():
    """[(file:line, parsed inventory)] over README.md and the guides."""
    out = []
    for name in documents():
        with open(os.path.join(ROOT, name)) as f:
            out.extend(inventories(f.read(), name))
    return out


def settings(inventory):
    """{(variable, level, where)}: level 0 for all, 1 for a group, 2 for a host; where the group or host."""
    out = set()

    def group(name, body, level):
        body = body or {}
        for var in body.get('vars') or {}:
            out.add((var, level, name))
        for host, hostvars in (body.get('hosts') or {}).items():
            for var in hostvars or {}:
                out.add((var, 2, host))
        for child, child_body in (body.get('children') or {}).items():
            group(child, child_body, 1)

    group('all', inventory['all'], 0)
    return out


@pytest.mark.parametrize('name, count', sorted(WHERE.items()))
def test_the_documents_have_the_inventories(name, count):
    with open(os.path.join(ROOT, name)) as f:
        found = inventories(f.read())
    assert len(found) >= count, '%s: %d inventory examples, expected %d' % (name, len(found), count)


def test_inventory_variables_are_the_collections():
    found = all_inventories()
    unknown = [(line, var) for line, inv in found for var, dummy, dummy2 in settings(inv)
               if var.startswith(_variables.PREFIXES) and var not in _variables.KNOWN]
    assert not unknown, 'README/guide examples set variables no role or playbook has (file:line, variable): %s' % unknown


def shadowed(examples):
    """[(variable, line of the shadowed example, line of the example that wins)] across the examples."""
    out = []
    for line_a, inv_a in examples:
        for line_b, inv_b in examples:
            if line_a == line_b:
                continue
            b = settings(inv_b)
            for var, level, where in settings(inv_a):
                if level == 2:
                    continue  # a host's own value: nothing wins over it
                if any(v == var and lvl > level and (level == 0 or w != where) for v, lvl, w in b):
                    out.append((var, line_a, line_b))
    return sorted(set(out))


def test_no_example_shadows_another():
    found = all_inventories()
    assert len(found) >= sum(WHERE.values())
    assert shadowed(found) == [], (
        'README and guides: a variable one example sets is replaced by another example\'s group or host (variable, '
        'file:line of the example that loses it, file:line of the one that wins)')


@pytest.mark.parametrize('other, expected', [
    # the registries example as it was: system-default-registry under all: vars, the quick start's under server: vars
    ({'all': {'vars': {'k3s_server_config': {'system-default-registry': 'r:5000'}}}}, [('k3s_server_config', 2, 1)]),
    ({'all': {'children': {'server': {'vars': {'k3s_server_config': {'system-default-registry': 'r:5000'}}}}}}, []),
])
def test_shadowing_is_found(other, expected):
    server = {'vars': {'k3s_server_config': {'tls-san': ['x']}}, 'hosts': {'s1': {}}}
    quick_start = {'all': {'children': {'server': server}}}
    assert shadowed([(1, quick_start), (2, other)]) == expected


def feature_proofs(text):
    """[(feature, [names in backquotes of its 'proved by' cell])] of the README's feature table."""
    section = text.split('\n## Features\n', 1)[1].split('\n## ', 1)[0]
    rows = [line for line in section.split('\n') if line.startswith('|')][2:]
    return [(row.split('|')[1].strip(), re.findall(r'`([^`]+)`', row.split('|')[2])) for row in rows]


def unproven(rows, scenarios, exists):
    """[(feature, problem)]: a row that names no proof, or a proof that is no scenario and no file."""
    out = []
    for feature, names in rows:
        if not names:
            out.append((feature, 'names no scenario or test'))
        out.extend((feature, name) for name in names if name not in scenarios and not exists(name))
    return out


def test_every_feature_names_an_existing_scenario_or_test():
    with open(os.path.join(ROOT, 'README.md')) as f:
        rows = feature_proofs(f.read())
    scenarios = set(os.listdir(os.path.join(ROOT, 'extensions', 'molecule')))
    assert len(rows) >= 15
    assert unproven(rows, scenarios, lambda name: os.path.exists(os.path.join(ROOT, name))) == []


@pytest.mark.parametrize('row, expected', [
    ('| a | `fleet`, new-user run (`tests/product.sh`) |', []),
    ('| a | `flet` |', [('a', 'flet')]),
    ('| a | by hand |', [('a', 'names no scenario or test')]),
])
def test_unproven_is_found(row, expected):
    text = '\n## Features\n\n| feature | proved by |\n|---|---|\n%s\n\n## Status\n' % row
    assert unproven(feature_proofs(text), {'fleet'}, lambda name: name == 'tests/product.sh') == expected


def test_the_demo_runs_the_air_gapped_quick_start_as_written():
    """tests/demo.sh's bare fleet (the new-user run's site, upgrade, backup, restore) takes its inventory from the
    README's air-gapped quick start: only the connection, the hosts, the binary and what this machine cannot have differ."""
    with open(os.path.join(ROOT, 'README.md')) as f:
        readme = readme_inventory.quick_start(f.read())
    demo = readme_inventory.for_demo(readme, '/srv/k3s', 'f' * 64, {'server': 1, 'agent': 2}, 'demo')['all']
    assert set(demo['children']) == set(readme['all']['children'])
    for group, body in readme['all']['children'].items():
        got = demo['children'][group].get('vars', {})
        for var, value in (body.get('vars') or {}).items():
            if var == 'k3s_server_config':
                value = {k: v for k, v in value.items() if k not in readme_inventory.CONFIG_KEYS_DROPPED}
            assert got[var] == value, (group, var)
    first_agent = next(iter(readme['all']['children']['agent']['hosts'].values()))
    assert demo['children']['agent']['hosts']['bk3s-demo-agent-1'] == {
        k: v for k, v in first_agent.items() if k not in readme_inventory.HOST_VARS_DROPPED}
    assert {k: v for k, v in demo['vars'].items() if k.endswith(('_src', '_sha256'))} == {
        k: ('/srv/k3s' if k.endswith('_src') else 'f' * 64) for k in readme['all']['vars']
        if k.endswith(('_binary_src', '_binary_sha256'))}
