#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: scheduler_files
short_description: Write the scheduler config and the flag that passes it in one run, neither unless both are valid
version_added: 0.1.0
description:
  - The writes of M(baremetal.k3s.scheduler_config) and M(baremetal.k3s.k3s_service_arg) in one module run. Each option
    takes the options of its module, checked as that module checks them, and gives that module's result back
    (RV(config), RV(flag)). An option left out leaves its files alone.
  - Both parts are planned before either is written, under the locks of both (the scheduler config and the record of
    our entries, the service) - a part its module would refuse (a scheduler config kube-scheduler would reject, a
    different scheduler config already passed to the service) stops the run with nothing written, where two tasks
    would have written the scheduler config first.
  - Then the scheduler config is written, then the flag. A write that fails puts its own part's files back; a
    scheduler config written before it stays, and is named in RV(files) of the failure so that a caller can put it
    back (M(baremetal.k3s.rollback)).
  - "With C(state=absent) in O(flag) and O(config) given, the flag is taken out only when the scheduler config is gone after
    this run (removed by it, or not there, or kept only by its C(keep_unused)): a scheduler config that still holds other extenders or settings is still
    passed. Otherwise the flag's part is left out (RV(flag) not returned)."
  - One module run instead of two is what each server costs less in a rollout - the role
    C(baremetal.k3s.scheduler_extender) writes with it between two servers' restarts.
  - A private key given inline (C(tls_config.key_data)) and a secret in the flag are masked in every output, as each
    module masks its own.
author:
  - baremetal.k3s contributors (@baremetal)
requirements:
  - PyYAML on the node (for O(config)), as M(baremetal.k3s.scheduler_config) needs it
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.FILES
options:
  config:
    description: The options of M(baremetal.k3s.scheduler_config) - our extender in the scheduler config file.
    type: dict
  flag:
    description: The options of M(baremetal.k3s.k3s_service_arg) - the argument that passes the scheduler config to the
      service (k3s, RKE2).
    type: dict
  read:
    description:
      - The options of M(baremetal.k3s.k3s_info) (O(baremetal.k3s.k3s_info#module:platform),
        O(baremetal.k3s.k3s_info#module:service), O(baremetal.k3s.k3s_info#module:manifest_path)), checked as that module
        checks them - read the node as it does, first and in the same module run, return that read as RV(node), and
        take from it what the parts depend on, as the role C(baremetal.k3s.scheduler_extender) does (its filter
        P(baremetal.k3s.scheduler_settings#filter)). A plan of every server costs one module run each, not two.
      - O(config) then gives no C(path) - it is the scheduler config the scheduler is already given, else
        O(config_path); its C(kubernetes_version) may be V(auto) (the scheduler's, as read), and its C(kubeconfig), left
        out with C(state=present), is the one the platform gives the scheduler.
      - O(flag) then gives no C(arg) and no C(service) - the argument that passes O(config_path) to the service read;
        the flag's part is left out where nothing passes a scheduler config that way (the scheduler already has a
        config of its own, or runs from kubeadm's static pod).
      - A node with no control plane of a known platform installed, or an agent, gets no part planned - RV(node) says
        why (RV(baremetal.k3s.k3s_info#module:installed), RV(baremetal.k3s.k3s_info#module:node_role)).
      - The secret values the read meets are masked in every output, as M(baremetal.k3s.k3s_info) masks them.
    type: dict
  config_path:
    description:
      - With O(read) - where our scheduler config goes when the scheduler is given none.
      - Not given - the platform's own place (for k3s C(/etc/rancher/k3s/kube-scheduler/config.yaml)).
    type: path
  lease:
    description:
      - The options of M(baremetal.k3s.node_lease) that take a lease (C(name), C(holder), C(timeout), C(expire)) - the
        lease is taken first, waiting for another holder as that module waits, and the files are written under it -
        the lease and the first write of a change are one module run.
      - The lease stays held after the run, also when the files fail - give it back with M(baremetal.k3s.node_lease)
        (C(state=absent), the RV(lease) C(owner)) once the change is put back, or with the wait that proves it
        (M(baremetal.k3s.extender_status)'s O(baremetal.k3s.extender_status#module:give_back)).
    type: dict
notes:
  - At least one of O(config), O(flag) is required; O(read) requires O(config).
  - The other files of the static-pod platforms (the kube-scheduler manifest, RKE2's extra mounts) are written by
    their own modules.
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: One diff per changed file.
  platform:
    platforms: posix
seealso:
  - module: baremetal.k3s.scheduler_config
  - module: baremetal.k3s.k3s_service_arg
'''

EXAMPLES = r'''
- name: Read a server and plan the change of its scheduler config and flag, in one module run (nothing written)
  baremetal.k3s.scheduler_files:
    read:
      platform: auto
    config:
      state: present
      extender:
        url_prefix: http://127.0.0.1:8889
      kubernetes_version: auto
    flag:
      state: present
  check_mode: true
  register: planned

- name: Put the extender into the scheduler config and pass it to k3s, restart once when either changed
  baremetal.k3s.scheduler_files:
    config:
      path: /etc/rancher/k3s/kube-scheduler/config.yaml
      extender:
        url_prefix: http://127.0.0.1:8889
        filter_verb: filter
      kubernetes_version: "1.33.13"
      kubeconfig: /var/lib/rancher/k3s/server/cred/scheduler.kubeconfig
      backup: true
    flag:
      arg: --kube-scheduler-arg=config=/etc/rancher/k3s/kube-scheduler/config.yaml
      service: k3s
      backup: true
  register: scheduler_files
  notify: restart k3s
'''

RETURN = r'''
config:
  description: The result of the scheduler config's part, as M(baremetal.k3s.scheduler_config) returns it.
  returned: when O(config) is given
  type: dict
flag:
  description: The result of the flag's part, as M(baremetal.k3s.k3s_service_arg) returns it.
  returned: when O(flag) is given and its part runs (see the description for C(state=absent) in O(flag))
  type: dict
node:
  description:
    - The node as O(read) read it - exactly the result of M(baremetal.k3s.k3s_info) with those options.
  returned: when O(read) is given
  type: dict
lease:
  description:
    - The lease taken, as M(baremetal.k3s.node_lease) returns it (C(owner), C(holder), C(since), C(lease_file), C(waited),
      and C(files), the lease file when it was created); also in the result of a failure after it was taken.
    - The lease file is not one of RV(files) - the files a caller puts back on a failure.
  returned: when O(lease) is given
  type: dict
files:
  description:
    - Every file written or removed, in order - V([{path, action, backup_file}]). On a failure, the files of the part
      written before the one that failed.
  returned: always
  type: list
  elements: dict
  sample: [{path: /etc/rancher/k3s/kube-scheduler/config.yaml, action: created, backup_file: null}]
'''

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.baremetal.k3s.plugins.module_utils import _deps, _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_info as k3s_info
from ansible_collections.baremetal.k3s.plugins.module_utils import _lease
from ansible_collections.baremetal.k3s.plugins.module_utils import _platform
from ansible_collections.baremetal.k3s.plugins.module_utils import _scheduler_config as sc
from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets
from ansible_collections.baremetal.k3s.plugins.module_utils import _service_arg as service_arg
from ansible_collections.baremetal.k3s.plugins.module_utils import _static_pod as sp
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Plan, PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import ViewError

# the parts, in the order they are written
PARTS = ('config', 'flag')
ARGUMENT_SPEC = dict({name: dict(type='dict') for name in PARTS}, lease=dict(type='dict'), read=dict(type='dict'),
                     config_path=dict(type='path'))


def hide_secrets(module):
    """The secrets of both parts, as given (before any check), into no_log_values: an inline private key of the
    scheduler config's extenders, a secret in the flag."""
    config, flag = module.params.get('config'), module.params.get('flag')
    if isinstance(config, dict):
        _secrets.add(module.no_log_values, sc.key_data_secrets(config))
    if isinstance(flag, dict) and isinstance(flag.get('arg'), str):
        _secrets.add(module.no_log_values, _secrets.argv_secrets([flag['arg']]))


class Module(_secrets.MaskedLog, AnsibleModule):
    """AnsibleModule whose own log line on the node (journal or syslog: "Invoked with ...") masks the secrets too."""

    add_secrets = hide_secrets


def unused(config_plan):
    """Whether the scheduler config is gone after its part (removed by it, or not there), or would be but for its
    keep_unused."""
    facts = config_plan.facts
    return bool(facts.get('removed')) or not facts.get('exists', True) or bool(facts.get('unused'))


def parts(module, view):
    """[(name, _io.Part)] of the options given, each planned as its own module plans it; and a dict that says, once
    planned, whether the flag's part was left out."""
    found, planned = [], {}
    config = _io.part_options(module, 'config', sc.ARGUMENT_SPEC, mutually_exclusive=sc.MUTUALLY_EXCLUSIVE,
                              required_if=sc.REQUIRED_IF)
    if config is not None:
        if not sc.HAS_YAML:
            module.fail_json(msg=_deps.missing_lib_msg('PyYAML'), exception=str(sc.YAML_IMPORT_ERROR))
        backup = sc.wants_backup(view, config)  # a file converted to v1 is always backed up, as scheduler_config does
        if backup and sp.in_static_pod_dir(config['backup_dir'], view=view):
            module.fail_json(msg='config: backup_dir %s is inside a static-pod manifest directory, where the kubelet reads '
                                 'every file; choose another directory, for example /var/backups/baremetal-k3s'
                                 % config['backup_dir'])

        def plan_config():
            planned['config'] = sc.checked_plan(view, config, backup)
            return planned['config']
        found.append(('config', _io.Part(plan_config, paths=sc.lock_paths(view, config),
                                         apply_args={'backup': backup, 'backup_dir': config['backup_dir']})))
    flag = _io.part_options(module, 'flag', service_arg.ARGUMENT_SPEC)
    if flag is not None:
        def plan_flag():
            # planned after the config (each pass of locked_apply_all plans the parts in order)
            planned['flag_left_out'] = flag['state'] == 'absent' and 'config' in planned and not unused(planned['config'])
            if planned['flag_left_out']:
                return Plan()
            return service_arg.plan(view, flag, module.no_log_values)
        found.append(('flag', _io.Part(plan_flag, keys=[service_arg.lock_key(flag)], apply_args={'backup': flag['backup']})))
    return found, planned


def read_node(module, view):
    """With O(read): the node read as k3s_info reads it (its secrets into no_log_values), and the parts' options filled
    in from it (module.params); the module ends here for a node with no control plane to change. None without it."""
    read = k3s_info.read_options(module, ArgumentSpecValidator)
    if read is None:
        return None
    config, flag = module.params['config'], module.params['flag']
    for part, key in (('config', 'path'), ('flag', 'arg'), ('flag', 'service')):
        if (module.params[part] or {}).get(key) is not None:
            module.fail_json(msg='%s: %s is taken from the node with read; leave it out (config_path says where our '
                                 'scheduler config goes when the scheduler is given none)' % (part, key))
    try:
        node, warnings = k3s_info.read_node(view, read, module.no_log_values)
    except PlanError as e:
        module.fail_json(msg=e.msg, **e.details)
    except ViewError as e:
        module.fail_json(msg=str(e))
    for warning in warnings:
        module.warn(warning)
    if not node.get('installed') or node.get('node_role') != 'server':
        module.exit_json(changed=False, files=[], node=node)
    settings = _platform.scheduler_settings(node, module.params['config_path'] or '',
                                            config.get('kubernetes_version') or 'auto', config.get('kubeconfig') or '')
    config['path'] = settings['target']
    if config.get('kubernetes_version') == 'auto':
        config['kubernetes_version'] = settings['kubernetes_version']
    if config.get('state', 'present') == 'present':
        config['kubeconfig'] = settings['kubeconfig']
    if flag is not None:
        if settings['flag_arg']:
            flag.update(arg=settings['flag_arg'], service=node['service'])
        else:
            module.params['flag'] = None
    return node


def main():
    module = Module(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, required_one_of=[PARTS],
                    required_by={'read': 'config'})
    hide_secrets(module)
    view = _io.node_view(module)
    node = read_node(module, view)
    given, planned = parts(module, view)
    lease = _io.part_options(module, 'lease', _lease.TAKE_SPEC)
    taken = {}
    done = []
    try:
        if lease is not None:
            taken, dummy = _lease.run(module, view, dict(lease, state='present', owner=''))
            taken = {k: taken[k] for k in ('owner', 'holder', 'since', 'lease_file', 'waited', 'files')}
        _io.locked_apply_all(module, [part for dummy, part in given], done=done)
    except (PlanError, _io.ApplyError) as e:
        details = dict(getattr(e, 'details', {}))
        # what the parts before the failed one wrote: a caller puts it back from here (and gives the lease back)
        details['files'] = [f for r in done for f in r.get('files', [])]
        if taken:
            details['lease'] = taken
        if node is not None:
            details['node'] = node  # what the read found, for the caller's report of the refusal
        module.fail_json(msg=e.msg, **details)
    result = _io.parts_result(done)
    if taken:
        result['lease'] = taken
    if node is not None:
        result['node'] = node
    result.update((name, r) for (name, dummy), r in zip(given, done)
                  if not (name == 'flag' and planned.get('flag_left_out')))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
