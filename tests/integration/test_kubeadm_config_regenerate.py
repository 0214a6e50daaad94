# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The real kubeadm (v1.36.3, in the k3s double of tests/kube) as the judge of ``_kubeadm_config``.

``kubeadm upgrade`` writes the kube-scheduler manifest again from the stored ClusterConfiguration.
For a v1beta4 text (kubeadm's own ``config print init-defaults``) and a v1beta3 one (block style,
with the user's extraArgs and volumes), the text ``_kubeadm_config`` plans is given to
``kubeadm init phase control-plane scheduler --dry-run`` (KUBEADM_INIT_DRYRUN_DIR: a temporary
directory, nothing under /etc/kubernetes): the manifest it writes has ``--config`` and a read-only
``File`` mount for each file. The text planned for ``state=absent`` is the original, and kubeadm
writes the original's manifest from it.

Without the k3s double the test is skipped, or fails when BAREMETAL_K3S_REQUIRE_KUBE=1.
"""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml

from ansible_collections.baremetal.k3s.plugins.module_utils import _kubeadm_config as kc

KUBE_DIR = os.environ.get('BAREMETAL_K3S_KUBE_DIR', '')
K3S = os.path.join(KUBE_DIR, 'k3s')
if not (KUBE_DIR and os.access(K3S, os.X_OK)):
    if os.environ.get('BAREMETAL_K3S_REQUIRE_KUBE') == '1':
        raise RuntimeError('BAREMETAL_K3S_REQUIRE_KUBE=1 but BAREMETAL_K3S_KUBE_DIR (%r) holds no k3s: build it '
                           '(tests/lib.sh bk3s_kube) and export its directory.' % KUBE_DIR)
    pytest.skip('BAREMETAL_K3S_KUBE_DIR does not hold the k3s double (tests/lib.sh bk3s_kube)', allow_module_level=True)

CONFIG = '/etc/kubernetes/kube-scheduler/config.yaml'
CA = '/etc/kubernetes/kube-scheduler/extender-ca.crt'
WHERE = 'ConfigMap kube-system/kubeadm-config key ClusterConfiguration'

V1BETA3 = '''apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.36.3
# the scheduler's settings
scheduler:
  extraArgs:
    v: "2"
  extraVolumes:
  - name: tz
    hostPath: /etc/localtime
    mountPath: /etc/localtime
    readOnly: true
    pathType: File
'''


def kubeadm(*args, env=None):
    out = subprocess.run([K3S, 'kubeadm'] + list(args), capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, **(env or {})), check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def v1beta4_defaults():
    """The ClusterConfiguration document of the real kubeadm's ``config print init-defaults``."""
    docs = [d for d in kubeadm('config', 'print', 'init-defaults').split('---\n') if 'kind: ClusterConfiguration' in d]
    assert len(docs) == 1
    return docs[0].replace('kubernetesVersion: 1.36.0', 'kubernetesVersion: v1.36.3')


def regenerate(tmp_path, text, name):
    """The kube-scheduler manifest the real kubeadm writes from ``text``."""
    cfg = tmp_path / ('%s.yaml' % name)
    cfg.write_text(text)
    out = tmp_path / name
    out.mkdir()
    kubeadm('init', 'phase', 'control-plane', 'scheduler', '--config', str(cfg), '--dry-run',
            env={'KUBEADM_INIT_DRYRUN_DIR': str(out)})
    return (out / 'kube-scheduler.yaml').read_text()


@pytest.mark.parametrize('version', ['v1beta4', 'v1beta3'])
def test_kubeadm_writes_the_flag_and_mounts_from_the_planned_text_and_not_after_absent(tmp_path, version):
    text = v1beta4_defaults() if version == 'v1beta4' else V1BETA3
    original = regenerate(tmp_path, text, 'original')
    assert '--config' not in original

    planned, facts = kc.plan_text(text, WHERE, CONFIG, [CA])
    assert facts['api_version'] == 'kubeadm.k8s.io/' + version
    pod = yaml.safe_load(regenerate(tmp_path, planned, 'planned'))
    container = pod['spec']['containers'][0]
    assert container['command'].count('--config=' + CONFIG) == 1
    volumes = {v['name']: v['hostPath'] for v in pod['spec']['volumes']}
    mounts = {m['mountPath']: m for m in container['volumeMounts']}
    for path in (CONFIG, CA):
        (name,) = [n for n, hp in volumes.items() if hp['path'] == path]
        assert volumes[name].get('type') == 'File' and name in facts['volumes']
        assert mounts[path]['name'] == name and mounts[path]['readOnly'] is True
    if version == 'v1beta3':  # the user's own argument and volume stay
        assert '--v=2' in container['command'] and '/etc/localtime' in mounts

    removed, facts = kc.plan_text(planned, WHERE, CONFIG, state='absent')
    assert removed == text and facts['extra_args'] == [] and facts['volumes'] == []
    assert regenerate(tmp_path, removed, 'removed') == original
