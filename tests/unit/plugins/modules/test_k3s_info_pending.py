# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""k3s_info's ``pending``: what a running k3s does not use yet, from faked /proc (start time, exe) and file times.

A run that wrote the unit, an env file, a config.yaml.d file, registries.yaml or the token file and stopped before
the restart leaves files that say what the next run wants: only their times against the process's start show that
the change is not applied. The binary: a process whose /proc/<pid>/exe is the binary marked "(deleted)", or a
binary newer than the process."""

from __future__ import annotations

import os

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _pending
from ansible_collections.baremetal.k3s.plugins.modules import k3s_info

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import BOOT
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_ok

START = BOOT + 1000          # when the fake k3s process started
BEFORE, AFTER = START - 600, START + 60
PID = 812
OURS = '/etc/rancher/k3s/config.yaml.d/40-baremetal-k3s-server.yaml'
TOKEN = '/etc/rancher/k3s/cluster-token'
REGISTRIES = '/etc/rancher/k3s/registries.yaml'
BINARY = '/usr/local/bin/k3s'


def _touch(node, path, when):
    os.utime(node.p(path), (when, when))


def _server(node, init='systemd', service='k3s', command='server'):
    """An installed server (or agent) with our config.yaml.d file, a token file, registries.yaml and the binary, every
    file written before the process started; the process runs."""
    path = node.install(command=command, init=init, args=['--disable=traefik'])
    node.write(OURS, 'token-file: %s\nnode-label: [a=b]\n' % TOKEN)
    node.write(TOKEN, 'K10abc::server:secret\n', 0o600)
    node.write(REGISTRIES, 'mirrors: {}\n')
    node.write(BINARY, b'\x7fELF old', 0o755)
    for d, dummy, names in os.walk(node.root):
        for n in names:
            if '/proc/' not in os.path.join(d, n) + '/':
                os.utime(os.path.join(d, n), (BEFORE, BEFORE), follow_symlinks=False)
    if init == 'systemd':
        node.service(service, pid=PID)
        node.process(PID, [BINARY + ' ' + command, ''], started=START)
    else:
        node.commands['rc-service'] = lambda argv: (0, '', '')
        node.write('/var/run/%s.pid' % service, '76\n')
        node.process(76, ['supervise-daemon', service])
        node.process(PID, [BINARY + ' ' + command, ''], ppid=76, started=START)
    return path


def _exe(node, target):
    node.symlink(target, '/proc/%d/exe' % PID)


def _info(service='k3s'):
    return module_ok(k3s_info, {'platform': 'k3s', 'service': service})


def test_nothing_changed_since_the_start_is_nothing_pending(node):
    _server(node)
    _exe(node, BINARY)
    r = _info()
    assert r['pending'] == [] and r['pending_msg'] == ''
    assert r['started_at'] == _pending.sc.to_iso(START)
    assert r['missing_token_files'] == []


@pytest.mark.parametrize('path', [
    '/etc/systemd/system/k3s.service',
    '/etc/systemd/system/k3s.service.env',
    OURS,
    '/etc/rancher/k3s/config.yaml',
    REGISTRIES,
    TOKEN,
], ids=['unit', 'env file', 'our config.yaml.d file', 'config.yaml', 'registries', 'token file'])
def test_each_file_k3s_reads_at_its_start_changed_after_it_is_pending(node, path):
    _server(node)
    if not node.exists(path):
        node.write(path, 'write-kubeconfig-mode: "600"\n')
    _touch(node, path, AFTER)
    r = _info()
    assert [(p['path'], p['reason']) for p in r['pending']] == [(path, 'changed after k3s started')], r['pending']
    assert r['pending'][0]['changed_at'] == _pending.sc.to_iso(AFTER)
    assert r['pending_msg'].startswith('k3s still runs the process started at %s (pid %d)' % (r['started_at'], PID))
    assert path in r['pending_msg']


def test_a_drop_in_written_after_the_start_is_pending(node):
    _server(node)
    dropin = node.write('/etc/systemd/system/k3s.service.d/10-proxy.conf', '[Service]\nEnvironment=HTTP_PROXY=x\n')
    _touch(node, dropin, AFTER)
    assert [p['path'] for p in _info()['pending']] == [dropin]


def test_a_file_written_in_the_instant_of_the_start_is_not_pending(node):
    """The start is known to a clock tick and the boot second: a file of that instant counts as read."""
    _server(node)
    _touch(node, OURS, START + 0.5)
    assert _info()['pending'] == []


def test_a_file_k3s_does_not_read_is_not_pending(node):
    _server(node)
    _touch(node, node.write('/etc/rancher/k3s/config.yaml.d/notes.txt', 'x'), AFTER)
    _touch(node, node.write('/etc/rancher/k3s/k3s.yaml', 'apiVersion: v1\n'), AFTER)  # k3s writes its kubeconfig
    assert _info()['pending'] == []


def test_a_binary_replaced_under_the_same_version_is_pending_by_its_deleted_exe(node):
    """The interrupted upgrade: the new bytes in place (renamed over the old file, whose time may be anything), the
    old process on the deleted file; the version string may well be the same."""
    _server(node)
    _exe(node, BINARY + _pending.DELETED)
    r = _info()
    assert [(p['path'], p['reason']) for p in r['pending']] == [
        (BINARY, 'replaced after k3s started: the process runs the deleted file')]


def test_a_binary_newer_than_the_process_is_pending_when_k3s_runs_from_its_data_dir(node):
    """k3s execs itself from <data-dir>/data/<hash>/bin: its exe is not the binary, whose time then tells."""
    _server(node)
    _exe(node, '/var/lib/rancher/k3s/data/abc/bin/k3s')
    assert _info()['pending'] == []
    _touch(node, BINARY, AFTER)
    assert [(p['path'], p['reason']) for p in _info()['pending']] == [(BINARY, 'replaced after k3s started')]


def test_a_deleted_exe_that_is_not_the_binary_is_not_pending(node):
    """An old data dir's file removed by k3s itself is not our binary changing."""
    _server(node)
    _exe(node, '/var/lib/rancher/k3s/data/old/bin/k3s' + _pending.DELETED)
    assert _info()['pending'] == []


def test_nothing_running_is_nothing_pending(node):
    _server(node)
    node.service('k3s', pid=0)
    _touch(node, OURS, AFTER)
    r = _info()
    assert r['pending'] == [] and r['started_at'] == '' and r['main_pid'] == 0


def test_an_agent(node):
    _server(node, service='k3s-agent', command='agent')
    _touch(node, TOKEN, AFTER)
    assert [p['path'] for p in _info('k3s-agent')['pending']] == [TOKEN]


@pytest.mark.parametrize('path, pending', [
    ('/etc/init.d/k3s', True),
    ('/etc/rancher/k3s/k3s.env', True),
    (OURS, True),
    ('/etc/environment', False),  # the system's environment, not k3s's file
])
def test_openrc(node, path, pending):
    _server(node, init='openrc')
    if not node.exists(path):
        node.write(path, 'FOO=bar\n')
    _touch(node, path, AFTER)
    r = _info()
    assert r['init'] == 'openrc' and r['main_pid'] == PID
    assert [p['path'] for p in r['pending']] == ([path] if pending else [])


def test_a_token_file_named_but_missing(node):
    _server(node)
    node.unlink(TOKEN)
    assert _info()['missing_token_files'] == [TOKEN]


def test_k3s_token_file_from_the_environment(node):
    _server(node)
    node.write(OURS, 'node-label: [a=b]\n')
    _touch(node, OURS, BEFORE)
    env = '/etc/systemd/system/k3s.service.env'
    node.write(env, "K3S_TOKEN_FILE='/srv/token'\n")
    _touch(node, env, BEFORE)
    assert _info()['missing_token_files'] == ['/srv/token']
    node.write('/srv/token', 'K10x::server:y\n')
    _touch(node, '/srv/token', AFTER)
    assert [p['path'] for p in _info()['pending']] == ['/srv/token']
