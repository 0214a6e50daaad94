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
#    dependency) twice, the second changing nothing, and baremetal.k3s.backup fetched and checked.
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$BK3S_ROOT"

export BK3S_FLEET=product SERVERS=2 AGENTS=1
work="$BAREMETAL_K3S_CACHE/product"
servers=(bk3s-product-server-1 bk3s-product-server-2)
fail() { echo "product: FAILED: $*" >&2; exit 1; }
demo() { bash tests/demo.sh "$@"; }
trap 'demo down >/dev/null 2>&1 || true' EXIT

demo up
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
demo status -e "status_json=$work/status.json" | tee "$work/status.log"

bk3s_log "checking the status JSON and the readiness ConfigMap"
python3 - "$work/status.json" "${servers[@]}" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
rows = {r['node']: r for r in data['nodes']}
for server in sys.argv[2:]:
    row = rows.get(server)
    assert row, 'no row for %s in %s' % (server, sorted(rows))
    assert row['ready'] is True and row['restarted'] is True, row
print('status JSON: %d servers ready, restarted' % len(sys.argv[2:]))
PY
for s in "${servers[@]}"; do
  nodes=$(docker exec "$s" k3s kubectl get configmap extender-readiness -o 'jsonpath={.data.nodes\.yaml}')
  grep -q "node_name: $s" <<<"$nodes" || fail "$s is not in its readiness ConfigMap: $nodes"
  grep -q "restarted: true" <<<"$nodes" || fail "$s: restarted is not true: $nodes"
done

bk3s_log "a second install_csi changes nothing"
demo install | tee "$work/install2.log"
grep -E '^bk3s-product-' "$work/install2.log" | grep -v ' changed=0 ' && fail "the re-run changed something"

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
grep -E '^bk3s-product-' "$work/users2.log" | grep -v ' changed=0 ' && fail "the second users run changed something"
rm -rf "$work/backups"
demo backup -e k3s_backup_fetch=true -e "k3s_backup_fetch_dir=$work/backups" | tee "$work/backup.log"
fetched=0
for f in "$work"/backups/*/k3s-backup-*.sha256; do
  (cd "$(dirname "$f")" && sha256sum -c "$(basename "$f")") || fail "the fetched backup $f fails its checksum"
  fetched=$((fetched + 1))
done
[ "$fetched" = "${#servers[@]}" ] || fail "$fetched backups fetched, not ${#servers[@]}"
echo "day 2: user product-admin added (second run changed nothing), $fetched backups fetched and checked"
echo "product: all checks passed"
