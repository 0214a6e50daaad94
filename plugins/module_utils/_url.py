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

import ipaddress
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
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as e:  # an unbalanced "[", a bracketed host that is no IPv6 address
        return 'cannot be read as a URL (%s); write an IPv6 host in brackets, for example http://[fd00::1]:8889' % e
    if parts.scheme not in ('http', 'https') or not url.lower().startswith(parts.scheme + '://'):
        return 'must start with http:// or https://, for example %s' % EXAMPLE
    if parts.username is not None or parts.password is not None:
        return 'must not carry a user or password (the scheduler would send them nowhere)'
    if not host:
        return 'has no host'
    problem = _host_problem(parts.netloc.rpartition('@')[2], host)
    if problem:
        return problem
    try:
        port = parts.port
    except ValueError:
        return 'has a port that is not a number from 1 to 65535'
    if port == 0 or (port is None and parts.netloc.endswith(':')):
        return 'has a port that is not a number from 1 to 65535'
    if parts.query or parts.fragment or url.endswith(('?', '#')):
        return 'must not have a query or a fragment (the scheduler appends /<verb> to it)'
    return ''


def _host_problem(hostport, host):
    """Why the host part of a URL is not one Go's url.Parse takes (kube-scheduler parses urlPrefix with it), or ''."""
    if hostport.startswith('['):
        inside = hostport[1:hostport.find(']')] if ']' in hostport else ''
        address = inside.split('%', 1)[0]
        try:
            if ipaddress.ip_address(address).version != 6:
                raise ValueError(address)
        except ValueError:
            return 'has %s in brackets, which is not an IPv6 address; write it as http://[fd00::1]:8889' % hostport
        rest = hostport[hostport.find(']') + 1:]
        if rest and not rest.startswith(':'):
            return 'has %r after the bracketed IPv6 address; only ":<port>" may follow it' % rest
        return ''
    if ':' in host:
        return 'has an IPv6 address without brackets; write it as http://[%s]:8889' % host
    return ''


def check_url(url, what='extender URL'):
    """``url`` unchanged when it passes :func:`url_problem`; else ValueError naming the URL and the reason."""
    problem = url_problem(url)
    if problem:
        raise ValueError('%s %r %s' % (what, url, problem))
    return url
