# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""What k3s's own ``k3s-killall.sh`` does once the service has stopped, for the k3s_killall module:
the containers' shims and everything under them killed, the pods' mounts unmounted, the CNI network
namespaces and links deleted, the rules kube-proxy, flannel and the CNI plugins left in iptables
dropped. A stopped k3s leaves all of these behind (its unit kills the main process only, so that a
restart keeps the pods running); a node being reset should not keep running its pods.

Where this differs from the script, on purpose: only mounts under the k3s places (``/run/k3s``, the
data directory's ``agent/``, the kubelet's ``pods/`` and ``plugins/``, ``/run/netns/cni-*``) are
unmounted, never the data directory itself nor another mount inside it (an operator's disk for
local-path volumes, say); a mount point is removed after its unmount only when it is an empty
directory (the script removes it and what is under it); and nothing runs while k3s still does.

``plan`` reads through a View alone; ``apply`` acts through the View's commands and a kill function.
"""

from __future__ import annotations

import os
import re
import signal
import time

from ansible_collections.baremetal.k3s.plugins.module_utils import _names
from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets as secrets
from ansible_collections.baremetal.k3s.plugins.module_utils import _service as services
from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import RunTimeout

# The links k3s-killall.sh deletes by name; those enslaved to cni0 (the pods' veths) go as well.
LINKS = ('cni0', 'flannel.1', 'flannel-v6.1', 'kube-ipvs0', 'flannel-wg', 'flannel-wg-v6')
BRIDGE = 'cni0'
# A rule line the script drops: grep -v KUBE- | grep -v CNI- | grep -iv flannel.
RULE = re.compile(r'KUBE-|CNI-|(?i:flannel)')
RULE_TOOLS = (('iptables', 'iptables-save', 'iptables-restore'), ('ip6tables', 'ip6tables-save', 'ip6tables-restore'))
NETNS_DIR = '/run/netns'
NETNS_PREFIX = 'cni-'
# Tests set this to a kill function of their own (the fake node's processes are not real).
KILL = None
_OCTAL = re.compile(r'\\([0-7]{3})')


def mount_points(mountinfo):
    """The mount points of ``/proc/self/mountinfo`` (its fifth field, octal escapes undone)."""
    points = []
    for line in (mountinfo or '').splitlines():
        fields = line.split(' ')
        if len(fields) > 4:
            points.append(_OCTAL.sub(lambda m: chr(int(m.group(1), 8)), fields[4]))
    return points


def _under(path, prefix):
    return path == prefix or path.startswith(prefix.rstrip('/') + '/')


def mount_prefixes(data_dir):
    """The directories whose mounts (themselves and below) are the pods'."""
    return ('/run/k3s', data_dir.rstrip('/') + '/agent', '/var/lib/kubelet/pods', '/var/lib/kubelet/plugins')


def pods_mounts(points, data_dir):
    """The mounts to unmount, deepest first (a mount over another goes first)."""
    def chosen_one(p):
        if any(_under(p, prefix) for prefix in mount_prefixes(data_dir)):
            return True
        return os.path.dirname(p) == NETNS_DIR and os.path.basename(p).startswith(NETNS_PREFIX)

    chosen = [p for p in points if chosen_one(p)]
    return sorted(chosen, reverse=True)  # a mount stacked over another is listed (and unmounted) once per layer


def shim_pids(procs, data_dir):
    """Processes started from a containerd shim of k3s's data directory (``<data-dir>/data/<hash>/bin/containerd-shim*``,
    as the script's ``grep -w 'k3s/data/[^/]*/bin/containerd-shim'`` on the arguments)."""
    shim = re.compile(r'^%s/data/[^/]+/bin/containerd-shim' % re.escape(data_dir.rstrip('/')))
    return sorted(pid for pid, (dummy, argv) in procs.items() if any(shim.match(word) for word in argv[:2]))


def with_descendants(procs, roots):
    """``roots`` and every process below them (by parent pid), parents first."""
    children = {}
    for pid, (ppid, dummy) in procs.items():
        children.setdefault(ppid, []).append(pid)
    out, todo, seen = [], list(roots), set()
    while todo:
        pid = todo.pop(0)
        if pid in seen or pid not in procs:
            continue
        seen.add(pid)
        out.append(pid)
        todo.extend(sorted(children.get(pid, [])))
    return out


def running_service(procs):
    """The first process that is a running k3s (or RKE2) server or agent, as (pid, argv); None when there is none.

    Read as k3s really runs: it rewrites its command line to the one string ``/usr/local/bin/k3s server`` (the
    arguments hidden), which counts as much as ``k3s server --token ...`` (``_service.running_command``).
    """
    for pid in sorted(procs):
        argv = procs[pid][1]
        if services.running_command(argv) is not None:
            return pid, argv
    return None


def shown_argv(argv):
    """A process's command line for a message: secrets hidden, the NUL padding of a rewritten title left out,
    control characters escaped."""
    return _terminal.escape(' '.join(secrets.hide_argv([a for a in argv if a != ''])))


def kept_rules(saved):
    """``iptables-save`` output without the rules the script drops, and how many lines were dropped."""
    lines = saved.splitlines(True)
    kept = [line for line in lines if not RULE.search(line)]
    return ''.join(kept), len(lines) - len(kept)


def read_processes(view):
    """{pid: (ppid, argv)} of the node's processes (kernel threads and the gone left out)."""
    procs = {}
    for pid in view.pids():
        stat = view.proc_stat(pid)
        argv = view.cmdline(pid)
        if stat is not None and argv:
            procs[pid] = (stat['ppid'], argv)
    return procs


def read_links(view):
    """The links to delete: those of :data:`LINKS` the node has, after the ones enslaved to cni0."""
    names = view.listdir('/sys/class/net') or []

    def enslaved_to_bridge(n):
        master = '/sys/class/net/%s/master' % n
        return n != BRIDGE and view.lexists(master) and os.path.basename(view.realpath(master)) == BRIDGE

    enslaved = sorted(n for n in names if enslaved_to_bridge(n))
    return enslaved + [n for n in LINKS if n in names]


def read_rules(view, enabled):
    """{family: (kept text, dropped lines)} for each iptables family whose save and restore programs the node has."""
    rules = {}
    for family, save, restore in RULE_TOOLS if enabled else ():
        if view.which(save) is None or view.which(restore) is None:
            continue
        rc, out, err = view.run([save])
        if rc != 0:
            raise PlanError('%s failed (rc %s): %s. Nothing was changed; run with iptables=false to leave the rules.'
                            % (save, rc, (err or out or '').strip()[:300]))
        text = out.decode('utf-8', 'surrogateescape') if isinstance(out, bytes) else out
        kept, dropped = kept_rules(text)
        if dropped:
            rules[family] = (kept, dropped)
    return rules


def plan(view, params):
    """What a kill-all would do on this node; PlanError when it must not run."""
    data_dir = params['data_dir']
    if _names.control_character(data_dir):
        raise PlanError('data_dir %r holds the control character %s: give k3s\'s data directory as a plain path. '
                        'Nothing was changed.' % (data_dir, _names.control_character(data_dir)))
    if not os.path.isabs(data_dir) or os.path.normpath(data_dir) in ('/', '//') or os.path.normpath(data_dir) != data_dir.rstrip('/'):
        raise PlanError('data_dir: %r is not a normalised absolute directory other than /: give k3s\'s data '
                        'directory (the default /var/lib/rancher/k3s, or its --data-dir). Nothing was changed.' % data_dir)
    procs = read_processes(view)
    service = running_service(procs)
    if service is not None:
        raise PlanError('k3s still runs on this node (pid %d: %s): stop its service first (the reset playbook stops '
                        'it before this step). Nothing was changed.' % (service[0], _terminal.cut(shown_argv(service[1]), 200)))
    netns = sorted(n for n in view.listdir(NETNS_DIR) or [] if n.startswith(NETNS_PREFIX))
    return {
        'kill': [{'pid': pid, 'argv': procs[pid][1]} for pid in with_descendants(procs, shim_pids(procs, data_dir))],
        'unmount': pods_mounts(mount_points(view.read_text('/proc/self/mountinfo') or ''), data_dir),
        'netns': netns,
        'links': read_links(view),
        'rules': read_rules(view, params['iptables']),
    }


def _gone(view, pids, kill, wait):
    """SIGKILL each of ``pids`` and wait up to ``wait`` seconds for them all to leave /proc; the ones left.

    ``pids`` come parents first (:func:`with_descendants`); they are killed children first, so that a run stopped
    half-way never leaves a pod's process whose shim is already gone: reparented to init, it would no longer be
    found below a k3s shim, and the next run would leave it running."""
    for pid in reversed(pids):
        try:
            kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + wait
    while True:
        left = [pid for pid in pids if (view.proc_stat(pid) or {}).get('state', 'Z') not in ('Z', 'X', 'x')]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.1)


def _run(view, argv, stdin=None):
    """None when ``argv`` ran, else what it said (or that it hung and was stopped)."""
    try:
        rc, out, err = view.run(argv, stdin)
    except RunTimeout as e:
        return e.msg
    if rc == 0:
        return None
    said = err or out or ''
    said = said.decode('utf-8', 'replace') if isinstance(said, bytes) else said
    return '%s: rc %s: %s' % (_terminal.escape(' '.join(argv)), rc, _terminal.one_line(said.strip()[:300]) or 'no output')


def would(planned):
    """What :func:`apply` would report, for check mode."""
    return {'killed': planned['kill'], 'unmounted': planned['unmount'], 'netns_deleted': planned['netns'],
            'links_deleted': planned['links'],
            'rules_dropped': dict((family, dropped) for family, (dummy, dropped) in planned['rules'].items())}


def _no_kill(pid, sig):
    raise ProcessLookupError('not the real node: pid %d left alone' % pid)


def apply(view, planned, kill=None, wait=10.0):
    """Do what ``planned`` says; (what was done, what failed). Each step runs even when an earlier one failed
    (a re-run picks up what is left). ``kill`` defaults to os.kill on the real node (a View rooted at /) and to
    nothing elsewhere: a test's fake pids are never signalled."""
    kill = kill or KILL
    if kill is None:
        kill = os.kill if os.path.realpath(view.host_path('/')) == '/' else _no_kill
    done = {'killed': [], 'unmounted': [], 'netns_deleted': [], 'links_deleted': [], 'rules_dropped': {}}
    failed = []
    pids = [p['pid'] for p in planned['kill']]
    left = _gone(view, pids, kill, wait) if pids else []
    done['killed'] = [p for p in planned['kill'] if p['pid'] not in left]
    failed += ['pid %d (%s) still runs after SIGKILL' % (pid, _terminal.cut(shown_argv(
        next(p['argv'] for p in planned['kill'] if p['pid'] == pid)), 120)) for pid in left]
    for point in planned['unmount']:
        said = _run(view, ['umount', point])
        if said:
            failed.append(said)
            continue
        done['unmounted'].append(point)
        if view.isdir(point) and not view.listdir(point) and not point.startswith(NETNS_DIR + '/'):
            _run(view, ['rmdir', point])
    for name in planned['netns']:
        said = _run(view, ['ip', 'netns', 'delete', name])
        failed += [said] if said else []
        done['netns_deleted'] += [] if said else [name]
    for name in planned['links']:
        if not view.lexists('/sys/class/net/' + name):
            continue  # a pod's veth goes with its network namespace
        said = _run(view, ['ip', 'link', 'delete', name])
        failed += [said] if said else []
        done['links_deleted'] += [] if said else [name]
    for family, (kept, dropped) in sorted(planned['rules'].items()):
        restore = dict((f, r) for f, dummy, r in RULE_TOOLS)[family]
        said = _run(view, [restore], kept.encode('utf-8', 'surrogateescape'))
        failed += [said] if said else []
        if not said:
            done['rules_dropped'][family] = dropped
    return done, failed
