# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The real kube-scheduler as the oracle of our KubeSchedulerConfiguration validator.

2,000 generated documents (fixed seed), each judged by ``_scheduler_config.validate_text`` and by
``kube-scheduler --config F --write-config-to OUT``. Every disagreement must be one of the deliberate
refusals documented in the ``scheduler_config`` module, in the direction "we refuse, the scheduler
accepts". A document we accept and the scheduler refuses is always a bug.

The scheduler command: ``BAREMETAL_K3S_KUBE_SCHEDULER`` (a command line), else
``$BAREMETAL_K3S_KUBE_DIR/k3s kube-scheduler``. Without either the test is skipped, or fails when
``BAREMETAL_K3S_REQUIRE_KUBE=1``.
"""

from __future__ import annotations

import io
import os
import sys

import pytest

import scheduler_differential as sd  # pylint: disable=import-error

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = 2000
SEED = 20260
WORKERS = 2
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


def test_scheduler_agrees_with_our_validator():
    argv = _command()
    summary = sd.run(CASES, SEED, WORKERS, argv)
    out = io.StringIO()
    sd.report(summary, out)
    sys.stdout.write(out.getvalue())
    assert summary['cases'] >= CASES * 0.95, out.getvalue()
    assert summary['accepted'] > CASES // 10, 'too few valid documents generated:\n' + out.getvalue()
    assert all(set(name.split(',')) <= set(DOCUMENTED) for name in summary['documented']), out.getvalue()
    assert not summary['bugs'], out.getvalue()
