#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_manifests
short_description: Place manifests in the k3s (or RKE2) server's auto-deploy directory, and take out those dropped
version_added: 0.1.0
description:
  - Writes each manifest of O(manifests) into the server's manifests directory (O(dir)), where k3s's deploy controller
    applies it, and removes the files this module placed earlier that are no longer in the list.
  - Only files this module placed are ever overwritten or removed. It keeps their names in a record in the same
    directory, C(.baremetal-k3s-manifests-<set>) (O(set)) - a dot-file without a manifest extension, which the deploy
    controller skips. Every other file there - k3s's own (C(ccm.yaml), C(coredns.yaml), C(local-storage.yaml),
    C(traefik.yaml), ...) and the administrator's - is left alone; a manifest whose name is taken by such a file is
    refused unless O(force=true).
  - Every content is read as k3s reads it before anything is written - split into documents at C(---) lines, a document
    starting with C({) read as JSON, any other as YAML the way go-yaml reads it - and each document must be a Kubernetes
    object (or a list of them) with C(apiVersion), C(kind) and C(metadata.name). One bad manifest fails the task with
    every problem named and writes nothing.
  - Names are checked as k3s uses them - k3s applies each file as one AddOn named after the file name up to its first
    dot, so that part must be a valid object name, and two files with the same AddOn name (C(app.yaml), C(app.v2.yml))
    are refused, as k3s would have each prune what the other created. The AddOn names of k3s's packaged components
    (C(ccm), C(coredns), C(local-storage), C(metrics-server), C(rolebindings), C(runtimes), C(traefik)) are refused
    unless O(force=true) - k3s rewrites those files at every start, and deletes them when the component is disabled.
  - The deploy controller notices new and changed files by itself (within about 15 seconds); no restart is needed
    (RV(restart_required) is false). Removing a file does B(not) delete what it created in the cluster - k3s leaves those
    objects; delete them with kubectl, or first place the file with the objects left out.
  - Files are replaced atomically and created with mode C(0600), as manifests may hold secrets.
author:
  - baremetal.k3s contributors (@baremetal)
requirements:
  - PyYAML on the node, with libyaml as the distributions build it (Debian and Ubuntu C(python3-yaml), EL
    C(python3-pyyaml), SUSE C(python3-PyYAML))
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.FILES
options:
  manifests:
    description:
      - Every manifest this task manages in O(dir), in the order they are written. A manifest placed by an earlier run
        and missing here is removed; an empty list removes them all (and the record).
      - Render templates and files on the controller and pass their text (C(lookup('ansible.builtin.template', ...)),
        C(lookup('ansible.builtin.file', ...))).
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description:
          - The file name in O(dir), ending in C(.yaml), C(.yml) or C(.json), without a directory, for example
            V(csi-baremetal.yaml). The part up to the first dot is the k3s AddOn name - lower-case letters, digits and
            C(-).
        type: str
        required: true
      content:
        description:
          - The file's text, one or more documents separated by C(---) lines. Written as given, byte for byte (UTF-8).
        type: raw
        required: true
  dir:
    description:
      - The server's manifests directory - C(<data-dir>/server/manifests); for RKE2
        C(/var/lib/rancher/rke2/server/manifests).
      - Created when missing, but only where its parent exists - k3s creates C(<data-dir>/server) with mode C(0700) at its
        first start; create it so first to place manifests before that.
    type: path
    default: /var/lib/rancher/k3s/server/manifests
  set:
    description:
      - The name of the set of manifests this task manages; each set has its own record, so that several tasks (roles)
        can place manifests in one directory without removing each other's. A name placed by another set is refused,
        O(force=true) or not.
      - Lower-case letters, digits and C(-).
    type: str
    default: default
  force:
    description:
      - Take over a file of the same name that this module did not place (and place names of k3s's packaged components).
        Its old content is replaced (kept in O(backup_dir) with O(backup=true)), and from then on it is ours - removed when
        it leaves O(manifests).
    type: bool
    default: false
  backup:
    description: Keep a copy of each file before it is replaced or removed, in O(backup_dir).
    type: bool
    default: false
  backup_dir:
    description: Where backups go.
    type: path
    default: /var/backups/baremetal-k3s
notes:
  - Only the top of O(dir) is written; the names of files in its subdirectories count for the AddOn name check, as the
    deploy controller reads subdirectories too.
  - A run cut off after writing a manifest but before its record leaves the file with exactly the bytes asked for; a file
    that already holds exactly the content asked for is taken over (recorded) without being written, which is how the
    next run completes the cut-off one.
  - In diff mode the manifests' text is shown; run the task with C(no_log) when they hold secrets.
seealso:
  - module: baremetal.k3s.rollback
  - module: baremetal.k3s.k3s_ready
'''

EXAMPLES = r'''
- name: Place CSI Baremetal's manifests and a HelmChartConfig for traefik; take out those no longer listed
  baremetal.k3s.k3s_manifests:
    manifests:
      - name: csi-baremetal.yaml
        content: "{{ lookup('ansible.builtin.template', 'csi-baremetal.yaml.j2') }}"
      - name: traefik-config.yaml
        content: |
          apiVersion: helm.cattle.io/v1
          kind: HelmChartConfig
          metadata:
            name: traefik
            namespace: kube-system
          spec:
            valuesContent: |-
              ports:
                web:
                  exposedPort: 8080
    backup: true
  register: manifests

- name: RKE2, a separate set of manifests
  baremetal.k3s.k3s_manifests:
    dir: /var/lib/rancher/rke2/server/manifests
    set: monitoring
    manifests:
      - name: monitoring.yaml
        content: "{{ lookup('ansible.builtin.file', 'monitoring.yaml') }}"

- name: Take out every manifest of the set
  baremetal.k3s.k3s_manifests:
    set: monitoring
    dir: /var/lib/rancher/rke2/server/manifests
    manifests: []
'''

RETURN = r'''
dir:
  description: The manifests directory.
  returned: always
  type: str
  sample: /var/lib/rancher/k3s/server/manifests
set:
  description: O(set).
  returned: always
  type: str
  sample: default
record:
  description: The record of the set, listing the manifests it placed (gone when it lists none).
  returned: always
  type: str
  sample: /var/lib/rancher/k3s/server/manifests/.baremetal-k3s-manifests-default
placed:
  description: The names of O(manifests), all in O(dir) after the run (in check mode - would be).
  returned: always
  type: list
  elements: str
  sample: [csi-baremetal.yaml, traefik-config.yaml]
written:
  description: The names of RV(placed) whose file was (or would be) created or replaced.
  returned: always
  type: list
  elements: str
  sample: [traefik-config.yaml]
removed:
  description: The names of the files this module had placed that were (or would be) removed, as they left O(manifests).
  returned: always
  type: list
  elements: str
  sample: [old-app.yaml]
restart_required:
  description: Always false - the deploy controller picks up new, changed and removed files by itself.
  returned: always
  type: bool
  sample: false
files:
  description:
    - One entry per file changed - the manifests, then the removed ones, then the record - so a caller can undo exactly
      this run (module M(baremetal.k3s.rollback)).
  returned: always
  type: list
  elements: dict
  sample: [{path: /var/lib/rancher/k3s/server/manifests/csi-baremetal.yaml, action: created, backup_file: null}]
backup_file:
  description: The first backup taken.
  returned: when O(backup=true) and an existing file changed
  type: str
  sample: /var/backups/baremetal-k3s/traefik-config.yaml.4242.2026-01-01@12:00:00~
diff:
  description: Before and after text of each changed file.
  returned: in diff mode, when something changed
  type: list
  elements: dict
  sample: [{before: "", after: "apiVersion: v1\nkind: Namespace\n..."}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _deps, _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _manifests as manifests
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import ViewError

ARGUMENT_SPEC = dict(
    manifests=dict(type='list', elements='dict', required=True, options=dict(
        name=dict(type='str', required=True),
        content=dict(type='raw', required=True),
    )),
    dir=dict(type='path', default=manifests.DEFAULT_DIR),
    set=dict(type='str', default=manifests.DEFAULT_SET),
    force=dict(type='bool', default=False),
    backup=dict(type='bool', default=False),
    backup_dir=dict(type='path', default='/var/backups/baremetal-k3s'),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    if not manifests.HAS_YAML:
        module.fail_json(msg=_deps.missing_lib_msg('PyYAML'), exception=str(manifests.YAML_IMPORT_ERROR))
    try:
        # the directory's lock (every set placed in it reads the others' records), then those of the files it writes
        result = _io.locked_apply(module, lambda: manifests.plan(_io.node_view(module), params), paths=[params['dir']],
                                  backup=params['backup'], backup_dir=params['backup_dir'])
    except (PlanError, _io.ApplyError) as e:
        module.fail_json(msg=e.msg, dir=params['dir'], **getattr(e, 'details', {}))
    except ViewError as e:
        module.fail_json(msg=str(e), dir=params['dir'])
    module.exit_json(**result)


if __name__ == '__main__':
    main()
