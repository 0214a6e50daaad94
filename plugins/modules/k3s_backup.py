#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""k3s_backup: the datastore and token of a running k3s server as one tar.gz archive.

How it keeps the collection's contract (docs/developing.md): ``_backup.plan`` reads the node
through the View only (sizes, free space, the backup directory) and refuses before anything is
written; with embedded etcd, ``k3s etcd-snapshot save`` runs through the View too. The archive
does not fit ``Plan``/``Change``, which hold whole file contents in memory (a datastore is MBs to
GBs, and its bytes must come from SQLite's backup API, not from a file read), so
``_backup.write_archive`` streams it through ``_io.stream_file`` - temp files in the target's
directory, fsync, atomic rename, mode 0600 in a 0700 directory, nothing left behind on a
failure, nothing written in check mode - under ``_io.node_lock``.
"""

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_backup
short_description: Back up a k3s server's datastore and token, while k3s runs, as one checked archive
version_added: 0.1.0
description:
  - Copies the SQLite datastore of a k3s server (kine, C(<data_dir>/server/db/state.db)) with SQLite's online backup
    API while k3s runs - one consistent instant of it, its write-ahead log included, however fast kine writes - checks
    the copy (C(PRAGMA integrity_check), the rows of kine's table), and writes it with the server token
    (C(<data_dir>/server/token)) and optionally the local-path storage (C(<data_dir>/storage)) into one archive,
    C(<backup_dir>/k3s-backup-<host>-<YYYYmmddTHHMMSSZ>.tar.gz), with a C(.sha256) file beside it in
    C(sha256sum) format.
  - Without the token a restored datastore is useless - k3s encrypts its bootstrap data (CAs, keys) with it - so both
    are always in the archive. Archive and checksum are mode 0600, the backup directory 0700; they hold secrets.
  - Refuses, before it writes anything, when the free space of O(backup_dir)'s file system (statvfs) is below what
    the backup needs - the datastore copy twice (the copy, then the archive), the token, the storage when included,
    and 1 MiB - and says both figures.
  - Writes in a temp directory inside O(backup_dir) and renames the archive and its checksum into place; a failure
    midway (a full disk) removes everything it wrote, so no half-written archive is ever left.
  - Keeps the O(keep) newest archives of this host - the one it writes included - and removes older ones with their
    C(.sha256). It removes only files named C(k3s-backup-<host>-<stamp>.tar.gz) for this host, never anything else
    in O(backup_dir).
  - With embedded etcd (C(<data_dir>/server/db/etcd) exists) k3s takes the snapshot - C(k3s etcd-snapshot save --name
    k3s-backup-<host>), which writes C(<name>-<node>-<unix time>) into C(<data_dir>/server/db/snapshots) (or
    O(snapshot_dir)) - and the module checks it by the sha256 etcd appends to every snapshot (as etcd's restore does)
    and writes it with the token into the same kind of archive, as C(server/db/snapshots/<file>). The snapshot file
    stays where k3s wrote it (k3s's C(etcd-snapshot-retention) and C(k3s etcd-snapshot delete) manage it); the archive
    is what M(baremetal.k3s.k3s_restore) puts back, through C(k3s server --cluster-reset
    --cluster-reset-restore-path).
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
attributes:
  check_mode:
    support: full
    details: Checks and reports what would be written and removed; writes nothing, takes no etcd snapshot.
  diff_mode:
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: posix
options:
  data_dir:
    description:
      - k3s's data directory (C(--data-dir), C(data-dir) in config.yaml). M(baremetal.k3s.k3s_info) returns it as
        RV(baremetal.k3s.k3s_info#module:data_dir).
    type: path
    default: /var/lib/rancher/k3s
  backup_dir:
    description:
      - Where the archives go. Made (0700) when missing. Must not be inside O(data_dir).
      - Put it on another disk than O(data_dir), or fetch the archives off the node (playbook C(baremetal.k3s.backup)
        with C(k3s_backup_fetch=true)).
    type: path
    default: /var/backups/k3s
  keep:
    description: How many archives of this host to keep, the new one included; older ones are removed.
    type: int
    default: 7
  include_storage:
    description:
      - Also archive C(<data_dir>/storage), the volumes of k3s's local-path provisioner.
      - Those files are copied as they are while pods may write them - not a consistent snapshot of a database that
        runs in a pod. Stop such workloads, or back them up from inside, when consistency matters.
    type: bool
    default: false
  host:
    description: The host name in the archive's name; default the node's host name. Characters other than letters,
      digits, C(.), C(_) and C(-) become C(_).
    type: str
  k3s_binary:
    description: The k3s binary, to run C(etcd-snapshot save) with embedded etcd.
    type: path
    default: /usr/local/bin/k3s
  snapshot_dir:
    description:
      - With embedded etcd, where k3s writes its snapshots - give it when the server sets C(etcd-snapshot-dir).
      - Default C(<data_dir>/server/db/snapshots), k3s's.
    type: path
notes:
  - The SQLite source is opened read-only; the copy is taken in one backup step (one read transaction), which does not
    block kine's writes (WAL mode). SQLite may create C(state.db-wal) and C(state.db-shm) when k3s is stopped and they
    are missing - empty files kine uses anyway.
  - A server on an external datastore (C(datastore-endpoint)) keeps its state in that database - back it up there; the
    module refuses such a node, and an agent.
  - Embedded etcd - the snapshot, its check and the archive - is tested against a real etcd (v3.6, embedded as k3s embeds
    it) under the collection's k3s test double, not against a k3s binary.
  - With embedded etcd the archive holds no C(storage/) (O(include_storage) applies to SQLite servers).
  - Not undone by M(baremetal.k3s.rollback) - an archive is not a configuration file; RV(removed) lists what retention
    deleted.
seealso:
  - module: baremetal.k3s.k3s_restore
  - module: baremetal.k3s.k3s_info
  - name: k3s backup and restore
    description: k3s's own notes on backing up SQLite and etcd datastores.
    link: https://docs.k3s.io/datastore/backup-restore
'''

EXAMPLES = r'''
- name: Read where k3s keeps its data
  baremetal.k3s.k3s_info:
  register: k3s

- name: Back up the datastore and token, keep the last 14
  baremetal.k3s.k3s_backup:
    data_dir: "{{ k3s.data_dir }}"
    backup_dir: /srv/backups/k3s
    keep: 14
  register: backup

- name: Bring the archive to the controller, checked
  ansible.builtin.fetch:
    src: "{{ backup.archive }}"
    dest: "backups/{{ inventory_hostname }}/"
    flat: true
    validate_checksum: true
  when: backup.archive | length > 0
'''

RETURN = r'''
archive:
  description: The archive written (in check mode, that would be written).
  returned: always
  type: str
  sample: /var/backups/k3s/k3s-backup-server-1-20260125T031500Z.tar.gz
sha256_file:
  description: The checksum file beside RV(archive), C(<sha256>  <name>) as C(sha256sum) writes it.
  returned: always
  type: str
  sample: /var/backups/k3s/k3s-backup-server-1-20260125T031500Z.tar.gz.sha256
sha256:
  description: The sha256 of RV(archive); empty in check mode.
  returned: always
  type: str
  sample: 0f3c5b0b1d3e4f8a9b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a
size:
  description: The archive's size in bytes; 0 in check mode.
  returned: always
  type: int
  sample: 1843212
contents:
  description:
    - What the archive holds, as member names relative to the data directory (C(backup-manifest.json) besides).
    - With embedded etcd C(server/db/snapshots/<file>) and C(server/token); in check mode C(server/db/snapshots/).
  returned: always
  type: list
  elements: str
  sample: [server/db/state.db, server/token, storage/]
rows:
  description: The rows of kine's table in the datastore copy (every revision kine keeps); 0 in check mode and with
    embedded etcd.
  returned: always
  type: int
  sample: 2140
revision:
  description: The newest kine revision in the copy; 0 in check mode and with embedded etcd.
  returned: always
  type: int
  sample: 2211
integrity:
  description: C(ok) when the copy passed C(PRAGMA integrity_check) (an etcd snapshot - its appended sha256); empty in
    check mode.
  returned: always
  type: str
  sample: ok
removed:
  description: The older archives (and their C(.sha256)) retention removed - in check mode, the archives it would remove.
  returned: always
  type: list
  elements: str
  sample: [/var/backups/k3s/k3s-backup-server-1-20260118T031500Z.tar.gz]
datastore:
  description: V(sqlite) or V(etcd).
  returned: always
  type: str
  sample: sqlite
needed_bytes:
  description: The space the backup was estimated to need in RV(backup_dir).
  returned: always
  type: int
  sample: 4194304
free_bytes:
  description: The free space found in RV(backup_dir)'s file system.
  returned: always
  type: int
  sample: 10737418240
backup_dir:
  description: O(backup_dir).
  returned: always
  type: str
  sample: /var/backups/k3s
data_dir:
  description: O(data_dir).
  returned: always
  type: str
  sample: /var/lib/rancher/k3s
snapshot_argv:
  description: With embedded etcd, the C(k3s etcd-snapshot save) command run (or, in check mode, that would run).
  returned: always
  type: list
  elements: str
  sample: [/usr/local/bin/k3s, etcd-snapshot, save, --name, k3s-backup-server-1]
snapshots:
  description: With embedded etcd, the snapshot files that appeared in C(<data_dir>/server/db/snapshots).
  returned: when the datastore is etcd
  type: list
  elements: str
  sample: [/var/lib/rancher/k3s/server/db/snapshots/k3s-backup-server-1-server-1-1769311200]
snapshot:
  description: With embedded etcd, the snapshot k3s wrote and the archive holds; empty in check mode.
  returned: when the datastore is etcd
  type: str
  sample: /var/lib/rancher/k3s/server/db/snapshots/k3s-backup-server-1-server-1-1769311200
'''

import functools
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _backup as backup
from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import ViewError, host_path

ARGUMENT_SPEC = dict(
    data_dir=dict(type='path', default=backup.DEFAULT_DATA_DIR),
    backup_dir=dict(type='path', default=backup.DEFAULT_BACKUP_DIR),
    keep=dict(type='int', default=7),
    include_storage=dict(type='bool', default=False),
    host=dict(type='str'),
    k3s_binary=dict(type='path', default='/usr/local/bin/k3s'),
    snapshot_dir=dict(type='path'),
)

# Seconds k3s etcd-snapshot save may take (a large datastore is streamed to disk); past it, it is stopped.
SNAPSHOT_TIMEOUT = 900
PUBLIC = ('archive', 'sha256_file', 'sha256', 'size', 'contents', 'rows', 'revision', 'integrity', 'removed',
          'datastore', 'needed_bytes', 'free_bytes', 'backup_dir', 'data_dir', 'snapshot_argv', 'snapshots', 'snapshot')


def _etcd_snapshot(view, facts):
    """Run k3s etcd-snapshot save (through the View); the facts with the snapshot it wrote (``snapshot``,
    ``snapshots``). PlanError when it fails or its snapshot cannot be found."""
    argv = facts['snapshot_argv']
    before = set(view.listdir(facts['snapshot_dir']) or [])
    rc, out, err = view.run(argv, timeout=SNAPSHOT_TIMEOUT)
    out, err = out or '', err or ''
    if rc != 0:
        why = (err or out).strip() if rc is not None else '%s is not an executable file on this node' % argv[0]
        raise PlanError('%s failed (rc %s): %s' % (' '.join(argv), rc, why), snapshot_argv=argv)
    after = view.listdir(facts['snapshot_dir']) or []
    facts['snapshots'] = [os.path.join(facts['snapshot_dir'], n) for n in after if n not in before]
    name = backup.saved_snapshot(out + '\n' + err)
    if name is None and len(facts['snapshots']) == 1:
        name = os.path.basename(facts['snapshots'][0])
    path = os.path.join(facts['snapshot_dir'], name or '')
    if name is None or not view.isfile(path):
        raise PlanError('%s ran, but %s: the snapshot cannot be put into the archive. If the server sets '
                        'etcd-snapshot-dir, give that directory as snapshot_dir. Its output: %s'
                        % (' '.join(argv), ('no snapshot file named %s is in %s' % (name, facts['snapshot_dir'])) if name
                           else 'it did not say which snapshot it saved ("Snapshot <name> saved.")',
                           (err or out).strip()[-2000:]),
                        snapshot_argv=argv, snapshots=facts['snapshots'])
    facts['snapshot'] = path
    return facts


def _backup(module, params):
    """Plan the backup, then (not in check mode) take the etcd snapshot and write the archive; the facts."""
    view = _io.node_view(module)
    plan = backup.plan(view, params)
    _io.warn(module, plan.warnings)
    facts = plan.facts
    if module.check_mode:
        return facts
    if facts['datastore'] == 'etcd':
        facts = _etcd_snapshot(view, facts)
    facts = backup.write_archive(facts, functools.partial(host_path, _io.ROOT))
    _io.warn(module, facts.get('warnings', []))
    return facts


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    # the datastore's lock (k3s_restore takes it too) and the backup directory's, whatever their spelling
    locks = [os.path.join(params['data_dir'], 'server', 'db'), params['backup_dir']]
    try:
        with _io.node_lock(module, paths=[p for p in locks if os.path.isabs(p)]):
            facts = _backup(module, params)
    except (PlanError, backup.BackupError, _io.ApplyError) as e:
        module.fail_json(msg=e.msg, **getattr(e, 'details', {}))
    except ViewError as e:
        module.fail_json(msg=str(e))
    result = dict((k, facts[k]) for k in PUBLIC if k in facts)
    module.exit_json(changed=True, **result)


if __name__ == '__main__':
    main()
