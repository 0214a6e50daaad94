# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one write path (apply, locks, temp files, symlinks, our directories), against a real AnsibleModule."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import signal
import stat
import threading
import time

import pytest

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _io, _lock
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, Plan
from ansible_collections.baremetal.k3s.tests.unit.plugins.modules.utils import AnsibleFailJson, set_module_args


def _module(check_mode=False, diff=False):
    with set_module_args({}, check_mode=check_mode, diff=diff):
        return AnsibleModule(argument_spec={}, supports_check_mode=True)


@pytest.fixture
def module():
    return _module()


@pytest.fixture(autouse=True)
def lock_base(tmp_path_factory, monkeypatch):
    """The directory standing for /run (root's, 0755): the locks go in <it>/baremetal-k3s/locks."""
    base = tmp_path_factory.mktemp('run')
    os.chmod(base, 0o755)
    monkeypatch.setattr(_lock, 'LOCK_BASE', str(base))
    monkeypatch.setattr(_io, 'ROOT', '/')  # paths here are this machine's (a fault test's node may have been left set)
    return base


def _apply(module, plan, **kw):
    """apply ``plan`` as a module does: under the locks of its files."""
    return _io.locked_apply(module, lambda: plan, **kw)


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


def test_a_backup_dir_we_made_goes_with_its_last_backup(module, tmp_path):
    path = tmp_path / 'config.yaml'
    path.write_bytes(b'old\n')
    backups = tmp_path / 'var' / 'backups' / 'baremetal-k3s'
    result = _io.write_file(module, str(path), b'new\n', backup=True, backup_dir=str(backups))
    assert _mode(backups) == 0o700 and (backups / _io.DIR_MARKER).read_bytes() == _io.DIR_MARKER_TEXT
    _io.remove_file(module, result['backup_file'])
    assert not (tmp_path / 'var').exists()  # the directories it made for the backup, none left behind
    # a backup directory that was there before is not ours: it stays
    backups.mkdir(parents=True)
    result = _io.write_file(module, str(path), b'newer\n', backup=True, backup_dir=str(backups))
    _io.remove_file(module, result['backup_file'])
    assert backups.is_dir() and os.listdir(backups) == []


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
    result = _apply(module, plan, backup=True)
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
    result = _apply(module, Plan([Change(path, None, b'new\n')]))
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
        _apply(module, plan)
    assert e.value.msg.startswith('could not write %s: No space left on device (the file system is full: free some space on '
                                  'it). The files written before it were put back.' % full)
    assert first.read_bytes() == b'old\n'
    assert sorted(os.listdir(tmp_path)) == ['first']  # no temp file, nothing created


def test_removing_through_a_symlink_is_refused_before_anything_is_written(module, tmp_path):
    (tmp_path / 'target').write_bytes(b'x\n')
    (tmp_path / 'link').symlink_to(tmp_path / 'target')
    other = tmp_path / 'other'
    plan = Plan([Change(str(other), None, b'o\n'), Change(str(tmp_path / 'link'), b'x\n', None)])
    with pytest.raises(_io.ApplyError, match='symbolic link'):
        _apply(module, plan)
    assert not other.exists() and (tmp_path / 'link').is_symlink()


def test_a_dangling_symlink_is_refused(module, tmp_path):
    (tmp_path / 'link').symlink_to(tmp_path / 'gone')
    with pytest.raises(_io.ApplyError, match='does not exist'):
        _apply(module, Plan([Change(str(tmp_path / 'link'), None, b'x')]))


# -- locks ---------------------------------------------------------------------------------
NOBODY = 65534  # what an unprivileged local user's files look like


@pytest.fixture
def failing(module, monkeypatch):
    """The module, its fail_json raising AnsibleFailJson."""
    def fail_json(**kw):
        raise AnsibleFailJson(kw)

    monkeypatch.setattr(module, 'fail_json', fail_json)
    return module


def _locks(lock_base):
    return lock_base / 'baremetal-k3s' / 'locks'


def _names(path):
    """The lock file names of the file at ``path`` (ROOT is / here)."""
    return sorted(_lock.lock_name(f) for f in _lock.file_forms(os.path.realpath(path)))


def _snapshot(path):
    st = os.lstat(path)
    return open(path, 'rb').read(), st.st_size, st.st_mtime_ns, st.st_ino, stat.S_IMODE(st.st_mode)


@contextlib.contextmanager
def _held_elsewhere(*keys, paths=()):
    """Hold the locks in another thread: another open file, so flock treats it as another run."""
    holder_module = _module()
    ready, done, errors = threading.Event(), threading.Event(), []

    def hold():
        try:
            with _io.node_lock(holder_module, *keys, paths=paths):
                ready.set()
                done.wait(60)
        except BaseException as e:  # noqa: B036 pylint: disable=broad-except
            errors.append(e)
            ready.set()

    thread = threading.Thread(target=hold)
    thread.start()
    ready.wait(60)
    assert not errors, errors
    try:
        yield
    finally:
        done.set()
        thread.join(60)


def test_the_lock_directory_is_made_0700_owned_by_root(module, lock_base, tmp_path):
    old = os.umask(0)  # whatever the umask, it is 0700
    try:
        with _io.node_lock(module, paths=[str(tmp_path / 'f')]):
            for d in (lock_base / 'baremetal-k3s', _locks(lock_base)):
                st = os.lstat(d)
                assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()
    finally:
        os.umask(old)


def _plant_dir(mode, uid=0, where='baremetal-k3s'):
    def plant(base):
        path = base / where
        path.parent.mkdir(mode=0o700, exist_ok=True)
        path.mkdir()
        os.chmod(path, mode)
        os.chown(path, uid, uid)
        return path
    return plant


def _plant_dir_link(base):
    """A symlink where the directory goes, to a directory root made (0700): still refused."""
    (base / 'elsewhere').mkdir(mode=0o700)
    (base / 'baremetal-k3s').symlink_to(base / 'elsewhere')
    os.lchown(base / 'baremetal-k3s', NOBODY, NOBODY)
    return base / 'baremetal-k3s'


def _plant_file(base):
    (base / 'baremetal-k3s').mkdir(mode=0o700)
    _locks(base).write_bytes(b'')
    return _locks(base)


def _open_base(base):
    os.chmod(base, 0o777)  # /run writable by all, and not sticky: a user could swap what is in it
    return base


PLANTED_DIRS = {
    'made by a user, 0777 (as /run/lock allows)': (_plant_dir(0o777, NOBODY), 'is owned by uid 65534, not by root'),
    'made by a user, 0700': (_plant_dir(0o700, NOBODY, 'baremetal-k3s/locks'), 'is owned by uid 65534, not by root'),
    "root's, writable by all": (_plant_dir(0o777, 0, 'baremetal-k3s/locks'), 'can be written by group and others (mode 0777)'),
    "root's, sticky and writable by all": (_plant_dir(0o1777), 'can be written by group and others (mode 1777)'),
    "root's, writable by its group": (_plant_dir(0o770, 0, 'baremetal-k3s/locks'), 'can be written by its group (mode 0770)'),
    'a symlink': (_plant_dir_link, 'is a symbolic link (to '),
    'a file': (_plant_file, 'is not a directory'),
    'under a /run anyone can write': (_open_base, 'can be written by group and others (mode 0777)'),
}


@pytest.mark.skipif(os.geteuid() != 0, reason='chown needs root')
@pytest.mark.parametrize('case', sorted(PLANTED_DIRS))
def test_a_lock_directory_root_did_not_make_alone_is_refused_and_left_as_it_is(failing, lock_base, tmp_path, case):
    plant, says = PLANTED_DIRS[case]
    planted = plant(lock_base)
    before = _tree(lock_base)
    target = tmp_path / 'config.yaml'
    target.write_bytes(b'mine\n')
    with pytest.raises(AnsibleFailJson) as e:
        with _io.node_lock(failing, paths=[str(target)], timeout=5):
            pytest.fail('took a lock in %s' % planted)
    msg = e.value.result['msg']
    what = ('the lock directory %s' % planted) if planted != lock_base else \
        '%s (where the lock directory %s goes)' % (lock_base, _locks(lock_base))
    assert msg.startswith('%s %s' % (what, says)) and ', so no lock is taken in it' in msg, msg
    assert ('remove it' if planted != lock_base else "make it root's") in msg
    assert _tree(lock_base) == before  # nothing made or opened for writing in it
    assert target.read_bytes() == b'mine\n'


@pytest.mark.parametrize('mode', [0o755, 0o1777])
def test_a_sound_directory_root_made_is_used(module, lock_base, tmp_path, mode):
    """/run/baremetal-k3s 0755 with its marker (made by node_lease of an earlier version); /run 1777 (Docker's --tmpfs)."""
    os.chmod(lock_base, mode)
    (lock_base / 'baremetal-k3s').mkdir(mode=0o755)
    (lock_base / 'baremetal-k3s' / _io.DIR_MARKER).write_bytes(_io.DIR_MARKER_TEXT)
    with _io.node_lock(module, paths=[str(tmp_path / 'f')]):
        assert len(os.listdir(_locks(lock_base))) == len(_names(tmp_path / 'f'))
    assert os.listdir(_locks(lock_base)) == []


def _plant_link(victim, name):
    os.symlink(victim, name)
    os.lchown(name, NOBODY, NOBODY)


def _plant_user_file(victim, name):  # pylint: disable=unused-argument
    with open(name, 'wb') as f:
        f.write(b'{"pid": 1}\n')
    os.chown(name, NOBODY, NOBODY)


PLANTED_FILES = {
    'a symlink to the victim': (_plant_link, 'a symbolic link (to '),
    'a hard link of the victim': (os.link, 'a hard link (one of '),
    "a user's file": (_plant_user_file, 'owned by uid 65534'),
    'a fifo': (lambda victim, name: os.mkfifo(name), 'not a regular file'),
}


@pytest.mark.skipif(os.geteuid() != 0, reason='chown needs root')
@pytest.mark.parametrize('case', sorted(PLANTED_FILES))
def test_a_planted_lock_file_is_refused_and_the_file_it_points_to_untouched(failing, lock_base, tmp_path, case):
    plant, says = PLANTED_FILES[case]
    victim = tmp_path / 'shadow'
    victim.write_bytes(b'root:$6$secret:19000:0:99999:7:::\n')
    os.chmod(victim, 0o640)
    target = tmp_path / 'config.yaml'
    target.write_bytes(b'mine\n')
    _locks(lock_base).mkdir(parents=True, mode=0o700)
    os.chmod(lock_base / 'baremetal-k3s', 0o700)
    names = _names(target)
    for name in names:
        plant(str(victim), str(_locks(lock_base) / name))
    before = _snapshot(victim)
    with pytest.raises(AnsibleFailJson) as e:
        with _io.node_lock(failing, paths=[str(target)], timeout=5):
            pytest.fail('took the lock through %s' % case)
    msg = e.value.result['msg']
    assert msg.startswith('%s is %s' % (_locks(lock_base) / names[0], says)), msg
    assert 'nothing was changed' in msg
    assert _snapshot(victim) == before
    assert sorted(os.listdir(_locks(lock_base))) == names  # left for the administrator to look at
    assert target.read_bytes() == b'mine\n'


def test_lock_files_are_ours_opened_without_following_links_and_closed_on_exec(module, lock_base, tmp_path):
    target = tmp_path / 'config.yaml'
    with _io.node_lock(module, 'service-k3s', paths=[str(target)]):
        expected = sorted(_names(target) + [_lock.lock_name(_lock.key_form('service-k3s'))])
        assert sorted(os.listdir(_locks(lock_base))) == expected
        for name in expected:
            st = os.lstat(_locks(lock_base) / name)
            assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
            assert st.st_uid == os.geteuid() and st.st_nlink == 1
            record = json.loads((_locks(lock_base) / name).read_text())
            assert record['pid'] == os.getpid() and record['what'] == 'service-k3s, %s' % target
        fds = {}
        for fd in os.listdir('/proc/self/fd'):
            try:
                link = os.readlink('/proc/self/fd/%s' % fd)
            except OSError:
                continue
            if link.startswith(str(_locks(lock_base)) + '/'):
                fds[os.path.basename(link)] = int(fd)
        assert sorted(fds) == expected
        for fd in fds.values():
            assert fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC
            flags = int(re.search(r'^flags:\s+([0-7]+)$', open('/proc/self/fdinfo/%d' % fd).read(), re.M).group(1), 8)
            assert flags & os.O_NOFOLLOW


def _spell_file_link(tmp_path):
    (tmp_path / 'config.yaml').symlink_to(tmp_path / 'etc' / 'k3s' / 'config.yaml')
    return tmp_path / 'config.yaml'


def _spell_dir_link(tmp_path):
    (tmp_path / 'k3s').symlink_to(tmp_path / 'etc' / 'k3s')
    return tmp_path / 'k3s' / 'config.yaml'


SPELLINGS = {
    'a symlink to the file': (True, _spell_file_link),
    'a symlink to its directory': (True, _spell_dir_link),
    'a .. in the path': (True, lambda t: t / 'etc' / 'k3s' / '..' / 'k3s' / 'config.yaml'),
    'a file not made yet, by a symlink to its directory': (False, _spell_dir_link),
    'a directory not made yet, by a ..': (None, lambda t: t / 'etc' / 'k3s' / 'new' / '..' / 'new' / 'config.yaml'),
}


@pytest.mark.parametrize('case', sorted(SPELLINGS))
def test_every_spelling_of_a_file_meets_one_lock(failing, tmp_path, case):
    exists, spell = SPELLINGS[case]
    (tmp_path / 'etc' / 'k3s').mkdir(parents=True)
    plain = tmp_path / 'etc' / 'k3s' / ('new/config.yaml' if exists is None else 'config.yaml')
    if exists:
        plain.write_bytes(b'x: 1\n')
    spelled = str(spell(tmp_path))
    assert spelled != str(plain)
    with _held_elsewhere(paths=[str(plain)]):
        with pytest.raises(AnsibleFailJson) as e:
            with _io.node_lock(failing, paths=[spelled], timeout=0.3):
                pytest.fail('%s took a lock of its own' % spelled)
        assert e.value.result['msg'].startswith('another baremetal.k3s run is changing %s on this node (pid' % spelled)
        with _io.node_lock(failing, paths=[str(tmp_path / 'etc' / 'k3s' / 'other.yaml')], timeout=5):
            pass  # another file of the same directory is not held
    with _io.node_lock(failing, paths=[spelled], timeout=5):
        pass


def test_a_directory_made_while_its_file_is_locked_does_not_split_the_lock(failing, tmp_path):
    """One run locks a file whose directory is missing and makes it; a run that starts then meets its lock."""
    path = tmp_path / 'etc' / 'config.yaml.d' / '50-a.yaml'
    (tmp_path / 'etc').mkdir()
    with _held_elsewhere(paths=[str(path)]):
        path.parent.mkdir()  # what the holder's write does
        with pytest.raises(AnsibleFailJson, match='another baremetal.k3s run is changing'):
            with _io.node_lock(failing, paths=[str(path)], timeout=0.3):
                pytest.fail('the file got a second lock once its directory was made')
    with _io.node_lock(failing, paths=[str(path)], timeout=5):
        pass


def test_locks_are_taken_in_one_order(module, tmp_path, monkeypatch):
    taken = []
    real = _lock._lock_one  # pylint: disable=protected-access

    def lock_one(dirfd, dirpath, name, *a):
        taken.append(name)
        return real(dirfd, dirpath, name, *a)

    monkeypatch.setattr(_lock, '_lock_one', lock_one)
    a, b = str(tmp_path / 'a'), str(tmp_path / 'b')
    for keys, paths in ((('service-k3s', 'service-k3s-agent'), [a, b]), (('service-k3s-agent', 'service-k3s'), [b, a])):
        del taken[:]
        with _io.node_lock(module, *keys, paths=paths):
            pass
        assert taken == sorted(_names(a) + _names(b) + [_lock.lock_name(_lock.key_form(k)) for k in keys])


def test_two_runs_taking_two_files_in_opposite_orders_do_not_deadlock(tmp_path):
    a, b = str(tmp_path / 'a'), str(tmp_path / 'b')
    errors = []

    def run(paths):
        module = _module()
        try:
            for dummy in range(100):
                with _io.node_lock(module, paths=paths, timeout=30):
                    pass
        except BaseException as e:  # noqa: B036 pylint: disable=broad-except
            errors.append(e)

    threads = [threading.Thread(target=run, args=(p,)) for p in ([a, b], [b, a])]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors and not any(t.is_alive() for t in threads)


def test_a_released_lock_leaves_no_file(module, lock_base, tmp_path):
    paths = [str(tmp_path / n) for n in ('a', 'b/c')]
    with _io.node_lock(module, 'service-k3s', paths=paths):
        assert os.listdir(_locks(lock_base))
    assert os.listdir(_locks(lock_base)) == []
    # a run that waited for another one's lock: both files gone too
    waiter_done = threading.Event()
    with _held_elsewhere(paths=paths):
        def wait():
            with _io.node_lock(_module(), paths=paths, timeout=30):
                pass
            waiter_done.set()
        thread = threading.Thread(target=wait)
        thread.start()
    thread.join(60)
    assert waiter_done.is_set()
    assert os.listdir(_locks(lock_base)) == []


def test_lock_files_a_killed_run_left_are_swept_and_live_ones_kept(module, lock_base, tmp_path):
    with _io.node_lock(module, paths=[str(tmp_path / 'x')]):
        pass
    locks = _locks(lock_base)
    for n in range(100):
        (locks / ('%040d.lock' % n)).write_bytes(b'{"pid": 1}\n')  # as a killed run leaves them: nobody holds them
    live = locks / ('f' * 40 + '.lock')
    live.write_bytes(b'')
    live_fd = os.open(str(live), os.O_RDWR)
    fcntl.flock(live_fd, fcntl.LOCK_EX)  # another run holds this one
    victim = tmp_path / 'victim'
    victim.write_bytes(b'keep\n')
    (locks / ('e' * 40 + '.lock')).symlink_to(victim)  # not ours: left for whoever looks
    try:
        with _io.node_lock(module, paths=[str(tmp_path / 'y')]):
            pass
        assert sorted(os.listdir(locks)) == ['e' * 40 + '.lock', 'f' * 40 + '.lock']
        assert victim.read_bytes() == b'keep\n'
    finally:
        os.close(live_fd)


def test_a_waiter_whose_lock_file_was_removed_takes_the_lock_again(lock_base):
    """The holder unlinks the file its waiter has open; a third run makes a new one: the waiter must wait for it."""
    form = _lock.key_form('service-k3s')
    first = _lock.acquire({form: 'service-k3s'}, 5)
    timeline = []
    state = {'calls': 0}

    def sleep(seconds):  # pylint: disable=unused-argument
        state['calls'] += 1
        if state['calls'] == 1:  # the waiter has the first holder's file open and found it locked
            first.release()  # unlinks it: the waiter's flock will now succeed on a file no longer there
            state['third'] = _lock.acquire({form: 'service-k3s'}, 5)
            timeline.append('third holds')
        elif state['calls'] == 3:
            timeline.append('third releases')
            state['third'].release()

    waiter = _lock.acquire({form: 'service-k3s'}, 30, sleep=sleep)
    timeline.append('waiter holds')
    waiter.release()
    assert timeline == ['third holds', 'third releases', 'waiter holds']
    assert os.listdir(_locks(lock_base)) == []


def test_apply_refuses_a_file_whose_lock_is_not_held(module, tmp_path):
    path = str(tmp_path / 'a')
    with pytest.raises(_io.ApplyError) as e:
        _io.apply(module, Plan([Change(path, None, b'x')]))
    assert e.value.msg == '%s: this run does not hold the lock of this file; nothing was changed (a module writes only ' \
                          'under _io.locked_apply).' % path
    assert not os.path.exists(path)


def test_locked_apply_plans_again_under_the_lock_of_a_file_it_found(module, tmp_path):
    known, found = str(tmp_path / 'known'), str(tmp_path / 'found')
    seen = []

    def plan():
        seen.append((_io.locked(known), _io.locked(found)))
        return Plan([Change(known, None, b'k\n'), Change(found, None, b'f\n')])

    result = _io.locked_apply(module, plan, paths=[known, 'relative/is/left/to/the/plan'])
    assert seen == [(True, False), (True, True)]
    assert [f['path'] for f in result['files']] == [known, found]


def test_a_path_that_is_not_absolute_is_refused(failing):
    with pytest.raises(AnsibleFailJson) as e:
        with _io.node_lock(failing, paths=['etc/config.yaml']):
            pytest.fail('locked a relative path')
    assert e.value.result['msg'] == "'etc/config.yaml' is not an absolute path, so no lock can be taken for it."


def test_a_second_holder_waits_then_fails_naming_the_first(failing, tmp_path):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the holder
        try:
            holder = _module()
            holder._name = 'baremetal.k3s.other'  # pylint: disable=protected-access
            with _io.node_lock(holder, 'k3s', paths=[str(tmp_path / 'f')]):
                os.write(w, b'held\n')
                time.sleep(60)
        finally:
            os._exit(0)  # pylint: disable=protected-access
    os.close(w)
    try:
        assert os.read(r, 5) == b'held\n'
        with pytest.raises(AnsibleFailJson) as e:
            with _io.node_lock(failing, 'k3s', timeout=0.5, sleep=lambda s: None):
                pytest.fail('got the lock while another process held it')
        assert e.value.result['msg'].startswith('another baremetal.k3s run is changing k3s on this node (pid %d, '
                                                'baremetal.k3s.other, since ' % pid)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(r)
    with _io.node_lock(failing, 'k3s', paths=[str(tmp_path / 'f')], timeout=5):  # the holder died: free again
        pass


# -- what does not fit a Plan: a file streamed, a directory swapped in ---------------------------------------------
def test_a_stream_write_without_the_lock_is_refused_and_writes_nothing(tmp_path):
    path = str(tmp_path / 'archive.tar.gz')
    with pytest.raises(_io.ApplyError) as e:
        with _io.stream_file(path) as f:
            f.write(b'x')
    assert e.value.msg == '%s: this run does not hold the lock of this path; nothing was changed (a module writes only ' \
                          'under _io.node_lock).' % path
    assert os.listdir(tmp_path) == []


def test_a_stream_write_under_its_directory_lock_lands_whole_with_its_mode(module, tmp_path):
    path = str(tmp_path / 'archive.tar.gz')
    (tmp_path / ('.archive.tar.gz%sdead.tmp' % _io.TEMP_INFIX)).write_bytes(b'a killed write')
    with _io.node_lock(module, paths=[str(tmp_path)]):
        with _io.stream_file(path, 0o600) as f:
            for dummy in range(3):
                f.write(b'block\n')
    assert open(path, 'rb').read() == b'block\n' * 3 and _mode(path) == 0o600
    assert os.listdir(tmp_path) == ['archive.tar.gz']  # the killed write's temp file went first


def test_a_failed_stream_write_leaves_nothing_and_put_back_undoes_the_earlier_ones(module, tmp_path):
    first, second = str(tmp_path / 'a'), str(tmp_path / 'a.sha256')
    written = _io.Written()
    with _io.node_lock(module, paths=[str(tmp_path)]):
        with _io.stream_file(first, written=written) as f:
            f.write(b'archive')
        with pytest.raises(OSError):
            with _io.stream_file(second, written=written) as f:
                f.write(b'half')
                raise OSError(errno.ENOSPC, 'No space left on device')
        assert os.listdir(tmp_path) == ['a']
        assert written.put_back() == []
    assert os.listdir(tmp_path) == []


def test_write_bytes_replaces_a_file_and_put_back_gives_its_old_bytes(module, tmp_path):
    token = tmp_path / 'token'
    token.write_bytes(b'old\n')
    written = _io.Written()
    with _io.node_lock(module, paths=[str(token)]):
        _io.write_bytes(str(token), b'new\n', written=written)
        assert token.read_bytes() == b'new\n' and _mode(str(token)) == 0o600
        written.put_back()
    assert token.read_bytes() == b'old\n' and sorted(os.listdir(tmp_path)) == ['token']


@pytest.mark.parametrize('kernel', ['exchange', 'no renameat2'])
def test_replace_dir_swaps_a_staged_directory_in_and_put_back_swaps_it_out(module, tmp_path, monkeypatch, kernel):
    current, aside = tmp_path / 'db', str(tmp_path / 'db.aside')
    current.mkdir()
    (current / 'state.db').write_bytes(b'old')
    if kernel == 'no renameat2':
        def enosys(a, b):
            raise OSError(errno.ENOSYS, 'Function not implemented')
        monkeypatch.setattr(_io, 'exchange', enosys)
    written = _io.Written()
    with _io.node_lock(module, paths=[str(current)]):
        with _io.temp_dir(str(tmp_path), '.db.stage-', guard=str(current)) as stage:
            os.mkdir(os.path.join(stage, 'db'))
            with _io.stream_file(os.path.join(stage, 'db', 'state.db')) as f:
                f.write(b'new')
            _io.replace_dir(os.path.join(stage, 'db'), str(current), aside, written)
        assert (current / 'state.db').read_bytes() == b'new' and open(aside + '/state.db', 'rb').read() == b'old'
        assert sorted(os.listdir(tmp_path)) == ['db', 'db.aside']  # the stage went with the block
        written.put_back()
    assert (current / 'state.db').read_bytes() == b'old' and sorted(os.listdir(tmp_path)) == ['db']


def test_a_directory_swap_without_the_lock_is_refused(module, tmp_path):
    current = tmp_path / 'db'
    current.mkdir()
    with pytest.raises(_io.ApplyError):
        with _io.temp_dir(str(tmp_path), '.db.stage-', guard=str(current)):
            pytest.fail('staged without the lock of %s' % current)
    with _io.node_lock(module, paths=[str(tmp_path / 'other')]):
        with pytest.raises(_io.ApplyError):
            _io.replace_dir(str(tmp_path / 'new'), str(current), str(tmp_path / 'aside'), _io.Written())
    assert os.listdir(tmp_path) == ['db']


def test_stale_temps_of_a_file_and_of_a_prefix_in_a_directory(tmp_path):
    for name in ('.token.bk3s-1.tmp', '.token.abc.tmp', '.k3s-backup-x.tmp', '.other.tmp', 'token', '.token.bk3s-2'):
        (tmp_path / name).write_bytes(b'')
    assert _io.stale_temps(str(tmp_path / 'token')) == [str(tmp_path / '.token.bk3s-1.tmp')]
    assert _io.stale_temps(str(tmp_path), '.token.') == [str(tmp_path / '.token.abc.tmp'), str(tmp_path / '.token.bk3s-1.tmp')]
    assert _io.stale_temps(str(tmp_path), '.k3s-backup-') == [str(tmp_path / '.k3s-backup-x.tmp')]
    assert _io.stale_temps(str(tmp_path / 'missing'), '.k3s-backup-') == []
