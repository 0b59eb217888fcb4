#!/usr/bin/env bash
# classroom_gpu_check.sh SCRIPT BUILD_DIR STAND_IN -- classroom_gpu.sh's dry
# run on the stand-in worker (a ctest): it must end 0 with every step's
# figures, log and status written; then, with every step made to fail (a
# worker command that does not exist; each step stopped after 4 s), it must
# record each step's failure, still run the next, and end 1.
set -u
script=$1 build=$2 standin=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "classroom_gpu_check: $*" >&2; exit 1; }

CLASSROOM_WORKER=$standin bash "$script" "$build" "$out/ok" > "$out/ok.log" 2>&1 || fail "the dry run ended $?: $(tail -20 "$out/ok.log")"
for s in class40 class200 class40_instr alone_vs_batch first_vs_tenth; do
  grep -q "^$s rc=0 " "$out/ok/status" || fail "$s: $(grep "^$s" "$out/ok/status")"
  [ -s "$out/ok/$s.json" ] || fail "$s: no figures"
  [ -s "$out/ok/$s.serve.log" ] || fail "$s: no server log"
done
grep -q "answered: first" "$out/ok/summary.txt" || fail "the summary has no class's figures"
grep -q "first / tenth" "$out/ok/summary.txt" || fail "the summary has no first-vs-tenth"

STEP_TIMEOUT_S=4 CLASSROOM_WORKER=/nonexistent/worker bash "$script" "$build" "$out/bad" > "$out/bad.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "with no worker it ended $rc, not 1"
[ "$(grep -c ' rc=[1-9]' "$out/bad/status")" -eq 5 ] || fail "every step's failure recorded: $(cat "$out/bad/status")"
echo "classroom_gpu.sh: the dry run wrote every figure; failures are recorded and the run goes on"
