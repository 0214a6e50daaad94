# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This plugin_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""A report's JSON file on the controller, written whole or not at all (the status and pod security reports)."""

from __future__ import annotations

import json
import os
import tempfile


class ReportError(Exception):
    """A problem with the report's options, worded for the user: what is wrong and what to do."""


def write_json_atomically(path, data):
    """Write ``data`` to ``path`` through a temporary file in the same directory, then rename.

    A reader (or the product tests) sees the old file or the whole new one, never a partial
    one; on any error the temporary file is removed and the target is left as it was.

    The one kind of write of the collection outside module_utils/_io.py, on purpose: this is the operator's
    own file on the controller, written by the user who runs the play (no node, no root, no lock
    directory of root's, nothing a run elsewhere could write at the same time); _io writes a node's
    files as root under the node's locks, and its mode and owner rules do not apply here.
    """
    directory = os.path.dirname(path) or '.'
    if os.path.isdir(path):
        raise ReportError('json_path %s is a directory; give a file name, e.g. %s'
                          % (path, os.path.join(path, 'status.json')))
    if not os.path.isdir(directory):
        raise ReportError('json_path %s: directory %s does not exist on the controller; create it or give '
                          'another path' % (path, directory))
    mode = _file_mode(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix='.%s.' % os.path.basename(path), suffix='.tmp')
    except OSError as e:
        raise ReportError('json_path %s: cannot create a file in %s: %s; give a writable directory'
                          % (path, directory, e.strerror or e)) from e
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as f:
            json.dump(data, f, indent=2, sort_keys=True)
            f.write('\n')
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as e:
        _remove_quietly(tmp)
        raise ReportError('json_path %s: cannot write it: %s' % (path, e.strerror or e)) from e
    except BaseException:
        _remove_quietly(tmp)
        raise


def _file_mode(path):
    """Keep an existing file's mode; a new file gets what the umask allows (mkstemp's is 0600)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0o022)
        os.umask(umask)
        return 0o666 & ~umask


def _remove_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass
