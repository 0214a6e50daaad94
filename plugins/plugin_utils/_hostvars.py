# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This plugin_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""One host's variable from the play's hostvars, for the action plugins that report on a fleet."""

from __future__ import annotations

from collections.abc import Mapping


def host_var(hostvars, host, name):
    """The value of ``host``'s variable ``name``; None when it has none (failed before, skipped play, unknown host).

    ``hostvars`` is Ansible's lazy HostVars in a play, a plain dict in tests. Ansible's answers an
    unknown host with an undefined marker rather than a KeyError, hence the membership test first.
    """
    if host not in hostvars:
        return None
    variables = hostvars[host]
    if not isinstance(variables, Mapping) or name not in variables:
        return None
    return variables[name]  # templated on access
