# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The platform records (module_utils/_platform.py), and k3s_info choosing and returning one."""

from __future__ import annotations

import glob
import os
import re

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config
from ansible_collections.baremetal.k3s.plugins.module_utils import _platform
from ansible_collections.baremetal.k3s.plugins.module_utils import _scheduler_config
from ansible_collections.baremetal.k3s.plugins.modules import k3s_info

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import run_module

import installer  # pylint: disable=import-error

ROLE = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'roles', 'scheduler_extender')
MANIFEST = '/etc/kubernetes/manifests/kube-scheduler.yaml'
CHOICES = {
    'scheduler_flag': {'service_arg', 'static_pod'},
    'scheduler_runs': {'service', 'static_pod'},
    'restart': {'service', 'static_pod'},
}


def info(args=None):
    failed, result = run_module(k3s_info, args or {})
    assert not failed, result
    return result


@pytest.mark.parametrize('record', list(_platform.PLATFORMS.values()), ids=list(_platform.PLATFORMS))
def test_every_record_is_whole(record):
    assert _platform.get(record.name) is record and record.services and record.title
    assert set(record._fields) == set(_platform.FIELDS)
    for field, allowed in CHOICES.items():
        assert getattr(record, field) in allowed, field
    # a platform whose flags are service arguments has a binary, a config file and its variable to read them by
    if record.scheduler_flag == 'service_arg':
        assert record.binary and record.config_file and record.config_env.startswith(record.env_prefix)
        assert _platform.for_binary('/opt/bin/' + record.binary) is record
    else:
        assert record.scheduler_manifest.startswith('/')
    assert record.kube_scheduler('svc', 'node-1').endswith('node-1')
    facts = record.facts(node='node-1')
    assert set(facts) == set(_platform.FIELDS) and not [v for v in facts.values() if '{' in str(v)]
    assert all(isinstance(facts[f], list) for f in ('services', 'kubectl'))


@pytest.mark.parametrize('argv0, name', [
    ('/usr/local/bin/rke2', 'rke2'), ('rke2', 'rke2'), ('/usr/local/bin/k3s', 'k3s'), ('/opt/k3s-edge/k3s', 'k3s'),
    ('/usr/bin/rke2-wrapper', 'k3s'), ('', 'k3s'), (None, 'k3s'),
])
def test_for_binary(argv0, name):
    assert _platform.for_binary(argv0).name == name == _k3s_config.product(argv0)


def test_get_names_the_known_platforms():
    with pytest.raises(KeyError, match='minikube.*k3s, rke2, kubeadm'):
        _platform.get('minikube')
    assert _platform.names() == ['k3s', 'rke2', 'kubeadm'] and _platform.titles() == 'k3s, RKE2 or kubeadm'


@pytest.mark.parametrize('data_dir, kubeconfig, kubectl', [
    ('/srv/k3s', '/srv/k3s/server/cred/scheduler.kubeconfig', ['/srv/rke2/bin/kubectl']),
    ('/srv/k3s/', '/srv/k3s/server/cred/scheduler.kubeconfig', ['/srv/rke2/bin/kubectl']),  # joined as os.path.join
])
def test_facts_fill_in_the_node(data_dir, kubeconfig, kubectl):
    facts = _platform.K3S.facts(data_dir=data_dir, binary='/opt/bin/k3s', service='k3s-edge', node='n1')
    assert facts['scheduler_kubeconfig'] == kubeconfig and facts['kubectl'] == ['/opt/bin/k3s', 'kubectl']
    assert facts['scheduler_name'] == 'k3s-edge@n1' and facts['client_ca'] == kubeconfig.replace(
        'cred/scheduler.kubeconfig', 'tls/client-ca.crt')
    assert _platform.RKE2.facts(data_dir=data_dir.replace('k3s', 'rke2'))['kubectl'] == kubectl
    assert _platform.KUBEADM.facts(node='n1')['scheduler_name'] == 'kube-scheduler-n1'


def test_the_scheduler_configs_offer_follows_the_records():
    assert _scheduler_config.PLATFORM_KUBECONFIGS == (
        ('k3s', '/var/lib/rancher/k3s/server/cred/scheduler.kubeconfig'),
        ('rke2', '/var/lib/rancher/rke2/server/cred/scheduler.kubeconfig'),
        ('kubeadm', '/etc/kubernetes/scheduler.conf'),
    )


def test_k3s_info_returns_the_record_of_what_it_found(node):
    node.install(args=['--data-dir=/srv/k3s', '--node-name=Edge-1'], bin_dir='/opt/bin')
    r = info()
    rec = r['platform_record']
    assert rec['name'] == r['platform'] == 'k3s' and rec['data_dir'] == r['data_dir'] == '/srv/k3s'
    for key in ('scheduler_kubeconfig', 'admin_kubeconfig', 'kubectl'):
        assert rec[key] == r[key], key
    assert rec['kubectl'] == ['/opt/bin/k3s', 'kubectl'] and rec['scheduler_name'] == 'k3s@edge-1'
    assert rec['scheduler_ca'] == '/srv/k3s/server/tls/server-ca.crt'
    assert rec['scheduler_config'] == '/etc/rancher/k3s/kube-scheduler/config.yaml'
    assert (rec['scheduler_flag'], rec['scheduler_runs'], rec['restart']) == ('service_arg', 'service', 'service')


def test_k3s_info_returns_rke2s_and_kubeadms_records(node):
    node.install_files(installer.rke2_files('server'))
    node.write('/etc/rancher/rke2/config.yaml', 'data-dir: /data/rke2\n')
    rec = info()['platform_record']
    assert (rec['name'], rec['scheduler_mount_arg'], rec['scheduler_runs']) == ('rke2', '--kube-scheduler-extra-mount', 'static_pod')
    assert rec['scheduler_manifest'] == '/data/rke2/agent/pod-manifests/kube-scheduler.yaml'
    assert rec['kubectl'] == ['/data/rke2/bin/kubectl'] and rec['scheduler_name'] == 'kube-scheduler-node-1.example'

    node.path_bins['kubectl'] = '/opt/k8s/kubectl'
    node.write(MANIFEST, 'kind: Pod\nspec: {containers: [{name: kube-scheduler, command: [kube-scheduler, '
                         '--kubeconfig=/etc/kubernetes/other.conf]}]}\n')
    r = info({'platform': 'kubeadm'})
    rec = r['platform_record']
    assert (rec['name'], rec['scheduler_flag'], rec['restart']) == ('kubeadm', 'static_pod', 'static_pod')
    assert rec['scheduler_kubeconfig'] == r['scheduler_kubeconfig'] == '/etc/kubernetes/other.conf'
    assert rec['kubectl'] == r['kubectl'] == ['/opt/k8s/kubectl'] and rec['scheduler_manifest'] == MANIFEST


def test_k3s_info_returns_the_records_defaults_when_nothing_is_installed(node):
    r = info({'platform': 'rke2'})
    assert not r['installed'] and r['platform_record'] == dict(
        _platform.RKE2.facts(service='rke2-server', node='node-1.example'))


# A fourth platform: its record alone makes k3s_info find it, read its config file and variables,
# and return its paths. (k0s-like: its own binary, services, data dir and config file.)
K9S = _platform.K3S._replace(
    name='k9s', title='K9S', binary='k9s', services=('k9s-controller', 'k9s-worker'), data_dir='/var/lib/k9s',
    config_file='/etc/k9s/config.yaml', config_env='K9S_CONFIG_FILE', env_prefix='K9S_',
    admin_kubeconfig='/etc/k9s/admin.yaml', scheduler_config='/etc/k9s/kube-scheduler/config.yaml')


def test_a_new_record_is_all_a_platform_needs(node, monkeypatch):
    monkeypatch.setitem(_platform.PLATFORMS, 'k9s', K9S)
    unit = '/etc/systemd/system/k9s-controller.service'
    node.write(unit, '[Unit]\nDescription=k9s\n[Service]\nType=notify\nEnvironmentFile=-%s.env\n'
                     'ExecStart=/usr/local/bin/k9s server\n' % unit)
    node.write(unit + '.env', "K9S_NODE_NAME='Edge-9'\nK9S_CONFIG_FILE='/srv/k9s.yaml'\n")
    node.write('/srv/k9s.yaml', 'data-dir: /srv/k9s\nkube-scheduler-arg: [config=/etc/k9s/sched.yaml]\n')
    r = info()
    assert r['installed'] and r['platform'] == 'k9s' and r['service'] == 'k9s-controller' and r['unit_path'] == unit
    assert r['config_file'] == '/srv/k9s.yaml' and r['scheduler_config'] == '/etc/k9s/sched.yaml'
    assert r['data_dir'] == '/srv/k9s' and r['scheduler_kubeconfig'] == '/srv/k9s/server/cred/scheduler.kubeconfig'
    assert r['node_name'] == 'edge-9' and r['admin_kubeconfig'] == '/etc/k9s/admin.yaml'
    assert r['platform_record']['scheduler_name'] == 'k9s-controller@edge-9'
    assert r['platform_record']['scheduler_config'] == '/etc/k9s/kube-scheduler/config.yaml'
    node.unlink(unit)
    assert 'k9s-controller' in info()['msg'] and 'K9S' in info()['msg']


def test_the_role_reads_fields_not_names():
    """The scheduler_extender role asks the platform record, never compares the platform's name."""
    files = glob.glob(os.path.join(ROLE, '**', '*.yml'), recursive=True)
    assert len(files) > 5
    branch = re.compile(r"\.platform\s*(==|!=|in\b|not in\b)|_config_paths\[")
    found = ['%s:%d' % (os.path.relpath(f, ROLE), i + 1) for f in files
             for i, line in enumerate(open(f, encoding='utf-8')) if branch.search(line)]
    assert found == []
