# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This doc fragment is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

from __future__ import annotations


class ModuleDocFragment:
    """Attribute documentation shared by this collection's modules."""

    DOCUMENTATION = r'''
options: {}
attributes:
  check_mode:
    description: Can run in C(check_mode) and return changed status prediction without modifying target.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in C(check_mode)), when in diff mode.
'''

    # Modules that change files on the node.
    FILES = r'''
options: {}
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: posix
'''

    # Modules that only read.
    INFO_MODULE = r'''
options: {}
attributes:
  check_mode:
    support: full
    details: This module never changes the node.
  diff_mode:
    support: N/A
    details: This module never changes the node.
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: posix
'''
