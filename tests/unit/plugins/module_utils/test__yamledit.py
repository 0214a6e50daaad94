# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_yamledit: byte-preserving edits, checked against what go-yaml reads (_goyaml).

Golden outputs for the layouts (block indentless/indented, flow, JSON, CRLF, BOM, markers),
refusals with their messages, and hypothesis round trips over generated documents: removing
what was appended, or a key that was added, gives the original bytes back, and an edit changes
what go-yaml reads only where it was made.
"""

from __future__ import annotations

import collections
import json
import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ansible_collections.baremetal.k3s.plugins.module_utils import _goyaml as gy
from ansible_collections.baremetal.k3s.plugins.module_utils import _yamledit as ye

EXT = {'urlPrefix': 'http://127.0.0.1:8888/', 'filterVerb': 'filter', 'weight': 1, 'enableHTTPS': False,
       'managedResources': [{'name': 'example.com/x', 'ignoredByScheduler': True}]}
MARK = '# baremetal.k3s extender: csi-baremetal'


def plain(value):
    """What go-yaml reads, with mappings as lists of pairs (comparable)."""
    if isinstance(value, gy.Pairs):
        return [(plain(k), plain(v)) for k, v in value]
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def as_pairs(value):
    if isinstance(value, dict):
        return [(k, as_pairs(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [as_pairs(v) for v in value]
    return value


# ---------------------------------------------------------------- golden outputs
SCHED = ('apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n'
         'clientConnection:\n  kubeconfig: /etc/rancher/k3s/scheduler.kubeconfig\nextenders:\n'
         '- urlPrefix: http://10.0.0.1/\n  weight: 1\n')

GOLDEN = [
    ('indentless', SCHED, SCHED + MARK + '\n- urlPrefix: http://127.0.0.1:8888/\n  filterVerb: filter\n  weight: 1\n'
     '  enableHTTPS: false\n  managedResources:\n  - name: example.com/x\n    ignoredByScheduler: true\n'),
    ('indented', 'extenders:\n  - urlPrefix: a\nother: 1\n',
     'extenders:\n  - urlPrefix: a\n  ' + MARK + '\n  - urlPrefix: http://127.0.0.1:8888/\n    filterVerb: filter\n'
     '    weight: 1\n    enableHTTPS: false\n    managedResources:\n      - name: example.com/x\n'
     '        ignoredByScheduler: true\nother: 1\n'),
    ('indented4', 'a:\n    extenders:\n        -   urlPrefix: a\n',
     'a:\n    extenders:\n        -   urlPrefix: a\n        ' + MARK + '\n        -   urlPrefix: http://127.0.0.1:8888/\n'
     '            filterVerb: filter\n            weight: 1\n            enableHTTPS: false\n'
     '            managedResources:\n                -   name: example.com/x\n'
     '                    ignoredByScheduler: true\n'),
    ('crlf-bom-markers', '\ufeff---\r\nextenders:\r\n- a   \r\n...\r\n',
     '\ufeff---\r\nextenders:\r\n- a   \r\n' + MARK + '\r\n- urlPrefix: http://127.0.0.1:8888/\r\n  filterVerb: filter\r\n'
     '  weight: 1\r\n  enableHTTPS: false\r\n  managedResources:\r\n  - name: example.com/x\r\n'
     '    ignoredByScheduler: true\r\n...\r\n'),
    ('no-final-newline', 'extenders:\n- a',
     'extenders:\n- a\n' + MARK + '\n- urlPrefix: http://127.0.0.1:8888/\n  filterVerb: filter\n  weight: 1\n'
     '  enableHTTPS: false\n  managedResources:\n  - name: example.com/x\n    ignoredByScheduler: true'),
    ('comments', '# head\nextenders: # list\n# about a\n- a # a\n  # inner\n# tail\nother: 1\n',
     '# head\nextenders: # list\n# about a\n- a # a\n' + MARK + '\n- urlPrefix: http://127.0.0.1:8888/\n'
     '  filterVerb: filter\n  weight: 1\n  enableHTTPS: false\n  managedResources:\n  - name: example.com/x\n'
     '    ignoredByScheduler: true\n  # inner\n# tail\nother: 1\n'),
]


@pytest.mark.parametrize('name, before, after', GOLDEN, ids=[g[0] for g in GOLDEN])
def test_append_block_golden(name, before, after):
    doc = ye.Document(before, name)
    assert doc.append('extenders' if 'extenders:' in before.split('\n')[0] or name != 'indented4'
                      else ('a', 'extenders'), EXT, comment=MARK[2:]) >= 1
    assert doc.text == after
    items = doc.items(('a', 'extenders') if name == 'indented4' else 'extenders')
    assert items[-1].comments == [MARK] and items[-1].data == EXT
    assert doc.find_marked(('a', 'extenders') if name == 'indented4' else 'extenders', MARK) == [len(items) - 1]
    doc.remove(('a', 'extenders', -1) if name == 'indented4' else ('extenders', -1), comment=MARK)
    assert doc.text == before


FLOW_GOLDEN = [
    ('extenders: []\n', 'extenders: [{"urlPrefix": "http://x/", "weight": 1}]\n'),
    ('extenders: [ ]\n', 'extenders: [ {"urlPrefix": "http://x/", "weight": 1}]\n'),
    ('extenders: [a, b]\n', 'extenders: [a, b, {"urlPrefix": "http://x/", "weight": 1}]\n'),
    ('extenders: [a,b]\n', 'extenders: [a,b,{"urlPrefix": "http://x/", "weight": 1}]\n'),
    ('extenders: [a, b,]\n', 'extenders: [a, b, {"urlPrefix": "http://x/", "weight": 1},]\n'),
    ('extenders: [\n  a,\n  b\n]\n', 'extenders: [\n  a,\n  b,\n  {\n    "urlPrefix": "http://x/",\n    "weight": 1\n  }\n]\n'),
    ('{\n  "kind": "K",\n  "extenders": []\n}\n',
     '{\n  "kind": "K",\n  "extenders": [\n    {\n      "urlPrefix": "http://x/",\n      "weight": 1\n    }\n  ]\n}\n'),
    ('{\n\t"extenders": [\n\t\t"a"\n\t]\n}',
     '{\n\t"extenders": [\n\t\t"a",\n\t\t{\n\t\t\t"urlPrefix": "http://x/",\n\t\t\t"weight": 1\n\t\t}\n\t]\n}'),
    ('{"extenders":[{"urlPrefix":"a"}]}', '{"extenders":[{"urlPrefix":"a"}, {"urlPrefix": "http://x/", "weight": 1}]}'),
    ('\ufeff{\r\n    "extenders": []\r\n}\r\n',
     '\ufeff{\r\n    "extenders": [\r\n        {\r\n            "urlPrefix": "http://x/",\r\n            "weight": 1\r\n'
     '        }\r\n    ]\r\n}\r\n'),
]


@pytest.mark.parametrize('before, after', FLOW_GOLDEN)
def test_append_flow_and_json_golden(before, after):
    doc = ye.Document(before)
    doc.append('extenders', {'urlPrefix': 'http://x/', 'weight': 1})
    assert doc.text == after
    if doc.is_json:
        json.loads(after.lstrip('\ufeff'))
    doc.remove(('extenders', -1))
    assert doc.text == before


@pytest.mark.parametrize('before, path, key, value, after', [
    ('a: 1\n', (), 'b', {'c': [1, 'yes']}, 'a: 1\nb:\n  c:\n  - 1\n  - "yes"\n'),
    ('a:\n    x: 1\nl:\n  - 1\n', (), 'b', {'c': [1]}, 'a:\n    x: 1\nl:\n  - 1\nb:\n    c:\n      - 1\n'),
    ('a:\n  x: 1\n', ('a',), 'on', 'off', 'a:\n  x: 1\n  "on": "off"\n'),
    ('a: {x: 1}\n', ('a',), 'y', None, 'a: {x: 1, "y": null}\n'),
    ('a: {}\n', ('a',), 'k', [1.5, 'a: b'], 'a: {"k": [1.5, "a: b"]}\n'),
    ('{\n  "a": 1\n}\n', (), 'b', {'c': True}, '{\n  "a": 1,\n  "b": {\n    "c": true\n  }\n}\n'),
    ('', (), 'kube-scheduler-arg', ['config=/etc/k.yaml'], 'kube-scheduler-arg:\n- config=/etc/k.yaml\n'),
    ('# only comments\n', (), 'k', 'v', '# only comments\nk: v\n'),
    ('---\n...\n', (), 'k', 'v', '---\nk: v\n...\n'),
    ('- a: 1\n', (0,), 'b', 2, '- a: 1\n  b: 2\n'),
])
def test_add_key_golden(before, path, key, value, after):
    doc = ye.Document(before)
    doc.add_key(path, key, value)
    assert doc.text == after
    doc.remove(path + (key,))
    assert doc.text == before


@pytest.mark.parametrize('before, path, comment, after', [
    ('l:\n- a\n- b\n- c\n', ('l', 1), None, 'l:\n- a\n- c\n'),
    ('l:\n- a\n- b\n- c\n', ('l', 0), None, 'l:\n- b\n- c\n'),
    ('l:\n- a\n# about b\n- b\n', ('l', 0), None, 'l:\n# about b\n- b\n'),
    ('l:\n- a\n# about b\n- b\n', ('l', 1), None, 'l:\n- a\n# about b\n'),
    ('l:\n- a\n# about b\n- b\n', ('l', 1), True, 'l:\n- a\n'),
    ('l:\n- a\n# x\n# m\n- b\n', ('l', 1), 'm', 'l:\n- a\n# x\n'),
    ('l: # keep\n- a\nm: 1\n', ('l', 0), None, 'l: [] # keep\nm: 1\n'),
    ('l:\n# m\n- a\nm: 1\n', ('l', 0), '# m', 'l: []\nm: 1\n'),
    ('l:\n  - a\nm: 1\n', ('l', 0), None, 'l: []\nm: 1\n'),
    ('a:\n  b: 1\n', ('a', 'b'), None, 'a: {}\n'),
    ('- a: 1\n  b: 2\n', (0, 'a'), None, '- b: 2\n'),
    ('- a: 1\n  b: 2\n', (0, 'b'), None, '- a: 1\n'),
    ('- - x\n  - y\n', (0, 0), None, '- - y\n'),
    ('a: 1\n', ('a',), None, ''),
    ('# head\na: 1\n', ('a',), None, '# head\n'),
    ('a: 1\r\nb: 2', ('b',), None, 'a: 1'),
    ('a: {b: 1, c: 2}\n', ('a', 'b'), None, 'a: {c: 2}\n'),
    ('a: [1, 2, 3]\n', ('a', 1), None, 'a: [1, 3]\n'),
    ('a: [1]\n', ('a', 0), None, 'a: []\n'),
    ('a: [1,]\n', ('a', 0), None, 'a: []\n'),
    ('{\n  "a": 1,\n  "b": 2\n}\n', ('a',), None, '{\n  "b": 2\n}\n'),
    ('{\n  "a": [\n    1\n  ]\n}\n', ('a', 0), None, '{\n  "a": []\n}\n'),
])
def test_remove_golden(before, path, comment, after):
    doc = ye.Document(before)
    doc.remove(path, comment=comment)
    assert doc.text == after


@pytest.mark.parametrize('before, path, value, after', [
    ('a: 1\nb: x # c\n', 'b', 'yes', 'a: 1\nb: "yes" # c\n'),
    ('a: 1\nb: x # c\n', 'b', {'k': 'v'}, 'a: 1\nb: # c\n  k: v\n'),
    ('a: 1\nb:\n  k: v\nc: 2\n', 'b', [1, 2], 'a: 1\nb:\n- 1\n- 2\nc: 2\n'),
    ('a: 1\nb:\n  k: v\nc: 2\n', 'b', 3, 'a: 1\nb: 3\nc: 2\n'),
    ('l:\n- a\n- b\n', ('l', 0), {'x': 1, 'z': 2}, 'l:\n- x: 1\n  z: 2\n- b\n'),
    ('l:\n- x: 1\n  y: 2\n- b\n', ('l', 0), {'z': 3}, 'l:\n- z: 3\n- b\n'),
    ('l: [a, b]\n', ('l', 1), {'z': 3}, 'l: [a, {"z": 3}]\n'),
    ('a: |\n  text\nb: 1\n', 'a', 'new', 'a: new\nb: 1\n'),
    ('a: "1"\n', 'a', 1, 'a: 1\n'),
    ('a: 1\n', 'a', '0o17', 'a: "0o17"\n'),
])
def test_replace_golden(before, path, value, after):
    doc = ye.Document(before)
    doc.replace(path, value)
    assert doc.text == after
    assert plain(doc.get(path)) == as_pairs(value)


# ---------------------------------------------------------------- rendering
@pytest.mark.parametrize('value, text', [
    ('plain', 'plain'), ('http://127.0.0.1:8888/', 'http://127.0.0.1:8888/'), ('a b', 'a b'),
    ('yes', '"yes"'), ('Off', '"Off"'), ('y', '"y"'), ('0o17', '"0o17"'), ('017', '"017"'), ('1_000', '"1_000"'),
    ('1e3', '"1e3"'), ('.inf', '".inf"'), ('~', '"~"'), ('null', '"null"'), ('', '""'), ('<<', '"<<"'),
    ('a: b', '"a: b"'), ('a #b', '"a #b"'), ('-x', '-x'), ('- x', '"- x"'), ('-', '"-"'), ('---x', '"---x"'), ('*x', '"*x"'), ('&x', '"&x"'), ('!x', '"!x"'),
    ('@x', '"@x"'), (' x', '" x"'), ('x ', '"x "'), ('a\tb', '"a\\tb"'), ('a\nb', '"a\\nb"'), ('x:', '"x:"'),
    ('...', '"..."'), ('---x', '"---x"'), ('é', 'é'), ('\x85', '"\\u0085"'), ('\u2028', '"\\u2028"'),
    ('\x7f', '"\\u007f"'), ('2001-12-14', '"2001-12-14"'), ('1:30', '1:30'),
    (None, 'null'), (True, 'true'), (False, 'false'), (15, '15'), (2 ** 64 - 1, '18446744073709551615'),
    (1.0, '1.0'), (1e16, '1e+16'), (-0.0, '-0.0'), (float('inf'), '.inf'), (float('-inf'), '-.inf'),
])
def test_render_scalar(value, text):
    assert ye.render_scalar(value) == text
    back = gy.load('k: %s\n' % text, 'keep').get('k')
    if isinstance(value, float) and math.isnan(value):
        assert math.isnan(back)
    else:
        assert back == value and back.__class__ is value.__class__


def test_render_scalar_refusals():
    with pytest.raises(ValueError):
        ye.render_scalar(2 ** 64)
    with pytest.raises(ValueError):
        ye.render_scalar(float('nan'), json_mode=True)
    with pytest.raises(ValueError):
        ye.render_scalar(object())
    with pytest.raises(ValueError):
        ye.render_string('\ud800')


# ---------------------------------------------------------------- refusals
REFUSALS = [
    ('anchor-on-target', 'a: &x [1]\nb: *x\n', lambda d: d.append('a', 2), 'the sequence carries an anchor (&x)'),
    ('anchor-unreferenced', 'a: &x [1]\n', lambda d: d.append('a', 2), 'carries an anchor (&x)'),
    ('alias-target', 'a: &x [1]\nb: *x\n', lambda d: d.append('b', 2), 'holds an alias (*x), not a sequence'),
    ('path-through-alias', 'a: &x {k: [1]}\nb: *x\n', lambda d: d.append(('b', 'k'), 2),
     'the path goes through an alias (*x)'),
    ('inside-referenced-anchor', 'a: &x {k: [1]}\nb: *x\n', lambda d: d.append(('a', 'k'), 2),
     'it lies inside &x, which an alias (*x) repeats'),
    ('remove-referenced-anchor', 'l:\n- &x 1\n- *x\n', lambda d: d.remove(('l', 0)),
     'it holds the anchor &x, which an alias (*x) repeats'),
    ('merge-key', 'base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n', lambda d: d.add_key('m', 'z', 1),
     'a mapping with a merge key (<<)'),
    ('inconsistent-columns', 'l:\n-  a\n- b\n', lambda d: d.append('l', 'c'),
     'a block sequence whose items start at inconsistent columns after "-" (2, 3)'),
    ('tab-indentation', 'l:\n- b\n \t- c\n', lambda d: d.append('l', 'x'), 'a block collection with a tab in its indentation'),
    ('explicit-key', '? a\n: 1\n', lambda d: d.add_key((), 'b', 2), 'a mapping with an explicit key ("? key")'),
    ('flow-comments', 'a: [1, # c\n  2]\n', lambda d: d.append('a', 3),
     'a flow collection ([ ] or { }) over several lines with comments inside'),
    ('flow-layout', 'a: [1,\n  2, 3]\n', lambda d: d.append('a', 4),
     'a flow collection over several lines in another layout than one item per line'),
    ('flow-comment-marker', 'a: []\n', lambda d: d.append('a', 1, comment='m'), 'with a marker comment'),
    ('flow-pair', 'a: [k: v]\n', lambda d: d.add_key(('a', 0), 'x', 1), 'a flow mapping written without braces'),
    ('cr-only', 'a: 1\rb: 2\r', lambda d: d.add_key((), 'c', 2), 'line breaks made of CR alone'),
    ('nel', 'a: "x\x85y"\n', lambda d: d.add_key((), 'c', 2), 'NEL (U+0085)'),
    ('duplicate-key', 'a: 1\nb: 1\na: 2\n', lambda d: d.remove('a'), "the key 'a' appears 2 times"),
    ('key-exists', 'a: 1\n', lambda d: d.add_key((), 'a', 2), "the key 'a' is already there"),
    ('no-such-key', 'a: 1\n', lambda d: d.append('b', 2), 'b: no such key'),
    ('not-a-sequence', 'a: 1\n', lambda d: d.append('a', 2), 'a holds a scalar, not a sequence'),
    ('index-out-of-range', 'a: [1]\n', lambda d: d.remove(('a', 3)), 'no item 3 (the sequence has 1)'),
    ('json-nan', '{"a": 1}\n', lambda d: d.add_key((), 'b', float('nan')), 'nan has no JSON form'),
    ('json-int-key', '{"a": {}}\n', lambda d: d.add_key('a', 1, 2), 'a JSON key must be a string'),
    ('bad-value', 'a: []\n', lambda d: d.append('a', object()), 'cannot write a object as YAML'),
    ('drop-comments', 'l:\n# other\n- a\nm: 1\n', lambda d: d.remove(('l', 0)),
     'would leave [] or {} and drop the comments inside it; pass comment=True'),
    ('next-document', 'a: 1\n---\nb: 2\n', lambda d: d.remove('a'), 'would make the next document take its place'),
    ('merge-path', 'm:\n  <<: {x: [1]}\n', lambda d: d.append(('m', '<<'), 1), '"<<" is a merge key here'),
    ('multi-line-comment', 'a: [1]\n', lambda d: d.append('a', 2, comment='x\ny'), 'must be one line'),
]


@pytest.mark.parametrize('name, text, edit, message', REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusals(name, text, edit, message):
    doc = ye.Document(text, '/etc/kubernetes/scheduler.yaml')
    with pytest.raises((gy.GoYamlError, ValueError)) as e:
        edit(doc)
    assert message in str(e.value)
    if isinstance(e.value, gy.GoYamlError):
        assert str(e.value).startswith('/etc/kubernetes/scheduler.yaml')
    assert doc.text == text


def test_unreadable_document_is_refused():
    with pytest.raises(gy.GoYamlError) as e:
        ye.Document('a: !!int x\n', 'c.yaml')
    assert 'cannot decode' in str(e.value)


def test_tab_before_comment_is_editable():
    doc = ye.Document('extenders:\n- a\t# c\n')
    doc.append('extenders', 'b')
    assert doc.text == 'extenders:\n- a\t# c\n- b\n'


def test_keys_matched_as_go_reads_them():
    doc = ye.Document('on: 1\n"on": 2\n')
    assert plain(doc.get(True)) == 1 and plain(doc.get('on')) == 2
    doc.remove('on')
    assert doc.text == 'on: 1\n'


def test_entries_and_comments():
    doc = ye.Document('# head\na: 1\n# about b\n  # not at the column\n# really about b\nb: 2\n')
    entries = doc.entries()
    assert [e.key for e in entries] == ['a', 'b']
    assert entries[0].comments == ['# head']
    assert entries[1].comments == ['# really about b']


def test_bytes_in_and_out():
    doc = ye.Document('a: é\n'.encode('utf-8'))
    doc.add_key((), 'b', 'ü')
    assert doc.to_bytes() == 'a: é\nb: ü\n'.encode('utf-8') and doc.changed
    with pytest.raises(gy.GoYamlError):
        ye.Document(b'\xff')


@pytest.mark.parametrize('before, after', [
    ('kind: K\nextenders:\nother: 1\n', 'kind: K\nextenders:\n' + MARK + '\n- urlPrefix: http://x/\nother: 1\n'),
    ('extenders: ~ # none yet\n', 'extenders: # none yet\n' + MARK + '\n- urlPrefix: http://x/\n'),
    ('a:\n  extenders: null\n', 'a:\n  extenders:\n  ' + MARK + '\n  - urlPrefix: http://x/\n'),
])
def test_append_to_null_starts_the_list(before, after):
    doc = ye.Document(before)
    path = ('a', 'extenders') if before.startswith('a:') else ('extenders',)
    doc.append(path, {'urlPrefix': 'http://x/'}, comment=MARK)
    assert doc.text == after
    assert doc.entry(path + (0,)).comments == [MARK]
    doc.remove(path + (0,), comment=MARK)
    assert plain(doc.get(path)) == []


def test_append_to_null_in_json():
    doc = ye.Document('{"extenders": null}')
    doc.append('extenders', {'urlPrefix': 'http://x/'})
    assert doc.text == '{"extenders": [{"urlPrefix": "http://x/"}]}'
    with pytest.raises(ye.YamlEditError):
        ye.Document('{"extenders": null}').append('extenders', 1, comment='m')


@pytest.mark.parametrize('text, path, expected', [
    ('l:\n- a\n', 'l', True), ('l: [a]\n', 'l', False), ('l:\n', 'l', True), ('{"l": []}', 'l', False),
    ('m:\n  a: 1\n', 'm', True), ('m: {a: 1}\n', 'm', False), ('', (), True), ('a: 1\n', 'zz', False),
    ('a: {l: ~}\n', ('a', 'l'), False),
])
def test_accepts_comment(text, path, expected):
    assert ye.Document(text).accepts_comment(path) is expected


def test_entry():
    doc = ye.Document('a:\n  # about b\n  b: 1\nl: [x]\n')
    e = doc.entry(('a', 'b'))
    assert (e.key, e.value, e.comments, e.index) == ('b', 1, ['# about b'], 0)
    assert doc.entry(('l', 0)).value == 'x' and doc.entry(('l', 3)) is None and doc.entry(('zz',)) is None


def test_second_document():
    doc = ye.Document('a: 1\n---\nb: [1]\n', document=1)
    doc.append('b', 2)
    assert doc.text == 'a: 1\n---\nb: [1, 2]\n'


# ---------------------------------------------------------------- every collection of a corpus
CORPUS = [
    SCHED,
    'apiVersion: v1\nextenders:\n  - urlPrefix: a\n    weight: 1\nother: x\n',
    'a:\n    b:\n        - x\n        - y\n',
    'a:\n b:\n  c: 1\n d: [1, 2]\n',
    'extenders: [a, b]\nm: {x: 1, y: [2]}\n',
    '{\n  "apiVersion": "v1",\n  "extenders": [],\n  "m": {}\n}\n',
    '{"a":[1,{"b":[]}],"c":{}}',
    '\ufeff---\r\n# c\r\nextenders:\r\n- a   \r\n- |\r\n  x\r\n...\r\n',
    'l:\n- |+\n  text\n\n\nother: 1\n',
    'l:\n- >-\n  folded\n  text\n- "multi\n  line"\n- plain\n  continued\nz: 1',
    '# head\nextenders: # list\n# about a\n- a # a\n  # inner\n# tail\nother: 1\n',
    '- - a\n  - b\n- k: v\n  l:\n  - 1\n- []\n',
    'a: &x {k: 1}\nb: *x\nc:\n- &y 1\n- 2\n',
    'a: 1\n---\nb: [1]\n...\n---\nc: 2\n',
    'a: b\t# tab comment\nl:\n- x\t# c\n',
    'k: [\n  1,\n  2\n]\nm: {\n  a: 1\n}\n',
    'on: yes\n"on": no\n017: 0o17\n',
    'a:\n  -   x: 1\n      y: 2\n  -   z: 3\n',
    'a:\n-\n  x: 1\n- y: 2\n',
    'x: {a: [1, {b: c}], d: e}',
]


def _collections(node, path=()):
    if node is None or node.kind in ('scalar', 'alias'):
        return
    yield path, node
    if node.kind == 'sequence':
        for i, child in enumerate(node.value):
            yield from _collections(child, path + (i,))
    else:
        for k, v in node.value:
            key = gy.decode(k, 'keep')
            if isinstance(key, (str, int, bool)) and not gy._is_merge(k):  # pylint: disable=protected-access
                yield from _collections(v, path + (key,))


@pytest.mark.parametrize('text', CORPUS)
@pytest.mark.parametrize('value', ['text', {'urlPrefix': 'http://x/', 'l': [1, 'yes']}, [], None])
def test_corpus_round_trips(text, value):
    doc = ye.Document(text)
    done = 0
    for path, node in list(_collections(doc.root)):
        for comment in (None, 'marker'):
            fresh = ye.Document(text)
            try:
                if node.kind == 'sequence':
                    fresh.append(path, value, comment=comment)
                    assert plain(fresh.get(path))[-1] == as_pairs(value)
                    fresh.remove(path + (-1,), comment=comment)
                else:
                    fresh.add_key(path, 'new key', value, comment=comment)
                    assert plain(fresh.get(path + ('new key',))) == as_pairs(value)
                    fresh.remove(path + ('new key',), comment=comment)
            except ye.YamlEditError as e:
                assert 'cannot edit' in str(e), str(e)
                continue
            assert fresh.text == text, (path, comment)
            done += 1
    assert done > 0


# ---------------------------------------------------------------- hypothesis: generated documents
KEYS = ['a', 'b', 'key', 'node-label', 'yes', 'on', '1', 'é', 'x y', 'urlPrefix', 'k:v']
TEXT = st.one_of(
    st.text(alphabet=st.sampled_from(list('ab :#-\'"\\\t{}[],&*!|>%@`?~é😀\x85\u2028\n')), max_size=10),
    st.sampled_from(['0o17', 'yes', 'On', '1e3', 'null', '.inf', '~', '<<', '2001-12-14', '1:30', 'http://h:1/p?q',
                     'plain text', 'a: b', '- x', '...', '---', '']))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 63, 2 ** 64 - 1), TEXT,
                    st.floats(allow_nan=False, allow_infinity=False))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)), max_leaves=8)


class _Writer(object):
    """Writes a value as YAML with the layouts people use (drawn from ``draw``)."""

    def __init__(self, draw):
        self.draw = draw
        self.map_indent = draw(st.sampled_from([2, 2, 4, 3]))
        self.seq_offset = draw(st.sampled_from([0, 0, 2]))
        self.content = draw(st.sampled_from([2, 2, 4]))

    def scalar(self, value):
        d = self.draw
        if isinstance(value, str) and "'" not in value and all(c.isprintable() for c in value) and value \
                and d(st.booleans()) and '\x85' not in value:
            return "'" + value + "'"
        return ye.render_scalar(value)

    def flow(self, value):
        if isinstance(value, dict):
            return '{' + ', '.join('%s: %s' % (ye.render_scalar(k, True), self.flow(v)) for k, v in value.items()) + '}'
        if isinstance(value, list):
            return '[' + ', '.join(self.flow(v) for v in value) + ']'
        return ye.render_scalar(value, True)

    def comment(self, col):
        return [' ' * col + '# ' + self.draw(st.sampled_from(['note', 'x: y', 'tab\tinside']))] \
            if self.draw(st.integers(0, 5)) == 0 else []

    def trailing(self):
        return self.draw(st.sampled_from(['', '', '', ' # c', '\t# tab', '   ']))

    def block(self, value, col):
        """Lines; the first without its indentation."""
        d = self.draw
        if isinstance(value, dict) and value and d(st.integers(0, 6)):
            lines = []
            for k, v in value.items():
                lines.extend(self.comment(col))
                key = ye.render_scalar(k)
                if isinstance(v, (dict, list)) and v and d(st.integers(0, 4)):
                    sub = col + (self.map_indent if isinstance(v, dict) else self.seq_offset)
                    body = self.block(v, sub)
                    if body[0][:1] in ("[", "{"):  # written in flow style after all
                        lines.append(' ' * col + key + ': ' + body[0] + self.trailing())
                        continue
                    lines.append(' ' * col + key + ':' + self.trailing())
                    lines.append(' ' * sub + body[0])
                    lines.extend(body[1:])
                else:
                    inline = self.flow(v) if isinstance(v, (dict, list)) else self.scalar(v)
                    lines.append(' ' * col + key + ': ' + inline + self.trailing())
            return [lines[0][col:]] + lines[1:]
        if isinstance(value, list) and value and d(st.integers(0, 6)):
            lines = []
            for v in value:
                lines.extend(self.comment(col))
                sub = col + self.content
                if isinstance(v, (dict, list)) and v and d(st.integers(0, 3)):
                    body = self.block(v, sub)
                else:
                    body = [self.flow(v) if isinstance(v, (dict, list)) else self.scalar(v)]
                lines.append(' ' * col + '-' + ' ' * (self.content - 1) + body[0] + (self.trailing() if len(body) == 1 else ''))
                lines.extend(body[1:])
            return [lines[0][col:]] + lines[1:]
        return [self.flow(value) if isinstance(value, (dict, list)) else self.scalar(value)]


@st.composite
def documents(draw):
    """(text, value) of a document holding a mapping with a list and a nested mapping somewhere."""
    value = draw(st.dictionaries(st.sampled_from(KEYS), VALUES, min_size=1, max_size=4))
    value['extenders'] = draw(st.lists(VALUES, max_size=3))
    value['nested'] = draw(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=3))
    form = draw(st.sampled_from(['yaml', 'yaml', 'yaml', 'json', 'json-compact']))
    if form == 'json':
        indent = draw(st.sampled_from([2, 4, '\t']))
        text = json.dumps(value, indent=indent, ensure_ascii=draw(st.booleans()))
        # JSON may hold U+0085/U+2028 raw; YAML (and so go-yaml) reads them as line breaks
        text = text.replace('\x85', '\\u0085').replace('\u2028', '\\u2028')
    elif form == 'json-compact':
        text = json.dumps(value, separators=(draw(st.sampled_from([',', ', '])), ': ')).replace('\x85', '\\u0085')
        text = text.replace('\u2028', '\\u2028')
    else:
        text = '\n'.join(_Writer(draw).block(value, 0))
    nl = draw(st.sampled_from(['\n', '\n', '\r\n']))
    text = text.replace('\n', nl)
    if draw(st.booleans()):
        text += nl
    if form == 'yaml':
        if draw(st.integers(0, 4)) == 0:
            text = '---' + nl + text + ('' if text.endswith(nl) else nl) + '...' + nl
        if draw(st.integers(0, 4)) == 0:
            text = '# header' + nl + text
    if draw(st.integers(0, 5)) == 0:
        text = '\ufeff' + text
    return text, value


class _Tally(object):
    """What became of the generated inputs of one hypothesis test.

    Refusals are allowed (go-yaml refusing a generated scalar in some place, the editor refusing
    a form it documents), but a test that skipped most of its inputs proved little: ``check``
    asserts that at least ``MIN_ACCEPTED`` of the attempted edits were made and checked.
    """

    MIN_ACCEPTED = 0.8

    def __init__(self):
        self.counts = collections.Counter()

    def document(self, text):
        """The Document of ``text``, or None when go-yaml refuses it (counted)."""
        try:
            doc = ye.Document(text, 'generated.yaml')
        except gy.GoYamlError:  # a generated scalar go-yaml refuses in that place (e.g. a U+0085 in a plain scalar)
            self.counts['unreadable'] += 1
            return None
        return doc

    def edit(self, fn):
        """True when ``fn()`` made its edit; False when the editor refused it, with a documented refusal (counted)."""
        try:
            fn()
        except ye.YamlEditError as e:
            # refusals are only for the forms the module documents
            assert 'cannot edit' in str(e) or 'cannot write' in str(e), str(e)
            self.counts['refused'] += 1
            return False
        self.counts['accepted'] += 1
        return True

    def check(self):
        attempts = self.counts['accepted'] + self.counts['refused'] + self.counts['unreadable']
        assert attempts > 0, 'no generated input reached an edit'
        share = self.counts['accepted'] / attempts
        assert share >= self.MIN_ACCEPTED, ('only %d of %d generated edits were made (%.0f%%, at least %.0f%% wanted): %s'
                                            % (self.counts['accepted'], attempts, 100 * share, 100 * self.MIN_ACCEPTED,
                                               dict(self.counts)))


def test_append_then_remove_gives_the_bytes_back():
    tally = _Tally()

    @settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(documents(), VALUES, st.booleans())
    def check(doc_value, value, with_comment):
        text, data = doc_value
        doc = tally.document(text)
        if doc is None:
            return
        assert plain(doc.value) == as_pairs(data)
        before = gy.load(text, 'keep')
        use_comment = with_comment and doc.find('extenders').style == 'block'
        if not tally.edit(lambda: doc.append('extenders', value, comment='marker' if use_comment else None)):
            return
        after = gy.load(doc.text, 'keep')
        expected = plain(before)
        expected[[k for k, _v in expected].index('extenders')] = ('extenders', as_pairs(data['extenders']) + [as_pairs(value)])
        assert plain(after) == expected
        if doc.is_json:
            json.loads(doc.text.lstrip('\ufeff'))
        if use_comment:
            assert doc.items('extenders')[-1].comments == ['# marker']
        doc.remove(('extenders', -1), comment='marker' if use_comment else None)
        assert doc.text == text

    check()
    tally.check()


def test_add_key_then_remove_gives_the_bytes_back():
    tally = _Tally()

    @settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(documents(), st.sampled_from(KEYS + ['new-key', 'yes', 'z']), VALUES, st.sampled_from([(), ('nested',)]))
    def check(doc_value, key, value, path):
        text, data = doc_value
        target = data if not path else data['nested']
        assume(key not in target)  # a key to add (hypothesis counts and bounds these itself)
        doc = tally.document(text)
        if doc is None or not tally.edit(lambda: doc.add_key(path, key, value)):
            return
        assert plain(doc.get(path + (key,))) == as_pairs(value)
        # nothing else changed
        got = plain(doc.value)
        want = as_pairs(data)
        if path:
            i = [k for k, _v in want].index('nested')
            want[i] = ('nested', want[i][1] + [(key, as_pairs(value))])
        else:
            want.append((key, as_pairs(value)))
        assert got == want
        doc.remove(path + (key,))
        assert doc.text == text

    check()
    tally.check()


def test_replace_and_remove_change_only_their_node():
    tally = _Tally()

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(documents(), VALUES, st.data())
    def check(doc_value, value, data):
        text, expected = doc_value
        doc = tally.document(text)
        if doc is None:
            return
        keys = list(expected)
        key = data.draw(st.sampled_from(keys))
        if tally.edit(lambda: doc.replace(key, value)):
            want = [(k, as_pairs(value) if k == key else as_pairs(v)) for k, v in expected.items()]
            assert plain(doc.value) == want
            assert gy.load(doc.text, 'keep') is not None
        doc = ye.Document(text, 'generated.yaml')
        if len(expected['extenders']) > 0:
            i = data.draw(st.integers(0, len(expected['extenders']) - 1))
            if tally.edit(lambda: doc.remove(('extenders', i))):
                items = list(expected['extenders'])
                del items[i]
                want = [(k, as_pairs(items) if k == 'extenders' else as_pairs(v)) for k, v in expected.items()]
                assert plain(doc.value) == want

    check()
    tally.check()
