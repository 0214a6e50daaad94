# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This doc fragment is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

from __future__ import annotations


class ModuleDocFragment:
    """The kubeconfig and kubectl command of this collection's modules that talk to the API server."""

    # The kubeconfig kubectl uses.
    DOCUMENTATION = r'''
options:
  kubeconfig:
    description:
      - The kubeconfig kubectl uses, the platform's admin kubeconfig - C(/etc/rancher/k3s/k3s.yaml) on k3s,
        C(/etc/rancher/rke2/rke2.yaml) on RKE2, C(/etc/kubernetes/admin.conf) on kubeadm
        (M(baremetal.k3s.k3s_info) RV(baremetal.k3s.k3s_info#module:admin_kubeconfig)).
      - When not given, kubectl's own default (C(k3s kubectl) reads C(/etc/rancher/k3s/k3s.yaml)).
    type: path
'''

    # The kubectl command, which the caller must give (the platform's).
    KUBECTL = r'''
options:
  kubectl:
    description:
      - The kubectl command, as a list of words - V([/usr/local/bin/k3s, kubectl]) on k3s,
        V([/var/lib/rancher/rke2/bin/kubectl]) on RKE2, V([/usr/bin/kubectl]) on kubeadm.
      - M(baremetal.k3s.k3s_info) returns the platform's as RV(baremetal.k3s.k3s_info#module:kubectl).
    type: list
    elements: str
    required: true
'''
