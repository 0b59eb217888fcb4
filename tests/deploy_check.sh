#!/usr/bin/env bash
# deploy_check.sh [SOURCE_DIR] [BUILD_DIR] -- checks deploy/ as the target
# tools would:
#   1. systemd-analyze verify on the units, pointed at a stand-in executable
#      in a temp prefix (the real one lives in /opt/divergence on a host);
#      any output at all is a failure, since verify reports unknown or
#      misspelled directives as warnings and still exits 0;
#   2. nginx -t on the site, inside a temp nginx.conf, with a self-signed
#      certificate made by openssl;
#   3. the shell scripts parse (bash -n, sh -n);
#   4. with a BUILD_DIR holding a built `divergence`: bundle.sh makes the
#      tarball; unpacked, it passes `bundle.sh --check` (every carried
#      library's NEEDED closure carried or on the host list that Debian 12
#      and Ubuntu 24.04 share) and each planted break fails it by name; it
#      runs with no LD_LIBRARY_PATH from the caller; `install.sh --check`
#      finds its host sonames here and names one planted missing;
#      install.sh --root installs it into a temp root, and the installed
#      launcher starts the binary with the bundled libraries;
#   5. deb.sh makes the .deb: its control file depends on Debian's
#      libmicrohttpd12 and libjansson4 and recommends (never depends on) the
#      R580 driver library, it carries the install layout, CUPTI in
#      /opt/divergence/lib with NVIDIA's EULA and no copy of a library Debian
#      provides, and unpacked (dpkg-deb -x) its launcher runs and its CUPTI
#      loads.
#      Installing it with apt on a clean Debian is tests/deploy/
#      deb_install_check.sh (slow: it downloads a Debian base).
# Each check also runs once against a broken copy, which must fail, so the
# check cannot pass by not looking. Exit 0 all passed, 1 a failure, 77 when a
# tool is missing (ctest SKIP_RETURN_CODE).
set -uo pipefail
. "$(dirname "$0")/deploy/nginx_prefix.sh"

src=$(cd "${1:-$(dirname "$0")/..}" && pwd)
build=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
skip=0
ok() { echo "PASS: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
skipped() { echo "SKIP: $*"; skip=$((skip + 1)); }

# ---- 1. systemd units ---------------------------------------------------
units=(divergence.service divergence-refresh.service divergence-refresh.timer)
if command -v systemd-analyze >/dev/null 2>&1; then
  mkdir -p "$tmp/prefix/bin" "$tmp/units" "$tmp/units-broken"
  printf '#!/bin/sh\nexit 0\n' > "$tmp/prefix/bin/divergence"
  chmod +x "$tmp/prefix/bin/divergence"
  for u in "${units[@]}"; do
    sed "s|/opt/divergence|$tmp/prefix|g" "$src/deploy/$u" > "$tmp/units/$u"
  done
  sed "s|/opt/divergence|$tmp/prefix|g" "$src/deploy/divergence@.service" > "$tmp/units/divergence@.service"
  out=$(cd "$tmp/units" && systemd-analyze verify "${units[@]}" divergence@0.service divergence@1.service 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && [ -z "$out" ]; then ok "systemd-analyze verify ${units[*]}"
  else bad "systemd-analyze verify (rc $rc): $out"; fi

  cp "$tmp/units/"* "$tmp/units-broken/"
  sed -i 's/^ProtectSystem=strict/ProtectSytem=strict/' "$tmp/units-broken/divergence.service"
  out=$(cd "$tmp/units-broken" && systemd-analyze verify divergence.service 2>&1)
  if [ -n "$out" ]; then ok "systemd-analyze verify reports a misspelled directive"
  else bad "systemd-analyze verify said nothing about a misspelled directive"; fi

  # The profiling drop-in, applied to the unit: verify still says nothing,
  # and a misspelling in the drop-in is reported (so it is read).
  mkdir -p "$tmp/units-drop/divergence.service.d"
  cp "$tmp/units/divergence.service" "$tmp/units-drop/"
  cp "$src/deploy/divergence-profiling.conf" "$tmp/units-drop/divergence.service.d/profiling.conf"
  out=$(cd "$tmp/units-drop" && systemd-analyze verify divergence.service 2>&1)
  [ -z "$out" ] && ok "systemd-analyze verify divergence.service with divergence-profiling.conf" ||
    bad "profiling drop-in: $out"
  grep -qx 'AmbientCapabilities=CAP_SYS_ADMIN' "$src/deploy/divergence-profiling.conf" &&
    grep -qx 'CapabilityBoundingSet=CAP_SYS_ADMIN' "$src/deploy/divergence-profiling.conf" &&
    ok "divergence-profiling.conf: CAP_SYS_ADMIN bounded and ambient" || bad "divergence-profiling.conf lacks CAP_SYS_ADMIN"
  sed -i 's/^AmbientCapabilities=/AmbientCapabilitys=/' "$tmp/units-drop/divergence.service.d/profiling.conf"
  out=$(cd "$tmp/units-drop" && systemd-analyze verify divergence.service 2>&1)
  [ -n "$out" ] && ok "systemd-analyze verify reads the drop-in (reports its misspelling)" ||
    bad "systemd-analyze verify did not read the drop-in"

  # What the issue asks of the units, by directive.
  need() { grep -qE "^$2" "$src/deploy/$1" && ok "$1: $2" || bad "$1 lacks $2"; }
  need divergence.service 'Restart=on-failure'
  need divergence.service 'StartLimitIntervalSec='
  need divergence.service 'StartLimitBurst='
  need divergence.service 'TimeoutStopSec=(9[0-9]|[1-9][0-9]{2,})'
  need divergence.service 'StateDirectory=divergence'
  need divergence.service 'ExecStart=.* serve .*--evidence-dir /var/lib/divergence/evidence'
  need divergence.service 'DevicePolicy=closed'
  need divergence.service 'DeviceAllow=/dev/nvidiactl rw'
  need divergence.service 'DeviceAllow=char-nvidia-frontend rw'
  need divergence.service 'NoNewPrivileges=yes'
  need divergence.service 'ProtectSystem=strict'
  need divergence.service 'EnvironmentFile=-/etc/divergence/env'
  need divergence.service 'Type=notify'
  need divergence.service 'WatchdogSec=[1-9]'
  need divergence.service 'MemoryMax=[1-9]'
  grep -qE '^PrivateDevices=yes' "$src/deploy/divergence.service" &&
    bad "divergence.service: PrivateDevices would hide /dev/nvidia*" || ok "divergence.service keeps /dev/nvidia* visible"
  need divergence@.service 'ExecStart=.* serve .*--port 808%i --device %i --job-id-prefix 0%i'
  need divergence@.service 'User=divergence'
  need divergence@.service 'Type=notify'
  need divergence-refresh.service 'Type=oneshot'
  need divergence-refresh.service 'ExecStart=.* refresh --server http://127.0.0.1:8080'
  need divergence-refresh.timer 'OnCalendar=daily'
  need divergence-refresh.timer 'Persistent=true'
  need divergence-refresh.timer 'RandomizedDelaySec='
else
  skipped "systemd-analyze not installed (apt-get install systemd)"
fi

# ---- 2. nginx site ----------------------------------------------------------
if command -v nginx >/dev/null 2>&1 && command -v openssl >/dev/null 2>&1; then
  n=$tmp/nginx
  mkdir -p "$n/logs" "$n/cache"
  if openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=divergence.example.org \
      -keyout "$n/key.pem" -out "$n/cert.pem" >/dev/null 2>&1; then
    sed -e "s|/etc/ssl/certs/divergence.crt|$n/cert.pem|" \
        -e "s|/etc/ssl/private/divergence.key|$n/key.pem|" \
        -e "s|/var/cache/nginx/divergence|$n/cache|" \
        -e "s|/var/www/html|$n|" "$src/deploy/nginx/divergence.conf" > "$n/site.conf"
    nginx_prefix_conf "$n" "$n/site.conf"
    if out=$(nginx -t -q -p "$n" -c "$n/nginx.conf" 2>&1); then ok "nginx -t on deploy/nginx/divergence.conf"
    else bad "nginx -t: $out"; fi
    sed "s|include $n/site.conf;|include $src/deploy/nginx/divergence-fleet.conf;|" "$n/nginx.conf" > "$n/fleet.conf"
    if out=$(nginx -t -q -p "$n" -c "$n/fleet.conf" 2>&1); then ok "nginx -t on deploy/nginx/divergence-fleet.conf"
    else bad "nginx -t (fleet): $out"; fi
    grep -q 'limit_req zone=divergence_post' "$n/site.conf" && ok "nginx: POST rate limit" || bad "nginx: no limit_req"
    grep -q 'proxy_cache divergence_evidence' "$n/site.conf" && ok "nginx: evidence cache" || bad "nginx: no proxy_cache"
    grep -q 'client_max_body_size 64k' "$n/site.conf" && ok "nginx: 64k bodies" || bad "nginx: body limit"
    grep -q 'return 301 https://' "$n/site.conf" && ok "nginx: HTTP to HTTPS" || bad "nginx: no redirect"
    for loc in /metrics /device; do
      awk -v l="location = $loc {" 'index($0, l) { f = 1 } f && /deny all;/ { found = 1 } f && /}/ { exit } END { exit !found }' \
        "$n/site.conf" && ok "nginx: $loc behind an allowlist" || bad "nginx: $loc is public"
    done
    grep -q '^ *gzip on;' "$n/site.conf" && grep -q 'gzip_types .*text/javascript' "$n/site.conf" &&
      ok "nginx: gzip for the widget and JSON" || bad "nginx: no gzip"
    grep -q '^ *etag on;' "$n/site.conf" && ok "nginx: static ETags" || bad "nginx: no etag"
    sed -i 's/proxy_cache_revalidate on;/proxy_cache_revalidate maybe;/' "$n/site.conf"
    if nginx -t -q -p "$n" -c "$n/nginx.conf" >/dev/null 2>&1; then bad "nginx -t accepted a broken site"
    else ok "nginx -t rejects a broken site"; fi
  else
    bad "openssl could not make a self-signed certificate"
  fi
else
  skipped "nginx or openssl not installed"
fi

# ---- 3. scripts parse -------------------------------------------------------
for s in deploy/bundle.sh deploy/install.sh deploy/deb.sh deploy/demo-evidence.sh deploy/capture-demo.sh tests/deploy_check.sh; do
  bash -n "$src/$s" && ok "bash -n $s" || bad "bash -n $s"
done
sh -n "$src/deploy/divergence.sh" && ok "sh -n deploy/divergence.sh" || bad "sh -n deploy/divergence.sh"

# ---- 4. bundle and install ------------------------------------------------
# The bundle and the .deb carry divergence-gpu: a build without nvcc has none.
if [ -n "$build" ] && [ -x "$build/divergence" ] && [ ! -x "$build/divergence-gpu" ]; then
  skipped "bundle and deb: '$build' was built without CUDA (no divergence-gpu to ship)"
elif [ -n "$build" ] && [ -x "$build/divergence" ]; then
  if out=$("$src/deploy/bundle.sh" "$build" "$tmp/dist" 2>&1); then
    tarball=$(ls "$tmp/dist"/divergence-*.tar.gz 2>/dev/null | head -n 1)
    ok "bundle.sh: $(basename "$tarball")"
    listing=$(tar -tzf "$tarball")
    for p in bin/divergence libexec/divergence libexec/divergence-gpu install.sh README.md VERSION \
             share/divergence/deploy/divergence.service share/divergence/deploy/divergence-refresh.timer \
             share/divergence/deploy/nginx/divergence.conf share/divergence/deploy/divergence@.service \
             share/divergence/deploy/nginx/divergence-fleet.conf share/divergence/deploy/fleet-check.py \
             share/divergence/deploy/divergence-profiling.conf share/divergence/host-sonames; do
      grep -q "^divergence-[^/]*/$p\$" <<<"$listing" && ok "bundle holds $p" || bad "bundle lacks $p"
    done
    # Self-contained for both hosts: the unpacked bundle passes bundle.sh
    # --check, and each way of breaking it is caught, naming the library.
    mkdir -p "$tmp/unpacked" && tar -xzf "$tarball" -C "$tmp/unpacked"
    ub=$(ls -d "$tmp/unpacked"/divergence-*)
    if out=$("$src/deploy/bundle.sh" --check "$ub" 2>&1); then ok "bundle.sh --check: every carried library's closure is carried or on the host list"
    else bad "bundle.sh --check on a fresh bundle: $out"; fi
    hs=$ub/share/divergence/host-sonames
    if [ -s "$hs" ] && grep -qx 'libc.so.6' "$hs" && ! grep -qvE '^(ld-linux[-a-z0-9_]*\.so\.[0-9]|lib(c|m|pthread|dl|rt|util|resolv|anl)\.so\.[0-9]|libgcc_s\.so\.1|libstdc\+\+\.so\.6|libz\.so\.1)$' "$hs"; then
      ok "host-sonames: only glibc, libgcc_s, libstdc++ and zlib left to the host ($(tr '\n' ' ' < "$hs"))"
    else
      bad "host-sonames: $(tr '\n' ' ' < "$hs" 2>/dev/null)"
    fi
    if [ -f "$ub/lib/libpsl.so.5" ]; then
      [ -f "$ub/lib/libunistring.so.2" ] && ok "libpsl.so.5 travels with libunistring.so.2" || bad "libpsl.so.5 without libunistring.so.2"
      mkdir -p "$tmp/aside" && mv "$ub/lib/libunistring.so.2" "$tmp/aside/"
      out=$("$src/deploy/bundle.sh" --check "$ub" 2>&1) && bad "bundle.sh --check passed a bundle without libunistring.so.2" ||
        { grep -q 'lib/libpsl.so.5 needs libunistring.so.2' <<<"$out" && ok "bundle.sh --check names libpsl.so.5 and libunistring.so.2 when it is missing" ||
          bad "bundle.sh --check without libunistring.so.2 said: $out"; }
      mv "$tmp/aside/libunistring.so.2" "$ub/lib/"
    fi
    if command -v cc >/dev/null 2>&1; then
      # A planted carried library whose NEEDED soname nobody provides, and one
      # asking the host's zlib for a version no host defines.
      p=$tmp/plant && mkdir -p "$p"
      printf 'int dv_stub(void) { return 1; }\n' > "$p/stub.c"
      printf 'int dv_stub(void); int dv_plant(void) { return dv_stub(); }\n' > "$p/plant.c"
      cc -shared -fPIC -o "$p/libdv-missing.so.1" -Wl,-soname,libdv-missing.so.1 "$p/stub.c" &&
        cc -shared -fPIC -o "$ub/lib/libdv-plant.so.1" -Wl,-soname,libdv-plant.so.1 "$p/plant.c" -L"$p" -l:libdv-missing.so.1
      out=$("$src/deploy/bundle.sh" --check "$ub" 2>&1) && bad "bundle.sh --check passed a planted library with an unmet NEEDED" ||
        { grep -q 'lib/libdv-plant.so.1 needs libdv-missing.so.1, which is neither carried' <<<"$out" &&
            ok "bundle.sh --check names a planted library and its missing soname" || bad "planted library: $out"; }
      rm -f "$ub/lib/libdv-plant.so.1"
      printf 'ZLIB_9.9 { global: dv_stub; local: *; };\n' > "$p/ver.map"
      cc -shared -fPIC -o "$p/libz.so.1" -Wl,-soname,libz.so.1 -Wl,--version-script="$p/ver.map" "$p/stub.c" &&
        cc -shared -fPIC -o "$ub/lib/libdv-plant.so.1" -Wl,-soname,libdv-plant.so.1 "$p/plant.c" -L"$p" -l:libz.so.1
      out=$("$src/deploy/bundle.sh" --check "$ub" 2>&1) && bad "bundle.sh --check passed a library asking zlib for ZLIB_9.9" ||
        { grep -q 'lib/libdv-plant.so.1 asks libz.so.1 for ZLIB_9.9' <<<"$out" &&
            ok "bundle.sh --check catches a symbol version newer than Debian 12's" || bad "version probe: $out"; }
      rm -f "$ub/lib/libdv-plant.so.1"
    else
      skipped "no C compiler: planted-library probes of bundle.sh --check"
    fi
    # The bundle runs as shipped: no LD_LIBRARY_PATH from the caller.
    if v=$(env -i PATH=/usr/bin:/bin "$ub/bin/divergence" version 2>&1) &&
       a=$(env -i PATH=/usr/bin:/bin "$ub/bin/divergence" analyze --part 1 2>&1) && grep -q 'Part 1' <<<"$a"; then
      ok "unpacked bundle runs bare: $v; analyze --part 1"
    else
      bad "unpacked bundle, bare environment: $v $a"
    fi
    ldd_out=$(LD_LIBRARY_PATH="$ub/lib" ldd "$ub"/libexec/* "$ub"/lib/*.so* 2>&1)
    grep -q 'not found' <<<"$ldd_out" && bad "ldd with the bundle's lib/: $(grep 'not found' <<<"$ldd_out" | sort -u | head -n 3)" ||
      ok "ldd: every file of the bundle resolves with lib/ and the host"
    if out=$("$ub/install.sh" --check 2>&1); then ok "install.sh --check: this host has every soname the bundle expects"
    else bad "install.sh --check: $out"; fi
    echo libdv-not-on-any-host.so.7 >> "$hs"
    out=$("$ub/install.sh" --check 2>&1) && bad "install.sh --check passed a soname the host lacks" ||
      { grep -q 'host lacks libdv-not-on-any-host.so.7' <<<"$out" && ok "install.sh --check names a soname the host lacks" ||
          bad "install.sh --check with a missing soname: $out"; }
    if "$src/deploy/install.sh" --root "$tmp/root" "$tarball" >/dev/null 2>&1; then
      ok "install.sh --root"
      [ -f "$tmp/root/etc/systemd/system/divergence.service" ] && ok "unit installed" || bad "unit not installed"
      [ -f "$tmp/root/etc/divergence/env" ] && ok "env file created" || bad "env file missing"
      if v=$(env -u LD_LIBRARY_PATH "$tmp/root/opt/divergence/bin/divergence" version 2>&1); then
        ok "installed launcher runs: $v"
      else
        bad "installed launcher: $v"
      fi
      libs=$(LD_LIBRARY_PATH="$tmp/root/opt/divergence/lib" ldd "$tmp/root/opt/divergence/libexec/divergence")
      for so in $(ls "$tmp/root/opt/divergence/lib"); do
        # CUPTI is dlopen()ed by the worker, so ldd never lists it: it only has to be there.
        if [[ $so =~ ^(libcupti|libnvperf) ]]; then ok "$so shipped for the hardware counters"; continue; fi
        grep -q "$so => $tmp/root/opt/divergence/lib/$so" <<<"$libs" && ok "$so from the bundle" ||
          bad "$so not taken from the bundle"
      done
    else
      bad "install.sh --root failed"
    fi
  else
    bad "bundle.sh: $out"
  fi
else
  skipped "bundle: no built divergence in '${build:-}' (pass BUILD_DIR)"
fi

# ---- 5. the .deb ----------------------------------------------------------
if [ -n "$build" ] && [ -x "$build/divergence-gpu" ] && command -v dpkg-deb >/dev/null 2>&1; then
  if out=$("$src/deploy/deb.sh" "$build" "$tmp/deb" 2>&1); then
    deb=$(ls "$tmp/deb"/divergence_*.deb | head -n 1)
    ok "deb.sh: $(basename "$deb")"
    depends=$(dpkg-deb -f "$deb" Depends)
    for d in libmicrohttpd12 libjansson4 libc6; do
      grep -qE "(^|, )$d( |,|$)" <<<"$depends" && ok "deb depends on $d" || bad "deb lacks Depends $d: $depends"
    done
    [ "$(dpkg-deb -f "$deb" Package)" = divergence ] && ok "deb Package: divergence" || bad "deb package name"
    # The driver: Recommended at the CUDA 13.0 minimum, never a dependency.
    recommends=$(dpkg-deb -f "$deb" Recommends)
    grep -qF 'libcuda1 (>= 580.65.06) | libcuda.so.1 (>= 580.65.06) | libcuda-13.0-1' <<<"$recommends" &&
      ok "deb recommends the R580 driver library: $recommends" || bad "deb Recommends: $recommends"
    grep -qiE 'libcuda|nvidia' <<<"$depends" && bad "deb depends on the driver: $depends" || ok "deb does not depend on the driver"
    grep -qF 'nvidia-driver (>= 580.65.06)' <<<"$(dpkg-deb -f "$deb" Suggests)" && ok "deb suggests nvidia-driver (>= 580.65.06)" ||
      bad "deb Suggests: $(dpkg-deb -f "$deb" Suggests)"
    contents=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
    for p in ./opt/divergence/bin/divergence ./opt/divergence/libexec/divergence ./opt/divergence/libexec/divergence-gpu \
             ./opt/divergence/share/divergence/static/divergence-widget.js ./opt/divergence/share/divergence/openapi.yaml \
             ./lib/systemd/system/divergence.service ./lib/systemd/system/divergence-refresh.timer ./etc/divergence/env; do
      grep -qx -- "$p" <<<"$contents" && ok "deb holds $p" || bad "deb lacks $p"
    done
    grep -qE 'lib(microhttpd|jansson)\.so' <<<"$contents" && bad "deb bundles a library Debian provides" ||
      ok "deb bundles no libmicrohttpd / libjansson"
    dpkg-deb --ctrl-tarfile "$deb" | tar -tf - | grep -x './conffiles' >/dev/null && ok "deb: /etc/divergence/env is a conffile" ||
      bad "deb: no conffiles"
    dpkg-deb -x "$deb" "$tmp/debroot"
    if v=$("$tmp/debroot/opt/divergence/bin/divergence" version 2>&1); then ok "unpacked deb runs: $v"
    else bad "unpacked deb: $v"; fi
    # CUPTI where the worker looks (../lib beside libexec/), with its license,
    # and loadable from there the way kernels/gpu/counters.c loads it.
    if [ -n "$(sed -n 's/^DV_CUPTI_LIBRARIES:INTERNAL=//p' "$build/CMakeCache.txt")" ]; then
      for p in ./opt/divergence/lib/libcupti.so.13 ./opt/divergence/lib/libnvperf_host.so ./opt/divergence/lib/libnvperf_target.so \
               ./opt/divergence/share/divergence/licenses/NVIDIA-CUDA-EULA.txt ./usr/share/doc/divergence/copyright; do
        grep -qx -- "$p" <<<"$contents" && ok "deb holds $p" || bad "deb lacks $p"
      done
      others=$(grep '^\./opt/divergence/lib/.' <<<"$contents" | grep -vE '/lib(cupti\.so\.13|nvperf_host\.so|nvperf_target\.so)$' || true)
      [ -z "$others" ] && ok "deb lib/ holds CUPTI only" || bad "deb lib/ holds more than CUPTI: $others"
      if out=$(python3 - "$tmp/debroot/opt/divergence/lib" 2>&1 <<'PY'
import ctypes, sys
d = sys.argv[1]
for n in ("libnvperf_host.so", "libnvperf_target.so"):
    ctypes.CDLL(f"{d}/{n}", mode=ctypes.RTLD_GLOBAL)
c = ctypes.CDLL(f"{d}/libcupti.so.13")
for sym in ("cuptiProfilerInitialize", "cuptiProfilerHostInitialize", "cuptiRangeProfilerEnable"):
    getattr(c, sym)
print("ok")
PY
      ); then ok "deb's CUPTI loads from /opt/divergence/lib and has the range profiler"
      else bad "deb's CUPTI does not load: $out"; fi
    else
      skipped "the build found no CUPTI: the .deb carries none"
    fi
    # The check must see a package that bundles what Debian provides.
    mkdir -p "$tmp/debbad" && dpkg-deb -R "$deb" "$tmp/debbad/pkg" &&
      sed -i 's/libmicrohttpd12[^,]*, //; s/, libmicrohttpd12[^,]*//' "$tmp/debbad/pkg/DEBIAN/control" &&
      ! grep -q libmicrohttpd12 <<<"$(sed -n 's/^Depends: //p' "$tmp/debbad/pkg/DEBIAN/control")" &&
      ok "a package without the libmicrohttpd12 dependency would be caught" || bad "broken-package probe"
  else
    bad "deb.sh: $out"
  fi
else
  skipped "deb: no built divergence-gpu or no dpkg-deb"
fi

echo "deploy_check: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] || exit 1
[ $pass -gt 0 ] || exit 77
exit 0
