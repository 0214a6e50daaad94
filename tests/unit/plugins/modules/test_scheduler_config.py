# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Module tests of baremetal.k3s.scheduler_config: files on disk, check/diff mode, errors."""

from __future__ import annotations

import os

import pytest
import yaml

from unittest.mock import patch

from ansible_collections.baremetal.k3s.plugins.module_utils import _scheduler_config as sc
from ansible_collections.baremetal.k3s.plugins.modules import scheduler_config

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node, scheduler_node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import SCHEDULER_KUBECONFIG, run_module

OURS = {'url_prefix': 'http://127.0.0.1:8889', 'filter_verb': 'filter', 'prioritize_verb': 'prioritize',
        'weight': 1, 'http_timeout': '15s', 'ignorable': True}


class Env(dict):
    """The fake node and where the test's files are on it."""

    def read(self, path=None):
        data = self['node'].read(path or self['path'])
        return None if data is None else data.decode('utf-8')

    def write(self, text, path=None):
        self['node'].write(path or self['path'], text)

    def exists(self, path=None):
        return self['node'].exists(path or self['path'])

    def mode(self, path=None):
        return self['node'].mode(path or self['path'])


@pytest.fixture
def env(scheduler_node):
    return Env(node=scheduler_node, dir='/etc/rancher/k3s/kube-scheduler', path='/etc/rancher/k3s/kube-scheduler/config.yaml',
               kubeconfig=SCHEDULER_KUBECONFIG, backup_dir='/var/backups/baremetal-k3s')


def args(env, **kw):
    out = {'path': env['path'], 'extender': dict(OURS), 'kubeconfig': env['kubeconfig'], 'backup_dir': env['backup_dir']}
    out.update(kw)
    return out


def foreign(env):
    return ('# ours, hands off\n'
            'apiVersion: kubescheduler.config.k8s.io/v1\n'
            'kind: KubeSchedulerConfiguration\n'
            'clientConnection:\n'
            '  kubeconfig: %s\n'
            'profiles:\n'
            '- schedulerName: default-scheduler\n'
            '- schedulerName: gpu  # GPU jobs\n'
            'extenders:\n'
            '- urlPrefix: http://gpu-share:12345\n'
            '  filterVerb: filter\n' % env['kubeconfig'])


def test_create_then_idempotent_then_absent_deletes(env):
    failed, result = run_module(scheduler_config, args(env, kubernetes_version='v1.31.4+k3s1'))
    assert not failed, result
    assert result['changed'] and result['created'] and not result['removed']
    assert result['api_version'] == 'kubescheduler.config.k8s.io/v1'
    assert result['extenders'] == ['http://127.0.0.1:8889']
    assert env.mode() == 0o600
    data = yaml.safe_load(env.read())
    assert data['clientConnection'] == {'kubeconfig': env['kubeconfig']}
    assert data['leaderElection'] == {'leaderElect': True}

    failed, again = run_module(scheduler_config, args(env, kubernetes_version='v1.31.4+k3s1'))
    assert not failed and not again['changed'] and not again['created']

    failed, gone = run_module(scheduler_config, args(env, state='absent'))
    assert not failed and gone['changed'] and gone['removed']
    assert not env.exists()

    failed, nothing = run_module(scheduler_config, args(env, state='absent'))
    assert not failed and not nothing['changed'] and not nothing['removed']


def test_check_mode_and_diff_do_not_write(env):
    failed, result = run_module(scheduler_config, args(env), check_mode=True, diff=True)
    assert not failed and result['changed'] and result['created']
    assert not env.exists()
    assert result['diff'][0]['before'] == ''
    assert 'urlPrefix: http://127.0.0.1:8889' in result['diff'][0]['after']


def test_merge_into_foreign_file_with_backup(env):
    original = foreign(env)
    env.write(original)
    os.chmod(env['node'].p(env['path']), 0o640)
    failed, result = run_module(scheduler_config, args(env, backup=True), diff=True)
    assert not failed, result
    assert result['changed'] and not result['created']
    assert result['extenders'] == ['http://gpu-share:12345', 'http://127.0.0.1:8889']
    text = env.read()
    assert text.startswith(original)
    assert env.mode() == 0o640
    assert result['backup_file'].startswith(env['backup_dir'])
    assert env.read(result['backup_file']) == original
    assert result['diff'][0]['before'] == original and result['diff'][0]['after'] == text

    failed, removed = run_module(scheduler_config, args(env, state='absent'))
    assert not failed and removed['changed'] and not removed['removed']
    assert env.read() == original


@pytest.mark.parametrize('content,message', [
    ('a: [\n', 'not valid YAML'),
    ('kind: KubeSchedulerConfiguration\n---\nkind: KubeSchedulerConfiguration\n', 'YAML documents'),
    ('- 1\n', 'not a mapping'),
    ('apiVersion: v1\nkind: ConfigMap\n', 'kind is'),
    ('apiVersion: kubescheduler.config.k8s.io/v9\nkind: KubeSchedulerConfiguration\n', 'not a KubeSchedulerConfiguration version'),
    ('{"kind": "Policy", "apiVersion": "v1", "predicates": []}', 'Policy API was removed in Kubernetes 1.23'),
    ('apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n', 'no longer accepts'),
    ('apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection: {kubeconfig: /nope}\n',
     '/var/lib/rancher/k3s/server/cred/scheduler.kubeconfig'),
    ('apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n', 'clientConnection.kubeconfig: Required value'),
    ('apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection: {kubeconfig: KC}\n'
     'extenders: [{urlPrefix: "http://x", bindVerb: b}]\n', 'only one extender can implement bind'),
    ('apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection: {kubeconfig: KC}\n'
     'extenders: [{urlPrefix: "http://x", managedResources: [{name: example.com/gpu}]}]\n', 'duplicate extender managed resource name'),
])
def test_bad_files_fail_untouched(env, content, message):
    content = content.replace('KC', env['kubeconfig'])
    env.write(content)
    extender = dict(OURS, bind_verb='bind', managed_resources=[{'name': 'example.com/gpu'}])
    failed, result = run_module(scheduler_config, args(env, extender=extender, kubernetes_version='v1.29.3+rke2r1'))
    assert failed, result
    assert message in result['msg'], result['msg']
    assert env.read() == content


@pytest.mark.parametrize('extender,message', [
    ({'url_prefix': 'tcp://x'}, 'must start with http:// or https://'),
    ({'url_prefix': 'http://127.0.0.1:99999'}, 'not a number from 1 to 65535'),
    ({'url_prefix': 'http://x', 'prioritize_verb': 'p', 'weight': 0}, 'weight must be greater than 0'),
    ({'url_prefix': 'http://x', 'managed_resources': [{'name': 'a.io/b'}, {'name': 'a.io/b'}]}, 'lists a.io/b twice'),
    ({'url_prefix': 'http://x', 'tls_config': {'ca_file': '/does/not/exist.pem'}}, 'does not exist on the node'),
    ({'url_prefix': 'http://x', 'http_timeout': '15'}, 'missing unit'),
    ({'url_prefix': 'http://x', 'managed_resources': [{'name': 'cpu'}]}, 'is an invalid extended resource name'),
])
def test_bad_extender_options(env, extender, message):
    failed, result = run_module(scheduler_config, args(env, extender=extender))
    assert failed and message in result['msg'], result
    assert not env.exists()


def test_relative_path_is_refused(env):
    failed, result = run_module(scheduler_config, args(env, extender={'url_prefix': 'http://x', 'tls_config': {'cert_file': 'c.pem'}}))
    assert failed and 'must be an absolute path' in result['msg']


def test_new_file_needs_kubeconfig(env):
    params = args(env)
    del params['kubeconfig']
    failed, result = run_module(scheduler_config, params)
    assert failed and '/var/lib/rancher/rke2/server/cred/scheduler.kubeconfig' in result['msg']
    failed, result = run_module(scheduler_config, args(env, kubeconfig='/var/lib/rancher/k3s/server/cred/missing'))
    assert failed and 'no such file on the node' in result['msg']
    assert not env.exists()


def test_api_version_auto_follows_kubernetes_version(env):
    failed, result = run_module(scheduler_config, args(env, kubernetes_version='v1.24.17+k3s1'))
    assert not failed and result['api_version'] == 'kubescheduler.config.k8s.io/v1beta3'
    failed, result = run_module(scheduler_config, args(env, kubernetes_version='v1.29.3+rke2r1'))
    assert failed and 'no longer accepts' in result['msg'] and 'kubescheduler.config.k8s.io/v1' in result['msg']


def test_backup_dir_in_static_pod_directory_is_refused(env):
    failed, result = run_module(scheduler_config, args(env, backup=True, backup_dir='/var/lib/rancher/rke2/agent/pod-manifests/old'))
    assert failed and 'static-pod manifest directory' in result['msg']


def test_missing_pyyaml_fails_with_missing_required_lib(env):
    with patch.object(sc, 'HAS_YAML', False):
        failed, result = run_module(scheduler_config, args(env))
    assert failed and 'PyYAML' in result['msg'] and 'python3-yaml' in result['msg']


@pytest.mark.parametrize('url,reason', [
    ('http://127.0.0.1:99999', 'not a number from 1 to 65535'),
    ('http://h:abc/', 'not a number from 1 to 65535'),
    ('http://h:1/x?q', 'must not have a query'),
])
def test_bad_url_leaves_an_existing_file_as_it_was(env, url, reason):
    """The URL is refused before anything is written: same bytes, same mtime, no new file."""
    first_failed, first = run_module(scheduler_config, args(env))
    assert not first_failed, first
    before = env.read()
    mtime = os.stat(env['node'].p(env['path'])).st_mtime_ns
    listing = env['node'].listdir(env['dir'])
    failed, result = run_module(scheduler_config, args(env, extender=dict(OURS, url_prefix=url)))
    assert failed, result
    assert url in result['msg'] and reason in result['msg'], result['msg']
    assert env.read() == before
    assert os.stat(env['node'].p(env['path'])).st_mtime_ns == mtime
    assert env['node'].listdir(env['dir']) == listing


# -- hand-written files: every foreign byte kept, add then remove gives the bytes back -------------------------
HEAD = 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection:\n  kubeconfig: KC\n'
FORMS = {
    'crlf': HEAD.replace('\n', '\r\n') + 'extenders:\r\n- urlPrefix: http://other:1\r\n',
    'bom': '\ufeff' + HEAD + 'parallelism: 4\n',
    'document markers': '---\n' + HEAD + '...\n',
    'trailing spaces': HEAD.replace('\n', '   \n') + '# note   \n',
    'empty flow list': HEAD + 'extenders: []\n',
    'indented list': HEAD.replace('  kube', '    kube') + 'extenders:\n  - urlPrefix: http://other:1\n    weight: 2\n',
    'flow list': HEAD + 'extenders: [{urlPrefix: "http://other:1"}]\n',
    'comments everywhere': '# top\n' + HEAD + '# before\nextenders:  # inline\n# between\n- urlPrefix: http://other:1  # theirs\n# after\n',
    'json': ('{\n  "apiVersion": "kubescheduler.config.k8s.io/v1",\n  "kind": "KubeSchedulerConfiguration",\n'
             '  "clientConnection": {\n    "kubeconfig": "KC"\n  },\n  "extenders": []\n}\n'),
    'json with extenders': ('{\n    "apiVersion": "kubescheduler.config.k8s.io/v1",\n    "kind": "KubeSchedulerConfiguration",\n'
                            '    "clientConnection": {"kubeconfig": "KC"},\n    "extenders": [\n'
                            '        {"urlPrefix": "http://other:1"}\n    ]\n}\n'),
    'tab before a comment': HEAD + 'parallelism: 4\t# go-yaml reads this, PyYAML alone does not\n',
}


@pytest.mark.parametrize('form', sorted(FORMS))
def test_add_then_remove_gives_the_bytes_back(env, form):
    original = FORMS[form].replace('KC', env['kubeconfig'])
    env.write(original)
    failed, added = run_module(scheduler_config, args(env))
    assert not failed, added
    assert added['changed'] and 'http://127.0.0.1:8889' in added['extenders']
    text = env.read()
    data = sc.load_strict(text)
    assert data['extenders'][-1] == {'urlPrefix': 'http://127.0.0.1:8889', 'filterVerb': 'filter', 'prioritizeVerb': 'prioritize',
                                     'weight': 1, 'httpTimeout': '15s', 'ignorable': True}
    if form.startswith('json'):
        import json
        assert json.loads(text)['extenders'][-1]['urlPrefix'] == 'http://127.0.0.1:8889'  # still JSON
    failed, again = run_module(scheduler_config, args(env))
    assert not failed and not again['changed']
    failed, removed = run_module(scheduler_config, args(env, state='absent'))
    assert not failed and removed['changed'], removed
    assert env.read() == original


def test_a_new_url_replaces_our_entry_and_absent_finds_it_after_the_change(env):
    env.write(foreign(env))
    original = env.read()
    run_module(scheduler_config, args(env, name='csi-baremetal'))
    failed, moved = run_module(scheduler_config, args(env, name='csi-baremetal', extender=dict(OURS, url_prefix='https://127.0.0.1:8890')))
    assert not failed and moved['changed']
    assert moved['extenders'] == ['http://gpu-share:12345', 'https://127.0.0.1:8890']
    assert '# baremetal.k3s extender: csi-baremetal' in env.read()
    failed, gone = run_module(scheduler_config, {'path': env['path'], 'state': 'absent', 'name': 'csi-baremetal',
                                                 'extender': {'url_prefix': 'http://127.0.0.1:8889'}})  # the old URL
    assert not failed and gone['changed'] and gone['extenders'] == ['http://gpu-share:12345']
    assert env.read() == original


def test_two_extenders_of_ours_live_side_by_side(env):
    env.write(foreign(env))
    original = env.read()
    run_module(scheduler_config, args(env, name='csi-baremetal'))
    other = dict(OURS, url_prefix='http://127.0.0.1:9999', prioritize_verb='', weight=0)
    failed, second = run_module(scheduler_config, args(env, name='gpu', extender=other))
    assert not failed, second
    assert second['extenders'] == ['http://gpu-share:12345', 'http://127.0.0.1:8889', 'http://127.0.0.1:9999']
    run_module(scheduler_config, args(env, name='csi-baremetal', state='absent'))
    run_module(scheduler_config, args(env, name='gpu', state='absent', extender={'url_prefix': 'http://x'}))
    assert env.read() == original


def test_an_unmarked_entry_with_our_url_is_adopted(env):
    text = foreign(env) + '- urlPrefix: http://127.0.0.1:8889\n  filterVerb: old\n'
    env.write(text)
    failed, r = run_module(scheduler_config, args(env, name='csi-baremetal'))
    assert not failed and r['changed'] and r['extenders'] == ['http://gpu-share:12345', 'http://127.0.0.1:8889']
    assert '# baremetal.k3s extender: csi-baremetal\n- urlPrefix: http://127.0.0.1:8889\n' in env.read()
    failed, r = run_module(scheduler_config, args(env, name='csi-baremetal', state='absent'))
    assert r['extenders'] == ['http://gpu-share:12345'] and env.read() == foreign(env)


@pytest.mark.parametrize('content, message', [
    (HEAD + 'extenders:\n', 'Write "extenders: []" or remove the key'),
    ('{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "clientConnection": {"kubeconfig": "KC"}}\n',
     'Add "extenders": [] to the file'),
    (HEAD + 'extenders: &e\n- urlPrefix: http://other:1\nx: *e\n', 'anchor'),
    (HEAD + 'extenders: [\n  {urlPrefix: "http://other:1"},  # theirs\n  ]\n', 'comments inside'),
])
def test_forms_that_cannot_be_kept_are_refused(env, content, message):
    content = content.replace('KC', env['kubeconfig'])
    env.write(content)
    failed, result = run_module(scheduler_config, args(env))
    assert failed and message in result['msg'], result
    assert env.read() == content


def test_a_symlinked_config_is_edited_through_the_link(env):
    target = '/opt/scheduler/config.yaml'
    env.write(foreign(env), target)
    env['node'].symlink(target, env['path'])
    failed, r = run_module(scheduler_config, args(env))
    assert not failed and r['changed'] and os.path.islink(env['node'].p(env['path']))
    assert 'http://127.0.0.1:8889' in env.read(target)
    run_module(scheduler_config, args(env, state='absent'))
    assert env.read(target) == foreign(env) and os.path.islink(env['node'].p(env['path']))
