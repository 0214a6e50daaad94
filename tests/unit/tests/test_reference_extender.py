# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The reference extender's protocol answers (tests/integration/extender/reference_extender.py)."""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import threading

import pytest

_REF = os.path.join(os.path.dirname(__file__), '..', '..', 'integration', 'extender', 'reference_extender.py')
_spec = importlib.util.spec_from_file_location('reference_extender', os.path.abspath(_REF))
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)


def args_nodes(*names):
    return {'Pod': {'metadata': {'name': 'p', 'namespace': 'ns', 'uid': 'u'}},
            'Nodes': {'items': [{'metadata': {'name': n}} for n in names]}, 'NodeNames': None}


def args_names(*names):
    return {'Pod': {'metadata': {'name': 'p', 'namespace': 'ns', 'uid': 'u'}}, 'Nodes': None, 'NodeNames': list(names)}


def call(verb, payload, settings):
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return ref.answer(verb, body, settings)


def test_filter_rejects_listed_nodes_node_list(tmp_path):
    settings = ref.Settings(reject_nodes=['b'], log=None)
    status, result, entry = call('filter', args_nodes('a', 'b', 'c'), settings)
    assert status == 200
    assert [n['metadata']['name'] for n in result['Nodes']['items']] == ['a', 'c']
    assert result['NodeNames'] is None
    assert result['FailedNodes'] == {'b': 'node b is rejected by the reference extender'}
    assert result['FailedAndUnresolvableNodes'] == {}
    assert result['Error'] == ''
    assert (entry['verb'], entry['pod'], entry['nodes'], entry['result']) == ('filter', 'ns/p', ['a', 'b', 'c'], result)


def test_filter_node_names_and_reject_file_reread(tmp_path):
    reject = tmp_path / 'reject'
    settings = ref.Settings(reject_file=str(reject), log=None)
    assert call('filter', args_names('a', 'b'), settings)[1]['NodeNames'] == ['a', 'b']
    reject.write_text('# rejected\na\n')
    result = call('filter', args_names('a', 'b'), settings)[1]
    assert (result['NodeNames'], list(result['FailedNodes']), result['Nodes']) == (['b'], ['a'], None)


def test_prioritize_default_rule_and_prefer():
    settings = ref.Settings(log=None)
    result = call('prioritize', args_names('c', 'a', 'b'), settings)[1]
    assert result == [{'Host': 'c', 'Score': 8}, {'Host': 'a', 'Score': 10}, {'Host': 'b', 'Score': 9}]
    many = ['n%02d' % i for i in range(12)]
    assert call('prioritize', args_names(*many), settings)[1][-1] == {'Host': 'n11', 'Score': 0}
    settings = ref.Settings(prefer='b', reject_nodes=['c'], log=None)
    assert call('prioritize', args_nodes('a', 'b', 'c'), settings)[1] == [
        {'Host': 'a', 'Score': 0}, {'Host': 'b', 'Score': 10}, {'Host': 'c', 'Score': 0}]


def test_preempt_passes_victims_minus_rejected():
    settings = ref.Settings(reject_nodes=['b'], log=None)
    payload = {'Pod': {'metadata': {'name': 'p', 'namespace': 'ns'}},
               'NodeNameToVictims': {'a': {'Pods': [{'metadata': {'uid': 'v1'}}], 'NumPDBViolations': 1},
                                     'b': {'Pods': [], 'NumPDBViolations': 0}},
               'NodeNameToMetaVictims': None}
    status, result, entry = call('preempt', payload, settings)
    assert status == 200
    assert result == {'NodeNameToMetaVictims': {'a': {'Pods': [{'UID': 'v1'}], 'NumPDBViolations': 1}}}
    assert entry['nodes'] == ['a', 'b']


def test_bind_refused_unless_enabled():
    payload = {'PodName': 'p', 'PodNamespace': 'ns', 'PodUID': 'u', 'Node': 'a'}
    result = call('bind', payload, ref.Settings(log=None))[1]
    assert result['Error'] == 'bind is not supported by the reference extender (start it with --bind)'
    assert call('bind', payload, ref.Settings(bind=True, log=None))[1] == {'Error': ''}
    assert call('bind', {'PodName': 'p'}, ref.Settings(bind=True, log=None))[1] == {'Error': 'bind needs PodName and Node'}


@pytest.mark.parametrize('body', [b'{not json', b'[1, 2]', b'\xff\xfe', b''])
def test_undecodable_body_is_200_with_error(body):
    status, result, entry = call('filter', body, ref.Settings(log=None))
    assert status == 200
    assert result['Error'].startswith('cannot decode the filter request: ')
    assert entry['result'] == result


@pytest.mark.parametrize('text, expected', [
    (None, ('ok', 0.0)), ('ok', ('ok', 0.0)), ('slow:2.5', ('slow', 2.5)), ('slow:x', ('ok', 0.0)),
    ('error500', ('error500', 0.0)), ('error-json\n', ('error-json', 0.0)), ('bogus', ('ok', 0.0)),
])
def test_mode_file(tmp_path, text, expected):
    mode_file = tmp_path / 'mode'
    if text is not None:
        mode_file.write_text(text)
    assert ref.Settings(mode_file=str(mode_file), log=None).mode() == expected


def test_parse_args_defaults():
    opts = ref.parse_args([])
    assert (opts.listen, opts.port, opts.log, opts.mode_file, opts.bind) == (
        '127.0.0.1', 8889, '/var/log/reference-extender.jsonl', '/run/reference-extender/mode', False)


@pytest.fixture
def server(tmp_path):
    settings = ref.Settings(mode_file=str(tmp_path / 'mode'), log=str(tmp_path / 'log.jsonl'), reject_nodes=['bad'])
    srv = ref.make_server('127.0.0.1', 0, settings)
    t = threading.Thread(target=srv.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True)
    t.start()
    yield srv, tmp_path
    srv.shutdown()
    srv.server_close()


def _post(port, path, body):
    conn = http.client.HTTPConnection('127.0.0.1', port, timeout=5)
    try:
        conn.request('POST', path, body=body, headers={'Content-Type': 'application/json'})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def test_over_http_with_log_and_modes(server):
    srv, tmp_path = server
    port = srv.server_address[1]
    status, data = _post(port, '/filter', json.dumps(args_names('good', 'bad')))
    assert status == 200
    assert json.loads(data)['NodeNames'] == ['good']
    (tmp_path / 'mode').write_text('error500')
    assert _post(port, '/filter', json.dumps(args_names('good')))[0] == 500
    (tmp_path / 'mode').write_text('error-json')
    status, data = _post(port, '/prioritize', json.dumps(args_names('good')))
    assert (status, json.loads(data)) == (200, {'Error': 'reference extender: error-json mode'})
    (tmp_path / 'mode').write_text('ok')
    status, data = _post(port, '/nope', b'{}')
    assert status == 404
    lines = [json.loads(line) for line in (tmp_path / 'log.jsonl').read_text().splitlines()]
    assert [(e['verb'], e['nodes']) for e in lines] == [('filter', ['good', 'bad']), ('filter', None), ('prioritize', ['good'])]
    assert lines[0]['result']['FailedNodes'] == {'bad': 'node bad is rejected by the reference extender'}
    assert lines[1]['result'] == {'status': 500} and lines[1]['pod'] == lines[0]['pod']  # whose call got the 500
    assert all(set(e) == {'time', 'verb', 'pod', 'nodes', 'result'} for e in lines)
    conn = http.client.HTTPConnection('127.0.0.1', port, timeout=5)
    conn.request('GET', '/healthz')
    assert conn.getresponse().read() == b'ok'
    conn.close()


def test_https_with_a_ca_the_client_trusts(tmp_path):
    import ssl  # pylint: disable=import-outside-toplevel
    import subprocess  # pylint: disable=import-outside-toplevel
    cert, key = str(tmp_path / 'tls.crt'), str(tmp_path / 'tls.key')
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
                    '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
                   check=True, capture_output=True)
    srv = ref.make_server('127.0.0.1', 0, ref.Settings(log=None), tls_cert=cert, tls_key=key)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        port = srv.server_address[1]
        conn = http.client.HTTPSConnection('127.0.0.1', port, timeout=5, context=ssl.create_default_context(cafile=cert))
        conn.request('POST', '/filter', body=json.dumps(args_names('a')), headers={'Content-Type': 'application/json'})
        assert json.loads(conn.getresponse().read())['NodeNames'] == ['a']
        conn.close()
        untrusting = http.client.HTTPSConnection('127.0.0.1', port, timeout=5, context=ssl.create_default_context())
        with pytest.raises(ssl.SSLCertVerificationError):
            untrusting.request('GET', '/healthz')
    finally:
        srv.shutdown()
        srv.server_close()
