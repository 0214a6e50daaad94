#!/usr/bin/env bash
# The collection as a new user gets it, checked end to end (tests/run.sh stage "product"):
#  - a venv with only ansible-core at the oldest release meta/runtime.yml allows;
#  - the built artifact installed offline into an empty collections path holding only the
#    collections galaxy.yml declares (community.docker is only the tests' transport into containers);
#  - ansible-doc for every module and the role from that installation;
#  - baremetal.k3s.install_csi (two servers at once: scheduler_extender_serial=2), .status
#    (table and JSON file), an idempotent re-run, and .uninstall_csi, all by FQCN from outside
#    the checkout, against 2 k3s servers and 1 agent;
#  - the nodes hold no Python package beyond what the modules' requirements name, and every
#    file the collection touched is byte-identical after uninstall;
#  - baremetal.k3s.users (keys on the controller through community.crypto, the one declared
#    dependency) twice, the second changing nothing, and baremetal.k3s.backup fetched and checked;
#  - the fleet playbooks on the same core, on a server and an agent started bare (tests/demo.sh
#    BARE=1: the README's air-gapped quick start): baremetal.k3s.site from nothing, again changing
#    nothing, .upgrade to the double's second version, .backup and .restore on k3s's SQLite
#    datastore (an object written after the backup gone; the agent whose Node the backup does not
#    hold restarted by the restore and registered again), .reset of the agent;
#  - install_csi and status again through ansible-runner (the engine of AWX and Automation
#    Controller), from a private data dir laid out as AWX lays it out: rc 0, "successful", each
#    server's results and playbook_on_stats in the event stream, and none of the servers' secrets
#    (their token and agent token, started in config.yaml.d; the token files; the admin key) in
#    any event file or the output.
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$BK3S_ROOT"

export BK3S_FLEET=product SERVERS=2 AGENTS=1
work="$BAREMETAL_K3S_CACHE/product"
servers=(bk3s-product-server-1 bk3s-product-server-2)
fail() { echo "product: FAILED: $*" >&2; exit 1; }
demo() { bash tests/demo.sh "$@"; }
trap 'demo down >/dev/null 2>&1 || true; BK3S_FLEET=product-fleet bash tests/demo.sh down >/dev/null 2>&1 || true' EXIT

# The servers' secrets, known to this script alone (not exported: ansible-runner records its
# environment among its artifacts)
token=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
agent_token=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
BK3S_TOKEN=$token BK3S_AGENT_TOKEN=$agent_token demo up
bk3s_user_venv
export ANSIBLE_COLLECTIONS_PATH="$work/collections:$work/transport"

bk3s_log "what the installation holds"
# only the user's collections path: ANSIBLE_COLLECTIONS_PATH also names the tests' transport
ANSIBLE_COLLECTIONS_PATH="$work/collections" "$USER_VENV/bin/ansible-galaxy" collection list -p "$work/collections" \
  | tee "$work/collections.txt"
installed=$(cd "$work/collections/ansible_collections" && printf '%s\n' */*/ | tr / . | sed 's/\.$//' | sort | paste -sd' ')
expected=$( (echo baremetal.k3s; bk3s_dependencies) | sort | paste -sd' ')
[ "$installed" = "$expected" ] || fail "the installation holds $installed, not $expected (baremetal.k3s and its dependencies)"
documented=0
for f in "$BK3S_ROOT"/plugins/modules/*.py; do
  m=$(basename "$f" .py)
  "$USER_VENV/bin/ansible-doc" "baremetal.k3s.$m" >/dev/null || fail "ansible-doc baremetal.k3s.$m"
  documented=$((documented + 1))
done
for r in "$BK3S_ROOT"/roles/*/; do
  r=$(basename "$r")
  "$USER_VENV/bin/ansible-doc" -t role "baremetal.k3s.$r" >/dev/null || fail "ansible-doc -t role baremetal.k3s.$r"
done
echo "ansible-doc: $documented modules and every role documented"

# Every file, directory and symlink the collection may touch (fingerprint.py's roots), recorded on
# each server before the install and compared after the uninstall.
for s in "${servers[@]}"; do
  docker cp extensions/molecule/shared/fingerprint.py "$s:/var/tmp/bk3s-fingerprint.py"
  docker exec "$s" python3 /var/tmp/bk3s-fingerprint.py record /var/tmp/bk3s-before.json || fail "$s: fingerprint"
done

demo install -e scheduler_extender_serial=2 | tee "$work/install.log"
# Its two servers are two clusters, and status reads the readiness ConfigMap on the first: the
# second's entry is in its own cluster, so status reports it as readiness drift; not a failure here.
demo status -e "status_json=$work/status.json" -e status_fail_on_drift=false | tee "$work/status.log"

bk3s_log "checking the status JSON and the readiness ConfigMap"
python3 - "$work/status.json" "${servers[@]}" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
rows = {r['node']: r for r in data['nodes']}
for server in sys.argv[2:]:
    row = rows.get(server)
    assert row, 'no row for %s in %s' % (server, sorted(rows))
    assert row['ready'] is True and row['restarted'] is True, row
    # drift: none on the server whose ConfigMap was read; on the others only their entry (another cluster)
    causes = [d['cause'] for d in row['drift']]
    assert causes == ([] if server == sys.argv[2] else ['readiness']), row
print('status JSON: %d servers ready, restarted, no drift but readiness across clusters' % len(sys.argv[2:]))
PY
for s in "${servers[@]}"; do
  nodes=$(docker exec "$s" k3s kubectl get configmap extender-readiness -o 'jsonpath={.data.nodes\.yaml}')
  grep -q "node_name: $s" <<<"$nodes" || fail "$s is not in its readiness ConfigMap: $nodes"
  grep -q "restarted: true" <<<"$nodes" || fail "$s: restarted is not true: $nodes"
done

recap_changed() {  # true when a host's PLAY RECAP line in the log $1 counts a change; fails without recap lines
  local recap
  recap=$(grep -E '^bk3s-product-[^ ]+ +: ok=' "$1") || fail "no PLAY RECAP lines in $1"
  grep -v ' changed=0 ' <<<"$recap"
}

bk3s_log "a second install_csi changes nothing"
demo install | tee "$work/install2.log"
recap_changed "$work/install2.log" && fail "the re-run changed something"

bk3s_log "the nodes' Python: nothing beyond the modules' requirements"
for n in "${servers[@]}" bk3s-product-agent-1; do
  docker exec "$n" python3 -c 'import kubernetes' 2>/dev/null && fail "$n has the Python Kubernetes client"
  extra=$(docker exec "$n" python3 - <<'PY'
import os, site, sys
allowed = {'yaml', '_yaml'}
found = []
for d in set(site.getsitepackages() + ['/usr/lib/python3/dist-packages']):
    if not os.path.isdir(d):
        continue
    for name in os.listdir(d):
        base = name.split('-')[0].split('.cpython')[0]
        if name.endswith(('.dist-info', '.egg-info', '.pth')) or name == '__pycache__':
            continue
        if base.replace('.py', '') not in allowed:
            found.append(os.path.join(d, name))
print('\n'.join(sorted(found)))
PY
)
  [ -z "$extra" ] || fail "$n carries Python packages no module requires: $extra"
done
echo "nodes: no Python package beyond PyYAML"

demo uninstall | tee "$work/uninstall.log"
for s in "${servers[@]}"; do
  differences=$(docker exec "$s" python3 /var/tmp/bk3s-fingerprint.py compare /var/tmp/bk3s-before.json \
    /var/tmp/bk3s-after.json) || fail "$s: fingerprint compare"
  [ "$differences" = '{"differences": []}' ] || fail "$s: files differ after uninstall: $differences"
done
echo "uninstall: every file, directory and symlink as the installer left it on ${#servers[@]} servers"

bk3s_log "day 2 by FQCN: a user by CSR (keys on this controller, community.crypto), a backup"
rm -rf "$work/kube"
demo users -e k3s_user_name=product-admin -e '{"k3s_user_groups": ["product-admins"]}' \
  -e "k3s_user_kube_dir=$work/kube" | tee "$work/users.log"
grep -q 'product-admin' "$work/users.log" || fail "users.yml did not report the user"
[ "$(stat -c %a "$work/kube")" = 700 ] || fail "$work/kube is not 0700"
for f in "$work"/kube/*; do [ "$(stat -c %a "$f")" = 600 ] || fail "$f is not 0600"; done
demo users -e k3s_user_name=product-admin -e '{"k3s_user_groups": ["product-admins"]}' \
  -e "k3s_user_kube_dir=$work/kube" | tee "$work/users2.log"
recap_changed "$work/users2.log" && fail "the second users run changed something"
rm -rf "$work/backups"
demo backup -e k3s_backup_fetch=true -e "k3s_backup_fetch_dir=$work/backups" | tee "$work/backup.log"
fetched=0
for f in "$work"/backups/*/k3s-backup-*.sha256; do
  (cd "$(dirname "$f")" && sha256sum -c "$(basename "$f")") || fail "the fetched backup $f fails its checksum"
  fetched=$((fetched + 1))
done
[ "$fetched" = "${#servers[@]}" ] || fail "$fetched backups fetched, not ${#servers[@]}"
# what was fetched holds the server token: 0600 files in 0700 directories on the controller too
loose=$(find "$work/backups" \( \( -type d ! -perm 0700 \) -o \( -type f ! -perm 0600 \) \) -printf '%m %p\n')
[ -z "$loose" ] || fail "fetched backups not 0600 in 0700 directories on the controller: $loose"
echo "day 2: user product-admin added (second run changed nothing), $fetched backups fetched and checked (0600 in 0700)"

bk3s_log "the fleet playbooks on ansible-core $BK3S_ANSIBLE_CORE_MIN: a server and an agent from bare nodes"
# The air-gapped quick start's inventory on bare nodes (tests/demo.sh BARE=1): site from nothing,
# a no-op re-run, an upgrade to the double's second version, a backup restored, the agent reset.
fleet() { BK3S_FLEET=product-fleet BARE=1 SERVERS=1 AGENTS=1 bash tests/demo.sh "$@"; }
fleet_server=bk3s-product-fleet-server-1
fleet_agent=bk3s-product-fleet-agent-1
fleet_dir="$BAREMETAL_K3S_CACHE/product-fleet"
fleet_recap() {  # LOG: the PLAY RECAP lines of the fleet's hosts (fails when there are none)
  grep -E '^bk3s-product-fleet-[^ ]+ +: ok=' "$1" || fail "no PLAY RECAP lines in $1"
}
kubelet_versions() {  # the Nodes and their kubeletVersion, as the server's API has them
  docker exec "$fleet_server" k3s kubectl get nodes \
    -o 'jsonpath={range .items[*]}{.metadata.name}={.status.nodeInfo.kubeletVersion}{" "}{end}'
}
fleet up >"$work/fleet-up.log" 2>&1 || { tail -n 30 "$work/fleet-up.log"; fail "the bare fleet did not start"; }
tail -n 3 "$work/fleet-up.log"
for n in "$fleet_server" "$fleet_agent"; do
  docker exec "$n" test ! -e /usr/local/bin/k3s || fail "$n is not bare: it has /usr/local/bin/k3s"
done

fleet site | tee "$work/site.log"
versions=$(kubelet_versions)
for n in "$fleet_server" "$fleet_agent"; do
  grep -q "$n=v1.36.3+k3s1" <<<"$versions" || fail "$n is not a Node on v1.36.3+k3s1 after site: $versions"
done
fleet site | tee "$work/site2.log"
fleet_recap "$work/site2.log" | grep -v ' changed=0 ' && fail "the second site run changed something"
echo "site: a server and an agent from bare nodes ($versions), a re-run changed nothing"

newer=$(cut -d' ' -f1 "$fleet_dir/airgap/k3s-v1.36.4+k3s1.sha256")
fleet upgrade -e "k3s_upgrade_binary_src=$fleet_dir/airgap/k3s-v1.36.4+k3s1" -e "k3s_upgrade_binary_sha256=$newer" \
  | tee "$work/upgrade.log"
versions=$(kubelet_versions)
for n in "$fleet_server" "$fleet_agent"; do
  grep -q "$n=v1.36.4+k3s1" <<<"$versions" || fail "$n is not on v1.36.4+k3s1 after the upgrade: $versions"
done
echo "upgrade: both nodes on v1.36.4+k3s1"

# the agent's Node deleted before the backup (its k3s-agent runs on, unregistered): to the restored
# datastore it is what an agent that joined after the backup is, a node it does not know
docker exec "$fleet_server" k3s kubectl delete node "$fleet_agent" >/dev/null
fleet backup -l "$fleet_server" | tee "$work/fleet-backup.log"
archive=$(docker exec "$fleet_server" sh -c 'ls /var/backups/k3s/k3s-backup-*.tar.gz' | tail -n 1)
[ -n "$archive" ] || fail "no archive on $fleet_server after the backup"
docker exec "$fleet_server" k3s kubectl create configmap product-after-backup >/dev/null
fleet restore -l "$fleet_server" -e "k3s_backup_restore_archive=$archive" \
  -e "k3s_backup_restore_confirm=$(basename "$archive")" | tee "$work/restore.log"
grep -q "restored $archive" "$work/restore.log" || fail "the restore did not report its archive"
docker exec "$fleet_server" k3s kubectl get configmap product-after-backup >/dev/null 2>&1 \
  && fail "a ConfigMap written after the backup is still there after the restore"
grep -q "$fleet_agent (Node $fleet_agent) was not in the restored datastore: restarted, registered again and Ready" \
  "$work/restore.log" || fail "the restore did not say that $fleet_agent, unknown to the restored datastore, registered again"
grep -q "$fleet_agent=" <<<"$(kubelet_versions)" || fail "$fleet_agent is not a Node after the restore"
echo "restore: $(basename "$archive") put back, an object written after it gone, the agent it did not know registered again"

fleet reset -l "$fleet_agent" -e "k3s_reset_confirm=$fleet_agent" | tee "$work/reset.log"
docker exec "$fleet_agent" test ! -e /etc/systemd/system/k3s-agent.service || fail "$fleet_agent keeps its unit after the reset"
nodes=$(docker exec "$fleet_server" k3s kubectl get nodes -o name)
grep -q "$fleet_agent" <<<"$nodes" && fail "$fleet_agent is still a Node after the reset: $nodes"
echo "reset: $fleet_agent drained, deleted from the API and uninstalled"
fleet down >/dev/null

bk3s_log "as AWX runs it: install_csi and status through ansible-runner"
runner_venv() {  # sets RUNNER_VENV: ansible-core (the same release as USER_VENV's) and ansible-runner
  local pins="$BK3S_ROOT/tests/requirements-runner.txt" key
  key=$( (echo "ansible-core==$BK3S_ANSIBLE_CORE_MIN"; cat "$pins") | sha256sum | cut -c1-12)
  RUNNER_VENV="$BAREMETAL_K3S_CACHE/runner-venv/$key"
  [ -x "$RUNNER_VENV/bin/ansible-runner" ] && return 0
  bk3s_log "creating $RUNNER_VENV (ansible-core $BK3S_ANSIBLE_CORE_MIN, $(grep -v '^#' "$pins"))"
  rm -rf "$RUNNER_VENV"
  python3 -m venv "$RUNNER_VENV"
  "$RUNNER_VENV/bin/pip" install -q --disable-pip-version-check "ansible-core==$BK3S_ANSIBLE_CORE_MIN" -r "$pins"
}
runner_venv
secrets="$work/runner-secrets.txt"
(umask 077; printf '%s\n' "$token" "$agent_token" >"$secrets")
for s in "${servers[@]}"; do
  server_token=$(docker exec "$s" cat /var/lib/rancher/k3s/server/token)
  [ "${server_token##*::server:}" = "$token" ] || fail "$s does not run with the token it was given"
  {
    echo "$server_token"
    docker exec "$s" cat /var/lib/rancher/k3s/server/agent-token
    echo
    docker exec "$s" sed -n 's/^ *client-key-data: *//p' /etc/rancher/k3s/k3s.yaml
  } >>"$secrets"
done
# AWX's private data dir: the project's checkout (its collections/requirements.yml names the
# collection), the collections that names installed into requirements_collections, the inventory
# in inventory/, the job's environment and settings in env/; artifacts/<ident> is runner's.
pdd="$work/runner"
rm -rf "$pdd"
mkdir -p "$pdd/project/collections" "$pdd/inventory" "$pdd/env" "$pdd/requirements_collections"
printf 'collections:\n  - name: baremetal.k3s\n' >"$pdd/project/collections/requirements.yml"
cp -a "$work/collections/ansible_collections" "$pdd/requirements_collections/"
{
  echo "all:"
  echo "  vars: {ansible_connection: community.docker.docker, ansible_python_interpreter: /usr/bin/python3}"
  echo "  children:"
  echo "    server: {hosts: {$(printf '%s: {}, ' "${servers[@]}" | sed 's/, $//')}}"
  echo "    agent: {hosts: {bk3s-product-agent-1: {}}}"
} >"$pdd/inventory/hosts"
printf 'ANSIBLE_COLLECTIONS_PATH: %s\n' "$pdd/requirements_collections:$work/transport" >"$pdd/env/envvars"
printf 'job_timeout: 1800\n' >"$pdd/env/settings"
printf 'status_fail_on_drift: false\n' >"$pdd/env/extravars"  # two clusters: see the status run above
run_runner() {  # PLAYBOOK: baremetal.k3s.PLAYBOOK by FQCN through ansible-runner, ident PLAYBOOK
  local rc=0
  PATH="$RUNNER_VENV/bin:$PATH" "$RUNNER_VENV/bin/ansible-runner" run "$pdd" -p "baremetal.k3s.$1" --ident "$1" \
    >"$work/runner-$1.log" 2>&1 || rc=$?
  tail -n 12 "$work/runner-$1.log"
  echo "ansible-runner run -p baremetal.k3s.$1: exit $rc"
}
run_runner install_csi  # its two servers are two clusters: each wait publishes its own server's readiness entry (changed)
python3 tests/runner_events.py "$pdd/artifacts/install_csi" "$work/runner-install_csi.log" "$secrets" \
  --hosts "${servers[@]}" \
  --changed 'Put our extender into the scheduler config, or take it out, with the flag that passes it (one module run)' \
            'Reload systemd units and restart the service that runs the scheduler (systemd, without waiting for it)' \
            'Wait for the scheduler to restart with our config and the extender to answer' \
  || fail "ansible-runner's record of install_csi"
run_runner status
python3 tests/runner_events.py "$pdd/artifacts/status" "$work/runner-status.log" "$secrets" \
  --hosts "${servers[@]}" --ok 'Read how the scheduler runs here' 'Ask the scheduler and the extender' \
  || fail "ansible-runner's record of status"
echo "product: all checks passed"
