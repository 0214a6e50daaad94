# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After install then uninstall, the node is as the installer left it."""

from __future__ import annotations


import bk3s_checks as c  # pylint: disable=import-error


def test_every_file_is_as_the_installer_left_it(host):
    """Every entry under the fingerprint's roots (dot files, directories, symlinks included) and every path
    the collection reported writing: none changed, none appeared, none disappeared."""
    differences = c.file_differences(host, '/var/tmp/bk3s-before.json')
    assert differences == [], differences


def test_the_comparison_covered_what_the_install_wrote(host):
    """The install's own reports reached the comparison: our config and our flag's config.yaml.d file are
    among them, and the fingerprint recorded before the install looked where each of them is."""
    written = c.written_paths(host)
    for path in (c.OUR_CONFIG, c.OUR_DROPIN_CONFIG):
        assert written.get(path) == 'created', written
    before = c.recorded(host, '/var/tmp/bk3s-before.json')
    assert '/etc/rancher' in before['roots'], before['roots']
    # under a root and absent then: had either stayed, it would be a difference
    assert c.OUR_CONFIG not in before['entries'] and c.OUR_DROPIN_CONFIG not in before['entries']
    assert before['entries']['/etc/systemd/system/k3s.service']['type'] == 'file'


def test_no_backup_left_behind(host):
    assert host.run('ls -A /etc/systemd/system /etc/rancher/k3s/config.yaml.d 2>/dev/null | grep "~$"').stdout == ''


def test_scheduler_back_without_extender(host):
    state = c.launcher_state(host)
    assert state['scheduler_config'] == ''
    assert not any(a.startswith('--config=') for a in state['scheduler_args'])
    assert c.scheduler_healthy(host)


def test_node_withdrawn_from_readiness(host):
    assert c.readiness_nodes(host) == []
