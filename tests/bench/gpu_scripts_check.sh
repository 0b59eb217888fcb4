#!/usr/bin/env bash
# gpu_scripts_check.sh -- intensity_gpu.sh, sort_gpu.sh and experiments_gpu.sh
# (their steps: gpu_steps.sh) without a GPU, on
# a build tree of stand-ins: each names the binaries it lacks before any step
# (logs/binaries.log and SUMMARY.txt), and sort_gpu.sh's ncu step reads the
# profiler's output (printed on the application's standard output) and
# passes on four shade launches with their DRAM bytes even when the measured
# run itself exits 1 (an interval over its target at a 5 ms budget).
#
#   tests/bench/gpu_scripts_check.sh SOURCE_DIR
set -u
SRC=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }

mkdir -p "$T/build/tests" "$T/bin" "$T/build/kernels/gpu/CMakeFiles/dvgpu.dir"
# The measured run: a short transcript, exit 1 (an interval over its target).
printf '#!/bin/sh\necho "data-sort: a transcript"\nexit 1\n' > "$T/build/divergence-gpu"
printf '#!/bin/sh\nexit 0\n' > "$T/build/tests/report_render"
cp "$T/build/tests/report_render" "$T/build/tests/test_gpu_sort"
cp "$T/build/tests/report_render" "$T/build/tests/test_gpu_intensity"
touch "$T/build/kernels/gpu/CMakeFiles/dvgpu.dir/sort_kernels.cu.o"
# ncu as Nsight Compute prints: its results on the application's standard
# output, interleaved with it, and the application's exit status.
cat > "$T/bin/ncu" <<'NCU'
#!/bin/sh
for i in 1 2 3 4; do
  echo "  void sort_shade_kernel<2, false>(sort_shade_args, unsigned int, sort_warp_r *) (1024, 1, 1)x(256, 1, 1)"
  echo "    dram__bytes_read.sum                   byte       1048576"
done
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
  case $1 in -k|--launch-count|--metrics|--target-processes) shift ;; esac
  shift
done
"$@"
NCU
chmod +x "$T/build/divergence-gpu" "$T/build/tests/"* "$T/bin/ncu"

PATH="$T/bin:$PATH" DEADLINE_S=60 bash "$SRC/tests/bench/sort_gpu.sh" "$T/build" "$T/sort" > /dev/null 2>&1
check "sort_gpu.sh: every binary present" "grep -q 'every binary present' '$T/sort/logs/binaries.log'"
check "sort_gpu.sh: the ncu step passes on four launches" "grep -qP '^ncu\t0\t' '$T/sort/steps.tsv'"
check "sort_gpu.sh: the ncu log holds the DRAM bytes" "[ \$(grep -c dram__bytes_read.sum '$T/sort/logs/ncu.log') -ge 4 ]"

# intensity_gpu.sh on a tree without tests/intensity_probe.
PATH="$T/bin:$PATH" DEADLINE_S=60 bash "$SRC/tests/bench/intensity_gpu.sh" "$T/build" "$T/intensity" > /dev/null 2>&1
check "intensity_gpu.sh: names the missing probe" "grep -q 'missing from .*tests/intensity_probe' '$T/intensity/logs/binaries.log'"
check "intensity_gpu.sh: the summary says so" "grep -q 'binaries: missing' '$T/intensity/SUMMARY.txt'"
# And sort_gpu.sh on a tree without its test binary.
rm "$T/build/tests/test_gpu_sort"
PATH="$T/bin:$PATH" DEADLINE_S=60 bash "$SRC/tests/bench/sort_gpu.sh" "$T/build" "$T/sort2" > /dev/null 2>&1
check "sort_gpu.sh: names the missing test" "grep -q 'missing from .*tests/test_gpu_sort' '$T/sort2/logs/binaries.log'"
# experiments_gpu.sh (its steps are gpu_steps.sh's too) on 25 s: the steps
# that start with 15 s or more left run and each has its line and log, the
# rest are skipped with the deadline named.
PATH="$T/bin:$PATH" DEADLINE_S=25 bash "$SRC/tests/bench/experiments_gpu.sh" "$T/build" "$T/experiments" > /dev/null 2>&1
check "experiments_gpu.sh: the env step ran, its log beside it" "grep -qP '^env\t0\t[0-9.]+\tlogs/env.log$' '$T/experiments/steps.tsv' && [ -s '$T/experiments/logs/env.log' ]"
check "experiments_gpu.sh: every step has its line" "[ \$(tail -n +2 '$T/experiments/steps.tsv' | awk -F'\t' 'NF == 4' | wc -l) -ge 10 ]"
exit $fail
