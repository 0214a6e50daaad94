# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one write path (apply, locks, temp files, symlinks, our directories), against a real AnsibleModule."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, Plan
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import AnsibleFailJson, set_module_args


def _module(check_mode=False, diff=False):
    with set_module_args({}, check_mode=check_mode, diff=diff):
        return AnsibleModule(argument_spec={}, supports_check_mode=True)


@pytest.fixture
def module():
    return _module()


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def _tree(root):
    """Every path under ``root`` (files and directories), relative, sorted."""
    out = []
    for d, dirs, files in os.walk(root):
        for name in dirs + files:
            out.append(os.path.relpath(os.path.join(d, name), root))
    return sorted(out)


# -- one file ------------------------------------------------------------------------------
def test_new_file_gets_its_mode_and_missing_parents_marked_as_ours(module, tmp_path):
    path = str(tmp_path / 'etc' / 'rancher' / 'k3s' / 'kube-scheduler' / 'config.yaml')
    result = _io.write_file(module, path, b'a: 1\n', mode=0o600)
    assert result == {'backup_file': None}
    assert open(path, 'rb').read() == b'a: 1\n'
    assert _mode(path) == 0o600
    assert _mode(os.path.dirname(path)) == 0o755
    for d in ('etc', 'etc/rancher', 'etc/rancher/k3s', 'etc/rancher/k3s/kube-scheduler'):
        assert (tmp_path / d / _io.DIR_MARKER).read_bytes() == _io.DIR_MARKER_TEXT


def test_removal_prunes_only_the_directories_we_made(module, tmp_path):
    (tmp_path / 'etc').mkdir()
    path = str(tmp_path / 'etc' / 'rancher' / 'k3s' / 'config.yaml.d' / 'ours.yaml')
    _io.write_file(module, path, b'a: 1\n')
    (tmp_path / 'etc' / 'rancher' / 'keep.txt').write_bytes(b'theirs\n')
    _io.remove_file(module, path)
    # config.yaml.d and k3s are empty but for the marker: gone; rancher holds a user's file: kept, marker and all
    assert _tree(tmp_path) == ['etc', 'etc/rancher', 'etc/rancher/%s' % _io.DIR_MARKER, 'etc/rancher/keep.txt']


def test_a_directory_we_did_not_make_stays_when_empty(module, tmp_path):
    (tmp_path / 'd').mkdir()
    path = str(tmp_path / 'd' / 'f')
    _io.write_file(module, path, b'x')
    _io.remove_file(module, path)
    assert _tree(tmp_path) == ['d']


def test_existing_file_keeps_its_mode_and_gets_a_backup(module, tmp_path):
    path = tmp_path / 'k3s.service'
    path.write_bytes(b'old\n')
    os.chmod(path, 0o644)
    result = _io.write_file(module, str(path), b'new\n', mode=0o600, backup=True)
    assert path.read_bytes() == b'new\n'
    assert _mode(path) == 0o644
    assert open(result['backup_file'], 'rb').read() == b'old\n'


def test_backup_dir_keeps_the_copy_elsewhere(module, tmp_path):
    manifests = tmp_path / 'manifests'
    manifests.mkdir()
    path = manifests / 'kube-scheduler.yaml'
    path.write_bytes(b'old\n')
    result = _io.write_file(module, str(path), b'new\n', backup=True, backup_dir=str(tmp_path / 'backups'))
    assert os.path.dirname(result['backup_file']) == str(tmp_path / 'backups')
    assert sorted(os.listdir(manifests)) == ['kube-scheduler.yaml']


def test_stale_temp_files_of_a_killed_write_are_removed_by_the_next(module, tmp_path):
    path = tmp_path / 'config.yaml'
    path.write_bytes(b'old\n')
    stale = tmp_path / ('.config.yaml%sabc123.tmp' % _io.TEMP_INFIX)
    stale.write_bytes(b'half')
    other = tmp_path / '.other.yaml.bk3s-zz.tmp'  # another file's temp: not ours to judge here
    other.write_bytes(b'x')
    _io.write_file(module, str(path), b'new\n')
    assert sorted(os.listdir(tmp_path)) == ['.other.yaml.bk3s-zz.tmp', 'config.yaml']


def test_write_through_a_symlink_replaces_the_target_and_keeps_the_link(module, tmp_path):
    (tmp_path / 'usr').mkdir()
    target = tmp_path / 'usr' / 'config.yaml'
    target.write_bytes(b'old\n')
    link = tmp_path / 'config.yaml'
    link.symlink_to(target)
    _io.write_file(module, str(link), b'new\n')
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() == b'new\n'
    assert sorted(os.listdir(tmp_path / 'usr')) == ['config.yaml']


def test_remove_with_backup(module, tmp_path):
    path = tmp_path / 'dropin.yaml'
    path.write_bytes(b'x: 1\n')
    result = _io.remove_file(module, str(path), backup=True)
    assert not path.exists()
    assert open(result['backup_file'], 'rb').read() == b'x: 1\n'
    assert _io.remove_file(module, str(path)) == {'backup_file': None}
    assert not os.path.exists(str(path))


# -- apply ---------------------------------------------------------------------------------
def test_apply_writes_every_change_and_returns_files(module, tmp_path):
    a, b, c = (str(tmp_path / n) for n in 'abc')
    with open(b, 'wb') as f:
        f.write(b'old b\n')
    with open(c, 'wb') as f:
        f.write(b'old c\n')
    plan = Plan([Change(a, None, b'new a\n', mode=0o640), Change(b, b'old b\n', b'new b\n'), Change(c, b'old c\n', None),
                 Change(str(tmp_path / 'same'), b'x', b'x')], facts={'answer': 42}, warnings=['careful'])
    warned = []
    module.warn = warned.append
    result = _io.apply(module, plan, backup=True)
    assert result['changed'] is True and result['answer'] == 42 and 'diff' not in result
    assert [(f['path'], f['action']) for f in result['files']] == [(a, 'created'), (b, 'modified'), (c, 'removed')]
    assert result['files'][0]['backup_file'] is None
    assert open(result['files'][1]['backup_file'], 'rb').read() == b'old b\n'
    assert open(result['files'][2]['backup_file'], 'rb').read() == b'old c\n'
    assert open(a, 'rb').read() == b'new a\n' and _mode(a) == 0o640
    assert open(b, 'rb').read() == b'new b\n' and not os.path.exists(c)
    assert warned == ['careful']


def test_apply_in_check_mode_writes_nothing_and_gives_the_diff(tmp_path):
    module = _module(check_mode=True, diff=True)
    path = str(tmp_path / 'a')
    result = _io.apply(module, Plan([Change(path, None, b'new\n')]))
    assert result['changed'] is True
    assert result['files'] == [{'path': path, 'action': 'created', 'backup_file': None}]
    assert result['diff'] == [{'before_header': path, 'after_header': path, 'before': '', 'after': 'new\n'}]
    assert os.listdir(tmp_path) == []


def test_apply_with_nothing_to_do(module):
    assert _io.apply(module, Plan([], facts={'x': 1})) == {'x': 1, 'changed': False, 'files': []}


def test_a_failed_write_puts_back_the_files_already_written(module, tmp_path, monkeypatch):
    first = tmp_path / 'first'
    first.write_bytes(b'old\n')
    created = str(tmp_path / 'created')
    full = str(tmp_path / 'full')
    real_move = module.atomic_move

    def atomic_move(src, dest, **kw):
        if dest == full:
            raise OSError(28, 'No space left on device')
        return real_move(src, dest, **kw)

    monkeypatch.setattr(module, 'atomic_move', atomic_move)
    plan = Plan([Change(str(first), b'old\n', b'new\n'), Change(created, None, b'c\n'), Change(full, None, b'x\n')])
    with pytest.raises(_io.ApplyError) as e:
        _io.apply(module, plan)
    assert e.value.msg.startswith('could not write %s: No space left on device. The files written before it were put back.' % full)
    assert first.read_bytes() == b'old\n'
    assert sorted(os.listdir(tmp_path)) == ['first']  # no temp file, nothing created


def test_removing_through_a_symlink_is_refused_before_anything_is_written(module, tmp_path):
    (tmp_path / 'target').write_bytes(b'x\n')
    (tmp_path / 'link').symlink_to(tmp_path / 'target')
    other = tmp_path / 'other'
    plan = Plan([Change(str(other), None, b'o\n'), Change(str(tmp_path / 'link'), b'x\n', None)])
    with pytest.raises(_io.ApplyError, match='symbolic link'):
        _io.apply(module, plan)
    assert not other.exists() and (tmp_path / 'link').is_symlink()


def test_a_dangling_symlink_is_refused(module, tmp_path):
    (tmp_path / 'link').symlink_to(tmp_path / 'gone')
    with pytest.raises(_io.ApplyError, match='does not exist'):
        _io.apply(module, Plan([Change(str(tmp_path / 'link'), None, b'x')]))


# -- locks ---------------------------------------------------------------------------------
@pytest.fixture
def lock_dir(tmp_path, monkeypatch):
    d = tmp_path / 'locks'
    d.mkdir()
    monkeypatch.setattr(_io, 'LOCK_DIRS', (str(d),))
    return d


def test_the_lock_records_its_holder(module, lock_dir):
    with _io.node_lock(module, '/etc/rancher/k3s/config.yaml'):
        data = json.loads((lock_dir / 'baremetal-k3s' / 'etc_rancher_k3s_config.yaml.lock').read_text())
        assert data['pid'] == os.getpid() and data['key'] == '/etc/rancher/k3s/config.yaml'


def test_a_second_holder_waits_then_fails_naming_the_first(module, lock_dir, monkeypatch):
    def fail_json(**kw):
        raise AnsibleFailJson(kw)

    monkeypatch.setattr(module, 'fail_json', fail_json)
    (lock_dir / 'baremetal-k3s').mkdir()
    holder = subprocess.Popen([sys.executable, '-c', textwrap.dedent('''
        import fcntl, json, os, sys, time
        fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, json.dumps({"pid": os.getpid(), "module": "baremetal.k3s.other", "since": "then"}).encode())
        print("held", flush=True)
        time.sleep(30)
        '''), str(lock_dir / 'baremetal-k3s' / 'k3s.lock')], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline() == b'held\n'
        with pytest.raises(AnsibleFailJson) as e:
            with _io.node_lock(module, 'k3s', timeout=0.5, sleep=lambda s: None):
                pytest.fail('got the lock while another process held it')
        assert 'pid %d, baremetal.k3s.other, since then' % holder.pid in e.value.result['msg']
    finally:
        holder.kill()
        holder.wait()
    with _io.node_lock(module, 'k3s', timeout=0.5):  # the holder died: free again
        pass
