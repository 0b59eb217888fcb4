#!/usr/bin/env bash
# Makes the demo capture that `make run` seeds an empty evidence store with
# (tests/fixtures/evidence, copied by deploy/demo-evidence.sh): every suite,
# measured on this machine's GPU by the given build, with the witness and
# the hardware counters, filed as the nightly refresh files them, then
# checked against the build (tests/fixtures/capture_check.py, the test that
# fails when the committed capture no longer matches the build).
#
# One command, on the machine with the GPU (an H200 for the committed one):
#
#   deploy/capture-demo.sh BUILD_DIR [OUT_DIR]
#
# BUILD_DIR is a build of this tree with nvcc (it needs divergence-gpu and
# tests/report_rewrite: `cmake --build BUILD_DIR`, or carry a build made
# elsewhere). Both need only the CUDA driver, libjansson and python3: no
# server, no libmicrohttpd, no libcurl (divergence-gpu measures, files and,
# for the check, plans each suite). OUT_DIR defaults to tests/fixtures/evidence of this tree: its
# date folders are replaced by the new night only once every suite passed.
# The counters need CUPTI's range profiler (the toolkit's extras/CUPTI/lib64,
# found as the build recorded it, or through LD_LIBRARY_PATH) and permission
# to read GPU performance counters (root, or RmProfilingAdminOnly=0): a
# capture without them is refused, since the page's "GPU saw" columns and the
# instruction-count bar need them.
#
# Environment: DV_CAPTURE_DEVICE (CUDA ordinal, default 0).
# Exit 0 when the capture was made, is complete and is current; 1 otherwise
# (the output says which suite or check failed); 2 on a bad argument.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: capture-demo.sh BUILD_DIR [OUT_DIR]}
build=$(cd "$build" && pwd)
out=${2:-$here/tests/fixtures/evidence}
device=${DV_CAPTURE_DEVICE:-0}
for f in divergence-gpu tests/report_rewrite; do
  [ -x "$build/$f" ] || { echo "capture-demo: $build/$f: not built (cmake --build $build; divergence-gpu needs nvcc)" >&2; exit 2; }
done

# Hook: instruction profiles. When `measure` records them per row (a switch
# such as --profiles on), add it here so the capture holds them, and add the
# row's field to COMPLETE_ROW in tests/fixtures/capture_check.py.
extra=()

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
store=$tmp/store
echo "capture-demo: measuring every suite on device $device with $build/divergence-gpu" >&2
# The transcripts go to the log; each suite is filed in the temporary store
# as soon as it is measured (the same record a nightly refresh writes).
set +e
"$build/divergence-gpu" measure --suite all --device "$device" --witness on --counters on "${extra[@]}" \
  --evidence-dir "$store" > "$tmp/transcripts.txt"
rc=$?
set -e
[ "$rc" -eq 0 ] || { cat "$tmp/transcripts.txt"; echo "capture-demo: measure exited $rc (see above): nothing replaced" >&2; exit 1; }

# The store's one night into the capture layout: <date>/<suite>.{json,txt}.
nights=$(find "$store" -mindepth 2 -maxdepth 2 -type d -name '20??-??-??')
[ "$(wc -l <<<"$nights")" -eq 1 ] || { echo "capture-demo: expected one night in the store, found: $nights" >&2; exit 1; }
date=$(basename "$nights")
if ls "$nights"/*.failed.json >/dev/null 2>&1; then
  echo "capture-demo: a suite failed its gates: $(ls "$nights"/*.failed.json)" >&2
  exit 1
fi
mkdir -p "$tmp/capture/$date"
cp "$nights"/*.json "$nights"/*.txt "$tmp/capture/$date/"

# Complete and current, or nothing is replaced.
if ! python3 "$here/tests/fixtures/capture_check.py" "$build" "$tmp/capture"; then
  echo "capture-demo: the new capture does not pass the check (above): nothing replaced" >&2
  exit 1
fi
mkdir -p "$out"
find "$out" -mindepth 1 -maxdepth 1 -type d -name '20??-??-??' -exec rm -rf {} +
cp -R "$tmp/capture/$date" "$out/"
echo "capture-demo: $out/$date holds the new capture ($(ls "$out/$date" | wc -l) files); commit it" >&2
