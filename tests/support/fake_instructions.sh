#!/bin/sh
# fake_instructions.sh -- a stand-in for `divergence-gpu instructions` in
# the profiler's tests (tests/server/jobs/test_instrproc.c): it answers as
# the real command does, without a GPU. Its behaviour comes from
# $FAKE_INSTRUCTIONS (ok, refuse, crash, hang, garbage, crash-table-0-row-1); each
# start appends its arguments to $FAKE_INSTRUCTIONS_LOG when that is set.
[ "$1" = instructions ] || { echo "fake_instructions: expected 'instructions', got '$1'" >&2; exit 2; }
shift
row= table=
while [ $# -gt 0 ]; do
  [ "$1" = --row ] && row=$2
  [ "$1" = --table ] && table=$2
  shift
done
[ -n "$FAKE_INSTRUCTIONS_LOG" ] && echo "row $row" >> "$FAKE_INSTRUCTIONS_LOG"
cat > /dev/null # the request
mode=${FAKE_INSTRUCTIONS:-ok}
[ "$mode" = crash-table-0-row-1 ] && { [ "$table/$row" = 0/1 ] && mode=crash || mode=ok; }
case $mode in
  refuse) echo '{"ok":false,"reason":"CUPTI: this GPU or driver does not support SASS metrics (architecture unsupported)"}' ;;
  crash) kill -SEGV $$ ;;
  hang) exec sleep 30 ;;
  garbage) echo 'Segmentation fault in a library that prints' ;;
  ok)
    printf '%s' '{"ok":true,"stalls_reason":null,"instructions":{"source":"cupti-sass","kernel":"_Z12fakeKernelv",'
    printf '%s' '"cubin_crc":"00000000000000aa","mask_hash":"0000000000000001","grid":{"blocks":1,"block":[256,1]},'
    printf '%s' '"scale":4096,"cached":false,"collected_utc":"2026-12-01T12:00:00Z","collect_ms":1.5,'
    printf '%s' '"disassembler":"nvdisasm V13.0.88 (fake)","disassembly_reason":null,"mapped":1,'
    printf '%s' '"regions":[{"kind":"before","instructions":1,"warp_executions":32768,"thread_executions":1048576,'
    printf '%s' '"pred_on_thread_executions":524288,"lanes_per_execution":32,"stalls":null}],'
    printf '%s' '"runs":[{"pc":784,"count":1,"opcode":"BRA","sass":"@P0 BRA `(.L_x_52)","last_sass":"@P0 BRA `(.L_x_52)",'
    printf '%s' '"file":"kernels/gpu/lesson_kernels.cu","line":'"${row:-0}"',"region":"before","guarded":true,'
    printf '%s\n' '"warp_executions":32768,"thread_executions":1048576,"pred_on_thread_executions":524288,"lanes":32,"divergent_targets":32768}]}}'
    ;;
  *) echo "fake_instructions: unknown mode $mode" >&2; exit 2 ;;
esac
