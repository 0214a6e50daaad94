# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _kubectl


def test_api_reason():
    assert _kubectl.api_reason('Error from server (Forbidden): nope\n') == ('Forbidden', 'nope')
    assert _kubectl.api_reason('The connection to the server was refused\n') == ('', 'The connection to the server was refused')
    assert _kubectl.api_reason('') == ('', '')


@pytest.mark.parametrize('name, ok', [
    ('extender-readiness', True), ('a.b-c', True), ('a' * 253, True), ('a' * 254, False), ('Alice', False),
    ('-a', False), ('a-', False), ('a..b', False), ('', False), (None, False), (7, False),
])
def test_is_dns_subdomain(name, ok):
    assert _kubectl.is_dns_subdomain(name) is ok


def test_quote_and_first_line():
    assert _kubectl.quote(['k3s', 'kubectl', 'get', 'cm', 'a b']) == "k3s kubectl get cm 'a b'"
    assert _kubectl.first_line('\n  \n first \nsecond') == 'first'
    assert _kubectl.first_line('x' * 400) == 'x' * 300 + '...'
    assert _kubectl.first_line(None) == ''
