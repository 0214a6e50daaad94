# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""k3s_node's join_check, run by ansible-playbook on localhost against HTTP servers on a loopback address of the test's
own: the cluster CA is asked through the join URL, and through the supervisor port 9345 of its host only when the join
URL gave no certificate; a join neither serves names both with their answers. (The first server is localhost, where no
k3s runs: its own /readyz is a problem in every case, and the cases look at /cacerts.)"""

from __future__ import annotations

import http.server
import random
import threading

import pytest

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Join check
      ansible.builtin.include_role:
        name: baremetal.k3s.k3s_node
        tasks_from: join_check
      vars:
        k3s_node_first_server: localhost
        k3s_node_join_fail: false
    - name: Show
      ansible.builtin.debug:
        var: _k3s_node_join
"""
CERT = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
SUPERVISOR = 'Ask its supervisor port (9345) for the cluster CA when the join URL gave none, from this node'


def _serve(host, port, cacerts):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 pylint: disable=invalid-name
            if self.path == '/cacerts' and cacerts:
                body, status = CERT.encode(), 200
            else:
                body, status = b'Unauthorized', 401 if self.path == '/readyz' else 404
            self.send_response(status)
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # pylint: disable=arguments-differ
            pass
    server = http.server.ThreadingHTTPServer((host, port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(name='host')
def fixture_host():
    """A loopback address of this test's own (127.0.0.0/8 is the loopback's on Linux), so that ports 6443 and 9345
    there collide with nothing."""
    return '127.%d.%d.%d' % (random.randint(1, 254), random.randint(1, 254), random.randint(2, 254))


@pytest.mark.parametrize('url_ca, supervisor, supervisor_ca, asked, served', [
    (True, False, False, False, True),   # the join URL gives the CA: asked once
    (False, True, True, True, True),     # only the supervisor port does: asked there too, served
    (False, False, False, True, False),  # neither: both named with their answers
])
def test_the_supervisor_port_is_asked_only_when_the_join_url_gave_no_ca(
        playbook, host, url_ca, supervisor, supervisor_ca, asked, served):
    servers = [_serve(host, 6443, url_ca)] + ([_serve(host, 9345, supervisor_ca)] if supervisor else [])
    try:
        rc, results, err = playbook(PLAYBOOK, {'k3s_node_join_url': 'http://%s:6443/' % host})
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    assert rc == 0, err
    assert (results[SUPERVISOR].get('skipped') is not True) == asked
    msg = results['Show']['_k3s_node_join']['msg']
    assert ('/cacerts' in msg) != served, msg
    if not served:
        assert 'http://%s:6443: Status code was 404' % host in msg and 'http://%s:9345: ' % host in msg, msg
