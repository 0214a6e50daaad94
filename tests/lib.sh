# shellcheck shell=bash
# Shared set-up for tests/run.sh and tests/demo.sh: everything a fresh Debian 12 machine
# (root) needs, each step skipped when already done. Sourced, not run.

BK3S_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export BAREMETAL_K3S_CACHE=${BAREMETAL_K3S_CACHE:-/var/cache/baremetal-k3s}
# Per-checkout working space in the cache: two clones on one machine never share a tree.
BK3S_WORK="$BAREMETAL_K3S_CACHE/checkout-$(printf '%s' "$BK3S_ROOT" | sha256sum | cut -c1-10)"
VENV="$BK3S_ROOT/.venv"

bk3s_log() { printf '\n== %s %s\n' "$(date +%H:%M:%S)" "$*"; }

bk3s_apt() {  # install Debian packages that are missing
  local missing=() p
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  bk3s_log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

bk3s_docker() {  # a running Docker engine, and room for the node containers' systemd
  # every node container runs systemd, which takes inotify instances from the host's per-user
  # budget (Debian: 128); with the fleet scenarios' containers up two at a time a node's systemd
  # fails to boot ("Failed to create inotify object: Too many open files")
  local want
  for want in fs.inotify.max_user_instances=1024 fs.inotify.max_user_watches=1048576; do
    [ "$(sysctl -n "${want%%=*}")" -ge "${want#*=}" ] || sysctl -q -w "$want"
  done
  if docker info >/dev/null 2>&1; then return 0; fi
  bk3s_apt docker.io
  bk3s_log "starting dockerd"
  mkdir -p /var/log
  # a pid file left by a dockerd that is gone (the machine restarted) stops a new one from starting
  local pid
  pid=$(cat /var/run/docker.pid 2>/dev/null || true)
  if [ -n "$pid" ] && ! grep -qs dockerd "/proc/$pid/comm"; then rm -f /var/run/docker.pid; fi
  # with no descriptor of this shell but its output: a lock the caller holds (flock) must not live on in the daemon
  nohup python3 -c 'import os; os.closerange(3, 65536); os.execvp("dockerd", ["dockerd"])' \
    >/var/log/baremetal-k3s-dockerd.log 2>&1 &
  local _
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && return 0
    sleep 1
  done
  echo "dockerd did not come up; see /var/log/baremetal-k3s-dockerd.log" >&2
  tail -n 20 /var/log/baremetal-k3s-dockerd.log >&2
  return 1
}

# .venv: a link to the pinned test tools' venv in the cache, one per set of pins and Python (a clean
# clone reuses it instead of installing again; built under a lock, so two clones do not race)
bk3s_venv() {
  local want dir
  want=$( { cat "$BK3S_ROOT/tests/requirements.txt"; python3 --version; } | sha256sum | cut -c1-16)
  dir="$BAREMETAL_K3S_CACHE/venv/$want"
  # molecule, ansible-lint and ansible-test run ansible-* commands by name
  case ":$PATH:" in *":$VENV/bin:"*) ;; *) export PATH="$VENV/bin:$PATH" ;; esac
  if [ "$(readlink "$VENV")" = "$dir" ] && [ -f "$dir/.complete" ]; then return 0; fi
  mkdir -p "$BAREMETAL_K3S_CACHE/venv"
  (
    flock 9
    [ -f "$dir/.complete" ] && exit 0
    bk3s_log "creating $dir (linked as $VENV)"
    rm -rf "$dir"
    python3 -m venv "$dir" && "$dir/bin/pip" install -q --disable-pip-version-check -r "$BK3S_ROOT/tests/requirements.txt" \
      && touch "$dir/.complete"
  ) 9>"$BAREMETAL_K3S_CACHE/venv/.lock" || return 1
  rm -rf "$VENV"  # a link (only the link goes), or a venv of an older tests/lib.sh
  ln -s "$dir" "$VENV"
}

bk3s_images() {  # sets IMAGE_SYSTEMD and IMAGE_OPENRC
  bk3s_apt debootstrap
  local out
  out=$(bash "$BK3S_ROOT/tests/images/build.sh")
  eval "$(grep -E '^IMAGE_(SYSTEMD|OPENRC)=' <<<"$out")"
  export IMAGE_SYSTEMD IMAGE_OPENRC
  export BAREMETAL_K3S_IMAGE_SYSTEMD=$IMAGE_SYSTEMD BAREMETAL_K3S_IMAGE_OPENRC=$IMAGE_OPENRC
}

bk3s_kube() {  # sets BAREMETAL_K3S_KUBE_DIR: the launcher and the real parts
  local out
  out=$(bash "$BK3S_ROOT/tests/kube/build.sh")
  BAREMETAL_K3S_KUBE_DIR=$(tail -n 1 <<<"$out")
  # what an operator gives the k3s_server/k3s_agent roles with the binary: its sha256
  BAREMETAL_K3S_K3S_SHA256=$(sha256sum "$BAREMETAL_K3S_KUBE_DIR/k3s" | cut -d' ' -f1)
  export BAREMETAL_K3S_KUBE_DIR BAREMETAL_K3S_K3S_SHA256
}

# ansible_collections/baremetal/k3s, as ansible-test and ansible-galaxy want it: a copy
# of the files git knows (tracked and new, not ignored), so nothing stale rides along.
bk3s_collection_tree() {  # [NAME]: a tree of its own per caller, so parallel callers do not collide
  local dest="$BK3S_WORK/${1:-work}/ansible_collections/baremetal/k3s"
  rm -rf "$dest"
  mkdir -p "$dest"
  (cd "$BK3S_ROOT" && git ls-files -z --cached --others --exclude-standard \
    | tar --null --ignore-failed-read -c -T - 2>/dev/null) | tar -C "$dest" -x
  echo "$dest"
}

# Mitogen's strategy, for the scenarios alone (extensions/molecule/config.yml says why, and which run without it;
# tests/product.sh runs on Ansible's defaults): exported into the caller's environment
bk3s_mitogen() {
  ANSIBLE_STRATEGY_PLUGINS=$("$VENV/bin/python" -c \
    'import ansible_mitogen, os; print(os.path.join(os.path.dirname(ansible_mitogen.__file__), "plugins", "strategy"))') || return 1
  ANSIBLE_STRATEGY=mitogen_linear
  export ANSIBLE_STRATEGY ANSIBLE_STRATEGY_PLUGINS
}

# ANSIBLE_COLLECTIONS_PATH entry that resolves baremetal.k3s to this checkout, live.
bk3s_collections_path() {
  local farm="$BK3S_WORK/live"
  mkdir -p "$farm/ansible_collections/baremetal"
  ln -sfn "$BK3S_ROOT" "$farm/ansible_collections/baremetal/k3s"
  echo "$farm"
}

# The docker run flags a node container needs: systemd (or openrc-init) as PID 1 without
# --privileged, with the capabilities systemd needs. The doubles of tests/kube are
# mounted read-only where each platform keeps its binaries: BK3S_PLATFORM k3s (default), rke2
# or kubeadm (kubeadm-init-offline at /opt/bk3s/k3s, for the offline init phases only).
# BK3S_BARE=1: a bare node, as a fresh OS leaves it (no k3s: the roles copy it in); only kine is
# mounted, which real k3s embeds and the double runs beside it.
bk3s_node_run() {  # NAME IMAGE [extra docker run args...]
  local name=$1 image=$2 cmd=/lib/systemd/systemd dir=$BAREMETAL_K3S_KUBE_DIR
  shift 2
  case "$image" in *openrc*) cmd=/sbin/openrc-init ;; esac
  local -a bins
  local kind=${BK3S_PLATFORM:-k3s}
  [ "${BK3S_BARE:-0}" = 1 ] && kind=bare
  case "$kind" in
    bare) bins=(-v "$dir/kine:/usr/local/bin/kine:ro") ;;
    rke2) bins=(-v "$dir/k3s:/usr/local/bin/rke2:ro" -v "$dir/kine:/usr/local/bin/kine:ro"
                -v "$dir/k3s:/var/lib/rancher/rke2/bin/kubectl:ro") ;;
    kubeadm) bins=(-v "$dir/k3s:/usr/bin/kubeadm:ro" -v "$dir/k3s:/usr/bin/kubelet:ro" -v "$dir/k3s:/usr/bin/kubectl:ro"
                   -v "$dir/kine:/usr/bin/kine:ro" -v "$dir/k3s:/opt/bk3s/k3s:ro") ;;
    *) bins=(-v "$dir/k3s:/usr/local/bin/k3s:ro" -v "$dir/kine:/usr/local/bin/kine:ro") ;;
  esac
  docker rm -f "$name" >/dev/null 2>&1 || true
  docker run -d --name "$name" --hostname "$name" \
    --cap-add SYS_ADMIN --cap-add NET_ADMIN \
    --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
    -v /sys/fs/cgroup:/sys/fs/cgroup:rw --cgroupns host \
    --tmpfs /run --tmpfs /run/lock --tmpfs /tmp \
    "${bins[@]}" --label baremetal-k3s=node --label "bk3s.stage=${BK3S_STAGE:-}" "$@" "$image" "$cmd" >/dev/null
}

# --- As a new user: the oldest ansible-core the collection supports, the built artifact
# installed offline into an empty collections path, playbooks run by FQCN from outside the
# checkout. tests/demo.sh and tests/product.sh go this way.

# meta/runtime.yml's requires_ansible floor, at its newest patch release.
BK3S_ANSIBLE_CORE_MIN=${BK3S_ANSIBLE_CORE_MIN:-2.17.14}

bk3s_user_venv() {  # sets USER_VENV: a venv holding ansible-core and nothing else
  USER_VENV="$BAREMETAL_K3S_CACHE/user-venv/ansible-core-$BK3S_ANSIBLE_CORE_MIN"
  if [ -x "$USER_VENV/bin/ansible-playbook" ]; then return 0; fi
  bk3s_log "creating $USER_VENV (ansible-core $BK3S_ANSIBLE_CORE_MIN only)"
  rm -rf "$USER_VENV"
  python3 -m venv "$USER_VENV"
  "$USER_VENV/bin/pip" install -q --disable-pip-version-check "ansible-core==$BK3S_ANSIBLE_CORE_MIN"
}

# DIR: build the collection artifact from the checkout and install it offline into DIR, an
# empty collections path, as README.md tells users to. Prints the artifact's path. The
# collections galaxy.yml depends on are put there first, as an offline operator would (here
# from the `ansible` package of the tests' venv: the same release Galaxy serves).
bk3s_user_install() {
  local dir=$1 tree dist dep src
  tree=$(bk3s_collection_tree "tree-$(basename "$(dirname "$dir")")") || return 1
  dist="$(dirname "$dir")/dist"
  rm -rf "$dist" "$dir"
  mkdir -p "$dist" "$dir"
  for dep in $(bk3s_dependencies); do
    src=$("$VENV/bin/python" -c "import ansible_collections.$dep as m; print(list(m.__path__)[0])") || return 1
    mkdir -p "$dir/ansible_collections/${dep%%.*}"
    cp -a "$src" "$dir/ansible_collections/${dep%%.*}/${dep#*.}"
  done
  "$USER_VENV/bin/ansible-galaxy" collection build "$tree" --output-path "$dist" >/dev/null || return 1
  # only the target path in view: with another installation of the same version on ANSIBLE_COLLECTIONS_PATH
  # (tests/product.sh exports its own), ansible-galaxy says "Nothing to do" and installs nothing here
  ANSIBLE_COLLECTIONS_PATH="$dir" "$USER_VENV/bin/ansible-galaxy" collection install --offline -p "$dir" \
    "$dist"/baremetal-k3s-*.tar.gz >/dev/null || return 1
  [ -f "$dir/ansible_collections/baremetal/k3s/MANIFEST.json" ] || { echo "baremetal.k3s is not installed in $dir" >&2; return 1; }
  ls "$dist"/baremetal-k3s-*.tar.gz
}

bk3s_dependencies() {  # the collections galaxy.yml's dependencies name, one per line
  "$VENV/bin/python" -c 'import sys, yaml; print("\n".join(yaml.safe_load(open(sys.argv[1]))["dependencies"] or {}))' \
    "$BK3S_ROOT/galaxy.yml"
}

# DIR: a collections path holding only community.docker, the tests' transport into the node
# containers (docker exec). An operator reaches nodes over SSH and needs none of it.
bk3s_transport() {
  local dir=$1 src
  src=$("$VENV/bin/python" -c 'import ansible_collections.community.docker as m; print(list(m.__path__)[0])') || return 1
  mkdir -p "$dir/ansible_collections/community"
  ln -sfn "$src" "$dir/ansible_collections/community/docker"
  echo "$dir"
}
