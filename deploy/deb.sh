#!/usr/bin/env bash
# deb.sh BUILD_DIR [OUT_DIR] -- a Debian package of the service:
# OUT_DIR/divergence_<version>_<arch>.deb (OUT_DIR defaults to dist/).
#
# The same install layout as the bundle (deploy/bundle.sh, which stages it):
# /opt/divergence/{bin,libexec,share}, the units in /lib/systemd/system, the
# environment file /etc/divergence/env (a conffile: dpkg keeps local edits).
# Unlike the bundle it carries no shared libraries: it depends on Debian's
# libmicrohttpd12 and libjansson4, so apt's security updates reach them. The
# CUDA runtime is linked into divergence-gpu statically, as in the bundle;
# the NVIDIA driver is the host's. postinst enables and starts the service
# and the refresh timer when systemd runs (not in a chroot or container
# build), and does nothing else.
set -euo pipefail
die() { echo "deb: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
[ $# -ge 1 ] || die "usage: deb.sh BUILD_DIR [OUT_DIR]"
build=$(cd "$1" && pwd) || die "$1: no such build directory"
out=${2:-$root/dist}
command -v dpkg-deb >/dev/null || die "dpkg-deb not found (Debian package dpkg)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$here/bundle.sh" "$build" "$work/tar" >/dev/null
tar -xzf "$work"/tar/divergence-*.tar.gz -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'divergence-*' | head -n 1)
version=$(cat "$src/VERSION")
arch=$(dpkg --print-architecture)
pkg=$work/pkg
mkdir -p "$pkg/DEBIAN" "$pkg/opt/divergence" "$pkg/lib/systemd/system" "$pkg/etc/divergence" \
  "$pkg/usr/share/doc/divergence"
cp -R "$src/bin" "$src/libexec" "$src/share" "$pkg/opt/divergence/"
mkdir -p "$pkg/opt/divergence/lib" # empty: the launcher's library path finds nothing there
cp "$src/README.md" "$src/VERSION" "$pkg/opt/divergence/"
for u in divergence.service divergence@.service divergence-refresh.service divergence-refresh.timer; do
  install -m 0644 "$src/share/divergence/deploy/$u" "$pkg/lib/systemd/system/$u"
done
install -m 0600 "$src/share/divergence/deploy/env.example" "$pkg/etc/divergence/env"
echo /etc/divergence/env > "$pkg/DEBIAN/conffiles"
printf 'divergence %s\n\nBuilt from the project source; see /opt/divergence/README.md.\n' "$version" \
  > "$pkg/usr/share/doc/divergence/README.Debian"

# Depends: the package of every shared library either binary links directly
# (its NEEDED entries; the libraries' own dependencies are theirs to name),
# at least at the version built against; glibc by symbol version (the newest
# GLIBC_x.y the binaries need).
needed=$(objdump -p "$build/divergence" "$build/divergence-gpu" | awk '$1 == "NEEDED" { print $2 }' | sort -u)
paths=$({ ldd "$build/divergence"; ldd "$build/divergence-gpu"; } | awk '$2 == "=>" { print $1, $3 }' | sort -u)
deps=()
for so in $needed; do
  case $so in ld-linux*) continue ;; esac
  path=$(awk -v s="$so" '$1 == s { print $2; exit }' <<<"$paths")
  [ -n "$path" ] || die "$so: ldd does not resolve it"
  p=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -n1 | cut -d: -f1 || true)
  [ -n "$p" ] || p=$(dpkg -S "$path" 2>/dev/null | head -n1 | cut -d: -f1 || true)
  [ -n "$p" ] || die "$so ($path) belongs to no installed package: cannot name a dependency"
  case $p in libc6) continue ;; esac
  v=$(dpkg-query -W -f='${Version}' "$p" | sed 's/-[^-]*$//')
  printf '%s\n' "${deps[@]-}" | grep -q "^$p " || deps+=("$p (>= $v)")
done
glibc=$(objdump -T "$build/divergence" "$build/divergence-gpu" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' |
  sed 's/GLIBC_//' | sort -Vu | tail -n1)
[ -n "$glibc" ] || glibc=$(dpkg-query -W -f='${Version}' libc6 | sed 's/-[^-]*$//')
deps=("libc6 (>= $glibc)" "${deps[@]}")
for want in libmicrohttpd12 libjansson4; do
  printf '%s\n' "${deps[@]}" | grep -q "^$want " || die "$want is not among the dependencies found: ${deps[*]}"
done
depends=$(printf '%s, ' "${deps[@]}" | sed 's/, $//')
size=$(du -sk "$pkg" | cut -f1)

cat > "$pkg/DEBIAN/control" <<CONTROL
Package: divergence
Version: $version
Architecture: $arch
Maintainer: divergence maintainers <dev@divergence.invalid>
Installed-Size: $size
Depends: $depends
Recommends: nginx
Suggests: nvidia-driver
Section: science
Priority: optional
Homepage: https://divergence.invalid/
Description: GPU warp divergence measurements over HTTP
 A service that owns one NVIDIA GPU, measures warp divergence on it (the
 day-22 lesson's experiment) and explains the numbers: an HTTP API, a lesson
 widget, and a nightly evidence refresh. Needs the NVIDIA driver to measure;
 without a GPU it still serves the analysis, the evidence and the widget.
CONTROL

cat > "$pkg/DEBIAN/postinst" <<'SH'
#!/bin/sh
set -e
if [ "$1" = configure ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload || true
    systemctl enable divergence.service divergence-refresh.timer || true
    systemctl restart divergence.service || true
    systemctl start divergence-refresh.timer || true
fi
exit 0
SH
cat > "$pkg/DEBIAN/prerm" <<'SH'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
    systemctl stop divergence-refresh.timer divergence.service || true
    if [ "$1" = remove ]; then systemctl disable divergence.service divergence-refresh.timer || true; fi
fi
exit 0
SH
cat > "$pkg/DEBIAN/postrm" <<'SH'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
exit 0
SH
chmod 0755 "$pkg/DEBIAN/postinst" "$pkg/DEBIAN/prerm" "$pkg/DEBIAN/postrm"

mkdir -p "$out"
deb=$out/divergence_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$deb.tmp" >/dev/null
mv "$deb.tmp" "$deb"
echo "deb: $deb (Depends: $depends)"
