#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: kubeadm_config
short_description: Keep kube-scheduler's --config (or kube-apiserver's admission config) in kubeadm's ClusterConfiguration
version_added: 0.1.0
description:
  - C(kubeadm upgrade) writes the control plane's static pod manifests again from the ClusterConfiguration stored in
    ConfigMap C(kube-system/kubeadm-config) (key C(ClusterConfiguration)), and so drops a C(--config) added to
    C(/etc/kubernetes/manifests/kube-scheduler.yaml) by hand or by M(baremetal.k3s.static_pod_arg). This module adds the
    same flag and mounts to that ClusterConfiguration, or takes them out again. With O(component=apiServer) it does the
    same for kube-apiserver's C(--admission-control-config-file) in C(apiServer) (the PodSecurity defaults that
    M(baremetal.k3s.pod_security_admission) writes).
  - "It adds the C(config) extraArg of C(scheduler) (C(kubeadm.k8s.io/v1beta3): C(extraArgs) is a map,
    C({config: PATH}); C(v1beta4): a list, C([{name: config, value: PATH}])) and one C(extraVolumes) entry per file,
    C({name, hostPath: PATH, mountPath: PATH, readOnly: true, pathType: File}) (C(Directory) for a directory), named as
    M(baremetal.k3s.static_pod_arg) names the same mounts in the manifest."
  - "The text is edited in place, keeping every byte the module does not own; removing what it added gives the previous
    text back byte for byte. What it adds carries the comment line C(# baremetal.k3s.kubeadm_config) above it where a
    comment can stand; in flow style (kubeadm itself writes C(scheduler: {})) the volumes are known by their names and
    the C(config) extraArg by its value and our volume for it."
  - Talks to the API server with the platform's kubectl on the node. The ConfigMap is replaced conditionally (with the
    C(metadata.resourceVersion) read); when another writer changed it since, it is read again and the change redone, up
    to 20 times. Running it on every control-plane node is safe; the first one writes, the others find nothing to do.
  - Another C(config) extraArg (another scheduler config; with O(component=apiServer) another admission configuration)
    is refused, as is an apiVersion other than
    C(kubeadm.k8s.io/v1beta3) and C(v1beta4), or a C(scheduler) part in a shape kubeadm would not read.
author:
  - baremetal.k3s contributors (@baremetal)
requirements:
  - PyYAML on the node (Debian and Ubuntu C(python3-yaml), EL C(python3-pyyaml), SUSE C(python3-PyYAML))
  - kubectl on the node, and a kubeconfig that may read and update ConfigMaps in C(kube-system)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._kubectl
attributes:
  check_mode:
    support: full
    details: The ConfigMap is read; nothing is written.
  diff_mode:
    support: full
    details: Before and after text of the ClusterConfiguration.
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: posix
options:
  kubectl:
    description: The kubectl command, as a list of words, for example V([/usr/bin/kubectl]).
    type: list
    elements: str
    default: [kubectl]
  name:
    description: Name of the ConfigMap.
    type: str
    default: kubeadm-config
  namespace:
    description: Namespace of the ConfigMap.
    type: str
    default: kube-system
  key:
    description: The key of the ConfigMap holding the ClusterConfiguration.
    type: str
    default: ClusterConfiguration
  component:
    description:
      - The control-plane component whose part of the ClusterConfiguration holds the flag, and so the flag - V(scheduler)
        keeps kube-scheduler's C(--config) (C(scheduler.extraArgs)), V(apiServer) keeps kube-apiserver's
        C(--admission-control-config-file) (C(apiServer.extraArgs)), as M(baremetal.k3s.pod_security_admission) writes
        that file.
    type: str
    choices: [scheduler, apiServer]
    default: scheduler
  config:
    description:
      - The absolute path of the file the flag names (the scheduler config, the value of C(--config); with
        O(component=apiServer) the admission configuration), mounted read-only at the same path.
      - Required unless O(state=restore).
    type: path
  mounts:
    description:
      - More absolute host paths to mount read-only at the same path, for example the extender's TLS files named in the
        scheduler config. With O(state=present), volumes of ours for paths no longer listed are removed.
      - With O(state=absent) not needed; every volume of ours goes.
    type: list
    elements: path
    default: []
  volume_prefix:
    description: Our volumes are named C(<volume_prefix>-<the path as a DNS label>) and recognised by it.
    type: str
    default: baremetal-k3s
  state:
    description:
      - V(present) adds the extraArg and volumes; V(absent) removes those this module added (the user's stay).
      - V(restore) puts back O(previous) when the text is still O(written) (a run's RV(rollback)), for a rollback.
    type: str
    choices: [present, absent, restore]
    default: present
  previous:
    description: With O(state=restore), the text to put back (RV(rollback.previous) of the run to undo).
    type: str
  written:
    description: With O(state=restore), the text that run wrote (RV(rollback.written)); any other text is refused.
    type: str
notes:
  - A missing ConfigMap fails with O(state=present) (C(kubeadm init) uploads it) and is nothing to do with
    O(state=absent).
  - "In flow style an C(extraArgs) or C(extraVolumes) key that holds nothing once ours are removed is removed too (an
    empty C(extraArgs: []) of the user's written in flow style before this module added to it is not kept)."
  - Each kubectl call is bounded by C(--request-timeout 30s).
seealso:
  - module: baremetal.k3s.static_pod_arg
  - name: kubeadm ClusterConfiguration (v1beta4)
    description: C(scheduler.extraArgs) and C(scheduler.extraVolumes).
    link: https://kubernetes.io/docs/reference/config-api/kubeadm-config.v1beta4/
'''

EXAMPLES = r'''
- name: Keep --config and the extender's TLS files through kubeadm upgrade
  baremetal.k3s.kubeadm_config:
    kubectl: [/usr/bin/kubectl]
    kubeconfig: /etc/kubernetes/admin.conf
    config: /etc/kubernetes/scheduler/config.yaml
    mounts:
      - /etc/kubernetes/scheduler/extender-ca.crt
  register: kubeadm_config

- name: Undo that run
  baremetal.k3s.kubeadm_config:
    kubectl: [/usr/bin/kubectl]
    kubeconfig: /etc/kubernetes/admin.conf
    state: restore
    previous: "{{ kubeadm_config.rollback.previous }}"
    written: "{{ kubeadm_config.rollback.written }}"
  when: kubeadm_config.changed

- name: Take them out again
  baremetal.k3s.kubeadm_config:
    kubectl: [/usr/bin/kubectl]
    kubeconfig: /etc/kubernetes/admin.conf
    config: /etc/kubernetes/scheduler/config.yaml
    state: absent
'''

RETURN = r'''
api_version:
  description: The apiVersion of the ClusterConfiguration.
  returned: when the ConfigMap exists and O(state) is not V(restore)
  type: str
  sample: kubeadm.k8s.io/v1beta4
extra_args:
  description: The values of the scheduler's C(config) extraArgs after the run.
  returned: when the ConfigMap exists and O(state) is not V(restore)
  type: list
  elements: str
  sample: [/etc/kubernetes/scheduler/config.yaml]
volumes:
  description: The names of the extraVolumes of ours after the run.
  returned: when the ConfigMap exists and O(state) is not V(restore)
  type: list
  elements: str
  sample: [baremetal-k3s-etc-kubernetes-scheduler-config-yaml]
attempts:
  description: How many times the ConfigMap was read and the change tried.
  returned: success
  type: int
  sample: 1
rollback:
  description:
    - What undoes this run - give RV(rollback.previous) and RV(rollback.written) to O(state=restore).
      Both null when there is no ConfigMap or no such key.
  returned: success
  type: dict
  contains:
    name:
      description: The ConfigMap.
      type: str
    namespace:
      description: Its namespace.
      type: str
    key:
      description: The key.
      type: str
    previous:
      description: The text before the run.
      type: str
    written:
      description: The text after the run (the same when nothing changed).
      type: str
  sample: {name: kubeadm-config, namespace: kube-system, key: ClusterConfiguration, previous: "apiServer: {}\n...",
           written: "apiServer: {}\n..."}
diff:
  description: Before and after text of the ClusterConfiguration.
  returned: in diff mode
  type: dict
  sample: {before: "scheduler: {}\n", after: "scheduler: {\"extraArgs\": [...]}\n"}
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _deps, _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _kubeadm_config as kc
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

ARGUMENT_SPEC = dict(
    kubectl=dict(type='list', elements='str', default=['kubectl']),
    kubeconfig=dict(type='path'),
    name=dict(type='str', default=kc.DEFAULT_NAME),
    namespace=dict(type='str', default=kc.DEFAULT_NAMESPACE),
    key=dict(type='str', default=kc.DEFAULT_KEY, no_log=False),
    component=dict(type='str', default='scheduler', choices=sorted(kc.COMPONENTS)),
    config=dict(type='path'),
    mounts=dict(type='list', elements='path', default=[]),
    volume_prefix=dict(type='str', default=kc.DEFAULT_PREFIX),
    state=dict(type='str', default='present', choices=['present', 'absent', 'restore']),
    previous=dict(type='str'),
    written=dict(type='str'),
)


def _kinds(view, paths):
    """pathType of each path: Directory for a directory on this node, else File."""
    return {p: 'Directory' if view.isdir(p) else 'File' for p in paths if p}


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                           required_if=[('state', 'present', ['config']), ('state', 'absent', ['config']),
                                        ('state', 'restore', ['previous', 'written'])])
    if not kc.HAS_YAML:
        module.fail_json(msg=_deps.missing_lib_msg('PyYAML'), exception=str(kc.YAML_IMPORT_ERROR))
    params = module.params
    try:
        view = _io.node_view(module)
        kubeconfig = params['kubeconfig']
        if kubeconfig and not view.isfile(kubeconfig):
            raise PlanError('kubeconfig %s does not exist on this node. Give kubeadm\'s admin kubeconfig '
                            '(/etc/kubernetes/admin.conf).' % kubeconfig)
        kinds = {}
        if params['state'] == 'present':
            kinds = _kinds(view, [os.path.normpath(p) for p in [params['config']] + params['mounts']])
        request = kc.Request(kubectl=params['kubectl'], kubeconfig=kubeconfig, name=params['name'],
                             namespace=params['namespace'], key=params['key'], config=params['config'],
                             mounts=params['mounts'], state=params['state'], prefix=params['volume_prefix'],
                             kinds=kinds, previous=params['previous'], written=params['written'],
                             component=params['component'])
        result = kc.sync(view.run, request, check_mode=module.check_mode)
    except PlanError as e:
        module.fail_json(msg=e.msg, **e.details)
    diff = result.pop('diff')
    if module._diff:
        result['diff'] = dict(before=diff['before'], after=diff['after'], before_header=request.where,
                              after_header=request.where)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
