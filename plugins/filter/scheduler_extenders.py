# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
name: scheduler_extenders
short_description: The extenders of a scheduler_extender run, as each module takes them
version_added: 0.1.0
description:
  - Turns the extender variables of the role C(baremetal.k3s.scheduler_extender) into what its modules take - the entries
    M(baremetal.k3s.scheduler_config) writes, the probes M(baremetal.k3s.extender_status) sends, and the files a
    static pod must mount - so that the role computes none of it in Jinja.
  - The input is the list C(scheduler_extender_extenders); when it is empty, the single extender O(single) is the one
    extender of the run. Each item, or O(single), is a dict of C(name), C(url), C(required) (the readiness wait's, not
    the scheduler's) and the fields of a scheduler config's extender in snake_case; a field left out takes its value
    from O(defaults). Keys other than those are passed on as given (the module refuses an unknown one).
author:
  - baremetal.k3s contributors (@baremetal)
positional: single, defaults
options:
  _input:
    description: The list C(scheduler_extender_extenders) (empty - the single extender).
    type: list
    elements: dict
    required: true
  single:
    description: The single extender, from the role's C(scheduler_extender_*) variables.
    type: dict
    required: true
  defaults:
    description: The value of each field of an entry left out of an item.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: The extenders of this run
  ansible.builtin.set_fact:
    extenders: >-
      {{ [{'name': 'gpu', 'url': 'http://127.0.0.1:9000', 'required': false}]
         | baremetal.k3s.scheduler_extenders({'name': 'csi-baremetal', 'url': 'http://127.0.0.1:8889'},
                                             {'filter_verb': 'filter', 'http_timeout': '15s'}) }}

- name: Write them
  baremetal.k3s.scheduler_config:
    path: /etc/rancher/k3s/kube-scheduler/config.yaml
    extenders: "{{ extenders.entries }}"
'''

RETURN = r'''
_value:
  description: What the role's tasks pass to its modules.
  type: dict
  contains:
    many:
      description: Whether the input list is not empty (the modules take C(extenders), not the single C(extender)).
      type: bool
    entries:
      description:
        - One entry per extender for M(baremetal.k3s.scheduler_config)'s option C(extenders) - O(defaults), then the
          item's own keys over them, then C(url_prefix) (the item's C(url)); C(url) and C(required) are left out.
      type: list
      elements: dict
    entry:
      description: The first entry without its C(name), for M(baremetal.k3s.scheduler_config)'s option C(extender).
      type: dict
    probes:
      description:
        - One probe per extender for M(baremetal.k3s.extender_status)'s option C(extenders) - C(name), C(url),
          C(required) (true unless the item says otherwise), C(verb) (the first of its filter, prioritize, preempt and
          bind verbs that is set, else C(filter)), C(http_timeout) (else kube-scheduler's C(5s)), C(node_cache_capable),
          and its TLS settings C(insecure), C(server_name), C(ca_file), C(cert_file), C(key_file), C(ca_data),
          C(cert_data), C(key_data) (null when not set).
      type: list
      elements: dict
    names:
      description: The extenders' names, as given.
      type: list
      elements: str
    urls:
      description: The extenders' URLs, as given.
      type: list
      elements: str
    tls_files:
      description: The TLS files the scheduler reads (CA files, then certificates, then keys), each once.
      type: list
      elements: str
  sample:
    many: false
    entries: [{filter_verb: filter, http_timeout: 15s, name: csi-baremetal, url_prefix: 'http://127.0.0.1:8889'}]
    entry: {filter_verb: filter, http_timeout: 15s, url_prefix: 'http://127.0.0.1:8889'}
    probes: [{name: csi-baremetal, url: 'http://127.0.0.1:8889', required: true, verb: filter, http_timeout: 15s,
              node_cache_capable: false, insecure: false, server_name: null, ca_file: null, cert_file: null,
              key_file: null, ca_data: null, cert_data: null, key_data: null}]
    names: [csi-baremetal]
    urls: ['http://127.0.0.1:8889']
    tls_files: []
'''

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean

VERBS = ('filter_verb', 'prioritize_verb', 'preempt_verb', 'bind_verb')
TLS_FIELDS = ('server_name', 'ca_file', 'cert_file', 'key_file', 'ca_data', 'cert_data', 'key_data')
# the files of tls_config the scheduler reads, in the order they are mounted
TLS_FILES = ('ca_file', 'cert_file', 'key_file')
NOT_ENTRY_KEYS = ('url', 'required')


def _flag(value):
    """A boolean as the role's argument spec reads one (bool, yes/no, on/off, 1/0...); anything else is false."""
    return boolean(value, strict=False)


def _items(extenders, single):
    if not isinstance(extenders, list):
        raise AnsibleFilterError('scheduler_extenders: scheduler_extender_extenders must be a list of extenders, not %r'
                                 % (extenders,))
    items = extenders or [single]
    for index, item in enumerate(items):
        where = 'scheduler_extender_extenders[%d]' % index if extenders else 'the single extender'
        if not isinstance(item, Mapping):
            raise AnsibleFilterError('scheduler_extenders: %s must be a dict of name, url and fields, not %r' % (where, item))
        missing = [key for key in ('name', 'url') if key not in item]
        if missing:
            raise AnsibleFilterError('scheduler_extenders: %s has no %s; give each extender its name and url'
                                     % (where, ' and no '.join(missing)))
    return items


def _entry(item, defaults):
    entry = dict(defaults)
    entry.update((key, value) for key, value in item.items() if key not in NOT_ENTRY_KEYS)
    entry['url_prefix'] = item['url']
    return entry


def _probe(entry, item):
    tls = entry.get('tls_config') or {}
    if not isinstance(tls, Mapping):
        raise AnsibleFilterError('scheduler_extenders: the tls_config of extender %s must be a dict, not %r'
                                 % (entry.get('name'), tls))
    required = item.get('required')
    probe = {'name': entry.get('name'), 'url': entry['url_prefix'],
             'required': True if required is None else _flag(required),
             'verb': next((entry[verb] for verb in VERBS if entry.get(verb)), 'filter'),
             'http_timeout': entry.get('http_timeout') or '5s',
             'node_cache_capable': _flag(entry.get('node_cache_capable', False)),
             'insecure': _flag(tls.get('insecure', False))}
    probe.update((field, tls.get(field)) for field in TLS_FIELDS)
    return probe


def scheduler_extenders(extenders, single, defaults):
    if not isinstance(single, Mapping) or not isinstance(defaults, Mapping):
        raise AnsibleFilterError('scheduler_extenders: give the single extender and the fields\' defaults as dicts')
    items = _items(extenders, single)
    entries = [_entry(item, defaults) for item in items]
    probes = [_probe(entry, item) for entry, item in zip(entries, items)]
    tls_files = []
    for field in TLS_FILES:
        for probe in probes:
            if probe[field] and probe[field] not in tls_files:
                tls_files.append(probe[field])
    return {'many': len(extenders) > 0, 'entries': entries,
            'entry': {key: value for key, value in entries[0].items() if key != 'name'},
            'probes': probes, 'names': [item['name'] for item in items], 'urls': [item['url'] for item in items],
            'tls_files': tls_files}


class FilterModule:
    """baremetal.k3s filters."""

    def filters(self):
        return {'scheduler_extenders': scheduler_extenders}
