#!/usr/bin/env bash
# tell-version.sh SRC DST VERSION [fail]
# Copy the k3s double SRC to DST with a trailer line appended that makes DST
# report VERSION (k3s --version, the start log line, the Nodes' kubeletVersion)
# instead of the one it was built with; with "fail", DST also refuses to start
# as a server or agent (exit 1 at once; --version still answers). Only a label:
# the Kubernetes components stay what was built. See README.md ("Told versions").
set -euo pipefail
if [[ $# -lt 3 || $# -gt 4 || ( $# -eq 4 && $4 != fail ) ]]; then
  echo "usage: $0 SRC DST VERSION [fail]" >&2
  exit 2
fi
src=$1 dst=$2 version=$3
if ! [[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$ ]]; then
  echo "$0: VERSION must look like v1.37.0+k3s1, got '$version'" >&2
  exit 2
fi
[[ -f $src ]] || { echo "$0: SRC $src is not a file" >&2; exit 2; }
trailer="#baremetal-k3s-double version=$version"
[[ $# -eq 4 ]] && trailer+=" fail=start"
tmp=$(mktemp "$(dirname -- "$dst")/.tell-version.XXXXXX")
trap 'rm -f -- "$tmp"' EXIT
cp -- "$src" "$tmp"
printf '\n%s\n' "$trailer" >>"$tmp"
chmod 0755 "$tmp"
mv -f -- "$tmp" "$dst"
trap - EXIT
