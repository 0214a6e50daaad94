# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The installer-output generator against the layout k3s's install.sh writes, byte for byte."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

import installer  # pylint: disable=import-error

INSTALLER_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'integration', 'installer.py')

INSTALLER_UNIT = b"""[Unit]
Description=Lightweight Kubernetes
Documentation=https://k3s.io
Wants=network-online.target
After=network-online.target

[Install]
WantedBy=multi-user.target

[Service]
Type=notify
EnvironmentFile=-/etc/default/%N
EnvironmentFile=-/etc/sysconfig/%N
EnvironmentFile=-/etc/systemd/system/k3s.service.env
KillMode=process
Delegate=yes
User=root
# Having non-zero Limit*s causes performance problems due to accounting overhead
# in the kernel. We recommend using cgroups to do container-local accounting.
LimitNOFILE=1048576
LimitNPROC=infinity
LimitCORE=infinity
TasksMax=infinity
TimeoutStartSec=0
Restart=always
RestartSec=5s
ExecStartPre=-/sbin/modprobe br_netfilter
ExecStartPre=-/sbin/modprobe overlay
ExecStart=/usr/local/bin/k3s \\
    server \\
\t'--disable=traefik' \\
\t'--write-kubeconfig-mode=644' \\

"""


def test_facts_unit_exact():
    files = installer.generate('server', ['--disable=traefik', '--write-kubeconfig-mode=644'])
    assert files[0] == ('/etc/systemd/system/k3s.service', INSTALLER_UNIT, 0o644)
    assert files[1] == ('/etc/systemd/system/k3s.service.env', b'', 0o600)


@pytest.mark.parametrize('command, args, tail', [
    ('server', [], b'ExecStart=/usr/local/bin/k3s \\\n    server \\\n\n'),
    ('agent', ["it's"], b"ExecStart=/usr/local/bin/k3s \\\n    agent \\\n\t'it'\\''s' \\\n\n"),
    ('server', ["''"], b"    server \\\n\t''\\'''\\''' \\\n\n"),
    ('server', ['a b', 'ü'], b"    server \\\n\t'a b' \\\n\t'\xc3\xbc' \\\n\n"),
])
def test_unit_tail(command, args, tail):
    assert installer.generate(command, args)[0].content.endswith(tail)


@pytest.mark.parametrize('kw, unit_path, env_path, exec_line', [
    ({'command': 'agent'}, '/etc/systemd/system/k3s-agent.service', '/etc/systemd/system/k3s-agent.service.env',
     b'ExecStart=/usr/local/bin/k3s \\\n    agent \\\n'),
    ({'name': 'x'}, '/etc/systemd/system/k3s-x.service', '/etc/systemd/system/k3s-x.service.env', None),
    ({'bin_dir': '/opt/bin', 'systemd_dir': '/usr/lib/systemd/system'}, '/usr/lib/systemd/system/k3s.service',
     '/usr/lib/systemd/system/k3s.service.env', b'ExecStart=/opt/bin/k3s \\\n'),
])
def test_names_and_dirs(kw, unit_path, env_path, exec_line):
    files = installer.generate(**kw)
    assert files[0].path == unit_path and files[1].path == env_path
    assert b'EnvironmentFile=-%s\n' % env_path.encode() in files[0].content
    if exec_line:
        assert exec_line in files[0].content


def test_type_exec():
    assert b'\nType=exec\n' in installer.generate(service_type='exec')[0].content


def test_openrc_exact():
    files = installer.generate('server', ['--disable=traefik', 'say "hi"'], init='openrc')
    assert files[0].path == '/etc/init.d/k3s' and files[0].mode == 0o755
    assert files[1].path == '/etc/rancher/k3s/k3s.env' and files[1].mode == 0o600
    text = files[0].content.decode()
    assert text.startswith('#!/sbin/openrc-run\n\ndepend() {\n    after network-online\n    want cgroups\n}\n')
    assert ('supervisor=supervise-daemon\nname=k3s\ncommand="/usr/local/bin/k3s"\n'
            'command_args="server \\\n\t\'--disable=traefik\' \\\n\t\'say \\"hi\\"\' \\\n    >>/var/log/k3s.log 2>&1"\n'
            '\noutput_log=/var/log/k3s.log\nerror_log=/var/log/k3s.log\n\npidfile="/var/run/k3s.pid"\n'
            'respawn_delay=5\nrespawn_max=0\n') in text
    assert text.endswith('if [ -f /etc/rancher/k3s/k3s.env ]; then . /etc/rancher/k3s/k3s.env; fi\nset +o allexport\n')
    assert files[2].path == '/etc/logrotate.d/k3s'


@pytest.mark.parametrize('install_exec, script_args, expected', [
    ('', [], ('server', [])),
    ('--disable=traefik', [], ('server', ['--disable=traefik'])),
    ('server --disable=traefik', [], ('server', ['--disable=traefik'])),
    ('server', ['--disable=traefik'], ('server', ['--disable=traefik'])),
    ('agent --node-label "a  b"', [], ('agent', ['--node-label', 'a b'])),  # unquoted $(escape ...) is field-split first
    ("--node-label 'x y'", [], ('server', ['--node-label', 'x y'])),
    ('', ['server', 'a  b'], ('server', ['a b'])),  # the script arguments are re-split: runs of blanks collapse
    ('--a=$HOME', [], ('server', ['--a=$HOME'])),
])
def test_exec_words(install_exec, script_args, expected):
    assert installer.split_command(installer.exec_words(install_exec, script_args)) == expected


def test_k3s_url_defaults_to_agent():
    assert installer.split_command(['--x'], k3s_url='https://s:6443') == ('agent', ['--x'])


def test_env_file():
    env = {'K3S_TOKEN': "a'b", 'HOME': '/root', 'https_proxy': 'http://p:3128', 'CONTAINERD_LOG': 'x  y', 'K3S_URL': 'u'}
    assert installer.env_file_content(env) == b"CONTAINERD_LOG='x y'\nK3S_TOKEN='a'\\''b'\nK3S_URL='u'\nhttps_proxy='http://p:3128'\n"


def test_invalid_name():
    with pytest.raises(ValueError, match='invalid characters'):
        installer.generate(name='a b')
    with pytest.raises(ValueError, match='systemd or openrc'):
        installer.generate(init='runit')


def test_cli(tmp_path):
    common = [sys.executable, INSTALLER_PY, '--exec', 'server --disable=traefik', '--name', 'x']
    out = subprocess.run(common + ['--root', str(tmp_path), '--', "--node-label=it's"], capture_output=True, text=True, check=True)
    unit = tmp_path / 'etc/systemd/system/k3s-x.service'
    assert unit.read_bytes() == installer.generate('server', ['--disable=traefik', "--node-label=it's"], name='x')[0].content
    assert stat.S_IMODE((tmp_path / 'etc/systemd/system/k3s-x.service.env').stat().st_mode) == 0o600
    assert out.stdout.splitlines() == [str(tmp_path / 'etc/systemd/system/k3s-x.service'), str(tmp_path / 'etc/systemd/system/k3s-x.service.env')]
    argv = subprocess.run(common + ['--print-argv', '--', "--node-label=it's"], capture_output=True, text=True, check=True)
    assert argv.stdout.splitlines() == ['/usr/local/bin/k3s', 'server', '--disable=traefik', "--node-label=it's"]
    bad = subprocess.run([sys.executable, INSTALLER_PY, '--exec', "server 'open", '--root', str(tmp_path)],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and 'unterminated' in bad.stderr
