# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""Probe a kube-scheduler extender the way the scheduler calls it (k8s.io/kube-scheduler/extender/v1).

The scheduler POSTs JSON to ``<urlPrefix>/<verb>``; the wrapper types have no json tags, so
their keys are the Go field names (``Pod``, ``Nodes``, ``NodeNames``...), while the embedded
Kubernetes objects (Pod, NodeList) use their usual lower-case json names.

Pure standard library (http.client, ssl, json): no Ansible import, no third-party package.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import time
import uuid

from urllib.parse import urlsplit

from ansible_collections.baremetal.k3s.plugins.module_utils import _url

PROBE_POD_NAME = 'baremetal-k3s-extender-probe'
PROBE_NAMESPACE = 'default'
# The verbs whose request body is not an ExtenderArgs.
BIND_VERB = 'bind'
PREEMPT_VERB = 'preempt'
PRIORITIZE_VERB = 'prioritize'
FILTER_VERB = 'filter'
FILTER_RESULT_KEYS = ('Nodes', 'NodeNames', 'FailedNodes', 'FailedAndUnresolvableNodes', 'Error')
MAX_BODY = 1024 * 1024
ERROR_SNIPPET = 300


class ExtenderProbeError(ValueError):
    """The probe cannot be made as asked (bad URL, unreadable certificate...)."""


def probe_pod(uid=None):
    """A minimal, valid v1.Pod: one container, no volumes, so any extender can evaluate it."""
    return {
        'apiVersion': 'v1',
        'kind': 'Pod',
        'metadata': {
            'name': PROBE_POD_NAME,
            'namespace': PROBE_NAMESPACE,
            'uid': uid or str(uuid.uuid4()),
            'labels': {'app.kubernetes.io/managed-by': 'baremetal.k3s'},
        },
        'spec': {
            'containers': [{'name': 'probe', 'image': 'registry.k8s.io/pause:3.10'}],
            'schedulerName': 'default-scheduler',
        },
        'status': {'phase': 'Pending'},
    }


def build_request(verb, node_names, node_cache_capable=False, uid=None):
    """Return the JSON-ready body the scheduler would send for ``verb``.

    ``bind`` gets an ExtenderBindingArgs, ``preempt`` an ExtenderPreemptionArgs, every other
    verb (filter, prioritize or a custom name for one of them) an ExtenderArgs carrying either
    a NodeList (``Nodes``) or, for a nodeCacheCapable extender, ``NodeNames``.
    """
    node_names = list(node_names)
    pod = probe_pod(uid)
    if verb == BIND_VERB:
        return {
            'PodName': pod['metadata']['name'],
            'PodNamespace': pod['metadata']['namespace'],
            'PodUID': pod['metadata']['uid'],
            'Node': node_names[0] if node_names else '',
        }
    if verb == PREEMPT_VERB:
        if node_cache_capable:
            return {'Pod': pod, 'NodeNameToVictims': None,
                    'NodeNameToMetaVictims': dict((n, {'Pods': [], 'NumPDBViolations': 0}) for n in node_names)}
        return {'Pod': pod, 'NodeNameToVictims': dict((n, {'Pods': [], 'NumPDBViolations': 0}) for n in node_names),
                'NodeNameToMetaVictims': None}
    if node_cache_capable:
        return {'Pod': pod, 'Nodes': None, 'NodeNames': node_names}
    items = [{'metadata': {'name': n, 'labels': {'kubernetes.io/hostname': n}}} for n in node_names]
    return {'Pod': pod, 'Nodes': {'apiVersion': 'v1', 'kind': 'NodeList', 'metadata': {}, 'items': items}, 'NodeNames': None}


def check_answer(verb, answer):
    """Check a decoded answer's shape for ``verb``. Returns (shape_ok, error_text).

    ``error_text`` is the answer's non-empty ``Error`` field, or a description of a wrong shape.
    """
    if verb == PRIORITIZE_VERB:
        if answer is None:
            return True, ''  # Go encodes an empty HostPriorityList as null
        if not isinstance(answer, list):
            if isinstance(answer, dict) and answer.get('Error'):
                return False, str(answer['Error'])
            return False, 'prioritize answer is not a list of {"Host", "Score"}'
        for item in answer:
            if not isinstance(item, dict) or 'Host' not in item or 'Score' not in item:
                return False, 'prioritize answer item %r lacks "Host" or "Score"' % (item,)
            if not isinstance(item['Score'], int) or isinstance(item['Score'], bool):
                return False, 'prioritize answer item %r has a non-integer "Score"' % (item,)
        return True, ''
    if not isinstance(answer, dict):
        if verb in (FILTER_VERB, BIND_VERB, PREEMPT_VERB):
            return False, '%s answer is not a JSON object' % verb
        # a custom verb name: either shape is acceptable
        return isinstance(answer, list), ('' if isinstance(answer, list) else 'answer is neither a JSON object nor a list')
    error = answer.get('Error')
    if error not in (None, '') and not isinstance(error, str):
        return False, '"Error" is not a string'
    if verb == FILTER_VERB and not any(k in answer for k in FILTER_RESULT_KEYS):
        return False, 'filter answer has none of the ExtenderFilterResult fields'
    if verb == BIND_VERB and 'Error' not in answer:
        return False, 'bind answer has no "Error" field'
    return True, error or ''


class ProbeResult:
    """Outcome of one probe.

    ``reachable``: HTTP 200, a JSON body of the right shape, and an empty ``Error`` (for
    ``bind`` a non-empty ``Error`` is expected, as the probe pod does not exist, and still
    counts as reachable). ``status``: the HTTP status or None when no answer came.
    ``error``: what went wrong (transport error, timeout, non-200 body, ``Error`` field).
    """

    def __init__(self, url, reachable=False, status=None, error='', body=None, elapsed=0.0):
        self.url = url
        self.reachable = reachable
        self.status = status
        self.error = error
        self.body = body
        self.elapsed = elapsed

    def as_dict(self):
        return {'url': self.url, 'reachable': self.reachable, 'status': self.status,
                'error': self.error, 'elapsed': round(self.elapsed, 3)}

    def __repr__(self):
        return 'ProbeResult(%r)' % (self.as_dict(),)


def verb_url(url, verb):
    """``<url>/<verb>`` with exactly one slash, as the scheduler joins urlPrefix and verb."""
    return url.rstrip('/') + '/' + verb.strip('/')


def validate_url(url):
    """The parts of ``url``; ExtenderProbeError when :func:`_url.url_problem` refuses it."""
    problem = _url.url_problem(url)
    if problem:
        raise ExtenderProbeError('extender URL %r %s' % (url, problem))
    return urlsplit(url)


def ssl_context(ca_file=None, cert_file=None, key_file=None, insecure=False):
    """An SSLContext as the scheduler's tlsConfig builds it (caFile, certFile/keyFile, insecure)."""
    try:
        if insecure:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        else:
            ctx = ssl.create_default_context(cafile=ca_file)
        if cert_file:
            ctx.load_cert_chain(cert_file, key_file or None)
    except (OSError, ssl.SSLError) as e:
        raise ExtenderProbeError('cannot load TLS files (ca_file=%s, cert_file=%s, key_file=%s): %s'
                                 % (ca_file, cert_file, key_file, e)) from e
    return ctx


def _describe(exc, timeout, who='the extender'):
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return 'timeout: no answer within %s s' % timeout
    if isinstance(exc, ConnectionRefusedError):
        return 'connection refused (is %s running?)' % who
    if isinstance(exc, ssl.SSLCertVerificationError):
        return 'TLS certificate verification failed: %s' % (exc.verify_message or exc)
    if isinstance(exc, ssl.SSLError):
        return 'TLS error: %s' % exc
    if isinstance(exc, socket.gaierror):
        return 'cannot resolve host: %s' % exc
    return '%s: %s' % (type(exc).__name__, exc)


def probe(url, verb=FILTER_VERB, node_names=('localhost',), node_cache_capable=False, ca_file=None,
          cert_file=None, key_file=None, insecure=False, timeout=5.0, clock=None, uid=None):
    """POST a minimal valid request to ``<url>/<verb>`` and judge the answer. Returns a ProbeResult.

    Transport problems (refused, timeout, TLS) are reported in the result, never raised;
    only an impossible request (bad URL, missing TLS files) raises ExtenderProbeError. TLS files
    that exist but do not load (not PEM) are reported in the result too: the scheduler fails on
    them as well, and what the scheduler does then is what the caller is watching.
    """
    clock = clock or time.monotonic
    parts = validate_url(url)
    full = verb_url(url, verb)
    path = urlsplit(full).path or '/'
    body = json.dumps(build_request(verb, node_names, node_cache_capable, uid)).encode('utf-8')
    if parts.scheme == 'https':
        missing = [f for f in (ca_file, cert_file, key_file) if f and not os.path.isfile(f)]
        if missing:
            raise ExtenderProbeError('cannot load TLS files: %s does not exist' % ', '.join(missing))
        try:
            ctx = ssl_context(ca_file, cert_file, key_file, insecure)
        except ExtenderProbeError as e:
            return ProbeResult(full, error=str(e))
        conn = http.client.HTTPSConnection(parts.hostname, parts.port or 443, timeout=timeout, context=ctx)
    else:
        conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    start = clock()
    result = ProbeResult(full)
    try:
        conn.request('POST', path, body=body, headers={
            'Content-Type': 'application/json', 'Accept': 'application/json',
            'User-Agent': 'baremetal.k3s-extender-status'})
        resp = conn.getresponse()
        result.status = resp.status
        raw = resp.read(MAX_BODY)
    except (OSError, http.client.HTTPException) as e:
        result.error = _describe(e, timeout)
        result.elapsed = clock() - start
        return result
    finally:
        conn.close()
    result.elapsed = clock() - start
    text = raw.decode('utf-8', errors='replace')
    if result.status != 200:
        result.error = 'HTTP %s: %s' % (result.status, text.strip()[:ERROR_SNIPPET] or '(empty body)')
        return result
    try:
        answer = json.loads(text)
    except ValueError:
        result.error = 'HTTP 200 but the body is not JSON: %s' % (text.strip()[:ERROR_SNIPPET] or '(empty body)')
        return result
    result.body = answer
    shape_ok, error = check_answer(verb, answer)
    result.error = error
    result.reachable = shape_ok and (not error or verb == BIND_VERB)
    return result


def check_health(url, timeout=5.0, ca_file=None, insecure=True):
    """GET a component's health endpoint (kube-scheduler: ``https://127.0.0.1:10259/healthz``).

    Returns (healthy, status, error): healthy is HTTP 200 with the body ``ok``. The scheduler's
    serving certificate is self-signed, so TLS is not verified unless ``insecure`` is false.
    """
    parts = validate_url(url)
    path = parts.path or '/'
    if parts.scheme == 'https':
        ctx = ssl_context(ca_file=ca_file, insecure=insecure)
        conn = http.client.HTTPSConnection(parts.hostname, parts.port or 443, timeout=timeout, context=ctx)
    else:
        conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    try:
        conn.request('GET', path, headers={'Accept': 'text/plain', 'User-Agent': 'baremetal.k3s-extender-status'})
        resp = conn.getresponse()
        text = resp.read(MAX_BODY).decode('utf-8', errors='replace').strip()
    except (OSError, http.client.HTTPException) as e:
        return False, None, _describe(e, timeout, 'the component')
    finally:
        conn.close()
    if resp.status == 200 and text == 'ok':
        return True, 200, ''
    return False, resp.status, 'HTTP %s: %s' % (resp.status, text[:ERROR_SNIPPET] or '(empty body)')
