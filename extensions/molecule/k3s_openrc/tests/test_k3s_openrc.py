# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""openrc: the flag in command_args of the installer's /etc/init.d/k3s."""

from __future__ import annotations


import bk3s_checks as c  # pylint: disable=import-error


def test_flag_line_in_command_args(host):
    script = host.file('/etc/init.d/k3s').content_string
    assert "\t'%s' \\\n    >>/var/log/k3s.log 2>&1\"" % c.OUR_FLAG in script
    assert host.file('/etc/init.d/k3s').mode == 0o755


def test_service_started_by_openrc(host):
    assert host.run('rc-service k3s status').rc == 0


def test_real_scheduler_runs_with_our_config(host):
    state = c.launcher_state(host)
    assert state['scheduler_config'] == c.OUR_CONFIG
    # k3s hides its arguments (its command line reads "<argv0> server"): the double's state says what it runs with
    assert host.file('/proc/%d/cmdline' % state['pid']).content.rstrip(b'\0') == b'/usr/local/bin/k3s server'
    assert c.OUR_FLAG.split('=', 1)[1] in state['kube_scheduler_arg']
    assert c.scheduler_healthy(host)


def test_readiness(host):
    (entry,) = c.readiness_nodes(host)
    assert entry['restarted'] is True
