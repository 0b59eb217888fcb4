#!/usr/bin/env bash
# The bundle and the .deb on a clean Debian: mmdebstrap makes a minimal
# bookworm root filesystem (apt variant: no package beyond apt's own needs).
# First the bundle (deploy/bundle.sh), unpacked there before anything else is
# installed, runs bare (no LD_LIBRARY_PATH from the caller): `install.sh
# --check` finds every host soname, ldd finds no missing library, `version`
# and `analyze --part 1` run and `measure --part 1` exits 3 (no GPU in the
# chroot). Then apt resolves the package with its Recommends (the R580
# driver library it recommends is in no Debian 12 archive and must not stop
# it), and the package is installed there with `apt install
# ./divergence_*.deb` (which must pull
# libmicrohttpd12 and libjansson4 from Debian), and the installed server is
# started in the chroot and answers /healthz, /readyz (503: no GPU there),
# the widget and /metrics. Too slow and too network-bound for every `make
# test` (it downloads a Debian base); run it by hand or in a nightly job.
# deploy_check.sh checks the package's structure on every run.
#
# Usage: tests/deploy/deb_install_check.sh BUILD_DIR [MIRROR]
# Needs root, mmdebstrap (Debian package mmdebstrap) and curl.
set -euo pipefail
build=$(cd "$1" && pwd)
mirror=${2:-http://deb.debian.org/debian}
here=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "deb_install_check: run as root (chroot)" >&2; exit 77; }
command -v mmdebstrap >/dev/null || { echo "deb_install_check: mmdebstrap missing (apt-get install mmdebstrap)" >&2; exit 77; }
tmp=$(mktemp -d)
root=$tmp/root
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  umount "$root/proc" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

"$here/deploy/bundle.sh" "$build" "$tmp/dist" | tail -n 1
"$here/deploy/deb.sh" "$build" "$tmp/dist"
deb=$(ls "$tmp"/dist/divergence_*.deb)
tarball=$(ls "$tmp"/dist/divergence-*.tar.gz)
t0=$(date +%s)
mmdebstrap --quiet --variant=apt --mode=root bookworm "$root" "$mirror" 2>&1 | tail -n 3
echo "chroot: bookworm (variant apt) in $(( $(date +%s) - t0 )) s, $(du -sm "$root" | cut -f1) MiB"
chroot "$root" dpkg-query -W -f='${Package}\n' | grep -E '^lib(microhttpd|jansson)' &&
  { echo "deb_install_check: the clean root already has the libraries: it proves nothing" >&2; exit 1; }
# The bundle, in the root as mmdebstrap left it (with /proc: the server finds
# its worker through /proc/self/exe).
mount -t proc proc "$root/proc"
mkdir -p "$root/opt/bundle" && tar -xzf "$tarball" -C "$root/opt/bundle" --strip-components=1
bare() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
bare /opt/bundle/install.sh --check | tail -n 1
missing=$(bare sh -c 'LD_LIBRARY_PATH=/opt/bundle/lib ldd /opt/bundle/libexec/* /opt/bundle/lib/*.so* 2>&1 | grep "not found" | sort -u' || true)
[ -z "$missing" ] || { echo "deb_install_check: the bundle misses on a clean bookworm: $missing" >&2; exit 1; }
echo "bundle: ldd finds every library of the bundle on a clean bookworm"
bare /opt/bundle/bin/divergence version
bare /opt/bundle/bin/divergence analyze --part 1 | grep -m 1 'Part 1'
rc=0; bare /opt/bundle/bin/divergence measure --part 1 >/dev/null 2>"$tmp/measure.err" || rc=$?
echo "bundle: measure --part 1 exit $rc (3: no usable GPU): $(head -n 1 "$tmp/measure.err")"
[ "$rc" -eq 3 ] || { echo "deb_install_check: measure in the chroot exited $rc, not 3" >&2; exit 1; }
cp "$deb" "$root/tmp/"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
chroot "$root" apt-get update -qq # mmdebstrap leaves no package lists behind
# With its Recommends (what a plain `apt install` does): the R580 driver
# library it recommends is in no Debian 12 archive, which must not stop it.
chroot "$root" sh -c "cd /tmp && apt-get -s install ./$(basename "$deb")" > "$tmp/simulate.log" 2>&1 ||
  { cat "$tmp/simulate.log" >&2; echo "deb_install_check: apt cannot resolve the package with its Recommends" >&2; exit 1; }
echo "apt, with Recommends: $(grep -cE '^Inst ' "$tmp/simulate.log") packages to install, none of them a driver: $(grep -E '^Inst (libcuda|nvidia)' "$tmp/simulate.log" | wc -l) driver packages"
chroot "$root" sh -c "cd /tmp && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ./$(basename "$deb")" 2>&1 |
  grep -E '^(Setting up|Unpacking|The following NEW)|libmicrohttpd|libjansson' | head -n 20
chroot "$root" dpkg-query -W -f='${Package} ${Version} ${Status}\n' divergence libmicrohttpd12 libjansson4
chroot "$root" /opt/divergence/bin/divergence version
chroot "$root" /opt/divergence/bin/divergence serve --port 18099 --evidence-dir /var/lib/divergence/evidence \
  2>"$tmp/serve.log" &
pid=$!
for _ in $(seq 100); do grep -q '^listening on' "$tmp/serve.log" 2>/dev/null && break; sleep 0.1; done
curl -fsS http://127.0.0.1:18099/healthz; echo
echo "readyz: $(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18099/readyz) (no GPU in the chroot)"
curl -fsS -o /dev/null -w 'widget: %{http_code}, %{size_download} bytes\n' http://127.0.0.1:18099/static/divergence-widget.js
curl -fsS http://127.0.0.1:18099/metrics | grep -E '^divergence_build_info'
grep -E 'libmicrohttpd|listening' "$tmp/serve.log" | head -n 3
echo "deb_install_check: ok"
