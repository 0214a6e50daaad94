# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""k3s_node's upgrade_sha256.yml (the upgrade's and its fleet-wide check's first step), run by ansible-playbook on
localhost: the new binary's sha256 as given, or from the mirror's checksums file (served by a local http.server);
neither, a file that does not list the binary and a mirror that does not answer are refused, each naming the variables."""

from __future__ import annotations

import functools
import http.server
import json
import os
import subprocess
import sys
import threading

import pytest

SHA = 'ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789'
OTHER = '1' * 64
CHECKSUMS = ('%s  k3s-airgap-images-amd64.tar.zst\n%s *k3s\n%s  k3s-arm64\n' % (OTHER, SHA, OTHER)).encode()
ARM = '2' * 64
MULTI = ('%s  amd64/k3s\n%s  arm64/k3s\n' % (SHA, ARM)).encode()  # one file for every architecture, as a mirror keeps it

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: The step under test
      ansible.builtin.include_role:
        name: baremetal.k3s.k3s_node
        tasks_from: upgrade_sha256
      vars:
        k3s_node_installed: true
        k3s_node_service: k3s
        k3s_node_vars_prefix: k3s_upgrade
        k3s_node_fetch_timeout: 5
    - name: Show it
      ansible.builtin.debug:
        var: _k3s_node_upgrade_sha256
"""


@pytest.fixture(name='mirror', scope='module')
def fixture_mirror(tmp_path_factory):
    root = tmp_path_factory.mktemp('mirror')
    (root / 'sha256sum-amd64.txt').write_bytes(CHECKSUMS)
    (root / 'sha256sum.txt').write_bytes(MULTI)
    (root / 'sha256sum-ambiguous.txt').write_bytes(CHECKSUMS + ('%s  k3s\n' % OTHER).encode())
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield 'http://127.0.0.1:%d' % server.server_address[1]
    server.shutdown()


def _run(tmp_path, collections_path, **extra):
    book = tmp_path / 'play.yml'
    book.write_text(PLAYBOOK)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path, ANSIBLE_STDOUT_CALLBACK='ansible.posix.json',
               ANSIBLE_LOCALHOST_WARNING='false', ANSIBLE_INVENTORY_UNPARSED_WARNING='false', ANSIBLE_NOCOLOR='1')
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', 'localhost,', '-c',
                           'local', '-e', json.dumps(dict(extra, ansible_python_interpreter=sys.executable)), str(book)],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    out = json.loads(proc.stdout)
    results = [(t['task']['name'], t['hosts']['localhost']) for p in out['plays'] for t in p['tasks']
               if 'localhost' in t['hosts']]
    failed = [r.get('msg') for _n, r in results if r.get('failed')]
    shown = [r['_k3s_node_upgrade_sha256'] for n, r in results if n == 'Show it']
    return proc.returncode, failed, shown


def test_a_given_sha256_is_taken_in_lower_case(tmp_path, collections_path):
    rc, failed, shown = _run(tmp_path, collections_path, k3s_node_binary_sha256=SHA, k3s_node_binary_url='',
                             k3s_node_checksums_url='')
    assert rc == 0 and not failed and shown == [SHA.lower()], (rc, failed, shown)


def test_without_a_sha256_the_mirrors_checksums_file_gives_it(tmp_path, collections_path, mirror):
    rc, failed, shown = _run(tmp_path, collections_path, k3s_node_binary_sha256='',
                             k3s_node_binary_url=mirror + '/v1.36.3%2Bk3s1/k3s?x=1',
                             k3s_node_checksums_url=mirror + '/sha256sum-amd64.txt')
    assert rc == 0 and not failed and shown == [SHA.lower()], (rc, failed, shown)


def test_neither_a_sha256_nor_a_checksums_file_is_refused(tmp_path, collections_path, mirror):
    for url in ('', mirror + '/k3s'):
        rc, failed, shown = _run(tmp_path, collections_path, k3s_node_binary_sha256='', k3s_node_binary_url=url,
                                 k3s_node_checksums_url='')
        assert rc != 0 and not shown and len(failed) == 1, (rc, failed, shown)
        assert 'k3s_upgrade_binary_sha256: give' in failed[0] and 'k3s_upgrade_checksums_url' in failed[0], failed
        assert 'Nothing was changed' in failed[0], failed


def test_a_checksums_file_without_the_binary_is_refused(tmp_path, collections_path, mirror):
    rc, failed, shown = _run(tmp_path, collections_path, k3s_node_binary_sha256='',
                             k3s_node_binary_url=mirror + '/k3s-armhf', k3s_node_checksums_url=mirror + '/sha256sum-amd64.txt')
    assert rc != 0 and not shown and len(failed) == 1, (rc, failed, shown)
    assert 'has no sha256 for k3s-armhf' in failed[0] and 'Nothing was changed' in failed[0], failed


# family: checksums files as sha256sum writes them
@pytest.mark.parametrize('arch, want', [('arm64', ARM), ('amd64', SHA.lower())])
def test_checksums_the_file_the_url_names_not_the_first_with_its_last_name(tmp_path, collections_path, mirror, arch, want):
    rc, failed, shown = _run(tmp_path, collections_path, k3s_node_binary_sha256='',
                             k3s_node_binary_url='%s/v1.36.3/%s/k3s' % (mirror, arch),
                             k3s_node_checksums_url=mirror + '/sha256sum.txt')
    assert rc == 0 and not failed and shown == [want], (rc, failed, shown)


def test_checksums_a_file_with_two_sha256_for_the_binary_is_refused(tmp_path, collections_path, mirror):
    rc, failed, shown = _run(tmp_path, collections_path, k3s_node_binary_sha256='',
                             k3s_node_binary_url=mirror + '/k3s', k3s_node_checksums_url=mirror + '/sha256sum-ambiguous.txt')
    assert rc != 0 and not shown and len(failed) == 1, (rc, failed, shown)
    assert 'is ambiguous' in failed[0] and SHA.lower() in failed[0] and OTHER in failed[0], failed
    assert 'Nothing was changed' in failed[0], failed


def test_a_mirror_that_does_not_answer_is_refused_clearly(tmp_path, collections_path, mirror):
    rc, failed, shown = _run(tmp_path, collections_path, k3s_node_binary_sha256='',
                             k3s_node_binary_url=mirror + '/k3s', k3s_node_checksums_url=mirror + '/missing.txt')
    assert rc != 0 and not shown, (rc, failed, shown)
    assert any('could not be read' in m and 'missing.txt' in m for m in failed), failed
