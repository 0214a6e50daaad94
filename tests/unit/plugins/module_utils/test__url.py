# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The one extender URL rule, and that scheduler_config and extender_status both apply it."""

from __future__ import annotations

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _extender, _url
from ansible_collections.baremetal.k3s.plugins.module_utils import _scheduler_config as sc

GOOD = [
    'http://127.0.0.1:8889',
    'http://127.0.0.1:8889/',
    'https://extender.kube-system.svc:8889/csi',
    'http://[::1]:8889',
    'HTTP://host:1',
    'http://host',
    'https://host:65535/a/b',
]

BAD = [
    (None, 'is empty'),
    ('', 'is empty'),
    ('127.0.0.1:8889', 'must start with http:// or https://'),
    ('ftp://127.0.0.1:8889', 'must start with http:// or https://'),
    ('http:/127.0.0.1:8889', 'must start with http:// or https://'),
    ('http://', 'has no host'),
    ('http://:8889', 'has no host'),
    ('http://127.0.0.1:99999', 'not a number from 1 to 65535'),
    ('http://h:abc/', 'not a number from 1 to 65535'),
    ('http://h:0', 'not a number from 1 to 65535'),
    ('http://h:', 'not a number from 1 to 65535'),
    ('http://h:-1', 'not a number from 1 to 65535'),
    ('http://h:1/x?q=1', 'must not have a query or a fragment'),
    ('http://h:1/x#f', 'must not have a query or a fragment'),
    ('http://h:1/x?', 'must not have a query or a fragment'),
    ('http://user:pw@h:1', 'must not carry a user or password'),
    ('http://h:1/a b', 'space or a control character'),
    (' http://h:1', 'space or a control character'),
    ('http://h:1\n', 'space or a control character'),
    ('http://h:1\x00', 'space or a control character'),
]


@pytest.mark.parametrize('url', GOOD)
def test_good_urls(url):
    assert _url.url_problem(url) == ''
    assert _url.check_url(url) == url


@pytest.mark.parametrize('url,reason', BAD)
def test_bad_urls_name_the_reason(url, reason):
    assert reason in _url.url_problem(url)
    with pytest.raises(ValueError, match='extender URL .* ' + reason.split(' ')[0]):
        _url.check_url(url)


@pytest.mark.parametrize('url,reason', BAD)
def test_both_modules_refuse_the_same_urls(url, reason):
    """scheduler_config (before writing) and extender_status (before probing) agree."""
    with pytest.raises(_extender.ExtenderProbeError) as probe_err:
        _extender.validate_url(url)
    with pytest.raises(sc.SchedulerConfigError) as config_err:
        sc.render_extender({'url_prefix': url})
    assert reason in str(probe_err.value)
    assert reason in str(config_err.value)


@pytest.mark.parametrize('url', GOOD)
def test_both_modules_accept_the_same_urls(url):
    _extender.validate_url(url)
    assert sc.render_extender({'url_prefix': url})['urlPrefix'] == url
