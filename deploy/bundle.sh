#!/usr/bin/env bash
# bundle.sh BUILD_DIR [OUT_DIR] -- a relocatable tarball of the service:
# OUT_DIR/divergence-<version>-<arch>.tar.gz (OUT_DIR defaults to dist/).
#
# Layout (unpacked anywhere, installed by its install.sh to /opt/divergence):
#   bin/divergence            launcher: sets LD_LIBRARY_PATH=lib, execs below
#   libexec/divergence        the binary: analyze, serve, refresh (no CUDA)
#   libexec/divergence-gpu    the GPU worker and `measure` (CUDA runtime
#                             linked statically); divergence execs it
#   lib/                      every shared library the binaries need that is
#                             not on the host list below, and
#                             CUPTI (libcupti, libnvperf_host/target) when the
#                             build found it, for the hardware counters
#   share/divergence/static/  the widget; share/divergence/openapi.yaml,
#                             host-sonames (what the host must provide),
#                             licenses/ (the CUDA EULA, when CUPTI travels)
#   share/divergence/deploy/  systemd units, nginx site, env example
#   install.sh README.md VERSION
#
# Which libraries travel is decided by one explicit list, HOST_SONAMES below:
# the exact sonames that a base install of BOTH Debian 12 and Ubuntu 24.04
# provides. Everything else that either binary or CUPTI needs, followed
# through every NEEDED entry of every library (objdump -p), not just what ldd
# says of the two binaries, is copied into lib/. bundle_check then proves it
# on the staged tree: every NEEDED entry of every ELF file in libexec/ and lib/
# is either a file in lib/ or on the host list, and no symbol version asked of
# a host library is newer than the older host (Debian 12) defines. It fails
# naming the library and the soname. `bundle.sh --check DIR` runs the same
# check on an unpacked bundle. share/divergence/host-sonames lists what the
# bundle expects from the host, for `install.sh --check` on the target.
# The NVIDIA driver (libcuda) is loaded at run time by the CUDA runtime and is
# the host's, as it must be.
set -euo pipefail

# ---- What the bundle leaves to the host ----------------------------------
# Each soname here is shipped under exactly this name by a base install of
# Debian 12 and of Ubuntu 24.04; nothing else is left to the host.
HOST_SONAMES=(
  # glibc (libc6 on both: the C library, its loader, and the libraries split
  # out of it). Never carried: a second glibc in one process cannot work.
  ld-linux-x86-64.so.2 ld-linux-aarch64.so.1 libc.so.6 libm.so.6 libpthread.so.0
  libdl.so.2 librt.so.1 libutil.so.1 libresolv.so.2 libanl.so.1
  # libgcc-s1 and libstdc++6: the compiler's runtime. apt itself is C++ and
  # links both on both systems; the CUDA runtime in divergence-gpu is C++.
  libgcc_s.so.1 libstdc++.so.6
  # zlib1g: Priority required on both.
  libz.so.1
)
# GnuTLS is NOT left to the host, although both ship libgnutls.so.30: the
# carried libpsl (libcurl's) needs libunistring.so.2, Ubuntu 24.04's GnuTLS
# and libidn2 load libunistring.so.5, and libunistring's symbols carry no
# version, so with both in one process the first one loaded would serve the
# other's callers. Carrying GnuTLS with its whole closure keeps one
# libunistring, one libidn2, one nettle in the process, all from the build
# host. The cost: TLS (only `refresh --server https://...` uses it) follows
# the bundle's updates, not the host's; the .deb (deploy/deb.sh) is the
# package that takes the host's libraries and their security updates.
#
# The newest symbol version a bundled file may ask of each host library
# family: what Debian 12, the older of the two hosts, defines (glibc 2.36,
# GCC 12's runtime, zlib 1.2.13); Ubuntu 24.04 (glibc 2.39, GCC 14, zlib 1.3)
# defines all of these. A build host newer than Debian 12 trips this check.
HOST_VERSION_FLOOR=(GLIBC_2.36 GLIBCXX_3.4.30 CXXABI_1.3.13 GCC_12.0.0 ZLIB_1.2.12)

die() { echo "bundle: $*" >&2; exit 1; }

on_host() { # SONAME: is it left to the host?
  local h
  for h in "${HOST_SONAMES[@]}"; do [ "$h" = "$1" ] && return 0; done
  return 1
}
needed() { objdump -p "$1" 2>/dev/null | awk '$1 == "NEEDED" { print $2 }'; }
is_elf() { [ -f "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

# bundle_check DIR: every ELF file in DIR/libexec and DIR/lib has each NEEDED
# entry either carried (DIR/lib/SONAME) or on the host list, carries nothing
# that is on the host list, and asks no host library for a symbol version
# newer than HOST_VERSION_FLOOR. Prints every problem, returns 1 if any.
bundle_check() {
  local dir=$1 f so bad=0 fam want floor
  command -v objdump >/dev/null || { echo "bundle: objdump not found (Debian package binutils)" >&2; return 1; }
  for f in "$dir"/libexec/* "$dir"/lib/*; do
    is_elf "$f" || continue
    if [ "${f%/*}" = "$dir/lib" ] && on_host "${f##*/}"; then
      echo "bundle: lib/${f##*/} is on the host list: the bundle must not carry it" >&2
      bad=1
    fi
    for so in $(needed "$f"); do
      if on_host "$so" || [ -f "$dir/lib/$so" ]; then continue; fi
      echo "bundle: ${f#"$dir"/} needs $so, which is neither carried in lib/ nor on the host list (HOST_SONAMES in deploy/bundle.sh)" >&2
      bad=1
    done
    # Version References: "required from libc.so.6:" then one version a line.
    while read -r so want; do
      on_host "$so" || continue
      fam=${want%_*}
      floor=$(printf '%s\n' "${HOST_VERSION_FLOOR[@]}" | awk -v f="$fam" 'index($0, f "_") == 1 { print; exit }')
      if [ -z "$floor" ]; then
        echo "bundle: ${f#"$dir"/} asks $so for $want, a version family with no floor in HOST_VERSION_FLOOR" >&2
        bad=1
      elif [ "$(printf '%s\n%s\n' "$want" "$floor" | sort -V | tail -n 1)" != "$floor" ]; then
        echo "bundle: ${f#"$dir"/} asks $so for $want, beyond what Debian 12's defines (up to $floor)" >&2
        bad=1
      fi
    done < <(objdump -p "$f" | awk '/^Version References:/ { r = 1; next } r && /^[^ ]/ { r = 0 }
      r && $1 == "required" { lib = $3; sub(":$", "", lib); next } r && NF == 4 { print lib, $4 }')
  done
  return $bad
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
if [ "${1:-}" = --check ]; then
  [ $# -eq 2 ] && [ -d "$2/libexec" ] || die "usage: bundle.sh --check UNPACKED_BUNDLE_DIR"
  bundle_check "$2" || die "$2: not self-contained for Debian 12 and Ubuntu 24.04"
  echo "bundle: $2: every library's dependencies are carried or on the host list"
  exit 0
fi
[ $# -ge 1 ] || die "usage: bundle.sh BUILD_DIR [OUT_DIR] | bundle.sh --check UNPACKED_BUNDLE_DIR"
build=$(cd "$1" && pwd) || die "$1: no such build directory"
out=${2:-$root/dist}
bin=$build/divergence
[ -x "$bin" ] || die "$bin: not built (cmake --build $1)"
command -v objdump >/dev/null || die "objdump not found (Debian package binutils)"

version=$("$bin" version 2>/dev/null | awk '{print $2; exit}') || true
if [ -z "$version" ]; then
  version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
fi
[ -n "$version" ] || die "cannot tell the version ($bin version printed nothing)"
arch=$(uname -m)
name=divergence-$version-$arch

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/$name
mkdir -p "$stage/bin" "$stage/libexec" "$stage/lib" "$stage/share/divergence/deploy/nginx"

install -m 0755 "$bin" "$stage/libexec/divergence"
[ -x "$build/divergence-gpu" ] || die "$build/divergence-gpu: not built (cmake --build $1)"
install -m 0755 "$build/divergence-gpu" "$stage/libexec/divergence-gpu"
install -m 0755 "$here/divergence.sh" "$stage/bin/divergence"

# CUPTI (hardware counters) is loaded with dlopen, so no NEEDED entry names
# it: the build records the libraries it found (DV_CUPTI_LIBRARIES in the
# CMake cache) and they travel in lib/ under their sonames, where the worker
# looks beside its libexec/ (kernels/gpu/counters.c). A build without CUPTI
# ships none; its documents say counters are null.
cupti=$(sed -n 's/^DV_CUPTI_LIBRARIES:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
IFS=';' read -r -a cupti_libs <<<"$cupti"
bundled=()
for lib in "${cupti_libs[@]}"; do
  [ -n "$lib" ] || continue
  [ -f "$lib" ] || die "$lib: recorded by the build as a CUPTI library but missing"
  soname=$(objdump -p "$lib" 2>/dev/null | awk '$1 == "SONAME" {print $2}')
  [ -n "$soname" ] || soname=$(basename "$lib")
  cp -L "$lib" "$stage/lib/$soname"
  chmod 0644 "$stage/lib/$soname"
  bundled+=("$soname")
done
# CUPTI is NVIDIA's, redistributed unmodified under the CUDA Toolkit EULA
# (Attachment A names libcupti.so; libnvperf_host/target.so are Linux object
# code, section 2.3): its text travels with the libraries. It sits at the
# toolkit's top (EULA.txt) or, for a toolkit assembled from NVIDIA's wheels,
# in the CUPTI wheel's metadata.
if [ ${#bundled[@]} -gt 0 ]; then
  top=$(cd "$(dirname "$(readlink -f "${cupti_libs[0]}")")/.." && pwd)
  eula=
  for e in "$top/EULA.txt" "$top"/dist-info/nvidia_cuda_cupti-*/licenses/License.txt /usr/share/doc/libcupti*/copyright; do
    [ -f "$e" ] && { eula=$e; break; }
  done
  if [ -n "$eula" ]; then
    mkdir -p "$stage/share/divergence/licenses"
    install -m 0644 "$eula" "$stage/share/divergence/licenses/NVIDIA-CUDA-EULA.txt"
  else
    echo "bundle: warning: CUPTI ships without the CUDA EULA's text (no EULA.txt near ${cupti_libs[0]})" >&2
  fi
fi

# Where the build host keeps each library of the closure: ldd of everything
# that starts the walk resolves all of it, transitively.
declare -A where=()
while read -r soname path; do
  [ -n "$soname" ] || continue
  [ "$soname" != MISSING ] || die "ldd: $path: not found on the build host"
  where[$soname]=$path
done < <(for f in "$stage"/libexec/* "$stage"/lib/*; do ldd "$f" 2>/dev/null; done | sort -u | awk '
  /:$/ { next }
  /not found/ { print "MISSING " $1; next }
  $2 == "=>" { print $1, $3; next }')

# The walk: every NEEDED entry of every file already staged, and of every
# library it brings; whatever is not on the host list is copied into lib/.
queue=("$stage"/libexec/* "$stage"/lib/*)
declare -A seen=()
while [ ${#queue[@]} -gt 0 ]; do
  f=${queue[0]}
  queue=("${queue[@]:1}")
  for so in $(needed "$f"); do
    on_host "$so" && continue
    [ -z "${seen[$so]-}" ] || continue
    seen[$so]=1
    [ -e "$stage/lib/$so" ] && continue
    path=${where[$so]-}
    [ -n "$path" ] && [ -f "$path" ] || die "${f#"$stage"/} needs $so, which the build host does not have (ldd found no file)"
    cp -L "$path" "$stage/lib/$so"
    chmod 0644 "$stage/lib/$so"
    bundled+=("$so")
    queue+=("$stage/lib/$so")
  done
done
for want in libmicrohttpd libjansson libcurl-gnutls; do # zlib (libz.so.1) is on every host: not bundled
  grep -q "^$want\.so" < <(printf '%s\n' "${bundled[@]-}") ||
    echo "bundle: note: $want is not a shared dependency of $bin (linked statically?)" >&2
done
bundle_check "$stage" || die "the staged bundle is not self-contained for Debian 12 and Ubuntu 24.04"

if [ -d "$root/static" ]; then
  cp -R "$root/static" "$stage/share/divergence/static"
else
  echo "bundle: warning: $root/static missing: the bundle has no widget" >&2
  mkdir -p "$stage/share/divergence/static"
fi
[ -f "$root/api/openapi.yaml" ] && install -m 0644 "$root/api/openapi.yaml" "$stage/share/divergence/openapi.yaml"
install -m 0644 "$here"/divergence.service "$here"/divergence@.service "$here"/divergence-refresh.service \
  "$here"/divergence-refresh.timer "$here/env.example" "$here/divergence-profiling.conf" "$stage/share/divergence/deploy/"
install -m 0644 "$here/nginx/divergence.conf" "$here/nginx/divergence-fleet.conf" "$stage/share/divergence/deploy/nginx/"
install -m 0755 "$here/fleet-check.py" "$stage/share/divergence/deploy/fleet-check.py"
install -m 0755 "$here/install.sh" "$stage/install.sh"
install -m 0644 "$here/README.md" "$stage/README.md"
printf '%s\n' "$version" > "$stage/VERSION"

# What the bundle expects from the host, one soname a line, for `install.sh
# --check` (and for anyone asking `ldconfig -p` on a target by hand).
for f in "$stage"/libexec/* "$stage"/lib/*; do if is_elf "$f"; then needed "$f"; fi; done | sort -u |
  while read -r so; do if on_host "$so"; then echo "$so"; fi; done > "$stage/share/divergence/host-sonames"

# The bundle must resolve its libraries from lib/ and start, with the caller's
# LD_LIBRARY_PATH gone (the launcher sets its own).
resolved=$(env -u LD_LIBRARY_PATH LD_LIBRARY_PATH="$stage/lib" ldd "$stage/libexec/divergence" "$stage/libexec/divergence-gpu")
! grep -q 'not found' <<<"$resolved" || die "ldd with lib/: $(grep 'not found' <<<"$resolved" | head -n 3 | tr -s ' \t' ' ')"
while read -r so path; do
  [ -e "$stage/lib/$so" ] || continue
  [ "$path" = "$stage/lib/$so" ] || die "$so resolves to $path, not the bundle's lib/"
done < <(awk '$2 == "=>" { print $1, $3 }' <<<"$resolved")
env -u LD_LIBRARY_PATH "$stage/bin/divergence" version >/dev/null || die "the bundled binary does not start"

mkdir -p "$out"
tarball=$out/$name.tar.gz
tar --sort=name --owner=0 --group=0 --numeric-owner -C "$work" -czf "$tarball.tmp" "$name"
mv "$tarball.tmp" "$tarball"
echo "bundle: $tarball (libraries: ${bundled[*]-none})"
if command -v sha256sum >/dev/null; then
  (cd "$out" && sha256sum "$name.tar.gz")
fi
