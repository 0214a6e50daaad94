# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Make ``ansible_collections.baremetal.k3s`` importable from a plain checkout.

ansible-test places the collection under ``ansible_collections/baremetal/k3s`` itself;
plain ``pytest`` from a clone does not, so a symlink farm in a temp dir stands in.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    import ansible_collections.baremetal.k3s.plugins  # noqa: F401 pylint: disable=unused-import
except ImportError:
    # one farm per checkout: two checkouts tested at once must not re-point each other's link
    _farm = os.path.join(tempfile.gettempdir(), 'baremetal-k3s-pytest-%d-%s'
                         % (os.getuid(), hashlib.sha256(_ROOT.encode()).hexdigest()[:10]))
    _link = os.path.join(_farm, 'ansible_collections', 'baremetal', 'k3s')
    os.makedirs(os.path.dirname(_link), exist_ok=True)
    if os.path.realpath(_link) != os.path.realpath(_ROOT):
        if os.path.lexists(_link):
            os.unlink(_link)
        os.symlink(_ROOT, _link)
    sys.path.insert(0, _farm)
    for _name in [n for n in sys.modules if n == 'ansible_collections' or n.startswith('ansible_collections.')]:
        del sys.modules[_name]
