# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Watch a cluster through a rolling change, as an operator would: is there a scheduler leader, are new pods bound.

Runs on a host beside the servers (Python 3 standard library only) until the file --stop exists:
every --interval seconds it reads the Lease kube-system/kube-scheduler and the probe's pods from
the first API server that answers, and every --pod-every seconds it creates one pod. After the
stop file appears it waits up to --settle seconds for every pod to be bound, then writes the
figures to --out as JSON.

A leader is live by what it does, not by what its Lease allows: at a sample, the holder the Lease
names is live when it renewed the Lease at most --renew-within seconds ago (kube-scheduler renews
every 2 s, its retryPeriod; the rest of the window allows for a slow renewal). A leader that died
without releasing its Lease stops being live --renew-within seconds after its last renewal, though
its Lease keeps it holder for the Lease's whole duration (15 s), until another takes it over.

Handovers are read from the Lease's own times: from the previous holder's last act (its last
renewal the probe saw, or its release: a scheduler that stops empties the holder) to the new
holder's acquireTime. A candidate takes an unreleased Lease only when it has not seen it renewed
for the Lease's duration, so a leader that died without releasing makes a handover at least that
long; one that released it is followed at the other scheduler's next retry. The time without a
live leader runs from the previous leader's release, or its last renewal plus --renew-within, to
the next leader's acquireTime (or the first sample that saw a live leader, outside handovers).
"""

import argparse
import datetime
import json
import os
import ssl
import time
import urllib.error
import urllib.request

LEASE = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler'
LABEL = 'baremetal-k3s-probe'


class Api:
    """The cluster's API servers, tried in turn: the one that answered last goes first."""

    def __init__(self, servers, ca, cert, key, timeout):
        self.servers = list(servers)
        self.timeout = timeout
        self.ctx = ssl.create_default_context(cafile=ca)
        self.ctx.load_cert_chain(cert, key)
        self.errors = {}  # what the servers answered instead, with how often: the figures show it

    def note(self, server, what):
        key = '%s: %s' % (server, what)
        if key in self.errors or len(self.errors) < 20:
            self.errors[key] = self.errors.get(key, 0) + 1

    def call(self, method, path, body=None):
        """(status, decoded JSON) from the first server that answers, or (None, None) when none does."""
        data = None if body is None else json.dumps(body).encode()
        for i, server in enumerate(self.servers):
            req = urllib.request.Request(server + path, data=data, method=method,
                                         headers={'Content-Type': 'application/json', 'Accept': 'application/json'})
            try:
                with urllib.request.urlopen(req, timeout=self.timeout, context=self.ctx) as resp:
                    status, text = resp.status, resp.read()
            except urllib.error.HTTPError as e:
                status, text = e.code, e.read()
            except (OSError, ValueError) as e:
                self.note(server, e)
                continue
            if status >= 500:  # an API server starting up or shutting down: ask the next one
                self.note(server, 'HTTP %d on %s %s' % (status, method, path.split('?')[0]))
                continue
            self.servers.insert(0, self.servers.pop(i))
            try:
                return status, json.loads(text)
            except ValueError:
                return status, None
        return None, None


def parse_time(text):
    """Seconds since the epoch of a Kubernetes time (RFC 3339, with or without microseconds)."""
    for fmt in ('%Y-%m-%dT%H:%M:%S.%fZ', '%Y-%m-%dT%H:%M:%SZ'):
        try:
            return datetime.datetime.strptime(text, fmt).replace(tzinfo=datetime.timezone.utc).timestamp()
        except ValueError:
            pass
    raise ValueError('not a Kubernetes time: %r' % (text,))


def observe(lease):
    """(holder, renewTime, acquireTime, leaseDurationSeconds) of a Lease; times in seconds since the epoch or None."""
    spec = (lease or {}).get('spec') or {}
    renew, acquire = spec.get('renewTime'), spec.get('acquireTime')
    return (spec.get('holderIdentity') or '', parse_time(renew) if renew else None,
            parse_time(acquire) if acquire else None, spec.get('leaseDurationSeconds'))


def live_holder(observed, now, renew_within):
    """The holder of an observed Lease when it renewed it at most ``renew_within`` seconds before ``now``, else ''."""
    holder, renewed = observed[0], observed[1]
    if not holder or renewed is None:
        return ''
    return holder if now - renewed <= renew_within else ''


def pod(name):
    return {'apiVersion': 'v1', 'kind': 'Pod',
            'metadata': {'name': name, 'labels': {LABEL: 'rollout'}},
            'spec': {'containers': [{'name': 'probe', 'image': 'registry.invalid/probe:1'}],
                     'automountServiceAccountToken': False, 'terminationGracePeriodSeconds': 0}}


class Probe:
    def __init__(self, api, namespace, run_id, renew_within):
        self.api = api
        self.namespace = namespace
        self.run_id = run_id
        self.renew_within = renew_within
        self.samples = []         # (time, live holder or '' or None when no API server answered, observed Lease or None)
        self.created = {}         # pod name -> time its creation was acknowledged
        self.bound = {}           # pod name -> (time first seen bound, node)
        self.failed_creates = 0   # creations an API server answered with an error
        self.unanswered = None    # the name of a creation no API server answered, tried again next
        self.unanswered_creates = 0

    def sample(self):
        now = time.time()
        status, lease = self.api.call('GET', LEASE)
        if status is None:
            self.samples.append((now, None, None))
        else:
            observed = observe(lease if status == 200 else None)
            self.samples.append((now, live_holder(observed, now, self.renew_within), observed))
        self.read_pods()
        return self.samples[-1][1]

    def read_pods(self):
        status, pods = self.api.call('GET', '/api/v1/namespaces/%s/pods?labelSelector=%s%%3Drollout'
                                     % (self.namespace, LABEL))
        if status != 200:
            return
        now = time.time()
        for item in pods.get('items') or []:
            name, node = item['metadata']['name'], (item.get('spec') or {}).get('nodeName')
            if node and name in self.created and name not in self.bound:
                self.bound[name] = (now, node)

    def create_pod(self):
        """Create the next pod. One that no API server answered (a time-out while the other server restarts) is
        sent again under the same name: AlreadyExists then says the first attempt made it."""
        retry = self.unanswered
        name = retry or 'rollout-probe-%s-%d' % (self.run_id, len(self.created) + self.failed_creates)
        status, answer = self.api.call('POST', '/api/v1/namespaces/%s/pods' % self.namespace, pod(name))
        self.unanswered = None
        if status == 201 or (retry and status == 409):
            self.created[name] = time.time()
        elif status is None:
            self.unanswered = name
            self.unanswered_creates += 1
        else:
            self.failed_creates += 1
            self.api.note('create', 'HTTP %s: %s' % (status, (answer or {}).get('message', '')))

    def handovers(self):
        """Each change of holder the samples show: who, the last act of the one before, the acquisition, the times."""
        out, last_renewal, released, previous = [], {}, {}, None
        for _t, _live, observed in self.samples:
            if observed is None:
                continue
            holder, renewed, acquired, _duration = observed
            if holder:
                if renewed is not None:
                    last_renewal[holder] = max(renewed, last_renewal.get(holder, renewed))
                if previous is not None and holder != previous and acquired is not None:
                    last_act = released.get(previous, last_renewal.get(previous))
                    if last_act is not None:
                        lapse = released.get(previous, last_act + self.renew_within)
                        out.append({'from': previous, 'to': holder, 'released': previous in released,
                                    'last_act': last_act, 'acquired': acquired,
                                    'seconds': round(acquired - last_act, 2),
                                    'without_leader_seconds': round(max(0.0, acquired - lapse), 2)})
                previous = holder
            elif previous is not None and renewed is not None and previous not in released:
                released[previous] = renewed  # a release empties the holder, stamping renewTime
        return out

    def figures(self, interval):
        answered = [(t, h) for t, h, _o in self.samples if h is not None]
        gaps, start, longest_run = 0, None, 0.0
        for t, holder in answered:
            if not holder and start is None:
                start, gaps = t, gaps + 1
            elif holder and start is not None:
                longest_run, start = max(longest_run, t - start), None
        if start is not None:
            longest_run = max(longest_run, answered[-1][0] - start)
        holders, last_live = [], {}
        for t, holder in answered:
            if holder:
                last_live[holder] = t
                if not holders or holders[-1] != holder:
                    holders.append(holder)
        handovers = self.handovers()
        durations = [o[3] for _t, _h, o in self.samples if o is not None and o[0] and o[3]]
        binds = [self.bound[n][0] - self.created[n] for n in self.bound]
        nodes = {}
        for _seen, node in self.bound.values():
            nodes[node] = nodes.get(node, 0) + 1
        return {
            'interval_seconds': interval,
            'seconds': round(self.samples[-1][0] - self.samples[0][0], 1) if self.samples else 0,
            'samples': len(self.samples),
            'samples_without_api': len(self.samples) - len(answered),
            'samples_without_leader': sum(1 for _t, h in answered if not h),
            'leaderless_runs': gaps,
            'longest_leaderless_run_seconds': round(longest_run, 2),
            'longest_without_leader_seconds': max([h['without_leader_seconds'] for h in handovers] + [round(longest_run, 2)]),
            'handovers': handovers,
            'longest_handover_seconds': max([h['seconds'] for h in handovers], default=None),
            'lease_duration_seconds': durations[-1] if durations else None,
            'renew_within_seconds': self.renew_within,
            'leaders_in_turn': holders,
            'last_live': last_live,
            'observations': [[round(t, 3)] + list(o) for t, _h, o in self.samples if o is not None],
            'pods_created': len(self.created),
            'pod_creates_refused': self.failed_creates,
            'pod_creates_unanswered': self.unanswered_creates,
            'pod_create_unresolved': self.unanswered,
            'pods_bound': len(self.bound),
            'unbound': sorted(set(self.created) - set(self.bound)),
            'longest_bind_seconds': round(max(binds), 2) if binds else None,
            'pods_per_node': nodes,
            'errors': self.api.errors,
        }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--server', action='append', required=True, help='an API server URL (repeat for each)')
    parser.add_argument('--ca', required=True)
    parser.add_argument('--cert', required=True)
    parser.add_argument('--key', required=True)
    parser.add_argument('--out', required=True)
    parser.add_argument('--stop', required=True)
    parser.add_argument('--namespace', default='default')
    parser.add_argument('--interval', type=float, default=0.5)
    parser.add_argument('--pod-every', type=float, default=2.0)
    parser.add_argument('--settle', type=float, default=90.0)
    parser.add_argument('--max-seconds', type=float, default=1800.0)
    # A stopped or starting API server refuses at once; a slow answer on a loaded machine is still an answer (1 s
    # counted one as "no API" while the other server was restarting, on a 2-core machine running four scenarios).
    parser.add_argument('--timeout', type=float, default=5.0, help='per request and server')
    parser.add_argument('--renew-within', type=float, default=4.0,
                        help='a holder is live when it renewed the Lease at most this many seconds ago')
    parser.add_argument('--ready', help='a file made once a sample has seen a live leader')
    args = parser.parse_args()

    probe = Probe(Api(args.server, args.ca, args.cert, args.key, args.timeout), args.namespace,
                  time.strftime('%H%M%S'), args.renew_within)
    began, next_pod = time.time(), 0.0
    while not os.path.exists(args.stop) and time.time() - began < args.max_seconds:
        tick = time.time()
        if tick >= next_pod:
            probe.create_pod()
            next_pod = tick + args.pod_every
        if probe.sample() and args.ready and not os.path.exists(args.ready):
            with open(args.ready, 'w') as f:
                f.write('%f\n' % tick)
        time.sleep(max(0.0, args.interval - (time.time() - tick)))
    if probe.unanswered:
        probe.create_pod()
    settle_until = time.time() + args.settle
    while set(probe.created) - set(probe.bound) and time.time() < settle_until:
        time.sleep(args.interval)
        probe.read_pods()
    with open(args.out + '.tmp', 'w') as f:
        json.dump(probe.figures(args.interval), f, indent=1, sort_keys=True)
    os.rename(args.out + '.tmp', args.out)


if __name__ == '__main__':
    main()
