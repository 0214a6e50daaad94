#!/usr/bin/env bash
# Run every test of baremetal.k3s on a Debian 12 machine as root, doing all set-up itself:
# Docker engine and debootstrap from Debian, node images, the real Kubernetes parts, the
# virtualenv. Each stage prints its time; the summary lists them; exit 0 only if all pass.
#   bash tests/run.sh                 everything
#   bash tests/run.sh unit sanity     only the named stages (after set-up)
#   SCENARIOS="smoke k3s_unit" bash tests/run.sh molecule
set -uo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$BK3S_ROOT" || exit 1

declare -a RESULTS=()
PASSED=0
FAILED=0
T0=$SECONDS

stage() {  # stage NAME COMMAND...: run, time and record it
  local name=$1 start=$SECONDS rc cpu0
  shift
  bk3s_log "stage $name"
  children_cpu; cpu0=$CHILDREN_CPU
  BK3S_STAGE=$name "$@"
  rc=$?
  children_cpu
  record "$name" "$rc" $((SECONDS - start)) $((CHILDREN_CPU - cpu0))
  return $rc
}

# The CPU seconds (user + system) of this shell's ended children so far, into CHILDREN_CPU: bash's
# `times`, run in this shell itself (a command substitution would be a child that has none).
TIMES=$(mktemp -d)
children_cpu() {
  local f="$TIMES/$BASHPID"  # this shell's (a job of the pool is a subshell)
  times >"$f"
  CHILDREN_CPU=$(awk 'function s(t, p) { split(t, p, /[ms]/); return p[1] * 60 + p[2] }
    NR == 2 { printf "%d", s($1) + s($2) }' "$f")
}

# The node containers' CPU per stage: every container a stage starts carries the label
# bk3s.stage=$BK3S_STAGE, and tests/stage_cpu.py reads their cgroups until the run ends.
NODES_CPU=$(mktemp -d)
nodes_cpu_start() {
  command -v docker >/dev/null || return 0
  # shellcheck disable=SC2153  # VENV is tests/lib.sh's, sourced above
  "$VENV/bin/python" tests/stage_cpu.py "$NODES_CPU" </dev/null >/dev/null 2>&1 &
  NODES_CPU_PID=$!
}
nodes_cpu_stop() {
  [ -n "${NODES_CPU_PID:-}" ] || return 0
  touch "$NODES_CPU/stop"
  wait "$NODES_CPU_PID"
}

# The machine's CPU time so far (user+nice+system+irq+softirq, all cores), in seconds: the run is
# CPU-bound on 2 cores, so this, not a stage's wall time, is what a new stage really costs.
cpu_busy() { awk '/^cpu /{printf "%d", ($2+$3+$4+$7+$8)/100}' /proc/stat; }
CPU0=$(cpu_busy)

top5() {  # top5 FIELD: the five stages of the summary table highest in that field, with it
  awk -v f="$1" '{ print $f, $8 }' "$NODES_CPU/table" | sort -rn | head -n 5 | awk '{ printf "%6s  %s\n", $1, $2 }'
}

summary() {
  local total=$((SECONDS - T0)) busy=$(($(cpu_busy) - CPU0)) line stage seconds rest nodes
  local -A nodes_of=()
  nodes_cpu_stop
  if [ -f "$NODES_CPU/nodes.tsv" ]; then
    while IFS=$'\t' read -r stage seconds rest; do nodes_of[$stage]=$seconds; done <"$NODES_CPU/nodes.tsv"
  fi
  echo
  echo "================================ summary ================================"
  echo "result   wall   CPU-s: all = its own + its nodes'   stage"
  for line in "${RESULTS[@]}"; do
    # shellcheck disable=SC2086  # the line's fields, as record wrote them: result, wall, CPU, exit code, name
    set -- $line
    nodes=${nodes_of[$5]:-0}
    printf '%s %6s %7ss = %5ss + %5ss  %s%s\n' "$1" "$2" $(($3 + nodes)) "$3" "$nodes" "$5" \
      "$([ "$4" -eq 0 ] || echo " (exit $4)")"
  done | tee "$NODES_CPU/table"
  echo "total time: ${total}s; CPU busy ${busy}s of $((total * $(nproc)))s ($(nproc) cores)"
  echo "budget (docs/testing.md, Time budget): 2700s warm, 4200s on a fresh machine"
  echo "the five longest stages (jobs of the pool overlap):"
  top5 2
  echo "the five costliest in CPU time (the machine's 2 cores are what the stages share):"
  top5 3
  echo "stages: $PASSED passed, $FAILED failed"
  rm -rf "$TIMES" "$NODES_CPU"
}

setup() { bk3s_apt git rsync shellcheck && bk3s_docker && bk3s_venv; }
images() { bk3s_images; }
kube() { bk3s_kube; }

# the Go that tests/kube/build.sh builds with (the machine's when recent enough, else the pinned one it fetched):
# a fresh machine has no go on PATH
go_test() {
  local go
  go=$(bash tests/kube/build.sh --go) || return 1
  (cd tests/kube && GOTOOLCHAIN=local GOFLAGS=-mod=mod "$go" test ./internal/...)
}

# Module logic, pure Python and CPU-bound: on every core (pytest-xdist).
# pytest's temporary trees in memory (/dev/shm) where the machine has it: the tests write, fsync and
# rename thousands of small files (the fault tests kill a module a hundred times per case), which
# on a throttled virtual disk is most of their time; none of them needs the data to outlive the run.
pytest_tmp() {  # NAME: prints pytest's --basetemp option, a fresh directory under /dev/shm, when there is one
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    local dir="/dev/shm/bk3s-pytest-$1-$$"
    rm -rf "$dir"
    echo "--basetemp=$dir"
  fi
}

unit() {
  local tmp rc
  tmp=$(pytest_tmp unit)
  "$VENV/bin/python" -m pytest -p no:cacheprovider -q -n "${UNIT_JOBS:-2}" --durations=5 ${tmp:+"$tmp"} tests/unit
  rc=$?
  [ -z "$tmp" ] || rm -rf "${tmp#--basetemp=}"
  return $rc
}

# Against real systemd and the real Kubernetes parts (containers, kube-scheduler as an oracle):
# run beside the Molecule scenarios when both are asked for, as those mostly wait.
integration() {
  local tmp rc
  tmp=$(pytest_tmp integration)
  BAREMETAL_K3S_REQUIRE_DOCKER=1 BAREMETAL_K3S_REQUIRE_KUBE=1 "$VENV/bin/python" -m pytest -p no:cacheprovider -q \
    --durations=10 ${tmp:+"$tmp"} tests/integration
  rc=$?
  [ -z "$tmp" ] || rm -rf "${tmp#--basetemp=}"
  return $rc
}

sanity() {
  # ansible-test bootstraps pip in its sanity venvs with a get-pip script it downloads from
  # a host this network cannot reach; the stdlib's ensurepip does the same job offline.
  local shim=~/.ansible/test/cache/get_pip_24_2.py
  [ -s "$shim" ] || { mkdir -p "$(dirname "$shim")"; printf 'import ensurepip\nensurepip.bootstrap()\n' >"$shim"; }
  local tree
  tree=$(bk3s_collection_tree sanity) || return 1
  (cd "$tree" && PATH="$VENV/bin:$PATH" ansible-test sanity --venv --python 3.11 --color no)
}

lint() {
  local farm purelib
  farm=$(bk3s_collections_path)
  ANSIBLE_COLLECTIONS_PATH=$farm PATH="$VENV/bin:$PATH" ansible-lint --offline || return 1
  # the docs as docs.ansible.com's own linter checks them: every module's, plugin's and role's docs
  # and the references in them (M(), P(), O(), RV()), with community.crypto from the venv's ansible
  purelib=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  ANSIBLE_COLLECTIONS_PATH=$farm:$purelib PATH="$VENV/bin:$PATH" \
    antsibull-docs lint-collection-docs --plugin-docs "$farm/ansible_collections/baremetal/k3s" \
    && echo "antsibull-docs lint-collection-docs --plugin-docs: clean"
}

# galaxy-importer, as Galaxy and Automation Hub run it on every upload, on the built artifact ARTIFACT,
# from a venv of its own (it pins its own tools), its ansible-test and ansible-lint runs left off (the
# sanity and lint stages run both). It requires galaxy.yml's repository, which the project does not
# have yet (a placeholder would send users nowhere; ansible-lint's galaxy[no-repository] is skipped for
# the same reason): the import of the artifact as built must fail for that reason alone, and the import
# of a copy given a repository must pass with no error and no warning but the sanity ignore files' (each
# entry there says why it stays).
galaxy_import() (  # a subshell: its scratch directory goes on every way out
  artifact=$1 venv="$BAREMETAL_K3S_CACHE/galaxy-importer-0.4.44"
  if ! "$venv/bin/python" -c 'import galaxy_importer' 2>/dev/null; then
    rm -rf "$venv" && python3 -m venv "$venv" \
      && "$venv/bin/pip" install -q --disable-pip-version-check galaxy-importer==0.4.44 || exit 1
  fi
  dir=$(mktemp -d) && trap 'rm -rf "$dir"' EXIT
  printf '[galaxy-importer]\nRUN_ANSIBLE_TEST = False\nRUN_ANSIBLE_LINT = False\nRUN_FLAKE8 = True\n' >"$dir/importer.cfg"
  run_importer() {  # ARTIFACT: galaxy-importer's output
    (cd "$dir" && GALAXY_IMPORTER_CONFIG=$dir/importer.cfg PATH="$venv/bin:$PATH" \
      "$venv/bin/python" -m galaxy_importer.main "$1" 2>&1)
  }
  log=$(run_importer "$artifact")
  if ! grep -q "ERROR: .*'repository' is required" <<<"$log" || [ "$(grep -c 'ERROR' <<<"$log")" -ne 1 ]; then
    printf '%s\n' "$log" >&2; echo "galaxy-importer: expected the one error of the missing repository" >&2
    exit 1
  fi
  mkdir "$dir/copy" "$dir/out" && tar -xzf "$artifact" -C "$dir/copy" || exit 1
  "$VENV/bin/python" - "$dir/copy/MANIFEST.json" <<'PY' || exit 1
import json, sys
with open(sys.argv[1]) as f:
    manifest = json.load(f)
manifest['collection_info']['repository'] = 'https://repository.invalid/baremetal/k3s'
with open(sys.argv[1], 'w') as f:
    json.dump(manifest, f)
PY
  tar -czf "$dir/out/$(basename "$artifact")" -C "$dir/copy" . || exit 1
  log=$(run_importer "$dir/out/$(basename "$artifact")")
  if ! grep -q 'Importer processing completed successfully' <<<"$log" \
      || grep -E 'ERROR|WARNING' <<<"$log" | grep -v 'Ignore files skip ansible-test sanity tests'; then
    printf '%s\n' "$log" >&2; echo "galaxy-importer: the lines above are errors or warnings" >&2
    exit 1
  fi
  echo "galaxy-importer $(basename "$venv" | cut -d- -f3): clean (but the repository galaxy.yml does not give)"
)

galaxy_build() {  # the built artifact holds the collection and nothing of the test set-up
  local tree out
  tree=$(bk3s_collection_tree galaxy_build) || return 1
  out=$(mktemp -d)
  "$VENV/bin/ansible-galaxy" collection build "$tree" --output-path "$out" --force >/dev/null || return 1
  local listing
  listing=$(tar -tzf "$out"/baremetal-k3s-*.tar.gz)
  galaxy_import "$(echo "$out"/baremetal-k3s-*.tar.gz)" || { rm -rf "$out"; return 1; }
  rm -rf "$out"
  if grep -E '^(\.venv|\.ci|tests/output)/' <<<"$listing"; then
    echo "build_ignore leaks the files above into the collection artifact" >&2
    return 1
  fi
  # the guides and the role READMEs ship: Galaxy and Automation Hub show a role's README on its page
  local want
  for want in README.md docs/fleet.md docs/developing.md $(cd "$BK3S_ROOT" && ls roles/*/README.md); do
    grep -qx "$want" <<<"$listing" || { echo "the collection artifact lacks $want" >&2; return 1; }
  done
  echo "collection artifact: $(wc -l <<<"$listing") entries"
}

# As a new user: built artifact, oldest ansible-core, FQCN playbooks from outside the checkout.
product() { bash tests/product.sh; }

docs() { bash tests/docs/site.sh; }  # the docs site, built with warnings as errors, its links and pages checked

# Every scenario's test_sequence starts at create: molecule's destroy playbook costs 2-20 s a
# scenario even when nothing is there. What an earlier, stopped run left (a container of the
# scenario's platforms, or molecule's state saying its instances were created) is destroyed here
# first, by molecule itself.
molecule_leftovers() {
  local names
  grep -qs '^created: true' "$HOME"/.ansible/tmp/molecule.*."$1"/state.yml && return 0
  names=$("$VENV/bin/python" - "$1" <<'PY'
import sys, yaml
with open('extensions/molecule/%s/molecule.yml' % sys.argv[1]) as f:
    platforms = (yaml.safe_load(f) or {}).get('platforms') or [{'name': 'bk3s-' + sys.argv[1]}]
print('\n'.join(p['name'] for p in platforms))
PY
) || return 0
  docker ps -a --format '{{.Names}}' | grep -qxF "$names"
}

molecule_one() {
  (cd "$BK3S_ROOT" && export ANSIBLE_COLLECTIONS_PATH && ANSIBLE_COLLECTIONS_PATH=$(bk3s_collections_path) && bk3s_mitogen \
    && { ! molecule_leftovers "$1" || "$VENV/bin/molecule" destroy -s "$1"; } \
    && "$VENV/bin/molecule" test -s "$1")
}

record() {  # record NAME RC SECONDS CPU: a stage's result, wall time and its own CPU seconds
  local result=PASSED
  if [ "$2" -eq 0 ]; then PASSED=$((PASSED + 1)); else FAILED=$((FAILED + 1)); result=FAILED; fi
  RESULTS+=("$result ${3}s $4 $2 $1")
  echo "-- $1: exit $2 after $3s (its own CPU ${4}s)"
}

# Scenarios mostly wait (on systemd, on the API server), so MOLECULE_JOBS (default 3) run at
# once, together with the stages given as arguments (BESIDE, below), which count as jobs too.
# Each job writes its own log, printed whole when it ends, so the output reads in one piece.
molecule_all() {
  local jobs=${MOLECULE_JOBS:-3} logs sc running=0 cmd
  logs=$(mktemp -d)
  local -a todo=() reported=() pids=()
  # the longest first (their last CI times, most first), so that no long one starts last and runs
  # alone at the end, and the shortest last, to fill the cores while the last long ones end; any
  # other (a new scenario) follows in name order
  local order="fleet_etcd integration fleet_life product fleet_grow extenders rollout_faults drift upgrade_convert
    fleet_openrc k3s_config fleet_mirror k3s_unit sanity rollback plan lint docs rke2 kubeadm extender_status
    fleet_immutable k3s_immutable real_scheduler backup_restore k3s_openrc existing_config uninstall users
    galaxy_build smoke go_test"
  local all
  all=$(tr -s '\n' ' ' <<<"$* ${SCENARIOS:-$(cd extensions/molecule && printf '%s\n' */ | tr -d /)}")
  for sc in $order $all; do
    [[ " $all " == *" $sc "* ]] || continue
    [[ " ${todo[*]} " == *" $sc "* ]] && continue
    [[ " $* " == *" $sc "* ]] || [ -f "extensions/molecule/$sc/molecule.yml" ] && todo+=("$sc")
  done
  report_done() {  # print and record every job that has ended since the last call
    local f name rc secs cpu
    for f in "$logs"/*.rc; do
      [ -e "$f" ] || continue
      name=$(basename "$f" .rc)
      [[ " ${reported[*]} " == *" $name "* ]] && continue
      read -r rc secs cpu <"$f"
      bk3s_log "stage $(cat "$logs/$name.label")"
      cat "$logs/$name.log"
      record "$(cat "$logs/$name.label")" "$rc" "$secs" "$cpu"
      reported+=("$name")
      running=$((running - 1))
    done
  }
  for sc in "${todo[@]}"; do
    while [ "$running" -ge "$jobs" ]; do sleep 2; report_done; done
    if [[ " $* " == *" $sc "* ]]; then
      echo "$sc" >"$logs/$sc.label"; cmd=("$sc")
    else
      echo "molecule:$sc" >"$logs/$sc.label"; cmd=(molecule_one "$sc")
    fi
    bk3s_log "starting $(cat "$logs/$sc.label") (log printed when it ends)"
    (
      start=$SECONDS
      BK3S_STAGE=$(cat "$logs/$sc.label") "${cmd[@]}" >"$logs/$sc.log" 2>&1
      rc=$?
      children_cpu
      echo "$rc $((SECONDS - start)) $CHILDREN_CPU" >"$logs/$sc.rc.tmp" && mv "$logs/$sc.rc.tmp" "$logs/$sc.rc"
    ) &
    pids+=($!)
    running=$((running + 1))
  done
  while [ "$running" -gt 0 ]; do sleep 2; report_done; done
  [ "${#pids[@]}" -eq 0 ] || wait "${pids[@]}"  # reaped here, so that their CPU time is not counted in a later stage
  rm -rf "$logs"
}

ALL="images kube go_test unit sanity lint docs galaxy_build integration product molecule"
WANT=${*:-$ALL}
# with the scenarios, go_test, sanity, lint, docs, galaxy_build, integration and product run among their
# jobs instead of before them (each keeps one core busy of two: beside the scenarios, the other one
# works); the unit tests run before them, on both cores (beside them they cost more CPU time, theirs
# and the scenarios': 308 CPU-s instead of 247, the scenarios' retries and waits longer)
BESIDE=()
if [[ " $WANT " == *" molecule "* ]]; then
  for s in go_test sanity lint docs galaxy_build integration product; do [[ " $WANT " == *" $s "* ]] && BESIDE+=("$s"); done
fi

stage setup setup || { summary; exit 1; }
nodes_cpu_start
for s in $WANT; do
  case $s in
    images|kube)
      stage "$s" "$s" || { summary; exit 1; } ;;
    molecule)
      [ -n "${IMAGE_SYSTEMD:-}" ] || bk3s_images >/dev/null || { summary; exit 1; }
      [ -n "${BAREMETAL_K3S_KUBE_DIR:-}" ] || bk3s_kube >/dev/null || { summary; exit 1; }
      molecule_all "${BESIDE[@]}" ;;
    *)
      [[ " ${BESIDE[*]} " == *" $s "* ]] && continue
      if [ "$s" = integration ] && [ -z "${IMAGE_SYSTEMD:-}" ]; then bk3s_images >/dev/null; fi
      if [ "$s" = integration ] && [ -z "${BAREMETAL_K3S_KUBE_DIR:-}" ]; then bk3s_kube >/dev/null; fi
      stage "$s" "$s" ;;
  esac
done
summary
[ "$FAILED" -eq 0 ]
