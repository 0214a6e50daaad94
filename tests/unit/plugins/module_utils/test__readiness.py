# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of _readiness against a fake API server behind the kubectl runner.

:class:`FakeApi` answers the kubectl commands the module runs the way kubectl and the API
server answer them: it keeps ConfigMaps with a resourceVersion, refuses a replace carrying a
stale one (Conflict), a create of an existing one (AlreadyExists) and anything in a namespace
that does not exist (NotFound), with kubectl's own error lines. Hooks let a test run another
writer between a read and a write, which is the race the module must survive.
"""

from __future__ import annotations

import copy
import json
import threading

import jinja2
import pytest
import yaml

from ansible.plugins.filter.core import to_nice_yaml

from ansible_collections.baremetal.k3s.plugins.module_utils import _readiness as readiness
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

KUBECTL = ['/usr/local/bin/k3s', 'kubectl']
KUBECONFIG = '/etc/rancher/k3s/k3s.yaml'
WHERE = 'ConfigMap default/extender-readiness'


class FakeApi:
    """ConfigMaps and namespaces as the API server keeps them, reached as kubectl reaches them."""

    def __init__(self, namespaces=('default', 'kube-system')):
        self.namespaces = set(namespaces)
        self.objects = {}
        self.version = 1000
        self.calls = []
        self.writes = []
        self.before_write = None  # callable(verb, obj): runs after the write's request arrives, before it is applied
        self.lock = threading.RLock()

    # -- what a test sets up or looks at
    def _next_version(self):
        self.version += 1
        return str(self.version)

    def put(self, name, data, namespace='default', **metadata):
        """A ConfigMap created by someone else (the operator, an admin)."""
        meta = {'name': name, 'namespace': namespace, 'uid': 'uid-%s' % name, 'resourceVersion': self._next_version(),
                'creationTimestamp': '2026-01-01T00:00:00Z',
                'managedFields': [{'manager': 'kubectl-create', 'operation': 'Update'}]}
        meta.update(metadata)
        self.objects[(namespace, name)] = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': meta, 'data': dict(data)}
        return self.objects[(namespace, name)]

    def nodes(self, name='extender-readiness', namespace='default'):
        """The node names in the stored ConfigMap's nodes.yaml, in order."""
        text = self.objects[(namespace, name)]['data']['nodes.yaml']
        return [n['node_name'] for n in yaml.safe_load(text)['nodes']]

    def verbs(self):
        return [c[0] for c in self.calls]

    # -- kubectl
    def runner(self, argv, stdin=None):
        """kubectl [--kubeconfig K] --request-timeout T VERB ... [-n NS]: (rc, stdout, stderr)."""
        assert argv[:len(KUBECTL)] == KUBECTL, argv
        args = list(argv[len(KUBECTL):])
        opts = {}
        for flag in ('--kubeconfig', '--request-timeout', '-n', '-o', '-f'):
            if flag in args:
                i = args.index(flag)
                opts[flag] = args[i + 1]
                del args[i:i + 2]
        assert opts.get('--request-timeout') == readiness.REQUEST_TIMEOUT, argv
        verb = args[0]
        with self.lock:
            self.calls.append((verb, argv, stdin))
        if verb == 'get':
            return self._get(args[1:], opts)
        assert opts.get('-f') == '-' and stdin is not None, argv
        obj = json.loads(stdin)
        if self.before_write is not None:
            self.before_write(verb, obj)
        with self.lock:
            self.writes.append((verb, copy.deepcopy(obj)))
            return self._create(obj, opts['-n']) if verb == 'create' else self._replace(obj, opts['-n'])

    def _get(self, args, opts):
        assert '--ignore-not-found' in args
        with self.lock:
            if args[0] == 'namespace':
                assert '-n' not in opts and opts['-o'] == 'name'
                return 0, ('namespace/%s\n' % args[1]) if args[1] in self.namespaces else '', ''
            assert args[0] == 'configmap' and opts['-o'] == 'json'
            obj = self.objects.get((opts['-n'], args[1]))
            return 0, json.dumps(obj, indent=4) + '\n' if obj else '', ''

    def _create(self, obj, namespace):
        name = obj['metadata']['name']
        assert obj['metadata']['namespace'] == namespace and 'resourceVersion' not in obj['metadata']
        if namespace not in self.namespaces:
            return 1, '', 'Error from server (NotFound): error when creating "STDIN": namespaces "%s" not found\n' % namespace
        if (namespace, name) in self.objects:
            return 1, '', 'Error from server (AlreadyExists): error when creating "STDIN": configmaps "%s" already exists\n' % name
        obj['metadata'].update(uid='uid-%s' % name, resourceVersion=self._next_version(), creationTimestamp='2026-01-02T00:00:00Z')
        self.objects[(namespace, name)] = obj
        return 0, 'configmap/%s created\n' % name, ''

    def _replace(self, obj, namespace):
        name = obj['metadata']['name']
        stored = self.objects.get((namespace, name))
        if stored is None:
            return 1, '', 'Error from server (NotFound): error when replacing "STDIN": configmaps "%s" not found\n' % name
        assert obj['metadata'].get('resourceVersion'), 'an unconditional replace would overwrite other writers'
        if obj['metadata']['resourceVersion'] != stored['metadata']['resourceVersion']:
            return 1, '', ('Error from server (Conflict): error when replacing "STDIN": Operation cannot be fulfilled on '
                           'configmaps "%s": the object has been modified; please apply your changes to the latest '
                           'version and try again\n' % name)
        obj = copy.deepcopy(obj)
        if 'managedFields' not in obj['metadata'] and 'managedFields' in stored['metadata']:
            obj['metadata']['managedFields'] = stored['metadata']['managedFields']
        obj['metadata']['resourceVersion'] = self._next_version()
        self.objects[(namespace, name)] = obj
        return 0, 'configmap/%s replaced\n' % name, ''


def request(node='server-1', state='present', kube_scheduler=None, restarted=True, **kw):
    args = dict(kubectl=KUBECTL, kubeconfig=KUBECONFIG, name='extender-readiness', namespace='default',
                node_name=node, state=state, restarted=restarted,
                kube_scheduler=kube_scheduler or ('k3s@%s' % node if state == 'present' else None))
    args.update(kw)
    return readiness.Request(**args)


def publish(api, req, **kw):
    kw.setdefault('sleep', lambda seconds: None)
    return readiness.publish(api.runner, req, **kw)


def entry(node, restarted=True, kube_scheduler=None):
    return {'kube_scheduler': kube_scheduler or 'k3s@%s' % node, 'node_name': node, 'restarted': restarted}


def nodes_yaml(*entries):
    return yaml.safe_dump({'nodes': list(entries)}, default_flow_style=False, indent=2)


@pytest.fixture
def api():
    return FakeApi()


# -- rendering --------------------------------------------------------------------------------
@pytest.mark.parametrize('nodes', [
    [],
    [entry('server-1')],
    [entry('a', False), entry('b-node', True, 'kube-scheduler-b-node'), {'node_name': 'c', 'extra': {'k': ['x', 'ü']}}],
])
def test_render_is_the_roles_to_nice_yaml(nodes):
    assert readiness.render({'nodes': nodes}) == to_nice_yaml({'nodes': nodes}, indent=2)


def test_sorted_as_jinjas_sort_filter():
    names = ['server-10', 'B-upper', 'a', 'server-2', 'b-lower', 'A']
    doc = {'nodes': [{'node_name': n, 'kube_scheduler': 'x', 'restarted': False} for n in names]}
    after, changed = readiness.apply_entry(doc, 'zz', None)
    jinja = jinja2.Environment().from_string("{{ nodes | sort(attribute='node_name') | map(attribute='node_name') | list }}")
    assert not changed
    assert str([n['node_name'] for n in after['nodes']]) == jinja.render(nodes=doc['nodes'])


# -- what gets written ------------------------------------------------------------------------
def test_create_when_there_is_none(api):
    r = publish(api, request())
    assert r['changed'] and r['attempts'] == 1 and r['nodes'] == [entry('server-1')]
    assert r['diff'] == {'before': '', 'after': nodes_yaml(entry('server-1'))}
    assert api.verbs() == ['get', 'create']
    verb, argv, dummy = api.calls[1]
    assert argv == KUBECTL + ['--kubeconfig', KUBECONFIG, '--request-timeout', '30s', 'create', '-f', '-', '-n', 'default']
    stored = api.objects[('default', 'extender-readiness')]
    assert stored['metadata']['labels'] == {'app.kubernetes.io/managed-by': 'baremetal.k3s'}
    assert stored['data'] == {'nodes.yaml': 'nodes:\n- kube_scheduler: k3s@server-1\n  node_name: server-1\n  restarted: true\n'}


def test_get_command(api):
    publish(api, request())
    assert api.calls[0][1] == KUBECTL + ['--kubeconfig', KUBECONFIG, '--request-timeout', '30s', 'get', 'configmap',
                                         'extender-readiness', '-o', 'json', '--ignore-not-found', '-n', 'default']
    api.calls.clear()
    publish(api, request(kubeconfig=None))
    assert '--kubeconfig' not in api.calls[0][1]


def test_upsert_keeps_other_entries_and_sorts(api):
    api.put('extender-readiness', {'nodes.yaml': nodes_yaml(entry('server-3'), entry('server-1', False))})
    r = publish(api, request('server-2'))
    assert r['changed'] and api.nodes() == ['server-1', 'server-2', 'server-3']
    assert r['nodes'] == [entry('server-1', False), entry('server-2'), entry('server-3')]
    r = publish(api, request('server-1', restarted=True))
    assert r['changed'] and r['nodes'][0] == entry('server-1', True)
    assert r['diff']['before'] == nodes_yaml(entry('server-1', False), entry('server-2'), entry('server-3'))


def test_replace_is_conditional_and_keeps_everything_else(api):
    stored = api.put('extender-readiness', {'nodes.yaml': nodes_yaml(entry('other')), 'extra.json': '{"a": 1}'},
                     labels={'app': 'csi-baremetal'}, annotations={'note': 'from the operator'},
                     ownerReferences=[{'apiVersion': 'apps/v1', 'kind': 'Deployment', 'name': 'op', 'uid': 'u1'}])
    read_version = stored['metadata']['resourceVersion']
    publish(api, request())
    verb, sent = api.writes[0]
    assert verb == 'replace' and sent['metadata']['resourceVersion'] == read_version
    assert sent['metadata']['uid'] == 'uid-extender-readiness' and 'managedFields' not in sent['metadata']
    now = api.objects[('default', 'extender-readiness')]
    assert now['data']['extra.json'] == '{"a": 1}'
    assert now['metadata']['labels'] == {'app': 'csi-baremetal'}  # managed-by is for ConfigMaps we create
    assert now['metadata']['annotations'] == {'note': 'from the operator'}
    assert now['metadata']['ownerReferences'][0]['name'] == 'op'
    assert api.nodes() == ['other', 'server-1']


def test_other_top_level_keys_of_nodes_yaml_are_kept(api):
    api.put('extender-readiness', {'nodes.yaml': 'version: 2\nnodes:\n- {node_name: b, kube_scheduler: x, restarted: false}\n'})
    publish(api, request('a'))
    text = api.objects[('default', 'extender-readiness')]['data']['nodes.yaml']
    assert yaml.safe_load(text) == {'version': 2, 'nodes': [entry('a'), {'node_name': 'b', 'kube_scheduler': 'x', 'restarted': False}]}


def test_remove(api):
    api.put('extender-readiness', {'nodes.yaml': nodes_yaml(entry('server-1'), entry('server-2'))})
    r = publish(api, request('server-1', state='absent'))
    assert r['changed'] and r['nodes'] == [entry('server-2')] and api.nodes() == ['server-2']
    r = publish(api, request('server-2', state='absent'))
    assert r['changed'] and r['nodes'] == []
    assert api.objects[('default', 'extender-readiness')]['data']['nodes.yaml'] == 'nodes: []\n'


def test_remove_every_duplicate_and_write_one(api):
    api.put('extender-readiness', {'nodes.yaml': nodes_yaml(entry('server-1', False), entry('server-1'), entry('x'))})
    r = publish(api, request('server-1'))
    assert r['changed'] and api.nodes() == ['server-1', 'x']


# -- nothing to write -------------------------------------------------------------------------
def test_no_op_when_the_entry_is_as_wanted(api):
    publish(api, request())
    api.calls.clear()
    r = publish(api, request())
    assert not r['changed'] and r['attempts'] == 1 and api.verbs() == ['get']
    assert r['diff']['before'] == r['diff']['after']


def test_no_op_when_only_the_formatting_differs(api):
    text = 'nodes: [{restarted: true, node_name: server-1, kube_scheduler: "k3s@server-1"}]\n'
    api.put('extender-readiness', {'nodes.yaml': text})
    r = publish(api, request())
    assert not r['changed'] and api.verbs() == ['get'] and r['diff'] == {'before': text, 'after': text}


@pytest.mark.parametrize('data', [None, {}, {'nodes.yaml': ''}, {'nodes.yaml': 'nodes:\n'}, {'nodes.yaml': nodes_yaml(entry('x'))}])
def test_absent_without_configmap_or_entry_does_nothing(api, data):
    if data is not None:
        api.put('extender-readiness', data)
    r = publish(api, request(state='absent'))
    assert not r['changed'] and api.verbs() == ['get'] and api.writes == []


def test_a_change_in_the_entry_is_a_change(api):
    publish(api, request())
    assert publish(api, request(restarted=False))['changed']
    assert publish(api, request(kube_scheduler='kube-scheduler-server-1', restarted=False))['changed']
    assert not publish(api, request(kube_scheduler='kube-scheduler-server-1', restarted=False))['changed']


# -- check mode -------------------------------------------------------------------------------
def test_check_mode_writes_nothing(api):
    r = publish(api, request(), check_mode=True)
    assert r['changed'] and r['nodes'] == [entry('server-1')] and r['diff']['after'] == nodes_yaml(entry('server-1'))
    assert api.writes == [] and api.objects == {}
    api.put('extender-readiness', {'nodes.yaml': nodes_yaml(entry('server-1'), entry('x'))})
    before = copy.deepcopy(api.objects)
    r = publish(api, request(state='absent'), check_mode=True)
    assert r['changed'] and r['nodes'] == [entry('x')] and api.writes == [] and api.objects == before


def test_check_mode_reports_a_missing_namespace(api):
    with pytest.raises(readiness.NamespaceMissing) as e:
        publish(api, request(namespace='csi-baremetal'), check_mode=True)
    assert 'namespace csi-baremetal does not exist' in e.value.msg and api.writes == []


# -- races ------------------------------------------------------------------------------------
def test_conflict_retry_loses_nothing(api):
    """Writer 1 reads; writer 2 reads and writes; writer 1's replace is stale, so it reads again."""
    api.put('extender-readiness', {'nodes.yaml': nodes_yaml(entry('server-0'))})
    second = {}

    def other_writer_first(verb, obj):
        api.before_write = None
        second.update(publish(api, request('server-2')))

    api.before_write = other_writer_first
    r = publish(api, request('server-1'))
    assert second['attempts'] == 1 and r['attempts'] == 2 and r['changed']
    assert [v for v, dummy in api.writes] == ['replace', 'replace', 'replace']
    assert api.nodes() == ['server-0', 'server-1', 'server-2']


def test_racing_create_retries_as_replace(api):
    seen = []

    def other_writer_first(verb, obj):
        seen.append(verb)
        api.before_write = None
        publish(api, request('server-2'))

    api.before_write = other_writer_first
    r = publish(api, request('server-1'))
    assert seen == ['create'] and r['attempts'] == 2
    assert [v for v, dummy in api.writes] == ['create', 'create', 'replace']
    assert api.nodes() == ['server-1', 'server-2']


def test_deleted_between_read_and_replace_is_created_again(api):
    api.put('extender-readiness', {'nodes.yaml': nodes_yaml(entry('x'))})

    def delete_it(verb, obj):
        api.before_write = None
        del api.objects[('default', 'extender-readiness')]

    api.before_write = delete_it
    r = publish(api, request())
    assert r['attempts'] == 2 and [v for v, dummy in api.writes] == ['replace', 'create'] and api.nodes() == ['server-1']


@pytest.mark.parametrize('exists', [True, False], ids=['replace-conflicts', 'create-races'])
def test_many_writers_at_once_lose_nothing(api, exists):
    """Eight writers read the same version (a barrier holds each after its first read), then all write.

    With the ConfigMap there, seven replaces meet Conflict; without it, seven creates meet AlreadyExists.
    """
    if exists:
        api.put('extender-readiness', {'nodes.yaml': nodes_yaml(entry('server-0'))})
    writers = 8
    barrier = threading.Barrier(writers, timeout=10)
    first_read = threading.local()

    def runner(argv, stdin=None):
        out = api.runner(argv, stdin)
        if 'get' in argv and not getattr(first_read, 'done', False):
            first_read.done = True
            barrier.wait()
        return out

    results, errors = {}, []

    def write(node):
        try:
            results[node] = readiness.publish(runner, request(node), sleep=lambda s: None)
        except Exception as e:  # pylint: disable=broad-except
            errors.append(e)

    threads = [threading.Thread(target=write, args=('server-%d' % i,)) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and len(results) == writers
    assert api.nodes() == sorted(set(['server-0'] + ['server-%d' % i for i in range(writers)]))
    verbs = [v for v, dummy in api.writes]
    assert verbs.count('create') == (0 if exists else writers)  # each read "none", so each tried to create it
    assert max(r['attempts'] for r in results.values()) > 1
    assert sorted(r['attempts'] for r in results.values())[0] == 1


def test_bounded_attempts_fail_clearly(api):
    """Another writer changes the ConfigMap before every write: the module gives up, having written nothing of its own."""
    api.put('extender-readiness', {'nodes.yaml': nodes_yaml(entry('x'))})
    sleeps = []

    def someone_else_always_first(verb, obj):
        stored = api.objects[('default', 'extender-readiness')]
        stored['metadata']['resourceVersion'] = api._next_version()  # pylint: disable=protected-access

    api.before_write = someone_else_always_first
    with pytest.raises(PlanError) as e:
        readiness.publish(api.runner, request(), max_attempts=5, sleep=sleeps.append, rand=lambda: 0.5)
    assert 'gave up after 5 attempts' in e.value.msg and 'the object has been modified' in e.value.msg
    assert WHERE in e.value.msg and 'Run again' in e.value.msg
    assert api.verbs() == ['get', 'replace'] * 5 and api.nodes() == ['x']
    assert sleeps == [readiness.backoff(i, lambda: 0.5) for i in range(1, 5)]


def test_backoff_is_short_growing_and_jittered():
    assert readiness.backoff(1, lambda: 0.0) == pytest.approx(0.025)
    assert readiness.backoff(1, lambda: 1.0) == pytest.approx(0.075)
    assert readiness.backoff(4, lambda: 0.5) == pytest.approx(0.2)
    assert readiness.backoff(100, lambda: 0.999) < 1.5


# -- failures change nothing ------------------------------------------------------------------
def test_missing_namespace_is_named(api):
    with pytest.raises(readiness.NamespaceMissing) as e:
        publish(api, request(namespace='csi-baremetal'))
    msg = e.value.msg
    assert 'namespace csi-baremetal does not exist' in msg and 'scheduler_extender_readiness_namespace' in msg
    assert "CSI Baremetal's operator" in msg and api.objects == {}


def test_other_kubectl_failures_name_the_command_and_stderr():
    def refused(argv, stdin=None):
        return 1, '', 'The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?\n'

    with pytest.raises(PlanError) as e:
        readiness.publish(refused, request())
    assert "/usr/local/bin/k3s kubectl --kubeconfig /etc/rancher/k3s/k3s.yaml --request-timeout 30s get configmap" in e.value.msg
    assert 'exit 1' in e.value.msg and 'was refused' in e.value.msg and 'may read and write configmaps' in e.value.msg


def test_a_missing_kubectl_is_named():
    with pytest.raises(PlanError) as e:
        readiness.publish(lambda argv, stdin=None: (None, '', ''), request())
    assert e.value.msg.startswith('kubectl /usr/local/bin/k3s was not found on this node')


def test_forbidden_write_is_reported(api):
    def forbidden(argv, stdin=None):
        if 'create' in argv:
            return 1, '', ('Error from server (Forbidden): error when creating "STDIN": configmaps is forbidden: User '
                           '"system:node:x" cannot create resource "configmaps" in API group "" in the namespace "default"\n')
        return api.runner(argv, stdin)

    with pytest.raises(PlanError) as e:
        readiness.publish(forbidden, request())
    assert 'Forbidden' in e.value.msg and 'create -f -' in e.value.msg and not isinstance(e.value, readiness.NamespaceMissing)


@pytest.mark.parametrize('out', ['not json', '{"kind": "Secret"}', '[]'])
def test_unexpected_get_output(out):
    with pytest.raises(PlanError) as e:
        readiness.publish(lambda argv, stdin=None: (0, out, ''), request())
    assert 'get configmap' in e.value.msg


@pytest.mark.parametrize('text, message', [
    ('nodes: [a\n', 'nodes.yaml is not valid YAML'),
    ('- a\n', 'must be a mapping with a "nodes" list, not a list'),
    ('nodes: {a: 1}\n', '"nodes" in nodes.yaml must be a list, not a dict'),
    ('nodes:\n- kube_scheduler: x\n', 'entry 0 of "nodes" in nodes.yaml has no node_name'),
    ('nodes:\n- node_name: a\n- just-text\n', 'entry 1 of "nodes"'),
])
def test_unreadable_nodes_yaml_is_refused_not_overwritten(api, text, message):
    api.put('extender-readiness', {'nodes.yaml': text})
    with pytest.raises(PlanError) as e:
        publish(api, request())
    assert message in e.value.msg and WHERE in e.value.msg and 'kubectl edit' in e.value.msg
    assert api.writes == []


def test_immutable_configmap_is_refused(api):
    api.put('extender-readiness', {'nodes.yaml': nodes_yaml(entry('server-1'))})
    api.objects[('default', 'extender-readiness')]['immutable'] = True
    assert not publish(api, request())['changed']  # nothing to change: fine
    with pytest.raises(PlanError) as e:
        publish(api, request(restarted=False))
    assert 'is immutable' in e.value.msg and 'kubectl delete configmap -n default extender-readiness' in e.value.msg
    assert api.writes == []


@pytest.mark.parametrize('kw, message', [
    ({'kubectl': []}, 'kubectl must be the kubectl command'),
    ({'kubectl': ['/usr/local/bin/k3s', '']}, 'kubectl must be the kubectl command'),
    ({'name': 'Extender_Readiness'}, 'is not a valid ConfigMap name'),
    ({'name': 'a' * 254}, 'is not a valid ConfigMap name'),
    ({'namespace': 'csi.baremetal'}, 'is not a valid namespace name'),
    ({'namespace': ''}, 'is not a valid namespace name'),
    ({'node': 'Server 1'}, 'is not a Kubernetes node name'),
    ({'node': ''}, 'is not a Kubernetes node name'),
    ({'kube_scheduler': '   '}, 'kube_scheduler is needed with state=present'),
    ({'state': 'gone'}, 'state must be present or absent'),
])
def test_bad_requests_are_refused_before_kubectl_runs(kw, message):
    with pytest.raises(PlanError) as e:
        request(**kw)
    assert message in e.value.msg


def test_absent_needs_no_kube_scheduler():
    assert request(state='absent').entry() is None
    assert request(state='present', kube_scheduler='k3s@server-1', restarted=0).entry() == entry('server-1', False)


# -- several nodes in one write ---------------------------------------------------------------------
def batch(*nodes, **kw):
    args = dict(kubectl=KUBECTL, kubeconfig=KUBECONFIG, name='extender-readiness', namespace='default', nodes=list(nodes))
    args.update(kw)
    return readiness.Request(**args)


def test_several_nodes_in_one_write_keep_the_others(api):
    api.put('extender-readiness', {'nodes.yaml': nodes_yaml(entry('other'), entry('server-2', False))})
    r = publish(api, batch({'node_name': 'server-2', 'kube_scheduler': 'k3s@server-2', 'restarted': True},
                           {'node_name': 'server-1', 'kube_scheduler': 'k3s@server-1', 'restarted': True},
                           {'node_name': 'server-9', 'state': 'absent'}))
    assert r['changed'] and r['attempts'] == 1 and api.verbs() == ['get', 'replace']
    assert r['nodes'] == [entry('other'), entry('server-1'), entry('server-2')]
    # the same bytes as one write per node
    one_by_one = FakeApi()
    one_by_one.put('extender-readiness', {'nodes.yaml': nodes_yaml(entry('other'), entry('server-2', False))})
    for node in ('server-2', 'server-1'):
        publish(one_by_one, request(node))
    assert (api.objects[('default', 'extender-readiness')]['data']
            == one_by_one.objects[('default', 'extender-readiness')]['data'])
    again = publish(api, batch({'node_name': 'server-1', 'kube_scheduler': 'k3s@server-1', 'restarted': True}))
    assert not again['changed'] and api.verbs()[-1] == 'get'


@pytest.mark.parametrize('nodes, message', [
    ([], 'nodes must be a non-empty list'),
    (['server-1'], 'each of nodes must be'),
    ([{'node_name': 'Server 1', 'kube_scheduler': 'x'}], 'is not a Kubernetes node name'),
    ([{'node_name': 'server-1'}], 'kube_scheduler is needed with state=present'),
    ([{'node_name': 'server-1', 'state': 'gone'}], 'state must be present or absent'),
    ([{'node_name': 'server-1', 'state': 'absent'}, {'node_name': 'server-1', 'kube_scheduler': 'x'}], 'named twice'),
])
def test_bad_batches_are_refused_before_kubectl_runs(nodes, message):
    with pytest.raises(PlanError) as e:
        batch(*nodes)
    assert message in e.value.msg
