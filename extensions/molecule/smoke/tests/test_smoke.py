# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The test environment itself: installer-format unit, launcher of real parts, extender."""

from __future__ import annotations

import json
import re

import bk3s_checks as c  # pylint: disable=import-error


def test_k3s_is_active(host):
    svc = host.service('k3s')
    assert svc.is_running
    assert svc.is_enabled


def test_systemd_execstart_matches_the_installer_fixture(host):
    expected = host.check_output(
        "python3 /usr/local/lib/bk3s-installer.py --print-argv "
        "--exec 'server --disable=traefik --write-kubeconfig-mode=644'").splitlines()
    assert c.systemd_argv(host, 'k3s.service') == expected
    assert expected[:2] == ['/usr/local/bin/k3s', 'server']


def test_unit_is_the_installer_format(host):
    host.check_output("rm -rf /tmp/fixture && python3 /usr/local/lib/bk3s-installer.py --root /tmp/fixture "
                      "--exec 'server --disable=traefik --write-kubeconfig-mode=644'")
    for path in ('/etc/systemd/system/k3s.service', '/etc/systemd/system/k3s.service.env'):
        assert host.file(path).sha256sum == host.file('/tmp/fixture' + path).sha256sum, path
    assert host.file('/etc/systemd/system/k3s.service.env').mode == 0o600
    unit = host.file('/etc/systemd/system/k3s.service').content_string
    assert "ExecStart=/usr/local/bin/k3s \\\n    server \\\n\t'--disable=traefik' \\\n" in unit


def test_launcher_started_the_real_scheduler_after_ready(host):
    state = json.loads(host.file('/run/k3s-double/state.json').content_string)
    assert state['api_ready_at'] <= state['scheduler_started_at']
    out = host.check_output('curl -sk https://127.0.0.1:10259/healthz')
    assert out == 'ok'
    version = host.check_output('k3s --version').splitlines()[0]
    assert re.match(r'k3s version v1\.\d+\.\d+\+k3s1 ', version), version


def test_api_server_answers_with_the_admin_kubeconfig(host):
    out = host.check_output('k3s kubectl --kubeconfig /etc/rancher/k3s/k3s.yaml get --raw /readyz')
    assert out == 'ok'
    assert host.file('/etc/rancher/k3s/k3s.yaml').mode == 0o644
    assert host.file('/var/lib/rancher/k3s/server/cred/scheduler.kubeconfig').exists
    assert host.file('/var/lib/rancher/k3s/server/db/state.db').exists


def test_reference_extender_answers_filter(host):
    body = json.dumps({'Pod': {'metadata': {'name': 'p', 'namespace': 'default'}},
                       'Nodes': {'items': [{'metadata': {'name': 'n1'}}]}, 'NodeNames': None})
    out = host.check_output('curl -s -X POST -H "Content-Type: application/json" --data %s '
                            'http://127.0.0.1:8889/filter', body)
    result = json.loads(out)
    assert not result.get('Error')
    assert [n['metadata']['name'] for n in result['Nodes']['items']] == ['n1']
