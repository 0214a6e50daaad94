# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.k3s_info``: which control plane runs on the node, and how its scheduler starts.

``gather(view, params)`` reads the node through the view and returns a Plan with no changes:
its ``facts`` are the module's result. k3s and RKE2 are read as their services start them
(``_service``); kubeadm from the kube-scheduler static pod manifest.
"""

from __future__ import annotations

import os
import re

from ansible_collections.baremetal.k3s.plugins.module_utils import _goyaml as goyaml
from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config as k3s_config
from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets as secrets
from ansible_collections.baremetal.k3s.plugins.module_utils import _service as services
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Plan, PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._systemd_unit import expand_argv

SCHEDULER_FLAG = 'kube-scheduler-arg'
_VERSION_RE = re.compile(r'\b(v\d+\.\d+\.\d+[^\s()]*)')
SERVICES = {'k3s': ['k3s', 'k3s-agent'], 'rke2': ['rke2-server', 'rke2-agent']}
DATA_DIRS = {'k3s': '/var/lib/rancher/k3s', 'rke2': '/var/lib/rancher/rke2'}
ADMIN_KUBECONFIGS = {'k3s': '/etc/rancher/k3s/k3s.yaml', 'rke2': '/etc/rancher/rke2/rke2.yaml'}
KUBEADM_MANIFEST = '/etc/kubernetes/manifests/kube-scheduler.yaml'
KUBEADM_ADMIN = '/etc/kubernetes/admin.conf'
KUBEADM_KUBELET_CONF = '/etc/kubernetes/kubelet.conf'
# kubeadm's packages install kubectl there; the node's PATH is asked first.
KUBEADM_KUBECTL = '/usr/bin/kubectl'
# The scheduler's serving certificate k3s issues from its server CA and passes as --tls-cert-file
# (k3s-io/k3s#12172: 1.30.13, 1.31.9, 1.32.5, 1.33.1 and every later minor), under <data-dir>.
SCHEDULER_SERVING_CERT = ('server', 'tls', 'kube-scheduler', 'kube-scheduler.crt')
SERVER_CA = ('server', 'tls', 'server-ca.crt')
SCHEDULER_CERT_SINCE = {30: 13, 31: 9, 32: 5, 33: 1}
# RKE2 runs the scheduler as a static pod it writes at every start: its arguments say which certificate it serves.
RKE2_SCHEDULER_MANIFEST = ('agent', 'pod-manifests', 'kube-scheduler.yaml')
_KUBE_VERSION_RE = re.compile(r'^v(\d+)\.(\d+)\.(\d+)')


def parse_version(text):
    """(version, kubernetes_version) from the first line of ``k3s --version``; ('', '') when it holds none."""
    first = (text or '').strip().split('\n', 1)[0]
    m = _VERSION_RE.search(first)
    if not m:
        return '', ''
    version = m.group(1)
    return version, version.split('+', 1)[0]


def _empty(service, hostname, platform='k3s'):
    return {
        'changed': False, 'installed': False, 'platform': platform, 'init': '', 'service': services.short_name(service),
        'manifest_path': '', 'data_dir': '', 'scheduler_kubeconfig': '', 'admin_kubeconfig': '', 'kubectl': [],
        'unit_path': '', 'dropins': [], 'unit_writable': False, 'node_role': '', 'argv': [], 'k3s_args': [],
        'config_file': '', 'config_files': [], 'config_dir_writable': False, 'scheduler_args': [],
        'scheduler_config': '', 'scheduler_config_source': '', 'scheduler_ca_file': '', 'version': '',
        'kubernetes_version': '',
        'active': False, 'main_pid': 0, 'node_name': hostname.strip().lower(),
    }


def _running(view, init):
    """(active, main_pid) of the service."""
    if init.kind == 'systemd':
        props = services.systemctl_show(view, init.service, 'ActiveState', 'MainPID')
        try:
            pid = int(props.get('MainPID') or 0)
        except ValueError:
            pid = 0
        return props.get('ActiveState') == 'active', pid
    rc, dummy, dummy2 = view.run(['rc-service', init.service, 'status'])
    return rc == 0, services.main_pid(view, init) or 0


def service_kubectl(platform, binary, data_dir):
    """The kubectl a k3s or RKE2 install ships: k3s's is a subcommand of its binary, RKE2's a file in its data dir."""
    if platform == 'rke2':
        return [os.path.join(data_dir, 'bin', 'kubectl')]
    return [binary, 'kubectl']


def kubeadm_kubectl(view):
    """kubeadm's kubectl: the one on the node's PATH, else where kubeadm's packages put it."""
    return [view.which('kubectl') or KUBEADM_KUBECTL]


def _last_flag(args, *names):
    values = k3s_config.flag_values(args, *names)
    return values[-1] if values else ''


def has_scheduler_cert(kube_version):
    """False when ``kube_version`` (v1.31.4) is a k3s release older than the scheduler's serving certificate; True
    for later ones and for a version that cannot be read (the certificate file decides then)."""
    m = _KUBE_VERSION_RE.match(kube_version or '')
    if not m:
        return True
    major, minor, patch = (int(g) for g in m.groups())
    if major != 1 or minor > max(SCHEDULER_CERT_SINCE):
        return major >= 1
    return minor in SCHEDULER_CERT_SINCE and patch >= SCHEDULER_CERT_SINCE[minor]


def _scheduler_arg(scheduler_args, name):
    """The last value a ``--kube-scheduler-arg`` gives ``name`` (k3s strips leading dashes), or None."""
    value = None
    for arg in scheduler_args:
        key, sep, rest = arg.partition('=')
        if sep and key.lstrip('-').rstrip('+-') == name:
            value = rest
    return value


def scheduler_ca_file(view, platform, data_dir, kube_version, scheduler_args):
    """The CA that signs the certificate the scheduler serves on :10259, when the node shows it; '' otherwise.

    k3s: its server CA, when k3s issued ``server/tls/kube-scheduler/kube-scheduler.crt`` (its release passes that
    file to the scheduler) and no ``--kube-scheduler-arg`` names another one. RKE2: the same, when the scheduler's
    static pod (written at RKE2's last start) passes that certificate.
    """
    cert = os.path.join(data_dir, *SCHEDULER_SERVING_CERT)
    ca = os.path.join(data_dir, *SERVER_CA)
    if not (view.isfile(cert) and view.isfile(ca)):
        return ''
    if platform == 'rke2':
        data = view.read(os.path.join(data_dir, *RKE2_SCHEDULER_MANIFEST))
        try:
            pod = goyaml.load_json(data, strict=True) if data is not None else None
        except goyaml.GoYamlError:
            return ''
        container = _scheduler_container(pod) if isinstance(pod, dict) else None
        if container is None:
            return ''
        argv = [str(a) for a in (container.get('command') or []) + (container.get('args') or [])]
        return ca if _last_flag(argv[1:], 'tls-cert-file') == cert else ''
    given = _scheduler_arg(scheduler_args, 'tls-cert-file')
    if given not in (None, cert) or not has_scheduler_cert(kube_version):
        return ''
    return ca


def gather_service(view, service, found=None):
    """(facts, warnings) for a k3s or RKE2 ``service``; a ServiceError for what k3s or systemd would refuse too.

    The secret values of the command line, the environment and the config files go into ``found``;
    ``argv`` and ``k3s_args`` show them as ``(hidden)``.
    """
    found = set() if found is None else found
    hostname = view.hostname()
    result = _empty(service, hostname)
    warnings = []
    try:
        init = services.read_init(view, service)
    except services.ServiceNotFound as e:
        result['msg'] = e.msg
        return result, warnings
    argv = k3s_config_expand(init)
    secrets.add(found, secrets.argv_secrets(init.raw_argv(True)) + secrets.argv_secrets(argv)
                + secrets.env_secrets(init.env))
    role = next((a for a in argv[1:] if a in k3s_config.SUBCOMMANDS), '')
    if not role:
        raise services.ServiceError(
            '%s starts %s without a "server" or "agent" subcommand, so k3s would not run. '
            'Fix the command line (the installer writes "k3s server" or "k3s agent") and run again.'
            % (init.exec_path, ' '.join(secrets.hide_argv(argv))))
    config_file = k3s_config.find_config_file(argv, init.env)
    files = services.config_files(view, config_file)
    docs = services.config_documents(view, files)
    secrets.add(found, secrets.documents_secrets(docs))
    k3s_args = k3s_config.insert_flags(argv, k3s_config.to_flags(k3s_config.merge(docs)))

    effective = k3s_config.effective_sources(docs, argv[1:], init.exec_path, SCHEDULER_FLAG)
    from_files = k3s_config.flag_sources(docs, SCHEDULER_FLAG)
    if k3s_config.flag_values(argv[1:], SCHEDULER_FLAG) and from_files:
        warnings.append('the command line in %s passes --%s and the config files (%s) do too. Reported as the k3s '
                        'docs describe it: the command line replaces the files\' list (k3s\'s code comment says it '
                        'adds to it). Keep scheduler args in one place.'
                        % (init.exec_path, SCHEDULER_FLAG, ', '.join(sorted(set(p for dummy, p in from_files)))))
    sched_config, sched_source = '', ''
    for value, source in effective:
        path = k3s_config.scheduler_config_of(value)
        if path is not None:
            sched_config, sched_source = path, source

    binary = argv[0]
    platform = k3s_config.product(binary)
    env_prefix = platform.upper() + '_'
    names = k3s_config.flag_values(k3s_args[1:], 'node-name')
    node_name = names[-1] if names else (init.env.get(env_prefix + 'NODE_NAME') or hostname)
    # k3s's order: the flag (command line or config files), then its variable K3S_DATA_DIR, then the default
    data_dir = _last_flag(k3s_args[1:], 'data-dir', 'd') or init.env.get(env_prefix + 'DATA_DIR') or DATA_DIRS[platform]
    admin = _last_flag(k3s_args[1:], 'write-kubeconfig', 'o') or init.env.get(env_prefix + 'KUBECONFIG_OUTPUT') \
        or ADMIN_KUBECONFIGS[platform]

    version, kube_version = '', ''
    rc, out, dummy = view.run([binary, '--version'])
    if rc == 0:
        version, kube_version = parse_version(out)
    active, pid = _running(view, init)
    scheduler_args = [v for v, dummy in effective]

    result.update({
        'installed': True, 'platform': platform, 'init': init.kind, 'service': services.short_name(init.service),
        'unit_path': init.path,
        'data_dir': data_dir, 'scheduler_kubeconfig': os.path.join(data_dir, 'server', 'cred', 'scheduler.kubeconfig'),
        'admin_kubeconfig': admin, 'kubectl': service_kubectl(platform, binary, data_dir),
        'dropins': list(init.dropin_paths), 'unit_writable': view.writable(init.path),
        'node_role': role, 'argv': secrets.hide_argv(argv), 'k3s_args': secrets.hide_argv(k3s_args),
        'config_file': config_file, 'config_files': files,
        'config_dir_writable': view.writable(os.path.join(config_file + '.d', 'x.yaml')),
        'scheduler_args': scheduler_args,
        'scheduler_config': sched_config, 'scheduler_config_source': sched_source,
        'scheduler_ca_file': (scheduler_ca_file(view, platform, data_dir, kube_version, scheduler_args)
                              if role == 'server' else ''),
        'version': version, 'kubernetes_version': kube_version,
        'active': bool(active), 'main_pid': int(pid or 0),
        'node_name': node_name.strip().lower(),
    })
    return result, warnings


def k3s_config_expand(init):
    """The command line the service runs, with its environment's variables expanded."""
    return expand_argv(init.raw_argv(True), init.env)


def _scheduler_container(pod):
    containers = ((pod or {}).get('spec') or {}).get('containers') or []
    named = [c for c in containers if isinstance(c, dict) and c.get('name') == 'kube-scheduler']
    return (named or [c for c in containers if isinstance(c, dict)] or [None])[0]


def image_version(image):
    """(version, kubernetes_version) from an image reference such as registry.k8s.io/kube-scheduler:v1.36.3."""
    ref = (image or '').split('@', 1)[0]
    tag = ref.rsplit(':', 1)[1] if ':' in ref.rsplit('/', 1)[-1] else ''
    m = _VERSION_RE.match(tag)
    if not m:
        return '', ''
    return m.group(1), m.group(1).split('+', 1)[0]


def gather_kubeadm(view, manifest_path, service='kubelet'):
    """The facts of a kubeadm node: the scheduler's static pod manifest, and the kubelet that runs it."""
    result = _empty(service, view.hostname(), 'kubeadm')
    result['manifest_path'] = manifest_path
    try:
        init = services.read_init(view, service)
    except services.ServiceNotFound:
        init = None
    kind, unit = (init.kind, init.path) if init else ('', '')
    data = view.read(manifest_path)
    if data is None:
        if init and view.exists(KUBEADM_KUBELET_CONF):
            result.update({'installed': True, 'init': kind, 'unit_path': unit, 'node_role': 'agent',
                           'kubectl': kubeadm_kubectl(view)})
            result['active'], result['main_pid'] = _running(view, init)
        else:
            result['msg'] = ('no kube-scheduler static pod manifest at %s and no kubeadm worker (%s service with %s)'
                             % (manifest_path, service, KUBEADM_KUBELET_CONF))
        return result
    try:
        pod = goyaml.load_json(data, strict=True, name=manifest_path)
    except goyaml.GoYamlError as e:
        raise services.ServiceError('%s; the kubelet cannot run it either. Fix it and run again.' % e) from e
    container = _scheduler_container(pod) if isinstance(pod, dict) else None
    if container is None or not isinstance(container.get('command') or [], list):
        raise services.ServiceError('%s is not a static pod with a kube-scheduler container; give manifest_path '
                                    'the kube-scheduler manifest kubeadm wrote.' % manifest_path)
    argv = [str(a) for a in (container.get('command') or []) + (container.get('args') or [])]
    sched_args = argv[1:]
    config = _last_flag(sched_args, 'config')
    version, kube_version = image_version(container.get('image'))
    result.update({
        'installed': True, 'init': kind or 'systemd', 'unit_path': unit, 'node_role': 'server', 'argv': argv,
        'k3s_args': argv, 'scheduler_args': sched_args, 'scheduler_config': config,
        'scheduler_config_source': manifest_path if config else '',
        'scheduler_kubeconfig': _last_flag(sched_args, 'kubeconfig'), 'admin_kubeconfig': KUBEADM_ADMIN,
        'kubectl': kubeadm_kubectl(view),
        'version': version, 'kubernetes_version': kube_version,
    })
    if init:
        result['active'], result['main_pid'] = _running(view, init)
    return result


def gather(view, params, found=None):
    """The Plan (no changes; facts = the module's result) for ``params`` (platform, service, manifest_path).

    ``found`` (a set: the module passes its ``no_log_values``) receives the secret values read.
    """
    found = set() if found is None else found
    try:
        facts, warnings = _gather(view, params, found)
    except PlanError as e:
        e.msg = secrets.hide_message(e.msg, found)
        e.args = (e.msg,)
        raise
    return Plan(facts=facts, warnings=[secrets.hide_message(w, found) for w in warnings])


def _gather(view, params, found):
    platform, service = params.get('platform') or 'auto', params.get('service')
    manifest = params.get('manifest_path') or KUBEADM_MANIFEST
    if service:
        services.check_service_name(service)
        if platform == 'kubeadm':
            return gather_kubeadm(view, manifest, service), []
        result, warnings = gather_service(view, service, found)
        if result['installed'] and platform not in ('auto', result['platform']):
            raise services.ServiceError('service %s runs %s (%s), not %s; set platform to %s or auto.'
                                        % (service, result['platform'], result['argv'][0], platform, result['platform']))
        return result, warnings
    looked = []
    for candidate in (['k3s', 'rke2', 'kubeadm'] if platform == 'auto' else [platform]):
        if candidate == 'kubeadm':
            result = gather_kubeadm(view, manifest)
            if result['installed'] or platform == 'kubeadm':
                return result, []
            looked.append(result['msg'])
            continue
        for name in SERVICES[candidate]:
            try:
                services.find(view, name)
            except services.ServiceNotFound as e:
                looked.append(e.msg.split(' Install', maxsplit=1)[0])
                continue
            return gather_service(view, name, found)
    first = SERVICES.get(platform, ['k3s'])[0] if platform != 'kubeadm' else 'kubelet'
    result = _empty(first, view.hostname(), 'k3s' if platform == 'auto' else platform)
    wanted = 'k3s, RKE2 or kubeadm control plane' if platform == 'auto' else platform
    result['msg'] = 'found no %s on this node: %s' % (wanted, '; '.join(looked))
    return result, []
