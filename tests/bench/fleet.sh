#!/usr/bin/env bash
# The fleet benchmark: what site, its no-op re-run, upgrade and status cost on the controller as the
# fleet grows (see fleet.py for how each figure is taken and how the projection is computed). For each
# size it starts that many bare agents (and SERVERS bare servers, default 1) with tests/demo.sh's
# bare fleet (node containers as a fresh OS leaves them, the collection built and installed from this
# checkout, the k3s double and a newer version of it for the upgrade), runs the four playbooks, and
# removes the fleet; then prints a table and writes fleet.txt, bench.json and bench.png into the
# output directory. Does its own set-up on a Debian 12 machine as root, like tests/run.sh; not part
# of CI (figures, not pass/fail). Containers: take the Docker lock as for the scenarios.
#   bash tests/bench/fleet.sh               2 and 4 agents (small enough for any machine)
#   bash tests/bench/fleet.sh 10 20 40      one fleet per size, in that order
#   SERVERS=3 BENCH_OUT=/tmp/f bash tests/bench/fleet.sh 10 20
#   ANSIBLE_FORKS=25 bash tests/bench/fleet.sh 10 20    (Ansible settings pass through)
#   BENCH_RUNS=site,noop bash tests/bench/fleet.sh 10 20  (only those runs; the floor goes with noop)
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
cd "$BK3S_ROOT"

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2 4)
for n in "${sizes[@]}"; do
  case "$n" in ''|*[!0-9]*|0) echo "sizes are agent counts (whole numbers above 0), not '$n'" >&2; exit 2 ;; esac
done
export BK3S_FLEET=fleetbench BARE=1 SERVERS=${SERVERS:-1}
out=${BENCH_OUT:-$BAREMETAL_K3S_CACHE/bench/fleet-$(date -u +%Y%m%dT%H%M%SZ)}
demo_dir="$BAREMETAL_K3S_CACHE/$BK3S_FLEET"
mkdir -p "$out"
trap 'bash tests/demo.sh down >/dev/null 2>&1 || true' EXIT

bk3s_venv
if ! "$VENV/bin/python" -c 'import matplotlib' 2>/dev/null; then
  bk3s_log "installing matplotlib into $VENV (the plot only)"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r tests/bench/requirements.txt
fi

for n in "${sizes[@]}"; do
  bk3s_log "starting $SERVERS bare server(s) and $n bare agent(s)"
  AGENTS=$n bash tests/demo.sh up
  "$VENV/bin/python" tests/bench/fleet.py measure --inventory "$demo_dir/inventory.yml" \
    --collections "$demo_dir/collections:$demo_dir/transport" --airgap "$demo_dir/airgap" \
    --ansible-playbook "$VENV/bin/ansible-playbook" --out "$out" --runs "${BENCH_RUNS:-site,noop,upgrade,status}"
  bash tests/demo.sh down
done
"$VENV/bin/python" tests/bench/fleet.py report --out "$out"
