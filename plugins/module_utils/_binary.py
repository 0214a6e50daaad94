# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.k3s_binary``: a new k3s (or RKE2) binary put in place, the old one kept for a rollback.

:func:`plan` reads the node through the View alone: the new binary ``src`` (a regular, executable file whose sha256 must
be the one given), the installed ``path`` and ``<path>.previous``; each binary's version is what ``<binary> --version``
prints first (``k3s version v1.31.4+k3s1 (a4f8e7a1)``, ``rke2 version v1.31.4+rke2r1 (...)``). It refuses, before
anything is written, a downgrade, a skip of more than one minor version, a version above ``max_version`` and a binary of
another program. :func:`apply` writes, under the locks of ``path`` and ``<path>.previous`` that the module holds
(``_io.node_lock``): binaries are tens of MB, so they are streamed (not a ``Change`` of whole bytes), by ``_io``'s rules -
a temp file in the same directory, fsync, rename, the directory fsynced:

* present: the new bytes are staged (their sha256 checked again while copied: ``src`` cannot change under the run),
  then the old binary becomes ``<path>.previous`` (a hard link - a copy where the file system has none - renamed over
  an older ``.previous``), then the staged file is renamed to ``path``. At every instant ``path`` is a whole binary, old or new, and once it is the new one
  ``.previous`` holds the old one.
* previous: the bytes of ``<path>.previous`` are staged and renamed to ``path`` (``.previous`` stays, so a second run
  changes nothing).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _names
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Plan, PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import View, ViewError, file_kind, host_path

PREVIOUS_SUFFIX = '.previous'
MODE = 0o755
CHUNK = 1 << 20
SHA256 = re.compile(r'[0-9a-fA-F]{64}')
VERSION = re.compile(r'v(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?(?:\+(k3s|rke2r)(\d+))?')
VERSION_LINE = re.compile(r'(k3s|rke2) version (\S+)(?: \([^)]*\))?')


class BinaryError(PlanError):
    """The binary cannot be put in place (bad input, a refused version, an unsafe path); nothing was changed."""


class Version:
    """A k3s/RKE2 version, ordered as releases are: major, minor, patch, a pre-release before its release, build."""

    def __init__(self, text):
        m = VERSION.fullmatch(text or '')
        if not m:
            raise ValueError(text)
        self.text = text
        self.major, self.minor, self.patch = int(m.group(1)), int(m.group(2)), int(m.group(3))
        self.pre = m.group(4) or ''
        self.build = int(m.group(6)) if m.group(6) else None
        self.core = (self.major, self.minor, self.patch, 0 if self.pre else 1, self.pre)

    @property
    def key(self):
        return self.core + (self.build or 0,)

    def minor_text(self):
        return '%d.%d' % (self.major, self.minor)


def parse_version_output(out):
    """``(program, Version)`` of ``--version``'s first line, or None when it is not ``k3s|rke2 version v...``."""
    line = (out or '').lstrip().split('\n', 1)[0].strip()
    m = VERSION_LINE.fullmatch(line)
    if not m:
        return None
    try:
        return m.group(1), Version(m.group(2))
    except ValueError:
        return None


def _first_line(text):
    line = (text or '').strip().split('\n', 1)[0].strip()
    return line[:200] if line else ''


def file_sha256(view, path):
    """sha256 (hex) of the node's regular file ``path``, read in blocks (a FIFO or a device is refused, not waited on)."""
    h = hashlib.sha256()
    try:
        f = view.open_regular(path)
        if f is None:
            raise BinaryError('%s does not exist; nothing was changed.' % path)
        with f:
            for block in iter(lambda: f.read(CHUNK), b''):
                h.update(block)
    except ViewError as e:
        raise BinaryError('%s; nothing was changed.' % e)
    except OSError as e:
        raise BinaryError('cannot read %s: %s; nothing was changed.' % (path, e.strerror or e))
    return h.hexdigest()


def run_version(view, path, what):
    """``(program, Version)`` of ``<path> --version``; BinaryError when it cannot be run or prints no version."""
    rc, out, err = view.run([path, '--version'])
    if rc is None:
        raise BinaryError('%s %s cannot be run (it is not an executable file on this node); nothing was changed.' % (what, path))
    found = parse_version_output(out) if rc == 0 else None
    if found is None:
        said = _first_line(out) or _first_line(err)
        raise BinaryError('%s %s does not print a k3s or RKE2 version: "%s --version" exited %s%s. Give a k3s or RKE2 '
                          'binary (its first line is "k3s version v1.31.4+k3s1 (...)"); nothing was changed.'
                          % (what, path, path, rc, ' and printed %r' % said if said else ' and printed nothing'))
    return found


def _trusted(uid):
    return uid in (0, os.geteuid())


def check_directories(view, path, option, sticky_ok=False):
    """Refuse a path root runs a binary from when someone else could swap it (``_io.path_hazard``, the rule of every
    write): a symlink on the way owned by another user, or a directory on the way (the real one the file is in
    included) that is not a directory of root's closed to others (with ``sticky_ok``, the file's own directory may be a
    sticky one such as /tmp: there nobody else can replace root's file)."""
    hazard = _io.path_hazard(view, path, sticky_ok=sticky_ok)
    if hazard and hazard[0] == 'link':
        raise BinaryError('%s: %s is a symbolic link owned by uid %d, not root: a binary root runs is not written or '
                          'read through a link another user can change. Point %s at a real directory of root\'s; '
                          'nothing was changed.' % (option, hazard[1], hazard[2], option))
    if view.lexists(path) and not view.exists(path):
        raise BinaryError('%s: %s is a symbolic link to %s, which does not exist; fix or remove the link; nothing was '
                          'changed.' % (option, path, os.readlink(view.host_path(path))))
    directory = os.path.dirname(view.realpath(path))
    st = view.stat(directory)
    if st is None or not stat.S_ISDIR(st.st_mode):
        raise BinaryError('%s: the directory %s does not exist; nothing was changed.' % (option, directory))
    if hazard:
        raise BinaryError('%s: the directory %s is owned by uid %d with mode %04o: another user could replace the binary '
                          'root runs. Use a directory of root\'s that only root can write (chown root; chmod go-w)%s; '
                          'nothing was changed.' % (option, hazard[1], hazard[2], hazard[3],
                                                    ' or a sticky one such as /tmp' if sticky_ok else ''))


def check_paths(view, params):
    """:func:`check_directories` of ``path`` and ``src`` (before the locks are taken: nothing is read through a link
    another user planted)."""
    try:
        check_directories(view, params['path'], 'path')
        if params.get('src'):
            check_directories(view, params['src'], 'src', sticky_ok=True)
    except ViewError as e:
        raise BinaryError('%s; nothing was changed.' % e)


def _regular(view, path, option, must_exist):
    """The lstat of ``path`` when it is a regular file (following a link for ``path`` itself), None when absent."""
    st = view.stat(path)
    if st is None:
        if view.lexists(path):
            raise BinaryError('%s: %s is a symbolic link to %s, which does not exist; fix or remove the link; nothing was '
                              'changed.' % (option, path, os.readlink(view.host_path(path))))
        if must_exist:
            raise BinaryError('%s: %s does not exist on the node. Copy the new binary there first (mode 0755); nothing '
                              'was changed.' % (option, path))
        return None
    if not stat.S_ISREG(st.st_mode):
        kind = 'a directory' if stat.S_ISDIR(st.st_mode) else '%s, not a regular file' % file_kind(st.st_mode)
        raise BinaryError('%s: %s is %s; give a binary file; nothing was changed.' % (option, path, kind))
    return st


def validate(params):
    path = params.get('path')
    if not isinstance(path, str) or not os.path.isabs(path) or os.path.normpath(path) != path or path == '/':
        raise BinaryError('path must be the absolute, normalized path of the installed binary (for example '
                          '/usr/local/bin/k3s), not %r' % (path,))
    _names.check('path', os.path.basename(path), _names.FILE_NAME, BinaryError, what='a file name',
                 hint='give the path of the binary k3s runs from')
    if params['state'] == 'present':
        src = params.get('src')
        if not src:
            raise BinaryError('src is required with state=present: the new binary, already on the node (copy it there '
                              'first, for example with ansible.builtin.copy, mode 0755)')
        if not os.path.isabs(src) or os.path.normpath(src) != src:
            raise BinaryError('src must be an absolute, normalized path on the node, not %r' % (src,))
        if not params.get('sha256') or not SHA256.fullmatch(params['sha256']):
            raise BinaryError('sha256 must be the 64 hex digits of the new binary\'s sha256 (from the release\'s '
                              'sha256sum file), not %r' % (params.get('sha256'),))
    elif params.get('src') or params.get('sha256'):
        raise BinaryError('src and sha256 are for state=present; state=previous puts %s%s back and takes neither'
                          % (path, PREVIOUS_SUFFIX))
    if params.get('max_version') is not None:
        try:
            Version(params['max_version'])
        except ValueError:
            raise BinaryError('max_version must be a k3s or RKE2 version such as v1.31.4+k3s1 or v1.31.4, not %r'
                              % (params['max_version'],))


def previous_path(view, path):
    """``<the real file of path>.previous``: beside the file a link points to, where it is written."""
    return view.realpath(path) + PREVIOUS_SUFFIX


def _refusal(src_prog, src_v, inst, params):
    """Why the version change from ``inst`` ((program, Version) or None) to src is refused, or ''."""
    if inst is not None:
        prog, old = inst
        if prog != src_prog:
            return 'src is %s %s but the installed binary is %s %s: a binary of another program is not put in its place' % (
                src_prog, src_v.text, prog, old.text)
        if src_v.key < old.key and not params['allow_downgrade']:
            return ('src is %s, older than the installed %s: a downgrade is refused (a datastore written by the newer '
                    'version may not be read by the older). To go back after an upgrade use state=previous; to downgrade '
                    'anyway set allow_downgrade: true' % (src_v.text, old.text))
        skipped = src_v.major != old.major or src_v.minor > old.minor + 1
        if src_v.key > old.key and skipped and not params['allow_minor_skip']:
            return ('src is %s but the installed binary is %s: that skips a minor version (Kubernetes upgrades one minor '
                    'version at a time). Upgrade to a %d.%d release first, or set allow_minor_skip: true'
                    % (src_v.text, old.text, old.major, old.minor + 1))
    limit = params.get('max_version')
    if limit is not None:
        top = Version(limit)
        over = src_v.core > top.core if top.build is None else src_v.key > top.key
        if over:
            return ('src is %s, newer than max_version %s (a node must not run a newer version than the servers it joins: '
                    'upgrade the servers first)' % (src_v.text, limit))
    return ''


def plan(view, params):
    """The Plan (no Change: apply() streams) of k3s_binary; its facts say what apply() does (``action``)."""
    validate(params)
    path = params['path']
    try:
        check_directories(view, path, 'path')
        installed = _regular(view, path, 'path', must_exist=False)
        prev = previous_path(view, path)
        prev_st = view._stat(prev, follow=False)  # pylint: disable=protected-access
        if prev_st is not None and not stat.S_ISREG(prev_st.st_mode):
            raise BinaryError('%s is not a regular file (a link or a directory); remove it, then run again; nothing was '
                              'changed.' % prev)
        if params['state'] == 'previous':
            return _plan_previous(view, params, path, prev, installed, prev_st)
        return _plan_present(view, params, path, prev, installed)
    except ViewError as e:
        raise BinaryError('%s; nothing was changed.' % e)


def _facts(path, prev, version, previous_version, sha, action, had_previous=False):
    return {'path': path, 'previous_path': prev, 'version': version, 'previous_version': previous_version,
            'sha256': sha, 'action': action, 'had_previous': had_previous}


def _plan_present(view, params, path, prev, installed):
    src = params['src']
    check_directories(view, src, 'src', sticky_ok=True)
    st = view._stat(src, follow=False)  # pylint: disable=protected-access
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise BinaryError('src: %s is a symbolic link (to %s); give the file itself, so that what is checked is what is '
                          'installed; nothing was changed.' % (src, os.readlink(view.host_path(src))))
    st = _regular(view, src, 'src', must_exist=True)
    if not _trusted(st.st_uid) or st.st_mode & 0o022:
        raise BinaryError('src: %s is owned by uid %d with mode %04o: another user could change it between its check and '
                          'its run as root. Copy it as root with mode 0755; nothing was changed.'
                          % (src, st.st_uid, stat.S_IMODE(st.st_mode)))
    if not st.st_mode & 0o111:
        raise BinaryError('src: %s is not executable (mode %04o), so its version cannot be read; copy it with mode 0755; '
                          'nothing was changed.' % (src, stat.S_IMODE(st.st_mode)))
    want = params['sha256'].lower()
    got = file_sha256(view, src)
    if got != want:
        raise BinaryError('src: %s has sha256 %s, not the expected %s: it is not the binary meant (a partial copy, or '
                          'another release or architecture); nothing was changed.' % (src, got, want))
    src_prog, src_v = run_version(view, src, 'src')
    installed_sha = file_sha256(view, path) if installed is not None else None
    if installed_sha == want:
        return Plan(facts=_facts(path, prev, src_v.text, None, want, 'none'))
    inst = None
    if installed is not None:
        try:
            inst = run_version(view, path, 'the installed binary')
        except BinaryError as e:
            if not params['allow_downgrade']:
                raise BinaryError('%s Its version cannot be compared with src\'s %s; to replace it anyway set '
                                  'allow_downgrade: true.' % (e.msg, src_v.text))
    why = _refusal(src_prog, src_v, inst, params)
    if why:
        raise BinaryError('%s; nothing was changed.' % why)
    facts = _facts(path, prev, src_v.text, inst[1].text if inst else None, want,
                   'replace' if installed is not None else 'install', view.lexists(prev))
    facts['installed_sha256'] = installed_sha
    return Plan(facts=facts)


def _version_or_none(view, path):
    try:
        return run_version(view, path, 'binary')[1].text
    except BinaryError:
        return None


def _plan_previous(view, params, path, prev, installed, prev_st):  # pylint: disable=unused-argument
    if prev_st is None:
        raise BinaryError('there is no %s to put back at %s: k3s_binary keeps the old binary there only when it replaced '
                          'one; nothing was changed.' % (prev, path))
    sha = file_sha256(view, prev)
    version = _version_or_none(view, prev)
    if installed is not None and file_sha256(view, path) == sha:
        return Plan(facts=_facts(path, prev, version, None, sha, 'none'))
    replaced = _version_or_none(view, path) if installed is not None else None
    return Plan(facts=_facts(path, prev, version, replaced, sha, 'rollback'))


# -- apply ---------------------------------------------------------------------------------------------------------
def _copier(source, want):
    """``copy(f)``: the bytes of the host file ``source`` (a regular file, opened without following a link) written to
    ``f``; their sha256 must be ``want`` (``src`` cannot change under the run), else ApplyError and nothing is put in
    place."""
    def copy(f):
        h = hashlib.sha256()
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, 'rb') as src:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise _io.ApplyError('%s is no longer a regular file; nothing was changed.' % _io._node_path(source))  # pylint: disable=protected-access
            for block in iter(lambda: src.read(CHUNK), b''):
                h.update(block)
                f.write(block)
        if h.hexdigest() != want:
            raise _io.ApplyError('%s changed while it was copied (sha256 %s, not %s); nothing was changed.'
                                 % (_io._node_path(source), h.hexdigest(), want))  # pylint: disable=protected-access
    return copy


def apply(module, planned):
    """Carry out ``planned`` (nothing in check mode); the module's result. Every write goes through ``_io``: the new
    bytes into a temp file beside ``path`` (``_io.stream_file``: fsync, mode, rename, the directory fsynced), the old
    binary kept as ``.previous`` by ``_io.keep_copy`` just before the rename; a failure (a full disk...) undoes what
    was done and says so."""
    f = planned.facts
    action = f['action']
    result = dict((k, f[k]) for k in ('path', 'previous_path', 'version', 'previous_version', 'sha256'))
    result['changed'] = action != 'none'
    files = []
    if action in ('replace', 'install'):
        if action == 'replace':
            files.append({'path': f['previous_path'], 'action': 'modified' if f.get('had_previous') else 'created',
                          'backup_file': None})
        files.append({'path': f['path'], 'action': 'modified' if action == 'replace' else 'created', 'backup_file': None})
    elif action == 'rollback':
        files.append({'path': f['path'], 'action': 'modified', 'backup_file': None})
    result['files'] = files
    if module._diff and result['changed']:  # pylint: disable=protected-access
        before = '' if action == 'install' else 'version: %s\n' % (f['previous_version'] or 'unknown')
        result['diff'] = [{'before_header': f['path'], 'after_header': f['path'], 'before': before,
                           'after': 'version: %s\nsha256: %s\n' % (f['version'] or 'unknown', f['sha256'])}]
    if module.check_mode:
        return result
    real = host_path(_io.ROOT, View(root=_io.ROOT).realpath(f['path']))
    real_prev = host_path(_io.ROOT, f['previous_path'])
    written = _io.Written()
    try:
        _io.require_held(real, real_prev)
        # what a killed run left (under both locks, so no live run owns it), also when nothing else changes
        _io.remove_stale(real)
        _io.remove_stale(real_prev)
        if not result['changed']:
            return result
        source = real_prev if action == 'rollback' else host_path(_io.ROOT, module.params['src'])

        def keep_previous():  # .previous = the installed binary (path still is too), once the new bytes are on disk
            _io.keep_copy(real, real_prev, written, _copier(real, f['installed_sha256']), guard=real_prev, mode=MODE)
        keep = keep_previous if action == 'replace' else None
        with _io.stream_file(real, MODE, replace=True, before_rename=keep) as out:
            _copier(source, f['sha256'])(out)
    except OSError as e:
        failed = written.put_back()
        raise _io.ApplyError('could not put %s in place at %s: %s; %s' % (
            f['previous_path'] if action == 'rollback' else module.params['src'], f['path'], _io.os_error(e),
            '%s is as it was, nothing was changed.' % f['path'] if not failed else
            '%s could not be put back as it was (%s): check it.' % (f['previous_path'], failed[0])))
    except _io.ApplyError:
        written.put_back()
        raise
    written.commit()
    return result
