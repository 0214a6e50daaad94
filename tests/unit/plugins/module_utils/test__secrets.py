# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The table of k3s's secret-bearing options and the functions that keep their values out of sight, from tables."""

from __future__ import annotations

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _installer, _secrets as s
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change

H = s.HIDDEN


# -- the table --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize('name,expected', [
    ('token', 'token'), ('--token', 'token'), ('-t', 'token'), ('t', 'token'), ('token+', 'token'),
    ('agent-token', 'agent-token'), ('cluster-secret', 'cluster-secret'), ('etcd-token', 'etcd-token'),
    ('datastore-endpoint', 'datastore-endpoint'), ('etcd-s3-access-key', 'etcd-s3-access-key'),
    ('s3-access-key', 'etcd-s3-access-key'), ('etcd-s3-secret-key', 'etcd-s3-secret-key'),
    ('s3-secret-key', 'etcd-s3-secret-key'), ('etcd-s3-session-token', 'etcd-s3-session-token'),
    ('s3-session-token', 'etcd-s3-session-token'), ('etcd-s3-proxy', 'etcd-s3-proxy'), ('vpn-auth', 'vpn-auth'),
    # paths to a secret, and flags that only look like one
    ('token-file', None), ('agent-token-file', None), ('vpn-auth-file', None), ('etcd-s3-config-secret', None),
    ('datastore-cafile', None), ('tls-san', None), ('server', None), ('s', None), ('disable', None), ('', None), (None, None),
])
def test_by_flag(name, expected):
    option = s.by_flag(name)
    assert (option.name if option else None) == expected


@pytest.mark.parametrize('name,expected', [
    ('K3S_TOKEN', 'token'), ('RKE2_TOKEN', 'token'), ('K3S_AGENT_TOKEN', 'agent-token'), ('K3S_CLUSTER_SECRET', 'cluster-secret'),
    ('K3S_DATASTORE_ENDPOINT', 'datastore-endpoint'), ('AWS_ACCESS_KEY_ID', 'etcd-s3-access-key'),
    ('AWS_SECRET_ACCESS_KEY', 'etcd-s3-secret-key'), ('AWS_SESSION_TOKEN', 'etcd-s3-session-token'),
    ('K3S_VPN_AUTH', 'vpn-auth'), ('k3s_token', 'token'),
    ('K3S_TOKEN_FILE', None), ('K3S_URL', None), ('K3S_NODE_NAME', None), ('HTTP_PROXY', None),
])
def test_by_env(name, expected):
    option = s.by_env(name)
    assert (option.name if option else None) == expected


# -- the secret part of one value -----------------------------------------------------------------------------------------
DS = s.by_flag('datastore-endpoint')


@pytest.mark.parametrize('value,parts,shown', [
    ('postgres://k3s:pw@db:5432/k3s?sslmode=disable', ['pw'], 'postgres://k3s:%s@db:5432/k3s?sslmode=disable' % H),
    ('postgresql://k3s:p%40ss@db/k3s', ['p%40ss', 'p@ss'], 'postgresql://k3s:%s@db/k3s' % H),
    ('mysql://root:pw@tcp(db:3306)/k3s', ['pw'], 'mysql://root:%s@tcp(db:3306)/k3s' % H),
    ('mysql://root:p@w/d@tcp(db:3306)/k3s', ['p@w/d'], 'mysql://root:%s@tcp(db:3306)/k3s' % H),
    ('nats://tok@nats:4222', ['tok'], 'nats://%s@nats:4222' % H),
    ('postgres://k3s@db/k3s?sslmode=disable&password=qp', ['qp'], 'postgres://k3s@db/k3s?sslmode=disable&password=%s' % H),
    ("host=db user=k3s password='p w' dbname=k3s", ["'p w'", 'p w'], 'host=db user=k3s password=%s dbname=k3s' % H),
    ('https://etcd-1:2379,https://u:pw@etcd-2:2379', ['pw'], 'https://etcd-1:2379,https://u:%s@etcd-2:2379' % H),
    ('postgres://k3s@db/k3s', [], 'postgres://k3s@db/k3s'),
    ('https://etcd-1:2379', [], 'https://etcd-1:2379'),
    ('sqlite:///var/lib/rancher/k3s/server/db/state.db?_journal=WAL', [], None),
    ('', [], ''),
])
def test_url_password(value, parts, shown):
    assert s.secret_parts(DS, value) == parts
    assert s.hide_value(DS, value) == (value if shown is None else shown)


@pytest.mark.parametrize('name,value,parts', [
    ('token', 'K10abc::server:xyz', ['K10abc::server:xyz']),
    ('token', ' padded ', [' padded ', 'padded']),
    ('token', '', []),
    ('vpn-auth', 'name=tailscale,joinKey=tskey-1', ['name=tailscale,joinKey=tskey-1', 'tskey-1']),
    ('token', True, []),
])
def test_secret_parts(name, value, parts):
    assert s.secret_parts(s.by_flag(name), value) == parts


# -- argument lists, environments, config pairs ----------------------------------------------------------------------------
ARGV = [
    (['k3s', 'server', '--token=a1', '--disable=traefik'], ['a1'], ['k3s', 'server', '--token=' + H, '--disable=traefik']),
    (['--token', 'a2'], ['a2'], ['--token', H]),
    (['-t', 'a3'], ['a3'], ['-t', H]),
    (['-t=a4'], ['a4'], ['-t=' + H]),
    (['--t', 'a5'], ['a5'], ['--t', H]),
    (['-token=a6'], ['a6'], ['-token=' + H]),
    (['--agent-token', '--looks-like-a-flag'], ['--looks-like-a-flag'], ['--agent-token', H]),  # Go takes the next word
    (['--cluster-secret=a7'], ['a7'], ['--cluster-secret=' + H]),
    (['--datastore-endpoint', 'postgres://u:a8@db/k3s'], ['a8'], ['--datastore-endpoint', 'postgres://u:%s@db/k3s' % H]),
    (['--etcd-s3-secret-key=a9', '--etcd-s3-access-key', 'b1'], ['a9', 'b1'],
     ['--etcd-s3-secret-key=' + H, '--etcd-s3-access-key', H]),
    (['--s3-session-token=b2'], ['b2'], ['--s3-session-token=' + H]),
    (['--vpn-auth=name=tailscale,joinKey=b3'], ['name=tailscale,joinKey=b3', 'b3'], ['--vpn-auth=' + H]),
    ([' --token=b4'], ['b4'], [' --token=' + H]),
    (['--token'], [], ['--token']),
    (['--token='], [], ['--token=']),
    (['--token-file=/etc/t', '--disable=token', 'token', '--kubelet-arg=x-t=1', '--server', 'https://s'], [],
     ['--token-file=/etc/t', '--disable=token', 'token', '--kubelet-arg=x-t=1', '--server', 'https://s']),
]


@pytest.mark.parametrize('argv,found,shown', ARGV)
def test_argv(argv, found, shown):
    assert s.argv_secrets(argv) == found
    assert s.hide_argv(argv) == shown
    assert argv == list(argv)  # the input is left alone


def test_env():
    env = {'K3S_TOKEN': 'e1', 'K3S_DATASTORE_ENDPOINT': 'postgres://u:e2@db/k3s', 'AWS_SECRET_ACCESS_KEY': 'e3',
           'K3S_URL': 'https://s:6443', 'K3S_TOKEN_FILE': '/etc/t'}
    assert s.env_secrets(env) == ['e1', 'e2', 'e3']
    assert s.hide_env(env) == {'K3S_TOKEN': H, 'K3S_DATASTORE_ENDPOINT': 'postgres://u:%s@db/k3s' % H,
                               'AWS_SECRET_ACCESS_KEY': H, 'K3S_URL': 'https://s:6443', 'K3S_TOKEN_FILE': '/etc/t'}


def test_config_pairs():
    pairs = [('token', 'c1'), ('t', 123456789), ('agent-token+', ['c2', 'c3']), ('node-label', ['c4']),
             ('datastore-endpoint', 'mysql://r:c5@tcp(db)/k3s'), ('token-file', '/etc/t'), ('cluster-secret', True)]
    assert set(s.config_secrets(pairs)) == {'c1', '123456789', 'c2', 'c3', 'c5'}
    assert set(s.config_secrets(dict(pairs))) == {'c1', '123456789', 'c2', 'c3', 'c5'}


@pytest.mark.parametrize('data,found', [
    (b"K3S_TOKEN='f1'\nK3S_URL='https://s'\n", ['f1']),
    (b"[Service]\nEnvironment=\"K3S_AGENT_TOKEN=f2\" X=1\nExecStart=/usr/local/bin/k3s server \\\n\t'-t' \\\n\t'f3' \\\n\n",
     ['f3', 'f2']),
    (b'#!/sbin/openrc-run\ncommand="/usr/local/bin/k3s"\ncommand_args="server \\\n\t\'--token=f4\' \\\n    >>/var/log/k3s.log 2>&1"\n',
     ['f4']),
    (b'token: f5\ndatastore-endpoint: "postgres://u:f6@db/k3s"\n', ['f5', 'f6']),
    (b'\x00\xff not a file of any kind', []),
    (None, []),
])
def test_file_secrets(data, found):
    assert set(s.file_secrets(data)) == set(found)


# -- text: diffs and messages --------------------------------------------------------------------------------------------
TEXTS = [
    # environment files, as the installer writes them and as people do
    ("K3S_TOKEN='t1'\nK3S_URL='u'\n", (), "K3S_TOKEN=%s\nK3S_URL='u'\n" % H),
    ("export K3S_AGENT_TOKEN=t2\n", (), "export K3S_AGENT_TOKEN=%s\n" % H),
    ("AWS_SECRET_ACCESS_KEY=t3 with spaces\n", (), "AWS_SECRET_ACCESS_KEY=%s\n" % H),
    ("K3S_DATASTORE_ENDPOINT='postgres://u:t4@db/k3s'\n", (), "K3S_DATASTORE_ENDPOINT='postgres://u:%s@db/k3s'\n" % H),
    ("K3S_TOKEN_FILE='/etc/t'\n", (), "K3S_TOKEN_FILE='/etc/t'\n"),
    # units and init scripts in the installer's layout
    ("\t'--token=t5' \\\n\t'--x=1' \\\n", (), "\t'--token=%s' \\\n\t'--x=1' \\\n" % H),
    ("\t'--agent-token' \\\n\t't6' \\\n", (), "\t'--agent-token' \\\n\t'%s' \\\n" % H),
    ("\t'-t' \\\n\t't7' \\\n", (), "\t'-t' \\\n\t'%s' \\\n" % H),
    ("ExecStart=/usr/local/bin/k3s server -t t8 --disable=x\n", (), "ExecStart=/usr/local/bin/k3s server -t %s --disable=x\n" % H),
    ('Environment="K3S_TOKEN=t9" "X=1"\n', (), 'Environment="K3S_TOKEN=%s" "X=1"\n' % H),
    ('command_args="server \\\n\t\'--token=u1\' \\\n', (), 'command_args="server \\\n\t\'--token=%s\' \\\n' % H),
    ("\t'--kubelet-arg=foo-t=1' \\\n\t'--token-file=/etc/t' \\\n", (), "\t'--kubelet-arg=foo-t=1' \\\n\t'--token-file=/etc/t' \\\n"),
    # known values, in the forms this collection writes them
    ("\t'--token=it'\\''s' \\\n", ("it's",), "\t'--token=%s' \\\n" % H),
    ("\t'--etcd-s3-secret-key=100%%' \\\n", ('100%',), "\t'--etcd-s3-secret-key=%s' \\\n" % H),
    ('x: "a\\tb"\n', ('a\tb',), 'x: "%s"\n' % H),
    ("args[1] 'u2\\x01' holds a control character", ('u2\x01',), "args[1] '%s' holds a control character" % H),
    ("p in postgres://u:p@db", ('p',), "%s in postgres://u:%s@db" % (H, H)),  # a short value only where it stands alone
    # config files
    ('token: u3\nagent-token:\n  - u4\n  - u5\nnode-label:\n  - a\n', (),
     'token: %s\nagent-token:\n  - %s\n  - %s\nnode-label:\n  - a\n' % (H, H, H)),
    ('"t": u6\ndatastore-endpoint: "mysql://r:u7@tcp(db)/k3s"\netcd-s3-secret-key+: [u8]\n', (),
     '"t": %s\ndatastore-endpoint: "mysql://r:%s@tcp(db)/k3s"\netcd-s3-secret-key+: %s\n' % (H, H, H)),
    ('token-file: /etc/t\n---\nx: 1\n', (), 'token-file: /etc/t\n---\nx: 1\n'),
    # any URL with a password
    ('HTTP_PROXY=http://user:u9@proxy:3128\n', (), 'HTTP_PROXY=http://user:%s@proxy:3128\n' % H),
]


@pytest.mark.parametrize('text,values,expected', TEXTS)
def test_hide_text(text, values, expected):
    assert s.hide_text(text, values) == expected
    assert s.hide_text(expected, values) == expected  # hiding twice changes nothing


@pytest.mark.parametrize('text,values,expected', [
    ('move -t from the command line', (), 'move -t from the command line'),
    ("arg '--token=m1' is not a k3s flag", (), "arg '--token=%s' is not a k3s flag" % H),
    ('the value m2 is wrong', ('m2-long-value',), 'the value m2 is wrong'),
    ('the value m3-long-value is wrong', ('m3-long-value',), 'the value %s is wrong' % H),
])
def test_hide_message(text, values, expected):
    assert s.hide_message(text, values) == expected


def test_usable_never_keeps_an_empty_value():
    assert s.usable(['', ' ', None, True, 'x', 'x', 12]) == ['x', '12']
    found = set()
    s.add(found, ['', 'y', 'z\x01'])
    assert found == {'y', 'z\x01', 'z\\x01'}  # a control character also as a log line's repr shows it


def test_secret_plan_diff():
    plan = s.SecretPlan([Change('/etc/x.env', b"K3S_TOKEN='d1'\n", b"K3S_TOKEN='d2'\nX=d3-long-value\n")],
                        secrets=['d3-long-value'])
    diff = plan.diff()
    assert diff[0]['before'] == "K3S_TOKEN=%s\n" % H and diff[0]['after'] == "K3S_TOKEN=%s\nX=%s\n" % (H, H)
    again = s.hidden_plan(plan, ['d3-long-value'])
    assert again.diff() == diff and again.paths == ['/etc/x.env']


def test_installer_helpers_use_the_table():
    assert _installer.secrets_of(['-t', 'i1', '--token-file=/t']) == ['i1']
    assert _installer.show('-t=i2') == repr('-t=' + H)
