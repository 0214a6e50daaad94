# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_static_pod.plan(view, params) on a fake node: kubeadm's real output and variants (YAML in every layout, flow
lists, JSON), ownership (marker comments, the volume prefix, manifests written by earlier versions), mounts, bad
input, and a property test."""

from __future__ import annotations

import json
import os
import re

import pytest
import yaml

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.baremetal.k3s.plugins.module_utils import _static_pod as sp
from ansible_collections.baremetal.k3s.plugins.module_utils import _goyaml as gy
from ansible_collections.baremetal.k3s.plugins.module_utils import _yamledit as ye
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import View

from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.fake_node import node  # noqa: F401 pylint: disable=unused-import

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')
MANIFEST = '/etc/kubernetes/manifests/kube-scheduler.yaml'
CONFIG = '/etc/kubernetes/scheduler/config.yaml'
ARG = '--config=' + CONFIG
TLS = ['/etc/kubernetes/scheduler/tls/ca.crt', '/etc/kubernetes/scheduler/tls/client.crt']
ODD = "--x=it's a \"test\" #1: ü"
MARK = b'# baremetal.k3s.static_pod_arg'
# what exists on the node (as the hostPath type it is); every test's node has these
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


def _json(data, indent=2):
    return (json.dumps(gy.load(data).to_dict(), indent=indent) + '\n').encode()


COMMAND_BLOCK = (b'  - command:\n    - kube-scheduler\n    - --authentication-kubeconfig=/etc/kubernetes/scheduler.conf\n'
                 b'    - --authorization-kubeconfig=/etc/kubernetes/scheduler.conf\n    - --bind-address=127.0.0.1\n'
                 b'    - --kubeconfig=/etc/kubernetes/scheduler.conf\n    - --leader-elect=true\n')
MOUNTS_BLOCK = b'    volumeMounts:\n    - mountPath: /etc/kubernetes/scheduler.conf\n      name: kubeconfig\n      readOnly: true\n'
VOLUMES_BLOCK = (b'  volumes:\n  - hostPath:\n      path: /etc/kubernetes/scheduler.conf\n      type: FileOrCreate\n'
                 b'    name: kubeconfig\n')


def _flow_lists(data):
    """The command, the volumeMounts and the volumes as flow lists on one line each."""
    return data.replace(COMMAND_BLOCK, b'  - command: [kube-scheduler, --authentication-kubeconfig=/etc/kubernetes/scheduler.conf, '
                        b'--bind-address=127.0.0.1, --kubeconfig=/etc/kubernetes/scheduler.conf, --leader-elect=true]\n').replace(
        MOUNTS_BLOCK, b'    volumeMounts: [{mountPath: /etc/kubernetes/scheduler.conf, name: kubeconfig, readOnly: true}]\n').replace(
        VOLUMES_BLOCK, b'  volumes: [{hostPath: {path: /etc/kubernetes/scheduler.conf, type: FileOrCreate}, name: kubeconfig}]\n')


def _flow_per_line(data):
    """The command as a flow list written one item per line."""
    return data.replace(COMMAND_BLOCK, b'  - command: [\n      kube-scheduler,\n      --kubeconfig=/etc/kubernetes/scheduler.conf,\n'
                        b'      --leader-elect=true\n    ]\n')


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

# point 3 of the contract: the forms a kubelet reads, edited and given back byte for byte
FORMS = {
    'kubeadm': KUBEADM,
    'crlf': KUBEADM.replace(b'\n', b'\r\n'),
    'comments': VARIANTS['comments'],
    'flow-lists': _flow_lists(KUBEADM),
    'flow-lists-crlf': _flow_lists(KUBEADM).replace(b'\n', b'\r\n'),
    'flow-one-per-line': _flow_per_line(KUBEADM),
    'flow-empty-lists': KUBEADM.replace(MOUNTS_BLOCK, b'    volumeMounts: []\n').replace(VOLUMES_BLOCK, b'  volumes: []\n'),
    'flow-pod': b'{apiVersion: v1, kind: Pod, metadata: {name: kube-scheduler}, spec: {containers: [{name: kube-scheduler, '
                b'command: [kube-scheduler, --leader-elect=true]}]}}\n',
    'odd-indentation': HAND,
    'indent4-dash3': VARIANTS['pyyaml-dump-indent4'],
    'json': _json(KUBEADM),
    'json-indent4': _json(KUBEADM, 4),
    'json-crlf': _json(KUBEADM).replace(b'\n', b'\r\n'),
    'json-no-mount-keys': _json(_without_mount_keys(KUBEADM)),
    'json-compact': json.dumps(gy.load(KUBEADM).to_dict(), separators=(',', ':')).encode(),
    'null-mount-keys': _null_keys(KUBEADM),
    'no-mount-keys': _without_mount_keys(KUBEADM),
    'bom-no-final-newline': b'\xef\xbb\xbf' + KUBEADM[:-1],
}

_CURRENT = {}


@pytest.fixture(autouse=True)
def on_node(node):  # noqa: F811 pylint: disable=redefined-outer-name
    """Every test's node holds the files of NODE; plan() writes the manifest there and plans through a View of it."""
    for path, kind in NODE.items():
        if kind == 'File':
            node.write(path, 'x\n')
        elif kind == 'Directory':
            node.makedirs(path)
        elif kind == 'Socket':
            node.socket(path)
        else:
            node.fifo(path)
    _CURRENT['node'] = node
    yield node
    _CURRENT.clear()


def view():
    return View(root=_CURRENT['node'].root)


def plan(before, check_mode=False, **params):
    """Run sp.plan on ``before`` as the manifest; the result in the shape the tests read."""
    params.setdefault('arg', ARG)
    params.setdefault('path', MANIFEST)
    _CURRENT['node'].write(params['path'], before)
    p = sp.plan(view(), params, check_mode=check_mode)
    assert len(p.changes) <= 1
    after = p.changes[0].after if p.changes else before
    assert p.facts['restart_expected'] == p.changed
    return {'changed': p.changed, 'after': after, 'command': p.facts['command'], 'container': p.facts['container'],
            'volumes': p.facts['volumes'], 'warnings': p.warnings, 'path': p.facts['path'], 'plan': p}


def load(data):
    """The manifest as the kubelet reads it."""
    return gy.load(data).to_dict()


def container(data, name='kube-scheduler'):
    return [c for c in load(data)['spec']['containers'] if c['name'] == name][0]


def our_lines(lines):
    """(indices of the lines this module adds, boundaries inside one of its additions), found by their content alone.

    Ours: a line "# baremetal.k3s.static_pod_arg" and the argument or the created key below it; a line
    "# baremetal.k3s.static_pod_arg for <arg>" and the item below it - a mount (3 lines "- mountPath", "name", "readOnly")
    or a volume (4 lines "- hostPath:", "path", "type", "name"). A boundary is "inside" when a line inserted there would
    come between a marker and what it marks, or between a created key and its first item.
    """
    ours, inside = set(), set()
    for k, line in enumerate(lines):
        s = line.strip()
        if s == MARK.decode():
            ours.update((k, k + 1))
            inside.add(k + 1)
            if lines[k + 1].strip() in ('volumes:', 'volumeMounts:'):
                inside.add(k + 2)
        elif s.startswith(MARK.decode() + ' for '):
            head = re.sub(r'^-\s+', '- ', lines[k + 1].lstrip())   # the file's own layout may be "-   "
            n = 3 if head.startswith('- mountPath:') else 4
            assert n == 3 or head == '- hostPath:', lines[k:k + 5]
            assert lines[k + n].lstrip().startswith(('name: baremetal-k3s-', 'readOnly: true')), lines[k:k + 5]
            ours.update(range(k, k + 1 + n))
            inside.update(range(k + 1, k + 1 + n))
    return ours, inside


def mounted(data, path, name='kube-scheduler'):
    """Independent check: a hostPath volume at ``path`` (or a parent), mounted at the same path, no subPath."""
    volumes = {v['name']: (v.get('hostPath') or {}).get('path') for v in load(data)['spec'].get('volumes') or []}
    for m in container(data, name).get('volumeMounts') or []:
        mp = m['mountPath'].rstrip('/')
        if volumes.get(m['name'], '').rstrip('/') == mp and (path == mp or path.startswith(mp + '/')) and 'subPath' not in m:
            return True
    return False


def _arg_line(arg=ARG, indent=4):
    return b' ' * indent + MARK + b'\n' + b' ' * indent + b'- ' + ye.render_scalar(arg).encode() + b'\n'


def _mount(path, name, indent=4, owner=ARG):
    pad = b' ' * indent
    return (pad + MARK + b' for ' + owner.encode() + b'\n' + pad + b'- mountPath: ' + path.encode() + b'\n'
            + pad + b'  name: ' + name.encode() + b'\n' + pad + b'  readOnly: true\n')


def _volume(path, name, indent=2, owner=ARG, kind=b'File'):
    pad = b' ' * indent
    return (pad + MARK + b' for ' + owner.encode() + b'\n' + pad + b'- hostPath:\n' + pad + b'    path: ' + path.encode() + b'\n'
            + pad + b'    type: ' + kind + b'\n' + pad + b'  name: ' + name.encode() + b'\n')


CONFIG_VOLUME = 'baremetal-k3s-etc-kubernetes-scheduler-config-yaml'
CA_VOLUME = 'baremetal-k3s-etc-kubernetes-scheduler-tls-ca-crt'
CLIENT_VOLUME = 'baremetal-k3s-etc-kubernetes-scheduler-tls-client-crt'


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
        b'    - --leader-elect=true\n'
        b'    # baremetal.k3s.static_pod_arg\n'
        b'    - --config=/etc/kubernetes/scheduler/config.yaml\n',
    ).replace(
        b'      readOnly: true\n  hostNetwork',
        b'      readOnly: true\n'
        b'    # baremetal.k3s.static_pod_arg for --config=/etc/kubernetes/scheduler/config.yaml\n'
        b'    - mountPath: /etc/kubernetes/scheduler/config.yaml\n'
        b'      name: baremetal-k3s-etc-kubernetes-scheduler-config-yaml\n'
        b'      readOnly: true\n'
        b'    # baremetal.k3s.static_pod_arg for --config=/etc/kubernetes/scheduler/config.yaml\n'
        b'    - mountPath: /etc/kubernetes/scheduler/tls/ca.crt\n'
        b'      name: baremetal-k3s-etc-kubernetes-scheduler-tls-ca-crt\n'
        b'      readOnly: true\n'
        b'    # baremetal.k3s.static_pod_arg for --config=/etc/kubernetes/scheduler/config.yaml\n'
        b'    - mountPath: /etc/kubernetes/scheduler/tls/client.crt\n'
        b'      name: baremetal-k3s-etc-kubernetes-scheduler-tls-client-crt\n'
        b'      readOnly: true\n'
        b'  hostNetwork',
    ).replace(
        b'    name: kubeconfig\nstatus',
        b'    name: kubeconfig\n'
        b'  # baremetal.k3s.static_pod_arg for --config=/etc/kubernetes/scheduler/config.yaml\n'
        b'  - hostPath:\n'
        b'      path: /etc/kubernetes/scheduler/config.yaml\n'
        b'      type: File\n'
        b'    name: baremetal-k3s-etc-kubernetes-scheduler-config-yaml\n'
        b'  # baremetal.k3s.static_pod_arg for --config=/etc/kubernetes/scheduler/config.yaml\n'
        b'  - hostPath:\n'
        b'      path: /etc/kubernetes/scheduler/tls/ca.crt\n'
        b'      type: File\n'
        b'    name: baremetal-k3s-etc-kubernetes-scheduler-tls-ca-crt\n'
        b'  # baremetal.k3s.static_pod_arg for --config=/etc/kubernetes/scheduler/config.yaml\n'
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
    plan_ = r['plan']
    assert [c.path for c in plan_.changes] == [MANIFEST] and plan_.changes[0].before == KUBEADM
    assert plan_.facts == {'path': MANIFEST, 'container': 'kube-scheduler', 'command': r['command'], 'volumes': r['volumes'],
                           'restart_expected': True}


def test_created_keys_follow_kubeadm_order_and_carry_the_marker():
    before = VARIANTS['no-mount-keys']
    r = plan(before)
    text = r['after'].decode()
    assert ('      timeoutSeconds: 15\n    # baremetal.k3s.static_pod_arg\n    volumeMounts:\n'
            '    # baremetal.k3s.static_pod_arg for --config=/etc/kubernetes/scheduler/config.yaml\n'
            '    - mountPath: /etc/kubernetes/scheduler/config.yaml\n') in text
    assert ('      type: RuntimeDefault\n  # baremetal.k3s.static_pod_arg\n  volumes:\n'
            '  # baremetal.k3s.static_pod_arg for --config=/etc/kubernetes/scheduler/config.yaml\n  - hostPath:\n'
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
    # the mounts need not be given again: the owner comments say which volumes served the argument
    assert plan(after, arg=arg, state='absent')['after'] == before


@pytest.mark.parametrize('form', sorted(FORMS))
@pytest.mark.parametrize('arg, mounts', [
    (ARG, TLS),
    ('--v=4', []),
    ('--v=4', [TLS[0]]),
    (ODD, ['/run/extender.sock']),
], ids=['config+tls', 'no-path', 'no-path+mount', 'odd-quoting+socket'])
def test_forms_present_twice_then_absent_without_mounts_is_identical(form, arg, mounts):
    """CRLF, comments, flow lists, odd indentation, JSON: present twice changes once; absent, without the mounts, gives the
    original bytes back."""
    before = FORMS[form]
    r = plan(before, arg=arg, mounts=mounts)
    assert r['changed'] and not r['warnings'], r['warnings']
    after = r['after']
    assert container(after)['command'] == container(before)['command'] + [arg]
    for p in ([sp.arg_path(arg)] if sp.arg_path(arg) else []) + mounts:
        assert mounted(after, p), p
    assert {k: v for k, v in load(after).items() if k != 'spec'} == {k: v for k, v in load(before).items() if k != 'spec'}
    if form.startswith('json'):
        assert json.loads(after.decode()) == load(after)   # JSON stays JSON
        assert MARK not in after
    if b'\r\n' in before:
        assert after.count(b'\n') == after.count(b'\r\n')
    again = plan(after, arg=arg, mounts=mounts)
    assert not again['changed'] and again['after'] == after and not again['warnings']
    gone = plan(after, arg=arg, state='absent')
    assert gone['changed'] and gone['after'] == before, gone['after'].decode()
    assert gone['volumes'] == [] and arg not in gone['command'] and not gone['warnings']
    assert plan(after, arg=arg, mounts=mounts, state='absent')['after'] == before
    assert not plan(before, arg=arg, state='absent')['changed']


def test_flow_and_json_items_follow_the_file():
    r = plan(FORMS['flow-lists'], mounts=[TLS[0]])
    assert (b'--leader-elect=true, "--config=/etc/kubernetes/scheduler/config.yaml"]\n    image:') in r['after']
    assert (b'name: kubeconfig, readOnly: true}, {"mountPath": "/etc/kubernetes/scheduler/config.yaml", '
            b'"name": "baremetal-k3s-etc-kubernetes-scheduler-config-yaml", "readOnly": true}, ') in r['after']
    r = plan(FORMS['json'])
    assert (b'          "--leader-elect=true",\n          "--config=/etc/kubernetes/scheduler/config.yaml"\n        ],\n') in r['after']
    assert (b'          },\n          {\n            "mountPath": "/etc/kubernetes/scheduler/config.yaml",\n'
            b'            "name": "baremetal-k3s-etc-kubernetes-scheduler-config-yaml",\n            "readOnly": true\n'
            b'          }\n        ]\n') in r['after']
    r = plan(FORMS['json-no-mount-keys'])
    assert b'"volumeMounts": [\n' in r['after'] and b'"volumes": [\n' in r['after']


def test_hand_edited_directory_mount_is_not_duplicated():
    r = plan(HAND, mounts=[TLS[0]])
    assert r['changed'] and r['volumes'] == []   # /etc/kubernetes/scheduler is mounted as a whole
    assert container(r['after'])['command'][-1] == ARG
    assert len(container(r['after'])['volumeMounts']) == 2
    assert b'# baremetal.k3s.static_pod_arg\n          - --config=/etc/kubernetes/scheduler/config.yaml\n' in r['after']
    # indented list style and 4-space mappings followed
    assert b'          - --leader-elect=true   # HA pair\n          # baremetal.k3s.static_pod_arg\n          - --config=' in r['after']
    assert plan(r['after'], mounts=[TLS[0]], state='absent')['after'] == HAND


def test_hand_edited_new_mount_follows_the_layout():
    r = plan(HAND, arg='--v=2', mounts=['/run/extender.sock'])
    text = r['after'].decode()
    assert ('          - name: scheduler-dir\n            mountPath: /etc/kubernetes/scheduler\n            readOnly: true\n'
            '          # baremetal.k3s.static_pod_arg for --v=2\n'
            '          - mountPath: /run/extender.sock\n            name: baremetal-k3s-run-extender-sock\n'
            '            readOnly: true\n\n') in text
    assert ('            type: DirectoryOrCreate\n      # baremetal.k3s.static_pod_arg for --v=2\n      - hostPath:\n'
            '            path: /run/extender.sock\n'
            '            type: Socket\n        name: baremetal-k3s-run-extender-sock\n    # end of volumes\n') in text
    assert plan(r['after'], arg='--v=2', mounts=['/run/extender.sock'], state='absent')['after'] == HAND


def test_sidecar_is_untouched_and_named_container_is_used():
    r = plan(HAND, container='kube-scheduler', arg='--v=2')
    assert container(r['after'], 'log-shipper') == container(HAND, 'log-shipper')
    # the sidecar's command is a flow list: edited in place (earlier versions refused it)
    r = plan(HAND, container='log-shipper', arg='--v=2')
    assert b'command: ["/shipper", "--from=/var/log/kube-scheduler", "--v=2"]\n' in r['after']
    assert container(r['after'], 'kube-scheduler') == container(HAND, 'kube-scheduler')
    assert plan(r['after'], container='log-shipper', arg='--v=2', state='absent')['after'] == HAND


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
    ours = b'    - --config=/etc/kubernetes/scheduler/config.yaml\n'
    edits = [
        # another argument, right after ours
        (ours, ours + b'    - --v=2\n', b'    - --leader-elect=true\n', b'    - --leader-elect=true\n    - --v=2\n'),
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
    assert plan(edited, state='absent')['after'] == expected   # the same without the mounts


def test_two_args_share_a_volume_and_created_keys_go_last():
    before = VARIANTS['no-mount-keys']
    a = plan(before, mounts=[TLS[0]])['after']
    b = plan(a, arg='--tls-ca=' + TLS[0])['after']
    assert b.count(b'mountPath: ' + TLS[0].encode()) == 1
    # removing the first keeps the volume the second still names
    r = plan(b, mounts=[TLS[0]], state='absent')
    assert any('still needs it' in w for w in r['warnings'])
    assert mounted(r['after'], TLS[0]) and not mounted(r['after'], CONFIG)
    assert b'  # baremetal.k3s.static_pod_arg\n  volumes:\n' in r['after']
    r = plan(r['after'], arg='--tls-ca=' + TLS[0], state='absent')
    assert r['after'] == before
    # the same without giving the mounts
    r = plan(b, state='absent')
    assert any('still needs it' in w for w in r['warnings']) and mounted(r['after'], TLS[0]) and not mounted(r['after'], CONFIG)
    assert plan(r['after'], arg='--tls-ca=' + TLS[0], state='absent')['after'] == before


def test_absent_without_mounts_keeps_what_another_argument_of_ours_added():
    a = plan(KUBEADM, mounts=[TLS[0]])['after']
    b = plan(a, arg='--v=4', mounts=[TLS[1]])['after']
    r = plan(b, arg='--v=4', state='absent')
    assert r['after'] == a and not r['warnings']
    r = plan(b, state='absent')
    assert not mounted(r['after'], CONFIG) and not mounted(r['after'], TLS[0]) and mounted(r['after'], TLS[1])
    assert r['volumes'] == [CLIENT_VOLUME]
    assert plan(r['after'], arg='--v=4', state='absent')['after'] == KUBEADM


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
    stripped = r['after'].replace(b'    # baremetal.k3s.static_pod_arg\n    - --config', b'    - --config')
    assert stripped != r['after']
    assert not plan(stripped)['changed']
    gone = plan(stripped, state='absent')
    assert load(gone['after']) == load(KUBEADM) and gone['volumes'] == []
    assert gone['after'] == KUBEADM
    # the same with only the volume's owner comment left (the argument names no path)
    r = plan(KUBEADM, arg='--v=4', mounts=[TLS[0]])
    stripped = r['after'].replace(b'    # baremetal.k3s.static_pod_arg\n    - --v=4', b'    - --v=4')
    assert not plan(stripped, arg='--v=4', mounts=[TLS[0]])['changed']
    assert plan(stripped, arg='--v=4', state='absent')['after'] == KUBEADM


def test_absent_cleans_our_volumes_when_the_argument_was_removed_by_hand():
    r = plan(KUBEADM)
    by_hand = r['after'].replace(b'    # baremetal.k3s.static_pod_arg\n    - --config=/etc/kubernetes/scheduler/config.yaml\n', b'')
    assert by_hand != r['after']
    assert plan(by_hand, state='absent')['after'] == KUBEADM


def test_other_prefix_is_not_ours():
    r = plan(KUBEADM, volume_prefix='acme')
    assert r['volumes'] == ['acme-etc-kubernetes-scheduler-config-yaml']
    other = plan(r['after'], volume_prefix='baremetal-k3s', arg='--v=3')
    assert other['volumes'] == []
    assert plan(r['after'], volume_prefix='acme', state='absent')['after'] == KUBEADM


# -- manifests written by earlier versions ------------------------------------------------------------
LEGACY = KUBEADM.replace(
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
    b'status',
)
# the old version on a manifest without volumeMounts / volumes: created keys carried the comment at the end
LEGACY_CREATED = _without_mount_keys(KUBEADM).replace(
    b'    - --leader-elect=true\n',
    b'    - --leader-elect=true\n    - --config=/etc/kubernetes/scheduler/config.yaml  # baremetal.k3s.static_pod_arg\n',
).replace(
    b'      timeoutSeconds: 15\n  hostNetwork',
    b'      timeoutSeconds: 15\n'
    b'    volumeMounts:  # baremetal.k3s.static_pod_arg\n'
    b'    - mountPath: /etc/kubernetes/scheduler/config.yaml\n'
    b'      name: baremetal-k3s-etc-kubernetes-scheduler-config-yaml\n'
    b'      readOnly: true\n'
    b'    - mountPath: /etc/kubernetes/scheduler/tls/ca.crt\n'
    b'      name: baremetal-k3s-etc-kubernetes-scheduler-tls-ca-crt\n'
    b'      readOnly: true\n'
    b'  hostNetwork',
).replace(
    b'      type: RuntimeDefault\nstatus',
    b'      type: RuntimeDefault\n'
    b'  volumes:  # baremetal.k3s.static_pod_arg\n'
    b'  - hostPath:\n'
    b'      path: /etc/kubernetes/scheduler/config.yaml\n'
    b'      type: File\n'
    b'    name: baremetal-k3s-etc-kubernetes-scheduler-config-yaml\n'
    b'  - hostPath:\n'
    b'      path: /etc/kubernetes/scheduler/tls/ca.crt\n'
    b'      type: File\n'
    b'    name: baremetal-k3s-etc-kubernetes-scheduler-tls-ca-crt\n'
    b'status',
)


@pytest.mark.parametrize('legacy, original', [(LEGACY, KUBEADM), (LEGACY_CREATED, _without_mount_keys(KUBEADM)),
                                              (LEGACY.replace(b'\n', b'\r\n'), KUBEADM.replace(b'\n', b'\r\n'))],
                         ids=['kubeadm', 'created-keys', 'crlf'])
def test_manifest_written_by_the_old_version_is_recognised_and_cleaned(legacy, original):
    assert LEGACY.count(b'baremetal-k3s-') == 4 and b'  # baremetal.k3s.static_pod_arg\n' in LEGACY
    # present again: the argument and its volumes are known as ours; nothing to do
    r = plan(legacy, mounts=[TLS[0]])
    assert not r['changed'] and not r['warnings'] and r['volumes'] == [CONFIG_VOLUME, CA_VOLUME]
    # absent, without the mounts: the argument, every volume and mount of ours, and the keys it created go
    r = plan(legacy, state='absent')
    assert r['changed'] and r['after'] == original and r['volumes'] == [] and not r['warnings']
    # the role of earlier versions gave the mounts again: the same
    assert plan(legacy, mounts=[TLS[0]], state='absent')['after'] == original


def test_old_version_volumes_stay_while_another_argument_of_ours_remains():
    two = LEGACY.replace(b'    - --leader-elect=true\n', b'    - --leader-elect=true\n    - --v=4  # baremetal.k3s.static_pod_arg\n')
    r = plan(two, state='absent')
    # the config's own volume goes; the CA's (no owner written) may be the other argument's: kept until asked for
    assert r['volumes'] == [CA_VOLUME] and mounted(r['after'], TLS[0]) and not mounted(r['after'], CONFIG)
    r = plan(r['after'], arg='--v=4', state='absent')
    assert r['after'] == KUBEADM
    r = plan(two, mounts=[TLS[0]], state='absent')
    assert r['volumes'] == [] and plan(r['after'], arg='--v=4', state='absent')['after'] == KUBEADM


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
    # check mode: a path an earlier task creates counts as a file, with a warning
    r = plan(KUBEADM, arg='--config=/etc/kubernetes/nope.yaml', check_mode=True)
    assert r['changed'] and any('does not exist yet' in w and '/etc/kubernetes/nope.yaml' in w for w in r['warnings'])


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
    (b'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    command: []\n', 'command of container a is empty'),
    (b'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    command:\n    - [x]\n', 'non-string item'),
    (KUBEADM.replace(b'    volumeMounts:\n', b'    volumeMounts: 3\n    x:\n'), 'volumeMounts'),
    (KUBEADM.replace(b'kind: Pod\n', b'kind: Pod\nkind: Pod\n'), "key 'kind' appears twice"),
    (b'x: &c\n- a\n' + KUBEADM.replace(b'  - command:\n    - kube-scheduler\n', b'  - command: *c\n    y:\n    - kube-scheduler\n'),
     'anchors and aliases'),
    (b'\xff\xfeapiVersion', 'not UTF-8'),
    (KUBEADM.replace(b'\n', b'\r'), 'other than LF or CRLF'),
    (KUBEADM.replace(b'spec:\n', b'spec:  # \xc2\x85\n'), 'other than LF or CRLF'),
    (KUBEADM.replace(b'registry.k8s.io/kube-scheduler:v1.36.3', b'!!python/object/apply:os.system [id]'), 'cannot be read safely'),
    (_flow_lists(KUBEADM).replace(b'[kube-scheduler, ', b'[kube-scheduler,\n      '),
     'a flow collection over several lines in another layout than one item per line'),
    (KUBEADM.replace(b'    volumeMounts:\n', b'    volumeMounts:\n    - 3\n'), 'an item of containers[0].volumeMounts (line 58) is not a mapping'),
]


@pytest.mark.parametrize('data, message', BAD_FILES, ids=[str(i) for i in range(len(BAD_FILES))])
def test_bad_files(data, message):
    with pytest.raises(sp.StaticPodError) as e:
        plan(data, arg='--v=2')
    assert message in str(e.value)
    assert isinstance(e.value, PlanError) and e.value.details == {'path': MANIFEST}


# forms earlier versions refused ("flow style", "JSON manifest", "not a block list"): now edited in place
NOW_EDITED = [
    b'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    command: [kube-scheduler]\n',
    b'{"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "a", "command": ["x"]}]}}\n',
    b'apiVersion: v1\nkind: Pod\nspec: {containers: [{name: a, command: [x]}]}\n',
    KUBEADM.replace(b'  volumes:\n  - hostPath:\n      path: /etc/kubernetes/scheduler.conf\n      type: FileOrCreate\n'
                    b'    name: kubeconfig\n', b'  volumes: []\n'),
]


@pytest.mark.parametrize('data', NOW_EDITED, ids=['flow-command', 'json', 'flow-spec', 'flow-empty-volumes'])
@pytest.mark.parametrize('arg', ['--v=2', ARG])
def test_flow_and_json_manifests_are_edited(data, arg):
    name = load(data)['spec']['containers'][-1]['name']
    r = plan(data, arg=arg)
    assert r['changed'] and container(r['after'], name)['command'][-1] == arg
    if arg == ARG:
        assert mounted(r['after'], CONFIG, name)
    assert not plan(r['after'], arg=arg)['changed']
    assert plan(r['after'], arg=arg, state='absent')['after'] == data


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
    ('--v=\udcff', 'not UTF-8'),
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
    (['/etc/\udcff'], 'not UTF-8'),
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
    assert sp.lock_key({'path': MANIFEST}) == MANIFEST and sp.lock_key({}) == sp.DEFAULT_PATH


# the argument is written by _yamledit (go-yaml's reading); these were the tests of this module's own renderer
@pytest.mark.parametrize('value', [ARG, ODD, '--a: b', '--a=b #c', "--q='x'", '--t=a\tb', '--u=\u00e9\u2603\U0001f600',
                                   '--c=\x07bell', '--e=', '--d="', '/a b', '--trailing:', "it's", '--x=@{}[],&*!|>%'])
def test_render_scalar_round_trip(value):
    text = ye.render_scalar(value)
    assert '\n' not in text
    assert yaml.safe_load('- %s  # c\n' % text) == [value]
    assert yaml.safe_load('k: %s\n' % text) == {'k': value}
    assert gy.load('- %s  # c\n' % text) == [value]
    # and in a manifest, through plan: the argument reads back as itself, and goes again
    if value.startswith('--') and len(value) > 2 and value[2] not in '=-' and value == value.strip():
        r = plan(KUBEADM, arg=value, mount_arg_path=False)
        assert container(r['after'])['command'][-1] == value
        assert plan(r['after'], arg=value, mount_arg_path=False, state='absent')['after'] == KUBEADM


def test_render_scalar_prefers_plain():
    # a plain scalar may start with "-" when a non-blank follows, as kubeadm writes its arguments
    assert ye.render_scalar(ARG) == ARG
    assert ye.render_scalar('--feature-gates=A=true,B=false') == '--feature-gates=A=true,B=false'
    assert ye.render_scalar('/srv/a b') == '/srv/a b'
    assert ye.render_scalar('/etc/kubernetes/scheduler/config.yaml') == '/etc/kubernetes/scheduler/config.yaml'


# -- backup_dir and path ---------------------------------------------------------------------------
@pytest.mark.parametrize('backup_dir', [
    '/etc/kubernetes/manifests', '/etc/kubernetes/manifests/', '/etc/kubernetes/manifests/old',
    '/var/lib/rancher/rke2/agent/pod-manifests', '/var/lib/rancher/k3s/agent/pod-manifests/bak',
    '/srv/pods', '/srv/pods/backups',
])
def test_backup_dir_in_a_manifest_dir_is_refused(backup_dir):
    with pytest.raises(sp.StaticPodError, match='inside a static-pod manifest directory'):
        sp.check_backup_dir(backup_dir, '/srv/pods/kube-scheduler.yaml')
    with pytest.raises(sp.StaticPodError, match='inside a static-pod manifest directory'):
        sp.check_backup_dir(backup_dir, '/srv/pods/kube-scheduler.yaml', view())


@pytest.mark.parametrize('backup_dir', ['/var/backups/baremetal-k3s', '/etc/kubernetes/manifests-backup', '/srv'])
def test_backup_dir_elsewhere_is_fine(backup_dir):
    sp.check_backup_dir(backup_dir, '/srv/pods/kube-scheduler.yaml')
    sp.check_backup_dir(backup_dir, '/srv/pods/kube-scheduler.yaml', view())


def test_backup_dir_through_a_symlink_is_refused(on_node):  # pylint: disable=redefined-outer-name
    on_node.makedirs('/srv/pods')
    on_node.symlink('/srv/pods', '/srv/link')
    with pytest.raises(sp.StaticPodError, match='inside a static-pod manifest directory'):
        sp.check_backup_dir('/srv/link/bak', '/srv/pods/kube-scheduler.yaml', view())
    with pytest.raises(sp.StaticPodError, match='absolute'):
        sp.check_backup_dir('backups', '/srv/pods/kube-scheduler.yaml', view())
    # the same through plan (backup=true): refused before anything is planned
    on_node.write('/srv/pods/kube-scheduler.yaml', KUBEADM)
    with pytest.raises(sp.StaticPodError, match='inside a static-pod manifest directory'):
        sp.plan(view(), {'path': '/srv/pods/kube-scheduler.yaml', 'arg': ARG, 'backup': True, 'backup_dir': '/srv/link/bak'})
    assert sp.plan(view(), {'path': '/srv/pods/kube-scheduler.yaml', 'arg': ARG, 'backup_dir': '/srv/link/bak'}).changed


def test_read_manifest():
    with pytest.raises(sp.StaticPodError, match='relative'):
        sp.read_manifest(view(), 'manifests/kube-scheduler.yaml')
    with pytest.raises(sp.StaticPodError, match='does not exist'):
        sp.read_manifest(view(), '/etc/kubernetes/manifests/nope.yaml')
    with pytest.raises(sp.StaticPodError, match='is a directory'):
        sp.read_manifest(view(), '/etc/kubernetes/scheduler')
    _CURRENT['node'].write(MANIFEST, KUBEADM)
    assert sp.read_manifest(view(), MANIFEST) == KUBEADM


def test_path_kind():
    assert sp.path_kind(view(), CONFIG) == 'File'
    assert sp.path_kind(view(), '/etc/kubernetes/scheduler') == 'Directory'
    assert sp.path_kind(view(), '/etc/kubernetes/missing') is None
    assert sp.path_kind(view(), '/run/extender.sock') == 'Socket'
    assert sp.path_kind(view(), '/dev/weird') == 'other'
    assert sp.path_kind(View(root='/'), '/dev/null') == 'CharDevice'
    _CURRENT['node'].symlink('/etc/kubernetes/scheduler', '/etc/kubernetes/link')
    assert sp.path_kind(view(), '/etc/kubernetes/link/config.yaml') == 'File'   # links followed inside the node


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


def _plain_or_quoted(value):
    """``value`` plain when YAML reads it back as the same string (a flag is), else single-quoted."""
    try:
        if yaml.safe_load('- %s  # c\n' % value) == [value] and gy.load('- %s  # c\n' % value) == [value]:
            return value
    except yaml.YAMLError:
        pass
    return "'%s'" % value.replace("'", "''")


def _scalar_styles(draw, value):
    return draw(st.sampled_from([_plain_or_quoted(value), "'%s'" % value.replace("'", "''"), ye.render_string(value)]))


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


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
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
    # absent gives back the original bytes, with or without the mounts
    assert plan(after, arg=arg, mounts=mounts, state='absent')['after'] == before
    assert plan(after, arg=arg, state='absent')['after'] == before
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
    """If an edit ever produced anything but the intended change, nothing would be written."""
    real = ye.Document._block_add  # pylint: disable=protected-access

    def broken(self, *args, **kwargs):
        return real(self, *args, **kwargs).replace('hostNetwork: true', 'hostNetwork: false')

    monkeypatch.setattr(ye.Document, '_block_add', broken)
    with pytest.raises(sp.StaticPodError, match='nothing was written'):
        plan(KUBEADM)


def test_restore_null_guard_refuses_a_bad_edit(monkeypatch):
    """The one edit made here (a list emptied back to ``key:``) is checked the same way."""
    after = plan(_null_keys(KUBEADM))['after']
    real = sp._cut  # pylint: disable=protected-access
    monkeypatch.setattr(sp, '_cut', lambda text, a, b: real(text, a, b).replace('hostNetwork: true', 'hostNetwork: false'))
    with pytest.raises(sp.StaticPodError, match='nothing was written'):
        plan(after, state='absent')
