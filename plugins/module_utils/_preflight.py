# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.k3s_preflight``: is this host fit to run a k3s server or agent?

``check(view, params)`` measures the host through the view - CPUs online, MemTotal, the free
space of the file system that holds (or will hold) k3s's data directory, the cgroup version
and its memory controller, and which of k3s's TCP ports something already listens on - and
returns a Plan without changes whose ``facts`` hold every measured value and *every* problem
found, so that one run names them all. ``read_and_check(view, params, read)`` reads the node
first as ``baremetal.k3s.k3s_info`` does (``_k3s_info.gather``, ``read`` its options) and returns
that read as ``node`` beside the checks (``params['checks']`` false: the read alone), the checks
taking from it what they are not given (whether k3s is installed, its data dir): one module run
for both. Parsers (``parse_proc_net_tcp``, ``parse_proc_cgroups``) take text and do no I/O.
Pure standard library; no Ansible import.
"""

from __future__ import annotations

import os
import re
import socket

from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config as k3s_config
from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_info as k3s_info
from ansible_collections.baremetal.k3s.plugins.module_utils import _platform
from ansible_collections.baremetal.k3s.plugins.module_utils import _registries as registries
from ansible_collections.baremetal.k3s.plugins.module_utils import _service
from ansible_collections.baremetal.k3s.plugins.module_utils import _variables
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Plan, PlanError

# k3s's published minimum hardware: server 2 cores and 2 GB of RAM, agent 1 core and 512 MB.
# k3s publishes no disk figure; the defaults leave room for k3s's unpacked binaries (about
# 250 MB a version), the images of its packaged components (about 1 GB) and, on a server, the
# datastore (embedded etcd's quota is 2 GB).
REQUIREMENTS = {
    'server': {'cpus': 2, 'memory_mb': 2048, 'disk_mb': 4096, 'ports': (6443, 10250)},
    'agent': {'cpus': 1, 'memory_mb': 512, 'disk_mb': 2048, 'ports': (10250,)},
}
# MemTotal is the memory the kernel manages: the installed memory less what the firmware, a GPU
# split and the kernel keep for themselves (3 to 10 percent). A minimum stated as installed memory
# (k3s's "2 GB") is met by a MemTotal down to this share of it.
MEMTOTAL_SHARE = 0.9
DEFAULT_DATA_DIR = '/var/lib/rancher/k3s'
TCP_LISTEN = '0A'  # TCP_LISTEN in the st column of /proc/net/tcp
CGROUP2_CONTROLLERS = '/sys/fs/cgroup/cgroup.controllers'
PROC_CGROUPS = '/proc/cgroups'
# A k3s server's token file: K10<sha256 of the cluster CA, hex>::<user>:<password>. The K10 part names the
# cluster (its CA) and is no secret; the password never leaves the module.
TOKEN_CLUSTER = re.compile(r'K10[0-9a-f]{64}')
# the kernel's SELinux mode: "1" enforcing, "0" permissive; no file: SELinux is not enabled
SELINUX_ENFORCE = '/sys/fs/selinux/enforce'
K3S_CONFIG = '/etc/rancher/k3s/config.yaml'
SELINUX_HINT = ('set selinux: true in k3s\'s config (k3s_server_config / k3s_agent_config) and install the k3s-selinux '
                'policy package (with container-selinux) from k3s\'s RPM repository, or put SELinux in permissive mode: '
                'without them k3s runs its containers without SELinux support and pods that need labels fail later')
MEMORY_HINT = ('k3s\'s kubelet needs it: enable it on the kernel command line (Raspberry Pi OS: add cgroup_memory=1 '
               'cgroup_enable=memory to /boot/firmware/cmdline.txt) and reboot')


def role_defaults(role):
    """The thresholds and ports of ``role`` (server or agent)."""
    if role not in REQUIREMENTS:
        raise PlanError('role must be server or agent, not %r' % (role,))
    return REQUIREMENTS[role]


def memtotal_floor(min_memory_mb):
    """The smallest MemTotal (MiB) that meets a minimum of ``min_memory_mb`` installed."""
    return int(min_memory_mb * MEMTOTAL_SHARE)


# -- parsers ------------------------------------------------------------------------------------
def _address(hexaddr, v6):
    """The text of an address as /proc/net/tcp{,6} prints it: 32-bit words in host (little-endian) order."""
    raw = bytes.fromhex(hexaddr)
    words = b''.join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    return socket.inet_ntop(socket.AF_INET6 if v6 else socket.AF_INET, words)


def parse_proc_net_tcp(text, v6=False):
    """The sockets of ``/proc/net/tcp`` (``v6``: ``tcp6``) text: [{address, port, state}], state as hex (0A listening).

    Lines that are not socket rows (the header, a truncated line) are skipped.
    """
    out = []
    for line in (text or '').splitlines():
        fields = line.split()
        if len(fields) < 4 or not fields[0].endswith(':') or ':' not in fields[1]:
            continue
        hexaddr, dummy, hexport = fields[1].rpartition(':')
        try:
            port = int(hexport, 16)
            address = _address(hexaddr, v6)
        except ValueError:
            continue
        out.append({'address': address, 'port': port, 'state': fields[3].upper()})
    return out


def parse_proc_cgroups(text):
    """``/proc/cgroups`` as {subsystem: enabled}."""
    out = {}
    for line in (text or '').splitlines():
        if line.startswith('#'):
            continue
        fields = line.split()
        if len(fields) >= 4:
            out[fields[0]] = fields[3] == '1'
    return out


# -- measurements -------------------------------------------------------------------------------
def listeners(view):
    """Listening TCP sockets of the host's network namespace: [{address, port}] (IPv4, then IPv6)."""
    out = []
    for path, v6 in (('/proc/net/tcp', False), ('/proc/net/tcp6', True)):
        for sock in parse_proc_net_tcp(view.read_text(path), v6):
            if sock['state'] == TCP_LISTEN:
                out.append({'address': sock['address'], 'port': sock['port']})
    return out


def cgroup(view):
    """{version: v2|v1|'' (unknown), memory: bool, source: the file read}."""
    controllers = view.read_text(CGROUP2_CONTROLLERS)
    if controllers is not None:
        return {'version': 'v2', 'memory': 'memory' in controllers.split(), 'source': CGROUP2_CONTROLLERS}
    table = view.read_text(PROC_CGROUPS)
    if table is not None:
        return {'version': 'v1', 'memory': parse_proc_cgroups(table).get('memory', False), 'source': PROC_CGROUPS}
    return {'version': '', 'memory': False, 'source': ''}


def nearest_existing(view, path):
    """``path``, or its nearest parent that exists (``/`` at last)."""
    probe = os.path.normpath(path)
    while probe != '/' and not view.exists(probe):
        probe = os.path.dirname(probe)
    return probe


def disk_free_mb(view, path):
    """MiB available (to unprivileged users too: statvfs f_bavail) on the file system of ``path``; None when unknown."""
    st = view.statvfs(path)
    if st is None:
        return None
    return st.f_bavail * st.f_frsize // 2 ** 20


def cluster_of(token_text):
    """The cluster a token names: its ``K10<CA hash>`` part, or '' when it has none (a bare password, no file)."""
    head = (token_text or '').strip().split('::', 1)[0]
    return head if TOKEN_CLUSTER.fullmatch(head) else ''


def datastore(view, data_dir):
    """What a k3s server keeps under ``data_dir``: {kind: etcd|sqlite|'', path, cluster (of server/token, or '')}."""
    db = os.path.join(data_dir, 'server', 'db')
    found = {'kind': '', 'path': '', 'cluster': cluster_of(view.read_text(os.path.join(data_dir, 'server', 'token')))}
    for kind, path in (('etcd', os.path.join(db, 'etcd')), ('sqlite', os.path.join(db, 'state.db'))):
        if view.lexists(path):
            found.update(kind=kind, path=path)
            break
    return found


def short_cluster(cluster):
    """A cluster's name as a message shows it: K10 and the first 12 digits of its CA hash."""
    return cluster[:15] + '...' if cluster else 'unknown: no server/token'


# -- the check ----------------------------------------------------------------------------------
def _int_option(params, key, default):
    value = params.get(key)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise PlanError('%s must be a whole number of 0 or more, not %r' % (key, value))
    return value


def _ports(params, default):
    ports = params.get('ports')
    if ports is None:
        return list(default)
    out = []
    for port in ports:
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            raise PlanError('ports must be TCP port numbers from 1 to 65535; %r is not' % (port,))
        if port not in out:
            out.append(port)
    return out


def read_and_check(view, params, read=None, found=None):
    """The Plan (no changes) of ``baremetal.k3s.k3s_preflight`` with its ``read``: the node read as
    ``baremetal.k3s.k3s_info`` reads it (``read``: its options, checked; None: no read) in ``node``, exactly that
    module's result, then the checks of ``check`` unless ``params['checks']`` is false (then only ``hostname`` beside
    ``node``). ``found`` (a set: the module's ``no_log_values``) receives the secret values the read meets."""
    facts, warnings = {}, []
    node = None
    if read is not None:
        node, read_warnings = k3s_info.read_node(view, read, found)
        warnings.extend(read_warnings)
    if params.get('checks', True):
        checked = check(view, params, node)
        facts.update(checked.facts)
        warnings.extend(checked.warnings)
    else:
        facts['hostname'] = view.hostname()
    if node is not None:
        facts['node'] = node
    return Plan(facts=facts, warnings=warnings)


def check(view, params, node=None):
    """The Plan (no changes) of ``baremetal.k3s.k3s_preflight``: measured values and every problem.

    ``node``: the node as ``baremetal.k3s.k3s_info`` read it, or None; ``fresh`` not given is then whether it found
    nothing installed, ``data_dir`` not given the data dir it found.
    """
    role = params.get('role') or 'server'
    req = role_defaults(role)
    min_cpus = _int_option(params, 'min_cpus', req['cpus'])
    min_memory_mb = _int_option(params, 'min_memory_mb', req['memory_mb'])
    min_disk_mb = _int_option(params, 'min_disk_mb', req['disk_mb'])
    ports = _ports(params, req['ports'])
    found_dir = (node or {}).get('data_dir') or ''
    data_dir = params.get('data_dir') or (found_dir if os.path.isabs(found_dir) else '') or DEFAULT_DATA_DIR
    if not os.path.isabs(data_dir):
        raise PlanError('data_dir %r must be an absolute path' % (data_dir,))
    data_dir = os.path.normpath(data_dir)
    fresh = params.get('fresh')
    fresh = bool(fresh) if fresh is not None else (node is not None and not node.get('installed'))
    joins = params.get('joins') or ''
    who = 'a k3s %s' % role
    problems = []
    cpus = _check_cpus(view, min_cpus, who, problems)
    memory_mb = _check_memory(view, min_memory_mb, who, problems)
    disk_path, free_mb = _check_disk(view, data_dir, min_disk_mb, who, problems)
    groups = _check_cgroup(view, problems)
    in_use = _check_ports(view, ports, fresh, problems)
    store = _check_datastore(view, data_dir, role, joins, params, problems)
    config_warnings = []
    selinux = _check_selinux(view, params.get('selinux'), problems, config_warnings)
    _check_registries(view, params, problems)
    unknown = _variables.unknown(params.get('variables') or [])
    warnings = [w for w in [_variables.warning(unknown), store.pop('warning', '')] + config_warnings if w]
    hostname = view.hostname()
    if problems:
        sized = any(p['check'] != 'registries' for p in problems)
        msg = ('k3s preflight of %s (%s): %d problem%s: %s. Fix them%s.'
               % (hostname, role, len(problems), '' if len(problems) == 1 else 's',
                  '; '.join('%s: %s' % (p['check'], p['msg']) for p in problems),
                  ', or lower min_cpus, min_memory_mb or min_disk_mb if this host is meant to run with less' if sized else ''))
    else:
        msg = 'k3s preflight of %s (%s): no problems' % (hostname, role)
    return Plan(facts={
        'ok': not problems, 'problems': problems, 'msg': msg, 'hostname': hostname, 'role': role, 'fresh': fresh,
        'cpus': cpus, 'memory_mb': memory_mb, 'disk_free_mb': free_mb, 'disk_path': disk_path, 'data_dir': data_dir,
        'cgroup': {'version': groups['version'], 'memory': groups['memory']},
        'ports': ports, 'ports_in_use': in_use,
        'min_cpus': min_cpus, 'min_memory_mb': min_memory_mb, 'min_disk_mb': min_disk_mb,
        'datastore': store, 'unknown_variables': unknown, 'selinux': selinux,
    }, warnings=warnings)


def _check_registries(view, params, problems):
    """The registries.yaml the role is to write (``registries``: mirrors and configs), planned here and not written:
    a key k3s does not know, a TLS file that is not on the node (containerd would fail every pull) or an operator's
    registries.yaml without ``registries_take_over`` is a problem now, before the binary or any file is placed."""
    value = params.get('registries')
    if value is None:
        return
    if not isinstance(value, dict) or set(value) - {'mirrors', 'configs'}:
        _problem(problems, 'registries', 'the registries must be a mapping with the keys mirrors and configs (as in '
                                         'k3s\'s registries.yaml); it has %s'
                 % (sorted(str(k) for k in set(value) - {'mirrors', 'configs'}) if isinstance(value, dict) else 'no mapping'))
        return
    try:
        registries.plan(view, {'path': _platform.get('k3s').registries_file, 'mirrors': value.get('mirrors'),
                               'configs': value.get('configs'), 'take_over': params.get('registries_take_over')})
    except PlanError as e:
        _problem(problems, 'registries', re.sub(r'\s*Nothing was changed\.$', '', e.msg).rstrip('.'))


def _problem(problems, name, msg):
    problems.append({'check': name, 'msg': msg})


def _check_cpus(view, min_cpus, who, problems):
    """The CPUs online (None when unknown); a problem when fewer than ``min_cpus``."""
    cpus = view.cpu_count()
    if cpus is None:
        _problem(problems, 'cpus', 'cannot count the CPUs: neither /sys/devices/system/cpu/online nor /proc/cpuinfo could be read')
    elif cpus < min_cpus:
        _problem(problems, 'cpus', '%d CPU%s online; %s needs at least %d (min_cpus)' % (cpus, '' if cpus == 1 else 's', who, min_cpus))
    return cpus


def _check_memory(view, min_memory_mb, who, problems):
    """MemTotal in MB (None when unknown); a problem when below what ``min_memory_mb`` installed shows as."""
    memtotal = view.meminfo().get('MemTotal')
    memory_mb = None if memtotal is None else memtotal // 1024
    if memory_mb is None:
        _problem(problems, 'memory', 'cannot measure the memory: /proc/meminfo has no MemTotal')
    elif memory_mb < memtotal_floor(min_memory_mb):
        _problem(problems, 'memory', '%d MB of memory (MemTotal); %s needs %d MB installed (min_memory_mb), that is a MemTotal of '
                                     'at least %d MB' % (memory_mb, who, min_memory_mb, memtotal_floor(min_memory_mb)))
    return memory_mb


def _check_disk(view, data_dir, min_disk_mb, who, problems):
    """(the path measured, MB free there or None) for ``data_dir``; a problem when below ``min_disk_mb``."""
    disk_path = nearest_existing(view, data_dir)
    free_mb = disk_free_mb(view, disk_path)
    where = 'the file system of %s' % data_dir if disk_path == data_dir else \
        'the file system of %s (data_dir %s does not exist yet)' % (disk_path, data_dir)
    if free_mb is None:
        _problem(problems, 'disk', 'cannot measure the free space on %s' % where)
    elif free_mb < min_disk_mb:
        _problem(problems, 'disk', '%d MB free on %s; %s needs at least %d MB (min_disk_mb)' % (free_mb, where, who, min_disk_mb))
    return disk_path, free_mb


def _check_cgroup(view, problems):
    """The cgroup facts; a problem when unknown or without the memory controller."""
    groups = cgroup(view)
    if not groups['version']:
        _problem(problems, 'cgroup', 'neither %s (cgroup v2) nor %s (cgroup v1) could be read: is the cgroup file system mounted?'
                 % (CGROUP2_CONTROLLERS, PROC_CGROUPS))
    elif not groups['memory']:
        _problem(problems, 'cgroup', 'cgroup %s without the memory controller (%s); %s'
                 % (groups['version'], 'not in ' + CGROUP2_CONTROLLERS if groups['version'] == 'v2'
                    else 'disabled in ' + PROC_CGROUPS, MEMORY_HINT))
    return groups


def _check_ports(view, ports, fresh, problems):
    """The ports of ``ports`` something listens on; on a ``fresh`` node each is a problem."""
    socks = [s for s in listeners(view) if s['port'] in ports]
    in_use = sorted({s['port'] for s in socks})
    if fresh:
        for port in in_use:
            addresses = ', '.join(sorted({s['address'] for s in socks if s['port'] == port}))
            _problem(problems, 'ports', 'TCP port %d is already in use (something listens on %s); k3s cannot start while another '
                                        'program holds it' % (port, addresses))
    return in_use


def selinux_enforcing(view):
    """True when the kernel enforces SELinux, False when it does not (permissive, or no selinuxfs), None when the mode
    file holds something else."""
    data = view.read(SELINUX_ENFORCE)
    if data is None:
        return False
    value = data.strip()
    return True if value == b'1' else False if value == b'0' else None


def _true(value):
    """k3s's boolean flag from a config value (true, "true"; go-yaml v2 reads yes/on as true too)."""
    return value is True or (isinstance(value, str) and value.strip().lower() == 'true')


def selinux_configured(view, given, warnings):
    """Whether k3s will run with --selinux: ``given`` (what the role writes) when not None, else what k3s's own
    config files on the node say."""
    if given is not None:
        return _true(given)
    try:
        docs = _service.config_documents(view, _service.config_files(view, K3S_CONFIG), warnings=warnings)
    except _service.ServiceError as e:
        warnings.append('k3s\'s config files could not be read for its selinux option: %s' % e)
        return False
    return _true(dict(k3s_config.merge(docs)).get('selinux'))


def _check_selinux(view, given, problems, warnings):
    """{enforcing, configured}; a problem when the kernel enforces SELinux and k3s is not configured for it."""
    enforcing = selinux_enforcing(view)
    configured = selinux_configured(view, given, warnings) if enforcing else (None if given is None else _true(given))
    if enforcing and not configured:
        _problem(problems, 'selinux', 'SELinux is enforcing on this host (%s is 1) and k3s is not configured for it; %s'
                 % (SELINUX_ENFORCE, SELINUX_HINT))
    elif enforcing is None:
        warnings.append('%s holds neither 0 nor 1: whether SELinux enforces is unknown' % SELINUX_ENFORCE)
    return {'enforcing': enforcing, 'configured': configured}


DATASTORE_KIND = {'sqlite': 'a SQLite datastore', 'etcd': 'an embedded etcd datastore'}


def _check_datastore(view, data_dir, role, joins, params, problems):
    """The server's datastore; a problem when it holds another cluster than the one it is to join (``joins``).

    ``foreign`` is true for such a datastore: with ``discard_datastore`` the run keeps it aside and joins (a warning
    says so), without it that is refused. An agent keeps no datastore.
    """
    store = datastore(view, data_dir) if role == 'server' else {'kind': '', 'path': '', 'cluster': ''}
    target = params.get('join_cluster') or ''
    store['foreign'] = bool(joins and store['kind'] and not (store['cluster'] and store['cluster'] == target))
    if not store['foreign']:
        return store
    what = ('%s (%s, the token of cluster %s)' % (DATASTORE_KIND[store['kind']], store['path'], short_cluster(store['cluster'])))
    theirs = 'cluster %s' % short_cluster(target) if target else 'a cluster this run starts'
    if params.get('discard_datastore'):
        store['warning'] = ('this server holds %s and joins %s (%s) instead: its server/db and server/token are moved '
                            'aside (discard_datastore), kept and no longer used' % (what, joins, theirs))
        return store
    _problem(problems, 'datastore', 'this server holds %s, another cluster than %s (%s) it is to join: joining would leave '
                                    'that datastore and what ran on it behind. Take this server out of the group, or let it '
                                    'join with discard_datastore (role k3s_server: k3s_server_join_discard_datastore: true), '
                                    'which moves its server/db and server/token aside, kept' % (what, joins, theirs))
    return store
