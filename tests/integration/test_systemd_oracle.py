# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""systemd itself as the oracle: its argv for every installer variant equals the parser's, after each edit.

Needs a Debian image with systemd as PID 1, named by BAREMETAL_K3S_IMAGE_SYSTEMD. Without it
the test is skipped, or fails when BAREMETAL_K3S_REQUIRE_DOCKER=1. One container serves all variants.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import installer  # noqa: E402 pylint: disable=wrong-import-position,import-error

IMAGE = os.environ.get('BAREMETAL_K3S_IMAGE_SYSTEMD')
REQUIRE = os.environ.get('BAREMETAL_K3S_REQUIRE_DOCKER') == '1'

if not IMAGE:
    if REQUIRE:
        raise RuntimeError('BAREMETAL_K3S_REQUIRE_DOCKER=1 but BAREMETAL_K3S_IMAGE_SYSTEMD is not set: '
                           'build the Debian systemd image and export its name.')
    pytest.skip('BAREMETAL_K3S_IMAGE_SYSTEMD is not set (set it to a Debian image with systemd to run this oracle)',
                allow_module_level=True)


def _import_parser():
    try:
        from ansible_collections.baremetal.k3s.plugins.module_utils import _systemd_unit  # pylint: disable=import-outside-toplevel
        return _systemd_unit
    except ImportError:
        farm = os.path.join(os.environ.get('TMPDIR', '/tmp'), 'baremetal-k3s-oracle-%d' % os.getuid())
        link = os.path.join(farm, 'ansible_collections', 'baremetal', 'k3s')
        os.makedirs(os.path.dirname(link), exist_ok=True)
        if not os.path.lexists(link):
            os.symlink(ROOT, link)
        sys.path.insert(0, farm)
        from ansible_collections.baremetal.k3s.plugins.module_utils import _systemd_unit  # pylint: disable=import-outside-toplevel
        return _systemd_unit


su = _import_parser()

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
        cid = docker('run', '-d', '--cap-add', 'SYS_ADMIN', '--cap-add', 'NET_ADMIN',
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


def put(cid, path, content):
    docker('exec', '-i', cid, 'sh', '-c', 'mkdir -p "$(dirname "$1")" && cat > "$1"', 'put', path, input_bytes=content)


def systemd_argv(cid, unit_name):
    """ExecStart's argv as systemd itself parsed it, read over D-Bus.

    ``systemctl show`` joins the words with spaces without quoting them (systemd 252), so
    a word holding a space cannot be told apart; the D-Bus property keeps them as a list.
    """
    script = ('systemctl daemon-reload && '
              'obj=$(busctl --json=short call org.freedesktop.systemd1 /org/freedesktop/systemd1 '
              'org.freedesktop.systemd1.Manager LoadUnit s "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)[\'data\'][0])") && '
              'busctl --json=short get-property org.freedesktop.systemd1 "$obj" org.freedesktop.systemd1.Service ExecStart')
    out = docker('exec', cid, 'sh', '-c', script, 'sh', unit_name).stdout
    commands = json.loads(out)['data']
    assert len(commands) == 1, 'expected one ExecStart for %s, systemd has %r' % (unit_name, commands)
    return commands[0][1]


def test_oracle(container):
    checked = 0
    for i, args in enumerate(ARG_SETS):
        for command in ('server', 'agent'):
            for extra in ({}, {'systemd_dir': '/usr/lib/systemd/system', 'bin_dir': '/opt/bin'}):
                name = 'v%d%s' % (i, command[0])
                files = installer.generate(command, args, name=name, **extra)
                unit_path = files[0].path
                unit_name = os.path.basename(unit_path)
                unit = su.UnitFile(files[0].content)
                steps = [('installer', None)] + [('add', a) for a in EDITS] + [('remove', a) for a in EDITS]
                for step, arg in steps:
                    if step == 'add':
                        unit.add_arg(unit.exec_start()[0], arg)
                    elif step == 'remove':
                        unit.remove_arg(unit.exec_start()[0], arg)
                    put(container, unit_path, unit.render())
                    ours = unit.parse_exec(unit.exec_start()[0]).argv
                    theirs = systemd_argv(container, unit_name)
                    assert theirs == ours, '%s after %s %r:\n%s' % (unit_name, step, arg, unit.render().decode())
                    checked += 1
                assert unit.render() == files[0].content
                # a drop-in that replaces ExecStart, as method=dropin writes it
                argv = unit.parse_exec(unit.exec_start()[0]).argv + [EDITS[0]]
                dropin = '[Service]\nExecStart=\n' + su.render_exec_start('', argv[0], argv)
                put(container, '/etc/systemd/system/%s.d/99-baremetal-k3s.conf' % unit_name, dropin.encode())
                assert systemd_argv(container, unit_name) == argv
                docker('exec', container, 'rm', '-rf', '/etc/systemd/system/%s.d' % unit_name, unit_path)
                checked += 1
    assert checked >= 100
