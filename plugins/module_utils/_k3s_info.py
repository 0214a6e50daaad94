# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.k3s_info``: which control plane runs on the node, and how its scheduler starts.

``gather(view, params)`` reads the node through the view and returns a Plan with no changes:
its ``facts`` are the module's result. The platform's record (``_platform``) is chosen once from
what runs there and returned as ``platform_record``; a platform whose scheduler flags are service
arguments (k3s, RKE2) is read as its service starts it (``_service``), one whose scheduler is a
static pod of the kubelet's (kubeadm) from the kube-scheduler manifest.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat

from ansible_collections.baremetal.k3s.plugins.module_utils import _binary
from ansible_collections.baremetal.k3s.plugins.module_utils import _goyaml as goyaml
from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config as k3s_config
from ansible_collections.baremetal.k3s.plugins.module_utils import _pending
from ansible_collections.baremetal.k3s.plugins.module_utils import _pflag as pflag
from ansible_collections.baremetal.k3s.plugins.module_utils import _platform
from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets as secrets
from ansible_collections.baremetal.k3s.plugins.module_utils import _service as services
from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Plan, PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._systemd_unit import expand_argv
from ansible_collections.baremetal.k3s.plugins.module_utils._view import RunTimeout, ViewError

SCHEDULER_FLAG = 'kube-scheduler-arg'
# A version as k3s, RKE2 and the Kubernetes images write it (v1.31.4+k3s1, v1.29.3-rc1+rke2r1, v1.36.3), whole.
VERSION_TOKEN = re.compile(r'v\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?')
# The first line of "k3s --version" / "rke2 --version": "k3s version v1.31.4+k3s1 (f9130d53)".
VERSION_LINE = re.compile(r'(?:k3s|rke2) version (\S+)(?: \([0-9A-Za-z.+_-]*\))?')
VERSION_TIMEOUT = 30  # seconds "<binary> --version" may take
KUBEADM_MANIFEST = _platform.KUBEADM.scheduler_manifest
# A kubeadm worker: the kubelet's service with the kubeconfig kubeadm join writes.
KUBEADM_KUBELET_CONF = '/etc/kubernetes/kubelet.conf'
# OpenRC's default runlevel: rc-update add puts a service there, and the node starts it at boot
OPENRC_RUNLEVEL = '/etc/runlevels/default/'
# The k3s releases that issue the scheduler's serving certificate (the record's scheduler_cert, from its
# server CA) and pass it as --tls-cert-file (k3s-io/k3s#12172: 1.30.13, 1.31.9, 1.32.5, 1.33.1 and every later minor).
SCHEDULER_CERT_SINCE = {30: 13, 31: 9, 32: 5, 33: 1}
_KUBE_VERSION_RE = re.compile(r'^v(\d+)\.(\d+)\.(\d+)')


def parse_version(text):
    """(version, kubernetes_version) from the first line of ``k3s --version`` (``rke2 --version``); ('', '') unless that
    line is exactly ``k3s version <version> (<commit>)`` with a whole version token: stray bytes or terminal escapes
    around or inside it give nothing rather than a version that is not one."""
    first = (text or '').strip(' \t\r\n').split('\n', 1)[0].rstrip(' \t\r')
    m = VERSION_LINE.fullmatch(first)
    if not m or not VERSION_TOKEN.fullmatch(m.group(1)):
        return '', ''
    version = m.group(1)
    return version, version.split('+', 1)[0]


def _empty(service, hostname, platform=_platform.K3S):
    node = hostname.strip().lower()
    return {
        'changed': False, 'installed': False, 'platform': platform.name, 'init': '', 'service': services.short_name(service),
        'manifest_path': '', 'data_dir': '', 'scheduler_kubeconfig': '', 'admin_kubeconfig': '', 'kubectl': [],
        'unit_path': '', 'dropins': [], 'unit_writable': False, 'node_role': '', 'argv': [], 'k3s_args': [],
        'config_file': '', 'config_files': [], 'config_dir_writable': False, 'scheduler_args': [],
        'scheduler_config': '', 'scheduler_config_source': '', 'scheduler_ca_file': '', 'version': '',
        'kubernetes_version': '',
        'active': False, 'main_pid': 0, 'enabled': False, 'node_name': node, 'started_at': '', 'pending': [], 'pending_msg': '',
        'missing_token_files': [], 'cluster_id': '',
        'platform_record': platform.facts(service=services.short_name(service), node=node),
    }


def _running(view, init):
    """(active, main_pid, enabled) of the service: enabled as systemd's UnitFileState says (C(enabled), what
    systemctl enable makes), or OpenRC's default runlevel holding it (what rc-update add makes)."""
    if init.kind == 'systemd':
        props = services.systemctl_show(view, init.service, 'ActiveState', 'MainPID', 'UnitFileState')
        try:
            pid = int(props.get('MainPID') or 0)
        except ValueError:
            pid = 0
        return props.get('ActiveState') == 'active', pid, props.get('UnitFileState') == 'enabled'
    rc, dummy, dummy2 = view.run(['rc-service', init.service, 'status'])
    enabled = view.exists(OPENRC_RUNLEVEL + services.short_name(init.service))
    return rc == 0, services.main_pid(view, init) or 0, enabled


def node_record(view, platform, data_dir='', binary='', service='', node='', **detected):
    """The record of ``platform`` as it applies on this node: templates filled in, ``detected`` values (an admin
    kubeconfig a flag names...) over the defaults, kubectl found (k3s's is a subcommand of its binary, RKE2's a
    file in its data dir, kubeadm's on the node's PATH, else where its packages put it)."""
    record = platform.facts(data_dir=data_dir, binary=binary, service=service, node=node)
    if platform.kubectl_on_path:
        record['kubectl'] = [view.which('kubectl') or record['kubectl'][0]] + record['kubectl'][1:]
    record.update(data_dir=data_dir, **detected)
    return record


def _last_flag(args, *names):
    values = k3s_config.flag_values(args, *names)
    return values[-1] if values else ''


def has_scheduler_cert(kube_version):
    """False when ``kube_version`` (v1.31.4) is a k3s release older than the scheduler's serving certificate; True
    for later ones and for a version that cannot be read (the certificate file decides then)."""
    m = _KUBE_VERSION_RE.match(kube_version or '')
    if not m:
        return True
    major, minor, patch = (int(g) for g in m.groups())
    if major != 1 or minor > max(SCHEDULER_CERT_SINCE):
        return major >= 1
    return minor in SCHEDULER_CERT_SINCE and patch >= SCHEDULER_CERT_SINCE[minor]


def _scheduler_arg(scheduler_args, name):
    """The last value a ``--kube-scheduler-arg`` gives ``name`` (k3s strips leading dashes), or None."""
    value = None
    for arg in scheduler_args:
        key, sep, rest = arg.partition('=')
        if sep and key.lstrip('-').rstrip('+-') == name:
            value = rest
    return value


def scheduler_ca_file(view, record, kube_version, scheduler_args):
    """The CA that signs the certificate the scheduler serves on :10259, when the node shows it; '' otherwise.

    ``record``: the node's platform record (``node_record``). Its ``scheduler_ca`` when the platform issued its
    ``scheduler_cert`` (``server/tls/kube-scheduler/kube-scheduler.crt``) and passes it to the scheduler: k3s (a
    scheduler in its process) in the releases that do, unless a ``--kube-scheduler-arg`` names another one; RKE2 (a
    static pod it writes at every start) when its scheduler's manifest passes that certificate.
    """
    cert, ca = record['scheduler_cert'], record['scheduler_ca']
    if not (cert and ca and view.isfile(cert) and view.isfile(ca)):
        return ''
    if record['scheduler_manifest']:
        data = view.read(record['scheduler_manifest'])
        try:
            pod = goyaml.load_json(data, strict=True) if data is not None else None
        except goyaml.GoYamlError:
            return ''
        container = _scheduler_container(pod) if isinstance(pod, dict) else None
        if container is None:
            return ''
        argv = _container_argv(container)
        return ca if pflag.last_value(argv[1:], 'tls-cert-file') == cert else ''
    given = _scheduler_arg(scheduler_args, 'tls-cert-file')
    if given not in (None, cert) or not has_scheduler_cert(kube_version):
        return ''
    return ca


def gather_service(view, service, found=None):
    """(facts, warnings) for a k3s or RKE2 ``service``; a ServiceError for what k3s or systemd would refuse too.

    The secret values of the command line, the environment and the config files go into ``found``;
    ``argv`` and ``k3s_args`` show them as ``(hidden)``.
    """
    found = set() if found is None else found
    hostname = view.hostname()
    result = _empty(service, hostname)
    warnings = []
    try:
        init = services.read_init(view, service)
    except services.ServiceNotFound as e:
        result['msg'] = e.msg
        return result, warnings
    argv = k3s_config_expand(init)
    in_argv = secrets.argv_secrets(init.raw_argv(True)) + secrets.argv_secrets(argv)
    secrets.add(found, in_argv + secrets.env_secrets(init.env))
    role = next((a for a in argv[1:] if a in k3s_config.SUBCOMMANDS), '')
    if not role:
        raise services.ServiceError(
            '%s starts %s without a "server" or "agent" subcommand, so k3s would not run. '
            'Fix the command line (the installer writes "k3s server" or "k3s agent") and run again.'
            % (init.exec_path, ' '.join(secrets.hide_argv(argv))))
    config_file = k3s_config.find_config_file(argv, init.env)
    files = services.config_files(view, config_file)
    docs = services.config_documents(view, files, warnings=warnings)
    secrets.add(found, secrets.documents_secrets(docs))
    k3s_args = k3s_config.insert_flags(argv, k3s_config.to_flags(k3s_config.merge(docs)))
    effective, sched_config, sched_source = _scheduler_flags(docs, argv, init.exec_path, warnings)
    node_name, record = _service_record(view, init, k3s_args, hostname)

    version, kube_version = binary_version(view, argv[0], warnings)
    active, pid, enabled = _running(view, init)
    scheduler_args = [v for v, dummy in effective]
    # what the running process does not use yet (a run that wrote it and stopped before the restart)
    stale = _pending.pending(view, pid, _pending.read_at_start(view, init, files, k3s_args, record), argv[0])
    tokens = _pending.token_files(k3s_args, init.env, record)

    result.update({
        'installed': True, 'platform': record['name'], 'init': init.kind, 'service': services.short_name(init.service),
        'unit_path': init.path, 'platform_record': record, 'data_dir': record['data_dir'],
        'scheduler_kubeconfig': record['scheduler_kubeconfig'],
        'admin_kubeconfig': record['admin_kubeconfig'], 'kubectl': record['kubectl'],
        'dropins': list(init.dropin_paths), 'unit_writable': view.writable(init.path),
        'node_role': role, 'argv': secrets.hide_argv(argv), 'k3s_args': secrets.hide_argv(k3s_args),
        'config_file': config_file, 'config_files': files,
        'config_dir_writable': view.writable(os.path.join(config_file + '.d', 'x.yaml')),
        'scheduler_args': scheduler_args,
        'scheduler_config': sched_config, 'scheduler_config_source': sched_source,
        'scheduler_ca_file': scheduler_ca_file(view, record, kube_version, scheduler_args) if role == 'server' else '',
        'version': version, 'kubernetes_version': kube_version,
        'active': bool(active), 'main_pid': int(pid or 0), 'enabled': bool(enabled), 'node_name': node_name,
        'started_at': stale['started_at'], 'pending': stale['pending'],
        'pending_msg': _pending.describe(services.short_name(init.service), int(pid or 0), stale['started_at'],
                                         stale['pending']),
        'missing_token_files': [t for t in tokens if not view.exists(t)],
    })
    return result, warnings


def binary_version(view, binary, warnings):
    """(version, kubernetes_version) of ``<binary> --version``, bounded in time; ('', '') with a warning when it hangs
    or prints no exact version."""
    try:
        rc, out, dummy = view.run([binary, '--version'], timeout=VERSION_TIMEOUT)
    except RunTimeout as e:
        warnings.append('%s The version is reported as unknown.' % e.msg)
        return '', ''
    if rc != 0:
        return '', ''
    found = parse_version(out)
    if not found[0] and (out or '').strip():
        warnings.append('"%s --version" printed no version as k3s prints it ("k3s version v1.31.4+k3s1 (...)"): %s. The '
                        'version is reported as unknown.' % (_terminal.escape(binary), _terminal.cut(
                            _terminal.one_line((out or '').strip().split('\n', 1)[0]), 100)))
    return found


def _scheduler_flags(docs, argv, exec_path, warnings):
    """(effective [(value, source)], scheduler config, its source) of the scheduler flag; a warning when the command
    line and the config files both give it."""
    effective = k3s_config.effective_sources(docs, argv[1:], exec_path, SCHEDULER_FLAG)
    from_files = k3s_config.flag_sources(docs, SCHEDULER_FLAG)
    if k3s_config.flag_values(argv[1:], SCHEDULER_FLAG) and from_files:
        warnings.append('the command line in %s passes --%s and the config files (%s) do too. Reported as the k3s '
                        'docs describe it: the command line replaces the files\' list (k3s\'s code comment says it '
                        'adds to it). Keep scheduler args in one place.'
                        % (exec_path, SCHEDULER_FLAG, ', '.join(sorted(set(p for dummy, p in from_files)))))
    sched_config, sched_source = '', ''
    for value, source in effective:
        path = k3s_config.scheduler_config_of(value)
        if path is not None:
            sched_config, sched_source = path, source
    return effective, sched_config, sched_source


def _service_record(view, init, k3s_args, hostname):
    """(node name, the node's platform record) of the service's binary: its flags, then its variables, then
    the record's defaults (k3s's order: --data-dir, then K3S_DATA_DIR, then the default)."""
    binary = k3s_args[0]
    platform = _platform.for_binary(binary)
    env = init.env
    prefix = platform.env_prefix
    names = k3s_config.flag_values(k3s_args[1:], 'node-name')
    node_name = (names[-1] if names else (env.get(prefix + 'NODE_NAME') or hostname)).strip().lower()
    data_dir = _last_flag(k3s_args[1:], 'data-dir', 'd') or env.get(prefix + 'DATA_DIR') or platform.data_dir
    admin = _last_flag(k3s_args[1:], 'write-kubeconfig', 'o') or env.get(prefix + 'KUBECONFIG_OUTPUT') \
        or platform.admin_kubeconfig
    record = node_record(view, platform, data_dir=data_dir, binary=binary, service=services.short_name(init.service),
                         node=node_name, admin_kubeconfig=admin)
    return node_name, record


def k3s_config_expand(init):
    """The command line the service runs, with its environment's variables expanded."""
    return expand_argv(init.raw_argv(True), init.env)


def _scheduler_container(pod):
    containers = ((pod or {}).get('spec') or {}).get('containers') or []
    named = [c for c in containers if isinstance(c, dict) and c.get('name') == 'kube-scheduler']
    return (named or [c for c in containers if isinstance(c, dict)] or [None])[0]


def _container_argv(container):
    """What the container runs: its ``command``, then its ``args`` (both reach the process)."""
    return [str(a) for a in _as_list(container.get('command')) + _as_list(container.get('args'))]


def _as_list(value):
    return value if isinstance(value, list) else []


def image_version(image):
    """(version, kubernetes_version) from an image reference such as registry.k8s.io/kube-scheduler:v1.36.3."""
    ref = (image or '').split('@', 1)[0]
    tag = ref.rsplit(':', 1)[1] if ':' in ref.rsplit('/', 1)[-1] else ''
    if not VERSION_TOKEN.fullmatch(tag):
        return '', ''
    return tag, tag.split('+', 1)[0]


def gather_static_pod(view, manifest_path, platform=_platform.KUBEADM, service=None):
    """The facts of a node whose scheduler is a static pod of the kubelet's (kubeadm): the scheduler's manifest, and
    the kubelet that runs it."""
    service = service or platform.server_service
    result = _empty(service, view.hostname(), platform)
    node = result['node_name']
    result['manifest_path'] = manifest_path
    try:
        init = services.read_init(view, service)
    except services.ServiceNotFound:
        init = None
    kind, unit = (init.kind, init.path) if init else ('', '')
    data = view.read(manifest_path)
    if data is None:
        if init and view.exists(KUBEADM_KUBELET_CONF):
            record = node_record(view, platform, service=service, node=node, scheduler_manifest=manifest_path)
            result.update({'installed': True, 'init': kind, 'unit_path': unit, 'node_role': 'agent',
                           'kubectl': record['kubectl'], 'platform_record': record})
            result['active'], result['main_pid'], result['enabled'] = _running(view, init)
        else:
            result['msg'] = ('no kube-scheduler static pod manifest at %s and no kubeadm worker (%s service with %s)'
                             % (manifest_path, service, KUBEADM_KUBELET_CONF))
        return result
    try:
        pod = goyaml.load_json(data, strict=True, name=manifest_path)
    except goyaml.GoYamlError as e:
        raise services.ServiceError('%s; the kubelet cannot run it either. Fix it and run again.' % e) from e
    container = _scheduler_container(pod) if isinstance(pod, dict) else None
    if container is None or not isinstance(container.get('command') or [], list):
        raise services.ServiceError('%s is not a static pod with a kube-scheduler container; give manifest_path '
                                    'the kube-scheduler manifest kubeadm wrote.' % manifest_path)
    argv = _container_argv(container)
    sched_args = argv[1:]
    config = pflag.last_value(sched_args, 'config')
    version, kube_version = image_version(container.get('image'))
    # the manifest's --kubeconfig is the scheduler's kubeconfig (empty when it names none)
    record = node_record(view, platform, service=service, node=node, scheduler_manifest=manifest_path,
                         scheduler_kubeconfig=pflag.last_value(sched_args, 'kubeconfig'))
    result.update({
        'installed': True, 'init': kind or 'systemd', 'unit_path': unit, 'node_role': 'server', 'argv': argv,
        'k3s_args': argv, 'scheduler_args': sched_args, 'scheduler_config': config,
        'scheduler_config_source': manifest_path if config else '',
        'scheduler_kubeconfig': record['scheduler_kubeconfig'], 'admin_kubeconfig': record['admin_kubeconfig'],
        'kubectl': record['kubectl'], 'platform_record': record,
        'version': version, 'kubernetes_version': kube_version,
    })
    if init:
        result['active'], result['main_pid'], result['enabled'] = _running(view, init)
    return result


# The scratch directories the collection's runs make: an upgrade's beside the binary (a whole new binary in each), a
# download's in the node's temporary directory. A run removes its own at its end; one that was killed leaves them.
SCRATCH_PREFIXES = ('.baremetal-k3s-upgrade.', 'baremetal-k3s-fetch.')


def scratch_left(view, dirs, warnings):
    """[{path, uid}] of the scratch directories (``SCRATCH_PREFIXES``) directly in each of ``dirs``, in their order and
    by name: real directories only (a symbolic link of such a name is not one), with their owner's uid, for the caller
    to remove root's. A directory of ``dirs`` that is missing lists nothing; one that cannot be listed, a warning."""
    found = []
    for where in dirs:
        if not os.path.isabs(where):
            raise PlanError('scratch_dirs: %s is not an absolute path; give the directories to look in as absolute paths '
                            '(the binary\'s directory, the node\'s temporary directory).' % _terminal.escape(where))
        try:
            names = view.listdir(where) or []
        except ViewError as e:
            warnings.append('%s; the scratch directories a killed run left there are not listed.' % e)
            continue
        for name in names:
            path = os.path.join(where, name)
            if not name.startswith(SCRATCH_PREFIXES) or view.islink(path) or not view.isdir(path):
                continue
            st = view.stat(path)
            if st is not None:
                found.append({'path': path, 'uid': st.st_uid})
    return found


def file_facts(view, paths, warnings):
    """[{path, exists, sha256, mode, uid, gid}] of each of ``paths`` as it is (a symbolic link is not followed, as
    Ansible's stat does not): the sha256 of a regular file read in blocks, '' for anything else (a link, a directory, a
    FIFO: never waited on) and for a file that cannot be read (with a warning); ``mode`` the permission bits in four
    octal digits ('' when it does not exist), owner and group -1 when it does not exist."""
    out = []
    for path in paths:
        if not os.path.isabs(path):
            raise PlanError('sha256_files: %s is not an absolute path; give the files to read as absolute paths.'
                            % _terminal.escape(path))
        st = view.lstat(path)
        if st is None:
            out.append({'path': path, 'exists': False, 'sha256': '', 'mode': '', 'uid': -1, 'gid': -1})
            continue
        digest = ''
        if stat.S_ISREG(st.st_mode):
            try:
                digest = _binary.file_sha256(view, path)
            except PlanError as e:
                warnings.append('%s: its sha256 is not read (%s)' % (path, e.msg))
        out.append({'path': path, 'exists': True, 'sha256': digest, 'mode': '%04o' % stat.S_IMODE(st.st_mode),
                    'uid': st.st_uid, 'gid': st.st_gid})
    return out


# The options of baremetal.k3s.k3s_info, kept here so that k3s_preflight's ``read`` takes and checks the same ones.
ARGUMENT_SPEC = dict(
    platform=dict(type='str', default='auto', choices=['auto'] + _platform.names()),
    service=dict(type='str'),
    manifest_path=dict(type='path'),
    scratch_dirs=dict(type='list', elements='path', default=[]),
    sha256_files=dict(type='list', elements='path', default=[]),
)


def read_options(module, validator, name='read'):
    """The option ``name`` of another module that reads the node as this one does (k3s_preflight's and
    scheduler_files' ``read``), checked against this module's argument spec with its defaults filled in; None when
    not given. Bad options fail the module, named as ``read: ...``. ``validator``: Ansible's ArgumentSpecValidator,
    given by the module (the module_utils here import nothing of Ansible)."""
    given = module.params[name]
    if given is None:
        return None
    checked = validator(ARGUMENT_SPEC).validate(given)
    if checked.error_messages:
        module.fail_json(msg='%s: %s' % (name, '; '.join(('unsupported parameters %s' if type(e).__name__ == 'UnsupportedError'
                                                          else '%s') % e.msg for e in checked.errors)))
    return checked.validated_parameters


def gather(view, params, found=None):
    """The Plan (no changes; facts = the module's result) for ``params`` (platform, service, manifest_path,
    scratch_dirs, sha256_files).

    ``found`` (a set: the module passes its ``no_log_values``) receives the secret values read.
    """
    found = set() if found is None else found
    try:
        facts, warnings = _gather(view, params, found)
        facts['scratch_left'] = scratch_left(view, params.get('scratch_dirs') or [], warnings)
        facts['sha256_files'] = file_facts(view, params.get('sha256_files') or [], warnings)
        facts['cluster_id'] = cluster_id(view, facts['admin_kubeconfig']) if facts.get('node_role') == 'server' else ''
    except PlanError as e:
        e.msg = secrets.hide_message(e.msg, found)
        e.args = (e.msg,)
        raise
    return Plan(facts=facts, warnings=[secrets.hide_message(w, found) for w in warnings])


def read_node(view, read, found=None):
    """``(node, warnings)``: the node as ``baremetal.k3s.k3s_info`` returns it for its options ``read`` (its result,
    ``changed`` false), for a module that reads the node first in its own run (scheduler_files, k3s_preflight)."""
    got = gather(view, read, found)
    return dict(got.facts, changed=False), got.warnings


def cluster_id(view, kubeconfig):
    """Which cluster this server serves: the sha256 of the CA its administrator's kubeconfig trusts (the first
    cluster's ``certificate-authority-data``), the same on every server of one cluster and different between clusters
    (each makes its own CA); '' when there is no such kubeconfig, it cannot be read, or it names no CA by data. Only
    that field is read out of the file, which also holds the administrator's key."""
    try:
        data = view.read(kubeconfig) if kubeconfig else None
    except (OSError, ValueError, ViewError):
        return ''
    if not data:
        return ''
    found = re.search(rb'^\s*certificate-authority-data:\s*["\']?([A-Za-z0-9+/=]+)["\']?\s*$', data, re.M)
    return hashlib.sha256(found.group(1)).hexdigest() if found else ''


def _gather(view, params, found):
    """The platform's record is chosen here, once: from the binary the service starts (``gather_service``), or
    from the first platform found (``platform: auto``, in the order of ``_platform.PLATFORMS``)."""
    platform, service = params.get('platform') or 'auto', params.get('service')
    wanted = list(_platform.PLATFORMS.values()) if platform == 'auto' else [_platform.get(platform)]
    if service:
        services.check_service_name(service)
        if wanted[0].scheduler_flag == 'static_pod' and platform != 'auto':
            return gather_static_pod(view, params.get('manifest_path') or wanted[0].scheduler_manifest, wanted[0],
                                     service), []
        result, warnings = gather_service(view, service, found)
        if result['installed'] and platform not in ('auto', result['platform']):
            raise services.ServiceError('service %s runs %s (%s), not %s; set platform to %s or auto.'
                                        % (service, result['platform'], result['argv'][0], platform, result['platform']))
        return result, warnings
    looked = []
    for candidate in wanted:
        if candidate.scheduler_flag == 'static_pod':
            result = gather_static_pod(view, params.get('manifest_path') or candidate.scheduler_manifest, candidate)
            if result['installed'] or platform != 'auto':
                return result, []
            looked.append(result['msg'])
            continue
        for name in candidate.services:
            try:
                services.find(view, name)
            except services.ServiceNotFound as e:
                looked.append(e.msg.split(' Install', maxsplit=1)[0])
                continue
            return gather_service(view, name, found)
    first = wanted[0]
    result = _empty(first.server_service, view.hostname(), first)
    result['msg'] = 'found no %s on this node: %s' % (
        _platform.titles() + ' control plane' if platform == 'auto' else platform, '; '.join(looked))
    return result, []
