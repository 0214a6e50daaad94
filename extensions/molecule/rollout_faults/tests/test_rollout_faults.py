# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After every fault: each server wired (weight 1, the flag), k3s active, its scheduler serving
through the extender, on the files of the completed rollout."""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', 'shared'))
import bk3s_checks as chk  # noqa: E402 pylint: disable=wrong-import-position,import-error


def test_wired_with_the_good_files(host):
    cfg = chk.yaml_file(host, chk.OUR_CONFIG)
    ours = [e for e in cfg['extenders'] if e['urlPrefix'] == chk.EXTENDER]
    assert len(ours) == 1 and ours[0]['weight'] == 1, cfg
    good = json.loads(host.file('/var/tmp/bk3s-good.json').content_string)
    for path, digest in good.items():
        if digest is None:
            assert not host.file(path).exists, path
        else:
            assert host.file(path).sha256sum == digest, path


def test_k3s_active_and_scheduler_serving(host):
    assert host.service('k3s').is_running
    assert chk.scheduler_healthy(host)
    assert chk.OUR_FLAG in ' '.join(chk.systemd_argv(host, 'k3s.service')) or host.file(chk.OUR_DROPIN_CONFIG).exists


def test_no_temp_or_backup_left_in_the_config_dir(host):
    names = host.file('/etc/rancher/k3s/kube-scheduler').listdir()
    assert [n for n in names if n.endswith('.tmp') or 'bk3s' in n] == [], names
