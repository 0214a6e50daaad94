# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of _manifests' readers: documents split as apimachinery's YAMLReader splits them, names as k3s uses them,
the record."""

from __future__ import annotations

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _manifests
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError


@pytest.mark.parametrize('text, docs', [
    ('', []),
    ('a: 1\n', [(1, 'a: 1\n')]),
    ('a: 1', [(1, 'a: 1\n')]),                                   # a last line without LF gets one
    ('---\na: 1\n---\nb: 2\n---\n', [(2, 'a: 1\n'), (4, 'b: 2\n')]),
    ('a: 1\n--- # two\n\nb: 2\n', [(1, 'a: 1\n'), (3, '\nb: 2\n')]),
    ('a: 1\r\n---\r\nb: 2\r\n', [(1, 'a: 1\n'), (3, 'b: 2\n')]),  # CR before LF dropped, as bufio.ReadLine does
    ('a: |\n  ---\n  text\n', [(1, 'a: |\n  ---\n  text\n')]),     # indented: no separator
    ('---   \na: 1\n', [(2, 'a: 1\n')]),
    ('# only\n---\n', [(1, '# only\n')]),
])
def test_split_documents(text, docs):
    assert _manifests.split_documents(text) == docs


@pytest.mark.parametrize('text, message', [
    ('--- a: 1\n', 'line 1: invalid Yaml document separator: a: 1'),
    ('a: 1\n----\n', 'line 2: invalid Yaml document separator: -'),
    ('a: 1\n--- |\n', 'line 2: invalid Yaml document separator: |'),
])
def test_split_documents_refuses(text, message):
    with pytest.raises(ValueError, match='^' + message.replace('|', r'\|')):
        _manifests.split_documents(text)


@pytest.mark.parametrize('filename, addon, manifest', [
    ('app.yaml', 'app', True),
    ('app.v2.yml', 'app', True),
    ('App.JSON', 'App', True),   # k3s matches the extension in any case
    ('.app.yaml', '', False),
    ('app.yaml.skip', 'app', False),
    ('app.txt', 'app', False),
    ('sub/dir/app.yaml', 'app', True),
])
def test_names(filename, addon, manifest):
    assert _manifests.addon_name(filename) == addon
    assert _manifests.is_manifest(filename.rsplit('/', 1)[-1]) is manifest


def test_is_manifest_skipped_by_marker():
    assert not _manifests.is_manifest('app.yaml', skips={'app.yaml'})
    assert _manifests.is_manifest('app.yml', skips={'app.yaml'})


def test_record_round_trip():
    entries = {'b.yaml': _manifests.sha256(b'b'), 'a.json': _manifests.sha256(b'a')}
    data = _manifests.render_record('default', entries)
    assert data.endswith(b'\n') and data.index(b'"a.json"') < data.index(b'"b.yaml"')
    assert _manifests.parse_record(data, '/r') == entries
    assert _manifests.render_record('default', {}) is None
    assert _manifests.parse_record(None, '/r') == {}


@pytest.mark.parametrize('data, why', [
    (b'{"manifests": ["a.yaml"]}', 'no "manifests" mapping of file names to sha256 sums'),
    (b'[]', 'no "manifests" mapping of file names to sha256 sums'),
    (b'{"manifests": {"a.yaml": 1}}', 'no "manifests" mapping of file names to sha256 sums'),
    (b'\xff', "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"),
])
def test_record_unreadable(data, why):
    with pytest.raises(PlanError) as e:
        _manifests.parse_record(data, '/m/.baremetal-k3s-manifests-default')
    assert e.value.msg == ('/m/.baremetal-k3s-manifests-default, the record of the manifests this module placed, cannot be '
                           'read (%s). Fix it, or remove it to have every file of the directory count as foreign, then run '
                           'again.' % why)
