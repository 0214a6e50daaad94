# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reference kube-scheduler extender for baremetal.k3s tests (standard library only).

Installed as /usr/local/bin/reference-extender and run as ``python3 /usr/local/bin/reference-extender``.
It speaks the wire protocol of k8s.io/kube-scheduler/extender/v1 (Go field names as JSON keys):

- ``POST /filter``: ExtenderArgs{Pod, Nodes|NodeNames} -> ExtenderFilterResult. A node passes
  unless it is named by ``--reject-nodes`` (comma list) or in ``--reject-file`` (one name per
  line, re-read on every call). The answer uses ``NodeNames`` when the request did, else ``Nodes``.
- ``POST /prioritize``: -> [{"Host", "Score"}]. With ``--prefer NODE`` that node scores 10 and
  the others 0; otherwise the nodes sorted by name score 10, 9, 8... (never below 0): the
  alphabetically first node is preferred. Rejected nodes score 0.
- ``POST /preempt``: ExtenderPreemptionArgs -> ExtenderPreemptionResult{NodeNameToMetaVictims},
  the candidate nodes minus the rejected ones, victims passed through as MetaVictims (UIDs).
- ``POST /bind``: ExtenderBindingArgs -> {"Error": "..."}: binding is not supported (CSI
  Baremetal does not bind) unless ``--bind`` is given; then the request is only recorded and
  answered with an empty Error.
- ``GET /healthz``: ``ok``.

Run-time switches, read from ``--mode-file`` (default /run/reference-extender/mode) on every
request, no restart needed: ``ok`` (or no file), ``slow:SECONDS`` (answer after a delay),
``error500`` (HTTP 500), ``error-json`` (HTTP 200 with a non-empty Error). "Down" is the service
stopped. An undecodable body gets HTTP 200 with a JSON Error, as CSI Baremetal's extender does.

Each call is logged as one JSON line (time, verb, pod namespace/name, node names in, result)
to ``--log`` (default /var/log/reference-extender.jsonl; ``-`` for stdout, empty to disable).
"""

from __future__ import annotations

import argparse
import json
import ssl
import sys
import threading
import time

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_PORT = 8889
DEFAULT_LOG = '/var/log/reference-extender.jsonl'
DEFAULT_MODE_FILE = '/run/reference-extender/mode'
MAX_SCORE = 10
MAX_BODY = 16 * 1024 * 1024
VERBS = ('filter', 'prioritize', 'preempt', 'bind')


class Settings:
    """What the extender does; the command-line options."""

    def __init__(self, reject_nodes=(), reject_file=None, prefer=None, bind=False,
                 mode_file=DEFAULT_MODE_FILE, log=DEFAULT_LOG):
        self.reject_nodes = set(reject_nodes)
        self.reject_file = reject_file
        self.prefer = prefer
        self.bind = bind
        self.mode_file = mode_file
        self.log = log
        self.lock = threading.Lock()

    def rejected(self):
        names = set(self.reject_nodes)
        if self.reject_file:
            try:
                with open(self.reject_file) as f:
                    names.update(line.strip() for line in f if line.strip() and not line.startswith('#'))
            except OSError:
                pass
        return names

    def mode(self):
        """(mode, seconds) from the mode file; ``ok`` when it is missing, empty or unknown."""
        try:
            with open(self.mode_file) as f:
                text = f.read().strip()
        except (OSError, TypeError):
            return 'ok', 0.0
        if text.startswith('slow:'):
            try:
                return 'slow', max(0.0, float(text.split(':', 1)[1]))
            except ValueError:
                return 'ok', 0.0
        if text in ('error500', 'error-json'):
            return text, 0.0
        return 'ok', 0.0

    def record(self, entry):
        if not self.log:
            return
        line = json.dumps(entry, sort_keys=True) + '\n'
        with self.lock:
            if self.log == '-':
                sys.stdout.write(line)
                sys.stdout.flush()
                return
            try:
                with open(self.log, 'a') as f:
                    f.write(line)
            except OSError as e:
                sys.stderr.write('reference-extender: cannot write %s: %s\n' % (self.log, e))


# ---------------------------------------------------------------------------------------------
# protocol (pure functions: request dict -> answer)

def node_names_of(args):
    """Node names of an ExtenderArgs (NodeNames when given, else Nodes.items[].metadata.name)."""
    if args.get('NodeNames') is not None:
        return list(args['NodeNames'] or []), True
    items = ((args.get('Nodes') or {}).get('items')) or []
    return [((n or {}).get('metadata') or {}).get('name', '') for n in items], False


def pod_ref(args):
    meta = ((args.get('Pod') or {}).get('metadata')) or {}
    return '%s/%s' % (meta.get('namespace', ''), meta.get('name', ''))


def do_filter(args, settings):
    names, by_name = node_names_of(args)
    rejected = settings.rejected()
    failed = dict((n, 'node %s is rejected by the reference extender' % n) for n in names if n in rejected)
    passed = [n for n in names if n not in rejected]
    result = {'FailedNodes': failed, 'FailedAndUnresolvableNodes': {}, 'Error': ''}
    if by_name:
        result['NodeNames'] = passed
        result['Nodes'] = None
    else:
        items = [n for n in ((args.get('Nodes') or {}).get('items') or [])
                 if ((n or {}).get('metadata') or {}).get('name') in passed]
        result['Nodes'] = {'apiVersion': 'v1', 'kind': 'NodeList', 'metadata': {}, 'items': items}
        result['NodeNames'] = None
    return result


def do_prioritize(args, settings):
    names, dummy = node_names_of(args)
    rejected = settings.rejected()
    if settings.prefer:
        scores = dict((n, MAX_SCORE if n == settings.prefer else 0) for n in names)
    else:
        scores = dict((n, max(0, MAX_SCORE - i)) for i, n in enumerate(sorted(names)))
    return [{'Host': n, 'Score': 0 if n in rejected else scores[n]} for n in names]


def do_preempt(args, settings):
    rejected = settings.rejected()
    meta = {}
    for node, victims in (args.get('NodeNameToVictims') or {}).items():
        pods = [{'UID': ((p or {}).get('metadata') or {}).get('uid', '')} for p in (victims or {}).get('Pods') or []]
        meta[node] = {'Pods': pods, 'NumPDBViolations': (victims or {}).get('NumPDBViolations', 0)}
    for node, victims in (args.get('NodeNameToMetaVictims') or {}).items():
        meta[node] = victims
    return {'NodeNameToMetaVictims': dict((n, v) for n, v in meta.items() if n not in rejected)}


def do_bind(args, settings):
    if not settings.bind:
        return {'Error': 'bind is not supported by the reference extender (start it with --bind)'}
    if not args.get('PodName') or not args.get('Node'):
        return {'Error': 'bind needs PodName and Node'}
    return {'Error': ''}


HANDLERS = {'filter': do_filter, 'prioritize': do_prioritize, 'preempt': do_preempt, 'bind': do_bind}


def answer(verb, body, settings):
    """(HTTP status, JSON-ready answer, log entry) for a POST of ``body`` (bytes) to ``/<verb>``."""
    entry = {'time': time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime()) + 'Z', 'verb': verb}
    try:
        args = json.loads(body.decode('utf-8'))
        if not isinstance(args, dict):
            raise ValueError('the body is not a JSON object')
    except ValueError as e:
        err = 'cannot decode the %s request: %s' % (verb, e)
        entry.update({'pod': None, 'nodes': None, 'result': {'Error': err}})
        return 200, {'Error': err}, entry
    if verb == 'bind':
        entry['pod'] = '%s/%s' % (args.get('PodNamespace', ''), args.get('PodName', ''))
        entry['nodes'] = [args.get('Node', '')]
    else:
        entry['pod'] = pod_ref(args)
        entry['nodes'] = (node_names_of(args)[0] if verb != 'preempt'
                          else sorted(set(args.get('NodeNameToVictims') or {}) | set(args.get('NodeNameToMetaVictims') or {})))
    result = HANDLERS[verb](args, settings)
    entry['result'] = result
    return 200, result, entry


# ---------------------------------------------------------------------------------------------
# HTTP

class Handler(BaseHTTPRequestHandler):
    server_version = 'reference-extender/1'
    protocol_version = 'HTTP/1.1'

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        pass  # one JSON line per call is logged instead

    def _send(self, status, payload, content_type='application/json'):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode('utf-8')
        self.send_response(status)
        self.send_header('Content-Type', content_type)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the scheduler gave up waiting (slow mode): nothing to answer to

    def do_GET(self):  # pylint: disable=invalid-name
        if self.path.rstrip('/') in ('/healthz', '/livez', '/readyz'):
            self._send(200, b'ok', 'text/plain')
        else:
            self._send(404, b'not found', 'text/plain')

    def do_POST(self):  # pylint: disable=invalid-name
        settings = self.server.settings
        verb = self.path.split('?', 1)[0].strip('/')
        length = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(min(length, MAX_BODY)) if length > 0 else b''
        if verb not in VERBS:
            self._send(404, {'Error': 'unknown verb %r; known: %s' % (verb, ', '.join(VERBS))})
            return
        mode, seconds = settings.mode()
        if mode == 'slow':
            time.sleep(seconds)
        if mode == 'error500':
            try:
                pod = pod_ref(json.loads(body.decode('utf-8')))
            except (ValueError, AttributeError):
                pod = None
            settings.record({'time': time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime()) + 'Z', 'verb': verb,
                             'pod': pod, 'nodes': None, 'result': {'status': 500}})
            self._send(500, b'reference extender: error500 mode\n', 'text/plain')
            return
        status, result, entry = answer(verb, body, settings)
        if mode == 'error-json':
            result = {'Error': 'reference extender: error-json mode'}
            entry['result'] = result
        settings.record(entry)
        self._send(status, result)


def make_server(host='127.0.0.1', port=DEFAULT_PORT, settings=None, tls_cert=None, tls_key=None):
    """A ThreadingHTTPServer for the extender (port 0 picks a free port: ``server.server_address``).

    With ``tls_cert`` (and ``tls_key``) it serves HTTPS, as an extender behind ``enableHTTPS`` does.
    """
    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    server.block_on_close = False  # a slow-mode answer must not hold up shutdown
    server.settings = settings or Settings()
    if tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(tls_cert, tls_key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    return server


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog='reference-extender', description=__doc__.split('\n', 1)[0])
    p.add_argument('--listen', default='127.0.0.1', help='address to listen on (default 127.0.0.1)')
    p.add_argument('--port', type=int, default=DEFAULT_PORT, help='port (default %d)' % DEFAULT_PORT)
    p.add_argument('--reject-nodes', default='', help='comma-separated node names that fail the filter')
    p.add_argument('--reject-file', default=None, help='file with node names that fail the filter, one per line')
    p.add_argument('--prefer', default=None, help='node that prioritize scores 10 (others 0)')
    p.add_argument('--bind', action='store_true', help='accept bind requests (record them only)')
    p.add_argument('--mode-file', default=DEFAULT_MODE_FILE, help='run-time mode switch file')
    p.add_argument('--log', default=DEFAULT_LOG, help='JSON-lines call log (- for stdout, empty to disable)')
    p.add_argument('--tls-cert', default=None, help='serve HTTPS with this certificate (PEM)')
    p.add_argument('--tls-key', default=None, help='key of --tls-cert (PEM; default: in the certificate file)')
    return p.parse_args(argv)


def main(argv=None):
    opts = parse_args(argv)
    settings = Settings(reject_nodes=[n.strip() for n in opts.reject_nodes.split(',') if n.strip()],
                        reject_file=opts.reject_file, prefer=opts.prefer, bind=opts.bind,
                        mode_file=opts.mode_file, log=opts.log)
    server = make_server(opts.listen, opts.port, settings, opts.tls_cert, opts.tls_key)
    sys.stderr.write('reference-extender listening on %s:%d\n' % server.server_address[:2])
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
