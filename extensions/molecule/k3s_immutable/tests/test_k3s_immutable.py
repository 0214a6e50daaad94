# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A read-only unit: auto picks config.yaml.d when safe, else a drop-in; unit edits are refused."""

from __future__ import annotations


import pytest

import bk3s_checks as c  # pylint: disable=import-error

UNIT = '/usr/lib/systemd/system/k3s.service'
DROPIN = '/etc/systemd/system/k3s.service.d/99-baremetal-k3s.conf'


def _name(host):
    return host.backend.get_hostname()


def test_usr_is_read_only_and_unit_untouched(host):
    assert host.run('touch /usr/lib/systemd/system/.probe').rc != 0
    before = c.recorded(host, '/var/tmp/bk3s-before.json')
    assert host.file(UNIT).sha256sum == c.recorded_sha256(before, UNIT)


def test_flag_reached_the_real_scheduler(host):
    state = c.launcher_state(host)
    assert state['scheduler_config'] == c.OUR_CONFIG
    assert c.scheduler_healthy(host)
    assert c.extender_urls(host, c.OUR_CONFIG) == [c.EXTENDER]


def test_node_a_uses_config_dropin(host):
    if not _name(host).endswith('-a'):
        pytest.skip('node a only')
    assert c.yaml_file(host, c.OUR_DROPIN_CONFIG) == {'kube-scheduler-arg+': ['config=' + c.OUR_CONFIG]}
    assert not host.file(DROPIN).exists


def test_node_b_uses_systemd_dropin(host):
    if not _name(host).endswith('-b'):
        pytest.skip('node b only')
    assert not host.file(c.OUR_DROPIN_CONFIG).exists
    dropin = host.file(DROPIN).content_string
    assert '\nExecStart=\n' in dropin
    argv = c.systemd_argv(host, 'k3s.service')
    assert argv[:2] == ['/usr/local/bin/k3s', 'server']
    assert '--kube-scheduler-arg=v=2' in argv and argv[-1] == c.OUR_FLAG
    state = c.launcher_state(host)
    assert state['kube_scheduler_arg'] == ['v=2', 'config=' + c.OUR_CONFIG]


def test_unit_method_is_refused_with_the_alternatives(host):
    out = host.run('python3 -c "import os; print(os.access(%r, os.W_OK))"' % UNIT)
    assert out.stdout.strip() == 'False'
    before = host.file(UNIT).sha256sum
    # ansible-core 2.19's --tree output drops "failed", so testinfra may not raise: judge by the result
    try:
        result = host.ansible('baremetal.k3s.k3s_service_arg', 'arg=--kube-scheduler-arg=v=3 method=unit', check=False)
    except host.ansible.AnsibleException as e:
        result = e.result
    msg = result.get('msg', '')
    assert not result.get('changed') and 'is not writable' in msg, result
    assert 'method=dropin' in msg and 'method=config' in msg, msg
    assert host.file(UNIT).sha256sum == before
