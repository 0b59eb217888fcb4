#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages the project needs, and only those that
# are missing, so that `make run` and `make test` work on a fresh machine.
# The CUDA toolkit is not a Debian package here: without it the build leaves
# out the GPU half (CMakeLists.txt says so when it configures), so a missing
# nvcc is not an error here.
# Usage: install-deps.sh build|test
set -euo pipefail
mode=${1:-build}

build_pkgs=(build-essential cmake pkg-config libmicrohttpd-dev libjansson-dev zlib1g-dev libcurl4-gnutls-dev curl)
# clang + libclang-rt-14-dev: the libFuzzer harnesses (tests/fuzz) under ASan/UBSan;
# prometheus: promtool checks a scrape of GET /metrics; libxml2-utils and
# w3c-sgml-lib: xmllint validates the evidence charts against the SVG 1.1 DTD.
test_pkgs=(libcriterion-dev chromium nginx-light systemd openssl python3 clang libclang-rt-14-dev prometheus
           libxml2-utils w3c-sgml-lib)
# Node.js may come from elsewhere than Debian (its npm then conflicts with
# Debian's): install Debian's only when there is no node / npm at all.
command -v node >/dev/null 2>&1 || test_pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || test_pkgs+=(npm)

want=("${build_pkgs[@]}")
[ "$mode" = test ] && want+=("${test_pkgs[@]}")

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# nginx-light and nginx provide the same binary: either will do.
if [[ " ${missing[*]-} " == *" nginx-light "* ]] && command -v nginx >/dev/null 2>&1; then
  missing=("${missing[@]/nginx-light}")
fi
missing=($(printf '%s\n' "${missing[@]-}" | grep -v '^$' || true))

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi


if [ "$mode" = test ]; then
  # The browser tests drive Debian's chromium through playwright-core (the
  # widget, the evidence charts; pinned to 1.61, the last release that runs
  # on Debian 12's Node.js 18) and parse the widget with acorn; the OpenAPI
  # test lints with @redocly/cli and validates with Ajv.
  here=$(cd "$(dirname "$0")/.." && pwd)
  if [ -f "$here/tests/browser/package.json" ] && { [ ! -d "$here/tests/browser/node_modules/playwright-core" ] ||
       [ ! -d "$here/tests/browser/node_modules/acorn" ]; }; then
    (cd "$here/tests/browser" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  # markdown-it: tests/api/openapi/markdown_check.mjs reads the Markdown form.
  if [ -f "$here/tests/api/openapi/package.json" ] && { [ ! -x "$here/tests/api/openapi/node_modules/.bin/redocly" ] ||
       [ ! -d "$here/tests/api/openapi/node_modules/markdown-it" ]; }; then
    (cd "$here/tests/api/openapi" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  if [ -f "$here/tests/deploy/k8s/package.json" ] && [ ! -d "$here/tests/deploy/k8s/node_modules/kubernetes-models" ]; then
    (cd "$here/tests/deploy/k8s" && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi
