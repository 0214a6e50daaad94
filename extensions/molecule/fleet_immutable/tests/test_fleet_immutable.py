# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""baremetal.k3s.site on an immutable OS: /usr and config.yaml untouched, options in config.yaml.d."""

from __future__ import annotations


import bk3s_checks as c  # pylint: disable=import-error

OURS = '/etc/rancher/k3s/config.yaml.d/40-baremetal-k3s-server.yaml'


def test_usr_and_config_yaml_are_as_the_image_left_them(host):
    before = c.recorded(host, '/var/tmp/bk3s-before.json')
    assert host.file('/usr/lib/systemd/system/k3s.service').sha256sum == c.recorded_sha256(before, '/usr/lib/systemd/system/k3s.service')
    assert host.file('/usr/lib/rancher/k3s/config.yaml').content_string == 'write-kubeconfig-mode: "644"\ndisable: [traefik]\n'
    assert host.file('/etc/rancher/k3s/config.yaml').is_symlink
    assert host.file('/etc/rancher/k3s/config.yaml').linked_to == '/usr/lib/rancher/k3s/config.yaml'
    assert not host.file('/etc/systemd/system/k3s.service').exists


def test_the_options_live_in_the_roles_own_file_and_k3s_runs_with_them(host):
    f = host.file(OURS)
    assert f.exists and f.mode == 0o600 and 'node-label' in f.content_string
    node = c.kubectl_json(host, 'get node bk3s-life-immutable')
    assert node['metadata']['labels'].get('os') == 'immutable'


def test_k3s_started_once_by_the_role_and_once_by_install_csi(host):
    starts = [e for e in c.launcher_events(host) if e['event'] == 'start']
    # the image's start (prepare), the role's restart (converge), install_csi's restart
    assert len(starts) == 3, [e['time'] for e in starts]
