# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Drift made by hand (side_effect.yml), found by baremetal.k3s.status, repaired by install_csi.

For each cause: <dir>/drift/<cause>.json holds the three runs' (rc, stdout, stderr) and how many times k3s
started during them; <cause>.status.json and <cause>.status-after.json are status's JSON reports.
"""

from __future__ import annotations

import json
import os
import re

import pytest

DIR = os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'drift')

# cause made by hand -> (the causes status names, the restarts install_csi needs to put it back)
CAUSES = {
    'none': ([], 0),
    'flag': (['flag'], 1),
    'config-edited': (['config', 'restart'], 1),
    'config-replaced': (['config', 'restart'], 1),
    'restart': (['restart'], 1),
    'readiness': (['readiness'], 0),
}
DETAILS = {
    'flag': 'the flag an earlier run added is gone: a k3s installer run rewrites k3s.service',
    'config-edited': 'its entry was edited since',
    'config-replaced': 'its entry was removed: the file was edited or replaced since',
    'restart': 'before its files changed',
    'readiness': 'no entry in the readiness ConfigMap default/extender-readiness (the ConfigMap is absent)',
}


def _load(name):
    with open(os.path.join(DIR, name), encoding='utf-8') as f:
        return json.load(f)


def _recap(stdout):
    """PLAY RECAP as {host: {ok: n, changed: n, ...}}, colours or not."""
    plain = re.sub(r'\x1b\[[0-9;]*m', '', stdout)
    return {h: dict((k, int(v)) for k, v in re.findall(r'(\w+)=(\d+)', rest))
            for h, rest in re.findall(r'^(\S+)\s*:\s*(ok=.*)$', plain, re.M)}


@pytest.mark.parametrize('cause', list(CAUSES))
def test_status_names_the_cause_and_install_csi_puts_it_back(cause):
    want, restarts = CAUSES[cause]
    record = _load(cause + '.json')
    # each run's rc and its output, stdout then stderr (where the callback may print a failure)
    (rc, out), (install_rc, install_out), (after_rc, after_out) = (
        (record['runs'][k][0], '\n'.join(record['runs'][k][1:])) for k in ('status', 'install', 'status-after'))
    report = _load(cause + '.status.json')
    node = report['nodes'][0]
    print('drift %s: status rc=%s, drift %s; install_csi %s; k3s started %d times'
          % (cause, rc, json.dumps(node['drift']), _recap(install_out), record['starts']))
    assert [d['cause'] for d in node['drift']] == want, node
    assert node['drifted'] is bool(want)
    if want:
        # the message as the callback prints it, wrapped or not
        assert rc != 0 and 'drift on 1 of 1 servers' in ' '.join(out.split()), out[-3000:]
        assert DETAILS[cause] in ' '.join(d['detail'] for d in node['drift']), node['drift']
        assert report['summary'].endswith('; 1 drifted'), report['summary']
    else:
        assert rc == 0, out[-3000:]
    # repaired with at most one restart, and only where one is needed
    assert install_rc == 0, install_out[-3000:]
    assert record['starts'] == restarts, record
    changed = sum(r['changed'] for r in _recap(install_out).values())
    assert (changed > 0) is bool(want), install_out[-3000:]
    after = _load(cause + '.status-after.json')['nodes'][0]
    assert after_rc == 0 and after['drift'] == [] and after['ready'] is True, (after, after_out[-3000:])
