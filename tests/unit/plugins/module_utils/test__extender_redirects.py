# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Family: the extender as the scheduler reaches it. kube-scheduler's extender client is Go's net/http client with
the default CheckRedirect: 301/302/303 followed with a GET and no body, 307/308 with the same method and body, at
most 10 redirects, each request through the proxy its own URL gets, Client.Timeout over the whole exchange. The
probe follows the same rules, against a real HTTP server here."""

from __future__ import annotations

import http.server
import json
import threading
import time

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _extender

ANSWER = {'NodeNames': ['n1'], 'FailedNodes': {}, 'Error': ''}


class Handler(http.server.BaseHTTPRequestHandler):
    """Routes by path: /ok/filter answers as an extender (POST with an ExtenderArgs body only); the others redirect."""

    seen = None  # [(method, path, body)] of every request, set per server

    def _reply(self, status, body=b'', location=None):
        self.send_response(status)
        if location is not None:
            self.send_header('Location', location)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _handle(self, method):
        length = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(length) if length else b''
        self.seen.append((method, self.path, body))
        parts = self.path.strip('/').split('/')
        kind = parts[0]
        if kind == 'ok':
            args = json.loads(body or b'null') if body else None
            if method != 'POST' or not isinstance(args, dict) or 'Pod' not in args:
                return self._reply(405 if method != 'POST' else 400, b'{"Error": "expected POST with ExtenderArgs"}')
            return self._reply(200, json.dumps(ANSWER).encode())
        if kind == 'getok':
            return self._reply(200, json.dumps(ANSWER).encode())
        if kind in ('r301', 'r302', 'r303', 'r307', 'r308'):
            return self._reply(int(kind[1:]), location='/%s/filter' % (parts[1] if len(parts) > 2 else 'ok'))
        if kind == 'abs308':
            return self._reply(308, location='http://127.0.0.1:%d/ok/filter' % self.server.server_port)
        if kind == 'chain':  # /chain/<n>/filter: n more redirects, then the extender
            n = int(parts[1])
            return self._reply(307, location='/chain/%d/filter' % (n - 1) if n > 1 else '/ok/filter')
        if kind == 'noloc':
            return self._reply(307)
        if kind == 'ftp':
            return self._reply(307, location='ftp://127.0.0.1/filter')
        if kind == 'badloc':
            return self._reply(307, location='http://[::1/filter')
        if kind == 'slow':  # /slow/<n>/filter: waits 0.3 s, then n more redirects
            time.sleep(0.3)
            n = int(parts[1])
            return self._reply(307, location='/slow/%d/filter' % (n - 1) if n > 1 else '/ok/filter')
        return self._reply(404)

    def do_POST(self):  # noqa: N802
        self._handle('POST')

    def do_GET(self):  # noqa: N802
        self._handle('GET')

    def log_message(self, *args):  # pylint: disable=arguments-differ
        pass


@pytest.fixture(name='server')
def fixture_server():
    seen = []
    handler = type('H', (Handler,), {'seen': seen})
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    srv.seen = seen
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def url(server, prefix):
    return 'http://127.0.0.1:%d/%s' % (server.server_port, prefix)


@pytest.mark.parametrize('prefix, reachable, methods', [
    ('ok', True, ['POST']),
    ('r307', True, ['POST', 'POST']),              # same method, same body
    ('r308', True, ['POST', 'POST']),
    ('abs308', True, ['POST', 'POST']),
    ('r302', False, ['POST', 'GET']),              # Go turns a POST into a GET without body: the extender refuses it
    ('r301', False, ['POST', 'GET']),
    ('r303', False, ['POST', 'GET']),
    ('r301/getok', True, ['POST', 'GET']),         # and where a GET is answered, it is answered for the scheduler too
    ('chain/9', True, ['POST'] * 10),              # 9 redirects, the 10th request answers: as for Go
    ('chain/10', False, ['POST'] * 10),            # the 10th request redirects too: Go stops there
])
def test_family_extender_redirects_are_followed_as_go_follows_them(server, prefix, reachable, methods):
    res = _extender.probe(url(server, prefix), 'filter', ['n1'], timeout=5)
    assert res.reachable is reachable, res
    assert [m for m, dummy, dummy2 in server.seen] == methods
    sent = [body for m, dummy, body in server.seen if m == 'POST']
    assert len(set(sent)) == 1 and b'"Pod"' in sent[0]   # 307/308 send the very same body again
    assert all(body == b'' for m, dummy, body in server.seen if m == 'GET')
    if reachable:
        assert res.status == 200 and res.error == '' and len(res.redirects) == len(methods) - 1
    elif prefix.startswith('chain'):
        assert 'stopped after 10 redirects' in res.error
    else:
        assert res.status == 405 and '(after 1 redirect, at http://127.0.0.1:' in res.error


@pytest.mark.parametrize('prefix, error', [
    ('noloc', 'HTTP 307'),                                   # a redirect without Location is the answer itself
    ('ftp', 'unsupported protocol scheme'),
    ('badloc', 'which is not a URL'),
    ('nothing-here', 'HTTP 404'),
])
def test_family_extender_redirects_that_cannot_be_followed_say_why(server, prefix, error):
    res = _extender.probe(url(server, prefix), 'filter', ['n1'], timeout=5)
    assert res.reachable is False and error in res.error, res


def test_family_extender_redirects_share_one_timeout(server):
    """Go's Client.Timeout covers the whole exchange, redirects included."""
    start = time.monotonic()
    res = _extender.probe(url(server, 'slow/3'), 'filter', ['n1'], timeout=0.5)
    assert time.monotonic() - start < 2
    assert res.reachable is False and 'timeout' in res.error
    assert _extender.probe(url(server, 'slow/1'), 'filter', ['n1'], timeout=5).reachable is True


def test_family_extender_redirects_each_request_gets_its_own_proxy(monkeypatch):
    """The proxy is chosen per request from the scheduler's environment, as Go's ProxyFromEnvironment does."""
    asked = []

    def exchange(target, method, body, headers, proxy, ctx, timeout):  # pylint: disable=unused-argument
        asked.append((target, method, proxy))
        if target.startswith('http://ext.example'):
            return 307, 'http://127.0.0.1:8889/filter', b''
        return 200, None, json.dumps(ANSWER).encode()

    monkeypatch.setattr(_extender, '_exchange', exchange)
    env = {'HTTP_PROXY': 'http://proxy.example:3128'}
    res = _extender.probe('http://ext.example', 'filter', ['n1'], environ=env)
    assert res.reachable is True
    assert asked == [('http://ext.example/filter', 'POST', 'http://proxy.example:3128'),
                     ('http://127.0.0.1:8889/filter', 'POST', None)]  # loopback: never through a proxy


@pytest.mark.parametrize('status, location, method, following', [
    (301, '/x', 'POST', ('http://h/x', 'GET', None)),
    (302, 'http://o/x', 'POST', ('http://o/x', 'GET', None)),
    (303, '/x', 'GET', ('http://h/x', 'GET', None)),
    (302, '/x', 'HEAD', ('http://h/x', 'HEAD', None)),
    (307, '/x', 'POST', ('http://h/x', 'POST', b'body')),
    (308, 'x', 'POST', ('http://h/a/x', 'POST', b'body')),
    (307, None, 'POST', None),
    (200, '/x', 'POST', None),
    (304, '/x', 'POST', None),
    (300, '/x', 'POST', None),
])
def test_family_extender_redirects_next_request(status, location, method, following):
    assert _extender.next_request(status, location, 'http://h/a/filter', method, b'body') == following
