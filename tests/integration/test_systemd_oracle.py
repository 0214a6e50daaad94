# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""systemd itself as the oracle for the unit parser.

* test_oracle: systemd's argv for every installer variant equals the parser's, after each edit;
* test_exec_start_vectors: every ExecStart= value of systemd's own test_config_parse_exec, and
  neighbours (prefixes, escapes, quotes, paths, ";", % specifiers, $VAR), loaded by systemd: the
  parser refuses exactly what systemd refuses and reads the rest as systemd does (path, argv after
  specifier expansion, flags).

Needs a Debian image with systemd as PID 1, named by BAREMETAL_K3S_IMAGE_SYSTEMD. Without it
the test is skipped, or fails when BAREMETAL_K3S_REQUIRE_DOCKER=1. One container serves all.
BAREMETAL_K3S_ORACLE_PARSER=/path/to/_systemd_unit.py judges another copy of the parser
(for example the one of an older commit) in test_exec_start_vectors.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import subprocess
import tarfile
import time

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _systemd_unit as su
from ansible_collections.baremetal.k3s.tests.integration.kube_nodes import STAGE_LABEL

import installer  # pylint: disable=import-error

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

IMAGE = os.environ.get('BAREMETAL_K3S_IMAGE_SYSTEMD')
REQUIRE = os.environ.get('BAREMETAL_K3S_REQUIRE_DOCKER') == '1'

if not IMAGE:
    if REQUIRE:
        raise RuntimeError('BAREMETAL_K3S_REQUIRE_DOCKER=1 but BAREMETAL_K3S_IMAGE_SYSTEMD is not set: '
                           'build the Debian systemd image and export its name.')
    pytest.skip('BAREMETAL_K3S_IMAGE_SYSTEMD is not set (set it to a Debian image with systemd to run this oracle)',
                allow_module_level=True)


ARG_SETS = [
    [], ['--disable=traefik'], ["--node-label=it's"], ['a b', 'x  y'], ['--flag="q"', '=', ''],
    ['ü=1', '--node-name=nœud'], ['--kube-scheduler-arg=v=2', '--kube-apiserver-arg=a=b,c=d', '--cluster-init'],
    ['tab\there'], ["''", "'", '--a==b', '--e=', '-', 'x,y', '--path=/a b/c', '--x=1'],
]
EDITS = ['--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml', "--y=it's \"q\" \\ 100% ü"]


def docker(*args, check=True, input_bytes=None):
    return subprocess.run(['docker'] + list(args), capture_output=True, check=check, input=input_bytes)


@pytest.fixture(scope='module')
def container():
    try:
        cid = docker('run', '-d', '--label', STAGE_LABEL,
                     '--cap-add', 'SYS_ADMIN', '--cap-add', 'NET_ADMIN',
                     '--security-opt', 'seccomp=unconfined', '--security-opt', 'apparmor=unconfined',
                     '-v', '/sys/fs/cgroup:/sys/fs/cgroup:rw', '--cgroupns', 'host',
                     '--tmpfs', '/run', '--tmpfs', '/run/lock', '--tmpfs', '/tmp',
                     IMAGE, '/lib/systemd/systemd').stdout.decode().strip()
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.fail('cannot start %s with docker: %s' % (IMAGE, getattr(e, 'stderr', e)))
    try:
        deadline = time.time() + 90
        state = ''
        while time.time() < deadline:
            state = docker('exec', cid, 'systemctl', 'is-system-running', check=False).stdout.decode().strip()
            if state in ('running', 'degraded'):
                break
            time.sleep(1)
        else:
            pytest.fail('systemd in %s did not come up (is-system-running: %r)' % (IMAGE, state))
        yield cid
    finally:
        docker('rm', '-f', cid, check=False)


def _archive(files):
    """A tar archive (to extract at /) of {absolute path: bytes}."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode='w') as tar:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(path.lstrip('/'))
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_oracle(container):
    """Every installer variant's unit, after each of our edits in turn (and back), and the drop-in
    method=dropin writes, each written as a unit of its own: systemd loads them all at one daemon-reload
    (PROBE) and its ExecStart argv, read over D-Bus, must equal the parser's for every one.

    ``systemctl show`` joins the words with spaces without quoting them (systemd 252), so a word
    holding a space could not be told apart; the D-Bus property keeps them as a list.
    """
    files, expected = {}, {}
    for i, args in enumerate(ARG_SETS):
        for command in ('server', 'agent'):
            for x, extra in enumerate(({}, {'systemd_dir': '/usr/lib/systemd/system', 'bin_dir': '/opt/bin'})):
                name = 'v%d%s' % (i, command[0])
                generated = installer.generate(command, args, name=name, **extra)
                unit_dir, unit_name = os.path.split(generated[0].path)
                stem = '%s-x%d' % (unit_name[:-len('.service')], x)
                unit = su.UnitFile(generated[0].content)
                steps = [('installer', None)] + [('add', a) for a in EDITS] + [('remove', a) for a in EDITS]
                for n, (step, arg) in enumerate(steps):
                    if step == 'add':
                        unit.add_arg(unit.exec_start()[0], arg)
                    elif step == 'remove':
                        unit.remove_arg(unit.exec_start()[0], arg)
                    step_unit = '%s-s%d.service' % (stem, n)
                    files['%s/%s' % (unit_dir, step_unit)] = unit.render()
                    expected[step_unit] = (unit.parse_exec(unit.exec_start()[0]).argv,
                                           '%s after %s %r:\n%s' % (unit_name, step, arg, unit.render().decode()))
                assert unit.render() == generated[0].content
                # a drop-in that replaces ExecStart, as method=dropin writes it
                argv = unit.parse_exec(unit.exec_start()[0]).argv + [EDITS[0]]
                dropin_unit = '%s-d.service' % stem
                files['%s/%s' % (unit_dir, dropin_unit)] = unit.render()
                files['/etc/systemd/system/%s.d/99-baremetal-k3s.conf' % dropin_unit] = (
                    '[Service]\nExecStart=\n' + su.render_exec_start('', argv[0], argv)).encode()
                expected[dropin_unit] = (argv, '%s with the drop-in' % unit_name)
    docker('exec', '-i', container, 'tar', '-x', '-C', '/', input_bytes=_archive(files))
    try:
        probe = docker('exec', '-i', container, 'python3', '-c', PROBE, input_bytes=json.dumps(sorted(expected)).encode())
    finally:
        leftovers = [p.encode() for p in files] + [('/etc/systemd/system/%s.d' % u).encode() for u in expected]
        docker('exec', '-i', container, 'sh', '-c', 'xargs -0 rm -rf && systemctl daemon-reload', check=False,
               input_bytes=b'\0'.join(leftovers))
    units = json.loads(probe.stdout)['units']
    for name, (ours, where) in sorted(expected.items()):
        theirs = units[name]
        assert theirs['load_state'] == 'loaded' and 'dbus_error' not in theirs, '%s: %r' % (where, theirs)
        assert [c[1] for c in theirs['exec']] == [ours], where
    assert len(expected) >= 100


# -- ExecStart= vectors ------------------------------------------------------------------
VECTOR_FILE = os.path.join(HERE, 'systemd_vectors', 'exec_start.txt')
UNIT_DIR = '/etc/systemd/system'
# systemd's names for uname -m (src/basic/architecture.c)
ARCHITECTURES = {'x86_64': 'x86-64', 'aarch64': 'arm64', 'i686': 'x86', 'i386': 'x86', 'armv7l': 'arm',
                 'ppc64le': 'ppc64-le', 's390x': 's390x', 'riscv64': 'riscv64'}
FLAG_ORDER = ['ignore-failure', 'privileged', 'no-setuid', 'ambient', 'no-env-expand']
NAME_MAX = 255
LONG_LINE_MAX = 1024 * 1024


def load_vectors():
    """[(id, value, instance)]: the file's vectors, then the generated ones."""
    vectors = []
    with io.open(VECTOR_FILE, encoding='utf-8') as f:
        for line in f.read().split('\n'):
            if not line.strip() or line.startswith('#'):
                continue
            ident, sep, value = line.partition(' ')
            assert sep, 'vector %r has no value (write "ID VALUE")' % line
            ident, at, instance = ident.partition('@')
            vectors.append((ident, value, instance if at else None))
    # every prefix character and pair of them (doubled ones included)
    chars = '-@:+!|'
    for a in chars:
        vectors.append(('pfx-%s' % a, a + '/bin/echo x y', None))
        for b in chars:
            vectors.append(('pfx-%s%s' % (a, b), a + b + '/bin/echo x y', None))
    # each specifier the brief of this test names, in the path (the argument forms are in the file)
    for letter in 'nNpiIHmbtSCLETVhuU':
        vectors.append(('path-spec-%s' % letter, '/opt/%%%s/k3s a' % letter, None))
    # length limits: NAME_MAX per path component, LONG_LINE_MAX per line (systemd's "long arg")
    vectors.append(('path-component-255', '/opt/%s/k3s' % ('x' * NAME_MAX), None))
    vectors.append(('path-component-256', '/opt/%s/k3s' % ('x' * (NAME_MAX + 1)), None))
    vectors.append(('path-relative-255', '%s a' % ('x' * NAME_MAX), None))
    vectors.append(('path-relative-256', '%s a' % ('x' * (NAME_MAX + 1)), None))
    vectors.append(('sd-long-arg', '/bin/echo ' + 'x' * (LONG_LINE_MAX - 100 - len('/bin/echo ') - 1), None))
    # bytes a text file of vectors cannot hold well
    vectors += [
        ('sd-trailing-semicolon', '-@/RValue argv0 r1 ; ', None),
        ('sd-reset', '', None),
        ('raw-control-in-path', '/opt/\x01/k3s', None),
        ('raw-bel-in-arg', '/bin/echo a\x07b', None),
        ('raw-del-in-arg', '/bin/echo a\x7fb', None),
        ('raw-vt-in-arg', '/bin/echo a\x0bb c\x0cd', None),
        ('raw-nbsp-in-arg', '/bin/echo a\u00a0b', None),
        ('raw-latin1-in-arg', '/bin/echo caf\udce9', None),
        ('raw-latin1-in-path', '/opt/caf\udce9/k3s', None),
        ('raw-spaces-only', '   ', None),
        ('raw-leading-spaces', '  \t /bin/echo a  ', None),
        # continued lines, as the installer writes them, and a comment line inside
        ('cont-installer', '/usr/local/bin/k3s \\\n    server \\\n\t\'--disable=traefik\' \\\n', None),
        ('cont-comment', '/bin/echo a \\\n# not an argument\n\tb', None),
        ('cont-in-quotes', "/bin/echo 'a \\\n b'", None),
        ('cont-after-prefix', '-\\\n/bin/echo a', None),
        ('cont-double-backslash', '/bin/echo a\\\\\nUser=root', None),
    ]
    idents = [v[0] for v in vectors]
    assert len(idents) == len(set(idents)), 'duplicate vector ids: %r' % sorted({i for i in idents if idents.count(i) > 1})
    return vectors


def _judged_parser():
    """The parser under judgement: ours, or the copy BAREMETAL_K3S_ORACLE_PARSER names."""
    path = os.environ.get('BAREMETAL_K3S_ORACLE_PARSER')
    if not path:
        return su, 'plugins/module_utils/_systemd_unit.py'
    spec = importlib.util.spec_from_file_location('judged_systemd_unit', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


# Runs inside the container: daemon-reload, then LoadState/LoadError of every unit (systemctl show
# loads them), ExecStartEx of the loaded ones over D-Bus, systemd's log lines for the unit files,
# and the facts the specifiers come from.
PROBE = r"""
import json, os, subprocess, sys

names = json.load(sys.stdin)
def run(*argv):
    return subprocess.run(argv, capture_output=True, check=True).stdout.decode('utf-8', 'surrogateescape')
cursor = run('journalctl', '-n', '0', '--show-cursor').strip().rsplit('cursor: ', 1)[-1]
run('systemctl', 'daemon-reload')
units = {}
for i in range(0, len(names), 100):
    chunk = names[i:i + 100]
    blocks = run('systemctl', 'show', '-p', 'Id', '-p', 'LoadState', '-p', 'LoadError', '--', *chunk).split('\n\n')
    for name, block in zip(chunk, blocks):
        props = dict(l.split('=', 1) for l in block.strip().split('\n') if '=' in l)
        units[name] = {'load_state': props.get('LoadState'), 'load_error': props.get('LoadError')}
def label(name):
    return ''.join(c if c.isalnum() and c.isascii() else '_%02x' % b for c in name for b in c.encode())
for name in names:
    if units[name]['load_state'] != 'loaded':
        continue
    p = subprocess.run(['busctl', '--json=short', 'get-property', 'org.freedesktop.systemd1',
                        '/org/freedesktop/systemd1/unit/' + label(name), 'org.freedesktop.systemd1.Service',
                        'ExecStartEx'], capture_output=True)
    if p.returncode:
        units[name]['dbus_error'] = p.stderr.decode('utf-8', 'replace').strip()
    else:
        units[name]['exec'] = [[c[0], c[1], c[2]] for c in json.loads(p.stdout)['data']]
subprocess.run(['journalctl', '--sync'], capture_output=True)
log = {}
for line in run('journalctl', '--after-cursor', cursor, '-o', 'json', '_PID=1').splitlines():
    entry = json.loads(line)
    f, msg = entry.get('CONFIG_FILE'), entry.get('MESSAGE')
    if isinstance(msg, list):  # journald gives a message with control characters as its bytes
        msg = bytes(msg).decode('utf-8', 'replace')
    if isinstance(f, str) and isinstance(msg, str):
        msgs = log.setdefault(os.path.basename(f), [])
        msg = msg.split(': ', 1)[-1]
        if msg not in msgs:
            msgs.append(msg)
env = dict(l.split('=', 1) for l in open('/proc/1/environ').read().split('\0') if '=' in l)
osrel = {}
for l in open('/etc/os-release').read().splitlines():
    if '=' in l and not l.startswith('#'):
        k, v = l.split('=', 1)
        osrel[k] = v.strip('"')
pretty = None
if os.path.exists('/etc/machine-info'):
    for l in open('/etc/machine-info').read().splitlines():
        if l.startswith('PRETTY_HOSTNAME='):
            pretty = l.split('=', 1)[1].strip('"')
def absolute(v):
    return v if v and v.startswith('/') else None
facts = {
    'hostname': open('/proc/sys/kernel/hostname').read().strip(),
    'pretty_hostname': pretty,
    'machine_id': open('/etc/machine-id').read().strip(),
    'boot_id': open('/proc/sys/kernel/random/boot_id').read().strip(),
    'kernel_release': os.uname().release,
    'uname_machine': os.uname().machine,
    'os_release': osrel,
    'home': absolute(env.get('HOME')) or '/root',
    'shell': absolute(env.get('SHELL')) or ('/bin/bash' if os.path.exists('/bin/bash') else '/bin/sh'),
    'tmp_dir': absolute(env.get('TMPDIR') or env.get('TEMP') or env.get('TMP')) or '/tmp',
    'var_tmp_dir': absolute(env.get('TMPDIR') or env.get('TEMP') or env.get('TMP')) or '/var/tmp',
}
json.dump({'units': units, 'log': log, 'facts': facts}, sys.stdout)
"""


def _unit_files(vectors):
    """[(vector, unit name to load, file name, content)] and the tar archive that writes the unit files."""
    out = []
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode='w') as tar:
        for n, (ident, value, instance) in enumerate(vectors):
            if instance is None:
                fname = 'bk3s-o%03d.service' % n
                name = fname
            else:
                fname = 'bk3s-t%03d@.service' % n
                name = 'bk3s-t%03d@%s.service' % (n, instance)
            data = ('# vector %s\n[Service]\nType=oneshot\nExecStart=%s\n' % (ident, value)).encode('utf-8', 'surrogateescape')
            info = tarfile.TarInfo(fname)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
            out.append(((ident, value, instance), name, fname, data))
    return out, buf.getvalue()


def _parser_view(parser, data, facts):
    """What the parser makes of the unit file ``data``: (commands or None when it refuses, reason, single, single_reason).

    ``commands`` as systemd lists them: [(path, argv, flags)], from parse_exec_line(); ``single``
    the one command UnitFile.parse_exec() gives the editor (None when it refuses, ``single_reason`` says why).
    """
    try:
        unit = parser.UnitFile(data, 'unit')
        directives = unit.exec_start()
    except parser.ParseError as e:
        return None, str(e), None, str(e)
    if len(directives) != 1:
        return None, 'no ExecStart= (a reset)', None, 'no ExecStart= (a reset)'
    directive = directives[0]
    if not hasattr(parser, 'parse_exec_line'):  # an older parser: one call, no specifiers, no flags
        try:
            cmd = unit.parse_exec(directive)
        except parser.ParseError as e:
            return None, str(e), None, str(e)
        view = (cmd.path, list(cmd.argv), None)
        return [view], None, view, None
    try:
        line = parser.parse_exec_line(directive.value, directive.chars, 'unit', specifiers=facts)
    except parser.ParseError as e:
        commands, reason = None, str(e)
    else:
        commands = [(c.path, list(c.argv), [f for f in FLAG_ORDER if f in c.flags]) for c in line.commands]
        reason = line.ignored if line.ignored else ('reset' if line.reset else None)
        if not commands:
            commands, reason = None, reason or 'no command'
    try:
        cmd = unit.parse_exec(directive, specifiers=facts)
    except parser.ParseError as e:
        return commands, reason, None, str(e)
    return commands, reason, (cmd.path, list(cmd.argv), [f for f in FLAG_ORDER if f in cmd.flags]), None


def _short_value(value, limit=90):
    text = value.encode('unicode_escape').decode('ascii') if any(ord(c) < 32 or 0xdc80 <= ord(c) <= 0xdcff for c in value) else value
    return text if len(text) <= limit else text[:limit] + '...(%d chars)' % len(text)


def test_exec_start_vectors(container, capsys):
    started = time.time()
    parser, parser_name = _judged_parser()
    vectors = load_vectors()
    units, archive = _unit_files(vectors)
    docker('exec', '-i', container, 'sh', '-c', 'rm -f %s/bk3s-* && tar -x -C %s' % (UNIT_DIR, UNIT_DIR), input_bytes=archive)
    try:
        probe = docker('exec', '-i', container, 'python3', '-c', PROBE,
                       input_bytes=json.dumps([u[1] for u in units]).encode())
    finally:
        docker('exec', container, 'sh', '-c', 'rm -f %s/bk3s-* && systemctl daemon-reload' % UNIT_DIR, check=False)
    report = json.loads(probe.stdout)
    base = dict(report['facts'])
    base['architecture'] = ARCHITECTURES.get(base.pop('uname_machine'))
    probed = time.time()

    refused_both = accepted_both = 0
    wrong = []
    policy = []
    refusals = []
    for (ident, value, instance), name, fname, data in units:
        theirs = report['units'][name]
        log = report['log'].get(fname, [])
        assert 'dbus_error' not in theirs, '%s: could not read ExecStartEx of %s: %s' % (ident, name, theirs['dbus_error'])
        facts = dict(base, unit=name, fragment_path='%s/%s' % (UNIT_DIR, fname))
        ours, reason, single, single_reason = _parser_view(parser, data, facts)
        where = '%s  ExecStart=%s' % (ident, _short_value(value))
        if theirs['load_state'] != 'loaded' or not theirs.get('exec'):
            # systemd will not run the unit: the line is refused (bad-setting) or dropped (no ExecStart left)
            said = '%s: %s' % (theirs['load_state'], ' / '.join(log) or 'no ExecStart= left')
            if ours is not None:
                wrong.append('%s\n    systemd refuses (%s), the parser reads %r' % (where, said, ours))
            elif single is not None:
                wrong.append('%s\n    systemd refuses (%s), parse_exec() gives %r' % (where, said, single))
            else:
                refused_both += 1
                refusals.append('%s\n    systemd: %s\n    parser:  %s' % (where, said, single_reason))
            continue
        sysd = [(c[0], c[1], [f for f in FLAG_ORDER if f in c[2]]) for c in theirs['exec']]
        if single is not None and single[2] is None:  # an older parser: no flags to compare
            sysd = [(p, a, None) for p, a, dummy in sysd]
        # what the editor may refuse although systemd loads it: several commands or a lone ";", invalid escapes
        by_design = (len(sysd) > 1 or re.search(r'(?:^|[ \t]);(?:[ \t]|$)', value) is not None
                     or re.match(r'\s*(?:";"|\';\')(?:\s|$)', value) is not None
                     or any('unknown escape' in m for m in log))
        if ours is not None and ours != sysd:
            wrong.append('%s\n    systemd: %r\n    parser:  %r' % (where, sysd, ours))
        elif single is not None and [single] != sysd:
            wrong.append('%s\n    systemd: %r\n    parse_exec(): %r' % (where, sysd, single))
        elif single is not None:
            accepted_both += 1
        elif not by_design:
            wrong.append('%s\n    systemd loads %r, the parser refuses: %s' % (where, sysd, single_reason))
        else:
            policy.append('%s\n    systemd: %r\n    refused: %s' % (where, sysd, single_reason))
    finished = time.time()
    summary = ('\nExecStart= oracle (systemd 252 in %s) judging %s:\n'
               '  %d vectors checked: %d refused by both, %d read alike, %d loaded by systemd but refused for '
               'editing by design (several commands or ";", invalid escapes), %d disagreements\n'
               '  %.1fs in the container, %.1fs in the parser, %.1fs in all'
               % (IMAGE, parser_name, len(units), refused_both, accepted_both, len(policy), len(wrong),
                  probed - started, finished - probed, finished - started))
    with capsys.disabled():
        print(summary)
        if os.environ.get('BAREMETAL_K3S_ORACLE_VERBOSE') == '1':
            for w in refusals:
                print('  REFUSED BY BOTH: ' + w)
            for w in policy:
                print('  BY DESIGN: ' + w)
        for w in wrong:
            print('  DISAGREES: ' + w)
    assert not wrong, '%d disagreements with systemd:\n%s' % (len(wrong), '\n'.join(wrong))
    assert len(units) >= 250 and refused_both >= 60
