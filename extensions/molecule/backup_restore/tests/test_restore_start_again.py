# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The restore's start-again path (side_effect.yml, tasks/restore_start_again.yml).

An archive whose checksums all hold but whose datastore copy is corrupt passed the check made
before k3s stopped and failed in the restore itself, after the stop. What was seen before and
after is in /var/tmp/bk3s-restore-start-again.json on the node.
"""

from __future__ import annotations

import datetime
import json

KUBECTL = 'k3s kubectl --kubeconfig /etc/rancher/k3s/k3s.yaml '


def seen(host):
    return json.loads(host.file('/var/tmp/bk3s-restore-start-again.json').content_string)


def launcher_events(host, start, end):
    """The k3s launcher's events between two times of the node's clock, oldest first."""
    out = []
    for line in host.file('/var/log/k3s-double/events.jsonl').content_string.splitlines():
        if line.strip():
            event = json.loads(line)
            at = datetime.datetime.fromisoformat(event['time'].replace('Z', '+00:00')).timestamp()
            if start <= at <= end:
                out.append(event['event'])
    return out


def test_the_restore_failed_after_the_stop_on_the_corrupt_datastore_copy(host):
    failure = seen(host)['failure']
    msg = failure['msg']
    # the role's rescue ran: the restore step failed and k3s was started again
    assert 'k3s was started again on the datastore it had' in msg, failure
    # the reason is the check of the unpacked datastore copy, which runs only once k3s is stopped
    assert ('the datastore in the archive fails PRAGMA integrity_check' in msg
            or 'the datastore in the archive cannot be read as kine' in msg), msg
    assert 'nothing was changed' in msg, msg


def test_k3s_was_stopped_and_started_again(host):
    facts = seen(host)
    before, after = facts['before'], facts['after']
    assert before['active'] == after['active'] == 'active'
    assert after['invocation'] != before['invocation']
    events = launcher_events(host, before['time'], after['time'])
    # the launcher that ran before the attempt exited (the stop), and one started again
    assert events.count('exit') == 1 and events.count('start') == 1, events
    assert events.index('exit') < events.index('start'), events


def test_k3s_runs_on_the_datastore_it_had(host):
    facts = seen(host)
    before, after = facts['before'], facts['after']
    # the same state.db (not a restored one, not one moved aside and back), the same token
    assert after['db_inode'] == before['db_inode']
    assert after['token_sha256'] == before['token_sha256']
    # nothing of the attempt in server/: no datastore kept aside by it, no unpacked copy left
    assert after['server'] == before['server']
    assert not [name for name in after['server'] if name.startswith('.db.restore-')]
    assert host.file(facts['data_dir'] + '/server/db/state.db').inode == before['db_inode']


def test_the_objects_are_intact(host):
    facts = seen(host)
    before, after = facts['before'], facts['after']
    assert 'start-again-marker' in before['configmaps']
    assert after['configmaps'] == before['configmaps']
    assert host.check_output(KUBECTL + 'get configmap start-again-marker -o jsonpath={.data.n}') == '1'
    assert host.check_output(KUBECTL + 'get --raw /readyz') == 'ok'
