# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Hostile inputs, one table per family, over every module and option the family concerns.

Each case runs the module's real ``main()`` against a fake node and checks three things: it fails
(or, where the family says so, warns), the message names the offending option or entry and says
what is allowed, and the node is untouched (every file byte for byte) with no command run.

Families: names with control characters; env files as systemd reads them; records that point
outside; rollback's discard; links.
"""

from __future__ import annotations

import json
import os

from unittest.mock import patch

import pytest

from ansible.module_utils import basic

from ansible_collections.baremetal.k3s.plugins.modules import (
    client_certificate,
    k3s_backup,
    k3s_config_file,
    k3s_info,
    k3s_killall,
    k3s_manifests,
    k3s_ready,
    k3s_registries,
    k3s_restore,
    k3s_service,
    k3s_service_arg,
    node_lease,
    pod_security_admission,
    pod_security_labels,
    pod_security_report,
    readiness_configmap,
    rollback,
    scheduler_config,
    static_pod_arg,
)

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok

K3S = '/usr/local/bin/k3s'
KUBECTL = [K3S, 'kubectl']
SCHED = '--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml'
MANIFESTS = '/var/lib/rancher/k3s/server/manifests'
APP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n'
CONTROL = ['\n', '\r', '\t', '\x00', '\x1b', '\x7f']


@pytest.fixture(name='server')
def fixture_server(node):
    """A k3s server node: the installer's unit, its data directory, an empty manifests directory."""
    node.install('server')
    node.makedirs(MANIFESTS)
    node.makedirs('/var/lib/rancher/k3s/server/db')
    node.write('/var/lib/rancher/k3s/server/token', 'K10abc::server:tok\n', 0o600)
    return node


@pytest.fixture(name='no_commands')
def fixture_no_commands():
    """Any command the module runs (kubectl, systemctl, k3s) is recorded: a refused name runs none."""
    calls = []

    def refuse(self, args, **kw):  # pylint: disable=unused-argument
        calls.append(args)
        return 1, '', 'no command may run for a refused name'
    with patch.object(basic.AnsibleModule, 'run_command', refuse):
        yield calls


# -- family: names with control characters ---------------------------------------------------------------------
# (module, options with '{}' where the hostile name goes, the option the message must name, where the name goes)
NAMES = [
    (k3s_manifests, {'manifests': [{'name': 'app{}.yaml', 'content': APP}]}, 'manifests[0].name', 'a file name'),
    (k3s_manifests, {'manifests': [{'name': 'app.yaml', 'content': APP}, {'name': 'b{}.yaml', 'content': APP}]},
     'manifests[1].name', 'a file name'),
    (k3s_manifests, {'manifests': [{'name': 'app.yaml{}', 'content': APP}]}, 'manifests[0].name', 'a file name'),
    (k3s_manifests, {'manifests': [{'name': 'app.yaml', 'content': APP}], 'set': 'csi{}'}, 'set', 'the record name'),
    (node_lease, {'name': 'scheduler_extender{}', 'timeout': 0}, 'name', 'the lease file name'),
    (readiness_configmap, {'kubectl': KUBECTL, 'node_name': 'server-1{}', 'kube_scheduler': 'k3s@server-1'},
     'node_name', 'a kubectl argument'),
    (readiness_configmap, {'kubectl': KUBECTL, 'node_name': 'server-1', 'kube_scheduler': 'k',
                           'name': 'extender-readiness{}'}, 'name', 'a kubectl argument'),
    (readiness_configmap, {'kubectl': KUBECTL, 'node_name': 'server-1', 'kube_scheduler': 'k', 'namespace': 'csi{}'},
     'namespace', 'a kubectl argument'),
    (k3s_ready, {'kubectl': KUBECTL, 'node_name': 'server-1{}'}, 'node_name', 'a kubectl argument'),
    (client_certificate, {'kubectl': KUBECTL, 'name': 'alice{}'}, 'name', 'the CSR name'),
    (client_certificate, {'kubectl': KUBECTL, 'name': 'alice', 'groups': ['devs', 'ops{}']}, 'groups[1]', 'a binding name'),
    (client_certificate, {'kubectl': KUBECTL, 'name': 'alice', 'groups': ['devs'], 'cluster_role': 'view{}'},
     'cluster_role', 'a binding name'),
    (k3s_config_file, {'name': '50-cluster{}.yaml', 'values': {'node-label': ['a=b']}}, 'name', 'a drop-in file name'),
    (k3s_config_file, {'name': '50-cluster.yaml', 'values': {'node-label': ['a=b']}, 'service': 'k3s{}'}, 'service',
     'a service name'),
    (k3s_service, {'name': 'edge{}'}, 'name', 'the service name'),
    (k3s_service, {'env': {'K3S_URL{}': 'https://s:6443'}}, 'env.K3S_URL', 'an env file line'),
    (k3s_service_arg, {'arg': SCHED, 'service': 'k3s{}'}, 'service', 'a service name'),
    (k3s_info, {'service': 'k3s{}'}, 'service', 'a service name'),
    (k3s_restore, {'archive': '/var/backups/k3s/a.tar.gz', 'service': 'k3s{}'}, 'service', 'a service name'),
    (k3s_backup, {'host': 'node{}-1', 'backup_dir': '/var/backups/k3s'}, 'host', 'the archive name'),
    (k3s_killall, {'data_dir': '/var/lib/rancher/k3s{}'}, 'data_dir', 'the data directory'),
    (k3s_registries, {'mirrors': {'docker.io{}': {'endpoint': ['https://r.example']}}}, 'mirrors', 'a registry name'),
    (k3s_registries, {'configs': {'r.example{}:5000': {'tls': {'insecure_skip_verify': True}}}}, 'configs',
     'a registry name'),
    (static_pod_arg, {'path': '/etc/kubernetes/manifests/kube-scheduler.yaml', 'arg': '--config=/etc/x.yaml',
                      'volume_prefix': 'bk3s{}'}, 'volume_prefix', 'a volume name'),
    (pod_security_admission, {'path': '/etc/rancher/k3s/psa.yaml', 'exempt_namespaces': ['kube-system', 'ops{}']},
     'exempt_namespaces[1]', 'the admission configuration'),
    (pod_security_admission, {'path': '/etc/rancher/k3s/psa.yaml', 'exempt_runtime_classes': ['nvidia{}']},
     'exempt_runtime_classes[0]', 'the admission configuration'),
    (pod_security_admission, {'path': '/etc/rancher/k3s/psa.yaml', 'exempt_usernames': ['alice{}']},
     'exempt_usernames[0]', 'the admission configuration'),
    (pod_security_report, {'kubectl': KUBECTL, 'namespaces': ['shop{}']}, 'namespaces[0]', 'a kubectl argument'),
    (pod_security_report, {'kubectl': KUBECTL, 'exempt_namespaces': ['kube-system{}']}, 'exempt_namespaces[0]',
     'the report'),
    (pod_security_labels, {'kubectl': KUBECTL, 'namespaces': {'ops{}': {'enforce': 'privileged'}}}, 'namespaces key',
     'a kubectl argument'),
]


def _fill(value, char):
    if isinstance(value, str):
        return value.replace('{}', char)
    if isinstance(value, list):
        return [_fill(v, char) for v in value]
    if isinstance(value, dict):
        return {_fill(k, char): _fill(v, char) for k, v in value.items()}
    return value


@pytest.mark.parametrize('char', CONTROL, ids=[repr(c) for c in CONTROL])
@pytest.mark.parametrize('module, options, option, where', NAMES,
                         ids=['%s-%s' % (m.__name__.rsplit('.', 1)[1], o) for m, dummy, o, dummy2 in NAMES])
def test_names_with_control_characters_are_refused_before_anything_runs(server, no_commands, module, options, option,
                                                                        where, char):
    """A control character in a name (it would end up in %(where)s) is refused naming the option; nothing runs."""
    args = _fill(options, char)
    before = server.tree()
    msg = module_fail(module, args)
    assert msg.startswith(option) or ' %s ' % option in ' ' + msg or option + ' ' in msg, msg
    assert repr(char) in msg or 'control character' in msg, msg
    assert server.tree() == before, 'a refused run changed the node (%s)' % where
    assert not no_commands and not server.calls, (no_commands, server.calls)


def test_every_name_table_case_passes_without_the_control_character(server, no_commands):
    """The same options without the hostile character get past the name checks (so the table tests the names)."""
    for module, options, option, dummy in NAMES:
        args = _fill(options, '')
        try:
            msg = module_fail(module, args)
        except AssertionError:
            continue  # it ran through: the name was accepted
        assert 'control character' not in msg and not msg.startswith(option + ' '), (module.__name__, msg)


ROLE_VALIDATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', 'roles', 'k3s_user',
                             'tasks', 'validate.yml')


@pytest.mark.parametrize('variable, good', [
    ('k3s_user_name', 'alice@example.com'),
    ('_k3s_user_csr_object', 'baremetal-k3s-user-alice'),
    ('k3s_user_cluster_name', 'default'),
    ('k3s_user_country', 'DE'),
])
@pytest.mark.parametrize('char', CONTROL, ids=[repr(c) for c in CONTROL])
def test_k3s_user_names_are_checked_whole(variable, good, char):
    """The role's own checks of the user name (the certificate CN, a file name), the CSR name and the cluster name:
    each condition on the name, evaluated with Ansible's tests, holds for the name and fails with a control character
    after it (the regex test with match_type=fullmatch; "match" with '^...$' lets a trailing newline through)."""
    import jinja2  # pylint: disable=import-outside-toplevel
    import yaml  # pylint: disable=import-outside-toplevel
    from ansible.plugins.test.core import TestModule  # pylint: disable=import-outside-toplevel
    with open(ROLE_VALIDATE) as f:
        tasks = yaml.safe_load(f)
    conditions = [c for t in tasks for c in (t.get('ansible.builtin.assert') or {}).get('that', [])
                  if isinstance(c, str) and c.lstrip().startswith(variable + ' is')]
    assert conditions, 'no check of %s in %s' % (variable, ROLE_VALIDATE)
    env = jinja2.Environment()
    env.tests.update(TestModule().tests())

    def holds(value):
        return all(env.compile_expression(c)(**{variable: value}) for c in conditions)
    assert holds(good), conditions
    assert not holds(good + char), '%s %r passes %s' % (variable, good + char, conditions)


@pytest.mark.parametrize('name, why', [
    ('app.yaml\n', "holds the control character '\\n'"),
    ('a/b.yaml', 'is not a file name'),
    ('..', 'is not a file name'),
    ('x' * 252 + '.yaml', 'is longer than 255 bytes'),
])
def test_manifest_names_say_what_is_allowed(server, name, why):
    msg = module_fail(k3s_manifests, {'manifests': [{'name': name, 'content': APP}]})
    assert 'manifests[0].name %r %s' % (name, why) in msg or ('manifests[0].name %r is not a file name' % name in msg
                                                              and why in msg), msg
    assert 'no "/", no control characters' in msg, msg


@pytest.mark.parametrize('listed', [
    'k3s-backup-node-1-20260101T000000Z.tar.gz\n',
    'k3s-backup-node-1-20260101T000000Z.tar.gz\n.sha256',
])
def test_backup_retention_leaves_a_name_that_only_looks_like_an_archive(server, listed):
    """ARCHIVE_RE is matched whole: a file whose name ends in a newline after ".tar.gz" is not ours to remove."""
    from ansible_collections.baremetal.k3s.plugins.module_utils import _backup  # pylint: disable=import-outside-toplevel
    assert _backup.own_archives([listed, 'k3s-backup-node-1-20260102T000000Z.tar.gz'], 'node-1') == \
        ['k3s-backup-node-1-20260102T000000Z.tar.gz']
    with pytest.raises(ValueError):
        _backup.snapshot_member('snap-1\n')
    assert _backup.parse_sha256('%s\n' % ('a' * 64)) == 'a' * 64


# -- family: env files as systemd reads them ---------------------------------------------------------------------
ENV = '/etc/systemd/system/k3s.service.env'
OPENRC_ENV = '/etc/rancher/k3s/k3s.env'


@pytest.mark.parametrize('text, env, unseen', [
    ("export K3S_URL='https://s:6443'\nexport K3S_TOKEN='t0k'\n", {'K3S_URL': 'https://s:6443', 'K3S_TOKEN': 't0k'},
     ['K3S_TOKEN', 'K3S_URL']),
    ("K3S_TOKEN='t0k'\nexport K3S_URL='https://s:6443'\n", {'K3S_URL': 'https://s:6443', 'K3S_TOKEN': 't0k'}, ['K3S_URL']),
    ("K3S_TOKEN='t0k'\n  export\tK3S_URL=https://s:6443\n", {'K3S_URL': 'https://s:6443', 'K3S_TOKEN': 't0k'}, ['K3S_URL']),
    ("K3S.URL='https://s:6443'\nK3S_TOKEN='t0k'\n", {'K3S_TOKEN': 't0k'}, ["'K3S.URL'"]),
])
def test_systemd_env_file_with_lines_systemd_ignores_is_not_adopted(node, text, env, unseen):
    """An env file systemd reads differently from the shell is rewritten as KEY=value lines, saying which key systemd
    did not see; without env it is kept and the same is said."""
    node.install('agent', environ={'K3S_URL': 'https://s:6443', 'K3S_TOKEN': 't0k'})
    env_path = '/etc/systemd/system/k3s-agent.service.env'
    node.write(env_path, text, 0o600)
    kept = module_ok(k3s_service, {'command': 'agent'})
    assert node.read(env_path) == text.encode()
    for key in unseen:
        assert any(key in w and 'systemd' in w for w in kept['warnings']), kept['warnings']
    result = module_ok(k3s_service, {'command': 'agent', 'env': env})
    assert result['changed'], result
    assert node.read(env_path) == b''.join(b"%s='%s'\n" % (k.encode(), env[k].encode()) for k in sorted(env)), \
        node.read(env_path)
    for key in unseen:
        assert any(key in w and 'written again' in w for w in result['warnings']), result['warnings']
    again = module_ok(k3s_service, {'command': 'agent', 'env': env})
    assert not again['changed'] and not again['warnings'], again


def test_openrc_env_file_with_export_is_adopted_the_init_script_sources_it(node):
    node.install('agent', init='openrc', environ={'K3S_URL': 'https://s:6443'})
    node.write('/sbin/openrc-run', '#!/bin/sh\n', 0o755)
    path = '/etc/rancher/k3s/k3s-agent.env'
    node.write(path, "export K3S_URL='https://s:6443'\n", 0o600)
    before = node.tree()
    result = module_ok(k3s_service, {'command': 'agent', 'init': 'openrc', 'env': {'K3S_URL': 'https://s:6443'}})
    assert not result['changed'] and not result['warnings'], result
    assert node.tree() == before


@pytest.mark.parametrize('key', ['K3S URL', 'K3S-URL', '1K3S', 'K3S=URL', 'K3S\nURL', 'K3S_URL\n', '', 'export K3S_URL'])
def test_env_keys_outside_the_variable_grammar_are_refused(node, key):
    node.install('server')
    before = node.tree()
    msg = module_fail(k3s_service, {'env': {key: 'x'}})
    assert msg.startswith('env.%s ' % key.encode('unicode_escape').decode()), msg
    assert 'letters, digits and "_", not starting with a digit' in msg, msg
    assert node.tree() == before


@pytest.mark.parametrize('value', ['https://s:6443\nK3S_TOKEN=planted', 'a\rb', 'a\x00b'])
def test_env_values_with_a_line_break_are_refused(node, value):
    node.install('server')
    before = node.tree()
    msg = module_fail(k3s_service, {'env': {'K3S_URL': value}})
    assert msg.startswith('env.K3S_URL holds the control character'), msg
    assert node.tree() == before


# -- family: records that point outside ---------------------------------------------------------------------------
RECORD = MANIFESTS + '/.baremetal-k3s-manifests-default'


@pytest.mark.parametrize('entry', ['../../x.yaml', '../server/token', '/etc/x.yaml', 'sub/x.yaml', '..', '.',
                                   'x.yaml\n', 'a\x00.yaml', ''])
@pytest.mark.parametrize('record', ['own', 'other'])
def test_record_entries_that_point_outside_are_refused_before_anything_is_removed(server, entry, record):
    """A record lists names inside the directory; one that is not is refused and nothing is removed or written."""
    server.write('/var/lib/rancher/k3s/x.yaml', 'victim\n')
    server.write('/etc/x.yaml', 'victim\n')
    server.write(MANIFESTS + '/mine.yaml', APP)
    path = RECORD if record == 'own' else MANIFESTS + '/.baremetal-k3s-manifests-other'
    server.write(path, json.dumps({'set': 'x', 'manifests': {entry: 'sha256:' + '0' * 64}}))
    before = server.tree()
    msg = module_fail(k3s_manifests, {'manifests': [{'name': 'app.yaml', 'content': APP}]})
    assert '%s, the record of the manifests this module placed, lists %r' % (path, entry) in msg, msg
    assert 'nothing was removed or written' in msg, msg
    assert server.tree() == before


# -- family: rollback's discard (and the backups restore removes) ---------------------------------------------------
LIVE = '/etc/rancher/k3s/config.yaml.d/50-x.yaml'
COPY = LIVE + '.4242.2026-11-26@14:10:15~'


@pytest.mark.parametrize('mode', ['discard', 'restore'])
@pytest.mark.parametrize('entry, why', [
    ({'path': LIVE, 'action': 'modified', 'backup_file': LIVE}, 'is not a backup this collection made of'),
    ({'path': LIVE, 'action': 'modified', 'backup_file': '/etc/rancher/k3s/config.yaml'}, 'is not a backup this collection'),
    ({'path': LIVE, 'action': 'modified', 'backup_file': '/etc/passwd'}, 'is not a backup this collection made of'),
    ({'path': LIVE, 'action': 'modified', 'backup_file': '/etc/rancher/k3s/config.yaml.4242.2026-11-26@14:10:15~'},
     'is not a backup this collection made of'),
    ({'path': LIVE, 'action': 'modified', 'backup_file': COPY + '\n'}, 'is not a backup this collection made of'),
    ({'path': LIVE, 'action': 'modified', 'backup_file': COPY + '.bak'}, 'is not a backup this collection made of'),
    ({'path': LIVE, 'action': 'modified', 'backup_file': '/etc/rancher/k3s/config.yaml.d/../config.yaml.d/'
      '50-x.yaml.4242.2026-11-26@14:10:15~'}, 'is not an absolute, normalized path'),
    ({'path': LIVE, 'action': 'modified', 'backup_file': '50-x.yaml.4242.2026-11-26@14:10:15~'},
     "files[0].backup_file '50-x.yaml.4242.2026-11-26@14:10:15~' is not an absolute"),
    ({'path': 'config.yaml.d/50-x.yaml', 'action': 'modified', 'backup_file': COPY},
     "files[0].path 'config.yaml.d/50-x.yaml' is not an absolute"),
    ({'path': LIVE, 'action': 'modified', 'backup_file': 'link'}, 'not a regular file'),
])
def test_rollback_removes_only_what_looks_like_our_backup_of_that_path(node, mode, entry, why):
    node.write(LIVE, 'live\n')
    node.write(COPY, 'copy\n')
    node.write('/etc/rancher/k3s/config.yaml', 'other\n')
    node.write('/etc/rancher/k3s/config.yaml.4242.2026-11-26@14:10:15~', 'other copy\n')
    node.write('/etc/passwd', 'root:x:0:0\n')
    if entry['backup_file'] == 'link':
        entry = dict(entry, backup_file=COPY.replace('4242', '4343'))
        node.symlink('/etc/passwd', entry['backup_file'])
    before = node.tree()
    msg = module_fail(rollback, {'files': [entry], 'mode': mode})
    assert why in msg and 'Traceback' not in msg, msg
    assert node.tree() == before


def test_rollback_backup_another_entry_changed_is_refused(node):
    other = COPY
    node.write(LIVE, 'live\n')
    node.write(other, 'changed by the run too\n')
    files = [{'path': other, 'action': 'created', 'backup_file': None},
             {'path': LIVE, 'action': 'modified', 'backup_file': other}]
    before = node.tree()
    msg = module_fail(rollback, {'files': files, 'mode': 'discard'})
    assert 'files[1].backup_file %s is a file the run changed, not a backup' % other in msg, msg
    assert node.tree() == before


@pytest.mark.parametrize('where', [os.path.dirname(LIVE), '/var/backups/baremetal-k3s'])
def test_rollback_discard_removes_our_backups(node, where):
    backup = os.path.join(where, os.path.basename(COPY).replace('@14:10:15~', '@14:10:15.2~'))
    node.write(LIVE, 'live\n')
    node.write(backup, 'copy\n')
    result = module_ok(rollback, {'files': [{'path': LIVE, 'action': 'modified', 'backup_file': backup}],
                                  'mode': 'discard'})
    assert result['backups_removed'] == [backup] and node.read(LIVE) == b'live\n' and not node.exists(backup)


# -- family: links: a directory a module writes into that is a symbolic link to nothing ---------------------------
LINKS = [
    (k3s_config_file, {'name': '50-x.yaml', 'values': {'node-label': ['a=b']}}, '/etc/rancher/k3s/config.yaml.d'),
    (k3s_config_file, {'name': '50-x.yaml', 'values': {'node-label': ['a=b']}}, '/etc/rancher/k3s'),
    (k3s_manifests, {'manifests': [{'name': 'app.yaml', 'content': APP}]}, MANIFESTS),
    (k3s_manifests, {'manifests': [{'name': 'app.yaml', 'content': APP}], 'backup': True, 'force': True,
                     'backup_dir': '/var/backups/bk3s'}, '/var/backups/bk3s'),
    (node_lease, {'name': 'scheduler_extender', 'timeout': 0}, '/run/baremetal-k3s'),
    (k3s_service, {'env': {'K3S_URL': 'https://s:6443'}}, '/etc/systemd/system'),
    (scheduler_config, {'path': '/etc/rancher/k3s/kube-scheduler/config.yaml', 'extender': {'url_prefix': 'http://x:1'},
                        'kubeconfig': '/var/lib/rancher/k3s/server/cred/scheduler.kubeconfig'},
     '/etc/rancher/k3s/kube-scheduler'),
    (k3s_backup, {'backup_dir': '/var/backups/k3s'}, '/var/backups/k3s'),
]


@pytest.mark.parametrize('check_mode', [False, True], ids=['run', 'check'])
@pytest.mark.parametrize('module, options, link', LINKS,
                         ids=['%s-%s' % (m.__name__.rsplit('.', 1)[1], link) for m, dummy, link in LINKS])
def test_a_dangling_link_to_a_directory_is_refused_not_created_through(server, module, options, link, check_mode):
    server.write('/var/lib/rancher/k3s/server/cred/scheduler.kubeconfig', 'apiVersion: v1\n')
    server.write('/var/lib/rancher/k3s/server/db/state.db', b'')
    if module is k3s_manifests and options.get('backup'):
        server.write(MANIFESTS + '/app.yaml', 'foreign\n')
    if server.exists(link):
        os.rename(server.p(link), server.p(link) + '.moved')
    target = '/srv/unmounted/disk' + link
    server.symlink(target, link)
    before = server.tree()
    msg = module_fail(module, options, check_mode=check_mode)
    assert link in msg and target in msg and 'does not exist' in msg, msg
    assert server.tree() == before
    assert not os.path.lexists(server.p('/srv/unmounted')), 'the link\'s target was created'


# -- family: space accounting of k3s_backup ------------------------------------------------------------------------
BDIR = '/var/backups/k3s'
STALE = BDIR + '/.k3s-backup-killed.tmp'


def _sqlite_server(node):
    import sqlite3  # pylint: disable=import-outside-toplevel
    node.makedirs('/var/lib/rancher/k3s/server/db')
    conn = sqlite3.connect(node.p('/var/lib/rancher/k3s/server/db/state.db'))
    conn.execute('CREATE TABLE kine (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, value BLOB)')
    conn.executemany('INSERT INTO kine (name, value) VALUES (?, ?)', [('/registry/x/%d' % i, b'v' * 100) for i in range(30)])
    conn.commit()
    conn.close()
    node.write('/var/lib/rancher/k3s/server/token', 'K10hash::server:pw\n', 0o600)


def _filesystem(node, free_bytes, inodes_free=500, inodes=1000, block=4096):
    node.filesystems['/'] = os.statvfs_result((block, block, 1 << 20, free_bytes // block, free_bytes // block, inodes,
                                               inodes_free, inodes_free, 0, 255))


@pytest.mark.parametrize('stale_mb, free_mb, inodes_free, outcome', [
    (0, 0, 500, 'not enough free space'),                  # nothing to reclaim: refused, as before
    (8, 0, 500, 'written'),                                # a killed backup's 8 MiB temp dir is removed first: fits
    (8, 0, 2, 'written'),                                  # ... and its 3 inodes come back too (2 + 3 = the 5 needed)
    (8, 0, 1, 'no free inodes'),                           # 1 + 3 is one short
    (1, 0, 500, 'not enough free space'),                  # reclaimed and still short: refused, the temp named
    (0, 64, 0, 'no free inodes'),                          # bytes but no inode: said as such
    (0, 64, 3, 'no free inodes'),                          # fewer inodes than a backup makes
])
def test_backup_counts_stale_temps_as_free_and_says_when_inodes_run_out(node, stale_mb, free_mb, inodes_free, outcome):
    _sqlite_server(node)
    node.makedirs(BDIR)
    os.chmod(node.p(BDIR), 0o700)
    if stale_mb:
        node.write(STALE + '/state.db', b'\0' * (stale_mb << 20))
        node.write(STALE + '/k3s-backup-x.tar.gz', b'\0' * 100)
    _filesystem(node, free_mb << 20, inodes_free=inodes_free)
    before = node.tree()
    if outcome == 'written':
        result = module_ok(k3s_backup, {'backup_dir': BDIR})
        names = node.listdir(BDIR)
        assert names == [os.path.basename(result['archive']), os.path.basename(result['archive']) + '.sha256'], names
        return
    msg = module_fail(k3s_backup, {'backup_dir': BDIR})
    assert outcome in msg, msg
    if outcome == 'no free inodes':
        assert 'df -i' in msg and 'not enough free space' not in msg, msg
    if stale_mb:
        assert STALE in msg, msg
    assert node.tree() == before


def test_backup_out_of_inodes_while_writing_is_said_as_such(node, monkeypatch):
    """The plan saw inodes; by the time SQLite creates its copy there are none (another writer): the failure says
    inodes, not SQLite's "unable to open database file"."""
    from ansible_collections.baremetal.k3s.plugins.module_utils import _backup  # pylint: disable=import-outside-toplevel
    _sqlite_server(node)

    def no_inode(source, dest):
        raise _backup.sqlite3.OperationalError('unable to open database file')
    monkeypatch.setattr(_backup, 'sqlite_copy', no_inode)
    _filesystem(node, 64 << 20)  # what the plan sees through the node's view: room and inodes
    real = os.statvfs
    monkeypatch.setattr(os, 'statvfs', lambda p: os.statvfs_result(real(p)[:5] + (1000, 0, 0) + real(p)[8:]))
    msg = module_fail(k3s_backup, {'backup_dir': BDIR})
    assert 'no free inode left' in msg and 'unable to open database file' in msg, msg
    assert not node.exists(BDIR) or node.listdir(BDIR) == []


# -- family: kill and crash windows of k3s_restore ------------------------------------------------------------------
DB = '/var/lib/rancher/k3s/server/db'
SERVER = '/var/lib/rancher/k3s/server'


def _backed_up(node):
    _sqlite_server(node)
    result = module_ok(k3s_backup, {'backup_dir': BDIR})
    import tarfile  # pylint: disable=import-outside-toplevel
    with tarfile.open(node.p(result['archive'])) as tar:
        new = tar.extractfile('server/db/state.db').read()
    node.write(DB + '/state.db', b'the datastore before the restore')
    return result['archive'], new


@pytest.fixture(name='watched')
def fixture_watched(node, monkeypatch):
    """Every rename and exchange k3s_restore makes, with server/db looked at before and after it: [(call, before,
    after)], each 'old', 'new' or 'missing' (what state.db holds there)."""
    from ansible_collections.baremetal.k3s.plugins.module_utils import _io, _restore  # pylint: disable=import-outside-toplevel
    seen = []
    state = {}

    def look():
        data = node.read(os.path.join(state.get('db', DB), 'state.db'))
        if data is None:
            return 'missing'
        return 'new' if data == state.get('new') else 'old' if data == b'the datastore before the restore' else 'other'

    def watch(name, fn):
        def wrapped(*args):
            before = look()
            try:
                return fn(*args)
            finally:
                seen.append((name, before, look()))
        return wrapped
    monkeypatch.setattr(_restore.os, 'rename', watch('rename', os.rename))  # _restore.os is os: every rename counts
    monkeypatch.setattr(_io, 'exchange', watch('exchange', _io.exchange))
    return seen, state


@pytest.mark.parametrize('kernel', ['exchange', 'no renameat2'])
def test_restore_never_leaves_server_db_missing(node, watched, monkeypatch, kernel):
    from ansible_collections.baremetal.k3s.plugins.module_utils import _io  # pylint: disable=import-outside-toplevel
    seen, state = watched
    archive, state['new'] = _backed_up(node)
    if kernel == 'no renameat2':
        def enosys(a, b):
            raise OSError(38, 'Function not implemented')
        monkeypatch.setattr(_io, 'exchange', enosys)
    del seen[:]
    result = module_ok(k3s_restore, {'archive': archive, 'service': ''})
    assert node.read(DB + '/state.db') == state['new'] and node.read(result['db_aside'] + '/state.db') == \
        b'the datastore before the restore'
    missing = [s for s in seen if 'missing' in s[1:]]
    if kernel == 'exchange':
        assert [s[0] for s in seen if s[0] == 'exchange'] == ['exchange'], seen
        assert not missing, 'server/db was missing around %s' % missing
    else:  # the documented fallback: two renames, one instant without server/db
        assert missing == [('rename', 'old', 'missing'), ('rename', 'missing', 'new')], seen


@pytest.mark.parametrize('killed_at', ['staged', 'exchanged'])
def test_next_restore_cleans_what_a_killed_one_left(node, killed_at):
    """A stage left by a kill holds the datastore copy and the token: the next run removes it. A kill after the
    exchange left the replaced datastore in the stage: the next run keeps it aside, never removes it."""
    from ansible_collections.baremetal.k3s.plugins.module_utils import _restore  # pylint: disable=import-outside-toplevel
    archive, new = _backed_up(node)
    stage = SERVER + '/.db.restore-killed.tmp'
    node.write(stage + '/token', 'K10hash::server:pw\n', 0o600)
    node.write(SERVER + '/.token.abc.tmp', 'K10hash::server:pw\n', 0o600)
    if killed_at == 'staged':
        node.write(stage + '/db/state.db', new)
        with open(node.p(stage + '/' + _restore.NEW_DB_RECORD), 'w') as f:
            f.write(_restore._identity(node.p(stage + '/db')) + '\n')  # pylint: disable=protected-access
    else:  # the record names the staged directory, which is now server/db; the stage holds the one it replaced
        node.makedirs(stage + '/db')
        with open(node.p(stage + '/' + _restore.NEW_DB_RECORD), 'w') as f:
            f.write(_restore._identity(node.p(DB)) + '\n')  # pylint: disable=protected-access
        node.write(stage + '/db/state.db', b'the replaced datastore')
    result = module_ok(k3s_restore, {'archive': archive, 'service': ''})
    assert sorted(result['stale_removed']) == sorted([stage, SERVER + '/.token.abc.tmp']), result
    left = [n for n in node.listdir(SERVER) if n.startswith(('.db.restore-', '.token.'))]
    assert left == [], left
    if killed_at == 'exchanged':
        assert len(result['stale_kept']) == 1 and result['stale_kept'][0].startswith(DB + '.before-restore-'), result
        assert node.read(result['stale_kept'][0] + '/state.db') == b'the replaced datastore'
    else:
        assert result['stale_kept'] == []
    assert node.read(DB + '/state.db') == new


def test_restore_through_a_link_to_another_disk_keeps_the_link(node):
    archive, new = _backed_up(node)
    node.makedirs('/mnt/disk2')
    os.rename(node.p(DB), node.p('/mnt/disk2/k3s-db'))
    node.symlink('/mnt/disk2/k3s-db', DB)
    result = module_ok(k3s_restore, {'archive': archive, 'service': ''})
    assert os.readlink(node.p(DB)) == '/mnt/disk2/k3s-db'
    assert node.read('/mnt/disk2/k3s-db/state.db') == new
    assert result['db_aside'].startswith('/mnt/disk2/k3s-db.before-restore-'), result
    assert node.read(result['db_aside'] + '/state.db') == b'the datastore before the restore'
    assert [n for n in node.listdir('/mnt/disk2') if n.startswith('.db.restore-')] == []


def test_restore_refuses_a_link_to_a_disk_not_mounted(node):
    archive, dummy = _backed_up(node)
    os.rename(node.p(DB), node.p(SERVER + '/db.real'))
    node.symlink('/mnt/disk2/k3s-db', DB)
    before = node.tree()
    msg = module_fail(k3s_restore, {'archive': archive, 'service': ''})
    assert 'is a symbolic link to /mnt/disk2/k3s-db, which is not a directory' in msg, msg
    assert node.tree() == before


# -- family: k3s_binary: what root will run must be what was checked, in places only root can change -------------------
NEWBIN = '/var/tmp/k3s-new'


def _binary_case(node, how):
    """The node of one hostile case: the installed k3s, the new one, then ``how`` spoils something."""
    from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.test_k3s_binary import fake_binary  # pylint: disable=import-outside-toplevel
    node.write(K3S, fake_binary('v1.30.6+k3s1'), 0o755)
    node.write(NEWBIN, fake_binary('v1.31.4+k3s1'), 0o755)
    if how == 'src a link':
        node.write('/var/tmp/k3s-real', fake_binary('v1.31.4+k3s1'), 0o755)
        node.unlink(NEWBIN)
        node.symlink('/var/tmp/k3s-real', NEWBIN)
    elif how == 'src a directory':
        node.unlink(NEWBIN)
        node.makedirs(NEWBIN)
    elif how == 'src not executable':
        os.chmod(node.p(NEWBIN), 0o644)
    elif how == 'src writable by others':
        os.chmod(node.p(NEWBIN), 0o757)
    elif how == 'src owned by another user':
        os.chown(node.p(NEWBIN), 1000, 1000)
    elif how == 'src prints no version':
        node.write(NEWBIN, '#!/bin/sh\necho hello\n', 0o755)
    elif how == 'src fails':
        node.write(NEWBIN, '#!/bin/sh\necho "fatal: bad CPU" >&2\nexit 1\n', 0o755)
    elif how == 'src directory writable by all, not sticky':
        os.chmod(node.p('/var/tmp'), 0o777)
    elif how in ('path directory a link of another user', 'src directory a link of another user'):
        link = '/usr/local/bin' if how.startswith('path') else '/var/tmp'
        node.makedirs('/opt')
        os.rename(node.p(link), node.p('/opt/moved'))
        node.symlink('/opt/moved', link)
        os.lchown(node.p(link), 1000, 1000)
    elif how == 'path directory writable by others':
        os.chmod(node.p('/usr/local/bin'), 0o775)
    elif how == 'path directory of another user':
        os.chown(node.p('/usr/local/bin'), 1000, 1000)
    elif how == 'path a directory':
        node.unlink(K3S)
        node.makedirs(K3S)
    elif how == 'path a dangling link':
        node.unlink(K3S)
        node.symlink('/opt/gone/k3s', K3S)
    elif how == 'previous a directory':
        node.makedirs(K3S + '.previous')


BINARIES = [
    ('src a link', False, 'src: /var/tmp/k3s-new is a symbolic link (to /var/tmp/k3s-real); give the file itself'),
    ('src a directory', False, 'src: /var/tmp/k3s-new is a directory; give a binary file'),
    ('src not executable', False, 'src: /var/tmp/k3s-new is not executable (mode 0644), so its version cannot be read'),
    ('src writable by others', False, 'src: /var/tmp/k3s-new is owned by uid 0 with mode 0757: another user could change '
                                      'it'),
    ('src owned by another user', False, 'src: /var/tmp/k3s-new is owned by uid 1000 with mode 0755'),
    ('src prints no version', True, 'src /var/tmp/k3s-new does not print a k3s or RKE2 version: "/var/tmp/k3s-new '
                                    "--version\" exited 0 and printed 'hello'"),
    ('src fails', True, 'src /var/tmp/k3s-new does not print a k3s or RKE2 version: "/var/tmp/k3s-new --version" exited 1 '
                        "and printed 'fatal: bad CPU'"),
    ('src directory writable by all, not sticky', False, 'src: the directory /var/tmp is owned by uid 0 with mode 0777: '
                                                         'another user could replace the binary'),
    ('src directory a link of another user', False, 'src: /var/tmp is a symbolic link owned by uid 1000, not root'),
    ('path directory a link of another user', False, 'path: /usr/local/bin is a symbolic link owned by uid 1000, not root'),
    ('path directory writable by others', False, 'path: the directory /usr/local/bin is owned by uid 0 with mode 0775'),
    ('path directory of another user', False, 'path: the directory /usr/local/bin is owned by uid 1000 with mode 0755'),
    ('path a directory', False, 'path: /usr/local/bin/k3s is a directory; give a binary file'),
    ('path a dangling link', False, 'path: /usr/local/bin/k3s is a symbolic link to /opt/gone/k3s, which does not exist'),
    ('previous a directory', False, '/usr/local/bin/k3s.previous is not a regular file (a link or a directory)'),
]


@pytest.mark.parametrize('how, runs, message', BINARIES, ids=[b[0] for b in BINARIES])
def test_k3s_binary_refuses_what_cannot_be_trusted(node, how, runs, message):
    from ansible_collections.baremetal.k3s.plugins.modules import k3s_binary  # pylint: disable=import-outside-toplevel
    import hashlib  # pylint: disable=import-outside-toplevel
    node.run_programs()
    node.makedirs('/var/tmp')
    _binary_case(node, how)
    new = node.p(NEWBIN)
    digest = hashlib.sha256(node.read(NEWBIN)).hexdigest() if os.path.isfile(new) else '0' * 64
    before = node.tree()
    msg = module_fail(k3s_binary, {'path': K3S, 'src': NEWBIN, 'sha256': digest})
    assert message in msg and msg.endswith('nothing was changed.'), msg
    assert node.tree() == before
    assert bool([c for c in node.calls if c[0] == NEWBIN]) is runs  # only a checked src is ever run
    assert not [c for c in node.calls if c[0] != NEWBIN]
