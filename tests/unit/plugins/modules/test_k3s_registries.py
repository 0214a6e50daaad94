# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the k3s_registries module: k3s's registries.yaml written from options, byte-stable, secrets hidden."""

from __future__ import annotations

import json

import pytest
import yaml

from ansible_collections.baremetal.k3s.plugins.module_utils import _registries
from ansible_collections.baremetal.k3s.plugins.modules import k3s_registries

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok, run_module

PATH = '/etc/rancher/k3s/registries.yaml'
PASSWORD = 'Zq7regpassX9w'
AUTH = 'Zq7regauthX9w'
TOKEN = 'Zq7regtokenX9w'
MIRRORS = {
    'docker.io': {'endpoint': ['https://registry.example:5000', 'http://10.0.0.5:5000/v2'],
                  'rewrite': {'^rancher/(.*)': 'mirrors/rancher/$1'}},
    '*': {},
}
CONFIGS = {
    'registry.example:5000': {'auth': {'username': 'puller', 'password': PASSWORD},
                              'tls': {'ca_file': '/etc/ssl/internal-ca.pem', 'insecure_skip_verify': False}},
    '[fd00::1]:5000': {'auth': {'auth': AUTH, 'identity_token': TOKEN},
                       'tls': {'cert_file': '/etc/ssl/c.pem', 'key_file': '/etc/ssl/c.key'}},
}


TLS_FILES = ('/etc/ssl/internal-ca.pem', '/etc/ssl/c.pem', '/etc/ssl/c.key')


@pytest.fixture(autouse=True)
def tls_files(request):
    """The TLS files CONFIGS names, on the fake node of a test that uses one (they are checked before writing)."""
    if 'node' in request.fixturenames:
        fake = request.getfixturevalue('node')
        for path in TLS_FILES:
            fake.write(path, '-----BEGIN CERTIFICATE-----\n')


def run(**kw):
    args = {'mirrors': MIRRORS, 'configs': CONFIGS}
    args.update(kw)
    return module_ok(k3s_registries, args, diff=True)


def test_written_in_k3s_format_then_left_alone(node):
    r = run()
    assert r['changed'] and r['files'] == [{'path': PATH, 'action': 'created', 'backup_file': None}]
    assert node.mode(PATH) == 0o600 and r['owned'] and not r['taken_over']
    data = node.read(PATH)
    assert data.startswith(_registries.MARKER.encode() + b'\n')
    # what k3s decodes: the same structure (YAML reads the double-quoted strings back)
    assert yaml.safe_load(data) == {'mirrors': {'docker.io': MIRRORS['docker.io'], '*': {}}, 'configs': CONFIGS}
    again = run()
    assert not again['changed'] and again['files'] == [] and node.read(PATH) == data
    # dict order given does not matter: the bytes are the same
    reordered = run(mirrors=dict(reversed(list(MIRRORS.items()))), configs=dict(reversed(list(CONFIGS.items()))))
    assert not reordered['changed'] and node.read(PATH) == data


def test_a_change_rewrites_our_file(node):
    run()
    r = run(mirrors={'docker.io': {'endpoint': ['https://other.example']}})
    assert r['changed'] and r['files'][0]['action'] == 'modified'
    assert yaml.safe_load(node.read(PATH))['mirrors'] == {'docker.io': {'endpoint': ['https://other.example']}}


def test_empty_removes_our_file_and_leaves_an_operators(node):
    run()
    r = run(mirrors={}, configs={})
    assert r['changed'] and r['files'][0]['action'] == 'removed' and not node.exists(PATH)
    assert not run(mirrors={}, configs={})['changed']
    node.write(PATH, 'mirrors: {docker.io: {endpoint: [https://mine]}}\n')
    r = run(mirrors={}, configs={})
    assert not r['changed'] and not r['owned'] and node.read(PATH) == b'mirrors: {docker.io: {endpoint: [https://mine]}}\n'


def test_an_operators_file_is_refused_unless_taken_over_with_a_backup(node):
    mine = 'configs:\n  r.example:\n    auth:\n      password: "Zq7minepassX9w"\n'
    node.write(PATH, mine)
    failed, result = run_module(k3s_registries, {'mirrors': MIRRORS, 'configs': CONFIGS}, diff=True)
    assert failed and 'not written by baremetal.k3s' in result['msg'] and 'take_over' in result['msg'], result
    assert node.read(PATH) == mine.encode()
    r = run(take_over=True)
    assert r['changed'] and r['taken_over'] and r['files'][0]['backup_file']
    assert node.read(r['files'][0]['backup_file']) == mine.encode()
    assert 'Zq7minepassX9w' not in json.dumps(r)


def test_rke2_and_another_path(node):
    r = run(platform='rke2')
    assert r['path'] == '/etc/rancher/rke2/registries.yaml' and node.exists('/etc/rancher/rke2/registries.yaml')
    r = run(path='/etc/k3s-registries.yaml')
    assert r['changed'] and node.exists('/etc/k3s-registries.yaml')


def test_secrets_are_not_in_the_result_or_the_diff(node):
    r = run()
    text = json.dumps(r)
    for value in (PASSWORD, AUTH, TOKEN):
        assert value not in text
        assert value in node.read(PATH).decode()
    assert '(hidden)' in r['diff'][0]['after'] and 'puller' in r['diff'][0]['after']
    r = run(configs={'registry.example:5000': {'auth': {'username': 'puller', 'password': 'Zq7newpassX9w'}}})
    assert r['changed'] and PASSWORD not in json.dumps(r) and 'Zq7newpassX9w' not in json.dumps(r)


@pytest.mark.parametrize('mirrors, configs, where, what', [
    ({'docker.io\n': {}}, {}, 'mirrors key', 'control character'),
    ({'docker.io': {'endpoint': ['ftp://x']}}, {}, 'mirrors["docker.io"]["endpoint"][0]', 'http or https'),
    ({'docker.io': {'endpoint': ['https://']}}, {}, 'mirrors["docker.io"]["endpoint"][0]', 'a host'),
    ({'docker.io': {'endpoint': ['https://a:99999']}}, {}, 'mirrors["docker.io"]["endpoint"][0]', 'not a URL'),
    ({'docker.io': {'endpoint': ['https://a\n.example']}}, {}, 'mirrors["docker.io"]["endpoint"][0]',
     'control character'),
    ({'docker.io': {'endpoint': 'https://a'}}, {}, 'mirrors["docker.io"]["endpoint"]', 'a list'),
    ({'docker.io': {'endpoints': ['https://a']}}, {}, 'mirrors["docker.io"]', 'calls it endpoint'),
    ({'docker io': {}}, {}, 'mirrors key', 'registry name'),
    ({}, {'r.example': {'auth': {'identitytoken': TOKEN}}}, 'configs["r.example"]["auth"]', 'identity_token'),
    ({}, {'r.example': {'tls': {'ca_file': 'ca.pem'}}}, 'configs["r.example"]["tls"]["ca_file"]', 'absolute'),
    ({}, {'r.example': {'tls': {'cert_file': '/c.pem'}}}, 'configs["r.example"]["tls"]', 'needs both'),
    ({}, {'r.example': {'tls': {'insecure_skip_verify': 'yes'}}}, 'insecure_skip_verify', 'true or false'),
    ({}, {'r.example': {'auth': {'password': 5}}}, 'configs["r.example"]["auth"]["password"]', 'a string'),
    ({}, {'r.example': {'mirror': {}}}, 'configs["r.example"]', 'does not know'),
])
def test_bad_input_is_refused_and_changes_nothing(node, mirrors, configs, where, what):
    node.write(PATH, _registries.MARKER + '\nmirrors: {}\n')
    before = node.tree()
    msg = module_fail(k3s_registries, {'mirrors': mirrors, 'configs': configs})
    assert where in msg and what in msg, msg
    assert TOKEN not in msg
    assert node.tree() == before


def test_check_mode_writes_nothing(node):
    r = module_ok(k3s_registries, {'mirrors': MIRRORS}, check_mode=True)
    assert r['changed'] and not node.exists(PATH)


@pytest.mark.parametrize('missing', TLS_FILES)
def test_a_tls_file_not_on_the_node_is_refused_before_writing(node, missing):
    node.unlink(missing)
    before = node.tree()
    msg = module_fail(k3s_registries, {'mirrors': MIRRORS, 'configs': CONFIGS})
    assert missing + ' is not there on this node: containerd would fail every pull from' in msg
    assert 'Nothing was changed' in msg and PASSWORD not in msg and node.tree() == before


def test_a_tls_file_that_is_a_directory_is_refused(node):
    node.unlink('/etc/ssl/internal-ca.pem')
    node.makedirs('/etc/ssl/internal-ca.pem')
    msg = module_fail(k3s_registries, {'mirrors': MIRRORS, 'configs': CONFIGS})
    assert 'configs["registry.example:5000"]["tls"]["ca_file"] /etc/ssl/internal-ca.pem is a directory' in msg
    assert not node.exists(PATH)
