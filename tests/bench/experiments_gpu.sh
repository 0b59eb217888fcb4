#!/usr/bin/env bash
# experiments_gpu.sh -- the compiler-and-warp experiments on a GPU host, in one
# run, every result kept under OUT_DIR with a summary a reader can follow
# without this shell's history.
#
#   tests/bench/experiments_gpu.sh BUILD_DIR OUT_DIR
#
# BUILD_DIR is a built tree (cmake --build): only its binaries are used (no
# cmake or ctest on the GPU host): divergence, divergence-gpu, the test
# binaries under tests/, tests/report_render, and the kernels' object file
# for the SASS. ncu, cuobjdump and nvdisasm are looked for on PATH and in
# /usr/local/cuda/bin. Every step runs under its own time limit and the
# whole run under DEADLINE_S (450 s by default; DEADLINE_S=900 runs the
# steps a short deadline skips): a step that fails or times
# out is recorded and the run goes on; a step that no longer fits is
# recorded as skipped. OUT_DIR/steps.tsv has each step's exit status and
# seconds, OUT_DIR/SUMMARY.txt the figures to read first, OUT_DIR/README.txt
# what every file is.
#
# The steps, in this order (what a short deadline leaves out is last):
#   env         the GPU, the driver, the tools
#   sass        cuobjdump -sass of the scenario kernels (sm_90) and a count per
#               kernel of FFMA / guarded FFMA / BSSY / BSYNC / BRA / WARPSYNC /
#               EXIT, and the predication map the SASS shows (P / B per LA x LB)
#   measure-*   divergence-gpu measure of each experiment with its instruction
#               profiles: the divergence.v1 document (JSON) and its transcript
#   suite-cli   divergence-gpu measure --suite compiler-and-warp, filed as the
#               nightly refresh files it, with its wall time
#   refresh-*   the nightly refresh as it runs: divergence serve on this GPU and
#               divergence refresh against it, two nights (the first collects
#               the instruction profiles, the second has them in its cache),
#               with each suite's job times
#   test-*      the GPU test binaries this work touched, run directly
#   measure-map the full predication map (8 tables, 64 points), on demand
#   test-ncu    every new row's counts against Nsight Compute's Source page
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR OUT_DIR" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd) || { echo "no build dir $1" >&2; exit 2; }
mkdir -p "$2" || exit 2
OUT=$(cd "$2" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
DEADLINE_S=${DEADLINE_S:-450}
export PATH="$PATH:/usr/local/cuda/bin"
GPU="$BUILD/divergence-gpu"
DIV="$BUILD/divergence"
RENDER="$BUILD/tests/report_render"
T0=$(date +%s)
mkdir -p "$OUT/logs" "$OUT/measure" "$OUT/sass" "$OUT/refresh" "$OUT/tests"
STEP_MIN_LEFT_S=15 STEP_KILL_S=10
. "$(dirname "$0")/gpu_steps.sh"
gpu_steps_begin

# ---- env ------------------------------------------------------------------
env_step() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"; uname -a
  echo "source: $(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo '(no git)')"
  nvidia-smi || true
  nvidia-smi -q -d CLOCK,PERFORMANCE 2>/dev/null | head -60 || true
  for t in nvcc ncu cuobjdump nvdisasm python3 curl; do
    printf '%-10s %s\n' "$t" "$(command -v $t || echo missing)"
  done
  nvcc --version 2>/dev/null | tail -2; ncu --version 2>/dev/null | tail -1; cuobjdump --version 2>/dev/null | tail -1
  "$GPU" suites > /dev/null && echo "divergence-gpu runs" || echo "divergence-gpu does not run"
}

# ---- sass -------------------------------------------------------------------
sass_step() {
  local obj="$BUILD/kernels/gpu/CMakeFiles/dvgpu.dir/scenario_kernels.cu.o"
  [ -f "$obj" ] || { echo "no $obj"; return 1; }
  cuobjdump -sass -arch sm_90 "$obj" > "$OUT/sass/scenario_kernels.sm_90.sass" || return 1
  cuobjdump --dump-resource-usage "$obj" > "$OUT/sass/scenario_kernels.resources.txt" 2>&1 || true
  python3 - "$OUT/sass/scenario_kernels.sm_90.sass" > "$OUT/sass/summary.txt" <<'PY'
import re, sys, collections
fn, counts = None, collections.OrderedDict()
for line in open(sys.argv[1]):
    m = re.search(r'Function : (\S+)', line)
    if m:
        fn = m.group(1); counts[fn] = collections.Counter(); continue
    m = re.search(r'/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)', line)
    if not fn or not m: continue
    op = m.group(2).split('.')[0]; guarded = bool(m.group(1)) and 'PT ' not in m.group(1)
    if op in ('FFMA', 'BSSY', 'BSYNC', 'BRA', 'WARPSYNC', 'EXIT', 'VOTE', 'CS2R'):
        counts[fn][op + ('@' if guarded else '')] += 1
print('per kernel (timed instantiations first), @ = guarded by a predicate')
for f, c in counts.items():
    print(f[:90], ' '.join('%s=%d' % kv for kv in sorted(c.items())))
print()
print('the predication map the SASS shows (timed short kernels, runtime rounds): P = every FFMA guarded and no BSSY,')
print('B = BSSY/BSYNC (a branch); rows LA (side 1, the if), columns LB (side 0, the else)')
grid = {}
for f, c in counts.items():
    m = re.match(r'_Z21scenario_short_kernelILj(\d)ELj(\d)ELj0ELb0E', f)
    if not m: continue
    lb, la = int(m.group(1)), int(m.group(2))
    grid[(la, lb)] = 'P' if c['BSSY'] == 0 and c['FFMA'] == 0 and c['FFMA@'] > 0 else 'B' if c['BSSY'] else '?'
print('LA\\LB ' + ' '.join(str(b) for b in range(1, 9)))
for la in range(1, 9):
    print('  %d   ' % la + ' '.join(grid.get((la, lb), '.') for lb in range(1, 9)))
PY
  cat "$OUT/sass/summary.txt"
}

# ---- measure each experiment --------------------------------------------------
# measure NAME SCENARIO [options...]: the document and its forms.
measure() {
  local name=$1 scen=$2
  shift 2
  local json="$OUT/measure/$name.json" rc
  "$GPU" measure --scenario "$scen" --instructions on --format json "$@" > "$json"
  rc=$?
  echo "divergence-gpu measure --scenario $scen --instructions on $*: exit $rc (1: a check failed or an interval stayed over its target)"
  if [ -s "$json" ]; then
    "$RENDER" text < "$json" > "$OUT/measure/$name.txt"
    "$RENDER" md < "$json" > "$OUT/measure/$name.md"
    "$RENDER" csv < "$json" > "$OUT/measure/$name.csv"
    "$RENDER" svg < "$json" > "$OUT/measure/$name.svg"
    cat "$OUT/measure/$name.txt"
  fi
  return $rc
}

# ---- the suite as filed ----------------------------------------------------------
suite_cli() {
  local s e
  s=$(date +%s.%N)
  "$GPU" measure --suite compiler-and-warp --evidence-dir "$OUT/evidence-cli" --format json > "$OUT/measure/suite-compiler-and-warp.json"
  local rc=$?
  e=$(date +%s.%N)
  echo "divergence-gpu measure --suite compiler-and-warp: exit $rc, wall $(elapsed "$s" "$e") s (instruction profiles cold: the CLI keeps no profile cache)"
  [ -s "$OUT/measure/suite-compiler-and-warp.json" ] && "$RENDER" text < "$OUT/measure/suite-compiler-and-warp.json" > "$OUT/measure/suite-compiler-and-warp.txt"
  return $rc
}

# ---- the nightly refresh, as it runs -------------------------------------------------
PORT=${PORT:-18733}
refresh_nights() {
  local url="http://127.0.0.1:$PORT" pid rc=0 n s e id
  mkdir -p "$OUT/refresh/cache" "$OUT/refresh/evidence"
  CACHE_DIRECTORY="$OUT/refresh/cache" "$DIV" serve --port "$PORT" --evidence-dir "$OUT/refresh/evidence" \
    --static-dir "$SRC/static" --openapi "$SRC/api/openapi.yaml" --rate-limit 0 --job-deadline-ms 120000 \
    > "$OUT/refresh/serve.log" 2>&1 &
  pid=$!
  for n in $(seq 1 60); do
    curl -sf "$url/readyz" > /dev/null 2>&1 && break
    curl -s "$url/readyz" 2> /dev/null | grep -q 'no GPU' && break
    kill -0 "$pid" 2> /dev/null || break
    sleep 1
  done
  curl -s "$url/readyz"; echo
  curl -s "$url/suites" > "$OUT/refresh/suites.json"
  for n in 1 2; do
    s=$(date +%s.%N)
    "$DIV" refresh --server "$url" --timeout 150 --interval 1 > "$OUT/refresh/night$n.txt" 2>&1 || rc=1
    e=$(date +%s.%N)
    echo "night $n: divergence refresh wall $(elapsed "$s" "$e") s (every suite; night 1 collects the profiles)"
    cat "$OUT/refresh/night$n.txt"
    id=$(sed -n 's/^refresh \([^ ]*\) started on.*/\1/p' "$OUT/refresh/night$n.txt" | head -1)
    [ -n "$id" ] && curl -s "$url/evidence/refresh/$id" > "$OUT/refresh/night$n.record.json"
    python3 - "$url" "$OUT/refresh/night$n.record.json" > "$OUT/refresh/night$n.jobs.txt" <<'PY' || true
import json, sys, urllib.request
url, rec = sys.argv[1], json.load(open(sys.argv[2]))
print('%-20s %-7s %10s %10s %12s  %s' % ('suite', 'state', 'run_ms', 'gpu_ms', 'overhead_ms', 'job'))
for s in rec.get('suites', []):
    t = {}
    if s.get('job'):
        try: t = json.load(urllib.request.urlopen(url + '/jobs/' + s['job'])).get('timing', {})
        except Exception as e: t = {'error': str(e)}
    print('%-20s %-7s %10s %10s %12s  %s' % (s['suite'], s['state'], t.get('run_ms'), t.get('gpu_ms'),
                                              t.get('overhead_ms'), s.get('job')))
PY
    cat "$OUT/refresh/night$n.jobs.txt"
  done
  curl -s "$url/evidence/latest/compiler-and-warp" > "$OUT/refresh/compiler-and-warp.latest.json"
  curl -s "$url/evidence/latest/compiler-and-warp.txt" > "$OUT/refresh/compiler-and-warp.latest.txt"
  curl -s "$url/evidence/latest/scenarios.txt" > "$OUT/refresh/scenarios.latest.txt"
  kill "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  return $rc
}

# ---- the GPU tests this work touched ----------------------------------------------------
gtest() { # BINARY [criterion filter]
  local bin="$BUILD/tests/$1"
  shift
  [ -x "$bin" ] || { echo "no $bin"; return 1; }
  if [ $# -gt 0 ]; then "$bin" --verbose=1 -j1 --filter "$1"; else "$bin" --verbose=1 -j1; fi
}

# ---- on demand: the full predication map, the worked cases profiled ------------------------

# ---- Nsight Compute against every new kind of row ------------------------------------------

# ---- the run -------------------------------------------------------------------------------
export OUT SRC BUILD GPU DIV RENDER T0 DEADLINE_S PORT
export -f elapsed env_step sass_step measure suite_cli refresh_nights gtest
step env 60 env_step
step sass 90 sass_step
step measure-k-paths 90 measure k-paths k-paths
step measure-predication 90 measure predication predication
step measure-branchless 60 measure branchless branchless
step measure-reconvergence 90 measure reconvergence reconvergence
step suite-cli 120 suite_cli
step refresh-nights 240 refresh_nights
step test-gpu-scenario 120 gtest test_gpu_scenario
step test-gpu-instructions-experiments 150 gtest test_gpu_instructions 'gpu_instructions/the_experiments_rows_are_profiled_and_their_shapes_read'
step test-gpu-instructions-48-threads 90 gtest test_gpu_instructions 'gpu_instructions/a_predicated_branch_in_partial_warps_is_called_predicated'
step test-ncu 150 gtest test_gpu_instructions 'gpu_instructions/every_new_rows_counts_equal_nsight_computes_source_page'
step test-gpu-instructions-scenarios 150 gtest test_gpu_instructions 'gpu_instructions/every_scenario_row_is_profiled_with_its_paths_named'
step measure-worked-cases 150 measure worked-cases all --budget-ms 300
DV_INSTRUCTIONS_BUDGET_MS=180000 step measure-map 240 measure predication-map predication-map --budget-ms 200
step test-gpu-testimony 120 gtest test_gpu_testimony
step test-gpu-counters 150 gtest test_gpu_counters 'gpu_counters/the_default_pass_counts_what_the_hardware_counts_on_whole_grids'
for f in "$OUT"/logs/test-*.log; do cp "$f" "$OUT/tests/" 2> /dev/null; done

# ---- the summary ----------------------------------------------------------------------------
summary() {
  echo "experiments_gpu.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(( $(date +%s) - T0 )) s in all (deadline ${DEADLINE_S} s)"
  echo
  echo "steps (rc 0 ok; 124 timed out; 'skipped' did not fit the deadline):"
  column -t -s $'\t' "$OUT/steps.tsv" 2> /dev/null || cat "$OUT/steps.tsv"
  echo
  echo "== the SASS's predication map (sass/summary.txt)"
  sed -n '/predication map/,$p' "$OUT/sass/summary.txt" 2> /dev/null
  for n in k-paths predication branchless reconvergence predication-map; do
    [ -s "$OUT/measure/$n.txt" ] || continue
    echo
    echo "== $n (measure/$n.txt): the experiment's lines and the findings"
    grep -E '^(fit |aligned rows|work|vs:|  [a-z0-9-]+ +(ratio|[ 0-9]+ path)|reconvergence:|  +join:|predication map|  LA|  +[1-8] |  \(P|boundary:|the guide)' "$OUT/measure/$n.txt"
    grep -E '^warning:' "$OUT/measure/$n.txt"
  done
  echo
  echo "== the nightly refresh (refresh/night*.txt, night*.jobs.txt)"
  grep -h -E '^night|ok, .* failed' "$OUT/logs/refresh-nights.log" 2> /dev/null
  cat "$OUT/refresh/night1.jobs.txt" "$OUT/refresh/night2.jobs.txt" 2> /dev/null
  echo
  echo "== tests (Synthesis lines; the printed figures are in tests/)"
  for f in "$OUT"/logs/test-*.log; do
    [ -f "$f" ] && printf '%-48s %s\n' "$(basename "$f" .log)" "$(grep -h 'Synthesis' "$f" | tail -1)"
  done
  grep -h 'source page:' "$OUT"/logs/test-ncu.log 2> /dev/null
  grep -h -E '^48-thread|k-paths fit' "$OUT"/logs/test-*.log 2> /dev/null
}
summary > "$OUT/SUMMARY.txt" 2>&1

cat > "$OUT/README.txt" <<'EOF'
What this folder holds (tests/bench/experiments_gpu.sh BUILD_DIR OUT_DIR):

SUMMARY.txt     the figures to read first: each step's exit status, the SASS's
                predication map, each experiment's lines, the refresh's times,
                the tests' results
steps.tsv       each step: exit status (0 ok, 124 timed out, skipped), seconds, log
logs/NAME.log   each step's whole output
sass/           cuobjdump -sass -arch sm_90 of kernels/gpu/scenario_kernels.cu.o,
                its resource usage, and summary.txt (per kernel the FFMA / guarded
                FFMA / BSSY / BSYNC / BRA / WARPSYNC counts, and the predication map
                as the SASS shows it: the profile's verdicts must say the same)
measure/NAME.*  divergence-gpu measure --scenario NAME --instructions on: the
                divergence.v1 document (.json) and its transcript (.txt), Markdown,
                CSV and SVG, rendered from that one document (tests/report_render)
                k-paths          T(k) = a + b k (fit, with intervals), aligned rows
                                 against k = 1, each row's paths' lanes (32 / k)
                predication      the diagonal LA = LB = 1..8: lane-split over
                                 warp-split, each point's SASS shape
                branchless       branch and compute-both-then-select, aligned and split
                reconvergence    the join records (masks, clock spreads), the SASS at
                                 the join, with and without __syncwarp()
                predication-map  the full 8 x 8 map (on demand) and its boundary
                worked-cases     the scenario suite (--scenario all), every row profiled
                suite-compiler-and-warp  the suite's request, filed in evidence-cli/
refresh/        divergence serve + divergence refresh on this GPU, two nights: the
                client's output (night1 collects the instruction profiles cold,
                night2 has them from the cache), the refresh records, each suite's
                job times (run_ms, gpu_ms, overhead_ms), and the latest
                compiler-and-warp evidence (.json, .txt)
tests/          the GPU test binaries' output (criterion, verbose): the touched
                suites, Nsight Compute's Source page against every new kind of row
EOF
echo "done: $OUT/SUMMARY.txt"
