#!/usr/bin/env bash
# api/openapi.yaml in `make test`: `redocly lint` with api/redocly.yaml must
# report no error and no warning, then responses.test.mjs validates the real
# server's answers of every route against the document (Ajv), and
# report_schema.test.mjs checks the report writer's keys against its Report
# schema both ways (tests/api/report_sample prints the documents).
# Usage: tests/api/openapi/openapi_check.sh BUILD_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
missing=()
command -v node >/dev/null 2>&1 || missing+=("node (Debian package nodejs)")
[ -x "$here/node_modules/.bin/redocly" ] || missing+=("tests/api/openapi/node_modules (run: cd tests/api/openapi && npm ci)")
[ -x "$build/divergence" ] || missing+=("$build/divergence (build first)")
[ -x "$build/tests/report_sample" ] || missing+=("$build/tests/report_sample (build first)")
if [ ${#missing[@]} -gt 0 ]; then
  echo "openapi_check: missing:" >&2; printf '  - %s\n' "${missing[@]}" >&2; exit 1
fi
cd "$here"
out=$(./node_modules/.bin/redocly lint --format=stylish --config "$repo/api/redocly.yaml" "$repo/api/openapi.yaml" 2>&1)
rc=$?
echo "$out"
if [ $rc -ne 0 ] || grep -qE '\b(error|warning)\b' <<<"$out"; then
  echo "openapi_check: redocly lint is not clean" >&2
  exit 1
fi
export DV_BINARY="$build/divergence" DV_WORKER_CMD="$build/tests/fake_worker" DV_REPORT_SAMPLE="$build/tests/report_sample"
exec node --test --test-reporter=spec responses.test.mjs report_schema.test.mjs
