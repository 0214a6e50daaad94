# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Table tests of _installer: the installer's files rendered byte for byte, names, quoting, env files, redaction."""

from __future__ import annotations

import os

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _installer as inst
from ansible_collections.baremetal.k3s.plugins.module_utils import _openrc
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._systemd_unit import UnitFile, parse_environment_file
from ansible_collections.baremetal.k3s.plugins.module_utils._view import View

from _variants import ARG_SETS, installer, variants  # pylint: disable=import-error

VARIANTS = variants('systemd') + variants('openrc')


def layout_of(kw):
    init = kw.get('init', 'systemd')
    return inst.Layout(init, inst.service_name(kw['command'], kw.get('name', '')), kw.get('bin_dir', inst.DEFAULT_BIN_DIR),
                       kw.get('systemd_dir', inst.DEFAULT_SYSTEMD_DIR))


@pytest.mark.parametrize('vid,kw', VARIANTS, ids=[v[0] for v in VARIANTS])
def test_rendered_files_are_the_installer_bytes(vid, kw):
    files = installer.generate(**kw)
    layout = layout_of(kw)
    warnings = []
    if kw['init'] == 'systemd':
        data = inst.render_unit(layout, kw['command'], kw['args'], kw.get('service_type', 'notify'))
    else:
        data = inst.render_script(layout, kw['command'], kw['args'], lambda a: inst.script_quote(a, warnings))
        assert inst.render_logrotate(layout) == files[2].content and layout.logrotate == files[2].path
    assert (layout.unit, data) == (files[0].path, files[0].content)
    assert layout.env == files[1].path
    assert (layout.unit_mode, inst.ENV_MODE) == (files[0].mode, files[1].mode)
    assert bool(warnings) == (kw['init'] == 'openrc' and any('\t' in a or '  ' in a for a in kw['args']))


@pytest.mark.parametrize('environ', [
    {},
    {'K3S_TOKEN': 'abc', 'K3S_URL': 'https://a:6443'},
    {'https_proxy': 'http://p:1', 'NO_PROXY': 'localhost', 'K3S_NODE_NAME': "it's", 'CONTAINERD_X': 'y'},
    {'K3S_NODE_NAME': 'nœud', 'HTTP_PROXY': 'http://p:1', 'K3S_A': 'a b'},
])
def test_env_file_is_the_installers(environ):
    assert inst.render_env(environ) == installer.env_file_content(environ)
    assert parse_environment_file(inst.render_env(environ)) == environ


def test_env_file_order_and_what_differs_from_the_installer():
    env = {'OTHER': '1', 'NO_PROXY': 'x', 'K3S_B': '2', 'CONTAINERD_A': '3', 'http_proxy': 'y'}
    assert inst.env_order(env) == ['CONTAINERD_A', 'K3S_B', 'NO_PROXY', 'http_proxy', 'OTHER']
    # the installer drops other variables and collapses runs of white space (dash's echo); values are kept here
    assert inst.render_env({'K3S_A': 'a  b', 'OTHER': 'x'}) == b"K3S_A='a  b'\nOTHER='x'\n"
    assert parse_environment_file(inst.render_env({'K3S_A': "a'b\\c\t"})) == {'K3S_A': "a'b\\c\t"}


@pytest.mark.parametrize('command,name', [('server', ''), ('agent', ''), ('server', 'edge'), ('agent', 'x.y-1'),
                                          ('server', 'A1')])
def test_service_name_is_the_installers(command, name):
    assert inst.service_name(command, name) == installer.system_name(command, name)


@pytest.mark.parametrize('name', ['a_b', 'a b', 'a/b', 'a$b', 'a;b', 'a*', 'a\tb', 'a{b}', 'a@b', "a'b", 'a:b'])
def test_service_name_refused(name):
    with pytest.raises(PlanError) as e:
        inst.service_name('server', name)
    assert repr('k3s-' + name) in e.value.msg


@pytest.mark.parametrize('arg', sum(ARG_SETS, []) + ['--x=a\\b', '--y=5%', '%n', 'a%%b'])
def test_unit_quote_reads_back_and_matches_the_installer_when_it_can(arg):
    quoted = inst.unit_quote(arg)
    if '\\' not in arg and '%' not in arg:
        assert quoted == installer.quote(arg) == inst.installer_quote(arg)
    unit = UnitFile('[Service]\nExecStart=/usr/local/bin/k3s server %s\n' % quoted)
    assert unit.parse_exec(unit.exec_start()[0]).argv[2:] == [arg]


@pytest.mark.parametrize('arg', [a for a in sum(ARG_SETS, []) if '\t' not in a and '  ' not in a] + ['--x=a\\b', 'a"b$c`d'])
def test_script_quote_reads_back(arg):
    warnings = []
    quoted = inst.script_quote(arg, warnings)
    assert not warnings
    if not any(c in arg for c in '\\$`'):
        assert quoted == inst.installer_quote_openrc(arg)
    assert _openrc.InitScript(('command_args="server %s"\n' % quoted).encode()).parse().argv == ['server', arg]


@pytest.mark.parametrize('args,secrets', [
    (['--token=abc'], ['abc']),
    (['--agent-token', 'def', '--x'], ['def']),
    (['--token-file=/etc/t', '--disable=traefik'], []),  # a path to a secret is not one
    (['-t', 'ghi', '-t=jkl', '--t=mno'], ['ghi', 'jkl', 'mno']),
    (['--datastore-endpoint=postgres://k3s:pqr@db/k3s'], ['pqr']),
    (['--disable=token'], []),
    (['--token='], []),
])
def test_secrets_of(args, secrets):
    assert inst.secrets_of(args) == secrets


@pytest.mark.parametrize('text,secrets,expected', [
    ("K3S_TOKEN='abc'\nK3S_URL='u'\n", (), "K3S_TOKEN=(hidden)\nK3S_URL='u'\n"),
    ("export k3s_agent_token=abc\n", (), "export k3s_agent_token=(hidden)\n"),
    ("\t'--token=abc' \\\n\t'--x=1' \\\n", (), "\t'--token=(hidden)' \\\n\t'--x=1' \\\n"),
    ("\t'--agent-token' \\\n\t'sekret' \\\n", ('sekret',), "\t'--agent-token' \\\n\t'(hidden)' \\\n"),
    ('command_args="server \\\n\t\'--token=abc\' \\\n', (), 'command_args="server \\\n\t\'--token=(hidden)\' \\\n'),
])
def test_redact(text, secrets, expected):
    assert inst.redact(text, secrets) == expected


@pytest.mark.parametrize('data,expected', [
    (b'', True),
    (b"K3S_TOKEN='a'\nHTTP_PROXY='b'\n", True),
    (b'# comment\n\nexport K3S_URL=x\n', True),
    (b'#!/bin/sh\nrm -rf /\n', False),
    (b'\xff\xfe', False),
    (b'K3S URL=x\n', False),
])
def test_is_env_file(data, expected):
    assert inst.is_env_file(data) is expected


# -- plan() on a plain View ----------------------------------------------------------------------------------
def _params(**kw):
    base = {'command': 'server', 'state': 'present', 'init': 'systemd'}
    base.update(kw)
    return base


def test_plan_adopts_raw_percent_the_installer_wrote(tmp_path):
    """The installer writes % raw; the module keeps that file when it is exactly the installer's for the same args."""
    installer.write(installer.generate(args=['--x=5%']), str(tmp_path))
    plan = inst.plan(View(str(tmp_path)), _params(args=['--x=5%']))
    assert not plan.changed


def test_plan_facts_and_modes(tmp_path):
    plan = inst.plan(View(str(tmp_path)), _params(name='edge', command='agent', args=['--node-label=a'],
                                                  env={'K3S_URL': 'https://a:6443', 'K3S_TOKEN': 't0k3n'}))
    assert [(c.path, c.action, c.mode) for c in plan.changes] == [
        ('/etc/systemd/system/k3s-edge.service', 'created', 0o644),
        ('/etc/systemd/system/k3s-edge.service.env', 'created', 0o600)]
    assert plan.facts == {'unit_path': '/etc/systemd/system/k3s-edge.service', 'service': 'k3s-edge', 'init': 'systemd',
                          'env_path': '/etc/systemd/system/k3s-edge.service.env', 'command': 'agent',
                          'args': ['--node-label=a'], 'restart_required': True, 'daemon_reload_required': True}
    assert 't0k3n' not in repr(plan.diff()) and 'K3S_TOKEN=(hidden)' in plan.diff()[1]['after']


def test_plan_openrc_auto(tmp_path):
    os.makedirs(str(tmp_path / 'sbin'))
    (tmp_path / 'sbin' / 'openrc-run').write_text('#!/bin/sh\n')
    plan = inst.plan(View(str(tmp_path)), _params(init='auto'))
    assert plan.facts['init'] == 'openrc' and plan.facts['unit_path'] == '/etc/init.d/k3s'
    assert plan.paths == ['/etc/init.d/k3s', '/etc/rancher/k3s/k3s.env', '/etc/logrotate.d/k3s']


def test_lock_key_is_the_services():
    assert inst.lock_key({'command': 'agent'}) == 'service-k3s-agent'
    assert inst.lock_key({'command': 'server', 'name': 'x'}) == 'service-k3s-x'
