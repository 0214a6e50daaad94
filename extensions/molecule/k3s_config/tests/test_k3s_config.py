# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""method=auto chooses config.yaml.d when the command line passes no --kube-scheduler-arg."""

from __future__ import annotations


import bk3s_checks as c  # pylint: disable=import-error


def test_unit_is_untouched(host):
    before = c.recorded(host, '/var/tmp/bk3s-before.json')
    assert host.file('/etc/systemd/system/k3s.service').sha256sum == c.recorded_sha256(before, '/etc/systemd/system/k3s.service')


def test_config_dropin_appends(host):
    f = host.file(c.OUR_DROPIN_CONFIG)
    assert f.mode == 0o600
    data = c.yaml_file(host, c.OUR_DROPIN_CONFIG)
    assert data == {'kube-scheduler-arg+': ['config=' + c.OUR_CONFIG]}


def test_launcher_read_the_flag_from_the_config_files(host):
    state = c.launcher_state(host)
    assert c.OUR_DROPIN_CONFIG in state['config_files']
    assert state['kube_scheduler_arg'] == ['config=' + c.OUR_CONFIG]
    assert state['scheduler_config'] == c.OUR_CONFIG
    assert c.scheduler_healthy(host)


def test_readiness(host):
    (entry,) = c.readiness_nodes(host)
    assert entry['restarted'] is True
