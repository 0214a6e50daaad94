# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The modules run on the oldest Python that meta/runtime.yml's requires_ansible promises.

ansible-core 2.17, the oldest this collection supports, runs modules on Python 3.7 targets.
Every module and module_utils must compile there, and every module_utils that imports no
Ansible must import there (its top level runs), with that interpreter and nothing else.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# requires_ansible's floor -> the oldest target Python of that ansible-core (its porting guide)
TARGET_PYTHON = {'2.17': '3.7', '2.18': '3.8', '2.19': '3.8', '2.20': '3.9'}


def _floor():
    with open(os.path.join(ROOT, 'meta', 'runtime.yml')) as f:
        m = re.search(r'''requires_ansible:\s*["']>=\s*(\d+\.\d+)''', f.read())
    assert m, 'meta/runtime.yml has no requires_ansible ">=X.Y"'
    return m.group(1)


def _interpreter(version):
    names = [os.path.expanduser('~/.pyenv/versions/%s*/bin/python%s' % (version, version)),
             '/usr/bin/python%s' % version, '/usr/local/bin/python%s' % version]
    for pattern in names:
        found = sorted(glob.glob(pattern))
        if found:
            return found[-1]
    if os.environ.get('CI') or os.environ.get('BAREMETAL_K3S_REQUIRE_DOCKER'):
        pytest.fail('Python %s is not on this machine; the target-Python check cannot run' % version)
    pytest.skip('Python %s not found' % version)
    return None


def _plugin_files():
    return sorted(glob.glob(os.path.join(ROOT, 'plugins', 'modules', '*.py'))
                  + glob.glob(os.path.join(ROOT, 'plugins', 'module_utils', '*.py')))


def test_floor_is_known():
    assert _floor() in TARGET_PYTHON


def test_modules_compile_on_the_oldest_target_python(tmp_path):
    python = _interpreter(TARGET_PYTHON[_floor()])
    failures = []
    for path in _plugin_files():
        out = subprocess.run([python, '-c', 'import sys, py_compile; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)',
                              path, str(tmp_path / 'x.pyc')], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        if out.returncode:
            failures.append('%s: %s' % (os.path.relpath(path, ROOT), out.stdout.decode()[-400:]))
    assert not failures, '\n'.join(failures)


def test_pure_module_utils_import_on_the_oldest_target_python(tmp_path):
    python = _interpreter(TARGET_PYTHON[_floor()])
    farm = tmp_path / 'ansible_collections' / 'baremetal'
    farm.mkdir(parents=True)
    os.symlink(ROOT, str(farm / 'k3s'))
    pure = []
    for path in glob.glob(os.path.join(ROOT, 'plugins', 'module_utils', '*.py')):
        with open(path) as f:
            text = f.read()
        if not re.search(r'^\s*(from|import) ansible\b(?!_collections)', text, re.M):
            pure.append('ansible_collections.baremetal.k3s.plugins.module_utils.' + os.path.basename(path)[:-3])
    assert len(pure) >= 8, pure
    code = 'import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n'
    out = subprocess.run([python, '-c', code] + sorted(pure), cwd=str(tmp_path), env={'PYTHONPATH': str(tmp_path), 'PATH': '/usr/bin:/bin'},
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    assert out.returncode == 0, out.stdout.decode()
