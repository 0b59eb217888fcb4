#!/usr/bin/env bash
# The evidence charts in a real browser: runs tests/browser/svg.test.mjs
# (node's test runner, playwright-core driving Debian's chromium) on the
# charts tests/api/report_forms writes. Screenshots go to
# BUILD_DIR/test-output/svg-*.png.
# Usage: tests/browser/svg_check.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
export DV_BUILD_DIR="$build"
export DV_TEST_OUTPUT="$build/test-output"
export DV_CHROMIUM="${DV_CHROMIUM:-/usr/bin/chromium}"
missing=()
command -v node >/dev/null 2>&1 || missing+=("node (Debian package nodejs)")
[ -d "$here/node_modules/playwright-core" ] || missing+=("tests/browser/node_modules/playwright-core (cd tests/browser && npm ci)")
[ -x "$DV_CHROMIUM" ] || missing+=("$DV_CHROMIUM (Debian package chromium)")
[ -x "$build/tests/report_forms" ] || missing+=("$build/tests/report_forms (build the tests first)")
if [ ${#missing[@]} -gt 0 ]; then
  echo "svg_check: cannot run; missing:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 1
fi
cd "$here" && exec node --test --test-reporter=spec svg.test.mjs
