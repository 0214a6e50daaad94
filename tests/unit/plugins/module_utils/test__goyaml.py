# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_goyaml: YAML read as go-yaml v2 reads it (k3s's MapSlice, sigs.k8s.io/yaml's JSON).

The expected values here were checked against the real Go code (tests/integration/test_goyaml_oracle.py
runs thousands more documents through gopkg.in/yaml.v2 and sigs.k8s.io/yaml).
"""

from __future__ import annotations

import math
import struct

import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _goyaml as gy

NAN = object()


# ---------------------------------------------------------------- plain scalars
@pytest.mark.parametrize('text, expected', [
    # octal: YAML 1.1 (017), Go (0o17), and what is not octal
    ('017', 15), ('0o17', 15), ('0O17', 15), ('-017', -15), ('+017', 15), ('0_17', 15), ('08', 8.0), ('09', 9.0),
    ('0o8', '0o8'), ('0o', '0o'), ('0', 0), ('00', 0), ('-0', 0), ('+0', 0),
    # hex, binary, underscores, signs, limits
    ('0x1f', 31), ('0X1F', 31), ('-0x1f', -31), ('0x', '0x'), ('0xg', '0xg'), ('0b101', 5), ('-0b101', -5),
    ('0b', '0b'), ('0b2', '0b2'), ('0b+1', 1), ('0b-1', -1), ('1_000', 1000), ('1__000', 1000), ('1000_', 1000),
    ('_1000', '_1000'), ('+1', 1), ('1,000', '1,000'),
    ('9223372036854775807', 2 ** 63 - 1), ('9223372036854775808', 2 ** 63), ('18446744073709551615', 2 ** 64 - 1),
    ('18446744073709551616', 18446744073709551616.0), ('-9223372036854775809', -9223372036854775809.0),
    # floats
    ('.5', 0.5), ('-.5', -0.5), ('+.5', 0.5), ('1e3', 1000.0), ('1E3', 1000.0), ('1.', 1.0), ('1.0', 1.0),
    ('-0.0', -0.0), ('.inf', math.inf), ('-.inf', -math.inf), ('+.inf', math.inf), ('.Inf', math.inf),
    ('.iNf', '.iNf'), ('.nan', NAN), ('.NaN', NAN), ('.nAn', '.nAn'), ('inf', 'inf'), ('nan', 'nan'),
    ('1e400', '1e400'), ('1e-400', 0.0), ('.5_0', 0.5), ('._5', '._5'), ('1_0.5', 10.5), ('0x1p-2', '0x1p-2'),
    # booleans in the three cases go-yaml knows, and the ones it does not
    ('y', True), ('Y', True), ('yes', True), ('Yes', True), ('YES', True), ('yES', 'yES'), ('on', True),
    ('ON', True), ('oN', 'oN'), ('true', True), ('tRUE', 'tRUE'), ('n', False), ('NO', False), ('off', False),
    ('Off', False), ('FALSE', False),
    # null
    ('~', None), ('null', None), ('Null', None), ('NULL', None), ('nULL', 'nULL'), ('', None),
    # timestamps and sexagesimal numbers stay text
    ('2001-12-14', '2001-12-14'), ('2001-12-14T21:59:43Z', '2001-12-14T21:59:43Z'), ('2001-13-01', '2001-13-01'),
    ('1:30', '1:30'), ('190:20:30', '190:20:30'),
    # text
    ('<<', '<<'), ('a b', 'a b'), ('é', 'é'), ('-', '-'), ('.', '.'),
])
def test_resolve_plain(text, expected):
    got = gy.resolve_plain(text)
    if expected is NAN:
        assert isinstance(got, float) and math.isnan(got)
        assert struct.pack('>d', got).hex() == '7ff8000000000001'  # Go's math.NaN()
        return
    assert got == expected
    assert got.__class__ is expected.__class__
    if isinstance(expected, float):
        assert math.copysign(1, got) == math.copysign(1, expected)


@pytest.mark.parametrize('tag, text, expected', [
    ('!!str', '017', '017'), ('!!int', '017', 15), ('!!int', '"12"', 12), ('!!float', '1', 1.0),
    ('!!float', '0o17', 15.0), ('!!bool', 'yes', True), ('!!null', '~', None), ('!!null', '', None),
    ('!!timestamp', '2001-12-14', '2001-12-14'), ('!!timestamp', '2000-02-29', '2000-02-29'),
    ('!!binary', 'aGVsbG8=', 'hello'), ('!', '12', '12'), ('!local', 'yes', 'yes'), ('!!merge', 'x', 'x'),
    ('!<tag:yaml.org,2002:int>', '7', 7),
])
def test_explicit_tags(tag, text, expected):
    value = gy.load('a: %s %s\n' % (tag, text), 'keep').get('a')
    assert value == expected and value.__class__ is expected.__class__


@pytest.mark.parametrize('tag, text, problem', [
    ('!!int', 'abc', 'cannot decode !!str `abc` as a !!int'),
    ('!!bool', '1', 'cannot decode !!int `1` as a !!bool'),
    ('!!int', '1.5', 'cannot decode !!float `1.5` as a !!int'),
    ('!!null', 'x', 'cannot decode !!str `x` as a !!null'),
    ('!!timestamp', '2001-02-29', 'cannot decode !!str `2001-02-29` as a !!timestamp'),
    ('!!binary', 'aGVsbG8', '!!binary value contains invalid base64 data'),
])
def test_explicit_tag_refusals(tag, text, problem):
    with pytest.raises(gy.GoYamlError) as e:
        gy.load('x: 1\na: %s %s\n' % (tag, text), 'keep', name='/etc/rancher/k3s/config.yaml')
    msg = str(e.value)
    assert problem in msg
    assert msg.startswith('/etc/rancher/k3s/config.yaml line 2, column 4: ')
    assert 'fix the file' in msg


def test_quoted_scalars_are_never_resolved():
    assert gy.load('a: "017"\nb: \'yes\'\nc: "~"\nd: ""\n', 'keep') == [('a', '017'), ('b', 'yes'), ('c', '~'), ('d', '')]


# ---------------------------------------------------------------- mappings: k3s (MapSlice) and strict
def test_keep_duplicates_in_file_order():
    pairs = gy.load('b: 1\na: 2\nb: 3\n', 'keep')
    assert isinstance(pairs, gy.Pairs) and not isinstance(pairs, gy.GoMap)
    assert pairs == [('b', 1), ('a', 2), ('b', 3)]
    assert pairs.get('b') == 3 and 'a' in pairs and 'c' not in pairs


def test_strict_refuses_duplicates_with_line():
    with pytest.raises(gy.GoYamlError) as e:
        gy.load('a: 1\nb: 2\na: 3\n', 'error', name='config.yaml')
    assert 'line 3: key "a" already set in map' in str(e.value)
    assert 'remove the duplicates' in str(e.value)


@pytest.mark.parametrize('text', ['yes: 1\non: 2\n', '017: a\n15: b\n', '~: a\nnull: b\n', '0.0: a\n-0.0: b\n'])
def test_strict_duplicates_compare_decoded_keys(text):
    with pytest.raises(gy.GoYamlError):
        gy.load(text, 'error')
    assert len(gy.load(text, 'keep')) == 2


@pytest.mark.parametrize('text', ['1: a\n1.0: b\n', '1: a\n"1": b\n', 'true: a\n1: b\n', '.nan: a\n.nan: b\n'])
def test_strict_keys_of_different_types_differ(text):
    assert len(gy.load(text, 'error')) == 2


def test_last_replaces_in_place():
    m = gy.load('a: 1\nb: 2\na: 3\n', 'last')
    assert isinstance(m, gy.GoMap) and m == [('a', 3), ('b', 2)]


def test_merge_keys():
    text = 'base: &b {x: 1, z: 2}\nm:\n  <<: *b\n  w: 3\n'
    assert gy.load(text, 'last').get('m') == [('x', 1), ('z', 2), ('w', 3)]
    # k3s's MapSlice: the merged pairs are checked, then lost
    assert gy.load(text, 'keep').get('m') == [('w', 3)]
    # strict: a merged key set again is a duplicate
    with pytest.raises(gy.GoYamlError):
        gy.load('base: &b {x: 1}\nm:\n  <<: *b\n  x: 2\n', 'error')
    # non-strict: the later one wins, in document order (go-yaml v2)
    assert gy.load('base: &b {x: 1}\nm:\n  x: 2\n  <<: *b\n', 'last').get('m') == [('x', 1)]
    assert gy.load('m:\n  "<<": {x: 1}\n', 'keep').get('m') == [('<<', [('x', 1)])]


@pytest.mark.parametrize('text, problem', [
    ('m:\n  <<: 1\n', 'map merge requires map or sequence of maps as the value'),
    ('a: &a 1\nm:\n  <<: *a\n', 'map merge requires map or sequence of maps'),
    ('a: *x\n', "unknown anchor 'x' referenced"),
    ('a: &x [*x]\n', "anchor 'x' value contains itself"),
    ('[a]: 1\n', 'invalid map key'),
])
def test_decode_refusals(text, problem):
    with pytest.raises(gy.GoYamlError) as e:
        gy.load(text, 'last')
    assert problem in str(e.value)


def test_invalid_map_key_is_fine_in_a_mapslice():
    assert gy.load('[a]: 1\n', 'keep') == [(['a'], 1)]


def test_billion_laughs_is_refused_like_go():
    levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip('abcde', 'bcdef'):
        levels.append('%s: &%s [%s]' % (name, name, ','.join(['*' + prev] * 9)))
    with pytest.raises(gy.GoYamlError) as e:
        gy.load('\n'.join(levels) + '\n', 'keep')
    assert 'excessive aliasing' in str(e.value)


def test_anchor_redefinition_and_aliases():
    assert gy.load('a: &x 1\nb: &x 2\nc: *x\n', 'keep') == [('a', 1), ('b', 2), ('c', 2)]


def test_only_the_first_document_is_read():
    assert gy.load('a: 1\n---\n[b\n', 'keep') == [('a', 1)]
    assert len(gy.compose_all('a: 1\n---\nb: 2\n')) == 2


# ---------------------------------------------------------------- k3s config files
def test_load_pairs():
    text = ('write-kubeconfig-mode: "0644"\ntls-san:\n  - foo.local\nnode-label+: [a=b]\ndisable: traefik\n'
            'cluster-init: yes\nkube-scheduler-arg: v=2\ny: 0o17\n')
    pairs = gy.load_pairs(text, name='/etc/rancher/k3s/config.yaml')
    assert pairs == [('write-kubeconfig-mode', '0644'), ('tls-san', ['foo.local']), ('node-label+', ['a=b']),
                     ('disable', 'traefik'), ('cluster-init', True), ('kube-scheduler-arg', 'v=2'), (True, 15)]
    assert [gy.to_k3s_string(k) for k, _v in pairs][-1] == 'true'


@pytest.mark.parametrize('text', ['', '# only a comment\n', '---\n', '~\n', 'null\n'])
def test_load_pairs_empty(text):
    assert gy.load_pairs(text) == []


@pytest.mark.parametrize('text, problem', [
    ('hello\n', 'cannot unmarshal string into yaml.MapSlice'),
    ('"null"\n', 'cannot unmarshal string into yaml.MapSlice'),
    ('- key: a\n  value: 1\n', 'holds a sequence, not a mapping'),
])
def test_load_pairs_refusals(text, problem):
    with pytest.raises(gy.GoYamlError) as e:
        gy.load_pairs(text, name='config.yaml.d/10.yaml')
    assert problem in str(e.value) and str(e.value).startswith('config.yaml.d/10.yaml line 1')


def test_tab_before_comment_is_read():
    assert gy.load_pairs('a: b\t# c\nd:\t1\n') == [('a', 'b'), ('d', 1)]


# ---------------------------------------------------------------- Go formatting
@pytest.mark.parametrize('value, sprint, k3s', [
    (None, '<nil>', ''), (True, 'true', 'true'), (15, '15', '15'), (2 ** 64 - 1, '18446744073709551615', None),
    (1.0, '1', '1'), (1.5, '1.5', '1.5'), (1e6, '1e+06', '1e+06'), (100000.0, '100000', '100000'),
    (123456789.0, '1.23456789e+08', None), (0.0001, '0.0001', None), (0.00001, '1e-05', None), (1e21, '1e+21', None),
    (-0.0, '-0', '-0'), (math.inf, '+Inf', '+Inf'), (-math.inf, '-Inf', None), (gy.GO_NAN, 'NaN', 'NaN'),
    (' x ', ' x ', 'x'), ([1, 'a'], '[1 a]', '1'), ([], '[]', ''), ([[1, 2]], '[[1 2]]', '[1 2]'),
    (gy.Pairs([('a', 1), ('b', [None])]), '[{a 1} {b [<nil>]}]', '[{a 1} {b [<nil>]}]'),
    (gy.GoMap([('b', 1), ('a', 2)]), 'map[a:2 b:1]', None),
])
def test_go_strings(value, sprint, k3s):
    assert gy.to_go_string(value) == sprint
    if k3s is not None:
        assert gy.to_k3s_string(value) == k3s


# ---------------------------------------------------------------- sigs.k8s.io/yaml
@pytest.mark.parametrize('text, expected', [
    ('b: 1\na: [1.0, 1.5, 1e21, 1e-7, 0.000001, -0.0]\n', '{"a":[1,1.5,1e+21,1e-7,0.000001,-0],"b":1}'),
    ('1: a\n1.5: b\ntrue: c\n0.1: d\n1e6: e\n.inf: f\n', '{".inf":"f","0.1":"d","1":"a","1.5":"b","1e+06":"e","true":"c"}'),
    ('a: "<&>"\nb: "\\u2028\\x01\\t"\n', '{"a":"\\u003c\\u0026\\u003e","b":"\\u2028\\u0001\\t"}'),
    ('a: 2001-12-14\nb: 1:30\nc: 18446744073709551615\n', '{"a":"2001-12-14","b":"1:30","c":18446744073709551615}'),
    ('', 'null'), ('[]\n', '[]'), ('é: ü\nB: 1\nb: 2\n', '{"B":1,"b":2,"é":"ü"}'),
])
def test_yaml_to_json(text, expected):
    assert gy.yaml_to_json(text) == expected


@pytest.mark.parametrize('text, problem', [
    ('a: .nan\n', 'json: unsupported value: NaN'),
    ('~: a\n', 'unsupported map key of type: <nil>'),
    ('18446744073709551615: a\n', 'unsupported map key of type: uint64'),
    ('1: a\n"1": b\n', 'both become "1" in JSON'),
    ('a: 1\na: 2\n', 'already set in map'),
])
def test_yaml_to_json_refusals(text, problem):
    with pytest.raises(gy.GoYamlError) as e:
        gy.yaml_to_json(text)
    assert problem in str(e.value)


def test_yaml_to_json_not_strict_keeps_the_last():
    assert gy.yaml_to_json('a: 1\na: 2\n', strict=False) == '{"a":2}'


def test_load_json_numbers():
    data = gy.load_json('parallelism: 16\npercentageOfNodesToScore: 1.0\nweight: 1.5\nbig: 1e21\n')
    assert data == {'parallelism': 16, 'percentageOfNodesToScore': 1, 'weight': 1.5, 'big': 1e21}
    assert isinstance(data['percentageOfNodesToScore'], int) and isinstance(data['big'], float)


# ---------------------------------------------------------------- nodes and spans
def test_compose_spans_keys_items():
    text = 'a: 1\nlist:\n- x\n- {k: "v"}\n-\n'
    root = gy.compose(text)
    assert root.kind == 'mapping' and root.style == 'block'
    (k1, v1), (k2, v2) = root.value
    assert (text[k1.start:k1.end], text[v1.start:v1.end], k1.line, k1.column) == ('a', '1', 0, 0)
    assert v2.kind == 'sequence' and v2.style == 'block'
    assert [text[i.start:i.end] for i in v2.value] == ['x', '{k: "v"}', '']
    flow = v2.value[1]
    assert flow.style == 'flow' and flow.value[0][1].style == 'double' and flow.value[0][1].quoted
    assert v2.value[2].start == text.rindex('-') + 1
    assert v1.style == 'plain' and v1.implicit and v1.tag is None


def test_compose_spans_with_bom_crlf_and_markers():
    text = '\ufeff---\r\nkey: "é" # c\r\nn: !!int "3"\r\n...\r\n'
    docs = gy.compose_all(text)
    assert len(docs) == 1 and docs[0].explicit_start and docs[0].explicit_end
    (k, v), (k2, v2) = docs[0].root.value
    assert text[k.start:k.end] == 'key' and text[v.start:v.end] == '"é"'
    assert text[v2.start:v2.end] == '!!int "3"' and v2.tag == gy.INT_TAG and not v2.implicit


def test_compose_block_scalar_and_anchor_alias():
    text = 'a: &x |\n  t\n\nb: *x\n'
    root = gy.compose(text)
    a, b = root.value[0][1], root.value[1][1]
    assert a.style == 'literal' and a.anchor == 'x' and text[a.start:a.end] == '&x |\n  t\n\n'
    assert b.kind == 'alias' and b.target is a and b.value == 'x'


def test_scan_tokens():
    kinds = [t.kind for t in gy.scan('a: [1, 2] # c\n')]
    assert kinds == ['StreamStart', 'BlockMappingStart', 'Key', 'Scalar', 'Value', 'FlowSequenceStart', 'Scalar',
                     'FlowEntry', 'Scalar', 'FlowSequenceEnd', 'BlockEnd', 'StreamEnd']


def test_deep_nesting_does_not_exhaust_the_stack():
    text = 'a: ' + '[' * 3000 + ']' * 3000 + '\n'
    root = gy.compose(text)
    assert root.value[0][1].kind == 'sequence'


# ---------------------------------------------------------------- where go-yaml and libyaml 0.2.5 differ
@pytest.mark.parametrize('text, problem', [
    ('a: "x\\/y"\n', 'found unknown escape character "\\/"'),
    ('a: [x?y]\n', 'go-yaml ends a plain scalar at "?" inside [] or {}'),
    ('{a: http://h/p?q=1}\n', 'go-yaml ends a plain scalar at "?"'),
    ('a: 1\n\ufeffb: 2\n', 'a byte order mark (U+FEFF) starts this line'),
    ('\ufeff\ufeffa: 1\n', 'two byte order marks'),
    ('%YAML 1.2\n---\na: 1\n', 'found incompatible YAML document (%YAML 1.2'),
])
def test_go_yaml_refusals_libyaml_would_accept(text, problem):
    with pytest.raises(gy.GoYamlError) as e:
        gy.load(text)
    assert problem in str(e.value)


def test_question_mark_allowed_outside_flow_and_quoted():
    assert gy.load('a: x?y\nb: ["x?y"]\n', 'keep') == [('a', 'x?y'), ('b', ['x?y'])]


# ---------------------------------------------------------------- errors and the pure-Python parser
def test_syntax_error_message():
    with pytest.raises(gy.GoYamlError) as e:
        gy.load('a: 1\n  b: 2\n', name='/etc/rancher/k3s/config.yaml')
    msg = str(e.value)
    assert msg.startswith('/etc/rancher/k3s/config.yaml line 2, column 4: not valid YAML: ')
    assert e.value.line == 2 and 'go-yaml (k3s, kube-scheduler) refuses it too' in msg


def test_pure_python_refusal_names_libyaml():
    with pytest.raises(gy.GoYamlError) as e:
        gy.load('a: b\t# c\n', name='config.yaml', backend='python')
    msg = str(e.value)
    assert 'config.yaml line 1' in msg and 'pure-Python parser' in msg
    assert 'may well be valid' in msg and 'python3-yaml' in msg and 'libyaml' in msg


def test_pure_python_agrees_where_it_reads():
    text = 'a: 0o17\nb: [yes, "no", ~, 1e3]\nc: &x {d: 1}\ne: *x\n'
    assert gy.load(text, 'keep', backend='python') == gy.load(text, 'keep', backend='libyaml')
    root_py, root_c = gy.compose('\ufeffk: v\n', backend='python'), gy.compose('\ufeffk: v\n', backend='libyaml')
    assert (root_py.value[0][1].start, root_py.value[0][1].end) == (root_c.value[0][1].start, root_c.value[0][1].end)


def test_without_libyaml_the_pure_parser_is_used(monkeypatch):
    monkeypatch.setattr(gy, 'HAS_LIBYAML', False)
    assert gy.load('a: 1\n', 'keep') == [('a', 1)]
    with pytest.raises(gy.GoYamlError) as e:
        gy.load('a: b\t# c\n')
    assert 'libyaml' in str(e.value)


def test_bytes_input():
    assert gy.load_pairs(b'\xef\xbb\xbfa: \xc3\xa9\n') == [('a', 'é')]
    assert gy.load_pairs('a: 1\n'.encode('utf-16')) == [('a', 1)]
    with pytest.raises(gy.GoYamlError) as e:
        gy.load_pairs(b'a: \xff\n', name='x.yaml')
    assert 'invalid UTF-8' in str(e.value)


def test_duplicate_keys_argument():
    with pytest.raises(ValueError):
        gy.load('a: 1\n', 'first')
