#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""k3s_restore: a k3s_backup archive put back as a stopped server's datastore and token (SQLite, or embedded etcd
through k3s's own --cluster-reset), and the other etcd servers' datastores moved aside so that they rejoin.

How it keeps the collection's contract (docs/developing.md): ``_restore.plan`` reads the node
through the View only and refuses before anything is written (k3s running, no checksum, a
place taken). The datastore is a directory swapped by renames, not a file's bytes in a
``Plan``, so ``_restore.restore`` writes through ``_io``'s directory and stream writes, under
``_io.node_lock``: everything is checked (sha256, members, integrity) and unpacked in a temp
directory on the same file system first (``_io.temp_dir``), then swapped into place
(``_io.replace_dir``); the previous ``server/db`` is renamed aside, never deleted; a failed
rename puts the earlier ones back (``_io.Written``); check mode verifies and writes nothing. With an etcd snapshot,
k3s's own restore runs in the foreground afterwards, and anything but its success puts the
renames back as well.
"""

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_restore
short_description: Put a k3s_backup archive back as a stopped k3s server's datastore and token (SQLite or etcd)
version_added: 0.1.0
description:
  - Checks the archive first - its sha256 against O(sha256) or the C(.sha256) file beside it, its members (only what
    M(baremetal.k3s.k3s_backup) writes, regular files, no path outside the data directory), the sha256 its manifest
    records for each file, and C(PRAGMA integrity_check) of the datastore in it. Any mismatch fails with nothing
    changed.
  - Then moves the current C(<data_dir>/server/db) aside as C(<data_dir>/server/db.before-restore-<YYYYmmddTHHMMSSZ>)
    (never deleted - remove it once the restored server is proven), puts the archive's datastore in as
    C(server/db/state.db) (directory 0700, file 0600; no stale C(-wal)/C(-shm) of the old one), and replaces
    C(server/token) atomically when it differs (the old token kept as C(server/token.before-restore-<time>), 0600).
  - C(server/db) is never missing - the new directory and the old one trade names in one step (C(renameat2) with
    C(RENAME_EXCHANGE); only where the kernel or file system lacks it, two renames). A C(server/db) that is a symbolic
    link to another disk stays that link - the datastore is replaced on that disk, and the previous one is kept aside
    there. What a killed restore left (its C(.db.restore-*.tmp) stage, the token's temp files) is removed by the next
    run before it checks the room (RV(stale_removed)).
  - An archive of embedded etcd (C(server/db/snapshots/<file>), checked by the sha256 etcd appends to a snapshot) is
    put in place the same way - the current C(server/db) aside, the snapshot in C(server/db/snapshots/), the token -
    and then restored by k3s itself, as k3s documents it - C(k3s server --cluster-reset
    --cluster-reset-restore-path=<snapshot> --token=<the archive's token>), run in the foreground with the command line
    and environment of the service O(service) (k3s reads its config files itself; the restore path is written into no
    file). It must exit 0 and print k3s's C(Managed etcd cluster membership has been reset) line within O(timeout);
    otherwise everything is put back - the new C(server/db) kept as C(server/db.failed-restore-<time>), the previous
    one and the token back - and the module fails with k3s's last lines.
  - Before anything is written, an etcd restore refuses a server whose configured token (C(token-file), C(token), C(-t),
    C(K3S_TOKEN)) is not the archive's - k3s reads a token file over C(--token) and decrypts the restored bootstrap data
    with it - an etcd archive on a SQLite server and a SQLite archive on an etcd server.
  - O(step=rejoin) is the other servers' part (k3s - "Backup and delete ${datadir}/server/db on each peer etcd server and
    rejoin the nodes") - with k3s stopped, C(server/db) is moved aside as C(server/db.before-restore-<time>) (kept,
    never deleted), so that the next start joins the restored cluster as a new member. It refuses a server with no
    server URL to join through (C(server), C(-s), C(K3S_URL)) - without one it would start a cluster of its own.
  - Refuses to run while the k3s service O(service) is active (unless O(require_stopped=false), for a check before
    the stop). It does not stop or start k3s - the playbook C(baremetal.k3s.restore) does, and waits until the API
    answers; with embedded etcd it stops every server, restores one and rejoins the others one at a time.
  - The local-path storage in an archive (C(storage/)) is not put back by this module; RV(storage_in_archive) says
    whether the archive holds it.
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
attributes:
  check_mode:
    support: full
    details: Verifies the sha256 and the members; writes nothing (not even a temp file), so the datastore's
      integrity is checked only in a real run, before anything is moved.
  diff_mode:
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: posix
options:
  archive:
    description: The archive on the node, as M(baremetal.k3s.k3s_backup) wrote it. Required with O(step=restore).
    type: path
  sha256:
    description: The archive's expected sha256; default the digest in C(<archive>.sha256).
    type: str
  data_dir:
    description: k3s's data directory; default the one the service O(service) runs with (M(baremetal.k3s.k3s_info)).
    type: path
  service:
    description:
      - The k3s service that must be stopped; its data directory is the default of O(data_dir), and with embedded etcd
        its command line and environment run k3s's restore.
      - V('') skips the check - only for a SQLite data directory no service uses.
    type: str
    default: k3s
  step:
    description:
      - V(restore) - put the archive back on this server (with embedded etcd - and run k3s's cluster reset).
      - V(rejoin) - on another server of the same embedded etcd cluster, move C(server/db) aside so that its next start
        joins the restored server's cluster; O(archive) is not used.
      - V(discard) - on a server that holds a datastore of another cluster and is to join one, move C(server/db) and
        C(server/token) aside as C(server/db.baremetal-k3s-<time>) and C(server/token.baremetal-k3s-<time>) (kept, no
        longer used), so that its next start joins; O(archive) is not used. The role P(baremetal.k3s.k3s_server#role) does
        it with C(k3s_server_join_discard_datastore=true).
    type: str
    choices: [restore, rejoin, discard]
    default: restore
  require_stopped:
    description:
      - Refuse while the service O(service) runs. V(false) is for a check (check mode) before k3s is stopped.
    type: bool
    default: true
  timeout:
    description: Seconds k3s's C(--cluster-reset) may take (embedded etcd) before it is ended and everything put back.
    type: int
    default: 600
notes:
  - The files k3s itself rewrites during a cluster reset (the bootstrap data - certificates and credentials under
    C(server/tls) and C(server/cred), from the snapshot) are not put back when it fails; with a snapshot of this cluster
    they hold what they held.
  - With embedded etcd, the token and k3s's output are never shown - the archive's token is added to the values Ansible
    masks, and RV(reset_argv) shows it as C((hidden)).
seealso:
  - module: baremetal.k3s.k3s_backup
  - module: baremetal.k3s.k3s_ready
'''

EXAMPLES = r'''
- name: Stop k3s
  ansible.builtin.service:
    name: k3s
    state: stopped

- name: Put the backup back
  baremetal.k3s.k3s_restore:
    archive: /var/backups/k3s/k3s-backup-server-1-20260125T031500Z.tar.gz
  register: restored

- name: Start k3s
  ansible.builtin.service:
    name: k3s
    state: started

- name: Check an etcd archive before k3s is stopped (check mode, k3s running)
  baremetal.k3s.k3s_restore:
    archive: /var/backups/k3s/k3s-backup-server-1-20260125T031500Z.tar.gz
    require_stopped: false
  check_mode: true

- name: On another server of the etcd cluster, stopped - move its datastore aside so that it rejoins
  baremetal.k3s.k3s_restore:
    step: rejoin
'''

RETURN = r'''
archive:
  description: O(archive).
  returned: always
  type: str
  sample: /var/backups/k3s/k3s-backup-server-1-20260125T031500Z.tar.gz
sha256:
  description: The sha256 the archive was checked against (and has).
  returned: always
  type: str
  sample: 0f3c5b0b1d3e4f8a9b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a
data_dir:
  description: The data directory restored into.
  returned: always
  type: str
  sample: /var/lib/rancher/k3s
db_dir:
  description: The datastore directory put in place.
  returned: always
  type: str
  sample: /var/lib/rancher/k3s/server/db
db_aside:
  description: Where the previous C(server/db) was moved; empty when there was none (a lost datastore, or a rejoin of a
    server without one).
  returned: always
  type: str
  sample: /var/lib/rancher/k3s/server/db.before-restore-20260125T040000Z
stale_removed:
  description: What a killed restore left and this run removed first (its C(.db.restore-*.tmp) stage directory, the
    token's temp files).
  returned: when the restore ran (not in check mode, not with O(step=rejoin))
  type: list
  elements: str
  sample: [/var/lib/rancher/k3s/server/.db.restore-x1y2.tmp]
stale_kept:
  description: A datastore a restore killed between its two steps had moved out of C(server/db) and not yet aside; moved
    to C(server/db.before-restore-<time>.killed) instead of being removed.
  returned: when the restore ran (not in check mode, not with O(step=rejoin))
  type: list
  elements: str
  sample: []
token_aside:
  description: Where the previous token's bytes were kept; empty when the token did not change or there was none.
  returned: always
  type: str
  sample: ''
restored:
  description: The files put in place (the datastore or the snapshot, the token when it changed).
  returned: always
  type: list
  elements: str
  sample: [/var/lib/rancher/k3s/server/db/state.db]
rows:
  description: The rows of kine's table in the restored datastore; 0 in check mode.
  returned: always
  type: int
  sample: 2140
revision:
  description: The newest kine revision in the restored datastore; 0 in check mode.
  returned: always
  type: int
  sample: 2211
storage_in_archive:
  description: Whether the archive holds C(storage/) (not put back by this module).
  returned: always
  type: bool
  sample: false
manifest:
  description: The archive's C(backup-manifest.json) - host, creation time, data directory, rows, files and sha256.
  returned: always
  type: dict
step:
  description: O(step).
  returned: always
  type: str
  sample: restore
datastore:
  description: What the archive holds - V(sqlite) or V(etcd); empty with O(step=rejoin).
  returned: always
  type: str
  sample: etcd
node_datastore:
  description: What the server held before - V(sqlite), V(etcd), or empty (no datastore, a rebuilt node).
  returned: always
  type: str
  sample: etcd
snapshot:
  description: With an etcd archive, where its snapshot was put (the restore path given to k3s).
  returned: always
  type: str
  sample: /var/lib/rancher/k3s/server/db/snapshots/k3s-backup-server-1-server-1-1769311200
reset_argv:
  description: With an etcd archive, the command run (in check mode, that would run); the token shown as C((hidden)).
  returned: always
  type: list
  elements: str
  sample: [/usr/local/bin/k3s, server, --cluster-reset, "--cluster-reset-restore-path=/var/lib/rancher/k3s/server/db/snapshots/s1", "--token=(hidden)"]
reset_seconds:
  description: How long k3s's cluster reset ran.
  returned: always
  type: float
  sample: 21.4
reset_message:
  description: k3s's line saying the reset is done.
  returned: always
  type: str
  sample: Managed etcd cluster membership has been reset, restart without --cluster-reset flag now.
join_url:
  description: With O(step=rejoin), the server URL the next start joins through.
  returned: always
  type: str
  sample: https://server-1:6443
'''

import functools
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _restore as restore
from ansible_collections.baremetal.k3s.plugins.module_utils._backup import DEFAULT_DATA_DIR, BackupError
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import ViewError, host_path

ARGUMENT_SPEC = dict(
    archive=dict(type='path'),
    sha256=dict(type='str'),
    data_dir=dict(type='path'),
    service=dict(type='str', default='k3s'),
    step=dict(type='str', default='restore', choices=list(restore.STEPS)),
    require_stopped=dict(type='bool', default=True),
    timeout=dict(type='int', default=restore.RESET_TIMEOUT),
)

PRIVATE = ('_aside', '_command', '_tokens', '_timeout', 'service')


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                           required_if=[('step', 'restore', ('archive',))])
    params = module.params
    if params['timeout'] < 1:
        module.fail_json(msg='timeout must be 1 second or more, got %d.' % params['timeout'])
    try:
        # the locks of the files it replaces (k3s_backup takes the datastore's too), whatever their spelling
        server = os.path.join(params['data_dir'] or DEFAULT_DATA_DIR, 'server')
        locks = [os.path.join(server, 'db'), os.path.join(server, 'token')]
        with _io.node_lock(module, paths=[p for p in locks if os.path.isabs(p)]):
            # every secret read (the service's token, the archive's) goes to no_log_values before it could be shown
            facts = restore.plan(_io.node_view(module), params, found=module.no_log_values).facts
            where = functools.partial(host_path, _io.ROOT)
            if params['step'] == 'rejoin':
                facts = restore.rejoin(facts, where, check_only=module.check_mode)
            elif params['step'] == 'discard':
                facts = restore.discard(facts, where, check_only=module.check_mode)
            else:
                facts = restore.restore(facts, where, check_only=module.check_mode, found=module.no_log_values)
    except (PlanError, BackupError, _io.ApplyError) as e:
        module.fail_json(msg=e.msg, **getattr(e, 'details', {}))
    except ViewError as e:
        module.fail_json(msg=str(e))
    for key in PRIVATE:
        facts.pop(key, None)
    changed = bool(facts['db_aside'] or facts['token_aside']) if params['step'] != 'restore' else True
    module.exit_json(changed=changed, **facts)


if __name__ == '__main__':
    main()
