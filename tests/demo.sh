#!/usr/bin/env bash
# The main job on an embedded default, the way a new user runs it: the collection is built
# and installed offline into an empty collections path, ansible-core is the oldest release
# the collection supports, and the playbooks run by FQCN from outside this checkout against
# a local fleet of node containers as the k3s installer leaves them (k3s = launcher of the
# real kube-apiserver, kube-scheduler and kine; CSI Baremetal's extender stood in for by the
# reference extender on :8889).
#   bash tests/demo.sh                  start 1 server, run baremetal.k3s.install_csi, then .status
#   SERVERS=3 AGENTS=2 bash tests/demo.sh
#   BK3S_PLATFORM=rke2 bash tests/demo.sh    (or kubeadm, with AGENTS=0: no join for workers)
#   bash tests/demo.sh up               only start the fleet and install the collection
#   bash tests/demo.sh install|status|uninstall [ansible-playbook args...]
#                                       run baremetal.k3s.install_csi, .status or .uninstall_csi
#   bash tests/demo.sh site|upgrade|reset|users|backup|restore|pod_security [ansible-playbook args...]
#                                       run that playbook
#   bash tests/demo.sh down             remove the containers (and a bare fleet's network)
# Bare nodes, for the air-gapped quick start of README.md: no k3s on them, an inventory in the
# quick start's shape whose binary is the double on this machine, on a network of their own where
# the nodes reach each other by name (Docker's default bridge resolves no names):
#   BARE=1 AGENTS=1 bash tests/demo.sh up      then: bash tests/demo.sh site
#   bash tests/demo.sh add agent|server        one more bare node in the inventory (then site --limit <it>)
# A bare fleet also gets two versions of the k3s double in <demo dir>/airgap, each with its
# .sha256: k3s (as built, v1.36.3+k3s1) and k3s-v1.36.4+k3s1 (told by tests/kube/tell-version.sh),
# for baremetal.k3s.upgrade.
# BK3S_FLEET names the fleet (default demo): tests/product.sh runs its own beside it.
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$BK3S_ROOT"

FLEET=${BK3S_FLEET:-demo}
demo_dir="$BAREMETAL_K3S_CACHE/$FLEET"
# a bare fleet remembers its shape: the actions after up (add, site...) run on what up started
if [ -f "$demo_dir/fleet.env" ] && [ "${1:-all}" != up ] && [ "${1:-all}" != all ]; then
  # shellcheck disable=SC1091
  . "$demo_dir/fleet.env"
fi
SERVERS=${SERVERS:-1}
AGENTS=${AGENTS:-0}
BARE=${BARE:-0}
if [ "${BK3S_PLATFORM:-k3s}" = kubeadm ] && [ "$AGENTS" != 0 ]; then
  echo "kubeadm workers need a join this demo does not do; use AGENTS=0 with BK3S_PLATFORM=kubeadm" >&2
  exit 2
fi
inventory="$demo_dir/inventory.yml"
action=${1:-all}
[ $# -gt 0 ] && shift

network="bk3s-$FLEET"
# The second version of the double a bare fleet gets for an upgrade: a patch release above the
# built one (v1.36.3+k3s1).
NEWER_VERSION=v1.36.4+k3s1
airgap="$demo_dir/airgap"

down() {
  docker ps -aq --filter "label=baremetal-k3s.fleet=$FLEET" | xargs -r docker rm -f >/dev/null
  docker network ls -q --filter "label=baremetal-k3s.fleet=$FLEET" | xargs -r docker network rm >/dev/null
  echo "$FLEET fleet removed"
}

if [ "$action" = down ]; then down; exit 0; fi

bk3s_apt git
bk3s_docker
bk3s_venv
bk3s_user_venv

# The playbooks by FQCN, from the demo directory, with the installed artifact only (and the
# tests' docker transport): nothing of this checkout is on the path.
user_playbook() {
  local name=$1
  shift
  bk3s_log "ansible-playbook -i $inventory baremetal.k3s.$name $*"
  (cd "$demo_dir" && ANSIBLE_COLLECTIONS_PATH="$demo_dir/collections:$demo_dir/transport" \
    "$USER_VENV/bin/ansible-playbook" -i "$inventory" "baremetal.k3s.$name" "$@")
}

# The installer-made fleet: each node as the k3s installer leaves it, install_csi's ground.
write_installer_inventory() {
  local server_files='' secrets=''
  # BK3S_TOKEN (and BK3S_AGENT_TOKEN): the servers start with it in a config.yaml.d file, as a
  # fleet sharing one token does (tests/product.sh checks that no output carries it)
  [ -n "${BK3S_TOKEN:-}" ] && secrets="token: $BK3S_TOKEN\\n"
  [ -n "${BK3S_AGENT_TOKEN:-}" ] && secrets="${secrets}agent-token: $BK3S_AGENT_TOKEN\\n"
  [ -n "$secrets" ] && server_files=", bk3s_files: {/etc/rancher/k3s/config.yaml.d/50-token.yaml: \"$secrets\"}"
  {
    echo "all:"
    echo "  vars: {ansible_connection: community.docker.docker, ansible_python_interpreter: /usr/bin/python3}"
    echo "  children:"
    echo "    server:"
    echo "      hosts:"
    for i in $(seq 1 "$SERVERS"); do echo "        bk3s-$FLEET-server-$i: {bk3s_product: ${BK3S_PLATFORM:-k3s}$server_files}"; done
    echo "    agent:"
    echo "      hosts:"
    for i in $(seq 1 "$AGENTS"); do
      echo "        bk3s-$FLEET-agent-$i: {bk3s_product: ${BK3S_PLATFORM:-k3s}, bk3s_exec: agent --server https://127.0.0.1:6443, bk3s_extender: false}"
    done
  } >"$inventory"
}

# The bare fleet: the README's air-gapped quick start as it stands (taken from README.md), with
# this machine's connection, hosts and binary (tests/readme_inventory.py says what it changes).
write_bare_inventory() {
  "$VENV/bin/python" tests/readme_inventory.py README.md "$airgap/k3s" "$(cut -d' ' -f1 "$airgap/k3s.sha256")" \
    "$SERVERS" "$AGENTS" "$FLEET" >"$inventory.tmp"
  mv -f "$inventory.tmp" "$inventory"
  printf 'SERVERS=%s\nAGENTS=%s\nBARE=1\n' "$SERVERS" "$AGENTS" >"$demo_dir/fleet.env"
}

# Two versions of the double for the bare fleet's install and upgrade, each with its sha256.
write_airgap() {
  mkdir -p "$airgap"
  cp "$BAREMETAL_K3S_KUBE_DIR/k3s" "$airgap/.k3s.tmp" && mv -f "$airgap/.k3s.tmp" "$airgap/k3s"
  bash tests/kube/tell-version.sh "$airgap/k3s" "$airgap/k3s-$NEWER_VERSION" "$NEWER_VERSION"
  (cd "$airgap" && sha256sum k3s >k3s.sha256 && sha256sum "k3s-$NEWER_VERSION" >"k3s-$NEWER_VERSION.sha256")
  echo "k3s $("$airgap/k3s" --version | head -n 1 | cut -d' ' -f3) and $NEWER_VERSION in $airgap"
}

start_node() {  # NAME: a node container of this fleet (bare ones on the fleet's network)
  if [ "$BARE" = 1 ]; then
    BK3S_BARE=1 bk3s_node_run "$1" "$IMAGE_SYSTEMD" --label "baremetal-k3s.fleet=$FLEET" --network "$network"
  else
    bk3s_node_run "$1" "$IMAGE_SYSTEMD" --label "baremetal-k3s.fleet=$FLEET"
  fi
}

wait_booted() {  # NAME...: systemd up in each
  local n _
  for n in "$@"; do
    for _ in $(seq 1 60); do
      case "$(docker exec "$n" systemctl is-system-running 2>/dev/null)" in running|degraded) continue 2 ;; esac
      sleep 1
    done
    echo "$n: systemd did not finish booting" >&2
    return 1
  done
}

up() {
  bk3s_log "node images"; bk3s_images
  bk3s_log "k3s launcher and real Kubernetes parts"; bk3s_kube
  mkdir -p "$demo_dir"
  bk3s_log "building the collection and installing it into $demo_dir/collections"
  bk3s_user_install "$demo_dir/collections"
  bk3s_transport "$demo_dir/transport" >/dev/null
  down >/dev/null
  rm -f "$demo_dir/fleet.env"
  local i nodes=()
  for i in $(seq 1 "$SERVERS"); do nodes+=("bk3s-$FLEET-server-$i"); done
  for i in $(seq 1 "$AGENTS"); do nodes+=("bk3s-$FLEET-agent-$i"); done
  if [ "$BARE" = 1 ]; then
    write_airgap
    write_bare_inventory
    docker network create --label "baremetal-k3s.fleet=$FLEET" "$network" >/dev/null
    bk3s_log "starting $SERVERS bare server(s) and $AGENTS bare agent(s) on network $network"
    for i in "${nodes[@]}"; do start_node "$i"; done
    wait_booted "${nodes[@]}"
    echo "bare nodes ready; the inventory (the air-gapped quick start's): $inventory"
    return 0
  fi
  write_installer_inventory
  bk3s_log "starting $SERVERS server(s) and $AGENTS agent(s)"
  for i in "${nodes[@]}"; do start_node "$i"; done
  bk3s_log "making the nodes what the k3s installer leaves (test harness, not the collection)"
  ANSIBLE_COLLECTIONS_PATH=$(bk3s_collections_path) BK3S_SOURCE=$BK3S_ROOT ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3 \
    "$VENV/bin/ansible-playbook" -i "$inventory" extensions/molecule/shared/prepare.yml
}

add() {  # server|agent: one more bare node, in the inventory
  [ "$BARE" = 1 ] || { echo "add: only a bare fleet grows (BARE=1 ... up first)" >&2; exit 2; }
  local name
  case "${1:-}" in
    server) SERVERS=$((SERVERS + 1)); name="bk3s-$FLEET-server-$SERVERS" ;;
    agent) AGENTS=$((AGENTS + 1)); name="bk3s-$FLEET-agent-$AGENTS" ;;
    *) echo "add: server or agent" >&2; exit 2 ;;
  esac
  bk3s_images >/dev/null
  bk3s_kube
  start_node "$name"
  wait_booted "$name"
  write_bare_inventory
  echo "$name started and in $inventory: bash tests/demo.sh site --limit $name"
}

case "$action" in
  all)
    up
    user_playbook install_csi "$@"
    user_playbook status
    echo
    echo "The fleet keeps running: docker exec -it bk3s-$FLEET-server-1 k3s kubectl get nodes,pods -A"
    echo "Again by hand: cd $demo_dir && ANSIBLE_COLLECTIONS_PATH=collections:transport $USER_VENV/bin/ansible-playbook -i inventory.yml baremetal.k3s.status"
    echo "Remove it with: bash tests/demo.sh down"
    ;;
  up) up ;;
  add) add "$@" ;;
  install) user_playbook install_csi "$@" ;;
  status) user_playbook status "$@" ;;
  uninstall) user_playbook uninstall_csi "$@" ;;
  site|upgrade|reset|users|backup|restore|pod_security) user_playbook "$action" "$@" ;;
  *) echo "unknown action $action: use up, add, install, status, uninstall, site, upgrade, reset, users, backup, restore or down (none: up, install, status)" >&2; exit 2 ;;
esac
