# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The service's own scheduler config is merged into; nothing else is added."""

from __future__ import annotations


import bk3s_checks as c  # pylint: disable=import-error

CUSTOM = '/etc/kubernetes/scheduler/custom.yaml'


def test_both_extenders_foreign_first(host):
    assert c.extender_urls(host, CUSTOM) == ['http://127.0.0.1:9999/gpu', c.EXTENDER]
    cfg = c.yaml_file(host, CUSTOM)
    assert cfg['percentageOfNodesToScore'] == 70
    assert cfg['extenders'][0] == {'urlPrefix': 'http://127.0.0.1:9999/gpu', 'filterVerb': 'filter',
                                   'ignorable': True, 'httpTimeout': '2s'}


def test_comments_kept(host):
    text = host.file(CUSTOM).content_string
    assert text.startswith('# Scheduler settings of the storage team -- keep this comment.\n')
    assert '# the GPU team\'s extender' in text and '# large clusters' in text


def test_no_flag_no_file_of_ours(host):
    before = c.recorded(host, '/var/tmp/bk3s-before.json')
    assert host.file('/etc/systemd/system/k3s.service').sha256sum == c.recorded_sha256(before, '/etc/systemd/system/k3s.service')
    assert not host.file(c.OUR_CONFIG).exists
    assert not host.file(c.OUR_DROPIN_CONFIG).exists


def test_real_scheduler_loaded_the_merged_file(host):
    state = c.launcher_state(host)
    assert state['scheduler_config'] == CUSTOM
    assert c.scheduler_healthy(host)


def test_the_users_config_was_fingerprinted_before_the_install(host):
    """shared/uninstall.yml compares the node with this fingerprint: the user's file is in it, byte for byte."""
    before = c.recorded(host, '/var/tmp/bk3s-before.json')
    assert '/etc/kubernetes/scheduler' in before['roots']
    assert c.recorded_sha256(before, CUSTOM) is not None
    assert host.file(CUSTOM).sha256sum != c.recorded_sha256(before, CUSTOM)  # ours is merged in now
