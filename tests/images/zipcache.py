# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The test nodes' Python keeps the code it compiles from Ansible's module archives (test images only).

Ansible runs a module on a node as a zip archive (AnsiballZ) that Python imports from; Python caches no
compiled code for what it imports from a zip, so each module run compiles ansible.module_utils and the
collection's module_utils from source again: about 0.12 s of the 0.28 s CPU a module run costs on the CI
machine, tens of thousands of times per CI run. build.sh loads this file from a .pth line at every start
of the nodes' Python; it makes zipimport keep each compiled module under CACHE, keyed by its path inside
the archive and the sha256 of its source, and take it from there the next time. The code that runs is
the same (a changed source is a new key; the file names in tracebacks are the run's own); a cache that
cannot be read or written is passed by. Users' nodes have no such thing; nothing in the collection
knows of it.
"""

import hashlib
import marshal
import os
import zipimport

CACHE = '/var/cache/bk3s-test-zipimport'


def _install():
    compile_source = getattr(zipimport, '_compile_source', None)
    code_type = type(_install.__code__)
    if compile_source is None or not hasattr(code_type, 'replace'):
        return  # another Python than the one this was written for: it compiles, as it always does

    def named(code, filename):
        consts = tuple(named(c, filename) if isinstance(c, code_type) else c for c in code.co_consts)
        return code.replace(co_filename=filename, co_consts=consts)

    def cached(pathname, source):
        inner = pathname.split('.zip' + os.sep, 1)[-1]
        path = os.path.join(CACHE, hashlib.sha256(inner.encode('utf-8', 'replace') + b'\0' + source).hexdigest())
        try:
            with open(path, 'rb') as f:
                return named(marshal.load(f), pathname)
        except (OSError, ValueError, EOFError, TypeError):
            pass
        code = compile_source(pathname, source)
        try:
            os.makedirs(CACHE, mode=0o700, exist_ok=True)
            tmp = '%s.%d' % (path, os.getpid())
            with open(tmp, 'wb') as f:
                marshal.dump(code, f)
            os.replace(tmp, path)
        except OSError:
            pass
        return code

    zipimport._compile_source = cached


_install()
