# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The static pod line editor: kubeadm's real output and variants, ownership, mounts, bad input, and a property test."""

from __future__ import annotations

import copy
import os
import re

import pytest
import yaml

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.baremetal.k3s.plugins.module_utils import _static_pod as sp

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')
CONFIG = '/etc/kubernetes/scheduler/config.yaml'
ARG = '--config=' + CONFIG
TLS = ['/etc/kubernetes/scheduler/tls/ca.crt', '/etc/kubernetes/scheduler/tls/client.crt']
ODD = "--x=it's a \"test\" #1: ü"
# what exists on the "node" (hostPath type), for plan(kind_of=...)
NODE = {
    CONFIG: 'File',
    '/etc/kubernetes/scheduler': 'Directory',
    '/etc/kubernetes/scheduler/tls': 'Directory',
    TLS[0]: 'File',
    TLS[1]: 'File',
    '/etc/kubernetes/scheduler.conf': 'File',
    '/srv/extender/odd dir/it\'s #1.pem': 'File',
    '/srv/' + 'x' * 80 + '/Very.Long.Name.pem': 'File',
    '/run/extender.sock': 'Socket',
    '/dev/weird': 'other',
}


def fixture(name):
    with open(os.path.join(FIXTURES, name), 'rb') as f:
        return f.read()


KUBEADM = fixture('kube-scheduler-kubeadm-v1.36.3.yaml.txt')
OLDER = fixture('kube-scheduler-kubeadm-older.yaml.txt')
HAND = fixture('kube-scheduler-hand-edited.yaml.txt')


def _without_mount_keys(data):
    """kubeadm output with no volumeMounts / volumes keys at all."""
    text = data.decode()
    text = re.sub(r'    volumeMounts:\n(    - .*\n|      .*\n)+', '', text)
    text = re.sub(r'  volumes:\n(  - .*\n|    .*\n)+', '', text)
    return text.encode()


def _null_keys(data):
    """volumeMounts: / volumes: present but without items (null), as a hand edit may leave them."""
    text = _without_mount_keys(data).decode()
    text = text.replace('      timeoutSeconds: 15\n  hostNetwork', '      timeoutSeconds: 15\n    volumeMounts:\n  hostNetwork')
    text = text.replace('      type: RuntimeDefault\nstatus', '      type: RuntimeDefault\n  volumes:\nstatus')
    return text.encode()


VARIANTS = {
    'kubeadm-v1.36.3': KUBEADM,
    'older-kubeadm': OLDER,
    'hand-edited': HAND,
    'crlf': KUBEADM.replace(b'\n', b'\r\n'),
    'no-final-newline': KUBEADM[:-1],
    'no-status-no-final-newline': KUBEADM.replace(b'status: {}\n', b'')[:-1],
    'bom': b'\xef\xbb\xbf' + KUBEADM,
    'no-mount-keys': _without_mount_keys(KUBEADM),
    'no-mount-keys-crlf': _without_mount_keys(OLDER).replace(b'\n', b'\r\n'),
    'null-mount-keys': _null_keys(KUBEADM),
    'document-markers': b'---\n' + KUBEADM + b'...\n',
    'comments': KUBEADM.replace(b'spec:\n', b'# local change: see OPS-1\nspec:\n  # containers first\n').replace(
        b'    - --leader-elect=true\n', b'    - --leader-elect=true  # HA\n    # - --v=4\n'),
    'pyyaml-dump-indent4': yaml.safe_dump(yaml.safe_load(KUBEADM), default_flow_style=False, indent=4).encode(),
}


def plan(before, **params):
    params.setdefault('arg', ARG)
    params.setdefault('path', '/etc/kubernetes/manifests/kube-scheduler.yaml')
    return sp.plan(before, params, kind_of=NODE.get)


def load(data):
    return yaml.safe_load(data.decode('utf-8'))


def container(data, name='kube-scheduler'):
    return [c for c in load(data)['spec']['containers'] if c['name'] == name][0]


def our_lines(lines):
    """(indices of the lines this module adds, boundaries inside one of its items), found by their content alone.

    Ours: the argument line and created keys (they carry the marker comment); a mount item is the 3 lines
    "- mountPath", "name: baremetal-k3s-...", "readOnly: true"; a volume item the 4 lines "- hostPath:", "path",
    "type", "name: baremetal-k3s-...".
    """
    ours, inside = set(), set()
    for k, line in enumerate(lines):
        if line.endswith('  # baremetal.k3s.static_pod_arg'):
            ours.add(k)
            if line.strip().startswith(('volumes:', 'volumeMounts:')):
                inside.add(k + 1)
        elif line.lstrip().startswith('name: baremetal-k3s-'):
            if lines[k - 1].lstrip().startswith('- mountPath:'):
                span = range(k - 1, k + 2)
            else:
                assert lines[k - 3].lstrip() == '- hostPath:', lines[k - 3:k + 1]
                span = range(k - 3, k + 1)
            ours.update(span)
            inside.update(range(span[0] + 1, span[-1] + 1))
    return ours, inside


def mounted(data, path, name='kube-scheduler'):
    """Independent check: a hostPath volume at ``path`` (or a parent), mounted at the same path, no subPath."""
    volumes = {v['name']: (v.get('hostPath') or {}).get('path') for v in load(data)['spec'].get('volumes') or []}
    for m in container(data, name).get('volumeMounts') or []:
        mp = m['mountPath'].rstrip('/')
        if volumes.get(m['name'], '').rstrip('/') == mp and (path == mp or path.startswith(mp + '/')) and 'subPath' not in m:
            return True
    return False


# -- the real kubeadm output --------------------------------------------------------------------
def test_fixture_is_the_real_kubeadm_output():
    assert KUBEADM.startswith(b'apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n')
    assert KUBEADM.endswith(b'    name: kubeconfig\nstatus: {}\n')
    assert b'\r' not in KUBEADM and b'\t' not in KUBEADM


def test_kubeadm_exact_lines():
    r = plan(KUBEADM, mounts=TLS)
    assert r['changed'] and r['container'] == 'kube-scheduler' and not r['warnings']
    expected = KUBEADM.replace(
        b'    - --leader-elect=true\n',
        b'    - --leader-elect=true\n    - --config=/etc/kubernetes/scheduler/config.yaml  # baremetal.k3s.static_pod_arg\n',
    ).replace(
        b'      readOnly: true\n  hostNetwork',
        b'      readOnly: true\n'
        b'    - mountPath: /etc/kubernetes/scheduler/config.yaml\n'
        b'      name: baremetal-k3s-etc-kubernetes-scheduler-config-yaml\n'
        b'      readOnly: true\n'
        b'    - mountPath: /etc/kubernetes/scheduler/tls/ca.crt\n'
        b'      name: baremetal-k3s-etc-kubernetes-scheduler-tls-ca-crt\n'
        b'      readOnly: true\n'
        b'    - mountPath: /etc/kubernetes/scheduler/tls/client.crt\n'
        b'      name: baremetal-k3s-etc-kubernetes-scheduler-tls-client-crt\n'
        b'      readOnly: true\n'
        b'  hostNetwork',
    ).replace(
        b'    name: kubeconfig\nstatus',
        b'    name: kubeconfig\n'
        b'  - hostPath:\n'
        b'      path: /etc/kubernetes/scheduler/config.yaml\n'
        b'      type: File\n'
        b'    name: baremetal-k3s-etc-kubernetes-scheduler-config-yaml\n'
        b'  - hostPath:\n'
        b'      path: /etc/kubernetes/scheduler/tls/ca.crt\n'
        b'      type: File\n'
        b'    name: baremetal-k3s-etc-kubernetes-scheduler-tls-ca-crt\n'
        b'  - hostPath:\n'
        b'      path: /etc/kubernetes/scheduler/tls/client.crt\n'
        b'      type: File\n'
        b'    name: baremetal-k3s-etc-kubernetes-scheduler-tls-client-crt\n'
        b'status',
    )
    assert r['after'] == expected
    assert r['command'][-1] == ARG and r['command'][0] == 'kube-scheduler'
    assert r['volumes'] == ['baremetal-k3s-etc-kubernetes-scheduler-config-yaml', 'baremetal-k3s-etc-kubernetes-scheduler-tls-ca-crt',
                            'baremetal-k3s-etc-kubernetes-scheduler-tls-client-crt']


def test_created_keys_follow_kubeadm_order_and_carry_the_marker():
    before = VARIANTS['no-mount-keys']
    r = plan(before)
    text = r['after'].decode()
    assert ('      timeoutSeconds: 15\n    volumeMounts:  # baremetal.k3s.static_pod_arg\n'
            '    - mountPath: /etc/kubernetes/scheduler/config.yaml\n') in text
    assert ('      type: RuntimeDefault\n  volumes:  # baremetal.k3s.static_pod_arg\n  - hostPath:\n'
            '      path: /etc/kubernetes/scheduler/config.yaml\n      type: File\n'
            '    name: baremetal-k3s-etc-kubernetes-scheduler-config-yaml\nstatus: {}\n') in text
    assert plan(r['after'], state='absent')['after'] == before


@pytest.mark.parametrize('name', sorted(VARIANTS))
@pytest.mark.parametrize('arg, mounts', [
    (ARG, []),
    (ARG, TLS),
    ('--v=4', []),
    (ODD, ['/srv/extender/odd dir/it\'s #1.pem']),
    ('--feature-gates=A=true,B=false', ['/run/extender.sock', '/srv/' + 'x' * 80 + '/Very.Long.Name.pem']),
], ids=['config', 'config+tls', 'no-path', 'odd-quoting', 'socket+long-name'])
def test_variants_present_twice_then_absent_is_identical(name, arg, mounts):
    before = VARIANTS[name]
    r = plan(before, arg=arg, mounts=mounts)
    assert r['changed'], r
    after = r['after']
    assert container(after)['command'] == container(before)['command'] + [arg]
    for p in ([sp.arg_path(arg)] if sp.arg_path(arg) else []) + mounts:
        assert mounted(after, p), p
    for v in r['volumes']:
        assert len(v) <= 63 and re.match(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', v)
    assert len(set(r['volumes'])) == len(r['volumes'])
    # only whole lines were inserted: without them, the original lines, in order
    ours, dummy = our_lines(after.decode().splitlines())
    assert [line for i, line in enumerate(after.decode().splitlines()) if i not in ours] == before.decode().splitlines()
    if b'\r\n' in before:
        assert after.count(b'\n') == after.count(b'\r\n')
    again = plan(after, arg=arg, mounts=mounts)
    assert not again['changed'] and again['after'] == after
    gone = plan(after, arg=arg, mounts=mounts, state='absent')
    assert gone['changed'] and gone['after'] == before
    assert gone['volumes'] == [] and arg not in gone['command']
    assert not plan(before, arg=arg, mounts=mounts, state='absent')['changed']


def test_hand_edited_directory_mount_is_not_duplicated():
    r = plan(HAND, mounts=[TLS[0]])
    assert r['changed'] and r['volumes'] == []   # /etc/kubernetes/scheduler is mounted as a whole
    assert container(r['after'])['command'][-1] == ARG
    assert len(container(r['after'])['volumeMounts']) == 2
    assert b'- --config=/etc/kubernetes/scheduler/config.yaml  # baremetal.k3s.static_pod_arg\n' in r['after']
    # indented list style and 4-space mappings followed
    assert b'          - --leader-elect=true   # HA pair\n          - --config=' in r['after']
    assert plan(r['after'], mounts=[TLS[0]], state='absent')['after'] == HAND


def test_hand_edited_new_mount_follows_the_layout():
    r = plan(HAND, arg='--v=2', mounts=['/run/extender.sock'])
    text = r['after'].decode()
    assert ('          - name: scheduler-dir\n            mountPath: /etc/kubernetes/scheduler\n            readOnly: true\n'
            '          - mountPath: /run/extender.sock\n            name: baremetal-k3s-run-extender-sock\n'
            '            readOnly: true\n\n') in text
    assert ('            type: DirectoryOrCreate\n      - hostPath:\n            path: /run/extender.sock\n'
            '            type: Socket\n        name: baremetal-k3s-run-extender-sock\n    # end of volumes\n') in text
    assert plan(r['after'], arg='--v=2', mounts=['/run/extender.sock'], state='absent')['after'] == HAND


def test_sidecar_is_untouched_and_named_container_is_used():
    r = plan(HAND, container='kube-scheduler', arg='--v=2')
    assert container(r['after'], 'log-shipper') == container(HAND, 'log-shipper')
    with pytest.raises(sp.StaticPodError, match='flow style'):
        plan(HAND, container='log-shipper', arg='--v=2')


def test_default_container_is_the_one_named_like_the_pod_else_the_first():
    two = KUBEADM.replace(b'  containers:\n', b'  containers:\n  - command:\n    - /pause\n    name: pause\n')
    r = plan(two, arg='--v=2')
    assert r['container'] == 'kube-scheduler'
    renamed = two.replace(b'  name: kube-scheduler\n  namespace', b'  name: other-pod\n  namespace')
    r = plan(renamed, arg='--v=2')
    assert r['container'] == 'pause' and container(r['after'], 'pause')['command'] == ['/pause', '--v=2']


# -- foreign edits between present and absent -------------------------------------------------
def test_foreign_edits_survive_absent():
    r = plan(KUBEADM, mounts=[TLS[0]])
    edits = [
        # another argument, right after ours
        (b'# baremetal.k3s.static_pod_arg\n', b'# baremetal.k3s.static_pod_arg\n    - --v=2\n', b'    - --leader-elect=true\n',
         b'    - --leader-elect=true\n    - --v=2\n'),
        # a changed image tag
        (b'kube-scheduler:v1.36.3', b'kube-scheduler:v1.36.4', b'kube-scheduler:v1.36.3', b'kube-scheduler:v1.36.4'),
        # a comment
        (b'spec:\n', b'spec:\n  # tuned by ops\n', b'spec:\n', b'spec:\n  # tuned by ops\n'),
        # another volume and mount, after ours
        (b'status: {}', b'  - emptyDir: {}\n    name: scratch\nstatus: {}', b'status: {}', b'  - emptyDir: {}\n    name: scratch\nstatus: {}'),
        (b'  hostNetwork: true', b'    - mountPath: /scratch\n      name: scratch\n  hostNetwork: true',
         b'  hostNetwork: true', b'    - mountPath: /scratch\n      name: scratch\n  hostNetwork: true'),
        # a user edit of the kubeadm volume
        (b'type: FileOrCreate', b'type: File', b'type: FileOrCreate', b'type: File'),
    ]
    edited, expected = r['after'], KUBEADM
    for old, new, old_orig, new_orig in edits:
        assert edited.count(old) == 1 and expected.count(old_orig) == 1, old
        edited = edited.replace(old, new)
        expected = expected.replace(old_orig, new_orig)
    gone = plan(edited, mounts=[TLS[0]], state='absent')
    assert gone['after'] == expected
    assert container(gone['after'])['command'][-1] == '--v=2'


def test_two_args_share_a_volume_and_created_keys_go_last():
    before = VARIANTS['no-mount-keys']
    a = plan(before, mounts=[TLS[0]])['after']
    b = plan(a, arg='--tls-ca=' + TLS[0])['after']
    assert b.count(b'mountPath: ' + TLS[0].encode()) == 1
    # removing the first keeps the volume the second still names
    r = plan(b, mounts=[TLS[0]], state='absent')
    assert any('still needs it' in w for w in r['warnings'])
    assert mounted(r['after'], TLS[0]) and not mounted(r['after'], CONFIG)
    assert b'volumes:  # baremetal.k3s.static_pod_arg' in r['after']
    r = plan(r['after'], arg='--tls-ca=' + TLS[0], state='absent')
    assert r['after'] == before


# -- ownership -----------------------------------------------------------------------------------
def _user_arg(data, arg=ARG):
    return data.replace(b'    - --leader-elect=true\n', b'    - --leader-elect=true\n    - %s\n' % arg.encode())


def test_users_argument_without_our_volume_is_left_alone():
    before = _user_arg(KUBEADM)
    r = plan(before)
    assert not r['changed'] and r['after'] == before and r['volumes'] == []
    assert len(r['warnings']) == 1 and 'not added by this module' in r['warnings'][0]
    assert CONFIG in r['warnings'][0] and 'not mounted' in r['warnings'][0]
    r = plan(before, state='absent')
    assert not r['changed'] and r['after'] == before
    assert 'left in place' in r['warnings'][0]


def test_users_argument_with_its_own_mount_warns_nothing_missing():
    before = _user_arg(HAND)
    before = before.replace(b'          - --leader-elect=true   # HA pair\n',
                            b'          - --leader-elect=true   # HA pair\n          - %s\n' % ARG.encode())
    r = plan(before)
    assert not r['changed'] and 'not mounted' not in r['warnings'][0]


def test_argument_with_our_volume_but_no_marker_is_ours():
    r = plan(KUBEADM)
    stripped = r['after'].replace(b'  # baremetal.k3s.static_pod_arg', b'')
    assert not plan(stripped)['changed']
    gone = plan(stripped, state='absent')
    assert load(gone['after']) == load(KUBEADM) and gone['volumes'] == []


def test_absent_cleans_our_volumes_when_the_argument_was_removed_by_hand():
    r = plan(KUBEADM)
    by_hand = r['after'].replace(b'    - --config=/etc/kubernetes/scheduler/config.yaml  # baremetal.k3s.static_pod_arg\n', b'')
    assert plan(by_hand, state='absent')['after'] == KUBEADM


def test_other_prefix_is_not_ours():
    r = plan(KUBEADM, volume_prefix='acme')
    assert r['volumes'] == ['acme-etc-kubernetes-scheduler-config-yaml']
    other = plan(r['after'], volume_prefix='baremetal-k3s', arg='--v=3')
    assert other['volumes'] == []
    assert plan(r['after'], volume_prefix='acme', state='absent')['after'] == KUBEADM


@pytest.mark.parametrize('existing, shown', [
    ('--config=/etc/kubernetes/other.yaml', '--config=/etc/kubernetes/other.yaml'),
    ('--config', '--config /etc/kubernetes/other.yaml'),
])
def test_other_config_is_a_conflict(existing, shown):
    before = _user_arg(KUBEADM, existing)
    if existing == '--config':
        before = _user_arg(before, '/etc/kubernetes/other.yaml').replace(
            b'    - /etc/kubernetes/other.yaml\n    - --config\n', b'    - --config\n    - /etc/kubernetes/other.yaml\n')
    with pytest.raises(sp.StaticPodError) as e:
        plan(before)
    assert shown in str(e.value) and 'add the extender to that file instead' in str(e.value)


def test_same_flag_other_value_is_a_conflict():
    before = plan(KUBEADM, arg='--v=2')['after']
    with pytest.raises(sp.StaticPodError, match='already has --v=2'):
        plan(before, arg='--v=4')
    with pytest.raises(sp.StaticPodError, match='--leader-elect=true'):
        plan(KUBEADM, arg='--leader-elect=false')


# -- mounts ---------------------------------------------------------------------------------------
def test_missing_paths_fail_and_nothing_is_planned():
    with pytest.raises(sp.StaticPodError, match='/etc/kubernetes/nope.yaml does not exist on the node'):
        plan(KUBEADM, arg='--config=/etc/kubernetes/nope.yaml')
    with pytest.raises(sp.StaticPodError, match='/etc/tls/missing.crt does not exist'):
        plan(KUBEADM, mounts=['/etc/tls/missing.crt'])
    with pytest.raises(sp.StaticPodError, match='neither a file'):
        plan(KUBEADM, mounts=['/dev/weird'])
    # absent does not need the files any more
    assert not plan(KUBEADM, arg='--config=/etc/kubernetes/nope.yaml', state='absent')['changed']


def test_url_path_value_fails_with_a_hint():
    with pytest.raises(sp.StaticPodError, match='set mount_arg_path=false'):
        plan(KUBEADM, arg='--authorization-always-allow-paths=/healthz,/readyz')
    r = plan(KUBEADM, arg='--authorization-always-allow-paths=/healthz,/readyz', mount_arg_path=False)
    assert r['changed'] and r['volumes'] == []


def test_file_inside_a_directory_to_mount_gets_no_mount_of_its_own():
    r = plan(KUBEADM, mounts=['/etc/kubernetes/scheduler'])
    assert r['volumes'] == ['baremetal-k3s-etc-kubernetes-scheduler']
    assert load(r['after'])['spec']['volumes'][-1]['hostPath'] == {'path': '/etc/kubernetes/scheduler', 'type': 'Directory'}
    assert mounted(r['after'], CONFIG)
    assert plan(r['after'], mounts=['/etc/kubernetes/scheduler'], state='absent')['after'] == KUBEADM


def test_container_path_is_not_mounted_when_asked():
    r = plan(KUBEADM, arg='--config=/inside/the/image.yaml', mount_arg_path=False)
    assert r['changed'] and r['volumes'] == []
    assert plan(r['after'], arg='--config=/inside/the/image.yaml', mount_arg_path=False, state='absent')['after'] == KUBEADM


def test_existing_mount_at_the_same_path_from_another_volume_fails():
    before = KUBEADM.replace(b'    - mountPath: /etc/kubernetes/scheduler.conf\n',
                             b'    - mountPath: /etc/kubernetes/scheduler/config.yaml\n      name: cm\n'
                             b'    - mountPath: /etc/kubernetes/scheduler.conf\n')
    with pytest.raises(sp.StaticPodError, match='already mounts volume cm at /etc/kubernetes/scheduler/config.yaml'):
        plan(before)


def test_covering_volume_must_be_the_same_path_on_both_sides():
    # /srv/x on the host shown at /etc/kubernetes/scheduler: it does not cover our file
    before = HAND.replace(b'            path: /etc/kubernetes/scheduler\n', b'            path: /srv/x\n')
    r = plan(before)
    assert r['volumes'] == ['baremetal-k3s-etc-kubernetes-scheduler-config-yaml']
    assert plan(r['after'], state='absent')['after'] == before
    # a subPath mount does not cover either
    before = HAND.replace(b'            mountPath: /etc/kubernetes/scheduler\n',
                          b'            mountPath: /etc/kubernetes/scheduler\n            subPath: x\n')
    assert plan(before)['volumes'] == ['baremetal-k3s-etc-kubernetes-scheduler-config-yaml']


def test_volume_names_are_valid_unique_and_short():
    long_path = '/srv/' + 'x' * 80 + '/Very.Long.Name.pem'
    name = sp.volume_name('baremetal-k3s', long_path, set())
    assert len(name) <= 63 and name.startswith('baremetal-k3s-srv-xxx') and re.match(r'^[a-z0-9-]+[a-z0-9]$', name)
    taken = {'baremetal-k3s-etc-a-b'}
    other = sp.volume_name('baremetal-k3s', '/etc/a.b', taken)
    assert other != 'baremetal-k3s-etc-a-b' and other.startswith('baremetal-k3s-etc-a-b-') and len(other) <= 63
    assert sp.volume_name('p', '/etc/a.b', taken | {other}) != other
    # a user volume already called like ours for another path: ours gets another name, theirs stays
    before = KUBEADM.replace(b'    name: kubeconfig\nstatus', b'    name: kubeconfig\n  - emptyDir: {}\n'
                             b'    name: baremetal-k3s-etc-kubernetes-scheduler-config-yaml\nstatus')
    r = plan(before)
    assert len(set(v['name'] for v in load(r['after'])['spec']['volumes'])) == 3
    assert plan(r['after'], state='absent')['after'] == before


def test_paths_are_normalised():
    r = plan(KUBEADM, arg='--config=/etc/kubernetes//scheduler/./config.yaml', mounts=[TLS[0] + '/'])
    assert r['volumes'] == ['baremetal-k3s-etc-kubernetes-scheduler-config-yaml', 'baremetal-k3s-etc-kubernetes-scheduler-tls-ca-crt']
    assert b'mountPath: /etc/kubernetes/scheduler/config.yaml\n' in r['after']


# -- bad input ------------------------------------------------------------------------------------
BAD_FILES = [
    (b'', 'is empty'),
    (b'# nothing\n', 'is empty'),
    (b'apiVersion: v1\nkind: Pod\nspec: [\n', 'not valid YAML'),
    (KUBEADM + b'---\n' + KUBEADM, '2 YAML documents'),
    (b'- a\n- b\n', 'not a Kubernetes object'),
    (KUBEADM.replace(b'kind: Pod', b'kind: Deployment'), 'is not a Pod'),
    (KUBEADM.replace(b'kind: Pod\n', b''), 'kind: missing'),
    (b'apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n', 'no spec'),
    (b'apiVersion: v1\nkind: Pod\nspec:\n  containers: []\n', 'no containers'),
    (b'apiVersion: v1\nkind: Pod\nspec:\n  hostNetwork: true\n', 'no containers'),
    (b'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    image: b\n', 'has no command'),
    (b'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    command: kube-scheduler --v=2\n', 'command of container a is not a list'),
    (b'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    command: [kube-scheduler]\n', 'flow style'),
    (b'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    command:\n    - [x]\n', 'non-string item'),
    (b'{"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "a", "command": ["x"]}]}}\n', 'JSON manifest'),
    (b'apiVersion: v1\nkind: Pod\nspec: {containers: [{name: a, command: [x]}]}\n', 'flow style'),
    (KUBEADM.replace(b'  volumes:\n  - hostPath:\n      path: /etc/kubernetes/scheduler.conf\n      type: FileOrCreate\n'
                     b'    name: kubeconfig\n', b'  volumes: []\n'), 'spec.volumes (line 67) is not a block list'),
    (KUBEADM.replace(b'    volumeMounts:\n', b'    volumeMounts: 3\n    x:\n'), 'volumeMounts'),
    (KUBEADM.replace(b'kind: Pod\n', b'kind: Pod\nkind: Pod\n'), "key 'kind' appears twice"),
    (b'x: &c\n- a\n' + KUBEADM.replace(b'  - command:\n    - kube-scheduler\n', b'  - command: *c\n    y:\n    - kube-scheduler\n'),
     'anchors and aliases'),
    (b'\xff\xfeapiVersion', 'not UTF-8'),
    (KUBEADM.replace(b'\n', b'\r'), 'other than LF or CRLF'),
    (KUBEADM.replace(b'spec:\n', b'spec:  # \xc2\x85\n'), 'other than LF or CRLF'),
    (KUBEADM.replace(b'registry.k8s.io/kube-scheduler:v1.36.3', b'!!python/object/apply:os.system [id]'), 'cannot be read safely'),
]


@pytest.mark.parametrize('data, message', BAD_FILES, ids=[str(i) for i in range(len(BAD_FILES))])
def test_bad_files(data, message):
    with pytest.raises(sp.StaticPodError) as e:
        plan(data, arg='--v=2')
    assert message in str(e.value)


def test_named_container_absent():
    with pytest.raises(sp.StaticPodError, match='no container named kube-apiserver .containers: kube-scheduler'):
        plan(KUBEADM, container='kube-apiserver')


@pytest.mark.parametrize('arg, message', [
    ('', 'arg is empty'),
    ('   ', 'arg is empty'),
    (None, 'arg is empty'),
    ('config=/x', 'must start with "--"'),
    ('-v=2', 'must start with "--"'),
    ('--', 'must start with "--"'),
    ('--=x', 'must start with "--"'),
    ('---x', 'must start with "--"'),
    ('--v=2\n--v=3', 'line break'),
    ('--v=2\r', 'line break'),
    ('--v=\u2028', 'line break'),
    ('--v=\0', 'NUL'),
    (' --v=2', 'white space'),
    ('--v=2 ', 'white space'),
])
def test_bad_args(arg, message):
    with pytest.raises(sp.StaticPodError, match=re.escape(message)):
        plan(KUBEADM, arg=arg)


@pytest.mark.parametrize('mounts, message', [
    (['etc/tls/ca.crt'], 'is relative'),
    ([''], 'empty entry'),
    (['/'], 'whole container file system'),
    (['/etc/a\nb'], 'line break'),
])
def test_bad_mounts(mounts, message):
    with pytest.raises(sp.StaticPodError, match=re.escape(message)):
        plan(KUBEADM, mounts=mounts)


@pytest.mark.parametrize('prefix', ['Baremetal', 'a_b', '-a', 'a-', 'x' * 41, 'a.b'])
def test_bad_prefix(prefix):
    with pytest.raises(sp.StaticPodError, match='volume_prefix'):
        plan(KUBEADM, volume_prefix=prefix)


def test_flag_helpers():
    assert sp.validate_arg(ARG) == 'config'
    assert sp.flag_name('--leader-elect') == 'leader-elect' and sp.flag_name('kube-scheduler') is None and sp.flag_name(3) is None
    assert sp.arg_path('--config=/a//b/') == '/a/b' and sp.arg_path('/x') == '/x'
    assert sp.arg_path('--v=2') is None and sp.arg_path('--x=a=/b') is None and sp.arg_path(None) is None


@pytest.mark.parametrize('value', [ARG, ODD, '--a: b', '--a=b #c', "--q='x'", '--t=a\tb', '--u=\u00e9\u2603\U0001f600',
                                   '--c=\x07bell', '--e=', '--d="', '/a b', '--trailing:', "it's", '--x=@{}[],&*!|>%'])
def test_render_scalar_round_trip(value):
    text = sp.render_scalar(value)
    assert '\n' not in text
    assert yaml.safe_load('- %s  # c\n' % text) == [value]
    assert yaml.safe_load('k: %s\n' % text) == {'k': value}


def test_render_scalar_prefers_plain():
    assert sp.render_scalar(ARG) == ARG
    assert sp.render_scalar('--feature-gates=A=true,B=false') == '--feature-gates=A=true,B=false'
    assert sp.render_scalar('/srv/a b') == "'/srv/a b'"


# -- backup_dir and path ---------------------------------------------------------------------------
@pytest.mark.parametrize('backup_dir', [
    '/etc/kubernetes/manifests', '/etc/kubernetes/manifests/', '/etc/kubernetes/manifests/old',
    '/var/lib/rancher/rke2/agent/pod-manifests', '/var/lib/rancher/k3s/agent/pod-manifests/bak',
    '/srv/pods', '/srv/pods/backups',
])
def test_backup_dir_in_a_manifest_dir_is_refused(backup_dir):
    with pytest.raises(sp.StaticPodError, match='inside a static-pod manifest directory'):
        sp.check_backup_dir(backup_dir, '/srv/pods/kube-scheduler.yaml')


@pytest.mark.parametrize('backup_dir', ['/var/backups/baremetal-k3s', '/etc/kubernetes/manifests-backup', '/srv'])
def test_backup_dir_elsewhere_is_fine(backup_dir):
    sp.check_backup_dir(backup_dir, '/srv/pods/kube-scheduler.yaml')


def test_backup_dir_through_a_symlink_is_refused(tmp_path):
    pods = tmp_path / 'pods'
    pods.mkdir()
    (tmp_path / 'link').symlink_to(pods)
    with pytest.raises(sp.StaticPodError, match='inside a static-pod manifest directory'):
        sp.check_backup_dir(str(tmp_path / 'link' / 'bak'), str(pods / 'kube-scheduler.yaml'))
    with pytest.raises(sp.StaticPodError, match='absolute'):
        sp.check_backup_dir('backups', str(pods / 'kube-scheduler.yaml'))


def test_check_manifest_path(tmp_path):
    with pytest.raises(sp.StaticPodError, match='relative'):
        sp.check_manifest_path('manifests/kube-scheduler.yaml')
    with pytest.raises(sp.StaticPodError, match='does not exist'):
        sp.check_manifest_path(str(tmp_path / 'nope.yaml'))
    with pytest.raises(sp.StaticPodError, match='is a directory'):
        sp.check_manifest_path(str(tmp_path))


def test_path_kind(tmp_path):
    (tmp_path / 'f').write_text('x')
    assert sp.path_kind(str(tmp_path / 'f')) == 'File'
    assert sp.path_kind(str(tmp_path)) == 'Directory'
    assert sp.path_kind(str(tmp_path / 'missing')) is None
    assert sp.path_kind('/dev/null') == 'CharDevice'


# -- property: generated manifests and arguments ------------------------------------------------------
POOL_ARGS = ['--authentication-kubeconfig=/etc/kubernetes/scheduler.conf', '--bind-address=127.0.0.1',
             '--leader-elect=true', '--v=2', "--odd=it's #x", '--feature-gates=A=true', '--profiling']
OUR_ARGS = [ARG, '--v=4', ODD, '--tls-ca=' + TLS[0], '--pod-max-in-unschedulable-pods-duration=5m']
MOUNT_POOL = [TLS[0], TLS[1], '/etc/kubernetes/scheduler/tls', '/srv/extender/odd dir/it\'s #1.pem',
              '/srv/' + 'x' * 80 + '/Very.Long.Name.pem', '/run/extender.sock']
USER_VOLUMES = [('kubeconfig', '/etc/kubernetes/scheduler.conf', 'FileOrCreate'),
                ('scheduler-dir', '/etc/kubernetes/scheduler', 'Directory'),
                ('tls', '/etc/kubernetes/scheduler/tls', 'Directory'),
                ('elsewhere', '/srv/other', 'Directory')]


def _scalar_styles(draw, value):
    plain = sp.render_scalar(value)
    return draw(st.sampled_from([plain, "'%s'" % value.replace("'", "''"), sp._double_quoted(value)]))  # pylint: disable=protected-access


class _Emitter:
    """A small block-YAML writer with a chosen layout, so the property test covers more than one style."""

    def __init__(self, indent, offset):
        self.indent = indent
        self.offset = offset
        self.lines = []

    def mapping(self, items, col, first_prefix=None):
        for i, (key, value) in enumerate(items):
            lead = first_prefix if (i == 0 and first_prefix is not None) else ' ' * col
            if isinstance(value, list):
                self.lines.append('%s%s:' % (lead, key))
                self.sequence(value, col + self.offset)
            elif isinstance(value, tuple):  # a nested mapping
                self.lines.append('%s%s:' % (lead, key))
                self.mapping(list(value), col + self.indent)
            else:
                self.lines.append('%s%s: %s' % (lead, key, value))

    def sequence(self, items, col):
        for item in items:
            if isinstance(item, tuple):
                self.mapping(list(item), col + 2, first_prefix=' ' * col + '- ')
            else:
                self.lines.append('%s- %s' % (' ' * col, item))


@st.composite
def scenarios(draw):
    arg = draw(st.sampled_from(OUR_ARGS))
    flag = sp.flag_name(arg)
    args = draw(st.lists(st.sampled_from([a for a in POOL_ARGS if sp.flag_name(a) != flag]), unique=True, max_size=5))
    users_arg = draw(st.integers(0, 9)) == 0
    if users_arg:
        args.insert(draw(st.integers(0, len(args))), arg)
    command = [draw(st.sampled_from(['kube-scheduler', '/usr/local/bin/kube-scheduler']))]
    command += [_scalar_styles(draw, a) for a in args]
    user_volumes = draw(st.lists(st.sampled_from(USER_VOLUMES), unique=True, max_size=3))
    mounts_of = draw(st.sampled_from(['block', 'null', 'missing']))
    volumes_of = draw(st.sampled_from(['block', 'null', 'missing'])) if not user_volumes else 'block'
    if mounts_of == 'block' and not user_volumes:
        mounts_of = draw(st.sampled_from(['null', 'missing']))
    ours = [('command', command), ('image', 'registry.k8s.io/kube-scheduler:v1.%d.0' % draw(st.integers(20, 36))),
            ('imagePullPolicy', 'IfNotPresent'), ('name', 'kube-scheduler'),
            ('resources', (('requests', (('cpu', '100m'),)),))]
    if mounts_of == 'block':
        ours.append(('volumeMounts', [(('mountPath', p), ('name', n), ('readOnly', 'true')) for n, p, dummy in user_volumes]))
    elif mounts_of == 'null':
        ours.append(('volumeMounts', ''))
    if draw(st.booleans()):
        ours = draw(st.permutations(ours))
    others = [(('command', ['/pause']), ('image', 'pause:3.9'), ('name', 'side-%d' % i)) for i in range(draw(st.integers(0, 2)))]
    containers = others + [tuple(ours)]
    containers = draw(st.permutations(containers))
    spec = [('containers', list(containers)), ('hostNetwork', 'true'), ('priorityClassName', 'system-node-critical')]
    if volumes_of == 'block':
        spec.append(('volumes', [(('hostPath', (('path', p), ('type', t))), ('name', n)) for n, p, t in user_volumes]))
    elif volumes_of == 'null':
        spec.append(('volumes', ''))
    if draw(st.booleans()):
        spec = draw(st.permutations(spec))
    doc = [('apiVersion', 'v1'), ('kind', 'Pod'),
           ('metadata', (('creationTimestamp', 'null'),) * draw(st.integers(0, 1)) + (('name', 'kube-scheduler'), ('namespace', 'kube-system'))),
           ('spec', tuple(spec))]
    if draw(st.booleans()):
        doc.append(('status', '{}'))
    em = _Emitter(draw(st.sampled_from([2, 4])), draw(st.sampled_from([0, 2])))
    em.mapping(doc, 0)
    lines = em.lines
    # comments: trailing ones on some lines, whole-line ones (any indentation) and blank lines between
    out = []
    for line in lines:
        if draw(st.integers(0, 12)) == 0:
            out.append(' ' * draw(st.integers(0, 8)) + '# ' + draw(st.sampled_from(['note', 'TODO: x', '- --v=9', 'volumes:'])))
        if draw(st.integers(0, 20)) == 0:
            out.append('')
        out.append(line + ('  # c' if draw(st.integers(0, 10)) == 0 else ''))
    nl = draw(st.sampled_from(['\n', '\r\n']))
    text = nl.join(out) + (nl if draw(st.integers(0, 4)) else '')
    mounts = draw(st.lists(st.sampled_from(MOUNT_POOL), unique=True, max_size=3))
    return text.encode(), arg, mounts, users_arg


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.data())
def test_property_present_absent_byte_exact(scenario, data):
    before, arg, mounts, users_arg = scenario
    r = plan(before, arg=arg, mounts=mounts)
    after = r['after']
    if users_arg:
        assert not r['changed'] and after == before and r['warnings']
        gone = plan(before, arg=arg, mounts=mounts, state='absent')
        assert not gone['changed'] and gone['after'] == before
        return
    assert r['changed']
    b_data, a_data = load(before), load(after)
    assert container(after)['command'] == container(before)['command'] + [arg]
    for p in ([sp.arg_path(arg)] if sp.arg_path(arg) else []) + mounts:
        assert mounted(after, p), p
    # nothing else changed in the data
    for d in (b_data, a_data):
        for c in d['spec']['containers']:
            if c['name'] == 'kube-scheduler':
                c.pop('command')
                c['volumeMounts'] = [m for m in c.get('volumeMounts') or [] if not m['name'].startswith('baremetal-k3s-')]
        d['spec']['volumes'] = [v for v in d['spec'].get('volumes') or [] if not v['name'].startswith('baremetal-k3s-')]
    assert a_data == b_data
    # line insertions only
    b_lines, a_lines = before.decode().splitlines(), after.decode().splitlines()
    ours, inside = our_lines(a_lines)
    assert [line for i, line in enumerate(a_lines) if i not in ours] == b_lines
    # idempotent
    again = plan(after, arg=arg, mounts=mounts)
    assert not again['changed'] and again['after'] == after
    # absent gives back the original bytes
    assert plan(after, arg=arg, mounts=mounts, state='absent')['after'] == before
    # a foreign comment line inserted outside our lines survives absent; so does a changed image tag
    boundaries = [i for i in range(len(a_lines)) if i not in inside]
    at = data.draw(st.sampled_from(boundaries))
    nl = '\r\n' if b'\r\n' in before else '\n'
    comment = ' ' * data.draw(st.integers(0, 6)) + '# foreign edit'
    edited_lines = a_lines[:at] + [comment] + a_lines[at:]
    orig_at = sum(1 for i in range(at) if i not in ours)
    expected_lines = b_lines[:orig_at] + [comment] + b_lines[orig_at:]
    tail = nl if after.endswith(b'\n') else ''
    edited = (nl.join(edited_lines) + tail).encode()
    expected = (nl.join(expected_lines) + (nl if before.endswith(b'\n') else '')).encode()
    edited = edited.replace(b'kube-scheduler:v1.', b'kube-scheduler:v2.')
    expected = expected.replace(b'kube-scheduler:v1.', b'kube-scheduler:v2.')
    assert plan(edited, arg=arg, mounts=mounts, state='absent')['after'] == expected


def test_expected_data_guard_refuses_a_bad_edit(monkeypatch):
    """If the line editor ever produced anything but the intended change, nothing would be written."""
    real = sp._Editor.append_arg  # pylint: disable=protected-access

    def broken(self, arg):
        real(self, arg)
        self.expected = copy.deepcopy(self.expected)
        self.expected['spec']['hostNetwork'] = False

    monkeypatch.setattr(sp._Editor, 'append_arg', broken)  # pylint: disable=protected-access
    with pytest.raises(sp.StaticPodError, match='nothing was written'):
        plan(KUBEADM)
