# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Make ``ansible_collections.baremetal.k3s`` importable from a plain checkout.

ansible-test places the collection under ``ansible_collections/baremetal/k3s`` itself;
plain ``pytest`` from a clone does not, so a symlink farm in a temp dir stands in
(tests/collection_farm.py). The same farm is the ``collections_path`` fixture: an
ANSIBLE_COLLECTIONS_PATH for tests that run Ansible.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

_SPEC = importlib.util.spec_from_file_location(
    'bk3s_collection_farm', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'collection_farm.py'))
collection_farm = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(collection_farm)
collection_farm.make_importable()


@pytest.fixture(name='collections_path')
def fixture_collections_path():
    """ANSIBLE_COLLECTIONS_PATH that resolves baremetal.k3s to this checkout."""
    return collection_farm.farm()
