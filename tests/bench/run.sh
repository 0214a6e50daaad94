#!/usr/bin/env bash
# The rollout benchmark: what install_csi costs on a fleet, as figures (see bench.py for how
# each is taken). Starts 3 k3s servers and N agents (node containers as the k3s installer leaves
# them, the collection built and installed from this checkout), then prints a table and writes
# bench.txt, bench.json and bench.png into the output directory. Does its own set-up on a
# Debian 12 machine as root, like tests/run.sh; not part of CI (figures, not pass/fail).
#   bash tests/bench/run.sh                 3 servers, 10 agents
#   bash tests/bench/run.sh --nightly       3 servers, 20 agents
#   AGENTS=2 bash tests/bench/run.sh        any count
#   BENCH_OUT=/tmp/b bash tests/bench/run.sh
# The fleet is removed at the end (BENCH_KEEP=1 keeps it).
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
cd "$BK3S_ROOT"

AGENTS=${AGENTS:-10}
[ "${1:-}" = --nightly ] && AGENTS=20
export BK3S_FLEET=bench SERVERS=3 AGENTS
out=${BENCH_OUT:-$BAREMETAL_K3S_CACHE/bench/$(date -u +%Y%m%dT%H%M%SZ)}
demo_dir="$BAREMETAL_K3S_CACHE/bench"
mkdir -p "$out"
[ "${BENCH_KEEP:-0}" = 1 ] || trap 'bash tests/demo.sh down >/dev/null 2>&1 || true' EXIT

bk3s_venv
if ! "$VENV/bin/python" -c 'import matplotlib' 2>/dev/null; then
  bk3s_log "installing matplotlib into $VENV (the plot only)"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r tests/bench/requirements.txt
fi

bk3s_log "starting 3 servers and $AGENTS agents"
bash tests/demo.sh up
"$VENV/bin/python" tests/bench/bench.py --inventory "$demo_dir/inventory.yml" \
  --collections "$demo_dir/collections:$demo_dir/transport" \
  --ansible-playbook "$VENV/bin/ansible-playbook" --out "$out"
