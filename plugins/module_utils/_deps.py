# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The Python libraries the modules need on a node, and the distribution packages that hold them.

A node needs Python 3.7 or later and, for the modules that read or write YAML, the libraries
below; nothing else (no Kubernetes client: the role talks to the API with the platform's own
kubectl). Pure standard library; the Ansible import is deferred to :func:`missing_lib_msg`.
"""

from __future__ import annotations

PACKAGES = {
    'PyYAML': (
        'Debian/Ubuntu: apt-get install python3-yaml; EL 8/9: dnf install python3-pyyaml '
        '(python3.11-pyyaml when Ansible uses python3.11 on EL 8); SUSE: zypper install python3-PyYAML'
    ),
}


def install_hint(library):
    """One sentence naming the packages that provide ``library``."""
    return 'Install it with the distribution\'s package: %s.' % PACKAGES[library]


def missing_lib_msg(library):
    """Ansible's usual missing-library message, followed by the packages that provide it."""
    from ansible.module_utils.basic import missing_required_lib  # pylint: disable=import-outside-toplevel
    return '%s %s' % (missing_required_lib(library), install_hint(library))
