# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Hostile inputs on the write side, one table per family, over every writing module the family concerns.

Each case runs the module's real ``main()`` against a fake node. Families: links a local user plants; files that hold a
secret keep nothing that made them unsafe; special files and full disks; values k3s itself must read back; secrets
in every output under every shape.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import signal
import stat

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _config_file, _goyaml, _io
from ansible_collections.baremetal.k3s.plugins.modules import (
    k3s_backup,
    k3s_binary,
    k3s_config_file,
    k3s_manifests,
    k3s_registries,
    k3s_restore,
    k3s_service,
    k3s_token_file,
    scheduler_config,
    static_pod_arg,
)

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok, run_module

OTHER = 1000  # a local user's uid
HASH = 'a' * 64
TOKEN = 'K10%s::server:s3cret-pass' % HASH
REGISTRIES = '/etc/rancher/k3s/registries.yaml'
MIRRORS = {'docker.io': {'endpoint': ['https://registry.example:5000']}}
AUTH = {'registry.example:5000': {'auth': {'username': 'puller', 'password': 'Zq7passX9w'}}}
SCHED_KUBECONFIG = '/var/lib/rancher/k3s/server/cred/scheduler.kubeconfig'
POD = ('apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-scheduler\n  namespace: kube-system\nspec:\n  containers:\n'
       '  - command:\n    - kube-scheduler\n    - --kubeconfig=/etc/kubernetes/scheduler.conf\n'
       '    image: registry.k8s.io/kube-scheduler:v1.36.3\n    name: kube-scheduler\n')
APP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n'
K3S = '/usr/local/bin/k3s'
NEWBIN = '/var/tmp/k3s-new'


def _script(version):
    return ('#!/bin/sh\necho "k3s version %s (a4f8e7a1)"\n' % version).encode()


def _binary(node):
    node.run_programs()
    node.write(K3S, _script('v1.30.6+k3s1'), 0o755)
    node.write(NEWBIN, _script('v1.31.4+k3s1'), 0o755)
    return {'src': NEWBIN, 'sha256': hashlib.sha256(_script('v1.31.4+k3s1')).hexdigest()}


def _sqlite(node):
    import sqlite3  # pylint: disable=import-outside-toplevel
    node.makedirs('/var/lib/rancher/k3s/server/db')
    sqlite3.connect(node.p('/var/lib/rancher/k3s/server/db/state.db')).close()
    node.write('/var/lib/rancher/k3s/server/token', TOKEN + '\n', 0o600)
    return {}


# -- family: links a local user plants ------------------------------------------------------------------------------
# (id, module, options with {} for the planted place, the file the module writes there, what the victim holds, setup)
# Each module writes a file of root's; another user plants a symbolic link (owned by them) at that file or at its
# directory, in the sticky, world-writable /tmp, pointing at root's files in /srv/victim. The write must be refused,
# root's files untouched, nothing created where the link points.
PLANTED = [
    ('k3s_token_file', k3s_token_file, {'path': '{}/token', 'token': TOKEN, 'replace': True}, 'token', TOKEN + '\n', None),
    ('k3s_token_file-absent', k3s_token_file, {'path': '{}/token', 'state': 'absent'}, 'token', TOKEN + '\n', None),
    ('k3s_registries', k3s_registries, {'path': '{}/registries.yaml', 'mirrors': MIRRORS, 'configs': AUTH,
                                        'take_over': True}, 'registries.yaml', 'mirrors: {}\n', None),
    ('k3s_config_file', k3s_config_file, {'config_dir': '{}/config.yaml.d', 'name': '50-x.yaml',
                                          'values': {'node-label': ['a=b']}}, 'config.yaml.d/50-x.yaml', None, None),
    ('k3s_service', k3s_service, {'systemd_dir': '{}/system', 'args': ['--disable=traefik']}, 'system/k3s.service', None,
     None),
    ('scheduler_config', scheduler_config, {'path': '{}/kube-scheduler/config.yaml', 'kubeconfig': SCHED_KUBECONFIG,
                                            'extender': {'url_prefix': 'http://127.0.0.1:8889'}},
     'kube-scheduler/config.yaml', None, None),
    ('static_pod_arg', static_pod_arg, {'path': '{}/manifests/kube-scheduler.yaml', 'arg': '--v=2',
                                        'mount_arg_path': False}, 'manifests/kube-scheduler.yaml', POD, None),
    ('k3s_manifests', k3s_manifests, {'dir': '{}/manifests', 'manifests': [{'name': 'app.yaml', 'content': APP}]},
     'manifests/app.yaml', None, None),
    ('k3s_backup', k3s_backup, {'backup_dir': '{}/backups'}, 'backups', None, _sqlite),
    ('k3s_binary', k3s_binary, {'path': '{}/bin/k3s'}, 'bin/k3s', None, _binary),
]


def _fill(value, where):
    if isinstance(value, str):
        return value.replace('{}', where)
    if isinstance(value, dict):
        return {k: _fill(v, where) for k, v in value.items()}
    return value


def _plant(node, link, target):
    """A symbolic link at ``link`` to ``target``, owned by another user (as a local user planting it would leave it)."""
    node.symlink(target, link)
    os.lchown(node.p(link), OTHER, OTHER)


@pytest.fixture(name='sticky_tmp')
def fixture_sticky_tmp(node):
    """The node's /tmp as every distribution has it: world-writable and sticky, root's."""
    node.makedirs('/tmp')
    os.chmod(node.p('/tmp'), 0o1777)
    node.write(SCHED_KUBECONFIG, 'apiVersion: v1\nkind: Config\n')
    return node


@pytest.mark.parametrize('check_mode', [False, True], ids=['run', 'check'])
@pytest.mark.parametrize('at', ['directory', 'file'])
@pytest.mark.parametrize('case, module, options, written, victim, setup', PLANTED, ids=[c[0] for c in PLANTED])
def test_links_a_local_user_plants_are_refused_by_every_writer(sticky_tmp, case, module, options, written, victim, setup,
                                                               at, check_mode):
    node = sticky_tmp
    extra = setup(node) if setup else {}
    # the place the module is told to write under: /tmp/planted (the link at the directory), or /tmp/own (a real
    # directory of root's) with the link planted at the file itself
    top = '/tmp/planted' if at == 'directory' else '/tmp/own'
    options = dict(_fill(options, top), **extra)
    path = os.path.join(top, written)
    victim_path = os.path.join('/srv/victim', written)
    if case == 'k3s_service' and at == 'file':  # root's unit elsewhere, as the installer wrote it
        node.install(systemd_dir=os.path.dirname(victim_path))
    elif case == 'k3s_config_file' and at == 'file':  # a file of this module's, elsewhere
        node.write(victim_path, _config_file.HEADER + 'node-label:\n  - c=d\n', 0o600)
    elif victim is not None or at == 'file':  # a link planted at the file points at a file of root's
        node.write(victim_path, victim or 'root only\n', 0o600)
    if case == 'k3s_manifests':
        options['force'] = True  # the victim would be taken over: only the link rule stops it
    node.makedirs(os.path.dirname(victim_path))
    if at == 'directory':
        _plant(node, top, '/srv/victim')
    else:
        node.makedirs(os.path.dirname(path))
        if case == 'k3s_backup':
            pytest.skip('k3s_backup writes a new archive of its own name into backup_dir: no file of it to plant')
        _plant(node, path, victim_path)
    before = node.tree()
    msg = module_fail(module, options, check_mode=check_mode)
    link = top if at == 'directory' else path
    assert '%s is a symbolic link owned by uid %d' % (link, OTHER) in msg, msg
    assert node.tree() == before, 'root\'s files where the link points were changed'


def test_a_directory_another_user_may_write_is_refused_too(node):
    """Not only a link: a directory on the way that another user owns (or may write, without the sticky bit) lets
    them swap the file between the check and the write."""
    node.makedirs('/srv/shared')
    os.chown(node.p('/srv/shared'), OTHER, OTHER)
    before = node.tree()
    msg = module_fail(k3s_registries, {'path': '/srv/shared/registries.yaml', 'mirrors': MIRRORS, 'configs': AUTH})
    assert 'the directory /srv/shared is owned by uid %d with mode 0755' % OTHER in msg, msg
    assert node.tree() == before
    os.chown(node.p('/srv/shared'), 0, 0)
    os.chmod(node.p('/srv/shared'), 0o777)
    msg = module_fail(k3s_token_file, {'path': '/srv/shared/token', 'token': TOKEN})
    assert 'the directory /srv/shared is owned by uid 0 with mode 0777' in msg, msg
    os.chmod(node.p('/srv/shared'), 0o1777)  # sticky: nobody but root renames or removes root's entries
    module_ok(k3s_token_file, {'path': '/srv/shared/token', 'token': TOKEN})
    assert node.read('/srv/shared/token') == (TOKEN + '\n').encode()


def test_a_link_root_made_is_still_followed(node):
    """The rule is about who can change the link: root's own link to root's own file is written through, as before."""
    node.write('/srv/k3s/registries.yaml', '', 0o600)
    node.symlink('/srv/k3s/registries.yaml', REGISTRIES)
    module_ok(k3s_registries, {'mirrors': MIRRORS, 'take_over': True})
    assert os.path.islink(node.p(REGISTRIES)) and b'registry.example' in node.read('/srv/k3s/registries.yaml')


# -- family: a file taken over keeps nothing that made it unsafe ---------------------------------------------------
# (id, module, options, the file, what it held before)
SECRET_FILES = [
    ('k3s_registries-take_over', k3s_registries, {'mirrors': MIRRORS, 'configs': AUTH, 'take_over': True}, REGISTRIES,
     'mirrors: {}\n'),
    ('k3s_token_file-replace', k3s_token_file, {'path': '/etc/rancher/k3s/cluster-token', 'token': TOKEN,
                                                'replace': True}, '/etc/rancher/k3s/cluster-token', 'other-pass\n'),
    ('k3s_config_file', k3s_config_file, {'name': '50-x.yaml', 'values': {'token': 'Zq7tokX9w'}},
     '/etc/rancher/k3s/config.yaml.d/50-x.yaml', None),
    ('k3s_service-env', k3s_service, {'env': {'K3S_TOKEN': 'Zq7tokX9w'}}, '/etc/systemd/system/k3s.service.env',
     'K3S_URL=https://a:6443\n'),
]


@pytest.mark.parametrize('case, module, options, path, held', SECRET_FILES, ids=[c[0] for c in SECRET_FILES])
def test_a_file_that_holds_a_secret_is_0600_and_roots_after_every_write(node, case, module, options, path, held):
    if held is None:  # the module's own file, written once by it, then made readable by others and given away
        module_ok(module, options)
        options = dict(options, values={'token': 'Zq7tok2X9w'})
    else:
        node.write(path, held)
    os.chmod(node.p(path), 0o644)
    os.chown(node.p(path), OTHER, OTHER)
    result = module_ok(module, dict(options, backup=True) if 'backup' in module.ARGUMENT_SPEC else options)
    assert result['changed'], case
    st = os.stat(node.p(path))
    got = (st.st_mode & 0o7777, st.st_uid, st.st_gid)
    assert got == (0o600, 0, 0), '%s: mode %04o, uid %d, gid %d' % ((case,) + got)
    for entry in result['files']:
        if entry['backup_file']:  # the old bytes kept aside hold a secret too
            st = os.stat(node.p(entry['backup_file']))
            assert (st.st_mode & 0o7777, st.st_uid) == (0o600, 0), entry


def test_the_secret_is_never_readable_by_others_while_it_is_written(node, monkeypatch):
    """The new bytes get mode 0600 before they get the file's name: at no instant does the name show them at 0644."""
    node.write(REGISTRIES, 'mirrors: {}\n', 0o644)
    seen = []
    real_rename = os.rename

    def rename(src, dst):
        if dst == node.p(REGISTRIES):
            seen.append(os.stat(src).st_mode & 0o7777)
        return real_rename(src, dst)
    monkeypatch.setattr(os, 'rename', rename)
    module_ok(k3s_registries, {'mirrors': MIRRORS, 'configs': AUTH, 'take_over': True})
    assert seen == [0o600]


# -- family: special files and full disks ---------------------------------------------------------------------------
FIFOS = [
    ('k3s_token_file', k3s_token_file, {'path': '/etc/rancher/k3s/cluster-token', 'token': TOKEN},
     '/etc/rancher/k3s/cluster-token'),
    ('k3s_registries', k3s_registries, {'mirrors': MIRRORS}, REGISTRIES),
    ('k3s_config_file', k3s_config_file, {'name': '50-x.yaml', 'values': {'node-label': ['a=b']}},
     '/etc/rancher/k3s/config.yaml.d/50-x.yaml'),
    ('k3s_binary', k3s_binary, {'path': K3S}, K3S),
]


@pytest.fixture(name='deadline')
def fixture_deadline():
    """A run that blocks (on a FIFO without a writer) fails the test after 30 s instead of hanging it."""
    def expired(signum, frame):  # pylint: disable=unused-argument
        raise AssertionError('the module blocked for 30 s')
    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _restore_setup(node):
    """A server with an archive of its datastore (k3s_backup's), k3s stopped."""
    from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.test_hostile_inputs import _sqlite_server  # pylint: disable=import-outside-toplevel
    _sqlite_server(node)
    result = module_ok(k3s_backup, {'backup_dir': '/var/backups/k3s'})
    return {'archive': result['archive'], 'service': ''}


FIFOS += [
    ('k3s_backup', k3s_backup, {'backup_dir': '/var/backups/k3s'}, '/var/lib/rancher/k3s/server/token'),
    ('k3s_restore', k3s_restore, {}, '/var/lib/rancher/k3s/server/token'),
]
SETUP = {k3s_binary: _binary, k3s_backup: _sqlite, k3s_restore: _restore_setup}


@pytest.mark.parametrize('case, module, options, path', FIFOS, ids=[c[0] for c in FIFOS])
def test_a_fifo_where_a_file_is_read_is_refused_not_waited_on(node, deadline, case, module, options, path):
    extra = SETUP[module](node) if module in SETUP else {}
    if node.exists(path):
        node.unlink(path)
    node.makedirs(os.path.dirname(path))
    before = node.tree()  # (a FIFO is not read by the test either)
    node.fifo(path)
    msg = module_fail(module, dict(options, **extra))
    assert 'is a FIFO (named pipe), not a regular file' in msg, (case, msg)
    assert stat.S_ISFIFO(os.lstat(node.p(path)).st_mode)
    node.unlink(path)
    assert node.tree() == before


def _full_disk(monkeypatch, code):
    """Every file's new bytes fail to reach the disk with ``code`` (a full disk, a quota, a read-only file system, an
    I/O error): fsync, which every write of the collection does before a rename, fails."""
    real_fsync = os.fsync

    def fsync(fd):
        if stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(code, os.strerror(code))
        return real_fsync(fd)
    monkeypatch.setattr(os, 'fsync', fsync)


WRITE_ERRORS = [(errno.ENOSPC, 'the file system is full'), (errno.EDQUOT, 'the disk quota is used up'),
                (errno.EROFS, 'mounted read-only'), (errno.EIO, 'I/O error')]
FULL = [
    ('k3s_binary', k3s_binary, {'path': K3S}, [K3S]),
    ('k3s_token_file', k3s_token_file, {'path': '/etc/rancher/k3s/cluster-token', 'token': TOKEN, 'replace': True},
     ['/etc/rancher/k3s/cluster-token']),
    ('k3s_registries', k3s_registries, {'mirrors': MIRRORS, 'configs': AUTH}, [REGISTRIES]),
    ('k3s_service', k3s_service, {'env': {'K3S_TOKEN': 'Zq7tokX9w'}}, ['/etc/systemd/system/k3s.service']),
]


@pytest.mark.parametrize('code, words', WRITE_ERRORS, ids=[errno.errorcode[c] for c, dummy in WRITE_ERRORS])
@pytest.mark.parametrize('case, module, options, paths', FULL, ids=[c[0] for c in FULL])
def test_every_write_failure_is_a_clear_error_with_nothing_half_done(node, monkeypatch, case, module, options, paths,
                                                                     code, words):
    extra = _binary(node) if module is k3s_binary else {}
    node.write('/etc/rancher/k3s/cluster-token', 'K10%s::server:old\n' % HASH, 0o600)
    before = node.tree()
    _full_disk(monkeypatch, code)
    failed, result = run_module(module, dict(options, **extra))
    monkeypatch.undo()
    assert failed, result
    msg = result['msg']
    assert words in msg and 'Traceback' not in msg, (case, msg)
    assert paths[0] in msg, msg
    assert node.tree() == before, case  # no temp file, no directory made, every file as it was


# -- family: values k3s itself must read back --------------------------------------------------------------------
# registries.yaml is read by k3s with go-yaml v2: every value written must read back exactly
READ_BACK = ['p\U0001F600ss', 'caf\u00e9', '\u2028line', 'nel\u0085x', 'bom\ufeffx', 'a"b\\c', "it's", 'yes', '0o17',
             '~', '', '#x', 'a: b', '- x', '*alias', '!tag', '%x', '@x', '`x', '{x}', '[x]', '>x', '|x']


def _plain(value):
    """go-yaml's decoded mappings (Pairs) as dicts."""
    if isinstance(value, _goyaml.Pairs):
        return {_plain(k): _plain(v) for k, v in value}
    return value


@pytest.mark.parametrize('value', READ_BACK, ids=[repr(v) for v in READ_BACK])
def test_values_k3s_must_read_back_are_written_as_go_yaml_reads_them(node, value):
    configs = {'registry.example:5000': {'auth': {'username': 'puller' + value or 'u', 'password': 'pw' + value}}}
    mirrors = {'docker.io': {'endpoint': ['https://registry.example:5000'], 'rewrite': {'^(.*)$': 'lib/$1' + value}}}
    module_ok(k3s_registries, {'mirrors': mirrors, 'configs': configs})
    text = node.read(REGISTRIES).decode('utf-8')
    assert '\\ud83d' not in text.lower()  # no JSON surrogate pair: go-yaml v2 refuses one
    got = _plain(_goyaml.load(text, duplicate_keys='error'))
    assert got['configs']['registry.example:5000']['auth']['password'] == 'pw' + value
    assert got['mirrors']['docker.io']['rewrite']['^(.*)$'] == 'lib/$1' + value


def test_a_lone_surrogate_is_refused_before_anything_is_written(node):
    """Half of a surrogate pair (JSON's "\\ud83d" alone reaches a module as one) is no character any YAML holds."""
    from ansible_collections.baremetal.k3s.plugins.module_utils import _registries  # pylint: disable=import-outside-toplevel
    from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError  # pylint: disable=import-outside-toplevel
    with pytest.raises(PlanError) as e:
        _registries.plan(_io.node_view(None), {'path': REGISTRIES, 'mirrors': {}, 'configs': {
            'r.example': {'auth': {'username': 'a\ud83db'}}}})
    assert 'lone surrogate' in e.value.msg and not node.exists(REGISTRIES)


TOKENS = [  # what k3s's token parser (pkg/clientaccess/token.go) refuses, and why
    ('K10abcdef', 'it has no "::" after the CA hash and no <user>:<password>'),
    ('K10abc::server:pw', 'its CA hash has 3 characters, not the 64 hex digits'),
    ('K10%s::server:pw' % ('a' * 65), 'its CA hash has 65 characters'),
    ('K10%s::server:pw' % ('z' * 64), 'its CA hash is not hex digits'),
    ('K10%s::server' % HASH, 'there is no <user>:<password> after "::"'),
    ('K10%s::server:' % HASH, 'there is no <user>:<password> after "::"'),
]


@pytest.mark.parametrize('token, why', TOKENS, ids=[t[0][:20] for t in TOKENS])
def test_a_token_k3s_cannot_parse_is_refused_not_written_as_a_password(node, token, why):
    msg = module_fail(k3s_token_file, {'path': '/etc/rancher/k3s/cluster-token', 'token': token})
    assert 'starts with K10, so k3s reads it as a full token' in msg and why in msg, msg
    assert token not in msg
    assert not node.exists('/etc/rancher/k3s/cluster-token')


@pytest.mark.parametrize('token', ['s3cret', 'K10::server:s3cret', 'K10%s::server:s3cret' % HASH, 'K10user:s3cret',
                                   'abcdef.0123456789abcdef', 'K10%s::abcdef.0123456789abcdef' % HASH, 'no:colon:K10'])
def test_a_token_k3s_parses_is_written(node, token):
    module_ok(k3s_token_file, {'path': '/etc/rancher/k3s/cluster-token', 'token': token})
    assert node.read('/etc/rancher/k3s/cluster-token') == (token + '\n').encode()


# -- family: secrets in every output, under every shape --------------------------------------------------------------
def _logged(module, options, monkeypatch, diff=True):
    """The module's result as JSON and the lines it logged on the node (syslog or journal: "Invoked with ...")."""
    from ansible.module_utils import basic  # pylint: disable=import-outside-toplevel
    logged = []
    monkeypatch.setattr(basic.AnsibleModule, 'log', lambda self, msg, log_args=None: logged.append(msg))
    failed, result = run_module(module, options, diff=diff)
    monkeypatch.undo()
    return failed, json.dumps(result) + '\n'.join(logged), (logged, result)


SHAPES = ['p@ss', 'user@host:p@ss', 'a:b@c', 'x://u:p@h', '@@', 'p@ss word']


@pytest.mark.parametrize('password', SHAPES)
def test_a_password_with_at_is_masked_whole_in_the_logged_invocation(node, monkeypatch, password):
    password = 'Zq7' + password + 'X9w'
    failed, text, (logged, dummy) = _logged(k3s_registries, {'mirrors': MIRRORS, 'configs': {
        'registry.example:5000': {'auth': {'username': 'puller', 'password': password}}}}, monkeypatch)
    assert not failed and any(line.startswith('Invoked') for line in logged), text
    parts = [p for p in password.replace(':', '@').split('@') if len(p) > 3]
    for part in [password] + parts:
        assert part not in text, 'a part %r of the password leaked:\n%s' % (part, text)


FOLDED = [
    ('folded', 'configs:\n  r.example:\n    auth:\n      password: >-\n        Zq7fold\n        X9wpart\n'),
    ('literal', 'configs:\n  r.example:\n    auth:\n      password: |\n        Zq7litX9w\n'),
    ('next line', 'configs:\n  r.example:\n    auth:\n      password:\n        "Zq7nextX9w"\n'),
    ('anchor', 'x: &pw Zq7anchX9w\nconfigs:\n  r.example:\n    auth:\n      password: *pw\n'),
    ('under mirrors', 'mirrors:\n  docker.io:\n    auth:\n      password: Zq7mirX9w\n'),
    ('flow', 'configs: {r.example: {auth: {password: Zq7flowX9w, username: u}}}\n'),
    ('quoted key', 'configs:\n  r.example:\n    auth:\n      "password": \'Zq7quotX9w\'\n'),
    ('not yaml', 'configs:\n  r.example:\n    auth:\n      password: >-\n        Zq7badX9w\n  \t- ]: [\n'),
]


@pytest.mark.parametrize('shape, text', FOLDED, ids=[f[0] for f in FOLDED])
def test_an_operators_password_is_hidden_whatever_its_shape_in_a_taken_over_files_diff(node, monkeypatch, shape, text):
    node.write(REGISTRIES, text, 0o600)
    failed, out, dummy = _logged(k3s_registries, {'mirrors': MIRRORS, 'take_over': True}, monkeypatch)
    assert not failed, out
    for secret in ('Zq7', 'X9w'):
        assert secret not in out, '%s: the operator\'s password leaked:\n%s' % (shape, out)


def test_an_auth_block_under_mirrors_is_refused_and_never_logged(node, monkeypatch):
    failed, text, (logged, result) = _logged(k3s_registries, {'mirrors': {'docker.io': {
        'endpoint': ['https://r.example'], 'auth': {'username': 'u', 'password': 'Zq7mirrX9w'}}}}, monkeypatch)
    assert failed and 'has the key "auth"' in result['msg'], result
    assert logged and 'Zq7mirrX9w' not in text
    assert not node.exists(REGISTRIES)


# -- family: one writer -----------------------------------------------------------------------------------------------
PLUGINS = os.path.join(os.path.dirname(os.path.abspath(_config_file.__file__)), '..')
WRITES = re.compile(r'\b(?:os\.(?:rename|replace|link|symlink|fsync|unlink|remove|rmdir|mkdir|makedirs|chmod|chown|'
                    r'fchmod|fchown)|tempfile\.\w+|shutil\.(?:rmtree|copy(?!fileobj)\w*|move))\(')
# what writes outside _io on purpose, and why: SQLite's backup API writes its copy itself, into an _io.temp_dir (0700)
REVIEWED = {('module_utils/_backup.py', 'os.chmod(')}


def test_one_writer_no_module_writes_a_file_but_through_io():
    """Every write of a file or directory on the node goes through module_utils/_io.py (locked, fsynced, put back on
    failure; _lock.py is its lock files): no module or other module_utils renames, links, fsyncs, makes or removes a
    file itself. (plugin_utils/_report_file.py writes the report JSON files on the controller, not on a node.)"""
    found = []
    for kind in ('module_utils', 'modules'):
        for name in sorted(os.listdir(os.path.join(PLUGINS, kind))):
            if not name.endswith('.py') or (kind, name) in (('module_utils', '_io.py'), ('module_utils', '_lock.py')):
                continue
            with open(os.path.join(PLUGINS, kind, name), encoding='utf-8') as f:
                for n, line in enumerate(f, 1):
                    for m in WRITES.finditer(line):
                        if ('%s/%s' % (kind, name), m.group(0)) not in REVIEWED:
                            found.append('%s/%s:%d: %s' % (kind, name, n, line.strip()))
    assert found == [], 'written outside _io:\n' + '\n'.join(found)


def test_one_writer_the_extender_probes_tls_files_go_through_io(monkeypatch, tmp_path):
    """The client certificate and key given as data are written by _io.scratch_files, and gone after."""
    from ansible_collections.baremetal.k3s.plugins.module_utils import _extender, _io  # pylint: disable=import-outside-toplevel
    used = []
    real = _io.scratch_files

    def scratch(files, prefix='bk3s-'):
        used.append(sorted(files))
        return real(files, prefix)
    monkeypatch.setattr(_io, 'scratch_files', scratch)
    monkeypatch.setattr('tempfile.tempdir', str(tmp_path))
    with pytest.raises(_extender.ExtenderProbeError):  # not a certificate: loading fails after the files were written
        _extender.ssl_context(cert_data='not a certificate', key_data='not a key')
    assert used == [['cert.pem', 'key.pem']] and os.listdir(str(tmp_path)) == []


# -- kills: what a run killed part way left, taken up by the next one (test_faults.py kills them for real) --------------
KILLED = [  # (id, module, options, the temp files a killed run leaves, the file it writes)
    ('k3s_registries', k3s_registries, {'mirrors': MIRRORS, 'configs': AUTH},
     ['/etc/rancher/k3s/.registries.yaml.bk3s-killed.tmp'], REGISTRIES),
    ('k3s_token_file', k3s_token_file, {'path': '/etc/rancher/k3s/cluster-token', 'token': TOKEN},
     ['/etc/rancher/k3s/.cluster-token.bk3s-killed.tmp'], '/etc/rancher/k3s/cluster-token'),
    ('k3s_binary', k3s_binary, {'path': K3S}, ['/usr/local/bin/.k3s.bk3s-killed.tmp',
                                               '/usr/local/bin/.k3s.previous.bk3s-killed.tmp'], K3S),
]


@pytest.mark.parametrize('case, module, options, leftovers, path', KILLED, ids=[k[0] for k in KILLED])
def test_what_a_killed_run_left_is_taken_up_by_the_next(node, case, module, options, leftovers, path):
    extra = _binary(node) if module is k3s_binary else {}
    for leftover in leftovers:  # half the new bytes (with the secret in them), as a SIGKILL before the rename leaves them
        node.write(leftover, b'half of the new bytes', 0o600)
    result = module_ok(module, dict(options, **extra))
    assert result['changed'], case
    directory = os.path.dirname(path)
    assert [n for n in node.listdir(directory) if '.bk3s-' in n] == [], node.listdir(directory)


def test_killall_killed_part_way_is_finished_by_the_next_run(node, monkeypatch):
    """k3s_killall killed after its kills and unmounts: the next run plans from what is left and finishes."""
    from ansible_collections.baremetal.k3s.plugins.module_utils import _killall  # pylint: disable=import-outside-toplevel
    from ansible_collections.baremetal.k3s.plugins.modules import k3s_killall  # pylint: disable=import-outside-toplevel
    shim = '/var/lib/rancher/k3s/data/2a9c/bin/containerd-shim-runc-v2'
    node.process(1, ['/sbin/init'], ppid=0)
    node.process(4300, ['sleep', '3600'], ppid=1)  # the operator's; the shims are gone already
    node.write('/proc/self/mountinfo', '30 1 0:40 / / rw - tmpfs tmpfs rw\n31 1 0:41 / /run/netns/cni-11aa rw - nsfs nsfs rw\n')
    node.write('/run/netns/cni-11aa', '')
    node.makedirs('/sys/class/net/cni0')
    node.makedirs('/sys/class/net/eth0')
    calls = []
    monkeypatch.setattr(_killall, 'KILL', lambda pid, sig: calls.append(('kill', pid)))

    def ok(argv, stdin=None):  # pylint: disable=unused-argument
        calls.append(argv)
        return 0, '', ''
    for program in ('umount', 'ip', 'rmdir'):
        node.commands[program] = ok
    result = module_ok(k3s_killall, {'iptables': False})
    assert result['killed'] == [] and result['unmounted'] == ['/run/netns/cni-11aa'], result
    assert result['netns_deleted'] == ['cni-11aa'] and result['links_deleted'] == ['cni0'], result
    assert ('kill', 4300) not in calls and not any(shim in ' '.join(map(str, c)) for c in calls)


def test_a_failed_write_leaves_no_directory_it_made(node, monkeypatch):
    """A write into directories the run makes (config.yaml.d, not there yet) that fails: they go with the temp file."""
    os.rmdir(node.p('/etc/rancher/k3s'))
    before = node.tree()
    _full_disk(monkeypatch, errno.ENOSPC)
    failed, result = run_module(k3s_config_file, {'name': '50-x.yaml', 'values': {'node-label': ['a=b']}})
    monkeypatch.undo()
    assert failed and 'the file system is full' in result['msg'], result
    assert node.tree() == before and not node.exists('/etc/rancher/k3s')
