# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.node_lease``: one run at a time per node for a role.

A module's own lock (``_io.node_lock``) lives only as long as the module's process. A role
run spans many tasks (change, restart, wait, roll back), so it takes a *lease*: a small
JSON file in ``/run/baremetal-k3s/`` naming its holder, taken at the start and given back at
the end. A second run finds it, waits up to ``timeout`` and fails naming the holder. A lease
older than ``expire`` is a leftover of a run that was killed; it is taken over with a warning.
``/run`` is a tmpfs: a reboot clears every lease.
"""

from __future__ import annotations

import json
import math
import os
import uuid

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _names
from ansible_collections.baremetal.k3s.plugins.module_utils import _rollback
from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, Plan, PlanError

LEASE_DIR = '/run/baremetal-k3s'

# The options of a lease taken: node_lease's, and those of a module that takes the lease in the same run as its first
# write (scheduler_files' lease).
TAKE_SPEC = dict(
    name=dict(type='str', required=True),
    holder=dict(type='str', default='baremetal.k3s'),
    timeout=dict(type='int', default=300),
    expire=dict(type='int', default=3600),
)


def lease_path(name):
    _names.check('name', name, _names.LEASE, PlanError, what='a valid lease name', hint='for example scheduler_extender')
    return os.path.join(LEASE_DIR, name + '.lease')


def read_lease(view, path):
    """The lease at ``path`` as a dict, None when there is none; an unreadable file counts as stale."""
    data = view.read(path)
    if data is None:
        return None
    try:
        lease = json.loads(data.decode('utf-8'))
    except ValueError:
        return {'holder': 'unknown (the lease file is not JSON)', 'since': 0, 'owner': ''}
    if not isinstance(lease, dict):
        return {'holder': 'unknown', 'since': 0, 'owner': ''}
    since = lease.get('since')
    if isinstance(since, bool) or not isinstance(since, (int, float)) or not math.isfinite(since):
        lease['since'] = 0  # a time that cannot be read counts as long ago: the lease is stale
    lease['holder'] = _terminal.one_line(lease.get('holder') or 'unknown')
    return lease


def describe(lease, now):
    age = max(0, int(now - (lease.get('since') or 0)))
    return '%s, since %ds ago (owner %s)' % (lease.get('holder') or 'unknown', age, lease.get('owner') or '?')


def plan(view, params, now=None, new_owner=None):
    """The Plan for one attempt: take (or renew) or give back the lease.

    Raises :class:`Held` when another holder's live lease is in the way.
    """
    path = lease_path(params['name'])
    now = view.clock.realtime() if now is None else now
    before = view.read(path)
    lease = read_lease(view, path)
    owner = params.get('owner') or ''
    facts = {'lease_file': path, 'owner': owner, 'holder': None}
    warnings = []
    if params.get('state', 'present') == 'absent':
        if lease is None:
            return Plan(facts=facts)
        if owner and lease.get('owner') != owner:
            facts['holder'] = describe(lease, now)
            return Plan(facts=facts, warnings=['the lease %s is held by %s, not by owner %s: left in place.'
                                               % (params['name'], describe(lease, now), owner)])
        return Plan([Change(path, before, None)], facts)
    if lease is not None and lease.get('owner') != owner or (lease is not None and not owner):
        age = now - (lease.get('since') or 0)
        if age < params.get('expire', 3600):
            raise Held('node lease %s is held by %s' % (params['name'], describe(lease, now)), lease)
        warnings.append('took over the lease %s from %s: older than expire (%ss), so its run is gone.'
                        % (params['name'], describe(lease, now), params.get('expire', 3600)))
        lease = None
    owner = owner or new_owner or uuid.uuid4().hex
    record = {'owner': owner, 'holder': params.get('holder') or 'baremetal.k3s', 'since': now if lease is None else lease['since'],
              'renewed': now}
    after = (json.dumps(record, sort_keys=True) + '\n').encode()
    if lease is not None:  # ours already: renewing does not count as a change
        after = before
    facts.update(owner=owner, holder=record['holder'], since=record['since'])
    return Plan([Change(path, before, after, mode=0o600)], facts, warnings)


class Held(PlanError):
    """Another run holds the lease."""

    def __init__(self, msg, lease):
        super().__init__(msg)
        self.lease = lease


def run(module, view, params, first=None):
    """Take (or renew) or give back the lease ``params`` names (node_lease's options), under its lock: every module
    that takes or gives back a lease runs this. While another owner holds it, it waits up to ``params['timeout']``
    seconds, then fails the module naming the holder. ``first``: another write of the same run (an ``_io.Part``),
    planned under the same locks and applied before the lease's (the rollback copies dropped as the lease is given
    back). Returns (the lease's result, with ``waited``; ``first``'s result or None). PlanError and ApplyError are the
    caller's to report."""
    path = lease_path(params['name'])
    lease_part = _io.Part(lambda: plan(view, params), paths=[path])
    start = view.clock.monotonic()
    while True:
        try:
            done = _io.locked_apply_all(module, ([first] if first else []) + [lease_part])
            break
        except Held as e:
            if view.clock.monotonic() - start >= params['timeout']:
                module.fail_json(msg='%s; waited %ss for it. Wait for that run to end (or, if it was killed, remove %s), '
                                     'then run again.' % (e.msg, params['timeout'], path),
                                 holder=e.lease.get('holder'), owner=e.lease.get('owner'))
            view.clock.sleep(2)
    result = done[-1]
    result['waited'] = round(view.clock.monotonic() - start, 1)
    return result, (done[0] if first else None)


def give_back(module, view, params):
    """Give back the lease ``params`` names (``name``, ``owner``) and, first and under the same locks, drop the
    rollback copies of ``params['discard']`` (the writing modules' ``files``): the end of a proven change, in one
    module run (node_lease with state=absent; extender_status's give_back once the scheduler is proven). Returns the
    lease's result with the copies' ``files`` before its own and ``backups_removed``; the result holds no diff (a
    copy's bytes are the file's, secrets and all). PlanError and ApplyError are the caller's to report."""
    discard = params.get('discard') or []
    first = None
    if discard:
        dropped = {'files': discard, 'mode': 'discard'}
        # no secret to hide: the result names the copies, never their bytes
        first = _io.Part(lambda: _rollback.plan(view, dropped), paths=_rollback.paths(dropped))
    result, copies = run(module, view, dict(params, state='absent', timeout=params.get('timeout', 0)), first)
    result.pop('diff', None)
    if copies is not None:
        result.update(changed=result['changed'] or copies['changed'], files=copies['files'] + result['files'],
                      backups_removed=copies['backups_removed'])
    return result
