# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Module tests of baremetal.k3s.static_pod_arg: real files, check/diff mode, backups, errors, docs."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest
import yaml

from unittest.mock import patch

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _static_pod as sp
from ansible_collections.baremetal.k3s.plugins.modules import static_pod_arg

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'module_utils', 'fixtures')
with open(os.path.join(FIXTURES, 'kube-scheduler-kubeadm-v1.36.3.yaml.txt'), 'rb') as _f:
    KUBEADM = _f.read()


class Node:
    """A control-plane node in a temp dir: the manifests directory and the scheduler's files."""

    def __init__(self, root):
        self.root = root
        self.manifests = root / 'etc' / 'kubernetes' / 'manifests'
        self.manifests.mkdir(parents=True)
        self.path = str(self.manifests / 'kube-scheduler.yaml')
        with open(self.path, 'wb') as f:
            f.write(KUBEADM)
        os.chmod(self.path, 0o600)
        sched = root / 'etc' / 'kubernetes' / 'scheduler'
        sched.mkdir()
        self.config = str(sched / 'config.yaml')
        self.ca = str(sched / 'extender-ca.crt')
        for p in (self.config, self.ca):
            with open(p, 'w') as f:
                f.write('x\n')
        self.arg = '--config=' + self.config
        self.backup_dir = str(root / 'var' / 'backups' / 'baremetal-k3s')

    def read(self):
        with open(self.path, 'rb') as f:
            return f.read()

    def args(self, **kw):
        out = {'path': self.path, 'arg': self.arg, 'backup_dir': self.backup_dir}
        out.update(kw)
        return out


@pytest.fixture
def node(tmp_path):
    return Node(tmp_path)


def ok(args, **kw):
    return module_ok(static_pod_arg, args, **kw)


def fail(args, **kw):
    return module_fail(static_pod_arg, args, **kw)


def test_present_twice_then_absent_is_identical(node):
    r = ok(node.args(mounts=[node.ca]))
    assert r['changed'] and r['restart_expected'] and r['path'] == node.path and r['container'] == 'kube-scheduler'
    assert r['command'][0] == 'kube-scheduler' and r['command'][-1] == node.arg
    assert len(r['volumes']) == 2 and all(v.startswith('baremetal-k3s-') and len(v) <= 63 for v in r['volumes'])
    assert 'backup_file' not in r and 'diff' not in r
    data = yaml.safe_load(node.read())
    c = data['spec']['containers'][0]
    assert c['command'][-1] == node.arg
    assert {'mountPath': node.config, 'name': r['volumes'][0], 'readOnly': True} in c['volumeMounts']
    assert {'hostPath': {'path': node.ca, 'type': 'File'}, 'name': r['volumes'][1]} in data['spec']['volumes']
    assert stat.S_IMODE(os.stat(node.path).st_mode) == 0o600
    assert os.listdir(str(node.manifests)) == ['kube-scheduler.yaml']   # no temp file, no backup left behind

    again = ok(node.args(mounts=[node.ca]))
    assert not again['changed'] and not again['restart_expected'] and again['volumes'] == r['volumes']

    gone = ok(node.args(mounts=[node.ca], state='absent'))
    assert gone['changed'] and gone['restart_expected'] and gone['volumes'] == [] and node.arg not in gone['command']
    assert node.read() == KUBEADM
    assert stat.S_IMODE(os.stat(node.path).st_mode) == 0o600


def test_check_mode_and_diff_do_not_write(node):
    with patch.object(_io, 'write_file', side_effect=AssertionError('wrote in check mode')):
        r = ok(node.args(), check_mode=True, diff=True)
    assert r['changed'] and r['restart_expected'] and node.read() == KUBEADM
    assert r['diff']['before'] == KUBEADM.decode() and node.arg in r['diff']['after']
    assert r['diff']['before_header'] == r['diff']['after_header'] == node.path
    assert r['command'][-1] == node.arg


def test_check_mode_predicts_a_config_an_earlier_task_creates(node):
    os.unlink(node.config)  # scheduler_config in check mode creates nothing
    r = ok(node.args(), check_mode=True)
    assert r['changed'] and r['command'][-1] == node.arg and node.read() == KUBEADM
    assert any('does not exist yet' in w and node.config in w for w in r['warnings'])
    assert 'does not exist on the node' in fail(node.args())  # the real run refuses it
    assert node.read() == KUBEADM


def test_diff_mode_without_change(node):
    ok(node.args())
    r = ok(node.args(), diff=True)
    assert not r['changed'] and r['diff']['before'] == r['diff']['after']


def test_every_write_goes_through_io_write_file_with_a_dot_temp_file(node):
    calls, moves = [], []
    real_write, real_move = _io.write_file, AnsibleModule.atomic_move

    def write(*a, **kw):
        calls.append(a[1])
        return real_write(*a, **kw)

    def move(self, src, dest, *a, **kw):
        moves.append((src, dest))
        return real_move(self, src, dest, *a, **kw)

    with patch.object(_io, 'write_file', write), patch.object(AnsibleModule, 'atomic_move', move):
        ok(node.args())
        ok(node.args())
    assert calls == [node.path]
    assert len(moves) == 1 and os.path.basename(moves[0][0]).startswith('.') and moves[0][1] == node.path
    assert os.path.dirname(moves[0][0]) == str(node.manifests)


@pytest.mark.skipif(os.geteuid() != 0, reason='chown needs root')
def test_owner_is_kept(node):
    os.chown(node.path, 1234, 2345)
    ok(node.args())
    st = os.stat(node.path)
    assert (st.st_uid, st.st_gid) == (1234, 2345)


def test_backup_goes_to_backup_dir(node):
    r = ok(node.args(backup=True))
    assert os.path.dirname(r['backup_file']) == node.backup_dir
    with open(r['backup_file'], 'rb') as f:
        assert f.read() == KUBEADM
    assert os.listdir(str(node.manifests)) == ['kube-scheduler.yaml']
    assert 'backup_file' not in ok(node.args(backup=True))


@pytest.mark.parametrize('where', ['manifests', 'manifests/old', 'kubeadm-default', 'rke2'])
def test_backup_dir_in_a_manifest_dir_is_refused(node, where):
    backup_dir = {'manifests': str(node.manifests), 'manifests/old': str(node.manifests / 'old'),
                  'kubeadm-default': '/etc/kubernetes/manifests/backups',
                  'rke2': '/var/lib/rancher/rke2/agent/pod-manifests'}[where]
    msg = fail(node.args(backup=True, backup_dir=backup_dir))
    assert 'inside a static-pod manifest directory' in msg and '/var/backups/baremetal-k3s' in msg
    assert node.read() == KUBEADM and not os.path.exists(str(node.manifests / 'old'))


def test_backup_dir_is_not_checked_without_backup(node):
    assert ok(node.args(backup_dir=str(node.manifests)))['changed']


def test_path_errors(node, tmp_path):
    assert 'is relative' in fail(node.args(path='manifests/kube-scheduler.yaml'))
    assert 'does not exist' in fail(node.args(path=str(tmp_path / 'nope.yaml')))
    assert 'is a directory' in fail(node.args(path=str(node.manifests)))


def test_missing_mount_fails_and_file_is_untouched(node):
    msg = fail(node.args(mounts=[node.ca, str(node.root / 'missing.crt')]))
    assert 'missing.crt does not exist on the node' in msg and 'never start' in msg
    assert node.read() == KUBEADM
    os.unlink(node.config)
    assert 'config.yaml does not exist on the node' in fail(node.args())
    assert node.read() == KUBEADM


def test_directory_gets_a_directory_volume(node):
    directory = os.path.dirname(node.config)
    r = ok(node.args(mounts=[directory]))
    volumes = yaml.safe_load(node.read())['spec']['volumes']
    assert {'hostPath': {'path': directory, 'type': 'Directory'}, 'name': r['volumes'][0]} in volumes
    assert len(r['volumes']) == 1   # the config file lives in the mounted directory: no second mount


@pytest.mark.parametrize('args, message', [
    ({'arg': 'config=/x'}, 'must start with "--"'),
    ({'arg': ''}, 'arg is empty'),
    ({'arg': '--v=2\n--v=3'}, 'line break'),
    ({'mounts': ['relative/ca.crt']}, 'is relative'),
    ({'volume_prefix': 'Not_A_Label'}, 'volume_prefix'),
    ({'container': 'kube-apiserver'}, 'no container named kube-apiserver'),
])
def test_bad_options(node, args, message):
    assert message in fail(node.args(**args))
    assert node.read() == KUBEADM


@pytest.mark.parametrize('content, message', [
    (json.dumps(yaml.safe_load(KUBEADM), indent=2).encode(), 'JSON manifest'),
    (b'not: [valid\n', 'not valid YAML'),
    (KUBEADM + b'---\n' + KUBEADM, 'YAML documents'),
    (KUBEADM.replace(b'kind: Pod', b'kind: ConfigMap'), 'is not a Pod'),
    (KUBEADM.replace(b'  - command:\n', b'  - commands:\n'), 'has no command'),
])
def test_bad_manifests(node, content, message):
    with open(node.path, 'wb') as f:
        f.write(content)
    assert message in fail(node.args())
    with open(node.path, 'rb') as f:
        assert f.read() == content


def test_conflicting_config_names_it(node):
    other = KUBEADM.replace(b'    - --leader-elect=true\n', b'    - --leader-elect=true\n    - --config=/etc/kubernetes/other.yaml\n')
    with open(node.path, 'wb') as f:
        f.write(other)
    msg = fail(node.args())
    assert '--config=/etc/kubernetes/other.yaml' in msg and 'add the extender to that file instead' in msg
    assert node.read() == other


def test_users_argument_is_left_alone_with_warnings(node):
    mine = KUBEADM.replace(b'    - --leader-elect=true\n', b'    - --leader-elect=true\n    - %s\n' % node.arg.encode())
    with open(node.path, 'wb') as f:
        f.write(mine)
    r = ok(node.args())
    assert not r['changed'] and not r['restart_expected'] and r['warnings'] and 'not added by this module' in r['warnings'][0]
    r = ok(node.args(state='absent'))
    assert not r['changed'] and 'left in place' in r['warnings'][0]
    assert node.read() == mine


def test_crlf_manifest_keeps_its_line_endings(node):
    crlf = KUBEADM.replace(b'\n', b'\r\n')
    with open(node.path, 'wb') as f:
        f.write(crlf)
    ok(node.args(mounts=[node.ca]))
    data = node.read()
    assert data.count(b'\n') == data.count(b'\r\n') and node.arg.encode() + b'  # baremetal.k3s.static_pod_arg\r\n' in data
    ok(node.args(mounts=[node.ca], state='absent'))
    assert node.read() == crlf


def test_rke2_manifest_warns_that_rke2_rewrites_it(tmp_path, monkeypatch):
    pods = tmp_path / 'rke2' / 'agent' / 'pod-manifests'
    pods.mkdir(parents=True)
    shutil.copy(os.path.join(FIXTURES, 'kube-scheduler-kubeadm-v1.36.3.yaml.txt'), str(pods / 'kube-scheduler.yaml'))
    conf = tmp_path / 'config.yaml'
    conf.write_text('x\n')
    monkeypatch.setattr(sp, 'RKE2_STYLE_DIRS', (str(tmp_path) + '/*/agent/pod-manifests',))
    r = ok({'path': str(pods / 'kube-scheduler.yaml'), 'arg': '--config=%s' % conf})
    assert r['changed'] and any('written by RKE2 on every start' in w for w in r['warnings'])


def test_missing_pyyaml(node, monkeypatch):
    monkeypatch.setattr(sp, 'HAS_PYYAML', False)
    assert 'PyYAML' in fail(node.args())
    assert node.read() == KUBEADM


# -- documentation ------------------------------------------------------------------------------
def _argument_spec(node):
    seen = {}
    real_init = AnsibleModule.__init__

    def init(self, *a, **kw):
        seen.update(kw['argument_spec'])
        real_init(self, *a, **kw)

    with patch.object(AnsibleModule, '__init__', init):
        ok(node.args(), check_mode=True)
    return seen


def test_documentation_matches_the_argument_spec(node):
    doc = yaml.safe_load(static_pod_arg.DOCUMENTATION)
    spec = _argument_spec(node)
    assert sorted(doc['options']) == sorted(spec)
    for name, option in doc['options'].items():
        assert option['type'] == spec[name]['type'], name
        assert option.get('default') == spec[name].get('default'), name
        assert option.get('required', False) == spec[name].get('required', False), name
        assert option.get('choices') == spec[name].get('choices'), name
        assert option.get('elements') == spec[name].get('elements'), name
    assert any('kubeadm upgrade' in n and 'extraVolumes' in n and 'v1beta4' in n and 'v1beta3' in n for n in doc['notes'])
    examples = yaml.safe_load(static_pod_arg.EXAMPLES)
    assert all('baremetal.k3s.static_pod_arg' in task for task in examples)
    assert '#   - name: config\n#     value: /etc/kubernetes/scheduler/config.yaml' in static_pod_arg.EXAMPLES
    returned = yaml.safe_load(static_pod_arg.RETURN)
    assert set(returned) == {'changed', 'path', 'container', 'command', 'volumes', 'restart_expected', 'backup_file', 'diff'}


def _collections_root():
    """The directory holding ansible_collections/baremetal/k3s (ansible-test's tree, or conftest's symlink farm)."""
    from ansible_collections.baremetal.k3s import plugins  # pylint: disable=import-outside-toplevel
    path = list(plugins.__path__)[0]   # .../ansible_collections/baremetal/k3s/plugins
    for dummy in range(4):
        path = os.path.dirname(path)
    return path


def test_ansible_doc_renders():
    ansible_doc = os.path.join(os.path.dirname(sys.executable), 'ansible-doc')
    if not os.path.exists(ansible_doc):
        pytest.skip('ansible-doc is not installed next to this Python')
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=_collections_root(), ANSIBLE_NOCOLOR='1')
    out = subprocess.run([ansible_doc, '--json', 'baremetal.k3s.static_pod_arg'], env=env, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)['baremetal.k3s.static_pod_arg']
    assert doc['doc']['module'] == 'static_pod_arg' and 'restart_expected' in doc['return']
    assert doc['doc']['attributes']['check_mode']['support'] == 'full'
    text = subprocess.run([ansible_doc, 'baremetal.k3s.static_pod_arg'], env=env, capture_output=True, text=True, check=False)
    assert text.returncode == 0 and 'extraVolumes' in text.stdout, text.stderr
