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
#   bash tests/demo.sh install|status|uninstall|users|backup [ansible-playbook args...]
#                                       run baremetal.k3s.install_csi, .status, .uninstall_csi, .users or .backup
#   bash tests/demo.sh down             remove the containers
# BK3S_FLEET names the fleet (default demo): tests/product.sh runs its own beside it.
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$BK3S_ROOT"

SERVERS=${SERVERS:-1}
AGENTS=${AGENTS:-0}
FLEET=${BK3S_FLEET:-demo}
if [ "${BK3S_PLATFORM:-k3s}" = kubeadm ] && [ "$AGENTS" != 0 ]; then
  echo "kubeadm workers need a join this demo does not do; use AGENTS=0 with BK3S_PLATFORM=kubeadm" >&2
  exit 2
fi
demo_dir="$BAREMETAL_K3S_CACHE/$FLEET"
inventory="$demo_dir/inventory.yml"
action=${1:-all}
[ $# -gt 0 ] && shift

down() {
  docker ps -aq --filter "label=baremetal-k3s.fleet=$FLEET" | xargs -r docker rm -f >/dev/null
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

up() {
  # BK3S_TOKEN (and BK3S_AGENT_TOKEN): the servers start with it in a config.yaml.d file, as a
  # fleet sharing one token does (tests/product.sh checks that no output carries it)
  local server_files='' secrets=''
  [ -n "${BK3S_TOKEN:-}" ] && secrets="token: $BK3S_TOKEN\\n"
  [ -n "${BK3S_AGENT_TOKEN:-}" ] && secrets="${secrets}agent-token: $BK3S_AGENT_TOKEN\\n"
  [ -n "$secrets" ] && server_files=", bk3s_files: {/etc/rancher/k3s/config.yaml.d/50-token.yaml: \"$secrets\"}"
  bk3s_log "node images"; bk3s_images
  bk3s_log "k3s launcher and real Kubernetes parts"; bk3s_kube
  mkdir -p "$demo_dir"
  bk3s_log "building the collection and installing it into $demo_dir/collections"
  bk3s_user_install "$demo_dir/collections"
  bk3s_transport "$demo_dir/transport" >/dev/null
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
  down >/dev/null
  bk3s_log "starting $SERVERS server(s) and $AGENTS agent(s)"
  for i in $(seq 1 "$SERVERS"); do bk3s_node_run "bk3s-$FLEET-server-$i" "$IMAGE_SYSTEMD" --label "baremetal-k3s.fleet=$FLEET"; done
  for i in $(seq 1 "$AGENTS"); do bk3s_node_run "bk3s-$FLEET-agent-$i" "$IMAGE_SYSTEMD" --label "baremetal-k3s.fleet=$FLEET"; done
  bk3s_log "making the nodes what the k3s installer leaves (test harness, not the collection)"
  ANSIBLE_COLLECTIONS_PATH=$(bk3s_collections_path) BK3S_SOURCE=$BK3S_ROOT ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3 \
    "$VENV/bin/ansible-playbook" -i "$inventory" extensions/molecule/shared/prepare.yml
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
  install) user_playbook install_csi "$@" ;;
  status) user_playbook status "$@" ;;
  uninstall) user_playbook uninstall_csi "$@" ;;
  users|backup) user_playbook "$action" "$@" ;;
  *) echo "unknown action $action: use up, install, status, uninstall, users, backup or down (none: up, install, status)" >&2; exit 2 ;;
esac
