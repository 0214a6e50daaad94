# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documents for the go-yaml differential test: a hand-written table and a seeded generator.

``table()`` gives (id, text) for every place where YAML 1.1 and 1.2 (and PyYAML and go-yaml)
read the same bytes differently, in every context a scalar can stand in, plus the structural
forms (tabs, CRLF, BOM, markers, duplicates, anchors, merges, multi-document, flow/block...).
``generated(n, seed)`` builds random documents from the same pieces.
"""

from __future__ import annotations

import random

SCALARS = [
    # octal and friends (YAML 1.1: 017 is 15; YAML 1.2: 0o17 is 15; go-yaml: both)
    '017', '0o17', '0O17', '0o8', '08', '09', '0', '00', '-017', '+017', '0o', '0o_1', '0_17', '01_7', '0o17_',
    '0b101', '0B101', '-0b101', '+0b101', '0b', '0b2', '0b_1', '0b+1', '0b-1', '-0b', '-0b1_0',
    '0b1111111111111111111111111111111111111111111111111111111111111111',
    '0x1f', '0X1F', '0x', '0xg', '-0x1f', '+0x1f', '0x_1f', '0x1F_ff', '0xFFFFFFFFFFFFFFFF', '0x10000000000000000',
    # integers
    '1_000', '1__000', '_1000', '1000_', '+1', '-1', '-0', '+0', '1,000', '12e', '0.', '1 000',
    '9223372036854775807', '9223372036854775808', '-9223372036854775808', '-9223372036854775809',
    '18446744073709551615', '18446744073709551616', '+18446744073709551615', '-18446744073709551616',
    # floats
    '.5', '-.5', '+.5', '1e3', '1E3', '1e+3', '1e-3', '1.5e3', '1.', '1.0', '0.1', '-0.0', '+0.0', '0.0',
    '.inf', '-.inf', '+.inf', '.Inf', '.INF', '.iNf', '.nan', '.NaN', '.NAN', '.nAn', 'inf', 'nan', 'NaN',
    'Infinity', '-Infinity', '1e400', '-1e400', '1e-400', '1.7976931348623157e308', '6.02e23', '1e21', '1e20',
    '123456789.0', '0.00001', '0.0001', '1e06', '1_0.5', '._5', '.5_0', '.5e1_0', '.5e_1', '1.5_', '1e', 'e3',
    '1e3.5', '3.14159265358979', '100000', '1000000.0', '1e-7', '5e-324', '.1e1', '0x1p-2', '1_e3',
    # booleans (YAML 1.1 has y/n/on/off; go-yaml in three cases each)
    'y', 'Y', 'yes', 'Yes', 'YES', 'yES', 'true', 'True', 'TRUE', 'tRUE', 'on', 'On', 'ON', 'oN',
    'n', 'N', 'no', 'No', 'NO', 'nO', 'false', 'False', 'FALSE', 'fALSE', 'off', 'Off', 'OFF', 'oFF',
    # nulls
    '~', 'null', 'Null', 'NULL', 'nULL', '',
    # timestamps (strings when decoded into interface{})
    '2001-12-14', '2001-12-14t21:59:43.10-05:00', '2001-12-14 21:59:43.10', '2001-12-14T21:59:43Z',
    '2001-13-01', '2001-02-29', '2000-02-29', '2001-1-2', '2001-12-14 21:59:43.10 -5', '2001-12-14T25:00:00Z',
    '12345-01-01', '2001-12-14T21:59:43,5Z', '2001-12-14  21:59:43', '2001-12-14T21:59:43+25:00',
    # sexagesimal (YAML 1.1 numbers, go-yaml strings) and other near-numbers
    '1:30', '190:20:30', '-1:30', '1:30.5', '0:0', '1-1', '1/2', '1.2.3', '--1', '+-1', '-+1', '++1',
    # merge, indicators that may start a plain scalar, text
    '<<', '=', '-', '+', '.', '..', 'a b', 'a  b', 'é', '😀', 'x:y', 'x#y', '-x', '?x', ':x', 'a,b',
    'http://h:1/p?q=1#f', 'urlPrefix', '@x',
]

QUOTABLE = ['017', '0o17', 'yes', 'on', 'y', '~', 'null', '1e3', '.inf', '2001-12-14', '1:30', '<<', '', ' x ',
            'a\\tb', 'é', '1_000', 'true']

TAGS = ['!!str', '!!int', '!!float', '!!bool', '!!null', '!!timestamp', '!!binary', '!', '!local', '!!merge',
        '!!map', '!!seq', '!<tag:yaml.org,2002:int>']

BINARIES = ['aGVsbG8=', 'aGVsbG8', 'aGVs\n  bG8=', '/w==', '////', '4pyTIMOgIGxhIG1vZGU=', 'a===', '']

STRUCTURAL = [
    # tabs
    ('tab-before-comment', 'a: b\t# c\n'),
    ('tab-before-comment-seq', 'a:\n- b\t# c\n'),
    ('tab-after-colon', 'a:\tb\n'),
    ('tab-after-dash', '-\tb\n'),
    ('tab-indent-map', 'a:\n\tb: 1\n'),
    ('tab-indent-seq', 'a:\n\t- 1\n'),
    ('tab-in-plain', 'a: b\tc\n'),
    ('tab-trailing', 'a: b\t\n'),
    ('tab-in-flow', 'a: [1,\t2]\n'),
    ('tab-line-in-flow', 'a: [1,\n\t2]\n'),
    ('tab-after-key-before-colon', 'a\t: b\n'),
    ('tab-in-double', 'a: "b\tc"\n'),
    ('tab-only-line', 'a: 1\n\t\nb: 2\n'),
    ('tab-before-doc-comment', '\t# c\na: 1\n'),
    ('tab-json-indent', '{\n\t"a": 1,\n\t"b": [\n\t\t1\n\t]\n}\n'),
    # line endings, BOM, markers
    ('crlf', 'a: 1\r\nb:\r\n- x\r\n- "y"\r\n'),
    ('crlf-block', 'a: |\r\n  x\r\n  y\r\nb: 2\r\n'),
    ('cr-only', 'a: 1\rb: 2\r'),
    ('bom', '\ufeffa: 1\n'),
    ('bom-crlf', '\ufeffa: 1\r\nb: 2\r\n'),
    ('bom-second-doc', 'a: 1\n---\n\ufeffb: 2\n'),
    ('bom-mid-line', 'a: \ufeff1\n'),
    ('doc-start', '---\na: 1\n'),
    ('doc-start-end', '---\na: 1\n...\n'),
    ('doc-end-only', 'a: 1\n...\n'),
    ('doc-start-inline', '--- {a: 1}\n'),
    ('doc-start-scalar', '--- text\n'),
    ('two-docs', 'a: 1\n---\nb: 2\n'),
    ('two-docs-second-bad', 'a: 1\n---\n[b\n'),
    ('two-docs-second-bad-same-line', 'a: 1\n--- [\n'),
    ('doc-end-then-garbage', 'a: 1\n...\n: : :\n'),
    ('empty-then-doc', '---\n---\na: 1\n'),
    ('only-comment', '# nothing\n'),
    ('empty', ''),
    ('only-newlines', '\n\n\n'),
    ('only-spaces', '   \n'),
    ('only-doc-start', '---\n'),
    ('only-doc-end', '...\n'),
    ('yaml-directive-11', '%YAML 1.1\n---\na: 1\n'),
    ('yaml-directive-12', '%YAML 1.2\n---\na: 1\n'),
    ('yaml-directive-10', '%YAML 1.0\n---\na: 1\n'),
    ('yaml-directive-20', '%YAML 2.0\n---\na: 1\n'),
    ('tag-directive', '%TAG !e! tag:yaml.org,2002:\n---\na: !e!int "12"\n'),
    ('reserved-directive', '%FOO bar\n---\na: 1\n'),
    ('directive-no-doc', '%YAML 1.1\na: 1\n'),
    # duplicates
    ('dup-plain', 'a: 1\na: 2\n'),
    ('dup-quoted', 'a: 1\n"a": 2\n'),
    ('dup-bool-forms', 'yes: 1\non: 2\n'),
    ('dup-int-forms', '017: a\n15: b\n'),
    ('dup-int-float', '1: a\n1.0: b\n'),
    ('dup-int-string', '1: a\n"1": b\n'),
    ('dup-null', '~: a\nnull: b\n'),
    ('dup-nan', '.nan: a\n.nan: b\n'),
    ('dup-zero', '0.0: a\n-0.0: b\n'),
    ('dup-nested', 'a:\n  b: 1\n  b: 2\n'),
    ('dup-flow', '{a: 1, a: 2}\n'),
    ('dup-k3s-append', 'node-label+: [a]\nnode-label+: b\n'),
    # anchors, aliases, merges
    ('anchor-alias', 'a: &x 1\nb: *x\n'),
    ('anchor-redefined', 'a: &x 1\nb: &x 2\nc: *x\n'),
    ('alias-unknown', 'a: *x\n'),
    ('alias-self', 'a: &x [*x]\n'),
    ('alias-map', 'base: &b {x: 1, y: 2}\nc: *b\n'),
    ('merge', 'base: &b {x: 1, z: 2}\nm:\n  <<: *b\n  w: 3\n'),
    ('merge-override-after', 'base: &b {x: 1}\nm:\n  <<: *b\n  x: 2\n'),
    ('merge-override-before', 'base: &b {x: 1}\nm:\n  x: 2\n  <<: *b\n'),
    ('merge-list', 'a: &a {x: 1}\nb: &b {x: 2, y: 3}\nm:\n  <<: [*a, *b]\n'),
    ('merge-inline', 'm:\n  <<: {x: 1}\n  y: 2\n'),
    ('merge-scalar', 'm:\n  <<: 1\n'),
    ('merge-alias-scalar', 'a: &a 1\nm:\n  <<: *a\n'),
    ('merge-list-scalar', 'm:\n  <<: [1]\n'),
    ('merge-quoted', 'm:\n  "<<": {x: 1}\n'),
    ('merge-tagged', 'm:\n  !!merge <<: {x: 1}\n'),
    ('merge-as-value', 'm: <<\n'),
    ('merge-top', 'a: &a {x: 1}\n<<: *a\n'),
    ('merge-null', 'm:\n  <<: ~\n'),
    ('merge-seq-of-seq', 'm:\n  <<: [[1]]\n'),
    ('alias-as-key', 'a: &k x\n*k : 1\n'),
    ('anchor-on-key', '&k a: 1\nb: *k\n'),
    ('anchor-empty', 'a: &x\nb: *x\n'),
    ('billion-laughs', 'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n'
     'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n'
     'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n'),
    # quoted scalars and escapes
    ('double-escapes', 'a: "\\x41\\u00e9\\U0001F600\\t\\n\\\\\\"\\/\\0\\a\\b\\e\\f\\r\\v\\ \\N\\_\\L\\P"\n'),
    ('double-bad-escape', 'a: "\\q"\n'),
    ('double-folded', 'a: "x\n  y\n\n  z"\n'),
    ('double-line-continuation', 'a: "x\\\n  y"\n'),
    ('single-quote-escape', "a: 'it''s'\n"),
    ('single-folded', "a: 'x\n  y'\n"),
    ('plain-multiline', 'a: x\n  y\n  z\n'),
    ('plain-multiline-blank', 'a: x\n\n  y\n'),
    ('literal', 'a: |\n  x\n   y\n\n'),
    ('literal-keep', 'a: |+\n  x\n\n\nb: 1\n'),
    ('literal-strip', 'a: |-\n  x\n\n'),
    ('literal-indent-indicator', 'a: |2\n   x\n  y\n'),
    ('folded', 'a: >\n  x\n  y\n\n  z\n   w\n'),
    ('folded-keep-eof', 'a: >+\n  x\n\n'),
    ('literal-comment-header', 'a: | # c\n  x\n'),
    ('literal-less-indented', 'a: |\n    x\n  y\n'),
    ('block-in-seq', '- |\n  x\n- >-\n  y\n'),
    # flow / block
    ('flow-map', '{a: 1, b: [x, y], c: {d: e}}\n'),
    ('flow-multiline', 'a: [\n  1,\n  2\n]\n'),
    ('flow-trailing-comma', 'a: [1, 2,]\n'),
    ('flow-empty', 'a: []\nb: {}\n'),
    ('flow-pair-in-seq', 'a: [b: 1, c]\n'),
    ('flow-colon-adjacent', '{"a":1}\n'),
    ('flow-colon-plain-adjacent', '{a:1}\n'),
    ('flow-colon-plain-adjacent-seq', '[a:1]\n'),
    ('flow-url', '[http://x:1/]\n'),
    ('flow-empty-key', '{: a}\n'),
    ('flow-explicit-key', '{? a : b}\n'),
    ('flow-comment', 'a: [1, # c\n  2]\n'),
    ('flow-no-close', 'a: [1, 2\n'),
    ('flow-double-comma', 'a: [1,,2]\n'),
    ('flow-nested-deep', 'a: ' + '[' * 50 + ']' * 50 + '\n'),
    ('flow-plain-multiline', 'a: [x\n  y]\n'),
    ('indentless-seq', 'a:\n- 1\n- 2\nb: 3\n'),
    ('indented-seq', 'a:\n  - 1\n  - 2\nb: 3\n'),
    ('seq-of-maps', '- a: 1\n  b: 2\n- c: 3\n'),
    ('seq-in-seq', '- - 1\n  - 2\n- - 3\n'),
    ('empty-items', 'a:\n-\n- \n-  # c\n'),
    ('explicit-key', '? a\n: 1\n? [b]\n: 2\n'),
    ('complex-key-flow', '[a]: 1\n'),
    ('complex-key-map', '{a: 1}: 2\n'),
    ('null-key', ': 1\n'),
    ('key-no-value', 'a:\nb:\n'),
    ('root-scalar', 'hello\n'),
    ('root-quoted-null', '"null"\n'),
    ('root-null', '~\n'),
    ('root-seq', '- 1\n- 2\n'),
    ('root-seq-empty', '[]\n'),
    ('root-seq-mapitems', '- key: a\n  value: 1\n- {key: b, value: [x]}\n'),
    ('root-seq-scalars', '- key\n'),
    ('root-int', '12\n'),
    ('bad-indent', 'a:\n  b: 1\n c: 2\n'),
    ('bad-mapping-in-plain', 'a: b: c\n'),
    ('bad-seq-after-map', 'a: 1\n- b\n'),
    ('colon-in-value', 'a: b:c\n'),
    ('colon-space-quoted', 'a: "b: c"\n'),
    ('hash-in-value', 'a: b#c\n'),
    ('comment-no-space', 'a: b #c\n'),
    ('long-key', 'k' * 1100 + ': 1\n'),
    ('long-value', 'a: ' + 'v' * 5000 + '\n'),
    ('long-line-flow', 'a: [' + ', '.join(str(i) for i in range(400)) + ']\n'),
    ('unicode-keys', 'ключ: значение\n名前: 値\n'),
    ('unicode-emoji', 'a: 😀\n😀: b\n'),
    ('nbsp-value', 'a: \u00a0x\n'),
    ('nel-in-plain', 'a: x\u0085y\n'),
    ('ls-in-plain', 'a: x\u2028y\n'),
    ('del-char', 'a: x\x7fy\n'),
    ('control-char', 'a: x\x01y\n'),
    ('c1-char', 'a: x\x9by\n'),
    ('surrogate-escape', 'a: "\\ud800"\n'),
    ('noncharacter', 'a: x\ufffey\n'),
    ('json-doc', '{"apiVersion": "v1", "n": 1.5, "i": 10, "e": 1e3, "b": true, "z": null, "l": [1, "2"]}\n'),
    ('json-unicode-escape', '{"a": "\\u00e9\\ud83d\\ude00"}\n'),
    ('k3s-config', 'write-kubeconfig-mode: "0644"\ntls-san:\n  - foo.local\nnode-label:\n  - foo=bar\n'
     'disable: traefik\nkube-scheduler-arg+: [v=2]\ncluster-init: true\n'),
    ('scheduler-config', 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n'
     'clientConnection:\n  kubeconfig: /etc/rancher/k3s/scheduler.kubeconfig\nextenders:\n'
     '- urlPrefix: http://127.0.0.1:8888/\n  filterVerb: filter\n  weight: 1\n  enableHTTPS: false\n'
     '  httpTimeout: 15s\n  managedResources:\n  - name: example.com/x\n    ignoredByScheduler: true\n'),
    ('float-keys', '1.5: a\n1e6: b\n0.1: c\n3.14159265358979: d\n.inf: e\n-.inf: f\n100000: g\n1e-7: h\n'),
    ('bool-keys', 'true: a\nno: b\n'),
    ('null-key-map', '~: a\n'),
    ('big-int-key', '18446744073709551615: a\n'),
    ('html-chars', 'a: "<b>&amp;</b>"\n'),
    ('json-special-chars', 'a: "\\u2028\\u2029\\u007f\\u0001\\b\\f"\n'),
    ('keys-sort', 'b: 1\nB: 2\né: 3\na: 4\n"10": 5\n"9": 6\n'),
    ('tagged-map', 'a: !!map {x: 1}\n'),
    ('tagged-seq-as-map', 'a: !!seq {x: 1}\n'),
    ('tagged-local-map', 'a: !foo {x: 1}\n'),
    ('tag-on-empty', 'a: !!str\nb: !!null\nc: !!int\n'),
    ('tag-verbatim', 'a: !<tag:yaml.org,2002:str> 1\n'),
    ('tag-unknown-handle', 'a: !x!y 1\n'),
    ('key-with-spaces', 'a b: 1\n'),
    ('trailing-spaces', 'a: 1   \nb: x  \n'),
    ('deep-block', ''.join('  ' * i + 'k%d:\n' % i for i in range(60)) + '  ' * 60 + 'v\n'),
    ('anchor-in-flow', '[&a 1, *a]\n'),
    ('alias-in-flow-key', '{&a x: 1, *a : 2}\n'),
    ('quoted-key-colon', '"a:b": 1\n'),
    ('question-plain', 'a: ?x\n'),
    ('dash-plain', 'a: -x\n'),
    ('plain-ending-colon', 'a: b:\n'),
    ('seq-dash-no-space', '-a\n'),
    ('at-start', 'a: @x\n'),
    ('backtick-start', 'a: `x\n'),
    ('percent-value', 'a: %x\n'),
    ('amp-value', 'a: & x\n'),
    ('escaped-single-quote', 'a: "it\\\'s"\n'),
    ('escaped-slash', 'a: "a\\/b"\n'),
    ('double-bom', '\ufeff\ufeffa: 1\nb: 2\n'),
    ('crlf-in-quoted', 'a: "x\r\n  y"\r\n'),
    ('crlf-literal-keep', 'a: |+\r\n  x\r\n\r\nb: 1\r\n'),
    ('many-spaces', 'a:     value   \nb:    [ 1 ,  2 ]\n'),
    ('comments-everywhere', '# head\n--- # doc\n# c\na: # c\n  # c\n  - 1 # c\n  # c\n  - 2\n# c\nb: 2 # c\n... # end\n'),
    ('question-in-flow-quoted', '["a?b", \'c?d\']\n'),
    ('question-in-block-plain', 'a: b?c\n- x\n'),
    ('question-in-block-plain-ok', 'a: b?c\n'),
    ('question-key-block', '? a\n'),
    ('colon-in-flow-key-quoted', '{"a:b": 1}\n'),
    ('anchor-on-seq-item-map', '- &x a: 1\n- *x\n'),
    ('tag-on-block-map', 'a: !!map\n  b: 1\n'),
    ('tag-int-on-block-map', 'a: !!int\n  b: 1\n'),
    ('nested-merge-chain', 'a: &a {x: 1}\nb: &b {<<: *a, y: 2}\nc: {<<: *b, z: 3}\n'),
    ('merge-dup-in-list', 'a: &a {x: 1}\nb: &b {x: 2}\nc: {<<: [*a, *b], x: 3}\n'),
    ('merge-into-seq', 'a: &a [1]\nb: {<<: *a}\n'),
    ('empty-flow-in-block-seq', 'a:\n- []\n- {}\n- ""\n'),
    ('bool-key-k3s', 'y: 1\nn: 2\n'),
    ('list-of-lists-k3s', 'a: [[1, 2], [3]]\nb: [[], x]\n'),
    ('map-value-k3s', 'a: {b: 1, c: [2]}\n'),
    ('spaces-value-k3s', 'a: "  padded  "\nb: [" x ", "y "]\n'),
    ('newline-value-k3s', 'a: "x\\ny"\nb: "\\n"\n'),
    ('nul-value', 'a: "x\\0y"\n'),
    ('indent-1', 'a:\n b:\n  c: 1\n'),
    ('seq-indent-mixed', 'a:\n  - 1\n  -   2\n'),
    ('key-trailing-tab', 'a\t: 1\n'),
    ('plain-with-tab-inside-flow', '[a\tb]\n'),
    ('doc-end-no-newline', 'a: 1\n...'),
    ('no-final-newline', 'a: 1'),
    ('no-final-newline-seq', 'a:\n- 1'),
    ('windows-bom-json', '\ufeff{"a": [1, 2]}\r\n'),
]


def _contexts(s):
    yield 'map-value', 'a: %s\n' % s
    yield 'seq-item', '- %s\n' % s
    if s:
        yield 'key', '%s: x\n' % s
        yield 'flow-item', '[%s]\n' % s
    yield 'root', '%s\n' % s
    yield 'flow-value', '{a: %s}\n' % s


def table():
    """(id, text) of the hand-written table."""
    out = []
    for i, s in enumerate(SCALARS):
        for ctx, text in _contexts(s):
            out.append(('scalar-%03d-%s %r' % (i, ctx, s), text))
    for i, s in enumerate(QUOTABLE):
        out.append(('double-%02d %r' % (i, s), 'a: "%s"\n' % s))
        out.append(('single-%02d %r' % (i, s), "a: '%s'\n" % s.replace("'", "''")))
    for t in TAGS:
        for i, s in enumerate(['1', '017', '0o17', 'yes', '~', '', '1.5', '2001-12-14', 'abc', '"12"', "'yes'",
                               '.inf', '0x1f', '<<', '-1', '18446744073709551615', '1e400']):
            out.append(('tag %s-%02d %r' % (t, i, s), 'a: %s %s\n' % (t, s)))
    for i, s in enumerate(BINARIES):
        out.append(('binary-%02d' % i, 'a: !!binary %s\n' % s))
        out.append(('binary-literal-%02d' % i, 'a: !!binary |\n  %s\n' % s))
    out.extend(STRUCTURAL)
    out.extend(emitted())
    return out


# values our writers must write so that go-yaml reads them back exactly (a character outside the Basic Multilingual
# Plane as itself, YAML's own line breaks and the BOM escaped, indicators and YAML 1.1 words quoted)
EMITTED = ['p\U0001F600ss', 'caf\u00e9', 'a\u2028b', 'a\u2029b', 'nel\u0085x', 'bom\ufeffx', 'a"b\\c', "it's", 'yes',
           '0o17', '~', '', '#x', 'a: b', '- x', '*alias', '!tag', '%x', '@x', '`x', '{x}', '[x]', '>x', '|x',
           '\U0010FFFF', '\ue000', '\ufffd', ' lead', 'trail ']


def emitted():
    """(id, text) of files the collection's writers render (k3s_registries' registries.yaml) with hostile values."""
    from ansible_collections.baremetal.k3s.plugins.module_utils import _registries  # pylint: disable=import-outside-toplevel
    out = []
    for i, value in enumerate(EMITTED):
        configs = {'registry.example:5000': {'auth': {'username': 'u' + value, 'password': value or 'x'}}}
        mirrors = {'docker.io': {'endpoint': ['https://r.example:5000'], 'rewrite': {'^(.*)$': value}}}
        out.append(('emitted-registries-%02d %r' % (i, value), _registries.render(mirrors, configs).decode('utf-8')))
    return out


# ---------------------------------------------------------------- generator
_KEYS = ['a', 'b', 'key', 'node-label', 'y', 'on', 'no', '1', '017', '"q"', "'s'", 'é', '<<', '~', '1.5', 'true',
         'tls-san+', 'a b', '0x10', '2001-01-01']
_LEAVES = SCALARS[::3] + ['"%s"' % s for s in QUOTABLE[::2]] + ["'x'", '!!str 1', '!!int "7"', '!!float 3']


class _Gen(object):
    def __init__(self, rnd):
        self.r = rnd
        self.anchors = []
        self.n = 0

    def leaf(self, flow):
        s = self.r.choice(_LEAVES)
        if flow and any(c in s for c in ',[]{}#') and not s.startswith(('"', "'")):
            s = '"x"'
        if s.startswith(('-', '?', ':', '@', '`', '%', '&', '*', '!', '|', '>', '#')) and not s.startswith('!!'):
            s = '"%s"' % s.replace('\\', '\\\\').replace('"', '\\"')
        if self.r.random() < 0.08:
            self.n += 1
            name = 'n%d' % self.n
            self.anchors.append(name)
            return '&%s %s' % (name, s)
        if self.anchors and self.r.random() < 0.06:
            return '*%s' % self.r.choice(self.anchors)
        return s

    def key(self):
        k = self.r.choice(_KEYS)
        return k

    def flow(self, depth):
        if depth <= 0 or self.r.random() < 0.4:
            return self.leaf(True)
        if self.r.random() < 0.5:
            return '[' + ', '.join(self.flow(depth - 1) for dummy in range(self.r.randint(0, 3))) + ']'
        return '{' + ', '.join('%s: %s' % (self.key(), self.flow(depth - 1)) for dummy in range(self.r.randint(0, 3))) + '}'

    def block(self, depth):
        """(kind, lines) of a block node; lines are relative to the node's column (the first at 0)."""
        r = self.r
        choice = r.random()
        if depth <= 0 or choice < 0.25:
            return 'leaf', [self.leaf(False) if r.random() < 0.8 else self.flow(2)]
        step = r.choice([2, 2, 4, 1, 3])
        lines = []
        if choice < 0.6:
            for dummy in range(r.randint(1, 4)):
                key = self.key()
                kind, child = self.block(depth - 1)
                comment = r.choice(['', '', '', ' # c', '\t# tab comment', '  #c'])
                if kind == 'leaf':
                    sep = ':\t' if r.random() < 0.05 else ': '
                    lines.append('%s%s%s%s' % (key, sep, child[0], comment))
                    continue
                lines.append('%s:%s' % (key, comment))
                pad = ' ' * (r.choice([0, step]) if kind == 'seq' else step)
                lines.extend(pad + line for line in child)
            return 'map', lines
        for dummy in range(r.randint(1, 4)):
            _kind, child = self.block(depth - 1)
            lines.append('- ' + child[0])
            lines.extend('  ' + line for line in child[1:])
        return 'seq', lines

    def document(self):
        r = self.r
        lines = self.block(r.randint(1, 4))[1]
        text = '\n'.join(lines) + '\n'
        if r.random() < 0.1:
            text = '---\n' + text
        if r.random() < 0.05:
            text = text + '...\n'
        if r.random() < 0.1:
            text = text.replace('\n', '\r\n')
        if r.random() < 0.05:
            text = '\ufeff' + text
        if r.random() < 0.05:
            text = text.rstrip('\n')
        if r.random() < 0.05:
            text = '# comment\n' + text
        return text


def generated(n, seed):
    """``n`` random documents (id, text), the same for the same seed."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        out.append(('gen-%d-%04d' % (seed, i), _Gen(rnd).document()))
    return out
