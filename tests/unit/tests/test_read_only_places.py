# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read-only places found before anything changes: k3s_node's reset_check (the first play of baremetal.k3s.reset) and
upgrade_fetch (the upgrade's fleet-wide check, and each node's own before its cordon), run by ansible-playbook on
localhost in a private mount namespace (unshare), with real bind mounts and a real read-only bind mount in a temp dir:
a bind-mounted binary, a token file on a read-only file system, a disk mounted inside the data directory are each
named with why, and nothing is changed; the pods' mounts (k3s_killall's to take down) do not count; with
k3s_reset_keep_binary the binary is not asked about."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which('unshare') or subprocess.run(
    ['unshare', '--mount', 'true'], capture_output=True, check=False).returncode != 0,
    reason='needs root and mount namespaces (unshare --mount)')

RESET_CHECK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Check as the reset's first play does
      ansible.builtin.include_role:
        name: baremetal.k3s.k3s_node
        tasks_from: reset_check
      vars:
        k3s_node_name: agent-1
        k3s_node_service: bk3s-test-agent
        k3s_node_init: systemd
        k3s_node_installed: false
        k3s_node_command: agent
        k3s_node_config_name: 40-bk3s-test.yaml
        k3s_node_api_host: ""
        k3s_node_api_kubectl: []
        k3s_node_drain: false
        k3s_node_drain_timeout: 1
    - name: Show it
      ansible.builtin.debug:
        var: _k3s_node_reset_refused
"""
UPGRADE_FETCH = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Fetch and check as the upgrade does
      ansible.builtin.include_role:
        name: baremetal.k3s.k3s_node
        tasks_from: upgrade_fetch
      vars:
        k3s_node_binary_url: ""
        k3s_node_checksums_url: ""
        k3s_node_vars_prefix: k3s_upgrade
        k3s_node_images_list: [{src: /ctrl/k3s-airgap-images.tar.zst, sha256: "%s"}]
        _k3s_node_upgrade_max_version: ""
""" % ('0' * 64)
BINARY = b'\x7fELF k3s'


@pytest.fixture(name='node')
def fixture_node(tmp_path):
    for d in ('bin', 'systemd', 'ro', 'data/agent/containerd/x', 'data/storage', 'disk', 'pods', 'tmp'):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / 'bin' / 'k3s').write_bytes(BINARY)
    (tmp_path / 'bin' / '.k3s.baremetal-k3s.sha256').write_text('%s  k3s\n' % hashlib.sha256(BINARY).hexdigest())
    (tmp_path / 'other-k3s').write_bytes(BINARY)
    (tmp_path / 'ro' / 'cluster-token').write_text('K10%s::server:secret\n' % ('ab' * 32))
    os.chmod(tmp_path / 'ro' / 'cluster-token', 0o600)
    return tmp_path


def _mounts(node, *commands):
    """``prefix`` for the playbook fixture: a private mount namespace with ``commands`` run first."""
    script = ' && '.join(list(commands) + ['exec "$@"'])
    return ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', script, 'sh']


def _vars(node, **extra):
    base = {'k3s_node_bin_dir': str(node / 'bin'), 'k3s_node_systemd_dir': str(node / 'systemd'),
            'k3s_node_token_file': str(node / 'ro' / 'cluster-token'), 'k3s_node_data_dir': str(node / 'data'),
            'k3s_node_reset_data': False, '_k3s_node_tmp_dir': str(node / 'tmp')}
    base.update(extra)
    return base


def _tree(node):
    return sorted(os.path.relpath(os.path.join(d, n), node) for d, dirs, files in os.walk(node) for n in dirs + files
                  if not n.startswith('play.yml'))


def test_reset_names_every_path_it_cannot_remove_and_changes_nothing(node, playbook):
    before = _tree(node)
    prefix = _mounts(node, 'mount --bind %s %s' % (node / 'other-k3s', node / 'bin' / 'k3s'),
                     'mount --bind %s %s' % (node / 'ro', node / 'ro'), 'mount -o remount,ro,bind %s' % (node / 'ro'),
                     'mount --bind %s %s' % (node / 'disk', node / 'data' / 'storage'),
                     'mount --bind %s %s' % (node / 'pods', node / 'data' / 'agent' / 'containerd' / 'x'))
    rc, results, err = playbook(RESET_CHECK, _vars(node, k3s_node_reset_data=True), prefix=prefix)
    assert rc == 0, err
    refused = results['Show it']['_k3s_node_reset_refused']
    assert '%s/bin/k3s is a mount point' % node in refused
    assert '%s/ro/cluster-token is on a read-only file system (mounted at %s/ro)' % (node, node) in refused
    assert '%s/data has %s/data/storage mounted inside it' % (node, node) in refused
    assert 'containerd/x' not in refused  # a pod's mount: k3s_killall takes it down before anything is removed
    assert 'Leave the binary in place with -e k3s_reset_keep_binary=true' in refused
    assert refused.endswith('nothing was changed')
    assert _tree(node) == before


def test_reset_with_keep_binary_does_not_ask_about_the_binary(node, playbook):
    prefix = _mounts(node, 'mount --bind %s %s' % (node / 'other-k3s', node / 'bin' / 'k3s'))
    rc, results, err = playbook(RESET_CHECK, _vars(node, k3s_node_reset_keep_binary=True), prefix=prefix)
    assert rc == 0, err
    assert results['Show it']['_k3s_node_reset_refused'] == ''


def test_reset_of_a_node_where_everything_can_go_is_not_refused(node, playbook):
    rc, results, err = playbook(RESET_CHECK, _vars(node, k3s_node_reset_data=True), prefix=_mounts(node, 'true'))
    assert rc == 0, err
    assert results['Show it']['_k3s_node_reset_refused'] == ''


def test_upgrade_refuses_a_bind_mounted_binary_before_it_fetches_anything(node, playbook):
    before = _tree(node)
    prefix = _mounts(node, 'mount --bind %s %s' % (node / 'other-k3s', node / 'bin' / 'k3s'))
    rc, results, err = playbook(UPGRADE_FETCH, _vars(node, _k3s_node_upgrade_sha256='1' * 64), prefix=prefix)
    assert rc != 0
    msg = results['Refuse them, naming each path and why (nothing was changed)']['msg']
    assert msg.startswith('%s/bin/k3s is a mount point (a bind mount or a file system of its own): a rename over it '
                          'fails with EBUSY, so it cannot be replaced.' % node), msg
    assert 'Make a scratch directory for the new binary beside the binary (one filesystem; /tmp may be noexec)' \
        not in results
    assert _tree(node) == before


def test_upgrade_refuses_a_read_only_images_directory(node, playbook):
    prefix = _mounts(node, 'mount --bind %s %s' % (node / 'data', node / 'data'),
                     'mount -o remount,ro,bind %s' % (node / 'data'))
    rc, results, err = playbook(UPGRADE_FETCH, _vars(node, _k3s_node_upgrade_sha256='1' * 64), prefix=prefix)
    assert rc != 0
    msg = results['Refuse them, naming each path and why (nothing was changed)']['msg']
    assert msg.startswith('%s/data/agent/images/k3s-airgap-images.tar.zst is on a read-only file system (mounted at '
                          '%s/data), so it cannot be replaced.' % (node, node)), msg
