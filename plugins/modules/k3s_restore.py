#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""k3s_restore: a k3s_backup archive put back as a stopped server's datastore and token.

How it keeps the collection's contract (docs/developing.md): ``_restore.plan`` reads the node
through the View only and refuses before anything is written (k3s running, no checksum, a
place taken). The datastore is a directory swapped by renames, not a file's bytes in a
``Plan``, so ``_restore.restore`` does the writing by ``_io``'s rules: everything is checked
(sha256, members, integrity) and unpacked in a temp directory on the same file system first,
then renamed into place; the previous ``server/db`` is renamed aside, never deleted; a failed
rename puts the earlier ones back; check mode verifies and writes nothing.
"""

from __future__ import annotations

DOCUMENTATION = r'''
module: k3s_restore
short_description: Put a k3s_backup archive back as a stopped k3s server's datastore and token
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
  - Refuses to run while the k3s service O(service) is active. It does not stop or start k3s - the playbook
    C(baremetal.k3s.restore) does, and waits until the API answers.
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
    description: The archive on the node, as M(baremetal.k3s.k3s_backup) wrote it.
    type: path
    required: true
  sha256:
    description: The archive's expected sha256; default the digest in C(<archive>.sha256).
    type: str
  data_dir:
    description: k3s's data directory; default the one the service O(service) runs with (M(baremetal.k3s.k3s_info)).
    type: path
  service:
    description:
      - The k3s service that must be stopped; its data directory is the default of O(data_dir).
      - V('') skips the check - only for a data directory no service uses.
    type: str
    default: k3s
notes:
  - Only SQLite (kine) archives. Embedded etcd is restored by k3s itself - C(k3s server --cluster-reset
    --cluster-reset-restore-path=<snapshot>).
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
  description: Where the previous C(server/db) was moved; empty when there was none (a lost datastore).
  returned: always
  type: str
  sample: /var/lib/rancher/k3s/server/db.before-restore-20260125T040000Z
token_aside:
  description: Where the previous token's bytes were kept; empty when the token did not change or there was none.
  returned: always
  type: str
  sample: ''
restored:
  description: The files put in place.
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
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _restore as restore
from ansible_collections.baremetal.k3s.plugins.module_utils._backup import DEFAULT_DATA_DIR, BackupError
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import ViewError, host_path

ARGUMENT_SPEC = dict(
    archive=dict(type='path', required=True),
    sha256=dict(type='str'),
    data_dir=dict(type='path'),
    service=dict(type='str', default='k3s'),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    try:
        # the locks of the files it replaces (k3s_backup takes the datastore's too), whatever their spelling
        server = os.path.join(params['data_dir'] or DEFAULT_DATA_DIR, 'server')
        locks = [os.path.join(server, 'db'), os.path.join(server, 'token')]
        with _io.node_lock(module, paths=[p for p in locks if os.path.isabs(p)]):
            facts = restore.plan(_io.node_view(module), params).facts
            facts = restore.restore(facts, lambda path: host_path(_io.ROOT, path), check_only=module.check_mode)
    except (PlanError, BackupError) as e:
        module.fail_json(msg=e.msg, **getattr(e, 'details', {}))
    except ViewError as e:
        module.fail_json(msg=str(e))
    facts.pop('_aside', None)
    facts.pop('service', None)
    module.exit_json(changed=True, **facts)


if __name__ == '__main__':
    main()
