#!/usr/bin/env bash
# The Quick start on a machine without the CUDA toolkit: a fresh clone in a
# clean Debian 12 root (mmdebstrap, with only make, git and the certificates
# added) runs `make run` until /healthz answers, checks that the page, the
# analysis, the evidence and its chart are served and that the log says once
# that measuring needs the CUDA toolkit, then runs `make test` (which
# installs what it needs from Debian and npm). Too slow and too
# network-bound for every `make test`; run it by hand (root) after a change
# to the build, install-deps.sh or the Makefile.
#
# Usage: tests/deploy/nonvcc_check.sh [REPO [BRANCH [MIRROR]]]
# REPO defaults to this checkout, BRANCH to its current branch; the clone is
# of what is committed there. Output: the tails of `make run` and `make test`;
# the exit status is make test's.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
repo=${1:-$here}
branch=${2:-$(git -C "$repo" rev-parse --abbrev-ref HEAD)}
mirror=${3:-http://deb.debian.org/debian}
[ "$(id -u)" -eq 0 ] || { echo "nonvcc_check: run as root (chroot)" >&2; exit 77; }
command -v mmdebstrap >/dev/null || { echo "nonvcc_check: mmdebstrap missing (apt-get install mmdebstrap)" >&2; exit 77; }
tmp=$(mktemp -d /var/tmp/dv-nonvcc-XXXXXX)
root=$tmp/root
port=${DV_NONVCC_PORT:-18480}
# The server `make run` started, by the pid listening on its port (the root
# shares this machine's network).
server_pid() { ss -ltnpH "sport = :$port" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2; }
stop_server() { local p; p=$(server_pid); [ -n "$p" ] && kill "$p" 2>/dev/null; sleep 1; }
cleanup() {
  stop_server || true
  for m in dev/pts dev/shm dev proc sys; do umount -l "$root/$m" 2>/dev/null || true; done
  [ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

mmdebstrap --quiet --variant=apt --include=make,git,ca-certificates --mode=root bookworm "$root" "$mirror" 2>&1 |
  tail -n 3
[ -z "$(server_pid)" ] || { echo "nonvcc_check: port $port is taken (DV_NONVCC_PORT=...)" >&2; exit 1; }
echo "chroot: bookworm (apt variant, + make git ca-certificates), $(du -sm "$root" | cut -f1) MiB"
chroot "$root" sh -c 'command -v nvcc || ls /usr/local/cuda 2>/dev/null' &&
  { echo "nonvcc_check: the root has a CUDA toolkit: it proves nothing" >&2; exit 1; }
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mount -t tmpfs shm "$root/dev/shm"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# This machine's trust store, for registries reached through a proxy with a
# CA of its own (npm is told of it; apt in the root uses plain HTTP).
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/host-ca.crt"
git clone --quiet --branch "$branch" "file://$repo" "$root/root/divergence"
echo "clone: $(git -C "$root/root/divergence" log -1 --format='%h %s')"
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    NODE_EXTRA_CA_CERTS=/etc/host-ca.crt npm_config_cafile=/etc/host-ca.crt "$@"
}

# make run, until /healthz answers.
in_root sh -c "cd /root/divergence && { make run ARGS='--port $port' > /tmp/run.log 2>&1 & }"
for _ in $(seq 900); do
  in_root sh -c "command -v curl >/dev/null && curl -fsS -o /dev/null http://127.0.0.1:$port/healthz" 2>/dev/null && break
  sleep 1
done
echo "---- make run (tail)"
tail -n 25 "$root/tmp/run.log"
echo "---- served without nvcc"
in_root curl -fsS http://127.0.0.1:$port/healthz; echo
in_root curl -s -o /dev/null -w 'readyz: %{http_code}\n' http://127.0.0.1:$port/readyz
in_root curl -fsS -o /dev/null -w 'page /: %{http_code}, %{size_download} bytes\n' http://127.0.0.1:$port/
in_root curl -fsS -o /dev/null -w 'widget: %{http_code}, %{size_download} bytes\n' \
  http://127.0.0.1:$port/static/divergence-widget.js
in_root curl -fsS -X POST -H 'Content-Type: application/json' -d '{"part": 2}' http://127.0.0.1:$port/analyze |
  head -c 160; echo
in_root curl -fsS -o /dev/null -w 'evidence chart: %{http_code} %{content_type}, %{size_download} bytes\n' \
  http://127.0.0.1:$port/evidence/latest/day22-part2.svg
in_root curl -s -X POST -H 'Content-Type: application/json' -d '{"part": 2}' http://127.0.0.1:$port/measure; echo
n=$(grep -c 'measuring needs the CUDA toolkit' "$root/tmp/run.log" || true)
echo "the log says that measuring needs the CUDA toolkit: $n time(s)"
stop_server || true

# make test, every non-GPU test.
echo "---- make test"
set +e
in_root sh -c 'cd /root/divergence && make test' > "$tmp/test.log" 2>&1
rc=$?
set -e
tail -n 60 "$tmp/test.log"
echo "nonvcc_check: make test exited $rc"
exit "$rc"
