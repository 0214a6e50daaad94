#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_config_file
short_description: Own one file of flags in the k3s (or RKE2) config drop-in directory
version_added: 0.1.0
description:
  - Writes one file, C(<config_dir>/<name>), holding the k3s flags of O(values) - the whole file, on every run. k3s reads
    C(/etc/rancher/k3s/config.yaml), then every C(*.yaml) / C(*.yml) file of C(/etc/rancher/k3s/config.yaml.d/) in name
    order; RKE2 reads C(/etc/rancher/rke2/) the same way.
  - The file starts with a marker line (C(# Managed by baremetal.k3s.k3s_config_file)). A file at that name without it is
    someone else's - the module refuses to write or remove it. C(config.yaml) and the other drop-ins are read, never
    written.
  - "Keys are sorted and written in block YAML; every scalar is written so that k3s (go-yaml v2) reads it back as the
    same text - C(yes), C(0o17), C(1e3), C(a: b), C(#x) are quoted. Before writing, the new file is read back as k3s
    reads it and must give exactly the flags O(values) means."
  - The file is created with mode 0600, its directory (0755) if needed. It may carry secrets. The values of k3s's
    secret-bearing options - C(token) (and its short form C(t)), C(agent-token), C(cluster-secret), the password of
    C(datastore-endpoint) and of C(etcd-s3-proxy), C(etcd-s3-access-key), C(etcd-s3-secret-key),
    C(etcd-s3-session-token), C(vpn-auth) - in O(values) or in any config file read are never shown in the diff, the
    result, the invocation, the warnings or the messages (C((hidden)) in the module's own output, masked by Ansible
    everywhere else). Paths to such secrets (C(token-file)) are shown.
  - A warning names each key of O(values) that a drop-in sorting after this file sets without C(+) - k3s would then run
    with that file's value, not this one.
  - The module never restarts k3s. RV(restart_required) says whether the file changed while the service runs (k3s reads
    its config files only when it starts).
  - Runs that change the same service at the same time wait for each other (the lock of M(baremetal.k3s.k3s_service_arg)).
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.FILES
options:
  name:
    description:
      - The file name in O(config_dir). It must end in C(.yaml) or C(.yml). Files sorting after it win for the keys they
        set without C(+); choose a prefix accordingly (C(50-cluster.yaml), C(90-node.yaml)).
    type: str
    required: true
  values:
    description:
      - The flags, as in C(config.yaml) - keys are k3s flag names without the dashes (C(disable), C(node-label),
        C(kube-apiserver-arg)), a key ending in C(+) appends its values to the list the earlier files built.
      - Values are strings, numbers, booleans, or lists of them (one flag per item; V([]) for none). Strings are passed
        on as written; k3s trims leading and trailing white space (a warning says so).
      - Required with O(state=present).
    type: dict
  state:
    description:
      - V(present) writes the file; V(absent) removes it (only when it carries the marker). Neither touches another file.
    type: str
    choices: [present, absent]
    default: present
  config_dir:
    description:
      - The drop-in directory - C(<config file>.d). V(/etc/rancher/rke2/config.yaml.d) for RKE2; the directory next to a
        C(--config) / C(K3S_CONFIG_FILE) file for a k3s started with one.
    type: path
    default: /etc/rancher/k3s/config.yaml.d
  service:
    description:
      - The service that reads these files, for RV(restart_required) and the lock - V(k3s), V(k3s-agent),
        C(k3s-<name>), V(rke2-server), V(rke2-agent).
      - Default - V(rke2-server) when O(config_dir) is under C(/etc/rancher/rke2), else V(k3s).
    type: str
  backup:
    description:
      - Keep a copy of the file before it is changed or removed, next to it, with a time stamp in its name. Mind that k3s
        reads only C(*.yaml)/C(*.yml) names, so the copy (ending in C(~)) is not read.
    type: bool
    default: false
requirements:
  - PyYAML on the node, to read k3s's and RKE2's config files (Debian and Ubuntu C(python3-yaml), EL C(python3-pyyaml),
    SUSE C(python3-PyYAML))
notes:
  - Immutable OSes may have C(/etc/rancher/k3s/config.yaml) as a symbolic link (to C(/usr/lib/rancher/k3s/config.yaml));
    k3s still reads C(/etc/rancher/k3s/config.yaml.d/). RV(config_yaml_is_link) and RV(config_yaml_target) report it.
  - An existing file keeps its mode; a warning says when it is readable by others.
seealso:
  - module: baremetal.k3s.k3s_service
  - module: baremetal.k3s.k3s_service_arg
  - name: k3s configuration file
    description: How k3s reads config.yaml and config.yaml.d.
    link: https://docs.k3s.io/installation/configuration#configuration-file
'''

EXAMPLES = r'''
- name: Cluster-wide server flags
  baremetal.k3s.k3s_config_file:
    name: 50-cluster.yaml
    values:
      disable: [traefik, servicelb]
      write-kubeconfig-mode: "0640"
      token-file: /etc/rancher/k3s/token
      tls-san+: [k3s.example.com]
  register: k3s_config

- name: Restart k3s when the running server does not use the new flags yet
  ansible.builtin.systemd_service:
    name: k3s
    state: restarted
  when: k3s_config.restart_required

- name: Agent labels, appended to those of earlier files
  baremetal.k3s.k3s_config_file:
    name: 90-node.yaml
    service: k3s-agent
    values:
      node-label+: ["zone=a", "rack=12"]

- name: RKE2
  baremetal.k3s.k3s_config_file:
    name: 50-cluster.yaml
    config_dir: /etc/rancher/rke2/config.yaml.d
    values:
      cni: cilium

- name: Remove our file
  baremetal.k3s.k3s_config_file:
    name: 50-cluster.yaml
    state: absent
'''

RETURN = r'''
changed:
  description: Whether the file was (or, in check mode, would be) changed.
  returned: always
  type: bool
  sample: true
path:
  description: The file.
  returned: always
  type: str
  sample: /etc/rancher/k3s/config.yaml.d/50-cluster.yaml
config_dir:
  description: The drop-in directory.
  returned: always
  type: str
  sample: /etc/rancher/k3s/config.yaml.d
config_file:
  description: The config file the drop-in directory belongs to (read before the drop-ins).
  returned: always
  type: str
  sample: /etc/rancher/k3s/config.yaml
config_yaml_is_link:
  description: Whether RV(config_file) is a symbolic link (the immutable-OS layout).
  returned: always
  type: bool
  sample: false
config_yaml_target:
  description: The file RV(config_file) points to when it is a link, else V(null).
  returned: always
  type: str
  sample: /usr/lib/rancher/k3s/config.yaml
service:
  description: The service these files are for.
  returned: always
  type: str
  sample: k3s
k3s_args:
  description:
    - The flags k3s gets from all its config files after the change, merged as k3s merges them (inserted after its
      subcommand, before the command line's own flags). Secret values are shown as C((hidden)), the password of a
      C(datastore-endpoint) alone.
  returned: always
  type: list
  elements: str
  sample: [--disable=traefik, --disable=servicelb, --token=(hidden), --token-file=/etc/rancher/k3s/token,
           "--datastore-endpoint=postgres://k3s:(hidden)@db.example.com:5432/k3s", --write-kubeconfig-mode=0640]
masked:
  description: Keys of O(values) that a later drop-in replaces (it sets them without C(+)), with that file.
  returned: always
  type: list
  elements: dict
  contains:
    key:
      description: The flag name.
      type: str
    file:
      description: The drop-in that replaces it.
      type: str
  sample: [{key: disable, file: /etc/rancher/k3s/config.yaml.d/99-local.yaml}]
restart_required:
  description: True when the file changed and the service runs; the module never restarts anything.
  returned: always
  type: bool
  sample: true
files:
  description:
    - One entry per file changed, so a caller can undo exactly this run - restore RV(files[].backup_file) over
      RV(files[].path), or remove a file this run created.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The file.
      type: str
      sample: /etc/rancher/k3s/config.yaml.d/50-cluster.yaml
    action:
      description: V(created), V(modified) or V(removed).
      type: str
      sample: created
    backup_file:
      description: The copy taken before the change (O(backup=true), not in check mode), else V(null).
      type: str
      sample: null
  sample: [{path: /etc/rancher/k3s/config.yaml.d/50-cluster.yaml, action: created, backup_file: null}]
backup_file:
  description: The backup of the file, when O(backup=true) and it existed.
  returned: when a backup was made
  type: str
  sample: /etc/rancher/k3s/config.yaml.d/50-cluster.yaml.12345.2026-01-01@10:00:00~
diff:
  description: Before and after of the file, in diff mode; secret values shown as C((hidden)).
  returned: when diff mode is on and something changed
  type: list
  elements: dict
  sample: [{before: "", after: "token: (hidden)\n", before_header: /etc/rancher/k3s/config.yaml.d/50-cluster.yaml,
            after_header: /etc/rancher/k3s/config.yaml.d/50-cluster.yaml}]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _config_file as config_file
from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

ARGUMENT_SPEC = config_file.ARGUMENT_SPEC


def hide_secrets(module):
    """Secret values of ``values`` never appear in the module's output (invocation included): Ansible masks them."""
    config_file.add_secrets(module.params, module.no_log_values)


class Module(_secrets.MaskedLog, AnsibleModule):
    """AnsibleModule whose own log line on the node (journal or syslog: "Invoked with ...") masks the secrets too."""

    add_secrets = hide_secrets


def main():
    module = Module(argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                    required_if=config_file.REQUIRED_IF)
    hide_secrets(module)
    try:
        result = _io.locked_apply(module, lambda: config_file.plan(_io.node_view(module), module.params, module.no_log_values),
                                  keys=[config_file.lock_key(module.params)], backup=module.params['backup'])
    except (PlanError, _io.ApplyError) as e:
        module.fail_json(msg=e.msg, **getattr(e, 'details', {}))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
