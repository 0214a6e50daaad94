# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""No secret a k3s option carries ever appears in what a module returns.

Every module that can see such a value (k3s_service, k3s_config_file, k3s_service_arg, k3s_info,
rollback) runs through its real ``main()`` and Ansible's real ``exit_json``/``fail_json`` -- where
``no_log_values`` are masked and ``invocation`` is added -- with each secret-bearing option in each
form k3s accepts it (long flag, its alias, ``=`` and space forms, one or two dashes, the
environment variable, the config key, the password of a datastore URL or DSN, the S3 keys), given
as an option or found on the node, in check mode and for real, with diff on. The whole JSON
result the module prints (diff, invocation, warnings, facts, a failure's message) is searched for
the secret: it must not be there.
"""

from __future__ import annotations

import json

from unittest.mock import patch

import pytest

from ansible.module_utils import basic
from ansible.module_utils.common import warnings as ansible_warnings

from ansible_collections.baremetal.k3s.plugins.modules import k3s_config_file, k3s_info, k3s_preflight, k3s_registries, k3s_service, k3s_service_arg, rollback

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import set_module_args

UNIT = '/etc/systemd/system/k3s.service'
ENV = '/etc/systemd/system/k3s.service.env'
SCRIPT = '/etc/init.d/k3s'
CONFIG = '/etc/rancher/k3s/config.yaml'
DROPIN_DIR = '/etc/rancher/k3s/config.yaml.d'
SCHED = '--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml'
PLAIN = '--disable=traefik'  # a value that is not secret: it must stay visible (the output is not masked wholesale)


def secret(tag):
    """A value found nowhere else in a result, so that finding it there means it leaked."""
    return 'Zq7%sX9w' % tag.replace('-', '')


@pytest.fixture(autouse=True)
def fixture_no_leftover_warnings():
    """Ansible keeps warnings in a process-wide list: each run here starts and ends without any."""
    for name in ('_global_warnings', '_global_deprecations'):
        getattr(ansible_warnings, name, {}).clear()
    yield
    for name in ('_global_warnings', '_global_deprecations'):
        getattr(ansible_warnings, name, {}).clear()


def run(module, args, capsys, check_mode=False, diff=True):
    """Run ``module.main()`` through Ansible's own exit_json/fail_json; (failed, result, the JSON it printed followed by
    the lines it logged on the node: AnsibleModule logs its options to the journal or syslog when it starts)."""
    capsys.readouterr()
    logged, warned = [], []
    # the module's warnings as it gives them: where Ansible's controller code was imported before (another test
    # file), module warnings go to the controller's display and never reach the printed result
    with set_module_args(args, check_mode=check_mode, diff=diff), pytest.raises(SystemExit) as exc, \
            patch.object(basic.AnsibleModule, 'log', lambda self, msg, log_args=None: logged.append(msg)), \
            patch.object(basic.AnsibleModule, 'warn', lambda self, msg: warned.append(msg)):
        module.main()
    out = capsys.readouterr().out
    text = next(line for line in reversed(out.splitlines()) if line.startswith('{'))
    result = json.loads(text)
    assert 'invocation' in result, text  # Ansible's own exit path ran: it adds the invocation (and masks no_log_values)
    assert (exc.value.code != 0) == bool(result.get('failed')), text
    assert any(m.startswith('Invoked') for m in logged), logged
    result['warnings'] = result.get('warnings', []) + warned
    return bool(result.get('failed')), result, '\n'.join([text] + warned + logged)


def assert_hidden(text, *values):
    for value in values:
        assert value not in text, 'secret %r leaked into the result:\n%s' % (value, text)


# -- the forms: (id, arguments with %s for the secret) ---------------------------------------------------------------
ARG_FORMS = [
    ('token-eq', ['--token=%s']),
    ('token-space', ['--token', '%s']),
    ('t-space', ['-t', '%s']),
    ('t-eq', ['-t=%s']),
    ('t-two-dashes', ['--t=%s']),
    ('token-one-dash', ['-token', '%s']),
    ('agent-token', ['--agent-token=%s']),
    ('agent-token-space', ['--agent-token', '%s']),
    ('cluster-secret', ['--cluster-secret', '%s']),
    ('datastore-postgres', ['--datastore-endpoint=postgres://k3s:%s@db.example:5432/k3s?sslmode=disable']),
    ('datastore-mysql-space', ['--datastore-endpoint', 'mysql://root:%s@tcp(db.example:3306)/k3s']),
    ('datastore-query', ['--datastore-endpoint=postgres://k3s@db.example/k3s?password=%s']),
    ('datastore-nats', ['--datastore-endpoint=nats://%s@nats.example:4222']),
    ('s3-access-key', ['--etcd-s3-access-key=%s']),
    ('s3-secret-key', ['--etcd-s3-secret-key', '%s']),
    ('s3-session-token', ['--etcd-s3-session-token=%s']),
    ('s3-proxy', ['--etcd-s3-proxy=http://proxy:%s@proxy.example:3128']),
    ('vpn-auth', ['--vpn-auth=name=tailscale,joinKey=%s']),
]
ENV_FORMS = [
    ('K3S_TOKEN', '%s'),
    ('K3S_AGENT_TOKEN', '%s'),
    ('K3S_CLUSTER_SECRET', '%s'),
    ('RKE2_TOKEN', '%s'),
    ('K3S_DATASTORE_ENDPOINT', 'postgres://k3s:%s@db.example:5432/k3s'),
    ('K3S_DATASTORE_ENDPOINT', 'host=db.example user=k3s password=%s dbname=k3s'),
    ('AWS_ACCESS_KEY_ID', '%s'),
    ('AWS_SECRET_ACCESS_KEY', '%s'),
    ('AWS_SESSION_TOKEN', '%s'),
    ('K3S_VPN_AUTH', 'name=tailscale,joinKey=%s'),
]
CONFIG_FORMS = [
    ('token', '%s'),
    ('t', '%s'),
    ('token', ['%s']),
    ('token+', ['%s']),
    ('agent-token', ['%s', '%s-2']),
    ('cluster-secret', '%s'),
    ('etcd-token', '%s'),
    ('datastore-endpoint', 'postgres://k3s:%s@db.example:5432/k3s'),
    ('datastore-endpoint', 'mysql://root:%s@tcp(db.example:3306)/k3s'),
    ('etcd-s3-access-key', '%s'),
    ('etcd-s3-secret-key', '%s'),
    ('etcd-s3-session-token', '%s'),
    ('s3-secret-key', '%s'),
    ('etcd-s3-proxy', 'http://proxy:%s@proxy.example:3128'),
    ('vpn-auth', 'name=tailscale,joinKey=%s'),
]


def fill(template, value):
    """``template`` (a string, or a list or dict of them) with the secret in place of %s."""
    if isinstance(template, list):
        return [fill(t, value) for t in template]
    if isinstance(template, dict):
        return {k: fill(v, value) for k, v in template.items()}
    return template.replace('%s', value) if isinstance(template, str) else template


def arg_cases():
    return [pytest.param(form, init, id='%s-%s' % (fid, init)) for fid, form in ARG_FORMS for init in ('systemd', 'openrc')]


# -- k3s_service ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize('form,init', arg_cases())
def test_k3s_service_args(node, capsys, form, init):
    old, new = secret('old'), secret('new')
    base = {'init': init}
    # create: check mode (nothing written), then for real
    before = node.tree()
    failed, result, text = run(k3s_service, dict(base, args=[PLAIN] + fill(form, old)), capsys, check_mode=True)
    assert not failed and result['changed'] and node.tree() == before
    assert_hidden(text, old)
    assert PLAIN in text and '(hidden)' in text
    failed, result, text = run(k3s_service, dict(base, args=[PLAIN] + fill(form, old)), capsys)
    assert not failed and result['changed']
    assert old in node.read(UNIT if init == 'systemd' else SCRIPT).decode()  # it was there to leak
    assert_hidden(text, old)
    # change it: the old value is in the diff's before, the new one in its after
    for check_mode in (True, False):
        failed, result, text = run(k3s_service, dict(base, args=[PLAIN] + fill(form, new)), capsys, check_mode=check_mode)
        assert not failed and result['changed']
        assert_hidden(text, old, new)
    # args left out: the module returns the unit's own arguments
    failed, result, text = run(k3s_service, base, capsys)
    assert not failed and not result['changed'] and PLAIN in result['args']
    assert_hidden(text, old, new)
    # removed: the diff's before is the whole unit
    failed, result, text = run(k3s_service, dict(base, state='absent'), capsys, check_mode=True)
    assert not failed and result['changed']
    assert_hidden(text, old, new)


@pytest.mark.parametrize('key,template', [pytest.param(k, t, id='%s-%d' % (k, i)) for i, (k, t) in enumerate(ENV_FORMS)])
@pytest.mark.parametrize('init', ['systemd', 'openrc'])
def test_k3s_service_env(node, capsys, key, template, init):
    old, new = secret('old'), secret('new')
    env_path = ENV if init == 'systemd' else '/etc/rancher/k3s/k3s.env'
    base = {'init': init, 'args': [PLAIN]}
    failed, result, text = run(k3s_service, dict(base, env={key: fill(template, old), 'K3S_URL': 'https://a:6443'}), capsys,
                               check_mode=True)
    assert not failed and result['changed']
    assert_hidden(text, old)
    assert 'https://a:6443' in text and '(hidden)' in text
    failed, result, text = run(k3s_service, dict(base, env={key: fill(template, old)}), capsys)
    assert not failed and old in node.read(env_path).decode()
    assert_hidden(text, old)
    failed, result, text = run(k3s_service, dict(base, env={key: fill(template, new)}), capsys)
    assert not failed and result['changed']
    assert_hidden(text, old, new)
    failed, result, text = run(k3s_service, dict(base, state='absent'), capsys, check_mode=True)
    assert not failed and result['changed']
    assert_hidden(text, new)


@pytest.mark.parametrize('form,init', arg_cases())
def test_k3s_service_adopts_a_node_without_showing_its_secrets(node, capsys, form, init):
    """An installer-made node holding the secret is read (args and env left out) and updated."""
    value, env_value = secret('node'), secret('env')
    node.install(args=[PLAIN] + fill(form, value), init=init, environ={'K3S_TOKEN': env_value})
    for check_mode in (True, False):
        failed, result, text = run(k3s_service, {'init': init, 'args': [PLAIN, '--debug']}, capsys, check_mode=check_mode)
        assert not failed and result['changed']
        assert_hidden(text, value, env_value)


@pytest.mark.parametrize('opts,setup', [
    pytest.param({'args': ['--token', '%s\x01']}, None, id='control-character-in-the-value'),
    pytest.param({'args': ['-t=%s\x01']}, None, id='control-character-short-flag'),
    pytest.param({'args': ['-t', '%s$HOME']}, None, id='dollar-in-the-value'),
    pytest.param({'args': ['--datastore-endpoint=postgres://k3s:%s@db/$x']}, None, id='dollar-in-a-datastore-url'),
    pytest.param({'args': ['--etcd-s3-secret-key=%s$']}, None, id='dollar-in-an-s3-key'),
    pytest.param({'env': {'K3S_TOKEN': '%s\nX'}}, None, id='env-line-break'),
    pytest.param({'env': {'K3S_TOKEN': '%s', 'BAD-KEY': 'x'}}, None, id='env-bad-key'),
    pytest.param({'command': 'server', 'name': 'agent', 'args': ['-t', '%s']}, 'agent', id='unit-of-another-command'),
    pytest.param({'init': 'openrc', 'args': ['--token=%s', 'a  b']}, None, id='openrc-double-space-warning'),
])
def test_k3s_service_refusals_and_warnings(node, capsys, opts, setup):
    value, on_node = secret('opt'), secret('node')
    if setup:
        node.install(setup, args=['--token', on_node], environ={'K3S_AGENT_TOKEN': on_node})
    failed, result, text = run(k3s_service, fill(opts, value), capsys)
    assert failed or result['warnings'], text
    assert_hidden(text, value, on_node)


# -- k3s_config_file ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize('key,template', [pytest.param(k, t, id='%s-%d' % (k, i)) for i, (k, t) in enumerate(CONFIG_FORMS)])
def test_k3s_config_file_values(node, capsys, key, template):
    old, new = secret('old'), secret('new')
    args = {'name': '50-cluster.yaml'}
    before = node.tree()
    failed, result, text = run(k3s_config_file, dict(args, values={key: fill(template, old), 'disable': 'traefik'}), capsys,
                               check_mode=True)
    assert not failed and result['changed'] and node.tree() == before
    assert_hidden(text, old)
    assert PLAIN in text and '(hidden)' in text
    failed, result, text = run(k3s_config_file, dict(args, values={key: fill(template, old)}), capsys)
    assert not failed and old in node.read(DROPIN_DIR + '/50-cluster.yaml').decode()
    assert_hidden(text, old)
    for check_mode in (True, False):
        failed, result, text = run(k3s_config_file, dict(args, values={key: fill(template, new), 'x': ' a '}), capsys,
                                   check_mode=check_mode)
        assert not failed and result['changed'] and result['warnings']
        assert_hidden(text, old, new)
    failed, result, text = run(k3s_config_file, dict(args, state='absent'), capsys)
    assert not failed and result['changed']
    assert_hidden(text, new)


@pytest.mark.parametrize('key,template', [pytest.param(k, t, id='%s-%d' % (k, i)) for i, (k, t) in enumerate(CONFIG_FORMS)])
def test_k3s_config_file_secrets_of_other_files(node, capsys, key, template):
    """A secret in config.yaml or another drop-in reaches k3s_args and the masking warning: hidden there too."""
    value, later = secret('main'), secret('later')
    node.write(CONFIG, '%s: %s\n' % (key, json.dumps(fill(template, value))), 0o600)
    node.write(DROPIN_DIR + '/90-local.yaml', '%s: %s\n' % (key.rstrip('+'), json.dumps(fill(template, later))), 0o600)
    for check_mode in (True, False):
        failed, result, text = run(k3s_config_file, {'name': '50-cluster.yaml', 'values': {key.rstrip('+'): 'x'}}, capsys,
                                   check_mode=check_mode)
        assert not failed and result['masked']
        assert_hidden(text, value, later)


@pytest.mark.parametrize('values,setup', [
    pytest.param({'token': '%s', 'bad key': 1}, None, id='bad-key'),
    pytest.param({'token': 2 ** 70 + 7}, None, id='integer-beyond-64-bits'),
    pytest.param({'datastore-endpoint': ['postgres://k3s:%s@db/k3s', {'x': 1}]}, None, id='list-with-a-dict'),
    pytest.param({'token': '%s'}, 'foreign', id='foreign-file-with-a-secret'),
    pytest.param({'token': '%s'}, 'broken', id='broken-config-yaml-with-a-secret'),
])
def test_k3s_config_file_refusals(node, capsys, values, setup):
    value, on_node = secret('opt'), secret('node')
    if setup == 'foreign':
        node.write(DROPIN_DIR + '/50-cluster.yaml', 'token: %s\n' % on_node)
    if setup == 'broken':
        node.write(CONFIG, 'token: %s\n  x: [\n' % on_node)
    failed, result, text = run(k3s_config_file, {'name': '50-cluster.yaml', 'values': fill(values, value)}, capsys)
    assert failed, text
    assert_hidden(text, value, on_node, str(2 ** 70 + 7))


# -- k3s_service_arg --------------------------------------------------------------------------------------------------
NODE_SECRETS = {'cli': secret('cli'), 'env': secret('env'), 'config': secret('config'), 'dsn': secret('dsn')}


def secret_node(node, init='systemd'):
    """A k3s server with a secret in every place k3s reads one: the command line (short flag, space form), the
    environment file, config.yaml (a key and a datastore URL)."""
    node.install(args=['-t', NODE_SECRETS['cli'], PLAIN], init=init, environ={'K3S_AGENT_TOKEN': NODE_SECRETS['env']})
    node.write(CONFIG, 'etcd-s3-secret-key: %s\ndatastore-endpoint: "postgres://k3s:%s@db.example/k3s"\n'
               % (NODE_SECRETS['config'], NODE_SECRETS['dsn']), 0o600)


@pytest.mark.parametrize('method', ['unit', 'config', 'dropin', 'auto'])
@pytest.mark.parametrize('init', ['systemd', 'openrc'])
def test_k3s_service_arg_on_a_node_with_secrets(node, capsys, method, init):
    if init == 'openrc' and method == 'dropin':
        pytest.skip('openrc has no drop-ins')
    secret_node(node, init)
    node.write('/sbin/openrc-run', '') if init == 'openrc' else None
    for state in ('present', 'absent'):
        for check_mode in (True, False):
            failed, result, text = run(k3s_service_arg, {'arg': SCHED, 'method': method, 'state': state,
                                                         'path': UNIT if init == 'systemd' else SCRIPT}, capsys,
                                       check_mode=check_mode)
            assert not failed, text
            assert PLAIN in text and '(hidden)' in text
            assert_hidden(text, *NODE_SECRETS.values())


@pytest.mark.parametrize('template', [
    '--token=%s', '--t=%s', '--agent-token=%s', '--datastore-endpoint=postgres://k3s:%s@db.example/k3s',
    '--etcd-s3-secret-key=%s', '--etcd-s3-access-key=%s', '--vpn-auth=name=tailscale,joinKey=%s',
])
@pytest.mark.parametrize('method', ['unit', 'config'])
def test_k3s_service_arg_with_a_secret_arg(node, capsys, template, method):
    value = secret('arg')
    secret_node(node)
    for state, check_mode in (('present', True), ('present', False), ('present', False), ('absent', True),
                              ('absent', False)):
        failed, result, text = run(k3s_service_arg, {'arg': template % value, 'method': method, 'state': state}, capsys,
                                   check_mode=check_mode)
        # the node passes -t on its command line: a config file cannot add --t (k3s would take the command line's)
        assert not failed or (template.startswith('--t=') and 'unsafe' in result['msg']), text
        assert_hidden(text, value, *NODE_SECRETS.values())


@pytest.mark.parametrize('arg,opts', [
    pytest.param('-t=%s', {}, id='short-flag-refused'),
    pytest.param('--token=%s\x01', {}, id='control-character'),
    pytest.param(' --token=%s', {}, id='white-space'),
    pytest.param('--token=%s$HOME', {'method': 'unit'}, id='dollar'),
    pytest.param('--token=%s', {'method': 'config', 'path': '/etc/systemd/system/other.service', 'service': 'k3s'},
                 id='path-of-another-service'),
    pytest.param('--kube-scheduler-arg=config=/elsewhere.yaml', {}, id='conflict-on-a-secret-node'),
])
def test_k3s_service_arg_refusals(node, capsys, arg, opts):
    value = secret('arg')
    secret_node(node)
    node.write(CONFIG, (node.read(CONFIG) + b'kube-scheduler-arg: [config=/other.yaml]\n'), 0o600)
    failed, result, text = run(k3s_service_arg, dict(opts, arg=arg.replace('%s', value)), capsys)
    assert failed, text
    assert_hidden(text, value, *NODE_SECRETS.values())


# -- k3s_info -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize('init', ['systemd', 'openrc'])
def test_k3s_info(node, capsys, init):
    secret_node(node, init)
    failed, result, text = run(k3s_info, {'service': 'k3s'}, capsys, diff=False)
    assert not failed and result['installed'] and PLAIN in result['argv']
    assert '(hidden)' in result['argv'] and any('postgres://k3s:(hidden)@db.example/k3s' in a for a in result['k3s_args'])
    assert_hidden(text, *NODE_SECRETS.values())


def test_k3s_info_refusal(node, capsys):
    value = secret('cli')
    node.write(UNIT, '[Service]\nExecStart=/usr/local/bin/k3s -t %s\n' % value)
    failed, result, text = run(k3s_info, {'service': 'k3s'}, capsys, diff=False)
    assert failed and 'subcommand' in result['msg']
    assert_hidden(text, value)


@pytest.mark.parametrize('checks', [True, False])
def test_k3s_preflight_read(node, capsys, checks):
    """k3s_preflight's read is k3s_info's: the secrets it meets on the node are nowhere in its result, with the checks or
    without them."""
    secret_node(node)
    node.write('/proc/sys/kernel/hostname', 'node-1\n')
    node.hostname = None
    failed, result, text = run(k3s_preflight, {'read': {'service': 'k3s'}, 'checks': checks, 'fail': False}, capsys,
                               diff=False)
    assert not failed and result['node']['installed'] and PLAIN in result['node']['argv'], text
    assert '(hidden)' in result['node']['argv'] and ('problems' in result) is checks
    assert_hidden(text, *NODE_SECRETS.values())


# -- rollback -------------------------------------------------------------------------------------------------------------
def test_rollback_of_files_with_secrets(node, capsys):
    """A run that changed the unit, its env file and a config drop-in is undone: the diff shows every file."""
    old = {k: secret('old' + k) for k in ('cli', 'env', 'cfg')}
    new = {k: secret('new' + k) for k in ('cli', 'env', 'cfg')}
    node.install(args=['--token', old['cli']], environ={'K3S_TOKEN': old['env']})
    files = []
    for values in ({'token': old['cfg']}, {'token': new['cfg']}):
        failed, result, text = run(k3s_config_file, {'name': '50-cluster.yaml', 'values': values, 'backup': True}, capsys)
        files += result['files']
    failed, result, text = run(k3s_service, {'args': ['-t', new['cli']], 'env': {'K3S_TOKEN': new['env']}, 'backup': True},
                               capsys)
    files += result['files']
    assert_hidden(text, *list(old.values()) + list(new.values()))
    for check_mode in (True, False):
        failed, result, text = run(rollback, {'files': files}, capsys, check_mode=check_mode)
        assert not failed and result['changed'], text
        assert_hidden(text, *list(old.values()) + list(new.values()))
    assert old['cli'] in node.read(UNIT).decode()


# -- k3s_registries -------------------------------------------------------------------------------------------------------
REGISTRIES = '/etc/rancher/k3s/registries.yaml'


@pytest.mark.parametrize('key', ['password', 'auth', 'identity_token'])
def test_k3s_registries(node, capsys, key):
    """A registry's password, auth and identity token: written to the file, nowhere in the result (the invocation, the
    diff), neither the old value nor the new one; a refusal that quotes the options hides it too."""
    old, new = secret('old' + key), secret('new' + key)
    for value in (old, new):
        configs = {'r.example:5000': {'auth': {'username': 'puller', key: value}}}
        failed, result, text = run(k3s_registries, {'configs': configs}, capsys)
        assert not failed and result['changed'] and 'puller' in text, text
        assert_hidden(text, old, new)
        assert value in node.read(REGISTRIES).decode()
    bad = {'r.example:5000': {'auth': {key: new, 'user': 'puller'}}}
    failed, result, text = run(k3s_registries, {'configs': bad}, capsys)
    assert failed and 'does not know' in result['msg'], text
    assert_hidden(text, old, new)


@pytest.mark.parametrize('key', ['password', 'auth', 'identity_token'])
def test_k3s_preflight_registries(node, capsys, key):
    """The preflight checks the registries the role is to write: their secrets are nowhere in its result or its log
    line, when it finds nothing wrong, when it refuses a CA file not on the node, and when a secret stands where k3s
    has no such key (the refusal names the key)."""
    value = secret('pre' + key)
    node.write('/proc/sys/kernel/hostname', 'node-1\n')
    node.hostname = None
    for configs, problem in [
            ({'r.example:5000': {'auth': {'username': 'puller', key: value}}}, None),
            ({'r.example:5000': {'auth': {'username': 'puller', key: value}, 'tls': {'ca_file': '/etc/ssl/no-ca.pem'}}},
             'is not there on this node'),
            ({'r.example:5000': {'auth': {key: value, 'user': 'puller'}}}, 'does not know')]:
        failed, result, text = run(k3s_preflight, {'fail': False, 'registries': {'configs': configs}}, capsys)
        assert not failed and 'puller' in text, text
        found = [p['msg'] for p in result['problems'] if p['check'] == 'registries']
        assert (problem is None and not found) or (problem and problem in found[0]), result['problems']
        assert_hidden(text, value)
