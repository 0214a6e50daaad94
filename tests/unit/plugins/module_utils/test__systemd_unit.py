# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Table tests of the unit file parser over installer output and hand edits."""

from __future__ import annotations

import os
import sys

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _systemd_unit as su

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _variants import installer, variants  # noqa: E402 pylint: disable=wrong-import-position,import-error

SCHED = '--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml'
ODD = "--x=it's a \"test\" with \\ and 100% ü"
VARIANTS = variants('systemd')


def test_enough_variants():
    assert len(VARIANTS) >= 50


@pytest.mark.parametrize('kw', [v[1] for v in VARIANTS], ids=[v[0] for v in VARIANTS])
def test_installer_variant(kw):
    files = installer.generate(**kw)
    unit = su.UnitFile(files[0].content)
    assert unit.render() == files[0].content
    (directive,) = unit.exec_start()
    cmd = unit.parse_exec(directive)
    assert cmd.argv == installer.expected_argv(kw['command'], kw['args'], kw.get('bin_dir'))
    assert cmd.prefix == ''
    env = unit.get('Service', 'EnvironmentFile')
    assert env[-1].value == '-' + files[1].path
    for arg in [a for a in (SCHED, ODD, '--kube-scheduler-arg=v=4') if a not in kw['args']]:
        unit.add_arg(unit.exec_start()[0], arg)
        after = unit.parse_exec(unit.exec_start()[0]).argv
        assert after == cmd.argv + [arg]
        # installer layout kept: the new line is a TAB, the quoted argument, " \"; then the empty line
        assert unit.render().endswith(b' \\\n\n')
        assert unit.render().startswith(files[0].content[:files[0].content.index(b'ExecStart=')])
        assert su.UnitFile(unit.render()).render() == unit.render()
        assert unit.remove_arg(unit.exec_start()[0], arg) == 1
        assert unit.render() == files[0].content


def test_exact_added_line():
    files = installer.generate('server', ['--disable=traefik'])
    unit = su.UnitFile(files[0].content)
    unit.add_arg(unit.exec_start()[0], "--node-label=it's")
    assert unit.render().endswith(b"ExecStart=/usr/local/bin/k3s \\\n    server \\\n\t'--disable=traefik' \\\n"
                                  b"\t'--node-label=it'\\''s' \\\n\n")


HAND = [
    ('crlf',
     '[Service]\r\nExecStart=/usr/local/bin/k3s \\\r\n    server \\\r\n\t\'--a\' \\\r\n\r\n',
     ['/usr/local/bin/k3s', 'server', '--a']),
    ('comment-inside',
     '[Service]\nExecStart=/usr/local/bin/k3s \\\n    server \\\n# kept comment\n; another\n\t\'--a\' \\\n\n',
     ['/usr/local/bin/k3s', 'server', '--a']),
    ('user-flag-on-first-line',
     '[Service]\nExecStart=/usr/local/bin/k3s --debug \\\n    server \\\n\t\'--a\' \\\n\n',
     ['/usr/local/bin/k3s', '--debug', 'server', '--a']),
    ('one-line', '[Service]\nExecStart=/usr/local/bin/k3s server --a "--b c"\n',
     ['/usr/local/bin/k3s', 'server', '--a', '--b c']),
    ('trailing-ws', '[Service]  \nExecStart = /usr/local/bin/k3s server --a   \n\n',
     ['/usr/local/bin/k3s', 'server', '--a']),
    ('no-final-newline', '[Service]\nExecStart=/usr/local/bin/k3s server', ['/usr/local/bin/k3s', 'server']),
    ('eof-in-continuation', '[Service]\nExecStart=/usr/local/bin/k3s \\\n    server \\',
     ['/usr/local/bin/k3s', 'server']),
    ('prefixes', '[Service]\nExecStart=-!/usr/local/bin/k3s server\n', ['/usr/local/bin/k3s', 'server']),
    ('argv0', '[Service]\nExecStart=@/usr/local/bin/k3s k3s-main server\n', ['k3s-main', 'server']),
    ('escapes', '[Service]\nExecStart=/bin/k3s server \\x41\\t "a\\"b" \'c\\\'d\' e\\\\f %%g %N\n',
     ['/bin/k3s', 'server', 'A\t', 'a"b', "c'd", 'e\\f', '%g', '%N']),
    ('quote-inside-word', '[Service]\nExecStart=/bin/k3s --a="b c"d\n', ['/bin/k3s', '--a=b cd']),
    ('dropin-reset', '[Service]\nExecStart=\nExecStart=/bin/k3s server \\\n\t\'--z\' \\\n\n',
     ['/bin/k3s', 'server', '--z']),
    ('double-backslash-ends-line', '[Service]\nExecStart=/bin/k3s a\\\\\nUser=root\n', ['/bin/k3s', 'a\\']),
    ('repeated-keys-other-sections',
     '[Unit]\nAfter=a\nAfter=b\n[Service]\nEnvironment=A=1\nExecStartPre=-/sbin/modprobe x\nExecStart=/bin/k3s s\n'
     '[Install]\nWantedBy=multi-user.target\n',
     ['/bin/k3s', 's']),
    ('bom', '\ufeff[Service]\nExecStart=/bin/k3s server\n', ['/bin/k3s', 'server']),
]


@pytest.mark.parametrize('text, argv', [h[1:] for h in HAND], ids=[h[0] for h in HAND])
def test_hand_edited(text, argv):
    data = text.encode('utf-8')
    unit = su.UnitFile(data)
    assert unit.render() == data
    (directive,) = unit.exec_start()
    assert unit.parse_exec(directive).argv == argv
    for arg in (SCHED, ODD, '--a'):
        unit = su.UnitFile(data)
        present = arg in argv[1:]
        unit.add_arg(unit.exec_start()[0], arg)
        assert unit.parse_exec(unit.exec_start()[0]).argv == argv + [arg]
        assert unit.remove_arg(unit.exec_start()[0], arg) == 1 + int(present)
        if not present:
            assert unit.render() == data


def test_remove_user_flags():
    data = b'[Service]\nExecStart=/bin/k3s server --a --b \\\n    --a \\\n\t--c \\\n\n'
    unit = su.UnitFile(data)
    assert unit.remove_arg(unit.exec_start()[0], '--a') == 2
    assert unit.render() == b'[Service]\nExecStart=/bin/k3s server --b \\\n\t--c \\\n\n'
    assert unit.parse_exec(unit.exec_start()[0]).argv == ['/bin/k3s', 'server', '--b', '--c']
    assert unit.remove_arg(unit.exec_start()[0], '--zzz') == 0


def test_exec_start_reset_and_count():
    unit = su.UnitFile(b'[Service]\nExecStart=/a\nExecStart=\nExecStart=/b x\n')
    assert [d.value for d in unit.exec_start()] == ['/b x']
    assert unit.has_exec_reset()
    unit = su.UnitFile(b'[Service]\nExecStart=/a\nExecStart=/b\n')
    assert len(unit.exec_start()) == 2


@pytest.mark.parametrize('text, message', [
    ('ExecStart=/bin/k3s\n', 'outside any [Section]'),
    ('#!/bin/sh\nexec k3s server\n', 'outside any [Section]'),
    ('[Service\n', 'not a valid [Section] header'),
    ('[Service]\njust words\n', 'has no "="'),
    ('[Service]\nExec\x00Start=/x\n', 'NUL bytes'),
])
def test_not_a_unit(text, message):
    with pytest.raises(su.ParseError, match=message.replace('[', r'\[')):
        su.UnitFile(text.encode('utf-8'))


@pytest.mark.parametrize('value, message', [
    ("/bin/k3s 'abc", 'unbalanced single quote'),
    ('/bin/k3s "abc', 'unbalanced double quote'),
    ('/bin/k3s \\q', 'invalid escape'),
    ('/bin/k3s \\x00', 'invalid escape'),
    ('/bin/k3s ; /bin/true', 'several commands'),
    ('-@', 'no executable path'),
    ('@/bin/k3s', 'argv\\[0\\]'),
])
def test_bad_command_lines(value, message):
    with pytest.raises(su.ParseError, match=message):
        su.parse_exec(value)


def test_reset_value_is_not_a_command():
    with pytest.raises(su.ParseError, match='empty'):
        su.parse_exec('')


def test_quote_arg_refuses_line_breaks():
    with pytest.raises(su.ParseError, match='line break'):
        su.quote_arg('a\nb')


@pytest.mark.parametrize('arg', ['plain', "it's", 'back\\slash', '100%', 'tab\tx', 'ü', '"dq"', ''])
def test_quote_arg_round_trip(arg):
    assert su.split_command('/bin/k3s ' + su.quote_arg(arg)) == ['/bin/k3s', arg]


def test_render_exec_start_round_trip():
    argv = ['/usr/local/bin/k3s', 'server', '--a', "it's", '100%']
    text = '[Service]\nExecStart=\n' + su.render_exec_start('', argv[0], argv)
    unit = su.UnitFile(text.encode())
    assert unit.parse_exec(unit.exec_start()[0]).argv == argv
    assert text.endswith("\t'100%%' \\\n\n")
    text = '[Service]\n' + su.render_exec_start('-', '/bin/k3s', ['k3s-x', 'server'], argv0_explicit=True)
    unit = su.UnitFile(text.encode())
    cmd = unit.parse_exec(unit.exec_start()[0])
    assert (cmd.prefix, cmd.path, cmd.argv) == ('-@', '/bin/k3s', ['k3s-x', 'server'])


def test_environment_helpers():
    env = su.parse_environment_file(b"# c\nK3S_TOKEN='a b'\nexport X=\"q\\\"\"\nBAD\nK3S_URL=https://x:6443\n")
    assert env == {'K3S_TOKEN': 'a b', 'X': 'q"', 'K3S_URL': 'https://x:6443'}
    assert su.expand_argv(['/k3s', 'server', '$EXTRA', '--x=${Y}', '$$'], {'EXTRA': '--a  --b', 'Y': 'y'}) == \
        ['/k3s', 'server', '--a', '--b', '--x=y', '$']


def test_non_utf8_bytes_survive():
    data = b'[Service]\n# caf\xe9\nExecStart=/bin/k3s server\n'
    unit = su.UnitFile(data)
    unit.add_arg(unit.exec_start()[0], '--a')
    unit.remove_arg(unit.exec_start()[0], '--a')
    assert unit.render() == data
