# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Family: flags as kube-scheduler reads them (cobra on spf13/pflag), from tables of command lines."""

from __future__ import annotations

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _pflag as pflag


@pytest.mark.parametrize('argv, name, values', [
    (['--config=/a'], 'config', ['/a']),
    (['--config', '/a'], 'config', ['/a']),
    (['--config', '-odd-but-a-value'], 'config', ['-odd-but-a-value']),   # a flag with a value takes the next word
    (['--config=/a', '--config=/b'], 'config', ['/a', '/b']),
    (['--v=4'], 'v', ['4']),
    (['-v=2'], 'v', ['2']),                                              # the shorthand of v (PFlagFromGoFlag)
    (['-v2'], 'v', ['2']),
    (['-v', '2'], 'v', ['2']),
    (['-hv=3'], 'v', ['3']),                                             # -h (help, a boolean) then -v=3
    (['--v', '5'], 'v', ['5']),
    (['--write_config_to=/x'], 'write-config-to', ['/x']),               # "_" read as "-"
    (['--write-config-to=/x'], 'write_config_to', ['/x']),
    (['--', '--config=/a'], 'config', []),                                # "--" ends the flags
    (['-config=/a'], 'config', []),                                      # no single-dash long names in pflag
    (['--leader-elect', '--config=/a'], 'config', ['/a']),               # a boolean takes no value
    (['--unknown', 'value', '--config=/a'], 'config', ['/a']),
    (['--unknown', '--config=/a'], 'config', ['/a']),
    (['positional', '--config=/a'], 'config', ['/a']),
    (['-x', '--config=/a'], 'config', ['/a']),                            # an unknown shorthand: skipped
    (['--config'], 'config', [None]),
    (['-v'], 'v', [None]),
])
def test_family_flags_as_kube_scheduler_reads_them(argv, name, values):
    assert pflag.values(argv, name) == values


def test_family_flags_last_value_counts():
    assert pflag.last_value(['--config=/a', '-v=2', '--config', '/b'], 'config') == '/b'
    assert pflag.last_value(['-v=2'], 'config') == ''


def test_family_flags_where_each_flag_stands():
    found = pflag.parse(['--kubeconfig=/k', '-v', '2', '--config', '/c', 'x'])
    assert [(f.name, f.value, f.start, f.end, f.text) for f in found] == [
        ('kubeconfig', '/k', 0, 0, '--kubeconfig=/k'), ('v', '2', 1, 2, '-v 2'), ('config', '/c', 3, 4, '--config /c')]


@pytest.mark.parametrize('arg, split', [
    ('--config=/a', ('config', '/a')), ('--leader-elect', ('leader-elect', None)), ('--a_b=1', ('a-b', '1')),
    ('-v=2', None), ('x', None), ('--', None),
])
def test_family_flags_split(arg, split):
    assert pflag.split(arg) == split
