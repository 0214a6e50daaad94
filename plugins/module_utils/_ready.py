# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.k3s_ready``: wait until a k3s node is back, the gate of a rolling restart.

Each look asks the API server, through the platform's own kubectl (``view.run``):

1. ``kubectl get --raw /readyz`` - the API server answers and all its readiness checks pass
   (its ``etcd`` check included: the datastore answers it);
2. ``kubectl get node <name> -o json`` - the Node is registered and its condition ``Ready`` is
   ``True``;
3. with ``kubelet_version``, the same Node reports ``status.nodeInfo.kubeletVersion`` equal to
   it (the version the agent now running posts at its start: an upgrade's gate);
4. with ``etcd_member``, the same Node's condition ``EtcdIsVoter`` is ``True``. k3s's etcd
   leader sets that condition on every Node labelled ``node-role.kubernetes.io/etcd`` (every
   15 s): ``True`` (MemberNotLearner) once the member is a voting member, ``False`` while it
   is a learner (MemberIsLearner), unhealthy, or no member at all (NotAMember). That is how
   real k3s exposes membership without the etcd client certificates; a server that just
   joined is a learner until the leader promotes it.

Looks repeat every ``interval`` seconds (``view.clock.sleep``) until all pass or ``timeout``
seconds have gone (``view.clock.monotonic``); the result says what the last look found, and
``waited_for`` what the wait waited for on the way (each reason once, in the order seen, with
the second it was first seen and how many looks gave it).
Pure logic, no Ansible import.
"""

from __future__ import annotations

import calendar
import json
import math
import re
import time

from ansible_collections.baremetal.k3s.plugins.module_utils import _kubectl
from ansible_collections.baremetal.k3s.plugins.module_utils import _names
from ansible_collections.baremetal.k3s.plugins.module_utils import _terminal
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Plan, PlanError
from ansible_collections.baremetal.k3s.plugins.module_utils._view import RunTimeout

REQUEST_TIMEOUT = 10  # seconds, at most, that one kubectl call may take
RUN_MARGIN = 20  # seconds kubectl may run past its --request-timeout (discovery, start) before it is stopped
TIMED_OUT_RC = 124  # the exit code reported for a kubectl the View had to stop (as timeout(1) reports it)
READYZ_OK = 'ok'  # what the API server's /readyz answers when every check passes
WAITED_FOR = 20  # reasons kept in waited_for, at most (the first ones)
READY = 'Ready'
ETCD_VOTER = 'EtcdIsVoter'
_FAILED_CHECK = re.compile(r'\[-\]([^\s\\]+) failed')
_NOT_FOUND = re.compile(r'\(NotFound\)|nodes? "[^"]*" not found')


class ReadyError(PlanError):
    """Waiting makes no sense (bad input, no kubectl); ``msg`` says what to do."""


def _one_word(value):
    """A non-empty string without whitespace anywhere."""
    return isinstance(value, str) and bool(value) and not any(c.isspace() for c in value)


def validate(params):
    """The options, checked once before anything runs; raises ReadyError."""
    kubectl = params.get('kubectl') or []
    if not kubectl or not all(isinstance(a, str) and a for a in kubectl):
        raise ReadyError('kubectl must be the kubectl command as a list of non-empty words, for example '
                         '[/usr/local/bin/k3s, kubectl] (k3s_info returns it as "kubectl"); got %r' % (kubectl,))
    name = params.get('node_name')
    if name is not None:
        _names.check('node_name', name, _names.DNS_SUBDOMAIN, ReadyError, what='a Kubernetes node name',
                     hint='give the name the node registers with, in lower case (k3s_info returns it as "node_name")')
    elif params.get('etcd_member') or params.get('kubelet_version') is not None or params.get('since') is not None:
        raise ReadyError('etcd_member, kubelet_version and since are read from a Node: give node_name with them')
    for key in ('timeout', 'interval'):
        value = params.get(key)
        if value is None or value < 0:
            raise ReadyError('%s must be 0 or more seconds, not %r' % (key, value))
    if params['interval'] == 0 and params['timeout'] > 0:
        raise ReadyError('interval must be more than 0 seconds when timeout is more than 0')
    version = params.get('kubelet_version')
    if version is not None and not _one_word(version):
        raise ReadyError('kubelet_version must be the version the Node reports, as one word (for example v1.31.4+k3s1, '
                         'what "k3s --version" prints), not %r' % (version,))


def _text(value):
    """kubectl's output as text (a runner may hand bytes)."""
    if isinstance(value, bytes):
        return value.decode('utf-8', 'replace')
    return value or ''


def _answer(out):
    """What an answer held, shortened to one printable line."""
    text = _terminal.one_line(out)
    if not text:
        return 'an empty body'
    return "'%s'" % _terminal.cut(text, 200)


def conditions(node):
    """The Node's ``status.conditions`` as [{type, status, reason, message}]."""
    out = []
    for c in ((node.get('status') or {}).get('conditions') or []):
        if isinstance(c, dict) and c.get('type'):
            out.append({'type': str(c.get('type')), 'status': str(c.get('status', '')),
                        'reason': str(c.get('reason') or ''), 'message': str(c.get('message') or '')})
    return out


def heartbeat(node, kind=READY):
    """``lastHeartbeatTime`` of the Node's condition ``kind``, '' when it has none."""
    for c in ((node.get('status') or {}).get('conditions') or []):
        if isinstance(c, dict) and c.get('type') == kind:
            return str(c.get('lastHeartbeatTime') or '')
    return ''


def epoch(text):
    """Seconds since the epoch of a Kubernetes time (``2026-11-24T23:00:00Z``); None when it is not one."""
    try:
        return calendar.timegm(time.strptime(text.replace('Z', '').split('.')[0], '%Y-%m-%dT%H:%M:%S'))
    except (TypeError, ValueError):
        return None


def kubelet_version(node):
    """``status.nodeInfo.kubeletVersion`` of the Node, None when it has none."""
    info = (node.get('status') or {}).get('nodeInfo')
    version = info.get('kubeletVersion') if isinstance(info, dict) else None
    return str(version) if version else None


def _condition(conds, kind):
    return next((c for c in conds if c['type'] == kind), None)


def _describe(cond):
    text = '%s=%s' % (cond['type'], cond['status'])
    detail = ': '.join(p for p in (cond['reason'], cond['message']) if p)
    return '%s (%s)' % (text, detail) if detail else text


class Waiter:
    """Looks at the API and the Node through kubectl until ready or out of time."""

    def __init__(self, view, params):
        validate(params)
        self.view = view
        self.p = params
        self.kubectl = list(params['kubectl'])
        self.node = params['node_name']
        program = self.kubectl[0]
        if not (view.isfile(program) if program.startswith('/') else view.which(program)):
            raise self._missing()

    def _missing(self):
        return ReadyError('kubectl %s was not found on this node (%s). Give the platform\'s kubectl: k3s_info returns it as '
                          '"kubectl" ([<k3s binary>, kubectl] for k3s).' % (self.kubectl[0], _kubectl.quote(self.kubectl)))

    def _run(self, remaining, *args):
        seconds = max(1, min(REQUEST_TIMEOUT, int(math.ceil(remaining)) if remaining > 0 else 1))
        argv = list(self.kubectl)
        if self.p.get('kubeconfig'):
            argv += ['--kubeconfig', self.p['kubeconfig']]
        argv += ['--request-timeout', '%ds' % seconds] + list(args)
        try:
            rc, out, err = self.view.run(argv, timeout=seconds + RUN_MARGIN)
        except RunTimeout as e:
            # a kubectl that hangs past its own request timeout is no answer: a reason to look again
            return TIMED_OUT_RC, '', 'kubectl did not finish within %s s (stopped)' % e.seconds
        if rc is None:
            raise self._missing()
        return rc, _text(out), _text(err)

    def look(self, remaining):
        """One look: {api_ready, node_ready, node_conditions, etcd_member, reason} (reason empty when ready)."""
        state = {'api_ready': False, 'node_ready': False, 'node_conditions': [],
                 'etcd_member': None, 'kubelet_version': None, 'reason': ''}
        kubeconfig = self.p.get('kubeconfig')
        if kubeconfig and not self.view.exists(kubeconfig):
            state['reason'] = 'kubeconfig %s does not exist (yet): k3s writes it when the server starts' % kubeconfig
            return state
        rc, out, err = self._run(remaining, 'get', '--raw', '/readyz')
        if rc != 0:
            failed = _FAILED_CHECK.findall(err + out)
            state['reason'] = ('the API server is not ready: /readyz reports %s failed' % ', '.join(failed) if failed else
                               'the API server does not answer /readyz: %s'
                               % _terminal.one_line(_kubectl.first_line(err) or 'exit %s' % rc))
            return state
        if out.strip() != READYZ_OK:
            # a 200 from something else on that address (a proxy, a captive page) is not the API server's answer
            state['reason'] = ('/readyz answered, but not as the API server does ("%s"): %s. Something else answers at '
                               'the kubeconfig\'s server address (a proxy, a captive portal?); check the kubeconfig '
                               'and the proxy variables of this node'
                               % (READYZ_OK, _answer(out)))
            return state
        state['api_ready'] = True
        if self.node is None:  # the API server alone (a control plane whose host runs no Node)
            return state
        rc, out, err = self._run(remaining, 'get', 'node', self.node, '-o', 'json')
        if rc != 0:
            if _NOT_FOUND.search(err):
                state['reason'] = 'node %s is not registered in the API (yet)' % self.node
            else:
                state['reason'] = 'kubectl get node %s failed: %s' % (self.node, _kubectl.first_line(err) or 'exit %s' % rc)
            return state
        try:
            node = json.loads(out)
        except ValueError:
            state['reason'] = 'kubectl get node %s printed no JSON: %s' % (self.node, _answer(out))
            return state
        if not isinstance(node, dict) or node.get('kind') != 'Node':
            state['reason'] = 'kubectl get node %s printed no Node: %s' % (self.node, _answer(out))
            return state
        conds = conditions(node)
        state['node_conditions'] = conds
        ready = _condition(conds, READY)
        state['node_ready'] = bool(ready and ready['status'] == 'True')
        reasons = []
        since = self.p.get('since')
        if state['node_ready'] and since is not None:
            beat = heartbeat(node)
            # whole seconds: the roles pass the first second after the old process was gone
            if epoch(beat) is None or epoch(beat) < since:
                state['node_ready'] = False
                reasons.append('node %s is Ready only as of its last heartbeat %s, before the restart: waiting for a new one'
                               % (self.node, beat or '(none)'))
        if ready is None:
            reasons.append('node %s has no Ready condition yet' % self.node)
        elif ready['status'] != 'True':
            reasons.append('node %s is not Ready: %s' % (self.node, _describe(ready)))
        state['kubelet_version'] = kubelet_version(node)
        want = self.p.get('kubelet_version')
        if want is not None and state['kubelet_version'] != want:
            reasons.append('node %s reports kubeletVersion %s, waiting for %s' % (
                self.node, state['kubelet_version'] or '(none)', want))
        if self.p.get('etcd_member'):
            voter = _condition(conds, ETCD_VOTER)
            state['etcd_member'] = bool(voter and voter['status'] == 'True')
            if voter is None:
                reasons.append('node %s has no EtcdIsVoter condition yet (k3s\'s etcd leader sets it, every 15 s, on servers '
                               'with embedded etcd)' % self.node)
            elif not state['etcd_member']:
                reasons.append('node %s is not a voting etcd member: %s' % (self.node, _describe(voter)))
        state['reason'] = '; '.join(reasons)
        return state


def wait(view, params):
    """The Plan (no changes) of ``baremetal.k3s.k3s_ready``: its facts are the module's result."""
    waiter = Waiter(view, params)
    clock = view.clock
    timeout, interval = params['timeout'], params['interval']
    start = clock.monotonic()
    attempts = 0
    waited = []
    while True:
        attempts += 1
        state = waiter.look(timeout - (clock.monotonic() - start))
        elapsed = clock.monotonic() - start
        if state['reason']:
            seen = next((w for w in waited if w['reason'] == state['reason']), None)
            if seen is not None:
                seen['looks'] += 1
            elif len(waited) < WAITED_FOR:
                waited.append({'reason': state['reason'], 'at': round(elapsed, 1), 'looks': 1})
        if not state['reason'] or elapsed >= timeout:
            break
        clock.sleep(max(0.0, min(interval, timeout - elapsed)))
    reason = state.pop('reason')
    what = ('the API answers /readyz and node %s is Ready' % waiter.node if waiter.node is not None
            else 'the API answers /readyz')
    if params.get('kubelet_version') is not None:
        what += ' with kubeletVersion %s' % params['kubelet_version']
    if params.get('etcd_member'):
        what += ' and a voting etcd member'
    if reason:
        msg = 'not ready within timeout (%s s): %s' % (timeout, reason)
    else:
        msg = '%s (after %d look%s, %.1f s)' % (what, attempts, '' if attempts == 1 else 's', elapsed)
    state.update(ready=not reason, timed_out=bool(reason), msg=msg, node_name=waiter.node,
                 elapsed=round(elapsed, 3), attempts=attempts, waited_for=waited)
    return Plan(facts=state)
