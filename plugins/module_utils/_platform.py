# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""What differs between the control planes this collection knows: one record per platform.

``k3s_info`` chooses the record once, from what runs on the node (``for_binary`` for a service's
command, ``PLATFORMS`` in order for ``platform: auto``), and returns it resolved for that node
(``Platform.facts``: the data directory, binary, service and node name filled in). Modules and
roles read its fields; nothing branches on a platform's name. A new platform is one more record
in ``PLATFORMS`` (and its double in the tests). Pure data: no I/O, no Ansible import.

Field values may hold ``{data_dir}``, ``{binary}``, ``{service}`` and ``{node}``, which
``Platform.facts`` (and ``Platform.format``) fill in.
"""

from __future__ import annotations

import os
from collections import namedtuple

FIELDS = (
    'name',                  # the value of k3s_info's and extender_status's platform option
    'title',                 # how messages name it
    'binary',                # the basename of the binary its services start; '' when no service starts the scheduler
    'services',              # the services as its installers name them: server first, then agent
    'data_dir',              # the default data directory ('' when it has none)
    'config_file',           # the default config file its binary reads ('' when none)
    'config_env',            # the environment variable that names another config file
    'env_prefix',            # the prefix of its binary's environment variables (K3S_NODE_NAME, ...)
    'admin_kubeconfig',      # the administrator's kubeconfig it writes (default)
    'kubectl',               # the words a kubectl command starts with
    'kubectl_on_path',       # true: the node's PATH is asked for `kubectl` first, `kubectl` is the fallback
    'scheduler_kubeconfig',  # the kubeconfig it gives kube-scheduler (default)
    'scheduler_config',      # where our scheduler config goes when the scheduler has none
    'scheduler_flag',        # how a scheduler flag reaches the scheduler: service_arg (a --kube-scheduler-arg of
                             # the service: unit, drop-in or config.yaml.d) | static_pod (the pod manifest's command)
    'scheduler_mount_arg',   # the service argument that mounts a file into the scheduler's pod ('' when not needed)
    'scheduler_runs',        # service (inside the service's process) | static_pod (a pod the kubelet runs)
    'restart',               # what applies a changed flag: service (restart it) | static_pod (the kubelet re-reads
                             # a changed manifest; the scheduler process is stopped for a changed config alone)
    'scheduler_name',        # how the scheduler names itself (readiness entries, leader lease holder)
    'scheduler_manifest',    # the scheduler's static pod manifest ('' when the scheduler is no pod)
    'scheduler_cert',        # the serving certificate the platform issues the scheduler ('' when none)
    'scheduler_ca',          # the CA that signs scheduler_cert ('' when none)
    'server_ca',             # the cluster's server CA
    'client_ca',             # the signer of kubernetes.io/kube-apiserver-client
    'crictl_dir',            # where it ships crictl ('' when it does not)
    'crictl_endpoint',       # the runtime endpoint its crictl needs ('' for crictl's default)
    'registries_file',       # containerd's registry settings its agent reads at start ('' when it has none)
)

# Fields whose value is a path or words that facts() fills in.
_TEMPLATES = ('kubectl', 'scheduler_kubeconfig', 'scheduler_config', 'scheduler_name', 'scheduler_manifest',
              'scheduler_cert', 'scheduler_ca', 'server_ca', 'client_ca', 'crictl_dir')
_UNDER_DATA_DIR = '{data_dir}/'


class Platform(namedtuple('Platform', FIELDS)):
    """One platform's record (immutable). ``facts()`` gives it as a dict for one node."""

    __slots__ = ()

    @property
    def server_service(self):
        return self.services[0]

    @property
    def agent_service(self):
        return self.services[-1]

    def format(self, template, data_dir=None, binary=None, service=None, node=''):
        """``template`` with the node's values (defaults: the record's data dir, binary and server service); a path
        under ``{data_dir}/`` is joined to it as os.path.join does."""
        data_dir = self.data_dir if data_dir is None else data_dir
        values = dict(data_dir=data_dir, binary=self.binary if binary is None else binary,
                      service=self.server_service if service is None else service, node=node)
        if template.startswith(_UNDER_DATA_DIR):
            return os.path.join(data_dir, template[len(_UNDER_DATA_DIR):].format(**values))
        return template.format(**values)

    def kube_scheduler(self, service, node):
        """The scheduler's name on ``node`` when ``service`` runs it: ``k3s@node-1``, ``kube-scheduler-node-1``."""
        return self.format(self.scheduler_name, service=service, node=node)

    def facts(self, data_dir=None, binary=None, service=None, node=''):
        """The record as a dict, its templates filled in with this node's values (a list for kubectl)."""
        out = {}
        for field in FIELDS:
            value = getattr(self, field)
            if field == 'kubectl':
                value = [self.format(word, data_dir, binary, service, node) for word in value]
            elif field in _TEMPLATES:
                value = self.format(value, data_dir, binary, service, node)
            elif isinstance(value, tuple):
                value = list(value)
            out[field] = value
        return out


K3S = Platform(
    name='k3s', title='k3s', binary='k3s', services=('k3s', 'k3s-agent'),
    data_dir='/var/lib/rancher/k3s', config_file='/etc/rancher/k3s/config.yaml', config_env='K3S_CONFIG_FILE',
    env_prefix='K3S_', admin_kubeconfig='/etc/rancher/k3s/k3s.yaml',
    kubectl=('{binary}', 'kubectl'), kubectl_on_path=False,
    scheduler_kubeconfig='{data_dir}/server/cred/scheduler.kubeconfig',
    scheduler_config='/etc/rancher/k3s/kube-scheduler/config.yaml',
    scheduler_flag='service_arg', scheduler_mount_arg='', scheduler_runs='service', restart='service',
    scheduler_name='{service}@{node}', scheduler_manifest='',
    scheduler_cert='{data_dir}/server/tls/kube-scheduler/kube-scheduler.crt',
    scheduler_ca='{data_dir}/server/tls/server-ca.crt',
    server_ca='{data_dir}/server/tls/server-ca.crt', client_ca='{data_dir}/server/tls/client-ca.crt',
    crictl_dir='', crictl_endpoint='', registries_file='/etc/rancher/k3s/registries.yaml',
)

# RKE2 is built on k3s: the same config file rules and data dir layout under its own names; its
# scheduler is a static pod it writes at every start from its --kube-scheduler-arg values, which
# mounts only the files named in arguments (hence --kube-scheduler-extra-mount).
RKE2 = Platform(
    name='rke2', title='RKE2', binary='rke2', services=('rke2-server', 'rke2-agent'),
    data_dir='/var/lib/rancher/rke2', config_file='/etc/rancher/rke2/config.yaml', config_env='RKE2_CONFIG_FILE',
    env_prefix='RKE2_', admin_kubeconfig='/etc/rancher/rke2/rke2.yaml',
    kubectl=('{data_dir}/bin/kubectl',), kubectl_on_path=False,
    scheduler_kubeconfig='{data_dir}/server/cred/scheduler.kubeconfig',
    scheduler_config='/etc/rancher/rke2/kube-scheduler/config.yaml',
    scheduler_flag='service_arg', scheduler_mount_arg='--kube-scheduler-extra-mount', scheduler_runs='static_pod',
    restart='service', scheduler_name='kube-scheduler-{node}',
    scheduler_manifest='{data_dir}/agent/pod-manifests/kube-scheduler.yaml',
    scheduler_cert='{data_dir}/server/tls/kube-scheduler/kube-scheduler.crt',
    scheduler_ca='{data_dir}/server/tls/server-ca.crt',
    server_ca='{data_dir}/server/tls/server-ca.crt', client_ca='{data_dir}/server/tls/client-ca.crt',
    crictl_dir='{data_dir}/bin', crictl_endpoint='unix:///run/k3s/containerd/containerd.sock',
    registries_file='/etc/rancher/rke2/registries.yaml',
)

# kubeadm: no service of its own; the kubelet runs the scheduler from a static pod manifest, whose
# --kubeconfig names the scheduler's kubeconfig (the default below is kubeadm's).
KUBEADM = Platform(
    name='kubeadm', title='kubeadm', binary='', services=('kubelet',),
    data_dir='', config_file='', config_env='', env_prefix='', admin_kubeconfig='/etc/kubernetes/admin.conf',
    kubectl=('/usr/bin/kubectl',), kubectl_on_path=True,
    scheduler_kubeconfig='/etc/kubernetes/scheduler.conf',
    scheduler_config='/etc/kubernetes/kube-scheduler/config.yaml',
    scheduler_flag='static_pod', scheduler_mount_arg='', scheduler_runs='static_pod', restart='static_pod',
    scheduler_name='kube-scheduler-{node}',
    scheduler_manifest='/etc/kubernetes/manifests/kube-scheduler.yaml',
    scheduler_cert='', scheduler_ca='',
    server_ca='/etc/kubernetes/pki/ca.crt', client_ca='/etc/kubernetes/pki/ca.crt',
    crictl_dir='', crictl_endpoint='', registries_file='',
)

# In the order platform=auto looks for them.
PLATFORMS = {p.name: p for p in (K3S, RKE2, KUBEADM)}
# Every platform's environment prefix: what a child of this run must not inherit from Ansible's environment.
ENV_PREFIXES = tuple(p.env_prefix for p in PLATFORMS.values() if p.env_prefix)


def get(name):
    """The record of the platform ``name``; KeyError names the known ones."""
    try:
        return PLATFORMS[name]
    except KeyError:
        raise KeyError('unknown platform %r (known: %s)' % (name, ', '.join(PLATFORMS))) from None


def for_binary(argv0):
    """The platform whose services start ``argv0`` (by its basename); k3s for any other binary."""
    base = os.path.basename(argv0 or '')
    for platform in PLATFORMS.values():
        if platform.binary and platform.binary == base:
            return platform
    return K3S


def names():
    """The platforms' names, in the order platform=auto looks for them."""
    return list(PLATFORMS)


def titles():
    """'k3s, RKE2 or kubeadm': the platforms as a message lists them."""
    t = [p.title for p in PLATFORMS.values()]
    return t[0] if len(t) == 1 else '%s or %s' % (', '.join(t[:-1]), t[-1])


# How a platform whose scheduler_flag is service_arg passes a scheduler config to kube-scheduler.
SCHEDULER_CONFIG_ARG = '--kube-scheduler-arg=config='


def scheduler_settings(node, config_path='', kubernetes_version='auto', kubeconfig=''):
    """What a change of the scheduler's extenders works with on a node, from the node as ``k3s_info`` read it (its
    result, with ``platform_record``): the same for the role ``scheduler_extender`` (filter ``scheduler_settings``) and
    for ``scheduler_files`` with its ``read``, so that a plan and the change it announces cannot differ.

    ``ours``: where our scheduler config goes when the scheduler is given none (``config_path``, else the platform's);
    ``target``: the scheduler config a run works with (the one the scheduler is already given, else ``ours``);
    ``flag_arg``: the service argument that passes ``ours`` to the scheduler - '' when the scheduler already has a
    config of its own (ours is merged into it) or the platform passes it otherwise (kubeadm's static pod);
    ``kubernetes_version``: the scheduler's (``auto``: the one read); ``kubeconfig``: the one our scheduler config
    names (not given: the platform's for the scheduler).
    """
    record = node.get('platform_record') or {}
    ours = config_path or record.get('scheduler_config') or ''
    target = node.get('scheduler_config') or ours
    passed_as_arg = target == ours and record.get('scheduler_flag') == 'service_arg'
    return {
        'ours': ours,
        'target': target,
        'flag_arg': SCHEDULER_CONFIG_ARG + ours if passed_as_arg else '',
        'kubernetes_version': (node.get('kubernetes_version') or '') if kubernetes_version == 'auto' else kubernetes_version,
        'kubeconfig': kubeconfig or node.get('scheduler_kubeconfig') or '',
    }
