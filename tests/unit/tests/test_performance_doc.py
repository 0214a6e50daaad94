# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""docs/performance.md shows the benchmarks' figures as tests/bench/doc_tables.py makes them from the bench.json files
kept in docs/bench/: a figure edited by hand, or a bench.json replaced without the page, fails here."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.baremetal.k3s.tests.bench import doc_tables

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
# (the table's kind, its bench.json files under docs/bench, the playbooks it shows)
TABLES = [
    ('rollout', ['rollout-defaults.json', 'rollout-pipelining.json'], []),
    ('fleet', ['fleet-defaults.json'], []),
    ('fleet', ['fleet-upgrade.json'], ['upgrade']),
    ('fleet', ['fleet-pipelining.json'], []),
]


def load(name):
    with open(os.path.join(ROOT, 'docs', 'bench', name), encoding='utf-8') as f:
        return json.load(f)


@pytest.mark.parametrize('kind, files, playbooks', TABLES, ids=['-'.join(t[1]) for t in TABLES])
def test_the_page_shows_the_table_made_from_its_bench_json(kind, files, playbooks):
    with open(os.path.join(ROOT, 'docs', 'performance.md'), encoding='utf-8') as f:
        page = f.read()
    table = doc_tables.rollout(*[load(n) for n in files]) if kind == 'rollout' else doc_tables.fleet(load(files[0]), playbooks)
    assert table in page, 'docs/performance.md does not show this table (python3 tests/bench/doc_tables.py %s %s):\n%s' % (
        kind, ' '.join('docs/bench/' + n for n in files + playbooks), table)


def test_the_page_shows_where_the_rollout_on_the_defaults_went():
    with open(os.path.join(ROOT, 'docs', 'performance.md'), encoding='utf-8') as f:
        page = f.read()
    table = doc_tables.steps(load('rollout-defaults.json'))
    assert table in page, 'docs/performance.md does not show this table (python3 tests/bench/doc_tables.py steps %s):\n%s' % (
        'docs/bench/rollout-defaults.json', table)


def test_every_kept_bench_json_is_shown():
    kept = sorted(n for n in os.listdir(os.path.join(ROOT, 'docs', 'bench')) if n.endswith('.json'))
    assert kept == sorted({n for dummy, files, dummy2 in TABLES for n in files})
