# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The logic of ``baremetal.k3s.k3s_token_file``: the cluster token a node joins with, in its own 0600 file.

A node that has joined keeps working with the token it has; writing another one over it (an
empty one, one rendered from a server that was not in the play, the token of another cluster)
breaks the join at the next restart. So the file is written when it is missing, left alone when
it holds the same token, and a *different* token is refused unless the caller asks to replace it.

"The same token" is k3s's own reading (``pkg/clientaccess/token.go``): a token is either a bare
password or ``K10<sha256 of the cluster CA>::<user>:<password>``; only the password authenticates,
and the CA hash, when both tokens carry one, names the cluster. ``K10abc::server:s3cret`` and
``s3cret`` are the same token. k3s trims surrounding white space when it reads the file.

No value is ever put in a message, a fact or a diff.
"""

from __future__ import annotations

import re

from ansible_collections.baremetal.k3s.plugins.module_utils import _secrets as secrets
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import Change, Plan, PlanError

TOKEN_PREFIX = 'K10'
CA_HASH_LENGTH = 64  # the hex digits of a sha256 (k3s's caHashLength = sha256.Size * 2)
_HEX = re.compile(r'[0-9a-fA-F]+')
_BOOTSTRAP = re.compile(r'[a-z0-9]{6}\.[a-z0-9]{16}')  # a kubeadm bootstrap token, which k3s also takes
_PRINTABLE = re.compile(r'[\x21-\x7e]+')  # what k3s's tokens are made of: printable ASCII, no space


class TokenPlan(Plan):
    """A Plan whose diff says which file changed and never what it holds."""

    def diff(self):
        return [{'before_header': c.path, 'after_header': c.path,
                 'before': '' if c.before is None else '(a token, hidden)\n',
                 'after': '' if c.after is None else '(a token, hidden)\n'}
                for c in self.changes]


class Token:
    """A k3s token as k3s parses it: ``password`` and, for a full token, ``ca_hash`` and ``user``."""

    __slots__ = ('ca_hash', 'user', 'password')

    def __init__(self, ca_hash, user, password):
        self.ca_hash = ca_hash
        self.user = user
        self.password = password

    def same_as(self, other):
        """True when a node holding ``self`` joins as one holding ``other`` would (same password, same cluster CA)."""
        if self.password != other.password:
            return False
        return not (self.ca_hash and other.ca_hash) or self.ca_hash.lower() == other.ca_hash.lower()


def parse(text, where):
    """The :class:`Token` in ``text`` (white space around it ignored) as k3s parses it; PlanError naming ``where``
    when k3s would refuse it.

    k3s's rules (``pkg/clientaccess/token.go``, ``parseToken``): a token that does not start with ``K10`` is a bare
    password; one that does is ``K10<CA hash>::<credentials>`` or ``K10<credentials>``, the CA hash empty or the 64 hex
    digits of a sha256, the credentials ``<user>:<password>`` with a password, or a bootstrap token
    (``[a-z0-9]{6}.[a-z0-9]{16}``). A ``K10...`` that is none of these is not a bare password to k3s: it refuses it and
    the node does not start.
    """
    token = text.strip()
    if not token:
        raise PlanError('%s is empty: a node cannot join a cluster without its token. Give the token (k3s_server_token, '
                        'k3s_agent_token), or run with the first server in the play so that its token is read from it.'
                        % where)
    if not _PRINTABLE.fullmatch(token):
        raise PlanError('%s is not a k3s token: it holds white space or control characters inside (k3s tokens are '
                        'printable ASCII without spaces). Check where it comes from.' % where)
    if not token.startswith(TOKEN_PREFIX):
        if _BOOTSTRAP.fullmatch(token):
            return Token('', token.split('.')[0], token)
        return Token('', '', token)
    rest = token[len(TOKEN_PREFIX):]
    ca_hash, sep, credentials = rest.partition('::')
    if not sep:
        ca_hash, credentials = '', rest
    full = ('%s starts with K10, so k3s reads it as a full token (K10<CA hash>::<user>:<password>), but it is not one: '
            % where)
    if ca_hash and len(ca_hash) != CA_HASH_LENGTH:
        raise PlanError(full + 'its CA hash has %d characters, not the %d hex digits of a sha256 (k3s: "invalid token CA '
                        'hash length"). Give the token as the server wrote it (<data-dir>/server/token) or the bare '
                        'password.' % (len(ca_hash), CA_HASH_LENGTH))
    if ca_hash and not _HEX.fullmatch(ca_hash):
        raise PlanError(full + 'its CA hash is not hex digits (a sha256 of the cluster CA). Give the token as the server '
                        'wrote it (<data-dir>/server/token) or the bare password.')
    if _BOOTSTRAP.fullmatch(credentials):
        return Token(ca_hash, credentials.split('.')[0], credentials)
    user, colon, password = credentials.partition(':')
    if not colon or not password:
        raise PlanError(full + '%s (k3s: "invalid token format"). Give the token as the server wrote it '
                        '(<data-dir>/server/token) or the bare password.'
                        % ('it has no "::" after the CA hash and no <user>:<password>' if not sep
                           else 'there is no <user>:<password> after "::"'))
    return Token(ca_hash, user, password)


def plan(view, params):
    """The Plan: create the file, leave it, or (with ``replace``) rewrite it; PlanError for a different token.

    ``state: absent`` removes the file when it holds a k3s token (the one given, when one is given).
    """
    path = params['path']
    if params.get('state', 'present') == 'absent':
        return plan_absent(view, params)
    new = parse(params['token'] or '', 'the token given')
    if view.isdir(path):
        raise PlanError('%s is a directory; give the path of the token file (token-file in k3s\'s config).' % path)
    before = view.read(path)
    facts = {'path': path, 'replaced': False}
    warnings = []
    after = (params['token'].strip() + '\n').encode('ascii')
    if before is None:
        return TokenPlan([Change(path, None, after, mode=0o600, owner='root', group='root', secret=True)], facts)
    try:
        old = parse(before.decode('ascii'), path)
    except (UnicodeDecodeError, PlanError):
        old = None
    if old is not None and old.same_as(new):
        return TokenPlan([], facts, _mode_warnings(view, path))
    if not params.get('replace'):
        what = 'no readable k3s token' if old is None else 'a different token (%s)' % _difference(old, new)
        raise PlanError('%s holds %s than the one this run would write, and the node may have joined its cluster with it. '
                        'Nothing was changed. If the node should now use the new token, set replace (the roles\' '
                        'k3s_server_token_replace / k3s_agent_token_replace) or remove the file; otherwise check the '
                        'token this run was given (k3s_server_token, k3s_agent_token, or the first server\'s).'
                        % (path, what), path=path)
    facts['replaced'] = True
    return TokenPlan([Change(path, before, after, mode=0o600, secret=True)], facts, warnings)


def plan_absent(view, params):
    """Remove the token file: only a file that holds a k3s token, and the one given when ``token`` is given.

    A file that holds something else is not a token file this module wrote: it is refused, and nothing is removed.
    """
    path = params['path']
    facts = {'path': path, 'replaced': False}
    if view.isdir(path):
        raise PlanError('%s is a directory, not a token file; nothing was removed. Give the path of the token file '
                        '(token-file in k3s\'s config).' % path, path=path)
    if view.islink(path):
        raise PlanError('%s is a symbolic link; a token file is removed only as a file of its own. Nothing was removed. '
                        'Remove the link by hand if it should go.' % path, path=path)
    before = view.read(path)
    if before is None:
        return TokenPlan([], facts)
    try:
        old = parse(before.decode('ascii'), path)
    except (UnicodeDecodeError, PlanError):
        raise PlanError('%s does not hold a k3s token, so it is not a token file this collection wrote; nothing was '
                        'removed. Remove it by hand if it should go.' % path, path=path)
    if params.get('token'):
        given = parse(params['token'], 'the token given')
        if not old.same_as(given):
            what = 'a different token (%s)' % _difference(old, given)
            raise PlanError('%s holds %s than the one given, so it is not the file this cluster\'s run wrote; nothing was '
                            'removed. Check the token given, or remove the file by hand.' % (path, what), path=path)
    return TokenPlan([Change(path, before, None, secret=True)], facts)


def _difference(old, new):
    if old.ca_hash and new.ca_hash and old.ca_hash.lower() != new.ca_hash.lower():
        return 'another cluster CA'
    return 'another password'


def _mode_warnings(view, path):
    """A warning for a token file, left as it is (it holds the same token), that others may read or that is not root's:
    a run that writes it makes it 0600 and root's."""
    st = view.stat(path)
    if st is None:
        return []
    mode = st.st_mode & 0o7777
    if mode & 0o077 or st.st_uid != 0:
        return ['%s has mode %04o and owner uid %d: it holds the cluster token; make it 0600 and root\'s (chmod 600 %s; '
                'chown root: %s).' % (path, mode, st.st_uid, path, path)]
    return []


# The options of module baremetal.k3s.k3s_token_file (also the token_file part of baremetal.k3s.k3s_files).
ARGUMENT_SPEC = dict(
    path=dict(type='path', required=True),
    token=dict(type='str', no_log=True),
    replace=dict(type='bool', default=False),
    state=dict(type='str', default='present', choices=['present', 'absent']),
)
REQUIRED_IF = [('state', 'present', ['token'])]


def add_secrets(params, found):
    """The token, as given, into ``found`` (no_log_values): a caller that takes these options inside another option
    (k3s_files) has no no_log of the spec to mask it."""
    secrets.add(found, [params.get('token')])
