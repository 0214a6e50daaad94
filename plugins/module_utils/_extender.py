# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""Probe a kube-scheduler extender the way the scheduler calls it (k8s.io/kube-scheduler/extender/v1).

The scheduler POSTs JSON to ``<urlPrefix>/<verb>``; the wrapper types have no json tags, so
their keys are the Go field names (``Pod``, ``Nodes``, ``NodeNames``...), while the embedded
Kubernetes objects (Pod, NodeList) use their usual lower-case json names.

The scheduler's Go HTTP client follows redirects (301, 302 and 303 as a GET without body, 307 and
308 with the same method and body, at most 10) and the probe follows them the same way
(:func:`next_request`), so an extender behind a redirect is judged as the scheduler reaches it.
It takes its proxy from its own environment (``HTTP_PROXY``,
``HTTPS_PROXY``, ``NO_PROXY``); :func:`go_proxy` makes the same decision from an environment
given to it (the scheduler process's), and :func:`probe` goes through that proxy (a CONNECT
tunnel for https://, an absolute-URI request for http://) with urllib's ProxyHandler given the
proxy explicitly, never the module's own environment. The TLS settings are the extender's
``tlsConfig`` ones: caFile/caData, certFile/certData, keyFile/keyData, insecure, serverName.

Pure standard library (http.client, urllib, ssl, json, ipaddress): no Ansible import, no third-party package.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import os
import socket
import ssl
import time
import urllib.error
import urllib.request
import uuid

from urllib.parse import urljoin, urlsplit

from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal
from ansible_collections.baremetal.k3s.plugins.module_utils import _io
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
        self.redirects = []  # the URLs redirects led to, in order
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


def validate_url(url, option=None):
    """The parts of ``url``; ExtenderProbeError when :func:`_url.url_problem` refuses it (naming ``option``, the
    module option that gave it, when given)."""
    problem = _url.url_problem(url)
    if problem:
        raise ExtenderProbeError('extender URL %r %s%s' % (url, problem, '; fix the option %s' % option if option else ''))
    return urlsplit(url)


class _NamedContext(ssl.SSLContext):
    """An SSLContext that sends and verifies ``server_name`` instead of the URL's host (Go's tls ServerName)."""

    server_name = None

    def wrap_socket(self, sock, *args, **kwargs):  # pylint: disable=arguments-differ
        if self.server_name:
            kwargs['server_hostname'] = self.server_name
        return super().wrap_socket(sock, *args, **kwargs)


def ssl_context(ca_file=None, cert_file=None, key_file=None, insecure=False, server_name=None,
                ca_data=None, cert_data=None, key_data=None):
    """An SSLContext as the scheduler's tlsConfig builds it.

    caFile/caData: only that CA (else the system's); certFile/certData with keyFile/keyData: the
    client certificate; insecure: no verification; serverName: the name sent (SNI) and verified
    instead of the URL's host.
    """
    try:
        ctx = _NamedContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.server_name = server_name or None
        if insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        elif ca_file or ca_data:
            if ca_file:
                ctx.load_verify_locations(cafile=ca_file)
            if ca_data:
                ctx.load_verify_locations(cadata=ca_data if isinstance(ca_data, str) else ca_data.decode('ascii'))
        else:
            ctx.load_default_certs()
        if cert_file or cert_data:
            _load_client_cert(ctx, cert_file, key_file, cert_data, key_data)
    except (OSError, ssl.SSLError, ValueError) as e:
        raise ExtenderProbeError('cannot load TLS files (ca_file=%s, cert_file=%s, key_file=%s%s): %s'
                                 % (ca_file, cert_file, key_file,
                                    ''.join(', %s given' % n for n, v in (('ca_data', ca_data), ('cert_data', cert_data),
                                                                          ('key_data', key_data)) if v), e)) from e
    return ctx


def _load_client_cert(ctx, cert_file, key_file, cert_data, key_data):
    """load_cert_chain reads files only: PEM text given as data goes through ``_io.scratch_files`` (a private
    directory, removed when loaded)."""
    if not (cert_data or key_data):
        ctx.load_cert_chain(cert_file, key_file or None)
        return
    data = {name + '.pem': value.encode('ascii') if isinstance(value, str) else value
            for name, value in (('cert', cert_data), ('key', key_data)) if value}
    with _io.scratch_files(data, prefix='bk3s-tls-') as paths:
        ctx.load_cert_chain(paths.get('cert.pem', cert_file), paths.get('key.pem', key_file) or None)


# ---------------------------------------------------------------------------------------------
# The proxy decision of Go's net/http (golang.org/x/net/http/httpproxy: FromEnvironment, ProxyFunc)

DEFAULT_PORTS = {'http': '80', 'https': '443', 'socks5': '1080'}


def _env_any(environ, *names):
    """The first of ``names`` set to a non-empty value (the upper-case name first, as Go reads them)."""
    for name in names:
        value = environ.get(name)
        if value:
            return value
    return ''


def _parse_proxy(value):
    """A proxy variable's value as (scheme, netloc) parts; ``host:port`` means http://. None when unusable."""
    if not value:
        return None
    try:
        parts = urlsplit(value)
        if not parts.scheme or not parts.netloc:
            parts = urlsplit('http://' + value)
        parts.port  # pylint: disable=pointless-statement  # raises on a bad port
    except ValueError:
        return None
    return parts if parts.netloc else None


def _split_host_port(text):
    """Go's net.SplitHostPort for a NO_PROXY entry: (host, port) or None when it has no port."""
    if text.startswith('['):
        end = text.find(']')
        if end < 0 or text[end + 1:end + 2] != ':':
            return None
        return text[1:end], text[end + 2:]
    if text.count(':') != 1:
        return None
    host, port = text.split(':')
    return host, port


def _ip(text):
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def no_proxy_matchers(no_proxy):
    """NO_PROXY as Go reads it: '*' (everything), CIDRs, IPs with an optional port, domains with an optional port."""
    matchers = []
    for entry in (no_proxy or '').split(','):
        entry = entry.strip().lower()
        if not entry:
            continue
        if entry == '*':
            return [('all',)]
        if '/' in entry:
            try:
                matchers.append(('cidr', ipaddress.ip_network(entry, strict=False)))
                continue
            except ValueError:
                pass
        split = _split_host_port(entry)
        host, port = split if split else (entry, '')
        if split and not host:
            continue  # no host part: a malformed entry, ignored
        ip = _ip(host)
        if ip is not None:
            matchers.append(('ip', ip, port))
            continue
        if not host:
            continue
        if host.startswith('*.'):
            host = host[1:]
        match_host = not host.startswith('.')
        if match_host:
            host = '.' + host
        matchers.append(('domain', host, port, match_host))
    return matchers


def _matches(matcher, host, port, ip):
    kind = matcher[0]
    if kind == 'all':
        return True
    if kind == 'cidr':
        return ip is not None and ip.version == matcher[1].version and ip in matcher[1]
    if kind == 'ip':
        return ip is not None and ip == matcher[1] and matcher[2] in ('', port)
    dummy, suffix, want_port, match_host = matcher
    if ip is not None:
        return False
    if host.endswith(suffix) or (match_host and host == suffix[1:]):
        return want_port in ('', port)
    return False


def go_proxy(url, environ):
    """The proxy Go's HTTP client would use for ``url`` in a process whose environment is ``environ``.

    ``HTTPS_PROXY``/``https_proxy`` for https://, ``HTTP_PROXY``/``http_proxy`` for http:// (none of
    them in a CGI process, one with ``REQUEST_METHOD`` set); never for ``localhost`` or a loopback
    address; not for a host ``NO_PROXY``/``no_proxy`` names. Returns the proxy URL as given in the
    environment (credentials included: see :func:`redact`), or None for a direct connection.
    """
    environ = environ or {}
    parts = urlsplit(url)
    if parts.scheme == 'https':
        proxy = _parse_proxy(_env_any(environ, 'HTTPS_PROXY', 'https_proxy'))
    elif parts.scheme == 'http':
        proxy = _parse_proxy(_env_any(environ, 'HTTP_PROXY', 'http_proxy'))
        if proxy is not None and environ.get('REQUEST_METHOD'):
            return None  # Go refuses HTTP_PROXY in a CGI environment
    else:
        proxy = None
    if proxy is None:
        return None
    host = (parts.hostname or '').lower()
    port = str(parts.port) if parts.port else DEFAULT_PORTS.get(parts.scheme, '')
    if host == 'localhost':
        return None
    ip = _ip(host)
    if ip is not None and ip.is_loopback:
        return None
    for matcher in no_proxy_matchers(_env_any(environ, 'NO_PROXY', 'no_proxy')):
        if _matches(matcher, host, port, ip):
            return None
    return proxy.geturl()


def redact(proxy_url):
    """``proxy_url`` without its user name and password (what results and messages may show)."""
    if not proxy_url:
        return None
    parts = urlsplit(proxy_url)
    netloc = parts.netloc.rpartition('@')[2]
    return parts._replace(netloc=netloc).geturl()


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


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is handed back as an answer: :func:`probe` follows it as Go's client does, not as urllib would."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _target(url):
    """(host, port, path with query) of an http(s) URL, as a request line and a connection need them."""
    parts = urlsplit(url)
    path = parts.path or '/'
    if parts.query:
        path += '?' + parts.query
    return parts.hostname, parts.port or (443 if parts.scheme == 'https' else 80), path


def _via_proxy(url, method, body, headers, proxy, ctx, timeout):
    """One request to ``url`` through ``proxy`` (explicit, never the environment's): (status, Location, raw body)."""
    scheme = urlsplit(url).scheme
    handlers = [urllib.request.ProxyHandler({scheme: proxy}), _NoRedirect()]
    if ctx is not None:
        handlers.append(urllib.request.HTTPSHandler(context=ctx))
    opener = urllib.request.build_opener(*handlers)
    request = urllib.request.Request(url, data=body, headers=headers, method=method)
    try:
        with opener.open(request, timeout=timeout) as resp:
            return resp.status, resp.headers.get('Location'), resp.read(MAX_BODY)
    except urllib.error.HTTPError as e:
        try:
            return e.code, e.headers.get('Location') if e.headers else None, e.read(MAX_BODY)
        finally:
            e.close()
    except urllib.error.URLError as e:
        reason = e.reason
        raise reason if isinstance(reason, OSError) else OSError(str(reason)) from e


def _exchange(url, method, body, headers, proxy, ctx, timeout):
    """One request, no redirect followed: (status, Location header or None, raw body). Transport errors raise."""
    if proxy:
        return _via_proxy(url, method, body, headers, proxy, ctx, timeout)
    host, port, path = _target(url)
    if urlsplit(url).scheme == 'https':
        conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=ctx)
    else:
        conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.getheader('Location'), resp.read(MAX_BODY)
    finally:
        conn.close()


# Go's net/http client (the scheduler's extender client: http.Client with the default CheckRedirect) follows
# 301, 302 and 303 with a GET (HEAD stays HEAD) and no body, 307 and 308 with the same method and body; its
# CheckRedirect refuses to go on once 10 requests were redirected ("stopped after 10 redirects"); a 3xx without
# Location is the answer itself.
REDIRECTS_GET = (301, 302, 303)
REDIRECTS_SAME = (307, 308)
MAX_REDIRECTS = 10


def next_request(status, location, url, method, body):
    """Where Go's client goes after an answer: (url, method, body) of the next request, None when the answer is the
    last one (not a redirect, or one without Location); ValueError when the Location cannot be followed."""
    if status not in REDIRECTS_GET + REDIRECTS_SAME or not location:
        return None
    try:
        target = urljoin(url, location.strip())
        parts = urlsplit(target)
        parts.port  # pylint: disable=pointless-statement  # raises on a bad port
    except ValueError as e:
        raise ValueError('HTTP %s redirects to %r, which is not a URL (%s)' % (status, location, e)) from e
    if parts.scheme not in ('http', 'https') or not parts.hostname:
        raise ValueError('HTTP %s redirects to %r: unsupported protocol scheme or no host' % (status, location))
    if status in REDIRECTS_GET:
        return target, method if method in ('GET', 'HEAD') else 'GET', None
    return target, method, body


def probe(url, verb=FILTER_VERB, node_names=('localhost',), node_cache_capable=False, ca_file=None,
          cert_file=None, key_file=None, insecure=False, timeout=5.0, clock=None, uid=None,
          proxy=None, server_name=None, ca_data=None, cert_data=None, key_data=None, environ=None):
    """POST a minimal valid request to ``<url>/<verb>`` and judge the answer. Returns a ProbeResult.

    The request goes as kube-scheduler's Go HTTP client sends it: redirects followed as Go follows them
    (:func:`next_request`, no request after the :data:`MAX_REDIRECTS`-th one that redirects), each request through the proxy Go would take for its URL
    (``environ``: the scheduler's environment, :func:`go_proxy`; without it ``proxy``, e.g. from :func:`go_proxy`,
    for every request), the extender's TLS settings for every https:// one, and ``timeout`` for the whole exchange
    (Go's Client.Timeout). A proxy is an http:// one: a CONNECT tunnel for https://, an absolute-URI request for
    http://; None connects directly. Transport problems (refused, timeout, TLS, a proxy that refuses) are reported in
    the result, never raised; only an impossible request (bad URL, missing TLS files) raises ExtenderProbeError. TLS
    files that exist but do not load (not PEM) are reported in the result too: the scheduler fails on them as well,
    and what the scheduler does then is what the caller is watching.
    """
    clock = clock or time.monotonic
    parts = validate_url(url)
    full = verb_url(url, verb)
    body = json.dumps(build_request(verb, node_names, node_cache_capable, uid)).encode('utf-8')
    headers = {'Content-Type': 'application/json', 'Accept': 'application/json',
               'User-Agent': 'baremetal.k3s-extender-status'}
    tls = (ca_file, cert_file, key_file, insecure, server_name, ca_data, cert_data, key_data)
    if parts.scheme == 'https':
        missing = [f for f in (ca_file, cert_file, key_file) if f and not os.path.isfile(f)]
        if missing:
            raise ExtenderProbeError('cannot load TLS files: %s does not exist' % ', '.join(missing))
    result = ProbeResult(full)
    contexts = {}
    start = clock()
    current, method, send, hops = full, 'POST', body, []
    while True:
        hop_proxy = go_proxy(current, environ) if environ is not None else proxy
        scheme = urlsplit(current).scheme
        ctx = None
        if scheme == 'https':
            try:
                ctx = contexts.setdefault('tls', ssl_context(*tls))
            except ExtenderProbeError as e:
                result.error = _hops(str(e), hops)
                return result
        if hop_proxy and urlsplit(hop_proxy).scheme != 'http':
            result.error = _hops('proxy %s: the probe speaks to http:// proxies only, not %s://'
                                 % (redact(hop_proxy), urlsplit(hop_proxy).scheme), hops)
            return result
        left = timeout - (clock() - start)
        if left <= 0:
            result.error = _hops('timeout: no answer within %s s' % timeout, hops)
            result.elapsed = clock() - start
            return result
        try:
            status, location, raw = _exchange(current, method, send, headers, hop_proxy, ctx, left)
        except (OSError, http.client.HTTPException) as e:
            said = _describe(e, timeout, 'the proxy' if hop_proxy else 'the extender')
            result.error = _hops(_scrub(said, hop_proxy), hops)
            result.elapsed = clock() - start
            return result
        result.status = status
        try:
            following = next_request(status, location, current, method, send)
        except ValueError as e:
            result.error = _hops(_terminal.one_line(str(e)), hops)
            result.elapsed = clock() - start
            return result
        if following is None:
            break
        if len(hops) + 1 >= MAX_REDIRECTS:  # Go's CheckRedirect: no request after the 10th one that redirects
            result.error = _hops('stopped after %d redirects (kube-scheduler\'s Go HTTP client stops there too)'
                                 % MAX_REDIRECTS, hops)
            result.elapsed = clock() - start
            return result
        current, method, send = following
        hops.append(current)
    result.elapsed = clock() - start
    result.redirects = hops
    text = raw.decode('utf-8', errors='replace')
    if result.status != 200:
        body = _terminal.one_line(text.strip()[:ERROR_SNIPPET]) or '(empty body)'
        result.error = _hops(_scrub('HTTP %s: %s' % (result.status, body), hop_proxy), hops)
        return result
    try:
        answer = json.loads(text)
    except ValueError:
        result.error = _hops('HTTP 200 but the body is not JSON: %s'
                             % (_terminal.one_line(text.strip()[:ERROR_SNIPPET]) or '(empty body)'), hops)
        return result
    result.body = answer
    shape_ok, error = check_answer(verb, answer)
    result.error = _hops(_terminal.one_line(error), hops) if error else ''
    result.reachable = shape_ok and (not error or verb == BIND_VERB)
    return result


def _hops(text, hops):
    """``text``, and where the redirects led when there were any."""
    if not hops:
        return text
    return '%s (after %d redirect%s, at %s)' % (text, len(hops), '' if len(hops) == 1 else 's', hops[-1])


def _scrub(text, proxy):
    """``text`` without the proxy's credentials, should an error have quoted them."""
    if not proxy:
        return text
    userinfo = urlsplit(proxy).netloc.rpartition('@')[0]
    if userinfo:
        text = text.replace(proxy, redact(proxy)).replace(userinfo, '***')
    return text


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
