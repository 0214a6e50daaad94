# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The filter scheduler_extenders from tables: the role's extender variables as its modules take them."""

from __future__ import annotations

import json

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.baremetal.k3s.plugins.filter.scheduler_extenders import scheduler_extenders

DEFAULTS = {'filter_verb': 'filter', 'prioritize_verb': 'prioritize', 'preempt_verb': '', 'bind_verb': '', 'weight': 1,
            'ignorable': True, 'http_timeout': '15s', 'node_cache_capable': False, 'enable_https': False,
            'tls_config': {}, 'managed_resources': []}
SINGLE = dict(DEFAULTS, name='csi-baremetal', url='http://127.0.0.1:8889')
NO_TLS = {'insecure': False, 'server_name': None, 'ca_file': None, 'cert_file': None, 'key_file': None,
          'ca_data': None, 'cert_data': None, 'key_data': None}


def _run(extenders, single=None):
    return scheduler_extenders(extenders, SINGLE if single is None else single, DEFAULTS)


def _own(entry):
    """The fields of an entry that are not the defaults' (name and url_prefix aside)."""
    return {k: v for k, v in entry.items() if k not in ('name', 'url_prefix') and (k not in DEFAULTS or DEFAULTS[k] != v)}


# (extenders, the entries: [(name, url_prefix, {fields that differ from DEFAULTS}, [the keys in order])])
ENTRIES = [
    ([], [('csi-baremetal', 'http://127.0.0.1:8889', {}, list(DEFAULTS) + ['name', 'url_prefix'])]),
    ([{'name': 'a', 'url': 'http://a:1'}], [('a', 'http://a:1', {}, list(DEFAULTS) + ['name', 'url_prefix'])]),
    # an item's own keys go over the defaults in place; keys of its own follow them; required is not a field
    ([{'url': 'http://a:1', 'weight': 5, 'name': 'a', 'required': False, 'wieght': 3}],
     [('a', 'http://a:1', {'weight': 5, 'wieght': 3}, list(DEFAULTS) + ['name', 'wieght', 'url_prefix'])]),
    # a field given as null is kept null (the module says what it makes of it)
    ([{'name': 'a', 'url': 'http://a:1', 'filter_verb': None}, {'name': 'b', 'url': 'http://b:2', 'bind_verb': 'bind'}],
     [('a', 'http://a:1', {'filter_verb': None}, list(DEFAULTS) + ['name', 'url_prefix']),
      ('b', 'http://b:2', {'bind_verb': 'bind'}, list(DEFAULTS) + ['name', 'url_prefix'])]),
]


@pytest.mark.parametrize('extenders, want', ENTRIES)
def test_entries(extenders, want):
    result = _run(extenders)
    assert result['many'] is (len(extenders) > 0)
    assert [(e['name'], e['url_prefix'], _own(e), list(e)) for e in result['entries']] == want
    assert 'url' not in result['entries'][0] and 'required' not in result['entries'][0]
    assert list(result['entry']) == [k for k in result['entries'][0] if k != 'name']
    assert result['names'] == [w[0] for w in want] and result['urls'] == [w[1] for w in want]


def test_the_defaults_are_not_changed_by_an_item():
    defaults = json.dumps(DEFAULTS)
    _run([{'name': 'a', 'url': 'http://a:1', 'weight': 9, 'tls_config': {'ca_file': '/x'}}])
    assert json.dumps(DEFAULTS) == defaults


# (one item's fields, what its probe says besides name and url)
PROBES = [
    ({}, dict(NO_TLS, required=True, verb='filter', http_timeout='15s', node_cache_capable=False)),
    # the first verb that is set, else filter; an empty timeout is kube-scheduler's 5s
    ({'filter_verb': '', 'http_timeout': ''}, dict(NO_TLS, required=True, verb='prioritize', http_timeout='5s', node_cache_capable=False)),
    ({'filter_verb': None, 'prioritize_verb': '', 'preempt_verb': '', 'bind_verb': 'bind'},
     dict(NO_TLS, required=True, verb='bind', http_timeout='15s', node_cache_capable=False)),
    ({'filter_verb': '', 'prioritize_verb': '', 'preempt_verb': None, 'bind_verb': ''},
     dict(NO_TLS, required=True, verb='filter', http_timeout='15s', node_cache_capable=False)),
    # required: left out or null is true; Ansible's booleans otherwise
    ({'required': None}, dict(NO_TLS, required=True, verb='filter', http_timeout='15s', node_cache_capable=False)),
    ({'required': False}, dict(NO_TLS, required=False, verb='filter', http_timeout='15s', node_cache_capable=False)),
    ({'required': 'no', 'node_cache_capable': 'yes'},
     dict(NO_TLS, required=False, verb='filter', http_timeout='15s', node_cache_capable=True)),
    ({'required': 'true', 'node_cache_capable': 'off'},
     dict(NO_TLS, required=True, verb='filter', http_timeout='15s', node_cache_capable=False)),
    # TLS: each setting as given, null when left out; insecure as a boolean; no tls_config at all is none
    ({'tls_config': {'insecure': 'yes', 'server_name': '', 'ca_data': 'Q0E='}},
     dict(NO_TLS, insecure=True, server_name='', ca_data='Q0E=', required=True, verb='filter', http_timeout='15s',
          node_cache_capable=False)),
    ({'tls_config': None}, dict(NO_TLS, required=True, verb='filter', http_timeout='15s', node_cache_capable=False)),
    ({'tls_config': {'ca_file': '/c', 'cert_file': '/t', 'key_file': '/k', 'cert_data': 'x', 'key_data': 'y'}},
     dict(NO_TLS, ca_file='/c', cert_file='/t', key_file='/k', cert_data='x', key_data='y', required=True,
          verb='filter', http_timeout='15s', node_cache_capable=False)),
]


@pytest.mark.parametrize('fields, want', PROBES)
def test_probes(fields, want):
    (probe,) = _run([dict(fields, name='a', url='http://a:1')])['probes']
    assert probe == dict(want, name='a', url='http://a:1')
    assert list(probe)[:6] == ['name', 'url', 'required', 'verb', 'http_timeout', 'node_cache_capable']


def test_the_single_extender_is_always_required_and_probed_as_the_list_would():
    single = _run([])
    listed = _run([dict(SINGLE)])
    assert single['probes'] == listed['probes'] and single['probes'][0]['required'] is True
    assert single['entries'] == listed['entries'] and single['many'] is False and listed['many'] is True


# (each item's tls_config, the files in mount order: CA files, then certificates, then keys, each once)
TLS_FILES = [
    ([{}], []),
    ([{'ca_file': '/ca'}], ['/ca']),
    ([{'key_file': '/k', 'cert_file': '/c', 'ca_file': '/ca'}], ['/ca', '/c', '/k']),
    ([{'ca_file': '/ca', 'key_file': '/k1'}, {'ca_file': '/ca', 'cert_file': '/c2'}, {'ca_file': '/ca2', 'key_file': '/k1'}],
     ['/ca', '/ca2', '/c2', '/k1']),
    ([{'ca_file': '', 'cert_file': None, 'ca_data': 'Q0E='}], []),
]


@pytest.mark.parametrize('tls, want', TLS_FILES)
def test_tls_files(tls, want):
    items = [{'name': 'e%d' % i, 'url': 'https://e%d:1' % i, 'tls_config': t} for i, t in enumerate(tls)]
    assert _run(items)['tls_files'] == want


# (extenders, single, what the message says)
REFUSED = [
    ('csi', SINGLE, 'must be a list'),
    ({'name': 'a', 'url': 'u'}, SINGLE, 'must be a list'),
    (['a'], SINGLE, 'scheduler_extender_extenders[0] must be a dict'),
    ([{'name': 'a', 'url': 'u'}, {'name': 'b'}], SINGLE, 'scheduler_extender_extenders[1] has no url'),
    ([{}], SINGLE, 'has no name and no url'),
    ([], {'name': 'a'}, 'the single extender has no url'),
    ([{'name': 'a', 'url': 'u', 'tls_config': 'ca.crt'}], SINGLE, 'the tls_config of extender a must be a dict'),
    ([], 'csi', 'as dicts'),
]


@pytest.mark.parametrize('extenders, single, msg', REFUSED)
def test_refused(extenders, single, msg):
    with pytest.raises(AnsibleFilterError, match='^scheduler_extenders: ') as e:
        scheduler_extenders(extenders, single, DEFAULTS)
    assert msg in str(e.value)
