# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""What every module that talks to the API through the platform's kubectl shares: its two options, how a
command is shown in a message, how kubectl's errors are read, and Kubernetes' object-name rule.

Pure standard library; no Ansible import.
"""

from __future__ import annotations

import re
import shlex

DNS_SUBDOMAIN = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')
# kubectl prints the API server's status reason as "Error from server (Reason): message".
SERVER_ERROR = re.compile(r'Error from server \(([A-Za-z]+)\):\s*(.*)')
NOT_FOUND = re.compile(r'\(NotFound\)|not found')

# the options of every module that runs the platform's kubectl (documented by the doc fragment
# baremetal.k3s._kubectl and its KUBECTL): ARGUMENT_SPEC = dict(OPTIONS, ...)
OPTIONS = {
    'kubectl': {'type': 'list', 'elements': 'str', 'required': True},
    'kubeconfig': {'type': 'path'},
}


def is_dns_subdomain(name):
    """Kubernetes' rule for most object names (RFC 1123 subdomain, at most 253 characters)."""
    return isinstance(name, str) and len(name) <= 253 and bool(DNS_SUBDOMAIN.fullmatch(name))


def quote(argv):
    """A command as a shell would take it back, for messages."""
    return ' '.join(shlex.quote(a) for a in argv)


def first_line(text, limit=300):
    """The first non-empty line of TEXT, cut at LIMIT characters."""
    line = next((part.strip() for part in (text or '').splitlines() if part.strip()), '')
    return line if len(line) <= limit else line[:limit] + '...'


def api_reason(err, limit=300):
    """``(reason, message)`` of kubectl's ``Error from server (Reason): message``; ('', first line) for other errors."""
    m = SERVER_ERROR.search(err or '')
    if m:
        return m.group(1), m.group(2).strip()
    return '', first_line(err, limit)
