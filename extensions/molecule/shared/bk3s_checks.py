# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the scenarios' testinfra checks read off a node, in one place."""

from __future__ import annotations

import json

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


def launcher_state(host):
    """The k3s launcher's state file: pid, start times, effective scheduler args."""
    return json.loads(host.file('/run/k3s-double/state.json').content_string)


def launcher_events(host):
    """Every start/ready/scheduler/exit event of the launcher on this node, oldest first."""
    f = host.file('/var/log/k3s-double/events.jsonl')
    if not f.exists:
        return []
    return [json.loads(line) for line in f.content_string.splitlines() if line.strip()]


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
