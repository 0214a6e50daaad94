# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After the failed change the node is on its previous files, with k3s and the scheduler up."""

from __future__ import annotations


import bk3s_checks as c  # pylint: disable=import-error


def test_files_are_the_good_ones(host):
    differences = c.file_differences(host, '/var/tmp/bk3s-good.json')
    assert differences == [], differences


def test_no_rollback_copies_left(host):
    assert host.run('ls -A /etc/systemd/system /etc/rancher/k3s/config.yaml.d /var/backups/baremetal-k3s 2>/dev/null'
                    ' | grep "~$"').stdout == ''


def test_k3s_and_the_scheduler_are_up_with_the_good_config(host):
    assert host.service('k3s').is_running
    assert c.scheduler_healthy(host)
    assert c.extender_urls(host, c.OUR_CONFIG) == [c.EXTENDER]
    assert c.launcher_state(host)['scheduler_config'] == c.OUR_CONFIG


def test_the_launcher_exited_for_the_scheduler_in_between(host):
    exits = [e for e in c.launcher_events(host) if e['event'] == 'exit' and e.get('code')]
    assert any('enableHttps' in e.get('reason', '') for e in exits), exits
    assert any('root certificates' in e.get('reason', '') for e in exits), exits
