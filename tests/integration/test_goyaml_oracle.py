# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The real go-yaml as the oracle of ``_goyaml``: k3s's and kube-scheduler's YAML readers, compared.

``tests/goyaml`` is a small Go program that reads documents the way k3s does (gopkg.in/yaml.v2
into yaml.MapSlice, wrangler's convert.ToString) and the way kube-scheduler does
(sigs.k8s.io/yaml YAMLToJSONStrict and YAMLToJSON). It is built once into
``$BAREMETAL_K3S_CACHE/goyaml-oracle/<hash of its sources>/`` (default cache
/var/cache/baremetal-k3s). Without a Go toolchain (``GO``, ``go`` on PATH, /usr/local/go/bin/go,
or the pinned one ``tests/kube/build.sh --go`` finds) the test is skipped, or fails when
``BAREMETAL_K3S_REQUIRE_KUBE=1``.

Every document of ``tests/goyaml/goyaml_cases.py`` (``table()`` and ``generated()``) (knob:
``BAREMETAL_K3S_GOYAML_CASES``, default 600; seed ``BAREMETAL_K3S_GOYAML_SEED``) is read by both
for four readers: k3s (the pairs, their Go types, fmt.Sprint and convert.ToString of keys,
values and list items), interface{} (typed values), strict JSON and JSON (the exact bytes).
Every disagreement must be one of the deliberate refusals in ``DELIBERATE`` (we refuse where
Go accepts), each with its reason; anything else fails the test.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import goyaml_cases  # pylint: disable=import-error
import pytest

from ansible_collections.baremetal.k3s.plugins.module_utils import _goyaml as gy

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GO_DIR = os.path.join(ROOT, 'tests', 'goyaml')

REQUIRE = os.environ.get('BAREMETAL_K3S_REQUIRE_KUBE') == '1'
CASES = int(os.environ.get('BAREMETAL_K3S_GOYAML_CASES', '600'))
SEED = int(os.environ.get('BAREMETAL_K3S_GOYAML_SEED', '20260'))
READERS = ('k3s', 'any', 'strict', 'json')


# ---------------------------------------------------------------- deliberate refusals
def _root_is_sequence(text):
    try:
        root = gy.compose(text)
    except gy.GoYamlError:
        return False
    while root is not None and root.kind == 'alias':
        root = root.target
    return root is not None and root.kind == 'sequence'


def _too_deep(text):
    return bool(re.search(r'\[{40,}', text)) or text.count('\n') >= 40 and 'k59' in text


# name -> (readers it may concern, predicate on the document, the reason). Each applies only where
# we refuse and Go accepts.
DELIBERATE = {
    'k3s-top-level-sequence': (
        ('k3s',), _root_is_sequence,
        'k3s reads a top-level sequence of {key: K, value: V} mappings as pairs (yaml.MapItem fields); '
        'load_pairs refuses any top-level sequence: a k3s config is a mapping of flag names'),
    'escaped-single-quote': (
        READERS, lambda text: "\\'" in text,
        'go-yaml accepts the escape \\\' in a double-quoted scalar, which YAML does not define; libyaml (and so '
        '_goyaml) refuses it: write \' or use single quotes'),
    'byte-order-mark-inside': (
        READERS, lambda text: '\ufeff' in text[1:],
        'a U+FEFF at the start of a line (not the first character of the file): go-yaml reads it as part of the '
        'next key (a go-yaml bug checks the buffer start instead), libyaml skips it; _goyaml refuses it'),
    'json-key-collision': (
        ('strict', 'json'), lambda text: True,
        'two keys that become the same JSON key (1 and "1"): sigs.k8s.io/yaml keeps one at random (Go map order)'),
}


def _deliberate(reader, text, py_error, go_ok=True):
    for name, (readers, predicate, _reason) in DELIBERATE.items():
        if reader not in readers:
            continue
        if name == 'json-key-collision' and 'become' not in py_error:
            continue
        if predicate(text):
            return name
    return None


# ---------------------------------------------------------------- the Python side, in the oracle's shape
def _go_marshal(obj):
    text = json.dumps(obj, sort_keys=True, separators=(',', ':'), ensure_ascii=False)
    return text.replace('\u2028', '\\u2028').replace('\u2029', '\\u2029')


def dump(value):
    t = gy.go_type(value)
    if value is None:
        return {'t': 'nil'}
    if t == 'string':
        return {'t': 'string', 'v': value}
    if t in ('bool', 'int', 'uint64'):
        return {'t': t, 'v': gy.to_go_string(value)}
    if t == 'float64':
        return {'t': t, 'v': gy.to_go_string(value), 'bits': struct.pack('>d', value).hex()}
    if isinstance(value, gy.GoMap):
        items = sorted(([dump(k), dump(v)] for k, v in value), key=lambda kv: _go_marshal(kv[0]))
        return {'t': 'map', 'items': items}
    if isinstance(value, gy.Pairs):
        return {'t': 'MapSlice', 'items': [[dump(k), dump(v)] for k, v in value]}
    if isinstance(value, list):
        return {'t': 'slice', 'items': [dump(v) for v in value]}
    return {'t': t, 'v': str(value)}


def python_side(text, backend=None):
    out = {}
    try:
        pairs = gy.load_pairs(text, backend=backend)
        rows = []
        for k, v in pairs:
            row = {'k': dump(k), 'v': dump(v), 'ks': gy.to_k3s_string(k), 'vs': gy.to_k3s_string(v),
                   'ksprint': gy.to_go_string(k), 'vsprint': gy.to_go_string(v)}
            if isinstance(v, list) and not isinstance(v, gy.Pairs) and v:  # Go: omitempty
                row['items'] = [gy.to_k3s_string(x) for x in v]
            rows.append(row)
        out['k3s'] = {'ok': True, 'pairs': rows, 'sprint': gy.to_go_string(pairs)}
    except gy.GoYamlError as e:
        out['k3s'] = {'ok': False, 'error': str(e)}
    try:
        value = gy.load(text, 'last', backend=backend)
        out['any'] = {'ok': True, 'value': dump(value)}
    except gy.GoYamlError as e:
        out['any'] = {'ok': False, 'error': str(e)}
    for reader, strict in (('strict', True), ('json', False)):
        try:
            out[reader] = {'ok': True, 'json': gy.yaml_to_json(text, strict=strict, backend=backend)}
        except gy.GoYamlError as e:
            out[reader] = {'ok': False, 'error': str(e)}
    return _fffd(out)


def _fffd(obj):
    # Go's JSON prints a byte that is not UTF-8 as U+FFFD; _goyaml keeps it as a surrogate escape.
    if isinstance(obj, str):
        return re.sub('[\ud800-\udfff]', '\ufffd', obj)
    if isinstance(obj, list):
        return [_fffd(x) for x in obj]
    if isinstance(obj, dict):
        return dict((k, _fffd(v)) for k, v in obj.items())
    return obj


def _strip_k3s(result):
    # The Go side prints a MapSlice's Sprint for a top-level empty document as "[]"; only pairs matter.
    pairs = result.get('pairs') or []
    for row in pairs:
        if 'items' in row and row['items'] is None:
            row['items'] = []
    return pairs


def _sorted_maps(obj):
    # Go sorts a map's items by key only; equal keys (NaN) come in any order: sort by the whole item.
    if isinstance(obj, dict):
        obj = dict((k, _sorted_maps(v)) for k, v in obj.items())
        if obj.get('t') == 'map':
            obj['items'] = sorted(obj['items'], key=_go_marshal)
        return obj
    if isinstance(obj, list):
        return [_sorted_maps(x) for x in obj]
    return obj


def compare(go, py, text):
    """{reader: 'agree' | 'deliberate:<name>' | 'differ: ...'}."""
    verdict = {}
    for reader in READERS:
        g, p = go[reader], py[reader]
        if g['ok'] != p['ok']:
            if not p['ok']:
                name = _deliberate(reader, text, p.get('error', ''))
                if name:
                    verdict[reader] = 'deliberate:' + name
                    continue
            verdict[reader] = 'differ: go %s, python %s' % (
                'accepts' if g['ok'] else 'refuses (%s)' % g.get('error'),
                'accepts' if p['ok'] else 'refuses (%s)' % p.get('error'))
            continue
        if not g['ok']:
            verdict[reader] = 'agree'
            continue
        if reader == 'k3s':
            gp, pp = _strip_k3s(g), _strip_k3s(p)
            same = gp == pp and (g.get('sprint', '') == p.get('sprint', '') or not pp)
            detail = '' if same else 'go %s\n      python %s' % (json.dumps(g, ensure_ascii=False),
                                                                 json.dumps(p, ensure_ascii=False))
        elif reader == 'any':
            g['value'] = _sorted_maps(g.get('value'))
            p['value'] = _sorted_maps(p.get('value'))
            same = g.get('value') == p.get('value') or (g.get('value') is None and p['value'] == {'t': 'nil'})
            detail = '' if same else 'go %s\n      python %s' % (json.dumps(g.get('value'), ensure_ascii=False),
                                                                 json.dumps(p.get('value'), ensure_ascii=False))
        else:
            same = g['json'] == p['json']
            detail = '' if same else 'go %s / python %s' % (g['json'], p['json'])
        verdict[reader] = 'agree' if same else 'differ: ' + detail
    return verdict


# ---------------------------------------------------------------- the Go side
def _go_version(go):
    try:
        out = subprocess.run([go, 'env', 'GOVERSION'], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, GOTOOLCHAIN='local'), check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r'^go(\d+)\.(\d+)', out.stdout.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def _needed_go():
    with open(os.path.join(GO_DIR, 'go.mod')) as f:
        m = re.search(r'^go (\d+)\.(\d+)', f.read(), re.M)
    return (int(m.group(1)), int(m.group(2)))


def find_go():
    need = _needed_go()
    candidates = [os.environ.get('GO'), shutil.which('go'), '/usr/local/go/bin/go']
    for go in candidates:
        if go and os.path.exists(go):
            v = _go_version(go)
            if v and v >= need:
                return go
    build = os.path.join(ROOT, 'tests', 'kube', 'build.sh')
    if os.path.exists(build):
        try:
            out = subprocess.run(['bash', build, '--go'], capture_output=True, text=True, timeout=900, check=False)
            lines = out.stdout.strip().splitlines()
            if out.returncode == 0 and lines and os.path.exists(lines[-1]):
                v = _go_version(lines[-1])
                if v and v >= need:
                    return lines[-1]
        except (OSError, subprocess.SubprocessError):
            pass
    return None


def source_hash():
    h = hashlib.sha256()
    for name in sorted(os.listdir(GO_DIR)):
        if name in ('go.mod', 'go.sum') or name.endswith('.go'):
            with open(os.path.join(GO_DIR, name), 'rb') as f:
                h.update(name.encode() + b'\0' + f.read() + b'\0')
    return h.hexdigest()[:16]


def build_oracle():
    """The oracle binary's path (built when the cache has none for these sources)."""
    cache = os.environ.get('BAREMETAL_K3S_CACHE') or '/var/cache/baremetal-k3s'
    if not os.environ.get('BAREMETAL_K3S_CACHE') and not os.access(os.path.dirname(cache), os.W_OK) \
            and not os.access(cache, os.W_OK):
        cache = os.path.join(tempfile.gettempdir(), 'baremetal-k3s-cache-%d' % os.getuid())
    target_dir = os.path.join(cache, 'goyaml-oracle', source_hash())
    binary = os.path.join(target_dir, 'goyaml-oracle')
    if os.path.exists(binary):
        return binary
    go = find_go()
    if go is None:
        msg = 'no Go toolchain >= %d.%d to build the go-yaml oracle (set GO=/path/to/go)' % _needed_go()
        if REQUIRE:
            pytest.fail('BAREMETAL_K3S_REQUIRE_KUBE=1 but ' + msg)
        pytest.skip(msg)
    os.makedirs(target_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix='.build-', dir=target_dir)
    env = dict(os.environ, GOFLAGS='-mod=mod', GOTOOLCHAIN='local', CGO_ENABLED='0')
    try:
        out = subprocess.run([go, 'build', '-trimpath', '-o', os.path.join(tmp, 'goyaml-oracle'), '.'],
                             cwd=GO_DIR, capture_output=True, text=True, timeout=900, env=env, check=False)
        if out.returncode != 0:
            pytest.fail('building the go-yaml oracle failed:\n%s%s' % (out.stdout, out.stderr))
        os.replace(os.path.join(tmp, 'goyaml-oracle'), binary)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return binary


def run_oracle(binary, cases):
    data = ''.join(json.dumps({'id': cid, 'text': text}) + '\n' for cid, text in cases)
    out = subprocess.run([binary], input=data.encode('utf-8'), capture_output=True, timeout=600, check=False)
    if out.returncode != 0:
        raise AssertionError('the oracle failed: %s' % out.stderr.decode('utf-8', 'replace'))
    results = {}
    for line in out.stdout.decode('utf-8').split('\n'):  # not splitlines(): a value may hold U+0085 or U+2028 raw
        if not line:
            continue
        obj = json.loads(line)
        results[obj['id']] = obj
    return results


@pytest.fixture(scope='module')
def oracle():
    return build_oracle()


def all_cases():
    cases = goyaml_cases.table() + goyaml_cases.generated(CASES, SEED)
    ids = [cid for cid, _text in cases]
    assert len(ids) == len(set(ids)), 'case ids must be unique'
    return cases


def differential(oracle_binary, backend=None):
    cases = all_cases()
    started = time.time()
    go = run_oracle(oracle_binary, cases)
    go_time = time.time() - started
    started = time.time()
    summary = {'cases': len(cases), 'agree': {r: 0 for r in READERS}, 'deliberate': {}, 'differ': [],
               'go_seconds': go_time}
    for cid, text in cases:
        verdict = compare(go[cid], python_side(text, backend), text)
        for reader, v in verdict.items():
            if v == 'agree':
                summary['agree'][reader] += 1
            elif v.startswith('deliberate:'):
                key = (reader, v.split(':', 1)[1])
                summary['deliberate'][key] = summary['deliberate'].get(key, 0) + 1
            else:
                summary['differ'].append((cid, reader, text, v))
    summary['python_seconds'] = time.time() - started
    return summary


def report(summary):
    lines = ['go-yaml oracle: %d documents (%d hand-written, %d generated, seed %d), Go %.1fs, Python %.1fs'
             % (summary['cases'], summary['cases'] - CASES, CASES, SEED, summary['go_seconds'], summary['python_seconds'])]
    for reader in READERS:
        agree = summary['agree'][reader]
        lines.append('  %-6s agree %d/%d (%.2f%%)' % (reader, agree, summary['cases'], 100.0 * agree / summary['cases']))
    for (reader, name), count in sorted(summary['deliberate'].items()):
        lines.append('  %-6s deliberate refusal %s: %d' % (reader, name, count))
    for cid, reader, text, v in summary['differ'][:60]:
        lines.append('  DIFFER %s [%s] %r\n      %s' % (cid, reader, text[:200], v[:1500]))
    if len(summary['differ']) > 60:
        lines.append('  ... %d more' % (len(summary['differ']) - 60))
    return '\n'.join(lines)


def test_case_table_is_large():
    assert len(goyaml_cases.table()) >= 500


def test_goyaml_agrees_with_go(oracle):
    summary = differential(oracle)
    text = report(summary)
    sys.stdout.write(text + '\n')
    assert not summary['differ'], text


@pytest.mark.skipif(not gy.HAS_LIBYAML, reason='needs libyaml to compare with the pure-Python parser')
def test_pure_python_parser_refuses_only_with_the_libyaml_hint(oracle):
    """Without libyaml, every document is read as with libyaml, or refused with the libyaml hint."""
    cases = all_cases()
    go = run_oracle(oracle, cases)
    wrong = []
    hinted = 0
    for cid, text in cases:
        py = python_side(text, 'python')
        verdict = compare(go[cid], py, text)
        for reader, v in verdict.items():
            if v == 'agree' or v.startswith('deliberate:'):
                continue
            error = py[reader].get('error', '')
            if not py[reader]['ok'] and 'libyaml' in error:
                hinted += 1
                continue
            wrong.append('%s [%s] %r: %s' % (cid, reader, text[:120], v[:400]))
    sys.stdout.write('pure-Python parser: %d refusals carry the libyaml hint, %d other disagreements\n'
                     % (hinted, len(wrong)))
    assert not wrong, '\n'.join(wrong[:40])
