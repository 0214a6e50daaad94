# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""baremetal.k3s.scheduler_config's convert_api_version: the file on disk, the backup, check/diff mode, rollback."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.baremetal.k3s.plugins.modules import rollback, scheduler_config

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok

GROUP = 'kubescheduler.config.k8s.io'
PATH = '/etc/rancher/k3s/kube-scheduler/config.yaml'
KUBECONFIG = '/var/lib/rancher/k3s/server/cred/scheduler.kubeconfig'
BACKUPS = '/var/backups/baremetal-k3s'
OURS = {'url_prefix': 'http://127.0.0.1:8889', 'filter_verb': 'filter', 'prioritize_verb': 'prioritize', 'weight': 1,
        'http_timeout': '15s', 'ignorable': True}

V1BETA3 = ('# written for k3s 1.24\n'
           'apiVersion: kubescheduler.config.k8s.io/v1beta3\n'
           'kind: KubeSchedulerConfiguration\n'
           'clientConnection:\n'
           '  kubeconfig: %s\n'
           'profiles:\n'
           '- schedulerName: default-scheduler\n'
           '  plugins:\n'
           '    multiPoint:\n'
           '      disabled:\n'
           '      - name: GCEPDLimits  # not on GCE\n'
           'extenders:\n'
           '- urlPrefix: http://gpu-share:12345  # the GPU extender\n'
           '  filterVerb: filter\n' % KUBECONFIG)


@pytest.fixture
def files(node):
    node.write(KUBECONFIG, 'apiVersion: v1\nkind: Config\n')
    node.write(PATH, V1BETA3)
    return node


def args(**kw):
    out = {'path': PATH, 'name': 'csi-baremetal', 'extender': dict(OURS), 'kubernetes_version': 'v1.30.6+k3s1',
           'backup_dir': BACKUPS, 'convert_api_version': True}
    out.update(kw)
    return out


def backups(node):
    return list(node.listdir(BACKUPS)) if node.exists(BACKUPS) else []


def test_converted_with_the_extender_in_one_write_old_file_kept_then_idempotent(files):
    result = module_ok(scheduler_config, args())
    assert result['changed']
    assert result['conversion'] == {
        'from': GROUP + '/v1beta3', 'to': GROUP + '/v1',
        'changes': ['apiVersion: %s/v1beta3 -> %s/v1' % (GROUP, GROUP),
                    'profiles[0].plugins.multiPoint.disabled[0]: "GCEPDLimits" removed (the plugin does not exist in v1, '
                    'so there is nothing to disable)']}
    assert result['api_version'] == GROUP + '/v1'
    assert [w for w in result['warnings'] if 'converted from %s/v1beta3 to %s/v1' % (GROUP, GROUP) in w], result['warnings']
    # backup: false, yet the old bytes are kept: the backup is what a rollback puts back
    assert len(result['files']) == 1 and result['files'][0]['action'] == 'modified'
    assert files.read(result['files'][0]['backup_file']).decode() == V1BETA3
    text = files.read(PATH).decode()
    data = yaml.safe_load(text)
    assert data['apiVersion'] == GROUP + '/v1'
    assert data['profiles'][0]['plugins']['multiPoint'] == {'disabled': []}
    assert [e['urlPrefix'] for e in data['extenders']] == ['http://gpu-share:12345', 'http://127.0.0.1:8889']
    assert text.startswith('# written for k3s 1.24\n')
    assert '- urlPrefix: http://gpu-share:12345  # the GPU extender\n' in text
    # the next run (the same version) finds a v1 file with our extender: nothing to do
    again = module_ok(scheduler_config, args())
    assert not again['changed'] and 'conversion' not in again and again['files'] == []
    assert files.read(PATH).decode() == text


def test_rollback_puts_the_old_version_back(files):
    result = module_ok(scheduler_config, args())
    module_ok(rollback, {'files': result['files']})
    assert files.read(PATH).decode() == V1BETA3


def test_check_and_diff_mode_show_the_conversion_and_change_nothing(files):
    result = module_ok(scheduler_config, args(), check_mode=True, diff=True)
    assert result['changed'] and result['conversion']['from'] == GROUP + '/v1beta3'
    assert result['diff'][0]['before'] == V1BETA3
    assert 'apiVersion: %s/v1\n' % GROUP in result['diff'][0]['after']
    assert files.read(PATH).decode() == V1BETA3
    assert backups(files) == []


def test_option_off_refuses_as_before(files):
    msg = module_fail(scheduler_config, args(convert_api_version=False))
    assert 'no longer accepts' in msg and 'Move the file to %s/v1' % GROUP in msg
    assert files.read(PATH).decode() == V1BETA3
    assert backups(files) == []


def test_old_version_still_read_is_not_converted(files):
    result = module_ok(scheduler_config, args(kubernetes_version='v1.28.15'))
    assert 'conversion' not in result
    assert yaml.safe_load(files.read(PATH))['apiVersion'] == GROUP + '/v1beta3'
    assert result['files'][0]['backup_file'] is None  # backup: false, nothing converted


def test_no_faithful_form_refused_nothing_written(files):
    files.write(PATH, V1BETA3.replace('      disabled:\n      - name: GCEPDLimits', '      enabled:\n      - name: GCEPDLimits'))
    before = files.read(PATH)
    msg = module_fail(scheduler_config, args())
    assert 'cannot be converted' in msg
    assert 'profiles[0].plugins.multiPoint.enabled[0]: plugin "GCEPDLimits" has no v1 form' in msg
    assert files.read(PATH) == before
    assert backups(files) == []


def test_state_absent_converts_too(files):
    result = module_ok(scheduler_config, args(state='absent'))
    assert result['changed'] and result['conversion']['to'] == GROUP + '/v1'
    assert yaml.safe_load(files.read(PATH))['extenders'] == [{'urlPrefix': 'http://gpu-share:12345', 'filterVerb': 'filter'}]
    assert files.read(result['files'][0]['backup_file']).decode() == V1BETA3


def test_state_converted_converts_only_and_needs_no_extender(files):
    only = {'path': PATH, 'state': 'converted', 'kubernetes_version': 'v1.30.6+k3s1', 'backup_dir': BACKUPS,
            'convert_api_version': True}
    result = module_ok(scheduler_config, only)
    assert result['changed'] and result['conversion']['from'] == GROUP + '/v1beta3'
    assert result['extenders'] == ['http://gpu-share:12345']
    assert files.read(result['files'][0]['backup_file']).decode() == V1BETA3
    text = files.read(PATH).decode()
    # the removed item's comment stays, on the emptied list's line
    expected = V1BETA3.replace('/v1beta3', '/v1')
    expected = expected.replace('      disabled:\n      - name: GCEPDLimits  # not on GCE\n', '      disabled: []  # not on GCE\n')
    assert text == expected
    again = module_ok(scheduler_config, only)
    assert not again['changed'] and again['files'] == []
    # the same without the option: refused, as any run
    files.write(PATH, V1BETA3)
    assert 'no longer accepts' in module_fail(scheduler_config, dict(only, convert_api_version=False))
    # no file: nothing to convert, nothing created
    files.unlink(PATH)
    result = module_ok(scheduler_config, only)
    assert not result['changed'] and not files.exists(PATH)


def test_extender_still_required_to_add_or_remove(files):
    msg = module_fail(scheduler_config, {'path': PATH, 'kubernetes_version': 'v1.30.6+k3s1'})
    assert msg == 'state is present but any of the following are missing: extender, extenders', msg
    assert files.read(PATH).decode() == V1BETA3
