# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Installer variants shared by the parser tests: (id, generate() keyword arguments)."""

from __future__ import annotations

import itertools

import installer  # noqa: F401 pylint: disable=import-error,unused-import

ARG_SETS = [
    [],
    ['--disable=traefik'],
    ['--disable=traefik', '--write-kubeconfig-mode=644'],
    ["--node-label=owner=it's"],
    ['--node-label', 'a b'],
    ['--tls-san=k3s.example.com', '--node-taint=key=value:NoSchedule', '--cluster-init'],
    ['--kube-scheduler-arg=v=2', '--kube-apiserver-arg=feature-gates=A=true,B=false'],
    ['--node-name=nœud-ü', '--node-label=région=Zürich'],
    ["'", "''", 'x y z', '--flag="quoted"', '=', '--a==b', '--e=', '-'],
    ['--kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml', '--data-dir=/var/lib/rancher/k3s',
     '--token-file=/etc/k3s-token', '--flannel-backend=wireguard-native', '--disable=servicelb',
     '--disable=local-storage', '--disable=metrics-server', '--secrets-encryption'],
    ['tab\there', '--path=/a b/c'],
]
COMMANDS = ['server', 'agent']
DIRS = [{}, {'bin_dir': '/opt/bin', 'systemd_dir': '/usr/lib/systemd/system'}, {'name': 'edge', 'service_type': 'exec'}]


def variants(init='systemd'):
    out = []
    for (i, args), command, (j, extra) in itertools.product(enumerate(ARG_SETS), COMMANDS, enumerate(DIRS)):
        kw = dict(command=command, args=args, init=init)
        kw.update(extra)
        out.append(('%s-%s-args%d-dirs%d' % (init, command, i, j), kw))
    return out
