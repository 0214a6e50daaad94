#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_info
short_description: Report which Kubernetes distribution runs on this node, and how its scheduler is started
version_added: 0.1.0
description:
  - Finds the control plane of the node - k3s, RKE2 or kubeadm - and reports how its kube-scheduler is started.
  - For k3s and RKE2 it reads the service - its systemd unit and drop-ins, or its openrc init script - the way
    systemd (or openrc) and k3s read them, and reports the command line, the node's role, the config files,
    the effective C(--kube-scheduler-arg) values and the scheduler config file they name, the version and
    whether the service runs.
  - For kubeadm it reads the kube-scheduler static pod manifest - its command, the C(--config) it passes, the
    image tag - and whether the kubelet runs.
  - A service that does not exist is not an error - RV(installed) is false and RV(msg) says what was looked at.
  - Never changes the node.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.INFO_MODULE
options:
  platform:
    description:
      - Which distribution to look for. V(auto) tries k3s (services C(k3s), C(k3s-agent)), then RKE2
        (C(rke2-server), C(rke2-agent)), then kubeadm (O(manifest_path), else a C(kubelet) service with
        C(/etc/kubernetes/kubelet.conf), a worker).
      - With O(service) given, the platform follows from the binary the service starts (C(rke2) or C(k3s)).
    type: str
    choices: [auto, k3s, rke2, kubeadm]
    default: auto
  service:
    description:
      - Name of the service, as the installers name it - V(k3s), V(k3s-agent), C(k3s-<INSTALL_K3S_NAME>),
        V(rke2-server), V(rke2-agent); V(kubelet) for kubeadm.
      - Its unit is looked for in C(/etc/systemd/system), C(/usr/local/lib/systemd/system), C(/usr/lib/systemd/system),
        C(/lib/systemd/system), then its init script in C(/etc/init.d).
      - Default - the first of the platform's services that is installed.
      - A name that holds C(/) or white space is refused.
    type: str
  manifest_path:
    description:
      - The kube-scheduler static pod manifest of a kubeadm control plane, C(/etc/kubernetes/manifests/kube-scheduler.yaml)
        when not given.
    type: path
requirements:
  - PyYAML on the node, to read k3s's and RKE2's config files (Debian and Ubuntu C(python3-yaml), EL C(python3-pyyaml),
    SUSE C(python3-PyYAML))
notes:
  - The unit and its drop-ins are read as systemd reads them (continuation lines, quoting, C(ExecStart=) resets,
    C(EnvironmentFile=) values expanded in the command line); the config files as k3s reads them (the file named by
    C(--config), else C(K3S_CONFIG_FILE), else C(/etc/rancher/k3s/config.yaml), then its C(.d/*.yaml) in name order,
    C(key+:) appending).
  - For C(--kube-scheduler-arg), the module follows the k3s documentation - values given on the command line replace
    the config files' list. k3s's own code comment says they are added to it; when both places give values a warning
    says so.
  - A unit, drop-in, init script or config file that k3s or systemd would refuse makes the module fail with a message
    that names the file and the problem.
seealso:
  - module: baremetal.k3s.k3s_service_arg
  - module: baremetal.k3s.extender_status
  - name: k3s configuration file
    description: How k3s reads config.yaml and config.yaml.d.
    link: https://docs.k3s.io/installation/configuration#configuration-file
'''

EXAMPLES = r'''
- name: Read how k3s runs here
  baremetal.k3s.k3s_info:
  register: k3s

- name: Agents carry no kube-scheduler
  ansible.builtin.debug:
    msg: "{{ inventory_hostname }} is a k3s {{ k3s.node_role }}; scheduler config: {{ k3s.scheduler_config or 'none' }}"
  when: k3s.installed

- name: Read a named install (INSTALL_K3S_NAME=edge)
  baremetal.k3s.k3s_info:
    service: k3s-edge
  register: k3s_edge

- name: Which distribution runs here, and which scheduler config does it pass
  baremetal.k3s.k3s_info:
  register: node

- name: Report it
  ansible.builtin.debug:
    msg: "{{ node.platform }} {{ node.node_role }}, scheduler config {{ node.scheduler_config or 'none' }}"
'''

RETURN = r'''
installed:
  description: Whether the service has a unit or init script. When false every other value is empty and RV(msg) says why.
  returned: always
  type: bool
  sample: true
msg:
  description: Why RV(installed) is false.
  returned: when RV(installed) is false
  type: str
  sample: no unit or init script found for service k3s (looked at /etc/systemd/system/k3s.service, ...).
platform:
  description: V(k3s), V(rke2) or V(kubeadm); V(k3s) when nothing is installed.
  returned: always
  type: str
  sample: k3s
manifest_path:
  description: The kube-scheduler static pod manifest (kubeadm); empty for k3s and RKE2.
  returned: always
  type: str
  sample: /etc/kubernetes/manifests/kube-scheduler.yaml
data_dir:
  description: The data directory of k3s or RKE2 (C(--data-dir), else the default); empty for kubeadm.
  returned: always
  type: str
  sample: /var/lib/rancher/k3s
scheduler_kubeconfig:
  description:
    - The kubeconfig the platform gives kube-scheduler - C(<data_dir>/server/cred/scheduler.kubeconfig) for k3s and RKE2,
      the manifest's C(--kubeconfig) for kubeadm. A scheduler config file must name it in C(clientConnection.kubeconfig).
  returned: always
  type: str
  sample: /var/lib/rancher/k3s/server/cred/scheduler.kubeconfig
admin_kubeconfig:
  description: The administrator's kubeconfig the platform writes (C(--write-kubeconfig), else the default).
  returned: always
  type: str
  sample: /etc/rancher/k3s/k3s.yaml
kubectl:
  description:
    - The platform's own kubectl, as the words a command starts with - V([<k3s binary>, kubectl]) for k3s, which ships
      kubectl as a subcommand; V([<data_dir>/bin/kubectl]) for RKE2; the C(kubectl) on the node's PATH for kubeadm
      (C(/usr/bin/kubectl) when none is found). Empty when nothing is installed.
    - M(baremetal.k3s.readiness_configmap) takes it as its O(baremetal.k3s.readiness_configmap#module:kubectl).
  returned: always
  type: list
  elements: str
  sample: [/usr/local/bin/k3s, kubectl]
init:
  description: V(systemd) or V(openrc); empty when not installed.
  returned: always
  type: str
  sample: systemd
service:
  description: The service name, without C(.service).
  returned: always
  type: str
  sample: k3s
unit_path:
  description: The unit file, or the openrc init script.
  returned: always
  type: str
  sample: /etc/systemd/system/k3s.service
dropins:
  description: The unit's drop-in files, in the order systemd applies them.
  returned: always
  type: list
  elements: str
  sample: [/etc/systemd/system/k3s.service.d/10-proxy.conf]
unit_writable:
  description: Whether RV(unit_path) can be changed (false on a read-only file system or without permission).
  returned: always
  type: bool
  sample: true
node_role:
  description: V(server) or V(agent), the subcommand on the command line; empty when not installed.
  returned: always
  type: str
  sample: server
argv:
  description: The command line the service starts, as systemd (or openrc) gives it - drop-ins applied, variables from
    the service's environment files expanded, argv[0] included.
  returned: always
  type: list
  elements: str
  sample: [/usr/local/bin/k3s, server, --disable=traefik]
k3s_args:
  description: RV(argv) with the flags of the config files inserted right after the subcommand, as k3s does.
  returned: always
  type: list
  elements: str
  sample: [/usr/local/bin/k3s, server, --kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml, --disable=traefik]
config_file:
  description: The config file k3s uses (C(--config), else C(K3S_CONFIG_FILE), else the default), whether it exists or not.
  returned: always
  type: str
  sample: /etc/rancher/k3s/config.yaml
config_files:
  description: The config files k3s reads, in order.
  returned: always
  type: list
  elements: str
  sample: [/etc/rancher/k3s/config.yaml, /etc/rancher/k3s/config.yaml.d/99-baremetal-k3s-scheduler.yaml]
config_dir_writable:
  description: Whether a file can be written in the config drop-in directory (RV(config_file) + C(.d)).
  returned: always
  type: bool
  sample: true
scheduler_args:
  description: The effective C(--kube-scheduler-arg) values - the command line's when it gives any, else the config files'.
  returned: always
  type: list
  elements: str
  sample: [config=/etc/rancher/k3s/kube-scheduler/config.yaml]
scheduler_config:
  description: The scheduler config file of the last C(config=) (or C(--config=)) value in RV(scheduler_args); empty when none.
  returned: always
  type: str
  sample: /etc/rancher/k3s/kube-scheduler/config.yaml
scheduler_config_source:
  description: The file that sets RV(scheduler_config) - the unit, a drop-in, the init script or a config file; empty when none.
  returned: always
  type: str
  sample: /etc/rancher/k3s/config.yaml.d/99-baremetal-k3s-scheduler.yaml
version:
  description:
    - The k3s or RKE2 version from C(<binary> --version), the kube-scheduler image tag for kubeadm; empty when unknown.
  returned: always
  type: str
  sample: v1.36.3+k3s1
kubernetes_version:
  description: The Kubernetes version of the scheduler (RV(version) up to C(+)); empty when unknown.
  returned: always
  type: str
  sample: v1.36.3
active:
  description: Whether the service runs - systemd C(ActiveState=active), or C(rc-service <service> status) succeeds.
  returned: always
  type: bool
  sample: true
main_pid:
  description: The PID of the k3s process, 0 when none.
  returned: always
  type: int
  sample: 1234
node_name:
  description:
    - The node name k3s registers - C(--node-name) from RV(k3s_args), else C(K3S_NODE_NAME) from the service's
      environment, else the host name; in lower case, as k3s makes it.
  returned: always
  type: str
  sample: server-1
'''

import os
import re
import socket

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config as k3s_config
from ansible_collections.baremetal.k3s.plugins.module_utils import _service_arg as service_arg
from ansible_collections.baremetal.k3s.plugins.module_utils._service_clock import parse_systemctl_show

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


class _ModuleHost(service_arg.Host):
    """Runs commands on the node; never writes."""

    def __init__(self, module):
        self.module = module
        self.check_mode = module.check_mode

    def run(self, argv):
        exe = argv[0]
        if os.path.isabs(exe):
            if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
                return None, '', ''
        else:
            exe = self.module.get_bin_path(exe)
            if exe is None:
                return None, '', ''
        return self.module.run_command([exe] + list(argv[1:]), environ_update={'LC_ALL': 'C'})

    def which(self, name):
        """The path of program ``name`` on the node's PATH (and the sbin directories), None when there is none."""
        return self.module.get_bin_path(name)


def parse_version(text):
    """(version, kubernetes_version) from the first line of ``k3s --version``; ('', '') when it holds none."""
    first = (text or '').strip().split('\n', 1)[0]
    m = _VERSION_RE.search(first)
    if not m:
        return '', ''
    version = m.group(1)
    return version, version.split('+', 1)[0]


def scheduler_config_of(value):
    """The path a kube-scheduler arg passes as ``--config`` (``config=x`` or ``--config=x``), else None.

    ``kubeconfig=`` is not a config; neither is a bare or empty ``config`` (no file to read).
    """
    key, dummy, rest = value.lstrip('-').partition('=')
    return rest if key == 'config' and rest else None


def _empty(service, hostname, platform='k3s'):
    return {
        'changed': False, 'installed': False, 'platform': platform, 'init': '', 'service': service_arg.short_name(service),
        'manifest_path': '', 'data_dir': '', 'scheduler_kubeconfig': '', 'admin_kubeconfig': '', 'kubectl': [],
        'unit_path': '', 'dropins': [], 'unit_writable': False, 'node_role': '', 'argv': [], 'k3s_args': [],
        'config_file': '', 'config_files': [], 'config_dir_writable': False, 'scheduler_args': [],
        'scheduler_config': '', 'scheduler_config_source': '', 'version': '', 'kubernetes_version': '',
        'active': False, 'main_pid': 0, 'node_name': hostname.strip().lower(),
    }


def _running(host, kind, service, pidfile=None):
    """(active, main_pid) of the service."""
    if kind == 'systemd':
        rc, out, dummy = host.run(['systemctl', 'show', '-p', 'ActiveState', '-p', 'MainPID', service_arg.unit_name(service)])
        if rc != 0:
            return False, 0
        props = parse_systemctl_show(out)
        try:
            pid = int(props.get('MainPID') or 0)
        except ValueError:
            pid = 0
        return props.get('ActiveState') == 'active', pid
    rc, dummy, dummy2 = host.run(['rc-service', service, 'status'])
    return rc == 0, service_arg.main_pid(host, 'openrc', service, pidfile) or 0


def service_kubectl(platform, binary, data_dir):
    """The kubectl a k3s or RKE2 install ships: k3s's is a subcommand of its binary, RKE2's a file in its data dir."""
    if platform == 'rke2':
        return [os.path.join(data_dir, 'bin', 'kubectl')]
    return [binary, 'kubectl']


def kubeadm_kubectl(host):
    """kubeadm's kubectl: the one on the node's PATH, else where kubeadm's packages put it."""
    return [host.which('kubectl') or KUBEADM_KUBECTL]


def _last_flag(args, *names):
    values = []
    for name in names:
        values = values or k3s_config.flag_values(args, name)
    return values[-1] if values else ''


def gather_service(service, host, hostname):
    """The result for a k3s or RKE2 ``service``; :class:`ServiceArgError` for what k3s or systemd would refuse too."""
    result = _empty(service, hostname)
    warnings = []
    service_arg.check_service_name(service)
    try:
        svc = service_arg.read_service(service)
    except service_arg.ServiceNotFound as e:
        result['msg'] = str(e)
        return result, warnings
    argv = svc.argv
    role = next((a for a in argv[1:] if a in k3s_config.SUBCOMMANDS), '')
    if not role:
        raise service_arg.ServiceArgError(
            '%s starts %s without a "server" or "agent" subcommand, so k3s would not run. '
            'Fix the command line (the installer writes "k3s server" or "k3s agent") and run again.'
            % (svc.exec_path, ' '.join(argv)))
    config_file = k3s_config.find_config_file(argv, svc.env)
    files = k3s_config.config_files(config_file)
    try:
        docs = k3s_config.read_documents(files)
    except (k3s_config.ConfigError, OSError) as e:
        raise service_arg.ServiceArgError('%s; k3s refuses to start on it too. Fix or remove the file and run again.' % e) from e
    file_flags = k3s_config.to_flags(k3s_config.merge(docs))
    k3s_args = k3s_config.insert_flags(argv, file_flags)

    cli_values = k3s_config.flag_values(argv[1:], SCHEDULER_FLAG)
    from_files = service_arg.flag_sources(docs, SCHEDULER_FLAG)
    effective = [(v, svc.exec_path) for v in cli_values] if cli_values else from_files
    if cli_values and from_files:
        warnings.append('the command line in %s passes --%s and the config files (%s) do too. Reported as the k3s '
                        'docs describe it: the command line replaces the files\' list (k3s\'s code comment says it '
                        'adds to it). Keep scheduler args in one place.'
                        % (svc.exec_path, SCHEDULER_FLAG, ', '.join(sorted(set(p for dummy, p in from_files)))))
    sched_config, sched_source = '', ''
    for value, source in effective:
        path = scheduler_config_of(value)
        if path is not None:
            sched_config, sched_source = path, source

    platform = k3s_config.product(svc.binary)
    env_prefix = platform.upper() + '_'
    names = k3s_config.flag_values(k3s_args[1:], 'node-name')
    node_name = names[-1] if names else (svc.env.get(env_prefix + 'NODE_NAME') or hostname)
    data_dir = _last_flag(k3s_args[1:], 'data-dir', 'd') or DATA_DIRS[platform]
    admin = _last_flag(k3s_args[1:], 'write-kubeconfig', 'o') or svc.env.get(env_prefix + 'KUBECONFIG_OUTPUT') or ADMIN_KUBECONFIGS[platform]

    version, kube_version = '', ''
    rc, out, dummy = host.run([svc.binary, '--version'])
    if rc == 0:
        version, kube_version = parse_version(out)
    active, pid = _running(host, svc.kind, svc.service, svc.pidfile)

    result.update({
        'installed': True, 'platform': platform, 'init': svc.kind, 'service': svc.service, 'unit_path': svc.path,
        'data_dir': data_dir, 'scheduler_kubeconfig': os.path.join(data_dir, 'server', 'cred', 'scheduler.kubeconfig'),
        'admin_kubeconfig': admin, 'kubectl': service_kubectl(platform, svc.binary, data_dir),
        'dropins': list(svc.dropins), 'unit_writable': service_arg.is_writable(svc.path),
        'node_role': role, 'argv': argv, 'k3s_args': k3s_args,
        'config_file': config_file, 'config_files': files,
        'config_dir_writable': service_arg.is_writable(os.path.join(config_file + '.d', service_arg.DEFAULT_CONFIG_NAME)),
        'scheduler_args': [v for v, dummy in effective],
        'scheduler_config': sched_config, 'scheduler_config_source': sched_source,
        'version': version, 'kubernetes_version': kube_version,
        'active': bool(active), 'main_pid': int(pid or 0),
        'node_name': node_name.strip().lower(),
    })
    return result, warnings


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


def gather_kubeadm(host, hostname, manifest_path, service='kubelet'):
    """The result for a kubeadm node: the scheduler's static pod manifest, and the kubelet that runs it."""
    result = _empty(service, hostname, 'kubeadm')
    result['manifest_path'] = manifest_path
    try:
        kind, unit = service_arg.find_service(service)
    except service_arg.ServiceNotFound:
        kind, unit = '', ''
    if not os.path.exists(manifest_path):
        if unit and os.path.exists(KUBEADM_KUBELET_CONF):
            result.update({'installed': True, 'init': kind, 'unit_path': unit, 'node_role': 'agent',
                           'kubectl': kubeadm_kubectl(host)})
            result['active'], result['main_pid'] = _running(host, kind, service)
        else:
            result['msg'] = ('no kube-scheduler static pod manifest at %s and no kubeadm worker (%s service with %s)'
                             % (manifest_path, service, KUBEADM_KUBELET_CONF))
        return result
    data = service_arg.read_bytes(manifest_path)
    try:
        pod = k3s_config.yaml.safe_load(data) if k3s_config.HAS_YAML else None
    except k3s_config.yaml.YAMLError as e:
        raise service_arg.ServiceArgError('%s is not valid YAML (%s); the kubelet cannot run it either. Fix it and run again.'
                                          % (manifest_path, str(e).replace('\n', ' '))) from e
    container = _scheduler_container(pod) if isinstance(pod, dict) else None
    if container is None or not isinstance(container.get('command') or [], list):
        raise service_arg.ServiceArgError('%s is not a static pod with a kube-scheduler container; give manifest_path '
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
        'kubectl': kubeadm_kubectl(host),
        'version': version, 'kubernetes_version': kube_version,
    })
    if unit:
        result['active'], result['main_pid'] = _running(host, kind, service)
    return result


def gather(params, host, hostname):
    """The module result for ``params`` (platform, service, manifest_path)."""
    platform, service = params['platform'], params.get('service')
    manifest = params.get('manifest_path') or KUBEADM_MANIFEST
    if service:
        service_arg.check_service_name(service)
        if platform == 'kubeadm':
            return gather_kubeadm(host, hostname, manifest, service), []
        result, warnings = gather_service(service, host, hostname)
        if result['installed'] and platform not in ('auto', result['platform']):
            raise service_arg.ServiceArgError('service %s runs %s (%s), not %s; set platform to %s or auto.'
                                              % (service, result['platform'], result['argv'][0], platform, result['platform']))
        return result, warnings
    looked = []
    for candidate in (['k3s', 'rke2', 'kubeadm'] if platform == 'auto' else [platform]):
        if candidate == 'kubeadm':
            result = gather_kubeadm(host, hostname, manifest)
            if result['installed'] or platform == 'kubeadm':
                return result, []
            looked.append(result['msg'])
            continue
        for name in SERVICES[candidate]:
            try:
                service_arg.find_service(name)
            except service_arg.ServiceNotFound as e:
                looked.append(str(e).split(' Install', maxsplit=1)[0])
                continue
            return gather_service(name, host, hostname)
    first = SERVICES.get(platform, ['k3s'])[0] if platform != 'kubeadm' else 'kubelet'
    result = _empty(first, hostname, 'k3s' if platform == 'auto' else platform)
    wanted = 'k3s, RKE2 or kubeadm control plane' if platform == 'auto' else platform
    result['msg'] = 'found no %s on this node: %s' % (wanted, '; '.join(looked))
    return result, []


def main():
    module = AnsibleModule(
        argument_spec=dict(
            platform=dict(type='str', default='auto', choices=['auto', 'k3s', 'rke2', 'kubeadm']),
            service=dict(type='str'),
            manifest_path=dict(type='path'),
        ),
        supports_check_mode=True,
    )
    try:
        result, warnings = gather(module.params, _ModuleHost(module), socket.gethostname())
    except service_arg.ServiceArgError as e:
        module.fail_json(msg=str(e))
    for warning in warnings:
        module.warn(warning)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
