# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""Names a module takes, checked whole against the grammar of the program that consumes them.

A name (a manifest's file name, a lease name, a node name, a service name...) ends up as a file
name, a kubectl argument or an object's name. Each is checked with ``fullmatch`` against the
grammar of that consumer (``re.match`` with ``^...$`` lets a trailing newline through) before
anything runs; :func:`problem` says which option is wrong, what it holds and what is allowed.

Pure standard library; no Ansible import.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r'[\x00-\x1f\x7f]')


class Grammar:
    """What a consumer accepts as a name: a pattern matched whole, a length limit, the rule in words."""

    def __init__(self, what, pattern, max_len, allowed, forbidden=(), max_bytes=None):
        self.what = what
        self.pattern = re.compile(pattern)
        self.max_len = max_len
        self.max_bytes = max_bytes
        self.allowed = allowed
        self.forbidden = tuple(forbidden)

    def accepts(self, value):
        return problem('name', value, self) is None


# Kubernetes' object names (apimachinery's IsDNS1123Subdomain / IsDNS1123Label)
DNS_SUBDOMAIN = Grammar(
    'a Kubernetes object name (a DNS-1123 subdomain)',
    r'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*', 253,
    'lower-case letters, digits, "-" and ".", starting and ending with a letter or digit, at most 253 characters')
DNS_LABEL = Grammar(
    'a DNS-1123 label', r'[a-z0-9]([-a-z0-9]*[a-z0-9])?', 63,
    'lower-case letters, digits and "-", starting and ending with a letter or digit, at most 63 characters')
# a name in a directory: the kernel refuses "/" and NUL; control characters are refused as well (a newline in a
# file name breaks every line-based tool and listing that reads it)
FILE_NAME = Grammar(
    'a file name', r'[^/\x00-\x1f\x7f]+', None,
    'a name alone: no "/", no control characters, not "." or "..", at most 255 bytes',
    forbidden=('.', '..'), max_bytes=255)
# systemd's unit name characters (unit_name_is_valid: letters, digits, ":-_.\\", "@" for instances); openrc's
# services are files in /etc/init.d
SERVICE = Grammar(
    'a service name', r'[A-Za-z0-9:_.@-]+', 255,
    'letters, digits, ":", "_", ".", "@" and "-", for example k3s, k3s-agent or rke2-server', forbidden=('.', '..'))
# what systemd's EnvironmentFile= and the shell take as a variable name
ENV_KEY = Grammar(
    'an environment variable name', r'[A-Za-z_][A-Za-z0-9_]*', None,
    'letters, digits and "_", not starting with a digit')
LEASE = Grammar(
    'a lease name', r'[A-Za-z0-9][A-Za-z0-9_.-]*', 100,
    'letters, digits, ".", "_" and "-", starting with a letter or digit, at most 100 characters')


def control_character(value):
    """The first control character in ``value`` (as Python writes it, e.g. ``'\\n'``), or None."""
    m = _CONTROL.search(value) if isinstance(value, str) else None
    return repr(m.group(0)) if m else None


def problem(option, value, grammar, hint='', what=None):
    """None when ``value`` is a name of ``grammar``; else the message: the option, what it holds, what is allowed
    (``what`` names the kind of name, grammar's own words by default; ``hint`` is said last)."""
    if not isinstance(value, str) or not value:
        why = ' (it is empty)' if value in ('', None) else ' (it is a %s, not a string)' % type(value).__name__
    elif control_character(value):
        why = ' (it holds the control character %s)' % control_character(value)
    elif value in grammar.forbidden or not grammar.pattern.fullmatch(value):
        why = ''
    elif grammar.max_len is not None and len(value) > grammar.max_len:
        why = ' (it is longer than %d characters)' % grammar.max_len
    elif grammar.max_bytes is not None and len(value.encode('utf-8')) > grammar.max_bytes:
        why = ' (it is longer than %d bytes)' % grammar.max_bytes
    else:
        return None
    return '%s %r is not %s%s: use %s%s' % (option, value, what or grammar.what, why, grammar.allowed,
                                            ('; ' + hint) if hint else '')


def check(option, value, grammar, error, hint='', what=None):
    """Raise ``error(message)`` when ``value`` is not a name of ``grammar``; return ``value``."""
    msg = problem(option, value, grammar, hint, what)
    if msg:
        raise error(msg)
    return value
