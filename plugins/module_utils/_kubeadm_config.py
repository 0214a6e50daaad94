# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.kubeadm_config``: one flag naming a file, and its mounts, in a control-plane
component's part of kubeadm's ClusterConfiguration - the scheduler's ``--config``, or the API server's
``--admission-control-config-file`` (``COMPONENTS``) - so that ``kubeadm upgrade`` (which writes the static pod
manifests again from it) keeps them. The examples below show the scheduler; ``apiServer`` has the same shape.

``plan_text(text, ...)`` is pure: it takes the ClusterConfiguration text (the ``ClusterConfiguration``
key of ConfigMap ``kube-system/kubeadm-config``) and returns the new text and the facts. ``sync()``
reads the ConfigMap through kubectl, plans, and replaces it conditionally (the ``resourceVersion``
read), reading again and redoing the change when another writer came first.

The two shapes kubeadm reads::

    apiVersion: kubeadm.k8s.io/v1beta3        apiVersion: kubeadm.k8s.io/v1beta4
    scheduler:                                scheduler:
      extraArgs:                                extraArgs:
        config: /etc/kubernetes/scheduler/...   - name: config
      extraVolumes:                               value: /etc/kubernetes/scheduler/...
      - name: ...                               extraVolumes: [the same as v1beta3]
        hostPath: ...
        mountPath: ...
        readOnly: true
        pathType: File

Every edit is one :mod:`_yamledit` edit, which keeps every other byte; removing what was added
gives the text back byte for byte. What this module owns, and how it finds it again
(``MARK`` = ``# baremetal.k3s.kubeadm_config``):

* the ``config`` extraArg with ``MARK`` directly above it, or inside an ``extraArgs`` key that has
  ``MARK`` above it (this module created it); where no comment can stand (flow style, as kubeadm
  itself writes ``scheduler: {}``) the ``config`` extraArg whose value is the path asked for, when
  an extraVolume of ours mounts that path;
* the extraVolumes named ``<volume_prefix>-<the path as a slug>`` (the names module
  ``static_pod_arg`` gives the same mounts in the manifest, so that a manifest kubeadm wrote again
  is still recognised there);
* the ``scheduler``, ``extraArgs`` and ``extraVolumes`` keys it created, with ``MARK`` above them,
  removed again once they hold nothing of anyone else; in flow style, the ``extraArgs`` and
  ``extraVolumes`` keys that hold nothing once ours are gone.

No Ansible import.
"""

from __future__ import annotations

import copy
import posixpath
import random
import time

from ansible_collections.baremetal.k3s.plugins.module_utils import _goyaml as gy
from ansible_collections.baremetal.k3s.plugins.module_utils import _kubectl
from ansible_collections.baremetal.k3s.plugins.module_utils import _readiness
from ansible_collections.baremetal.k3s.plugins.module_utils import _static_pod as sp
from ansible_collections.baremetal.k3s.plugins.module_utils import _yamledit as ye
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

HAS_YAML = gy.HAS_YAML
YAML_IMPORT_ERROR = gy.YAML_IMPORT_ERROR

MARKER = 'baremetal.k3s.kubeadm_config'
MARK = '# ' + MARKER
GROUP = 'kubeadm.k8s.io/'
VERSIONS = ('v1beta3', 'v1beta4')
KIND = 'ClusterConfiguration'
DEFAULT_NAME = 'kubeadm-config'
DEFAULT_NAMESPACE = 'kube-system'
DEFAULT_KEY = 'ClusterConfiguration'
DEFAULT_PREFIX = sp.DEFAULT_PREFIX
MAX_ATTEMPTS = 20

# the ClusterConfiguration's part for a component: (the flag this module keeps there, the program that reads it)
COMPONENTS = {
    'scheduler': ('config', 'kube-scheduler'),
    'apiServer': ('admission-control-config-file', 'kube-apiserver'),
}


class KubeadmConfigError(PlanError):
    """A refusal: the message says what is wrong, where, and what to do; nothing was changed."""


# -- options ----------------------------------------------------------------------------------
def validate_path(path, what):
    if not isinstance(path, str) or not path.startswith('/') or any(c in path for c in '\n\r\0'):
        raise KubeadmConfigError('%s %r must be an absolute path on the node without line breaks, for example '
                                 '/etc/kubernetes/scheduler/config.yaml.' % (what, path))
    p = posixpath.normpath(path)
    if p == '/':
        raise KubeadmConfigError('%s "/" would hide the whole container file system; name the file.' % what)
    return p


# -- reading ----------------------------------------------------------------------------------
class _Config:
    """The ClusterConfiguration read: its document, its version, and the component's parts as found."""

    def __init__(self, text, where, component='scheduler'):
        self.where = where
        self.top = (component,)
        self.args_path = (component, 'extraArgs')
        self.vols_path = (component, 'extraVolumes')
        self.flag, self.program = COMPONENTS[component]
        try:
            self.doc = ye.Document(text, name=where)
            data = self.doc.value
        except gy.GoYamlError as e:
            raise KubeadmConfigError('%s cannot be read as kubeadm reads it: %s. Repair it (kubectl -n kube-system edit '
                                     'configmap kubeadm-config) and run again.' % (where, e)) from e
        if not isinstance(data, gy.Pairs):
            raise KubeadmConfigError('%s is not a mapping (it reads as %s); it should be a kubeadm ClusterConfiguration. '
                                     'Give the key holding it.' % (where, type(gy._plain(data)).__name__))  # pylint: disable=protected-access
        api = self.doc.get('apiVersion')
        kind = self.doc.get('kind')
        if kind != KIND:
            raise KubeadmConfigError('%s: kind is %r, not %s; give the key that holds the ClusterConfiguration.'
                                     % (where, kind, KIND))
        version = api[len(GROUP):] if isinstance(api, str) and api.startswith(GROUP) else None
        if version not in VERSIONS:
            raise KubeadmConfigError('%s: apiVersion %r is not one this module knows (%s). Migrate it with '
                                     '"kubeadm config migrate", or set scheduler_extender_kubeadm_config: false and keep '
                                     'the flag in the ClusterConfiguration yourself.'
                                     % (where, api, ', '.join(GROUP + v for v in VERSIONS)))
        self.api_version = api
        self.version = version
        for path, kinds in ((self.top, ('mapping',)),
                            (self.args_path, ('mapping',) if version == 'v1beta3' else ('sequence',)),
                            (self.vols_path, ('sequence',))):
            node = self.doc.find(path)
            if node is None:
                if path != self.top and self.doc.find(self.top) is None:
                    break
                continue
            if node.kind not in kinds:
                shape = {'mapping': 'a mapping', 'sequence': 'a list'}[kinds[0]]
                null = node.kind == 'scalar' and self.doc.get(path) is None
                raise KubeadmConfigError(
                    '%s: %s is %s, not %s as %s reads it. %s' % (
                        where, '.'.join(path), 'empty (null)' if null else 'a %s' % node.kind, shape, api,
                        'Write it as %s or leave the key out, and run again.' % ('{}' if kinds[0] == 'mapping' else '[]')
                        if null else 'Repair it (kubectl -n kube-system edit configmap kubeadm-config) and run again.'))
        self._check_items()

    def _check_items(self):
        if self.version == 'v1beta4':
            for i, item in enumerate(self.args()):
                if not isinstance(item, dict) or not isinstance(item.get('name'), str) \
                        or not isinstance(item.get('value', ''), str):
                    raise KubeadmConfigError('%s: %s.extraArgs[%d] is %r, not {name, value} as %s reads it. Repair '
                                             'it and run again.' % (self.where, self.top[0], i, item, self.api_version))
        for i, item in enumerate(self.volumes()):
            if not isinstance(item, dict):
                raise KubeadmConfigError('%s: %s.extraVolumes[%d] is %r, not a volume {name, hostPath, mountPath}. '
                                         'Repair it and run again.' % (self.where, self.top[0], i, item))

    def data(self, path):
        value = self.doc.get(path)
        return None if value is None else gy._plain(value)  # pylint: disable=protected-access

    def args(self):
        return self.data(self.args_path) or ([] if self.version == 'v1beta4' else {})

    def volumes(self):
        return self.data(self.vols_path) or []

    def config_args(self):
        """[(key or index, value)] of the extraArgs of the component's flag (``config`` for the scheduler)."""
        args = self.args()
        if self.version == 'v1beta3':
            return [(self.flag, args[self.flag])] if self.flag in args else []
        return [(i, a.get('value')) for i, a in enumerate(args) if a.get('name') == self.flag]

    def marked(self, path):
        entry = self.doc.entry(path)
        return entry is not None and MARK in entry.comments

    def commentable(self, path):
        return self.doc.accepts_comment(path)

    def created(self, path):
        """Whether this module created the key at ``path`` or a key above it (``MARK`` above one of them)."""
        return any(self.marked(path[:n]) for n in range(1, len(path) + 1))


def _ours(cfg, prefix):
    """[(index, name, hostPath)] of the extraVolumes this module owns (named for their own hostPath)."""
    out = []
    for i, v in enumerate(cfg.volumes()):
        name, host = v.get('name'), v.get('hostPath')
        if isinstance(name, str) and name.startswith(prefix + '-') and isinstance(host, str) \
                and sp.named_for(prefix, name, posixpath.normpath(host)):
            out.append((i, name, host))
    return out


def _covered(cfg, path):
    """Whether an extraVolume mounted at its own host path already shows ``path`` in the component's container."""
    for v in cfg.volumes():
        host, mount = v.get('hostPath'), v.get('mountPath')
        if isinstance(host, str) and host == mount and (path == host or path.startswith(host.rstrip('/') + '/')):
            return True
    return False


def _claims_arg(cfg, key, value, path, prefix):
    """Whether the flag's extraArg at ``key`` (map key or list index) was added by this module."""
    if cfg.marked(cfg.args_path + (key,)) or (cfg.created(cfg.args_path) and value == path):
        return True
    if cfg.commentable(cfg.args_path) or value != path:
        return False
    return any(posixpath.normpath(h) == path for dummy, dummy2, h in _ours(cfg, prefix))


# -- editing ----------------------------------------------------------------------------------
class _Edit:
    def __init__(self, cfg):
        self.cfg = cfg

    def _do(self, fn, *args, **kwargs):
        try:
            fn(*args, **kwargs)
        except gy.GoYamlError as e:
            raise KubeadmConfigError('%s: this change cannot be made without touching text this module does not own: %s. '
                                     'Make it by hand (kubectl -n kube-system edit configmap kubeadm-config) or set '
                                     'scheduler_extender_kubeadm_config: false.' % (self.cfg.where, e)) from e

    def _mark(self, path):
        return MARK if self.cfg.commentable(path) else None

    def add(self, path, key, item):
        """``item`` into the collection at ``path`` (``key`` for a mapping, None to append), creating what is missing."""
        doc = self.cfg.doc
        node = doc.find(path)
        if node is None:
            parent = path[:-1]
            value = {key: item} if key is not None else [item]
            if doc.find(parent) is None:
                self.add(parent[:-1], parent[-1], {path[-1]: value})
                return
            self._do(doc.add_key, parent, path[-1], value, comment=self._mark(parent))
        elif key is None:
            self._do(doc.append, path, item, comment=self._mark(path))
        else:
            self._do(doc.add_key, path, key, item, comment=self._mark(path))

    def remove(self, path):
        self._do(self.cfg.doc.remove, path, comment=MARK)

    def prune(self, path):
        """Remove the key at ``path`` when it holds nothing and this module created it (or it is in flow style)."""
        doc = self.cfg.doc
        node = doc.find(path)
        if node is None or node.kind not in ('mapping', 'sequence') or node.value:
            return
        if self.cfg.created(path) or not self.cfg.commentable(path[:-1]):
            self.remove(path)


def _volume(cfg, path, kinds, prefix):
    taken = [v.get('name') for v in cfg.volumes()]
    return {'name': sp.volume_name(prefix, path, taken), 'hostPath': path, 'mountPath': path,
            'readOnly': True, 'pathType': (kinds or {}).get(path, 'File')}


def plan_text(text, where, config, mounts=(), state='present', prefix=DEFAULT_PREFIX, kinds=None, component='scheduler'):
    """``(new text, facts)`` for ``text``, a ClusterConfiguration, with our extraArg of ``component``'s flag (naming
    ``config``) and mounts present or absent. ``kinds``: {path: 'File' | 'Directory'} for the volumes' pathType (File
    by default)."""
    path = validate_path(config, 'config')
    needed = [path]
    for i, m in enumerate(mounts or ()):
        p = validate_path(m, 'mounts[%d]' % i)
        if p not in needed:
            needed.append(p)
    sp.validate_prefix(prefix)
    try:
        cfg = _Config(text, where, component)
        ed = _Edit(cfg)
        if state == 'present':
            _present(cfg, ed, path, needed, prefix, kinds)
        else:
            _absent(cfg, ed, path, prefix)
    except gy.GoYamlError as e:
        raise KubeadmConfigError('%s cannot be read or edited as kubeadm reads it: %s. Repair it (kubectl -n kube-system '
                                 'edit configmap kubeadm-config) and run again.' % (where, e)) from e
    after = cfg.doc.text
    facts = {
        'api_version': cfg.api_version,
        'extra_args': [v for dummy, v in cfg.config_args()],
        'volumes': [n for dummy, n, dummy2 in _ours(cfg, prefix)],
    }
    return after, facts


def _present(cfg, ed, path, needed, prefix, kinds):
    for key, value in cfg.config_args():
        if value != path:
            where = ('%s.extraArgs.%s' % (cfg.top[0], cfg.flag) if cfg.version == 'v1beta3'
                     else '%s.extraArgs[%d]' % (cfg.top[0], key))
            if cfg.flag == 'config':
                hint = ('another scheduler config than %s; kube-scheduler reads a single --config. Add the extender to %s '
                        'instead (module baremetal.k3s.scheduler_config; the role does so when the running scheduler '
                        'already has a --config), or remove that extraArg and run again.' % (path, value))
            else:
                hint = ('another file than %s; %s reads a single --%s. Move its settings into the collection\'s, or '
                        'remove that extraArg and run again.' % (path, cfg.program, cfg.flag))
            raise KubeadmConfigError('%s: %s is %r, %s' % (cfg.where, where, value, hint))
    for v_i, v in enumerate(cfg.volumes()):
        mount = v.get('mountPath')
        if isinstance(mount, str) and posixpath.normpath(mount) in needed and v.get('hostPath') != mount:
            raise KubeadmConfigError('%s: %s.extraVolumes[%d] (%s) mounts %r at %s, which this module must mount '
                                     'from the same path on the node. Remove or correct that volume and run again.'
                                     % (cfg.where, cfg.top[0], v_i, v.get('name'), v.get('hostPath'), mount))
    # our volumes for paths no longer needed go (a TLS file left out of the extender's settings)
    for i, dummy, host in reversed(_ours(cfg, prefix)):
        if posixpath.normpath(host) not in needed:
            ed.remove(cfg.vols_path + (i,))
    if not cfg.config_args():
        if cfg.version == 'v1beta3':
            ed.add(cfg.args_path, cfg.flag, path)
        else:
            ed.add(cfg.args_path, None, {'name': cfg.flag, 'value': path})
    for p in needed:
        if not _covered(cfg, p):
            ed.add(cfg.vols_path, None, _volume(cfg, p, kinds, prefix))


def _absent(cfg, ed, path, prefix):
    if cfg.doc.find(cfg.top) is None:
        return
    claimed = [key for key, value in cfg.config_args() if _claims_arg(cfg, key, value, path, prefix)]
    for i, dummy, dummy2 in reversed(_ours(cfg, prefix)):
        ed.remove(cfg.vols_path + (i,))
    for key in reversed(claimed):
        ed.remove(cfg.args_path + (key,))
    if claimed:
        ed.prune(cfg.args_path)
    ed.prune(cfg.vols_path)
    node = cfg.doc.find(cfg.top)
    if node is not None and node.kind == 'mapping' and not node.value and cfg.marked(cfg.top):
        ed.remove(cfg.top)


# -- the API ----------------------------------------------------------------------------------
class Request:
    """Where the ClusterConfiguration is, how to reach it, and what it should hold."""

    def __init__(self, kubectl, config, kubeconfig=None, name=DEFAULT_NAME, namespace=DEFAULT_NAMESPACE,
                 key=DEFAULT_KEY, mounts=(), state='present', prefix=DEFAULT_PREFIX, kinds=None,
                 previous=None, written=None, component='scheduler'):
        self.kubectl = list(kubectl or [])
        self.kubeconfig = kubeconfig
        self.name = name
        self.namespace = namespace
        self.key = key
        self.config = config
        self.mounts = list(mounts or [])
        self.state = state
        self.prefix = prefix
        self.kinds = kinds or {}
        self.previous = previous
        self.written = written
        if component not in COMPONENTS:
            raise KubeadmConfigError('component %r is not one this module knows (%s).' % (component, ', '.join(COMPONENTS)))
        self.component = component
        if not self.kubectl or not self.kubectl[0]:
            raise KubeadmConfigError('kubectl is empty; give the platform\'s kubectl (k3s_info returns it as "kubectl").')
        for what, value in (('name', name), ('namespace', namespace)):
            if not _kubectl.is_dns_subdomain(value):
                raise KubeadmConfigError('%s %r is not a valid Kubernetes object name.' % (what, value))
        if state == 'restore' and (previous is None or written is None):
            raise KubeadmConfigError('state=restore needs previous and written: the texts a run returned as '
                                     'rollback.previous and rollback.written.')

    @property
    def where(self):
        return 'ConfigMap %s/%s key %s' % (self.namespace, self.name, self.key)


def _object(current, key, text):
    obj = copy.deepcopy(current)
    obj.get('metadata', {}).pop('managedFields', None)
    obj['data'] = dict(obj.get('data') or {})
    obj['data'][key] = text
    return obj


def plan_object(request, current):
    """``(before, after)`` texts for the ConfigMap ``current`` (a dict, or None when there is none)."""
    where = request.where
    if current is None:
        if request.state == 'present':
            raise KubeadmConfigError('%s: the ConfigMap does not exist, so kubeadm has no ClusterConfiguration to '
                                     'regenerate the scheduler from (kubeadm init uploads it; "kubeadm init phase '
                                     'upload-config kubeadm" does so again). Upload it, or set '
                                     'scheduler_extender_kubeadm_config: false.' % where)
        return None, None
    data = current.get('data') or {}
    before = data.get(request.key)
    if not isinstance(before, str):
        if request.state == 'present':
            raise KubeadmConfigError('%s: the ConfigMap has no key %s (keys: %s). Give the key that holds the '
                                     'ClusterConfiguration.' % (where, request.key, ', '.join(sorted(data)) or 'none'))
        return None, None
    if request.state == 'restore':
        if before == request.previous:
            return before, before
        if before != request.written:
            raise KubeadmConfigError('%s changed since this collection wrote it (another writer, or kubeadm), so the '
                                     'previous text is not put back over it. Compare it with rollback.previous and '
                                     'repair it by hand.' % where, current=before, previous=request.previous)
        return before, request.previous
    after, dummy = plan_text(before, where, request.config, request.mounts, request.state, request.prefix,
                             request.kinds, request.component)
    if after != before and current.get('immutable') is True:
        raise KubeadmConfigError('%s is immutable (immutable: true); it cannot be updated.' % where)
    return before, after


def sync(runner, request, check_mode=False, max_attempts=MAX_ATTEMPTS, sleep=time.sleep, rand=random.random):
    """Bring the ConfigMap to ``request``; the result the module returns (``diff`` included, for the module to keep or drop)."""
    api = _readiness.Kubectl(runner, request)
    last = ''
    for attempt in range(1, max_attempts + 1):
        current = api.get()
        before, after = plan_object(request, current)
        result = {'changed': before != after, 'attempts': attempt, 'api_version': None,
                  'rollback': {'name': request.name, 'namespace': request.namespace, 'key': request.key,
                               'previous': before, 'written': after},
                  'diff': {'before': before or '', 'after': after or ''}}
        if after is not None and request.state != 'restore':
            dummy, facts = plan_text(after, request.where, request.config, request.mounts, request.state,
                                     request.prefix, request.kinds, request.component)
            result.update(api_version=facts['api_version'], extra_args=facts['extra_args'], volumes=facts['volumes'])
        if before == after or check_mode:
            return result
        last = api.write('replace', _object(current, request.key, after))
        if last is None:
            return result
        if attempt < max_attempts:
            sleep(_readiness.backoff(attempt, rand))
    raise KubeadmConfigError('%s: gave up after %d attempts; each write found the ConfigMap changed by another writer '
                             'since it was read (last answer: %s). Nothing was written. Run again.'
                             % (request.where, max_attempts, last))
