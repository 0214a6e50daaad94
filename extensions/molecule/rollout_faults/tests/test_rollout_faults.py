# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After every fault: each server wired (weight 1, its running scheduler started with our config),
k3s active, its scheduler serving through the extender, on the files of the completed rollout."""

from __future__ import annotations

import bk3s_checks as chk  # pylint: disable=import-error


def test_wired_with_the_good_files(host):
    cfg = chk.yaml_file(host, chk.OUR_CONFIG)
    ours = [e for e in cfg['extenders'] if e['urlPrefix'] == chk.EXTENDER]
    assert len(ours) == 1 and ours[0]['weight'] == 1, cfg
    differences = chk.file_differences(host, '/var/tmp/bk3s-good.json')
    assert differences == [], differences


def test_k3s_active_and_the_running_scheduler_has_our_config(host):
    """Wired means the scheduler that runs now was started with our config, not that a file names it."""
    assert host.service('k3s').is_running
    assert chk.scheduler_healthy(host)
    state = chk.launcher_state(host)
    assert state['scheduler_config'] == chk.OUR_CONFIG, state
    argv = [a.decode() for a in chk.process_argv(host, state['scheduler_pid'])]
    assert 'kube-scheduler' in argv[:2] and '--config=' + chk.OUR_CONFIG in argv, argv


def test_no_temp_or_backup_left_in_the_config_dir(host):
    names = host.file('/etc/rancher/k3s/kube-scheduler').listdir()
    assert [n for n in names if n.endswith('.tmp') or 'bk3s' in n] == [], names
