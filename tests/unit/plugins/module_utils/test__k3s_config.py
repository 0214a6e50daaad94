# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""k3s config file merging, with k3s's own test vectors (pkg/configfilearg/parser_test.go)."""

from __future__ import annotations

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _k3s_config as kc
from ansible_collections.baremetal.k3s.plugins.module_utils import _service
from ansible_collections.baremetal.k3s.plugins.module_utils._view import View

# k3s pkg/configfilearg/testdata (the files as the vectors below were written for)
DATA_YAML = 'foo-bar: baz\na-slice:\n- 1\n- "2"\n- ""\n- three\nisempty:\nc: b\nisfalse: false\nislast: true'
DATA_01 = ('foo-bar: get-overriden\na-slice:\n- 1\n- "1.5"\n- "2"\n- ""\n- three\nb-string: one\nc-slice:\n- one\n'
           '- two\nd-slice:\n- one\n- two')
DATA_02 = 'foo-bar: bar-foo\nb-string+: two\nc-slice+:\n- three\nd-slice:\n- three\n- four\ne-slice+:\n- one\n- two'
K3S_OUTPUT = [
    '--foo-bar=bar-foo', '--a-slice=1', '--a-slice=1.5', '--a-slice=2', '--a-slice=', '--a-slice=three',
    '--isempty=', '-c=b', '--isfalse=false', '--islast=true', '--b-string=one', '--b-string=two',
    '--c-slice=one', '--c-slice=two', '--c-slice=three', '--d-slice=three', '--d-slice=four',
    '--e-slice=one', '--e-slice=two',
]
K3S_SINGLE_02 = ['--foo-bar=bar-foo', '--b-string=two', '--c-slice=three', '--d-slice=three', '--d-slice=four',
                 '--e-slice=one', '--e-slice=two']


@pytest.fixture
def testdata(tmp_path):
    (tmp_path / 'data.yaml').write_text(DATA_YAML)
    d = tmp_path / 'data.yaml.d'
    d.mkdir()
    (d / '01-data.yml').write_text(DATA_01)
    (d / '02-data.yaml').write_text(DATA_02)
    (d / '02-data-ignore-this.txt').write_text('ignored: true\n')
    (d / 'a-directory.yaml').mkdir()
    return tmp_path


def file_flags(root, config_file):
    """The flags k3s makes of ``config_file`` and its drop-ins, in a node tree under ``root``."""
    view = View(root=str(root))
    return kc.to_flags(kc.merge(_service.config_documents(view, _service.config_files(view, config_file))))


def test_k3s_vector_read_config_file(testdata):
    assert file_flags(testdata, '/data.yaml') == K3S_OUTPUT
    assert kc.insert_flags(['k3s', 'server'], file_flags(testdata, '/data.yaml')) == ['k3s', 'server'] + K3S_OUTPUT
    argv = ['before', 'server', 'before', '-c', '/data.yaml', 'after']
    assert kc.insert_flags(argv, file_flags(testdata, kc.find_config_file(argv))) == \
        ['before', 'server'] + K3S_OUTPUT + ['before', '-c', '/data.yaml', 'after']


def test_k3s_vector_single_file(testdata):
    assert kc.to_flags(kc.merge([('02', kc.load_yaml((testdata / 'data.yaml.d' / '02-data.yaml').read_bytes()))])) \
        == K3S_SINGLE_02


def test_files_order_and_filter(testdata):
    files = _service.config_files(View(root=str(testdata)), '/data.yaml')
    assert files == ['/data.yaml', '/data.yaml.d/01-data.yml', '/data.yaml.d/02-data.yaml']
    assert kc.dropin_names(['b.yml', 'a.YAML', 'c.txt', 'd.yaml'], is_dir=lambda n: n == 'd.yaml') == ['a.YAML', 'b.yml']


def test_missing_config_and_dropins_only(tmp_path):
    assert file_flags(tmp_path, '/missing.yaml') == []
    (tmp_path / 'c.yaml.d').mkdir()
    (tmp_path / 'c.yaml.d' / '10.YAML').write_text('kube-scheduler-arg+:\n- v=2\n')
    assert file_flags(tmp_path, '/c.yaml') == ['--kube-scheduler-arg=v=2']


@pytest.mark.parametrize('docs, flags', [
    ([{'a': 'x'}, {'a': 'y'}], ['-a=y']),
    ([{'a': ['x']}, {'a+': ['y']}], ['-a=x', '-a=y']),
    ([{'a': 'x'}, {'a+': 'y'}], ['-a=x', '-a=y']),
    ([{'a+': ['y']}], ['-a=y']),
    ([{'a+': ['x']}, {'a': ['z']}], ['-a=z']),  # a later file without "+" replaces the accumulated list
    ([{'a': ['x']}, {'b': 1}, {'a+': ['y']}], ['-a=x', '-a=y', '-b=1']),  # first-seen key order
    ([{'a': 1}, {'a+': True}], ['-a=1', '-a=true']),
    ([{'a': None}, {'a+': ['x']}], ['-a=x']),
    ([{'v': 'x'}], ['-v=x']),
])
def test_merge_table(docs, flags):
    assert kc.to_flags(kc.merge([('f%d' % i, list(d.items())) for i, d in enumerate(docs)])) == flags


@pytest.mark.parametrize('text, flags', [
    ('a: yes\nb: on\nc: y\nd: N\ne: off\n', ['-a=true', '-b=true', '-c=true', '-d=false', '-e=false']),
    ('a: 1:30\nb: 2001-12-14\n', ['-a=1:30', '-b=2001-12-14']),
    ('a: 1e3\nb: 0x1F\nc: 1.0\nd: 1e21\ne: .inf\nf: 0.00001\n',
     ['-a=1000', '-b=31', '-c=1', '-d=1e+21', '-e=+Inf', '-f=1e-05']),
    ('a: "yes"\nb: \'1\'\n', ['-a=yes', '-b=1']),
    ('a: x\na+: z\n', ['-a=x', '-a=z']),  # duplicate keys kept in order, as yaml.v2's MapSlice does
    ('', []),
    ('# only a comment\n', []),
    ('m: {x: 1}\n', ['-m=[{x 1}]']),
    # what go-yaml v2 reads and PyYAML's pure-Python reader refuses or reads otherwise
    ('a: b\t# a TAB before the comment\n', ['-a=b']),
    ('a:\n  - x\t# c\n  - z\n', ['-a=x', '-a=z']),
    ('a: 0o17\n', ['-a=15']),
    ('a: 017\n', ['-a=15']),
    ('a: 0x1f\n', ['-a=31']),
    ('a: 1_000\n', ['-a=1000']),
    ('a: 1e6\n', ['-a=1e+06']),
    ('a: [y, n, on, off]\n', ['-a=true', '-a=false', '-a=true', '-a=false']),
    ('a: 1:30\n', ['-a=1:30']),
    ('a: 2026-11-24\n', ['-a=2026-11-24']),
    ('a: "  spaced  "\n', ['-a=spaced']),
    ('a: []\n', []),
])
def test_yaml_values(text, flags):
    assert kc.to_flags(kc.merge([('f', kc.load_yaml(text))])) == flags


@pytest.mark.parametrize('text, message', [
    ('- a\n- b\n', 'mapping of flag names to values'),
    ('a: [\n', 'not valid YAML'),
    ('just text', 'mapping of flag names to values'),
])
def test_bad_files(text, message):
    with pytest.raises(kc.ConfigError, match=message):
        kc.load_yaml(text, 'x.yaml')


@pytest.mark.parametrize('argv, env, expected', [
    (['k3s', 'server'], {}, kc.DEFAULT_CONFIG_FILE),
    (['k3s', 'server', '--config', '/a.yaml'], {}, '/a.yaml'),
    (['k3s', 'server', '-c=/b.yaml'], {}, '/b.yaml'),
    (['k3s', 'server', '--config=/a.yaml'], {'K3S_CONFIG_FILE': '/env.yaml'}, '/env.yaml'),
    (['/usr/local/bin/rke2', 'server'], {}, '/etc/rancher/rke2/config.yaml'),
    (['/usr/local/bin/rke2', 'server'], {'K3S_CONFIG_FILE': '/k3s.yaml'}, '/etc/rancher/rke2/config.yaml'),
    (['/usr/local/bin/rke2', 'server', '--config'], {}, '/etc/rancher/rke2/config.yaml'),
    (['/usr/local/bin/rke2', 'server', '-c', '/r.yaml'], {}, '/r.yaml'),
    (['rke2', 'server', '--config=/a.yaml'], {'RKE2_CONFIG_FILE': '/env.yaml'}, '/env.yaml'),
    (['/opt/k3s/bin/k3s', 'server'], {'RKE2_CONFIG_FILE': '/env.yaml'}, kc.DEFAULT_CONFIG_FILE),
])
def test_find_config_file(argv, env, expected):
    assert kc.find_config_file(argv, env) == expected


@pytest.mark.parametrize('argv, expected', [
    (['server'], ['server', '--x=1']),
    (['k3s', 'agent', '--y'], ['k3s', 'agent', '--x=1', '--y']),
    (['k3s', 'check-config'], ['k3s', 'check-config']),
    ([], []),
])
def test_insert_flags(argv, expected):
    assert kc.insert_flags(argv, ['--x=1']) == expected


def test_flag_values():
    argv = ['k3s', 'server', '--kube-scheduler-arg=a', '--kube-scheduler-arg', 'b', '-kube-scheduler-arg=c',
            '--kube-scheduler-args=no', '--', '--kube-scheduler-arg=after-dashes']
    assert kc.flag_values(argv, 'kube-scheduler-arg') == ['a', 'b', 'c']


def test_effective_scheduler_args(tmp_path):
    (tmp_path / 'config.yaml').write_text('kube-scheduler-arg:\n- v=2\n')
    (tmp_path / 'config.yaml.d').mkdir()
    (tmp_path / 'config.yaml.d' / '99-ours.yaml').write_text('kube-scheduler-arg+:\n- config=/ours.yaml\n')
    view = View(root=str(tmp_path))
    argv = ['/usr/local/bin/k3s', 'server', '--config', '/config.yaml']
    docs = _service.config_documents(view, _service.config_files(view, kc.find_config_file(argv)))

    def effective(args):
        return [v for v, dummy in kc.effective_sources(docs, args[1:], 'unit', 'kube-scheduler-arg')]

    assert effective(argv) == ['v=2', 'config=/ours.yaml']
    assert kc.flag_sources(docs, 'kube-scheduler-arg') == [('v=2', '/config.yaml'), ('config=/ours.yaml', '/config.yaml.d/99-ours.yaml')]
    argv += ['--kube-scheduler-arg=config=/cli.yaml']
    # documented: the command line replaces the list; configfilearg's comment: it appends
    assert effective(argv) == ['config=/cli.yaml']
    appended = [v for v, dummy in kc.flag_sources(docs, 'kube-scheduler-arg')] + kc.flag_values(argv[1:], 'kube-scheduler-arg')
    assert appended == ['v=2', 'config=/ours.yaml', 'config=/cli.yaml']


def test_render_values_round_trip():
    pairs = [('kube-scheduler-arg+', ['config=/a b.yaml', "it's", 'ü: x']), ('other', {'k': [1, True]})]
    text = kc.render_values(pairs, '# header')
    assert text.startswith('# header\nkube-scheduler-arg+:\n  - "config=/a b.yaml"\n')
    assert kc.pairs_to_plain(kc.load_yaml(text)) == pairs
