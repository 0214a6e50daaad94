# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the scenarios' testinfra checks read off a node, in one place."""

from __future__ import annotations

import datetime
import itertools
import json
import os

import yaml

OUR_CONFIG = '/etc/rancher/k3s/kube-scheduler/config.yaml'
OUR_DROPIN_CONFIG = '/etc/rancher/k3s/config.yaml.d/99-baremetal-k3s-scheduler.yaml'
OUR_FLAG = '--kube-scheduler-arg=config=' + OUR_CONFIG
EXTENDER = 'http://127.0.0.1:8889'
KUBECTL = 'k3s kubectl --kubeconfig /etc/rancher/k3s/k3s.yaml '


def systemd_argv(host, unit):
    """ExecStart's argv as systemd parsed it, over D-Bus (systemctl show does not quote words)."""
    obj = json.loads(host.check_output(
        'busctl --json=short call org.freedesktop.systemd1 /org/freedesktop/systemd1 '
        'org.freedesktop.systemd1.Manager LoadUnit s %s', unit))['data'][0]
    data = json.loads(host.check_output(
        'busctl --json=short get-property org.freedesktop.systemd1 %s org.freedesktop.systemd1.Service ExecStart', obj))
    return data['data'][0][1]


FINGERPRINT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fingerprint.py')


def recorded(host, path):
    """A fingerprint fingerprint.py recorded on the node: {'roots', 'paths', 'entries'}."""
    return json.loads(host.file(path).content_string)


def recorded_sha256(fingerprint, path):
    """The sha256 a fingerprint holds for a regular file at ``path``; None when it was absent (or not a file)."""
    found = fingerprint['entries'][path]
    return found['sha256'] if found and found['type'] == 'file' else None


def written_paths(host):
    """{path: first action reported} of every path the collection reported writing on ``host`` in this
    scenario (callback bk3s_written: the ``files`` of its modules' results, their backups as created)."""
    directory = os.environ.get('BK3S_WRITTEN_DIR') or os.path.join(os.environ['MOLECULE_EPHEMERAL_DIRECTORY'], 'bk3s-written')
    try:
        with open(os.path.join(directory, host.backend.get_hostname() + '.json'), encoding='utf-8') as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def file_differences(host, recorded_path):
    """fingerprint.py compare on the node: every path that differs from the fingerprint at ``recorded_path``
    (changed, appeared, disappeared, written where it did not look), over its roots and paths and every
    path the collection reported writing."""
    with open(FINGERPRINT, encoding='utf-8') as f:
        source = f.read()
    args = ['compare', recorded_path, '/var/tmp/bk3s-verify.json']
    for path, action in sorted(written_paths(host).items()):
        args += ['--created' if action == 'created' else '--path', path]
    out = host.check_output('python3 -c %s' + ' %s' * len(args), source, *args)
    return json.loads(out)['differences']


def launcher_state(host):
    """The k3s launcher's state file: pid, start times, effective scheduler args."""
    return json.loads(host.file('/run/k3s-double/state.json').content_string)


def launcher_events(host):
    """Every start/ready/scheduler/exit event of the launcher on this node, oldest first."""
    f = host.file('/var/log/k3s-double/events.jsonl')
    if not f.exists:
        return []
    return [json.loads(line) for line in f.content_string.splitlines() if line.strip()]


def event_time(text):
    """A launcher event's time (ISO 8601, UTC) as an aware datetime."""
    return datetime.datetime.fromisoformat(text.replace('Z', '+00:00'))


def down_windows(events, until=None):
    """[(went down, scheduler serving again)] for every stop of k3s in one node's launcher events (those before
    ``until``, an aware datetime, when given); a stop never followed by a scheduler start ends at the end of time."""
    windows, down = [], None
    for e in events:
        at = event_time(e['time'])
        if until is not None and at >= until:
            break
        if e['event'] in ('stopping', 'exit') and down is None:
            down = at
        elif e['event'] == 'scheduler_started' and down is not None:
            windows.append((down, at))
            down = None
    if down is not None:
        windows.append((down, datetime.datetime.max.replace(tzinfo=datetime.timezone.utc)))
    return windows


def longest_overlap(windows):
    """The longest time two nodes were down together, of {node: down_windows(...)}; 0 when never."""
    longest = datetime.timedelta(0)
    for (dummy, wa), (dummy2, wb) in itertools.combinations(windows.items(), 2):
        for (s1, e1), (s2, e2) in itertools.product(wa, wb):
            longest = max(longest, min(e1, e2) - max(s1, s2))
    return longest


def yaml_file(host, path):
    return yaml.safe_load(host.file(path).content_string)


def extender_urls(host, path):
    return [e['urlPrefix'] for e in (yaml_file(host, path) or {}).get('extenders') or []]


def extender_calls(host, verb=None):
    """The reference extender's JSON-line log, optionally only one verb."""
    f = host.file('/var/log/reference-extender.jsonl')
    if not f.exists:
        return []
    calls = [json.loads(line) for line in f.content_string.splitlines() if line.strip()]
    return [c for c in calls if verb is None or c.get('verb') == verb]


def scheduler_healthy(host):
    return host.run('curl -sk --max-time 5 https://127.0.0.1:10259/healthz').stdout == 'ok'


KUBECTLS = [  # (admin kubeconfig, kubectl) of k3s, RKE2, kubeadm
    ('/etc/rancher/k3s/k3s.yaml', 'k3s kubectl'),
    ('/etc/rancher/rke2/rke2.yaml', '/var/lib/rancher/rke2/bin/kubectl'),
    ('/etc/kubernetes/admin.conf', '/usr/bin/kubectl'),
]


def kubectl(host):
    """The kubectl command line of the node's platform, with its admin kubeconfig."""
    for kubeconfig, command in KUBECTLS:
        if host.file(kubeconfig).exists:
            return '%s --kubeconfig %s ' % (command, kubeconfig)
    raise AssertionError('no admin kubeconfig on the node (looked for %s)' % ', '.join(k for k, dummy in KUBECTLS))


def kubectl_json(host, args):
    return json.loads(host.check_output(kubectl(host) + args + ' -o json'))


def pods_state(host):
    """The static-pod runner's state (kubelet double or rke2 server): pods, pids, restarts, files seen."""
    return json.loads(host.file('/run/k3s-double/pods.json').content_string)


def scheduler_pod(host):
    (pod,) = [p for p in pods_state(host)['pods'] if p['name'] == 'kube-scheduler']
    return pod


def process_argv(host, pid):
    return host.file('/proc/%d/cmdline' % pid).content.split(b'\0')[:-1]


def readiness_nodes(host, name='extender-readiness', namespace='default'):
    """The nodes list of the readiness ConfigMap CSI Baremetal's extender reads."""
    cm = kubectl_json(host, 'get configmap -n %s %s' % (namespace, name))
    return yaml.safe_load(cm['data']['nodes.yaml'])['nodes']
