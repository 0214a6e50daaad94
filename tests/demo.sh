#!/usr/bin/env bash
# The main job on an embedded default: start a local fleet of node containers as the k3s
# installer leaves them (k3s = launcher of the real kube-apiserver, kube-scheduler and
# kine; CSI Baremetal's extender stood in for by the reference extender on :8889), run
# playbooks/install-csi.yml against it, then show playbooks/status.yml's table.
#   bash tests/demo.sh                  1 server
#   SERVERS=3 AGENTS=2 bash tests/demo.sh
#   BK3S_PLATFORM=rke2 bash tests/demo.sh    (or kubeadm, with AGENTS=0: no join for workers)
#   bash tests/demo.sh uninstall        run playbooks/uninstall-csi.yml on the same fleet
#   bash tests/demo.sh down             remove the containers
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$BK3S_ROOT"

SERVERS=${SERVERS:-1}
AGENTS=${AGENTS:-0}
if [ "${BK3S_PLATFORM:-k3s}" = kubeadm ] && [ "$AGENTS" != 0 ]; then
  echo "kubeadm workers need a join this demo does not do; use AGENTS=0 with BK3S_PLATFORM=kubeadm" >&2
  exit 2
fi
demo_dir="$BAREMETAL_K3S_CACHE/demo"
inventory="$demo_dir/inventory.yml"

if [ "${1:-}" = down ]; then
  docker ps -aq --filter label=baremetal-k3s.fleet=demo | xargs -r docker rm -f >/dev/null
  echo "demo fleet removed"
  exit 0
fi

bk3s_apt git
bk3s_docker
bk3s_venv
bk3s_log "node images"; bk3s_images
bk3s_log "k3s launcher and real Kubernetes parts"; bk3s_kube
export ANSIBLE_COLLECTIONS_PATH
ANSIBLE_COLLECTIONS_PATH=$(bk3s_collections_path)
export ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3 ANSIBLE_CALLBACK_RESULT_FORMAT=yaml BK3S_SOURCE=$BK3S_ROOT

run_playbook() { "$VENV/bin/ansible-playbook" -i "$inventory" "$@"; }

if [ "${1:-}" != uninstall ]; then
  mkdir -p "$demo_dir"
  {
    echo "all:"
    echo "  vars: {ansible_connection: community.docker.docker}"
    echo "  children:"
    echo "    server:"
    echo "      hosts:"
    for i in $(seq 1 "$SERVERS"); do echo "        bk3s-demo-server-$i: {bk3s_product: ${BK3S_PLATFORM:-k3s}}"; done
    echo "    agent:"
    echo "      hosts:"
    for i in $(seq 1 "$AGENTS"); do
      echo "        bk3s-demo-agent-$i: {bk3s_product: ${BK3S_PLATFORM:-k3s}, bk3s_exec: agent --server https://127.0.0.1:6443, bk3s_extender: false}"
    done
  } >"$inventory"
  bk3s_log "starting $SERVERS server(s) and $AGENTS agent(s)"
  for i in $(seq 1 "$SERVERS"); do bk3s_node_run "bk3s-demo-server-$i" "$IMAGE_SYSTEMD" --label baremetal-k3s.fleet=demo; done
  for i in $(seq 1 "$AGENTS"); do bk3s_node_run "bk3s-demo-agent-$i" "$IMAGE_SYSTEMD" --label baremetal-k3s.fleet=demo; done
  bk3s_log "making the nodes what the k3s installer leaves"
  run_playbook extensions/molecule/shared/prepare.yml
  bk3s_log "playbooks/install-csi.yml"
  run_playbook playbooks/install-csi.yml
else
  bk3s_log "playbooks/uninstall-csi.yml"
  run_playbook playbooks/uninstall-csi.yml
fi
bk3s_log "playbooks/status.yml"
run_playbook playbooks/status.yml
echo
echo "The fleet keeps running: docker exec -it bk3s-demo-server-1 k3s kubectl get nodes,pods -A"
echo "Remove it with: bash tests/demo.sh down"
