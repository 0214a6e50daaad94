# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write the files k3s's ``install.sh`` writes for a service, byte for byte.

Test fixture generator, standard library only: it is copied into test containers.
It models what install.sh does with its inputs, not how (no code of it is reused):

* ``INSTALL_K3S_EXEC`` is escaped (most punctuation gets a backslash, quotes do not),
  then re-read by the shell together with the quoted script arguments, so quotes in
  ``INSTALL_K3S_EXEC`` group words and whitespace runs collapse;
* a first word that is empty or starts with ``-`` means ``server`` (``agent`` when
  ``K3S_URL`` is set); the rest are the arguments;
* each argument is written as a TAB, the argument in single quotes (``'`` becomes
  ``'\\''``), a space and a backslash; ``server \\`` is indented with four spaces and the
  ExecStart ends with an empty line (systemd) or the log redirection line (openrc, where
  ``"`` is written ``\\"``);
* the environment file holds the ``K3S_*``/``CONTAINERD_*`` variables, then the proxy
  variables, as Debian's ``/bin/sh`` (dash) prints them with ``export``; mode 0600.

CLI::

    python3 installer.py --exec 'server --disable=traefik' --name x --root DIR [--init openrc] [-- ARG...]
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys

InstallerFile = collections.namedtuple('InstallerFile', ['path', 'content', 'mode'])

_ESCAPED = set('[]!#$%&()*;<=>?\\_`{|}')
_INVALID_NAME = re.compile(r'[][!#$%&()*;<=>?\\_`{|}/\s]')
_IFS = ' \t\n'


def quote(arg):
    """The installer's single-quoting of one argument."""
    return "'" + arg.replace("'", "'\\''") + "'"


def escape(text):
    """The installer's escaping of INSTALL_K3S_EXEC before the shell re-reads it."""
    return ''.join('\\' + c if c in _ESCAPED else c for c in text)


def _shell_words(text):
    """Split ``text`` as ``eval`` does when only quotes and backslashes can occur.

    ``text`` comes from :func:`escape` and :func:`quote`, so no expansion is left:
    ``$`` and backquotes always carry a backslash outside single quotes.
    """
    words = []
    cur = None
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in _IFS:
            if cur is not None:
                words.append(cur)
                cur = None
            i += 1
            continue
        if cur is None:
            cur = ''
        if c == '\\':
            if i + 1 < n:
                if text[i + 1] != '\n':
                    cur += text[i + 1]
                i += 2
            else:
                i += 1
            continue
        if c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise ValueError('unterminated single quote in %r (the installer would fail on it too)' % text)
            cur += text[i + 1:end]
            i = end + 1
            continue
        if c == '"':
            i += 1
            while True:
                if i >= n:
                    raise ValueError('unterminated double quote in %r (the installer would fail on it too)' % text)
                c = text[i]
                if c == '"':
                    i += 1
                    break
                if c == '\\' and i + 1 < n and text[i + 1] in '$`"\\\n':
                    if text[i + 1] != '\n':
                        cur += text[i + 1]
                    i += 2
                    continue
                cur += c
                i += 1
            continue
        cur += c
        i += 1
    if cur is not None:
        words.append(cur)
    return words


def exec_words(install_k3s_exec='', script_args=()):
    """The word list the installer works on: ``INSTALL_K3S_EXEC`` and the script arguments."""
    fields = escape(install_k3s_exec).split()
    for arg in script_args:
        fields.extend(quote(arg).split())
    return _shell_words(' '.join(fields))


def split_command(words, k3s_url=''):
    """(command, arguments) as the installer decides them."""
    words = list(words)
    if not words or words[0] == '' or words[0].startswith('-'):
        return ('agent' if k3s_url else 'server'), words
    return words[0], words[1:]


def system_name(command, name=''):
    """The service name: ``k3s``, ``k3s-agent``, ``k3s-<name>``."""
    if name:
        result = 'k3s-' + name
    elif command == 'server':
        result = 'k3s'
    else:
        result = 'k3s-' + command
    if _INVALID_NAME.search(result):
        raise ValueError('invalid characters for system name: %r (the installer refuses it)' % result)
    return result


def exec_text(command, args):
    """``CMD_K3S_EXEC``: the command and the quoted, indented argument lines."""
    text = command + ' \\\n'
    for arg in args:
        text += '\t%s \\\n' % quote(arg)
    return text.rstrip('\n')


def env_file_content(environ):
    """What the installer writes to the env file for ``environ`` (dash's ``export`` output)."""
    lines = []
    items = sorted(environ.items())
    for pattern in (re.compile(r'^(K3S|CONTAINERD)_'), re.compile(r'^(NO|HTTP|HTTPS)_PROXY', re.I)):
        for key, value in items:
            if '\\' in value or '\n' in value:
                raise ValueError('environment value of %s holds a backslash or newline; '
                                 'dash\'s echo would rewrite it, which this generator does not model' % key)
            line = "%s='%s'" % (key, value.replace("'", "'\\''"))
            line = ' '.join(line.split())
            if pattern.match(line):
                lines.append(line + '\n')
    return ''.join(lines).encode('utf-8')


SYSTEMD_TEMPLATE = '''[Unit]
Description=Lightweight Kubernetes
Documentation=https://k3s.io
Wants=network-online.target
After=network-online.target

[Install]
WantedBy=multi-user.target

[Service]
Type={type}
EnvironmentFile=-/etc/default/%N
EnvironmentFile=-/etc/sysconfig/%N
EnvironmentFile=-{env_file}
KillMode=process
Delegate=yes
User=root
# Having non-zero Limit*s causes performance problems due to accounting overhead
# in the kernel. We recommend using cgroups to do container-local accounting.
LimitNOFILE=1048576
LimitNPROC=infinity
LimitCORE=infinity
TasksMax=infinity
TimeoutStartSec=0
Restart=always
RestartSec=5s
ExecStartPre=-/sbin/modprobe br_netfilter
ExecStartPre=-/sbin/modprobe overlay
ExecStart={bin_dir}/k3s \\
    {exec_text}

'''

OPENRC_TEMPLATE = '''#!/sbin/openrc-run

depend() {{
    after network-online
    want cgroups
}}

start_pre() {{
    rm -f /tmp/k3s.*
}}

supervisor=supervise-daemon
name={name}
command="{bin_dir}/k3s"
command_args="{exec_text}
    >>{log_file} 2>&1"

output_log={log_file}
error_log={log_file}

pidfile="/var/run/{name}.pid"
respawn_delay=5
respawn_max=0

set -o allexport
if [ -f /etc/environment ]; then . /etc/environment; fi
if [ -f {env_file} ]; then . {env_file}; fi
set +o allexport
'''

LOGROTATE_TEMPLATE = '''{log_file} {{
\tmissingok
\tnotifempty
\tcopytruncate
}}
'''


def generate(command='server', args=(), name='', bin_dir='/usr/local/bin', systemd_dir='/etc/systemd/system',
             service_type='notify', init='systemd', environ=None):
    """The installer's service files for one install, as a list of :class:`InstallerFile`.

    ``command`` and ``args`` are the words after the installer's own splitting (see
    :func:`exec_words` and :func:`split_command` to start from ``INSTALL_K3S_EXEC``).
    The first file is the unit (systemd) or init script (openrc), the second the env file.
    """
    sname = system_name(command, name)
    text = exec_text(command, args)
    bin_dir = bin_dir or '/usr/local/bin'
    systemd_dir = systemd_dir or '/etc/systemd/system'
    service_type = service_type or 'notify'
    env = env_file_content(environ or {})
    if init == 'systemd':
        env_path = '%s/%s.service.env' % (systemd_dir, sname)
        unit = SYSTEMD_TEMPLATE.format(type=service_type, env_file=env_path, bin_dir=bin_dir, exec_text=text)
        return [InstallerFile('%s/%s.service' % (systemd_dir, sname), unit.encode('utf-8'), 0o644),
                InstallerFile(env_path, env, 0o600)]
    if init == 'openrc':
        env_path = '/etc/rancher/k3s/%s.env' % sname
        log_file = '/var/log/%s.log' % sname
        script = OPENRC_TEMPLATE.format(name=sname, bin_dir=bin_dir, exec_text=text.replace('"', '\\"'),
                                        log_file=log_file, env_file=env_path)
        return [InstallerFile('/etc/init.d/%s' % sname, script.encode('utf-8'), 0o755),
                InstallerFile(env_path, env, 0o600),
                InstallerFile('/etc/logrotate.d/%s' % sname, LOGROTATE_TEMPLATE.format(log_file=log_file).encode('utf-8'), 0o644)]
    raise ValueError('init must be systemd or openrc, not %r' % (init,))


# RKE2's tarball bundle (rancher/rke2 bundle/lib/systemd/system/rke2-<kind>.service): install.sh copies it
# to <prefix>/lib/systemd/system (prefix /usr/local, or /opt/rke2 where /usr is read-only) and rewrites
# /usr/local in it to the prefix. The unit is static: RKE2 takes its flags from /etc/rancher/rke2/config.yaml.
RKE2_TEMPLATE = """[Unit]
Description=Rancher Kubernetes Engine v2 ({kind})
Documentation=https://github.com/rancher/rke2#readme
Wants=network-online.target
After=network-online.target
Conflicts=rke2-{other}.service

[Install]
WantedBy=multi-user.target

[Service]
Type=notify
EnvironmentFile=-/etc/default/%N
EnvironmentFile=-/etc/sysconfig/%N
EnvironmentFile=-{prefix}/lib/systemd/system/%N.env
KillMode=process
Delegate=yes
LimitNOFILE=1048576
LimitNPROC=infinity
LimitCORE=infinity
TasksMax=infinity
TimeoutStartSec=0
Restart=always
RestartSec=5s
ExecStartPre=/bin/sh -xc '! /usr/bin/systemctl is-enabled --quiet nm-cloud-setup.service'
ExecStartPre=-/sbin/modprobe br_netfilter
ExecStartPre=-/sbin/modprobe overlay
ExecStart={prefix}/bin/rke2 {kind}
ExecStopPost=-/bin/sh -c "systemd-cgls /system.slice/%n | grep -Eo '[0-9]+ (containerd|kubelet)' | awk '{{print $1}}' | xargs -r kill"
"""

# The kubelet unit and kubeadm's drop-in as Kubernetes' deb/rpm packages install them.
KUBELET_UNIT = """[Unit]
Description=kubelet: The Kubernetes Node Agent
Documentation=https://kubernetes.io/docs/
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=/usr/bin/kubelet
Restart=always
StartLimitInterval=0
RestartSec=10

[Install]
WantedBy=multi-user.target
"""
KUBEADM_DROPIN = """# Note: This dropin only works with kubeadm and kubelet v1.11+
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
# This is a file that "kubeadm init" and "kubeadm join" generates at runtime, populating the KUBELET_KUBEADM_ARGS variable dynamically
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
# This is a file that the user can use for overrides of the kubelet args as a last resort. Preferably, the user should use
# the .NodeRegistration.KubeletExtraArgs object in the configuration files instead. KUBELET_EXTRA_ARGS should be sourced from this file.
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
"""


def rke2_files(kind='server', prefix='/usr/local'):
    """The unit and env file RKE2's tarball install leaves for ``kind`` (server or agent)."""
    if kind not in ('server', 'agent'):
        raise ValueError('RKE2 kind must be server or agent, not %r' % (kind,))
    prefix = (prefix or '/usr/local').rstrip('/')
    unit_dir = prefix + '/lib/systemd/system'
    unit = RKE2_TEMPLATE.format(kind=kind, other='agent' if kind == 'server' else 'server', prefix=prefix)
    return [InstallerFile('%s/rke2-%s.service' % (unit_dir, kind), unit.encode('utf-8'), 0o644),
            InstallerFile('%s/rke2-%s.env' % (unit_dir, kind), b'HOME=/root\n', 0o644)]


def kubelet_files(unit_dir='/usr/lib/systemd/system'):
    """kubelet.service and kubeadm's 10-kubeadm.conf drop-in, as the Kubernetes packages install them."""
    return [InstallerFile(unit_dir + '/kubelet.service', KUBELET_UNIT.encode('utf-8'), 0o644),
            InstallerFile(unit_dir + '/kubelet.service.d/10-kubeadm.conf', KUBEADM_DROPIN.encode('utf-8'), 0o644)]


def expected_argv(command='server', args=(), bin_dir='/usr/local/bin'):
    """The argv systemd (or openrc) starts k3s with for these inputs."""
    return ['%s/k3s' % (bin_dir or '/usr/local/bin'), command] + list(args)


def write(files, root):
    """Write ``files`` under ``root``; return the written host paths."""
    written = []
    for f in files:
        dest = os.path.join(root, f.path.lstrip('/'))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if os.path.lexists(dest):
            os.unlink(dest)  # the installer deletes and rewrites the unit
        with open(dest, 'wb') as fh:
            fh.write(f.content)
        os.chmod(dest, f.mode)
        written.append(dest)
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description='Write the files the k3s installer writes, under --root.')
    parser.add_argument('--exec', dest='install_exec', default='', help='INSTALL_K3S_EXEC')
    parser.add_argument('--name', default='', help='INSTALL_K3S_NAME')
    parser.add_argument('--bin-dir', default='/usr/local/bin', help='INSTALL_K3S_BIN_DIR')
    parser.add_argument('--systemd-dir', default='/etc/systemd/system', help='INSTALL_K3S_SYSTEMD_DIR')
    parser.add_argument('--type', dest='service_type', default='notify', help='INSTALL_K3S_TYPE')
    parser.add_argument('--init', choices=['systemd', 'openrc'], default='systemd')
    parser.add_argument('--product', choices=['k3s', 'rke2', 'kubelet'], default='k3s',
                        help='k3s (install.sh), rke2 (its tarball install; --exec server|agent) or kubelet (the packages)')
    parser.add_argument('--prefix', default='/usr/local', help='INSTALL_RKE2_TAR_PREFIX')
    parser.add_argument('--k3s-url', default='', help='K3S_URL (defaults the command to agent)')
    parser.add_argument('--env', action='append', default=[], metavar='KEY=VALUE', help='environment of the installer')
    parser.add_argument('--root', help='directory standing for / (required unless --print-argv)')
    parser.add_argument('--print-argv', action='store_true',
                        help='write nothing; print the argv systemd will start, one word per line')
    parser.add_argument('args', nargs='*', help='script arguments (after --)')
    opts = parser.parse_args(argv)
    if not opts.root and not opts.print_argv:
        parser.error('--root is required (or --print-argv)')
    environ = {}
    for item in opts.env:
        key, sep, value = item.partition('=')
        if not sep:
            parser.error('--env wants KEY=VALUE, got %r' % item)
        environ[key] = value
    if opts.k3s_url:
        environ['K3S_URL'] = opts.k3s_url
    try:
        if opts.product == 'rke2':
            files = rke2_files(opts.install_exec.strip() or 'server', opts.prefix)
            command, args = None, None
        elif opts.product == 'kubelet':
            files = kubelet_files(opts.systemd_dir if opts.systemd_dir != '/etc/systemd/system' else '/usr/lib/systemd/system')
            command, args = None, None
        else:
            command, args = split_command(exec_words(opts.install_exec, opts.args), opts.k3s_url)
            files = generate(command, args, opts.name, opts.bin_dir, opts.systemd_dir, opts.service_type, opts.init, environ)
    except ValueError as e:
        sys.stderr.write('installer.py: %s\n' % e)
        return 1
    if opts.print_argv:
        if command is None:
            parser.error('--print-argv is for --product k3s')
        for word in expected_argv(command, args, opts.bin_dir):
            sys.stdout.write(word + '\n')
        return 0
    for path in write(files, opts.root):
        sys.stdout.write(path + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
