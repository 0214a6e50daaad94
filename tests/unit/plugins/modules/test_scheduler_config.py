# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Module tests of baremetal.k3s.scheduler_config: files on disk, check/diff mode, errors."""

from __future__ import annotations

import os
import stat

import pytest
import yaml

from unittest.mock import patch

from ansible_collections.baremetal.k3s.plugins.module_utils import _scheduler_config as sc
from ansible_collections.baremetal.k3s.plugins.modules import scheduler_config

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import run_module

OURS = {'url_prefix': 'http://127.0.0.1:8889', 'filter_verb': 'filter', 'prioritize_verb': 'prioritize',
        'weight': 1, 'http_timeout': '15s', 'ignorable': True}


@pytest.fixture
def env(tmp_path):
    kubeconfig = tmp_path / 'scheduler.kubeconfig'
    kubeconfig.write_text('apiVersion: v1\nkind: Config\n')
    return {'dir': tmp_path, 'path': str(tmp_path / 'config.yaml'), 'kubeconfig': str(kubeconfig),
            'backup_dir': str(tmp_path / 'backups')}


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
    assert stat.S_IMODE(os.stat(env['path']).st_mode) == 0o600
    data = yaml.safe_load(open(env['path']))
    assert data['clientConnection'] == {'kubeconfig': env['kubeconfig']}
    assert data['leaderElection'] == {'leaderElect': True}

    failed, again = run_module(scheduler_config, args(env, kubernetes_version='v1.31.4+k3s1'))
    assert not failed and not again['changed'] and not again['created']

    failed, gone = run_module(scheduler_config, args(env, state='absent'))
    assert not failed and gone['changed'] and gone['removed']
    assert not os.path.exists(env['path'])

    failed, nothing = run_module(scheduler_config, args(env, state='absent'))
    assert not failed and not nothing['changed'] and not nothing['removed']


def test_check_mode_and_diff_do_not_write(env):
    failed, result = run_module(scheduler_config, args(env), check_mode=True, diff=True)
    assert not failed and result['changed'] and result['created']
    assert not os.path.exists(env['path'])
    assert result['diff']['before'] == ''
    assert 'urlPrefix: http://127.0.0.1:8889' in result['diff']['after']


def test_merge_into_foreign_file_with_backup(env):
    original = foreign(env)
    with open(env['path'], 'w') as f:
        f.write(original)
    os.chmod(env['path'], 0o640)
    failed, result = run_module(scheduler_config, args(env, backup=True), diff=True)
    assert not failed, result
    assert result['changed'] and not result['created']
    assert result['extenders'] == ['http://gpu-share:12345', 'http://127.0.0.1:8889']
    text = open(env['path']).read()
    assert text.startswith(original)
    assert stat.S_IMODE(os.stat(env['path']).st_mode) == 0o640
    assert result['backup_file'].startswith(env['backup_dir'])
    assert open(result['backup_file']).read() == original
    assert result['diff']['before'] == original and result['diff']['after'] == text

    failed, removed = run_module(scheduler_config, args(env, state='absent'))
    assert not failed and removed['changed'] and not removed['removed']
    assert open(env['path']).read() == original


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
    with open(env['path'], 'w') as f:
        f.write(content)
    extender = dict(OURS, bind_verb='bind', managed_resources=[{'name': 'example.com/gpu'}])
    failed, result = run_module(scheduler_config, args(env, extender=extender, kubernetes_version='v1.29.3+rke2r1'))
    assert failed, result
    assert message in result['msg'], result['msg']
    assert open(env['path']).read() == content


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
    assert not os.path.exists(env['path'])


def test_relative_path_is_refused(env):
    failed, result = run_module(scheduler_config, args(env, extender={'url_prefix': 'http://x', 'tls_config': {'cert_file': 'c.pem'}}))
    assert failed and 'must be an absolute path' in result['msg']


def test_new_file_needs_kubeconfig(env):
    params = args(env)
    del params['kubeconfig']
    failed, result = run_module(scheduler_config, params)
    assert failed and '/var/lib/rancher/rke2/server/cred/scheduler.kubeconfig' in result['msg']
    failed, result = run_module(scheduler_config, args(env, kubeconfig=str(env['dir'] / 'missing')))
    assert failed and 'no such file on the node' in result['msg']
    assert not os.path.exists(env['path'])


def test_api_version_auto_follows_kubernetes_version(env):
    failed, result = run_module(scheduler_config, args(env, kubernetes_version='v1.24.17+k3s1'))
    assert not failed and result['api_version'] == 'kubescheduler.config.k8s.io/v1beta3'
    failed, result = run_module(scheduler_config, args(env, kubernetes_version='v1.29.3+rke2r1'))
    assert failed and 'no longer accepts' in result['msg'] and 'kubescheduler.config.k8s.io/v1' in result['msg']


def test_backup_dir_in_static_pod_directory_is_refused(env):
    failed, result = run_module(scheduler_config, args(env, backup=True, backup_dir='/var/lib/rancher/rke2/agent/pod-manifests/old'))
    assert failed and 'static-pod manifest directory' in result['msg']


def test_missing_ruamel_fails_with_missing_required_lib(env):
    with patch.object(sc, 'HAS_RUAMEL', False):
        failed, result = run_module(scheduler_config, args(env))
    assert failed and 'ruamel.yaml' in result['msg'] and 'required' in result['msg']


@pytest.mark.parametrize('url,reason', [
    ('http://127.0.0.1:99999', 'not a number from 1 to 65535'),
    ('http://h:abc/', 'not a number from 1 to 65535'),
    ('http://h:1/x?q', 'must not have a query'),
])
def test_bad_url_leaves_an_existing_file_as_it_was(env, url, reason):
    """The URL is refused before anything is written: same bytes, same mtime, no new file."""
    first_failed, first = run_module(scheduler_config, args(env))
    assert not first_failed, first
    before = open(env['path'], 'rb').read()
    mtime = os.stat(env['path']).st_mtime_ns
    listing = sorted(os.listdir(env['dir']))
    failed, result = run_module(scheduler_config, args(env, extender=dict(OURS, url_prefix=url)))
    assert failed, result
    assert url in result['msg'] and reason in result['msg'], result['msg']
    assert open(env['path'], 'rb').read() == before
    assert os.stat(env['path']).st_mtime_ns == mtime
    assert sorted(os.listdir(env['dir'])) == listing
