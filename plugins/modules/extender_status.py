#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026, baremetal.k3s contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r'''
module: extender_status
short_description: Tell whether the kube-scheduler restarted since a change and whether its extender answers
version_added: 0.1.0
description:
  - Reports, for one node, whether the kube-scheduler has started at or after the time of a
    change (O(since)), whether the scheduler itself is healthy, and whether the scheduler
    extender answers a valid request the way the scheduler sends it.
  - 'Restart time: on k3s the scheduler runs inside the k3s process, so the service''s start
    is used: C(systemctl show) C(ExecMainStartTimestampMonotonic) moved to the wall clock with
    the node''s current C(CLOCK_REALTIME - CLOCK_MONOTONIC) offset (time zones, DST and clock
    changes cannot fool it), or, under openrc, the start of the process C(supervise-daemon)
    runs (C(/proc/<pid>/stat) plus the boot time). On RKE2 and kubeadm the start of the
    C(kube-scheduler) process is used, or the static-pod container''s start from C(crictl)
    when no such process is visible, or, when neither runs right now (the kubelet holds a
    crashing container back for 10 s, 20 s, 40 s, ...), the last start the kubelet logged
    under C(/var/log/pods/kube-system_kube-scheduler-*).'
  - k3s tells systemd it is ready before its scheduler starts, and a broken scheduler config
    stops k3s seconds later. The scheduler's own health endpoint is therefore part of RV(ready).
  - With O(wait=true) the module polls every O(interval) seconds until ready, until
    O(update_timeout) passes without the restart being seen, until a crash loop is seen (see
    below), or until O(timeout). It returns (does not fail) when not ready; the caller decides
    to restart again or roll back.
  - 'Crash loop: k3s is run with C(Restart=always) (systemd) or respawned by C(supervise-daemon)
    (openrc), so a scheduler config that kills k3s makes it exit and start again every few
    seconds; each start would look like a fresh restart. The first look whose start is at or
    after the change is the baseline: the restart that applied the change happens before it and
    is never counted. From then on an exit is counted for each automatic restart (systemd
    C(NRestarts) above its baseline value; at the baseline all but one of its automatic
    restarts, since a manual start resets C(NRestarts)), for each new main pid (openrc: the child
    of C(supervise-daemon); RKE2/kubeadm: also each new start of the kube-scheduler container, which the kubelet numbers
    in its C(/var/log/pods) file names, so a start that exits between two looks still counts), and
    for a main process that is gone while the manager restarts it (C(SubState=auto-restart),
    C(failed), openrc C(crashed)). Two or more exits while the scheduler health endpoint has
    never answered C(ok) since the baseline is a crash loop: RV(crash_loop=true),
    RV(ready=false), the service''s last log lines in RV(journal), and with O(wait=true) the
    module returns at once. One exit, or a slow start that never exits, is not a crash loop;
    once the scheduler answered healthy there is none. A single look (O(wait=false)) sees a
    crash loop only from the counter and the state (for example C(NRestarts=2) in
    C(auto-restart) after a start past the change).'
  - Read-only; never changes the node.
  - 'Proxy: the kube-scheduler calls its extender with Go''s HTTP client, which takes a proxy from its
    own environment (C(HTTPS_PROXY)/C(https_proxy) for https://, C(HTTP_PROXY)/C(http_proxy) for http://,
    except for C(localhost), loopback addresses and the hosts C(NO_PROXY)/C(no_proxy) names: C(*), domain
    suffixes, C(.domain), IP addresses, CIDRs, each with an optional port). The probe reads the
    environment of the scheduler''s process (the k3s or RKE2 server service''s main process on k3s, the
    C(kube-scheduler) process on RKE2 and kubeadm; C(/proc/<pid>/environ), which holds the unit''s
    C(Environment) and C(EnvironmentFile) values), makes the same decision and goes through the same proxy
    (a C(CONNECT) tunnel for https://, an absolute-URI request for http://). RV(extender_proxy) names it.
    The module''s own environment is not used.'
  - 'Redirects: Go''s HTTP client follows them, and so does the probe - C(307) and C(308) with the same method and
    body, C(301), C(302) and C(303) as a C(GET) without a body, no request after the tenth one that redirects, each
    request through the proxy its own URL gets from the scheduler''s environment, and O(http_timeout) for the whole
    exchange. An extender behind a redirect is judged as the scheduler reaches it.'
  - 'Progress: with O(wait=true) the action plugin of the same name runs the wait in slices of
    20 seconds (O(slice_seconds), O(resume)) and prints after each one what the node waits for and for
    how long, for example C(server-1: waiting 40 s of 1200 s for the extender to answer (...)). The
    result is the same as one call''s: RV(elapsed) and RV(attempts) count the whole wait.'
author:
  - baremetal.k3s contributors (@baremetal)
extends_documentation_fragment:
  - baremetal.k3s._attributes
  - baremetal.k3s._attributes.INFO_MODULE
options:
  platform:
    description:
      - Where the kube-scheduler runs.
      - V(k3s) inside the k3s service; V(rke2) and V(kubeadm) as a static pod.
    type: str
    choices: [k3s, rke2, kubeadm]
    default: k3s
  init:
    description:
      - The node's service manager.
      - V(auto) picks V(openrc) when C(/sbin/openrc-run) exists and systemd is not running
        (no C(/run/systemd/system)), else V(systemd).
    type: str
    choices: [auto, systemd, openrc]
    default: auto
  service:
    description:
      - The service to check.
      - Defaults to V(k3s) for O(platform=k3s), V(rke2-server) for V(rke2) and V(kubelet) for V(kubeadm).
    type: str
  since:
    description:
      - Time of the change the scheduler must have restarted after.
      - Epoch seconds, or an ISO 8601 date and time (C(2026-01-13T10:00:01Z), C(2026-01-13T11:00:01+01:00)).
        A time without an offset is read as UTC.
      - Defaults to the newest modification time of O(config_path) and O(flag_paths) (those that exist).
      - When neither this nor O(config_path) nor O(flag_paths) is given, no restart is expected
        and RV(restarted) is V(null).
    type: str
  config_path:
    description:
      - The scheduler configuration file (KubeSchedulerConfiguration) the change wrote.
      - Its modification time is a candidate for the default O(since).
      - On RKE2 and kubeadm it also tells the main kube-scheduler process (C(--config=<config_path>))
        from secondary schedulers.
    type: path
  flag_paths:
    description:
      - Unit files, drop-ins, init scripts or k3s config files that carry the scheduler flag.
      - Their newest modification time (with O(config_path)'s) is the default O(since).
    type: list
    elements: path
    default: []
  url:
    description:
      - The extender's C(urlPrefix), V(http://) or V(https://), e.g. V(http://127.0.0.1:8889).
      - Required unless O(require_extender=false).
    type: str
  verb:
    description:
      - The verb to probe; the request goes to C(<url>/<verb>).
      - V(bind) sends an C(ExtenderBindingArgs) and V(preempt) an C(ExtenderPreemptionArgs); any
        other verb (V(filter), V(prioritize), or a custom name) sends an C(ExtenderArgs) for
        this node with a minimal pod.
    type: str
    default: filter
  ca_file:
    description: CA bundle that signed the extender's certificate (C(tlsConfig.caFile)).
    type: path
  cert_file:
    description: Client certificate for the extender (C(tlsConfig.certFile)).
    type: path
  key_file:
    description: Key of O(cert_file) (C(tlsConfig.keyFile)).
    type: path
  insecure:
    description: Do not verify the extender's certificate (C(tlsConfig.insecure)).
    type: bool
    default: false
  server_name:
    description:
      - The name sent in TLS (SNI) and verified in the extender's certificate instead of the host of O(url)
        (C(tlsConfig.serverName)).
    type: str
  ca_data:
    description: PEM text of the CA bundle that signed the extender's certificate (C(tlsConfig.caData)), with or instead of O(ca_file).
    type: str
  cert_data:
    description: PEM text of the client certificate (C(tlsConfig.certData)), instead of O(cert_file).
    type: str
  key_data:
    description: PEM text of the client certificate's key (C(tlsConfig.keyData)), instead of O(key_file).
    type: str
  node_cache_capable:
    description: Send C(NodeNames) instead of a C(NodeList), as the scheduler does for a C(nodeCacheCapable) extender.
    type: bool
    default: false
  http_timeout:
    description:
      - How long to wait for one answer of the extender or of the scheduler health endpoint, in
        seconds or as a duration like the scheduler config's C(httpTimeout) (V(15s), V(500ms), V(1m)).
      - Give the extender's C(httpTimeout) to judge it as the scheduler does; role P(baremetal.k3s.scheduler_extender#role)
        passes its C(scheduler_extender_http_timeout) here.
    type: raw
    default: 5
  scheduler_health_url:
    description:
      - The kube-scheduler health endpoint.
      - Its TLS certificate is verified against O(scheduler_ca_file), host name included, when that is given; else it
        is not verified (a scheduler that is given no certificate serves a self-signed one of its own).
      - An empty string disables the check; RV(scheduler_healthy) is then V(null) and does not count toward RV(ready).
    type: str
    default: https://127.0.0.1:10259/healthz
  scheduler_ca_file:
    description:
      - The CA that signs the certificate the scheduler serves on O(scheduler_health_url). With it the health check
        verifies that certificate and the host name of the URL in it; a certificate it does not verify makes the
        scheduler unhealthy (RV(scheduler_health_error) says why).
      - k3s 1.30.13, 1.31.9, 1.32.5, 1.33.1 and later serve a certificate signed by the server CA,
        C(<data-dir>/server/tls/server-ca.crt); M(baremetal.k3s.k3s_info) returns it as
        RV(baremetal.k3s.k3s_info#module:scheduler_ca_file) where the node shows it, and role
        P(baremetal.k3s.scheduler_extender#role) passes it here.
      - Not given - the health check does not verify the certificate.
    type: path
  extenders:
    description:
      - Several extenders to probe, each with its own URL, verb and TLS settings, instead of O(url) (mutually exclusive
        with it; an empty list counts as not given). Each is probed on every look, through the proxy the scheduler's
        environment gives for its URL.
      - RV(ready) needs every extender whose C(required) is true to answer (with O(require_extender)); RV(extenders)
        says per extender whether it answers, and while waiting RV(msg) and the progress lines name the ones still
        waited for.
    type: list
    elements: dict
    suboptions:
      name:
        description: The extender's name, as the results and messages show it.
        type: str
        required: true
      url:
        description: Its C(urlPrefix), V(http://) or V(https://).
        type: str
        required: true
      verb:
        description: The verb to probe, as O(verb).
        type: str
        default: filter
      required:
        description: Whether RV(ready) needs this one to answer.
        type: bool
        default: true
      http_timeout:
        description: Its C(httpTimeout), seconds or a duration; not given - O(http_timeout).
        type: raw
      node_cache_capable:
        description: As O(node_cache_capable), for this extender.
        type: bool
        default: false
      ca_file:
        description: As O(ca_file), for this extender.
        type: path
      cert_file:
        description: As O(cert_file), for this extender.
        type: path
      key_file:
        description: As O(key_file), for this extender.
        type: path
      insecure:
        description: As O(insecure), for this extender.
        type: bool
        default: false
      server_name:
        description: As O(server_name), for this extender.
        type: str
      ca_data:
        description: As O(ca_data), for this extender.
        type: str
      cert_data:
        description: As O(cert_data), for this extender.
        type: str
      key_data:
        description: As O(key_data), for this extender.
        type: str
  require_extender:
    description: Whether RV(ready) needs the extender (with O(extenders), each required one) to answer. With V(false), O(url) is optional.
    type: bool
    default: true
  wait:
    description: Poll until ready, or until a timeout, instead of reporting once.
    type: bool
    default: false
  update_timeout:
    description:
      - With O(wait=true), seconds to see the restart (a start at or after O(since)).
      - If it is not seen in time the module returns with RV(ready=false) and says so in RV(msg).
    type: float
    default: 20
  timeout:
    description: With O(wait=true), seconds until everything must be ready.
    type: float
    default: 1200
  interval:
    description:
      - With O(wait=true), seconds between two checks. Each check is local to the node (the service manager, the
        scheduler's health endpoint, one request to the extender), so a short interval costs little and ends the
        wait soon after the scheduler is ready.
    type: float
    default: 0.5
  journal_lines:
    description:
      - How many of the service's last log lines to return in RV(journal) when it is not active
        (C(journalctl) under systemd, C(/var/log/<service>.log) under openrc). V(0) returns none.
    type: int
    default: 20
  slice_seconds:
    description:
      - With O(wait=true), return after about this many seconds when the wait is still going, with
        RV(waiting) telling what it waits for; a next call with O(resume=RV(waiting)) carries it on.
      - The action plugin of the same name does this by itself every 20 seconds and prints a line
        on each return, so that a long wait shows its progress; playbooks need not set it.
      - V(0) waits in one call until ready, a crash loop, or a timeout.
    type: float
    default: 0
  resume:
    description:
      - RV(waiting) of an earlier call that O(slice_seconds) ended, with the seconds already waited
        (C(elapsed), counted against O(update_timeout) and O(timeout)), the looks made
        (C(attempts)) and what the crash-loop rule saw so far (C(watch)).
      - Set by the action plugin of the same name; playbooks need not set it.
    type: dict
  give_back:
    description:
      - Once the scheduler is proven ready (RV(ready)), give back the lease a writing module took (as
        M(baremetal.k3s.node_lease) does with O(baremetal.k3s.node_lease#module:state=absent)) and drop the rollback
        copies of O(give_back.discard) first, in this same module run - the end of a proven change without one more
        module run.
      - Nothing is given back when the scheduler is not ready, in check mode, or before the last slice of a wait;
        the caller gives the lease back then (RV(given_back) is not returned).
      - When the give-back itself fails (a copy that is not a regular file), the result stays as the wait found it,
        with a warning and the lease still held, for the caller's own give-back to report.
    type: dict
    suboptions:
      name:
        description: The lease, for example V(scheduler_extender).
        type: str
        required: true
      owner:
        description: Its owner, as the module that took it returned it.
        type: str
        required: true
      discard:
        description: The writing modules' C(files) (V([{path, action, backup_file}])) whose rollback copies are dropped.
        type: list
        elements: dict
        default: []
  publish:
    description:
      - Once the scheduler is proven ready (RV(ready)), publish this node's entry in the readiness ConfigMap CSI
        Baremetal's extender reads (RV(node_name), RV(kube_scheduler), RV(restarted)), as
        M(baremetal.k3s.readiness_configmap) does, in this same module run, after O(give_back).
      - Nothing is published when the scheduler is not ready, in check mode, or before the last slice of a wait.
        When the write fails (the API refuses it, the namespace is missing, kubectl is not there), the result stays as
        the wait found it, with a warning and no RV(published), for the caller to publish the entry itself; a
        failed write never turns a proven scheduler into a failed wait.
    type: dict
    suboptions:
      kubectl:
        description: The platform's kubectl as a command (k3s_info returns it as C(kubectl)).
        type: list
        elements: str
        required: true
      kubeconfig:
        description: The administrator's kubeconfig (k3s_info returns it as C(admin_kubeconfig)).
        type: path
      name:
        description: The ConfigMap, for example V(extender-readiness).
        type: str
        required: true
      namespace:
        description: Its namespace, for example V(default).
        type: str
        required: true
      state:
        description: V(present) writes this node's entry, V(absent) removes it.
        type: str
        choices: [present, absent]
        default: present
notes:
  - The node name is the host name in lower case, as k3s and the kubelet use by default; a
    C(--node-name) override is not read.
seealso:
  - module: baremetal.k3s.scheduler_config
  - module: baremetal.k3s.k3s_service_arg
'''

EXAMPLES = r'''
- name: Wait until k3s restarted with our scheduler config and the extender answers
  baremetal.k3s.extender_status:
    platform: k3s
    config_path: /etc/rancher/k3s/kube-scheduler/config.yaml
    flag_paths:
      - /etc/systemd/system/k3s.service
    url: http://127.0.0.1:8889
    wait: true
  register: scheduler_extender_status

- name: Restart k3s again when the restart was not seen
  ansible.builtin.systemd_service:
    name: k3s
    state: restarted
  when: scheduler_extender_status.restarted is false

- name: Report a crash loop (k3s keeps exiting with the new config), then roll back
  ansible.builtin.debug:
    msg: "{{ scheduler_extender_status.msg }}"
  when: scheduler_extender_status.crash_loop

- name: One look at an RKE2 server, extender over HTTPS with a client certificate
  baremetal.k3s.extender_status:
    platform: rke2
    since: "2026-01-13T10:00:01Z"
    config_path: /etc/rancher/rke2/kube-scheduler/config.yaml
    url: https://127.0.0.1:8889
    verb: filter
    ca_file: /etc/rancher/rke2/extender-ca.crt
    cert_file: /etc/rancher/rke2/extender-client.crt
    key_file: /etc/rancher/rke2/extender-client.key

- name: Wait for two extenders, each with its own URL and verb
  baremetal.k3s.extender_status:
    config_path: /etc/rancher/k3s/kube-scheduler/config.yaml
    extenders:
      - name: csi-baremetal
        url: http://127.0.0.1:8889
      - name: gpu-share
        url: https://127.0.0.1:12345
        verb: filter
        ca_file: /etc/rancher/k3s/gpu-share-ca.crt
    wait: true

- name: Only the scheduler's side (no extender yet)
  baremetal.k3s.extender_status:
    require_extender: false
    since: "{{ ansible_date_time.epoch }}"

- name: Read which CA signs the scheduler's serving certificate (k3s 1.31.9 and later)
  baremetal.k3s.k3s_info:
  register: node_info

- name: Verify the scheduler's health endpoint against it
  baremetal.k3s.extender_status:
    url: http://127.0.0.1:8889
    scheduler_ca_file: "{{ node_info.scheduler_ca_file | default(omit, true) }}"
'''

RETURN = r'''
given_back:
  description:
    - The lease given back and the copies dropped (O(give_back)), as M(baremetal.k3s.node_lease) returns them
      (C(owner), C(lease_file), C(files), C(backups_removed)); the task is changed when copies were dropped.
  returned: when O(give_back) is given and the scheduler is ready
  type: dict
published:
  description:
    - This node's entry published in the readiness ConfigMap (O(publish)), as M(baremetal.k3s.readiness_configmap)
      returns it (C(changed), C(nodes), C(attempts)); the task is changed when the entry changed.
  returned: when O(publish) is given, the scheduler is ready and the write succeeded
  type: dict
ready:
  description: Service active, restarted since the change, scheduler healthy and extender reachable (each when it applies).
  returned: always
  type: bool
  sample: true
restarted:
  description: The scheduler started at or after RV(changed_at); V(null) when there is no change time or no start time.
  returned: always
  type: bool
  sample: true
scheduler_started_at:
  description: When the scheduler (k3s - the k3s process) last started, ISO 8601 in UTC.
  returned: always
  type: str
  sample: "2026-01-13T10:00:03.412207Z"
started_at_source:
  description: Where RV(scheduler_started_at) comes from.
  returned: always
  type: str
  sample: ExecMainStartTimestampMonotonic
changed_at:
  description: The change time used (O(since) or the newest file modification time), ISO 8601 in UTC.
  returned: always
  type: str
  sample: "2026-01-13T10:00:01.000000Z"
scheduler_healthy:
  description: The kube-scheduler health endpoint answered C(ok); V(null) when O(scheduler_health_url) is empty.
  returned: always
  type: bool
  sample: true
scheduler_tls_verified:
  description:
    - The scheduler's health endpoint answered over TLS whose certificate was verified against O(scheduler_ca_file),
      host name included, on the last look.
    - V(false) when no O(scheduler_ca_file) was given (the probe does not verify) or no answer came (a certificate
      that does not verify is named in RV(scheduler_health_error)); V(null) when O(scheduler_health_url) is empty.
  returned: always
  type: bool
  sample: true
scheduler_health_error:
  description: Why the health endpoint did not answer C(ok).
  returned: always
  type: str
  sample: "connection refused (is the extender running?)"
extender_reachable:
  description: The extender answered HTTP 200 with a JSON body of the right shape and an empty C(Error) (for V(bind) the C(Error) is tolerated).
  returned: always
  type: bool
  sample: true
extender_http_status:
  description: HTTP status of the extender's answer; V(null) when none came.
  returned: always
  type: int
  sample: 200
extenders:
  description:
    - Each extender probed on the last look (O(extenders), or the one O(url) with its URL as name), in order.
    - RV(extender_reachable) is true when all of them answer; RV(extender_error) names those that do not.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The extender's name.
      type: str
    url:
      description: Its URL.
      type: str
    verb:
      description: The verb probed.
      type: str
    required:
      description: Whether RV(ready) needs it.
      type: bool
    answering:
      description: It answered as RV(extender_reachable) describes.
      type: bool
    http_status:
      description: The HTTP status of its answer; V(null) when none came.
      type: int
    error:
      description: What went wrong; empty when it answers.
      type: str
    proxy:
      description: The proxy the probe went through; V(null) for a direct connection.
      type: str
    msg:
      description: C(answering), or the verb's URL and what went wrong.
      type: str
  sample: [{name: csi-baremetal, url: "http://127.0.0.1:8889", verb: filter, required: true, answering: true,
            http_status: 200, error: "", proxy: null, msg: answering}]
extender_proxy:
  description:
    - The proxy the probe went through, as the scheduler's environment gives it to Go's HTTP client, without user
      name and password; V(null) for a direct connection (no proxy variable, C(NO_PROXY), loopback, or no O(url)).
    - When the extender did not answer through it, RV(msg) says so.
  returned: always
  type: str
  sample: http://proxy.example.com:3128
extender_error:
  description: What went wrong with the extender (timeout, refused, TLS, non-200 body, the C(Error) field).
  returned: always
  type: str
  sample: "timeout: no answer within 5.0 s"
active_state:
  description: The service's state in systemd's words (C(active), C(activating), C(failed), C(inactive)...), also under openrc.
  returned: always
  type: str
  sample: active
sub_state:
  description: The service's sub-state (C(running), C(auto-restart)...).
  returned: always
  type: str
  sample: running
main_pid:
  description: The service's main process.
  returned: always
  type: int
  sample: 2211
n_restarts:
  description:
    - Automatic restarts counted by systemd (C(NRestarts), reset by a manual start) or supervise-daemon (C(start_count)).
    - When the service manager keeps no counter (openrc's C(supervise-daemon) usually), the respawns this
      module saw after the first start past the change (new main pids); V(null) before that start is seen.
  returned: always
  type: int
  sample: 0
crash_loop:
  description:
    - The service exited at least twice since the first start past the change (the restart that applied
      the change not counted) and the scheduler never answered healthy since; see the description for the rule.
    - RV(ready) is then V(false), RV(msg) says how many exits were seen, and RV(journal) holds the last log lines.
  returned: always
  type: bool
  sample: true
node_name:
  description: The node name (host name in lower case).
  returned: always
  type: str
  sample: server-1
kube_scheduler:
  description: The scheduler's name for the readiness ConfigMap, C(<service>@<node>) on k3s, C(kube-scheduler-<node>) for static pods.
  returned: always
  type: str
  sample: k3s@server-1
platform:
  description: The platform checked.
  returned: always
  type: str
  sample: k3s
init:
  description: The service manager used (V(systemd) or V(openrc)).
  returned: always
  type: str
  sample: systemd
service:
  description: The service checked.
  returned: always
  type: str
  sample: k3s
elapsed:
  description: Seconds spent, waits included.
  returned: always
  type: float
  sample: 12.4
attempts:
  description: How many times the module looked (V(1) without O(wait)); more than one means it waited through a state that was not ready.
  returned: always
  type: int
  sample: 3
msg:
  description: A one-line summary; what is missing when not ready.
  returned: always
  type: str
  sample: >-
    crash loop: k3s exited 2 times since the change at 2026-01-13T10:00:00.000000Z and its scheduler never
    became healthy; now: service k3s is activating (auto-restart); kube-scheduler health
    (https://127.0.0.1:10259/healthz): connection refused
waiting:
  description:
    - The wait is still going; O(slice_seconds) ended this call. C(for) says what it waits for, C(limit) its
      time limit in seconds, C(elapsed) and C(attempts) the seconds and looks so far; give it all back as
      O(resume) to carry the wait on.
    - The action plugin of the same name consumes it; a task's result never has it.
  returned: when O(slice_seconds) ended the call before the wait ended
  type: dict
  sample: {"for": "the extender to answer", "limit": 1200.0, "elapsed": 20.4, "attempts": 40, "watch": {}}
journal:
  description: The service's last log lines (C(journalctl) under systemd, C(/var/log/<service>.log) under openrc), when it is not active or in a crash loop.
  returned: when the service is not active or RV(crash_loop) is true
  type: list
  elements: str
  sample: ["2026-01-13T10:00:05+0000 node k3s[2211]: E0113 scheduler config invalid"]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.baremetal.k3s.plugins.module_utils import _extender_status as extender_status
from ansible_collections.baremetal.k3s.plugins.module_utils import _io
from ansible_collections.baremetal.k3s.plugins.module_utils import _kubectl
from ansible_collections.baremetal.k3s.plugins.module_utils import _platform
from ansible_collections.baremetal.k3s.plugins.module_utils._plan import PlanError

ARGUMENT_SPEC = dict(
    platform=dict(type='str', default='k3s', choices=_platform.names()),
    init=dict(type='str', default='auto', choices=['auto', 'systemd', 'openrc']),
    service=dict(type='str'),
    since=dict(type='str'),
    config_path=dict(type='path'),
    flag_paths=dict(type='list', elements='path', default=[]),
    url=dict(type='str'),
    verb=dict(type='str', default='filter'),
    ca_file=dict(type='path'),
    cert_file=dict(type='path'),
    key_file=dict(type='path', no_log=False),
    insecure=dict(type='bool', default=False),
    server_name=dict(type='str'),
    ca_data=dict(type='str'),
    cert_data=dict(type='str'),
    key_data=dict(type='str', no_log=True),
    node_cache_capable=dict(type='bool', default=False),
    http_timeout=dict(type='raw', default=5),
    scheduler_health_url=dict(type='str', default='https://127.0.0.1:10259/healthz'),
    scheduler_ca_file=dict(type='path'),
    require_extender=dict(type='bool', default=True),
    wait=dict(type='bool', default=False),
    update_timeout=dict(type='float', default=20),
    timeout=dict(type='float', default=1200),
    interval=dict(type='float', default=0.5),
    journal_lines=dict(type='int', default=20),
    slice_seconds=dict(type='float', default=0),
    resume=dict(type='dict'),
    give_back=dict(type='dict', options=dict(
        name=dict(type='str', required=True),
        owner=dict(type='str', required=True, no_log=False),
        discard=dict(type='list', elements='dict', default=[]),
    )),
    publish=dict(type='dict', options=dict(
        _kubectl.OPTIONS,
        name=dict(type='str', required=True),
        namespace=dict(type='str', required=True),
        state=dict(type='str', default='present', choices=['present', 'absent']),
    )),
    extenders=dict(type='list', elements='dict', options=dict(
        name=dict(type='str', required=True),
        url=dict(type='str', required=True),
        verb=dict(type='str', default='filter'),
        required=dict(type='bool', default=True),
        http_timeout=dict(type='raw'),
        node_cache_capable=dict(type='bool', default=False),
        ca_file=dict(type='path'),
        cert_file=dict(type='path'),
        key_file=dict(type='path', no_log=False),
        insecure=dict(type='bool', default=False),
        server_name=dict(type='str'),
        ca_data=dict(type='str'),
        cert_data=dict(type='str'),
        key_data=dict(type='str', no_log=True),
    )),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    view = _io.node_view(module)
    try:
        plan = extender_status.status(view, module.params)
    except PlanError as e:
        module.fail_json(msg=e.msg, changed=False, **e.details)
    result = _io.report(module, plan)
    proven = result.get('ready') is True and not module.check_mode
    if module.params['give_back'] and proven:
        from ansible_collections.baremetal.k3s.plugins.module_utils import _lease  # only a proven change's run needs it
        try:
            result['given_back'] = _lease.give_back(module, view, module.params['give_back'])
        except (PlanError, _io.ApplyError) as e:
            _io.warn(module, ['the scheduler is ready, but its lease was not given back: %s' % e.msg])
        else:
            result['changed'] = bool(result['given_back'].get('backups_removed'))
    if module.params['publish'] and proven:
        from ansible_collections.baremetal.k3s.plugins.module_utils import _readiness  # only a proven change's run
        try:
            result['published'] = _readiness.publish_proven(view, module.params['publish'], result)
        except PlanError as e:
            _io.warn(module, ['the scheduler is ready, but its readiness entry was not published: %s' % e.msg])
        else:
            result['changed'] = result['changed'] or result['published']['changed']
    module.exit_json(**result)


if __name__ == '__main__':
    main()
