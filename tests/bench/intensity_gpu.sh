#!/usr/bin/env bash
# intensity_gpu.sh -- the arithmetic-intensity experiment on a GPU host, in
# one run of at most 120 s, every result kept under OUT_DIR.
#
#   tests/bench/intensity_gpu.sh BUILD_DIR OUT_DIR
#
# BUILD_DIR is a built tree: only its binaries are used, no cmake or ctest.
# It must hold (copy all four when staging a build elsewhere):
#   divergence-gpu              suite, full
#   tests/report_render         suite, full (the transcript and Markdown)
#   tests/test_gpu_intensity    correct, ncu
#   tests/intensity_probe       ncu (the test runs it from BUILD_DIR through
#                               DV_INTENSITY_PROBE, so a copied tree works)
# A missing one is named in logs/binaries.log and SUMMARY.txt before any step.
# ncu is looked for on PATH and in /usr/local/cuda/bin. Every
# step runs under `timeout` and the whole run under DEADLINE_S (120 s by
# default); a step that fails or times out is recorded and the run goes on.
# OUT_DIR/steps.tsv has each step's exit status and seconds,
# OUT_DIR/SUMMARY.txt the tables to paste.
#
# The steps:
#   env      the GPU, the driver, the tools
#   suite    divergence-gpu measure --suite arithmetic-intensity (the nightly
#            suite as the refresh files it): its wall time, its GPU time
#            (the tables' gpu_time_ms), the document and its transcript; the
#            tables the issue asks for (per variant: point, F, L, intensity,
#            ratio [interval], DRAM bytes, FLOP/s, GB/s, which side of the
#            ridge measured in the same run)
#   correct  test_gpu_intensity's CPU-reference test on the suite's grid
#   ncu      the DRAM bytes the service counts against Nsight Compute's
#            dram__bytes_read.sum on the same launch (within 1%): five rows of
#            each table
#   full     (FULL=1 only) the full sweep, arithmetic-intensity-full
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR OUT_DIR" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd) || { echo "no build dir $1" >&2; exit 2; }
mkdir -p "$2" || exit 2
OUT=$(cd "$2" && pwd)
DEADLINE_S=${DEADLINE_S:-120}
export PATH="$PATH:/usr/local/cuda/bin"
GPU="$BUILD/divergence-gpu"
RENDER="$BUILD/tests/report_render"
T0=$(date +%s)
export DV_INTENSITY_PROBE="$BUILD/tests/intensity_probe"
mkdir -p "$OUT/measure"
. "$(dirname "$0")/gpu_steps.sh"
gpu_steps_begin divergence-gpu tests/report_render tests/test_gpu_intensity tests/intensity_probe

env_step() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"; uname -a
  nvidia-smi || true
  for t in ncu nvcc python3; do printf '%-8s %s\n' "$t" "$(command -v $t || echo missing)"; done
  ncu --version 2> /dev/null | tail -1
}

# measure NAME ARGS...: the document, its transcript and Markdown, the wall
# time and the GPU time.
measure() {
  local name=$1 s e rc
  shift
  s=$(date +%s.%N)
  "$GPU" measure "$@" --format json > "$OUT/measure/$name.json"
  rc=$?
  e=$(date +%s.%N)
  echo "divergence-gpu measure $*: exit $rc (1: a check failed or an interval stayed over its target), wall $(elapsed "$s" "$e") s"
  if [ -s "$OUT/measure/$name.json" ]; then
    python3 - "$OUT/measure/$name.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = sum(t.get('gpu_time_ms') or 0 for t in d.get('tables', []))
print('GPU time (the tables\' timed work): %.1f ms over %d tables' % (g, len(d.get('tables', []))))
PY
    "$RENDER" text < "$OUT/measure/$name.json" > "$OUT/measure/$name.txt"
    "$RENDER" md < "$OUT/measure/$name.json" > "$OUT/measure/$name.md"
    cat "$OUT/measure/$name.txt"
  fi
  return $rc
}

suite_step() { measure suite --suite arithmetic-intensity --evidence-dir "$OUT/evidence-cli"; }
full_step() { measure full --scenario arithmetic-intensity-full; }

correct_step() {
  "$BUILD/tests/test_gpu_intensity" --verbose=1 -j1 --filter 'gpu_intensity/every_row_matches_the_cpu_reference_on_the_suites_grid'
}

ncu_step() {
  command -v ncu > /dev/null || { echo "SKIPPED: no ncu"; return 3; }
  "$BUILD/tests/test_gpu_intensity" --verbose=1 -j1 --filter 'gpu_intensity/dram_bytes_equal_nsight_computes_on_the_same_launch'
}

export OUT BUILD GPU RENDER T0 DEADLINE_S
export -f elapsed env_step measure suite_step full_step correct_step ncu_step
step env 10 env_step
step suite 45 suite_step
step correct 30 correct_step
step ncu 90 ncu_step
[ "${FULL:-0}" = 1 ] && step full 120 full_step

summary() {
  echo "intensity_gpu.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(( $(date +%s) - T0 )) s in all (deadline ${DEADLINE_S} s)"
  echo "binaries: $(cat "$OUT/logs/binaries.log")"
  echo
  column -t -s $'\t' "$OUT/steps.tsv" 2> /dev/null || cat "$OUT/steps.tsv"
  echo
  echo "== the nightly suite (measure/suite.txt)"
  grep -E '^divergence-gpu measure|^GPU time' "$OUT/logs/suite.log" 2> /dev/null
  # The tables: each intensity table's title, ridge, points and reading.
  awk '/^Arithmetic intensity/ { print; next }
       /^roofline, measured here|^DRAM bytes: none|^  point |^  f[0-9]+-l[0-9]+-lanes |^reading: / { print }' \
    "$OUT/measure/suite.txt" 2> /dev/null
  grep -E '^warning' "$OUT/measure/suite.txt" 2> /dev/null
  echo
  echo "== the checks (tests)"
  grep -h -E 'Synthesis|dram bytes |SKIPPED' "$OUT/logs/correct.log" "$OUT/logs/ncu.log" 2> /dev/null
  if [ -s "$OUT/measure/full.txt" ]; then
    echo
    echo "== the full sweep (measure/full.txt)"
    grep -E '^divergence-gpu measure|^GPU time' "$OUT/logs/full.log"
    awk '/^Arithmetic intensity/ || /^roofline, measured here|^  point |^  f[0-9]+-l[0-9]+-lanes |^reading: /' \
      "$OUT/measure/full.txt"
  fi
}
summary > "$OUT/SUMMARY.txt" 2>&1
cat "$OUT/SUMMARY.txt"
