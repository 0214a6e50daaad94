# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The scenarios' leader probe (extensions/molecule/shared/rollout_probe.py) on Lease timelines as
kube-scheduler's leader election writes them: a leader that releases its Lease, one that dies."""

from __future__ import annotations

import datetime

import pytest

import rollout_probe  # pylint: disable=import-error

T0 = 1_800_000_000.0
RENEW_WITHIN = 4.0


def stamp(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%fZ')


class Cluster:
    """The Lease kube-system/kube-scheduler over time, as client-go writes it (renewals every 2 s)."""

    def __init__(self):
        self.record = None

    def hold(self, holder, acquired, renewed):
        self.record = {'spec': {'holderIdentity': holder, 'leaseDurationSeconds': 15,
                                'acquireTime': stamp(acquired), 'renewTime': stamp(renewed)}}

    def release(self, at):
        # client-go's release: holder emptied, renewTime and acquireTime now, a 1 s duration
        self.record = {'spec': {'leaseDurationSeconds': 1, 'acquireTime': stamp(at), 'renewTime': stamp(at)}}


class FakeApi:
    def __init__(self, cluster):
        self.cluster = cluster
        self.errors = {}

    def call(self, method, path, body=None):  # pylint: disable=unused-argument
        if path == rollout_probe.LEASE:
            return 200, self.cluster.record
        return 200, {'items': []}


def run(monkeypatch, timeline, until, interval=0.5):
    """Sample every ``interval`` s from T0 to T0 + until; ``timeline(cluster, t)`` sets the Lease at time t."""
    cluster = Cluster()
    probe = rollout_probe.Probe(FakeApi(cluster), 'default', 'test', RENEW_WITHIN)
    t = T0
    while t <= T0 + until:
        timeline(cluster, t)
        monkeypatch.setattr(rollout_probe.time, 'time', lambda now=t: now)
        probe.sample()
        t += interval
    return probe.figures(interval)


def renewing(cluster, holder, acquired, t):
    """``holder`` holds the Lease, renewing every 2 s since ``acquired``."""
    cluster.hold(holder, acquired, acquired + 2.0 * int((t - acquired) / 2.0))


def test_a_released_lease_is_taken_at_the_next_retry(monkeypatch):
    def timeline(cluster, t):
        if t < T0 + 10:
            renewing(cluster, 'server-1_a', T0 - 30, t)
        elif t < T0 + 11.5:
            if cluster.record['spec'].get('holderIdentity'):
                cluster.release(T0 + 10)
        else:
            renewing(cluster, 'server-2_b', T0 + 11.5, t)
    r = run(monkeypatch, timeline, 30)
    assert r['leaders_in_turn'] == ['server-1_a', 'server-2_b']
    (handover,) = r['handovers']
    assert handover['released'] and handover['seconds'] == pytest.approx(1.5)
    assert r['longest_handover_seconds'] < r['lease_duration_seconds']
    assert r['longest_without_leader_seconds'] < r['lease_duration_seconds'] - r['renew_within_seconds']


def test_a_leader_killed_without_releasing_is_gone_once_it_stops_renewing(monkeypatch):
    killed = T0 + 10.3  # its last renewal at T0 + 10; the Lease names it until another takes it over

    def timeline(cluster, t):
        if t < T0 + 25.2:
            renewing(cluster, 'server-1_a', T0 - 30, min(t, killed))
        else:
            renewing(cluster, 'server-2_b', T0 + 25.2, t)  # 15 s after the candidate last saw a renewal
    r = run(monkeypatch, timeline, 40)
    assert r['last_live']['server-1_a'] <= killed + RENEW_WITHIN
    assert r['samples_without_leader'] > 0 and r['leaderless_runs'] == 1
    (handover,) = r['handovers']
    assert not handover['released'] and handover['seconds'] == pytest.approx(15.2)
    assert handover['without_leader_seconds'] == pytest.approx(25.2 - 10 - RENEW_WITHIN)
    # the bounds a rollout is held to fail on it
    assert not r['longest_handover_seconds'] < r['lease_duration_seconds']
    assert not r['longest_without_leader_seconds'] < r['lease_duration_seconds'] - r['renew_within_seconds']


def test_a_late_renewal_is_a_short_run_without_a_leader_not_a_handover(monkeypatch):
    def timeline(cluster, t):
        # renewals every 2 s, but none between T0 + 10 and T0 + 17 (a loaded machine, under renewDeadline)
        if T0 + 10 <= t < T0 + 17:
            cluster.hold('server-1_a', T0 - 30, T0 + 10)
        else:
            renewing(cluster, 'server-1_a', T0 - 30, t)
    r = run(monkeypatch, timeline, 30)
    assert r['handovers'] == [] and r['leaders_in_turn'] == ['server-1_a']
    assert r['leaderless_runs'] == 1 and 0 < r['longest_without_leader_seconds'] < 15 - RENEW_WITHIN


class FlakyApi(FakeApi):
    """Answers the first pod creation with nothing (a time-out), then as the API server would."""

    def __init__(self, cluster):
        super().__init__(cluster)
        self.posts = []

    def call(self, method, path, body=None):
        if method != 'POST':
            return super().call(method, path, body)
        self.posts.append(body['metadata']['name'])
        if len(self.posts) == 1:
            return None, None
        return (409 if body['metadata']['name'] in self.posts[:-1] else 201), {}


def test_a_pod_creation_nobody_answered_is_sent_again_under_its_name():
    api = FlakyApi(Cluster())
    probe = rollout_probe.Probe(api, 'default', 'test', RENEW_WITHIN)
    probe.create_pod()
    assert probe.created == {} and probe.unanswered == 'rollout-probe-test-0'
    probe.create_pod()  # AlreadyExists: the first attempt made it
    probe.create_pod()
    assert api.posts == ['rollout-probe-test-0', 'rollout-probe-test-0', 'rollout-probe-test-1']
    assert sorted(probe.created) == ['rollout-probe-test-0', 'rollout-probe-test-1']
    r = probe.figures(0.5)
    assert r['pod_creates_refused'] == 0 and r['pod_creates_unanswered'] == 1 and r['pod_create_unresolved'] is None
