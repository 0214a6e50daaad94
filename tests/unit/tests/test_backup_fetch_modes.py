# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""k3s_backup's fetch.yml (backup with k3s_backup_fetch=true), run by ansible-playbook on localhost under the usual
umask 022: the archive and its checksum, which hold the server token, are 0600 on the controller in 0700 directories,
as on the node; a fetch directory the operator made keeps its own mode, this host's directory in it is 0700."""

from __future__ import annotations

import hashlib
import os
import stat

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Fetch as the backup does
      ansible.builtin.include_role:
        name: baremetal.k3s.k3s_backup
        tasks_from: fetch
"""
ARCHIVE = b'a tar.gz that holds the server token'


def _node(tmp_path):
    node = tmp_path / 'node'
    node.mkdir()
    archive = node / 'k3s-backup-localhost-20260125T031500Z.tar.gz'
    archive.write_bytes(ARCHIVE)
    digest = hashlib.sha256(ARCHIVE).hexdigest()
    (node / (archive.name + '.sha256')).write_text('%s  %s\n' % (digest, archive.name))
    return {'archive': str(archive), 'sha256_file': str(archive) + '.sha256', 'sha256': digest}


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def _run(playbook, result, fetch_dir):
    old = os.umask(0o022)
    try:
        return playbook(PLAYBOOK, {'k3s_backup_result': result, 'k3s_backup_fetch_dir': str(fetch_dir)})
    finally:
        os.umask(old)


def test_fetched_archive_and_checksum_are_0600_in_0700_directories(tmp_path, playbook):
    result = _node(tmp_path)
    fetch_dir = tmp_path / 'controller' / 'k3s-backups'
    rc, dummy, err = _run(playbook, result, fetch_dir)
    assert rc == 0, err
    host = fetch_dir / 'localhost'
    assert _mode(fetch_dir) == 0o700 and _mode(host) == 0o700
    assert sorted(os.listdir(host)) == sorted(os.path.basename(result[k]) for k in ('archive', 'sha256_file'))
    for name in os.listdir(host):
        assert _mode(host / name) == 0o600, name
    assert (host / os.path.basename(result['archive'])).read_bytes() == ARCHIVE


def test_an_operators_fetch_directory_keeps_its_mode_and_the_hosts_directory_is_0700(tmp_path, playbook):
    result = _node(tmp_path)
    fetch_dir = tmp_path / 'srv-backups'
    fetch_dir.mkdir(mode=0o750)
    os.chmod(fetch_dir, 0o750)
    rc, dummy, err = _run(playbook, result, fetch_dir)
    assert rc == 0, err
    assert _mode(fetch_dir) == 0o750 and _mode(fetch_dir / 'localhost') == 0o700
    assert {_mode(fetch_dir / 'localhost' / n) for n in os.listdir(fetch_dir / 'localhost')} == {0o600}
