# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of k3s_preflight: its real main() against fake_node's tree (/proc, /sys, statvfs of the test's file systems)."""

from __future__ import annotations

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _preflight
from ansible_collections.baremetal.k3s.plugins.modules import k3s_info, k3s_preflight

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok, run_module

HEADER = ('  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n')
V4_ANY, V4_LOOP = '00000000', '0100007F'
V6_ANY, V6_LOOP = '0' * 32, '00000000000000000000000001000000'
V6_MAPPED = '0000000000000000FFFF00000100007F'  # ::ffff:127.0.0.1
LISTEN, ESTABLISHED, TIME_WAIT = '0A', '01', '06'
CONTROLLERS = 'cpuset cpu io memory hugetlb pids rdma misc\n'
PROC_CGROUPS = ('#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t2\t4\t1\ncpu\t3\t60\t1\nmemory\t%s\t90\t%s\n'
                'pids\t5\t60\t1\n')


def tcp(*socks):
    """/proc/net/tcp{,6} text of sockets (local address hex, port, state hex)."""
    rows = [HEADER]
    for n, (addr, port, state) in enumerate(socks):
        rem = '0' * len(addr)
        rows.append('%4d: %s:%04X %s:%04X %s 00000000:00000000 00:00000000 00000000     0        0 %d 1 '
                    '0000000000000000 100 0 0 10 0\n' % (n, addr, port, rem, 0 if state == LISTEN else 51000 + n, state, 30000 + n))
    return ''.join(rows)


def healthy(node, cpus='0-3', memtotal_kb=8 * 1024 * 1024, free_mb=50000):
    """A host that meets a server's requirements: 4 CPUs, 8 GiB, 50 GB free, cgroup v2 with memory, ports free."""
    node.write('/sys/devices/system/cpu/online', cpus + '\n')
    node.write('/proc/meminfo', 'MemTotal:       %d kB\nMemFree:         1000000 kB\nMemAvailable:    2000000 kB\n' % memtotal_kb)
    node.write('/sys/fs/cgroup/cgroup.controllers', CONTROLLERS)
    node.write('/proc/net/tcp', tcp((V4_LOOP, 22, LISTEN), (V4_ANY, 6443, ESTABLISHED)))
    node.write('/proc/net/tcp6', tcp((V6_ANY, 22, LISTEN)))
    node.write('/proc/sys/kernel/hostname', 'node-1\n')
    node.hostname = None  # read from /proc/sys/kernel/hostname
    node.filesystem('/', free_mb)
    return node


def test_healthy_server(node):
    healthy(node)
    r = module_ok(k3s_preflight, {'fresh': True})
    assert r['ok'] is True and r['problems'] == [] and r['changed'] is False
    assert r['msg'] == 'k3s preflight of node-1 (server): no problems'
    assert (r['cpus'], r['memory_mb'], r['disk_free_mb'], r['disk_path']) == (4, 8192, 50000, '/')
    assert r['cgroup'] == {'version': 'v2', 'memory': True}
    assert (r['ports'], r['ports_in_use']) == ([6443, 10250], [])
    assert (r['min_cpus'], r['min_memory_mb'], r['min_disk_mb']) == (2, 2048, 4096)
    assert r['hostname'] == 'node-1' and r['role'] == 'server' and r['data_dir'] == '/var/lib/rancher/k3s'


SERVER_MSGS = {
    'cpus': 'cpus: 1 CPU online; a k3s server needs at least 2 (min_cpus)',
    'memory': 'memory: 1757 MB of memory (MemTotal); a k3s server needs 2048 MB installed (min_memory_mb), that is a '
              'MemTotal of at least 1843 MB',
    'disk': 'disk: 1000 MB free on the file system of / (data_dir /var/lib/rancher/k3s does not exist yet); a k3s server '
            'needs at least 4096 MB (min_disk_mb)',
    'cgroup-v2': 'cgroup: cgroup v2 without the memory controller (not in /sys/fs/cgroup/cgroup.controllers); '
                 + _preflight.MEMORY_HINT,
    'cgroup-v1': 'cgroup: cgroup v1 without the memory controller (disabled in /proc/cgroups); ' + _preflight.MEMORY_HINT,
    'port-v4': 'ports: TCP port 6443 is already in use (something listens on 0.0.0.0); k3s cannot start while another '
               'program holds it',
    'port-v6': 'ports: TCP port 10250 is already in use (something listens on ::); k3s cannot start while another '
               'program holds it',
}


def _break(node, what):
    if what == 'cpus':
        node.write('/sys/devices/system/cpu/online', '0\n')
    elif what == 'memory':
        node.write('/proc/meminfo', 'MemTotal:       1800000 kB\n')
    elif what == 'disk':
        node.filesystem('/', 1000)
    elif what == 'cgroup-v2':
        node.write('/sys/fs/cgroup/cgroup.controllers', 'cpuset cpu io pids\n')
    elif what == 'cgroup-v1':
        node.unlink('/sys/fs/cgroup/cgroup.controllers')
        node.write('/proc/cgroups', PROC_CGROUPS % (0, 0))
    elif what == 'port-v4':
        node.write('/proc/net/tcp', tcp((V4_ANY, 6443, LISTEN)))
    elif what == 'port-v6':
        node.write('/proc/net/tcp6', tcp((V6_ANY, 10250, LISTEN)))


@pytest.mark.parametrize('what', sorted(SERVER_MSGS))
def test_each_threshold_alone(node, what):
    healthy(node)
    _break(node, what)
    failed, r = run_module(k3s_preflight, {'fresh': True})
    assert failed and r['ok'] is False
    assert [p['check'] + ': ' + p['msg'] for p in r['problems']] == [SERVER_MSGS[what]]
    assert r['msg'] == ('k3s preflight of node-1 (server): 1 problem: %s. Fix them, or lower min_cpus, min_memory_mb or '
                        'min_disk_mb if this host is meant to run with less.' % SERVER_MSGS[what])
    # the measured values come with the failure
    assert {'cpus', 'memory_mb', 'disk_free_mb', 'cgroup', 'ports_in_use'} <= set(r)


def test_everything_at_once_in_one_message(node):
    healthy(node)
    for what in ('cpus', 'memory', 'disk', 'cgroup-v1', 'port-v4', 'port-v6'):
        _break(node, what)
    msg = module_fail(k3s_preflight, {'fresh': True})
    expected = [SERVER_MSGS[w] for w in ('cpus', 'memory', 'disk', 'cgroup-v1', 'port-v4', 'port-v6')]
    assert msg == ('k3s preflight of node-1 (server): 6 problems: %s. Fix them, or lower min_cpus, min_memory_mb or '
                   'min_disk_mb if this host is meant to run with less.' % '; '.join(expected))


def test_fail_false_reports(node):
    healthy(node)
    _break(node, 'cpus')
    _break(node, 'disk')
    r = module_ok(k3s_preflight, {'fail': False})
    assert r['ok'] is False and [p['check'] for p in r['problems']] == ['cpus', 'disk']
    assert r['msg'].startswith('k3s preflight of node-1 (server): 2 problems: cpus: 1 CPU online')


@pytest.mark.parametrize('memtotal_mb, min_mb, ok', [
    (1843, 2048, True),    # 2 GB installed, as much as MemTotal may lack
    (1842, 2048, False),
    (1948, None, True),    # a 2 GiB VM's MemTotal meets the server's default
    (460, 512, True),
    (459, 512, False),
    (8191, 8192, True),
    (7372, 8192, True),
    (7371, 8192, False),
])
def test_memory_against_memtotal(node, memtotal_mb, min_mb, ok):
    healthy(node, memtotal_kb=memtotal_mb * 1024)
    args = {'fail': False}
    if min_mb is not None:
        args['min_memory_mb'] = min_mb
    r = module_ok(k3s_preflight, args)
    assert r['memory_mb'] == memtotal_mb and r['ok'] is ok


def test_agent_defaults(node):
    healthy(node, cpus='0', memtotal_kb=480 * 1024, free_mb=2048)
    node.write('/proc/net/tcp', tcp((V4_ANY, 6443, LISTEN)))  # not an agent's port
    r = module_ok(k3s_preflight, {'role': 'agent', 'fresh': True})
    assert r['ok'] and (r['min_cpus'], r['min_memory_mb'], r['min_disk_mb'], r['ports']) == (1, 512, 2048, [10250])
    assert r['ports_in_use'] == []
    node.write('/proc/net/tcp6', tcp((V6_LOOP, 10250, LISTEN)))
    msg = module_fail(k3s_preflight, {'role': 'agent', 'fresh': True})
    assert msg == ('k3s preflight of node-1 (agent): 1 problem: ports: TCP port 10250 is already in use (something listens '
                   'on ::1); k3s cannot start while another program holds it. Fix them, or lower min_cpus, min_memory_mb '
                   'or min_disk_mb if this host is meant to run with less.')


def test_overrides(node):
    healthy(node)
    r = module_ok(k3s_preflight, {'min_cpus': 8, 'min_memory_mb': 16384, 'min_disk_mb': 60000, 'fail': False})
    assert [p['msg'] for p in r['problems']] == [
        '4 CPUs online; a k3s server needs at least 8 (min_cpus)',
        '8192 MB of memory (MemTotal); a k3s server needs 16384 MB installed (min_memory_mb), that is a MemTotal of at '
        'least 14745 MB',
        '50000 MB free on the file system of / (data_dir /var/lib/rancher/k3s does not exist yet); a k3s server needs at '
        'least 60000 MB (min_disk_mb)',
    ]
    r = module_ok(k3s_preflight, {'min_cpus': 0, 'min_memory_mb': 0, 'min_disk_mb': 0})
    assert r['ok']


def test_running_k3s_holds_its_ports(node):
    """Without fresh the ports are measured but a listener is no problem: a running k3s holds them itself."""
    healthy(node)
    node.write('/proc/net/tcp', tcp((V4_ANY, 6443, LISTEN), (V4_LOOP, 10250, LISTEN)))
    node.write('/proc/net/tcp6', tcp((V6_ANY, 6443, LISTEN)))
    r = module_ok(k3s_preflight, {})
    assert r['ok'] and r['fresh'] is False and r['ports_in_use'] == [6443, 10250]
    msg = module_fail(k3s_preflight, {'fresh': True, 'ports': [6443, 2379, 2380]})
    assert 'TCP port 6443 is already in use (something listens on 0.0.0.0, ::)' in msg
    assert '10250' not in msg and '2379' not in msg


@pytest.mark.parametrize('v6, socks, listening', [
    (False, [(V4_ANY, 6443, LISTEN)], [('0.0.0.0', 6443)]),
    (False, [(V4_LOOP, 10250, LISTEN), ('0A00020F', 2379, LISTEN)], [('127.0.0.1', 10250), ('15.2.0.10', 2379)]),
    (False, [(V4_ANY, 6443, ESTABLISHED), (V4_ANY, 6443, TIME_WAIT), (V4_ANY, 2380, '0a')], [('0.0.0.0', 2380)]),
    (True, [(V6_ANY, 10250, LISTEN), (V6_LOOP, 6443, LISTEN)], [('::', 10250), ('::1', 6443)]),
    (True, [(V6_MAPPED, 2379, LISTEN), (V6_ANY, 6443, '08')], [('::ffff:127.0.0.1', 2379)]),
    (True, [], []),
])
def test_proc_net_tcp(v6, socks, listening):
    parsed = _preflight.parse_proc_net_tcp(tcp(*socks), v6)
    assert [(s['address'], s['port']) for s in parsed if s['state'] == _preflight.TCP_LISTEN] == listening
    assert len(parsed) == len(socks)


def test_proc_net_tcp_odd_lines():
    text = tcp((V4_ANY, 6443, LISTEN)) + '   7: zz:zz 00000000:0000 0A\ntruncated\n'
    assert _preflight.parse_proc_net_tcp(text) == [{'address': '0.0.0.0', 'port': 6443, 'state': '0A'}]
    assert _preflight.parse_proc_net_tcp(None) == []


@pytest.mark.parametrize('files, cgroup, problem', [
    ({'/sys/fs/cgroup/cgroup.controllers': CONTROLLERS}, {'version': 'v2', 'memory': True}, None),
    ({'/sys/fs/cgroup/cgroup.controllers': 'cpu io pids\n'}, {'version': 'v2', 'memory': False},
     'cgroup v2 without the memory controller (not in /sys/fs/cgroup/cgroup.controllers)'),
    # cgroup.controllers exists only where /sys/fs/cgroup is cgroup2: /proc/cgroups is then not asked
    ({'/sys/fs/cgroup/cgroup.controllers': CONTROLLERS, '/proc/cgroups': PROC_CGROUPS % (0, 0)},
     {'version': 'v2', 'memory': True}, None),
    ({'/proc/cgroups': PROC_CGROUPS % (4, 1)}, {'version': 'v1', 'memory': True}, None),
    ({'/proc/cgroups': PROC_CGROUPS % (0, 0)}, {'version': 'v1', 'memory': False},
     'cgroup v1 without the memory controller (disabled in /proc/cgroups)'),
    ({'/proc/cgroups': '#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t3\t60\t1\n'}, {'version': 'v1', 'memory': False},
     'cgroup v1 without the memory controller (disabled in /proc/cgroups)'),
    ({}, {'version': '', 'memory': False},
     'neither /sys/fs/cgroup/cgroup.controllers (cgroup v2) nor /proc/cgroups (cgroup v1) could be read: is the cgroup '
     'file system mounted?'),
])
def test_cgroup(node, files, cgroup, problem):
    healthy(node)
    node.unlink('/sys/fs/cgroup/cgroup.controllers')
    for path, text in files.items():
        node.write(path, text)
    r = module_ok(k3s_preflight, {'fail': False})
    assert r['cgroup'] == cgroup
    assert [p['msg'] for p in r['problems'] if p['check'] == 'cgroup'] == \
        ([] if problem is None else [problem if problem.startswith('neither') else problem + '; ' + _preflight.MEMORY_HINT])


@pytest.mark.parametrize('dirs, path, free', [
    ([], '/', 100000),                                               # nothing of it exists: the root's file system
    (['/var/lib'], '/var/lib', 500),                                 # /var/lib is its own file system
    (['/var/lib/rancher'], '/var/lib/rancher', 500),                 # on /var/lib's
    (['/var/lib/rancher/k3s'], '/var/lib/rancher/k3s', 9000),        # k3s's own, already mounted
])
def test_disk_at_nearest_existing_parent(node, dirs, path, free):
    healthy(node)
    node.filesystem('/', 100000)
    node.filesystem('/var/lib', 500)
    node.filesystem('/var/lib/rancher/k3s', 9000)
    for d in dirs:
        node.makedirs(d)
    r = module_ok(k3s_preflight, {'fail': False})
    assert (r['disk_path'], r['disk_free_mb']) == (path, free)
    assert node.statvfs_calls == [path]
    disk = [p['msg'] for p in r['problems'] if p['check'] == 'disk']
    if free >= 4096:
        assert disk == []
    elif path == '/var/lib/rancher/k3s':
        assert disk == ['%d MB free on the file system of /var/lib/rancher/k3s; a k3s server needs at least 4096 MB '
                        '(min_disk_mb)' % free]
    else:
        assert disk == ['%d MB free on the file system of %s (data_dir /var/lib/rancher/k3s does not exist yet); a k3s '
                        'server needs at least 4096 MB (min_disk_mb)' % (free, path)]


def test_other_data_dir(node):
    healthy(node)
    node.makedirs('/srv/k3s')
    node.filesystem('/srv', 3000)
    r = module_ok(k3s_preflight, {'data_dir': '/srv/k3s/', 'role': 'agent', 'fail': False})
    assert (r['disk_path'], r['disk_free_mb'], r['data_dir']) == ('/srv/k3s', 3000, '/srv/k3s')


@pytest.mark.parametrize('files, cpus', [
    ({'/sys/devices/system/cpu/online': '0-3,6,8-9\n'}, 7),
    ({'/sys/devices/system/cpu/online': '0\n'}, 1),
    ({'/proc/cpuinfo': 'processor\t: 0\nmodel name\t: x\n\nprocessor\t: 1\nmodel name\t: x\n\n'}, 2),
    ({'/sys/devices/system/cpu/online': 'garbage\n', '/proc/cpuinfo': 'processor : 0\n'}, 1),
])
def test_cpu_count(node, files, cpus):
    healthy(node)
    node.unlink('/sys/devices/system/cpu/online')
    for path, text in files.items():
        node.write(path, text)
    assert module_ok(k3s_preflight, {'fail': False, 'min_cpus': 1})['cpus'] == cpus


def test_unreadable_values_are_problems(node):
    healthy(node)
    node.unlink('/sys/devices/system/cpu/online')
    node.unlink('/proc/meminfo')
    r = module_ok(k3s_preflight, {'fail': False})
    assert (r['cpus'], r['memory_mb']) == (None, None)
    assert [p['msg'] for p in r['problems']] == [
        'cannot count the CPUs: neither /sys/devices/system/cpu/online nor /proc/cpuinfo could be read',
        'cannot measure the memory: /proc/meminfo has no MemTotal',
    ]


@pytest.mark.parametrize('args, message', [
    ({'ports': [0]}, 'ports must be TCP port numbers from 1 to 65535; 0 is not'),
    ({'ports': [65536]}, 'ports must be TCP port numbers from 1 to 65535; 65536 is not'),
    ({'min_cpus': -1}, 'min_cpus must be a whole number of 0 or more, not -1'),
    ({'data_dir': 'var/lib/rancher/k3s'}, "data_dir 'var/lib/rancher/k3s' must be an absolute path"),
])
def test_bad_input(node, args, message):
    healthy(node)
    assert module_fail(k3s_preflight, args) == message


# -- a server that already holds a cluster, and the typo check -------------------------------------
CLUSTER_A = 'K10' + 'a' * 64
CLUSTER_B = 'K10' + 'b' * 64
DB = '/var/lib/rancher/k3s/server/db'


def holding(node, kind, token=CLUSTER_B + '::server:' + 'p' * 32):
    """A server that ran k3s on a datastore of its own (kind sqlite or etcd), its server/token naming its cluster."""
    healthy(node)
    if kind == 'sqlite':
        node.write(DB + '/state.db', 'SQLite format 3\x00')
    elif kind == 'etcd':
        node.write(DB + '/etcd/member/snap/db', 'etcd')
    if token is not None:
        node.write('/var/lib/rancher/k3s/server/token', token + '\n')
    return node


@pytest.mark.parametrize('kind, path', [('sqlite', DB + '/state.db'), ('etcd', DB + '/etcd')])
def test_a_server_of_another_cluster_is_refused_before_it_joins(node, kind, path):
    holding(node, kind)
    failed, r = run_module(k3s_preflight, {'joins': 'server-1', 'join_cluster': CLUSTER_A})
    assert failed and r['msg'].startswith('k3s preflight of node-1 (server): 1 problem: datastore: this server holds')
    assert r['datastore'] == {'kind': kind, 'path': path, 'cluster': CLUSTER_B, 'foreign': True}
    assert [p['check'] for p in r['problems']] == ['datastore']
    msg = r['problems'][0]['msg']
    assert path in msg and 'K10bbbbbbbbbbbb...' in msg and 'server-1 (cluster K10aaaaaaaaaaaa...)' in msg
    assert 'k3s_server_join_discard_datastore: true' in msg
    assert 'p' * 32 not in repr(r)  # the token's password is never returned


@pytest.mark.parametrize('params, token', [
    ({'joins': 'server-1', 'join_cluster': ''}, CLUSTER_B + '::server:pw'),  # the first server starts a new cluster
    ({'joins': 'server-1', 'join_cluster': CLUSTER_A}, None),  # no server/token: whose datastore cannot be told
    ({'joins': 'server-1', 'join_cluster': CLUSTER_A}, 'K10short::server:pw'),  # no CA hash to compare
])
def test_a_datastore_whose_cluster_is_not_the_joined_one_is_refused(node, params, token):
    holding(node, 'sqlite', token=token)
    failed, r = run_module(k3s_preflight, params)
    assert failed and r['datastore']['foreign'] is True and [p['check'] for p in r['problems']] == ['datastore']


@pytest.mark.parametrize('params, kind', [
    ({'joins': 'server-1', 'join_cluster': CLUSTER_B}, 'etcd'),  # a member already: a re-run
    ({'joins': '', 'join_cluster': CLUSTER_A}, 'sqlite'),  # the first server keeps its own datastore
    ({'joins': 'server-1', 'join_cluster': CLUSTER_A}, ''),  # a fresh server: nothing to lose
    ({'joins': 'server-1', 'join_cluster': CLUSTER_A, 'role': 'agent'}, 'sqlite'),  # an agent keeps no datastore
])
def test_servers_that_lose_nothing_pass(node, params, kind):
    holding(node, kind)
    r = module_ok(k3s_preflight, params)
    assert r['ok'] is True and r['datastore']['foreign'] is False and r['warnings'] == []


def test_discard_datastore_lets_it_join_and_says_so(node):
    holding(node, 'sqlite')
    r = module_ok(k3s_preflight, {'joins': 'server-1', 'join_cluster': CLUSTER_A, 'discard_datastore': True})
    assert r['ok'] is True and r['datastore']['foreign'] is True
    assert len(r['warnings']) == 1 and 'moved aside' in r['warnings'][0] and DB + '/state.db' in r['warnings'][0]


def test_a_misspelt_variable_is_named_with_the_nearest_option(node):
    healthy(node)
    r = module_ok(k3s_preflight, {'variables': ['k3s_agent_confg', 'k3s_agent_config', 'ansible_host', 'k3s_server_zzz_qq',
                                                'k3s_upgrade_binry_src', 'k3s_agent_confg']})
    assert r['unknown_variables'] == [
        {'name': 'k3s_agent_confg', 'nearest': 'k3s_agent_config'},
        {'name': 'k3s_server_zzz_qq', 'nearest': ''},
        {'name': 'k3s_upgrade_binry_src', 'nearest': 'k3s_upgrade_binary_src'},
    ]
    assert r['warnings'] == [
        'k3s_agent_confg (did you mean k3s_agent_config?); k3s_server_zzz_qq; k3s_upgrade_binry_src (did you mean '
        'k3s_upgrade_binary_src?): no role or playbook of baremetal.k3s has these variables, so Ansible ignores them in '
        'silence; check the spelling']
    assert r['ok'] is True  # a warning, not a problem


def test_known_variables_give_no_warning(node):
    healthy(node)
    r = module_ok(k3s_preflight, {'variables': ['k3s_agent_config', 'k3s_server_join_discard_datastore', 'k3s_agent_serial',
                                                'k3s_reset_confirm', 'scheduler_extender_url', 'k3s_user_name']})
    assert r['unknown_variables'] == [] and r['warnings'] == []


# -- SELinux: the kernel's mode (/sys/fs/selinux/enforce) against k3s's selinux option --------------------------------
@pytest.mark.parametrize('enforce, given, files, problem, facts', [
    # no selinuxfs: SELinux is not enabled
    (None, None, {}, False, {'enforcing': False, 'configured': None}),
    ('0\n', None, {}, False, {'enforcing': False, 'configured': None}),
    ('0\n', False, {}, False, {'enforcing': False, 'configured': False}),
    ('1\n', None, {}, True, {'enforcing': True, 'configured': False}),
    ('1', False, {}, True, {'enforcing': True, 'configured': False}),
    ('1\n', True, {}, False, {'enforcing': True, 'configured': True}),
    # what k3s's own config files say, when the role does not say it
    ('1\n', None, {'/etc/rancher/k3s/config.yaml': 'selinux: true\n'}, False, {'enforcing': True, 'configured': True}),
    ('1\n', None, {'/etc/rancher/k3s/config.yaml.d/10-os.yaml': 'selinux: "true"\n'}, False,
     {'enforcing': True, 'configured': True}),
    # a later file replaces the key
    ('1\n', None, {'/etc/rancher/k3s/config.yaml': 'selinux: true\n',
                   '/etc/rancher/k3s/config.yaml.d/90-off.yaml': 'selinux: false\n'}, True,
     {'enforcing': True, 'configured': False}),
    # the role's own value wins over the node's files (its file sorts after them)
    ('1\n', False, {'/etc/rancher/k3s/config.yaml': 'selinux: true\n'}, True, {'enforcing': True, 'configured': False}),
])
def test_selinux_enforcing_without_k3s_configured_for_it_is_a_problem(node, enforce, given, files, problem, facts):
    healthy(node)
    if enforce is not None:
        node.write('/sys/fs/selinux/enforce', enforce)
    for path, text in files.items():
        node.write(path, text)
    args = {'fail': False}
    if given is not None:
        args['selinux'] = given
    r = module_ok(k3s_preflight, args)
    assert r['selinux'] == facts
    found = [p for p in r['problems'] if p['check'] == 'selinux']
    assert bool(found) is problem
    if problem:
        assert '/sys/fs/selinux/enforce is 1' in found[0]['msg'] and 'selinux: true' in found[0]['msg']
        assert 'k3s-selinux' in found[0]['msg']
        assert 'selinux: SELinux is enforcing on this host' in r['msg']


def test_selinux_mode_file_with_another_value_is_a_warning(node):
    healthy(node)
    node.write('/sys/fs/selinux/enforce', 'x\n')
    r = module_ok(k3s_preflight, {'fail': False})
    assert r['selinux']['enforcing'] is None and r['ok'] is True
    assert any('holds neither 0 nor 1' in w for w in r['warnings']), r


CA_MISSING = ('registries: configs["r.example:5000"]["tls"]["ca_file"] /etc/ssl/internal-ca.pem is not there on this node: '
              'containerd would fail every pull from r.example:5000. Put the file there first, or fix the path')


@pytest.mark.parametrize('registries, files, take_over, expected', [
    (None, {}, False, None),  # not given: not checked
    ({}, {}, False, None),
    ({'mirrors': {'docker.io': {'endpoint': ['https://r.example:5000']}},
      'configs': {'r.example:5000': {'tls': {'ca_file': '/etc/ssl/internal-ca.pem'}}}},
     {'/etc/ssl/internal-ca.pem': 'PEM\n'}, False, None),
    ({'configs': {'r.example:5000': {'tls': {'ca_file': '/etc/ssl/internal-ca.pem'}}}}, {}, False, CA_MISSING),
    ({'configs': {'r.example:5000': {'tls': {'ca_file': '/etc/ssl/internal-ca.pem'}}}}, {'/etc/ssl/internal-ca.pem/x': ''},
     False, CA_MISSING.replace('is not there', 'is a directory, not a file')),
    ({'mirror': {}}, {}, False, "registries: the registries must be a mapping with the keys mirrors and configs (as in "
                                "k3s's registries.yaml); it has ['mirror']"),
    ('docker.io', {}, False, "registries: the registries must be a mapping with the keys mirrors and configs (as in "
                             "k3s's registries.yaml); it has no mapping"),
    # an operator's registries.yaml is refused unless the role is to take it over
    ({'mirrors': {'docker.io': {}}}, {'/etc/rancher/k3s/registries.yaml': 'mirrors: {}\n'}, False,
     'registries: /etc/rancher/k3s/registries.yaml exists and was not written by baremetal.k3s'),
    ({'mirrors': {'docker.io': {}}}, {'/etc/rancher/k3s/registries.yaml': 'mirrors: {}\n'}, True, None),
])
def test_registries_the_role_is_to_write_are_checked_first(node, registries, files, take_over, expected):
    healthy(node)
    for path, text in files.items():
        node.write(path, text)
    args = {'fail': False, 'registries_take_over': take_over}
    if registries is not None:
        args['registries'] = registries
    r = module_ok(k3s_preflight, args)
    found = ['%s: %s' % (p['check'], p['msg']) for p in r['problems']]
    if expected is None:
        assert found == [] and r['ok'], found
    else:
        assert len(found) == 1 and found[0].startswith(expected), found
        # not a matter of size: the message does not tell to lower the thresholds
        assert r['msg'].endswith('. Fix them.') and 'min_cpus' not in r['msg'], r['msg']
    # the preflight writes nothing
    assert not node.exists('/etc/rancher/k3s/registries.yaml') or '/etc/rancher/k3s/registries.yaml' in files


# -- read: the node as k3s_info reads it, in the same module run -----------------------------------------------------
def agent_node(node, data_dir=None, pid=4242):
    """A healthy host running a k3s agent (systemd), its kubelet port taken by it; with its own data dir when given."""
    healthy(node)
    node.install(command='agent', args=['--server', 'https://10.0.0.1:6443'] + (['--data-dir', data_dir] if data_dir else []))
    node.service('k3s-agent', pid=pid, UnitFileState='enabled')
    node.write('/proc/net/tcp6', tcp((V6_ANY, 10250, LISTEN)))
    node.write('/usr/local/bin/k3s', 'binary\n', 0o755)
    node.makedirs('/usr/local/bin/.baremetal-k3s-upgrade.q1')
    return node


READ = {'platform': 'k3s', 'service': 'k3s-agent', 'scratch_dirs': ['/usr/local/bin', '/tmp'],
        'sha256_files': ['/usr/local/bin/k3s']}


@pytest.mark.parametrize('checks', [True, False])
@pytest.mark.parametrize('installed', [True, False])
def test_the_read_is_k3s_infos_result(node, checks, installed):
    """node is exactly what k3s_info returns with the same options on the same node, whether the checks run or not."""
    if installed:
        agent_node(node)
    else:
        healthy(node)
    info = module_ok(k3s_info, READ)
    r = module_ok(k3s_preflight, {'role': 'agent', 'read': READ, 'checks': checks})
    warnings = info.pop('warnings')
    assert r['node'] == info
    assert r['warnings'] == warnings  # the read's (none on this node), the checks' (none)
    assert r['node']['installed'] is installed
    if installed:
        assert r['node']['active'] is True and r['node']['node_role'] == 'agent'
        assert [d['path'] for d in r['node']['scratch_left']] == ['/usr/local/bin/.baremetal-k3s-upgrade.q1']
        assert r['node']['sha256_files'][0]['exists'] is True
    assert r['hostname'] == 'node-1'


def test_read_only_runs_no_check(node):
    """checks: false - the read alone: no measurement, no problem, even on a host that would fail every check, and
    fail does not apply."""
    healthy(node)
    for what in ('cpus', 'memory', 'disk', 'cgroup-v1', 'port-v6'):
        _break(node, what)
    r = module_ok(k3s_preflight, {'role': 'agent', 'read': READ, 'checks': False, 'fail': True})
    assert set(r) == {'node', 'hostname', 'changed', 'warnings'} and r['changed'] is False
    assert r['node']['installed'] is False
    assert node.statvfs_calls == []  # nothing measured
    # the checks alone need no read; a read alone needs one
    assert module_fail(k3s_preflight, {'checks': False}) == 'checks is False but all of the following are missing: read'


def test_read_and_checks_in_one_run(node):
    """The read and every check: a problem fails the run with the read in its result."""
    agent_node(node)
    _break(node, 'disk')
    failed, r = run_module(k3s_preflight, {'role': 'agent', 'read': READ})
    assert failed and [p['check'] for p in r['problems']] == ['disk']
    assert r['node']['installed'] is True and r['node']['service'] == 'k3s-agent'
    r = module_ok(k3s_preflight, {'role': 'agent', 'read': READ, 'fail': False})
    assert r['ok'] is False and r['node']['installed'] is True


def test_fresh_comes_from_the_read(node):
    """Not given, fresh is whether the read found k3s not installed: a running agent holds its own port; before the
    install the same listener is a problem. Given, fresh is as given."""
    agent_node(node)
    r = module_ok(k3s_preflight, {'role': 'agent', 'read': READ})
    assert r['fresh'] is False and r['ok'] and r['ports_in_use'] == [10250]
    r = module_ok(k3s_preflight, {'role': 'agent', 'read': READ, 'fresh': True, 'fail': False})
    assert r['fresh'] is True and [p['check'] for p in r['problems']] == ['ports']
    node.unlink('/etc/systemd/system/k3s-agent.service')
    r = module_ok(k3s_preflight, {'role': 'agent', 'read': READ, 'fail': False})
    assert r['node']['installed'] is False and r['fresh'] is True
    assert [p['msg'] for p in r['problems']] == [SERVER_MSGS['port-v6'].split(': ', 1)[1]]
    # without a read, fresh is false unless given
    assert module_ok(k3s_preflight, {'role': 'agent'})['fresh'] is False


def test_data_dir_comes_from_the_read(node):
    """Not given, data_dir is the one the read found (the agent's --data-dir); given, it is as given; without either,
    k3s's default."""
    agent_node(node, data_dir='/srv/k3s')
    node.makedirs('/srv/k3s')
    node.filesystem('/srv', 100)
    r = module_ok(k3s_preflight, {'role': 'agent', 'read': READ, 'fail': False})
    assert r['node']['data_dir'] == '/srv/k3s' and r['data_dir'] == '/srv/k3s' and r['disk_free_mb'] == 100
    assert [p['check'] for p in r['problems']] == ['disk']
    r = module_ok(k3s_preflight, {'role': 'agent', 'read': READ, 'data_dir': '/var/lib/rancher/k3s'})
    assert r['data_dir'] == '/var/lib/rancher/k3s' and r['disk_free_mb'] == 50000
    assert module_ok(k3s_preflight, {'role': 'agent'})['data_dir'] == '/var/lib/rancher/k3s'


@pytest.mark.parametrize('read, message', [
    ({'platform': 'k8s'}, 'read: value of platform must be one of: auto, k3s, rke2, kubeadm, got: k8s'),
    ({'services': 'k3s'}, 'read: unsupported parameters services. Supported parameters include: manifest_path, platform, '
                          'scratch_dirs, service, sha256_files'),
    ({'scratch_dirs': ['relative']}, 'scratch_dirs: relative is not an absolute path'),
])
def test_read_options_are_k3s_infos(node, read, message):
    """read is checked as k3s_info checks its options, and refused as k3s_info refuses them."""
    healthy(node)
    msg = module_fail(k3s_preflight, {'read': read, 'fail': False})
    assert message in msg, msg
    assert module_fail(k3s_info, read).split(': ')[-1] in msg


def test_checks_tag_is_the_action_plugins(node):
    """checks_tag is resolved on the controller; the module takes it and leaves the checks to checks."""
    healthy(node)
    assert module_ok(k3s_preflight, {'checks_tag': 'preflight'})['ok'] is True
