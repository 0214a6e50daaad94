# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The pod security report as lines for people: one line per pod named, within 120 columns, node data escaped."""

from __future__ import annotations

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal
from ansible_collections.baremetal.k3s.plugins.plugin_utils import _pod_security_table as t

REPORT = {
    'level': 'restricted', 'version': 'latest', 'refused_pods': 3, 'missing_namespaces': [],
    'summary': '3 pods in 1 of 3 namespaces would be refused at restricted:latest; 1 namespace keeps its own labels',
    'namespaces': [
        {'namespace': 'ops', 'status': 'own labels', 'labels': {'enforce': 'privileged', 'enforce-version': 'v1.33'},
         'pods': 1, 'violations': [], 'notes': [], 'error': ''},
        {'namespace': 'shop', 'status': 'refused', 'labels': {}, 'pods': 4, 'notes': ['the API server checked only 3 of 4 pods'],
         'error': '', 'violations': [
             {'pod': 'cart-5d8f7c9b8-2xkqz', 'others': 1, 'reasons': ['allowPrivilegeEscalation != false', 'privileged'],
              'owner': {'kind': 'Deployment', 'name': 'cart'}, 'phase': 'Running'},
             {'pod': 'lone', 'others': 0, 'reasons': ['hostPort'], 'owner': None, 'phase': 'Pending'}]},
        {'namespace': 'web', 'status': 'allowed', 'labels': {}, 'pods': 2, 'violations': [], 'notes': [], 'error': ''},
    ],
}


def test_one_line_per_pod_named_and_per_namespace_without():
    lines = t.render(REPORT)
    text = '\n'.join(lines)
    assert lines[0].startswith('PodSecurity restricted:latest: the pods the API server would refuse')
    assert any(line.split() == ['shop', 'cart-5d8f7c9b8-2xkqz', '(+1', 'other)', 'Deployment/cart', 'Running', 'refused']
               for line in lines), text
    assert any(line.split() == ['shop', 'lone', '-', 'Pending', 'refused'] for line in lines), text
    assert any(line.split() == ['ops', '-', '-', '-', 'own', 'label', 'enforce=privileged:v1.33'] for line in lines), text
    assert any(line.split() == ['web', '-', '-', '-', 'nothing', 'refused', '(2', 'pods)'] for line in lines), text
    # the reasons whole, below the table
    assert '  shop/cart-5d8f7c9b8-2xkqz (+1 other): allowPrivilegeEscalation != false, privileged' in lines
    assert '  shop/lone: hostPort' in lines
    assert '  shop: the API server checked only 3 of 4 pods' in lines
    assert '  ops: its own enforce label applies, not the default: not asked' in lines
    assert lines[-1] == REPORT['summary']


def test_long_reasons_are_wrapped_not_cut():
    reasons = ['privileged', 'allowPrivilegeEscalation != false', 'unrestricted capabilities', 'runAsNonRoot != true',
               'seccompProfile', 'hostPath volumes', 'host namespaces', 'hostPort']
    v = dict(REPORT['namespaces'][1]['violations'][0], pod='p' * 60, reasons=reasons)
    report = dict(REPORT, namespaces=[dict(REPORT['namespaces'][1], violations=[v])])
    lines = t.render(report)
    text = ' '.join(line.strip() for line in lines)
    assert all(_terminal.width(line) <= 120 for line in lines)
    assert ', '.join(reasons) in text and _terminal.ELLIPSIS not in text


@pytest.mark.parametrize('name', ['x' * 300, 'evil\x1b[31mred', 'rtl\u202eoverride', '宽' * 80])
def test_node_data_is_cut_and_escaped(name):
    report = dict(REPORT, namespaces=[dict(REPORT['namespaces'][1], namespace=name)])
    lines = t.render(report)
    assert all(_terminal.width(line) <= 120 for line in lines)
    assert not any('\x1b' in line or '\u202e' in line for line in lines)


def test_json_data_keeps_only_the_report():
    assert set(t.data(dict(REPORT, changed=False, invocation={}))) == {
        'level', 'version', 'namespaces', 'missing_namespaces', 'refused_pods', 'summary'}
