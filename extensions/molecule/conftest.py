# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one place that sets the import path of the scenarios' testinfra tests.

Molecule runs pytest from the scenario's directory, so pytest's rootdir is the scenario's
``tests/``; ``confcutdir`` (extensions/molecule/config.yml, verifier options) lets pytest read
this file above it. Test files import the shared helpers (``bk3s_checks``, ``fingerprint``,
``rollout_probe`` in extensions/molecule/shared) by their module name.
"""

from __future__ import annotations

import os
import sys

SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'shared')
if SHARED not in sys.path:
    sys.path.insert(0, SHARED)
