# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The probe takes the proxy the scheduler's Go HTTP client would take, and goes through it.

``go_proxy`` against the cases of Go's golang.org/x/net/http/httpproxy; then a small real proxy
(a thread: CONNECT tunnels and absolute-URI requests) between the probe and the reference
extender. The extender's host name, ``extender.test``, resolves only in the proxy: a probe that
did not go through it cannot reach the extender.
"""

from __future__ import annotations

import base64
import http.client
import http.server
import json
import os
import select
import socket
import threading

from urllib.parse import urlsplit

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _extender
from ansible_collections.baremetal.k3s.tests.unit.plugins.module_utils.test__extender import (  # pylint: disable=unused-import
    Running, _server_tls, pki)
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.test_extender_status import Node, run_status

P = 'http://proxy.example:3128'


@pytest.mark.parametrize('env, url, want', [
    ({}, 'http://example.com/', None),
    ({'HTTP_PROXY': 'cache.corp.example.com:1234'}, 'http://example.com/', 'http://cache.corp.example.com:1234'),
    ({'HTTP_PROXY': 'cache.corp.example.com'}, 'http://example.com/', 'http://cache.corp.example.com'),
    ({'HTTP_PROXY': 'https://cache.corp.example.com'}, 'http://example.com/', 'https://cache.corp.example.com'),
    ({'http_proxy': P}, 'http://example.com/', P),
    ({'HTTP_PROXY': P, 'http_proxy': 'http://lower:1'}, 'http://example.com/', P),  # upper case first
    ({'HTTP_PROXY': '', 'http_proxy': 'http://lower:1'}, 'http://example.com/', 'http://lower:1'),  # empty is unset
    # https:// takes HTTPS_PROXY only; http:// HTTP_PROXY only
    ({'HTTPS_PROXY': 'https://secure.example.com'}, 'https://example.com/', 'https://secure.example.com'),
    ({'https_proxy': 'secure.example.com:3128'}, 'https://example.com/', 'http://secure.example.com:3128'),
    ({'HTTPS_PROXY': P}, 'http://example.com/', None),
    ({'HTTP_PROXY': P}, 'https://example.com/', None),
    # a CGI process (REQUEST_METHOD set) refuses HTTP_PROXY, not HTTPS_PROXY
    ({'HTTP_PROXY': P, 'REQUEST_METHOD': 'GET'}, 'http://example.com/', None),
    ({'HTTPS_PROXY': P, 'REQUEST_METHOD': 'GET'}, 'https://example.com/', P),
    # never for localhost and loopback addresses
    ({'HTTP_PROXY': P}, 'http://localhost:8889/', None),
    ({'HTTP_PROXY': P}, 'http://127.0.0.1:8889/', None),
    ({'HTTP_PROXY': P}, 'http://127.1.2.3/', None),
    ({'HTTP_PROXY': P}, 'http://[::1]:8889/', None),
    ({'HTTP_PROXY': P}, 'http://localhost.example.com/', P),
    # NO_PROXY: '*', domains (suffixes on a dot), '.domain', '*.domain', IPs, CIDRs, ports
    ({'HTTP_PROXY': P, 'NO_PROXY': '*'}, 'http://example.com/', None),
    ({'HTTP_PROXY': P, 'NO_PROXY': 'a.com, *'}, 'http://10.0.0.1/', None),
    ({'HTTP_PROXY': P, 'NO_PROXY': 'example.com'}, 'http://example.com/', None),
    ({'HTTP_PROXY': P, 'NO_PROXY': 'example.com'}, 'http://foo.example.com/', None),
    ({'HTTP_PROXY': P, 'NO_PROXY': 'example.com'}, 'http://barexample.com/', P),
    ({'HTTP_PROXY': P, 'NO_PROXY': 'ample.com'}, 'http://example.com/', P),
    ({'HTTP_PROXY': P, 'NO_PROXY': '.example.com'}, 'http://example.com/', P),
    ({'HTTP_PROXY': P, 'NO_PROXY': '.example.com'}, 'http://foo.example.com/', None),
    ({'HTTP_PROXY': P, 'NO_PROXY': '*.example.com'}, 'http://foo.example.com/', None),
    ({'HTTP_PROXY': P, 'NO_PROXY': '*.example.com'}, 'http://example.com/', P),
    ({'HTTP_PROXY': P, 'NO_PROXY': 'EXAMPLE.com'}, 'http://Foo.Example.COM/', None),
    ({'HTTP_PROXY': P, 'no_proxy': 'example.com'}, 'http://example.com/', None),
    ({'HTTP_PROXY': P, 'NO_PROXY': 'other.com', 'no_proxy': 'example.com'}, 'http://example.com/', P),
    ({'HTTP_PROXY': P, 'NO_PROXY': 'example.com:8889'}, 'http://example.com:8889/', None),
    ({'HTTP_PROXY': P, 'NO_PROXY': 'example.com:8889'}, 'http://example.com/', P),
    ({'HTTPS_PROXY': P, 'NO_PROXY': 'example.com:443'}, 'https://example.com/', None),
    ({'HTTP_PROXY': P, 'NO_PROXY': '10.0.0.7'}, 'http://10.0.0.7:8889/', None),
    ({'HTTP_PROXY': P, 'NO_PROXY': '10.0.0.7:80'}, 'http://10.0.0.7/', None),
    ({'HTTP_PROXY': P, 'NO_PROXY': '10.0.0.7:80'}, 'http://10.0.0.7:8889/', P),
    ({'HTTP_PROXY': P, 'NO_PROXY': '10.0.0.0/8'}, 'http://10.200.0.1:8889/', None),
    ({'HTTP_PROXY': P, 'NO_PROXY': '10.0.0.0/8'}, 'http://11.0.0.1/', P),
    ({'HTTP_PROXY': P, 'NO_PROXY': '2001:db8::/32'}, 'http://[2001:db8::5]/', None),
    ({'HTTPS_PROXY': P, 'NO_PROXY': '[2001:db8::1]:443'}, 'https://[2001:db8::1]/', None),
    ({'HTTP_PROXY': P, 'NO_PROXY': '10.0.0.7'}, 'http://10.0.0.70/', P),  # an IP is no suffix
    ({'HTTP_PROXY': P, 'NO_PROXY': '0.7'}, 'http://10.0.0.7/', P),
    ({'HTTP_PROXY': P, 'NO_PROXY': ':80, ,'}, 'http://example.com/', P),  # malformed entries are ignored
])
def test_go_proxy_decision(env, url, want):
    assert _extender.go_proxy(url, env) == want


def test_redact():
    assert _extender.redact('http://user:s3cret@proxy.example:3128') == 'http://proxy.example:3128'
    assert _extender.redact('http://proxy.example:3128') == 'http://proxy.example:3128'
    assert _extender.redact(None) is None


# ---------------------------------------------------------------------------------------------
# a real proxy

class Proxy:
    """An HTTP proxy in a thread: CONNECT tunnels and absolute-URI requests; ``hosts`` is its own resolver.

    Each request is in ``seen`` as (method, target, Proxy-Authorization header).
    """

    def __init__(self, hosts):
        self.hosts = hosts
        self.seen = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, *args):  # pylint: disable=arguments-differ
                pass

            def _resolve(self, host):
                return proxy.hosts.get(host)

            def do_CONNECT(self):  # pylint: disable=invalid-name
                proxy.seen.append(('CONNECT', self.path, self.headers.get('Proxy-Authorization')))
                host, port = self.path.rsplit(':', 1)
                address = self._resolve(host)
                if address is None:
                    self.send_error(502, 'unknown host %s' % host)
                    return
                upstream = socket.create_connection((address, int(port)), timeout=5)
                self.send_response(200, 'Connection established')
                self.end_headers()
                sockets = [self.connection, upstream]
                try:
                    while True:
                        ready, dummy, dummy = select.select(sockets, [], [], 5)
                        if not ready:
                            break
                        for s in ready:
                            data = s.recv(65536)
                            if not data:
                                return
                            (upstream if s is self.connection else self.connection).sendall(data)
                finally:
                    upstream.close()
                    self.close_connection = True

            def do_POST(self):  # pylint: disable=invalid-name
                proxy.seen.append(('POST', self.path, self.headers.get('Proxy-Authorization')))
                target = urlsplit(self.path)
                address = self._resolve(target.hostname)
                if not target.scheme or address is None:
                    self.send_error(502, 'cannot forward %s' % self.path)
                    return
                body = self.rfile.read(int(self.headers.get('Content-Length') or 0))
                conn = http.client.HTTPConnection(address, target.port or 80, timeout=5)
                conn.request('POST', target.path, body=body, headers={'Content-Type': 'application/json'})
                resp = conn.getresponse()
                data = resp.read()
                conn.close()
                self.send_response(resp.status)
                self.send_header('Content-Type', resp.getheader('Content-Type') or 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.server.daemon_threads = True
        self.url = 'http://127.0.0.1:%d' % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxy():
    running = Proxy({'extender.test': '127.0.0.1'})
    yield running
    running.stop()


@pytest.fixture
def extender(tmp_path):
    running = Running(tmp_path)
    yield running
    running.stop()


def port_of(url):
    return int(url.rsplit(':', 1)[1])


def test_probe_http_through_the_proxy_as_an_absolute_uri(proxy, extender):
    url = 'http://extender.test:%d' % port_of(extender.url)
    res = _extender.probe(url, 'filter', ['n1'], timeout=3, proxy=proxy.url)
    assert (res.reachable, res.status, res.error) == (True, 200, '')
    assert proxy.seen == [('POST', url + '/filter', None)]
    # without the proxy the name does not resolve: the answer came through it
    direct = _extender.probe(url, 'filter', ['n1'], timeout=3)
    assert not direct.reachable and direct.error.startswith('cannot resolve host')


def test_probe_https_through_a_connect_tunnel_with_server_name(tmp_path, proxy, pki):
    running = Running(tmp_path, tls=_server_tls(pki, require_client=True))
    try:
        url = 'https://extender.test:%d' % port_of(running.url)
        ca_data = open(os.path.join(pki, 'ca.crt')).read()
        cert_data = open(os.path.join(pki, 'client.crt')).read()
        key_data = open(os.path.join(pki, 'client.key')).read()
        # the certificate names 127.0.0.1 only: serverName says so, as tlsConfig.serverName would
        res = _extender.probe(url, 'filter', ['n1'], timeout=3, proxy='http://u:p4ss@127.0.0.1:%d' % port_of(proxy.url),
                              server_name='127.0.0.1', ca_data=ca_data, cert_data=cert_data, key_data=key_data)
        assert (res.reachable, res.status, res.error) == (True, 200, ''), res
        assert proxy.seen == [('CONNECT', 'extender.test:%d' % port_of(running.url),
                               'Basic ' + base64.b64encode(b'u:p4ss').decode())]
        # without serverName the host name of the URL is verified, and the certificate does not name it
        res = _extender.probe(url, 'filter', ['n1'], timeout=3, proxy=proxy.url, ca_data=ca_data,
                              cert_data=cert_data, key_data=key_data)
        assert not res.reachable and res.error.startswith('TLS certificate verification failed'), res
    finally:
        running.stop()


def test_proxy_that_cannot_reach_the_extender(proxy):
    res = _extender.probe('http://nowhere.test:1', 'filter', ['n1'], timeout=3,
                          proxy='http://user:s3cret@127.0.0.1:%d' % port_of(proxy.url))
    assert not res.reachable and res.status == 502
    assert 's3cret' not in res.error


# ---------------------------------------------------------------------------------------------
# the module: the scheduler process's environment decides

@pytest.fixture
def node(tmp_path, monkeypatch):
    return Node(tmp_path / 'root', monkeypatch)


def scheduler_env(node, **env):
    """The environment of k3s's main process (pid 2211 in the fake systemctl show)."""
    node.write('/proc/2211/environ', ''.join('%s=%s\0' % kv for kv in env.items()) + 'PATH=/usr/bin\0')


def status(url):
    failed, result = run_status({'url': url, 'scheduler_health_url': '', 'http_timeout': 3})
    assert not failed, result
    return result


def test_status_goes_through_the_schedulers_proxy(node, proxy, extender):
    scheduler_env(node, HTTP_PROXY='http://user:s3cret@127.0.0.1:%d' % port_of(proxy.url), NO_PROXY='.cluster.local')
    url = 'http://extender.test:%d' % port_of(extender.url)
    result = status(url)
    assert result['ready'] is True, result['msg']
    assert result['extender_proxy'] == proxy.url
    assert [s[:2] for s in proxy.seen] == [('POST', url + '/filter')]
    assert proxy.seen[0][2] == 'Basic ' + base64.b64encode(b'user:s3cret').decode()
    assert 's3cret' not in json.dumps(result)


def test_status_no_proxy_and_loopback_go_direct(node, proxy, extender):
    scheduler_env(node, HTTP_PROXY=proxy.url, NO_PROXY='extender.test')
    result = status('http://extender.test:%d' % port_of(extender.url))
    assert result['extender_proxy'] is None
    assert result['ready'] is False and 'cannot resolve host' in result['extender_error']
    result = status(extender.url)  # 127.0.0.1: never through a proxy
    assert (result['ready'], result['extender_proxy']) == (True, None)
    assert proxy.seen == []


def test_status_says_when_the_extender_failed_through_the_proxy(node, proxy):
    scheduler_env(node, http_proxy='http://user:s3cret@127.0.0.1:%d' % port_of(proxy.url))
    result = status('http://nowhere.test:8889')
    assert result['ready'] is False
    assert result['extender_http_status'] == 502
    assert ('extender http://nowhere.test:8889/filter through proxy %s (the scheduler\'s environment): HTTP 502' % proxy.url
            in result['msg'])
    assert 's3cret' not in json.dumps(result)


def test_status_without_a_readable_environment_goes_direct(node, extender):
    result = status(extender.url.replace('127.0.0.1', 'localhost'))
    assert (result['ready'], result['extender_proxy']) == (True, None)


def test_family_k3s_as_it_really_runs_a_blanked_environment_is_the_units(node, proxy, extender):
    """k3s hides its arguments with gspt, whose first title zeroes the environment area too: /proc/<pid>/environ of a
    running k3s reads NUL bytes only. The scheduler inside it still has the environment its unit gave it."""
    node.install('server', environ={'HTTP_PROXY': 'http://user:s3cret@127.0.0.1:%d' % port_of(proxy.url)})
    node.write('/proc/2211/environ', b'\0' * 300)
    result = status('http://extender.test:%d' % port_of(extender.url))
    assert result['ready'] is True, result['msg']
    assert result['extender_proxy'] == proxy.url and 's3cret' not in json.dumps(result)
