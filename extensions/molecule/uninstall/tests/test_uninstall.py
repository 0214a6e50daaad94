# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After install then uninstall, the node is as the installer left it."""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', 'shared'))

import bk3s_checks as c  # noqa: E402 pylint: disable=wrong-import-position,import-error


def test_every_file_is_byte_identical(host):
    before = json.loads(host.file('/var/tmp/bk3s-before.json').content_string)
    for path, sha in before.items():
        f = host.file(path)
        if sha is None:
            assert not f.exists, path
        else:
            assert f.sha256sum == sha, path


def test_no_backup_left_behind(host):
    assert host.run('ls -A /etc/systemd/system /etc/rancher/k3s/config.yaml.d 2>/dev/null | grep "~$"').stdout == ''


def test_scheduler_back_without_extender(host):
    state = c.launcher_state(host)
    assert state['scheduler_config'] == ''
    assert not any(a.startswith('--config=') for a in state['scheduler_args'])
    assert c.scheduler_healthy(host)


def test_node_withdrawn_from_readiness(host):
    assert c.readiness_nodes(host) == []
