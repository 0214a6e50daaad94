# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Table tests of command_args parsing and editing, checked against a real shell where there is one."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _openrc
from ansible_collections.baremetal.k3s.plugins.module_utils._systemd_unit import ParseError

from _variants import installer, variants  # pylint: disable=import-error

SCHED = '--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml'
ODD = "--x=it's a \"test\" with \\ and $HOME `x` ü"
VARIANTS = variants('openrc')
SH = shutil.which('sh')


@pytest.mark.parametrize('kw', [v[1] for v in VARIANTS], ids=[v[0] for v in VARIANTS])
def test_installer_variant(kw):
    files = installer.generate(**kw)
    script = _openrc.InitScript(files[0].content)
    assert script.render() == files[0].content
    parsed = script.parse()
    # openrc expands $command_args unquoted: a run of blanks inside an argument reaches k3s as one space
    assert parsed.argv == [kw['command']] + [re.sub('[ \t\n]+', ' ', a) for a in kw['args']]
    name = 'k3s-' + kw['name'] if kw.get('name') else ('k3s' if kw['command'] == 'server' else 'k3s-agent')
    assert parsed.redirections == [('>>', '/var/log/%s.log' % name), ('2>&', '1')]
    for arg in [a for a in (SCHED, ODD) if a not in kw['args']]:
        script.add_arg(arg)
        assert script.parse().argv == parsed.argv + [arg]
        assert script.text().count('    >>/var/log/') == 1
        assert script.remove_arg(arg) == 1
        assert script.render() == files[0].content


@pytest.mark.skipif(SH is None, reason='no /bin/sh')
@pytest.mark.parametrize('args', [[], ['--disable=traefik', "it's", 'a b', 'x"y', 'ü=1', '']])
def test_against_the_shell(args, tmp_path):
    files = installer.generate('server', args, init='openrc')
    script = _openrc.InitScript(files[0].content)
    for arg in (None, SCHED, ODD):
        if arg is not None:
            script.add_arg(arg)
        assert shell_argv(script, tmp_path) == script.parse().argv


def shell_argv(script, tmp_path):
    """argv as sh gives it: the command_args assignment and openrc's eval, run; the log redirection goes to tmp_path."""
    text = script.text()
    start = text.index('command_args=')
    end = text.index('\n\noutput_log')
    assignment = text[start:end].replace('/var/log/', str(tmp_path) + '/')
    prog = (assignment + '\n'
            'eval "\\"\\$0\\" -c \\"import json,sys; open(sys.argv[1],\\\\\\"w\\\\\\").write(json.dumps(sys.argv[2:]))\\" '
            '\\"\\$1\\"" $command_args\n')
    out = tmp_path / 'argv.json'
    subprocess.run([SH, '-c', prog, sys.executable, str(out)], check=True)
    return json.loads(out.read_text())


HAND = [
    ('one-line', 'command_args="server --a >>/var/log/k3s.log 2>&1"\n', ['server', '--a']),
    ('no-redirect', 'command_args="server \\\n\t\'--a\' \\\n"\n', ['server', '--a']),
    ('empty', 'command_args=""\n', []),
    ('dq-in-dq', 'command_args="server \\"--b c\\""\n', ['server', '--b c']),
]


@pytest.mark.parametrize('text, argv', [h[1:] for h in HAND], ids=[h[0] for h in HAND])
def test_hand_edited(text, argv):
    data = ('#!/sbin/openrc-run\n' + text + 'pidfile="/var/run/k3s.pid"\n').encode()
    script = _openrc.InitScript(data)
    assert script.parse().argv == argv
    script.add_arg(SCHED)
    assert script.parse().argv == argv + [SCHED]
    script.remove_arg(SCHED)
    assert script.render() == data


@pytest.mark.parametrize('text, message', [
    ('#!/bin/sh\necho hi\n', 'no command_args='),
    ('command_args="a"\ncommand_args="b"\n', 'is set on lines 1, 2'),
    ('command_args="server\n', 'no closing'),
    ('command_args=server\n', 'not a quoted string'),
    ('command_args="server \'--a"\n', 'unbalanced single quote'),
    ('command_args="server; rm -rf /"\n', 'control operator'),
    ('command_args="server >>"\n', 'no target'),
])
def test_errors(text, message):
    with pytest.raises(ParseError, match=message):
        _openrc.InitScript(text.encode()).parse()


def test_single_quoted_value_is_read_but_not_edited():
    script = _openrc.InitScript(b"command_args='server --a \"b c\"'\n")
    assert script.parse().argv == ['server', '--a', 'b c']
    with pytest.raises(ParseError, match='double quotes'):
        script.add_arg('--x')


def test_quote_arg():
    assert _openrc.quote_arg("a'b\"c$d") == "'a'\\''b\\\"c\\$d'"
    with pytest.raises(ParseError):
        _openrc.quote_arg('a\nb')
    assert _openrc.InitScript(b'command_args="server"\n').parse().argv == ['server']


# arguments that mean something to the shell, to the double quotes around command_args, or to neither
SHELL_ARGS = ['plain', "it's", 'a b', 'x"y', '$HOME', '${X}', '$(id)', '`id`', 'back\\slash', '\\"', "'", '"', "''",
              '', ' lead', 'trail ', 'a b c', 'ü', '100%', '--a=b c', '>>/tmp/x', '2>&1', '<in', ';', '&&', '|', '*', '?', '~', '#c', '!',
              '\\$', "\\'", 'a\\', '--node-label=it\'s "q" \\ $x `y` ü']


@pytest.mark.parametrize('arg', SHELL_ARGS)
def test_shell_quoting_round_trip(arg):
    files = installer.generate('server', ['--disable=traefik'], init='openrc')
    script = _openrc.InitScript(files[0].content)
    script.add_arg(arg)
    parsed = script.parse()
    assert parsed.argv == ['server', '--disable=traefik', arg]
    assert parsed.redirections == [('>>', '/var/log/k3s.log'), ('2>&', '1')]
    assert script.remove_arg(arg) == 1
    assert script.render() == files[0].content


@pytest.mark.skipif(SH is None, reason='no /bin/sh')
def test_shell_quoting_against_the_shell(tmp_path):
    script = _openrc.InitScript(installer.generate('server', [], init='openrc')[0].content)
    for arg in SHELL_ARGS:
        script.add_arg(arg)
    assert script.parse().argv == ['server'] + SHELL_ARGS
    assert shell_argv(script, tmp_path) == ['server'] + SHELL_ARGS


@pytest.mark.parametrize('arg, message', [
    ('a\x00b', 'NUL byte'),
    ('\x00', 'NUL byte'),
    ('a\nb', 'line break'),
    ('a\rb', 'line break'),
    ('a\x01b', r"control character '\\x01'"),
    ('a\x1b[0m', 'control character'),
    ('a\x7f', 'control character'),
    ('tab\tx', 'TAB or several spaces'),
    ('a  b', 'TAB or several spaces'),
])
def test_quote_arg_refusals(arg, message):
    with pytest.raises(ParseError, match=message):
        _openrc.quote_arg(arg)
    files = installer.generate('server', ['--disable=traefik'], init='openrc')
    script = _openrc.InitScript(files[0].content)
    with pytest.raises(ParseError, match=message):
        script.add_arg(arg)
    assert script.render() == files[0].content


def test_edit_refused_when_it_would_not_read_back(monkeypatch):
    data = b'command_args="server --a"\n'
    script = _openrc.InitScript(data)
    monkeypatch.setattr(_openrc, 'quote_arg', lambda arg: "'%s" % arg)  # broken quoting: the value would not parse
    with pytest.raises(ParseError, match='would not read back'):
        script.add_arg('--x')
    assert script.render() == data


@pytest.mark.skipif(SH is None, reason='no /bin/sh')
def test_blank_runs_inside_quotes_read_as_the_shell_does(tmp_path):
    script = _openrc.InitScript(installer.generate('server', ['tab\there', 'a  b'], init='openrc')[0].content)
    assert script.parse().argv == shell_argv(script, tmp_path)
