# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""Command-line flags as kube-scheduler reads them (cobra, on github.com/spf13/pflag).

What a static pod's container runs is its ``command`` followed by its ``args``: both reach the
process, so a flag counts wherever of the two it stands. pflag's rules, as kube-scheduler uses them:

* ``--name=value``; ``--name value`` for a flag that takes a value (the next word, whatever it
  starts with); ``--name`` alone for a boolean one;
* a flag with a one-letter shorthand is the same flag written ``-s=value``, ``-svalue`` or
  ``-s value``: kube-scheduler's verbosity ``v`` is ``--v=4``, ``-v=4``, ``-v4`` and ``-v 4``
  (component-base/logs registers it with ``fs.VarP(..., "v", "v", ...)``; pflag's
  ``PFlagFromGoFlag`` gives every one-letter Go flag the same shorthand). Several shorthands may
  share one dash (``-hv=2``);
* a name with ``_`` is the name with ``-`` (Kubernetes commands normalise flag names with
  ``cliflag.WordSepNormalizeFunc``);
* ``--`` ends the flags; a single dash before a long name (``-config``) is no long flag: pflag
  reads it as shorthands.

Which unknown flags take a value cannot be known without kube-scheduler's flag set: an unknown
``--name`` followed by a word that does not start with ``-`` is read as taking it (what kubeadm
and RKE2 never write: they write ``--name=value``).

Pure standard library; no Ansible import.
"""

from __future__ import annotations

# kube-scheduler's flags with a one-letter shorthand: {shorthand: flag name}
KUBE_SCHEDULER_SHORTHANDS = {'v': 'v', 'h': 'help'}
# Its flags that take no value (a boolean alone), among those a manifest may carry.
KUBE_SCHEDULER_BOOLS = frozenset(('help', 'version', 'leader-elect', 'profiling', 'contention-profiling',
                                  'permit-port-sharing', 'permit-address-sharing', 'log-text-split-stream',
                                  'log-json-split-stream'))
# Its flags that always take a value, among those this collection reads or writes.
KUBE_SCHEDULER_VALUES = frozenset(('config', 'kubeconfig', 'v', 'vmodule', 'tls-cert-file', 'tls-private-key-file',
                                   'authentication-kubeconfig', 'authorization-kubeconfig', 'bind-address',
                                   'secure-port', 'leader-elect-resource-namespace', 'client-ca-file',
                                   'requestheader-client-ca-file', 'write-config-to', 'feature-gates', 'logging-format'))


def normalize(name):
    """A flag name as Kubernetes normalises it (``_`` read as ``-``)."""
    return name.replace('_', '-')


class Flag:
    """One flag found: ``name`` (normalised, the long name for a shorthand), ``value`` (None for a boolean given
    alone), ``start``/``end`` (the words it spans, end included), ``text`` (as written)."""

    __slots__ = ('name', 'value', 'start', 'end', 'text')

    def __init__(self, name, value, start, end, text):
        self.name = name
        self.value = value
        self.start = start
        self.end = end
        self.text = text

    def __repr__(self):
        return 'Flag(%r, %r, %d, %d)' % (self.name, self.value, self.start, self.end)


def _takes_value(name, next_word, bools, values):
    if name in bools:
        return False
    if name in values:
        return True
    return next_word is not None and not next_word.startswith('-')


def parse(argv, shorthands=None, bools=KUBE_SCHEDULER_BOOLS, values=KUBE_SCHEDULER_VALUES):
    """The flags of ``argv`` (the words after the program) in order, as :class:`Flag`; words that are no flag
    (positional arguments, what follows ``--``, an unknown shorthand) are skipped."""
    shorthands = KUBE_SCHEDULER_SHORTHANDS if shorthands is None else shorthands
    words = [w if isinstance(w, str) else str(w) for w in argv]
    found = []
    i = 0
    while i < len(words):
        word = words[i]
        following = words[i + 1] if i + 1 < len(words) else None
        if word == '--':
            break
        if word.startswith('--') and len(word) > 2:
            name, eq, value = word[2:].partition('=')
            name = normalize(name)
            if eq:
                found.append(Flag(name, value, i, i, word))
            elif _takes_value(name, following, bools, values) and following is not None:
                found.append(Flag(name, following, i, i + 1, word + ' ' + following))
                i += 1
            else:
                found.append(Flag(name, None, i, i, word))
            i += 1
            continue
        if word.startswith('-') and len(word) > 1:
            i = _shorthands(words, i, shorthands, bools, found)
            continue
        i += 1
    return found


def _shorthands(words, i, shorthands, bools, found):
    """Read the shorthand word ``words[i]`` into ``found``; the index of the next word."""
    word = words[i]
    j = 1
    while j < len(word):
        name = shorthands.get(word[j])
        if name is None:
            break  # pflag: "unknown shorthand flag": the process refuses it; nothing more to read here
        if name in bools:
            found.append(Flag(name, None, i, i, word))
            j += 1
            continue
        rest = word[j + 1:]
        if rest.startswith('='):
            found.append(Flag(name, rest[1:], i, i, word))
        elif rest:
            found.append(Flag(name, rest, i, i, word))
        elif i + 1 < len(words):
            found.append(Flag(name, words[i + 1], i, i + 1, word + ' ' + words[i + 1]))
            return i + 2
        else:
            found.append(Flag(name, None, i, i, word))
        break
    return i + 1


def values(argv, name, **kwargs):
    """The values ``argv`` gives the flag ``name`` (any spelling), in order; the last one is the one that counts."""
    name = normalize(name.lstrip('-'))
    return [f.value for f in parse(argv, **kwargs) if f.name == name]


def last_value(argv, name, **kwargs):
    """The value of flag ``name`` that counts (the last one given), '' when it is not given."""
    given = [v for v in values(argv, name, **kwargs) if v is not None]
    return given[-1] if given else ''


def split(arg):
    """(name, value) of one flag written ``--name=value`` or ``--name`` (value None); None when ``arg`` is no long
    flag."""
    if not isinstance(arg, str) or not arg.startswith('--') or len(arg) < 3:
        return None
    name, eq, value = arg[2:].partition('=')
    return normalize(name), (value if eq else None)
