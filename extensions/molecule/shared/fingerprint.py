# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fingerprint a node's files the collection may touch, and compare with an earlier fingerprint.

Runs on the node (Python 3 standard library only):

    python3 fingerprint.py record OUT [--root DIR]... [--path PATH]... [--created PATH]...
    python3 fingerprint.py compare RECORDED OUT [--path PATH]... [--created PATH]...

``record`` walks every directory under each root (ROOTS, plus ``--root``), dot files and
directories included, and adds each ``--path`` (the paths the collection reported writing, the
``files`` of its modules' results): every entry is written to OUT as its type, mode, owner and
sha256 (or a symlink's target), a named path that does not exist as null. Nothing in a root is
left out: a temp file, a backup, a directory marker or an empty directory left behind is an entry.

``compare`` fingerprints the node again over the roots and paths RECORDED names, plus each
``--path`` (what the collection reported writing since), writes that to OUT and prints
``{"differences": [...]}``: every path that changed, appeared or disappeared, and every path the
collection wrote that RECORDED does not cover (no root of it holds it, so what was there before
is unknown: name its directory as a root). A ``--created`` path is one the collection's first
report of it said it created (a new file, a backup): it did not exist before that, so a
fingerprint recorded before the collection first reported it covers it as absent.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import stat
import sys

# Where baremetal.k3s writes on a k3s, RKE2 or kubeadm node: units and drop-ins (systemd,
# openrc), env files, the config files of k3s and RKE2 and their scheduler configs, kubeadm's
# static pods and our config beside them, RKE2's static pods, our backups.
ROOTS = [
    '/etc/systemd/system', '/usr/lib/systemd/system', '/usr/local/lib/systemd/system', '/lib/systemd/system',
    '/etc/init.d', '/etc/default', '/etc/sysconfig',
    '/etc/rancher', '/usr/lib/rancher',
    '/etc/kubernetes',
    '/var/lib/rancher/k3s/agent/pod-manifests', '/var/lib/rancher/rke2/agent/pod-manifests',
    '/var/backups/baremetal-k3s',
]
# Not a root: /run/baremetal-k3s, where the modules keep their flock files (locks/) and node leases.
# A lease is a path the collection reports writing (node_lease's files), so it is compared as one.


def entry(path):
    """What is at ``path`` (not following a last symlink), or None when nothing is."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    owner = '%d:%d' % (st.st_uid, st.st_gid)
    mode = '%04o' % stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return {'type': 'symlink', 'target': os.readlink(path)}
    if stat.S_ISDIR(st.st_mode):
        return {'type': 'directory', 'mode': mode, 'owner': owner}
    if stat.S_ISREG(st.st_mode):
        digest = hashlib.sha256()
        with open(path, 'rb') as f:
            for block in iter(lambda: f.read(1 << 16), b''):
                digest.update(block)
        return {'type': 'file', 'mode': mode, 'owner': owner, 'sha256': digest.hexdigest()}
    return {'type': 'other', 'mode': mode, 'owner': owner}


def walk(root):
    """Every path under ``root`` and ``root`` itself, dot files included; nothing when it does not exist."""
    if not os.path.lexists(root):
        return
    yield root
    if os.path.islink(root) or not os.path.isdir(root):
        return
    for top, dirs, files in os.walk(root):
        dirs.sort()
        for name in dirs + sorted(files):
            yield os.path.join(top, name)


def record(roots, paths):
    """{'roots': [...], 'paths': [...], 'entries': {path: entry or None}} of the node now."""
    roots = sorted(set(roots))
    entries, walked = {}, set()
    # /lib is /usr/lib on a merged-/usr system: walk such a directory once, under its real name
    # (the name with no symlink in it: the one a test looks up), whichever order the roots come in.
    for root in sorted(roots, key=lambda r: (os.path.realpath(r) != r, r)):
        real = os.path.realpath(root)
        if real in walked:
            continue
        walked.add(real)
        for path in walk(root):
            entries[path] = entry(path)
    for path in paths:
        if path not in entries:
            entries[path] = entry(path)
    return {'roots': roots, 'paths': sorted(set(paths)), 'entries': dict(sorted(entries.items()))}


def covers(fingerprint, path, created=()):
    """Whether ``fingerprint`` knows what was at ``path``: a path it names, one under a root it walked, or one
    the collection created after it was recorded (``created``: first reported as created, and not named by it)."""
    if path in fingerprint['entries'] or path in created:
        return True
    real_dir = os.path.realpath(os.path.dirname(path))
    for root in fingerprint['roots']:
        for base, under in ((root, path), (os.path.realpath(root), os.path.join(real_dir, os.path.basename(path)))):
            if under == base or under.startswith(base.rstrip('/') + '/'):
                return True
    return False


def differences(before, after, created=()):
    """Every path whose entry differs between two fingerprints, as one line each, sorted."""
    out = []
    for path in sorted(set(before['entries']) | set(after['entries'])):
        now = after['entries'].get(path)
        if path not in before['entries'] and not covers(before, path, created):
            out.append('%s: not covered by the recorded fingerprint (now %s); add its directory to the roots'
                       % (path, describe(now)))
            continue
        then = before['entries'].get(path)
        if then == now:
            continue
        what = 'appeared' if then is None else 'disappeared' if now is None else 'changed'
        out.append('%s: %s (%s -> %s)' % (path, what, describe(then), describe(now)))
    return out


def describe(found):
    if found is None:
        return 'absent'
    if found['type'] == 'symlink':
        return 'symlink to %s' % found['target']
    if found['type'] == 'file':
        return 'file %s %s sha256 %s' % (found['mode'], found['owner'], found['sha256'][:12])
    return '%s %s %s' % (found['type'], found['mode'], found['owner'])


def write(out, data):
    text = json.dumps(data, indent=1, sort_keys=True) + '\n'
    if out == '-':
        sys.stdout.write(text)
        return
    with open(out + '.tmp', 'w', encoding='utf-8') as f:
        f.write(text)
    os.replace(out + '.tmp', out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest='command', required=True)
    rec = sub.add_parser('record', help='fingerprint the roots and paths, write it to OUT')
    rec.add_argument('out')
    rec.add_argument('--root', action='append', default=[], help='a directory to walk besides ROOTS')
    rec.add_argument('--path', action='append', default=[], help='a path to fingerprint wherever it is')
    rec.add_argument('--created', action='append', default=[], help='a path the collection reported creating')
    cmp_ = sub.add_parser('compare', help='fingerprint again what RECORDED covers, write it to OUT, print the differences')
    cmp_.add_argument('recorded')
    cmp_.add_argument('out')
    cmp_.add_argument('--path', action='append', default=[], help='a path the collection reported writing')
    cmp_.add_argument('--created', action='append', default=[], help='a path whose first report said it was created')
    args = parser.parse_args(argv)
    if args.command == 'record':
        write(args.out, record(ROOTS + args.root, args.path + args.created))
        return 0
    with open(args.recorded, encoding='utf-8') as f:
        before = json.load(f)
    after = record(before['roots'], before['paths'] + args.path + args.created)
    write(args.out, after)
    sys.stdout.write(json.dumps({'differences': differences(before, after, set(args.created))}) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
