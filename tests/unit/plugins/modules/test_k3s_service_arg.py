# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the k3s_service_arg module, on installer-format files in a fake node root."""

from __future__ import annotations

import os

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config
from ansible_collections.baremetal.k3s.plugins.module_utils import _service
from ansible_collections.baremetal.k3s.plugins.modules import k3s_service_arg

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import BOOT, node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok

import installer  # pylint: disable=import-error

SCHED = '--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml'
UNIT = '/etc/systemd/system/k3s.service'
USR_UNIT = '/usr/lib/systemd/system/k3s.service'
DROPIN = '/etc/systemd/system/k3s.service.d/99-baremetal-k3s.conf'
CONFIG = '/etc/rancher/k3s/config.yaml'
OWN_CONFIG = '/etc/rancher/k3s/config.yaml.d/99-baremetal-k3s-scheduler.yaml'


def ok(args, **kw):
    return module_ok(k3s_service_arg, args, **kw)


def fail(args, **kw):
    return module_fail(k3s_service_arg, args, **kw)


def file_flags(node, config_file=CONFIG):
    """The flags k3s makes of its config files on the fake node."""
    view = _io.node_view(None)
    return _k3s_config.to_flags(_k3s_config.merge(
        _service.config_documents(view, _service.config_files(view, config_file))))


def snapshot(node):
    """Every file under the node's /etc, with its bytes (to prove that nothing changed)."""
    out = {}
    for d, dummy, files in os.walk(node.p('/etc')):
        for name in files:
            with open(os.path.join(d, name), 'rb') as f:
                out[os.path.relpath(os.path.join(d, name), node.root)] = f.read()
    return out


@pytest.mark.parametrize('args', [[], ['--disable=traefik'], ["--node-label=it's", 'a b', '--kube-scheduler-arg=v=2']])
def test_unit_present_twice_then_absent_is_identical(node, args):
    unit = node.install(args=args)
    before = node.read(unit)
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['changed'] and r['method'] == 'unit' and r['path'] == unit == UNIT
    assert r['args'] == ['/usr/local/bin/k3s', 'server'] + args + [SCHED]
    assert r['daemon_reload_required'] is True and r['restart_required'] is False and r['running'] is False
    assert node.read(unit).endswith(b"\t'%s' \\\n\n" % SCHED.encode())
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert not r['changed'] and r['args'][-1] == SCHED
    r = ok({'arg': SCHED, 'method': 'unit', 'state': 'absent'})
    assert r['changed'] and SCHED not in r['args']
    assert node.read(unit) == before


def test_check_mode_and_diff_do_not_write(node):
    unit = node.install(args=['--disable=traefik'])
    before = node.read(unit)
    r = ok({'arg': SCHED, 'method': 'unit'}, check_mode=True, diff=True)
    assert r['changed'] and node.read(unit) == before
    assert r['diff'][0]['before'] == before.decode() and SCHED in r['diff'][0]['after']
    assert r['diff'][0]['before_header'] == unit


def test_backup(node):
    unit = node.install()
    before = node.read(unit)
    r = ok({'arg': SCHED, 'method': 'unit', 'backup': True})
    assert r['backup_file'] and node.read(r['backup_file']) == before
    assert r['files'] == [{'path': unit, 'action': 'modified', 'backup_file': r['backup_file']}]


def test_files_tell_how_to_undo_each_change(node):
    node.install()
    r = ok({'arg': SCHED, 'backup': True}, check_mode=True)
    assert r['files'] == [{'path': OWN_CONFIG, 'action': 'created', 'backup_file': None}]
    r = ok({'arg': SCHED, 'backup': True})
    assert r['files'] == [{'path': OWN_CONFIG, 'action': 'created', 'backup_file': None}]
    r = ok({'arg': SCHED, 'state': 'absent', 'backup': True})
    assert [(f['path'], f['action']) for f in r['files']] == [(OWN_CONFIG, 'removed')]
    assert 'config=/etc/rancher/k3s/kube-scheduler/config.yaml' in node.read(r['files'][0]['backup_file']).decode()
    assert ok({'arg': SCHED, 'state': 'absent'})['files'] == []


def test_crlf_comments_and_user_flags_kept(node):
    text = ('# local edit\r\n[Unit]\r\nDescription=k3s\r\n\r\n[Service]\r\nType=notify\r\n'
            'ExecStart=/usr/local/bin/k3s server --debug \\\r\n'
            '# a comment inside the continuation\r\n'
            "\t'--disable=traefik' \\\r\n\r\n[Install]\r\nWantedBy=multi-user.target\r\n")
    node.write(UNIT, text)
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['args'] == ['/usr/local/bin/k3s', 'server', '--debug', '--disable=traefik', SCHED]
    assert b"\t'%s' \\\r\n\r\n[Install]" % SCHED.encode() in node.read(UNIT)
    ok({'arg': SCHED, 'method': 'unit', 'state': 'absent'})
    assert node.read(UNIT) == text.encode()


def test_auto_prefers_config_and_absent_removes_it(node):
    unit = node.install(args=['--disable=traefik'])
    before = node.read(unit)
    r = ok({'arg': SCHED})
    assert r['method'] == 'config' and r['path'] == OWN_CONFIG
    assert node.read(unit) == before
    assert r['args'] == ['/usr/local/bin/k3s', 'server', '--disable=traefik']
    assert r['k3s_args'] == ['/usr/local/bin/k3s', 'server', SCHED, '--disable=traefik']
    assert 'kube-scheduler-arg+:' in node.read(OWN_CONFIG).decode()
    assert file_flags(node) == [SCHED]
    assert node.mode(OWN_CONFIG) == 0o600
    assert not ok({'arg': SCHED})['changed']
    r = ok({'arg': SCHED, 'state': 'absent'})
    assert r['changed'] and not node.exists(OWN_CONFIG)
    # config.yaml.d was made for our file: it goes with it; /etc/rancher/k3s was there before
    assert not node.exists('/etc/rancher/k3s/config.yaml.d') and node.exists('/etc/rancher/k3s')


def test_config_appends_to_existing_lists(node):
    node.install()
    node.makedirs(CONFIG + '.d')
    node.write(CONFIG, 'kube-scheduler-arg:\n- v=2\n')
    ok({'arg': SCHED, 'method': 'config'})
    ok({'arg': '--kube-scheduler-arg=leader-elect=false', 'method': 'config'})
    assert file_flags(node) == [
        '--kube-scheduler-arg=v=2', '--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml',
        '--kube-scheduler-arg=leader-elect=false']
    ok({'arg': SCHED, 'method': 'config', 'state': 'absent'})
    assert file_flags(node) == ['--kube-scheduler-arg=v=2', '--kube-scheduler-arg=leader-elect=false']
    assert node.exists(CONFIG + '.d')  # it was there before: kept


def test_auto_uses_unit_when_cli_passes_the_flag(node):
    unit = node.install(args=['--kube-scheduler-arg=v=2'])
    r = ok({'arg': SCHED})
    assert r['method'] == 'unit' and r['args'][-1] == SCHED
    assert not node.exists(OWN_CONFIG)
    assert r['path'] == unit


def test_config_refused_when_cli_passes_the_flag(node):
    node.install(args=['--kube-scheduler-arg=v=2'])
    msg = fail({'arg': SCHED, 'method': 'config'})
    assert '--kube-scheduler-arg=v=2' in msg and 'method=unit' in msg


def test_readonly_unit(node):
    unit = node.install(systemd_dir='/usr/lib/systemd/system')
    before = node.read(unit)
    node.readonly.add('/usr/lib/systemd/system')
    msg = fail({'arg': SCHED, 'method': 'unit'})
    assert 'dropin' in msg and 'config' in msg and 'read-only' in msg
    r = ok({'arg': '--kube-apiserver-arg=v=2', 'method': 'dropin'})
    assert r['method'] == 'dropin' and r['path'] == DROPIN
    assert any('masked' in w for w in r['warnings'])
    data = node.read(DROPIN).decode()
    assert '[Service]\nExecStart=\nExecStart=/usr/local/bin/k3s \\\n    server \\\n' in data
    assert r['args'] == ['/usr/local/bin/k3s', 'server', '--kube-apiserver-arg=v=2']
    assert node.read(unit) == before
    assert not ok({'arg': '--kube-apiserver-arg=v=2', 'method': 'dropin'})['changed']
    r = ok({'arg': '--kube-apiserver-arg=v=2', 'state': 'absent'})
    assert r['changed'] and not node.exists(DROPIN)
    assert not node.exists(os.path.dirname(DROPIN))  # made for our drop-in, gone with it


def test_auto_falls_back_to_dropin(node):
    node.install(systemd_dir='/usr/lib/systemd/system', args=['--kube-scheduler-arg=v=2'])
    node.readonly.add('/usr/lib/systemd/system')
    r = ok({'arg': SCHED})
    assert r['method'] == 'dropin' and r['args'][-1] == SCHED
    assert not ok({'arg': SCHED})['changed']


def test_dropin_two_args_and_foreign_dropin(node):
    node.install(args=['--disable=traefik'])
    ok({'arg': '--a-arg=1', 'method': 'dropin'})
    r = ok({'arg': '--b-arg=2', 'method': 'dropin'})
    assert r['args'] == ['/usr/local/bin/k3s', 'server', '--disable=traefik', '--a-arg=1', '--b-arg=2']
    assert r['own_args'] == ['--a-arg=1', '--b-arg=2']
    r = ok({'arg': '--a-arg=1', 'method': 'dropin', 'state': 'absent'})
    assert r['args'] == ['/usr/local/bin/k3s', 'server', '--disable=traefik', '--b-arg=2']
    node.write(DROPIN, '[Service]\nExecStart=\nExecStart=/bin/true\n')
    assert 'not written by this module' in fail({'arg': '--a-arg=1', 'method': 'dropin'})


def test_unit_edit_under_user_dropin_is_refused_as_without_effect(node):
    unit = node.install()
    node.write('/etc/systemd/system/k3s.service.d/10-user.conf', '[Service]\nExecStart=\nExecStart=/usr/local/bin/k3s server --debug\n')
    before = node.read(unit)
    msg = fail({'arg': '--kube-apiserver-arg=v=2', 'method': 'unit'})
    assert 'would have no effect' in msg and '10-user.conf, a drop-in, replaces the one in %s' % UNIT in msg
    assert node.read(unit) == before
    r = ok({'arg': '--kube-apiserver-arg=v=2'})  # auto: config.yaml.d reaches it
    assert r['method'] == 'config' and r['args'] == ['/usr/local/bin/k3s', 'server', '--debug']


def test_openrc(node):
    script = node.install(init='openrc', args=['--disable=traefik'])
    before = node.read(script)
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['path'] == script == '/etc/init.d/k3s'
    assert r['args'] == ['/usr/local/bin/k3s', 'server', '--disable=traefik', SCHED]
    assert r['daemon_reload_required'] is False
    assert not ok({'arg': SCHED, 'method': 'unit'})['changed']
    ok({'arg': SCHED, 'state': 'absent'})
    assert node.read(script) == before
    assert 'openrc' in fail({'arg': SCHED, 'method': 'dropin'})


def test_agent_and_named_services(node):
    agent = node.install(command='agent')
    named = node.install(name='edge')
    r = ok({'arg': '--kubelet-arg=v=2', 'service': 'k3s-agent', 'method': 'unit'})
    assert r['path'] == agent and r['args'] == ['/usr/local/bin/k3s', 'agent', '--kubelet-arg=v=2']
    r = ok({'arg': '--kubelet-arg=v=2', 'service': 'k3s-edge', 'method': 'unit'})
    assert r['path'] == named


def test_env_file_and_config_path(node):
    unit = node.install(args=['--config', '/srv/k3s.yaml'])
    node.makedirs('/srv')
    r = ok({'arg': SCHED})
    assert r['path'] == '/srv/k3s.yaml.d/99-baremetal-k3s-scheduler.yaml'
    node.write(unit + '.env', "K3S_CONFIG_FILE='/srv/other.yaml'\n")
    r = ok({'arg': '--kube-scheduler-arg=v=3'})
    assert r['path'] == '/srv/other.yaml.d/99-baremetal-k3s-scheduler.yaml'


@pytest.mark.parametrize('arg, where', [
    ('', 'empty'),
    ('kube-scheduler-arg=x', 'start with "--"'),
    ('--', 'start with "--"'),
    ('--a\n--b', 'control character'),
    ('--a=x\x00y', 'control character'),
    ('--a=x\ry', 'control character'),
    ('--a=x\x1by', 'control character'),
    ('--a=x\x7f', 'control character'),
    (' --a=1', 'start with "--"'),
    ('--a=1 ', 'white space'),
    ('--a=$HOME', '"$"'),
])
@pytest.mark.parametrize('method', ['unit', 'auto', 'config'])
def test_bad_arg_changes_nothing(node, arg, where, method):
    node.install()
    before = snapshot(node)
    if where == '"$"' and method == 'config':
        return  # "$" is fine in a config file
    assert where in fail({'arg': arg, 'method': method})
    assert snapshot(node) == before


def test_a_tab_in_an_argument_is_kept(node):
    node.install()
    r = ok({'arg': '--node-label=a\tb', 'method': 'unit'})
    assert r['args'][-1] == '--node-label=a\tb'
    ok({'arg': '--node-label=a\tb', 'method': 'unit', 'state': 'absent'})


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
    node.write(UNIT, content)
    msg = fail({'arg': SCHED, 'method': 'unit'})
    assert where in msg
    assert node.read(UNIT) == content.encode()


def test_masked_and_empty_units(node):
    node.symlink('/dev/null', UNIT)
    assert 'masked' in fail({'arg': SCHED})
    node.unlink(UNIT)
    node.write(UNIT, '')
    assert 'masked or empty' in fail({'arg': SCHED})


# -- a scheduler config given in any form k3s accepts -----------------------------------------------
@pytest.mark.parametrize('where, setup', [
    ('unit', {'args': ['--kube-scheduler-arg=config=/etc/other.yaml']}),
    ('unit', {'args': ['--kube-scheduler-arg=--config=/etc/other.yaml']}),
    ('unit', {'args': ['--kube-scheduler-arg=-config=/etc/other.yaml']}),
    ('unit', {'args': ['--kube-scheduler-arg', '--config=/etc/other.yaml']}),
    ('unit', {'args': ['-kube-scheduler-arg=config=/etc/other.yaml']}),
    ('config', 'kube-scheduler-arg:\n  - config=/etc/other.yaml\n'),
    ('config', 'kube-scheduler-arg: [--config=/etc/other.yaml]\n'),
    ('config', 'kube-scheduler-arg: --config=/etc/other.yaml\n'),
    ('config', 'kube-scheduler-arg+:\n- "--config=/etc/other.yaml"\n'),
    ('config', 'kube-scheduler-arg:\n  - v=2\n  - config=/etc/other.yaml   # theirs\n'),
    ('dropin', 'kube-scheduler-arg+: [config=/etc/other.yaml]\n'),
])
@pytest.mark.parametrize('method', ['auto', 'unit', 'config', 'dropin'])
def test_a_different_scheduler_config_in_any_form_is_a_conflict(node, where, setup, method):
    if where == 'unit':
        node.install(**setup)
    else:
        node.install()
        node.write(CONFIG if where == 'config' else '/etc/rancher/k3s/config.yaml.d/50-user.yaml', setup)
    before = snapshot(node)
    msg = fail({'arg': SCHED, 'method': method})
    assert 'a different scheduler config is already in use' in msg and '/etc/other.yaml' in msg
    assert snapshot(node) == before


@pytest.mark.parametrize('form', ['config=/etc/rancher/k3s/kube-scheduler/config.yaml',
                                  '--config=/etc/rancher/k3s/kube-scheduler/config.yaml'])
def test_the_same_config_already_given_in_another_form_is_not_added_again(node, form):
    node.install()
    node.write(CONFIG, 'kube-scheduler-arg: [%s]\n' % form)
    before = snapshot(node)
    r = ok({'arg': SCHED})
    assert not r['changed'] and r['method'] == 'elsewhere' and snapshot(node) == before


def test_a_value_given_in_the_users_config_is_not_added_again(node):
    node.install()
    node.write(CONFIG, 'kube-apiserver-arg:\n- v=2\n')
    r = ok({'arg': '--kube-apiserver-arg=v=2'})
    assert not r['changed'] and r['method'] == 'elsewhere' and not node.exists(OWN_CONFIG)


@pytest.mark.parametrize('later', [
    'kube-scheduler-arg: [v=4]\n',
    'kube-scheduler-arg:\n- v=4\n',
    'kube-scheduler-arg: v=4\n',
])
def test_a_later_file_that_replaces_our_list_is_named_and_nothing_written(node, later):
    node.install()
    node.write('/etc/rancher/k3s/config.yaml.d/zz-user.yaml', later)
    before = snapshot(node)
    msg = fail({'arg': SCHED})
    assert 'would have no effect' in msg and 'zz-user.yaml sets "kube-scheduler-arg:" without "+"' in msg
    assert snapshot(node) == before


def test_a_later_file_that_appends_is_fine(node):
    node.install()
    node.write('/etc/rancher/k3s/config.yaml.d/zz-user.yaml', 'kube-scheduler-arg+: [v=4]\n')
    r = ok({'arg': SCHED})
    assert r['changed'] and r['k3s_args'][2:4] == [SCHED, '--kube-scheduler-arg=v=4']


# -- path, service and drop-ins of others ----------------------------------------------------------------
def test_path_of_another_service_gives_the_service(node):
    node.install()
    agent = node.install(command='agent')
    r = ok({'arg': '--kubelet-arg=v=2', 'path': agent, 'method': 'dropin'})
    assert r['path'] == '/etc/systemd/system/k3s-agent.service.d/99-baremetal-k3s.conf'
    assert r['args'][:2] == ['/usr/local/bin/k3s', 'agent']
    assert not node.exists(DROPIN)
    msg = fail({'arg': '--kubelet-arg=v=2', 'path': agent, 'service': 'k3s'})
    assert 'belongs to service k3s-agent, but service is k3s' in msg


def test_absent_for_an_argument_in_someone_elses_dropin_creates_nothing(node):
    node.install()
    node.write('/etc/systemd/system/k3s.service.d/10-admin.conf',
               '[Service]\nExecStart=\nExecStart=/usr/local/bin/k3s server --kube-apiserver-arg=v=2\n')
    before = snapshot(node)
    msg = fail({'arg': '--kube-apiserver-arg=v=2', 'state': 'absent'})
    assert '10-admin.conf' in msg and 'did not write' in msg
    assert snapshot(node) == before and not node.exists(DROPIN)


def test_absent_for_an_argument_in_someone_elses_config_file(node):
    node.install()
    node.write(CONFIG, 'kube-apiserver-arg: [v=2]\n')
    before = snapshot(node)
    msg = fail({'arg': '--kube-apiserver-arg=v=2', 'state': 'absent'})
    assert CONFIG in msg and 'does not own' in msg
    assert snapshot(node) == before
    r = ok({'arg': '--kube-apiserver-arg=v=2', 'state': 'absent', 'method': 'config'})
    assert not r['changed'] and any(CONFIG in w for w in r['warnings'])


def test_symlinked_unit_is_edited_through_the_link(node):
    target = node.install(systemd_dir='/opt/units')
    node.symlink(target, UNIT)
    before = node.read(target)
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['path'] == UNIT and os.path.islink(node.p(UNIT))
    assert SCHED.encode() in node.read(target)
    ok({'arg': SCHED, 'method': 'unit', 'state': 'absent'})
    assert node.read(target) == before and os.path.islink(node.p(UNIT))


def test_conflicting_scheduler_config_names_the_file(node):
    unit = node.install(args=['--kube-scheduler-arg=config=/etc/other.yaml'])
    before = node.read(unit)
    msg = fail({'arg': SCHED})
    assert '--kube-scheduler-arg=config=/etc/other.yaml' in msg and 'merges into it' in msg and UNIT in msg
    assert node.read(unit) == before
    node.unlink(unit)
    node.install()
    node.write(CONFIG, 'kube-scheduler-arg:\n  - config=/etc/from-file.yaml\n')
    msg = fail({'arg': SCHED, 'method': 'unit'})
    assert 'config=/etc/from-file.yaml' in msg and CONFIG in msg


def test_path_errors(node):
    assert 'relative' in fail({'arg': SCHED, 'path': 'k3s.service'})
    assert 'does not exist' in fail({'arg': SCHED, 'path': '/nope/k3s.service'})
    assert 'no unit or init script found' in fail({'arg': SCHED, 'service': 'k3s-missing'})
    assert 'not a valid service name' in fail({'arg': SCHED, 'service': '../k3s'})
    node.install()
    assert 'dropin_name' in fail({'arg': SCHED, 'dropin_name': 'x.txt'})
    assert 'config_name' in fail({'arg': SCHED, 'config_name': 'x.txt'})
    assert 'not paths' in fail({'arg': SCHED, 'config_name': 'a/b.yaml'})
    node.makedirs('/etc/systemd/system/dir.service')
    assert 'is a directory' in fail({'arg': SCHED, 'path': '/etc/systemd/system/dir.service'})


def test_explicit_path(node):
    unit = node.install(systemd_dir='/opt/units')
    r = ok({'arg': SCHED, 'method': 'unit', 'path': unit})
    assert r['path'] == unit and r['args'][-1] == SCHED


# -- the running service ----------------------------------------------------------------------------
def test_restart_required_from_running_process(node):
    node.install(args=['--disable=traefik'])
    node.service('k3s', pid=4242)
    cmdline = ['/usr/local/bin/k3s', 'server', '--disable=traefik']
    node.process(4242, cmdline, started=BOOT + 10 ** 6)
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['running'] and r['restart_required'] is True
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert not r['changed'] and r['restart_required'] is True  # still the old command line
    node.process(4242, cmdline + [SCHED], started=BOOT + 10 ** 9)
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['restart_required'] is False
    # k3s hides its arguments: fall back to file times
    node.process(4242, ['/usr/local/bin/k3s', 'server'], started=BOOT + 10 ** 9)
    assert ok({'arg': SCHED, 'method': 'unit'})['restart_required'] is False
    node.process(4242, ['/usr/local/bin/k3s', 'server'], started=BOOT)
    assert ok({'arg': SCHED, 'method': 'unit'})['restart_required'] is True


def test_restart_required_config(node):
    node.install()
    node.service('k3s', pid=4242)
    node.process(4242, ['/usr/local/bin/k3s', 'server'], started=BOOT)
    assert ok({'arg': SCHED})['restart_required'] is True
    node.process(4242, ['/usr/local/bin/k3s', 'server'], started=BOOT + 10 ** 9)
    r = ok({'arg': SCHED})
    assert not r['changed'] and r['restart_required'] is False


def test_daemon_reload_from_systemd(node):
    node.install()
    node.service('k3s', need_reload=True)
    r = ok({'arg': SCHED})
    assert r['daemon_reload_required'] is True


def test_not_running_is_reported(node):
    node.install()
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['restart_required'] is False and any('not running' in w for w in r['warnings'])


def test_openrc_pid_is_supervise_daemons_child(node):
    node.install(init='openrc')
    node.write('/var/run/k3s.pid', '100\n')
    node.process(100, ['supervise-daemon', 'k3s'])
    node.process(101, ['/usr/local/bin/k3s', 'server'], ppid=100, started=BOOT)
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['running'] and r['restart_required'] is True


def test_rke2_server_gets_the_flag_in_its_own_config_dir(node):
    rke2_config = '/etc/rancher/rke2/config.yaml'
    for f in installer.rke2_files('server'):
        node.write(f.path, f.content)
    unit = '/usr/local/lib/systemd/system/rke2-server.service'
    node.write(rke2_config, 'kube-scheduler-arg: [v=2]\n')
    before = node.read(unit)
    arg = '--kube-scheduler-arg=config=/etc/rancher/rke2/kube-scheduler/config.yaml'
    r = ok({'arg': arg, 'service': 'rke2-server'})
    ours = rke2_config + '.d/99-baremetal-k3s-scheduler.yaml'
    assert r['changed'] and r['method'] == 'config' and r['path'] == ours
    assert r['args'] == ['/usr/local/bin/rke2', 'server']
    assert r['k3s_args'] == ['/usr/local/bin/rke2', 'server', '--kube-scheduler-arg=v=2', arg]
    assert b'kube-scheduler-arg+:' in node.read(ours) and node.read(unit) == before
    assert not node.exists(OWN_CONFIG)  # k3s's directory is not RKE2's
    mount = '--kube-scheduler-extra-mount=/etc/rancher/rke2/ca.pem:/etc/rancher/rke2/ca.pem:ro'
    r = ok({'arg': mount, 'service': 'rke2-server'})
    assert r['changed'] and r['path'] == ours and r['k3s_args'][-1] == mount
    assert r['own_args'] == [arg, mount]
    assert not ok({'arg': arg, 'service': 'rke2-server'})['changed']
    ok({'arg': mount, 'service': 'rke2-server', 'state': 'absent'})
    r = ok({'arg': arg, 'service': 'rke2-server', 'state': 'absent'})
    assert r['changed'] and not node.exists(ours) and node.read(unit) == before


def test_specifiers_are_expanded_as_systemd_does(node):
    node.write('/etc/machine-id', '0123456789abcdef0123456789abcdef\n')
    unit = node.install(args=['--node-name=%H', '--data-dir=/srv/%N-%m'])
    before = node.read(unit)
    r = ok({'arg': SCHED, 'method': 'unit'})
    assert r['args'][2:4] == ['--node-name=Node-1.Example', '--data-dir=/srv/k3s-0123456789abcdef0123456789abcdef']
    ok({'arg': '--kube-apiserver-arg=x=100%', 'method': 'unit'})
    assert b"'--kube-apiserver-arg=x=100%%'" in node.read(unit)  # written so that systemd passes "100%" on
    ok({'arg': '--kube-apiserver-arg=x=100%', 'method': 'unit', 'state': 'absent'})
    ok({'arg': SCHED, 'method': 'unit', 'state': 'absent'})
    assert node.read(unit) == before


def test_an_unknown_specifier_is_refused_as_systemd_refuses_the_line(node):
    node.write(UNIT, '[Service]\nExecStart=/usr/local/bin/k3s server --x=%Z\n')
    msg = fail({'arg': SCHED, 'method': 'unit'})
    assert '%Z' in msg and node.read(UNIT) == b'[Service]\nExecStart=/usr/local/bin/k3s server --x=%Z\n'
