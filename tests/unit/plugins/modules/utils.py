# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers to run a module's main() in-process and capture exit_json / fail_json."""

from __future__ import annotations

import contextlib
import json

from unittest.mock import patch

from ansible.module_utils import basic
from ansible.module_utils.common.text.converters import to_bytes


class AnsibleExitJson(Exception):
    """exit_json was called; ``.result`` holds its arguments."""

    def __init__(self, result):
        super().__init__(result)
        self.result = result


class AnsibleFailJson(Exception):
    """fail_json was called; ``.result`` holds its arguments."""

    def __init__(self, result):
        super().__init__(result)
        self.result = result


def _exit_json(self, **kwargs):  # pylint: disable=unused-argument
    kwargs.setdefault('changed', False)
    raise AnsibleExitJson(kwargs)


def _fail_json(self, **kwargs):  # pylint: disable=unused-argument
    kwargs['failed'] = True
    raise AnsibleFailJson(kwargs)


@contextlib.contextmanager
def set_module_args(args, check_mode=False, diff=False):
    """Give ``args`` to the next AnsibleModule, as ansible-core's own tests do."""
    args = dict(args)
    args['_ansible_check_mode'] = check_mode
    args['_ansible_diff'] = diff
    args.setdefault('_ansible_remote_tmp', '/tmp')
    args.setdefault('_ansible_keep_remote_files', False)
    serialized = to_bytes(json.dumps({'ANSIBLE_MODULE_ARGS': args}))
    try:
        from ansible.module_utils.testing import patch_module_args  # ansible-core >= 2.19
    except ImportError:
        patch_module_args = None
    if patch_module_args is not None:
        with patch_module_args(args):
            yield
        return
    with patch.object(basic, '_ANSIBLE_ARGS', serialized):
        yield


def run_module(module, args, check_mode=False, diff=False):
    """Run ``module.main()`` with ``args``; return (failed, result)."""
    with set_module_args(args, check_mode=check_mode, diff=diff), \
            patch.multiple(basic.AnsibleModule, exit_json=_exit_json, fail_json=_fail_json):
        try:
            module.main()
        except AnsibleExitJson as e:
            return False, e.result
        except AnsibleFailJson as e:
            return True, e.result
    raise AssertionError('module returned without exit_json or fail_json')


def module_ok(module, args, **kw):
    """Run ``module`` and assert it succeeded; its warnings are in ``result['warnings']``."""
    warnings = []
    with patch.object(basic.AnsibleModule, 'warn', lambda self, msg: warnings.append(msg)):
        failed, result = run_module(module, args, **kw)
    assert not failed, result
    result['warnings'] = warnings
    return result


def module_fail(module, args, **kw):
    """Run ``module`` and assert it failed; return its message."""
    failed, result = run_module(module, args, **kw)
    assert failed, result
    return result['msg']


# where k3s keeps the scheduler's kubeconfig, which scheduler_config checks a config names
SCHEDULER_KUBECONFIG = '/var/lib/rancher/k3s/server/cred/scheduler.kubeconfig'


def run_scheduler_config(path, extenders=None, **params):
    """scheduler_config on ``path`` with k3s's scheduler kubeconfig, and ``extenders`` when given."""
    from ansible_collections.baremetal.k3s.plugins.modules import scheduler_config  # pylint: disable=import-outside-toplevel
    params = dict({'path': path, 'kubeconfig': SCHEDULER_KUBECONFIG}, **params)
    if extenders is not None:
        params['extenders'] = extenders
    return run_module(scheduler_config, params)
