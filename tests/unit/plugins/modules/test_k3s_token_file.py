# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the k3s_token_file module: a node's token written once, never replaced by a different one unasked."""

from __future__ import annotations

import json

import pytest

from ansible_collections.baremetal.k3s.plugins.modules import k3s_token_file

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok, run_module

PATH = '/etc/rancher/k3s/cluster-token'
HASH = 'a' * 64
FULL = 'K10%s::server:s3cret-pass' % HASH


def run(token, **kw):
    args = {'path': PATH, 'token': token}
    args.update(kw)
    return module_ok(k3s_token_file, args)


def test_created_0600_then_left_alone(node):
    r = run(FULL)
    assert r['changed'] and r['files'] == [{'path': PATH, 'action': 'created', 'backup_file': None}]
    assert node.read(PATH) == (FULL + '\n').encode() and node.mode(PATH) == 0o600
    assert not run(FULL)['changed']


@pytest.mark.parametrize('held, given', [
    (FULL, 's3cret-pass'),                                   # the bare password of the same token
    ('s3cret-pass\n', FULL),                                 # an operator's bare password, the server's full token
    ('  %s  \n\n' % FULL, FULL),                             # k3s trims white space around it
    ('K10%s::node:s3cret-pass' % HASH.upper(), FULL),        # the agent user, the hash in capitals
])
def test_the_same_token_in_another_form_changes_nothing(node, held, given):
    node.write(PATH, held)
    r = run(given)
    assert not r['changed'] and r['files'] == [] and node.read(PATH) == held.encode()


@pytest.mark.parametrize('held, why', [
    ('other-pass\n', 'another password'),
    ('K10%s::server:s3cret-pass\n' % ('b' * 64), 'another cluster CA'),
    ('\x00\x01binary', 'no readable k3s token'),
])
def test_a_different_token_is_refused_and_kept(node, held, why):
    node.write(PATH, held)
    failed, result = run_module(k3s_token_file, {'path': PATH, 'token': FULL}, diff=True)
    assert failed and why in result['msg'] and 'Nothing was changed' in result['msg'], result
    assert node.read(PATH) == held.encode()
    assert 's3cret' not in json.dumps(result) and 'other-pass' not in json.dumps(result)


def test_replace_writes_it_without_showing_either(node):
    node.write(PATH, 'other-pass\n', mode=0o644)
    r = module_ok(k3s_token_file, {'path': PATH, 'token': FULL, 'replace': True}, diff=True)
    assert r['changed'] and r['replaced'] and node.read(PATH) == (FULL + '\n').encode()
    assert r['diff'][0]['before'] == r['diff'][0]['after'] == '(a token, hidden)\n'
    assert node.mode(PATH) == 0o600 and not r.get('warnings')  # the replaced file is the token's: 0600, not 0644
    assert 's3cret' not in json.dumps(r) and 'other-pass' not in json.dumps(r)


@pytest.mark.parametrize('token, words', [
    ('', 'is empty'),
    ('  \n', 'is empty'),
    ('two words', 'white space or control characters'),
    ('line\nbreak', 'white space or control characters'),
    ('K10zz::server:pw', 'its CA hash has 2 characters, not the 64 hex digits'),
    ('K10%s::server:' % HASH, 'there is no <user>:<password> after "::"'),
    ('K10%s::server' % HASH, 'there is no <user>:<password> after "::"'),
    ('K10abcdef', 'it has no "::" after the CA hash and no <user>:<password>'),
    ('K10%s::server:pw' % ('g' * 64), 'its CA hash is not hex digits'),
    ('K10%s::server:pw' % HASH[:63], 'its CA hash has 63 characters'),
])
def test_an_empty_or_malformed_token_is_refused_before_anything_is_written(node, token, words):
    assert words in module_fail(k3s_token_file, {'path': PATH, 'token': token})
    assert not node.exists(PATH)


def test_check_mode_writes_nothing(node):
    r = module_ok(k3s_token_file, {'path': PATH, 'token': FULL}, check_mode=True)
    assert r['changed'] and not node.exists(PATH)


def test_a_directory_is_refused(node):
    node.makedirs(PATH)
    assert 'is a directory' in module_fail(k3s_token_file, {'path': PATH, 'token': FULL})


@pytest.mark.parametrize('held, given', [
    (FULL + '\n', None),                  # any k3s token, when none is given
    (FULL + '\n', 's3cret-pass'),         # the one given, in another form
    ('s3cret-pass\n', FULL),
])
def test_absent_removes_a_token_file_without_showing_it(node, held, given):
    node.write(PATH, held)
    args = {'path': PATH, 'state': 'absent'}
    if given:
        args['token'] = given
    r = module_ok(k3s_token_file, args, diff=True)
    assert r['changed'] and r['files'] == [{'path': PATH, 'action': 'removed', 'backup_file': None}]
    assert not node.exists(PATH)
    assert r['diff'][0]['before'] == '(a token, hidden)\n' and r['diff'][0]['after'] == ''
    assert 's3cret' not in json.dumps(r)
    again = module_ok(k3s_token_file, args)
    assert not again['changed'] and again['files'] == []


@pytest.mark.parametrize('held, given, words', [
    ('# my notes\nnot a token at all\n', None, 'does not hold a k3s token'),
    ('\x00\x01binary', None, 'does not hold a k3s token'),
    ('other-pass\n', FULL, 'another password'),
    ('K10%s::server:s3cret-pass\n' % ('b' * 64), FULL, 'another cluster CA'),
])
def test_absent_refuses_a_file_that_is_not_this_token_and_keeps_its_bytes(node, held, given, words):
    node.write(PATH, held)
    args = {'path': PATH, 'state': 'absent'}
    if given:
        args['token'] = given
    failed, result = run_module(k3s_token_file, args)
    assert failed and words in result['msg'] and 'nothing was removed' in result['msg'], result
    assert node.read(PATH) == held.encode()
    assert 's3cret' not in json.dumps(result) and 'other-pass' not in json.dumps(result)


def test_absent_refuses_a_directory_and_a_link_and_check_mode_removes_nothing(node):
    node.makedirs(PATH)
    assert 'is a directory' in module_fail(k3s_token_file, {'path': PATH, 'state': 'absent'})
    other = '/etc/rancher/k3s/elsewhere'
    node.write(other, FULL + '\n')
    node.symlink(other, PATH + '-link')
    assert 'symbolic link' in module_fail(k3s_token_file, {'path': PATH + '-link', 'state': 'absent'})
    assert node.read(other) == (FULL + '\n').encode()
    r = module_ok(k3s_token_file, {'path': other, 'state': 'absent'}, check_mode=True)
    assert r['changed'] and node.exists(other)


def test_present_still_needs_the_token(node):
    assert 'token' in module_fail(k3s_token_file, {'path': PATH})
    assert not node.exists(PATH)
