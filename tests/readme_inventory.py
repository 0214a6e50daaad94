# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The air-gapped quick start's inventory, taken from README.md as it stands, for the demo's bare nodes.

Usage: python readme_inventory.py README.md BINARY SHA256 SERVERS AGENTS FLEET > inventory.yml

Only what this machine cannot have is changed, and the inventory's header says what:
- the connection: docker exec into the node containers (ansible_connection, the nodes' python);
- the hosts: the README's hosts of each group become the demo's, in order (bk3s-FLEET-server-N,
  bk3s-FLEET-agent-N); each keeps the README host's own variables except ansible_host (the demo
  reaches its nodes by name) and k3s_agent_gpu (no GPU here); a demo node beyond the README's
  hosts has none;
- the binary: *_binary_src and *_binary_sha256 are the double's on this machine;
- k3s_server_config's datastore-endpoint: an external PostgreSQL the machine does not have (the
  servers keep k3s's own datastore).
Everything else (the groups, their variables, k3s's options) is the README's, so an example that
stops working stops the new-user run (tests/product.sh) too.
"""

from __future__ import annotations

import re
import sys

import yaml

SECTION = '## Quick start: a k3s cluster, air-gapped'
HOST_VARS_DROPPED = ('ansible_host', 'k3s_agent_gpu')
CONFIG_KEYS_DROPPED = ('datastore-endpoint',)
# a Markdown ```yaml block (the unit tests read the README's and guides' examples with it too)
BLOCK = re.compile(r'^```yaml\n(.*?)^```', re.M | re.S)


def quick_start(text):
    """The first ```yaml block of the air-gapped quick start, parsed."""
    if SECTION not in text:
        raise SystemExit('README.md has no section "%s"' % SECTION)
    section = text.split(SECTION, 1)[1].split('\n## ', 1)[0]
    match = BLOCK.search(section)
    if not match:
        raise SystemExit('README.md\'s "%s" has no yaml block' % SECTION)
    return yaml.safe_load(match.group(1))


def for_demo(inventory, binary, sha256, counts, fleet):
    """The README's inventory with the demo's connection, hosts and binary (see the module's docstring)."""
    top = inventory['all']
    top_vars = dict(top.get('vars') or {})
    for var in list(top_vars):
        if var.endswith('_binary_src'):
            top_vars[var] = binary
        elif var.endswith('_binary_sha256'):
            top_vars[var] = sha256
    top_vars = dict({'ansible_connection': 'community.docker.docker', 'ansible_python_interpreter': '/usr/bin/python3'},
                    **top_vars)
    children = {}
    for group, body in (top.get('children') or {}).items():
        body = dict(body or {})
        group_vars = dict(body.get('vars') or {})
        if isinstance(group_vars.get('k3s_server_config'), dict):
            group_vars['k3s_server_config'] = {k: v for k, v in group_vars['k3s_server_config'].items()
                                               if k not in CONFIG_KEYS_DROPPED}
        readme_hosts = list((body.get('hosts') or {}).values())
        hosts = {}
        for i in range(counts.get(group, 0)):
            own = readme_hosts[i] if i < len(readme_hosts) else {}
            hosts['bk3s-%s-%s-%d' % (fleet, group, i + 1)] = {k: v for k, v in (own or {}).items()
                                                              if k not in HOST_VARS_DROPPED}
        out = {}
        if group_vars:
            out['vars'] = group_vars
        out['hosts'] = hosts
        children[group] = out
    return {'all': {'vars': top_vars, 'children': children}}


def main(argv):
    readme, binary, sha256, servers, agents, fleet = argv[1:7]
    with open(readme) as f:
        inventory = quick_start(f.read())
    out = for_demo(inventory, binary, sha256, {'server': int(servers), 'agent': int(agents)}, fleet)
    sys.stdout.write('# The air-gapped quick start of README.md, taken from it by tests/readme_inventory.py for the\n'
                     '# demo\'s bare nodes: the connection, the hosts (their ansible_host and k3s_agent_gpu left out),\n'
                     '# the binary\'s path and sha256, and datastore-endpoint (no PostgreSQL here) are the demo\'s.\n')
    sys.stdout.write(yaml.safe_dump(out, sort_keys=False, default_flow_style=False))


if __name__ == '__main__':
    main(sys.argv)
