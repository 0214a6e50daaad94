# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The one rule for an extender URL (a scheduler config's ``urlPrefix``, a probe target).

kube-scheduler does not check ``urlPrefix`` when it loads its config: a bad URL is only ever
caught by whoever checks it before writing. ``scheduler_config`` runs this before it writes,
``extender_status`` before it probes, so both refuse the same URLs with the same words.

Pure standard library; no Ansible import.
"""

from __future__ import annotations

import re

from urllib.parse import urlsplit

EXAMPLE = 'http://127.0.0.1:8889'
_SPACE_OR_CONTROL = re.compile(r'[\s\x00-\x1f\x7f]')


def url_problem(url):
    """Why ``url`` cannot be an extender's ``urlPrefix``, or ``''`` when it can.

    Accepted: ``http://`` or ``https://``, a host, an optional port 1-65535, an optional
    path; no query, fragment, user info, space or control character.
    """
    if not isinstance(url, str) or not url:
        return 'is empty; give an http:// or https:// URL such as %s' % EXAMPLE
    if _SPACE_OR_CONTROL.search(url):
        return 'contains a space or a control character'
    parts = urlsplit(url)
    if parts.scheme not in ('http', 'https') or not url.lower().startswith(parts.scheme + '://'):
        return 'must start with http:// or https://, for example %s' % EXAMPLE
    if parts.username is not None or parts.password is not None:
        return 'must not carry a user or password (the scheduler would send them nowhere)'
    if not parts.hostname:
        return 'has no host'
    try:
        port = parts.port
    except ValueError:
        return 'has a port that is not a number from 1 to 65535'
    if port == 0 or (port is None and parts.netloc.endswith(':')):
        return 'has a port that is not a number from 1 to 65535'
    if parts.query or parts.fragment or url.endswith(('?', '#')):
        return 'must not have a query or a fragment (the scheduler appends /<verb> to it)'
    return ''


def check_url(url, what='extender URL'):
    """``url`` unchanged when it passes :func:`url_problem`; else ValueError naming the URL and the reason."""
    problem = url_problem(url)
    if problem:
        raise ValueError('%s %r %s' % (what, url, problem))
    return url
