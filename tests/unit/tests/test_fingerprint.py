# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The scenarios' fingerprint (extensions/molecule/shared/fingerprint.py): what it sees change."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import fingerprint  # pylint: disable=import-error

SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'extensions', 'molecule', 'shared')


@pytest.fixture(name='tree')
def fixture_tree(tmp_path):
    """A node's config directory with a file, a dot file, a subdirectory and a symlink."""
    etc = tmp_path / 'etc'
    (etc / 'k3s' / 'config.yaml.d').mkdir(parents=True)
    (etc / 'k3s' / 'config.yaml').write_text('write-kubeconfig-mode: "644"\n')
    (etc / 'k3s' / '.hidden').write_text('x\n')
    (etc / 'k3s' / 'link').symlink_to('config.yaml')
    return tmp_path


def changes(tree, mutate, paths=(), created=()):
    root = str(tree / 'etc')
    before = fingerprint.record([root], [])
    mutate(tree)
    after = fingerprint.record(before['roots'], before['paths'] + list(paths) + list(created))
    return fingerprint.differences(before, after, set(created))


def test_nothing_changed_is_no_difference(tree):
    assert changes(tree, lambda t: None) == []


@pytest.mark.parametrize('mutate, what', [
    (lambda t: (t / 'etc/k3s/config.yaml').write_text('other\n'), 'config.yaml: changed'),
    (lambda t: (t / 'etc/k3s/config.yaml').chmod(0o600), 'config.yaml: changed (file 0644'),
    (lambda t: (t / 'etc/k3s/.hidden').unlink(), '.hidden: disappeared'),
    (lambda t: (t / 'etc/k3s/.baremetal-k3s-created').write_text('m\n'), '.baremetal-k3s-created: appeared'),
    (lambda t: (t / 'etc/k3s/config.yaml.d/.99-x.yaml.bk3s-1.tmp').write_text(''), '.99-x.yaml.bk3s-1.tmp: appeared'),
    (lambda t: (t / 'etc/k3s/kube-scheduler').mkdir(), 'kube-scheduler: appeared (absent -> directory'),
    (lambda t: ((t / 'etc/k3s/link').unlink(), (t / 'etc/k3s/link').write_text('write-kubeconfig-mode: "644"\n')),
     'link: changed (symlink to config.yaml -> file'),
])
def test_every_kind_of_change_under_a_root_is_seen(tree, mutate, what):
    found = changes(tree, mutate)
    assert len(found) == 1 and what in found[0], found


def test_a_written_path_outside_the_roots_is_not_covered(tree):
    outside = tree / 'usr' / 'k3s.service'
    outside.parent.mkdir()
    found = changes(tree, lambda t: outside.write_text('[Service]\n'), paths=[str(outside)])
    assert len(found) == 1 and 'not covered by the recorded fingerprint' in found[0], found


def test_a_path_first_reported_created_was_absent_before(tree):
    lease = tree / 'run' / 'scheduler_extender.lease'
    lease.parent.mkdir()
    # the run created it and gave it back: nothing to report
    assert changes(tree, lambda t: None, created=[str(lease)]) == []
    # the run created it and left it: it appeared
    found = changes(tree, lambda t: lease.write_text('{}'), created=[str(lease)])
    assert len(found) == 1 and 'scheduler_extender.lease: appeared' in found[0], found


def test_named_paths_are_recorded_when_absent(tree):
    missing = str(tree / 'nowhere' / 'file')
    rec = fingerprint.record([str(tree / 'etc')], [missing])
    assert rec['entries'][missing] is None and missing in rec['paths']


def test_the_command_line_records_and_compares(tree):
    script = os.path.join(SHARED, 'fingerprint.py')
    recorded, now = str(tree / 'before.json'), str(tree / 'now.json')
    subprocess.run([sys.executable, script, 'record', recorded, '--root', str(tree / 'etc')], check=True)
    assert str(tree / 'etc' / 'k3s' / '.hidden') in json.loads((tree / 'before.json').read_text())['entries']
    (tree / 'etc' / 'k3s' / 'left-behind~').write_text('old\n')
    out = subprocess.run([sys.executable, script, 'compare', recorded, now], check=True, capture_output=True, text=True)
    # (its default roots are this machine's own directories: only the tree's lines are this test's)
    ours = [line for line in json.loads(out.stdout)['differences'] if line.startswith(str(tree))]
    assert len(ours) == 1 and ours[0].startswith(str(tree / 'etc' / 'k3s' / 'left-behind~') + ': appeared'), ours
