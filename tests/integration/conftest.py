# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``ansible_collections.baremetal.k3s`` importable here too: the unit tests' set-up, run once more."""

from __future__ import annotations

import os
import runpy

runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'unit', 'conftest.py'))
