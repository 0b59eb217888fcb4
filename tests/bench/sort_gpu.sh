#!/usr/bin/env bash
# sort_gpu.sh -- data-dependent divergence and the sort on a GPU host, in one
# run of at most DEADLINE_S (120 s by default), every result kept under
# OUT_DIR with a summary to read first.
#
#   tests/bench/sort_gpu.sh BUILD_DIR OUT_DIR
#
# BUILD_DIR is a built tree: only its files are used; no cmake, ctest,
# libmicrohttpd or Criterion is needed beyond the shared libraries the build's
# binaries link. It must hold (copy all four when staging a build elsewhere):
#   divergence-gpu                                      suite, ncu
#   tests/report_render                                 suite
#   tests/test_gpu_sort                                 test
#   kernels/gpu/CMakeFiles/dvgpu.dir/sort_kernels.cu.o  sass
# A missing one is named in logs/binaries.log and SUMMARY.txt before any step. ncu and cuobjdump
# are looked for on PATH and in /usr/local/cuda/bin. Every step runs under
# `timeout` and what is left of the deadline; a failed or timed-out step is
# recorded in OUT_DIR/steps.tsv and the run goes on.
#
# The steps:
#   env        the GPU, the driver, the tools
#   sass       cuobjdump -sass of the shade kernels (sm_90): FFMAs per kernel and
#              the distinct FFMA immediates (32 paths x 8 FMAs, none merged)
#   suite      divergence-gpu measure --suite data-sort (the nightly set, 12
#              cells): its wall time and GPU time, the crossover map (the
#              transcript), the document (JSON) and its Markdown
#   test       tests/test_gpu_sort: the witness's per-warp k and lane histogram
#              against the CPU count, exactly; the nightly set measured and
#              checked, the sort inside sort+shade against the sort alone
#   ncu        Nsight Compute on the first cell's (uniform, M 4, C 16) first
#              four shade launches, the rows' warm-ups in row order: the shade
#              of sort+shade, naive, index, shade-sorted: warp instructions,
#              threads per instruction (naive about 32 / k) and DRAM bytes read
#              (index reads in place: more bytes than the sorted pairs)
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
STEP_MIN_LEFT_S=5
. "$(dirname "$0")/gpu_steps.sh"
gpu_steps_begin divergence-gpu tests/report_render tests/test_gpu_sort kernels/gpu/CMakeFiles/dvgpu.dir/sort_kernels.cu.o

env_step() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"; uname -a
  nvidia-smi || true
  for t in nvcc ncu cuobjdump python3; do printf '%-10s %s\n' "$t" "$(command -v $t || echo missing)"; done
  ldd "$GPU" | grep -v -E 'linux-vdso|ld-linux' || true
}

sass_step() {
  local obj="$BUILD/kernels/gpu/CMakeFiles/dvgpu.dir/sort_kernels.cu.o"
  [ -f "$obj" ] || { echo "no $obj"; return 1; }
  cuobjdump -sass -arch sm_90 "$obj" > "$OUT/sort_kernels.sm_90.sass" || return 1
  python3 - "$OUT/sort_kernels.sm_90.sass" <<'PY'
import re, sys, collections
fn, ffma, imm = None, collections.Counter(), collections.defaultdict(set)
for line in open(sys.argv[1]):
    m = re.search(r'Function : (\S+)', line)
    if m: fn = m.group(1); continue
    m = re.search(r'FFMA\S* R\d+, R\d+, (\S+), (\S+?) ?;', line)
    if fn and 'sort_shade_kernel' in fn and ' FFMA' in line:
        ffma[fn] += 1
        if m: imm[fn].add((m.group(1), m.group(2)))
print('shade kernel                                                      FFMA  distinct (a, b) operand pairs')
for f in ffma:
    print('%-64s %5d  %d' % (f[:64], ffma[f], len(imm[f])))
print('expected: 256 FFMAs (32 materials x 8 unrolled) in every shade kernel: no two paths merged')
PY
}

suite_step() {
  local s e rc
  s=$(date +%s.%N)
  "$GPU" measure --suite data-sort --format json > "$OUT/suite-data-sort.json"
  rc=$?
  e=$(date +%s.%N)
  echo "divergence-gpu measure --suite data-sort: exit $rc, wall $(elapsed "$s" "$e") s"
  [ -s "$OUT/suite-data-sort.json" ] || return 1
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("gpu_time_ms %.1f, wall_time_ms %.1f" % (d.get("gpu_time_ms") or 0, d.get("wall_time_ms") or 0))' "$OUT/suite-data-sort.json"
  "$RENDER" text < "$OUT/suite-data-sort.json" > "$OUT/suite-data-sort.txt"
  "$RENDER" md < "$OUT/suite-data-sort.json" > "$OUT/suite-data-sort.md"
  sed -n '/^data-sort:/,$p' "$OUT/suite-data-sort.txt"
  python3 - "$OUT/suite-data-sort.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print('\ncell                      naive/(s+s)  interval            verdict    index/(s+s)  sort ms  inside ms  k naive  k sorted')
for c in d['sort']['cells']:
    t = d['tables'][c['table']]['id']
    f = lambda v, p='%.3f': (p % v) if isinstance(v, (int, float)) else '-'
    w = c['witness']['naive'] or {}
    ws = c['witness']['sorted'] or {}
    print('%-25s %11s  [%s, %s]  %-9s  %11s  %7s  %9s  %7s  %8s' % (
        t, f(c['ratio']), f(c['ratio_ci'][0]), f(c['ratio_ci'][1]), c['verdict'], f(c['index_ratio']),
        f(c['sort_ms'], '%.4f'), f(c['sort_inside_ms'], '%.4f'), f(w.get('k_mean'), '%.2f'), f(ws.get('k_mean'), '%.2f')))
print('crossover:', [(x['distribution'], x['m'], x['c']) for x in d['sort']['crossover']])
print(d['sort']['sentence'])
PY
  return $rc
}

test_step() { "$BUILD/tests/test_gpu_sort" --verbose=1 -j1; }

ncu_step() {
  command -v ncu > /dev/null || { echo "no ncu"; return 1; }
  # The first cell's rows warm up in row order before its rounds, so the first
  # four shade launches are sort+shade's shade, naive, index and shade-sorted.
  # ncu prints its results on the application's standard output: that goes
  # to this step's log (the run's short transcript with it), never to
  # /dev/null. The run's own exit 1 (an interval over its target at a 5 ms
  # budget) is not the step's result: four profiled shade launches, each
  # with its DRAM bytes, are.
  local rc n
  ncu --target-processes all -k regex:sort_shade_kernel --launch-count 4 \
    --metrics smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio,dram__bytes_read.sum \
    "$GPU" measure --scenario data-sort --blocks 1024 --budget-ms 5 --min-samples 1 --max-samples 2 \
    --witness off --counters off --format text
  rc=$?
  n=$(grep -c 'dram__bytes_read.sum' "$OUT/logs/ncu.log")
  echo "ncu: exit $rc, $n of 4 shade launches with dram__bytes_read.sum"
  [ "$n" -ge 4 ]
}

export OUT BUILD GPU RENDER T0 DEADLINE_S
export -f elapsed env_step sass_step suite_step test_step ncu_step
step env 15 env_step
step sass 20 sass_step
step suite 45 suite_step
step test 40 test_step
step ncu 40 ncu_step

{
  echo "sort_gpu.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(( $(date +%s) - T0 )) s in all (deadline ${DEADLINE_S} s)"
  echo "binaries: $(cat "$OUT/logs/binaries.log")"
  column -t -s $'\t' "$OUT/steps.tsv" 2> /dev/null || cat "$OUT/steps.tsv"
  for s in sass suite test ncu; do
    echo
    echo "== $s (logs/$s.log)"
    case $s in
      test) grep -E 'Synthesis|FAIL|Assertion|differ' "$OUT/logs/test.log" | head -20 ;;
      ncu) grep -E 'sort_shade_kernel|inst_executed|dram__bytes' "$OUT/logs/ncu.log" | head -24 ;;
      *) cat "$OUT/logs/$s.log" ;;
    esac
  done
} > "$OUT/SUMMARY.txt" 2>&1
cat "$OUT/SUMMARY.txt"
