#!/usr/bin/env bash
# The lesson widget in a real browser: runs tests/browser/widget.test.mjs
# (the widget's flows) and tests/browser/page.test.mjs (the lesson page's
# first load, its size, the rows' sentences), node's test runner with
# playwright-core driving Debian's chromium, against the server binary of a
# build directory, one file after the other; the widget's reads are checked
# against api/openapi.yaml through tests/api/openapi/contract.mjs.
#
# Usage: tests/test_browser.sh BUILD_DIR
# Environment (optional): DV_EVIDENCE_DIR (evidence store to serve; default
# tests/fixtures/evidence), DV_CHROMIUM (default /usr/bin/chromium).
# Screenshots go to BUILD_DIR/test-output/. Anything missing is a failure
# that names what is missing (`make test` installs all of it).
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
build=${1:-${DV_BUILD_DIR:-$repo/build}}
build=$(cd "$build" 2>/dev/null && pwd || echo "$build")

export DV_BINARY="$build/divergence"
export DV_WORKER_CMD="$build/tests/fake_worker"
export DV_TEST_OUTPUT="$build/test-output"
export DV_STATIC_DIR="$repo/static"
export DV_EVIDENCE_DIR="${DV_EVIDENCE_DIR:-$repo/tests/fixtures/evidence}"
export DV_CHROMIUM="${DV_CHROMIUM:-/usr/bin/chromium}"

missing=()
command -v node >/dev/null 2>&1 || missing+=("node (Debian package nodejs)")
if command -v node >/dev/null 2>&1; then
  major=$(node -p 'process.versions.node.split(".")[0]')
  [ "$major" -ge 18 ] || missing+=("node >= 18 (found $(node --version))")
fi
[ -d "$here/browser/node_modules/playwright-core" ] && [ -d "$here/browser/node_modules/acorn" ] \
  || missing+=("tests/browser/node_modules: playwright-core, acorn (run: cd tests/browser && npm ci)")
# The contract check reads api/openapi.yaml through tests/api/openapi/contract.mjs.
[ -d "$here/api/openapi/node_modules/yaml" ] \
  || missing+=("tests/api/openapi/node_modules/yaml (run: cd tests/api/openapi && npm ci)")
[ -x "$DV_CHROMIUM" ] || missing+=("$DV_CHROMIUM (Debian package chromium)")
[ -x "$DV_BINARY" ] || missing+=("$DV_BINARY (build the project first)")
[ -x "$DV_WORKER_CMD" ] || missing+=("$DV_WORKER_CMD (the fake GPU worker, built with the tests)")
ls "$DV_EVIDENCE_DIR"/*/day22-part1.json >/dev/null 2>&1 \
  || missing+=("an evidence store with <date>/day22-part1.json at $DV_EVIDENCE_DIR")

if [ ${#missing[@]} -gt 0 ]; then
  echo "test_browser: cannot run the browser test; missing:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 1
fi

mkdir -p "$DV_TEST_OUTPUT"
cd "$here/browser" || exit 1
rc=0
# The files named after the build folder, or every file.
files=("${@:2}")
[ ${#files[@]} -gt 0 ] || files=(widget.test.mjs page.test.mjs nights.test.mjs experiments.test.mjs memory.test.mjs)
for t in "${files[@]}"; do
  node --test --test-reporter=spec "$t" || rc=1
done
exit $rc
