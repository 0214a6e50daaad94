# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lookup controller_sha256: a file on the controller read once per run, whatever the number of hosts."""

from __future__ import annotations

import hashlib
import multiprocessing
import os

import pytest

from ansible.errors import AnsibleLookupError
from ansible.parsing.dataloader import DataLoader

from ansible_collections.baremetal.k3s.plugins.lookup import controller_sha256 as lk


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    """The run's own temporary directory (ansible-playbook's local tmp)."""
    d = tmp_path / 'ansible-local-1'
    d.mkdir()
    monkeypatch.setattr(lk.C, 'DEFAULT_LOCAL_TMP', str(d))
    return d


@pytest.fixture
def reads(monkeypatch):
    """Each path the lookup reads, in order."""
    seen = []
    real = lk.file_sha256

    def counting(path):
        seen.append(path)
        return real(path)
    monkeypatch.setattr(lk, 'file_sha256', counting)
    return seen


def lookup(*terms, basedir='/'):
    loader = DataLoader()
    loader.set_basedir(basedir)
    return lk.LookupModule(loader=loader).run(list(terms), variables={})


def test_read_once_for_every_host_then_again_when_the_file_changes(tmp_path, run_dir, reads):
    binary = tmp_path / 'k3s'
    binary.write_bytes(b'k3s v1\n' * 1000)
    want = hashlib.sha256(binary.read_bytes()).hexdigest()
    for dummy in range(5):  # five hosts of one run
        assert lookup(str(binary)) == [{'path': str(binary), 'exists': True, 'sha256': want}]
    assert reads == [str(binary)]
    binary.write_bytes(b'k3s v2\n' * 1000)  # replaced during the run: read again
    assert lookup(str(binary))[0]['sha256'] == hashlib.sha256(binary.read_bytes()).hexdigest()
    assert len(reads) == 2


def test_missing_or_not_a_file(tmp_path, run_dir, reads):
    (tmp_path / 'dir').mkdir()
    assert lookup(str(tmp_path / 'nope'), str(tmp_path / 'dir')) == [
        {'path': str(tmp_path / 'nope'), 'exists': False, 'sha256': ''},
        {'path': str(tmp_path / 'dir'), 'exists': False, 'sha256': ''}]
    assert reads == []
    with pytest.raises(AnsibleLookupError, match='give each file as a path'):
        lookup('')


def test_a_relative_path_is_found_as_copy_finds_its_src(tmp_path, run_dir):
    (tmp_path / 'files').mkdir()
    (tmp_path / 'files' / 'k3s').write_bytes(b'x')
    found = lookup('k3s', basedir=str(tmp_path))[0]
    assert found == {'path': str(tmp_path / 'files' / 'k3s'), 'exists': True, 'sha256': hashlib.sha256(b'x').hexdigest()}


def test_without_a_run_directory_every_call_reads(tmp_path, monkeypatch, reads):
    monkeypatch.setattr(lk.C, 'DEFAULT_LOCAL_TMP', '')
    binary = tmp_path / 'k3s'
    binary.write_bytes(b'x')
    lookup(str(binary))
    lookup(str(binary))
    assert len(reads) == 2


def _host(args):
    """One fork's lookup, as a worker process of the run asks it."""
    path, counter = args
    real = lk.file_sha256

    def counting(p):
        with open(counter, 'a') as f:
            f.write('read\n')
        return real(p)
    lk.file_sha256 = counting
    return lookup(path)[0]['sha256']


def test_forks_asking_at_once_read_the_file_once(tmp_path, run_dir):
    binary = tmp_path / 'k3s'
    binary.write_bytes(os.urandom(4 * 1024 * 1024))
    counter = tmp_path / 'reads'
    with multiprocessing.get_context('fork').Pool(5) as pool:
        digests = pool.map(_host, [(str(binary), str(counter))] * 10)
    assert set(digests) == {hashlib.sha256(binary.read_bytes()).hexdigest()}
    assert counter.read_text().count('read') == 1
