#!/usr/bin/env bash
# install.sh -- installs a divergence bundle (made by deploy/bundle.sh) as a
# systemd service.
#
#   install.sh [--prefix /opt/divergence] [--root DIR] [--no-start] [BUNDLE.tar.gz]
#   install.sh --check [BUNDLE.tar.gz]
#
# Without a tarball it installs the bundle it sits in. It puts the bundle in
# PREFIX (the previous one is swapped out whole, never overwritten in place),
# the units in /etc/systemd/system (with PREFIX substituted), creates
# /etc/divergence/env for the token when missing (never overwrites it),
# copies the nginx site to /etc/nginx/sites-available when nginx is there
# (not enabled: it needs a certificate first), then enables and starts
# divergence.service and divergence-refresh.timer.
# --root DIR installs under DIR instead of / and touches no running system
# (packaging, tests); --no-start enables without starting.
# Before installing on the running system, and alone with --check (no root
# needed, nothing installed), it asks `ldconfig -p` for every soname the
# bundle expects from the host (share/divergence/host-sonames, written by
# bundle.sh) and stops naming any that is missing.
set -euo pipefail

die() { echo "install: $*" >&2; exit 1; }

prefix=/opt/divergence
destroot=
start=1
check_only=0
tarball=
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --root) destroot=${2:?--root needs a directory}; shift 2 ;;
    --root=*) destroot=${1#*=}; shift ;;
    --no-start) start=0; shift ;;
    --check) check_only=1; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) tarball=$1; shift ;;
  esac
done
case $prefix in /*) ;; *) die "--prefix must be absolute" ;; esac
[ -n "$destroot" ] || [ "$check_only" -eq 1 ] || [ "$(id -u)" -eq 0 ] || die "run as root (or give --root DIR)"

work=
cleanup() { [ -z "$work" ] || rm -rf "$work"; }
trap cleanup EXIT
if [ -n "$tarball" ]; then
  work=$(mktemp -d)
  tar -xzf "$tarball" -C "$work"
  src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'divergence-*' | head -n 1)
  [ -n "$src" ] || die "$tarball: not a divergence bundle"
else
  src=$(cd "$(dirname "$0")" && pwd)
fi
[ -x "$src/libexec/divergence" ] && [ -x "$src/bin/divergence" ] ||
  die "$src: not a divergence bundle (no bin/ and libexec/divergence); make one with deploy/bundle.sh"
version=$(cat "$src/VERSION" 2>/dev/null || echo unknown)

# host_check: every soname the bundle leaves to the host is known to this
# host's dynamic loader (ldconfig's cache).
host_check() {
  local list=$src/share/divergence/host-sonames so missing=0 cache
  [ -f "$list" ] || { echo "install: $list missing: a bundle older than its host check" >&2; return 1; }
  cache=$(ldconfig -p 2>/dev/null || /sbin/ldconfig -p)
  while read -r so; do
    [ -n "$so" ] || continue
    if awk -v s="$so" '$1 == s { f = 1 } END { exit !f }' <<<"$cache"; then
      echo "install: host has $so"
    else
      echo "install: host lacks $so, which the bundle expects from the system" >&2
      missing=1
    fi
  done < "$list"
  return $missing
}
if [ "$check_only" -eq 1 ]; then
  host_check || die "this host cannot run divergence $version (see above)"
  echo "install: this host provides every library divergence $version expects from it"
  exit 0
fi
if [ -z "$destroot" ]; then
  host_check >/dev/null || die "this host cannot run divergence $version (install.sh --check lists what is missing)"
fi

dest=$destroot$prefix
units=$destroot/etc/systemd/system
etc=$destroot/etc/divergence
mkdir -p "$(dirname "$dest")" "$units" "$etc"

# The new tree next to the old, then two renames.
rm -rf "$dest.new" "$dest.old"
mkdir -p "$dest.new"
cp -R "$src/bin" "$src/libexec" "$src/lib" "$src/share" "$dest.new/"
for f in install.sh README.md VERSION; do
  [ ! -f "$src/$f" ] || cp "$src/$f" "$dest.new/"
done
if [ -e "$dest" ]; then mv "$dest" "$dest.old"; fi
mv "$dest.new" "$dest"
rm -rf "$dest.old"

for f in divergence.service divergence@.service divergence-refresh.service divergence-refresh.timer; do
  sed "s|/opt/divergence|$prefix|g" "$src/share/divergence/deploy/$f" > "$units/$f.tmp"
  chmod 0644 "$units/$f.tmp"
  mv "$units/$f.tmp" "$units/$f"
done

if [ ! -e "$etc/env" ]; then
  (umask 077 && cp "$src/share/divergence/deploy/env.example" "$etc/env")
  echo "install: wrote $etc/env: set DIVERGENCE_TOKEN there to require a token"
fi

site=$destroot/etc/nginx/sites-available
if [ -d "$site" ] && [ ! -e "$site/divergence.conf" ]; then
  cp "$src/share/divergence/deploy/nginx/divergence.conf" "$site/divergence.conf"
  echo "install: nginx site in $site/divergence.conf: set server_name and the certificate, then"
  echo "         ln -s ../sites-available/divergence.conf /etc/nginx/sites-enabled/ && nginx -t && systemctl reload nginx"
fi

echo "install: divergence $version in $dest"
if [ -z "$destroot" ]; then
  systemctl daemon-reload
  if [ "$start" -eq 1 ]; then
    systemctl enable divergence.service divergence-refresh.timer
    systemctl restart divergence.service
    systemctl start divergence-refresh.timer
    echo "install: started; check: curl -s http://127.0.0.1:8080/readyz"
  else
    systemctl enable divergence.service divergence-refresh.timer
    echo "install: enabled; start with: systemctl start divergence.service divergence-refresh.timer"
  fi
fi
