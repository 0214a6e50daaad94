# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""method=unit on an installer-written k3s.service."""

from __future__ import annotations


import bk3s_checks as c  # pylint: disable=import-error


def test_flag_is_in_execstart_as_systemd_reads_it(host):
    argv = c.systemd_argv(host, 'k3s.service')
    assert argv[:2] == ['/usr/local/bin/k3s', 'server']
    assert argv[-1] == c.OUR_FLAG
    assert argv.count(c.OUR_FLAG) == 1


def test_flag_line_is_in_the_installer_style(host):
    unit = host.file('/etc/systemd/system/k3s.service').content_string
    assert "\t'--write-kubeconfig-mode=644' \\\n\t'%s' \\\n\n" % c.OUR_FLAG in unit


def test_no_config_dropin_and_no_backups_left(host):
    assert not host.file(c.OUR_DROPIN_CONFIG).exists
    assert host.run('ls /etc/systemd/system/ | grep "~$"').stdout == ''


def test_our_config_has_the_extender(host):
    cfg = c.yaml_file(host, c.OUR_CONFIG)
    assert cfg['apiVersion'] == 'kubescheduler.config.k8s.io/v1'
    assert cfg['clientConnection']['kubeconfig'] == '/var/lib/rancher/k3s/server/cred/scheduler.kubeconfig'
    (ext,) = cfg['extenders']
    assert ext['urlPrefix'] == c.EXTENDER and ext['filterVerb'] == 'filter' and ext['ignorable'] is True
    assert host.file(c.OUR_CONFIG).mode == 0o600


def test_real_scheduler_runs_with_our_config(host):
    state = c.launcher_state(host)
    assert state['scheduler_config'] == c.OUR_CONFIG
    assert '--config=' + c.OUR_CONFIG in state['scheduler_args']
    assert c.scheduler_healthy(host)


def test_readiness_configmap_says_restarted(host):
    (entry,) = c.readiness_nodes(host)
    assert entry['node_name'] == host.check_output('hostname').lower()
    assert entry['restarted'] is True
