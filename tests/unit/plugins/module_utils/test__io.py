# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one safe-write path, against a real AnsibleModule."""

from __future__ import annotations

import os
import stat

import pytest

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import set_module_args


@pytest.fixture
def module():
    with set_module_args({}):
        yield AnsibleModule(argument_spec={}, supports_check_mode=True)


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_new_file_gets_its_mode_and_missing_parents(module, tmp_path):
    path = str(tmp_path / 'etc' / 'rancher' / 'k3s' / 'kube-scheduler' / 'config.yaml')
    result = _io.write_file(module, path, b'a: 1\n', mode=0o600)
    assert result == {'backup_file': None}
    assert open(path, 'rb').read() == b'a: 1\n'
    assert _mode(path) == 0o600
    assert _mode(os.path.dirname(path)) == 0o755


def test_existing_file_keeps_its_mode_and_gets_a_backup(module, tmp_path):
    path = tmp_path / 'k3s.service'
    path.write_bytes(b'old\n')
    os.chmod(path, 0o644)
    result = _io.write_file(module, str(path), b'new\n', mode=0o600, backup=True)
    assert path.read_bytes() == b'new\n'
    assert _mode(path) == 0o644
    assert open(result['backup_file'], 'rb').read() == b'old\n'


def test_backup_dir_keeps_the_copy_elsewhere(module, tmp_path):
    manifests = tmp_path / 'manifests'
    manifests.mkdir()
    path = manifests / 'kube-scheduler.yaml'
    path.write_bytes(b'old\n')
    result = _io.write_file(module, str(path), b'new\n', backup=True, backup_dir=str(tmp_path / 'backups'))
    assert os.path.dirname(result['backup_file']) == str(tmp_path / 'backups')
    assert sorted(os.listdir(manifests)) == ['kube-scheduler.yaml']


def test_refused_content_leaves_the_file_and_no_temp_file(module, tmp_path):
    path = tmp_path / 'config.yaml'
    path.write_bytes(b'good\n')

    def refuse(tmp):
        assert open(tmp, 'rb').read() == b'bad\n'
        raise ValueError('refused')

    with pytest.raises(ValueError):
        _io.write_file(module, str(path), b'bad\n', validate=refuse)
    assert path.read_bytes() == b'good\n'
    assert os.listdir(tmp_path) == ['config.yaml']


def test_remove_with_backup(module, tmp_path):
    path = tmp_path / 'dropin.yaml'
    path.write_bytes(b'x: 1\n')
    result = _io.remove_file(module, str(path), backup=True)
    assert not path.exists()
    assert open(result['backup_file'], 'rb').read() == b'x: 1\n'
    assert _io.remove_file(module, str(path)) == {'backup_file': None}
    assert _io.read_bytes(str(path)) is None
