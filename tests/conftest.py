# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one place that sets the tests' import paths.

``ansible_collections.baremetal.k3s``: ansible-test places the collection under
``ansible_collections/baremetal/k3s`` itself; plain ``pytest`` from a clone does not, so a
symlink farm in a temp dir stands in (tests/collection_farm.py). The same farm is the
``collections_path`` fixture: an ANSIBLE_COLLECTIONS_PATH for tests that run Ansible.

The tests' own helpers, imported by their module name from any test file:
``installer`` and ``scheduler_differential`` (tests/integration), ``goyaml_cases``
(tests/goyaml), ``_variants`` (tests/unit/plugins/module_utils), and the Molecule
scenarios' ``bk3s_checks``, ``fingerprint`` and ``rollout_probe`` (extensions/molecule/shared,
which the scenarios' own conftest, extensions/molecule/conftest.py, puts on the path for testinfra).
"""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

_TESTS = os.path.dirname(os.path.abspath(__file__))
HELPER_DIRS = [
    os.path.join(_TESTS, 'integration'),
    os.path.join(_TESTS, 'goyaml'),
    os.path.join(_TESTS, 'unit', 'plugins', 'module_utils'),
    os.path.join(os.path.dirname(_TESTS), 'extensions', 'molecule', 'shared'),
]
for _path in reversed(HELPER_DIRS):
    if _path not in sys.path:
        sys.path.insert(0, _path)

_SPEC = importlib.util.spec_from_file_location(
    'bk3s_collection_farm', os.path.join(_TESTS, 'collection_farm.py'))
collection_farm = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(collection_farm)
collection_farm.make_importable()


@pytest.fixture(name='collections_path')
def fixture_collections_path():
    """ANSIBLE_COLLECTIONS_PATH that resolves baremetal.k3s to this checkout."""
    return collection_farm.farm()
