#!/usr/bin/env bash
# deb.sh BUILD_DIR [OUT_DIR] -- a Debian package of the service:
# OUT_DIR/divergence_<version>_<arch>.deb (OUT_DIR defaults to dist/).
#
# The same install layout as the bundle (deploy/bundle.sh, which stages it):
# /opt/divergence/{bin,libexec,share}, the units in /lib/systemd/system, the
# environment file /etc/divergence/env (a conffile: dpkg keeps local edits).
# Unlike the bundle it carries no shared library Debian provides: it depends
# on Debian's libmicrohttpd12, libjansson4 and zlib1g (and the rest its binaries
# link), so apt's security updates reach them. It does carry CUPTI
# (libcupti.so.13, libnvperf_host.so, libnvperf_target.so in
# /opt/divergence/lib, where the worker looks: ../lib beside its libexec/),
# which no Debian 12 package of CUDA 13 provides, so a host with the driver
# and no toolkit still reads the hardware counters; NVIDIA's CUDA EULA allows
# it (Attachment A lists libcupti.so; section 2.3 lets Linux object code be
# redistributed unmodified, as Debian's non-free libcupti12 also ships the
# nvperf libraries) and its text goes with them.
# The CUDA runtime is linked into divergence-gpu statically, as in the
# bundle; the NVIDIA driver is the host's and only Recommended (see DRIVER
# below). postinst enables and starts the service and the refresh timer when
# systemd runs (not in a chroot or container build), and does nothing else.
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
# lib/ holds CUPTI only: nothing links it (the worker dlopen()s it), so the
# launcher's library path there shadows no library apt installs.
mkdir -p "$pkg/opt/divergence/lib"
cupti=()
for f in "$src"/lib/libcupti.so* "$src"/lib/libnvperf_host.so* "$src"/lib/libnvperf_target.so*; do
  [ -f "$f" ] || continue
  install -m 0644 "$f" "$pkg/opt/divergence/lib/"
  cupti+=("${f##*/}")
done
if [ ${#cupti[@]} -gt 0 ]; then
  [ -f "$src/share/divergence/licenses/NVIDIA-CUDA-EULA.txt" ] ||
    die "CUPTI would ship without the CUDA EULA's text (bundle.sh found none near the toolkit)"
else
  echo "deb: note: the build found no CUPTI: the package reads no hardware counters" >&2
fi
cp "$src/README.md" "$src/VERSION" "$pkg/opt/divergence/"
for u in divergence.service divergence@.service divergence-refresh.service divergence-refresh.timer; do
  install -m 0644 "$src/share/divergence/deploy/$u" "$pkg/lib/systemd/system/$u"
done
install -m 0600 "$src/share/divergence/deploy/env.example" "$pkg/etc/divergence/env"
echo /etc/divergence/env > "$pkg/DEBIAN/conffiles"
printf 'divergence %s\n\nBuilt from the project source; see /opt/divergence/README.md.\n' "$version" \
  > "$pkg/usr/share/doc/divergence/README.Debian"
if [ ${#cupti[@]} -gt 0 ]; then
  cat > "$pkg/usr/share/doc/divergence/copyright" <<COPYRIGHT
divergence: see /opt/divergence/README.md.

In /opt/divergence/lib, $(printf '%s, ' "${cupti[@]}" | sed 's/, $//'):
NVIDIA CUPTI, copyright NVIDIA Corporation, redistributed unmodified under
the CUDA Toolkit End User License Agreement, whose text is
/opt/divergence/share/divergence/licenses/NVIDIA-CUDA-EULA.txt.
COPYRIGHT
fi

# DRIVER: the oldest NVIDIA driver the linked CUDA runtime runs on. CUDA 13.x
# needs an R580 driver (minor version compatibility: any R580 runs any 13.x
# runtime), and 580.65.06 is the CUDA 13.0 GA driver of the CUDA 13.0 release
# notes' table of toolkit and driver versions (Linux x86_64). Recommends, not
# Depends, the way Debian's own libcudart12 names libcuda1: the service runs
# without a GPU (analysis, evidence, widget; /readyz says why not ready), a
# container gets the driver mounted from its node rather than installed, a
# host's driver may come from NVIDIA's installer rather than a package, and
# Ubuntu calls its package libnvidia-compute-580. The alternatives are
# Debian's names: libcuda1, the libcuda.so.1 it provides, and the
# libcuda-MAJOR.MINOR-1 of each CUDA version a driver supports.
cuda=$(sed -n 's/^set(CMAKE_CUDA_COMPILER_TOOLKIT_VERSION "\([0-9.]*\)")/\1/p' "$build"/CMakeFiles/*/CMakeCUDACompiler.cmake 2>/dev/null | head -n 1)
[ -n "$cuda" ] || die "cannot tell the CUDA version the build used ($build/CMakeFiles/*/CMakeCUDACompiler.cmake)"
case ${cuda%%.*} in
  13) driver=580.65.06 ;;
  *) die "CUDA $cuda: no minimum NVIDIA driver known here (add it to DRIVER in deploy/deb.sh)" ;;
esac
cuda_mm=$(cut -d. -f1,2 <<<"$cuda")
recommends="nginx, libcuda1 (>= $driver) | libcuda.so.1 (>= $driver) | libcuda-$cuda_mm-1"

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
for want in libmicrohttpd12 libjansson4 zlib1g; do
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
Recommends: $recommends
Suggests: nvidia-driver (>= $driver)
Section: science
Priority: optional
Homepage: https://divergence.invalid/
Description: GPU warp divergence measurements over HTTP
 A service that owns one NVIDIA GPU, measures warp divergence on it (the
 day-22 lesson's experiment) and explains the numbers: an HTTP API, a lesson
 widget, and a nightly evidence refresh. Needs the NVIDIA driver to measure
 (CUDA $cuda_mm: R580, $driver or newer); without a GPU it still serves the
 analysis, the evidence and the widget. Carries NVIDIA CUPTI for the
 hardware counters.
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
echo "deb: $deb (Depends: $depends; Recommends: $recommends)"
