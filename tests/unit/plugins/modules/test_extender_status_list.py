# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""extender_status with ``extenders``: every extender of a list probed, ready when all required ones answer."""

from __future__ import annotations

import pytest

from ansible_collections.baremetal.k3s.plugins.action.extender_status import progress_line
from ansible_collections.baremetal.k3s.plugins.modules import extender_status

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.test_extender_status import (  # noqa: F401 pylint: disable=unused-import
    BASE, extender, free_port, node, run_status, show)
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import run_module


def listed(extender, items, **kw):
    base = {'extenders': items, 'scheduler_health_url': extender.url + '/healthz', 'since': str(BASE - 20), 'http_timeout': 2}
    base.update(kw)
    return base


def test_every_extender_is_probed_and_all_answer(node, extender):
    items = [{'name': 'csi-baremetal', 'url': extender.url}, {'name': 'gpu-share', 'url': extender.url + '/', 'verb': 'prioritize'}]
    failed, result = run_module(extender_status, listed(extender, items))
    assert not failed, result
    assert result['ready'] is True and result['msg'] == 'ready'
    assert [(e['name'], e['verb'], e['answering'], e['http_status'], e['msg']) for e in result['extenders']] == [
        ('csi-baremetal', 'filter', True, 200, 'answering'), ('gpu-share', 'prioritize', True, 200, 'answering')]
    assert result['extender_reachable'] is True


def test_one_not_answering_is_named_and_keeps_it_not_ready(node, extender):
    down = 'http://127.0.0.1:%d' % free_port()
    items = [{'name': 'csi-baremetal', 'url': extender.url}, {'name': 'gpu-share', 'url': down}]
    failed, result = run_module(extender_status, listed(extender, items))
    assert not failed, result
    assert result['ready'] is False and result['extender_reachable'] is False
    by_name = {e['name']: e for e in result['extenders']}
    assert by_name['csi-baremetal']['answering'] is True
    assert by_name['gpu-share']['answering'] is False
    assert by_name['gpu-share']['error'] == 'connection refused (is the extender running?)'
    assert result['msg'] == 'not ready: extender gpu-share (%s/filter: connection refused (is the extender running?))' % down
    assert result['extender_error'] == 'gpu-share: connection refused (is the extender running?)'


def test_an_optional_extender_does_not_hold_readiness(node, extender):
    down = 'http://127.0.0.1:%d' % free_port()
    items = [{'name': 'csi-baremetal', 'url': extender.url}, {'name': 'later', 'url': down, 'required': False}]
    failed, result = run_module(extender_status, listed(extender, items))
    assert not failed and result['ready'] is True, result
    assert [e['answering'] for e in result['extenders']] == [True, False]


def test_the_wait_names_the_ones_it_still_waits_for(node, extender):
    down = 'http://127.0.0.1:%d' % free_port()
    items = [{'name': 'csi-baremetal', 'url': extender.url}, {'name': 'gpu-share', 'url': down}, {'name': 'third', 'url': down + '/x'}]
    failed, result = run_status(listed(extender, items, wait=True, interval=5, timeout=60, slice_seconds=20))
    assert not failed, result
    waiting = result['waiting']
    assert waiting['for'] == 'the extenders gpu-share, third to answer (of 3)'
    line = progress_line('server-1', waiting, result['msg'])
    assert line.startswith('server-1: waiting 20 s of 60 s for the extenders gpu-share, third to answer (of 3) (extender gpu-share (')


def test_each_extender_with_its_own_timeout_and_tls(node, extender):
    seen = []

    def probe(url, verb, nodes, cache, ca_file, cert_file, key_file, insecure, timeout, **extras):
        seen.append((url, verb, cache, ca_file, insecure, timeout, extras.get('server_name')))
        from ansible_collections.baremetal.k3s.plugins.module_utils._extender import ProbeResult
        return ProbeResult(True, 200, '')

    node.write('/etc/ca.pem', 'x')
    items = [{'name': 'a', 'url': 'http://127.0.0.1:1', 'http_timeout': '500ms'},
             {'name': 'b', 'url': 'https://127.0.0.1:2', 'verb': 'bind', 'ca_file': '/etc/ca.pem', 'server_name': 'b.example',
              'node_cache_capable': True}]
    failed, result = run_status(listed(extender, items, scheduler_health_url=''), probe=probe)
    assert not failed and result['ready'], result
    assert seen == [('http://127.0.0.1:1', 'filter', False, None, False, 0.5, None),
                    ('https://127.0.0.1:2', 'bind', True, node.p('/etc/ca.pem'), False, 2.0, 'b.example')]


@pytest.mark.parametrize('items,extra,message', [
    ([{'name': 'a', 'url': 'http://x:1'}, {'name': 'a', 'url': 'http://x:2'}], {}, "extenders[1].name 'a' is also extenders[0].name"),
    ([{'name': 'a', 'url': 'ftp://x'}], {}, 'extenders[0].url: '),
    ([{'name': 'a', 'url': 'http://x', 'ca_file': '/no/ca.pem'}], {}, 'extenders[0].ca_file /no/ca.pem does not exist'),
    ([{'name': 'a', 'url': 'http://x', 'http_timeout': 'soon'}], {}, 'extenders[0].http_timeout must be seconds'),
    ([{'name': 'a', 'url': 'http://x', 'cert_data': 'PEM'}], {}, 'extenders[0]: give a client certificate'),
    ([{'name': 'a', 'url': 'http://x'}], {'url': 'http://y'}, 'either as url (one) or as extenders (a list), not both'),
])
def test_bad_lists_fail_naming_the_item(node, extender, items, extra, message):
    failed, result = run_module(extender_status, dict(listed(extender, items), **extra))
    assert failed and message in result['msg'], result


def test_the_single_url_is_reported_as_a_list_of_one(node, extender):
    failed, result = run_module(extender_status, {'url': extender.url, 'scheduler_health_url': extender.url + '/healthz',
                                                  'since': str(BASE - 20)})
    assert not failed and result['ready'], result
    assert [(e['name'], e['url'], e['answering']) for e in result['extenders']] == [(extender.url, extender.url, True)]
