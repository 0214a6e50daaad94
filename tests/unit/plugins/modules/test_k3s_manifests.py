# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of k3s_manifests: its real main() on fake_node's tree, a server manifests directory with k3s's and the
administrator's files in it."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _manifests
from ansible_collections.baremetal.k3s.plugins.modules import k3s_manifests, rollback

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok, run_module

DIR = '/var/lib/rancher/k3s/server/manifests'
RECORD = DIR + '/.baremetal-k3s-manifests-default'
CCM = 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: cloud-controller-manager\n  namespace: kube-system\n'
COREDNS = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: coredns\n  namespace: kube-system\n'
ADMIN = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: admin-stuff\n'
APP = ('apiVersion: v1\nkind: Namespace\nmetadata:\n  name: app\n---\n# the app\napiVersion: v1\nkind: ConfigMap\n'
       'metadata:\n  name: app\n  namespace: app\ndata:\n  key: value\n')
HELM = ('apiVersion: helm.cattle.io/v1\nkind: HelmChartConfig\nmetadata:\n  name: traefik\n  namespace: kube-system\n'
        'spec:\n  valuesContent: |-\n    ports:\n      web:\n        exposedPort: 8080\n')
JSON = '{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "from-json"}}\n'
FOREIGN = {'ccm.yaml': CCM, 'coredns.yaml': COREDNS, 'admin.yaml': ADMIN, 'notes.txt': 'not a manifest\n'}


@pytest.fixture
def server(node):
    """A server's manifests directory as k3s leaves it, with a file of the administrator's."""
    for name, text in FOREIGN.items():
        node.write('%s/%s' % (DIR, name), text, 0o600)
    return node


def m(name, content):
    return {'name': name, 'content': content}


def record_of(node):
    data = node.read(RECORD)
    return None if data is None else json.loads(data)


def foreign_untouched(node):
    return all(node.read('%s/%s' % (DIR, n)) == t.encode() for n, t in FOREIGN.items())


def test_place_then_no_change(server):
    r = module_ok(k3s_manifests, {'manifests': [m('app.yaml', APP), m('traefik-config.yaml', HELM), m('ns.json', JSON)]})
    assert r['changed'] is True and r['restart_required'] is False
    names = ['app.yaml', 'traefik-config.yaml', 'ns.json']
    assert (r['placed'], r['written'], r['removed']) == (names, names, [])
    assert (r['dir'], r['set'], r['record']) == (DIR, 'default', RECORD)
    assert r['files'] == [{'path': DIR + '/app.yaml', 'action': 'created', 'backup_file': None},
                          {'path': DIR + '/traefik-config.yaml', 'action': 'created', 'backup_file': None},
                          {'path': DIR + '/ns.json', 'action': 'created', 'backup_file': None},
                          {'path': RECORD, 'action': 'created', 'backup_file': None}]
    assert server.read(DIR + '/app.yaml') == APP.encode() and server.read(DIR + '/ns.json') == JSON.encode()
    assert all(server.mode(p) == 0o600 for p in (DIR + '/app.yaml', RECORD))
    rec = record_of(server)
    assert rec['set'] == 'default' and sorted(rec['manifests']) == ['app.yaml', 'ns.json', 'traefik-config.yaml']
    assert rec['manifests']['app.yaml'] == _manifests.sha256(APP.encode())
    assert foreign_untouched(server) and r['warnings'] == []
    # k3s's deploy controller skips the record: a dot-file without a manifest extension
    assert not _manifests.is_manifest(os.path.basename(RECORD))
    r = module_ok(k3s_manifests, {'manifests': [m('app.yaml', APP), m('traefik-config.yaml', HELM), m('ns.json', JSON)]})
    assert r['changed'] is False and r['files'] == [] and r['written'] == [] and r['removed'] == []


def test_drop_one_removes_only_ours(server):
    module_ok(k3s_manifests, {'manifests': [m('app.yaml', APP), m('traefik-config.yaml', HELM)]})
    r = module_ok(k3s_manifests, {'manifests': [m('traefik-config.yaml', HELM)]})
    assert r['changed'] and r['removed'] == ['app.yaml'] and r['written'] == []
    assert r['files'] == [{'path': DIR + '/app.yaml', 'action': 'removed', 'backup_file': None},
                          {'path': RECORD, 'action': 'modified', 'backup_file': None}]
    assert not server.exists(DIR + '/app.yaml') and server.exists(DIR + '/traefik-config.yaml')
    assert list(record_of(server)['manifests']) == ['traefik-config.yaml']
    assert foreign_untouched(server)
    # an empty list takes out the rest and the record; k3s's and the administrator's files stay
    r = module_ok(k3s_manifests, {'manifests': []})
    assert r['removed'] == ['traefik-config.yaml'] and not server.exists(RECORD)
    assert server.listdir(DIR) == sorted(FOREIGN) and foreign_untouched(server)
    assert module_ok(k3s_manifests, {'manifests': []})['changed'] is False


def test_a_recorded_file_already_gone(server):
    module_ok(k3s_manifests, {'manifests': [m('app.yaml', APP), m('traefik-config.yaml', HELM)]})
    server.unlink(DIR + '/app.yaml')
    r = module_ok(k3s_manifests, {'manifests': [m('traefik-config.yaml', HELM)]})
    assert r['removed'] == [] and [f['path'] for f in r['files']] == [RECORD]


def test_foreign_file_refused(server):
    msg = module_fail(k3s_manifests, {'manifests': [m('app.yaml', APP), m('admin.yaml', APP)]})
    assert msg == ('nothing was written to %s: admin.yaml already exists in %s and was not placed by this module (k3s\'s '
                   'own or the administrator\'s); it is left alone. Choose another name, or take it over with force: true.'
                   % (DIR, DIR))
    assert not server.exists(DIR + '/app.yaml') and not server.exists(RECORD) and foreign_untouched(server)


def test_force_takes_over(server):
    r = module_ok(k3s_manifests, {'manifests': [m('admin.yaml', APP)], 'force': True, 'backup': True})
    assert r['written'] == ['admin.yaml'] and server.read(DIR + '/admin.yaml') == APP.encode()
    assert r['warnings'] == ['admin.yaml in %s was not placed by this module; taken over and replaced (force: true)' % DIR]
    backup = r['files'][0]['backup_file']
    assert backup.startswith('/var/backups/baremetal-k3s/admin.yaml.') and server.read(backup) == ADMIN.encode()
    assert list(record_of(server)['manifests']) == ['admin.yaml']
    # from then on it is ours: no force needed to change it, and dropped it goes
    assert module_ok(k3s_manifests, {'manifests': [m('admin.yaml', HELM)]})['warnings'] == []
    assert module_ok(k3s_manifests, {'manifests': []})['removed'] == ['admin.yaml']
    assert not server.exists(DIR + '/admin.yaml')


def test_identical_file_is_taken_over_without_writing(server):
    """A run cut off after writing a manifest but before the record: the next run completes it."""
    server.write(DIR + '/app.yaml', APP)
    r = module_ok(k3s_manifests, {'manifests': [m('app.yaml', APP)]})
    assert r['written'] == [] and [f['path'] for f in r['files']] == [RECORD] and r['warnings'] == []
    assert list(record_of(server)['manifests']) == ['app.yaml']


def test_changed_by_hand(server):
    module_ok(k3s_manifests, {'manifests': [m('app.yaml', APP), m('ns.json', JSON)]})
    server.write(DIR + '/app.yaml', APP + '# edited\n')
    server.write(DIR + '/ns.json', JSON + '\n')
    r = module_ok(k3s_manifests, {'manifests': [m('app.yaml', APP)]})
    assert r['warnings'] == [
        'app.yaml in %s was changed since this module placed it; those changes are replaced' % DIR,
        'ns.json in %s was changed since this module placed it; removed all the same, as it left the list' % DIR]
    assert server.read(DIR + '/app.yaml') == APP.encode() and not server.exists(DIR + '/ns.json')


VALID = [
    ('one.yaml', ADMIN, 1),
    ('multi.yaml', APP, 2),
    ('comments.yaml', '# nothing yet\n---\n---\n# still nothing\n', 0),
    ('empty.yaml', '', 0),
    ('sep-comment.yaml', '--- # first\n' + ADMIN + '--- # second\n' + APP, 3),
    ('crlf.yaml', APP.replace('\n', '\r\n'), 2),
    ('doc.json', JSON, 1),
    ('pretty.json', json.dumps({'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': 'x'}}, indent=2), 1),
    ('yaml-in.json', ADMIN, 1),  # k3s reads any of its files as YAML or JSON by the content
    ('list.yaml', 'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata: {name: a}\n'
                  '- apiVersion: v1\n  kind: Namespace\n  metadata: {name: b}\n', 2),
    ('typed-list.yaml', 'apiVersion: v1\nkind: NamespaceList\nitems:\n- metadata: {name: a}\n', 1),
    ('flow.yaml', '---\n{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "flow"}}\n', 1),
    ('anchors.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: &m\n  name: a\ndata:\n  x: &v "1"\n  y: *v\n', 1),
    ('helm.yaml', HELM, 1),
]


@pytest.mark.parametrize('name, content, count', VALID)
def test_valid_content(server, name, content, count):
    assert _manifests.check_content(name, content) == count
    r = module_ok(k3s_manifests, {'manifests': [m(name, content)]})
    assert server.read('%s/%s' % (DIR, name)) == content.encode() and r['written'] == [name]


INVALID = [
    ('apiVersion: v1\nkind: Namespace\nmetadata:\n  name: [unclosed\n',
     'document 1 (line 1) is not YAML that k3s reads: bad.yaml line 5, column 1: '),
    (ADMIN + '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: x\n',
     'document 2 (line 6) is not YAML that k3s reads: bad.yaml line 9, column 1: '),
    (ADMIN + '--- !!map\napiVersion: v1\n',
     'line 5: invalid Yaml document separator: !!map (only a comment may follow ---; k3s refuses the file)'),
    ('---foo\n' + ADMIN, 'line 1: invalid Yaml document separator: foo (only a comment may follow ---; k3s refuses the file)'),
    ('{apiVersion: v1, kind: Namespace, metadata: {name: a}}\n',
     'document 1 (line 1) starts with "{", so k3s reads it as JSON, and it is not JSON: Expecting property name enclosed '
     'in double quotes (line 1)'),
    ('---\n\n{"apiVersion": "v1",\n "kind": NaN}\n',
     'document 1 (line 2) starts with "{", so k3s reads it as JSON, and it is not JSON: NaN is not JSON'),
    ('kind: Namespace\nmetadata:\n  name: a\n', 'document 1 (line 1): an object without apiVersion'),
    ('apiVersion: v1\nmetadata:\n  name: a\n', 'document 1 (line 1): an object without kind'),
    ('apiVersion: v1\nkind: Namespace\n', 'document 1 (line 1): an object without metadata.name'),
    ('apiVersion: v1\nkind: Namespace\nmetadata:\n  generateName: a-\n', 'document 1 (line 1): an object without metadata.name'),
    ('apiVersion: 1\nkind: Namespace\nmetadata:\n  name: a\n', 'document 1 (line 1): an object without apiVersion'),
    ('- a\n- b\n', 'document 1 (line 1): it is not a mapping (a Kubernetes object) but list'),
    ('~\n', 'document 1 (line 1): it is not a mapping (a Kubernetes object) but null'),
    ('just text\n', 'document 1 (line 1): it is not a mapping (a Kubernetes object) but str'),
    ('apiVersion: v1\nkind: List\nitems: {a: 1}\n', 'document 1 (line 1): its "items" is not a list'),
    ('apiVersion: v1\nkind: List\nitems:\n- 1\n', 'document 1 (line 1): an item of its "items" is not a mapping'),
    ('apiVersion: v1\nkind: List\nitems:\n- kind: Namespace\n  metadata: {name: a}\n',
     'document 1 (line 1): an object without apiVersion'),
]


@pytest.mark.parametrize('content, problem', INVALID)
def test_invalid_content_refused_with_nothing_written(server, content, problem):
    failed, r = run_module(k3s_manifests, {'manifests': [m('good.yaml', ADMIN), m('bad.yaml', content)]})
    assert failed
    assert r['msg'].startswith('nothing was written to %s: manifests[1] (bad.yaml): %s' % (DIR, problem)), r['msg']
    assert r['errors'] == [r['msg'][len('nothing was written to %s: ' % DIR):]]
    assert not server.exists(DIR + '/good.yaml') and not server.exists(DIR + '/bad.yaml') and not server.exists(RECORD)


def test_every_problem_at_once(server):
    msg = module_fail(k3s_manifests, {'manifests': [m('a_b.yaml', ADMIN), m('x.txt', ADMIN), m('ok.yaml', 'kind: X\n'),
                                                    m('admin.yaml', APP), {'name': 'c.yaml', 'content': {'a': 1}}]})
    assert msg == (
        'nothing was written to %s: manifests[0].name \'a_b.yaml\' would be k3s AddOn "a_b" (the name up to the first dot), '
        'which is no valid object name: use lower-case letters, digits and "-", starting and ending with a letter or digit; '
        'manifests[1].name \'x.txt\' does not end in .yaml, .yml or .json, so k3s would not read it; '
        'manifests[2] (ok.yaml): document 1 (line 1): an object without apiVersion, metadata.name; '
        'manifests[4] (c.yaml): content must be the text of the manifest, not dict (render a data structure with '
        'to_nice_yaml or to_json); '
        'admin.yaml already exists in %s and was not placed by this module (k3s\'s own or the administrator\'s); it is left '
        'alone. Choose another name, or take it over with force: true.' % (DIR, DIR))


@pytest.mark.parametrize('manifests, problem', [
    ([m('a/b.yaml', ADMIN)], "manifests[0].name 'a/b.yaml' is not a file name: use a name alone: no \"/\", no control "
                             'characters, not "." or "..", at most 255 bytes; give the file name alone, such as my-app.yaml'),
    ([m('.hidden.yaml', ADMIN)], "manifests[0].name '.hidden.yaml' starts with a dot, and k3s skips such files"),
    ([m('app.yaml.skip', ADMIN)], "manifests[0].name 'app.yaml.skip' does not end in .yaml, .yml or .json, so k3s would not "
                                  'read it'),
    ([m('App.yaml', ADMIN)], '\'App.yaml\' would be k3s AddOn "App" (the name up to the first dot), which is no valid object '
                             'name'),
    ([m('-x.yaml', ADMIN)], '\'-x.yaml\' would be k3s AddOn "-x"'),
    ([m('app.yaml', ADMIN), m('app.yaml', APP)], 'manifests[1] (app.yaml): the name is given twice'),
    ([m('app.yaml', ADMIN), m('app.v2.yml', APP)],
     'app.yaml: app.yaml and app.v2.yml are the same k3s AddOn "app" (the name up to the first dot); k3s would apply them '
     'as one and each would prune what the other created. Give them different names.'),
    ([m('admin.v2.json', JSON)],
     'admin.v2.json would be k3s AddOn "admin", like admin.yaml in %s; k3s would apply them as one and each would prune '
     'what the other created. Give it another name.' % DIR),
    ([m('traefik.yaml', HELM)],
     'traefik.yaml would be k3s AddOn "traefik", a packaged component that k3s rewrites at every start (and deletes when '
     'disabled); choose another name (on RKE2 the name is free: force: true)'),
    ([m('coredns.custom.yaml', COREDNS)], 'coredns.custom.yaml would be k3s AddOn "coredns", like coredns.yaml in %s' % DIR),
])
def test_names(server, manifests, problem):
    msg = module_fail(k3s_manifests, {'manifests': manifests})
    assert msg.startswith('nothing was written to %s: ' % DIR) and problem in msg, msg
    assert not server.exists(RECORD)


def test_names_in_subdirectories_count(server):
    server.write(DIR + '/metrics-server/metrics-server-deployment.yaml', ADMIN)
    msg = module_fail(k3s_manifests, {'manifests': [m('metrics-server-deployment.yml', ADMIN)]})
    assert 'like metrics-server/metrics-server-deployment.yaml in' in msg
    # skipped files do not count: dot-files, other extensions, X next to X.skip
    server.write(DIR + '/.old.yaml', ADMIN)
    server.write(DIR + '/old.bak', ADMIN)
    server.write(DIR + '/held.yaml', ADMIN)
    server.write(DIR + '/held.yaml.skip', '')
    r = module_ok(k3s_manifests, {'manifests': [m('old.yaml', ADMIN), m('held.json', JSON)]})
    assert r['written'] == ['old.yaml', 'held.json']


def test_skip_marker_warns(server):
    server.write(DIR + '/app.yaml.skip', '')
    r = module_ok(k3s_manifests, {'manifests': [m('app.yaml', APP)]})
    assert r['warnings'] == ['k3s skips app.yaml: app.yaml.skip exists in %s' % DIR]


def test_packaged_name_with_force_on_rke2(node):
    rke2 = '/var/lib/rancher/rke2/server/manifests'
    node.makedirs(rke2)
    node.write(rke2 + '/rke2-coredns.yaml', COREDNS)
    r = module_ok(k3s_manifests, {'dir': rke2, 'manifests': [m('coredns.yaml', COREDNS)], 'force': True})
    assert r['written'] == ['coredns.yaml'] and r['record'] == rke2 + '/.baremetal-k3s-manifests-default'


def test_sets_keep_apart(server):
    module_ok(k3s_manifests, {'set': 'csi', 'manifests': [m('csi.yaml', ADMIN)]})
    module_ok(k3s_manifests, {'set': 'monitoring', 'manifests': [m('monitoring.yaml', APP)]})
    for force in (False, True):
        msg = module_fail(k3s_manifests, {'set': 'monitoring', 'manifests': [m('csi.yaml', APP)], 'force': force})
        assert msg == ('nothing was written to %s: csi.yaml in %s was placed by set "csi" of this module; take it out of '
                       'that set first (force does not override another set)' % (DIR, DIR))
    r = module_ok(k3s_manifests, {'set': 'csi', 'manifests': []})
    assert r['removed'] == ['csi.yaml'] and server.exists(DIR + '/monitoring.yaml')
    assert server.exists(DIR + '/.baremetal-k3s-manifests-monitoring')
    assert not server.exists(DIR + '/.baremetal-k3s-manifests-csi')


@pytest.mark.parametrize('args, message', [
    ({'set': 'My_Set'}, "set 'My_Set' is not a DNS-1123 label: use lower-case letters, digits and \"-\", starting and "
                        'ending with a letter or digit, at most 63 characters; it names the record '
                        '.baremetal-k3s-manifests-<set>'),
    ({'dir': 'relative/manifests'}, "dir 'relative/manifests' must be an absolute path"),
    ({'dir': DIR + '/ccm.yaml'}, 'dir %s/ccm.yaml is not a directory' % DIR),
    ({'dir': '/var/lib/rancher/k3s/server/nothing/manifests'},
     'dir /var/lib/rancher/k3s/server/nothing/manifests cannot be made: /var/lib/rancher/k3s/server/nothing does not '
     'exist, so k3s (or RKE2) has not run on this node yet. It creates its <data-dir>/server with mode 0700; create that '
     'first (ansible.builtin.file, state directory, mode 0700), or place the manifests after the first start.'),
])
def test_bad_input(server, args, message):
    assert module_fail(k3s_manifests, dict({'manifests': [m('app.yaml', APP)]}, **args)) == message


def test_unreadable_record(server):
    server.write(RECORD, 'not json')
    msg = module_fail(k3s_manifests, {'manifests': []})
    assert msg.startswith('%s, the record of the manifests this module placed, cannot be read (Expecting value: line 1 '
                          'column 1 (char 0)). Fix it, or remove it' % RECORD)


def test_directory_made_and_pruned(node):
    node.makedirs('/var/lib/rancher/k3s/server')
    r = module_ok(k3s_manifests, {'manifests': [m('app.yaml', APP)]})
    assert r['written'] == ['app.yaml'] and node.exists(DIR + '/.baremetal-k3s-created')
    module_ok(k3s_manifests, {'manifests': []})
    assert not node.exists(DIR) and node.exists('/var/lib/rancher/k3s/server')


def test_check_mode(server):
    r = module_ok(k3s_manifests, {'manifests': [m('app.yaml', APP)]}, check_mode=True)
    assert r['changed'] and r['written'] == ['app.yaml']
    assert [f['action'] for f in r['files']] == ['created', 'created']
    assert not server.exists(DIR + '/app.yaml') and not server.exists(RECORD)
    module_ok(k3s_manifests, {'manifests': [m('app.yaml', APP)]})
    r = module_ok(k3s_manifests, {'manifests': []}, check_mode=True)
    assert r['changed'] and r['removed'] == ['app.yaml'] and server.exists(DIR + '/app.yaml') and server.exists(RECORD)


def test_diff_mode(server):
    r = module_ok(k3s_manifests, {'manifests': [m('app.yaml', APP)]}, diff=True)
    assert [d['after_header'] for d in r['diff']] == [DIR + '/app.yaml', RECORD]
    assert r['diff'][0]['before'] == '' and r['diff'][0]['after'] == APP
    r = module_ok(k3s_manifests, {'manifests': [m('app.yaml', ADMIN)]}, diff=True)
    assert (r['diff'][0]['before'], r['diff'][0]['after']) == (APP, ADMIN)
    r = module_ok(k3s_manifests, {'manifests': [m('app.yaml', ADMIN)]}, diff=True)
    assert 'diff' not in r


def test_rollback_undoes_a_run(server):
    module_ok(k3s_manifests, {'manifests': [m('app.yaml', APP), m('ns.json', JSON)]})
    before = {n: server.read('%s/%s' % (DIR, n)) for n in server.listdir(DIR)}
    r = module_ok(k3s_manifests, {'manifests': [m('app.yaml', ADMIN), m('new.yaml', HELM)], 'backup': True})
    assert r['written'] == ['app.yaml', 'new.yaml'] and r['removed'] == ['ns.json']
    module_ok(rollback, {'files': r['files']})
    assert {n: server.read('%s/%s' % (DIR, n)) for n in server.listdir(DIR)} == before
