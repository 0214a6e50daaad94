# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After the plan's refusals and the real run: each server wired, its running scheduler started with our config."""

from __future__ import annotations

import bk3s_checks as chk  # pylint: disable=import-error


def test_wired(host):
    cfg = chk.yaml_file(host, chk.OUR_CONFIG)
    ours = [e for e in cfg['extenders'] if e['urlPrefix'] == chk.EXTENDER]
    assert len(ours) == 1, cfg


def test_the_running_scheduler_has_our_config(host):
    assert host.service('k3s').is_running
    assert chk.scheduler_healthy(host)
    state = chk.launcher_state(host)
    assert state['scheduler_config'] == chk.OUR_CONFIG, state
