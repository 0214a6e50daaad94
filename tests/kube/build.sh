#!/usr/bin/env bash
# Build the k3s double's real Kubernetes parts (tests only) into a cache dir
# outside git:  ${BAREMETAL_K3S_CACHE:-/var/cache/baremetal-k3s}/kube/<key>/
#   k3s   multi-call: k3s server|agent and rke2 server|agent (launchers),
#         kubelet (static-pod runner double), kubeadm, kube-apiserver,
#         kube-scheduler, kubectl (the real Kubernetes v1.36.3 commands)
#   kine  github.com/k3s-io/kine v0.17.5 (separate module: tests/kube/kine),
#         linked statically so that it runs in the static-pod sandbox too
#   kube-scheduler-1.27  the real kube-scheduler v1.27.16 (separate module: tests/kube/scheduler127),
#         a second scheduler that still reads the v1beta2 and v1beta3 configs v1.36 refuses
# <key> = sha256 over go.mod, go.sum and every .go file under tests/kube (and
# this script, which holds the build flags). A complete dir is reused.
# The last line of stdout is the directory.
#   build.sh --go   only find (or fetch) the Go toolchain; last line = its go binary
#
# Go: GO=, else `go` on PATH, else /usr/local/go/bin/go, if it is at least the version
# the go.mod files need (their go/toolchain lines). Otherwise (a fresh Debian 12 ships
# Go 1.19) the pinned toolchain below is fetched from the Go module proxy as the module
# golang.org/toolchain (what GOTOOLCHAIN=auto would download), checked against its
# pinned h1: hash and unpacked into ${BAREMETAL_K3S_CACHE}/go/go<version>/ (a GOROOT).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${BAREMETAL_K3S_CACHE:-/var/cache/baremetal-k3s}
cache_root=$cache/kube

only_go=0
case ${1:-} in
  --go) only_go=1 ;;
  "") ;;
  *) echo "usage: $0 [--go]" >&2; exit 2 ;;
esac

# The toolchain fetched when the machine has no Go new enough. The h1: hash is the module's
# go.sum hash (dirhash of the zip, as `go mod download -json` reports it); the checksum
# database (sum.golang.org) is not reachable from the build machines, so it is pinned here.
# It was computed by `go mod download -json golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64`
# and the zip's files matched byte for byte the go1.26.8 linux/amd64 release in /usr/local/go
# (all 11497 files both hold; go.env differs only by GOTOOLCHAIN=local there).
# To move the pin: change go_pin; `bash build.sh --go` then stops at the checksum mismatch
# and names the zip's h1:, which has to be checked (checksum database, or a second source)
# before it goes into go_pin_h1.
go_pin=1.26.8
go_pin_arch=linux-amd64
go_pin_h1=h1:ZOmGe1OnfREDMIdb1Qi4G9JSuDPBLGExZMQ4nis1RXM=
go_pin_root=$cache/go/go$go_pin

# The newest go/toolchain line of the modules built here ("go 1.26.5", "toolchain go1.26.8").
go_need=$(sed -nE 's/^(go|toolchain)[[:space:]]+(go)?([0-9][^[:space:]]*).*/\3/p' "$here/go.mod" "$here/kine/go.mod" \
  "$here/scheduler127/go.mod" \
  | sort -V | tail -n 1)
[[ -n $go_need ]] || { echo "kube parts: no go line in $here/go.mod" >&2; exit 1; }

ver_ge() { [[ $(printf '%s\n' "$2" "$1" | sort -V | head -n 1) == "$2" ]]; }  # A >= B

go_version() {  # GO: its version without "go" (1.26.8), or fails (missing, broken, devel)
  local v
  v=$(GOTOOLCHAIN=local "$1" env GOVERSION 2>/dev/null) || return 1
  [[ $v == go[0-9]* ]] || return 1
  echo "${v#go}"
}

go_ok() { local v; v=$(go_version "$1") && ver_ge "$v" "$go_need"; }

# The pinned toolchain: fetched from the Go module proxy, checked, unpacked into go_pin_root.
go_fetch() {  # REASON
  local mod="golang.org/toolchain@v0.0.1-go$go_pin.$go_pin_arch" proxies proxy url dl got
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) echo "kube parts: $1, and the pinned toolchain is $go_pin_arch only: install Go >= $go_need and set GO=/path/to/bin/go" >&2
       return 1 ;;
  esac
  command -v python3 >/dev/null 2>&1 || {
    echo "kube parts: $1; fetching one needs python3: apt-get install -y python3" >&2; return 1; }
  proxies=${GOPROXY:-}
  if [[ -z $proxies ]] && command -v go >/dev/null 2>&1; then proxies=$(go env GOPROXY 2>/dev/null || true); fi
  proxies=${proxies:-https://proxy.golang.org,direct}

  mkdir -p "$cache/go"
  dl=$(mktemp -d "$cache/go/.fetch-go$go_pin.XXXXXX")
  # shellcheck disable=SC2064  # expand now: dl is local
  trap "rm -rf '$dl'" EXIT
  got=""
  for proxy in ${proxies//[,|]/ }; do
    case $proxy in
      off) break ;;
      direct|file://*) continue ;;
    esac
    url=${proxy%/}/golang.org/toolchain/@v/v0.0.1-go$go_pin.$go_pin_arch.zip
    echo "kube parts: $1: fetching go$go_pin from the Go module proxy ($url) into $go_pin_root" >&2
    if command -v curl >/dev/null 2>&1; then
      curl -fsSL --retry 3 --connect-timeout 20 -o "$dl/go.zip" "$url" && { got=$url; break; }
      echo "kube parts: curl failed to fetch $url (exit $?)" >&2
    else
      python3 - "$url" "$dl/go.zip" <<'EOF' && { got=$url; break; }
import shutil, sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=60) as r, open(sys.argv[2], "wb") as f:
        shutil.copyfileobj(r, f)
except Exception as e:
    sys.exit("kube parts: python3 urllib failed to fetch %s: %s" % (sys.argv[1], e))
EOF
    fi
  done
  if [[ -z $got ]]; then
    echo "kube parts: could not fetch $mod from the Go module proxy (GOPROXY=$proxies)." >&2
    echo "  Fix: make a Go module proxy reachable, e.g. GOPROXY=https://proxy.golang.org bash $here/build.sh" >&2
    echo "  or install Go >= $go_need and run: GO=/path/to/go/bin/go bash $here/build.sh" >&2
    return 1
  fi

  # Check the zip's h1: hash (golang.org/x/mod/sumdb/dirhash Hash1: sha256 over the sorted
  # lines "<sha256 hex>  <name>\n" of its files, base64), then unpack it as the go command
  # does a toolchain module: file modes kept, the _go.mod files copied to go.mod.
  python3 - "$dl/go.zip" "$mod/" "$go_pin_h1" "$dl/root" <<'EOF' || return 1
import base64, hashlib, os, shutil, sys, zipfile
path, prefix, want, dest = sys.argv[1:]
try:
    z = zipfile.ZipFile(path)
except zipfile.BadZipFile as e:
    sys.exit("kube parts: the fetched toolchain is not a zip (%s): %s" % (e, path))
files = [i for i in z.infolist() if not i.is_dir()]
lines = []
for i in sorted(files, key=lambda i: i.filename):
    h = hashlib.sha256()
    with z.open(i) as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    lines.append("%s  %s\n" % (h.hexdigest(), i.filename))
got = "h1:" + base64.b64encode(hashlib.sha256("".join(lines).encode()).digest()).decode()
if got != want:
    sys.exit("kube parts: checksum mismatch for %s: got %s, want %s (pinned in build.sh): not using it"
             % (prefix.rstrip("/"), got, want))
for i in files:
    rel = i.filename[len(prefix):] if i.filename.startswith(prefix) else ""
    if not rel or rel.startswith("/") or ".." in rel.split("/"):
        sys.exit("kube parts: unexpected file in the toolchain zip: %r" % i.filename)
    out = os.path.join(dest, rel)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with z.open(i) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.chmod(out, (i.external_attr >> 16) & 0o777 or 0o644)
for d, _, names in os.walk(dest):
    if "_go.mod" in names:
        shutil.copyfile(os.path.join(d, "_go.mod"), os.path.join(d, "go.mod"))
print("kube parts: %s verified (%s), %d files unpacked" % (prefix.rstrip("/"), got, len(files)), file=sys.stderr)
EOF
  "$dl/root/bin/go" version >/dev/null || { echo "kube parts: the fetched $dl/root/bin/go does not run" >&2; return 1; }
  # Atomic publish; if another build won the race, keep its toolchain.
  mv -T "$dl/root" "$go_pin_root" 2>/dev/null || [[ -x $go_pin_root/bin/go ]] || {
    echo "kube parts: could not move the toolchain into $go_pin_root" >&2; return 1; }
  rm -rf "$dl"
  trap - EXIT
}

GO=${GO:-}
if [[ -n $GO ]]; then
  go_ok "$GO" || {
    echo "kube parts: GO=$GO is not Go >= $go_need (it reports: $(go_version "$GO" || echo "nothing usable"))." >&2
    echo "  Fix: unset GO to use (or fetch) go$go_pin, or point GO at a Go >= $go_need" >&2
    exit 1; }
else
  found=()
  for c in "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go "$go_pin_root/bin/go"; do
    [[ -n $c && -x $c ]] || continue
    if go_ok "$c"; then GO=$c; break; fi
    found+=("$c ($(go_version "$c" || echo "unusable"))")
  done
  if [[ -z $GO ]]; then
    why="no Go >= $go_need on this machine"
    (( ${#found[@]} == 0 )) || why+=" (found: ${found[*]})"
    go_fetch "$why" || exit 1
    GO=$go_pin_root/bin/go
    go_ok "$GO" || { echo "kube parts: the fetched $GO is not Go >= $go_need: move go_pin in $0" >&2; exit 1; }
  fi
fi
if [[ $GO == "$go_pin_root/bin/go" ]]; then unset GOROOT; fi  # it knows its own GOROOT
if (( only_go )); then
  echo "kube parts: go: $GO ($("$GO" version))" >&2
  echo "$GO"
  exit 0
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

complete() { [[ -f $1/.complete && -x $1/k3s && -x $1/kine && -x $1/kube-scheduler-1.27 ]]; }

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

command -v "${CC:-gcc}" >/dev/null 2>&1 || {
  echo "kube parts: kine needs a C compiler and libc's static parts (CGO): apt-get install -y gcc libc6-dev" >&2; exit 1; }

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
# The second scheduler: pure Go, static, version-stamped as the release it is.
old_sched_flags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  old_sched_flags+=" -X $pkg.gitVersion=v1.27.16 -X $pkg.gitMajor=1 -X $pkg.gitMinor=27 -X $pkg.gitTreeState=clean"
done
( cd "$here/scheduler127" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags="-s -w$old_sched_flags" -o "$tmp/kube-scheduler-1.27" . ) \
  >"$tmp/scheduler127.log" 2>&1 &
old_sched_pid=$!

rc=0
wait "$k3s_pid" || { rc=1; echo "kube parts: building k3s (tests/kube/cmd/k3s) failed:" >&2; cat "$tmp/k3s.log" >&2; }
wait "$kine_pid" || { rc=1; echo "kube parts: building kine (tests/kube/kine) failed:" >&2; cat "$tmp/kine.log" >&2; }
wait "$old_sched_pid" || { rc=1; echo "kube parts: building kube-scheduler-1.27 (tests/kube/scheduler127) failed:" >&2
  cat "$tmp/scheduler127.log" >&2; }
if (( rc != 0 )); then exit 1; fi
rm -f "$tmp/k3s.log" "$tmp/kine.log" "$tmp/scheduler127.log"

"$tmp/k3s" --version >/dev/null || { echo "kube parts: built k3s does not run" >&2; exit 1; }
"$tmp/kine" --version >/dev/null || { echo "kube parts: built kine does not run" >&2; exit 1; }
"$tmp/kube-scheduler-1.27" --version >/dev/null || { echo "kube parts: built kube-scheduler-1.27 does not run" >&2; exit 1; }
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
for b in k3s kine kube-scheduler-1.27; do
  printf 'kube parts:   %-19s %s bytes (%s)\n' "$b" "$(stat -c %s "$out/$b")" "$(du -h "$out/$b" | cut -f1)"
done
echo "$out"
