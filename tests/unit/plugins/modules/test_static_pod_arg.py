# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Module tests of baremetal.k3s.static_pod_arg through its real main(), on a fake node: check/diff mode, backups,
the files list, errors, docs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from unittest.mock import patch

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _static_pod as sp
from ansible_collections.baremetal.k3s.plugins.modules import static_pod_arg

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import module_fail, module_ok

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'module_utils', 'fixtures')
with open(os.path.join(FIXTURES, 'kube-scheduler-kubeadm-v1.36.3.yaml.txt'), 'rb') as _f:
    KUBEADM = _f.read()

MANIFESTS = '/etc/kubernetes/manifests'
MANIFEST = MANIFESTS + '/kube-scheduler.yaml'
CONFIG = '/etc/kubernetes/scheduler/config.yaml'
CA = '/etc/kubernetes/scheduler/extender-ca.crt'
ARG = '--config=' + CONFIG
BACKUP_DIR = '/var/backups/baremetal-k3s'


@pytest.fixture(autouse=True)
def kubeadm(node):  # noqa: F811 pylint: disable=redefined-outer-name
    """Every test's node is a kubeadm control-plane node: the scheduler's manifest (0600) and the files it is given."""
    node.write(MANIFEST, KUBEADM, mode=0o600)
    node.write(CONFIG, 'x\n')
    node.write(CA, 'x\n')
    return node


def args(**kw):
    out = {'path': MANIFEST, 'arg': ARG, 'backup_dir': BACKUP_DIR}
    out.update(kw)
    return out


def ok(params, **kw):
    return module_ok(static_pod_arg, params, **kw)


def fail(params, **kw):
    return module_fail(static_pod_arg, params, **kw)


def test_present_twice_then_absent_is_identical(node):
    r = ok(args(mounts=[CA]))
    assert r['changed'] and r['restart_expected'] and r['path'] == MANIFEST and r['container'] == 'kube-scheduler'
    assert r['command'][0] == 'kube-scheduler' and r['command'][-1] == ARG
    assert len(r['volumes']) == 2 and all(v.startswith('baremetal-k3s-') and len(v) <= 63 for v in r['volumes'])
    assert 'backup_file' not in r and 'diff' not in r
    assert r['files'] == [{'path': MANIFEST, 'action': 'modified', 'backup_file': None}]
    data = yaml.safe_load(node.read(MANIFEST))
    c = data['spec']['containers'][0]
    assert c['command'][-1] == ARG
    assert {'mountPath': CONFIG, 'name': r['volumes'][0], 'readOnly': True} in c['volumeMounts']
    assert {'hostPath': {'path': CA, 'type': 'File'}, 'name': r['volumes'][1]} in data['spec']['volumes']
    assert node.mode(MANIFEST) == 0o600
    assert node.listdir(MANIFESTS) == ['kube-scheduler.yaml']   # no temp file, no backup left behind

    again = ok(args(mounts=[CA]))
    assert not again['changed'] and not again['restart_expected'] and again['volumes'] == r['volumes']
    assert again['files'] == []

    gone = ok(args(mounts=[CA], state='absent'))
    assert gone['changed'] and gone['restart_expected'] and gone['volumes'] == [] and ARG not in gone['command']
    assert node.read(MANIFEST) == KUBEADM
    assert node.mode(MANIFEST) == 0o600


def test_absent_needs_no_mounts(node):
    """The role no longer reads the manifest to find the volumes: absent finds every one of ours that served the argument."""
    present = ok(args(mounts=[CA]))
    gone = ok(args(state='absent'))
    assert gone['changed'] and gone['volumes'] == [] and not gone['warnings'] and node.read(MANIFEST) == KUBEADM
    assert gone['files'] == [{'path': MANIFEST, 'action': 'modified', 'backup_file': None}]
    assert present['volumes'] and not ok(args(state='absent'))['changed']


def test_a_path_left_out_of_mounts_is_unmounted(node):
    """An extender taken out of the list: its CA file is no longer among the mounts, and its volume goes."""
    second = '/etc/kubernetes/scheduler/second-ca.crt'
    node.write(second, 'x\n')
    one = ok(args(mounts=[CA]))
    with_one = node.read(MANIFEST)
    both = ok(args(mounts=[CA, second]))
    assert both['changed'] and len(both['volumes']) == 3
    back = ok(args(mounts=[CA]))
    assert back['changed'] and back['restart_expected'] and back['volumes'] == one['volumes']
    assert node.read(MANIFEST) == with_one
    assert not ok(args(mounts=[CA]))['changed']
    ok(args(state='absent'))
    assert node.read(MANIFEST) == KUBEADM


def test_a_volume_without_our_comment_is_not_unmounted(node):
    """A volume named like ours whose owner comment is gone may be anyone's: leaving its path out of mounts keeps it."""
    second = '/etc/kubernetes/scheduler/second-ca.crt'
    node.write(second, 'x\n')
    ok(args(mounts=[CA, second]))
    lines = node.read(MANIFEST).decode('utf-8').split('\n')
    # the owner comment sits on the line above each item (volume, mount) of ours; drop the ones of the second file's
    above = {i - 1 for i, line in enumerate(lines) if second in line} | {i - 2 for i, line in enumerate(lines) if second in line}
    node.write(MANIFEST, '\n'.join(line for i, line in enumerate(lines)
                                   if not (i in above and line.strip().startswith('# baremetal.k3s.static_pod_arg for '))),
               mode=0o600)
    before = node.read(MANIFEST)
    assert before.count(b'static_pod_arg for ') == 4 and second.encode() in before
    assert not ok(args(mounts=[CA]))['changed']
    assert node.read(MANIFEST) == before


def test_check_mode_and_diff_do_not_write(node):
    with patch.object(_io, 'write_file', side_effect=AssertionError('wrote in check mode')):
        r = ok(args(), check_mode=True, diff=True)
    assert r['changed'] and r['restart_expected'] and node.read(MANIFEST) == KUBEADM
    assert r['diff'][0]['before'] == KUBEADM.decode() and ARG in r['diff'][0]['after']
    assert r['diff'][0]['before_header'] == r['diff'][0]['after_header'] == MANIFEST
    assert r['command'][-1] == ARG
    assert r['files'] == [{'path': MANIFEST, 'action': 'modified', 'backup_file': None}]


def test_check_mode_predicts_a_config_an_earlier_task_creates(node):
    node.unlink(CONFIG)  # scheduler_config in check mode creates nothing
    r = ok(args(), check_mode=True)
    assert r['changed'] and r['command'][-1] == ARG and node.read(MANIFEST) == KUBEADM
    assert any('does not exist yet' in w and CONFIG in w for w in r['warnings'])
    assert 'does not exist on the node' in fail(args())  # the real run refuses it
    assert node.read(MANIFEST) == KUBEADM


def test_diff_mode_without_change(node):
    ok(args())
    r = ok(args(), diff=True)
    # the contract's diff: one entry per changed file, none when nothing changes
    assert not r['changed'] and 'diff' not in r and r['files'] == []


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
        ok(args())
        ok(args())
    assert calls == [node.p(MANIFEST)]
    assert len(moves) == 1 and os.path.basename(moves[0][0]).startswith('.') and moves[0][1] == node.p(MANIFEST)
    assert os.path.dirname(moves[0][0]) == node.p(MANIFESTS)


def test_runs_hold_the_manifest_lock(node):
    held = []
    real = _io.apply

    def apply(module, plan, **kw):
        held.append([(c.path, _io.locked(c.path)) for c in plan.changes])
        return real(module, plan, **kw)

    with patch.object(_io, 'apply', apply):
        ok(args())
    assert held == [[(MANIFEST, True)]]


@pytest.mark.skipif(os.geteuid() != 0, reason='chown needs root')
def test_owner_is_kept(node):
    os.chown(node.p(MANIFEST), 1234, 2345)
    ok(args())
    st = os.stat(node.p(MANIFEST))
    assert (st.st_uid, st.st_gid) == (1234, 2345)


def test_backup_goes_to_backup_dir(node):
    r = ok(args(backup=True))
    assert os.path.dirname(r['backup_file']) == BACKUP_DIR
    assert node.read(r['backup_file']) == KUBEADM
    assert r['files'] == [{'path': MANIFEST, 'action': 'modified', 'backup_file': r['backup_file']}]
    assert node.listdir(MANIFESTS) == ['kube-scheduler.yaml']
    assert 'backup_file' not in ok(args(backup=True))


@pytest.mark.parametrize('where', ['manifests', 'manifests/old', 'kubeadm-default', 'rke2'])
def test_backup_dir_in_a_manifest_dir_is_refused(node, where):
    backup_dir = {'manifests': MANIFESTS, 'manifests/old': MANIFESTS + '/old',
                  'kubeadm-default': '/etc/kubernetes/manifests/backups',
                  'rke2': '/var/lib/rancher/rke2/agent/pod-manifests'}[where]
    msg = fail(args(backup=True, backup_dir=backup_dir))
    assert 'inside a static-pod manifest directory' in msg and '/var/backups/baremetal-k3s' in msg
    assert node.read(MANIFEST) == KUBEADM and not node.exists(MANIFESTS + '/old')


def test_backup_dir_is_not_checked_without_backup(node):
    assert ok(args(backup_dir=MANIFESTS))['changed']


def test_path_errors(node):
    assert 'is relative' in fail(args(path='manifests/kube-scheduler.yaml'))
    assert 'does not exist' in fail(args(path=MANIFESTS + '/nope.yaml'))
    assert 'is a directory' in fail(args(path=MANIFESTS))


def test_missing_mount_fails_and_file_is_untouched(node):
    msg = fail(args(mounts=[CA, '/missing.crt']))
    assert 'missing.crt does not exist on the node' in msg and 'never start' in msg
    assert node.read(MANIFEST) == KUBEADM
    node.unlink(CONFIG)
    assert 'config.yaml does not exist on the node' in fail(args())
    assert node.read(MANIFEST) == KUBEADM


def test_directory_gets_a_directory_volume(node):
    directory = os.path.dirname(CONFIG)
    r = ok(args(mounts=[directory]))
    volumes = yaml.safe_load(node.read(MANIFEST))['spec']['volumes']
    assert {'hostPath': {'path': directory, 'type': 'Directory'}, 'name': r['volumes'][0]} in volumes
    assert len(r['volumes']) == 1   # the config file lives in the mounted directory: no second mount


@pytest.mark.parametrize('params, message', [
    ({'arg': 'config=/x'}, 'must start with "--"'),
    ({'arg': ''}, 'arg is empty'),
    ({'arg': '--v=2\n--v=3'}, 'line break'),
    ({'mounts': ['relative/ca.crt']}, 'is relative'),
    ({'volume_prefix': 'Not_A_Label'}, 'volume_prefix'),
    ({'container': 'kube-apiserver'}, 'no container named kube-apiserver'),
])
def test_bad_options(node, params, message):
    assert message in fail(args(**params))
    assert node.read(MANIFEST) == KUBEADM


@pytest.mark.parametrize('content, message', [
    (b'not: [valid\n', 'not valid YAML'),
    (KUBEADM + b'---\n' + KUBEADM, 'YAML documents'),
    (KUBEADM.replace(b'kind: Pod', b'kind: ConfigMap'), 'is not a Pod'),
    (KUBEADM.replace(b'  - command:\n', b'  - commands:\n'), 'has no command'),
])
def test_bad_manifests(node, content, message):
    node.write(MANIFEST, content)
    assert message in fail(args())
    assert node.read(MANIFEST) == content


def test_json_manifest_is_edited_and_stays_json(node):
    """Earlier versions refused a JSON manifest ("JSON manifest"); the kubelet reads it, and so does the module now."""
    content = json.dumps(yaml.safe_load(KUBEADM), indent=2).encode()
    node.write(MANIFEST, content)
    r = ok(args(mounts=[CA]))
    assert r['changed'] and json.loads(node.read(MANIFEST))['spec']['containers'][0]['command'][-1] == ARG
    assert not ok(args(mounts=[CA]))['changed']
    assert ok(args(state='absent'))['changed'] and node.read(MANIFEST) == content


def test_conflicting_config_names_it(node):
    other = KUBEADM.replace(b'    - --leader-elect=true\n', b'    - --leader-elect=true\n    - --config=/etc/kubernetes/other.yaml\n')
    node.write(MANIFEST, other)
    msg = fail(args())
    assert '--config=/etc/kubernetes/other.yaml' in msg and 'add the extender to that file instead' in msg
    assert node.read(MANIFEST) == other


def test_users_argument_is_left_alone_with_warnings(node):
    mine = KUBEADM.replace(b'    - --leader-elect=true\n', b'    - --leader-elect=true\n    - %s\n' % ARG.encode())
    node.write(MANIFEST, mine)
    r = ok(args())
    assert not r['changed'] and not r['restart_expected'] and r['warnings'] and 'not added by this module' in r['warnings'][0]
    r = ok(args(state='absent'))
    assert not r['changed'] and 'left in place' in r['warnings'][0]
    assert node.read(MANIFEST) == mine


def test_crlf_manifest_keeps_its_line_endings(node):
    crlf = KUBEADM.replace(b'\n', b'\r\n')
    node.write(MANIFEST, crlf)
    ok(args(mounts=[CA]))
    data = node.read(MANIFEST)
    assert data.count(b'\n') == data.count(b'\r\n')
    assert b'    # baremetal.k3s.static_pod_arg\r\n    - ' + ARG.encode() + b'\r\n' in data
    ok(args(mounts=[CA], state='absent'))
    assert node.read(MANIFEST) == crlf


def test_manifest_of_the_old_version_is_cleaned_without_mounts(node):
    old = KUBEADM.replace(
        b'    - --leader-elect=true\n',
        b'    - --leader-elect=true\n    - %s  # baremetal.k3s.static_pod_arg\n' % ARG.encode(),
    ).replace(
        b'      readOnly: true\n  hostNetwork',
        b'      readOnly: true\n    - mountPath: %s\n      name: baremetal-k3s-etc-kubernetes-scheduler-config-yaml\n'
        b'      readOnly: true\n    - mountPath: %s\n      name: baremetal-k3s-etc-kubernetes-scheduler-extender-ca-crt\n'
        b'      readOnly: true\n  hostNetwork' % (CONFIG.encode(), CA.encode()),
    ).replace(
        b'    name: kubeconfig\nstatus',
        b'    name: kubeconfig\n  - hostPath:\n      path: %s\n      type: File\n'
        b'    name: baremetal-k3s-etc-kubernetes-scheduler-config-yaml\n  - hostPath:\n      path: %s\n      type: File\n'
        b'    name: baremetal-k3s-etc-kubernetes-scheduler-extender-ca-crt\nstatus' % (CONFIG.encode(), CA.encode()),
    )
    node.write(MANIFEST, old)
    assert not ok(args(mounts=[CA]))['changed']
    r = ok(args(state='absent', backup=True))
    assert r['changed'] and r['volumes'] == [] and node.read(MANIFEST) == KUBEADM
    assert node.read(r['files'][0]['backup_file']) == old


def test_rke2_manifest_warns_that_rke2_rewrites_it(node):
    pods = '/var/lib/rancher/rke2/agent/pod-manifests/kube-scheduler.yaml'
    node.write(pods, KUBEADM)
    node.write('/etc/rancher/rke2/config.yaml', 'x\n')
    r = ok({'path': pods, 'arg': '--config=/etc/rancher/rke2/config.yaml'})
    assert r['changed'] and any('written by RKE2 on every start' in w for w in r['warnings'])
    assert not any('RKE2' in w for w in ok({'path': pods, 'arg': '--config=/etc/rancher/rke2/config.yaml'})['warnings'])


def test_missing_pyyaml(node, monkeypatch):
    monkeypatch.setattr(sp, 'HAS_PYYAML', False)
    assert 'PyYAML' in fail(args())
    assert node.read(MANIFEST) == KUBEADM


def test_failure_names_the_manifest(node):
    node.write(MANIFEST, b'not: [valid\n')
    failed = {}

    def fail_json(self, **kw):  # pylint: disable=unused-argument
        failed.update(kw)
        raise SystemExit(1)

    with patch.object(AnsibleModule, 'fail_json', fail_json):
        from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import set_module_args  # pylint: disable=import-outside-toplevel
        with set_module_args(args()), pytest.raises(SystemExit):
            static_pod_arg.main()
    assert failed['path'] == MANIFEST and 'not valid YAML' in failed['msg']


# -- documentation ------------------------------------------------------------------------------
def _argument_spec(node):  # pylint: disable=unused-argument
    seen = {}
    real_init = AnsibleModule.__init__

    def init(self, *a, **kw):
        seen.update(kw['argument_spec'])
        real_init(self, *a, **kw)

    with patch.object(AnsibleModule, '__init__', init):
        ok(args(), check_mode=True)
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
    # kubeadm upgrade drops a manifest-only change: the notes and the examples lead to kubeadm_config
    assert any('kubeadm upgrade' in n and 'M(baremetal.k3s.kubeadm_config)' in n for n in doc['notes'])
    examples = yaml.safe_load(static_pod_arg.EXAMPLES)
    assert [next(iter(set(task) & {'baremetal.k3s.static_pod_arg', 'baremetal.k3s.kubeadm_config'})) for task in examples][-1] \
        == 'baremetal.k3s.kubeadm_config'
    assert all(set(task) & {'baremetal.k3s.static_pod_arg', 'baremetal.k3s.kubeadm_config'} for task in examples)
    returned = yaml.safe_load(static_pod_arg.RETURN)
    assert set(returned) == {'changed', 'path', 'container', 'command', 'volumes', 'restart_expected', 'files', 'backup_file',
                             'diff'}


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
    assert doc['doc']['module'] == 'static_pod_arg' and 'restart_expected' in doc['return'] and 'files' in doc['return']
    assert doc['doc']['attributes']['check_mode']['support'] == 'full'
    text = subprocess.run([ansible_doc, 'baremetal.k3s.static_pod_arg'], env=env, capture_output=True, text=True, check=False)
    assert text.returncode == 0 and 'extraVolumes' in text.stdout, text.stderr
