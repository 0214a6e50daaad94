#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: static_pod_arg
short_description: Ensure one argument and its read-only hostPath mounts are or are not in a static pod manifest
version_added: 0.1.0
description:
  - On a kubeadm control-plane node, adds one argument (for example C(--config=/etc/kubernetes/scheduler/config.yaml)) to
    C(spec.containers[].command) of a static pod manifest, or removes it, together with the read-only hostPath volumes and
    volumeMounts for the files the argument needs.
  - By default the manifest is C(/etc/kubernetes/manifests/kube-scheduler.yaml) and the host path mounted is the absolute path
    in the argument's value; O(mounts) adds more, for example the extender's TLS files named in the scheduler config.
    Each path is mounted at the same path in the container, read-only, as a volume of type C(File) (C(Directory) for a
    directory). A path already shown in the container by a hostPath volume mounted at its own host path (for example the
    whole C(/etc/kubernetes/scheduler) directory) gets no second mount.
  - The kubelet restarts the pod when the manifest changes, so the module only edits the file and reports
    RV(restart_expected). It never restarts anything itself.
  - The manifest is read as the kubelet reads it (go-yaml, strictly - a key given twice is refused), in YAML (block or flow
    style) or JSON. Edits keep every byte the module does not own; the file is never re-dumped. New items follow the file's
    own layout (indentation, list style, line endings; JSON stays JSON). Removing the argument gives back the file byte for
    byte, also after other changes were made to it in between.
  - "What the module owns: the argument, with the comment line C(# baremetal.k3s.static_pod_arg) directly above it; the
    volumes whose name starts with C(<volume_prefix>-) and their volumeMounts, each with the comment line
    C(# baremetal.k3s.static_pod_arg for <arg>) above it, which names the argument it serves; and a C(volumeMounts:) or
    C(volumes:) key it had to create (with C(# baremetal.k3s.static_pod_arg) above it), which is removed again once empty."
  - Where a comment cannot stand (a flow list C([...]), a JSON manifest) the argument counts as the module's when it is
    exactly O(arg) or a volume of ours mounts the path it names, and a key created there is removed again when its list
    empties. Manifests written by earlier versions (the comment at the end of the argument's line, volumes without a
    comment) are recognised and cleaned up too.
  - The same argument already in the command without that comment and without a volume of ours for it is the user's.
    O(state=present) leaves the file as it is (a warning lists paths it needs that are not mounted); O(state=absent) leaves
    the argument in place and warns.
  - The same flag with another value (for example another C(--config=)) is a conflict - the module fails and names it.
    kube-scheduler reads a single C(--config), so add the extender to that file instead (M(baremetal.k3s.scheduler_config)).
  - Flags are read as kube-scheduler (pflag) reads them, over the container's C(command) and C(args) both (both reach the
    process) - C(--config x) is C(--config=x), C(-v=2) and C(-v2) are C(--v) (its shorthand), C(_) in a name is C(-),
    C(--) ends the flags. The same flag and value already given in C(args), or spelled otherwise, is left as it is, with a
    warning; another value there is the conflict above.
  - After each edit the new content is parsed again and must hold exactly the old data plus (or minus) that item, else
    nothing is written; the file is replaced atomically through a temporary file whose name starts with C(.), which
    the kubelet ignores. Mode and owner of the manifest are kept.
author:
  - baremetal.k3s contributors (@baremetal)
requirements:
  - PyYAML on the node (Debian and Ubuntu C(python3-yaml), EL C(python3-pyyaml), SUSE C(python3-PyYAML))
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.FILES
options:
  path:
    description:
      - Absolute path of the static pod manifest. Must exist; the module does not create manifests.
      - "YAML (block or flow style) or JSON, as the kubelet accepts. Refused with a message: several YAML documents, anchors
        and aliases, language tags (C(!!python/...)), a key given twice, a flow list written over several lines in another
        layout than one item per line."
    type: path
    default: /etc/kubernetes/manifests/kube-scheduler.yaml
  container:
    description:
      - Name of the container whose command is changed.
      - By default the container named like the pod (C(metadata.name), C(kube-scheduler) for kubeadm's scheduler), else the first.
    type: str
  arg:
    description:
      - One argument, starting with C(--) and a flag name, for example C(--config=/etc/kubernetes/scheduler/config.yaml).
      - It must not be empty, hold a line break or start or end with white space. It is written as a YAML string, quoted when
        needed.
    type: str
    required: true
  state:
    description:
      - V(present) ensures the argument and its mounts are in the manifest; V(absent) removes the argument (when this module
        added it) and the volumes of ours for its paths.
    type: str
    choices: [present, absent]
    default: present
  mounts:
    description:
      - More absolute host paths to mount read-only at the same path in the container, for example the extender's TLS files
        named in the scheduler config.
      - With O(state=present) every path (and the path in O(arg), see O(mount_arg_path)) must exist on the node, else the
        module fails and leaves the file untouched - the kubelet would refuse a C(File) or C(Directory) hostPath that does
        not exist, and the pod would never start.
      - With O(state=present), a volume of ours for O(arg) whose path is no longer listed (an extender taken out of a
        list, with its CA file) is removed with its mount. A volume without our comment above it (someone removed it) is
        left alone.
      - With O(state=absent) not needed - every volume of ours that served O(arg) goes with it (found by the comment above
        it), and so do volumes of ours that no argument of ours needs any more. Paths given here go too. A volume still
        needed by another argument of the command (its path, or a file under it, is named there) is kept.
    type: list
    elements: path
    default: []
  mount_arg_path:
    description:
      - Mount the absolute path in the argument's value (C(/x) of C(--flag=/x)). Set to V(false) when that path is a path
        inside the container, not a file of the node.
    type: bool
    default: true
  volume_prefix:
    description:
      - Our volumes are named C(<volume_prefix>-<the path as a DNS label>) (shortened with a hash when it would exceed 63
        characters or is taken) and recognised by this prefix. A DNS-1123 label of at most 40 characters.
    type: str
    default: baremetal-k3s
  backup:
    description:
      - Keep a copy of the manifest in O(backup_dir) before changing it.
    type: bool
    default: false
  backup_dir:
    description:
      - Where backups go. With O(backup=true), refused when it is inside a static-pod manifest directory (C(/etc/kubernetes/manifests),
        C(/var/lib/rancher/*/agent/pod-manifests)) or the manifest's own directory - the kubelet reads every file there and
        would run the backup as a second pod.
    type: path
    default: /var/backups/baremetal-k3s
notes:
  - C(kubeadm upgrade) regenerates the manifest from the cluster's ClusterConfiguration and drops this change. Persist it
    there as well with M(baremetal.k3s.kubeadm_config) (the C(kubeadm-config) ConfigMap in C(kube-system); the role
    C(baremetal.k3s.scheduler_extender) does both), or in the file given to C(kubeadm upgrade --config).
  - Never leave backups or other files in the manifests directory - the kubelet reads every file there whose name does not
    start with C(.). Use O(backup_dir).
  - RKE2 rewrites C(/var/lib/rancher/rke2/agent/pod-manifests/kube-scheduler.yaml) on every start, so an edit there is lost
    (a warning says so); on RKE2 give C(kube-scheduler-arg) and C(kube-scheduler-extra-mount) in its config file instead
    (M(baremetal.k3s.k3s_service_arg)).
  - Keep the comment lines C(# baremetal.k3s.static_pod_arg) and C(# baremetal.k3s.static_pod_arg for <arg>) - they are how
    the module knows the argument, the volumes and the mounts are its own (a volume of ours for the argument's path also
    counts for the argument).
seealso:
  - module: baremetal.k3s.scheduler_config
  - module: baremetal.k3s.k3s_service_arg
  - name: kubeadm ClusterConfiguration (v1beta4)
    description: C(scheduler.extraArgs) and C(scheduler.extraVolumes) of the control-plane components.
    link: https://kubernetes.io/docs/reference/config-api/kubeadm-config.v1beta4/
  - name: Customizing components with the kubeadm API
    description: How extra arguments and volumes reach the static pod manifests.
    link: https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/control-plane-flags/
'''

EXAMPLES = r'''
- name: Give kube-scheduler our config (mounts the file read-only)
  baremetal.k3s.static_pod_arg:
    arg: --config=/etc/kubernetes/scheduler/config.yaml
    backup: true
  register: scheduler_arg

- name: Also mount the extender's TLS files named in the scheduler config
  baremetal.k3s.static_pod_arg:
    arg: --config=/etc/kubernetes/scheduler/config.yaml
    mounts:
      - /etc/kubernetes/scheduler/extender-ca.crt
      - /etc/kubernetes/scheduler/extender-client.crt
      - /etc/kubernetes/scheduler/extender-client.key

- name: Another component and container
  baremetal.k3s.static_pod_arg:
    path: /etc/kubernetes/manifests/kube-controller-manager.yaml
    container: kube-controller-manager
    arg: --v=2

- name: Remove it again, with every volume and mount it added for it
  baremetal.k3s.static_pod_arg:
    arg: --config=/etc/kubernetes/scheduler/config.yaml
    state: absent

# kubeadm upgrade regenerates the manifest: keep the flag and its mount in the ClusterConfiguration too
- name: The same in kube-system/kubeadm-config
  baremetal.k3s.kubeadm_config:
    kubectl: [kubectl]
    kubeconfig: /etc/kubernetes/admin.conf
    config: /etc/kubernetes/scheduler/config.yaml
'''

RETURN = r'''
changed:
  description: Whether the manifest was (or, in check mode, would be) changed.
  returned: always
  type: bool
  sample: true
path:
  description: The manifest.
  returned: always
  type: str
  sample: /etc/kubernetes/manifests/kube-scheduler.yaml
container:
  description: The name of the container whose command was looked at.
  returned: always
  type: str
  sample: kube-scheduler
command:
  description: The container's command (argv) after the run.
  returned: always
  type: list
  elements: str
  sample: [kube-scheduler, --kubeconfig=/etc/kubernetes/scheduler.conf, --leader-elect=true,
           --config=/etc/kubernetes/scheduler/config.yaml]
volumes:
  description: Names of the volumes this module owns (name starts with O(volume_prefix) and C(-)) after the run.
  returned: always
  type: list
  elements: str
  sample: [baremetal-k3s-etc-kubernetes-scheduler-config-yaml]
restart_expected:
  description:
    - True when the manifest changed; the kubelet then restarts the pod by itself (wait for it, for example with
      M(baremetal.k3s.extender_status)).
  returned: always
  type: bool
  sample: true
files:
  description:
    - One entry per file changed (here the manifest, or nothing), so a caller can undo exactly this run - restore
      RV(files[].backup_file) over RV(files[].path) (module M(baremetal.k3s.rollback)).
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The file.
      type: str
      sample: /etc/kubernetes/manifests/kube-scheduler.yaml
    action:
      description: V(modified).
      type: str
      sample: modified
    backup_file:
      description: The copy taken before the change (O(backup=true), not in check mode), else V(null).
      type: str
      sample: null
  sample: [{path: /etc/kubernetes/manifests/kube-scheduler.yaml, action: modified,
            backup_file: /var/backups/baremetal-k3s/kube-scheduler.yaml.4242.2026-01-01@12:00:00~}]
backup_file:
  description: The copy of the previous manifest, in O(backup_dir).
  returned: when O(backup=true) and the manifest changed
  type: str
  sample: /var/backups/baremetal-k3s/kube-scheduler.yaml.4242.2026-01-01@12:00:00~
diff:
  description: Before and after text of the manifest.
  returned: in diff mode, when the manifest changed
  type: list
  elements: dict
  sample: [{before: "apiVersion: v1\n...", after: "apiVersion: v1\n...", before_header: /etc/kubernetes/manifests/kube-scheduler.yaml,
            after_header: /etc/kubernetes/manifests/kube-scheduler.yaml}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _deps, _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _static_pod as sp
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

ARGUMENT_SPEC = dict(
    path=dict(type='path', default=sp.DEFAULT_PATH),
    container=dict(type='str'),
    arg=dict(type='str', required=True),
    state=dict(type='str', default='present', choices=['present', 'absent']),
    mounts=dict(type='list', elements='path', default=[]),
    mount_arg_path=dict(type='bool', default=True),
    volume_prefix=dict(type='str', default=sp.DEFAULT_PREFIX),
    backup=dict(type='bool', default=False),
    backup_dir=dict(type='path', default=sp.DEFAULT_BACKUP_DIR),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    if not sp.HAS_PYYAML:
        module.fail_json(msg=_deps.missing_lib_msg('PyYAML'), exception=str(sp.PYYAML_IMPORT_ERROR))
    params = module.params
    try:
        result = _io.locked_apply(module, lambda: sp.plan(_io.node_view(module), params, check_mode=module.check_mode),
                                  paths=[sp.lock_key(params)], backup=params['backup'], backup_dir=params['backup_dir'])
    except (PlanError, _io.ApplyError) as e:
        details = dict(path=params['path'])
        details.update(getattr(e, 'details', {}))
        module.fail_json(msg=e.msg, **details)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
