# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of k3s_binary: its real main() on fake_node, with fake binaries (shell scripts that print a version) run for real."""

from __future__ import annotations

import hashlib
import os

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _binary
from ansible_collections.baremetal.k3s.plugins.modules import k3s_binary

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok

K3S = '/usr/local/bin/k3s'
PREV = K3S + '.previous'
SRC = '/var/tmp/k3s-new'
OLD, NEW = 'v1.30.6+k3s1', 'v1.31.4+k3s1'


def fake_binary(version, prog='k3s', note=''):
    """A binary that prints ``<prog> version <version> (...)`` as k3s does; ``note`` makes two of one version differ."""
    return ('#!/bin/sh\n# %s\nif [ "$1" = --version ]; then echo "%s version %s (a4f8e7a1)"; echo "go version go1.22.9"; '
            'exit 0; fi\nexit 1\n' % (note, prog, version)).encode()


def sha(data):
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(name='bins')
def fixture_bins(node):
    """The node's programs are run for real: ``<path> --version`` runs the script in the tree."""
    node.run_programs()
    node.makedirs('/var/tmp')
    return node


def install(node, old=OLD, new=NEW, prev=None):
    node.write(K3S, fake_binary(old), 0o755)
    node.write(SRC, fake_binary(new), 0o755)
    if prev is not None:
        node.write(PREV, fake_binary(prev), 0o755)
    return node.read(K3S), node.read(SRC)


def args(node, **kw):
    out = {'path': K3S, 'src': SRC, 'sha256': sha(node.read(SRC) or b'')}
    out.update(kw)
    return out


def test_upgrade_keeps_the_old_binary_and_a_rerun_changes_nothing(bins):
    old, new = install(bins)
    r = module_ok(k3s_binary, args(bins))
    assert r['changed'] is True and r['version'] == NEW and r['previous_version'] == OLD
    assert r['path'] == K3S and r['previous_path'] == PREV and r['sha256'] == sha(new)
    assert r['files'] == [{'path': PREV, 'action': 'created', 'backup_file': None},
                          {'path': K3S, 'action': 'modified', 'backup_file': None}]
    assert bins.read(K3S) == new and bins.read(PREV) == old and bins.read(SRC) == new
    assert bins.mode(K3S) == 0o755 and os.stat(bins.p(K3S)).st_uid == os.geteuid()
    assert sorted(bins.listdir('/usr/local/bin')) == ['k3s', 'k3s.previous']  # no temp file left
    again = module_ok(k3s_binary, args(bins))
    assert again['changed'] is False and again['files'] == [] and again['version'] == NEW
    assert again['previous_version'] is None and bins.read(PREV) == old


def test_check_mode_and_diff(bins):
    install(bins)
    before = bins.tree()
    r = module_ok(k3s_binary, args(bins), check_mode=True, diff=True)
    assert r['changed'] is True and bins.tree() == before
    assert r['diff'] == [{'before_header': K3S, 'after_header': K3S, 'before': 'version: %s\n' % OLD,
                          'after': 'version: %s\nsha256: %s\n' % (NEW, sha(bins.read(SRC)))}]


def test_an_older_previous_is_replaced(bins):
    old, new = install(bins, prev='v1.29.9+k3s1')
    r = module_ok(k3s_binary, args(bins))
    assert r['files'][0] == {'path': PREV, 'action': 'modified', 'backup_file': None}
    assert bins.read(PREV) == old and bins.read(K3S) == new


def test_rollback_puts_previous_back_and_a_rerun_changes_nothing(bins):
    old, new = install(bins)
    module_ok(k3s_binary, args(bins))
    r = module_ok(k3s_binary, {'path': K3S, 'state': 'previous'}, diff=True)
    assert r['changed'] is True and r['version'] == OLD and r['previous_version'] == NEW and r['sha256'] == sha(old)
    assert r['files'] == [{'path': K3S, 'action': 'modified', 'backup_file': None}]
    assert r['diff'][0]['before'] == 'version: %s\n' % NEW
    assert bins.read(K3S) == old and bins.read(PREV) == old and bins.mode(K3S) == 0o755
    again = module_ok(k3s_binary, {'path': K3S, 'state': 'previous'})
    assert again['changed'] is False and again['files'] == []
    assert new  # the new binary is gone from path; the caller's src still has it


def test_rollback_without_previous_is_refused(bins):
    install(bins)
    before = bins.tree()
    assert module_fail(k3s_binary, {'path': K3S, 'state': 'previous'}) == (
        'there is no %s to put back at %s: k3s_binary keeps the old binary there only when it replaced one; nothing was '
        'changed.' % (PREV, K3S))
    assert bins.tree() == before


def test_first_install_has_no_previous(bins):
    bins.write(SRC, fake_binary(NEW), 0o755)
    r = module_ok(k3s_binary, args(bins))
    assert r['previous_version'] is None and r['files'] == [{'path': K3S, 'action': 'created', 'backup_file': None}]
    assert bins.read(K3S) == bins.read(SRC) and not bins.exists(PREV) and bins.mode(K3S) == 0o755


@pytest.mark.parametrize('old, new, opts, refusal', [
    ('v1.31.4+k3s1', 'v1.30.6+k3s1', {}, 'src is v1.30.6+k3s1, older than the installed v1.31.4+k3s1: a downgrade is '
     'refused'),
    ('v1.31.4+k3s2', 'v1.31.4+k3s1', {}, 'src is v1.31.4+k3s1, older than the installed v1.31.4+k3s2'),
    ('v1.31.0+k3s1', 'v1.31.0-rc2+k3s1', {}, 'src is v1.31.0-rc2+k3s1, older than the installed v1.31.0+k3s1'),
    ('v1.29.9+k3s1', 'v1.31.4+k3s1', {}, 'src is v1.31.4+k3s1 but the installed binary is v1.29.9+k3s1: that skips a '
     'minor version (Kubernetes upgrades one minor version at a time). Upgrade to a 1.30 release first, or set '
     'allow_minor_skip: true'),
    ('v1.31.4+k3s1', 'v2.0.0+k3s1', {}, 'that skips a minor version'),
    ('v1.30.6+k3s1', 'v1.31.4+k3s1', {'max_version': 'v1.30.9+k3s1'}, 'src is v1.31.4+k3s1, newer than max_version '
     'v1.30.9+k3s1 (a node must not run a newer version than the servers it joins: upgrade the servers first)'),
    ('v1.30.6+k3s1', 'v1.31.4+k3s2', {'max_version': 'v1.31.4+k3s1'}, 'newer than max_version v1.31.4+k3s1'),
    ('v1.30.6+rke2r1', 'v1.31.4+k3s1', {}, 'src is k3s v1.31.4+k3s1 but the installed binary is rke2 v1.30.6+rke2r1'),
])
def test_refused_versions_change_nothing(bins, old, new, opts, refusal):
    bins.write(K3S, fake_binary(old, 'rke2' if 'rke2' in old else 'k3s'), 0o755)
    bins.write(SRC, fake_binary(new), 0o755)
    before = bins.tree()
    msg = module_fail(k3s_binary, args(bins, **opts))
    assert refusal in msg and msg.endswith('; nothing was changed.'), msg
    assert bins.tree() == before


@pytest.mark.parametrize('old, new, opts', [
    ('v1.31.4+k3s1', 'v1.30.6+k3s1', {'allow_downgrade': True}),
    ('v1.29.9+k3s1', 'v1.31.4+k3s1', {'allow_minor_skip': True}),
    ('v1.30.6+k3s1', 'v1.31.4+k3s1', {'max_version': 'v1.31.4'}),  # without a build: the build is not compared
    ('v1.30.6+k3s1', 'v1.31.4+k3s3', {'max_version': 'v1.31.4'}),
    ('v1.31.4+k3s1', 'v1.31.4+k3s2', {}),
    ('v1.31.0-rc2+k3s1', 'v1.31.0+k3s1', {}),
    ('v1.30.6+k3s1', 'v1.31.4+k3s1', {'max_version': 'v1.31.4+k3s1'}),
    ('v1.31.4+k3s1', 'v1.31.4+k3s1', {}),  # the same version rebuilt (another sha256): replaced
])
def test_allowed_versions(bins, old, new, opts):
    bins.write(K3S, fake_binary(old), 0o755)
    bins.write(SRC, fake_binary(new, note='rebuilt'), 0o755)
    r = module_ok(k3s_binary, args(bins, **opts))
    assert r['changed'] and r['version'] == new and r['previous_version'] == old and bins.read(K3S) == bins.read(SRC)


def test_rke2_versions_are_read(bins):
    bins.write(K3S, fake_binary('v1.30.6+rke2r1', 'rke2'), 0o755)
    bins.write(SRC, fake_binary('v1.31.4+rke2r1', 'rke2'), 0o755)
    r = module_ok(k3s_binary, args(bins))
    assert r['version'] == 'v1.31.4+rke2r1' and r['previous_version'] == 'v1.30.6+rke2r1'


def test_an_installed_binary_without_a_version_needs_allow_downgrade(bins):
    bins.write(K3S, b'#!/bin/sh\necho broken >&2\nexit 2\n', 0o755)
    bins.write(SRC, fake_binary(NEW), 0o755)
    before = bins.tree()
    msg = module_fail(k3s_binary, args(bins))
    assert msg == ('the installed binary %s does not print a k3s or RKE2 version: "%s --version" exited 2 and printed '
                   "'broken'. Give a k3s or RKE2 binary (its first line is \"k3s version v1.31.4+k3s1 (...)\"); nothing was "
                   "changed. Its version cannot be compared with src's %s; to replace it anyway set allow_downgrade: true."
                   % (K3S, K3S, NEW)), msg
    assert bins.tree() == before
    r = module_ok(k3s_binary, args(bins, allow_downgrade=True))
    assert r['changed'] and r['previous_version'] is None and bins.read(PREV) == b'#!/bin/sh\necho broken >&2\nexit 2\n'


def test_wrong_sha256_is_refused(bins):
    install(bins)
    before = bins.tree()
    msg = module_fail(k3s_binary, args(bins, sha256='0' * 64))
    assert msg == ('src: %s has sha256 %s, not the expected %s: it is not the binary meant (a partial copy, or another '
                   'release or architecture); nothing was changed.' % (SRC, sha(bins.read(SRC)), '0' * 64))
    assert bins.tree() == before
    assert not any(c[0] == SRC for c in bins.calls)  # not run before it was checked


def test_src_changed_while_copied_is_refused(bins, monkeypatch):
    old, dummy = install(bins)
    real_copier = _binary._copier

    def swapped(source, want):
        if source.endswith('k3s-new'):
            with open(source, 'ab') as f:
                f.write(b'# appended\n')
        return real_copier(source, want)
    monkeypatch.setattr(_binary, '_copier', swapped)
    msg = module_fail(k3s_binary, args(bins))
    assert msg.startswith('%s changed while it was copied' % SRC), msg
    assert bins.read(K3S) == old and not bins.exists(PREV) and bins.listdir('/usr/local/bin') == ['k3s']


def test_a_failed_final_rename_leaves_path_and_previous_as_they_were(bins, monkeypatch):
    old, dummy = install(bins, prev='v1.29.9+k3s1')
    older = bins.read(PREV)
    real_rename = os.rename

    def rename(a, b):
        if b == bins.p(K3S):
            raise OSError(28, 'No space left on device')
        return real_rename(a, b)
    monkeypatch.setattr(os, 'rename', rename)
    msg = module_fail(k3s_binary, args(bins))
    assert msg == ('could not put %s in place at %s: No space left on device (the file system is full: free some space '
                   'on it); %s is as it was, nothing was changed.' % (SRC, K3S, K3S)), msg
    assert bins.read(K3S) == old and bins.read(PREV) == older
    assert bins.listdir('/usr/local/bin') == ['k3s', 'k3s.previous']


def test_the_next_run_removes_temp_files_a_killed_one_left(bins):
    install(bins)
    bins.write('/usr/local/bin/.k3s.bk3s-killed.tmp', b'half a binary')
    bins.write('/usr/local/bin/.k3s.previous.bk3s-killed.tmp', b'a link of the old one')
    module_ok(k3s_binary, args(bins))
    assert bins.listdir('/usr/local/bin') == ['k3s', 'k3s.previous']
    bins.write('/usr/local/bin/.k3s.previous.bk3s-killed.tmp', b'killed after the swap')
    assert module_ok(k3s_binary, args(bins))['changed'] is False  # nothing to change, the leftover still goes
    assert bins.listdir('/usr/local/bin') == ['k3s', 'k3s.previous']


def test_path_a_link_replaces_its_target_and_keeps_the_link(bins):
    bins.write('/opt/k3s/k3s', fake_binary(OLD), 0o755)
    bins.symlink('/opt/k3s/k3s', K3S)
    bins.write(SRC, fake_binary(NEW), 0o755)
    r = module_ok(k3s_binary, args(bins))
    assert r['previous_path'] == '/opt/k3s/k3s.previous' and r['path'] == K3S
    assert os.readlink(bins.p(K3S)) == '/opt/k3s/k3s' and bins.read('/opt/k3s/k3s') == bins.read(SRC)
    assert bins.read('/opt/k3s/k3s.previous') == fake_binary(OLD)


@pytest.mark.parametrize('change, message', [
    ({'sha256': 'abc'}, "sha256 must be the 64 hex digits of the new binary's sha256 (from the release's sha256sum file), "
                        "not 'abc'"),
    ({'sha256': None}, "sha256 must be the 64 hex digits"),
    ({'src': None}, 'src is required with state=present'),
    ({'src': 'k3s-new'}, "src must be an absolute, normalized path on the node, not 'k3s-new'"),
    ({'path': '/usr/local/bin/'}, "path must be the absolute, normalized path of the installed binary"),
    ({'state': 'previous'}, 'src and sha256 are for state=present; state=previous puts /usr/local/bin/k3s.previous back '
                            'and takes neither'),
    ({'max_version': '1.31'}, "max_version must be a k3s or RKE2 version such as v1.31.4+k3s1 or v1.31.4, not '1.31'"),
])
def test_bad_input(bins, change, message):
    install(bins)
    before = bins.tree()
    msg = module_fail(k3s_binary, args(bins, **change))
    assert msg.startswith(message), msg
    assert bins.tree() == before and bins.calls == []


@pytest.mark.parametrize('out, version', [
    ('k3s version v1.31.4+k3s1 (a4f8e7a1)\ngo version go1.22.9\n', ('k3s', 'v1.31.4+k3s1')),
    ('rke2 version v1.31.4+rke2r1 (b1c2)\ngo version go1.22.9\n', ('rke2', 'v1.31.4+rke2r1')),
    ('k3s version v1.36.3+k3s1 (baremetal-k3s-double)\n', ('k3s', 'v1.36.3+k3s1')),
    ('k3s version v1.31.4+k3s1\n', ('k3s', 'v1.31.4+k3s1')),
    ('k3s version v1.31.0-rc1+k3s1 (x)\n', ('k3s', 'v1.31.0-rc1+k3s1')),
    ('Client Version: v1.31.4+k3s1\n', None),
    ('k3s version 1.31.4 (x)\n', None),
    ('k3s version v1.31 (x)\n', None),
    ('kubectl version v1.31.4 (x)\n', None),
    ('', None),
])
def test_version_line(out, version):
    got = _binary.parse_version_output(out)
    assert (got[0], got[1].text) == version if version else got is None


def test_versions_order_as_releases():
    order = ['v1.30.6+k3s1', 'v1.31.0-rc1+k3s1', 'v1.31.0-rc2+k3s1', 'v1.31.0+k3s1', 'v1.31.0+k3s2', 'v1.31.4+k3s1',
             'v1.31.10+k3s1']
    keys = [_binary.Version(v).key for v in order]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_without_hard_links_the_old_binary_is_copied(bins, monkeypatch):
    """A file system without hard links (some FUSE and network ones): .previous is a copy, checked by its sha256."""
    old, new = install(bins, prev='v1.29.9+k3s1')

    def no_link(a, b):
        raise OSError(1, 'Operation not permitted')
    monkeypatch.setattr(os, 'link', no_link)
    r = module_ok(k3s_binary, args(bins))
    assert r['changed'] and bins.read(K3S) == new and bins.read(PREV) == old and bins.mode(PREV) == 0o755
    assert bins.listdir('/usr/local/bin') == ['k3s', 'k3s.previous']
