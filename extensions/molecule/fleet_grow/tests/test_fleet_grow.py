# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A fleet grown with site.yml --limit: one cluster in the real API, nothing restarted, no secret shown."""

from __future__ import annotations

import json
import os
import re

import testinfra

EPHEMERAL = os.environ['MOLECULE_EPHEMERAL_DIRECTORY']
KUBECTL = 'k3s kubectl --kubeconfig /etc/rancher/k3s/k3s.yaml '
FIRST_NODES = ('bk3s-grow-server-1', 'bk3s-grow-agent-1')
ALL_NODES = FIRST_NODES + ('bk3s-grow-server-2', 'bk3s-grow-agent-2')
LOGS = ('add-agent-2', 'add-server-2', 'rerun-agent-1', 'other-token', 'check-diff', 'manifests', 'missing-token',
        'rebuilt', 'even-etcd', 'split')
# the inventory's secrets (molecule.yml): they must not appear in any output
S3_SECRETS = ('grow-access-key-AKIA7Q3', 'grow-secret-key-9f2e71c4b0', 'stale-install-token-5e1f')


def _host(name):
    return testinfra.get_host('ansible://%s' % name, ansible_inventory=os.environ['MOLECULE_INVENTORY_FILE'])


def _grow():
    with open(os.path.join(EPHEMERAL, 'grow.json'), encoding='utf-8') as f:
        return json.load(f)


def _log(name):
    with open(os.path.join(EPHEMERAL, 'grow-%s.log' % name), encoding='utf-8') as f:
        return f.read()


def _recap(lines, host):
    line = next(line for line in lines if line.startswith(host + ' '))
    return dict((k, int(v)) for k, v in re.findall(r'(\w+)=(\d+)', line))


def test_one_cluster_every_node_ready_in_both_servers_apis():
    for server in ('bk3s-grow-server-1', 'bk3s-grow-server-2'):
        nodes = json.loads(_host(server).check_output(KUBECTL + 'get nodes -o json'))['items']
        ready = {n['metadata']['name']: [c['status'] for c in n['status']['conditions'] if c['type'] == 'Ready']
                 for n in nodes}
        assert ready == {name: ['True'] for name in ALL_NODES}, (server, ready)


def test_the_first_nodes_never_restarted_and_kept_their_tokens():
    grow = _grow()
    for name in FIRST_NODES:
        assert grow['after'][name] == grow['before'][name], (name, grow['before'][name], grow['after'][name])


def test_each_limit_run_touched_only_its_node():
    grow = _grow()
    recaps = grow['recaps']
    for run, node in (('add-agent-2', 'bk3s-grow-agent-2'), ('add-server-2', 'bk3s-grow-server-2')):
        hosts = sorted(line.split()[0] for line in recaps[run])
        assert hosts == [node], (run, recaps[run])
        assert _recap(recaps[run], node)['failed'] == 0 and _recap(recaps[run], node)['changed'] > 0, recaps[run]
    assert _recap(recaps['rerun-agent-1'], 'bk3s-grow-agent-1')['changed'] == 0, recaps['rerun-agent-1']
    print('\nfleet_grow: site.yml --limit took %s' % grow['seconds'])


def test_a_different_token_stops_the_run_and_stays():
    grow = _grow()
    assert grow['other_token_rc'] != 0 and grow['other_token_left'] == 'other-cluster-token', grow
    log = _log('other-token')
    assert 'holds a different token' in log and 'Nothing was changed' in log, log[-3000:]
    assert _recap(grow['recaps']['other-token'], 'bk3s-grow-agent-1')['failed'] == 1


def test_check_diff_on_the_live_fleet_changes_nothing():
    recaps = _grow()['recaps']['check-diff']
    assert sorted(line.split()[0] for line in recaps) == sorted(ALL_NODES), recaps
    for line in recaps:
        counts = dict((k, int(v)) for k, v in re.findall(r'(\w+)=(\d+)', line))
        assert counts['changed'] == 0 and counts['failed'] == 0, line


def test_no_secret_in_any_output():
    token = _host('bk3s-grow-server-1').check_output('cat /srv/k3s-data/server/token').strip()
    password = token.rsplit(':', 1)[-1]
    assert len(password) >= 16, 'the server token has no password part to look for'
    for name in LOGS:
        log = _log(name)
        for secret in (token, password) + S3_SECRETS:
            assert secret not in log, 'grow-%s.log shows a secret (%s...)' % (name, secret[:4])


def test_manifests_placed_changed_and_pruned_only_the_roles():
    first, second = _host('bk3s-grow-server-1'), _host('bk3s-grow-server-2')
    mine = '/srv/k3s-data/server/manifests/'  # server-1's data dir (K3S_DATA_DIR)
    assert 'version: "2"' in first.file(mine + 'grow-config.yaml').content_string
    assert not first.file(mine + 'grow-extra.yaml').exists
    assert first.file(mine + 'admin-own.yaml').content_string == 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: admin-own}\n'
    assert first.file(mine + 'grow-config.yaml').mode == 0o600
    assert not first.file('/var/lib/rancher/k3s/server').exists
    # server-2 kept the list it was given when it was added
    theirs = '/var/lib/rancher/k3s/server/manifests/'
    assert 'version: "1"' in second.file(theirs + 'grow-config.yaml').content_string
    assert second.file(theirs + 'grow-extra.yaml').exists
    assert _recap(_grow()['recaps']['manifests'], 'bk3s-grow-server-1')['failed'] == 0


def test_tls_san_in_the_certificate_the_api_serves():
    from cryptography import x509  # pylint: disable=import-outside-toplevel
    pem = _host('bk3s-grow-server-2').check_output(
        "python3 -c \"import ssl; print(ssl.get_server_certificate(('127.0.0.1', 6443)))\"")
    cert = x509.load_pem_x509_certificate(pem.encode())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)
    assert 'grow.example.internal' in names, names


def test_a_missing_token_file_ends_the_run_in_its_timeout_naming_the_file():
    grow = _grow()
    log = _log('missing-token')
    assert _recap(grow['recaps']['missing-token'], 'bk3s-grow-agent-2')['failed'] == 1, grow['recaps']['missing-token']
    assert 'its token file /etc/rancher/k3s/missing-token, which does not exist' in log, log[-3000:]


def test_a_rebuilt_node_is_told_which_secret_to_delete():
    grow = _grow()
    log = _log('rebuilt')
    assert _recap(grow['recaps']['rebuilt'], 'bk3s-grow-agent-2')['failed'] == 1, grow['recaps']['rebuilt']
    assert 'delete secret bk3s-grow-agent-2.node-password.k3s' in log, log[-3000:]


def test_secrets_are_stored_encrypted_by_the_real_api_server():
    """A Secret written through server-2 (which joined later) is stored aescbc-encrypted, and read back in clear."""
    server, db = _host('bk3s-grow-server-2'), _host('bk3s-grow-db')
    server.run(KUBECTL + '-n default delete secret grow-secret --ignore-not-found')
    server.check_output(KUBECTL + '-n default create secret generic grow-secret --from-literal=word=plaintext-word-42')
    row = db.check_output(
        "python3 -c \"import sqlite3; c = sqlite3.connect('file:/var/lib/kine/state.db?mode=ro', uri=True); "
        "v = c.execute(\\\"select value from kine where name = '/registry/secrets/default/grow-secret' "
        "order by id desc limit 1\\\").fetchone()[0]; print(repr(bytes(v[:40])), b'plaintext-word-42' in v)\"")
    assert row.startswith("b'k8s:enc:aescbc:v1:") and row.endswith('False'), row
    first = _host('bk3s-grow-server-1')
    word = first.check_output(KUBECTL + "-n default get secret grow-secret -o jsonpath='{.data.word}' | base64 -d")
    assert word == 'plaintext-word-42'


def test_cluster_shapes_k3s_would_run_otherwise_are_refused_before_anything_changes():
    recaps = _grow()['recaps']
    assert 'An embedded etcd cluster needs an odd number of servers (1, 3, 5...), not 2' in _log('even-etcd')
    assert 'k3s would start a separate one-server cluster on each' in _log('split')
    for shape in ('even-etcd', 'split'):
        assert all(_recap(recaps[shape], h)['changed'] == 0 for h in ALL_NODES), recaps[shape]


def test_a_stale_installer_token_is_kept_and_the_token_file_wins():
    """k3s reads token-file over K3S_TOKEN (pkg/cli/agent): the env file an installer left is kept byte for byte,
    and agent-2 joined (test_one_cluster...) with the token file's token."""
    files = _grow()['agent2_files_after_add']
    assert files.startswith('K3S_TOKEN=stale-install-token-5e1f\n'), files
    assert 'token-file: /etc/rancher/k3s/cluster-token' in files, files


def test_a_server_that_ran_its_own_cluster_joined_with_its_datastore_kept_aside():
    """server-2 ran k3s on its own SQLite (the refused run is asserted in side_effect): added with
    k3s_server_join_discard_datastore, its server/db and server/token were moved aside, kept, and it joined."""
    server = _host('bk3s-grow-server-2')
    listing = server.check_output('ls -1 /var/lib/rancher/k3s/server').split()
    db = [name for name in listing if name.startswith('db.baremetal-k3s-')]
    token = [name for name in listing if name.startswith('token.baremetal-k3s-')]
    assert len(db) == 1 and len(token) == 1, listing
    assert server.file('/var/lib/rancher/k3s/server/%s/state.db' % db[0]).exists, db
    assert 'db' not in listing or not server.file('/var/lib/rancher/k3s/server/db/state.db').exists, listing
    log = ' '.join(_log('add-server-2').split())  # a warning is wrapped to the terminal's width
    assert 'this server holds a SQLite datastore' in log and 'are moved aside (discard_datastore)' in log, log[-3000:]
