# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What reset removes is what the roles placed: k3s_node's install.yml (site) records the binary it puts in place,
reset_binary.yml (reset) removes a binary only with that record and while it still has the recorded bytes. Run by
ansible-playbook on localhost in a temp dir: a binary k3s's installer placed, with the very sha256 the inventory gives
(a node adopted), stays and the message names k3s's own uninstall script; k3s_reset_keep_binary keeps every binary."""

from __future__ import annotations

import hashlib
import os

import pytest

# site's install of the binary; EXTRA_VARS: more of the include's vars, each line indented as they are
INSTALL_TASK = """
    - name: Install as site does
      ansible.builtin.include_role:
        name: baremetal.k3s.k3s_node
        tasks_from: install
      vars:
        k3s_node_binary_url: ""
        k3s_node_images_src: ""
        k3s_node_images_sha256: ""
        k3s_node_images_list: []
        k3s_node_checksums_url: ""
        k3s_node_vars_prefix: k3s_agent
        k3s_node_installed: false
{extra_vars}
    # k3s_node's handler (a restart of k3s) was notified by the install: it is not for this host
    - name: End here, without the handlers
      ansible.builtin.meta: end_host
"""
INSTALL = """
- hosts: localhost
  gather_facts: false
  tasks:""" + INSTALL_TASK.format(extra_vars='')
RESET = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Reset the binary
      ansible.builtin.include_role:
        name: baremetal.k3s.k3s_node
        tasks_from: reset_binary
      vars:
        k3s_node_service: k3s-agent
"""
BINARY = b'\x7fELF k3s v1.36.3+k3s1'
SHA = hashlib.sha256(BINARY).hexdigest()
STAYS = 'Say which binary stays, and why'


@pytest.fixture(name='paths')
def fixture_paths(tmp_path):
    (tmp_path / 'controller').mkdir()
    (tmp_path / 'controller' / 'k3s').write_bytes(BINARY)
    for d in ('bin', 'data', 'tmp'):
        (tmp_path / d).mkdir()
    return {'k3s_node_binary_src': str(tmp_path / 'controller' / 'k3s'), 'k3s_node_binary_sha256': SHA,
            'k3s_node_bin_dir': str(tmp_path / 'bin'), 'k3s_node_data_dir': str(tmp_path / 'data'),
            '_k3s_node_tmp_dir': str(tmp_path / 'tmp')}


def _reset(playbook, paths, **extra):
    rc, results, err = playbook(RESET, dict(paths, **extra))
    assert rc == 0, err
    return results


def test_a_binary_the_roles_placed_goes_with_its_previous_and_the_record(playbook, paths):
    rc, dummy, err = playbook(INSTALL, paths)
    assert rc == 0, err
    bin_dir = paths['k3s_node_bin_dir']
    assert sorted(os.listdir(bin_dir)) == ['.k3s.baremetal-k3s.sha256', 'k3s']
    with open(os.path.join(bin_dir, '.k3s.baremetal-k3s.sha256')) as f:
        assert f.read() == '%s  k3s\n' % SHA
    with open(os.path.join(bin_dir, 'k3s.previous'), 'wb') as f:
        f.write(b'the binary an upgrade replaced')
    results = _reset(playbook, paths)
    assert os.listdir(bin_dir) == [] and results[STAYS].get('skipped') is True
    assert _reset(playbook, paths)['Remove the binary the roles placed (it still has the bytes they recorded)'].get(
        'skipped') is True  # a re-run changes nothing


def test_a_binary_the_installer_placed_stays_even_with_the_inventorys_sha256(playbook, paths):
    """The node adopted: site found the binary it was given in place and copied nothing, so it recorded nothing."""
    bin_dir = paths['k3s_node_bin_dir']
    with open(os.path.join(bin_dir, 'k3s'), 'wb') as f:
        f.write(BINARY)
    rc, dummy, err = playbook(INSTALL, paths)
    assert rc == 0, err
    assert os.listdir(bin_dir) == ['k3s'], 'nothing copied, nothing recorded'
    results = _reset(playbook, paths)
    assert os.listdir(bin_dir) == ['k3s']
    msg = results[STAYS]['msg']
    assert 'the roles did not place it' in msg and bin_dir + '/k3s-agent-uninstall.sh removes it' in msg, msg


def test_a_binary_replaced_since_stays_and_the_stale_record_goes(playbook, paths):
    bin_dir = paths['k3s_node_bin_dir']
    rc, dummy, err = playbook(INSTALL, paths)
    assert rc == 0, err
    with open(os.path.join(bin_dir, 'k3s'), 'wb') as f:
        f.write(b'another k3s, put there by other hands')
    results = _reset(playbook, paths)
    assert os.listdir(bin_dir) == ['k3s'] and 'it was replaced since the roles placed it' in results[STAYS]['msg']


def test_keep_binary_keeps_it_all(playbook, paths):
    bin_dir = paths['k3s_node_bin_dir']
    rc, dummy, err = playbook(INSTALL, paths)
    assert rc == 0, err
    results = _reset(playbook, paths, k3s_node_reset_keep_binary=True)
    assert sorted(os.listdir(bin_dir)) == ['.k3s.baremetal-k3s.sha256', 'k3s']
    assert 'k3s_reset_keep_binary is set' in results[STAYS]['msg']


# the stat tasks that read a binary's sha256 on the node, by name
SHA_READS = ('Read the sha256 of the binary in place before the install (a binary whose bytes this run changes is '
             'recorded)', 'Read the sha256 of the binary in place', 'Read what is in place of each artifact (its sha256, '
             'mode and owner)')


def _sha_reads(results):
    """The reads that ran, in the order they ran."""
    return [name for name, r in results.items() if name in SHA_READS and not r.get('skipped')]


def test_a_run_that_changes_nothing_reads_the_binary_once(playbook, paths):
    """The binary in place as given: one read of its sha256 (with the other artifacts), nothing copied, no record."""
    bin_dir = paths['k3s_node_bin_dir']
    with open(os.path.join(bin_dir, 'k3s'), 'wb') as f:
        f.write(BINARY)
    os.chmod(os.path.join(bin_dir, 'k3s'), 0o755)
    rc, results, err = playbook(INSTALL, paths)
    assert rc == 0, err
    assert _sha_reads(results) == [SHA_READS[2]], _sha_reads(results)
    assert os.listdir(bin_dir) == ['k3s']


@pytest.mark.parametrize('before, recorded', [
    (b'another k3s, put there by other hands', True),  # other bytes: the roles placed the new ones
    (BINARY, False),  # the same bytes with another mode: the mode is set, the bytes are not the roles'
])
def test_the_sha256_read_before_the_install_decides_the_record(playbook, paths, before, recorded):
    bin_dir = paths['k3s_node_bin_dir']
    with open(os.path.join(bin_dir, 'k3s'), 'wb') as f:
        f.write(before)
    os.chmod(os.path.join(bin_dir, 'k3s'), 0o700)
    rc, results, err = playbook(INSTALL, paths)
    assert rc == 0, err
    assert os.stat(os.path.join(bin_dir, 'k3s')).st_mode & 0o777 == 0o755
    assert sorted(os.listdir(bin_dir)) == (['.k3s.baremetal-k3s.sha256', 'k3s'] if recorded else ['k3s'])
    assert _sha_reads(results) == [SHA_READS[2], SHA_READS[1]]  # before the install, then what it placed


READ_THEN_INSTALL = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Read the node once, the binary with it (as site's first play does)
      baremetal.k3s.k3s_info:
        platform: k3s
        service: k3s-agent
        sha256_files: ["{{ k3s_node_bin_dir }}/k3s"]
      register: read
""" + INSTALL_TASK.format(extra_vars='        k3s_node_files_read: "{{ read.sha256_files }}"')


@pytest.mark.parametrize('before, mode, copied, recorded', [
    (BINARY, 0o755, False, False),  # as given: nothing read again, nothing copied
    (BINARY, 0o700, True, False),  # another mode: set; the same bytes are not the roles'
    (b'another k3s, put there by other hands', 0o755, True, True),
    (None, None, True, True),  # none there yet
])
def test_the_read_before_the_run_stands_for_the_binarys_stat(playbook, paths, before, mode, copied, recorded):
    """Site gives the install the read of its first play (k3s_info sha256_files): the binary is not read again before
    the install, and the decisions are those the install's own read makes."""
    bin_dir = paths['k3s_node_bin_dir']
    if before is not None:
        with open(os.path.join(bin_dir, 'k3s'), 'wb') as f:
            f.write(before)
        os.chmod(os.path.join(bin_dir, 'k3s'), mode)
    rc, results, err = playbook(READ_THEN_INSTALL, paths)
    assert rc == 0, err
    assert results[SHA_READS[2]].get('skipped') is True, 'the binary is not read again'
    # nothing to place: install_place.yml is not included at all
    copy = results.get('Install the files from the controller', {'skipped': True})
    assert (copy.get('skipped') is not True) == copied
    assert os.stat(os.path.join(bin_dir, 'k3s')).st_mode & 0o777 == 0o755
    assert sorted(os.listdir(bin_dir)) == (['.k3s.baremetal-k3s.sha256', 'k3s'] if recorded else ['k3s'])
