# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The CPU time of the node containers, per tests/run.sh stage (its label bk3s.stage).

    stage_cpu.py DIR    until DIR/stop exists: every 5 s, each container's CPU time from its cgroup;
                        then DIR/nodes.tsv, a line per stage: "stage<TAB>CPU seconds<TAB>containers"

The suite is CPU-bound on its 2 cores, so a stage's cost is its CPU time, not its wall time (which
depends on what ran beside it). What a stage's own processes use, tests/run.sh reads from the shell
(``times``); the processes inside the containers it started are not its children, and are counted
here. A container is read from its cgroup (v1 or v2, cgroupfs or systemd driver) until it is
removed: what it used in its last 5 s alive is missed. Containers without the label (none
started by tests/run.sh) are left out.
"""

import glob
import os
import subprocess
import sys
import time

PATTERNS = (  # (glob of a container's cgroup directory, file, unit of the figure)
    ('/sys/fs/cgroup/cpuacct/docker/*', 'cpuacct.usage', 'ns'),
    ('/sys/fs/cgroup/cpuacct/system.slice/docker-*.scope', 'cpuacct.usage', 'ns'),
    ('/sys/fs/cgroup/docker/*', 'cpu.stat', 'usec'),
    ('/sys/fs/cgroup/system.slice/docker-*.scope', 'cpu.stat', 'usec'),
)


def container_id(path):
    base = os.path.basename(path)
    if base.startswith('docker-') and base.endswith('.scope'):
        base = base[len('docker-'):-len('.scope')]
    return base if len(base) == 64 else None


def usage():
    """{container id: CPU seconds so far}"""
    found = {}
    for pattern, name, unit in PATTERNS:
        for path in glob.glob(pattern):
            cid = container_id(path)
            if not cid:
                continue
            try:
                with open(os.path.join(path, name)) as f:
                    text = f.read()
            except OSError:
                continue
            if unit == 'ns':
                found[cid] = int(text) / 1e9
            else:
                for line in text.splitlines():
                    if line.startswith('usage_usec '):
                        found[cid] = int(line.split()[1]) / 1e6
    return found


def label(cid):
    proc = subprocess.run(['docker', 'inspect', '-f', '{{index .Config.Labels "bk3s.stage"}}', cid],
                          capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ''


def sample(out_dir):
    stages, cpu = {}, {}
    stop = os.path.join(out_dir, 'stop')
    while True:
        last = os.path.exists(stop)
        for cid, seconds in usage().items():
            if cid not in stages:
                stages[cid] = label(cid)
            cpu[cid] = max(seconds, cpu.get(cid, 0.0))
        if last:
            break
        time.sleep(5)
    totals = {}
    for cid, stage in stages.items():
        if stage:
            seconds, count = totals.get(stage, (0.0, 0))
            totals[stage] = (seconds + cpu[cid], count + 1)
    tmp = os.path.join(out_dir, 'nodes.tsv.tmp')
    with open(tmp, 'w') as f:
        for stage, (seconds, count) in sorted(totals.items()):
            f.write('%s\t%d\t%d\n' % (stage, round(seconds), count))
    os.rename(tmp, os.path.join(out_dir, 'nodes.tsv'))


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sample(sys.argv[1])
