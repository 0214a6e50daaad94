# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The new binary goes to each node once per upgrade run: the fleet-wide check (k3s_node's upgrade_check.yml, the
playbook's first play) fetches and checks it in a scratch directory beside the binary and keeps that copy; the rolling
part's fetch (upgrade_fetch.yml) takes it and copies nothing; a refused node's copy is removed at once. By
ansible-playbook on localhost, in a temp dir, with a binary that prints a k3s version."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  vars_files: [vars.json]  # play vars, not extra vars: the includes set k3s_node_bin_dir to the scratch directory
  tasks:
    - name: The fleet-wide check
      ansible.builtin.include_role:
        name: baremetal.k3s.k3s_node
        tasks_from: upgrade_check
    - name: Show the check
      ansible.builtin.debug:
        msg: {refused: "{{ _k3s_node_upgrade_refused }}", checked: "{{ _k3s_node_upgrade_checked }}"}
    - name: The rolling part's fetch
      ansible.builtin.include_role:
        name: baremetal.k3s.k3s_node
        tasks_from: upgrade_fetch
      vars:
        _k3s_node_upgrade_max_version: ""
      when: _k3s_node_upgrade_refused | length == 0
    - name: Show the fetch
      ansible.builtin.debug:
        msg: {dir: "{{ _k3s_node_upgrade_dir }}", version: "{{ _k3s_node_upgrade_check.version }}"}
      when: _k3s_node_upgrade_refused | length == 0
"""


def _binary(path, version):
    path.write_text('#!/bin/sh\necho "k3s version %s (0123abcd)"\necho "go version go1.25"\n' % version)
    path.chmod(0o755)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _run(tmp_path, collections_path, new_version):
    (tmp_path / 'bin').mkdir()
    _binary(tmp_path / 'bin' / 'k3s', 'v1.35.4+k3s1')
    (tmp_path / 'controller').mkdir()
    sha = _binary(tmp_path / 'controller' / 'k3s', new_version)
    book = tmp_path / 'play.yml'
    book.write_text(PLAYBOOK)
    node = {'ansible_python_interpreter': sys.executable, 'k3s_node_installed': True, 'k3s_node_service': 'k3s',
            'k3s_node_vars_prefix': 'k3s_upgrade', 'k3s_node_bin_dir': str(tmp_path / 'bin'),
            'k3s_node_data_dir': str(tmp_path / 'data'), 'k3s_node_binary_src': str(tmp_path / 'controller' / 'k3s'),
            'k3s_node_binary_sha256': sha, 'k3s_node_binary_url': '', 'k3s_node_checksums_url': '',
            'k3s_node_images_list': [], 'k3s_node_allow_downgrade': False, 'k3s_node_allow_minor_skip': False,
            'k3s_node_max_version': '',
            # the entry point's required options, which the check and the fetch do not use
            'k3s_node_api_host': 'localhost', 'k3s_node_api_kubectl': ['kubectl'], 'k3s_node_drain': False,
            'k3s_node_drain_timeout': 60, 'k3s_node_etcd_member': False, 'k3s_node_init': 'systemd',
            'k3s_node_name': 'node', 'k3s_node_ready_host': 'localhost', 'k3s_node_ready_kubeconfig': '',
            'k3s_node_ready_kubectl': ['kubectl'], 'k3s_node_ready_timeout': 60}
    (tmp_path / 'vars.json').write_text(json.dumps(node))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path, ANSIBLE_STDOUT_CALLBACK='ansible.posix.json',
               ANSIBLE_LOCALHOST_WARNING='false', ANSIBLE_INVENTORY_UNPARSED_WARNING='false', ANSIBLE_NOCOLOR='1')
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', 'localhost,', '-c',
                           'local', str(book)],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    results = [(t['task']['name'], t['hosts']['localhost']) for p in json.loads(proc.stdout)['plays']
               for t in p['tasks'] if 'localhost' in t['hosts']]
    shown = {n: r['msg'] for n, r in results if n.startswith('Show the') and 'msg' in r}
    copies = [n for n, r in results if n.endswith(': Install the files from the controller')
              for item in r.get('results', []) if not item.get('skipped')]
    return shown, copies, sha


def _scratch(tmp_path):
    return sorted(p.name for p in (tmp_path / 'bin').iterdir() if p.name.startswith('.baremetal-k3s-upgrade.'))


def test_the_rolling_part_installs_from_the_checked_copy(tmp_path, collections_path):
    shown, copies, sha = _run(tmp_path, collections_path, 'v1.36.3+k3s1')
    checked = shown['Show the check']
    assert checked['refused'] == '' and checked['checked']['sha256'] == sha, checked
    assert shown['Show the fetch']['dir']['path'] == checked['checked']['path'], shown
    assert shown['Show the fetch']['version'] == 'v1.36.3+k3s1', shown
    # one copy from the controller, the fleet-wide check's, in one scratch directory
    assert len(copies) == 1, copies
    assert _scratch(tmp_path) == [os.path.basename(checked['checked']['path'])]
    assert (tmp_path / 'bin' / _scratch(tmp_path)[0] / 'k3s').read_bytes() == (tmp_path / 'controller' / 'k3s').read_bytes()


def test_a_refused_node_keeps_no_copy(tmp_path, collections_path):
    shown, copies, _sha = _run(tmp_path, collections_path, 'v1.34.1+k3s1')  # a downgrade
    checked = shown['Show the check']
    assert 'Refuse a downgrade' in checked['refused'] and checked['checked'] == {}, checked
    assert 'Show the fetch' not in shown and len(copies) == 1, (shown, copies)
    assert _scratch(tmp_path) == []
