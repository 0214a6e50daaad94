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


@pytest.fixture(name='playbook')
def fixture_playbook(tmp_path, collections_path):
    """Run a playbook's text on localhost (``-c local``, this Python) with extra vars; returns ``(rc, results, stderr)``,
    ``results`` the last result of each task by its name without its role (``ansible.posix.json``), for role-level
    tests of a task file. ``prefix``: a command that runs ansible-playbook (its argv appended), e.g. in a mount namespace."""
    def run(text, extra=None, args=(), prefix=()):
        import json  # pylint: disable=import-outside-toplevel
        import subprocess  # pylint: disable=import-outside-toplevel
        book = tmp_path / 'play.yml'
        book.write_text(text)
        extra = dict({'ansible_python_interpreter': sys.executable}, **(extra or {}))
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path, ANSIBLE_STDOUT_CALLBACK='ansible.posix.json',
                   ANSIBLE_LOCALHOST_WARNING='false', ANSIBLE_INVENTORY_UNPARSED_WARNING='false', ANSIBLE_NOCOLOR='1')
        argv = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', 'localhost,', '-c', 'local',
                '-e', json.dumps(extra)] + list(args) + [str(book)]
        proc = subprocess.run(list(prefix) + argv, env=env, capture_output=True, text=True, timeout=300, check=False)
        try:
            out = json.loads(proc.stdout)
        except ValueError:
            return proc.returncode, {}, proc.stdout[-2000:] + proc.stderr[-2000:]
        # a role's task is named "<role> : <name>": keyed by <name>
        results = {t['task']['name'].split(' : ', 1)[-1]: t['hosts']['localhost'] for p in out['plays']
                   for t in p['tasks'] if 'localhost' in t['hosts']}
        failed = ['%s: %s %s' % (name, r.get('msg'), [i.get('msg') for i in r.get('results', []) if i.get('failed')])
                  for name, r in results.items() if r.get('failed')]
        return proc.returncode, results, proc.stderr + '\n'.join(failed)
    return run


@pytest.fixture(name='collection_finder')
def fixture_collection_finder():
    """Ansible's collection loader installed for one test, so that a Templar finds the collection's plugins by FQCN
    (``baremetal.k3s.<filter>``) as ansible-playbook does; removed after it unless it was there before. The loader
    reads the collection's meta/runtime.yml when it imports the collection's package, so the test sees the package
    imported afresh, and the modules imported before it again after it."""
    from ansible.utils.collection_loader import AnsibleCollectionConfig  # pylint: disable=import-outside-toplevel
    from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder  # pylint: disable=import-outside-toplevel
    if AnsibleCollectionConfig.collection_finder is not None:
        yield
        return
    saved = {name: module for name, module in sys.modules.items()
             if name == 'ansible_collections' or name.startswith('ansible_collections.')}
    for name in saved:
        del sys.modules[name]
    _AnsibleCollectionFinder(paths=[collection_farm.farm()], scan_sys_paths=False)._install()
    try:
        yield
    finally:
        _AnsibleCollectionFinder._remove()  # pylint: disable=protected-access
        for name in [n for n in sys.modules if n == 'ansible_collections' or n.startswith('ansible_collections.')]:
            del sys.modules[name]
        sys.modules.update(saved)
