# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the k3s_files module: the four writes of a k3s node in one run give the bytes and results of the four
modules, none is written unless every part's plan holds, and the secrets of every part are masked."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.baremetal.k3s.plugins.modules import k3s_config_file
from ansible_collections.baremetal.k3s.plugins.modules import k3s_files
from ansible_collections.baremetal.k3s.plugins.modules import k3s_registries
from ansible_collections.baremetal.k3s.plugins.modules import k3s_service
from ansible_collections.baremetal.k3s.plugins.modules import k3s_token_file

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_ok, run_module

TOKEN = 'K10%s::server:Tk7secretQ' % ('a' * 64)
PASSWORD = 'Rg9passwordW'
AGENT_TOKEN = 'Ag3secretZ'
ENV_SECRET = 'Ev5secretY'
TOKEN_FILE = '/etc/rancher/k3s/cluster-token'
UNIT = '/etc/systemd/system/k3s.service'
ENV = '/etc/systemd/system/k3s.service.env'
OURS = '/etc/rancher/k3s/config.yaml.d/40-baremetal-k3s-server.yaml'
REGISTRIES = '/etc/rancher/k3s/registries.yaml'


def options():
    return {
        'token_file': {'path': TOKEN_FILE, 'token': TOKEN},
        'config_file': {'name': '40-baremetal-k3s-server.yaml', 'values': {'token-file': TOKEN_FILE, 'agent-token': AGENT_TOKEN,
                                                                           'disable': ['traefik']}},
        'registries': {'mirrors': {'docker.io': {'endpoint': ['https://mirror.example:5000']}},
                       'configs': {'mirror.example:5000': {'auth': {'username': 'puller', 'password': PASSWORD}}}},
        'service': {'command': 'server', 'env': {'K3S_DATASTORE_ENDPOINT': 'postgres://k3s:%s@db:5432/k3s' % ENV_SECRET}},
    }


SECRETS = (TOKEN, 'Tk7secretQ', PASSWORD, AGENT_TOKEN, ENV_SECRET)
MODULES = {'token_file': k3s_token_file, 'config_file': k3s_config_file, 'registries': k3s_registries,
           'service': k3s_service}


def test_the_same_bytes_and_results_as_the_four_modules(node):
    r = module_ok(k3s_files, options())
    assert r['changed'] and [f['path'] for f in r['files']] == [TOKEN_FILE, OURS, REGISTRIES, UNIT, ENV]
    written = {p: (node.read(p), node.mode(p)) for p in (TOKEN_FILE, OURS, REGISTRIES, UNIT, ENV)}
    for p in written:
        os.remove(node.p(p))
    for name, module in MODULES.items():  # the same options, each module on its own
        alone = module_ok(module, options()[name])
        assert {k: v for k, v in alone.items() if k not in ('invocation', 'warnings')} == \
            {k: v for k, v in r[name].items() if k not in ('invocation', 'warnings')}, name
    assert {p: (node.read(p), node.mode(p)) for p in written} == written
    again = module_ok(k3s_files, options())
    assert not again['changed'] and again['files'] == [] and all(not again[name]['changed'] for name in MODULES)


def test_a_part_left_out_is_not_touched(node):
    r = module_ok(k3s_files, {'config_file': options()['config_file']})
    assert set(r) >= {'config_file', 'files'} and not {'token_file', 'registries', 'service'} & set(r)
    assert not node.exists(TOKEN_FILE) and not node.exists(UNIT) and not node.exists(REGISTRIES)


@pytest.mark.parametrize('part, change, what', [
    ('token_file', {'token': ''}, 'token given is empty'),                      # its plan refuses
    ('token_file', {'replace': 'perhaps'}, 'token_file: '),                     # its module's types
    ('config_file', {'state': 'gone'}, 'config_file'),                           # its module's choices
    ('registries', {'configs': {'r.example': {'tls': {'ca_file': 'ca.pem'}}}}, 'absolute'),  # its plan refuses
    ('service', {'args': ['--token=$TOKEN']}, '$'),                               # refused after the three before it
])
def test_a_refused_part_writes_no_part(node, part, change, what):
    given = options()
    given[part] = dict(given[part], **change)
    before = node.tree()
    failed, result = run_module(k3s_files, given)
    assert failed and what in result['msg'], result
    assert node.tree() == before, 'nothing written, not even the parts before the refused one'
    text = json.dumps(result)
    assert not [s for s in SECRETS if s in text]


def test_a_different_token_on_the_node_stops_every_write(node):
    node.write(TOKEN_FILE, 'other-token\n')
    before = node.tree()
    failed, result = run_module(k3s_files, options())
    assert failed and 'another password' in result['msg'] and node.tree() == before


def test_secrets_are_masked_in_the_result_and_the_diff(node):
    failed, result = run_module(k3s_files, options(), diff=True)
    assert not failed, result
    text = json.dumps(result)
    assert not [s for s in SECRETS if s in text], 'no secret of any part in the result, the diff or the invocation'
    assert len(result['diff']) == 5 and [d['after_header'] for d in result['diff']] == [TOKEN_FILE, OURS, REGISTRIES, UNIT, ENV]
    assert PASSWORD in node.read(REGISTRIES).decode() and ENV_SECRET in node.read(ENV).decode()


def test_check_mode_writes_nothing(node):
    before = node.tree()
    r = module_ok(k3s_files, options(), check_mode=True)
    assert r['changed'] and len(r['files']) == 5 and node.tree() == before


def test_no_part_is_refused(node):
    failed, result = run_module(k3s_files, {})
    assert failed and 'one of the following is required' in result['msg']


def test_a_link_the_last_part_would_write_through_is_refused_before_the_first_part(node):
    """The unit's env file a dangling link: refused (as k3s_service alone refuses it) before the token file, the
    config.yaml.d file and registries.yaml are written."""
    node.symlink('/nowhere/k3s.env', ENV)
    before = node.tree()
    failed, result = run_module(k3s_files, options())
    assert failed and 'symbolic link' in result['msg'] and 'nothing was changed' in result['msg'].lower(), result
    assert node.tree() == before
