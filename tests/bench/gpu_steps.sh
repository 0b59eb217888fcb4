# gpu_steps.sh -- the steps of the GPU scripts (experiments_gpu.sh,
# intensity_gpu.sh, sort_gpu.sh), sourced by each after it sets BUILD, OUT,
# DEADLINE_S and T0:
#   gpu_steps_begin BINARY...  logs/binaries.log names the build's binaries
#                              (paths under BUILD) that are missing (none
#                              named: no such log), and steps.tsv gets its
#                              header;
#   step NAME LIMIT_S CMD...   CMD (an exported function or a command) with
#                              stdout and stderr in logs/NAME.log, under
#                              LIMIT_S or what is left of the deadline,
#                              whichever is less; one line of steps.tsv
#                              (name, exit status: 0 ok, 124 timed out, or
#                              skipped, seconds, log). A step that starts
#                              with less than STEP_MIN_LEFT_S (10) seconds
#                              left is skipped; timeout's kill grace is
#                              STEP_KILL_S (5).

# Seconds from A to B (date +%s.%N), one decimal.
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

gpu_steps_begin() {
  local b missing=""
  mkdir -p "$OUT/logs"
  for b in "$@"; do
    [ -e "$BUILD/$b" ] || missing="$missing $b"
  done
  if [ $# -eq 0 ]; then
    :
  elif [ -n "$missing" ]; then
    echo "missing from $BUILD:$missing (the steps that use them fail)" | tee "$OUT/logs/binaries.log"
  else
    echo "every binary present" > "$OUT/logs/binaries.log"
  fi
  printf 'step\trc\tseconds\tlog\n' > "$OUT/steps.tsv"
}

step() {
  local name=$1 limit=$2
  shift 2
  local now left rc start end
  now=$(date +%s)
  left=$((DEADLINE_S - (now - T0)))
  if [ "$left" -lt "${STEP_MIN_LEFT_S:-10}" ]; then
    printf '%s\tskipped\t0\t(no time left of the %s s deadline)\n' "$name" "$DEADLINE_S" >> "$OUT/steps.tsv"
    echo "== $name: skipped, no time left"
    return 0
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "== $name (at most ${limit} s)"
  start=$(date +%s.%N)
  # The step in a shell of its own (its functions and variables exported by
  # the script), so that timeout can end it and what it started.
  timeout -k "${STEP_KILL_S:-5}" "$limit" bash -c '"$@"' step "$@" > "$OUT/logs/$name.log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  printf '%s\t%s\t%s\tlogs/%s.log\n' "$name" "$rc" "$(elapsed "$start" "$end")" "$name" >> "$OUT/steps.tsv"
  [ "$rc" -eq 124 ] && echo "   timed out after ${limit} s" >> "$OUT/logs/$name.log"
  return 0
}
