# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""This node's entry in the readiness ConfigMap CSI Baremetal's extender reads, written with kubectl.

The ConfigMap holds one key, ``nodes.yaml``, in CSI Baremetal's operator's format::

    nodes:
    - kube_scheduler: k3s@server-1
      node_name: server-1
      restarted: true

Every server rewrites only its own entry, and several servers may do so at the same moment
(the role runs with ``serial`` > 1). A read-modify-write would then lose the entry of whoever
wrote in between, so every write is conditional: ``kubectl replace`` sends the
``metadata.resourceVersion`` that was read and the API server refuses it with Conflict when
the ConfigMap changed since; ``kubectl create`` is refused with AlreadyExists when another
writer created it first. Either way the ConfigMap is read again and the change redone on the
newer version, a bounded number of times.

The API is reached only through a *runner*: ``runner(argv, stdin) -> (rc, stdout, stderr)``,
the platform's own kubectl on the node (``k3s kubectl``, RKE2's, kubeadm's); no Kubernetes
client library. Pure logic, no Ansible import, so that tests can put a fake API server behind
the runner.
"""

from __future__ import annotations

import copy
import json
import os
import random
import re
import time

from ansible_collections.baremetal.k3s.plugins.module_utils import _kubectl
from ansible_collections.baremetal.k3s.plugins.module_utils import _names
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, Plan, PlanError

try:
    import yaml
    HAS_YAML = True
    YAML_IMPORT_ERROR = None
    try:  # the dumper Ansible's to_nice_yaml uses: libyaml's when PyYAML has it
        from yaml import CSafeDumper as _Dumper
    except ImportError:  # pragma: no cover - depends on how PyYAML was built
        from yaml import SafeDumper as _Dumper
except ImportError as _e:  # pragma: no cover - depends on the node
    yaml = _Dumper = None
    HAS_YAML = False
    YAML_IMPORT_ERROR = _e

DATA_KEY = 'nodes.yaml'
MANAGED_BY = ('app.kubernetes.io/managed-by', 'baremetal.k3s')
MAX_ATTEMPTS = 20
# Bounds each kubectl call, so that an API server that does not answer fails the task instead of hanging it.
REQUEST_TIMEOUT = '30s'

_DNS_LABEL = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')
# kubectl's messages for the API server's status reasons (kubectl prints "Error from server (Reason): ...").
_CONFLICT = re.compile(r'\(Conflict\)|the object has been modified|Operation cannot be fulfilled')
_ALREADY_EXISTS = re.compile(r'\(AlreadyExists\)|already exists')
_NAMESPACE_MISSING = re.compile(r'namespaces? "([^"]*)" not found')


class NamespaceMissing(PlanError):
    """The namespace the ConfigMap should live in does not exist."""


class Request:
    """What to publish: validated once, so that bad input fails before kubectl is ever run. One node's entry
    (``node_name`` with its ``state``, ``kube_scheduler``, ``restarted``), or several nodes' in one write (``nodes``:
    a list of dicts with those keys, ``state`` present by default)."""

    def __init__(self, kubectl, name, namespace, node_name=None, state='present', kube_scheduler=None,
                 restarted=False, kubeconfig=None, nodes=None):
        self.kubectl = list(kubectl or [])
        self.kubeconfig = kubeconfig or None
        self.name = name
        self.namespace = namespace
        self._validate()
        if nodes is None:
            nodes = [{'node_name': node_name, 'state': state, 'kube_scheduler': kube_scheduler, 'restarted': restarted}]
        self.nodes = self._checked(nodes)

    @staticmethod
    def _checked(nodes):
        """The nodes' entries as dicts, each checked; a node named twice is refused."""
        if not isinstance(nodes, list) or not nodes:
            raise PlanError('nodes must be a non-empty list of {node_name, kube_scheduler, restarted, state}; got %r'
                            % (nodes,))
        out = []
        for node in nodes:
            if not isinstance(node, dict):
                raise PlanError('each of nodes must be a {node_name, kube_scheduler, restarted, state}; got %r' % (node,))
            entry = {'node_name': node.get('node_name'), 'state': node.get('state') or 'present',
                     'kube_scheduler': node.get('kube_scheduler'), 'restarted': bool(node.get('restarted'))}
            if entry['state'] not in ('present', 'absent'):
                raise PlanError('state must be present or absent, not %r' % (entry['state'],))
            _names.check('node_name', entry['node_name'], _names.DNS_SUBDOMAIN, PlanError, what='a Kubernetes node name',
                         hint='give the name the node registers with, in lower case (k3s_info returns it as "node_name")')
            named = isinstance(entry['kube_scheduler'], str) and entry['kube_scheduler'].strip()
            if entry['state'] == 'present' and not named:
                raise PlanError('kube_scheduler is needed with state=present: the scheduler\'s name for the readiness '
                                'ConfigMap (extender_status returns it, for example k3s@%s)' % entry['node_name'])
            if entry['node_name'] in [n['node_name'] for n in out]:
                raise PlanError('node %s is named twice in nodes: give each node once' % entry['node_name'])
            out.append(entry)
        return out

    def _validate(self):
        if not self.kubectl or not all(isinstance(a, str) and a for a in self.kubectl):
            raise PlanError('kubectl must be the kubectl command as a list of non-empty words, for example '
                            '[/usr/local/bin/k3s, kubectl] (k3s_info returns it as "kubectl"); got %r' % (self.kubectl,))
        _names.check('name', self.name, _names.DNS_SUBDOMAIN, PlanError, what='a valid ConfigMap name')
        _names.check('namespace', self.namespace, _names.DNS_LABEL, PlanError, what='a valid namespace name')

    def wanted(self):
        """[(node name, its entry as it should be, or None when it should be gone)]."""
        return [(n['node_name'], None if n['state'] == 'absent' else
                 {'node_name': n['node_name'], 'kube_scheduler': n['kube_scheduler'], 'restarted': n['restarted']})
                for n in self.nodes]

    def entry(self):
        """The one node's entry as it should be, or None when it should be gone."""
        return self.wanted()[0][1]

    @property
    def where(self):
        return 'ConfigMap %s/%s' % (self.namespace, self.name)


# -- nodes.yaml -----------------------------------------------------------------------------
def parse_document(text, where):
    """``nodes.yaml`` as a mapping whose ``nodes`` is a list of entries with a ``node_name``.

    A document this module cannot read is an error rather than something to overwrite: it may
    hold other servers' entries, which a rewrite would lose.
    """
    if text is None or not text.strip():
        return {'nodes': []}
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise PlanError('%s: %s is not valid YAML (%s). Fix it or remove the key (kubectl edit), then run again.'
                        % (where, DATA_KEY, str(e).replace('\n', ' '))) from e
    if doc is None:
        return {'nodes': []}
    if not isinstance(doc, dict):
        raise PlanError('%s: %s must be a mapping with a "nodes" list, not a %s. Fix it or remove the key '
                        '(kubectl edit), then run again.' % (where, DATA_KEY, type(doc).__name__))
    doc = dict(doc)
    nodes = doc.get('nodes')
    if nodes is None:
        nodes = []
    if not isinstance(nodes, list):
        raise PlanError('%s: "nodes" in %s must be a list, not a %s. Fix it or remove the key (kubectl edit), '
                        'then run again.' % (where, DATA_KEY, type(nodes).__name__))
    for index, node in enumerate(nodes):
        if not (isinstance(node, dict) and isinstance(node.get('node_name'), str) and node['node_name']):
            raise PlanError('%s: entry %d of "nodes" in %s has no node_name (%r). Fix or remove that entry '
                            '(kubectl edit), then run again.' % (where, index, DATA_KEY, node))
    doc['nodes'] = nodes
    return doc


def render(doc):
    """The text of ``nodes.yaml``, as the role's template wrote it: ``to_nice_yaml(indent=2)`` (keys sorted)."""
    return yaml.dump(doc, Dumper=_Dumper, indent=2, allow_unicode=True, default_flow_style=False)


def _sort_key(node):
    # Jinja's sort(attribute=...) ignores case by default; the order stays the role's.
    return node['node_name'].lower()


def apply_entry(doc, node_name, entry):
    """(new document, changed): ``doc`` with every entry of ``node_name`` replaced by ``entry`` (None: removed).

    Changed only when this node's entries differ from what they should be; other entries are
    kept as they are, and the list is sorted by node name, as the role always wrote it.
    """
    mine = [n for n in doc['nodes'] if n['node_name'] == node_name]
    wanted = [entry] if entry is not None else []
    others = [n for n in doc['nodes'] if n['node_name'] != node_name]
    after = dict(doc)
    after['nodes'] = sorted(others + wanted, key=_sort_key)
    return after, mine != wanted


# -- kubectl ----------------------------------------------------------------------------------
class Kubectl:
    """The few kubectl commands this module runs, their errors sorted into what to retry and what to report."""

    def __init__(self, runner, request):
        self.runner = runner
        self.request = request

    def _argv(self, *args, **kw):
        """kubectl [--kubeconfig K] --request-timeout T ARGS -n NAMESPACE (without -n for cluster-wide objects)."""
        argv = list(self.request.kubectl)
        if self.request.kubeconfig:
            argv += ['--kubeconfig', self.request.kubeconfig]
        argv += ['--request-timeout', REQUEST_TIMEOUT] + list(args)
        return argv + ([] if kw.get('cluster') else ['-n', self.request.namespace])

    def _run(self, argv, stdin=None):
        rc, out, err = self.runner(argv, stdin)
        if rc is None:
            raise PlanError('kubectl %s was not found on this node (or is not executable). Give the platform\'s '
                            'kubectl: k3s_info returns it as "kubectl".' % self.request.kubectl[0])
        return rc, out or '', (err or '').strip()

    def _failed(self, argv, rc, err):
        kubeconfig = self.request.kubeconfig or "kubectl's default"
        return PlanError('%s failed (exit %s): %s. Check that the API server answers and that the kubeconfig '
                         '(%s) may read and write configmaps in namespace %s.'
                         % (_kubectl.quote(argv), rc, err or 'no error output', kubeconfig, self.request.namespace))

    def namespace_missing(self):
        return NamespaceMissing(
            'namespace %s does not exist, so the readiness %s cannot be created there. '
            'scheduler_extender_readiness_namespace (the module\'s namespace option) must name an existing '
            'namespace: the one CSI Baremetal\'s operator is deployed in.' % (self.request.namespace, self.request.where))

    def get(self):
        """The ConfigMap as the API server has it (a dict), or None when there is none."""
        argv = self._argv('get', 'configmap', self.request.name, '-o', 'json', '--ignore-not-found')
        rc, out, err = self._run(argv)
        if rc != 0:
            raise self._failed(argv, rc, err)
        if not out.strip():
            return None
        try:
            obj = json.loads(out)
        except ValueError as e:
            raise PlanError('%s printed no JSON (%s): %r' % (_kubectl.quote(argv), e, out[:200])) from e
        if not isinstance(obj, dict) or obj.get('kind') != 'ConfigMap':
            raise PlanError('%s printed no ConfigMap: %r' % (_kubectl.quote(argv), out[:200]))
        return obj

    def namespace_exists(self):
        """Whether the namespace exists; check mode asks, as it never reaches the create that would tell."""
        argv = self._argv('get', 'namespace', self.request.namespace, '-o', 'name', '--ignore-not-found', cluster=True)
        rc, out, err = self._run(argv)
        if rc != 0:
            raise self._failed(argv, rc, err)
        return bool(out.strip())

    def write(self, verb, obj):
        """``create`` or ``replace`` ``obj``; None when done, else why to read again and retry."""
        argv = self._argv(verb, '-f', '-')
        rc, dummy, err = self._run(argv, json.dumps(obj, sort_keys=True))
        if rc == 0:
            return None
        if _NAMESPACE_MISSING.search(err):
            raise self.namespace_missing()
        if _CONFLICT.search(err) or _ALREADY_EXISTS.search(err):
            return err
        if verb == 'replace' and _kubectl.NOT_FOUND.search(err):
            return err  # deleted since it was read: read again, and create it
        raise self._failed(argv, rc, err)


# -- the change -------------------------------------------------------------------------------
def plan(request, current):
    """One round: the ConfigMap as read (``current``, None when there is none) and what to write, as a Plan.

    Its one Change (when there is something to write) is ``nodes.yaml`` of the ConfigMap, bytes before and after;
    its facts: ``nodes`` (the entries after), ``before``/``after`` (the texts, for diff mode), ``verb`` (create or
    replace) and ``object`` (the ConfigMap to send). PlanError for a document this module cannot read, or an
    immutable ConfigMap that would change.
    """
    data = (current or {}).get('data') or {}
    before_text = data.get(DATA_KEY) if isinstance(data.get(DATA_KEY), str) else ''
    after, changed = parse_document(before_text, request.where), False
    for node_name, entry in request.wanted():
        after, changed_here = apply_entry(after, node_name, entry)
        changed = changed or changed_here
    after_text = render(after) if changed else before_text
    if changed and current is not None and current.get('immutable') is True:
        raise PlanError('%s is immutable (immutable: true), so %s cannot be updated. Delete it (kubectl delete '
                        'configmap -n %s %s) to have it created again, or publish to another ConfigMap.'
                        % (request.where, DATA_KEY, request.namespace, request.name))
    changes = [Change('%s: %s' % (request.where, DATA_KEY), None if current is None else before_text.encode(),
                      after_text.encode())] if changed else []
    facts = {'nodes': after['nodes'], 'before': before_text, 'after': after_text,
             'verb': 'create' if current is None else 'replace', 'object': _object(request, current, after_text)}
    return Plan(changes, facts)


def _object(request, current, text):
    """The ConfigMap to send: a new one, or the one read with ``nodes.yaml`` changed and all else kept.

    The read object keeps its ``metadata.resourceVersion`` (and uid), which makes the
    replace conditional. managedFields are left out: the API server keeps its own then.
    """
    if current is None:
        return {
            'apiVersion': 'v1', 'kind': 'ConfigMap',
            'metadata': {'name': request.name, 'namespace': request.namespace, 'labels': dict([MANAGED_BY])},
            'data': {DATA_KEY: text},
        }
    obj = copy.deepcopy(current)
    obj.get('metadata', {}).pop('managedFields', None)
    obj['data'] = dict(obj.get('data') or {})
    obj['data'][DATA_KEY] = text
    return obj


def backoff(attempt, rand=random.random):
    """Seconds to wait before attempt ``attempt + 1``: short, growing, jittered so racing writers drift apart."""
    return min(1.0, 0.05 * attempt) * (0.5 + rand())


def publish(runner, request, check_mode=False, max_attempts=MAX_ATTEMPTS, sleep=time.sleep, rand=random.random):
    """Bring this node's entry to ``request``; the result dict the module returns (without diff mode's header).

    Reads, changes and writes conditionally; on Conflict or AlreadyExists reads again and redoes
    the change, up to ``max_attempts`` rounds. In check mode nothing is written.
    """
    if not HAS_YAML:
        raise PlanError('PyYAML is needed to read and write %s' % DATA_KEY)
    api = Kubectl(runner, request)
    last = ''
    for attempt in range(1, max_attempts + 1):
        current = api.get()
        round_ = plan(request, current)
        facts = round_.facts
        result = {'changed': round_.changed, 'nodes': facts['nodes'], 'attempts': attempt,
                  'diff': {'before': facts['before'], 'after': facts['after']}}
        if not round_.changed:
            return result
        if check_mode:
            if current is None and not api.namespace_exists():
                raise api.namespace_missing()
            return result
        last = api.write(facts['verb'], facts['object'])
        if last is None:
            return result
        if attempt < max_attempts:
            sleep(backoff(attempt, rand))
    raise PlanError('%s: gave up after %d attempts; each write found the ConfigMap changed by another writer since '
                    'it was read (last answer: %s). Nothing of this node was written. Run again, or with fewer '
                    'servers at once.' % (request.where, max_attempts, last))


def check_files(view, kubectl, kubeconfig):
    """PlanError, before anything runs, on a kubectl or kubeconfig that is not on the node."""
    if kubectl and os.path.isabs(kubectl[0]):
        if not (view.isfile(kubectl[0]) and os.access(view.host_path(kubectl[0]), os.X_OK)):
            raise PlanError('kubectl %s is not an executable file on this node. Give the platform\'s kubectl (k3s_info '
                            'returns it as "kubectl"; the role\'s scheduler_extender_kubectl overrides it).' % kubectl[0])
    elif kubectl and kubectl[0] and view.which(kubectl[0]) is None:
        raise PlanError('kubectl %s is not on the PATH of this node. Give its absolute path (k3s_info returns the '
                        'platform\'s as "kubectl").' % kubectl[0])
    if kubeconfig and not view.isfile(kubeconfig):
        raise PlanError('kubeconfig %s does not exist on this node. Give the platform\'s admin kubeconfig '
                        '(k3s_info returns it as "admin_kubeconfig").' % kubeconfig)


def publish_proven(view, options, status):
    """Publish the entry of the node a proven wait (extender_status's result ``status``: its ``node_name``,
    ``kube_scheduler``, ``restarted``) looked at, with ``options`` (kubectl, kubeconfig, name, namespace, state);
    :func:`publish`'s result without the diff. PlanError when it cannot be written."""
    request = Request(
        kubectl=options['kubectl'], kubeconfig=options.get('kubeconfig'), name=options['name'],
        namespace=options['namespace'], node_name=status.get('node_name'), state=options.get('state') or 'present',
        kube_scheduler=status.get('kube_scheduler'), restarted=bool(status.get('restarted')))
    check_files(view, request.kubectl, request.kubeconfig)
    result = publish(view.run, request)
    result.pop('diff', None)
    return result
