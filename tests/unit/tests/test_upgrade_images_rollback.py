# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The images tarballs an upgrade puts in place, taken back on a rollback: k3s_node's install.yml as upgrade.yml
includes it (_k3s_node_install_keep), then baremetal.k3s.rollback with the files it lists (_k3s_node_install_files),
as upgrade.yml's rescue (restore) and its success (discard) run it; by ansible-playbook on localhost, in a temp dir."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Start with no list, as upgrade.yml does (install.yml lists only when it places a tarball)
      ansible.builtin.set_fact:
        _k3s_node_install_files: []
    - name: Put the images tarballs in place as the upgrade does
      ansible.builtin.include_role:
        name: baremetal.k3s.k3s_node
        tasks_from: install
      vars:
        k3s_node_binary_src: ""
        k3s_node_binary_url: ""
        k3s_node_binary_sha256: ""
        k3s_node_images_src: ""
        k3s_node_images_sha256: ""
        k3s_node_checksums_url: ""
        k3s_node_vars_prefix: k3s_upgrade
        k3s_node_installed: true
        _k3s_node_install_keep: true
    - name: Read the images directory with the new tarballs in place
      ansible.builtin.command: ls -1 {{ k3s_node_data_dir }}/agent/images
      register: images_between
      changed_when: false
    - name: Show the files list
      ansible.builtin.debug:
        var: _k3s_node_install_files
    - name: The rollback (restore) or the proven upgrade (discard)
      baremetal.k3s.rollback:
        files: "{{ _k3s_node_install_files }}"
        mode: "{{ rollback_mode }}"
      when: _k3s_node_install_files | length > 0
    # k3s_node's handler (a restart of k3s) was notified by the install: it is not for this host
    - name: End here, without the handlers
      ansible.builtin.meta: end_host
"""

OLD, REPLACING, NEW, OTHER = b'old images\n', b'new images, same name\n', b'images of a new archive\n', b'not in the list\n'


def _sha(data):
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(name='node')
def fixture_node(tmp_path):
    ctrl = tmp_path / 'controller'
    ctrl.mkdir()
    (ctrl / 'images-a.tar').write_bytes(REPLACING)
    (ctrl / 'images-b.tar').write_bytes(NEW)
    images = tmp_path / 'data' / 'agent' / 'images'
    images.mkdir(parents=True)
    (images / 'images-a.tar').write_bytes(OLD)
    (images / 'other.tar').write_bytes(OTHER)
    return tmp_path


def _run(node, collections_path, mode, images_list):
    book = node / 'play.yml'
    book.write_text(PLAYBOOK)
    extra = {'ansible_python_interpreter': sys.executable, 'rollback_mode': mode, 'k3s_node_images_list': images_list,
             'k3s_node_bin_dir': str(node / 'bin'), 'k3s_node_data_dir': str(node / 'data'),
             'k3s_node_images_backup_dir': str(node / 'backups')}
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path, ANSIBLE_STDOUT_CALLBACK='ansible.posix.json',
               ANSIBLE_LOCALHOST_WARNING='false', ANSIBLE_NOCOLOR='1')
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', 'localhost,', '-c',
                           'local', '-e', json.dumps(extra), str(book)],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    out = json.loads(proc.stdout)
    results = {t['task']['name']: t['hosts']['localhost'] for p in out['plays'] for t in p['tasks']
               if 'localhost' in t['hosts']}
    assert proc.returncode == 0, (proc.stderr[-2000:], [r.get('msg') for r in results.values() if r.get('failed')])
    return results['Read the images directory with the new tarballs in place']['stdout_lines'], \
        results['Show the files list']['_k3s_node_install_files']


def _listing(node):
    images = node / 'data' / 'agent' / 'images'
    return {p.name: p.read_bytes() for p in images.iterdir()}


def _list(node):
    return [{'src': str(node / 'controller' / 'images-a.tar'), 'sha256': _sha(REPLACING)},
            {'src': str(node / 'controller' / 'images-b.tar'), 'sha256': _sha(NEW)}]


def test_a_rollback_puts_the_replaced_tarball_back_byte_for_byte_and_removes_the_new_one(node, collections_path):
    between, files = _run(node, collections_path, 'restore', _list(node))
    images = str(node / 'data' / 'agent' / 'images')
    assert between == ['images-a.tar', 'images-b.tar', 'other.tar'], between  # no copy in the images directory
    assert [(f['path'], f['action']) for f in files] == [(images + '/images-a.tar', 'modified'),
                                                         (images + '/images-b.tar', 'created')], files
    assert files[0]['backup_file'].startswith(str(node / 'backups') + '/images-a.tar.') and files[1]['backup_file'] is None
    assert _listing(node) == {'images-a.tar': OLD, 'other.tar': OTHER}, _listing(node)
    assert not os.listdir(node / 'backups'), 'the copy goes once the file is back'


def test_a_proven_upgrade_keeps_the_new_tarballs_and_drops_the_copies(node, collections_path):
    dummy, files = _run(node, collections_path, 'discard', _list(node))
    assert len(files) == 2, files
    assert _listing(node) == {'images-a.tar': REPLACING, 'images-b.tar': NEW, 'other.tar': OTHER}, _listing(node)
    assert not os.listdir(node / 'backups')


def test_a_tarball_in_place_already_is_not_copied_nor_listed(node, collections_path):
    (node / 'data' / 'agent' / 'images' / 'images-a.tar').write_bytes(REPLACING)
    dummy, files = _run(node, collections_path, 'restore', _list(node)[:1])
    assert files == [], files
    assert not (node / 'backups').exists()
