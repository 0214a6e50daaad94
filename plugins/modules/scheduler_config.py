#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: scheduler_config
short_description: Ensure a scheduler extender is or is not in a KubeSchedulerConfiguration file
version_added: 0.1.0
description:
  - Adds, updates or removes one scheduler extender in the file kube-scheduler reads with C(--config) (on k3s and RKE2
    given as C(--kube-scheduler-arg=config=PATH)).
  - "Our entry carries a marker comment, C(# baremetal.k3s extender: <name>) (O(name)), which finds it again whatever
    its URL - a new port or C(https) replaces the entry instead of adding a second one - and with O(state=absent). An
    entry written by hand or by an older version is found by its C(urlPrefix); such an entry is replaced by a marked
    one at the end of the list."
  - "In a flow-style list or a JSON file, where no comment can stand, the module keeps a record of the entries it
    wrote there instead: C(/var/lib/baremetal-k3s/scheduler-config/extenders-<hash of the path>.json), mode C(0600),
    each name with its entry as written, changed only together with the file (and returned in RV(files) with it), and
    removed with the last of those entries, so that uninstalling gives the file back byte for byte and leaves nothing
    behind. An entry is ours by the record only while it is exactly as written and the only one so: an entry someone
    changed since, or a copy of it, is never changed or removed as ours. Without a record, the entry is found by its
    C(urlPrefix) as above."
  - "Every byte the module does not own is kept - other extenders and profiles, comments, order, line endings (CRLF),
    a byte order mark, C(---)/C(...) markers, indentation, trailing spaces, C(extenders: []), a JSON file stays JSON.
    The new entry is written in the style of its surroundings, and removing it gives back the file byte for byte."
  - The file is read as kube-scheduler reads it (go-yaml v2's scalars, duplicate keys refused). A form that cannot be
    edited safely (an anchor or alias on the list, a multi-line flow list with comments inside) is refused with the
    reason.
  - The whole result is checked the way kube-scheduler checks it (strict decoding of every field at every depth,
    the validation rules of the config and of the in-tree plugin arguments) before anything is written. A file the
    scheduler would refuse is never written, because a k3s or RKE2 server shuts down on it.
  - When the file does not exist, a minimal valid configuration is created with C(clientConnection.kubeconfig),
    C(leaderElection.leaderElect) and the extender, marked as created by this collection. With O(state=absent) such a
    file is deleted when nothing else is left in it.
  - Files are replaced atomically. A created file gets mode C(0600), owner root, as it names a kubeconfig.
author:
  - baremetal.k3s contributors (@baremetal)
requirements:
  - PyYAML on the node, with libyaml as the distributions build it (Debian and Ubuntu C(python3-yaml), EL
    C(python3-pyyaml), SUSE C(python3-PyYAML))
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.FILES
options:
  path:
    description:
      - The KubeSchedulerConfiguration file, for example C(/etc/rancher/k3s/kube-scheduler/config.yaml).
    type: path
    required: true
  state:
    description:
      - V(present) adds or updates the extender; V(absent) removes only that extender (found by O(name), else by
        O(extender.url_prefix)), and an C(extenders) key this module added for it.
      - "V(converted) only converts the file to C(v1) when O(kubernetes_version) no longer reads its apiVersion (with
        O(convert_api_version=true)), and changes nothing else - for a Kubernetes upgrade, before the scheduler restarts
        on the new version. O(extender) is not needed then; a missing file is left missing."
    type: str
    choices: [present, absent, converted]
    default: present
  name:
    description:
      - The name in our entry's marker comment, which tells our extender from others in the same file (mutually exclusive
        with O(extenders), whose items carry their own names); one per
        extender this collection manages there, for example V(csi-baremetal).
    type: str
    default: default
  extender:
    description:
      - Our extender. Rendered to the camelCase fields of the KubeSchedulerConfiguration C(extenders) list.
      - Options left unset (or empty - V(''), V([]), V({})) are not written.
      - Required unless O(state=converted) or O(extenders) is given. Mutually exclusive with O(extenders).
    type: dict
    suboptions:
      url_prefix:
        description:
          - C(urlPrefix), the extender's base URL. Must start with C(http://) or C(https://), with a host and, if any, a port
            from 1 to 65535; checked before anything is written.
        type: str
        required: true
      filter_verb:
        description: C(filterVerb), the verb appended to O(extender.url_prefix) for the filter call.
        type: str
      prioritize_verb:
        description: C(prioritizeVerb). Needs O(extender.weight) greater than 0.
        type: str
      preempt_verb:
        description: C(preemptVerb).
        type: str
      bind_verb:
        description: C(bindVerb). Only one extender of the whole file may bind.
        type: str
      weight:
        description: C(weight), the multiplier of the prioritize scores; must be positive when O(extender.prioritize_verb) is set.
        type: int
      enable_https:
        description: C(enableHTTPS).
        type: bool
      tls_config:
        description: C(tlsConfig). Files must exist on the node. Data values are PEM text; the module base64-encodes them.
        type: dict
        suboptions:
          insecure:
            description: C(insecure). Cannot be combined with a CA.
            type: bool
          server_name:
            description: C(serverName).
            type: str
          cert_file:
            description: C(certFile), absolute path on the node.
            type: path
          key_file:
            description: C(keyFile), absolute path on the node.
            type: path
          ca_file:
            description: C(caFile), absolute path on the node.
            type: path
          cert_data:
            description: C(certData), PEM text of the client certificate.
            type: str
          key_data:
            description: C(keyData), PEM text of the client key.
            type: str
          ca_data:
            description: C(caData), PEM text of the CA bundle.
            type: str
      http_timeout:
        description: C(httpTimeout), a Go duration such as C(15s) or C(1m30s).
        type: str
      node_cache_capable:
        description: C(nodeCacheCapable).
        type: bool
      managed_resources:
        description: C(managedResources), extended resources (such as C(example.com/gpu)) managed by the extender.
        type: list
        elements: dict
        suboptions:
          name:
            description: The extended resource name; must contain a C(/) and not be in C(kubernetes.io/).
            type: str
            required: true
          ignored_by_scheduler:
            description: C(ignoredByScheduler).
            type: bool
      ignorable:
        description: C(ignorable), scheduling goes on when the extender fails or cannot be reached.
        type: bool
  extenders:
    description:
      - Several extenders of ours at once, in one change of the file. Each item is O(extender)'s options plus its
        C(name), the name in its marker comment. Mutually exclusive with O(name) and O(extender).
      - "With O(state=present) the entries carrying our marker (in a flow-style or JSON list, those the record names
        and still exactly as written) become exactly this list: a new one is added, a changed one replaced in place,
        and one of ours whose name is not listed is removed - so taking one out of the list removes it alone. An entry
        without our marker or record (another tool's, or written by hand) is never touched, unless a listed extender
        takes it over by its C(urlPrefix), as O(extender) does. The list must not be empty."
      - With O(state=absent) every listed extender is removed (found by its marker or the record, else by its
        C(url_prefix)); the others stay. Removing the last of ours gives the file back byte for byte.
      - "The whole list is checked before anything is written, each error naming its item (C(extenders[1].url_prefix)):
        names given once, each C(urlPrefix) once, at most one extender of the whole resulting file with a C(bind_verb),
        and every option as for O(extender)."
    type: list
    elements: dict
    suboptions:
      name:
        description: The name in the entry's marker comment (letters, digits, C(-), C(_), C(.)); one per extender.
        type: str
        required: true
      url_prefix:
        description:
          - C(urlPrefix), the extender's base URL. Must start with C(http://) or C(https://), with a host and, if any, a port
            from 1 to 65535; checked before anything is written.
        type: str
        required: true
      filter_verb:
        description: C(filterVerb), the verb appended to O(extenders[].url_prefix) for the filter call.
        type: str
      prioritize_verb:
        description: C(prioritizeVerb). Needs O(extenders[].weight) greater than 0.
        type: str
      preempt_verb:
        description: C(preemptVerb).
        type: str
      bind_verb:
        description: C(bindVerb). Only one extender of the whole file may bind.
        type: str
      weight:
        description: C(weight), the multiplier of the prioritize scores; must be positive when O(extenders[].prioritize_verb) is set.
        type: int
      enable_https:
        description: C(enableHTTPS).
        type: bool
      tls_config:
        description: C(tlsConfig). Files must exist on the node. Data values are PEM text; the module base64-encodes them.
        type: dict
        suboptions:
          insecure:
            description: C(insecure). Cannot be combined with a CA.
            type: bool
          server_name:
            description: C(serverName).
            type: str
          cert_file:
            description: C(certFile), absolute path on the node.
            type: path
          key_file:
            description: C(keyFile), absolute path on the node.
            type: path
          ca_file:
            description: C(caFile), absolute path on the node.
            type: path
          cert_data:
            description: C(certData), PEM text of the client certificate.
            type: str
          key_data:
            description: C(keyData), PEM text of the client key.
            type: str
          ca_data:
            description: C(caData), PEM text of the CA bundle.
            type: str
      http_timeout:
        description: C(httpTimeout), a Go duration such as C(15s) or C(1m30s).
        type: str
      node_cache_capable:
        description: C(nodeCacheCapable).
        type: bool
      managed_resources:
        description: C(managedResources), extended resources (such as C(example.com/gpu)) managed by the extender.
        type: list
        elements: dict
        suboptions:
          name:
            description: The extended resource name; must contain a C(/) and not be in C(kubernetes.io/).
            type: str
            required: true
          ignored_by_scheduler:
            description: C(ignoredByScheduler).
            type: bool
      ignorable:
        description: C(ignorable), scheduling goes on when the extender fails or cannot be reached.
        type: bool
  api_version:
    description:
      - The apiVersion (C(kubescheduler.config.k8s.io/...)) of a new file.
      - V(auto) picks the newest version that O(kubernetes_version) accepts, V(v1) without it.
      - An existing file keeps its version, unless O(convert_api_version) converts it to C(v1); a different explicit value
        is an error.
    type: str
    choices: [auto, v1, v1beta3, v1beta2, v1beta1]
    default: auto
  kubernetes_version:
    description:
      - The version of the scheduler binary (C(k3s --version), C(rke2 --version), the kube-scheduler image tag), not the API
        server's. Forms like V(v1.31.4+k3s1), V(v1.29.3+rke2r1) or V(1.30) are accepted.
      - An existing file whose apiVersion this version no longer accepts is converted to C(v1) (O(convert_api_version)), or
        refused, naming the version to move to.
    type: str
  convert_api_version:
    description:
      - "When O(kubernetes_version) no longer reads the existing file's apiVersion (C(v1beta2) after Kubernetes 1.27,
        C(v1beta3) after 1.28), convert the file to C(kubescheduler.config.k8s.io/v1) before the extender change, as
        part of the same write: for a Kubernetes upgrade, before the scheduler restarts on the new version."
      - "The conversion edits only what changed between the versions and keeps every other byte (comments, order,
        the operator's fields): the apiVersion, and C(args.apiVersion) of each C(pluginConfig); from C(v1beta2) the
        C(healthzBindAddress) and C(metricsBindAddress) keys (accepted only empty or with port 0 since Kubernetes
        1.23, so they served nothing) are removed, and the score weights C(v1beta2) gave by default and C(v1) raised
        (C(TaintToleration) 1, now 3; C(NodeAffinity) 1, now 2; C(InterPodAffinity) 1, now 2) are pinned in the
        profile's C(plugins.multiPoint.enabled), so the scheduler ranks nodes as before; a C(disabled) entry of a
        plugin C(v1) no longer has (C(SelectorSpread), C(NodePreferAvoidPods), C(EBSLimits), C(GCEPDLimits),
        C(AzureDiskLimits), C(CinderLimits)) is removed."
      - "What has no faithful C(v1) form is refused, naming its place in the file and what to do, and nothing is
        changed: such a plugin enabled or configured, or an insecure serving address with a port."
      - The previous file is always kept as the backup (in O(backup_dir), returned in RV(files)), also when O(backup)
        is false, so that module M(baremetal.k3s.rollback) can put it back. The result's RV(conversion) and a warning
        list the changes; check mode and diff mode show them.
      - With V(false) (the default, as this rewrites a file the operator may own), such a file is refused, naming the
        version to move to. The role C(baremetal.k3s.scheduler_extender) turns it on (its variable
        C(scheduler_extender_convert_api_version)).
    type: bool
    default: false
  kubeconfig:
    description:
      - C(clientConnection.kubeconfig) of a new file; required when the file does not exist, and must exist on the node.
      - k3s C(/var/lib/rancher/k3s/server/cred/scheduler.kubeconfig), RKE2
        C(/var/lib/rancher/rke2/server/cred/scheduler.kubeconfig), kubeadm C(/etc/kubernetes/scheduler.conf).
    type: path
  leader_elect:
    description: C(leaderElection.leaderElect) of a new file. An existing file keeps its own setting.
    type: bool
    default: true
  backup:
    description: Keep a copy of the previous file in O(backup_dir) before changing or deleting it.
    type: bool
    default: false
  backup_dir:
    description:
      - Where backups go. Never inside a static-pod manifest directory (C(/etc/kubernetes/manifests),
        C(/var/lib/rancher/*/agent/pod-manifests)), as the kubelet reads every file there.
    type: path
    default: /var/backups/baremetal-k3s
  keep_unused:
    description:
      - With O(state=absent), a file this module would delete (ours, nothing else left in it) is left as it is, and
        RV(unused) says so - for a scheduler that still mounts it (a static pod - the container runtime makes a
        directory at a missing hostPath when the container restarts). Take the flag and the mount out first, wait
        for the new scheduler, then run again without it to delete the file.
    type: bool
    default: false
notes:
  - "Refused on purpose although kube-scheduler 1.36 may accept them: several YAML documents in one file (kube-scheduler reads
    the first); an O(extender.url_prefix) that is not http(s); a missing C(clientConnection.kubeconfig) file or C(tlsConfig)
    file on the node; C(tlsConfig) with a certificate but no key (or the reverse) or C(*Data) that is not PEM; C(pluginConfig)
    of an in-tree plugin with empty or non-mapping C(args), or C(args.apiVersion) other than the document's; alpha,
    feature-gated fields (C(percentageOfPlacementsToScore), the C(placement*) and C(podGroupPostFilter) extension points,
    C(VolumeBindingArgs.shape), C(DynamicResourcesArgs.bindingTimeout)); enabling an in-tree plugin at an extension point
    this module does not know it implements."
  - "The conversion (O(convert_api_version)) is tested against real kube-scheduler binaries: the old file as kube-scheduler
    1.27 reads it and the converted file as 1.36 reads it give the same plugins and score weights, except for what the
    Kubernetes versions themselves changed (the in-tree volume limit plugins gone, new default plugins such as
    C(DynamicResources) and C(NodeDeclaredFeatures))."
  - Kubernetes v1.36 is the reference for the C(v1) rules; C(v1beta1), C(v1beta2) and C(v1beta3) are checked for their fields,
    types and the shared validation rules, without the per-plugin extension-point checks.
seealso:
  - module: baremetal.k3s.k3s_service_arg
'''

EXAMPLES = r'''
- name: Add CSI Baremetal's extender to the k3s scheduler config
  baremetal.k3s.scheduler_config:
    path: /etc/rancher/k3s/kube-scheduler/config.yaml
    kubernetes_version: v1.31.4+k3s1
    kubeconfig: /var/lib/rancher/k3s/server/cred/scheduler.kubeconfig
    extender:
      url_prefix: http://127.0.0.1:8889
      filter_verb: filter
      prioritize_verb: prioritize
      weight: 1
      http_timeout: 15s
      ignorable: true
    backup: true

- name: Before restarting on Kubernetes 1.30, convert a v1beta3 file to v1 (the old file kept as the backup)
  baremetal.k3s.scheduler_config:
    path: /etc/rancher/k3s/kube-scheduler/config.yaml
    kubernetes_version: v1.30.6+k3s1
    extender:
      url_prefix: http://127.0.0.1:8889
      filter_verb: filter
    convert_api_version: true
  register: scheduler_config

- name: Upgrading to Kubernetes 1.30, only convert the file (the extenders stay as they are)
  baremetal.k3s.scheduler_config:
    path: /etc/rancher/k3s/kube-scheduler/config.yaml
    state: converted
    kubernetes_version: v1.30.6+k3s1
    convert_api_version: true

- name: Two extenders in one change (a marked extender not listed any more is removed)
  baremetal.k3s.scheduler_config:
    path: /etc/rancher/k3s/kube-scheduler/config.yaml
    kubeconfig: /var/lib/rancher/k3s/server/cred/scheduler.kubeconfig
    extenders:
      - name: csi-baremetal
        url_prefix: http://127.0.0.1:8889
        filter_verb: filter
        prioritize_verb: prioritize
        weight: 1
      - name: gpu-share
        url_prefix: http://127.0.0.1:12345
        filter_verb: filter
        bind_verb: bind
        managed_resources:
          - name: example.com/gpu

- name: Remove it again (other extenders stay)
  baremetal.k3s.scheduler_config:
    path: /etc/rancher/k3s/kube-scheduler/config.yaml
    state: absent
    extender:
      url_prefix: http://127.0.0.1:8889
'''

RETURN = r'''
path:
  description: The file.
  returned: always
  type: str
  sample: /etc/rancher/k3s/kube-scheduler/config.yaml
api_version:
  description: The apiVersion of the file (kept from an existing file, chosen for a new one).
  returned: always
  type: str
  sample: kubescheduler.config.k8s.io/v1
extenders:
  description: The C(urlPrefix) of every extender in the file after the change, in order.
  returned: always
  type: list
  elements: str
  sample: [http://gpu-share:12345, http://127.0.0.1:8889]
created:
  description: Whether the file was (or in check mode would be) created.
  returned: always
  type: bool
  sample: false
removed:
  description: Whether the file was (or would be) deleted, as it was ours and nothing else was left in it.
  returned: always
  type: bool
  sample: false
unused:
  description: The file would be deleted, but O(keep_unused) kept it as it was.
  returned: when O(keep_unused) kept a file
  type: bool
  sample: true
exists:
  description: Whether the file exists after the change (a caller takes out the flag that passes it once it is gone).
  returned: always
  type: bool
  sample: true
name:
  description: The name in our entry's marker comment (null with O(extenders)).
  returned: always
  type: str
  sample: csi-baremetal
names:
  description: The names of O(extenders), in order.
  returned: with O(extenders)
  type: list
  elements: str
  sample: [csi-baremetal, gpu-share]
extender_changes:
  description: With O(extenders), the names of the extenders added, changed (replaced) and removed.
  returned: with O(extenders)
  type: dict
  contains:
    added:
      description: Extenders added.
      type: list
      elements: str
    changed:
      description: Extenders whose entry was replaced.
      type: list
      elements: str
    removed:
      description: Extenders removed (with O(state=present), marked entries no longer listed).
      type: list
      elements: str
  sample: {added: [gpu-share], changed: [], removed: [old-extender]}
files:
  description:
    - One entry per file changed, so a caller can undo exactly this run (module M(baremetal.k3s.rollback)) - the
      scheduler config, and the record of our entries in a flow-style or JSON list when it changed.
  returned: always
  type: list
  elements: dict
  sample: [{path: /etc/rancher/k3s/kube-scheduler/config.yaml, action: created, backup_file: null}]
conversion:
  description:
    - The conversion of the existing file to C(v1) (O(convert_api_version)), made or (in check mode) planned.
  returned: when the file was converted
  type: dict
  contains:
    from:
      description: The file's apiVersion before.
      type: str
      sample: kubescheduler.config.k8s.io/v1beta3
    to:
      description: The apiVersion written.
      type: str
      sample: kubescheduler.config.k8s.io/v1
    changes:
      description: Each change made, with its place in the file.
      type: list
      elements: str
      sample: ["apiVersion: kubescheduler.config.k8s.io/v1beta3 -> kubescheduler.config.k8s.io/v1"]
backup_file:
  description: The backup of the previous file.
  returned: when O(backup=true) or the file was converted, and the file changed
  type: str
  sample: /var/backups/baremetal-k3s/config.yaml.4242.2026-01-01@12:00:00~
diff:
  description: Before and after text.
  returned: in diff mode, when the file changed
  type: list
  elements: dict
  sample: [{before: "", after: "apiVersion: kubescheduler.config.k8s.io/v1\n..."}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _deps, _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _scheduler_config as sc
from ansible_collections.baremetal.k3s.plugins.module_utils import _static_pod as sp
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

# the options live with the logic (module_utils/_scheduler_config.py), so that scheduler_files checks them the same way
TLS_SPEC = sc.TLS_SPEC
EXTENDER_SPEC = sc.EXTENDER_SPEC
ARGUMENT_SPEC = sc.ARGUMENT_SPEC


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                           mutually_exclusive=sc.MUTUALLY_EXCLUSIVE, required_if=sc.REQUIRED_IF)
    params = module.params
    if not sc.HAS_YAML:
        module.fail_json(msg=_deps.missing_lib_msg('PyYAML'), exception=str(sc.YAML_IMPORT_ERROR))
    view = _io.node_view(module)
    # A file converted to v1 is always backed up: the backup is what a rollback puts back.
    backup = sc.wants_backup(view, params)
    if backup and sp.in_static_pod_dir(params['backup_dir'], view=view):
        module.fail_json(msg=backup_dir_refusal(params['backup_dir']))
    try:
        result = _io.locked_apply(module, lambda: sc.checked_plan(view, params, backup), paths=sc.lock_paths(view, params),
                                  backup=backup, backup_dir=params['backup_dir'])
    except (PlanError, _io.ApplyError) as e:
        module.fail_json(msg=e.msg, path=params['path'], **getattr(e, 'details', {}))
    module.exit_json(**result)


def backup_dir_refusal(backup_dir):
    return ('backup_dir %s is inside a static-pod manifest directory, where the kubelet reads every file; choose another '
            'directory, for example /var/backups/baremetal-k3s' % backup_dir)


if __name__ == '__main__':
    main()
