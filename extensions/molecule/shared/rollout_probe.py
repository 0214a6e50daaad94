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

A leader is live at a sample when the Lease names a holder whose last renewal is younger than the
Lease's duration (the rule of client-go's leader election). A scheduler that stops releases its
Lease (holder emptied), and another takes it on its next retry, so a handover shows as a short
run of samples without a live leader: the figures give the longest such run.
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


def live_holder(lease, now):
    """The Lease's holder when its last renewal is younger than its duration, else ''."""
    spec = (lease or {}).get('spec') or {}
    holder = spec.get('holderIdentity') or ''
    if not holder or not spec.get('renewTime'):
        return ''
    return holder if now - parse_time(spec['renewTime']) <= spec.get('leaseDurationSeconds', 15) else ''


def pod(name):
    return {'apiVersion': 'v1', 'kind': 'Pod',
            'metadata': {'name': name, 'labels': {LABEL: 'rollout'}},
            'spec': {'containers': [{'name': 'probe', 'image': 'registry.invalid/probe:1'}],
                     'automountServiceAccountToken': False, 'terminationGracePeriodSeconds': 0}}


class Probe:
    def __init__(self, api, namespace, run_id):
        self.api = api
        self.namespace = namespace
        self.run_id = run_id
        self.samples = []         # (time, holder or '' or None when no API server answered)
        self.created = {}         # pod name -> time its creation was acknowledged
        self.bound = {}           # pod name -> (time first seen bound, node)
        self.failed_creates = 0

    def sample(self):
        now = time.time()
        status, lease = self.api.call('GET', LEASE)
        if status is None:
            self.samples.append((now, None))
        else:
            self.samples.append((now, live_holder(lease if status == 200 else None, now)))
        self.read_pods()

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
        name = 'rollout-probe-%s-%d' % (self.run_id, len(self.created) + self.failed_creates)
        status, answer = self.api.call('POST', '/api/v1/namespaces/%s/pods' % self.namespace, pod(name))
        if status == 201:
            self.created[name] = time.time()
        else:
            self.failed_creates += 1
            if status is not None:
                self.api.note('create', 'HTTP %s: %s' % (status, (answer or {}).get('message', '')))

    def figures(self, interval):
        answered = [(t, h) for t, h in self.samples if h is not None]
        gaps, start, longest = 0, None, 0.0
        for t, holder in answered:
            if not holder and start is None:
                start, gaps = t, gaps + 1
            elif holder and start is not None:
                longest, start = max(longest, t - start), None
        if start is not None:
            longest = max(longest, answered[-1][0] - start)
        holders = []
        for holder in (h for _t, h in answered):
            if holder and (not holders or holders[-1] != holder):
                holders.append(holder)
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
            'longest_without_leader_seconds': round(longest, 2),
            'leaders_in_turn': holders,
            'pods_created': len(self.created),
            'pod_creates_refused': self.failed_creates,
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
    parser.add_argument('--timeout', type=float, default=1.0, help='per request and server')
    args = parser.parse_args()

    probe = Probe(Api(args.server, args.ca, args.cert, args.key, args.timeout), args.namespace,
                  time.strftime('%H%M%S'))
    began, next_pod = time.time(), 0.0
    while not os.path.exists(args.stop) and time.time() - began < args.max_seconds:
        tick = time.time()
        if tick >= next_pod:
            probe.create_pod()
            next_pod = tick + args.pod_every
        probe.sample()
        time.sleep(max(0.0, args.interval - (time.time() - tick)))
    settle_until = time.time() + args.settle
    while set(probe.created) - set(probe.bound) and time.time() < settle_until:
        time.sleep(args.interval)
        probe.read_pods()
    with open(args.out + '.tmp', 'w') as f:
        json.dump(probe.figures(args.interval), f, indent=1, sort_keys=True)
    os.rename(args.out + '.tmp', args.out)


if __name__ == '__main__':
    main()
