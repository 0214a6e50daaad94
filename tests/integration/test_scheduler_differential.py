# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The real kube-scheduler as the oracle of our KubeSchedulerConfiguration validator.

A corpus of 2,000 generated documents (fixed seed); each document judged is judged by
``_scheduler_config.validate_text`` and by ``kube-scheduler --config F --write-config-to OUT``. Every
disagreement must be one of the deliberate refusals documented in the ``scheduler_config`` module, in the
direction "we refuse, the scheduler accepts". A document we accept and the scheduler refuses is always a bug.

Each run judges a sample of 500 of the corpus (a real scheduler start each: the whole corpus is about
2.5 CPU-minutes more of CI's budget than the sample), drawn by a sample seed taken from the checkout's commit, so
that successive commits judge different parts of the corpus and a commit's run can be replayed; the seed
is printed. ``BAREMETAL_K3S_DIFFERENTIAL_SAMPLE_SEED=N`` replays a sample;
``BAREMETAL_K3S_DIFFERENTIAL_SAMPLE=all`` (or a number) judges the whole corpus (or that many).

The scheduler command: ``BAREMETAL_K3S_KUBE_SCHEDULER`` (a command line), else
``$BAREMETAL_K3S_KUBE_DIR/k3s kube-scheduler``. Without either the test is skipped, or fails when
``BAREMETAL_K3S_REQUIRE_KUBE=1``.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

import scheduler_differential as sd  # pylint: disable=import-error

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = 2000
SEED = 20260
WORKERS = 2
_SAMPLE = os.environ.get('BAREMETAL_K3S_DIFFERENTIAL_SAMPLE', '500')
SAMPLE = CASES if _SAMPLE == 'all' else min(int(_SAMPLE), CASES)


def _sample_seed():
    """BAREMETAL_K3S_DIFFERENTIAL_SAMPLE_SEED, else the checkout's commit (its first 8 hex digits), else 0."""
    if os.environ.get('BAREMETAL_K3S_DIFFERENTIAL_SAMPLE_SEED'):
        return int(os.environ['BAREMETAL_K3S_DIFFERENTIAL_SAMPLE_SEED'])
    try:
        head = subprocess.run(['git', 'rev-parse', 'HEAD'], cwd=HERE, capture_output=True, text=True, timeout=30, check=True)
        return int(head.stdout.strip()[:8], 16)
    except (OSError, ValueError, subprocess.SubprocessError):
        return 0


REQUIRE = os.environ.get('BAREMETAL_K3S_REQUIRE_KUBE') == '1'

# The deliberate refusals documented in plugins/modules/scheduler_config.py (notes), by name. Each is
# recognised by sd.ALLOWED_DIFFERENCES[name]: a pattern one of our errors matches and a predicate on
# the document. They are allowed only when we refuse and the scheduler accepts.
DOCUMENTED = (
    'several-yaml-documents',
    'kubeconfig-missing-or-absent',
    'tls-file-missing',
    'tls-cert-without-key',
    'tls-data-not-pem',
    'plugin-args-missing-or-null',
    'plugin-args-not-mapping',
    'plugin-args-api-version',
    'alpha-feature-gated-field',
    'dra-binding-timeout',
    'volume-binding-shape',
    'plugin-extension-point-unsure',
)


def _command():
    try:
        return sd.scheduler_command()
    except sd.SchedulerUnavailable as e:
        if REQUIRE:
            pytest.fail('BAREMETAL_K3S_REQUIRE_KUBE=1 but no kube-scheduler: %s' % e)
        pytest.skip('no kube-scheduler to compare with: %s (set BAREMETAL_K3S_KUBE_SCHEDULER or BAREMETAL_K3S_KUBE_DIR)' % e)
    return None


def test_documented_differences_are_the_listed_ones():
    assert tuple(sd.ALLOWED_DIFFERENCES) == DOCUMENTED


def test_classify_directions():
    text = 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n---\n'
    refusal = (False, ['the file holds 2 YAML documents; kube-scheduler reads a single KubeSchedulerConfiguration'])
    assert sd.classify(refusal, (True, ''), text) == 'several-yaml-documents'
    assert sd.classify((True, []), (False, 'strict decoding error'), text) == 'bug:we-accept-scheduler-refuses'
    assert sd.classify((False, ['parallelism: Invalid value: 0']), (True, ''), text) == 'bug:we-refuse-scheduler-accepts'
    assert sd.classify(refusal, (False, 'x'), text) == 'agree'


def test_sample_is_a_reproducible_part_of_the_corpus():
    corpus = [('label', str(i)) for i in range(CASES)]
    one = sd.sample_of(corpus, 500, 7)
    assert one == sd.sample_of(corpus, 500, 7)
    assert len(one) == 500 and len(set(one)) == 500 and set(one) <= set(corpus)
    assert one == sorted(one, key=corpus.index)  # judged in corpus order
    assert one != sd.sample_of(corpus, 500, 8)
    assert sd.sample_of(corpus, None, 7) == corpus and sd.sample_of(corpus, CASES, 7) == corpus


def test_a_kept_corpus_is_the_one_generated(tmp_path, monkeypatch):
    """The corpus kept under BAREMETAL_K3S_CACHE gives another run the same documents, with its own paths in them
    and the TLS material they embed written into its own directory."""
    monkeypatch.setenv('BAREMETAL_K3S_CACHE', str(tmp_path / 'cache'))
    (tmp_path / 'a').mkdir()
    (tmp_path / 'b').mkdir()
    files_a, made = sd.corpus_of(40, 11, str(tmp_path / 'a'))
    assert len(os.listdir(tmp_path / 'cache' / 'differential')) == 1
    files_b, kept = sd.corpus_of(40, 11, str(tmp_path / 'b'))
    assert kept == [(label, text.replace(str(tmp_path / 'a'), str(tmp_path / 'b'))) for label, text in made]
    assert (tmp_path / 'b' / 'client.crt').read_bytes() == files_a['cert_pem'] == files_b['cert_pem']
    assert (tmp_path / 'b' / 'client.key').read_bytes() == files_a['key_pem']
    assert all(str(tmp_path / 'a') not in text for dummy, text in kept)


def test_scheduler_agrees_with_our_validator():
    argv = _command()
    summary = sd.run(CASES, SEED, WORKERS, argv, sample=SAMPLE, sample_seed=_sample_seed())
    out = io.StringIO()
    sd.report(summary, out)
    sys.stdout.write(out.getvalue())
    assert summary['corpus'] >= CASES * 0.95, out.getvalue()
    assert summary['cases'] == min(SAMPLE, summary['corpus']), out.getvalue()
    assert summary['accepted'] > summary['cases'] // 10, 'too few valid documents generated:\n' + out.getvalue()
    assert all(set(name.split(',')) <= set(DOCUMENTED) for name in summary['documented']), out.getvalue()
    assert not summary['bugs'], out.getvalue()
