# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the k3s_info module, on installer-format files in a temp dir."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config
from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_info
from ansible_collections.baremetal.k3s.plugins.modules import k3s_info

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import run_module

import installer  # pylint: disable=import-error

SCHED_FILE = '/etc/rancher/k3s/kube-scheduler/config.yaml'
KEYS = {'changed', 'installed', 'platform', 'init', 'service', 'unit_path', 'dropins', 'unit_writable', 'node_role',
        'argv', 'k3s_args', 'config_file', 'config_files', 'config_dir_writable', 'scheduler_args',
        'scheduler_config', 'scheduler_config_source', 'version', 'kubernetes_version', 'active', 'main_pid',
        'node_name', 'manifest_path', 'data_dir', 'scheduler_kubeconfig', 'admin_kubeconfig', 'kubectl',
        'scheduler_ca_file', 'cluster_id'}


CONFIG = '/etc/rancher/k3s/config.yaml'
ETC = '/etc/systemd/system'
MANIFEST = '/etc/kubernetes/manifests/kube-scheduler.yaml'


def fake_k3s(node, output='k3s version v1.36.3+k3s1 (0a1b2c3d)\ngo version go1.24.4\n', rc=0, path='/usr/local/bin/k3s'):
    """``k3s --version`` on the node answers ``output`` with exit code ``rc``."""
    def k3s(argv):
        assert argv[1:] == ['--version'], argv
        return rc, output, ''
    node.commands[path] = k3s


def read_tree(root):
    out = {}
    for d, dummy, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            st = os.lstat(p)
            with open(p, 'rb') as f:
                out[p] = (f.read(), st.st_mode, st.st_mtime_ns)
    return out


def ok(args=None, platform='k3s', **kw):
    warnings = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(AnsibleModule, 'warn', lambda self, msg: warnings.append(msg))
        failed, result = run_module(k3s_info, args or {}, **kw)
    assert not failed, result
    assert KEYS <= set(result), KEYS - set(result)
    assert result['changed'] is False and result['platform'] == platform
    result['warnings'] = warnings
    return result


def fail(args=None):
    failed, result = run_module(k3s_info, args or {})
    assert failed, result
    return result['msg']


def test_server_systemd(node):
    unit = node.install(args=['--disable=traefik', '--write-kubeconfig-mode=644'])
    tree = read_tree(node.root)
    r = ok(check_mode=True)
    assert r['installed'] is True and r['init'] == 'systemd' and r['service'] == 'k3s'
    assert r['unit_path'] == unit and r['dropins'] == [] and r['unit_writable'] is True
    assert r['node_role'] == 'server'
    assert r['argv'] == ['/usr/local/bin/k3s', 'server', '--disable=traefik', '--write-kubeconfig-mode=644']
    assert r['k3s_args'] == r['argv']
    assert r['config_file'] == CONFIG and r['config_files'] == [] and r['config_dir_writable'] is True
    assert r['scheduler_args'] == [] and r['scheduler_config'] == '' and r['scheduler_config_source'] == ''
    assert r['version'] == '' and r['kubernetes_version'] == ''  # /usr/local/bin/k3s does not exist here
    assert r['active'] is False and r['main_pid'] == 0
    assert r['node_name'] == 'node-1.example'
    assert 'msg' not in r and r['warnings'] == []
    assert read_tree(node.root) == tree


def test_agent_and_named_service(node):
    agent = node.install(command='agent', args=['--server', 'https://10.0.0.1:6443'])
    r = ok({'service': 'k3s-agent'})
    assert r['node_role'] == 'agent' and r['unit_path'] == agent and r['service'] == 'k3s-agent'
    named = node.install(name='edge')
    r = ok({'service': 'k3s-edge.service'})
    assert r['node_role'] == 'server' and r['unit_path'] == named and r['service'] == 'k3s-edge'


def test_active_and_pid_from_systemctl(node):
    node.install()
    node.service('k3s', pid=4242)
    r = ok()
    assert r['active'] is True and r['main_pid'] == 4242 and r['enabled'] is False
    assert ['systemctl', 'show', '-p', 'ActiveState', '-p', 'MainPID', '-p', 'UnitFileState', 'k3s.service'] in node.calls
    # enabled is what systemctl enable makes; static, disabled or masked units are not
    for state, enabled in (('enabled', True), ('disabled', False), ('static', False), ('masked', False), ('', False)):
        node.service('k3s', pid=4242, UnitFileState=state)
        assert ok()['enabled'] is enabled, state
    node.units = None  # no systemctl on the node: not running, no failure
    r = ok()
    assert r['active'] is False and r['main_pid'] == 0


def test_openrc(node):
    script = node.install(init='openrc', args=['--disable=traefik'])
    r = ok()
    assert r['init'] == 'openrc' and r['unit_path'] == script and r['dropins'] == []
    assert r['argv'] == ['/usr/local/bin/k3s', 'server', '--disable=traefik'] and r['node_role'] == 'server'
    assert r['active'] is False and r['main_pid'] == 0
    node.commands['rc-service'] = lambda argv: (0, '', '')
    node.write('/var/run/k3s.pid', '76\n')
    node.process(76, ['supervise-daemon', 'k3s'])
    node.process(77, ['/usr/local/bin/k3s', 'server'], ppid=76)
    r = ok()
    assert r['active'] is True and r['main_pid'] == 77 and r['enabled'] is False
    assert ['rc-service', 'k3s', 'status'] in node.calls
    node.symlink('/etc/init.d/k3s', '/etc/runlevels/default/k3s')  # rc-update add k3s default
    assert ok()['enabled'] is True


def test_config_d_gives_the_scheduler_config(node):
    node.install(args=['--disable=traefik'])
    node.write(CONFIG, 'kube-scheduler-arg:\n  - v=2\nnode-name: Big-Node\n')
    ours = node.write(CONFIG + '.d/99-baremetal-k3s-scheduler.yaml',
                      'kube-scheduler-arg+:\n  - "config=%s"\n' % SCHED_FILE)
    node.write(CONFIG + '.d/50-other.yaml', 'kube-scheduler-arg+: leader-elect=false\n')
    node.write(CONFIG + '.d/README', 'not read\n')
    r = ok()
    assert r['config_files'] == [CONFIG, CONFIG + '.d/50-other.yaml', ours]
    assert r['scheduler_args'] == ['v=2', 'leader-elect=false', 'config=' + SCHED_FILE]
    assert r['scheduler_config'] == SCHED_FILE and r['scheduler_config_source'] == ours
    assert r['k3s_args'] == ['/usr/local/bin/k3s', 'server', '--kube-scheduler-arg=v=2',
                             '--kube-scheduler-arg=leader-elect=false', '--kube-scheduler-arg=config=' + SCHED_FILE,
                             '--node-name=Big-Node', '--disable=traefik']
    assert r['argv'] == ['/usr/local/bin/k3s', 'server', '--disable=traefik']
    assert r['node_name'] == 'big-node'


def test_a_config_file_that_go_yaml_reads_and_pyyaml_refuses(node):
    node.install()
    node.write(CONFIG, 'kube-scheduler-arg:\n  - config=/etc/sched.yaml\t# ours\nnode-name: on\n')
    r = ok()
    assert r['scheduler_config'] == '/etc/sched.yaml' and r['node_name'] == 'true'


def test_later_file_without_plus_replaces(node):
    node.install()
    node.write(CONFIG + '.d/10-a.yaml', 'kube-scheduler-arg:\n  - config=/etc/a.yaml\n')
    b = node.write(CONFIG + '.d/20-b.yaml', 'kube-scheduler-arg: [v=4]\n')
    r = ok()
    assert r['scheduler_args'] == ['v=4'] and r['scheduler_config'] == '' and r['scheduler_config_source'] == ''
    c = node.write(CONFIG + '.d/30-c.yaml', 'kube-scheduler-arg+: [--config=/etc/c.yaml, kubeconfig=/etc/k]\n')
    r = ok()
    assert r['scheduler_args'] == ['v=4', '--config=/etc/c.yaml', 'kubeconfig=/etc/k']
    assert r['scheduler_config'] == '/etc/c.yaml' and r['scheduler_config_source'] == c
    assert b != c


def test_kubeconfig_is_not_a_config(node):
    node.install(args=['--kube-scheduler-arg=kubeconfig=/etc/k.yaml', '--kube-scheduler-arg=config'])
    r = ok()
    assert r['scheduler_args'] == ['kubeconfig=/etc/k.yaml', 'config']
    assert r['scheduler_config'] == '' and r['scheduler_config_source'] == ''


def test_command_line_gives_it_and_replaces_the_files(node):
    unit = node.install(args=['--kube-scheduler-arg=config=/etc/cli-1.yaml', '--kube-scheduler-arg=v=2',
                              '--kube-scheduler-arg=config=/etc/cli-2.yaml'])
    node.write(CONFIG + '.d/99-baremetal-k3s-scheduler.yaml', 'kube-scheduler-arg+:\n  - config=%s\n' % SCHED_FILE)
    r = ok()
    assert r['scheduler_args'] == ['config=/etc/cli-1.yaml', 'v=2', 'config=/etc/cli-2.yaml']
    assert r['scheduler_config'] == '/etc/cli-2.yaml' and r['scheduler_config_source'] == unit
    assert r['k3s_args'][2] == '--kube-scheduler-arg=config=' + SCHED_FILE
    assert len(r['warnings']) == 1 and 'replaces' in r['warnings'][0] and unit in r['warnings'][0]


def test_dropin_override(node):
    unit = node.install(args=['--kube-scheduler-arg=config=/etc/unit.yaml'])
    d = ETC + '/k3s.service.d'
    node.write(os.path.join(d, '10-env.conf'), '[Service]\nEnvironment=SCHED=/etc/dropin.yaml\n')
    over = node.write(os.path.join(d, '20-exec.conf'),
                      '[Service]\nExecStart=\nExecStart=/usr/local/bin/k3s server \\\n'
                      '    --node-name=${NAME} \\\n    "--kube-scheduler-arg=config=${SCHED}"\n')
    node.write(unit + '.env', 'NAME=From-Env\n')
    node.write(os.path.join(d, 'ignored.txt'), '[Service]\nExecStart=\n')
    r = ok()
    assert r['dropins'] == [os.path.join(d, '10-env.conf'), over]
    assert r['argv'] == ['/usr/local/bin/k3s', 'server', '--node-name=From-Env',
                         '--kube-scheduler-arg=config=/etc/dropin.yaml']
    assert r['scheduler_config'] == '/etc/dropin.yaml' and r['scheduler_config_source'] == over
    assert r['node_name'] == 'from-env' and r['unit_path'] == unit


def test_env_file_config_path_and_node_name(node):
    unit = node.install(args=['--config', '/srv/k3s.yaml'])
    node.write('/srv/k3s.yaml', 'kube-scheduler-arg: config=/srv/sched.yaml\n')
    r = ok()
    assert r['config_file'] == '/srv/k3s.yaml' and r['config_files'] == ['/srv/k3s.yaml']
    assert r['scheduler_config'] == '/srv/sched.yaml' and r['scheduler_config_source'] == '/srv/k3s.yaml'
    node.write(unit + '.env', "K3S_CONFIG_FILE='%s'\nK3S_NODE_NAME=Env-Node\n" % '/srv/other.yaml')
    r = ok()
    assert r['config_file'] == '/srv/other.yaml' and r['config_files'] == []
    assert r['scheduler_config'] == '' and r['node_name'] == 'env-node'


def test_data_dir_from_the_flag_the_config_files_or_k3s_data_dir(node):
    unit = node.install()
    node.write(unit + '.env', 'K3S_DATA_DIR=/srv/env-data\n')
    r = ok()
    assert r['data_dir'] == '/srv/env-data' and r['scheduler_kubeconfig'] == '/srv/env-data/server/cred/scheduler.kubeconfig'
    node.write('/etc/rancher/k3s/config.yaml.d/10-data.yaml', 'data-dir: /srv/file-data\n')
    assert ok()['data_dir'] == '/srv/file-data'  # a flag (from a file too) wins over the variable
    node.install(args=['-d', '/srv/flag-data'])
    assert ok()['data_dir'] == '/srv/flag-data'


def scheduler_cert(node, data_dir='/var/lib/rancher/k3s'):
    """The server CA and the scheduler's serving certificate as k3s 1.31.9+ lays them out; the CA's node path."""
    node.write(data_dir + '/server/tls/server-ca.crt', 'CA\n')
    node.write(data_dir + '/server/tls/kube-scheduler/kube-scheduler.crt', 'CERT\nCA\n')
    node.write(data_dir + '/server/tls/kube-scheduler/kube-scheduler.key', 'KEY\n', 0o600)
    return data_dir + '/server/tls/server-ca.crt'


def test_scheduler_ca_file_when_k3s_issued_the_schedulers_certificate(node):
    unit = node.install()
    assert ok()['scheduler_ca_file'] == ''  # no serving certificate (k3s before 1.31.9): the scheduler signs its own
    node.write('/var/lib/rancher/k3s/server/tls/kube-scheduler/kube-scheduler.crt', 'CERT\n')
    assert ok()['scheduler_ca_file'] == ''  # no server CA beside it
    ca = scheduler_cert(node)
    r = ok()
    assert r['scheduler_ca_file'] == ca == '/var/lib/rancher/k3s/server/tls/server-ca.crt'
    # the data dir K3S_DATA_DIR names, as k3s reads it
    node.write(unit + '.env', 'K3S_DATA_DIR=/srv/data\n')
    assert ok()['scheduler_ca_file'] == ''
    assert scheduler_cert(node, '/srv/data') == ok()['scheduler_ca_file'] == '/srv/data/server/tls/server-ca.crt'


@pytest.mark.parametrize('version, has', [
    ('v1.29.15+k3s1', False), ('v1.30.12+k3s1', False), ('v1.30.13+k3s1', True), ('v1.31.8+k3s1', False),
    ('v1.31.9-rc1+k3s1', True), ('v1.32.4+k3s1', False), ('v1.32.5+k3s1', True), ('v1.33.0+k3s1', False),
    ('v1.33.1+k3s1', True), ('v1.34.0+k3s1', True), ('v1.36.3+k3s1', True),
])
def test_scheduler_ca_file_only_from_the_releases_that_pass_the_certificate(node, version, has):
    # a certificate left by a later release does not make an older k3s serve it (a downgrade)
    fake_k3s(node, 'k3s version %s (0a1b2c3d)\n' % version)
    node.install()
    ca = scheduler_cert(node)
    assert ok()['scheduler_ca_file'] == (ca if has else '')


def test_scheduler_ca_file_not_when_a_scheduler_arg_names_another_certificate(node):
    ca = scheduler_cert(node)
    node.install(args=['--kube-scheduler-arg=tls-cert-file=/etc/pki/sched.crt',
                       '--kube-scheduler-arg=tls-private-key-file=/etc/pki/sched.key'])
    assert ok()['scheduler_ca_file'] == ''
    node.install(args=['--kube-scheduler-arg=--tls-cert-file=/etc/pki/sched.crt'])
    assert ok()['scheduler_ca_file'] == ''
    node.install(args=['--kube-scheduler-arg=tls-cert-file=/var/lib/rancher/k3s/server/tls/kube-scheduler/kube-scheduler.crt'])
    assert ok()['scheduler_ca_file'] == ca
    node.install(args=['--kube-scheduler-arg=v=2'])
    assert ok()['scheduler_ca_file'] == ca


def test_scheduler_ca_file_empty_on_an_agent(node):
    scheduler_cert(node)
    node.install(command='agent', args=['--server=https://s:6443'])
    assert ok({'service': 'k3s-agent'})['scheduler_ca_file'] == ''


def test_node_name_flag_wins(node):
    node.install(args=['--node-name', 'Worker-7'], command='agent')
    assert ok({'service': 'k3s-agent'})['node_name'] == 'worker-7'
    node.install(args=['--node-name=a', '--node-name=B'])
    assert ok()['node_name'] == 'b'


def test_not_installed(node):
    r = ok({'service': 'k3s-agent'})
    assert r['installed'] is False and 'k3s-agent' in r['msg'] and 'Install k3s' in r['msg']
    assert r['service'] == 'k3s-agent' and r['init'] == '' and r['argv'] == [] and r['node_role'] == ''
    assert r['active'] is False and r['main_pid'] == 0 and r['node_name'] == 'node-1.example'


@pytest.mark.parametrize('output, version, kube', [
    ('k3s version v1.36.3+k3s1 (0a1b2c3d)\ngo version go1.24.4\n', 'v1.36.3+k3s1', 'v1.36.3'),
    ('k3s version v1.31.4+k3s1 (a3e2f5c1)\n', 'v1.31.4+k3s1', 'v1.31.4'),
    ('k3s version v1.32.0-rc2+k3s1 (x)\n', 'v1.32.0-rc2+k3s1', 'v1.32.0-rc2'),
    ('k3s version dev (x)\ngo version go1.24 v1.2.3\n', '', ''),
    ('', '', ''),
])
def test_version(node, output, version, kube):
    fake_k3s(node, output)
    node.install()
    r = ok()
    assert r['argv'][0] == '/usr/local/bin/k3s'
    assert (r['version'], r['kubernetes_version']) == (version, kube)


def test_version_binary_fails(node):
    fake_k3s(node, rc=1)
    node.install()
    r = ok()
    assert r['version'] == '' and r['kubernetes_version'] == ''


def test_readonly_unit_and_config_dir(node):
    node.install()
    node.readonly.update([ETC, os.path.dirname(CONFIG)])
    r = ok()
    assert r['unit_writable'] is False and r['config_dir_writable'] is False


@pytest.mark.parametrize('service, where', [
    ('../etc/k3s', 'not a valid service name'),
    ('k3s/agent', 'not a valid service name'),
    ('k3s agent', 'not a valid service name'),
])
def test_bad_service_name(node, service, where):
    assert where in fail({'service': service})


@pytest.mark.parametrize('content, where', [
    ('[Unit]\nDescription=x\n', 'no [Service]'),
    ('[Service]\nType=notify\n', 'no ExecStart'),
    ('[Service]\nExecStart=/bin/k3s server\nExecStart=/bin/k3s agent\n', 'ExecStart= 2 times'),
    ("[Service]\nExecStart=/bin/k3s server '--a\n", 'unbalanced single quote'),
    ('[Service]\nExecStart=/usr/local/bin/k3s --debug\n', 'without a "server" or "agent" subcommand'),
    ('', 'masked or empty'),
])
def test_bad_unit(node, content, where):
    node.write(ETC + '/k3s.service', content)
    assert where in fail()


def test_bad_config_file(node):
    node.install()
    node.write(CONFIG, 'kube-scheduler-arg: [a\n')
    msg = fail()
    assert CONFIG in msg and 'not valid YAML' in msg and 'Fix or remove' in msg
    node.write(CONFIG, '- a list\n')
    assert 'mapping of flag names to values' in fail()


def test_parse_version_and_scheduler_config_of():
    assert _k3s_info.parse_version('k3s version v1.33.13+k3s1 (abc)') == ('v1.33.13+k3s1', 'v1.33.13')
    assert _k3s_info.parse_version(None) == ('', '')
    assert _k3s_config.scheduler_config_of('config=/a') == '/a'
    assert _k3s_config.scheduler_config_of('--config=/a') == '/a'
    assert _k3s_config.scheduler_config_of('-config=/a') == '/a'
    assert _k3s_config.scheduler_config_of('kubeconfig=/a') is None
    assert _k3s_config.scheduler_config_of('config') is None


@pytest.mark.parametrize('docs, expected', [
    ([('a', [('kube-scheduler-arg', ['x', 'y'])]), ('b', [('kube-scheduler-arg+', 'z')])],
     [('x', 'a'), ('y', 'a'), ('z', 'b')]),
    ([('a', [('kube-scheduler-arg', 'x')]), ('b', [('kube-scheduler-arg', ['y'])])], [('y', 'b')]),
    ([('a', [('kube-scheduler-arg+', ['x'])]), ('b', [('kube-scheduler-arg+', ['y'])])], [('x', 'a'), ('y', 'b')]),
    ([('a', [('kube-scheduler-arg', None)]), ('b', [('kube-scheduler-arg+', 'y')])], [('y', 'b')]),
    ([('a', [('kube-scheduler-arg', None)])], [('', 'a')]),
    ([('a', [('other', 'x')])], []),
])
def test_flag_sources_match_merge(docs, expected):
    assert _k3s_config.flag_sources(docs, 'kube-scheduler-arg') == expected
    flags = _k3s_config.to_flags(_k3s_config.merge(docs))
    assert [v for v, dummy in expected] == _k3s_config.flag_values(flags, 'kube-scheduler-arg')


KUBEADM_POD = """apiVersion: v1
kind: Pod
metadata:
  name: kube-scheduler
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-scheduler
    - --authentication-kubeconfig=/etc/kubernetes/scheduler.conf
    - --kubeconfig=/etc/kubernetes/scheduler.conf
    - --leader-elect=true
{extra}    image: registry.k8s.io/kube-scheduler:v1.33.13
    name: kube-scheduler
  hostNetwork: true
"""


def test_rke2_server_found_by_auto(node):
    unit = node.install_files(installer.rke2_files('server'))
    node.write('/etc/rancher/rke2/config.yaml', 'data-dir: /data/rke2\nkube-scheduler-arg: [v=2]\n')
    node.write('/etc/rancher/rke2/config.yaml.d/99-x.yaml', 'kube-scheduler-arg+: [config=/etc/rancher/rke2/sched.yaml]\n')
    tree = read_tree(node.root)
    r = ok(platform='rke2')
    assert r['installed'] and r['service'] == 'rke2-server' and r['unit_path'] == unit and r['node_role'] == 'server'
    assert r['argv'] == ['/usr/local/bin/rke2', 'server'] and r['config_file'] == '/etc/rancher/rke2/config.yaml'
    assert r['scheduler_args'] == ['v=2', 'config=/etc/rancher/rke2/sched.yaml']
    assert r['scheduler_config'] == '/etc/rancher/rke2/sched.yaml'
    assert r['data_dir'] == '/data/rke2' and r['scheduler_kubeconfig'] == '/data/rke2/server/cred/scheduler.kubeconfig'
    assert r['admin_kubeconfig'] == '/etc/rancher/rke2/rke2.yaml' and r['manifest_path'] == ''
    assert ok({'service': 'rke2-server', 'platform': 'rke2'}, platform='rke2')['unit_path'] == unit
    assert 'runs rke2' in fail({'service': 'rke2-server', 'platform': 'k3s'})
    assert read_tree(node.root) == tree


RKE2_SCHEDULER_POD = """apiVersion: v1
kind: Pod
metadata:
  name: kube-scheduler
  namespace: kube-system
spec:
  containers:
  - name: kube-scheduler
    image: index.docker.io/rancher/hardened-kubernetes:v1.33.1-rke2r1-build20250515
    command:
    - kube-scheduler
    args:
    - --permit-port-sharing=true
    - --bind-address=127.0.0.1
    - --secure-port=10259
{extra}
"""


def test_scheduler_ca_file_of_rke2_follows_its_scheduler_pod(node):
    node.install_files(installer.rke2_files('server'))
    pod = '/var/lib/rancher/rke2/agent/pod-manifests/kube-scheduler.yaml'
    ca = scheduler_cert(node, '/var/lib/rancher/rke2')
    assert ok(platform='rke2')['scheduler_ca_file'] == ''  # not started yet: no pod written
    node.write(pod, RKE2_SCHEDULER_POD.format(extra=''))
    assert ok(platform='rke2')['scheduler_ca_file'] == ''  # the scheduler signs its own certificate
    node.write(pod, RKE2_SCHEDULER_POD.format(
        extra='    - --tls-cert-file=/var/lib/rancher/rke2/server/tls/kube-scheduler/kube-scheduler.crt\n'
              '    - --tls-private-key-file=/var/lib/rancher/rke2/server/tls/kube-scheduler/kube-scheduler.key'))
    assert ok(platform='rke2')['scheduler_ca_file'] == ca == '/var/lib/rancher/rke2/server/tls/server-ca.crt'
    node.write(pod, RKE2_SCHEDULER_POD.format(extra='    - --tls-cert-file=/etc/pki/other.crt'))
    assert ok(platform='rke2')['scheduler_ca_file'] == ''
    node.write(pod, 'not: [a pod\n')
    assert ok(platform='rke2')['scheduler_ca_file'] == ''


def test_k3s_wins_over_rke2_and_gives_its_paths(node):
    node.install_files(installer.rke2_files('server'))
    node.install(args=['--data-dir=/srv/k3s', '--write-kubeconfig', '/root/k.yaml'])
    r = ok()
    assert r['service'] == 'k3s' and r['data_dir'] == '/srv/k3s'
    assert r['scheduler_kubeconfig'] == '/srv/k3s/server/cred/scheduler.kubeconfig' and r['admin_kubeconfig'] == '/root/k.yaml'
    assert ok({'platform': 'rke2'}, platform='rke2')['service'] == 'rke2-server'


def test_kubeadm_control_plane(node):
    node.install_files(installer.kubelet_files())
    node.write(MANIFEST, KUBEADM_POD.format(extra='    - --config=/etc/kubernetes/scheduler/config.yaml\n'))
    node.service('kubelet', pid=99)
    r = ok(platform='kubeadm')
    assert r['installed'] and r['service'] == 'kubelet' and r['node_role'] == 'server' and r['init'] == 'systemd'
    assert r['manifest_path'] == MANIFEST and r['unit_path'] == '/usr/lib/systemd/system/kubelet.service'
    assert r['argv'][0] == 'kube-scheduler' and r['scheduler_config'] == '/etc/kubernetes/scheduler/config.yaml'
    assert r['scheduler_config_source'] == MANIFEST
    assert r['scheduler_kubeconfig'] == '/etc/kubernetes/scheduler.conf' and r['admin_kubeconfig'] == '/etc/kubernetes/admin.conf'
    assert (r['version'], r['kubernetes_version']) == ('v1.33.13', 'v1.33.13')
    assert r['active'] is True and r['main_pid'] == 99
    node.write(MANIFEST, KUBEADM_POD.format(extra=''))
    r = ok({'platform': 'kubeadm'}, platform='kubeadm')
    assert r['scheduler_config'] == '' and r['scheduler_config_source'] == ''


def test_kubeadm_worker_and_nothing(node):
    r = ok()
    assert not r['installed'] and 'k3s' in r['msg'] and 'rke2-server' in r['msg'] and 'kube-scheduler' in r['msg']
    node.install_files(installer.kubelet_files())
    node.write('/etc/kubernetes/kubelet.conf', 'apiVersion: v1\nkind: Config\n')
    r = ok(platform='kubeadm')
    assert r['installed'] and r['node_role'] == 'agent' and r['argv'] == []


@pytest.mark.parametrize('content, message', [
    ('kind: Pod\nspec: [\n', 'not valid YAML'),
    ('kind: Pod\nspec: {containers: []}\n', 'not a static pod with a kube-scheduler container'),
    ('kind: Pod\nspec: {containers: [{name: kube-scheduler, command: kube-scheduler}]}\n', 'not a static pod'),
])
def test_kubeadm_bad_manifest(node, content, message):
    node.write(MANIFEST, content)
    assert message in fail({'platform': 'kubeadm'})


@pytest.mark.parametrize('image, expected', [
    ('registry.k8s.io/kube-scheduler:v1.36.3', ('v1.36.3', 'v1.36.3')),
    ('localhost:5000/kube-scheduler:v1.31.0-rc.1@sha256:abc', ('v1.31.0-rc.1', 'v1.31.0-rc.1')),
    ('localhost:5000/kube-scheduler', ('', '')),
    ('kube-scheduler:latest', ('', '')),
    (None, ('', '')),
])
def test_image_version(image, expected):
    assert _k3s_info.image_version(image) == expected


def _kubectl_on_path(node, path):
    """The node's PATH holds kubectl at ``path`` (None: no kubectl on it)."""
    node.path_bins['kubectl'] = path


@pytest.mark.parametrize('install, expected', [
    ({}, ['/usr/local/bin/k3s', 'kubectl']),
    ({'bin_dir': '/opt/bin', 'args': ['--data-dir=/srv/k3s']}, ['/opt/bin/k3s', 'kubectl']),
    ({'init': 'openrc', 'bin_dir': '/opt/edge/bin'}, ['/opt/edge/bin/k3s', 'kubectl']),
])
def test_kubectl_of_k3s_is_its_subcommand(node, install, expected):
    _kubectl_on_path(node, '/usr/bin/kubectl')  # a kubectl elsewhere on PATH is not k3s's
    node.install(**install)
    assert ok()['kubectl'] == expected


def test_kubectl_of_rke2_is_in_its_data_dir(node):
    _kubectl_on_path(node, '/usr/bin/kubectl')
    node.install_files(installer.rke2_files('server'))
    assert ok(platform='rke2')['kubectl'] == ['/var/lib/rancher/rke2/bin/kubectl']
    node.write('/etc/rancher/rke2/config.yaml', 'data-dir: /data/rke2\n')
    assert ok(platform='rke2')['kubectl'] == ['/data/rke2/bin/kubectl']


@pytest.mark.parametrize('on_path, expected', [
    ('/opt/k8s/bin/kubectl', ['/opt/k8s/bin/kubectl']),
    (None, ['/usr/bin/kubectl']),
])
def test_kubectl_of_kubeadm_is_found_on_path(node, on_path, expected):
    _kubectl_on_path(node, on_path)
    node.install_files(installer.kubelet_files())
    node.write(MANIFEST, KUBEADM_POD.format(extra=''))
    assert ok(platform='kubeadm')['kubectl'] == expected
    node.unlink(MANIFEST)  # a worker: kubectl all the same
    node.write('/etc/kubernetes/kubelet.conf', 'apiVersion: v1\nkind: Config\n')
    r = ok(platform='kubeadm')
    assert r['node_role'] == 'agent' and r['kubectl'] == expected


def test_kubectl_empty_when_nothing_installed(node):
    _kubectl_on_path(node, '/usr/bin/kubectl')
    assert ok()['kubectl'] == []
    assert ok({'platform': 'kubeadm'}, platform='kubeadm')['kubectl'] == []
    assert ok({'service': 'k3s-agent'})['kubectl'] == []


def test_scratch_left_lists_what_killed_runs_left_and_nothing_else(node):
    """The read before site's install names the scratch directories of killed runs (sweep.yml removes root's): an
    upgrade's beside the binary, a download's in the temporary directory; not a file or a link of such a name, not
    another directory, not inside one; a non-root one with its uid; a missing directory lists nothing."""
    node.install(command='agent', name='agent')
    node.write('/usr/local/bin/.baremetal-k3s-upgrade.k2x9/k3s', b'new binary')
    node.makedirs('/tmp/baremetal-k3s-fetch.q1')
    node.makedirs('/tmp/baremetal-k3s-fetch.user')
    os.chown(node.p('/tmp/baremetal-k3s-fetch.user'), 1000, 1000)
    node.write('/usr/local/bin/.baremetal-k3s-upgrade.file', b'a file, not ours')
    node.makedirs('/elsewhere/keep')
    node.symlink(node.p('/elsewhere'), '/usr/local/bin/.baremetal-k3s-upgrade.link')
    node.makedirs('/tmp/other/baremetal-k3s-fetch.deep')
    node.makedirs('/usr/local/bin/baremetal-k3s-upgrade.nodot')
    before = node.tree()
    r = ok({'service': 'k3s-agent', 'scratch_dirs': ['/usr/local/bin', '/tmp', '/missing']})
    assert r['scratch_left'] == [{'path': '/usr/local/bin/.baremetal-k3s-upgrade.k2x9', 'uid': 0},
                                 {'path': '/tmp/baremetal-k3s-fetch.q1', 'uid': 0},
                                 {'path': '/tmp/baremetal-k3s-fetch.user', 'uid': 1000}]
    assert node.tree() == before  # read-only
    assert ok({'service': 'k3s-agent'})['scratch_left'] == []  # not asked: nothing listed
    # a node without k3s yet (site's first install) is asked the same
    assert ok({'service': 'k3s-other', 'scratch_dirs': ['/tmp']})['scratch_left'][0]['path'] == '/tmp/baremetal-k3s-fetch.q1'


def test_scratch_dirs_must_be_absolute(node):
    assert 'scratch_dirs: tmp is not an absolute path' in fail({'service': 'k3s', 'scratch_dirs': ['tmp']})


def test_sha256_files_reads_each_file_as_stat_does(node):
    """The binary the install would put in place, read in the same run: its sha256, mode and owner; a link is not
    followed and a FIFO is not waited on (no sha256), a missing file is said to be missing; nothing is written."""
    import hashlib  # pylint: disable=import-outside-toplevel
    node.install(command='agent', name='agent')
    node.write('/usr/local/bin/k3s', b'\x7fELF k3s', mode=0o755)
    node.write('/opt/other', b'other', mode=0o600)
    os.chown(node.p('/opt/other'), 1000, 1001)
    node.symlink('/usr/local/bin/k3s', '/opt/k3s-link')
    before = node.tree()  # (a FIFO is not read by the tree either: it is made after it, and gone before the next)
    os.mkfifo(node.p('/opt/fifo'))
    r = ok({'service': 'k3s-agent',
            'sha256_files': ['/usr/local/bin/k3s', '/opt/other', '/opt/k3s-link', '/opt/fifo', '/opt/missing']})
    assert r['sha256_files'] == [
        {'path': '/usr/local/bin/k3s', 'exists': True, 'sha256': hashlib.sha256(b'\x7fELF k3s').hexdigest(),
         'mode': '0755', 'uid': 0, 'gid': 0},
        {'path': '/opt/other', 'exists': True, 'sha256': hashlib.sha256(b'other').hexdigest(), 'mode': '0600',
         'uid': 1000, 'gid': 1001},
        {'path': '/opt/k3s-link', 'exists': True, 'sha256': '', 'mode': '0777', 'uid': 0, 'gid': 0},
        {'path': '/opt/fifo', 'exists': True, 'sha256': '', 'mode': '0644', 'uid': 0, 'gid': 0},
        {'path': '/opt/missing', 'exists': False, 'sha256': '', 'mode': '', 'uid': -1, 'gid': -1}]
    node.unlink('/opt/fifo')
    assert node.tree() == before
    assert ok({'service': 'k3s-agent'})['sha256_files'] == []  # not asked: nothing read
    assert 'sha256_files: bin/k3s is not an absolute path' in fail({'service': 'k3s', 'sha256_files': ['bin/k3s']})


KUBECONFIG_TEXT = '''apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: %s
    server: https://127.0.0.1:6443
  name: default
users:
- name: default
  user:
    client-key-data: S0VZc2VjcmV0
'''


def test_cluster_id_is_the_ca_the_admin_kubeconfig_trusts(node):
    node.install()
    assert ok()['cluster_id'] == '', 'no kubeconfig yet'
    node.write('/etc/rancher/k3s/k3s.yaml', KUBECONFIG_TEXT % 'Q0Etb25l')
    one = ok()['cluster_id']
    assert one == hashlib.sha256(b'Q0Etb25l').hexdigest()
    node.write('/etc/rancher/k3s/k3s.yaml', KUBECONFIG_TEXT % '"Q0EtdHdv"')
    assert ok()['cluster_id'] not in ('', one), 'another cluster, another CA'
    node.write('/etc/rancher/k3s/k3s.yaml', KUBECONFIG_TEXT.replace('certificate-authority-data: %s', 'certificate-authority: /ca.crt'))
    assert ok()['cluster_id'] == ''
    assert 'S0VZc2VjcmV0' not in json.dumps(ok()), 'nothing else of the file is returned'
    node.install(command='agent', args=['--server', 'https://10.0.0.1:6443'])
    assert ok({'service': 'k3s-agent'})['cluster_id'] == ''
