# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Table tests of the unit file parser over installer output and hand edits."""

from __future__ import annotations


import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _systemd_unit as su

from _variants import installer, variants  # pylint: disable=import-error

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
    assert su.parse_exec('/bin/k3s ' + su.quote_arg(arg)).argv == ['/bin/k3s', arg]


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
    data = b"# c\nK3S_TOKEN='a b'\nexport X=\"q\\\"\"\nBAD\nK3S_URL=https://x:6443\n"
    # systemd's EnvironmentFile= has no export keyword: X is not set; a shell sourcing the file sets it
    assert su.parse_environment_file(data) == {'K3S_TOKEN': 'a b', 'K3S_URL': 'https://x:6443'}
    assert su.parse_environment_file(data, shell=True) == {'K3S_TOKEN': 'a b', 'X': 'q"', 'K3S_URL': 'https://x:6443'}
    assert su.expand_argv(['/k3s', 'server', '$EXTRA', '--x=${Y}', '$$'], {'EXTRA': '--a  --b', 'Y': 'y'}) == \
        ['/k3s', 'server', '--a', '--b', '--x=y', '$']


def test_non_utf8_bytes_survive():
    data = b'[Service]\n# caf\xe9\nExecStart=/bin/k3s server\n'
    unit = su.UnitFile(data)
    unit.add_arg(unit.exec_start()[0], '--a')
    unit.remove_arg(unit.exec_start()[0], '--a')
    assert unit.render() == data


# -- ExecStart= as systemd 252 reads it (config_parse_exec); tests/integration/test_systemd_oracle.py
# -- checks the same rules against systemd itself ----------------------------------------------
FACTS = {
    'unit': 'k3s.service', 'hostname': 'node1.example.org', 'machine_id': '0123456789abcdef0123456789abcdef',
    'boot_id': '01234567-89ab-cdef-0123-456789abcdef', 'kernel_release': '6.1.0-18-amd64', 'architecture': 'x86-64',
    'os_release': {'ID': 'debian', 'VERSION_ID': '12'}, 'home': '/root', 'shell': '/bin/bash',
    'fragment_path': '/etc/systemd/system/k3s.service',
}

# (value, facts, path, argv, flags): lines parse_exec() reads, as systemd does
GOOD = [
    # systemd's own vectors (src/test/test-load-fragment.c)
    ('/RValue r1', None, '/RValue', ['/RValue', 'r1'], []),
    ('/RValue///slashes r1///', None, '/RValue/slashes', ['/RValue///slashes', 'r1///'], []),
    ('@/RValue///slashes2 ///argv0 r1', None, '/RValue/slashes2', ['///argv0', 'r1'], []),
    ('-@/RValue///slashes3 argv0a r1', None, '/RValue/slashes3', ['argv0a', 'r1'], ['ignore-failure']),
    ('@-/RValue///slashes4 argv0b r1', None, '/RValue/slashes4', ['argv0b', 'r1'], ['ignore-failure']),
    ('-@/RValue argv0 r1 \';\'', None, '/RValue', ['argv0', 'r1', ';'], ['ignore-failure']),
    ('/bin/find \\;', None, '/bin/find', ['/bin/find', ';'], []),
    ('/sbin/find \\; /x', None, '/sbin/find', ['/sbin/find', ';', '/x'], []),
    ('/bin/find \\073', None, '/bin/find', ['/bin/find', ';'], []),
    ('/bin/find ";"', None, '/bin/find', ['/bin/find', ';'], []),
    ('/sbin/find ";" /x', None, '/sbin/find', ['/sbin/find', ';', '/x'], []),
    ('"/PATH WITH SPACES/daemon" -1 -2', None, '/PATH WITH SPACES/daemon', ['/PATH WITH SPACES/daemon', '-1', '-2'], []),
    ('"/PATH WITH SPACES/daemon -1 -2"', None, '/PATH WITH SPACES/daemon -1 -2', ['/PATH WITH SPACES/daemon -1 -2'], []),
    ('"/PATH WITH SPACES/daemon" "-1" \'-2\'', None, '/PATH WITH SPACES/daemon', ['/PATH WITH SPACES/daemon', '-1', '-2'], []),
    ('"/PATH\\sWITH\\sSPACES/daemon" \'-1 -2\'', None, '/PATH WITH SPACES/daemon', ['/PATH WITH SPACES/daemon', '-1 -2'], []),
    ('"/PATH\\x20WITH\\x20SPACES/daemon" "-1 -2"', None, '/PATH WITH SPACES/daemon', ['/PATH WITH SPACES/daemon', '-1 -2'], []),
    ('/path\\s', None, '/path ', ['/path '], []),
    # prefixes: each of -@: once, one of + ! !!
    ('-/bin/k3s server', None, '/bin/k3s', ['/bin/k3s', 'server'], ['ignore-failure']),
    (':/bin/k3s $X', None, '/bin/k3s', ['/bin/k3s', '$X'], ['no-env-expand']),
    ('+/bin/k3s', None, '/bin/k3s', ['/bin/k3s'], ['privileged']),
    ('!/bin/k3s', None, '/bin/k3s', ['/bin/k3s'], ['no-setuid']),
    ('!!/bin/k3s', None, '/bin/k3s', ['/bin/k3s'], ['ambient']),
    ('!-!/bin/k3s', None, '/bin/k3s', ['/bin/k3s'], ['ignore-failure', 'ambient']),
    ('-@:+/bin/k3s k3s-main server', None, '/bin/k3s', ['k3s-main', 'server'],
     ['ignore-failure', 'privileged', 'no-env-expand']),
    ('"-@/bin/k3s" argv0', None, '/bin/k3s', ['argv0'], ['ignore-failure']),
    ('\\x2d/bin/k3s', None, '/bin/k3s', ['/bin/k3s'], ['ignore-failure']),
    # the path: escapes, quotes, simplification (argv[0] keeps what was written)
    ('/bin/\\x65cho a', None, '/bin/echo', ['/bin/echo', 'a'], []),
    ('/bin/\\145cho a', None, '/bin/echo', ['/bin/echo', 'a'], []),
    ('/bin/"ec"\'h\'o a', None, '/bin/echo', ['/bin/echo', 'a'], []),
    ('/opt/\\u00fc/k3s', None, '/opt/ü/k3s', ['/opt/ü/k3s'], []),
    ('/opt/\\xc3\\xbc/k3s', None, '/opt/ü/k3s', ['/opt/ü/k3s'], []),
    ('/usr/./bin/./echo a', None, '/usr/bin/echo', ['/usr/./bin/./echo', 'a'], []),
    ('/usr/bin/../bin/echo', None, '/usr/bin/../bin/echo', ['/usr/bin/../bin/echo'], []),
    ('/bin/. a', None, '/bin', ['/bin/.', 'a'], []),
    ('/.', None, '/', ['/.'], []),
    ('//bin//echo', None, '/bin/echo', ['//bin//echo'], []),
    ('echo hi', None, 'echo', ['echo', 'hi'], []),
    ('/opt/$X/k3s', None, '/opt/$X/k3s', ['/opt/$X/k3s'], []),
    ('/opt/%s/k3s' % ('x' * 255), None, '/opt/%s/k3s' % ('x' * 255), ['/opt/%s/k3s' % ('x' * 255)], []),
    # arguments
    ('/bin/echo \\s \\x20 \\073 \\u00fc \\U0001F600 \\101 \\a\\b\\f\\n\\r\\t\\v \\\\ \\" \\\'', None, '/bin/echo',
     ['/bin/echo', ' ', ' ', ';', 'ü', '\U0001F600', 'A', '\a\b\f\n\r\t\v', '\\', '"', "'"], []),
    ('/bin/echo "a\\tb\\x41\\"\\s" \'c\\\'d\'', None, '/bin/echo', ['/bin/echo', 'a\tbA" ', "c'd"], []),
    ('/bin/echo \'\' "" x', None, '/bin/echo', ['/bin/echo', '', '', 'x'], []),
    ('/bin/echo --a="b c"d \'a\'"b"c', None, '/bin/echo', ['/bin/echo', '--a=b cd', 'abc'], []),
    ('/bin/echo a; ;a \\\\;', None, '/bin/echo', ['/bin/echo', 'a;', ';a', '\\;'], []),
    ('/bin/echo\ta\t\tb', None, '/bin/echo', ['/bin/echo', 'a', 'b'], []),
    ('/bin/echo a\x0bb a\u00a0b', None, '/bin/echo', ['/bin/echo', 'a\x0bb', 'a\u00a0b'], []),
    ('/bin/echo $HOME ${HOME} $$ ${NOPE}x $', None, '/bin/echo', ['/bin/echo', '$HOME', '${HOME}', '$$', '${NOPE}x', '$'], []),
    # % specifiers: expanded from facts, or kept as written without them (%% reads as %)
    ('/bin/echo 100%% %%n % a% %- %/ %ü 50%', None, '/bin/echo', ['/bin/echo', '100%', '%n', '%', 'a%', '%-', '%/', '%ü', '50%'], []),
    ('/bin/echo 100%% %%n % a% %- %/ %ü 50%', FACTS, '/bin/echo', ['/bin/echo', '100%', '%n', '%', 'a%', '%-', '%/', '%ü', '50%'], []),
    ('/bin/echo %n %N %p %P %i %I %j %J %f', FACTS, '/bin/echo', ['/bin/echo', 'k3s.service', 'k3s', 'k3s', 'k3s', '', '', 'k3s', 'k3s', '/k3s'], []),
    ('/bin/echo %n %N %p %P %i %I %j %J %f', dict(FACTS, unit='bk3s-t@foo-bar\\x2dbaz.service'), '/bin/echo',
     ['/bin/echo', 'bk3s-t@foo-bar\\x2dbaz.service', 'bk3s-t@foo-bar\\x2dbaz', 'bk3s-t', 'bk3s/t', 'foo-bar\\x2dbaz',
      'foo/bar-baz', 't', 't', '/foo/bar-baz'], []),
    ('/bin/echo %H %l %q %m %b %v %a', FACTS, '/bin/echo', ['/bin/echo', 'node1.example.org', 'node1', 'node1',
     '0123456789abcdef0123456789abcdef', '0123456789abcdef0123456789abcdef', '6.1.0-18-amd64', 'x86-64'], []),
    ('/bin/echo %o %w %W %B %M %A', FACTS, '/bin/echo', ['/bin/echo', 'debian', '12', '', '', '', ''], []),
    ('/bin/echo %t %S %C %L %E %T %V %d', FACTS, '/bin/echo', ['/bin/echo', '/run', '/var/lib', '/var/cache', '/var/log',
     '/etc', '/tmp', '/var/tmp', '/run/credentials/k3s.service'], []),
    ('/bin/echo %h %s %u %U %g %G %y %Y', FACTS, '/bin/echo', ['/bin/echo', '/root', '/bin/bash', 'root', '0', 'root', '0',
     '/etc/systemd/system/k3s.service', '/etc/systemd/system'], []),
    ('/bin/echo --name=%H-%i-%%i \'%n\' "%N" \\x25n', FACTS, '/bin/echo',
     ['/bin/echo', '--name=node1.example.org--%i', 'k3s.service', 'k3s', 'k3s.service'], []),
    ('%h/bin/k3s', FACTS, '/root/bin/k3s', ['/root/bin/k3s'], []),
    ('/opt/%n//k3s', FACTS, '/opt/k3s.service/k3s', ['/opt/k3s.service//k3s'], []),
    ('%p a', FACTS, 'k3s', ['k3s', 'a'], []),
    ('/opt/%I/k3s', dict(FACTS, unit='x@a-b.service'), '/opt/a/b/k3s', ['/opt/a/b/k3s'], []),
    ('%f/k3s', dict(FACTS, unit='x@srv-local.service'), '/srv/local/k3s', ['/srv/local/k3s'], []),
    ('/bin/echo %c %r %R', {'cgroup': '/system.slice/k3s.service', 'cgroup_slice': '/system.slice', 'cgroup_root': '/'},
     '/bin/echo', ['/bin/echo', '/system.slice/k3s.service', '/system.slice', '/'], []),
    ('/bin/echo %H %n', {'H': 'direct'}, '/bin/echo', ['/bin/echo', 'direct', '%n'], []),
]


@pytest.mark.parametrize('value, facts, path, argv, flags', GOOD, ids=['good%d' % i for i in range(len(GOOD))])
def test_exec_start_read_as_systemd_does(value, facts, path, argv, flags):
    cmd = su.parse_exec(value, specifiers=facts)
    assert (cmd.path, cmd.argv) == (path, argv)
    assert sorted(cmd.flags) == sorted(flags)
    assert cmd.raw_words == [t.raw for t in cmd.tokens]
    # the same through a unit file, positions included
    unit = su.UnitFile(('[Service]\nExecStart=%s\n' % value).encode('utf-8', 'surrogateescape'), specifiers=facts)
    ucmd = unit.parse_exec(unit.exec_start()[0])
    assert (ucmd.path, ucmd.argv) == (path, argv)
    for tok in ucmd.tokens:
        line, col = tok.start
        assert unit.lines[line].text[col:tok.end[1]] == tok.raw


# (value, facts, message): lines systemd refuses (bad-setting) or drops (the "-" prefix), and the
# lines the editor refuses by design although systemd loads them (several commands, invalid escapes)
BAD = [
    # systemd's own vectors
    ('/RValue/ argv0 r1', None, 'ends in "/".*Executable path specifies a directory'),
    ('@/RValue', None, r'needs argv\[0\]'),
    ('--/RValue argv0 r1', None, r'ignores this ExecStart= line.*"-" prefix.*\'-/RValue\' is neither an absolute path'),
    ('-@-/RValue argv0 r1', None, r'ignores.*\'-/RValue\'.*After the prefixes \'-@\', \'-\' is not a prefix any more'),
    ('-@/RValue argv0 r1 ; /goo/goo boo', None, 'several commands'),
    ('-@/RValue argv0 r1 ; ; /goo/goo boo', None, 'several commands'),
    ('-@/RValue argv0 r1 ; ', None, 'lone ";"'),
    ('-@/RValue argv0 r1 ;', None, 'lone ";"'),
    ('/sbin/find \\;x', None, r'invalid escape sequence "\\;".*keeps it as written'),
    ('/path\\a', None, r"'/path\\x07' holds '\\x07'.*special characters"),
    ('/path\\b', None, 'special characters'),
    ('/path\\f', None, 'special characters'),
    ('/path\\n', None, 'special characters'),
    ('/path\\r', None, 'special characters'),
    ('/path\\t', None, 'special characters'),
    ('/path\\v', None, 'special characters'),
    ('/path\\\\', None, r"holds '\\\\'.*special characters"),
    ("/path\\'", None, 'holds "\'".*special characters'),
    ('/path\\"', None, 'holds \'"\'.*special characters'),
    ('/path\\x', None, 'special characters'),
    ('/bin/grep \'\\w+\\K\'', None, r'invalid escape sequence "\\w"'),
    ('/path\\', None, 'special characters'),  # in a file the backslash would continue the line
    ("/path 'foo", None, 'unbalanced single quote'),
    ("/path 'foo\\", None, 'unbalanced single quote'),
    ('- /path', None, r'ignores.*prefixes \'-\' but no executable path.*Empty path'),
    ('-', None, r'ignores.*no executable path'),
    # prefixes systemd 252 does not combine, or does not have
    ('+!/bin/k3s', None, r"'!/bin/k3s' is neither.*After the prefixes '\+', '!' is not a prefix any more"),
    ('!+/bin/k3s', None, r"'\+/bin/k3s' is neither"),
    ('++/bin/k3s', None, 'is neither an absolute path'),
    ('!!!/bin/k3s', None, r"'!/bin/k3s' is neither"),
    ('+!!/bin/k3s', None, r"'!!/bin/k3s' is neither"),
    ('!!+/bin/k3s', None, r"'\+/bin/k3s' is neither"),
    ('::/bin/k3s', None, "':/bin/k3s' is neither"),
    ('@@/bin/k3s x', None, "'@/bin/k3s' is neither"),
    (':-:/bin/k3s', None, r"ignores.*':/bin/k3s' is neither"),
    ('|/bin/k3s', None, 'has no "|" prefix'),
    ('-|/bin/k3s', None, r'ignores.*has no "\|" prefix'),
    ('@ /bin/k3s argv0', None, r"prefixes '@' but no executable path"),
    ('-@/bin/k3s', None, r'ignores.*needs argv\[0\]'),
    ('@/bin/k3s ; /bin/true', None, r'needs argv\[0\]'),
    # the path
    ('/opt/a\\tb/k3s', None, 'special characters'),
    ('/opt/\\x01/k3s', None, 'special characters'),
    ('/opt/\x01/k3s', None, 'special characters'),
    ('/opt/\\x7f/k3s', None, 'special characters'),
    ('/opt/\\q/k3s', None, 'special characters'),
    ('/opt/\\x00/k3s', None, 'special characters'),
    ('/opt/it"\'"s/k3s', None, 'special characters'),
    ('"/opt/a\\"b"', None, 'special characters'),
    ('/bin\\x2f', None, 'Executable path specifies a directory'),
    ('/bin\\057', None, 'Executable path specifies a directory'),
    ('"/bin/" a', None, 'Executable path specifies a directory'),
    ('/bin// a', None, 'Executable path specifies a directory'),
    ('/', None, 'Executable path specifies a directory'),
    ('./echo hi', None, 'Neither a valid executable name nor an absolute path'),
    ('bin/echo hi', None, 'Neither a valid executable name nor an absolute path'),
    ('.', None, 'Neither a valid executable name'),
    ('..', None, 'Neither a valid executable name'),
    ("'' a", None, 'empty first word but no executable path'),
    ("-'' a", None, 'ignores.*no executable path'),
    ('/opt/%s/k3s' % ('x' * 256), None, 'Neither a valid executable name'),
    ('%s a' % ('x' * 256), None, 'Neither a valid executable name'),
    ('/bin/echo caf\udce9', None, 'not valid UTF-8'),
    ('\\; a', None, 'special characters'),
    # specifiers: unknown ones are refused with or without facts; known ones from facts are checked as paths
    ('/bin/echo %Z', None, r'"%Z" is not a specifier systemd 252 knows.*Write %%Z'),
    ('/bin/echo %e', FACTS, r'"%e" is not a specifier'),
    ('/bin/echo %1', None, r'"%1" is not a specifier'),
    ("/bin/echo '%z'", None, r'"%z" is not a specifier'),
    ('/bin/echo %%%Z', None, r'"%Z" is not a specifier'),
    ('/opt/%Z/k3s', None, r'"%Z" is not a specifier'),
    ('-/bin/echo %Z', None, r'ignores.*"%Z" is not a specifier'),
    ('%i a', FACTS, 'no executable path'),
    ('/opt/%I', dict(FACTS, unit='x@a-.service'), r"'/opt/a/' ends in \"/\""),
    ('/opt/%I/k3s', dict(FACTS, unit='x@a\\x27b.service'), 'special characters'),
    ('/bin/echo %I', dict(FACTS, unit='x@a\\q.service'), r'%I cannot be resolved'),
    ('%f', dict(FACTS, unit='a--b.service'), r'%f cannot be resolved'),
    ('/bin/echo %s' % ('%H' * 2), {'hostname': 'x' * (su.LONG_LINE_MAX // 2 + 1)}, 'bytes long after specifier expansion'),
    ('/opt/%H', {'hostname': 'x' * 4092}, 'bytes long after specifier expansion'),
    # arguments
    ('/bin/echo \\q', None, r'invalid escape sequence "\\q"'),
    ('/bin/echo \\xZZ', None, 'invalid escape'),
    ('/bin/echo a\\x00b', None, r'invalid escape sequence "\\x"'),
    ('/bin/echo \\u0000', None, 'invalid escape'),
    ('/bin/echo \\000', None, 'invalid escape'),
    ('/bin/echo \\400', None, 'invalid escape'),
    ('/bin/echo \\U00110000', None, 'invalid escape'),
    ('/bin/echo \\U0000FFFE', None, 'invalid escape'),
    ('/bin/echo a\\ b', None, r'invalid escape sequence "\\ "'),
    ('/bin/echo "\\;"', None, 'invalid escape'),
    ('/bin/echo "abc', None, 'unbalanced double quote'),
    ('/bin/echo a"b c', None, 'unbalanced double quote'),
    ("/bin/echo 'a\\'", None, 'unbalanced single quote'),
    # ";"
    ('/bin/echo a ; /bin/echo b', None, 'several commands'),
    ('; /bin/echo a', None, 'lone ";"'),
    ('";" /bin/echo a', None, 'lone ";"'),
    (';', None, 'lone ";"'),
    ('/bin/echo a ; /bin/echo \'b', None, 'unbalanced single quote'),
    ('/bin/echo a ; -/bin/echo \'b', None, r'drops the rest of this ExecStart= line after its first command'),
    ('/bin/echo a ; "/b', None, 'drops the rest.*unbalanced double quote'),
    ('/bin/echo a ; /b/', None, 'Executable path specifies a directory'),
]


@pytest.mark.parametrize('value, facts, message', BAD, ids=['bad%d' % i for i in range(len(BAD))])
def test_exec_start_refused(value, facts, message):
    with pytest.raises(su.ParseError, match=message):
        su.parse_exec(value, specifiers=facts)
    if value.endswith('\\'):
        return  # a unit file line ending in a backslash goes on with the next line
    # never edited: the unit file stays as it was
    data = ('[Service]\nExecStart=%s\n' % value).encode('utf-8', 'surrogateescape')
    unit = su.UnitFile(data, specifiers=facts)
    with pytest.raises(su.ParseError):
        unit.add_arg(unit.exec_start()[0], '--x')
    with pytest.raises(su.ParseError):
        unit.remove_arg(unit.exec_start()[0], 'r1')
    assert unit.render() == data


# (value, [(path, argv)], ignored): what systemd keeps of a line, commands and all
LINES = [
    ('-@/RValue argv0 r1 ; /goo/goo boo', [('/RValue', ['argv0', 'r1']), ('/goo/goo', ['/goo/goo', 'boo'])], False),
    ('-@/RValue argv0 r1 ; ; /goo/goo boo', [('/RValue', ['argv0', 'r1']), ('/goo/goo', ['/goo/goo', 'boo'])], False),
    ('-@/RValue argv0 r1 ; ', [('/RValue', ['argv0', 'r1'])], False),
    ('; /bin/echo a', [('/bin/echo', ['/bin/echo', 'a'])], False),
    ('";" /bin/echo a', [('/bin/echo', ['/bin/echo', 'a'])], False),
    ('/bin/echo a\t;\t/bin/echo b', [('/bin/echo', ['/bin/echo', 'a']), ('/bin/echo', ['/bin/echo', 'b'])], False),
    ('/bin/echo a;/bin/echo b', [('/bin/echo', ['/bin/echo', 'a;/bin/echo', 'b'])], False),
    (';', [], False),
    ('/bin/echo a ; -/bin/echo \'b', [('/bin/echo', ['/bin/echo', 'a'])], True),
    ('/bin/echo a ; "/b', [('/bin/echo', ['/bin/echo', 'a'])], True),
    ('"/bin/echo a', [], True),
    ('--/RValue', [], True),
    ('/sbin/find \\;x', [('/sbin/find', ['/sbin/find', '\\;x'])], False),
    ('/bin/grep \'\\w+\\K\'', [('/bin/grep', ['/bin/grep', '\\w+\\K'])], False),
    ('/bin/echo a\\ b \\x4 \\u12g4', [('/bin/echo', ['/bin/echo', 'a\\ b', '\\x4', '\\u12g4'])], False),
    ('/bin/echo \\uD800', [('/bin/echo', ['/bin/echo', '\udced\udca0\udc80'])], False),
]


@pytest.mark.parametrize('value, commands, ignored', LINES, ids=['line%d' % i for i in range(len(LINES))])
def test_exec_line(value, commands, ignored):
    line = su.parse_exec_line(value)
    assert [(c.path, c.argv) for c in line.commands] == commands
    assert (line.ignored is not None) == ignored
    assert not line.reset


def test_exec_line_reset_and_lenient_mode():
    assert su.parse_exec_line('  ').reset
    cmd = su.parse_exec('/bin/echo \\q a\\x00', strict=False)
    assert cmd.argv == ['/bin/echo', '\\q', 'a\\x00']
    assert cmd.escape_warnings == ['\\q', '\\x']


def test_words_raw_and_expanded():
    cmd = su.parse_exec('-/bin/k3s \'--a=%%x\' "--b=%n" \\x41', specifiers={'unit': 'k3s.service'})
    assert cmd.raw_words == ['-/bin/k3s', "'--a=%%x'", '"--b=%n"', '\\x41']
    assert cmd.words == ['-/bin/k3s', '--a=%%x', '--b=%n', 'A']
    assert cmd.argv == ['/bin/k3s', '--a=%x', '--b=k3s.service', 'A']
    assert (cmd.prefix, cmd.flags, cmd.unexpanded) == ('-', frozenset(['ignore-failure']), ())


def test_specifiers_left_as_written_without_facts():
    cmd = su.parse_exec('%h/bin/k3s --name=%H --x=100%%')
    assert cmd.unexpanded == ('H', 'h')
    assert cmd.path == '%h/bin/k3s' and cmd.argv == ['%h/bin/k3s', '--name=%H', '--x=100%']
    assert isinstance(cmd.argv[1], su.SpecifierWord) and cmd.argv[1].word == '--name=%H'
    assert not isinstance(cmd.argv[2], su.SpecifierWord)
    # written back live: a drop-in rendered from this argv keeps the specifiers
    text = '[Service]\n' + su.render_exec_start(cmd.prefix, cmd.path, cmd.argv)
    written = su.UnitFile(text.encode())
    again = written.parse_exec(written.exec_start()[0], specifiers={'hostname': 'n1', 'home': '/root'})
    assert again.argv == ['/root/bin/k3s', '--name=n1', '--x=100%']
    # a literal argument that looks like one is not the live word, and the live word is never removed as it
    unit = su.UnitFile(b'[Service]\nExecStart=/bin/k3s --name=%H\n')
    unit.add_arg(unit.exec_start()[0], '--name=%H')
    assert unit.render() == b"[Service]\nExecStart=/bin/k3s --name=%H '--name=%%H'\n"
    assert unit.remove_arg(unit.exec_start()[0], '--name=%H') == 1
    assert unit.render() == b'[Service]\nExecStart=/bin/k3s --name=%H\n'


def test_specifier_facts():
    t = su.specifier_table({'unit': 'k3s-agent@node\\x2d1.service', 'hostname': 'a.b.c', 'pretty_hostname': 'My Node'})
    assert (t['n'], t['N'], t['p'], t['P'], t['i'], t['I'], t['j'], t['J'], t['f']) == (
        'k3s-agent@node\\x2d1.service', 'k3s-agent@node\\x2d1', 'k3s-agent', 'k3s/agent', 'node\\x2d1', 'node-1',
        'agent', 'agent', '/node-1')
    assert (t['H'], t['l'], t['q'], t['u'], t['U'], t['t'], t['d']) == (
        'a.b.c', 'a', 'My Node', 'root', '0', '/run', '/run/credentials/k3s-agent@node\\x2d1.service')
    assert 'h' not in t and 'm' not in t  # no fact, no value: left as written
    assert su.specifier_table({'runtime_dir': '/x', 'unit': 'a.service', 'H': 'direct'})['d'] == '/x/credentials/a.service'
    assert su.specifier_table({'H': 'direct', 'hostname': 'h'})['H'] == 'direct'
    assert su.expand_specifiers('%n-%i-%%-%', {'unit': 'a@b.service'}) == 'a@b.service-b-%-%'
    assert su.expand_specifiers('%n', None) == '%n'
    with pytest.raises(su.ParseError, match='"%Q" is not a specifier'):
        su.expand_specifiers('%Q')
    with pytest.raises(su.ParseError, match='type suffix'):
        su.specifier_table({'unit': 'k3s'})
    assert set(su.SPECIFIERS) == set('aAbBcCdEfgGhHiIjJlLmMnNopPqrRsStTuUvVwWyY')


@pytest.mark.parametrize('arg', ['plain', "it's", 'back\\slash', '100%', 'tab\tx', 'ü', '"dq"', '', '%n', '%%', '%Z',
                                 '\\x41', '\\;', ';', '$HOME', '${X}', "a'b\"c\\d%e", ' lead', 'trail ', '\U0001F600', 'a\u00a0b'])
def test_quote_arg_survives_expansion(arg):
    """An added argument reaches the program unchanged, with facts for the specifiers or without."""
    assert su.parse_exec('/bin/k3s ' + su.quote_arg(arg)).argv == ['/bin/k3s', arg]
    assert su.parse_exec('/bin/k3s ' + su.quote_arg(arg), specifiers=FACTS).argv == ['/bin/k3s', arg]
    unit = su.UnitFile(b'[Service]\nExecStart=/bin/k3s server\n', specifiers=FACTS)
    unit.add_arg(unit.exec_start()[0], arg)
    assert unit.parse_exec(unit.exec_start()[0]).argv == ['/bin/k3s', 'server', arg]
    assert unit.remove_arg(unit.exec_start()[0], arg) == 1
    assert unit.render() == b'[Service]\nExecStart=/bin/k3s server\n'


@pytest.mark.parametrize('arg, message', [
    ('a\x00b', 'NUL byte'),
    ('\x00', 'NUL byte'),
    ('a\nb', 'line break'),
    ('a\rb', 'line break'),
    ('a\x01b', r"control character '\\x01'"),
    ('a\x07', 'control character'),
    ('a\x1bb', 'control character'),
    ('a\x7fb', 'control character'),
    ('a\x0bb', 'control character'),
    ('caf\udce9', 'valid UTF-8'),
    ('\ud800', 'valid UTF-8'),
])
def test_quote_arg_refuses_what_no_unit_file_carries(arg, message):
    with pytest.raises(su.ParseError, match=message):
        su.quote_arg(arg)
    data = b'[Service]\nExecStart=/bin/k3s server \\\n\t\'--a\' \\\n\n'
    unit = su.UnitFile(data)
    with pytest.raises(su.ParseError, match=message):
        unit.add_arg(unit.exec_start()[0], arg)
    assert unit.render() == data
    with pytest.raises(su.ParseError, match=message):
        su.render_exec_start('', '/bin/k3s', ['/bin/k3s', arg])


def test_render_exec_start_keeps_argv0_and_path():
    for prefix, path, argv, explicit in [
            ('', '/usr/bin/k3s', ['/usr//bin/k3s', 'server'], False),   # systemd simplifies the path back
            ('-', '/usr/bin/k3s', ['k3s', 'server'], True),
            ('', '/opt/a b/k3s', ['/opt/a b/k3s', 'server', 'x y'], False),
            ('!!', '/bin/k3s', ['other-name', 'agent'], False),          # argv[0] differs: written with "@"
    ]:
        text = '[Service]\n' + su.render_exec_start(prefix, path, argv, explicit)
        unit = su.UnitFile(text.encode())
        cmd = unit.parse_exec(unit.exec_start()[0])
        assert (cmd.path, cmd.argv) == (path, argv), text
        assert cmd.prefix.replace('@', '') == prefix


def test_edits_refused_when_they_would_not_read_back(monkeypatch):
    data = b'[Service]\nExecStart=/bin/k3s server\n'
    unit = su.UnitFile(data)
    monkeypatch.setattr(su, 'quote_arg', lambda arg: "'%s" % arg)  # a broken quoting: the line would not parse
    with pytest.raises(su.ParseError, match='would not read back'):
        unit.add_arg(unit.exec_start()[0], '--x')
    assert unit.render() == data


def test_split_words_strict_and_lenient():
    assert su.split_words('A=1 "B=2 3"') == [('A=1', 'A=1', 0, 3), ('B=2 3', '"B=2 3"', 4, 11)]
    with pytest.raises(su.ParseError, match='invalid escape'):
        su.split_words('A=\\q')
    assert su.split_words('A=\\q', strict=False) == [('A=\\q', 'A=\\q', 0, 4)]
    with pytest.raises(su.ParseError, match='unbalanced'):
        su.split_words("A='1", strict=False)


# -- the family "env files as systemd reads them": every line systemd's EnvironmentFile= drops is dropped here too
# (and said), and a shell (openrc's init script sources /etc/rancher/k3s/<service>.env) reads "export"
@pytest.mark.parametrize('text, systemd_env, shell_env, unseen', [
    (b'export K3S_URL=https://s:6443\nK3S_TOKEN=t\n', {'K3S_TOKEN': 't'}, {'K3S_URL': 'https://s:6443', 'K3S_TOKEN': 't'},
     ['line 1 sets K3S_URL with "export"']),
    (b'  export\tK3S_URL=u\n', {}, {'K3S_URL': 'u'}, ['line 1 sets K3S_URL with "export"']),
    (b'K3S.URL=u\nK3S_TOKEN=t\n', {'K3S_TOKEN': 't'}, {'K3S_TOKEN': 't'}, ["line 1 assigns 'K3S.URL', which is no variable"]),
    (b'1ABC=u\n', {}, {}, ["line 1 assigns '1ABC'"]),
    (b'A B=u\n', {}, {}, ["line 1 assigns 'A B'"]),
    (b'exported=1\n', {'exported': '1'}, {'exported': '1'}, []),
    (b'# export K3S_URL=u\n; x\n\nK3S_URL = u \n', {'K3S_URL': 'u'}, {'K3S_URL': 'u'}, []),
    (b'A=1 \\\nexport B=2\nexport C=3\n', {'A': '1 export B=2'}, {'A': '1 export B=2', 'C': '3'},
     ['line 3 sets C with "export"']),
])
def test_environment_file_as_systemd_reads_it(text, systemd_env, shell_env, unseen):
    assert su.parse_environment_file(text) == systemd_env
    assert su.parse_environment_file(text, shell=True) == shell_env
    found = su.ignored_assignments(text, '/e.env')
    assert len(found) == len(unseen), found
    for message, part in zip(found, unseen):
        assert message.startswith('/e.env ' + part), message
