# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The status report: rows from module results, the ConfigMap from kubectl's JSON, the plain table."""

from __future__ import annotations

import json

import pytest

from ansible_collections.baremetal.k3s.plugins.plugin_utils import _status_table as st

NAME, NAMESPACE = 'extender-readiness', 'default'


def k3s_info(platform='k3s', node='server-1', **extra):
    result = {'changed': False, 'installed': True, 'platform': platform, 'node_name': node,
              'kubectl': ['/usr/local/bin/k3s', 'kubectl'], 'admin_kubeconfig': '/etc/rancher/k3s/k3s.yaml'}
    result.update(extra)
    return result


def extender_status(node='server-1', ready=True, restarted=True, reachable=True, **extra):
    result = {'changed': False, 'node_name': node, 'ready': ready, 'restarted': restarted, 'extender_reachable': reachable,
              'scheduler_started_at': '2026-01-13T10:00:03.412207Z', 'changed_at': '2026-01-13T10:00:01.000000Z',
              'active_state': 'active', 'msg': 'ready' if ready else 'not ready: extender http://127.0.0.1:8889/filter: refused'}
    result.update(extra)
    return result


def kubectl(nodes_yaml=None, rc=0, stdout=None, stderr='', data=None):
    """A registered ansible.builtin.command result of ``kubectl get configmap -o json --ignore-not-found``."""
    if stdout is None:
        if data is None:
            data = {} if nodes_yaml is None else {'nodes.yaml': nodes_yaml}
        stdout = json.dumps({'apiVersion': 'v1', 'kind': 'ConfigMap',
                             'metadata': {'name': NAME, 'namespace': NAMESPACE}, 'data': data})
    return {'changed': False, 'rc': rc, 'stdout': stdout, 'stderr': stderr, 'cmd': ['kubectl']}


NODES_YAML = 'nodes:\n- kube_scheduler: k3s@server-1\n  node_name: server-1\n  restarted: true\n'


def readiness(result=None):
    return st.readiness_from_kubectl(kubectl(NODES_YAML) if result is None else result, NAME, NAMESPACE)


def report(results, configmap=None, hosts=None):
    return st.fleet(hosts or list(results), results, readiness(configmap))


# ---------------------------------------------------------------------------------------------
# cells

@pytest.mark.parametrize('value, cell', [(True, 'yes'), (False, 'no'), (None, '-'), ('true', '-'), (1, '-')])
def test_yes_no_only_for_real_booleans(value, cell):
    assert st.yes_no(value) == cell


@pytest.mark.parametrize('value, cell', [
    ('2026-01-13T10:00:03.412207Z', '2026-01-13 10:00:03'),
    ('2026-01-13T11:00:03+01:00', '2026-01-13 10:00:03'),
    ('2026-01-13T10:00:03Z', '2026-01-13 10:00:03'),
    (None, '-'),
    ('', '-'),
    ('soon', 'soon'),
    ('two\nlines', 'two lines'),
])
def test_compact_time_is_utc_to_the_second(value, cell):
    assert st.compact_time(value) == cell


@pytest.mark.parametrize('text, width, out', [
    ('server-1', 8, 'server-1'),
    ('server-10', 8, 'server-\u2026'),
    ('abc', 1, 'a'),
    ('abc', 0, ''),
])
def test_shorten_cuts_with_an_ellipsis_only_when_needed(text, width, out):
    assert st.shorten(text, width) == out
    assert len(st.shorten(text, width)) <= max(width, 0)


@pytest.mark.parametrize('value, out', [(True, True), ('false', False), ('Yes', True), (None, None), ('maybe', None)])
def test_as_bool_reads_yaml_spellings(value, out):
    assert st.as_bool(value) is out


# ---------------------------------------------------------------------------------------------
# the readiness ConfigMap

def test_configmap_entries_from_kubectl_json():
    got = readiness()
    assert got == {'namespace': NAMESPACE, 'name': NAME, 'found': True, 'error': '',
                   'nodes': [{'node_name': 'server-1', 'kube_scheduler': 'k3s@server-1', 'restarted': True}]}


def test_absent_configmap_is_not_found_without_error():
    # --ignore-not-found: an absent ConfigMap, or namespace, prints nothing and exits 0
    got = readiness(kubectl(stdout=''))
    assert got['found'] is False and got['error'] == '' and got['nodes'] == []


def test_configmap_not_read_says_so():
    for result in ({}, {'skipped': True, 'changed': False}, None):
        got = st.readiness_from_kubectl(result, NAME, NAMESPACE)
        assert got['found'] is False
        assert got['error'].startswith('not read:')


def test_kubectl_failure_gives_its_stderr():
    got = readiness(kubectl(rc=1, stdout='', stderr='E0113 x\nerror: You must be logged in to the server (Unauthorized)\n'))
    assert got['found'] is False
    assert got['error'] == 'kubectl failed (rc=1): E0113 x'


def test_kubectl_that_could_not_start_gives_ansibles_message():
    got = readiness({'rc': 2, 'msg': "[Errno 2] No such file or directory: b'/usr/bin/kubectl'", 'stdout': '', 'stderr': ''})
    assert "No such file or directory: b'/usr/bin/kubectl'" in got['error']


def test_bad_yaml_is_reported_with_its_line():
    got = readiness(kubectl('nodes:\n- node_name: a\n  restarted: [true\n'))
    assert got['found'] is True and got['nodes'] == []
    assert got['error'].startswith('nodes.yaml is not valid YAML (line ')
    assert got['error'].endswith('; correct it with: kubectl edit configmap extender-readiness -n default')


@pytest.mark.parametrize('text, error', [
    ('- a\n- b\n', 'must be a mapping with a list under "nodes"'),
    ('nodes: server-1\n', 'must be a mapping with a list under "nodes"'),
])
def test_wrong_shape_is_reported(text, error):
    got = readiness(kubectl(text))
    assert error in got['error'] and got['nodes'] == []


def test_entries_without_node_name_are_skipped_and_counted():
    got = readiness(kubectl('nodes:\n- node_name: a\n  restarted: "false"\n- restarted: true\n- just text\n'))
    assert got['nodes'] == [{'node_name': 'a', 'kube_scheduler': '', 'restarted': False}]
    assert got['error'] == ('2 entries of nodes.yaml without a node_name skipped; '
                            'correct it with: kubectl edit configmap extender-readiness -n default')


@pytest.mark.parametrize('text', ['', 'nodes:\n', 'nodes: []\n'])
def test_empty_nodes_yaml_has_no_entries_and_no_error(text):
    got = readiness(kubectl(text))
    assert got['found'] is True and got['nodes'] == [] and got['error'] == ''


def test_configmap_without_nodes_yaml():
    got = readiness(kubectl(data={'other': 'x'}))
    assert got['found'] is True
    assert got['error'] == 'the ConfigMap has no nodes.yaml key; correct it with: kubectl edit configmap extender-readiness -n default'


@pytest.mark.parametrize('stdout, error', [
    ('No resources found', 'kubectl printed no JSON'),
    ('{"kind": "Secret"}', 'kubectl returned a Secret, not a ConfigMap'),
    ('{"data": {}}', 'kubectl returned an object without a kind, not a ConfigMap'),
    ('[1]', 'kubectl returned a list, not a ConfigMap'),
])
def test_unexpected_kubectl_output(stdout, error):
    assert readiness(kubectl(stdout=stdout))['error'].startswith(error)


# ---------------------------------------------------------------------------------------------
# rows

def test_ready_server_row_has_json_types():
    data = report({'server-1': (k3s_info(), extender_status())})
    assert data['nodes'] == [{
        'node': 'server-1', 'host': 'server-1', 'platform': 'k3s',
        'scheduler_started_at': '2026-01-13T10:00:03.412207Z', 'changed_at': '2026-01-13T10:00:01.000000Z',
        'restarted': True, 'extender_reachable': True, 'extenders': [], 'ready': True, 'in_readiness_configmap': True,
        'drifted': None, 'drift': [], 'msg': 'ready'}]
    assert data['summary'] == '1 of 1 servers ready'
    json.dumps(data)


def test_node_name_comes_from_the_node_not_the_inventory():
    data = report({'10.0.0.5': (k3s_info(node='server-1'), extender_status(node='server-1'))})
    assert (data['nodes'][0]['node'], data['nodes'][0]['host']) == ('server-1', '10.0.0.5')
    assert data['nodes'][0]['in_readiness_configmap'] is True


def test_servers_without_results_are_listed_with_the_reason():
    data = report({
        'down': ({}, {}),
        'bare': (k3s_info(installed=False, platform='k3s', node='bare', msg='no unit or init script found for service k3s'),
                 {'skipped': True, 'changed': False}),
        'broken': ({'failed': True, 'msg': 'k3s.service: bad line 3'}, {}),
        'gone': ({'unreachable': True, 'changed': False, 'msg': 'Failed to connect to the host via ssh: refused'}, {}),
    })
    rows = {r['node']: r for r in data['nodes']}
    assert rows['down']['msg'].startswith('no status: the host was unreachable')
    assert rows['bare']['msg'] == 'no unit or init script found for service k3s'
    assert rows['bare']['platform'] == ''
    assert rows['broken']['msg'] == 'k3s_info failed: k3s.service: bad line 3'
    assert rows['gone']['msg'] == 'unreachable: Failed to connect to the host via ssh: refused'
    for row in rows.values():
        assert (row['ready'], row['restarted'], row['extender_reachable']) == (None, None, None)
        assert row['scheduler_started_at'] == '' and row['in_readiness_configmap'] is False
    assert data['summary'] == '0 of 4 servers ready'


def test_failed_extender_status_keeps_its_message():
    data = report({'server-1': (k3s_info(), {'failed': True, 'msg': 'bad url'})})
    assert data['nodes'][0]['msg'] == 'bad url' and data['nodes'][0]['ready'] is None


def test_hosts_keep_their_order_once_each():
    results = {h: (k3s_info(node=h), extender_status(node=h)) for h in ('b', 'a')}
    data = st.fleet(['b', 'a', 'b'], results, readiness())
    assert [r['node'] for r in data['nodes']] == ['b', 'a']


# ---------------------------------------------------------------------------------------------
# the table

def test_table_reads_at_a_glance():
    data = report({
        'server-1': (k3s_info(), extender_status()),
        'server-2': (k3s_info('rke2', 'server-2'), extender_status('server-2', ready=False, restarted=False, reachable=False)),
    })
    lines = st.render(data)
    assert lines[0].split() == ['NODE', 'PLATFORM', 'SCHEDULER', 'STARTED', 'CHANGED', 'AT', 'RESTARTED', 'EXTENDER',
                                'READY', 'IN', 'CONFIGMAP']
    assert lines[1].split() == ['server-1', 'k3s', '2026-01-13', '10:00:03', '2026-01-13', '10:00:01', 'yes', 'yes', 'yes', 'yes']
    assert lines[2].split() == ['server-2', 'rke2', '2026-01-13', '10:00:03', '2026-01-13', '10:00:01', 'no', 'no', 'no', 'no']
    # columns line up: every cell of a column starts where its header does
    assert lines[1].index('k3s') == lines[0].index('PLATFORM') == lines[2].index('rke2')
    assert '  server-2: extender http://127.0.0.1:8889/filter: refused' in lines
    assert 'readiness ConfigMap default/extender-readiness: 1 node' in lines
    assert lines[-1] == '1 of 2 servers ready (times in UTC)'
    entry = lines.index('readiness ConfigMap default/extender-readiness: 1 node')
    assert lines[entry + 1].split() == ['NODE', 'RESTARTED', 'KUBE-SCHEDULER']
    assert lines[entry + 2].split() == ['server-1', 'yes', 'k3s@server-1']


def test_missing_data_is_a_dash():
    data = report({'down': ({}, {})}, configmap=kubectl(stdout=''))
    row = st.render(data)[1].split()
    assert row == ['down', '-', '-', '-', '-', '-', '-', 'no']
    assert 'readiness ConfigMap default/extender-readiness: absent' in st.render(data)


def test_unreadable_configmap_makes_membership_unknown():
    data = report({'server-1': (k3s_info(), extender_status())}, configmap=kubectl(rc=1, stdout='', stderr='forbidden'))
    lines = st.render(data)
    assert lines[1].split()[-1] == '-'
    assert 'readiness ConfigMap default/extender-readiness: unknown (kubectl failed (rc=1): forbidden)' in lines


def test_unparsable_configmap_is_found_but_not_counted():
    data = report({'server-1': (k3s_info(), extender_status())}, configmap=kubectl('nodes: [\n'))
    lines = st.render(data)
    assert lines[1].split()[-1] == '-'
    assert [line for line in lines if line.startswith('readiness ConfigMap')] == [
        "readiness ConfigMap default/extender-readiness: found (nodes.yaml is not valid YAML (line 2): expected the node "
        "content,"]


def test_long_values_never_exceed_120_columns():
    long_node = 'k3s-server-0001.rack-17.datacenter-frankfurt-east.example.internal'
    long_msg = 'not ready: ' + 'x' * 300
    results = {
        long_node: (k3s_info(node=long_node), extender_status(node=long_node, ready=False, msg=long_msg)),
        'short': (k3s_info('kubeadm-something-very-long-platform', 'short'),
                  extender_status('short', scheduler_started_at='not a time at all, a very long string instead')),
    }
    configmap = kubectl('nodes:\n- node_name: %s\n  kube_scheduler: kube-scheduler-%s\n  restarted: true\n' % (long_node, long_node))
    data = st.fleet(list(results), results, st.readiness_from_kubectl(configmap, 'n' * 63, 'ns' * 40))
    lines = st.render(data)
    assert max(len(line) for line in lines) <= 120
    assert len(lines[0]) <= 120 and lines[1].startswith('k3s-server-0001.rack-17.')
    assert '\u2026' in lines[1].split()[0]
    # the fixed cells are whole: times and yes/no are never cut
    assert '2026-01-13 10:00:03' in lines[1] and lines[1].split()[-4:] == ['yes', 'yes', 'no', 'yes']
    # the short node name is not cut just because another one is long
    assert lines[2].split()[0] == 'short'
    # a reason is wrapped, not cut: all of it is there
    reason = lines.index('not ready:') + 1
    assert lines[reason].startswith('  k3s-server-0001.rack-17.datacenter-frankfurt-east.example.internal: xxx')
    continued = lines[reason:lines.index('', reason)]
    assert ''.join(line.strip() for line in continued).split(': ', 1)[1] == 'x' * 300
    assert all(line.startswith('      x') for line in continued[1:])


def test_short_node_names_are_not_cut():
    node = 'n' * 26  # the widest that fits beside the fixed columns
    data = report({node: (k3s_info(node=node), extender_status(node=node))})
    lines = st.render(data)
    assert lines[1].split()[0] == node and max(len(line) for line in lines) <= 120


def test_narrower_width_is_respected():
    data = report({'server-1': (k3s_info(), extender_status())})
    assert max(len(line) for line in st.render(data, width=100)) <= 100


def test_newlines_in_values_do_not_break_rows():
    data = report({'server-1': (k3s_info(), extender_status(ready=False, msg='not ready:\nline two'))})
    lines = st.render(data)
    assert '  server-1: line two' in lines


def test_no_servers():
    data = st.fleet([], {}, readiness())
    assert '(no servers)' in st.render(data)
    assert data['summary'] == '0 of 0 servers ready'


# ---------------------------------------------------------------------------------------------
# drift

FLAG = {'cause': 'flag', 'detail': 'the scheduler is given no config file: nothing passes ... any more'}


def drifted(files=(), status=None, configmap=None, expected=True):
    results = {'server-1': (k3s_info(), status or extender_status(), list(files))}
    return st.fleet(['server-1'], results, readiness(configmap), expected)


def test_no_drift_when_files_scheduler_and_readiness_agree():
    data = drifted()
    assert (data['nodes'][0]['drifted'], data['nodes'][0]['drift']) == (False, [])
    assert data['summary'] == '1 of 1 servers ready'
    assert not any(line.startswith('drift') for line in st.render(data))


def test_files_drift_is_reported_as_the_role_found_it():
    data = drifted([FLAG])
    assert data['nodes'][0]['drift'] == [FLAG] and data['nodes'][0]['drifted'] is True
    assert data['summary'] == '1 of 1 servers ready; 1 drifted'
    lines = st.render(data)
    assert 'drift (install_csi puts it back):' in lines
    assert '  server-1: flag: the scheduler is given no config file: nothing passes ... any more' in lines


def test_a_scheduler_that_started_before_its_files_changed_is_drift():
    status = extender_status(ready=False, restarted=False, scheduler_started_at='2026-01-13T09:00:00Z',
                             changed_at='2026-01-13T10:00:01Z')
    found = drifted(status=status, configmap=kubectl(NODES_YAML.replace('true', 'false')))['nodes'][0]['drift']
    assert found == [{'cause': 'restart', 'detail': 'the scheduler started at 2026-01-13 09:00:00, before its files '
                      'changed at 2026-01-13 10:00:01: it does not run with them until a restart'}]


@pytest.mark.parametrize('nodes_yaml, detail', [
    ('nodes: []\n', 'no entry in the readiness ConfigMap default/extender-readiness'),
    (NODES_YAML.replace('restarted: true', 'restarted: false'),
     'its readiness entry in default/extender-readiness is stale (restarted: no, the scheduler: yes)'),
    (NODES_YAML.replace('k3s@server-1', 'k3s@old'),
     'its readiness entry in default/extender-readiness is stale (kube_scheduler: k3s@old, the scheduler: k3s@server-1)'),
])
def test_a_missing_or_stale_readiness_entry_is_drift(nodes_yaml, detail):
    status = extender_status(kube_scheduler='k3s@server-1')
    assert drifted(status=status, configmap=kubectl(nodes_yaml))['nodes'][0]['drift'] == [
        {'cause': 'readiness', 'detail': detail}]


def test_readiness_is_not_judged_when_not_published_or_not_read():
    absent = kubectl(stdout='')
    assert drifted(configmap=absent, expected=False)['nodes'][0]['drift'] == []
    assert drifted(configmap=absent)['nodes'][0]['drift'] == [
        {'cause': 'readiness', 'detail': 'no entry in the readiness ConfigMap default/extender-readiness '
                                         '(the ConfigMap is absent)'}]
    assert drifted(configmap=kubectl(rc=1, stdout='', stderr='forbidden'))['nodes'][0]['drift'] == []


def test_drift_unknown_without_the_roles_finding_or_a_status():
    data = st.fleet(['server-1'], {'server-1': (k3s_info(), extender_status())}, readiness())
    assert data['nodes'][0]['drifted'] is None
    data = st.fleet(['server-1'], {'server-1': (k3s_info(), {}, [FLAG])}, readiness())
    assert data['nodes'][0]['drifted'] is None and data['nodes'][0]['drift'] == []


def test_several_extenders_each_by_name():
    probed = [{'name': 'csi-baremetal', 'url': 'http://127.0.0.1:8889', 'answering': True, 'msg': 'answering', 'error': ''},
              {'name': 'gpu-share', 'url': 'http://127.0.0.1:12345', 'answering': False,
               'msg': 'http://127.0.0.1:12345/filter: connection refused'}]
    data = report({'server-1': (k3s_info(), extender_status(ready=False, reachable=False, extenders=probed))})
    row = data['nodes'][0]
    assert row['extenders'] == [
        {'name': 'csi-baremetal', 'url': 'http://127.0.0.1:8889', 'answering': True, 'msg': 'answering', 'required': True},
        {'name': 'gpu-share', 'url': 'http://127.0.0.1:12345', 'answering': False, 'msg': 'http://127.0.0.1:12345/filter: connection refused',
         'required': True}]
    lines = st.render(data)
    assert lines[0].split() == ['NODE', 'PLATFORM', 'SCHEDULER', 'STARTED', 'CHANGED', 'AT', 'RESTARTED', 'EXTENDER', 'READY', 'IN',
                                'CONFIGMAP']
    assert lines[1].split()[7] == '1/2'
    assert lines[2:6] == ['', 'extenders:', '  server-1: csi-baremetal (http://127.0.0.1:8889): answering',
                          '  server-1: gpu-share (http://127.0.0.1:12345): http://127.0.0.1:12345/filter: connection refused']
    # one not required: marked so in the listing
    optional = [probed[0], dict(probed[1], required=False)]
    lines = st.render(report({'server-1': (k3s_info(), extender_status(extenders=optional))}))
    assert lines[5] == '  server-1: gpu-share (http://127.0.0.1:12345, not required): http://127.0.0.1:12345/filter: connection refused'
    # one extender: yes/no as before
    one = report({'server-1': (k3s_info(), extender_status(extenders=probed[:1]))})
    assert st.render(one)[1].split()[7] == 'yes'
    json.dumps(data)
