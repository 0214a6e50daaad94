# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Start and remove a scenario's node containers with the docker CLI, all at once.

    nodes.py create PLATFORMS_JSON
    nodes.py destroy PLATFORMS_JSON

create returns once every systemd node has finished booting. PLATFORMS_JSON is molecule's
``platforms`` list as create.yml and destroy.yml pass it. The keys the scenarios use are read:
name, hostname, image, command, capabilities, security_opts, cgroupns_mode, tmpfs, volumes,
networks/docker_networks, env; any other key is refused by name, so that a platform option no
container would get is never dropped in silence. Molecule's docker driver does the same through
one Ansible module call per container and per network (25-50 s per scenario here, most of it
Ansible's own work); one ``docker run`` per node, started together, takes a few seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

KNOWN = {
    'name', 'hostname', 'image', 'command', 'override_command', 'pre_build_image', 'pull', 'capabilities',
    'security_opts', 'cgroupns_mode', 'tmpfs', 'volumes', 'networks', 'docker_networks', 'env', 'groups',
    'children',
}
LABEL = 'owner=molecule'  # what molecule's own reset looks for
STAGE_LABEL = 'bk3s.stage=' + os.environ.get('BK3S_STAGE', '')  # tests/run.sh's stage, whose CPU time it is
BOOT_TIMEOUT = 180  # seconds for a node's systemd to finish booting


def docker(*argv, check=True):
    proc = subprocess.run(('docker',) + argv, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise SystemExit('docker %s: exit %d: %s' % (' '.join(argv[:3]), proc.returncode, proc.stderr.strip()))
    return proc


def networks(platform):
    return [n['name'] for n in platform.get('networks') or platform.get('docker_networks') or []]


def run_argv(platform):
    argv = ['run', '-d', '--name', platform['name'], '--hostname', platform.get('hostname', platform['name']),
            '--label', LABEL, '--label', STAGE_LABEL, '--log-driver', 'json-file']
    argv += [a for cap in platform.get('capabilities') or [] for a in ('--cap-add', cap)]
    argv += [a for opt in platform.get('security_opts') or [] for a in ('--security-opt', opt)]
    if platform.get('cgroupns_mode'):
        argv += ['--cgroupns', platform['cgroupns_mode']]
    argv += [a for t in platform.get('tmpfs') or [] for a in ('--tmpfs', t)]
    argv += [a for v in platform.get('volumes') or [] for a in ('-v', v)]
    argv += [a for k, v in sorted((platform.get('env') or {}).items()) for a in ('-e', '%s=%s' % (k, v))]
    nets = networks(platform)
    if nets:
        argv += ['--network', nets[0]]
    argv.append(platform['image'])
    if platform.get('command') and platform.get('override_command', True):
        argv += platform['command'].split()
    return argv, nets[1:]


def wait_booted(platform):
    """Return once the node's systemd has finished booting (running or degraded).

    ``docker run`` returns before systemd in the container listens on its bus: a ``systemctl``
    run at once fails with "Failed to connect to bus" and prints nothing, so a scenario's first
    play would fail on a fast machine. Nodes of another init are left to their scenario.
    """
    if 'systemd' not in (platform.get('command') or ''):
        return
    deadline = time.monotonic() + BOOT_TIMEOUT
    while True:
        proc = docker('exec', platform['name'], 'systemctl', 'is-system-running', '--wait', check=False)
        state = proc.stdout.strip()
        if state in ('running', 'degraded'):
            return
        if state not in ('', 'offline', 'initializing', 'starting') or time.monotonic() > deadline:
            raise SystemExit('%s: systemd did not finish booting (state %r, %s)'
                             % (platform['name'], state, proc.stderr.strip() or 'no message'))
        time.sleep(0.5)


def create(platforms):
    for net in sorted({n for p in platforms for n in networks(p)}):
        if docker('network', 'inspect', net, check=False).returncode != 0:
            docker('network', 'create', '--label', LABEL, net)

    def start(platform):
        argv, more = run_argv(platform)
        docker('rm', '-f', platform['name'], check=False)
        docker(*argv)
        for net in more:
            docker('network', 'connect', net, platform['name'])
        wait_booted(platform)
        return platform['name']

    with ThreadPoolExecutor(max_workers=len(platforms) or 1) as pool:
        started = list(pool.map(start, platforms))
    print('started: %s' % ', '.join(started))


def destroy(platforms):
    names = [p['name'] for p in platforms]
    if names:
        docker('rm', '-f', '-v', *names, check=False)
    for net in sorted({n for p in platforms for n in networks(p)}):
        docker('network', 'rm', net, check=False)
    print('removed: %s' % ', '.join(names))


def main(argv):
    if len(argv) != 3 or argv[1] not in ('create', 'destroy'):
        raise SystemExit(__doc__)
    platforms = json.loads(argv[2])
    unknown = sorted({'%s: %s' % (p.get('name'), k) for p in platforms for k in p if k not in KNOWN})
    if unknown:
        raise SystemExit('nodes.py does not know these platform keys (add them here first): %s' % ', '.join(unknown))
    (create if argv[1] == 'create' else destroy)(platforms)


if __name__ == '__main__':
    main(sys.argv)
