# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The role scheduler_extender's one construction of its extender entries (vars/main.yml: the filter
scheduler_extenders), through the module.

The same extender given as the single ``scheduler_extender_*`` variables (option ``extender``) or as a
one-item ``scheduler_extender_extenders`` (option ``extenders``) is the same entry, byte for byte, so
switching between the two forms changes nothing on the node.
"""

from __future__ import annotations

import json
import os

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.baremetal.k3s.plugins.modules import scheduler_config

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node, scheduler_node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import SCHEDULER_KUBECONFIG as KUBECONFIG, run_module

ROLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', 'roles', 'scheduler_extender')
PATH = '/etc/rancher/k3s/kube-scheduler/config.yaml'
FOREIGN = ('apiVersion: kubescheduler.config.k8s.io/v1\n'
           'kind: KubeSchedulerConfiguration\n'
           'clientConnection:\n'
           '  kubeconfig: %s\n'
           'extenders:\n'
           '- urlPrefix: http://theirs:1234   # hands off\n'
           '  filterVerb: filter\n' % KUBECONFIG)


def _trusted(value):
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, dict):
        return {k: _trusted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_trusted(v) for v in value]
    return value


def _role_file(*parts):
    return DataLoader().load_from_file(os.path.join(ROLE, *parts))


def role_vars(vars_file=None, **overrides):
    """The role's variables (defaults, then vars/main.yml or ``vars_file``), the play's ``overrides`` on top, templated
    by Ansible (the collection's filters found by the ``collection_finder`` fixture)."""
    loader = DataLoader()
    variables = dict(_role_file('defaults', 'main.yml'))
    variables.update(overrides)
    variables.update(loader.load_from_file(vars_file) if vars_file else _role_file('vars', 'main.yml'))
    templar = Templar(loader=loader, variables=_trusted(variables))

    def get(name):
        return templar.template(trust_as_template('{{ %s }}' % name))
    return get


def single_params(get, **kw):
    """scheduler_config's arguments as present.yml passes them for the single variables."""
    assert not get('_scheduler_extender_set.many')
    return dict({'path': PATH, 'kubeconfig': KUBECONFIG, 'name': get('scheduler_extender_name'),
                 'extender': get('_scheduler_extender_set.entry')}, **kw)


def list_params(get, **kw):
    """scheduler_config's arguments as present.yml passes them for scheduler_extender_extenders."""
    assert get('_scheduler_extender_set.many')
    return dict({'path': PATH, 'kubeconfig': KUBECONFIG, 'extenders': get('_scheduler_extender_set.entries')}, **kw)


@pytest.fixture(autouse=True)
def _finder(collection_finder):  # pylint: disable=unused-argument
    """Every test templates the role's vars, which call the collection's filter by its FQCN."""


@pytest.fixture
def env(scheduler_node):
    scheduler_node.write('/etc/k3s/extender-ca.crt', 'ca')
    return scheduler_node


def test_field_defaults_are_the_single_variables_defaults():
    defaults = _role_file('defaults', 'main.yml')
    fields = _role_file('vars', 'main.yml')['_scheduler_extender_field_defaults']
    assert fields == {name: defaults['scheduler_extender_' + name] for name in fields}
    spec = scheduler_config.EXTENDER_SPEC
    assert set(fields) == set(spec) - {'url_prefix'}  # every field of an entry has its default


def _same_bytes(env, single, listed, start=None):
    """Write with ``listed``, then ``single``, then ``listed``: the first writes, the others change nothing."""
    if start is not None:
        env.write(PATH, start)
    failed, result = run_module(scheduler_config, listed)
    assert not failed and result['changed'], result
    written = env.read(PATH)
    for params in (single, listed):
        failed, result = run_module(scheduler_config, params)
        assert not failed, result
        assert not result['changed'] and result['files'] == [], (params, result)
        assert env.read(PATH) == written
    # and the other way round, from nothing: the single variables write the same bytes
    os.remove(env.p(PATH))
    if start is not None:
        env.write(PATH, start)
    failed, result = run_module(scheduler_config, single)
    assert not failed and result['changed'], result
    assert env.read(PATH) == written
    return written.decode('utf-8')


def test_one_item_list_of_name_and_url_is_the_single_variables_entry(env):
    single = single_params(role_vars())
    listed = list_params(role_vars(scheduler_extender_extenders=[
        {'name': 'csi-baremetal', 'url': 'http://127.0.0.1:8889'}]))
    text = _same_bytes(env, single, listed, start=FOREIGN)
    entry = text.split('# baremetal.k3s extender: csi-baremetal\n', 1)[1]
    assert entry == ('- urlPrefix: http://127.0.0.1:8889\n  filterVerb: filter\n  prioritizeVerb: prioritize\n'
                     '  weight: 1\n  enableHTTPS: false\n  httpTimeout: 15s\n  nodeCacheCapable: false\n  ignorable: true\n')


def test_one_item_list_with_every_field_set_is_the_single_variables_entry(env):
    fields = {'filter_verb': '', 'prioritize_verb': 'score', 'preempt_verb': 'preempt', 'bind_verb': 'bind',
              'weight': 5, 'ignorable': False, 'http_timeout': '1m30s', 'node_cache_capable': True,
              'enable_https': True, 'tls_config': {'ca_file': '/etc/k3s/extender-ca.crt', 'server_name': 'ext'},
              'managed_resources': [{'name': 'example.com/gpu', 'ignored_by_scheduler': True}]}
    single = single_params(role_vars(scheduler_extender_name='gpu', scheduler_extender_url='https://10.0.0.1:9443',
                                     **{'scheduler_extender_' + k: v for k, v in fields.items()}))
    listed = list_params(role_vars(scheduler_extender_extenders=[
        dict(fields, name='gpu', url='https://10.0.0.1:9443')]))
    text = _same_bytes(env, single, listed)
    assert '  bindVerb: bind\n' in text and 'filterVerb' not in text and '  ignorable: false\n' in text


def test_a_list_item_takes_the_roles_defaults_not_the_values_set_for_the_single_variables(env):
    get = role_vars(scheduler_extender_weight=7, scheduler_extender_bind_verb='bind',
                    scheduler_extender_extenders=[{'name': 'a', 'url': 'http://127.0.0.1:1'}])
    (item,) = get('_scheduler_extender_set.entries')
    assert item['weight'] == 1 and item['bind_verb'] == '' and item['url_prefix'] == 'http://127.0.0.1:1'
    assert 'url' not in item and item['name'] == 'a'
    (probe,) = get('_scheduler_extender_set.probes')
    assert probe['url'] == 'http://127.0.0.1:1' and probe['verb'] == 'filter' and probe['http_timeout'] == '15s'


def test_an_unknown_field_of_an_item_reaches_the_module_which_refuses_it(env):
    listed = list_params(role_vars(scheduler_extender_extenders=[
        {'name': 'a', 'url': 'http://127.0.0.1:1', 'wieght': 3}]))
    failed, result = run_module(scheduler_config, listed)
    assert failed and 'wieght' in result['msg'], result
    assert env.read(PATH) is None


def test_tls_files_to_mount_come_from_the_one_construction():
    get = role_vars(scheduler_extender_tls_config={'ca_file': '/etc/single-ca.crt'})
    assert [p['ca_file'] for p in get('_scheduler_extender_set.probes')] == ['/etc/single-ca.crt']
    get = role_vars(scheduler_extender_tls_config={'ca_file': '/etc/single-ca.crt'},
                    scheduler_extender_extenders=[{'name': 'a', 'url': 'https://x:1', 'tls_config': {'ca_file': '/etc/a.crt'}},
                                                  {'name': 'b', 'url': 'http://y:2'}])
    assert [p['ca_file'] for p in get('_scheduler_extender_set.probes')] == ['/etc/a.crt', None]


def test_required_is_the_waits_not_the_schedulers(env):
    """An item's required reaches the readiness probe alone: the scheduler config has no such field."""
    get = role_vars(scheduler_extender_extenders=[
        {'name': 'a', 'url': 'http://127.0.0.1:1'},
        {'name': 'b', 'url': 'http://127.0.0.1:2', 'required': False, 'ignorable': True}])
    assert [p['required'] for p in get('_scheduler_extender_set.probes')] == [True, False]
    assert [sorted(e) for e in get('_scheduler_extender_set.entries')] == [sorted(e) for e in [
        dict(get('_scheduler_extender_field_defaults'), name=n, url_prefix='x') for n in 'ab']]
    failed, result = run_module(scheduler_config, list_params(get))
    assert not failed and result['changed'], result
    assert 'required' not in env.read(PATH).decode('utf-8')
    # left empty (null) it is required, as left out; a string from an INI inventory counts as Ansible's bool
    get = role_vars(scheduler_extender_extenders=[{'name': 'a', 'url': 'http://127.0.0.1:1', 'required': None},
                                                  {'name': 'b', 'url': 'http://127.0.0.1:2', 'required': 'no'}])
    assert [p['required'] for p in get('_scheduler_extender_set.probes')] == [True, False]
    # the single extender is always required (scheduler_extender_require_extender decides)
    assert [p['required'] for p in role_vars()('_scheduler_extender_set.probes')] == [True]


# The Jinja the filter replaced (vars/main.yml and detect.yml's _scheduler_extender_tls_files before it), kept as the
# reference the filter's results are compared with, byte for byte, on every fixture of this file and a few more.
BEFORE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'filter', 'scheduler_extender_vars_before.yml')
OLD_TLS_FILES = ("((_scheduler_extender_probe_list | map(attribute='ca_file') | list)"
                 " + (_scheduler_extender_probe_list | map(attribute='cert_file') | list)"
                 " + (_scheduler_extender_probe_list | map(attribute='key_file') | list)) | select | unique | list")
OLD_TO_NEW = [('_scheduler_extender_many', '_scheduler_extender_set.many'),
              ('_scheduler_extender_list', '_scheduler_extender_set.entries'),
              ('_scheduler_extender_entry', '_scheduler_extender_set.entry'),
              ('_scheduler_extender_probe_list', '_scheduler_extender_set.probes'),
              ('_scheduler_extender_names', '_scheduler_extender_set.names'),
              ('_scheduler_extender_urls', '_scheduler_extender_set.urls'),
              (OLD_TLS_FILES, '_scheduler_extender_set.tls_files')]
EVERY_FIELD = {'filter_verb': '', 'prioritize_verb': 'score', 'preempt_verb': 'preempt', 'bind_verb': 'bind',
               'weight': 5, 'ignorable': False, 'http_timeout': '1m30s', 'node_cache_capable': True,
               'enable_https': True, 'tls_config': {'ca_file': '/etc/k3s/extender-ca.crt', 'server_name': 'ext'},
               'managed_resources': [{'name': 'example.com/gpu', 'ignored_by_scheduler': True}]}
FIXTURES = {
    'defaults': {},
    'one item, name and url': {'scheduler_extender_extenders': [{'name': 'csi-baremetal', 'url': 'http://127.0.0.1:8889'}]},
    'single, every field': dict({'scheduler_extender_' + k: v for k, v in EVERY_FIELD.items()},
                                scheduler_extender_name='gpu', scheduler_extender_url='https://10.0.0.1:9443'),
    'one item, every field': {'scheduler_extender_extenders': [dict(EVERY_FIELD, name='gpu', url='https://10.0.0.1:9443')]},
    'item takes the role defaults': {'scheduler_extender_weight': 7, 'scheduler_extender_bind_verb': 'bind',
                                     'scheduler_extender_extenders': [{'name': 'a', 'url': 'http://127.0.0.1:1'}]},
    'unknown field': {'scheduler_extender_extenders': [{'name': 'a', 'url': 'http://127.0.0.1:1', 'wieght': 3}]},
    'single tls': {'scheduler_extender_tls_config': {'ca_file': '/etc/single-ca.crt'}},
    'items tls': {'scheduler_extender_tls_config': {'ca_file': '/etc/single-ca.crt'},
                  'scheduler_extender_extenders': [{'name': 'a', 'url': 'https://x:1', 'tls_config': {'ca_file': '/etc/a.crt'}},
                                                   {'name': 'b', 'url': 'http://y:2'}]},
    'required and ignorable': {'scheduler_extender_extenders': [
        {'name': 'a', 'url': 'http://127.0.0.1:1'},
        {'name': 'b', 'url': 'http://127.0.0.1:2', 'required': False, 'ignorable': True}]},
    'required null and no': {'scheduler_extender_extenders': [{'name': 'a', 'url': 'http://127.0.0.1:1', 'required': None},
                                                              {'name': 'b', 'url': 'http://127.0.0.1:2', 'required': 'no'}]},
    'tls files shared, in order': {'scheduler_extender_extenders': [
        {'name': 'a', 'url': 'https://x:1', 'tls_config': {'ca_file': '/etc/ca', 'cert_file': '/etc/c', 'key_file': '/etc/k',
                                                           'insecure': 'yes', 'ca_data': 'Q0E=', 'server_name': ''}},
        {'name': 'b', 'url': 'https://y:2', 'tls_config': {'ca_file': '/etc/ca', 'key_file': '/etc/k2', 'insecure': True}},
        {'name': 'c', 'url': 'https://z:3', 'tls_config': None, 'required': 'yes'}]},
    'no verb, no timeout': {'scheduler_extender_extenders': [
        {'name': 'a', 'url': 'http://127.0.0.1:1', 'filter_verb': '', 'prioritize_verb': None, 'http_timeout': ''},
        {'name': 'b', 'url': 'http://127.0.0.1:2', 'filter_verb': '', 'prioritize_verb': '', 'bind_verb': 'bind',
         'node_cache_capable': 'on'}]},
    'single, no verb but preempt': {'scheduler_extender_filter_verb': '', 'scheduler_extender_prioritize_verb': '',
                                    'scheduler_extender_preempt_verb': 'preempt', 'scheduler_extender_http_timeout': ''},
}


@pytest.mark.parametrize('overrides', list(FIXTURES.values()), ids=list(FIXTURES))
def test_the_filter_gives_what_the_jinja_before_it_gave_byte_for_byte(overrides):
    old, new = role_vars(BEFORE, **overrides), role_vars(**overrides)
    for old_name, new_name in OLD_TO_NEW:
        before, after = old(old_name), new(new_name)
        assert json.dumps(after) == json.dumps(before), (old_name, before, after)
