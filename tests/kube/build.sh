#!/usr/bin/env bash
# Build the k3s double's real Kubernetes parts (tests only) into a cache dir
# outside git:  ${BAREMETAL_K3S_CACHE:-/var/cache/baremetal-k3s}/kube/<key>/
#   k3s   multi-call: k3s server|agent and rke2 server|agent (launchers),
#         kubelet (static-pod runner double), kubeadm, kube-apiserver,
#         kube-scheduler, kubectl (the real Kubernetes v1.36.3 commands)
#   kine  github.com/k3s-io/kine v0.17.5 (separate module: tests/kube/kine),
#         linked statically so that it runs in the static-pod sandbox too
# <key> = sha256 over go.mod, go.sum and every .go file under tests/kube (and
# this script, which holds the build flags). A complete dir is reused.
# The last line of stdout is the directory.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${BAREMETAL_K3S_CACHE:-/var/cache/baremetal-k3s}/kube

GO=${GO:-}
if [[ -z $GO ]]; then
  if command -v go >/dev/null 2>&1; then GO=$(command -v go)
  elif [[ -x /usr/local/go/bin/go ]]; then GO=/usr/local/go/bin/go
  else echo "kube parts: no Go toolchain found (set GO= or put go on PATH)" >&2; exit 1
  fi
fi
export GOTOOLCHAIN=local        # never download a toolchain
export GOFLAGS="-mod=mod -buildvcs=false"

key=$(
  cd "$here"
  { find . -name go.mod -o -name go.sum -o -name '*.go'; echo ./build.sh; } \
    | LC_ALL=C sort \
    | while read -r f; do printf '%s\0' "$f"; sha256sum <"$f"; done \
    | sha256sum | cut -c1-16
)
out=$cache_root/$key

complete() { [[ -f $1/.complete && -x $1/k3s && -x $1/kine ]]; }

if complete "$out"; then
  echo "kube parts: reused $out"
  echo "$out"
  exit 0
fi

mkdir -p "$cache_root"
tmp=$(mktemp -d "$cache_root/.build-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

k8s_ver=v1.36.3
ver_pkg_flags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ver_pkg_flags+=" -X $pkg.gitVersion=$k8s_ver+k3s1 -X $pkg.gitMajor=1 -X $pkg.gitMinor=36 -X $pkg.gitTreeState=clean"
done

start=$SECONDS
echo "kube parts: building $out (go: $("$GO" version))" >&2

# k3s: pure Go, static. kine: CGO for mattn/go-sqlite3, linked statically as
# k3s links itself (the static-pod sandbox holds no shared libraries).
( cd "$here" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags="-s -w$ver_pkg_flags" -o "$tmp/k3s" ./cmd/k3s ) \
  >"$tmp/k3s.log" 2>&1 &
k3s_pid=$!
( cd "$here/kine" && CGO_ENABLED=1 "$GO" build -trimpath -tags "netgo,osusergo,sqlite_omit_load_extension" \
    -ldflags="-s -w -linkmode external -extldflags -static -X github.com/k3s-io/kine/pkg/version.Version=v0.17.5 -X github.com/k3s-io/kine/pkg/version.GitCommit=upstream" \
    -o "$tmp/kine" . ) >"$tmp/kine.log" 2>&1 &
kine_pid=$!

rc=0
wait "$k3s_pid" || { rc=1; echo "kube parts: building k3s (tests/kube/cmd/k3s) failed:" >&2; cat "$tmp/k3s.log" >&2; }
wait "$kine_pid" || { rc=1; echo "kube parts: building kine (tests/kube/kine) failed:" >&2; cat "$tmp/kine.log" >&2; }
if (( rc != 0 )); then exit 1; fi
rm -f "$tmp/k3s.log" "$tmp/kine.log"

"$tmp/k3s" --version >/dev/null || { echo "kube parts: built k3s does not run" >&2; exit 1; }
"$tmp/kine" --version >/dev/null || { echo "kube parts: built kine does not run" >&2; exit 1; }
touch "$tmp/.complete"
chmod 0755 "$tmp"

# Atomic publish; if another build won the race, keep its result.
if ! mv -T "$tmp" "$out" 2>/dev/null; then
  if ! complete "$out"; then
    rm -rf "$out" && mv -T "$tmp" "$out"
  fi
fi
trap - EXIT
rm -rf "$tmp"

echo "kube parts: built in $((SECONDS - start))s"
for b in k3s kine; do
  printf 'kube parts:   %-5s %s bytes (%s)\n' "$b" "$(stat -c %s "$out/$b")" "$(du -h "$out/$b" | cut -f1)"
done
echo "$out"
