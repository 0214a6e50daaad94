# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""k3s_node's sweep.yml, run by ansible-playbook on localhost in a temp dir: the scratch directories a killed upgrade
left beside the binary (a whole binary in each) and a killed download left in the temporary directory are removed by
the next run; the binary, other files and directories, and a link of the same name are left alone."""

from __future__ import annotations

import os

import pytest

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Sweep
      ansible.builtin.include_role:
        name: baremetal.k3s.k3s_node
        tasks_from: sweep
"""

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='only root-owned scratch directories are swept')


def test_a_killed_runs_scratch_directories_go_and_nothing_else(tmp_path, playbook):
    bin_dir, tmp_dir, elsewhere = tmp_path / 'bin', tmp_path / 'tmp', tmp_path / 'elsewhere'
    for d in (bin_dir / '.baremetal-k3s-upgrade.k2x9', tmp_dir / 'baremetal-k3s-fetch.q1', elsewhere / 'keep'):
        d.mkdir(parents=True)
    (bin_dir / '.baremetal-k3s-upgrade.k2x9' / 'k3s').write_bytes(b'new binary')
    (tmp_dir / 'baremetal-k3s-fetch.q1' / 'k3s').write_bytes(b'download')
    (bin_dir / 'k3s').write_bytes(b'binary')
    (bin_dir / '.baremetal-k3s-upgrade.file').write_bytes(b'a file, not ours')
    os.symlink(str(elsewhere), str(bin_dir / '.baremetal-k3s-upgrade.link'))
    (tmp_dir / 'other').mkdir()
    rc, results, err = playbook(PLAYBOOK, {'k3s_node_bin_dir': str(bin_dir), '_k3s_node_tmp_dir': str(tmp_dir)})
    assert rc == 0, err
    assert sorted(os.listdir(bin_dir)) == ['.baremetal-k3s-upgrade.file', '.baremetal-k3s-upgrade.link', 'k3s']
    assert os.listdir(tmp_dir) == ['other'] and os.listdir(elsewhere) == ['keep']
    assert results['Remove them']['changed'] is True, list(results)
    rc, results, err = playbook(PLAYBOOK, {'k3s_node_bin_dir': str(bin_dir), '_k3s_node_tmp_dir': str(tmp_dir)})
    assert rc == 0 and results['Remove them'].get('changed') is False, err  # nothing left: a re-run changes nothing


READ_THEN_SWEEP = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Read the node once
      baremetal.k3s.k3s_info:
        platform: k3s
        service: k3s-agent
        scratch_dirs: ["{{ k3s_node_bin_dir }}", "{{ _k3s_node_tmp_dir }}"]
      register: read

    - name: Sweep
      ansible.builtin.include_role:
        name: baremetal.k3s.k3s_node
        tasks_from: sweep
      vars:
        k3s_node_scratch_left: "{{ read.scratch_left }}"
"""


def test_site_sweeps_what_the_one_read_listed_without_searching_again(tmp_path, playbook):
    """Site's install takes the list from the run's one read (k3s_info scratch_left): the same directories go, the same
    are left alone, and no search runs on the node."""
    bin_dir, tmp_dir, elsewhere = tmp_path / 'bin', tmp_path / 'tmp', tmp_path / 'elsewhere'
    for d in (bin_dir / '.baremetal-k3s-upgrade.k2x9', tmp_dir / 'baremetal-k3s-fetch.q1', elsewhere / 'keep',
              tmp_dir / 'baremetal-k3s-fetch.user'):
        d.mkdir(parents=True)
    os.chown(str(tmp_dir / 'baremetal-k3s-fetch.user'), 1000, 1000)
    (bin_dir / '.baremetal-k3s-upgrade.k2x9' / 'k3s').write_bytes(b'new binary')
    (bin_dir / 'k3s').write_bytes(b'binary')
    (bin_dir / '.baremetal-k3s-upgrade.file').write_bytes(b'a file, not ours')
    os.symlink(str(elsewhere), str(bin_dir / '.baremetal-k3s-upgrade.link'))
    extra = {'k3s_node_bin_dir': str(bin_dir), '_k3s_node_tmp_dir': str(tmp_dir)}
    rc, results, err = playbook(READ_THEN_SWEEP, extra)
    assert rc == 0, err
    assert results['Find the scratch directories a killed run left'].get('skipped') is True
    assert sorted(os.listdir(bin_dir)) == ['.baremetal-k3s-upgrade.file', '.baremetal-k3s-upgrade.link', 'k3s']
    assert os.listdir(tmp_dir) == ['baremetal-k3s-fetch.user'] and os.listdir(elsewhere) == ['keep']  # root's only
    assert results['Remove them']['changed'] is True
    rc, results, err = playbook(READ_THEN_SWEEP, extra)
    assert rc == 0 and results['Remove them'].get('changed') is False, err
