# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# This module_utils is PRIVATE and should only be used by this collection. Breaking changes can occur any time.

"""The names of the collection's variables, for the preflight's check of an inventory's spelling.

A variable whose name starts with one of the roles' prefixes (``PREFIXES``) but is none of ``KNOWN`` is
taken by no role and no playbook: Ansible ignores it in silence, so a misspelt option
(``k3s_agent_confg``) would change nothing. ``unknown(names)`` names each with the nearest known
name. ``KNOWN`` is every option of the roles' ``meta/argument_specs.yml`` and every variable the
playbooks and roles use under those prefixes; tests/unit/plugins/module_utils/test__variables.py
fails when it and those files differ (its message gives the names to add or remove). Pure standard
library; no Ansible import.
"""

from __future__ import annotations

import difflib

PREFIXES = ('k3s_server_', 'k3s_agent_', 'k3s_user_', 'k3s_backup_', 'scheduler_extender_', 'k3s_upgrade_', 'k3s_reset_')

KNOWN = frozenset((
    'k3s_agent_bin_dir', 'k3s_agent_binary_sha256', 'k3s_agent_binary_src', 'k3s_agent_binary_url',
    'k3s_agent_checksums_url', 'k3s_agent_config', 'k3s_agent_config_name', 'k3s_agent_env', 'k3s_agent_exec_args',
    'k3s_agent_gpu', 'k3s_agent_gpu_label', 'k3s_agent_images_list', 'k3s_agent_images_sha256', 'k3s_agent_images_src',
    'k3s_agent_min_cpus', 'k3s_agent_min_disk_mb', 'k3s_agent_min_memory_mb', 'k3s_agent_preflight',
    'k3s_agent_ready_timeout', 'k3s_agent_registries', 'k3s_agent_registries_take_over', 'k3s_agent_serial',
    'k3s_agent_server_group', 'k3s_agent_server_url', 'k3s_agent_systemd_dir', 'k3s_agent_token',
    'k3s_agent_token_file', 'k3s_agent_token_replace', 'k3s_backup_agent_group', 'k3s_backup_dir', 'k3s_backup_fetch',
    'k3s_backup_fetch_dir', 'k3s_backup_include_storage', 'k3s_backup_keep', 'k3s_backup_nodes_report',
    'k3s_backup_nodes_summary', 'k3s_backup_ready', 'k3s_backup_ready_timeout', 'k3s_backup_rejoined',
    'k3s_backup_reset_timeout', 'k3s_backup_restart_unknown_nodes', 'k3s_backup_restore_archive',
    'k3s_backup_restore_confirm', 'k3s_backup_restore_from_controller', 'k3s_backup_restore_sha256',
    'k3s_backup_restored', 'k3s_backup_result', 'k3s_backup_server_group', 'k3s_backup_service',
    'k3s_backup_unknown_nodes', 'k3s_reset_api_host', 'k3s_reset_api_kubectl', 'k3s_reset_confirm', 'k3s_reset_data',
    'k3s_reset_drain', 'k3s_reset_drain_timeout', 'k3s_reset_keep_binary', 'k3s_reset_last_server',
    'k3s_server_bin_dir', 'k3s_server_binary_sha256', 'k3s_server_binary_src', 'k3s_server_binary_url',
    'k3s_server_checksums_url', 'k3s_server_cluster_init', 'k3s_server_config', 'k3s_server_config_name',
    'k3s_server_env', 'k3s_server_exec_args', 'k3s_server_extended_resource_toleration', 'k3s_server_group',
    'k3s_server_images_list', 'k3s_server_images_sha256', 'k3s_server_images_src', 'k3s_server_join_discard_datastore',
    'k3s_server_join_url', 'k3s_server_manifests', 'k3s_server_min_cpus', 'k3s_server_min_disk_mb',
    'k3s_server_min_memory_mb', 'k3s_server_pod_security', 'k3s_server_pod_security_file', 'k3s_server_preflight',
    'k3s_server_ready_timeout', 'k3s_server_registries', 'k3s_server_rollback',
    'k3s_server_registries_take_over', 'k3s_server_systemd_dir', 'k3s_server_token', 'k3s_server_token_file',
    'k3s_server_token_replace', 'k3s_upgrade_agent_batch', 'k3s_upgrade_allow_downgrade',
    'k3s_upgrade_allow_minor_skip', 'k3s_upgrade_binary_sha256', 'k3s_upgrade_binary_src', 'k3s_upgrade_binary_url',
    'k3s_upgrade_checksums_url', 'k3s_upgrade_convert_scheduler_config', 'k3s_upgrade_drain',
    'k3s_upgrade_drain_timeout', 'k3s_upgrade_images_list', 'k3s_upgrade_ready_timeout', 'k3s_user_admin_kubeconfig',
    'k3s_user_cluster_name', 'k3s_user_cluster_role', 'k3s_user_context', 'k3s_user_country', 'k3s_user_csr_name',
    'k3s_user_expiration_seconds', 'k3s_user_groups', 'k3s_user_key_host', 'k3s_user_key_host_become',
    'k3s_user_kube_dir', 'k3s_user_kubeconfig', 'k3s_user_kubectl', 'k3s_user_locality', 'k3s_user_name',
    'k3s_user_platform', 'k3s_user_renew', 'k3s_user_renew_days', 'k3s_user_server_ca_path',
    'k3s_user_server_client_ca_path', 'k3s_user_server_url', 'k3s_user_service', 'k3s_user_sign_timeout',
    'k3s_user_state', 'scheduler_extender_admin_kubeconfig', 'scheduler_extender_backup_dir',
    'scheduler_extender_bind_verb', 'scheduler_extender_config_path', 'scheduler_extender_convert_api_version',
    'scheduler_extender_drift', 'scheduler_extender_enable_https', 'scheduler_extender_extenders',
    'scheduler_extender_filter_verb', 'scheduler_extender_finish_later', 'scheduler_extender_http_timeout',
    'scheduler_extender_ignorable', 'scheduler_extender_kubeadm_config', 'scheduler_extender_kubeconfig',
    'scheduler_extender_kubectl', 'scheduler_extender_kubernetes_version', 'scheduler_extender_lease_timeout',
    'scheduler_extender_managed_resources',
    'scheduler_extender_manifest_path', 'scheduler_extender_method', 'scheduler_extender_name',
    'scheduler_extender_node_cache_capable', 'scheduler_extender_plan', 'scheduler_extender_platform',
    'scheduler_extender_preempt_verb', 'scheduler_extender_prioritize_verb', 'scheduler_extender_probes',
    'scheduler_extender_publish_readiness', 'scheduler_extender_readiness_configmap',
    'scheduler_extender_readiness_namespace', 'scheduler_extender_readiness_timeout',
    'scheduler_extender_require_extender', 'scheduler_extender_retrigger_attempts', 'scheduler_extender_serial',
    'scheduler_extender_service', 'scheduler_extender_state', 'scheduler_extender_tls_config',
    'scheduler_extender_update_timeout', 'scheduler_extender_url', 'scheduler_extender_weight',
))


def unknown(names):
    """[{name, nearest}] for each of ``names`` (sorted, once) that has a role's prefix and is not KNOWN.

    ``nearest`` is the known name of the same prefix whose rest is closest to its rest (difflib's ratio, at least
    0.6: the shared prefix alone makes no name near), or '' when none is near.
    """
    out = []
    for name in sorted(set(names)):
        if not isinstance(name, str) or not name.startswith(PREFIXES) or name in KNOWN:
            continue
        prefix = max((p for p in PREFIXES if name.startswith(p)), key=len)
        rests = [known[len(prefix):] for known in KNOWN if known.startswith(prefix)]
        near = difflib.get_close_matches(name[len(prefix):], rests, n=1, cutoff=0.6)
        out.append({'name': name, 'nearest': prefix + near[0] if near else ''})
    return out


def warning(found):
    """One warning for what ``unknown`` found ('' for nothing)."""
    if not found:
        return ''
    return ('%s: no role or playbook of baremetal.k3s has %s, so Ansible ignores %s in silence; check the spelling'
            % ('; '.join('%s (did you mean %s?)' % (f['name'], f['nearest']) if f['nearest'] else f['name'] for f in found),
               'this variable' if len(found) == 1 else 'these variables', 'it' if len(found) == 1 else 'them'))
