# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write {path: sha256 or null} of every file baremetal.k3s may touch on a k3s, RKE2 or kubeadm node.

Run on the node (python3 fingerprint.py OUT). Units, drop-ins, openrc scripts, env files,
config.yaml and config.yaml.d, scheduler configs: uninstall must leave each one
byte-identical to what this records before the install.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import sys

PATTERNS = [
    '/etc/systemd/system/k3s*', '/etc/systemd/system/k3s*.service.d/*',
    '/usr/lib/systemd/system/k3s*', '/lib/systemd/system/k3s*',
    '/etc/init.d/k3s*', '/etc/rancher/k3s/config.yaml', '/etc/rancher/k3s/config.yaml.d/*',
    '/etc/rancher/k3s/kube-scheduler/*', '/etc/rancher/k3s/k3s.env',
    # RKE2: its units, config files, and the scheduler manifest it writes from them at every start
    '/usr/local/lib/systemd/system/rke2*', '/etc/systemd/system/rke2*', '/etc/systemd/system/rke2*.service.d/*',
    '/etc/rancher/rke2/config.yaml', '/etc/rancher/rke2/config.yaml.d/*', '/etc/rancher/rke2/kube-scheduler/*',
    '/var/lib/rancher/rke2/agent/pod-manifests/kube-scheduler.yaml',
    # kubeadm: every static pod manifest (nothing else may appear there) and our config
    '/etc/kubernetes/manifests/*', '/etc/kubernetes/kube-scheduler/*',
]
# Files the role writes when they do not exist yet: their absence is recorded too.
EXPECTED = [
    '/etc/rancher/k3s/config.yaml.d/99-baremetal-k3s-scheduler.yaml',
    '/etc/rancher/k3s/kube-scheduler/config.yaml',
    '/etc/systemd/system/k3s.service.d/99-baremetal-k3s.conf',
    '/etc/rancher/rke2/config.yaml.d/99-baremetal-k3s-scheduler.yaml',
    '/etc/rancher/rke2/kube-scheduler/config.yaml',
    '/etc/kubernetes/kube-scheduler/config.yaml',
]


def fingerprint():
    paths = set(EXPECTED)
    for pattern in PATTERNS:
        paths.update(p for p in glob.glob(pattern) if os.path.isfile(p))
    out = {}
    for path in sorted(paths):
        try:
            with open(path, 'rb') as f:
                out[path] = hashlib.sha256(f.read()).hexdigest()
        except FileNotFoundError:
            out[path] = None
    return out


if __name__ == '__main__':
    with open(sys.argv[1], 'w', encoding='utf-8') as f:
        json.dump(fingerprint(), f, indent=1, sort_keys=True)
