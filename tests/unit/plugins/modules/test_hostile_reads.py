# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Hostile inputs on the read side, one table per family, over every module the family concerns.

What the modules read from a node (a unit's ExecStart, what a program prints or whether it ends, a
config directory's links, an API server's answer, a running k3s's command line, a manifest's flags)
and what they print from it (tables, warnings, messages). Each case runs the module's real
``main()`` against the fake node.

Families: what runs, read as systemd and the binary read it; readiness from the real API server
only; the extender as the scheduler reaches it (test__extender_redirects.py); terminal-safe
output (and test__terminal.py); URLs that cannot be parsed; flags as kube-scheduler reads them (and
test__pflag.py); k3s as it really runs.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import threading
import time

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_info
from ansible_collections.baremetal.k3s.plugins.module_utils import _killall
from ansible_collections.baremetal.k3s.plugins.module_utils import _lease
from ansible_collections.baremetal.k3s.plugins.module_utils import _ready
from ansible_collections.baremetal.k3s.plugins.module_utils import _restore
from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal
from ansible_collections.baremetal.k3s.plugins.module_utils import _view
from ansible_collections.baremetal.k3s.plugins.modules import (
    client_certificate,
    extender_status,
    k3s_binary,
    k3s_config_file,
    k3s_info,
    k3s_killall,
    k3s_ready,
    k3s_service_arg,
    node_lease,
    readiness_configmap,
    scheduler_config,
    static_pod_arg,
)
from ansible_collections.baremetal.k3s.plugins.plugin_utils import _plan_table
from ansible_collections.baremetal.k3s.plugins.plugin_utils import _status_table

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import (
    SCHEDULER_KUBECONFIG,
    module_fail,
    module_ok,
    run_module,
)

import installer  # pylint: disable=import-error

K3S = '/usr/local/bin/k3s'
RKE2 = '/usr/local/bin/rke2'
KUBECTL = [K3S, 'kubectl']
UNIT = '/etc/systemd/system/k3s.service'
DROPINS = '/etc/rancher/k3s/config.yaml.d'
MANIFEST = '/etc/kubernetes/manifests/kube-scheduler.yaml'
SCHED_CONFIG = '/etc/kubernetes/scheduler/config.yaml'
VERSION_OUT = 'k3s version v1.31.4+k3s1 (a4f8e7a1)\ngo version go1.22.9\n'
BOUND = 0.4  # seconds every program may take in these tests (the collection's bound, shortened)


def unit_with(exec_start):
    """The installer's k3s unit with its ExecStart replaced by ``exec_start`` (one line)."""
    files = installer.generate('server', [], name='', init='systemd', systemd_dir='/etc/systemd/system',
                               bin_dir='/usr/local/bin')
    text = files[0].content
    text = text.decode() if isinstance(text, bytes) else text
    head = text.split('ExecStart=', 1)[0]
    return files, head + 'ExecStart=' + exec_start + '\n'


def version_of(node, path=K3S, output=VERSION_OUT):
    node.commands[path] = lambda argv: (0, output, '') if argv[1:] == ['--version'] else (1, '', 'unexpected')


def printable(text):
    """No character of ``text`` may reach a terminal as a control: every one is printable (or a line break)."""
    return all(c == '\n' or not _terminal.unprintable(c) for c in text)


# -- family: what runs, read as systemd and the binary read it --------------------------------------------------
# ExecStart as systemd 252 reads it: the prefixes "-", "@", ":", "+", "!", "!!" (each once, one of "+", "!", "!!")
# come off the path; with "@" the second word is argv[0] only, never the program.
EXEC_STARTS = [
    ('@/usr/local/bin/k3s k3s-main server', K3S, 'k3s'),
    ('@/usr/local/bin/k3s k3s server', K3S, 'k3s'),
    ('-/usr/local/bin/k3s server', K3S, 'k3s'),
    (':/usr/local/bin/k3s server', K3S, 'k3s'),
    ('+/usr/local/bin/k3s server', K3S, 'k3s'),
    ('!/usr/local/bin/k3s server', K3S, 'k3s'),
    ('!!/usr/local/bin/k3s server', K3S, 'k3s'),
    ('-@/usr/local/bin/k3s k3s-main server', K3S, 'k3s'),
    ('@-:+/usr/local/bin/k3s /opt/other server', K3S, 'k3s'),
    (':!!@-/usr/local/bin/k3s rke2 server', K3S, 'k3s'),
    ('@/usr/local/bin/rke2 k3s server', RKE2, 'rke2'),
]


@pytest.mark.parametrize('exec_start, program, platform', EXEC_STARTS)
def test_family_what_runs_the_program_is_the_path_after_the_prefixes(node, exec_start, program, platform):
    files, text = unit_with(exec_start)
    node.install_files(files)
    node.write(UNIT, text)
    version_of(node, program, VERSION_OUT.replace('k3s version', '%s version' % platform))
    r = module_ok(k3s_info, {'platform': 'auto', 'service': 'k3s'})
    assert r['platform'] == platform and r['argv'][:2] == [program, 'server'] and r['node_role'] == 'server'
    if platform == 'k3s':
        assert r['kubectl'] == [program, 'kubectl']  # k3s's kubectl is a subcommand of the program that runs
    assert r['version'] == 'v1.31.4+k3s1'
    assert [c for c in node.calls if c[-1:] == ['--version']] == [[program, '--version']]


def test_family_what_runs_k3s_service_arg_and_restore_read_the_program_too(node):
    files, text = unit_with('@/usr/local/bin/k3s rke2-looking-name server')
    node.install_files(files)
    node.write(UNIT, text)
    r = module_ok(k3s_service_arg, {'arg': '--kube-scheduler-arg=v=2'}, check_mode=True)
    assert r['args'][:2] == [K3S, 'server']
    found = set()
    command = _restore.service_command(_view.View(root=node.root, hostname='n1'), 'k3s', found)
    assert command['product'] == 'K3S' and command['argv'][0] == K3S


@pytest.fixture(name='release')
def fixture_release():
    """Programs that hang wait on this event; it is set when the test ends, so no thread outlives it long."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture(name='bounded')
def fixture_bounded(monkeypatch):
    """Every bound of the collection shortened to BOUND seconds (the default and the callers' own)."""
    monkeypatch.setattr(_view, 'RUN_TIMEOUT', BOUND)
    monkeypatch.setattr(_view, 'TERM_GRACE', 0.2)
    monkeypatch.setattr(_k3s_info, 'VERSION_TIMEOUT', BOUND)
    monkeypatch.setattr(_ready, 'RUN_MARGIN', BOUND - 1)  # kubectl's 1 s request timeout + margin = BOUND


def hangs(release, answer=(0, '', '')):
    def program(argv, stdin=None):  # pylint: disable=unused-argument
        release.wait(60)
        return answer
    return program


def test_family_what_runs_a_version_that_never_returns_is_stopped(node, bounded, release):
    node.install('server')
    node.commands[K3S] = hangs(release, (0, VERSION_OUT, ''))
    start = time.monotonic()
    r = module_ok(k3s_info, {})
    assert time.monotonic() - start < 10
    assert r['installed'] and r['version'] == '' and r['kubernetes_version'] == ''
    assert any('"/usr/local/bin/k3s --version" did not finish within %s s' % BOUND in w for w in r['warnings'])


def test_family_what_runs_a_real_program_that_hangs_is_killed(node, bounded):
    """The node's own runner stops the program (and what it started), not only the wait for it."""
    node.install('server')
    node.run_programs()
    node.makedirs('/tmp')
    marker = node.p('/tmp/still-running')
    node.write(K3S, '#!/bin/sh\nsleep 30 &\necho $! > %s\nwait\n' % marker, 0o755)
    start = time.monotonic()
    r = module_ok(k3s_info, {})
    assert time.monotonic() - start < 10
    assert r['version'] == '' and any('did not finish within' in w for w in r['warnings'])
    child = int(open(marker).read())
    for dummy in range(50):
        if not os.path.exists('/proc/%d' % child) or open('/proc/%d/stat' % child).read().split()[2] == 'Z':
            break
        time.sleep(0.1)
    else:
        raise AssertionError('the program\'s child %d still runs' % child)


def _binary(node):
    node.makedirs('/var/tmp')
    node.write('/var/tmp/k3s-new', b'new', 0o755)
    return {'path': K3S, 'src': '/var/tmp/k3s-new', 'sha256': hashlib.sha256(b'new').hexdigest()}


# (module, its options, the fake node's set-up, the command that hangs, whether the module fails or reports)
HANGING = [
    (k3s_binary, _binary, '/var/tmp/k3s-new', 'fails'),
    (k3s_ready, lambda node: {'kubectl': KUBECTL, 'node_name': 'n1', 'timeout': 0, 'fail_on_timeout': False},
     K3S, 'reports'),
    (k3s_killall, lambda node: {'iptables': True}, 'iptables-save', 'fails'),
    (readiness_configmap, lambda node: {'kubectl': KUBECTL, 'node_name': 'n1', 'kube_scheduler': 'k3s@n1'},
     K3S, 'fails'),
    (client_certificate, lambda node: {'kubectl': KUBECTL, 'name': 'alice'}, K3S, 'fails'),
    (k3s_service_arg, lambda node: {'arg': '--kube-scheduler-arg=v=2'}, 'systemctl', 'fails'),
    (extender_status, lambda node: {'url': 'http://127.0.0.1:9', 'init': 'systemd'}, 'systemctl', 'fails'),
]


@pytest.mark.parametrize('module, options, program, outcome', HANGING,
                         ids=[m.__name__.rsplit('.', 1)[-1] for m, dummy, dummy2, dummy3 in HANGING])
def test_family_what_runs_every_program_a_module_runs_is_bounded(node, bounded, release, module, options,
                                                                 program, outcome):
    node.install('server')
    node.write(K3S, '#!/bin/sh\n', 0o755)
    node.makedirs('/run/systemd/system')
    node.path_bins.update({'iptables-save': '/usr/sbin/iptables-save', 'iptables-restore': '/usr/sbin/iptables-restore'})
    params = options(node)
    if program == 'systemctl':
        node.units = None  # systemctl is answered by commands, here the one that hangs
    node.commands[program] = hangs(release)
    node.path_bins.setdefault('systemctl', '/usr/bin/systemctl')
    start = time.monotonic()
    failed, result = run_module(module, params)
    assert time.monotonic() - start < 20, 'the module waited on a program that hangs'
    said = result['msg']
    if outcome == 'fails':
        assert failed, result
        assert 'did not finish within %s s' % BOUND in said and 'was stopped' in said, said
    else:
        assert not failed and result['ready'] is False and 'did not finish within' in said, result


# What "<binary> --version" prints: only an exact "k3s version <version> (<commit>)" first line gives a version.
VERSIONS = [
    ('k3s version v1.31.4+k3s1 (a4f8e7a1)\ngo version go1.22.9\n', 'v1.31.4+k3s1'),
    ('k3s version v1.32.0-rc2+k3s1 (x)\r\n', 'v1.32.0-rc2+k3s1'),
    ('\nk3s version v1.31.4+k3s1\n', 'v1.31.4+k3s1'),
    ('k3s version v1.31.4+k3s1\x1b[0m (a4f8e7a1)\n', ''),
    ('\x1b[31mk3s version v1.31.4+k3s1 (a4f8e7a1)\n', ''),
    ('k3s version v1.31.4+k3s1\x07 (a4f8e7a1)\n', ''),
    ('k3s version v1.31.4+k3s1 (a4f8e7a1)\x1b]0;owned\x07\n', ''),
    ('k3s version v1.31.4+k3s1\x00garbage (a4f8e7a1)\n', ''),
    ('k3s version v1.31.4+k3s1\udc80 (a4f8e7a1)\n', ''),
    ('k3s version v1.31.4+k3s1junk;rm (a4f8e7a1)\n', ''),
    ('k3s version  v1.31.4+k3s1 (a4f8e7a1)\n', ''),
    ('k3s version v1.31 (a4f8e7a1)\n', ''),
    ('WARNING: something\nk3s version v1.31.4+k3s1 (a4f8e7a1)\n', ''),
    ('', ''),
]


@pytest.mark.parametrize('output, version', VERSIONS)
def test_family_what_runs_version_output_is_parsed_exactly(node, output, version):
    node.install('server')
    version_of(node, output=output)
    r = module_ok(k3s_info, {})
    assert (r['version'], r['kubernetes_version']) == (version, version.split('+')[0] if version else '')
    if not version and output.strip():
        assert any('printed no version as k3s prints it' in w for w in r['warnings'])
        assert all(printable(w) for w in r['warnings'])


@pytest.mark.parametrize('image, version', [
    ('registry.k8s.io/kube-scheduler:v1.33.13', 'v1.33.13'),
    ('"registry.k8s.io/kube-scheduler:v1.33.13\\e[0m"', ''),
    ('"registry.k8s.io/kube-scheduler:v1.33.13\\a"', ''),
    ('registry.k8s.io/kube-scheduler:v1.33.13-x;y', ''),
])
def test_family_what_runs_an_image_tag_is_a_version_only_whole(node, image, version):
    node.install_files(installer.kubelet_files())
    node.write(MANIFEST, 'apiVersion: v1\nkind: Pod\nmetadata: {name: kube-scheduler}\nspec:\n  containers:\n'
                         '  - name: kube-scheduler\n    image: %s\n    command: [kube-scheduler]\n' % image)
    r = module_ok(k3s_info, {'platform': 'kubeadm'})
    assert r['version'] == version


@pytest.mark.parametrize('target, why', [
    ('/nonexistent/50-cluster.yaml', 'which does not exist'),
    ('../config.yaml.d-gone/x.yaml', 'which does not exist'),
    ('/etc/rancher', 'is a symbolic link to the directory /etc/rancher'),
])
def test_family_what_runs_a_dangling_config_dropin_is_named(node, target, why):
    node.install('server')
    version_of(node)
    node.write(DROPINS + '/10-ok.yaml', 'node-label: [a=b]\n')
    node.symlink(target, DROPINS + '/50-cluster.yaml')
    before = node.tree()
    r = module_ok(k3s_info, {})
    warning = next(w for w in r['warnings'] if DROPINS + '/50-cluster.yaml' in w)
    assert why in warning and 'does not start' in warning
    assert r['config_files'][-1] == DROPINS + '/50-cluster.yaml'
    for module, params in ((k3s_service_arg, {'arg': '--kube-scheduler-arg=v=2', 'method': 'config'}),
                           (k3s_config_file, {'name': '60-x.yaml', 'values': {'node-label': ['c=d']}})):
        said = module_fail(module, params)
        assert DROPINS + '/50-cluster.yaml' in said and why in said, said
    assert node.tree() == before


def test_family_what_runs_a_dangling_config_yaml_dropin_with_a_control_character_is_escaped(node):
    node.install('server')
    version_of(node)
    node.symlink('/nowhere', DROPINS + '/50-\x1b[2J.yaml')
    r = module_ok(k3s_info, {})
    (warning,) = [w for w in r['warnings'] if '50-' in w]
    assert '50-\\x1b[2J.yaml' in warning and printable(warning)


# -- family: readiness from the real API server only -------------------------------------------------------------
def ready_node(conditions=True):
    return json.dumps({'kind': 'Node', 'metadata': {'name': 'n1'},
                       'status': {'conditions': [{'type': 'Ready', 'status': 'True' if conditions else 'False'}]}})


READYZ = [
    ((0, 'ok', ''), True, ''),
    ((0, 'ok\n', ''), True, ''),
    ((0, '<html><body>Welcome to the hotel network</body></html>', ''), False, 'not as the API server does'),
    ((0, '<!DOCTYPE html>\n<title>Proxy</title>\nok', ''), False, 'not as the API server does'),
    ((0, '', ''), False, 'an empty body'),
    ((0, 'okay', ''), False, "'okay'"),
    ((0, '{"kind":"Status","status":"Success"}', ''), False, 'not as the API server does'),
    ((0, '\x1b[2Jok', ''), False, '\\x1b[2Jok'),
    ((1, '', 'error: the server doesn\'t have a resource type "readyz"'), False, 'does not answer /readyz'),
    ((1, '[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed', ''), False, 'etcd failed'),
    ((None, '', ''), False, None),
]


@pytest.mark.parametrize('answer, ready, reason', READYZ)
def test_family_readiness_from_the_api_server_only(node, answer, ready, reason):
    node.write(K3S, '#!/bin/sh\n', 0o755)

    def kubectl(argv):
        if '/readyz' in argv:
            return answer
        return 0, ready_node(), ''
    node.commands[K3S] = kubectl
    if answer[0] is None:
        node.unlink(K3S)
        assert 'was not found' in module_fail(k3s_ready, {'kubectl': KUBECTL, 'node_name': 'n1', 'timeout': 0})
        return
    failed, r = run_module(k3s_ready, {'kubectl': KUBECTL, 'node_name': 'n1', 'timeout': 0, 'fail_on_timeout': False})
    assert not failed
    assert (r['ready'], r['api_ready']) == (ready, ready), r
    if reason:
        assert reason in r['msg'] and printable(r['msg']), r['msg']


@pytest.mark.parametrize('node_answer, reason', [
    ((0, '<html>login</html>', ''), 'printed no JSON'),
    ((0, json.dumps({'kind': 'Status', 'status': {'conditions': [{'type': 'Ready', 'status': 'True'}]}}), ''),
     'printed no Node'),
    ((0, json.dumps([{'kind': 'Node'}]), ''), 'printed no Node'),
    ((1, '', 'Error from server (NotFound): nodes "n1" not found'), 'not registered'),
])
def test_family_readiness_a_node_is_ready_only_as_the_api_server_reports_it(node, node_answer, reason):
    node.write(K3S, '#!/bin/sh\n', 0o755)
    node.commands[K3S] = lambda argv: (0, 'ok', '') if '/readyz' in argv else node_answer
    failed, r = run_module(k3s_ready, {'kubectl': KUBECTL, 'node_name': 'n1', 'timeout': 0, 'fail_on_timeout': False})
    assert not failed and r['ready'] is False and r['node_ready'] is False and reason in r['msg'], r


def test_family_readiness_a_kubectl_that_hangs_is_no_answer(node, bounded, release):
    node.write(K3S, '#!/bin/sh\n', 0o755)
    node.commands[K3S] = hangs(release, (0, 'ok', ''))
    failed, r = run_module(k3s_ready, {'kubectl': KUBECTL, 'node_name': 'n1', 'timeout': 0, 'fail_on_timeout': False})
    assert not failed and r['ready'] is False and r['api_ready'] is False
    assert 'kubectl did not finish within' in r['msg']


class _Health(http.server.BaseHTTPRequestHandler):
    body = b'ok'
    status = 200

    def do_GET(self):  # noqa: N802
        self.send_response(self.status)
        self.send_header('Content-Type', 'text/html')
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):  # pylint: disable=arguments-differ
        pass


@pytest.mark.parametrize('status, body, healthy', [
    (200, b'ok', True),
    (200, b'<html><body>Captive portal: ok</body></html>', False),
    (200, b'', False),
    (302, b'ok', False),
])
def test_family_readiness_the_scheduler_is_healthy_only_by_its_own_answer(status, body, healthy):
    from ansible_collections.baremetal.k3s.plugins.module_utils import _extender  # pylint: disable=import-outside-toplevel
    handler = type('Health', (_Health,), {'status': status, 'body': body})
    server = http.server.HTTPServer(('127.0.0.1', 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        ok, code, error = _extender.check_health('http://127.0.0.1:%d/healthz' % server.server_port, timeout=5)
    finally:
        server.shutdown()
        server.server_close()
    assert (ok, code) == (healthy, status)
    assert healthy or error.startswith('HTTP %d' % status)


# -- family: terminal-safe output ---------------------------------------------------------------------------------
HOSTILE_NAMES = ['clear\x1b[2J\x1b[H', 'bell\x07\x07', 'back\rspace', 'rtl\u202eevil', 'nul\x00byte', 'csi\x9b31m',
                 '东京-服务器-' * 8, 'ｆｕｌｌｗｉｄｔｈ-ｎｏｄｅ', 'e\u0301\u0301combining-' * 6, 'tab\there',
                 'newline\ninjected: not ready', 'undecodable\udc80\udcff']


def _columns(line):
    """Columns as a terminal counts them, the test's own count: East Asian wide/fullwidth 2, combining 0."""
    import unicodedata  # pylint: disable=import-outside-toplevel
    return sum(0 if unicodedata.combining(c) or unicodedata.category(c) in ('Mn', 'Me', 'Cf')
               else 2 if unicodedata.east_asian_width(c) in ('W', 'F') else 1 for c in line)


def _status_result(name, msg):
    info = {'installed': True, 'platform': 'k3s', 'node_name': name}
    status = {'node_name': name, 'ready': False, 'restarted': True, 'extender_reachable': False,
              'scheduler_started_at': '2026-01-13T10:00:03.000000Z', 'changed_at': '2026-01-13T10:00:01.000000Z',
              'msg': msg, 'kube_scheduler': 'k3s@' + name,
              'extenders': [{'name': name + '-a', 'url': 'http://x/' + name, 'answering': False, 'msg': msg},
                            {'name': 'b', 'url': 'http://y', 'answering': True, 'msg': ''}]}
    return info, status, [{'cause': 'flag', 'detail': msg}]


def test_family_terminal_safe_output_status_table():
    hosts = ['host-%d' % i for i in range(len(HOSTILE_NAMES))]
    results = {h: _status_result(n, 'not ready: extender said \x1b]0;pwned\x07 %s' % n)
               for h, n in zip(hosts, HOSTILE_NAMES)}
    nodes_yaml = 'nodes:\n' + ''.join('- node_name: %s\n  kube_scheduler: k\x1b[1m\n  restarted: true\n'
                                      % json.dumps(n) for n in HOSTILE_NAMES)
    readiness = _status_table.readiness_from_kubectl(
        {'rc': 0, 'stdout': json.dumps({'kind': 'ConfigMap', 'data': {'nodes.yaml': nodes_yaml}})}, 'extender-readiness',
        'default')
    lines = _status_table.render(_status_table.fleet(hosts, results, readiness))
    assert all(printable(line) and '\n' not in line for line in lines)
    assert max(_columns(line) for line in lines) <= 120
    # the rows line up in columns, wide names included: PLATFORM starts at the same column on every row
    header = lines[0]
    col = _columns(header[:header.index('PLATFORM')])
    for line in lines[1:1 + len(hosts)]:
        cells = line.split('  ')
        assert _columns(line[:line.index('  k3s  ')]) + 2 == col, line
        assert cells[0]
    assert any('\\x1b[2J' in line for line in lines) and any('\\x07' in line for line in lines)


def test_family_terminal_safe_output_plan_table():
    hosts = HOSTILE_NAMES[:]
    plans = {h: {'platform': 'k3s\x1b[5m', 'node_role': 'server', 'state': 'present', 'restart': True, 'noop': False,
                 'files': [{'path': '/etc/rancher/k3s/%s/config.yaml' % h, 'action': 'created'}],
                 'why': ['because %s said so, at some length to need more than one line of the WHY column' % h],
                 'error': ''} for h in hosts}
    plans[hosts[1]] = {'error': 'refused: %s \x1b[2J' % hosts[1]}
    data = _plan_table.fleet(hosts, plans)
    lines = _plan_table.render(data)
    assert all(printable(line) for line in lines)
    assert max(_columns(line) for line in lines) <= 120
    assert any('\\x1b[2J' in line for line in lines)
    # nothing of a reason is cut: every word is there once the WHY column is joined
    joined = ' '.join(lines)
    assert 'the WHY column' in joined or 'the WHY' in joined


def test_family_terminal_safe_output_warnings_and_messages(node, monkeypatch):
    """Warnings go out through one place that escapes them; killall's message quotes a process escaped."""
    node.install('server', args=['--kube-scheduler-arg=v=2'])
    version_of(node, output='k3s version \x1b[2J\x1b]0;pwned\x07\n')
    node.write(DROPINS + '/50-\x1b[2J\x07.yaml', 'kube-scheduler-arg: [v=4]\n')
    r = module_ok(k3s_info, {})
    assert len(r['warnings']) == 2 and all(printable(w) for w in r['warnings'])
    assert any('50-\\x1b[2J\\x07.yaml' in w for w in r['warnings'])
    node.process(4242, ['/usr/local/bin/k3s', 'server', '--node-label=\x1b[2Jx', '--token=s3cret'])
    monkeypatch.setattr(_killall, 'KILL', lambda pid, sig: None)
    said = module_fail(k3s_killall, {'iptables': False})
    assert printable(said) and 's3cret' not in said and '\\x1b[2J' in said


def test_family_terminal_safe_output_progress_line():
    from ansible_collections.baremetal.k3s.plugins.action import extender_status as action  # pylint: disable=import-outside-toplevel
    line = action.progress_line('host\x1b[2J', {'elapsed': 20, 'limit': 60, 'for': 'the extender\x07'},
                                'not ready: extender said\nline two\x1b]0;x\x07')
    assert printable(line) and '\n' not in line and line.startswith('host\\x1b[2J: waiting 20 s of 60 s')


# -- family: URLs that cannot be parsed ----------------------------------------------------------------------------
BAD_URLS = ['http://[::1', 'http://[::1]x:8889', 'http://[zz]:8889', 'http://[1.2.3.4]:8889', 'http://::1:8889',
            'http://[fd00::1%eth0:8889', 'http://[::1]]:8889', 'https://[fd00::1]:99999', 'http://[]:1',
            'http://host:port', 'http://[fe80::1]:-1']


@pytest.mark.parametrize('url', BAD_URLS)
def test_family_unparsable_urls_scheduler_config(node, url):
    node.write(SCHEDULER_KUBECONFIG, 'apiVersion: v1\nkind: Config\n')
    path = '/etc/rancher/k3s/kube-scheduler/config.yaml'
    said = module_fail(scheduler_config, {'path': path, 'kubeconfig': SCHEDULER_KUBECONFIG,
                                          'extender': {'url_prefix': url}})
    assert 'extender.url_prefix' in said and 'Traceback' not in said and repr(url) in said, said
    assert not node.exists(path)


@pytest.mark.parametrize('url', BAD_URLS)
@pytest.mark.parametrize('option', ['url', 'extenders', 'scheduler_health_url'])
def test_family_unparsable_urls_extender_status(node, url, option):
    node.makedirs('/run/systemd/system')
    node.path_bins['systemctl'] = '/usr/bin/systemctl'
    params = {'init': 'systemd', 'url': 'http://127.0.0.1:8889'}
    if option == 'extenders':
        params = {'init': 'systemd', 'extenders': [{'name': 'a', 'url': url}]}
    else:
        params[option] = url
    said = module_fail(extender_status, params)
    named = {'url': 'option url', 'extenders': 'extenders[0].url', 'scheduler_health_url': 'scheduler_health_url'}
    assert named[option] in said and 'Traceback' not in said, said


@pytest.mark.parametrize('watch', [
    {'base': None, 'identities': [], 'healthy_seen': False, 'exits': 'many', 'looks': 0},
    {'base': None, 'identities': 7, 'healthy_seen': False, 'exits': 0, 'looks': 0},
    {'base': None, 'identities': [], 'healthy_seen': False, 'exits': None, 'looks': 0},
])
def test_family_unparsable_input_resume_watch_names_the_option(node, watch):
    node.makedirs('/run/systemd/system')
    node.path_bins['systemctl'] = '/usr/bin/systemctl'
    said = module_fail(extender_status, {'init': 'systemd', 'url': 'http://127.0.0.1:9', 'wait': True,
                                         'resume': {'elapsed': 1, 'attempts': 1, 'watch': watch}})
    assert 'resume.watch' in said


@pytest.mark.parametrize('since', ['"yesterday"', 'null', 'Infinity', '[1]', 'true', '1e999'])
def test_family_unparsable_input_a_lease_file_that_cannot_be_read_counts_as_stale(node, since):
    node.write(_lease.lease_path('scheduler_extender'), '{"owner": "x", "holder": "h\\u001b[2J", "since": %s}' % since)
    r = module_ok(node_lease, {'name': 'scheduler_extender', 'timeout': 0})
    assert r['changed'] is True and any('took over the lease' in w for w in r['warnings'])
    assert all(printable(w) for w in r['warnings'])


# -- family: flags as kube-scheduler reads them ---------------------------------------------------------------------
def manifest(command=(), args=None):
    text = ('apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-scheduler\n  namespace: kube-system\nspec:\n'
            '  containers:\n  - name: kube-scheduler\n    image: registry.k8s.io/kube-scheduler:v1.33.13\n'
            '    command:\n    - kube-scheduler\n    - --kubeconfig=/etc/kubernetes/scheduler.conf\n')
    text += ''.join('    - %s\n' % json.dumps(c) for c in command)
    if args is not None:
        text += '    args:\n' + ''.join('    - %s\n' % json.dumps(a) for a in args)
    return text


# (command words, args words, the argument asked for, None: refused with a message naming this, else: left alone)
FLAGS = [
    ([], ['--config=/etc/other/config.yaml'], '--config=' + SCHED_CONFIG, 'args'),
    (['--config', '/etc/other/config.yaml'], None, '--config=' + SCHED_CONFIG, 'command'),
    ([], ['--config', '/etc/other/config.yaml'], '--config=' + SCHED_CONFIG, 'args'),
    (['-v=2'], None, '--v=4', '-v=2'),
    (['-v2'], None, '--v=4', '-v2'),
    (['-v', '2'], None, '--v=4', '-v 2'),
    ([], ['-v=2'], '--v=4', 'args'),
    ([], ['--v=2'], '--v=4', 'args'),
    (['--write_config_to=/a.yaml'], None, '--write-config-to=/b.yaml', '--write_config_to=/a.yaml'),
]


@pytest.mark.parametrize('command, args, arg, named', FLAGS)
def test_family_flags_as_kube_scheduler_reads_them_another_value_is_refused(node, command, args, arg, named):
    node.write(SCHED_CONFIG, 'x\n')
    node.write(MANIFEST, manifest(command, args))
    before = node.tree()
    said = module_fail(static_pod_arg, {'path': MANIFEST, 'arg': arg, 'mount_arg_path': False})
    assert named in said and 'different value' in said, said
    assert node.tree() == before


@pytest.mark.parametrize('command, args, arg', [
    ([], ['--config=' + SCHED_CONFIG], '--config=' + SCHED_CONFIG),
    (['--config', SCHED_CONFIG], None, '--config=' + SCHED_CONFIG),
    ([], ['--config', SCHED_CONFIG], '--config=' + SCHED_CONFIG),
    (['-v=4'], None, '--v=4'),
    (['-v4'], None, '--v=4'),
    ([], ['-v', '4'], '--v=4'),
])
def test_family_flags_as_kube_scheduler_reads_them_the_same_flag_is_not_added_twice(node, command, args, arg):
    node.write(SCHED_CONFIG, 'x\n')
    node.write(MANIFEST, manifest(command, args))
    before = node.read(MANIFEST)
    r = module_ok(static_pod_arg, {'path': MANIFEST, 'arg': arg, 'mount_arg_path': False})
    assert r['changed'] is False and node.read(MANIFEST) == before
    assert any('already gets %s' % arg in w for w in r['warnings']), r['warnings']
    r = module_ok(static_pod_arg, {'path': MANIFEST, 'arg': arg, 'mount_arg_path': False, 'state': 'absent'})
    assert r['changed'] is False and node.read(MANIFEST) == before


@pytest.mark.parametrize('command, args, config', [
    ([], ['--config=' + SCHED_CONFIG], SCHED_CONFIG),
    (['--config', SCHED_CONFIG], None, SCHED_CONFIG),
    (['--config=/a.yaml'], ['--config=/b.yaml'], '/b.yaml'),
    ([], ['--', '--config=/b.yaml'], ''),
])
def test_family_flags_as_kube_scheduler_reads_them_k3s_info_reads_command_and_args(node, command, args, config):
    node.install_files(installer.kubelet_files())
    node.write(MANIFEST, manifest(command, args))
    r = module_ok(k3s_info, {'platform': 'kubeadm'})
    assert r['scheduler_config'] == config


def test_family_flags_as_kube_scheduler_reads_them_args_that_are_not_a_list(node):
    node.install_files(installer.kubelet_files())
    node.write(MANIFEST, manifest([], None) + '    args: --config=/b.yaml\n')
    r = module_ok(k3s_info, {'platform': 'kubeadm'})
    assert r['scheduler_config'] == ''


# -- family: k3s as it really runs ---------------------------------------------------------------------------------
PAD = [''] * 60  # the NUL bytes k3s's rewritten title leaves: /proc/<pid>/cmdline splits into empty words
RUNNING = [
    (['/usr/local/bin/k3s server'] + PAD, True),
    (['/usr/local/bin/k3s agent'] + PAD, True),
    (['/usr/local/bin/rke2 server'] + PAD, True),
    (['k3s server'], True),
    (['k3s-main server'] + PAD, True),
    (['/usr/local/bin/k3s server', 'tail of an argument the title did not cover'], True),
    (['/usr/local/bin/k3s', 'server', '--token=s3cret'], True),
    (['/usr/local/bin/k3s', '--debug', 'agent'], True),
    (['/usr/local/bin/k3s', 'kubectl', 'get', 'nodes'], False),
    (['/usr/local/bin/k3s kubectl'] + PAD, False),
    (['/usr/bin/vim', 'k3s', 'server'], False),
    (['/usr/bin/vim k3s server'] + PAD, False),
    (['/usr/local/bin/k3s server-ish'] + PAD, False),
    (['/usr/local/bin/k3s', 'kube-scheduler', '--config=/x'], False),
    (['sleep', '3600'], False),
]


@pytest.mark.parametrize('argv, running', RUNNING)
def test_family_k3s_as_it_really_runs_killall_refuses_under_a_live_k3s(node, monkeypatch, argv, running):
    node.process(1, ['/sbin/init'], ppid=0)
    node.process(4242, argv)
    monkeypatch.setattr(_killall, 'KILL', lambda pid, sig: None)
    failed, result = run_module(k3s_killall, {'iptables': False})
    assert failed is running, result
    if running:
        assert 'k3s still runs on this node (pid 4242' in result['msg'] and 's3cret' not in result['msg']
        assert printable(result['msg']) and '  ' not in result['msg'].split('(pid 4242: ', 1)[1].split(')')[0]


@pytest.mark.parametrize('started_after_unit', [True, False])
def test_family_k3s_as_it_really_runs_a_hidden_title_is_no_stale_command_line(node, started_after_unit):
    """k3s_service_arg asks whether the running k3s already uses the unit: with the title form it cannot compare the
    arguments, so it compares times; it never takes the empty words of the padding for arguments."""
    unit = node.install('server', args=['--kube-scheduler-arg=v=2'])
    mtime = os.stat(node.p(unit)).st_mtime
    node.process(4242, ['/usr/local/bin/k3s server'] + PAD, started=mtime + (5 if started_after_unit else -5))
    node.service('k3s', pid=4242)
    r = module_ok(k3s_service_arg, {'arg': '--kube-scheduler-arg=v=2'})
    assert r['changed'] is False and r['running'] is True
    assert r['restart_required'] is (not started_after_unit)
