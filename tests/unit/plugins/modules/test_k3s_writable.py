# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""k3s_writable on a faked node: mount points from /proc/self/mountinfo, read-only file systems from statvfs, the
immutable and append-only attributes from the inode flags. What an upgrade would replace or a reset would remove and
cannot be is named, with why, before anything changes; what can be is not."""

from __future__ import annotations

import pytest

from ansible_collections.baremetal.k3s.plugins.modules import k3s_writable

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok

BINARY = '/usr/local/bin/k3s'
DATA = '/var/lib/rancher/k3s'


def _node(node):
    node.write(BINARY, b'\x7fELF', 0o755)
    node.write(DATA + '/server/db/state.db', b'db')
    node.write('/etc/rancher/k3s/cluster-token', 'K10x::server:y\n', 0o600)
    node.mountinfo()
    return node


def bind_mounted_binary(node):
    node.mountinfo(BINARY)


def read_only_usr(node):
    node.mountinfo('/usr')
    node.filesystem('/usr', 100, readonly=True)


def immutable_binary(node):
    node.attributes[BINARY] = 0x10


def immutable_bin_dir(node):
    node.attributes['/usr/local/bin'] = 0x80010  # immutable among other flags (extents)


def append_only_bin_dir(node):
    node.attributes['/usr/local/bin'] = 0x20


def bin_dir_linked_onto_a_read_only_disk(node):
    node.unlink(BINARY)
    node.write('/opt/ro/bin/k3s', b'\x7fELF', 0o755)
    node.symlink('/opt/ro/bin', '/usr/local/bin2')
    node.mountinfo('/opt/ro')
    node.filesystem('/opt/ro', 100, readonly=True)


@pytest.mark.parametrize('setup, replace, reason', [
    (bind_mounted_binary, BINARY, 'is a mount point (a bind mount or a file system of its own): a rename over it fails '
                                  'with EBUSY'),
    (read_only_usr, BINARY, 'is on a read-only file system (mounted at /usr)'),
    (read_only_usr, BINARY + '.previous', 'is on a read-only file system (mounted at /usr)'),  # a file to create
    (immutable_binary, BINARY, 'is immutable (chattr +i)'),
    (immutable_bin_dir, BINARY + '.previous', 'is in /usr/local/bin, which is immutable (chattr +i): nothing in it can '
                                              'be created, renamed or removed'),
    (append_only_bin_dir, BINARY, 'is in /usr/local/bin, which is append-only (chattr +a): nothing in it can be '
                                  'created, renamed or removed'),
    (bin_dir_linked_onto_a_read_only_disk, '/usr/local/bin2/k3s', 'is on a read-only file system (mounted at /opt/ro)'),
], ids=lambda v: v.__name__ if callable(v) else None)
def test_what_cannot_be_replaced_is_named_with_why(node, setup, replace, reason):
    _node(node)
    setup(node)
    r = module_ok(k3s_writable, {'replace': [replace, '/etc/rancher/k3s/config.yaml.d/40-x.yaml']})
    assert r['changed'] is False
    assert r['refused'] == [{'path': replace, 'action': 'replace', 'reason': reason}], r['refused']
    assert r['msg'] == '%s %s, so it cannot be replaced' % (replace, reason)


def test_what_can_be_changed_is_not_named(node):
    _node(node)
    node.mountinfo('/etc/hostname', '/srv/disk')  # bind mounts elsewhere do not count
    r = module_ok(k3s_writable, {'replace': [BINARY, BINARY + '.previous'],
                                 'remove': [BINARY, '/etc/rancher/k3s/cluster-token', DATA, '/etc/rancher/node']})
    assert r['refused'] == [] and r['msg'] == ''


@pytest.mark.parametrize('mounts, data_dir, refused', [
    ([DATA + '/storage'], DATA, [(DATA, 'has %s/storage mounted inside it: removing the directory would empty that file '
                                        'system too, then fail; unmount it first' % DATA)]),
    ([DATA], DATA, [(DATA, 'is a mount point (a bind mount or a file system of its own): its removal fails with EBUSY')]),
    # the pods' mounts: k3s_killall takes them down first
    ([DATA + '/agent/containerd/io.containerd.runtime.v2.task/k8s.io/abc/rootfs', '/var/lib/kubelet/pods/x/volumes/y'],
     DATA, []),
    ([DATA + '/agent/containerd/x'], '', [(DATA, 'has %s/agent/containerd/x mounted inside it: removing the directory '
                                                 'would empty that file system too, then fail; unmount it first' % DATA)]),
], ids=['a disk inside', 'a mount point itself', 'the pods\' mounts', 'without data_dir every mount counts'])
def test_a_directory_to_remove(node, mounts, data_dir, refused):
    _node(node)
    node.mountinfo(*mounts)
    r = module_ok(k3s_writable, {'remove': [DATA, '/var/lib/kubelet'], 'data_dir': data_dir})
    assert [(x['path'], x['reason']) for x in r['refused']] == refused


def test_a_path_to_remove_that_is_not_there_is_nothing_to_do(node):
    _node(node)
    read_only_usr(node)
    assert module_ok(k3s_writable, {'remove': ['/usr/local/bin/k3s-none']})['refused'] == []


def test_every_path_of_a_node_at_once(node):
    _node(node)
    node.mountinfo(BINARY, '/usr')
    node.filesystem('/usr', 100, readonly=True)
    node.attributes['/etc/rancher/k3s/cluster-token'] = 0x10
    r = module_ok(k3s_writable, {'replace': [BINARY], 'remove': [BINARY, '/etc/rancher/k3s/cluster-token']})
    assert [(x['path'], x['action']) for x in r['refused']] == [
        (BINARY, 'replace'), (BINARY, 'remove'), ('/etc/rancher/k3s/cluster-token', 'remove')]
    assert r['msg'].count('; ') == 2


@pytest.mark.parametrize('value', ['usr/local/bin/k3s', '', 'x\0y'])
def test_a_path_that_is_not_absolute_is_refused(node, value):
    _node(node)
    msg = module_fail(k3s_writable, {'remove': [value]})
    assert msg.startswith('remove: ') and 'is not an absolute path' in msg
