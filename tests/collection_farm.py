# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A directory whose ``ansible_collections/baremetal/k3s`` is this checkout: what makes the
collection importable (and an ANSIBLE_COLLECTIONS_PATH) from a plain clone. Used by
tests/conftest.py and by the scripts that run outside pytest."""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def farm():
    """The farm's path, its link made (or re-pointed) to this checkout."""
    # one farm per checkout: two checkouts tested at once must not re-point each other's link
    path = os.path.join(tempfile.gettempdir(), 'baremetal-k3s-pytest-%d-%s'
                        % (os.getuid(), hashlib.sha256(ROOT.encode()).hexdigest()[:10]))
    link = os.path.join(path, 'ansible_collections', 'baremetal', 'k3s')
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if os.path.realpath(link) != os.path.realpath(ROOT):
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(ROOT, link)
    return path


def make_importable():
    """``ansible_collections.baremetal.k3s`` importable from this checkout, unless it already is."""
    try:
        import ansible_collections.baremetal.k3s.plugins  # noqa: F401 pylint: disable=unused-import,import-outside-toplevel
    except ImportError:
        sys.path.insert(0, farm())
        for name in [n for n in sys.modules if n == 'ansible_collections' or n.startswith('ansible_collections.')]:
            del sys.modules[name]
