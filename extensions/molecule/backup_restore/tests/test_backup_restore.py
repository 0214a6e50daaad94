# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""k3s_backup and baremetal.k3s.restore on the real datastore (kine on SQLite, the real kube-apiserver).

converge.yml backed up while a writer created ConfigMaps ``during-1``, ``during-2``, ... one
after another, wrote ``after-1..3`` once the backup was done, deleted ``server/db`` with k3s
stopped, and restored with the playbook; then restored once more on the live server. Its
figures are in /var/tmp/bk3s-backup-run.json on the node.
"""

from __future__ import annotations

import datetime
import json
import os
import re

KUBECTL = 'k3s kubectl --kubeconfig /etc/rancher/k3s/k3s.yaml '


def run_facts(host):
    return json.loads(host.file('/var/tmp/bk3s-backup-run.json').content_string)


def configmaps(host):
    out = json.loads(host.check_output(KUBECTL + 'get configmaps -n default -o json'))
    return {item['metadata']['name'] for item in out['items']}


def during_numbers(names):
    return sorted(int(n.split('-', 1)[1]) for n in names if re.match(r'^during-\d+$', n))


def test_api_answers_after_the_restores(host):
    assert host.check_output(KUBECTL + 'get --raw /readyz') == 'ok'
    assert host.service('k3s').is_running


def test_objects_written_after_the_backup_are_gone(host):
    names = configmaps(host)
    assert not {'after-1', 'after-2', 'after-3'} & names


def test_objects_written_before_the_backup_are_back_and_form_a_prefix(host):
    """Every ConfigMap the writer had made before the backup started is there; the restored ones are during-1..K with no
    gap (one instant of the datastore), and K lies between what was logged before the backup and after it."""
    facts = run_facts(host)
    numbers = during_numbers(configmaps(host))
    assert numbers == list(range(1, len(numbers) + 1))
    logged = [line.split()[0] for line in host.file('/var/tmp/bk3s-writer.log').content_string.splitlines()]
    assert len(logged) > facts['written_after'] > facts['written_before'] >= 5  # the writer ran before, during, after
    assert facts['written_before'] <= len(numbers) <= facts['written_after'] + 1
    assert len(logged) > len(numbers)  # ConfigMaps written after the snapshot are gone too


def test_the_archive_is_a_secret_with_a_checksum(host):
    facts = run_facts(host)
    archive = host.file(facts['archive'])
    assert archive.mode == 0o600 and archive.user == 'root'
    assert host.file(facts['archive'] + '.sha256').mode == 0o600
    assert host.file('/var/backups/k3s').mode == 0o700
    assert host.check_output('sha256sum %s', facts['archive']).split()[0] == facts['sha256']
    assert facts['contents'] == ['server/db/state.db', 'server/token']
    assert int(facts['rows']) > 0
    names = host.check_output('tar -tzf %s', facts['archive']).split()
    assert names == ['backup-manifest.json', 'server/db/state.db', 'server/token']


def test_the_data_dir_of_config_yaml_was_followed(host):
    facts = run_facts(host)
    assert facts['data_dir'] == '/srv/k3s'
    assert host.file('/srv/k3s/server/db/state.db').exists
    assert not host.file('/var/lib/rancher/k3s/server/db').exists


def test_first_restore_put_back_what_was_lost(host):
    facts = run_facts(host)
    first = facts['first_restore']
    assert first['db_aside'] == ''  # the datastore had been deleted: nothing to keep
    assert first['restored'] == ['/srv/k3s/server/db/state.db']
    assert first['rows'] == int(facts['rows'])


def test_second_restore_kept_the_live_datastore_aside(host):
    facts = run_facts(host)
    second = facts['second_restore']
    aside = second['db_aside']
    assert re.match(r'^/srv/k3s/server/db\.before-restore-\d{8}T\d{6}Z$', aside)
    assert host.file(aside).is_directory
    assert host.file(aside + '/state.db').exists
    assert host.file('/srv/k3s/server/db').mode == 0o700
    assert host.file('/srv/k3s/server/db/state.db').mode == 0o600
    assert host.file('/srv/k3s/server/token').mode == 0o600
    # no temp directory of the restore left in server/
    assert not [n for n in host.check_output('ls -A /srv/k3s/server').split() if n.startswith('.db.restore-')]


def test_full_tmpfs_refused_with_figures_and_nothing_left(host):
    facts = run_facts(host)
    assert 'needed' in facts['full_msg'] and 'free' in facts['full_msg']
    assert host.check_output('find /mnt/bk3s-small').split() == ['/mnt/bk3s-small', '/mnt/bk3s-small/filler']


# kine's rows in the archive's state.db, read on the node (extracted to a temporary directory)
ARCHIVE_ROWS = '''
import os, sqlite3, sys, tarfile, tempfile
with tempfile.TemporaryDirectory() as d:
    with tarfile.open(sys.argv[1]) as t:
        t.extract('server/db/state.db', d)
    db = sqlite3.connect(os.path.join(d, 'server/db/state.db'))
    print(db.execute('SELECT COUNT(*) FROM kine').fetchone()[0])
    db.close()
'''


def k3s_starts(host):
    """When the k3s launcher started, each time (seconds since the epoch, the node's clock)."""
    events = [json.loads(line) for line in host.file('/var/log/k3s-double/events.jsonl').content_string.splitlines() if line]
    return [datetime.datetime.fromisoformat(e['time'].replace('Z', '+00:00')).timestamp()
            for e in events if e['event'] == 'start']


def test_report_figures(host):
    """The figures printed are what they say: the archive's bytes, kine's rows in it, the time the backup
    role took (the archive was written in it), the time the restore took (k3s started once in it)."""
    facts = run_facts(host)
    backup_s = facts['backup_end'] - facts['backup_start']
    restore_s = facts['restore_end'] - facts['restore_start']
    print('\nbackup: %s bytes, %s rows, %.1f s for the role (k3s_info, k3s_backup, fetch, checks); ConfigMaps logged '
          'before it %s, by its end %s (%s during it)'
          % (facts['size'], facts['rows'], backup_s, facts['written_before'], facts['written_after'],
             facts['written_after'] - facts['written_before']))
    print('restore (playbook, from the controller, k3s stopped to API and Node ready): %.1f s in all, k3s_ready waited '
          '%.1f s; second restore on the live server: k3s_ready waited %.1f s'
          % (restore_s, facts['first_ready_elapsed'], facts['second_ready_elapsed']))
    # the bytes are the archive's, on the node and as fetched; the rows are kine's in the archive
    assert host.file(facts['archive']).size == int(facts['size'])
    assert os.path.getsize(facts['fetched']) == int(facts['size'])
    assert int(host.check_output('python3 -c %s %s', ARCHIVE_ROWS, facts['archive'])) == int(facts['rows'])
    # the backup's time is the span the archive was written in
    mtime = float(host.check_output('python3 -c %s %s', 'import os, sys; print(os.stat(sys.argv[1]).st_mtime)',
                                    facts['archive']))
    assert facts['backup_start'] <= mtime <= facts['backup_end'], (facts['backup_start'], mtime, facts['backup_end'])
    # the restore's time is the span from k3s stopped on a lost datastore to its API and Node ready: k3s started
    # exactly once in it, and the wait for readiness is part of it
    starts = [t for t in k3s_starts(host) if facts['restore_start'] <= t <= facts['restore_end']]
    assert len(starts) == 1, (facts['restore_start'], k3s_starts(host), facts['restore_end'])
    assert 0 <= facts['first_ready_elapsed'] <= restore_s
