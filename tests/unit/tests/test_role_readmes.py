# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every role has a README.md, and every variable its README names is an option of that role.

A role's variables are the options of its ``meta/argument_specs.yml`` (any entry point). The README's
words checked are those that start with one of the role's prefixes: ``<role>_`` and each of the
collection's prefixes (_variables.PREFIXES) that one of its options has (``k3s_server`` takes
``k3s_upgrade_*`` and ``k3s_reset_*`` in its upgrade and reset entry points). A word that ends in ``_``
(``k3s_upgrade_*``) names a family: some option must start with it.
"""

from __future__ import annotations

import os
import re

import pytest
import yaml

from ansible_collections.baremetal.k3s.plugins.module_utils import _variables

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..')
ROLES = os.path.join(ROOT, 'roles')


def roles():
    return sorted(r for r in os.listdir(ROLES) if os.path.isdir(os.path.join(ROLES, r)))


def options(role):
    """Every option of the role's entry points."""
    with open(os.path.join(ROLES, role, 'meta', 'argument_specs.yml')) as f:
        specs = yaml.safe_load(f)['argument_specs']
    return {name for spec in specs.values() for name in spec.get('options') or {}}


def prefixes(role, names):
    """The role's own prefix and the collection's prefixes its options use."""
    return sorted({role + '_'} | {p for p in _variables.PREFIXES if any(n.startswith(p) for n in names)})


def unknown(text, names, role_prefixes):
    """Sorted words of ``text`` with one of ``role_prefixes`` that are no option (or, ending in _, start none)."""
    word = re.compile(r'(?<![A-Za-z0-9_])((?:%s)[A-Za-z0-9_]*)' % '|'.join(re.escape(p) for p in role_prefixes))
    out = set()
    for match in word.finditer(text):
        found = match.group(1)
        if found.endswith('_'):
            if not any(n.startswith(found) for n in names):
                out.add(found)
        elif found not in names:
            out.add(found)
    return sorted(out)


@pytest.mark.parametrize('role', roles())
def test_the_role_has_a_readme(role):
    assert os.path.isfile(os.path.join(ROLES, role, 'README.md')), (
        'roles/%s has no README.md: say what it does, its entry points, its main variables and an example' % role)


@pytest.mark.parametrize('role', roles())
def test_the_readme_names_only_the_roles_options(role):
    path = os.path.join(ROLES, role, 'README.md')
    if not os.path.isfile(path):
        pytest.fail('roles/%s has no README.md' % role)
    with open(path) as f:
        text = f.read()
    names = options(role)
    role_prefixes = prefixes(role, names)
    assert re.search(r'(?<![A-Za-z0-9_])(?:%s)' % '|'.join(re.escape(p) for p in role_prefixes), text), (
        'roles/%s/README.md names none of its variables' % role)
    bad = unknown(text, names, role_prefixes)
    assert not bad, 'roles/%s/README.md names variables that are no option of its meta/argument_specs.yml: %s' % (
        role, bad)


def test_the_roles_are_found():
    assert {'k3s_server', 'k3s_agent', 'scheduler_extender'} <= set(roles())


@pytest.mark.parametrize('text, expected', [
    ('`k3s_server_config` and `k3s_server_confg`', ['k3s_server_confg']),
    ('the `k3s_upgrade_*` options, `k3s_reset_data`', []),
    ('`k3s_reset_nothing_` and `k3s_upgrade_`', ['k3s_reset_nothing_']),
    ('<k3s_server_config_name> and xk3s_server_bogus (part of another word)', []),
    ('k3s_agent_serial is no k3s_server option, and another prefix is not checked', []),
    ('k3s_server_Config', ['k3s_server_Config']),
])
def test_unknown_is_found(text, expected):
    names = {'k3s_server_config', 'k3s_server_config_name', 'k3s_reset_data', 'k3s_upgrade_drain'}
    assert unknown(text, names, ['k3s_reset_', 'k3s_server_', 'k3s_upgrade_']) == expected
