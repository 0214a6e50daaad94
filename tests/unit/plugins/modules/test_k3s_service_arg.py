# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the k3s_service_arg module, on installer-format files in a temp dir."""

from __future__ import annotations

import os
import sys
import time

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config
from ansible_collections.baremetal.k3s.plugins.module_utils import _service_arg
from ansible_collections.baremetal.k3s.plugins.modules import k3s_service_arg

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', '..', 'integration'))
import installer  # noqa: E402 pylint: disable=wrong-import-position,import-error

SCHED = '--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml'


class Node:
    """A fake node root: systemd dirs, init.d and /etc/rancher/k3s under tmp_path."""

    def __init__(self, root, monkeypatch):
        self.root = str(root)
        self.etc = self.p('/etc/systemd/system')
        self.usr = self.p('/usr/lib/systemd/system')
        self.initd = self.p('/etc/init.d')
        self.config = self.p('/etc/rancher/k3s/config.yaml')
        for d in (self.etc, self.usr, self.initd, os.path.dirname(self.config)):
            os.makedirs(d, exist_ok=True)
        monkeypatch.setattr(_service_arg, 'UNIT_DIRS', [self.etc, self.usr])
        monkeypatch.setattr(_service_arg, 'DROPIN_DIRS', [self.etc, self.usr])
        monkeypatch.setattr(_service_arg, 'DROPIN_BASE', self.etc)
        monkeypatch.setattr(_service_arg, 'INITD_DIR', self.initd)
        monkeypatch.setattr(_service_arg, 'OPENRC_ENV_FILES', [])
        monkeypatch.setattr(_k3s_config, 'DEFAULT_CONFIG_FILE', self.config)
        monkeypatch.setattr(_service_arg, 'main_pid', lambda host, kind, service, pidfile=None: None)
        monkeypatch.setattr(_service_arg, 'need_daemon_reload', lambda host, service: False)
        self.readonly = set()
        real = _service_arg.is_writable
        monkeypatch.setattr(_service_arg, 'is_writable',
                            lambda path: not any(path.startswith(r) for r in self.readonly) and real(path))

    def p(self, path):
        return os.path.join(self.root, path.lstrip('/'))

    def install(self, command='server', args=(), init='systemd', systemd_dir=None, name=''):
        files = installer.generate(command, list(args), name=name, init=init,
                                   systemd_dir=systemd_dir or self.etc)
        if init == 'openrc':
            files = [installer.InstallerFile(self.p(f.path), f.content, f.mode) for f in files]
        for f in files:
            os.makedirs(os.path.dirname(f.path), exist_ok=True)
            with open(f.path, 'wb') as fh:
                fh.write(f.content)
        return files[0].path

    def dropin(self, service='k3s'):
        return os.path.join(self.etc, service + '.service.d', '99-baremetal-k3s.conf')

    def own_config(self):
        return self.config + '.d/99-baremetal-k3s-scheduler.yaml'


@pytest.fixture
def node(tmp_path, monkeypatch):
    return Node(tmp_path, monkeypatch)


def read(path):
    with open(path, 'rb') as f:
        return f.read()


def ok(args, **kw):
    return module_ok(k3s_service_arg, args, **kw)


def fail(args, **kw):
    return module_fail(k3s_service_arg, args, **kw)


@pytest.mark.parametrize('args', [[], ['--disable=traefik'], ["--node-label=it's", 'a b', '--kube-scheduler-arg=v=2']])
def test_unit_present_twice_then_absent_is_identical(node, args):
    unit = node.install(args=args)
    before = read(unit)
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['changed'] and r['method'] == 'unit' and r['path'] == unit
    assert r['args'] == ['/usr/local/bin/k3s', 'server'] + args + [SCHED]
    assert r['daemon_reload_required'] is True and r['restart_required'] is False and r['running'] is False
    assert read(unit).endswith(b"\t'%s' \\\n\n" % SCHED.encode())
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert not r['changed'] and r['args'][-1] == SCHED
    r = ok({'arg': SCHED, 'method': 'unit', 'state': 'absent'})
    assert r['changed'] and SCHED not in r['args']
    assert read(unit) == before


def test_check_mode_and_diff_do_not_write(node):
    unit = node.install(args=['--disable=traefik'])
    before = read(unit)
    r = ok({'arg': SCHED, 'method': 'unit'}, check_mode=True, diff=True)
    assert r['changed'] and read(unit) == before
    assert r['diff'][0]['before'] == before.decode() and SCHED in r['diff'][0]['after']
    assert r['diff'][0]['before_header'] == unit


def test_backup(node):
    unit = node.install()
    before = read(unit)
    r = ok({'arg': SCHED, 'method': 'unit', 'backup': True})
    assert r['backup_file'] and read(r['backup_file']) == before
    assert r['files'] == [{'path': unit, 'action': 'modified', 'backup_file': r['backup_file']}]


def test_files_tell_how_to_undo_each_change(node):
    node.install()
    r = ok({'arg': SCHED, 'backup': True}, check_mode=True)
    assert r['files'] == [{'path': node.own_config(), 'action': 'created', 'backup_file': None}]
    r = ok({'arg': SCHED, 'backup': True})
    assert r['files'] == [{'path': node.own_config(), 'action': 'created', 'backup_file': None}]
    r = ok({'arg': SCHED, 'state': 'absent', 'backup': True})
    assert [(f['path'], f['action']) for f in r['files']] == [(node.own_config(), 'removed')]
    assert 'config=/etc/rancher/k3s/kube-scheduler/config.yaml' in read(r['files'][0]['backup_file']).decode()
    assert ok({'arg': SCHED, 'state': 'absent'})['files'] == []


def test_crlf_comments_and_user_flags_kept(node):
    unit = node.p('/etc/systemd/system/k3s.service')
    text = ('# local edit\r\n[Unit]\r\nDescription=k3s\r\n\r\n[Service]\r\nType=notify\r\n'
            'ExecStart=/usr/local/bin/k3s server --debug \\\r\n'
            '# a comment inside the continuation\r\n'
            "\t'--disable=traefik' \\\r\n\r\n[Install]\r\nWantedBy=multi-user.target\r\n")
    with open(unit, 'wb') as f:
        f.write(text.encode())
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['args'] == ['/usr/local/bin/k3s', 'server', '--debug', '--disable=traefik', SCHED]
    assert b"\t'%s' \\\r\n\r\n[Install]" % SCHED.encode() in read(unit)
    ok({'arg': SCHED, 'method': 'unit', 'state': 'absent'})
    assert read(unit) == text.encode()


def test_auto_prefers_config_and_absent_removes_it(node):
    unit = node.install(args=['--disable=traefik'])
    before = read(unit)
    r = ok({'arg': SCHED})
    assert r['method'] == 'config' and r['path'] == node.own_config()
    assert read(unit) == before
    assert r['args'] == ['/usr/local/bin/k3s', 'server', '--disable=traefik']
    assert r['k3s_args'] == ['/usr/local/bin/k3s', 'server', SCHED, '--disable=traefik']
    data = read(node.own_config()).decode()
    assert 'kube-scheduler-arg+:' in data
    assert _k3s_config.file_flags(node.config) == [SCHED]
    assert oct(os.stat(node.own_config()).st_mode & 0o777) == '0o600'
    assert not ok({'arg': SCHED})['changed']
    r = ok({'arg': SCHED, 'state': 'absent'})
    assert r['changed'] and not os.path.exists(node.own_config())


def test_config_appends_to_existing_lists(node):
    node.install()
    os.makedirs(node.config + '.d')
    with open(node.config, 'w') as f:
        f.write('kube-scheduler-arg:\n- v=2\n')
    ok({'arg': SCHED, 'method': 'config'})
    ok({'arg': '--kube-scheduler-arg=leader-elect=false', 'method': 'config'})
    assert _k3s_config.file_flags(node.config) == [
        '--kube-scheduler-arg=v=2', '--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml',
        '--kube-scheduler-arg=leader-elect=false']
    ok({'arg': SCHED, 'method': 'config', 'state': 'absent'})
    assert _k3s_config.file_flags(node.config) == ['--kube-scheduler-arg=v=2', '--kube-scheduler-arg=leader-elect=false']


def test_auto_uses_unit_when_cli_passes_the_flag(node):
    unit = node.install(args=['--kube-scheduler-arg=v=2'])
    r = ok({'arg': SCHED})
    assert r['method'] == 'unit' and r['args'][-1] == SCHED
    assert not os.path.exists(node.own_config())
    assert r['path'] == unit


def test_config_refused_when_cli_passes_the_flag(node):
    node.install(args=['--kube-scheduler-arg=v=2'])
    msg = fail({'arg': SCHED, 'method': 'config'})
    assert '--kube-scheduler-arg=v=2' in msg and 'method=unit' in msg


def test_readonly_unit(node):
    unit = node.install(systemd_dir=node.usr)
    before = read(unit)
    node.readonly.add(node.usr)
    msg = fail({'arg': SCHED, 'method': 'unit'})
    assert 'dropin' in msg and 'config' in msg and 'read-only' in msg
    # auto with the flag on the command line: neither config nor unit -> drop-in
    os.makedirs(os.path.dirname(node.dropin()))
    r = ok({'arg': '--kube-apiserver-arg=v=2', 'method': 'dropin'})
    assert r['method'] == 'dropin' and r['path'] == node.dropin()
    assert any('masked' in w for w in r['warnings'])
    data = read(node.dropin()).decode()
    assert '[Service]\nExecStart=\nExecStart=/usr/local/bin/k3s \\\n    server \\\n' in data
    assert r['args'] == ['/usr/local/bin/k3s', 'server', '--kube-apiserver-arg=v=2']
    assert read(unit) == before
    assert not ok({'arg': '--kube-apiserver-arg=v=2', 'method': 'dropin'})['changed']
    r = ok({'arg': '--kube-apiserver-arg=v=2', 'state': 'absent'})
    assert r['changed'] and not os.path.exists(node.dropin())


def test_auto_falls_back_to_dropin(node):
    node.install(systemd_dir=node.usr, args=['--kube-scheduler-arg=v=2'])
    node.readonly.add(node.usr)
    r = ok({'arg': SCHED})
    assert r['method'] == 'dropin' and r['args'][-1] == SCHED
    assert not ok({'arg': SCHED})['changed']


def test_dropin_two_args_and_foreign_dropin(node):
    node.install(args=['--disable=traefik'])
    ok({'arg': '--a-arg=1', 'method': 'dropin'})
    r = ok({'arg': '--b-arg=2', 'method': 'dropin'})
    assert r['args'] == ['/usr/local/bin/k3s', 'server', '--disable=traefik', '--a-arg=1', '--b-arg=2']
    r = ok({'arg': '--a-arg=1', 'method': 'dropin', 'state': 'absent'})
    assert r['args'] == ['/usr/local/bin/k3s', 'server', '--disable=traefik', '--b-arg=2']
    with open(node.dropin(), 'w') as f:
        f.write('[Service]\nExecStart=\nExecStart=/bin/true\n')
    assert 'not written by this module' in fail({'arg': '--a-arg=1', 'method': 'dropin'})


def test_unit_edit_under_user_dropin_warns(node):
    node.install()
    d = os.path.join(node.etc, 'k3s.service.d')
    os.makedirs(d)
    with open(os.path.join(d, '10-user.conf'), 'w') as f:
        f.write('[Service]\nExecStart=\nExecStart=/usr/local/bin/k3s server --debug\n')
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['changed'] and any('overrides' in w for w in r['warnings'])
    assert r['args'] == ['/usr/local/bin/k3s', 'server', '--debug']


def test_openrc(node):
    script = node.install(init='openrc', args=['--disable=traefik'])
    before = read(script)
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['path'] == script and r['args'] == ['/usr/local/bin/k3s', 'server', '--disable=traefik', SCHED]
    assert r['daemon_reload_required'] is False
    assert not ok({'arg': SCHED, 'method': 'unit'})['changed']
    ok({'arg': SCHED, 'state': 'absent'})
    assert read(script) == before
    assert 'openrc' in fail({'arg': SCHED, 'method': 'dropin'})


def test_agent_and_named_services(node):
    agent = node.install(command='agent')
    named = node.install(name='edge')
    r = ok({'arg': '--kubelet-arg=v=2', 'service': 'k3s-agent', 'method': 'unit'})
    assert r['path'] == agent and r['args'] == ['/usr/local/bin/k3s', 'agent', '--kubelet-arg=v=2']
    r = ok({'arg': '--kubelet-arg=v=2', 'service': 'k3s-edge', 'method': 'unit'})
    assert r['path'] == named


def test_env_file_and_config_path(node):
    unit = node.install(args=['--config', node.p('/srv/k3s.yaml')])
    os.makedirs(node.p('/srv'))
    r = ok({'arg': SCHED})
    assert r['path'] == node.p('/srv/k3s.yaml.d/99-baremetal-k3s-scheduler.yaml')
    with open(unit + '.env', 'w') as f:
        f.write("K3S_CONFIG_FILE='%s'\n" % node.p('/srv/other.yaml'))
    r = ok({'arg': '--kube-scheduler-arg=v=3'})
    assert r['path'] == node.p('/srv/other.yaml.d/99-baremetal-k3s-scheduler.yaml')


@pytest.mark.parametrize('arg, where', [
    ('', 'empty'),
    ('kube-scheduler-arg=x', 'start with "--"'),
    ('--', 'start with "--"'),
    ('--a\n--b', 'line break'),
    ('--a=$HOME', '"$"'),
])
def test_bad_arg(node, arg, where):
    unit = node.install()
    before = read(unit)
    assert where in fail({'arg': arg, 'method': 'unit'})
    assert read(unit) == before


@pytest.mark.parametrize('content, where', [
    ('[Unit]\nDescription=x\n', 'no [Service]'),
    ('[Service]\nType=notify\n', 'no ExecStart'),
    ('[Service]\nExecStart=/bin/k3s server\nExecStart=/bin/k3s agent\n', 'ExecStart= 2 times'),
    ('#!/bin/sh\necho hello\n', 'not a systemd unit file'),
    ("[Service]\nExecStart=/bin/k3s server '--a\n", 'unbalanced single quote'),
    ('[Service]\nExecStart=/bin/k3s server "--a\n', 'unbalanced double quote'),
    ('[Service]\nExecStart=/bin/k3s server --a\\q\n', 'invalid escape'),
    ('[Service]\nExecStart=/bin/k3s server ; /bin/true\n', 'several commands'),
    ('[Service\nExecStart=/bin/k3s\n', 'not a valid [Section]'),
])
def test_bad_unit(node, content, where):
    unit = os.path.join(node.etc, 'k3s.service')
    with open(unit, 'w') as f:
        f.write(content)
    msg = fail({'arg': SCHED, 'method': 'unit'})
    assert where in msg
    assert read(unit) == content.encode()


def test_conflicting_scheduler_config(node):
    unit = node.install(args=['--kube-scheduler-arg=config=/etc/other.yaml'])
    before = read(unit)
    msg = fail({'arg': SCHED})
    assert '--kube-scheduler-arg=config=/etc/other.yaml' in msg and 'merges into it' in msg
    assert read(unit) == before
    os.unlink(unit)
    node.install()
    with open(node.config, 'w') as f:
        f.write('kube-scheduler-arg:\n  - config=/etc/from-file.yaml\n')
    assert 'config=/etc/from-file.yaml' in fail({'arg': SCHED, 'method': 'unit'})


def test_path_errors(node):
    assert 'relative' in fail({'arg': SCHED, 'path': 'k3s.service'})
    assert 'does not exist' in fail({'arg': SCHED, 'path': node.p('/nope/k3s.service')})
    assert 'no unit or init script found' in fail({'arg': SCHED, 'service': 'k3s-missing'})
    node.install()
    assert 'dropin_name' in fail({'arg': SCHED, 'dropin_name': 'x.txt'})
    assert 'config_name' in fail({'arg': SCHED, 'config_name': 'x.txt'})


def test_explicit_path(node):
    unit = node.install(systemd_dir=node.p('/opt/units'))
    r = ok({'arg': SCHED, 'method': 'unit', 'path': unit})
    assert r['path'] == unit and r['args'][-1] == SCHED


def test_restart_required_from_running_process(node, monkeypatch):
    node.install(args=['--disable=traefik'])
    monkeypatch.setattr(_service_arg, 'main_pid', lambda host, kind, service, pidfile=None: 4242)
    cmdline = ['/usr/local/bin/k3s', 'server', '--disable=traefik']
    monkeypatch.setattr(_service_arg, 'proc_cmdline', lambda pid: list(cmdline))
    monkeypatch.setattr(_service_arg, 'proc_start_time', lambda pid: time.time() + 3600)
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['running'] and r['restart_required'] is True
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert not r['changed'] and r['restart_required'] is True  # still the old command line
    cmdline.append(SCHED)
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['restart_required'] is False
    # k3s hides its arguments: fall back to file times
    cmdline[:] = ['/usr/local/bin/k3s', 'server']
    assert ok({'arg': SCHED, 'method': 'unit'})['restart_required'] is False
    monkeypatch.setattr(_service_arg, 'proc_start_time', lambda pid: 0.0)
    assert ok({'arg': SCHED, 'method': 'unit'})['restart_required'] is True


def test_restart_required_config(node, monkeypatch):
    node.install()
    monkeypatch.setattr(_service_arg, 'main_pid', lambda host, kind, service, pidfile=None: 4242)
    monkeypatch.setattr(_service_arg, 'proc_cmdline', lambda pid: ['/usr/local/bin/k3s', 'server'])
    start = [0.0]
    monkeypatch.setattr(_service_arg, 'proc_start_time', lambda pid: start[0])
    assert ok({'arg': SCHED})['restart_required'] is True
    start[0] = time.time() + 3600
    r = ok({'arg': SCHED})
    assert not r['changed'] and r['restart_required'] is False


def test_not_running_is_reported(node):
    node.install()
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['restart_required'] is False and any('not running' in w for w in r['warnings'])


def test_rke2_server_gets_the_flag_in_its_own_config_dir(node, monkeypatch):
    rke2_config = node.p('/etc/rancher/rke2/config.yaml')
    usr_local = node.p('/usr/local/lib/systemd/system')
    monkeypatch.setattr(_service_arg, 'UNIT_DIRS', [node.etc, usr_local, node.usr])
    monkeypatch.setattr(_k3s_config, 'RKE2_CONFIG_FILE', rke2_config)
    for f in installer.rke2_files('server'):
        path = node.p(f.path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as fh:
            fh.write(f.content)
    unit = os.path.join(usr_local, 'rke2-server.service')
    os.makedirs(os.path.dirname(rke2_config))
    with open(rke2_config, 'w') as fh:
        fh.write('kube-scheduler-arg: [v=2]\n')
    before = read(unit)
    arg = '--kube-scheduler-arg=config=/etc/rancher/rke2/kube-scheduler/config.yaml'
    r = ok({'arg': arg, 'service': 'rke2-server'})
    ours = rke2_config + '.d/99-baremetal-k3s-scheduler.yaml'
    assert r['changed'] and r['method'] == 'config' and r['path'] == ours
    assert r['args'] == ['/usr/local/bin/rke2', 'server']
    assert r['k3s_args'] == ['/usr/local/bin/rke2', 'server', '--kube-scheduler-arg=v=2', arg]
    assert b'kube-scheduler-arg+:' in read(ours) and read(unit) == before
    assert not os.path.exists(node.own_config())  # k3s's directory is not RKE2's
    mount = '--kube-scheduler-extra-mount=/etc/rancher/rke2/ca.pem:/etc/rancher/rke2/ca.pem:ro'
    r = ok({'arg': mount, 'service': 'rke2-server'})
    assert r['changed'] and r['path'] == ours and r['k3s_args'][-1] == mount
    assert not ok({'arg': arg, 'service': 'rke2-server'})['changed']
    ok({'arg': mount, 'service': 'rke2-server', 'state': 'absent'})
    r = ok({'arg': arg, 'service': 'rke2-server', 'state': 'absent'})
    assert r['changed'] and not os.path.exists(ours) and read(unit) == before
