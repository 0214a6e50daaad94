# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""baremetal.k3s.site on openrc: the installer's init scripts, the images tarball, a real join, an upgrade interrupted
between the swap and the restart finished by the next run; then the agent reset."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess

import testinfra

import bk3s_checks as c  # pylint: disable=import-error

INVENTORY = os.environ['MOLECULE_INVENTORY_FILE']
SERVER = testinfra.get_host('ansible://bk3s-orc-server', ansible_inventory=INVENTORY)
AGENT = testinfra.get_host('ansible://bk3s-orc-agent', ansible_inventory=INVENTORY)
NODES = {'bk3s-orc-server': (SERVER, 'k3s', 'server'), 'bk3s-orc-agent': (AGENT, 'k3s-agent', 'agent')}
IMAGES = os.path.join(os.path.dirname(__file__), '..', 'files', 'k3s-airgap-images-test.tar.gz')


def test_the_init_scripts_and_env_files_are_the_installers():
    for host, service, command in NODES.values():
        script = host.file('/etc/init.d/%s' % service)
        assert script.mode == 0o755
        assert script.content_string.startswith('#!/sbin/openrc-run\n')
        assert 'command="/usr/local/bin/k3s"\ncommand_args="%s \\\n' % command in script.content_string
        env = host.file('/etc/rancher/k3s/%s.env' % service)
        assert env.exists and env.mode == 0o600
        assert host.run('rc-service %s status' % service).rc == 0
        assert 'default' in host.check_output('rc-update show | grep -w %s' % service)


def test_the_images_tarball_is_where_k3s_imports_it_with_the_bytes_given():
    want = hashlib.sha256(open(IMAGES, 'rb').read()).hexdigest()
    for host, _service, _command in NODES.values():
        f = host.file('/var/lib/rancher/k3s/agent/images/k3s-airgap-images-test.tar.gz')
        assert f.exists and f.sha256sum == want


def test_both_nodes_are_ready_in_the_api_with_their_labels():
    nodes = {n['metadata']['name']: n for n in json.loads(SERVER.check_output(c.KUBECTL + 'get nodes -o json'))['items']}
    assert set(nodes) == set(NODES), sorted(nodes)
    for name, node in nodes.items():
        ready = [cond for cond in node['status']['conditions'] if cond['type'] == 'Ready']
        assert ready and ready[0]['status'] == 'True', (name, node['status']['conditions'])
        assert node['metadata']['labels'].get('init') == 'openrc', node['metadata']['labels']


def test_each_node_started_once_the_failed_run_restarted_nothing():
    # converge started each node once; the failed run restarted nothing; the interrupted upgrade's re-run and the
    # run that put the scenario's binary back restarted the agent once each (shared/upgrade_interrupted.yml)
    want = {'bk3s-orc-server': 1, 'bk3s-orc-agent': 3}
    for name, (host, _service, _command) in NODES.items():
        starts = [e for e in c.launcher_events(host) if e['event'] == 'start']
        assert len(starts) == want[name], (name, [e['time'] for e in starts])


def _reset_agent():
    """baremetal.k3s.reset of the agent, as an operator runs it, from the checkout's playbook."""
    playbook = os.path.join(os.environ['MOLECULE_PROJECT_DIRECTORY'], 'playbooks', 'reset.yml')
    env = dict(os.environ, ANSIBLE_NOCOLOR='1', ANSIBLE_FORCE_COLOR='0')
    return subprocess.run(['ansible-playbook', '-i', INVENTORY, playbook, '-l', 'bk3s-orc-agent',
                           '-e', 'k3s_reset_confirm=bk3s-orc-agent'], env=env, capture_output=True, text=True,
                          timeout=900, check=False)


def test_last_the_agent_is_reset_through_openrc():
    """Runs last (it takes the agent out): the reset stops and removes the init script's service, deletes the Node,
    and a second reset changes nothing."""
    first = _reset_agent()
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    assert re.search(r'bk3s-orc-agent\s+:\s+ok=\d+\s+changed=[1-9]', first.stdout), first.stdout[-1500:]
    assert AGENT.run('rc-service k3s-agent status').rc != 0
    assert not AGENT.file('/etc/init.d/k3s-agent').exists and not AGENT.file('/etc/rancher/k3s/k3s-agent.env').exists
    assert 'k3s-agent' not in AGENT.run('rc-update show').stdout
    assert not [p for p in AGENT.process.filter(comm='k3s') if 'agent' in p.args]
    names = json.loads(SERVER.check_output(c.KUBECTL + 'get nodes -o json'))['items']
    assert [n['metadata']['name'] for n in names] == ['bk3s-orc-server']
    again = _reset_agent()
    assert again.returncode == 0 and re.search(r'bk3s-orc-agent\s+:\s+ok=\d+\s+changed=0 ', again.stdout), again.stdout[-1500:]
