# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The k3s double told another version (tests/kube/tell-version.sh), as upgrade tests use it.

A copy of the double with the trailer ``#baremetal-k3s-double version=<v>`` reports ``<v>`` in
``k3s --version``, its start log line and its Node's ``status.nodeInfo.kubeletVersion`` (servers and
agents, and again when an existing Node re-registers after a binary swap); with ``fail=start`` it
exits 1 at once as a server or agent, naming the marker, while ``--version`` still answers.

Without the image or the k3s double the test is skipped, or fails when
BAREMETAL_K3S_REQUIRE_DOCKER=1 / BAREMETAL_K3S_REQUIRE_KUBE=1.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from ansible_collections.baremetal.k3s.tests.integration import kube_nodes as kn
from ansible_collections.baremetal.k3s.tests.integration.kube_nodes import (
    docker, journal, kubectl_json, node_container, peek_state, sh, unit_state, wait)

IMAGE, KUBE_DIR = kn.require()

PREFIX = 'bk3s-told-%d' % os.getpid()
TELL = os.path.join(os.path.dirname(__file__), '..', 'kube', 'tell-version.sh')
BUILT = 'v1.36.3+k3s1'
TOLD = 'v1.37.0+k3s1'
OPT = '/opt/told'  # the told copies, with kine beside them (the launcher runs the kine next to itself)


def start(name, unit, binary, argv):
    sh(name, 'systemctl stop %s 2>/dev/null; systemctl reset-failed %s 2>/dev/null; systemd-run --no-block --unit %s '
             '-p Type=notify -p TimeoutStartSec=infinity %s %s' % (unit, unit, unit, binary, ' '.join(argv)))


def kubelet_version(srv, node):
    out = kn.kubectl(srv, 'get', 'node', node, '-o', 'jsonpath={.status.nodeInfo.kubeletVersion}', check=False)
    return out.stdout if out.returncode == 0 else ''


@pytest.fixture(scope='module')
def cluster(tmp_path_factory):
    if docker('info', check=False).returncode != 0:
        if kn.REQUIRE_DOCKER:
            pytest.fail('BAREMETAL_K3S_REQUIRE_DOCKER=1 but docker does not answer (docker info failed)')
        pytest.skip('docker does not answer')
    tmp = tmp_path_factory.mktemp('told')
    src = os.path.join(KUBE_DIR, 'k3s')
    subprocess.run(['bash', TELL, src, str(tmp / 'k3s-b'), TOLD], check=True)
    subprocess.run(['bash', TELL, src, str(tmp / 'k3s-fail'), TOLD, 'fail'], check=True)
    names = {k: '%s-%s' % (PREFIX, k) for k in ('srv', 'agent')}
    docker('network', 'create', PREFIX)
    try:
        for name in names.values():
            node_container(name, PREFIX)
            sh(name, 'mkdir -p %s && ln -s /usr/local/bin/kine %s/kine' % (OPT, OPT))
            for f in ('k3s-b', 'k3s-fail'):
                docker('cp', str(tmp / f), '%s:%s/%s' % (name, OPT, f), timeout=300)
            sh(name, 'systemctl is-system-running --wait >/dev/null; true', timeout=180)
        yield names
    finally:
        for name in names.values():
            docker('rm', '-f', name, check=False)
        docker('network', 'rm', PREFIX, check=False)


def test_version_told(cluster):
    agent = cluster['agent']
    assert sh(agent, 'k3s --version').stdout.splitlines()[0] == 'k3s version %s (baremetal-k3s-double)' % BUILT
    for f in ('k3s-b', 'k3s-fail'):
        out = sh(agent, '%s/%s --version' % (OPT, f)).stdout.splitlines()
        assert out[0] == 'k3s version %s (baremetal-k3s-double)' % TOLD, out
    # the real components are not relabelled
    assert sh(agent, '%s/k3s-b kubectl version --client' % OPT).stdout.splitlines()[0] == 'Client Version: ' + BUILT


def test_nodes_report_told_version_and_fail_start(cluster):
    srv, agent = cluster['srv'], cluster['agent']
    start(srv, 'k3s', '%s/k3s-b' % OPT, ['server', '--write-kubeconfig-mode=644'])
    wait('the told server active', lambda: unit_state(srv, 'k3s') == 'active', 240, [(srv, 'k3s')])
    assert 'msg="Starting k3s %s (baremetal-k3s-double)"' % TOLD in journal(srv, 'k3s', 400)
    assert kn.state(srv)['k3s_version'] == TOLD
    wait('the server Node with the told kubeletVersion', lambda: kubelet_version(srv, srv) == TOLD, 120, [(srv, 'k3s')])
    tok = sh(srv, 'cat /var/lib/rancher/k3s/server/node-token').stdout.strip()
    join = ['agent', '--server', 'https://%s:6443' % srv, '--token', tok]
    # the agent on the built binary, then swapped to the told one: the existing Node shows it
    start(agent, 'k3s-agent', '/usr/local/bin/k3s', join)
    wait('the built agent active', lambda: unit_state(agent, 'k3s-agent') == 'active', 120, [(agent, 'k3s-agent')])
    wait('the agent Node with the built kubeletVersion', lambda: kubelet_version(srv, agent) == BUILT, 60)
    uid = kubectl_json(srv, 'get', 'node', agent)['metadata']['uid']
    start(agent, 'k3s-agent', '%s/k3s-b' % OPT, join)
    wait('the told agent active', lambda: unit_state(agent, 'k3s-agent') == 'active', 120, [(agent, 'k3s-agent')])
    wait('the agent Node with the told kubeletVersion', lambda: kubelet_version(srv, agent) == TOLD, 60)
    assert kubectl_json(srv, 'get', 'node', agent)['metadata']['uid'] == uid
    assert 'msg="Starting k3s agent %s (baremetal-k3s-double)"' % TOLD in journal(agent, 'k3s-agent', 400)
    # fail=start: exits 1 at once, naming the marker; nothing joins
    start(agent, 'k3s-agent', '%s/k3s-fail' % OPT, join)
    wait('the fail=start agent failed', lambda: unit_state(agent, 'k3s-agent') == 'failed', 60, [(agent, 'k3s-agent')])
    st = peek_state(agent)
    assert st['exit_code'] == 1 and 'fail=start' in st['exit_reason'] and not st.get('joined_at'), st
    logged = journal(agent, 'k3s-agent', 50)
    assert 'level=fatal msg="Error: this binary is told not to start (fail=start in its trailer' in logged, logged
    assert 'Starting k3s agent' not in logged.split('fail=start')[-1]
    start(srv, 'k3s', '%s/k3s-fail' % OPT, ['server'])
    wait('the fail=start server failed', lambda: unit_state(srv, 'k3s') == 'failed', 60, [(srv, 'k3s')])
    assert 'fail=start' in peek_state(srv)['exit_reason']
