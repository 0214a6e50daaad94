# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""README.md's inventory examples work as written, together.

Every ```yaml block of the README that is an inventory (``all:`` with ``vars``, ``children`` or
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

README = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'README.md')
BLOCK = re.compile(r'^```yaml\n(.*?)^```', re.M | re.S)


def inventories(text):
    """[(line number, parsed inventory)] of the README's YAML blocks that are inventories."""
    out = []
    for match in BLOCK.finditer(text):
        data = yaml.safe_load(match.group(1))
        if isinstance(data, dict) and isinstance(data.get('all'), dict) and \
                set(data['all']) & {'vars', 'children', 'hosts'}:
            out.append((text.count('\n', 0, match.start()) + 1, data))
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


def test_the_readme_has_the_inventories():
    with open(README) as f:
        found = inventories(f.read())
    assert len(found) >= 3  # the two quick starts, the registries


def test_inventory_variables_are_the_collections():
    with open(README) as f:
        found = inventories(f.read())
    unknown = [(line, var) for line, inv in found for var, dummy, dummy2 in settings(inv)
               if var.startswith(_variables.PREFIXES) and var not in _variables.KNOWN]
    assert not unknown, 'README examples set variables no role or playbook has: %s' % unknown


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
    with open(README) as f:
        found = inventories(f.read())
    assert shadowed(found) == [], (
        'README: a variable one example sets is replaced by another example\'s group or host (variable, line of the '
        'example that loses it, line of the one that wins)')


@pytest.mark.parametrize('other, expected', [
    # the registries example as it was: system-default-registry under all: vars, the quick start's under server: vars
    ({'all': {'vars': {'k3s_server_config': {'system-default-registry': 'r:5000'}}}}, [('k3s_server_config', 2, 1)]),
    ({'all': {'children': {'server': {'vars': {'k3s_server_config': {'system-default-registry': 'r:5000'}}}}}}, []),
])
def test_shadowing_is_found(other, expected):
    server = {'vars': {'k3s_server_config': {'tls-san': ['x']}}, 'hosts': {'s1': {}}}
    quick_start = {'all': {'children': {'server': server}}}
    assert shadowed([(1, quick_start), (2, other)]) == expected
