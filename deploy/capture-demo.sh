#!/usr/bin/env bash
# Makes the demo capture that `make run` seeds an empty evidence store with
# (tests/fixtures/evidence, copied by deploy/demo-evidence.sh): every suite,
# measured on this machine's GPU by the given build, with the witness and
# the hardware counters, filed as the nightly refresh files them, then
# checked against the build (tests/fixtures/capture_check.py, the test that
# fails when the committed capture no longer matches the build).
#
# One command, on the machine with the GPU (an H200 for the committed one),
# from the top of this tree:
#
#   deploy/capture-demo.sh [--nights N] [--end-date YYYY-MM-DD] BUILD_DIR [OUT_DIR]
#
# It measures every suite N times (--nights, default 3: the page's nights
# line and history sparklines need at least 3), one whole run after
# another, and files run k under the k-th of N consecutive dates ending on
# --end-date (default today, UTC), oldest first: `divergence-gpu measure
# --suite all --evidence-dir STORE --file-as DATE`. Each record says it was
# filed under a given date ("filed_as") and keeps when it was measured
# (provenance.finished_utc), and the page shows both: the nights are N real
# measurements, made minutes apart, not N days' refreshes. Each night is
# compared with the one before, as the nightly refresh compares them.
#
# BUILD_DIR is a build of this tree with nvcc (it needs divergence-gpu and
# tests/report_rewrite: `cmake --build BUILD_DIR`, or carry a build made
# elsewhere). Both need only the CUDA driver, libjansson and python3: no
# server, no libmicrohttpd, no libcurl (divergence-gpu measures, files and,
# for the check, plans each suite). OUT_DIR defaults to tests/fixtures/evidence
# of this tree: its date folders are replaced by the new nights (records,
# transcripts and the history's sidecars) only once every suite of every
# night passed and the whole capture passes the check.
# The counters need CUPTI's range profiler (the toolkit's extras/CUPTI/lib64,
# found as the build recorded it, or through LD_LIBRARY_PATH) and permission
# to read GPU performance counters (root, or RmProfilingAdminOnly=0): a
# capture without them is refused, since the page's "GPU saw" columns and the
# instruction-count bar need them.
#
# Environment: DV_CAPTURE_DEVICE (CUDA ordinal, default 0).
# Exit 0 when the capture was made, is complete and is current; 1 otherwise
# (the output says which night, suite or check failed); 2 on a bad argument.
# --suites 'A B ...' measures those suites only (default: all); a suite the
# build knows that no night holds is a note of capture_check.py, not a fault.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: capture-demo.sh [--nights N] [--end-date YYYY-MM-DD] [--suites 'A B ...'] BUILD_DIR [OUT_DIR]"
nights=3
suites=all
end=$(date -u +%F)
while [ $# -gt 0 ]; do
  case "$1" in
    --nights) nights=${2:-}; shift 2 || { echo "capture-demo: --nights needs a value" >&2; exit 2; } ;;
    --nights=*) nights=${1#*=}; shift ;;
    --end-date) end=${2:-}; shift 2 || { echo "capture-demo: --end-date needs a value" >&2; exit 2; } ;;
    --end-date=*) end=${1#*=}; shift ;;
    --suites) suites=${2:-}; shift 2 || { echo "capture-demo: --suites needs a value" >&2; exit 2; } ;;
    --suites=*) suites=${1#*=}; shift ;;
    -h|--help) echo "$usage"; exit 0 ;;
    --*) echo "capture-demo: unknown option $1; $usage" >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ "$nights" =~ ^[1-9][0-9]?$ ]] || { echo "capture-demo: --nights: expected 1 to 99, got '$nights'" >&2; exit 2; }
# A calendar date that `date` reads back as itself (2026-02-30 is not one),
# not after today: divergence-gpu refuses what is after today too.
[[ "$end" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] && [ "$(date -u -d "$end" +%F 2>/dev/null)" = "$end" ] ||
  { echo "capture-demo: --end-date: expected a calendar date YYYY-MM-DD, got '$end'" >&2; exit 2; }
[[ ! "$end" > "$(date -u +%F)" ]] || { echo "capture-demo: --end-date: $end is after today (UTC)" >&2; exit 2; }
build=${1:?$usage}
build=$(cd "$build" && pwd)
out=${2:-$here/tests/fixtures/evidence}
device=${DV_CAPTURE_DEVICE:-0}
for f in divergence-gpu tests/report_rewrite; do
  [ -x "$build/$f" ] || { echo "capture-demo: $build/$f: not built (cmake --build $build; divergence-gpu needs nvcc)" >&2; exit 2; }
done
dates=()
for ((k = nights - 1; k >= 0; k--)); do dates+=("$(date -u -d "$end - $k days" +%F)"); done

# Hook: instruction profiles. When `measure` records them per row (a switch
# such as --profiles on), add it here so the capture holds them, and add the
# row's field to COMPLETE_ROW in tests/fixtures/capture_check.py.
extra=()

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
store=$tmp/store
# The transcripts go to the log; each suite is filed in the temporary store
# as soon as it is measured (the same record a nightly refresh writes).
for date in "${dates[@]}"; do
  echo "capture-demo: night $date: measuring every suite on device $device with $build/divergence-gpu" >&2
  set +e
  rc=0
  for suite in $suites; do
    "$build/divergence-gpu" measure --suite "$suite" --device "$device" --witness on --counters on "${extra[@]}" \
      --evidence-dir "$store" --file-as "$date" >> "$tmp/transcripts.txt" || { rc=$?; break; }
  done
  set -e
  [ "$rc" -eq 0 ] || { cat "$tmp/transcripts.txt"; echo "capture-demo: night $date: measure exited $rc (see above): nothing replaced" >&2; exit 1; }
done

# The store's nights into the capture layout: <date>/<suite>.{json,txt} and
# the history's sidecars, <date>/.<suite>.night.json.
found=$(find "$store" -mindepth 2 -maxdepth 2 -type d -name '20??-??-??' | sort)
[ "$(wc -l <<<"$found")" -eq "$nights" ] || { echo "capture-demo: expected $nights nights in the store, found: $found" >&2; exit 1; }
for night in $found; do
  date=$(basename "$night")
  if ls "$night"/*.failed.json >/dev/null 2>&1; then
    echo "capture-demo: a suite failed its gates: $(ls "$night"/*.failed.json)" >&2
    exit 1
  fi
  mkdir -p "$tmp/capture/$date"
  cp "$night"/*.json "$night"/*.txt "$night"/.*.night.json "$tmp/capture/$date/"
done

# Complete and current, or nothing is replaced.
if ! python3 "$here/tests/fixtures/capture_check.py" "$build" "$tmp/capture" --min-nights "$nights"; then
  echo "capture-demo: the new capture does not pass the check (above): nothing replaced" >&2
  exit 1
fi
mkdir -p "$out"
find "$out" -mindepth 1 -maxdepth 1 -type d -name '20??-??-??' -exec rm -rf {} +
cp -R "$tmp/capture"/. "$out/"
echo "capture-demo: $out holds the new capture, $nights nights (${dates[0]} to ${dates[-1]}, $(find "$out" -type f | wc -l) files); commit it" >&2
