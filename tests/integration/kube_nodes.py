# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Node containers running the k3s double, for the tests of the double itself (test_kube_join, test_kube_etcd).

:func:`require` skips the calling test module without the node image or the double (or fails
it when BAREMETAL_K3S_REQUIRE_DOCKER=1 / BAREMETAL_K3S_REQUIRE_KUBE=1, as CI sets them); the
rest runs commands in the containers, reads the double's state file and events, and waits.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

IMAGE = os.environ.get('BAREMETAL_K3S_IMAGE_SYSTEMD')
KUBE_DIR = os.environ.get('BAREMETAL_K3S_KUBE_DIR')
REQUIRE_DOCKER = os.environ.get('BAREMETAL_K3S_REQUIRE_DOCKER') == '1'
STATE = '/run/k3s-double/state.json'
# the label of every container the integration tests start: tests/run.sh's stage, whose CPU time it is (tests/stage_cpu.py)
STAGE_LABEL = 'bk3s.stage=' + os.environ.get('BK3S_STAGE', '')
EVENTS = '/var/log/k3s-double/events.jsonl'


def require():
    """(the node image, the double's directory); skips the module (or fails, when required) without them."""
    if not IMAGE:
        if REQUIRE_DOCKER:
            raise RuntimeError('BAREMETAL_K3S_REQUIRE_DOCKER=1 but BAREMETAL_K3S_IMAGE_SYSTEMD is not set: '
                               'build the node image (tests/lib.sh bk3s_images) and export its name.')
        pytest.skip('BAREMETAL_K3S_IMAGE_SYSTEMD is not set (the node image, tests/lib.sh bk3s_images)',
                    allow_module_level=True)
    if not (KUBE_DIR and os.access(os.path.join(KUBE_DIR, 'k3s'), os.X_OK)):
        if os.environ.get('BAREMETAL_K3S_REQUIRE_KUBE') == '1':
            raise RuntimeError('BAREMETAL_K3S_REQUIRE_KUBE=1 but BAREMETAL_K3S_KUBE_DIR (%r) holds no k3s: build the k3s '
                               'double (tests/lib.sh bk3s_kube) and export its directory.' % KUBE_DIR)
        pytest.skip('BAREMETAL_K3S_KUBE_DIR does not hold the k3s double (tests/lib.sh bk3s_kube)', allow_module_level=True)
    return IMAGE, KUBE_DIR


def docker(*args, check=True, timeout=120, stdin=None):
    return subprocess.run(['docker'] + list(args), input=stdin if stdin is not None else '', capture_output=True,
                          text=True, check=check, timeout=timeout)


def sh(name, script, check=True, timeout=120):
    out = docker('exec', '-i', name, 'sh', '-c', script, check=False, timeout=timeout)
    if check and out.returncode:
        pytest.fail('%s: %s failed (%d):\n%s%s' % (name, script, out.returncode, out.stdout, out.stderr))
    return out


def kubectl(name, *args, check=True):
    out = docker('exec', name, 'k3s', 'kubectl', '--request-timeout=20s', *args, check=False)
    if check and out.returncode:
        pytest.fail('%s: kubectl %s: %s' % (name, ' '.join(args), out.stderr))
    return out


def kubectl_json(name, *args):
    return json.loads(kubectl(name, *args, '-o', 'json').stdout)


def state(name):
    return json.loads(sh(name, 'cat %s' % STATE).stdout)


def peek_state(name):
    """The state file, or {} while the process has not written it yet."""
    out = sh(name, 'cat %s' % STATE, check=False)
    return json.loads(out.stdout) if out.returncode == 0 else {}


def events(name, event):
    out = sh(name, 'cat %s 2>/dev/null; true' % EVENTS).stdout
    return [e for e in (json.loads(line) for line in out.splitlines() if line.strip()) if e['event'] == event]


def journal(name, unit, lines=25):
    """The unit's last log lines of the double (logrus text; etcd's own JSON lines left out)."""
    return sh(name, 'journalctl -u %s --no-pager | grep level= | grep -v \'"level":\' | tail -n %d' % (unit, lines),
              check=False).stdout


def wait(what, probe, timeout, logs=()):
    """``probe()``'s first true answer within ``timeout`` seconds; else fail with the journals of ``logs`` [(node, unit)]."""
    deadline = time.time() + timeout
    while True:
        got = probe()
        if got:
            return got
        if time.time() > deadline:
            detail = ''.join('\n--- %s %s:\n%s' % (n, u, journal(n, u)) for n, u in logs)
            pytest.fail('%s within %ds%s' % (what, timeout, detail))
        time.sleep(0.5)


def unit_state(name, unit):
    return sh(name, 'systemctl is-active %s' % unit, check=False).stdout.strip()


def start_unit(name, unit, argv, env=()):
    """k3s as a Type=notify unit, as the installer's units run it (systemd waits for READY=1); ``env``: KEY=value."""
    sh(name, 'systemctl reset-failed %s 2>/dev/null; systemd-run --no-block --unit %s -p Type=notify '
             '-p TimeoutStartSec=infinity %s /usr/local/bin/k3s %s'
             % (unit, unit, ' '.join('-E %s' % e for e in env), ' '.join(argv)))


def stop_unit(name, unit='k3s'):
    sh(name, 'systemctl stop %s; systemctl reset-failed %s 2>/dev/null; true' % (unit, unit), timeout=120)


def node_container(name, network):
    """A node: systemd as PID 1, the double at /usr/local/bin/k3s and kine beside it."""
    docker('run', '-d', '--name', name, '--hostname', name, '--network', network, '--label', 'baremetal-k3s=node',
           '--label', STAGE_LABEL,
           '--cap-add', 'SYS_ADMIN', '--cap-add', 'NET_ADMIN', '--security-opt', 'seccomp=unconfined',
           '--security-opt', 'apparmor=unconfined', '-v', '/sys/fs/cgroup:/sys/fs/cgroup:rw', '--cgroupns', 'host',
           '--tmpfs', '/run', '--tmpfs', '/run/lock', '--tmpfs', '/tmp',
           '-v', '%s:/usr/local/bin/k3s:ro' % os.path.join(KUBE_DIR, 'k3s'),
           '-v', '%s:/usr/local/bin/kine:ro' % os.path.join(KUBE_DIR, 'kine'),
           IMAGE, '/lib/systemd/systemd')
