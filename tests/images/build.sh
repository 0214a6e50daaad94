#!/usr/bin/env bash
# Build the node images the tests run on, from Debian's mirror only (no registry):
#   baremetal-k3s/node:systemd-<key>   Debian bookworm, systemd as PID 1
#   baremetal-k3s/node:openrc-<key>    Debian bookworm, openrc-init as PID 1
# <key> hashes this script, so an image is rebuilt only when its recipe changes and is
# reused while present. Prints "IMAGE_SYSTEMD=..." and "IMAGE_OPENRC=..." lines last.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${BAREMETAL_K3S_CACHE:-/var/cache/baremetal-k3s}
mirror=${BAREMETAL_K3S_DEBIAN_MIRROR:-http://deb.debian.org/debian}
key=$(cat "$here/build.sh" "$here/zipcache.py" | sha256sum | cut -c1-12)

# Packages both images carry: Python for Ansible and the modules (YAML libraries the
# modules declare), tools the tests use, and what the k3s unit's ExecStartPre calls.
# No other Python package: the modules need PyYAML only (the API is reached
# with the platform's kubectl), no task uses ansible.builtin.apt/package_facts (python3-apt),
# and tests/product.sh fails on any other package in the nodes' site-packages.
common=python3,python3-yaml,procps,iproute2,kmod,ca-certificates,curl,openssl,sudo,less

log() { printf '%s images: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

build_one() {  # flavour, extra packages, command
  local flavour=$1 include=$2 cmd=$3
  local name="baremetal-k3s/node:${flavour}-${key}"
  if docker image inspect "$name" >/dev/null 2>&1; then
    log "reused $name"
    echo "$name"
    return 0
  fi
  local start=$SECONDS root
  root=$(mktemp -d "${TMPDIR:-/tmp}/bk3s-root-${flavour}.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$root'" RETURN
  log "debootstrap $flavour into $root"
  debootstrap --variant=minbase --include="$common,$include" bookworm "$root" "$mirror" \
    >"$root.log" 2>&1 || { tail -n 30 "$root.log" >&2; return 1; }
  # One machine-id per container: systemd fills an empty file at boot.
  : >"$root/etc/machine-id"
  mkdir -p "$root/var/lib/dbus"
  ln -sf /etc/machine-id "$root/var/lib/dbus/machine-id"
  # Nothing in a test container may pull updates or start daemons we did not ask for.
  rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*
  # The nodes' Python keeps what it compiles from Ansible's module archives (zipcache.py says why):
  # loaded by a .pth line, from outside the site directories, so that no module can import it.
  install -D -m 0644 "$here/zipcache.py" "$root/usr/local/lib/bk3s-test/zipcache.py"
  echo "import os; exec(compile(open('/usr/local/lib/bk3s-test/zipcache.py', 'rb').read(), 'zipcache.py', 'exec'), {})" \
    >"$root/usr/lib/python3/dist-packages/bk3s-test-zipcache.pth"
  case "$flavour" in
    systemd)
      # Units that make no sense in a container and slow its boot.
      for u in systemd-remount-fs.service systemd-udevd.service systemd-udev-trigger.service \
               getty.target console-getty.service systemd-logind.service; do
        ln -sf /dev/null "$root/etc/systemd/system/$u"
      done
      ;;
    openrc)
      sed -i 's/^#\?rc_sys=.*/rc_sys="docker"/' "$root/etc/rc.conf"
      ;;
  esac
  tar -C "$root" -c . | docker import -c "CMD [\"$cmd\"]" - "$name" >/dev/null
  rm -f "$root.log"
  log "built $name in $((SECONDS - start))s"
  echo "$name"
}

command -v debootstrap >/dev/null || { echo "debootstrap missing: apt-get install -y debootstrap" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "no docker engine: start dockerd first" >&2; exit 1; }
mkdir -p "$cache"

out=$(mktemp -d)
build_one systemd systemd,systemd-sysv,dbus /lib/systemd/systemd >"$out/systemd" &
p1=$!
build_one openrc openrc,sysvinit-utils /sbin/openrc-init >"$out/openrc" &
p2=$!
rc=0
wait $p1 || rc=1
wait $p2 || rc=1
[ $rc -eq 0 ] || { echo "image build failed" >&2; exit 1; }
echo "IMAGE_SYSTEMD=$(cat "$out/systemd")"
echo "IMAGE_OPENRC=$(cat "$out/openrc")"
rm -rf "$out"
