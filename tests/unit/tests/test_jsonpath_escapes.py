# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A kubectl jsonpath in the roles and playbooks reaches kubectl as written: a key with a dot in it
(``baremetal.k3s/cordoned-by``, ``node-role.kubernetes.io/...``) is escaped with one backslash.

Ansible (2.17 and 2.19 alike) passes a Jinja string's ``\\\\`` on as two backslashes, so
``annotations.baremetal\\\\.k3s/cordoned-by`` asked kubectl for a key that no Node has: the
upgrade read its own cordon mark as absent and left a Node cordoned that an interrupted run had
cordoned. Both the molecule stories and these files are checked.
"""

from __future__ import annotations

import glob
import os
import re

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
DOUBLE = re.compile(r'jsonpath=[^\n]*\\\\\.')


def _files():
    found = []
    for pattern in ('roles/*/tasks/*.yml', 'playbooks/*.yml', 'playbooks/tasks/*.yml', 'extensions/molecule/*/*.yml',
                    'extensions/molecule/*/tasks/*.yml'):
        found += sorted(glob.glob(os.path.join(ROOT, pattern)))
    return found


def test_the_files_are_found():
    assert len(_files()) > 50 and any(f.endswith('k3s_node/tasks/upgrade.yml') for f in _files())


@pytest.mark.parametrize('path', _files(), ids=lambda p: os.path.relpath(p, ROOT))
def test_a_dotted_key_in_a_jsonpath_has_one_backslash(path):
    with open(path, encoding='utf-8') as f:
        bad = [n for n, line in enumerate(f, 1) if DOUBLE.search(line)]
    assert not bad, '%s: lines %s escape a dot with two backslashes; kubectl gets both' % (path, bad)
