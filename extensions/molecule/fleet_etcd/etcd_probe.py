# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Sample this server's etcd member every --interval seconds until --stop exists (standard library only).

Each sample is one JSON line in --out: the time, whether the member's /health answered
{"health":"true"} (etcd answers true only with a leader and the member able to serve a
linearizable read: quorum), and etcd_server_has_leader from its metrics. The k3s double serves
both on http://127.0.0.1:2381, as k3s's embedded etcd does (listen-metrics-urls). A member that
does not answer (its server restarting) gives health null.
"""

import argparse
import json
import os
import time
import urllib.request


def get(url, timeout):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.read().decode('utf-8', 'replace')
    except OSError:
        return None


def sample(base, timeout):
    health = get(base + '/health', timeout)
    metrics = get(base + '/metrics', timeout) or ''
    has_leader = None
    for line in metrics.splitlines():
        if line.startswith('etcd_server_has_leader '):
            has_leader = line.split()[1] == '1'
    healthy = None if health is None else json.loads(health).get('health') == 'true'
    return {'t': time.time(), 'health': healthy, 'has_leader': has_leader}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--out', required=True)
    parser.add_argument('--stop', required=True)
    parser.add_argument('--base', default='http://127.0.0.1:2381')
    parser.add_argument('--interval', type=float, default=0.5)
    parser.add_argument('--timeout', type=float, default=0.4)
    parser.add_argument('--max-seconds', type=float, default=1800.0)
    args = parser.parse_args()
    began = time.time()
    with open(args.out, 'a', encoding='utf-8') as out:
        while not os.path.exists(args.stop) and time.time() - began < args.max_seconds:
            tick = time.time()
            out.write(json.dumps(sample(args.base, args.timeout)) + '\n')
            out.flush()
            time.sleep(max(0.0, args.interval - (time.time() - tick)))


if __name__ == '__main__':
    main()
