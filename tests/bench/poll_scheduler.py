# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs on a node: asks kube-scheduler's /healthz every 0.1 s and appends one line per change.

Usage: python3 poll_scheduler.py LOG.  Each line is "<unix time> up|down"; the first line is
the state at start. Host and containers share one clock, so the bench lines these up with
what it did and when. Stops when LOG is removed.
"""

import os
import ssl
import sys
import time
import urllib.request

URL = 'https://127.0.0.1:10259/healthz'
INTERVAL = 0.1


def healthy(ctx):
    try:
        with urllib.request.urlopen(URL, timeout=0.5, context=ctx) as resp:
            return resp.read() == b'ok'
    except Exception:  # pylint: disable=broad-except  # any failure means "not serving"
        return False


def main(log):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    last = None
    with open(log, 'a') as out:
        while os.path.exists(log):
            state = 'up' if healthy(ctx) else 'down'
            if state != last:
                out.write('%.3f %s\n' % (time.time(), state))
                out.flush()
                last = state
            time.sleep(INTERVAL)


if __name__ == '__main__':
    main(sys.argv[1])
