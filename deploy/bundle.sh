#!/usr/bin/env bash
# bundle.sh BUILD_DIR [OUT_DIR] -- a relocatable tarball of the service:
# OUT_DIR/divergence-<version>-<arch>.tar.gz (OUT_DIR defaults to dist/).
#
# Layout (unpacked anywhere, installed by its install.sh to /opt/divergence):
#   bin/divergence            launcher: sets LD_LIBRARY_PATH=lib, execs below
#   libexec/divergence        the binary: analyze, serve, refresh (no CUDA)
#   libexec/divergence-gpu    the GPU worker and `measure` (CUDA runtime
#                             linked statically); divergence execs it
#   lib/                      the shared libraries a base system lacks, and
#                             CUPTI (libcupti, libnvperf_host/target) when the
#                             build found it, for the hardware counters
#   share/divergence/static/  the widget; openapi.yaml
#   share/divergence/deploy/  systemd units, nginx site, env example
#   install.sh README.md VERSION
#
# Which libraries travel is decided by two explicit lists, matched against
# every library `ldd` reports for either binary:
#   BUNDLE  not in a base Ubuntu 24.04 / Debian 12 install: copied into lib/.
#           libcurl-gnutls (the refresh client's HTTP) is optional on both,
#           and so are its own dependencies outside GnuTLS (nghttp2, libssh2,
#           rtmp, psl, brotli, Kerberos, LDAP, SASL, OpenSSL's libcrypto):
#           they travel with it.
#   SYSTEM  present on every base install (glibc, libgcc; GnuTLS and its
#           dependencies, which apt itself needs): left to the host.
# A library in neither list stops the script: classify it here, do not guess.
# The NVIDIA driver (libcuda) is loaded at run time by the CUDA runtime and is
# the host's, as it must be. The host's glibc must be at least the build
# host's (Debian 12 builds run on Debian 12 and Ubuntu 24.04).
set -euo pipefail

BUNDLE='^(libmicrohttpd\.so|libjansson\.so|libcurl-gnutls\.so|libnghttp2\.so|librtmp\.so|libssh2\.so|libpsl\.so|libbrotlidec\.so|libbrotlicommon\.so|libgssapi_krb5\.so|libkrb5\.so|libk5crypto\.so|libkrb5support\.so|libcom_err\.so|libkeyutils\.so|libldap-2\.5\.so|liblber-2\.5\.so|libsasl2\.so|libcrypto\.so)'
SYSTEM='^(linux-vdso\.so|linux-gate\.so|ld-linux[-a-z0-9_]*\.so|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libgcc_s\.so|libstdc\+\+\.so|libgnutls\.so|libnettle\.so|libhogweed\.so|libgmp\.so|libp11-kit\.so|libidn2\.so|libunistring\.so|libtasn1\.so|libffi\.so|libz\.so|libzstd\.so|liblzma\.so|libcrypt\.so|libresolv\.so)'

die() { echo "bundle: $*" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
[ $# -ge 1 ] || die "usage: bundle.sh BUILD_DIR [OUT_DIR]"
build=$(cd "$1" && pwd) || die "$1: no such build directory"
out=${2:-$root/dist}
bin=$build/divergence
[ -x "$bin" ] || die "$bin: not built (cmake --build $1)"

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

# Shared libraries: every one classified, the BUNDLE ones copied.
bundled=()
while read -r soname path; do
  [ -n "$soname" ] || continue
  [ "$soname" != MISSING ] || die "ldd: $path: not found"
  if [[ $soname =~ $BUNDLE ]]; then
    [ -f "$path" ] || die "$soname: ldd found no file ($path)"
    cp -L "$path" "$stage/lib/$soname"
    chmod 0644 "$stage/lib/$soname"
    bundled+=("$soname")
  elif [[ $soname =~ $SYSTEM ]]; then
    :
  else
    die "$soname ($path) is in neither BUNDLE nor SYSTEM: classify it in deploy/bundle.sh"
  fi
done < <({ ldd "$bin"; ldd "$build/divergence-gpu"; } | sort -u | awk '
  /:$/ { next }
  /not found/ { print "MISSING " $1; next }
  $2 == "=>" { print $1, $3; next }
  { n = $1; sub(".*/", "", n); print n, $1 }')
# CUPTI (hardware counters) is loaded with dlopen, so ldd does not list it:
# the build records the libraries it found (DV_CUPTI_LIBRARIES in the CMake
# cache) and they travel in lib/, where the worker looks beside its libexec/.
# A build without CUPTI ships none; its documents say counters are null.
cupti=$(sed -n 's/^DV_CUPTI_LIBRARIES:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
IFS=';' read -r -a cupti_libs <<<"$cupti"
for lib in "${cupti_libs[@]}"; do
  [ -n "$lib" ] || continue
  [ -f "$lib" ] || die "$lib: recorded by the build as a CUPTI library but missing"
  soname=$(objdump -p "$lib" 2>/dev/null | awk '$1 == "SONAME" {print $2}')
  [ -n "$soname" ] || soname=$(basename "$lib")
  cp -L "$lib" "$stage/lib/$soname"
  chmod 0644 "$stage/lib/$soname"
  bundled+=("$soname")
done
for want in libmicrohttpd libjansson libcurl-gnutls; do
  grep -q "^$want\.so" < <(printf '%s\n' "${bundled[@]-}") ||
    echo "bundle: note: $want is not a shared dependency of $bin (linked statically?)" >&2
done

if [ -d "$root/static" ]; then
  cp -R "$root/static" "$stage/share/divergence/static"
else
  echo "bundle: warning: $root/static missing: the bundle has no widget" >&2
  mkdir -p "$stage/share/divergence/static"
fi
[ -f "$root/api/openapi.yaml" ] && install -m 0644 "$root/api/openapi.yaml" "$stage/share/divergence/openapi.yaml"
install -m 0644 "$here"/divergence.service "$here"/divergence@.service "$here"/divergence-refresh.service \
  "$here"/divergence-refresh.timer "$here/env.example" "$stage/share/divergence/deploy/"
install -m 0644 "$here/nginx/divergence.conf" "$here/nginx/divergence-fleet.conf" "$stage/share/divergence/deploy/nginx/"
install -m 0755 "$here/fleet-check.py" "$stage/share/divergence/deploy/fleet-check.py"
install -m 0755 "$here/install.sh" "$stage/install.sh"
install -m 0644 "$here/README.md" "$stage/README.md"
printf '%s\n' "$version" > "$stage/VERSION"

# The bundle must resolve its libraries from lib/ and start.
resolved=$(LD_LIBRARY_PATH="$stage/lib" ldd "$stage/libexec/divergence" "$stage/libexec/divergence-gpu")
for so in "${bundled[@]-}"; do
  [ -n "$so" ] || continue
  [[ $so =~ ^(libcupti|libnvperf) ]] && continue # dlopen()ed, not in ldd's list
  grep -q "$so => $stage/lib/$so" <<<"$resolved" || die "$so does not resolve to the bundle's lib/"
done
"$stage/bin/divergence" version >/dev/null || die "the bundled binary does not start"

mkdir -p "$out"
tarball=$out/$name.tar.gz
tar --sort=name --owner=0 --group=0 --numeric-owner -C "$work" -czf "$tarball.tmp" "$name"
mv "$tarball.tmp" "$tarball"
echo "bundle: $tarball (libraries: ${bundled[*]-none})"
if command -v sha256sum >/dev/null; then
  (cd "$out" && sha256sum "$name.tar.gz")
fi
