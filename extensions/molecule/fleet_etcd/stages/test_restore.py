# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Backup and restore on embedded etcd (restore.yml): baremetal.k3s.backup and baremetal.k3s.restore as an operator
runs them, on three servers of real etcd.

What restore.yml left: <ephemeral dir>/restore.json (the archive fetched, the member list before and after a restore
whose reset failed, the restore's time, the k3s starts after the restore and after site.yml), backup-run.log,
restore-fail.log, restore-run.log (ansible-playbook -v, one JSON line per result) and site-rerun.log.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tarfile

import testinfra
from testinfra.utils.ansible_runner import AnsibleRunner

import bk3s_checks as c  # pylint: disable=import-error

INVENTORY = os.environ['MOLECULE_INVENTORY_FILE']
EPHEMERAL = os.environ['MOLECULE_EPHEMERAL_DIRECTORY']
RUNNER = AnsibleRunner(INVENTORY)
KUBECTL = 'k3s kubectl --kubeconfig /etc/rancher/k3s/k3s.yaml '
DATA = '/var/lib/rancher/k3s'
DB_INFO = ("python3 -c \"import json, ssl, urllib.request; "
           "print(urllib.request.urlopen('https://127.0.0.1:9345/db/info', "
           "context=ssl._create_unverified_context(), timeout=10).read().decode())\"")
RESTORED, HELD = 'bk3s-etcd-server-1', 'bk3s-etcd-server-3'
HOLD = 30  # restore.yml: K3S_DOUBLE_LEARNER_HOLD of server-3


def _hosts(group):
    return {name: testinfra.get_host('ansible://%s' % name, ansible_inventory=INVENTORY) for name in RUNNER.get_hosts(group)}


SERVERS = _hosts('server')
AGENTS = _hosts('agent')


def _figures():
    with open(os.path.join(EPHEMERAL, 'restore.json'), encoding='utf-8') as f:
        return json.load(f)


def _log(name):
    with open(os.path.join(EPHEMERAL, name), encoding='utf-8') as f:
        return f.read()


def _results(log, task, host=None):
    """The JSON results ansible-playbook -v printed for the task whose name ends with ``task`` (on ``host`` only, with
    no delegation, when given): the result with ``_host``, where the task ran (``a -> b`` when delegated)."""
    out, current = [], None
    lines = iter(log.splitlines())
    for line in lines:
        m = re.match(r'^TASK \[(?:[^\]:]+ : )?(.*)\] \**$', line)
        if m:
            current = m.group(1)
            continue
        m = re.match(r'^(?:ok|changed|fatal|failed): \[([^\]]+)\]:?(?: => \(item=.*?\))? (?:FAILED! )?=> (\{.*)$', line)
        if not m:
            continue
        text = m.group(2)
        if text == '{':  # a result Ansible prints indented (debug): up to its closing brace
            for more in lines:
                text += '\n' + more
                if more == '}':
                    break
        if current and current.endswith(task) and host in (None, m.group(1)):
            out.append(dict(json.loads(text), _host=m.group(1)))
    return out


def _members(host):
    return json.loads(host.check_output(DB_INFO))['members']


def _condition(node, kind):
    return next(((x['status'], x.get('reason')) for x in node['status']['conditions'] if x['type'] == kind), None)


def test_the_backup_of_an_etcd_server_is_one_checked_archive_of_the_snapshot_and_the_token():
    archive = _figures()['archive']
    with open(archive, 'rb') as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with open(archive + '.sha256', encoding='utf-8') as f:
        assert f.read() == '%s  %s\n' % (digest, os.path.basename(archive))
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        manifest = json.loads(tar.extractfile('backup-manifest.json').read())
        snapshot_member = manifest['snapshot']
        snapshot = tar.extractfile(snapshot_member).read()
        token = tar.extractfile('server/token').read()
    assert names == ['backup-manifest.json', snapshot_member, 'server/token'], names
    assert re.match(r'^server/db/snapshots/k3s-backup-%s-%s-\d+$' % (RESTORED, RESTORED), snapshot_member), snapshot_member
    assert manifest['datastore'] == 'etcd' and manifest['integrity'] == 'ok'
    assert manifest['files'][snapshot_member]['sha256'] == hashlib.sha256(snapshot).hexdigest()
    # the hash etcd appends to a snapshot, as etcd's own restore checks it
    assert len(snapshot) % 512 == 32 and hashlib.sha256(snapshot[:-32]).digest() == snapshot[-32:]
    assert token.startswith(b'K10') and token == SERVERS[RESTORED].file(DATA + '/server/token').content
    # k3s's own snapshot stays where k3s keeps it
    assert SERVERS[RESTORED].file(DATA + '/server/db/' + snapshot_member[len('server/db/'):]).exists
    # taken by the server itself (k3s etcd-snapshot save asks it), of its real etcd member
    saved = [e for e in c.launcher_events(SERVERS[RESTORED]) if e['event'] == 'etcd_snapshot_saved']
    assert saved and saved[-1]['path'] == DATA + '/' + snapshot_member and saved[-1]['size'] == len(snapshot), saved
    print('\nfleet_etcd backup: %s, %d bytes (snapshot %d bytes)'
          % (os.path.basename(archive), os.path.getsize(archive), len(snapshot)))


def test_the_restore_brought_back_what_the_backup_held_on_every_server():
    figures = _figures()
    assert figures['restore_rc'] == 0, _log('restore-run.log')[-5000:]
    for name, host in SERVERS.items():
        cms = {i['metadata']['name'] for i in json.loads(host.check_output(KUBECTL + 'get configmaps -o json'))['items']}
        assert 'restore-before' in cms and 'restore-after' not in cms, (name, sorted(cms))
    print('fleet_etcd restore: %.1f s (baremetal.k3s.restore, from ansible-playbook to its end)' % figures['restore_seconds'])


def test_a_reset_that_fails_leaves_every_server_on_what_it_had():
    """The first restore's cluster reset could not finish in time (k3s_backup_reset_timeout=1): server-1 was put back
    and k3s started again on every server - the same members, restore-after still there."""
    figures, log = _figures(), _log('restore-fail.log')
    assert figures['failed_rc'] != 0, log[-5000:]
    reset = _results(log, 'k3s server --cluster-reset --cluster-reset-restore-path)', host=RESTORED)
    assert len(reset) == 1, log[-5000:]  # its failure (Ansible prints no "failed" key with it)
    msg = reset[0]['msg']
    assert 'did not end within 1 s (ended: SIGTERM, then SIGKILL)' in msg and 'The server is back as it was' in msg, msg
    assert reset[0]['db_failed'].startswith(DATA + '/server/db.failed-restore-'), reset[0]
    assert SERVERS[RESTORED].file(reset[0]['db_failed']).is_directory  # what the reset wrote, kept to look at
    assert 'k3s was started again on every server on the datastore it had' in log, log[-5000:]
    before = sorted(m['name'] for m in figures['members_before'])
    again = sorted(m['name'] for m in figures['members_after_failed'] if not m.get('isLearner'))
    assert again == before, (before, figures['members_after_failed'])
    assert figures['after_failed'] == 'configmap/restore-after'


def test_three_voters_again_every_one_a_new_member():
    before = sorted(m['name'] for m in _figures()['members_before'])
    lists = {name: sorted((m['name'], bool(m.get('isLearner'))) for m in _members(host)) for name, host in SERVERS.items()}
    first = lists[RESTORED]
    assert len(first) == 3 and not any(learner for dummy, learner in first), lists
    assert all(members == first for members in lists.values()), lists
    assert sorted(n.rsplit('-', 1)[0] for n, dummy in first) == sorted(SERVERS), first
    # the reset gave server-1 a new member name, and the others joined as new members
    assert not set(n for n, dummy in first) & set(before), (before, first)


def test_every_node_in_every_servers_api_a_voter_and_ready():
    want = set(SERVERS) | set(AGENTS)
    for name, host in SERVERS.items():
        nodes = {n['metadata']['name']: n for n in json.loads(host.check_output(KUBECTL + 'get nodes -o json'))['items']}
        assert set(nodes) == want, (name, sorted(nodes))
        for node_name, node in nodes.items():
            assert _condition(node, 'Ready')[0] == 'True', (name, node_name)
            if node_name in SERVERS:
                assert _condition(node, 'EtcdIsVoter') == ('True', 'MemberNotLearner'), (name, node_name)


def test_the_agent_the_restored_datastore_did_not_know_was_restarted_and_registered_again():
    """restore.yml deleted the agent's Node before the backup: the restore restarted it, waited until its Node was
    Ready on the restored API, and said so (test_every_node_in_every_servers_api_a_voter_and_ready finds it there)."""
    log = _log('restore-run.log')
    unknown, known = 'bk3s-etcd-agent-1', 'bk3s-etcd-agent-2'  # only agent-1's Node was deleted before the backup
    assert {unknown, known} == set(AGENTS)
    assert '%s (Node %s) was not in the restored datastore: restarted, registered again and Ready after ' % (unknown, unknown) \
        in log, log[-5000:]
    assert '%s (Node %s) was not in the restored datastore' % (known, known) not in log, log[-5000:]


def test_the_restore_waited_on_the_held_server_while_it_was_not_a_voting_member():
    log = _log('restore-run.log')
    # on server-1, not delegated: the wait ran on server-1's API (the held server's own API waits for its promotion)
    waits = _results(log, 'until Ready and a voting etcd member - %s' % HELD, host=RESTORED)
    assert len(waits) == 1, log[-5000:]
    wait = waits[0]
    assert wait['ready'] is True and wait['etcd_member'] is True and wait['node_name'] == HELD, wait
    not_voting = [w for w in wait['waited_for'] if 'node %s is not a voting etcd member: EtcdIsVoter=False' % HELD in w['reason']]
    assert not_voting, wait['waited_for']
    # the double held it: the leader said so, and it was promoted no sooner than the hold allowed
    held = [e for e in c.launcher_events(SERVERS[HELD]) if e['event'] == 'etcd_member_added']
    assert held and held[-1]['hold_seconds'] == HOLD, held
    promoted = [e for e in c.launcher_events(SERVERS[HELD]) if e['event'] == 'etcd_member_promoted' and e.get('self')]
    assert promoted and promoted[-1]['member'] == held[-1]['member'] and promoted[-1]['learner_seconds'] >= HOLD, promoted
    assert 'Learner %s held as a learner until' % held[-1]['member'] in SERVERS[RESTORED].check_output(
        'journalctl -u k3s --no-pager')
    report = _results(log, 'Report the restore')
    assert report and 'is not a voting etcd member' in report[0]['msg'], report
    others = _results(log, 'until Ready and a voting etcd member - bk3s-etcd-server-2', host=RESTORED)
    print('fleet_etcd restore: %s waited %.1f s for %s (%d looks "not a voting etcd member", first at %.1f s); '
          'server-2 %.1f s; k3s\'s cluster reset on %s %s s'
          % (RESTORED, wait['elapsed'], HELD, sum(w['looks'] for w in not_voting), not_voting[0]['at'],
             others[0]['elapsed'] if others else -1, RESTORED,
             (_results(log, 'k3s server --cluster-reset --cluster-reset-restore-path)') or [{}])[0].get('reset_seconds')))
    print('fleet_etcd restore: what the wait on %s waited for: %s' % (HELD, wait['waited_for']))


def test_the_reset_ran_as_k3s_documents_it_and_the_old_datastores_are_kept():
    log = _log('restore-run.log')
    reset = _results(log, 'k3s server --cluster-reset --cluster-reset-restore-path)')
    assert len(reset) == 1, log[-5000:]
    r = reset[0]
    assert r['datastore'] == 'etcd' and r['reset_message'].find('Managed etcd cluster membership has been reset') >= 0
    assert r['reset_argv'][-3:] == ['--cluster-reset', '--cluster-reset-restore-path=' + r['snapshot'], '--token=(hidden)']
    token = SERVERS[RESTORED].file(DATA + '/server/token').content_string.strip()
    assert token.split(':')[-1] not in log, 'the token is in the restore\'s output'
    for name, host in SERVERS.items():
        kept = [d for d in host.check_output('ls %s/server' % DATA).split() if d.startswith('db.before-restore-')]
        assert len(kept) == 1, (name, kept)
        # the datastore of before, whole: etcd's data (and, on server-1, k3s's snapshot)
        assert host.file('%s/server/%s/etcd/member/snap/db' % (DATA, kept[0])).exists, name
        assert not host.file(DATA + '/server/db/reset-flag').exists, name  # the normal start cleared k3s's reset flag
    config = SERVERS[RESTORED].check_output('cat /etc/rancher/k3s/config.yaml.d/*.yaml /etc/systemd/system/k3s.service*')
    assert 'cluster-reset' not in config  # the restore path went into no config file


def test_the_hold_is_gone_and_site_yml_changes_nothing_afterwards():
    assert 'K3S_DOUBLE_LEARNER_HOLD' not in SERVERS[HELD].file('/etc/systemd/system/k3s.service.env').content_string
    figures = _figures()
    log = _log('site-rerun.log')
    assert figures['site_rc'] == 0, log[-5000:]
    recap = dict(re.findall(r'(?m)^(\S+)\s+:\s+ok=\d+\s+changed=(\d+)\s', log))
    assert sorted(recap) == sorted(list(SERVERS) + list(AGENTS)), recap
    assert all(n == '0' for n in recap.values()), recap
    assert figures['invocations_after_site'] == figures['invocations_after_restore'], figures
