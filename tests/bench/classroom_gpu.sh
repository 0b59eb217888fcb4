#!/usr/bin/env bash
# classroom_gpu.sh BUNDLE_OR_BUILD OUT_DIR -- what issue 31 asks to see on a
# GPU host, in one go, every figure written under OUT_DIR.
#
# BUNDLE_OR_BUILD: an unpacked release bundle (`make bundle`: its
# bin/divergence launcher sets the library path for the libraries it
# carries, so the host needs neither libmicrohttpd nor jansson), or a build
# folder (its divergence and divergence-gpu; a lib/ folder beside them, when
# there is one, goes on LD_LIBRARY_PATH). Each step starts a fresh
# `divergence serve` (tests/bench/classroom.py --binary: no rate limit, the
# server's defaults otherwise, so the witness and the counters are on, and
# the worker warms up before /readyz says ready):
#
#   class40         40 readers press Measure at once
#   class200        200 readers
#   class40_instr   40 readers, each asking for the instruction profiles
#   alone_vs_batch  10 predicates alone, then among 40 readers (batched)
#   first_vs_tenth  a fresh worker's first ten readers one after another
#
# Each step writes OUT_DIR/<step>.txt (what it printed), <step>.json (every
# figure), <step>.serve.log (the server's and the worker's log: the
# warm-up's time, each batch) and its exit status into OUT_DIR/status; a
# step that fails or runs past its time is recorded and the next runs. Every
# step is bounded (STEP_TIMEOUT_S, 60 s), so the whole stays under 6
# minutes. OUT_DIR/summary.txt gathers the figures at the end, with the
# host's GPU (nvidia-smi) and the binary's version.
#
# CLASSROOM_STEPS (space-separated step names) runs only those steps.
#
# A dry run without a GPU: CLASSROOM_WORKER names a stand-in worker command
# (e.g. build/tests/fake_worker; its FAKE_WORKER_* settings apply), passed
# to every step as --worker.
#
# Exit status: 0 when every step ran to its end (whatever its figures), 1
# when one did not, 2 on bad arguments.
set -u

usage() { echo "usage: $0 BUNDLE_OR_BUILD OUT_DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
SRC=$1 OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
CLASSROOM="$HERE/classroom.py"
STEP_TIMEOUT_S=${STEP_TIMEOUT_S:-60}

if [ -x "$SRC/bin/divergence" ]; then
  DIV="$SRC/bin/divergence"
elif [ -x "$SRC/divergence" ]; then
  DIV="$SRC/divergence"
  [ -d "$SRC/lib" ] && export LD_LIBRARY_PATH="$SRC/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  echo "$0: $SRC holds neither bin/divergence (a bundle) nor divergence (a build)" >&2
  exit 2
fi
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
: > "$OUT/status"
WORKER=()
[ -n "${CLASSROOM_WORKER:-}" ] && WORKER=(--worker "$CLASSROOM_WORKER")

# step NAME ARGS...: one classroom.py run against a fresh server.
failed=0
step() {
  local name=$1
  shift
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout -k 5 "$STEP_TIMEOUT_S" python3 "$CLASSROOM" --binary "$DIV" "${WORKER[@]}" \
    --json "$OUT/$name.json" --keep-log "$OUT/$name.serve.log" "$@" > "$OUT/$name.txt" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  [ $rc -eq 124 ] && echo "(ran past ${STEP_TIMEOUT_S} s and was stopped)" >> "$OUT/$name.txt"
  awk -v n="$name" -v rc="$rc" -v a="$t0" -v b="$t1" 'BEGIN { printf "%s rc=%d %.1fs\n", n, rc, b - a }' >> "$OUT/status"
  [ $rc -eq 0 ] || failed=1
}

{
  echo "host: $(hostname) $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  "$DIV" --version 2>&1 | head -3
  command -v nvidia-smi > /dev/null &&
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv 2>&1
} > "$OUT/host.txt" 2>&1

# CLASSROOM_STEPS="class40_instr alone_vs_batch" runs only those steps.
want() { [ -z "${CLASSROOM_STEPS:-}" ] || [[ " $CLASSROOM_STEPS " == *" $1 "* ]]; }
want class40 && step class40 --readers 40
want class200 && step class200 --readers 200
want class40_instr && step class40_instr --readers 40 --instructions
want alone_vs_batch && step alone_vs_batch --alone-vs-batch
want first_vs_tenth && step first_vs_tenth --first-vs-tenth

{
  cat "$OUT/host.txt"
  echo
  cat "$OUT/status"
  for s in class40 class200 class40_instr alone_vs_batch first_vs_tenth; do
    echo
    echo "== $s"
    cat "$OUT/$s.txt" 2> /dev/null
    grep -h "worker: warm in\|worker: ready\|worker: the warm-up\|job is expected to run" "$OUT/$s.serve.log" 2> /dev/null |
      head -4
    # The profiling server: its text warm-up, its starts, where the first
    # requests' texts came from, and any request that ended it.
    grep -h "the text warm-up\|profiling server\|texts from\|failed as a whole" "$OUT/$s.serve.log" 2> /dev/null |
      head -8
  done
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
exit $failed
