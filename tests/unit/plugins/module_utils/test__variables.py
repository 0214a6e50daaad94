# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_variables.KNOWN is what the roles' argument specs, playbooks and roles name under the roles' prefixes."""

from __future__ import annotations

import glob
import os
import re

import yaml

from ansible_collections.baremetal.k3s.plugins.module_utils import _variables

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..')


def collection_names():
    names = set()
    for path in glob.glob(os.path.join(ROOT, 'roles', '*', 'meta', 'argument_specs.yml')):
        with open(path) as f:
            for spec in yaml.safe_load(f)['argument_specs'].values():
                names.update(n for n in spec.get('options') or {} if n.startswith(_variables.PREFIXES))
    word = re.compile(r'(?<![A-Za-z0-9_])((?:%s)[a-z0-9_]*[a-z0-9])(?![A-Za-z0-9_])' % '|'.join(_variables.PREFIXES))
    files = glob.glob(os.path.join(ROOT, 'playbooks', '**', '*.yml'), recursive=True)
    files += [p for p in glob.glob(os.path.join(ROOT, 'roles', '*', '*', '*.yml')) if 'argument_specs' not in p]
    for path in files:
        with open(path) as f:
            names.update(word.findall(f.read()))
    return names


def test_known_is_what_the_collection_names():
    names = collection_names()
    assert len(names) > 100
    missing, extra = sorted(names - _variables.KNOWN), sorted(_variables.KNOWN - names)
    assert not missing and not extra, (
        'plugins/module_utils/_variables.py KNOWN differs from the roles and playbooks: add %s, remove %s' % (missing, extra))
