# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import ssl
import subprocess
import threading

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _extender

_REF = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'integration', 'extender', 'reference_extender.py')


def load_reference_extender():
    spec = importlib.util.spec_from_file_location('reference_extender', os.path.abspath(_REF))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ref = load_reference_extender()


class Running:
    """A reference extender serving on an ephemeral loopback port in a thread."""

    def __init__(self, tmp_path, tls=None, **settings):
        self.mode_file = str(tmp_path / 'mode')
        self.log = str(tmp_path / 'calls.jsonl')
        self.settings = ref.Settings(mode_file=self.mode_file, log=self.log, **settings)
        self.server = ref.make_server('127.0.0.1', 0, self.settings)
        scheme = 'http'
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
            scheme = 'https'
        self.url = '%s://127.0.0.1:%d' % (scheme, self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True)
        self.thread.start()

    def mode(self, text):
        with open(self.mode_file, 'w') as f:
            f.write(text + '\n')

    def calls(self):
        with open(self.log) as f:
            return [json.loads(line) for line in f]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def extender(tmp_path):
    running = Running(tmp_path)
    yield running
    running.stop()


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ---------------------------------------------------------------------------------------------
# request bodies and answer shapes

def test_filter_request_with_node_list():
    body = _extender.build_request('filter', ['node-1'], uid='u-1')
    assert set(body) == {'Pod', 'Nodes', 'NodeNames'}
    assert body['NodeNames'] is None
    assert body['Nodes']['kind'] == 'NodeList'
    assert [n['metadata']['name'] for n in body['Nodes']['items']] == ['node-1']
    assert body['Pod']['metadata'] == {'name': _extender.PROBE_POD_NAME, 'namespace': 'default', 'uid': 'u-1',
                                       'labels': {'app.kubernetes.io/managed-by': 'baremetal.k3s'}}
    assert body['Pod']['spec']['containers'][0]['name'] == 'probe'
    json.dumps(body)


def test_node_cache_capable_sends_names():
    body = _extender.build_request('prioritize', ['a', 'b'], node_cache_capable=True)
    assert body['NodeNames'] == ['a', 'b']
    assert body['Nodes'] is None


def test_bind_and_preempt_requests():
    bind = _extender.build_request('bind', ['node-1'], uid='u-2')
    assert bind == {'PodName': _extender.PROBE_POD_NAME, 'PodNamespace': 'default', 'PodUID': 'u-2', 'Node': 'node-1'}
    preempt = _extender.build_request('preempt', ['node-1'])
    assert preempt['NodeNameToVictims'] == {'node-1': {'Pods': [], 'NumPDBViolations': 0}}
    assert preempt['NodeNameToMetaVictims'] is None


@pytest.mark.parametrize('verb, answer, ok, error', [
    ('filter', {'NodeNames': ['a'], 'FailedNodes': {}, 'Error': ''}, True, ''),
    ('filter', {'Nodes': {'items': []}}, True, ''),
    ('filter', {'Error': 'boom'}, True, 'boom'),
    ('filter', {'Error': 7}, False, '"Error" is not a string'),
    ('filter', {'unrelated': 1}, False, 'filter answer has none of the ExtenderFilterResult fields'),
    ('filter', [], False, 'filter answer is not a JSON object'),
    ('prioritize', [{'Host': 'a', 'Score': 3}], True, ''),
    ('prioritize', None, True, ''),
    ('prioritize', [{'Host': 'a'}], False, 'prioritize answer item {\'Host\': \'a\'} lacks "Host" or "Score"'),
    ('prioritize', [{'Host': 'a', 'Score': '3'}], False, 'prioritize answer item {\'Host\': \'a\', \'Score\': \'3\'} has a non-integer "Score"'),
    ('prioritize', {'Error': 'nope'}, False, 'nope'),
    ('prioritize', {}, False, 'prioritize answer is not a list of {"Host", "Score"}'),
    ('bind', {'Error': ''}, True, ''),
    ('bind', {}, False, 'bind answer has no "Error" field'),
    ('preempt', {'NodeNameToMetaVictims': {}}, True, ''),
    ('predicates', [{'Host': 'a', 'Score': 1}], True, ''),
    ('predicates', 'text', False, 'answer is neither a JSON object nor a list'),
])
def test_check_answer(verb, answer, ok, error):
    assert _extender.check_answer(verb, answer) == (ok, error)


@pytest.mark.parametrize('url', ['ftp://127.0.0.1:8889', '127.0.0.1:8889', 'http://', 'http://h:99999', 'http://h:1/x?q=1', '', None])
def test_bad_urls(url):
    with pytest.raises(_extender.ExtenderProbeError):
        _extender.validate_url(url)


def test_verb_url():
    assert _extender.verb_url('http://h:1/', 'filter') == 'http://h:1/filter'
    assert _extender.verb_url('http://h:1/ext', '/filter') == 'http://h:1/ext/filter'


# ---------------------------------------------------------------------------------------------
# against the reference extender

def test_ok_filter(extender):
    res = _extender.probe(extender.url, 'filter', ['node-1'], timeout=3)
    assert (res.reachable, res.status, res.error) == (True, 200, '')
    assert [n['metadata']['name'] for n in res.body['Nodes']['items']] == ['node-1']
    call = extender.calls()[-1]
    assert (call['verb'], call['pod'], call['nodes']) == ('filter', 'default/' + _extender.PROBE_POD_NAME, ['node-1'])


def test_ok_prioritize_node_names(extender):
    res = _extender.probe(extender.url, 'prioritize', ['b', 'a'], node_cache_capable=True, timeout=3)
    assert res.reachable
    assert res.body == [{'Host': 'b', 'Score': 9}, {'Host': 'a', 'Score': 10}]


def test_ok_preempt(extender):
    res = _extender.probe(extender.url, 'preempt', ['a'], timeout=3)
    assert res.reachable
    assert res.body == {'NodeNameToMetaVictims': {'a': {'Pods': [], 'NumPDBViolations': 0}}}


def test_bind_error_counts_as_reachable(extender):
    res = _extender.probe(extender.url, 'bind', ['a'], timeout=3)
    assert res.reachable
    assert 'bind is not supported' in res.error


def test_slow_is_a_timeout(extender):
    extender.mode('slow:2')
    res = _extender.probe(extender.url, 'filter', ['a'], timeout=0.3)
    assert (res.reachable, res.status) == (False, None)
    assert res.error == 'timeout: no answer within 0.3 s'


def test_slow_within_timeout_is_ok(extender):
    extender.mode('slow:0.2')
    assert _extender.probe(extender.url, 'filter', ['a'], timeout=3).reachable


def test_error500(extender):
    extender.mode('error500')
    res = _extender.probe(extender.url, 'filter', ['a'], timeout=3)
    assert (res.reachable, res.status) == (False, 500)
    assert res.error == 'HTTP 500: reference extender: error500 mode'


def test_error_json(extender):
    extender.mode('error-json')
    res = _extender.probe(extender.url, 'filter', ['a'], timeout=3)
    assert (res.reachable, res.status, res.error) == (False, 200, 'reference extender: error-json mode')
    extender.mode('ok')  # flipped back at run time, no restart
    assert _extender.probe(extender.url, 'filter', ['a'], timeout=3).reachable


def test_unknown_verb_is_404(extender):
    res = _extender.probe(extender.url, 'nosuchverb', ['a'], timeout=3)
    assert (res.reachable, res.status) == (False, 404)
    assert res.error.startswith('HTTP 404: ')


def test_down_is_refused():
    res = _extender.probe('http://127.0.0.1:%d' % free_port(), 'filter', ['a'], timeout=1)
    assert (res.reachable, res.status) == (False, None)
    assert res.error == 'connection refused (is the extender running?)'


def test_check_health(extender):
    assert _extender.check_health(extender.url + '/healthz', 2) == (True, 200, '')
    healthy, status, error = _extender.check_health(extender.url + '/nothing', 2)
    assert (healthy, status, error) == (False, 404, 'HTTP 404: not found')
    healthy, status, error = _extender.check_health('https://127.0.0.1:%d/healthz' % free_port(), 1)
    assert (healthy, status) == (False, None)
    assert 'refused' in error


# ---------------------------------------------------------------------------------------------
# https

def _openssl(*args, cwd):
    subprocess.run(['openssl'] + list(args), cwd=cwd, check=True, capture_output=True)


def _ca(d, name):
    _openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
             '-keyout', name + '.key', '-out', name + '.crt', '-subj', '/CN=' + name,
             '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', cwd=d)


def _leaf(d, name, ca, usage):
    _openssl('req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
             '-keyout', name + '.key', '-out', name + '.csr', '-subj', '/CN=' + name, cwd=d)
    with open(os.path.join(d, name + '.ext'), 'w') as f:
        f.write('subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n'
                'extendedKeyUsage=%s\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n' % usage)
    _openssl('x509', '-req', '-in', name + '.csr', '-CA', ca + '.crt', '-CAkey', ca + '.key', '-CAcreateserial',
             '-days', '2', '-out', name + '.crt', '-extfile', name + '.ext', cwd=d)


@pytest.fixture(scope='module')
def pki(tmp_path_factory):
    if not shutil.which('openssl'):
        pytest.skip('openssl CLI not available')
    d = str(tmp_path_factory.mktemp('pki'))
    _ca(d, 'ca')
    _ca(d, 'other-ca')
    _leaf(d, 'server', 'ca', 'serverAuth')
    _leaf(d, 'client', 'ca', 'clientAuth')
    return d


def _server_tls(pki, require_client=False):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(pki, 'server.crt'), os.path.join(pki, 'server.key'))
    if require_client:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(os.path.join(pki, 'ca.crt'))
    return ctx


@pytest.fixture
def https_extender(tmp_path, pki):
    running = Running(tmp_path, tls=_server_tls(pki))
    yield running
    running.stop()


def test_https_valid_ca(https_extender, pki):
    res = _extender.probe(https_extender.url, 'filter', ['a'], ca_file=os.path.join(pki, 'ca.crt'), timeout=3)
    assert (res.reachable, res.status, res.error) == (True, 200, '')


def test_https_wrong_ca(https_extender, pki):
    res = _extender.probe(https_extender.url, 'filter', ['a'], ca_file=os.path.join(pki, 'other-ca.crt'), timeout=3)
    assert (res.reachable, res.status) == (False, None)
    assert res.error.startswith('TLS certificate verification failed')


def test_https_insecure(https_extender, pki):
    res = _extender.probe(https_extender.url, 'filter', ['a'], insecure=True, timeout=3)
    assert res.reachable


def test_https_client_certificate(tmp_path, pki):
    running = Running(tmp_path, tls=_server_tls(pki, require_client=True))
    try:
        ca = os.path.join(pki, 'ca.crt')
        res = _extender.probe(running.url, 'filter', ['a'], ca_file=ca, cert_file=os.path.join(pki, 'client.crt'),
                              key_file=os.path.join(pki, 'client.key'), timeout=3)
        assert res.reachable
        res = _extender.probe(running.url, 'filter', ['a'], ca_file=ca, timeout=3)
        assert not res.reachable
        assert res.status is None
        assert res.error
    finally:
        running.stop()


def test_missing_ca_file_raises(tmp_path):
    with pytest.raises(_extender.ExtenderProbeError, match='cannot load TLS files.*missing.crt does not exist'):
        _extender.probe('https://127.0.0.1:1', 'filter', ['a'], ca_file=str(tmp_path / 'missing.crt'))


def test_ca_file_that_is_not_pem_is_a_probe_error(tmp_path):
    bad = tmp_path / 'not-a-ca.pem'
    bad.write_text('not a certificate\n')
    res = _extender.probe('https://127.0.0.1:1', 'filter', ['a'], ca_file=str(bad))
    assert not res.reachable and res.status is None and 'cannot load TLS files' in res.error
