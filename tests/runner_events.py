# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Check what ansible-runner recorded of one playbook run (tests/product.sh).

    python3 tests/runner_events.py ARTIFACT_DIR STDOUT SECRETS --hosts H... [--changed TASK...] [--ok TASK...]

ARTIFACT_DIR is ``<private data dir>/artifacts/<ident>``, STDOUT what ansible-runner printed, SECRETS
a file holding one secret value a line. Checked: the run's ``rc`` is 0 and its ``status``
"successful"; the event stream ends in ``playbook_on_stats`` naming every host with no failures
and none unreachable, and holds no failed (unignored) or unreachable result; each ``--changed``
task has a ``runner_on_ok`` event with ``changed: true`` for every host, each ``--ok`` task a
``runner_on_ok`` event for every host; no secret appears in any file under ARTIFACT_DIR (the event
files, stdout, the command and its environment) nor in STDOUT. Exit 1 naming what is wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def load_events(artifact_dir):
    """The run's events in their order (``counter``)."""
    events_dir = os.path.join(artifact_dir, 'job_events')
    events = []
    for name in sorted(os.listdir(events_dir)):
        if name.endswith('.json'):
            with open(os.path.join(events_dir, name), encoding='utf-8') as f:
                events.append(json.load(f))
    return sorted(events, key=lambda e: e.get('counter', 0))


def task_name(event):
    """The task's own name, without the ``role : `` prefix Ansible puts before a role's tasks."""
    return (event.get('event_data') or {}).get('task', '').split(' : ', 1)[-1]


def check_results(events, hosts, changed, ok):
    problems = []
    if not events:
        return ['no event in job_events']
    for event in events:
        data = event.get('event_data') or {}
        if event.get('event') == 'runner_on_unreachable':
            problems.append('%s unreachable in task %r (event %s)' % (data.get('host'), task_name(event), event.get('counter')))
        if event.get('event') == 'runner_on_failed' and not data.get('ignore_errors'):
            problems.append('%s failed in task %r (event %s)' % (data.get('host'), task_name(event), event.get('counter')))
    oks = [e for e in events if e.get('event') == 'runner_on_ok']
    for tasks, want_changed in ((changed, True), (ok, False)):
        for task in tasks:
            for host in hosts:
                found = [e for e in oks if task_name(e) == task and e['event_data'].get('host') == host]
                if want_changed:
                    found = [e for e in found if (e['event_data'].get('res') or {}).get('changed') is True]
                if not found:
                    problems.append('no runner_on_ok event%s for %s in task %r'
                                    % (' with changed: true' if want_changed else '', host, task))
    last = events[-1]
    if last.get('event') != 'playbook_on_stats':
        problems.append('the last event is %r, not playbook_on_stats' % last.get('event'))
    else:
        stats = last.get('event_data') or {}
        for host in hosts:
            if host not in (stats.get('ok') or {}):
                problems.append('playbook_on_stats does not name %s among the hosts ok: %s' % (host, stats.get('ok')))
            if changed and host not in (stats.get('changed') or {}):
                problems.append('playbook_on_stats does not count %s as changed: %s' % (host, stats.get('changed')))
        for key in ('failures', 'dark'):
            bad = {h: n for h, n in (stats.get(key) or {}).items() if n}
            if bad:
                problems.append('playbook_on_stats: %s %s' % (key, bad))
    return problems


def check_secrets(paths, secrets):
    problems = []
    for path in paths:
        with open(path, 'rb') as f:
            data = f.read()
        for index, secret in enumerate(secrets, 1):
            if secret.encode() in data:
                problems.append('secret %d of %d is in %s' % (index, len(secrets), path))
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('artifact_dir')
    parser.add_argument('stdout')
    parser.add_argument('secrets')
    parser.add_argument('--hosts', nargs='+', required=True)
    parser.add_argument('--changed', nargs='*', default=[])
    parser.add_argument('--ok', nargs='*', default=[])
    args = parser.parse_args(argv)

    problems = []
    with open(os.path.join(args.artifact_dir, 'rc'), encoding='utf-8') as f:
        rc = f.read().strip()
    with open(os.path.join(args.artifact_dir, 'status'), encoding='utf-8') as f:
        status = f.read().strip()
    if rc != '0':
        problems.append('rc is %s, not 0' % rc)
    if status != 'successful':
        problems.append('status is %r, not "successful"' % status)

    events = load_events(args.artifact_dir)
    problems += check_results(events, args.hosts, args.changed, args.ok)

    with open(args.secrets, encoding='utf-8') as f:
        secrets = [line.strip() for line in f if line.strip()]
    if not secrets or any(len(s) < 8 for s in secrets):
        problems.append('%s must list the run\'s secrets, one a line, each of 8 characters or more' % args.secrets)
    files = [args.stdout] + [os.path.join(walked[0], name) for walked in os.walk(args.artifact_dir) for name in walked[2]]
    problems += check_secrets(files, secrets)

    if problems:
        print('runner_events: %s: FAILED\n  %s' % (args.artifact_dir, '\n  '.join(problems)), file=sys.stderr)
        return 1
    print('runner_events: %s: rc 0, successful; %d events; %d hosts ok in playbook_on_stats, no failure; '
          '%d changed and %d ok tasks on every host; none of %d secrets in %d files'
          % (args.artifact_dir, len(events), len(args.hosts), len(args.changed), len(args.ok), len(secrets), len(files)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
