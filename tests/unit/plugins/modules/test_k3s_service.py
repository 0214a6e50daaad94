# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the k3s_service module through its real main(), against the installer's own files (tests/integration/installer.py)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _io, _openrc
from ansible_collections.baremetal.k3s.plugins.module_utils._systemd_unit import UnitFile, parse_environment_file
from ansible_collections.baremetal.k3s.plugins.modules import k3s_service

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok

from _variants import ARG_SETS, installer, variants  # pylint: disable=import-error

UNIT = '/etc/systemd/system/k3s.service'
ENV = '/etc/systemd/system/k3s.service.env'
SCRIPT = '/etc/init.d/k3s'
OPENRC_ENV = '/etc/rancher/k3s/k3s.env'
ENVIRONS = [
    {},
    {'K3S_TOKEN': 'K10abc::server:s3cr3t', 'K3S_URL': 'https://10.0.0.1:6443'},
    {'K3S_NODE_NAME': "it's a node", 'HTTP_PROXY': 'http://proxy:3128', 'no_proxy': 'localhost,127.0.0.1',
     'CONTAINERD_HTTPS_PROXY': 'http://proxy:3128', 'K3S_KUBECONFIG_MODE': '644'},
    {'K3S_NODE_NAME': 'nœud-ü', 'K3S_DATASTORE_ENDPOINT': 'postgres://u:p@db/k3s?sslmode=disable'},
]
VARIANTS = variants('systemd') + variants('openrc')


def ok(args, **kw):
    return module_ok(k3s_service, args, **kw)


def fail(args, **kw):
    return module_fail(k3s_service, args, **kw)


def options(kw, **extra):
    """The module's options for installer.generate() keyword arguments."""
    opts = {'command': kw.get('command', 'server'), 'init': kw.get('init', 'systemd')}
    for key, option in (('name', 'name'), ('bin_dir', 'bin_dir'), ('systemd_dir', 'systemd_dir'), ('service_type', 'type')):
        if kw.get(key):
            opts[option] = kw[key]
    opts.update(extra)
    return opts


def argv_of(node, path):
    """The argv k3s is started with, as systemd (or openrc) reads the file on the node."""
    data = node.read(path)
    if path.startswith('/etc/init.d/'):
        return _openrc.InitScript(data).parse().argv
    unit = UnitFile(data)
    return unit.parse_exec(unit.exec_start()[0]).argv[1:]


# -- adoption: an installer-made node is taken over with zero changes ------------------------------------
@pytest.mark.parametrize('with_env', [False, True], ids=['env-none', 'env-equal'])
@pytest.mark.parametrize('with_args', [False, True], ids=['args-none', 'args-equal'])
@pytest.mark.parametrize('vid,kw', VARIANTS, ids=[v[0] for v in VARIANTS])
def test_installer_node_is_adopted_with_zero_changes(node, vid, kw, with_args, with_env):
    environ = ENVIRONS[VARIANTS.index((vid, kw)) % len(ENVIRONS)]
    files = installer.generate(environ=environ, **kw)
    node.install_files(files)
    if kw['init'] == 'openrc':
        node.write('/sbin/openrc-run', '#!/bin/sh\n', 0o755)
    before = node.tree()
    extra = {}
    if with_args:
        extra['args'] = kw['args']
    if with_env:
        extra['env'] = parse_environment_file(files[1].content)
    opts = options(kw, **extra)
    if kw['init'] == 'openrc' and with_args:
        opts['init'] = 'auto'  # /sbin/openrc-run decides, as it does for the installer
    r = ok(opts, diff=True)
    assert r['changed'] is False and r['files'] == [] and 'diff' not in r
    assert node.tree() == before
    assert (r['unit_path'], r['env_path']) == (files[0].path, files[1].path)
    assert r['init'] == kw['init'] and r['restart_required'] is False and r['daemon_reload_required'] is False
    assert r['service'] == installer.system_name(kw['command'], kw.get('name', ''))
    if with_args or kw['init'] == 'systemd':
        assert r['args'] == kw['args']
    else:  # what openrc passes on: a TAB reaches k3s as a space
        assert r['args'] == argv_of(node, files[0].path)[1:] == [a.replace('\t', ' ') for a in kw['args']]


def test_enough_adoption_cases():
    assert len(VARIANTS) >= 120 and {kw['init'] for dummy, kw in VARIANTS} == {'systemd', 'openrc'}


# -- a bare node gets the installer's bytes ------------------------------------------------------------------
@pytest.mark.parametrize('vid,kw', VARIANTS, ids=[v[0] for v in VARIANTS])
def test_bare_node_gets_the_installer_bytes(node, vid, kw):
    environ = ENVIRONS[VARIANTS.index((vid, kw)) % len(ENVIRONS)]
    files = installer.generate(environ=environ, **kw)
    before = node.tree()
    r = ok(options(kw, args=kw['args'], env=parse_environment_file(files[1].content)))
    assert r['changed'] is True
    assert [(f['path'], f['action']) for f in r['files']] == [(f.path, 'created') for f in files]
    for f in files:
        assert (node.read(f.path), node.mode(f.path)) == (f.content, f.mode), f.path
    new = set(node.tree()) - set(before)
    assert {p for p in new if not p.endswith('/') and not p.endswith('/' + _io.DIR_MARKER)} == {f.path for f in files}
    assert r['restart_required'] is True and r['daemon_reload_required'] is (kw['init'] == 'systemd')
    assert not ok(options(kw, args=kw['args'], env=parse_environment_file(files[1].content)))['changed']
    assert not ok(options(kw))['changed']


def test_bare_node_defaults(node):
    r = ok({})
    files = installer.generate()
    assert [f['path'] for f in r['files']] == [UNIT, ENV]
    assert node.read(UNIT) == files[0].content and node.read(ENV) == b'' and node.mode(ENV) == 0o600
    assert r['args'] == [] and r['command'] == 'server' and r['service'] == 'k3s' and r['init'] == 'systemd'


def test_check_mode_writes_nothing(node):
    before = node.tree()
    r = ok({'args': ['--disable=traefik']}, check_mode=True)
    assert r['changed'] and [f['action'] for f in r['files']] == ['created', 'created']
    assert node.tree() == before


# -- changes touch only what they must ------------------------------------------------------------------------
LOCAL = b'# local edit, kept\n'


@pytest.mark.parametrize('old,new', [([], ['--disable=traefik']), (['--disable=traefik'], []),
                                     (ARG_SETS[8], ARG_SETS[9]), (ARG_SETS[7], ARG_SETS[3])])
def test_args_change_rewrites_only_the_exec_start_lines(node, old, new):
    files = installer.generate('server', old)
    head, sep, dummy = files[0].content.partition(b'ExecStart=')
    # a local edit before and after the command: both kept byte for byte
    node.write(UNIT, head.replace(b'[Service]\n', b'[Service]\n' + LOCAL) + sep + dummy + b'Environment=FOO=bar\n')
    node.write(ENV, files[1].content, 0o600)
    r = ok({'args': new})
    assert r['changed'] and [f['path'] for f in r['files']] == [UNIT]
    want = installer.generate('server', new)[0].content
    w_head, w_sep, w_tail = want.partition(b'ExecStart=')
    assert node.read(UNIT) == w_head.replace(b'[Service]\n', b'[Service]\n' + LOCAL) + w_sep + w_tail + b'Environment=FOO=bar\n'
    assert argv_of(node, UNIT) == ['server'] + new
    assert r['args'] == new and r['restart_required'] and r['daemon_reload_required']
    assert not ok({'args': new})['changed'] and not ok({})['changed']


def test_args_change_in_crlf_unit_keeps_line_endings(node):
    text = installer.generate('server', ['--a=1'])[0].content.replace(b'\n', b'\r\n')
    node.write(UNIT, text)
    ok({'args': ['--b=2']})
    assert node.read(UNIT) == installer.generate('server', ['--b=2'])[0].content.replace(b'\n', b'\r\n')


def test_same_args_in_another_layout_are_kept(node):
    text = installer.generate('server')[0].content.replace(
        b"ExecStart=/usr/local/bin/k3s \\\n    server \\\n\n", b'ExecStart=/usr/local/bin/k3s server "--node-label=a b" --debug\n')
    node.write(UNIT, text)
    node.write(ENV, b'', 0o600)
    r = ok({'args': ['--node-label=a b', '--debug']})
    assert not r['changed'] and node.read(UNIT) == text


def test_openrc_args_change_rewrites_only_command_args(node):
    node.write('/sbin/openrc-run', '#!/bin/sh\n', 0o755)
    files = installer.generate('agent', ['--node-label=a'], init='openrc')
    node.install_files(files)
    node.write(SCRIPT.replace('k3s', 'k3s-agent'), files[0].content + LOCAL)
    r = ok({'command': 'agent', 'args': ['--node-label=b', 'it\'s "quoted"']})
    path = '/etc/init.d/k3s-agent'
    assert [f['path'] for f in r['files']] == [path] and r['daemon_reload_required'] is False and r['restart_required']
    assert node.read(path) == installer.generate('agent', ['--node-label=b', 'it\'s "quoted"'], init='openrc')[0].content + LOCAL
    assert argv_of(node, path) == ['agent', '--node-label=b', 'it\'s "quoted"']


def test_type_change_rewrites_only_the_type_line(node):
    node.install()
    r = ok({'type': 'exec'})
    assert [f['path'] for f in r['files']] == [UNIT]
    assert node.read(UNIT) == installer.generate(service_type='exec')[0].content
    assert not ok({})['changed']  # type unset: the unit's own is kept
    assert ok({'type': 'notify'})['changed']


def test_bin_dir_change_rewrites_the_exec_start_path(node):
    node.install(args=['--disable=traefik'])
    r = ok({'bin_dir': '/opt/bin'})
    assert r['changed'] and r['args'] == ['--disable=traefik']
    assert node.read(UNIT) == installer.generate(args=['--disable=traefik'], bin_dir='/opt/bin')[0].content


def test_backslash_and_percent_are_written_so_systemd_passes_them_on(node):
    args = [r'--kubelet-arg=eviction-hard=memory.available<5%', r'--x=a\b']
    r = ok({'args': args})
    assert b"'--kubelet-arg=eviction-hard=memory.available<5%%'" in node.read(UNIT)
    assert b"'--x=a\\\\b'" in node.read(UNIT)
    assert argv_of(node, UNIT) == ['server'] + args and r['args'] == args
    assert not ok({'args': args})['changed']


def test_env_change_rewrites_only_the_env_file(node):
    node.install(environ={'K3S_URL': 'https://a:6443'})
    unit = node.read(UNIT)
    r = ok({'env': {'K3S_URL': 'https://b:6443', 'NO_PROXY': 'localhost', 'K3S_TOKEN': 'tok'}})
    assert [f['path'] for f in r['files']] == [ENV]
    assert node.read(ENV) == b"K3S_TOKEN='tok'\nK3S_URL='https://b:6443'\nNO_PROXY='localhost'\n"
    assert node.read(UNIT) == unit and node.mode(ENV) == 0o600
    assert r['restart_required'] is True and r['daemon_reload_required'] is False


def test_env_none_keeps_the_file_and_equal_env_keeps_its_bytes(node):
    node.install()
    node.write(ENV, b'# by hand\nK3S_URL="https://a:6443"\n', 0o600)
    assert not ok({})['changed']
    assert not ok({'env': {'K3S_URL': 'https://a:6443'}})['changed']
    assert node.read(ENV) == b'# by hand\nK3S_URL="https://a:6443"\n'
    assert ok({'env': {}})['changed'] and node.read(ENV) == b''


def test_openrc_is_chosen_when_openrc_run_exists(node):
    node.write('/sbin/openrc-run', '#!/bin/sh\n', 0o755)
    r = ok({'args': ['--disable=traefik']})
    files = installer.generate(args=['--disable=traefik'], init='openrc')
    assert r['init'] == 'openrc' and [f['path'] for f in r['files']] == [f.path for f in files]
    assert r['unit_path'] == SCRIPT and r['env_path'] == OPENRC_ENV
    for f in files:
        assert (node.read(f.path), node.mode(f.path)) == (f.content, f.mode)
    assert not os.path.exists(node.p(UNIT))
    assert ok({'init': 'systemd'})['unit_path'] == UNIT


def test_openrc_tab_is_written_as_the_installer_does_with_a_warning(node):
    r = ok({'init': 'openrc', 'args': ['a\tb']})
    assert node.read(SCRIPT) == installer.generate(args=['a\tb'], init='openrc')[0].content
    assert any('single space' in w or 'TAB' in w for w in r['warnings'])
    assert argv_of(node, SCRIPT) == ['server', 'a b']


def test_logrotate_is_written_with_a_new_script_only(node):
    node.install(init='openrc')
    node.unlink('/etc/logrotate.d/k3s')
    assert not ok({'init': 'openrc'})['changed']
    assert not node.exists('/etc/logrotate.d/k3s')


def test_backup_and_files(node):
    node.install(args=['--a=1'])
    before = node.read(UNIT)
    r = ok({'args': ['--a=2'], 'backup': True})
    assert r['files'] == [{'path': UNIT, 'action': 'modified', 'backup_file': r['backup_file']}]
    assert node.read(r['backup_file']) == before


def test_warnings_for_a_shadowed_unit_and_an_exec_start_dropin(node):
    node.install(systemd_dir='/usr/lib/systemd/system')
    node.write('/etc/systemd/system/k3s.service.d/override.conf', '[Service]\nExecStart=\nExecStart=/usr/local/bin/k3s server\n')
    r = ok({})
    assert any('/usr/lib/systemd/system/k3s.service also exists' in w for w in r['warnings'])
    assert any('override.conf sets ExecStart' in w for w in r['warnings'])


def test_diff_hides_tokens(node):
    node.install(args=['--token=old-secret'], environ={'K3S_TOKEN': 'old-env-secret'})
    r = ok({'args': ['--token=new-secret', '--agent-token', 'agent-secret'],
            'env': {'K3S_TOKEN': 'new-env-secret', 'K3S_URL': 'https://a:6443'}}, diff=True)
    text = repr(r['diff'])
    for secret in ('old-secret', 'new-secret', 'agent-secret', 'old-env-secret', 'new-env-secret'):
        assert secret not in text
    assert "K3S_TOKEN=(hidden)" in text and "--token=(hidden)" in text and 'https://a:6443' in text


# -- refusals: nothing written ---------------------------------------------------------------------------------
FOREIGN = '[Unit]\nDescription=x\n[Service]\nExecStart=/usr/bin/foo server\n'


@pytest.mark.parametrize('setup,opts,words', [
    (lambda n: n.write(UNIT, FOREIGN), {}, ['/usr/bin/foo', 'not k3s']),
    (lambda n: n.write(UNIT, FOREIGN), {'state': 'absent'}, ['/usr/bin/foo', 'not k3s']),
    (lambda n: n.write(UNIT, '[Unit]\nDescription=x\n'), {}, ['no [Service]']),
    (lambda n: n.write(UNIT, '[Service]\nType=oneshot\n'), {}, ['no ExecStart']),
    (lambda n: n.install('agent', name=''), {'command': 'server', 'name': 'agent'}, ['k3s agent', 'command=agent']),
    (lambda n: n.write('/etc/init.d/k3s', '#!/sbin/openrc-run\ncommand="/usr/bin/other"\ncommand_args="server"\n'),
     {'init': 'openrc'}, ['/usr/bin/other', 'not k3s']),
    (lambda n: None, {'args': ['--a=1\n--b=2']}, ['control character']),
    (lambda n: None, {'args': ['--token=s3cret\x01']}, ['control character', '(hidden)']),
    (lambda n: None, {'env': {'BAD-KEY': 'x'}}, ['BAD-KEY', 'variable name']),
    (lambda n: None, {'env': {'1X': 'x'}}, ['1X', 'variable name']),
    (lambda n: None, {'env': {'K3S_URL': 'a\nb'}}, ['K3S_URL', 'control character']),
    (lambda n: None, {'env': {'K3S_URL': None}}, ['K3S_URL', 'null']),
    (lambda n: None, {'args': ['--x=$HOME']}, ['"$"', 'env']),
    (lambda n: None, {'name': 'a_b'}, ["'_'", 'k3s-a_b']),
    (lambda n: None, {'name': 'a b'}, ['k3s-a b']),
    (lambda n: None, {'bin_dir': 'opt/bin'}, ['not an absolute path']),
    (lambda n: n.readonly.add('/usr/lib/systemd/system'), {'systemd_dir': '/usr/lib/systemd/system'},
     ['cannot be written', 'systemd_dir=/etc/systemd/system']),
    (lambda n: n.symlink('/dev/null', UNIT), {}, ['/dev/null', 'unmask']),
    (lambda n: n.makedirs(UNIT), {}, ['is a directory']),
], ids=['foreign-unit', 'foreign-unit-absent', 'no-service-section', 'no-exec-start', 'other-command', 'foreign-openrc',
        'newline-arg', 'control-in-token', 'env-dash', 'env-digit', 'env-newline', 'env-null', 'dollar', 'name-underscore',
        'name-space', 'relative-bin-dir', 'read-only', 'masked', 'directory'])
def test_refusals_write_nothing(node, setup, opts, words):
    setup(node)
    before = node.tree()
    msg = fail(opts)
    for w in words:
        assert w in msg, msg
    assert 's3cret' not in msg
    assert node.tree() == before


def test_dollar_in_an_adopted_unit_is_kept(node):
    node.install(args=['--node-name=$HOSTNAME'])
    assert not ok({'args': ['--node-name=$HOSTNAME']})['changed']


# -- absent -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize('vid,kw', [v for v in VARIANTS if 'args1-' in v[0] or 'args8-' in v[0]],
                         ids=[v[0] for v in VARIANTS if 'args1-' in v[0] or 'args8-' in v[0]])
def test_absent_removes_exactly_the_unit_and_env_file(node, vid, kw):
    files = installer.generate(environ={'K3S_TOKEN': 't'}, **kw)
    node.install_files(files)
    node.write(kw.get('bin_dir', '/usr/local/bin') + '/k3s', b'\x7fELF', 0o755)
    node.write('/etc/rancher/k3s/config.yaml', 'disable: traefik\n')
    before = node.tree()
    r = ok(options(kw, state='absent'))
    assert r['changed'] and [(f['path'], f['action']) for f in r['files']] == [(files[0].path, 'removed'),
                                                                               (files[1].path, 'removed')]
    after = node.tree()
    assert set(before) - set(after) == {files[0].path, files[1].path}
    assert all(after[p] == before[p] for p in after)
    assert r['daemon_reload_required'] is (kw['init'] == 'systemd') and r['restart_required'] is False and r['args'] == []
    assert not ok(options(kw, state='absent'))['changed']


def test_absent_refuses_another_bin_dir_and_a_foreign_env_file(node):
    node.install(bin_dir='/opt/bin')
    before = node.tree()
    msg = fail({'state': 'absent'})
    assert 'bin_dir=/opt/bin' in msg and node.tree() == before
    assert ok({'state': 'absent', 'bin_dir': '/opt/bin'})['changed']
    node.write(ENV, '#!/bin/sh\nrm -rf /\n')
    msg = fail({'state': 'absent'})
    assert 'not an environment file' in msg and node.exists(ENV)


def test_absent_warns_when_still_enabled(node):
    node.install()
    node.symlink(UNIT, '/etc/systemd/system/multi-user.target.wants/k3s.service')
    r = ok({'state': 'absent'})
    assert any('systemctl disable k3s' in w for w in r['warnings'])


def test_absent_on_a_bare_node_changes_nothing(node):
    before = node.tree()
    r = ok({'state': 'absent', 'command': 'agent'})
    assert not r['changed'] and node.tree() == before and r['service'] == 'k3s-agent'
