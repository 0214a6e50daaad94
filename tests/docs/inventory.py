# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""An intersphinx inventory of the pages of docs.ansible.com that the collection's docs refer to (the module pages of
ansible.builtin and community.crypto that its docs name, the return values every module has, action plugins), for a
docs site built without network: Sphinx links them as docs.ansible.com does, and a reference to any other page of
that site is an undefined label, which fails the build (add it here).

    python3 tests/docs/inventory.py OUT.inv
"""

from __future__ import annotations

import sys
import zlib

# label: (page and anchor under https://docs.ansible.com/projects/ansible/devel/, the words a link shows)
LABELS = {
    'common_return_values': ('reference_appendices/common_return_values.html#common-return-values', 'Return Values'),
    'action_plugins': ('plugins/action.html#action-plugins', 'Action plugins'),
    'ansible_configuration_settings': ('reference_appendices/config.html#ansible-configuration-settings',
                                       'Ansible Configuration Settings'),
}
MODULES = ['ansible.builtin.command', 'ansible.builtin.copy', 'ansible.builtin.get_url', 'ansible.builtin.service',
           'ansible.builtin.stat', 'ansible.builtin.systemd_service', 'community.crypto.openssl_csr_pipe',
           'community.crypto.openssl_privatekey']
for fqcn in MODULES:
    namespace, collection, name = fqcn.split('.')
    label = 'ansible_collections.%s_module' % fqcn
    LABELS[label] = ('collections/%s/%s/%s_module.html#%s' % (namespace, collection, name, label.replace('.', '-').replace('_', '-')),
                     '%s module' % fqcn)


def main(path):
    body = ''.join('%s std:label -1 %s %s\n' % (label, uri, text) for label, (uri, text) in sorted(LABELS.items()))
    with open(path, 'wb') as f:
        f.write(b'# Sphinx inventory version 2\n# Project: Ansible\n# Version: devel\n'
                b'# The remainder of this file is compressed using zlib.\n')
        f.write(zlib.compress(body.encode('utf-8')))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
