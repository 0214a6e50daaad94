# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""baremetal.k3s.upgrade from A (v1.27.16+k3s1, the real kube-scheduler v1.27.16) to B (v1.36.3+k3s1, the real
kube-scheduler v1.36.3) with a v1beta3 scheduler config that B's scheduler no longer reads.

side_effect.yml ran the upgrade as an operator runs it (its output as JSON in runs/<name>.json) and read the
node before and after each run (states/<name>.json: the binary's sha256, k3s.previous kept, the backups
left, the scheduler config's bytes, the launcher's state file - which kube-scheduler runs, with which
config - and a pod created then: where it was bound and the reference extender's calls for it).
"""

from __future__ import annotations

import base64
import json
import os

DIR = os.environ['MOLECULE_EPHEMERAL_DIRECTORY']
SERVER = 'bk3s-convert-server'
CONFIG = '/etc/rancher/k3s/kube-scheduler/config.yaml'
V1BETA3 = 'apiVersion: kubescheduler.config.k8s.io/v1beta3\n'
V1 = 'apiVersion: kubescheduler.config.k8s.io/v1\n'


def _load(*parts):
    with open(os.path.join(DIR, *parts), encoding='utf-8') as f:
        return json.load(f)


def _sha(name):
    with open(os.path.join(DIR, name + '.sha256'), encoding='utf-8') as f:
        return f.read().strip()


def _state(name):
    state = _load('states', name + '.json')
    state['config'] = base64.b64decode(state['config']).decode('utf-8')
    return state


def _results(name):
    """(task name without its role's prefix, result) of every task that ran on the server, in order."""
    run = _load('runs', name + '.json')
    return [(t['task']['name'].split(' : ', 1)[-1], t['hosts'][SERVER])
            for play in run['plays'] for t in play['tasks'] if SERVER in t['hosts']]


def _task(name, prefix):
    found = [r for n, r in _results(name) if n.startswith(prefix)]
    assert found, '%s: no task "%s..." ran' % (name, prefix)
    return found[-1]


def _failed(name):
    return [(n, r) for n, r in _results(name) if r.get('failed') and not r.get('ignore_errors')]


def _scheduling(state, version):
    """The launcher runs kube-scheduler `version` on the config, and it placed the new pod after calling the extender."""
    launcher = state['launcher']
    assert launcher['scheduler_version'] == version, launcher
    assert launcher['scheduler_config'] == CONFIG, launcher
    assert state['bound_to'] == SERVER, state['bound_to']
    filters = [c for c in state['extender_calls'] if c['verb'] == 'filter']
    assert filters, 'the extender was not called for the pod: %s' % state['extender_calls']
    assert all(c['result'].get('Error', '') == '' for c in filters), filters


def test_before_the_old_scheduler_runs_on_v1beta3():
    before = _state('before')
    assert before['sha256'] == _sha('k3s-a')
    assert before['config'].splitlines(True)[1] == V1BETA3
    assert before['launcher']['k3s_version'] == 'v1.27.16+k3s1'
    _scheduling(before, 'v1.27.16')


def test_check_shows_the_conversion_and_writes_nothing():
    before, after = _state('before'), _state('check')
    assert not _failed('check'), _failed('check')
    shown = _task('check', 'Refuse a scheduler config the new version no longer reads')
    assert shown['changed'], shown
    assert shown['conversion']['from'] == 'kubescheduler.config.k8s.io/v1beta3', shown
    assert shown['conversion']['to'] == 'kubescheduler.config.k8s.io/v1', shown
    assert 'v1beta3' in json.dumps(shown.get('diff')), shown  # --diff shows the lines that would change
    assert after['config'] == before['config']
    assert after['sha256'] == before['sha256'] and not after['previous'] and after['backups'] == 0


def test_a_config_that_cannot_be_converted_stops_before_the_swap():
    # the playbook's first play checks every node (the refusal noted), then one task stops the run naming it
    failed = _failed('refused')
    assert [item[0] for item in failed] == ['Refuse a scheduler config the new version no longer reads and that cannot be '
                                            'converted to v1 (shown under --check)',
                                            'Stop the run before any node changes, naming every refused node and why'], failed
    assert 'SelectorSpread' in failed[0][1]['msg'], failed[0][1]['msg']
    assert 'SelectorSpread' in json.dumps(failed[1][1]['msg']), failed[1][1]['msg']
    names = [item[0] for item in _results('refused')]
    assert 'Cordon the node' not in names and 'Swap the binary atomically, keeping the old one as k3s.previous' not in names
    after = _state('refused')
    assert after['sha256'] == _sha('k3s-a') and not after['previous'] and after['backups'] == 0
    assert 'SelectorSpread' in after['config']  # left as it was


def test_turned_off_the_file_is_left_alone_and_the_refusing_scheduler_rolls_the_server_back():
    before, after = _state('before'), _state('unconverted')
    failed = _failed('unconverted')
    assert failed, 'the run did not fail'
    assert _task('unconverted', 'Convert the scheduler config to v1').get('skipped'), 'converted although turned off'
    assert _task('unconverted', 'Put the previous binary back')['version'] == 'v1.27.16+k3s1'
    assert after['sha256'] == _sha('k3s-a') and after['config'] == before['config'] and after['backups'] == 0
    _scheduling(after, 'v1.27.16')


def test_a_new_version_that_does_not_start_puts_back_binary_and_config():
    before, after = _state('before'), _state('failed')
    assert _failed('failed'), 'the run did not fail'
    assert after['sha256'] == _sha('k3s-a')
    assert after['config'] == before['config']  # byte for byte
    assert after['backups'] == 0  # the rollback removed its copy
    converted = _task('failed', 'Convert the scheduler config to v1')
    assert converted['changed'] and converted['files'][0]['backup_file'], converted
    put_back = _task('failed', 'Put the scheduler config back as it was before the conversion')
    assert put_back['restored'] == [CONFIG], put_back
    assert _task('failed', 'Put the previous binary back')['version'] == 'v1.27.16+k3s1'
    stop = _task('failed', 'Stop the rollout here')
    assert 'its scheduler config put back' in stop['msg']['put_back'], stop['msg']
    _scheduling(after, 'v1.27.16')


def test_the_upgrade_converts_and_the_new_scheduler_runs_on_it():
    before, after = _state('before'), _state('upgraded')
    assert not _failed('upgraded'), _failed('upgraded')
    converted = _task('upgraded', 'Convert the scheduler config to v1')
    assert converted['changed'], converted
    assert 'profiles[0].pluginConfig[0].args.apiVersion: kubescheduler.config.k8s.io/v1beta3 -> ' \
           'kubescheduler.config.k8s.io/v1' in converted['conversion']['changes'], converted['conversion']
    assert _task('upgraded', 'Wait until the scheduler runs healthy on its config')['ready']
    assert _task('upgraded', "Drop the scheduler config's rollback copy")['changed']
    assert after['sha256'] == _sha('k3s-b') and after['previous']
    assert after['backups'] == 0
    # only the apiVersions changed: every other line (comments, order, the extender) is as it was
    old, new = before['config'].splitlines(True), after['config'].splitlines(True)
    assert len(old) == len(new)
    changed = [(o, n) for o, n in zip(old, new) if o != n]
    assert len(changed) == 2 and changed[0] == (V1BETA3, V1), changed  # the document's and the plugin args'
    assert all(n == o.replace('/v1beta3', '/v1') and 'apiVersion:' in o for o, n in changed), changed
    assert after['launcher']['k3s_version'] == 'v1.36.3+k3s1'
    _scheduling(after, 'v1.36.3')


def test_a_rerun_changes_nothing():
    upgraded, rerun = _state('upgraded'), _state('rerun')
    assert not _failed('rerun'), _failed('rerun')
    changed = [n for n, r in _results('rerun') if r.get('changed')]
    assert changed == [], changed
    assert rerun['config'] == upgraded['config'] and rerun['sha256'] == upgraded['sha256']
    assert rerun['launcher']['started_at'] == upgraded['launcher']['started_at']  # not restarted
