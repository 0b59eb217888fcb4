#!/bin/sh
# fake_instructions.sh -- a stand-in for `divergence-gpu instructions` in
# the profiler's tests (tests/server/jobs/test_instrproc.c): it answers as
# the real command does, without a GPU: one line per row (--table T --row R,
# or every row of --rows T:R,... and a last "done" line). Its behaviour comes
# from $FAKE_INSTRUCTIONS:
#   ok, refuse, crash, hang, garbage   every row the same way;
#   empty, unbalanced                  every row "ok" with a profile that is not
#                                      whole: `{}`, or a region of 5 instructions
#                                      whose one run has 1;
#   crash-table-T-row-R                the process dies when it reaches row T/R;
#   trap-table-0-row-1                 row 0/1 gets no record beside other rows,
#                                      and its profile when alone.
# Each start appends "row R" or "rows T:R,..." to $FAKE_INSTRUCTIONS_LOG when
# that is set, and leaves fake-disassembly.sass in its --sass-cache folder.
[ "$1" = instructions ] || { echo "fake_instructions: expected 'instructions', got '$1'" >&2; exit 2; }
shift
row= table= rows= sass=
while [ $# -gt 0 ]; do
  [ "$1" = --row ] && row=$2
  [ "$1" = --table ] && table=$2
  [ "$1" = --rows ] && rows=$2
  [ "$1" = --sass-cache ] && sass=$2
  shift
done
# What the real command keeps in --sass-cache DIR: the disassembly.
[ -n "$sass" ] && : > "$sass/fake-disassembly.sass"
if [ -n "$FAKE_INSTRUCTIONS_LOG" ]; then
  if [ -n "$rows" ]; then echo "rows $rows" >> "$FAKE_INSTRUCTIONS_LOG"; else echo "row $row" >> "$FAKE_INSTRUCTIONS_LOG"; fi
fi
cat > /dev/null # the request
[ -n "$rows" ] || rows="$table:$row"
mode=${FAKE_INSTRUCTIONS:-ok}

answer() { # table row mode
  case $3 in
    refuse) echo '{"table":'"$1"',"row":'"$2"',"ok":false,"reason":"CUPTI: this GPU or driver does not support SASS metrics (architecture unsupported)"}' ;;
    trap) echo '{"table":'"$1"',"row":'"$2"',"ok":false,"reason":"CUPTI: the SASS metrics gave no record for this row'"'"'s launch 0 (1 blocks)"}' ;;
    empty) echo '{"table":'"$1"',"row":'"$2"',"ok":true,"stalls_reason":null,"instructions":{}}' ;;
    ok|unbalanced)
      n=1; [ "$3" = unbalanced ] && n=5
      printf '%s' '{"table":'"$1"',"row":'"$2"',"ok":true,"stalls_reason":null,"instructions":{"source":"cupti-sass","kernel":"_Z12fakeKernelv",'
      printf '%s' '"cubin_crc":"00000000000000aa","mask_hash":"0000000000000001","grid":{"blocks":1,"block":[256,1]},'
      printf '%s' '"scale":4096,"cached":false,"collected_utc":"2026-12-01T12:00:00Z","collect_ms":1.5,'
      printf '%s' '"disassembler":"nvdisasm V13.0.88 (fake)","disassembly_reason":null,"mapped":1,'
      printf '%s' '"regions":[{"kind":"before","instructions":'"$n"',"warp_executions":32768,"thread_executions":1048576,'
      printf '%s' '"pred_on_thread_executions":524288,"lanes_per_execution":32,"stalls":null}],'
      printf '%s' '"runs":[{"pc":784,"count":1,"opcode":"BRA","sass":"@P0 BRA `(.L_x_52)","last_sass":"@P0 BRA `(.L_x_52)",'
      printf '%s' '"file":"kernels/gpu/lesson_kernels.cu","line":'"$2"',"region":"before","guarded":true,'
      printf '%s\n' '"warp_executions":32768,"thread_executions":1048576,"pred_on_thread_executions":524288,"lanes":32,"divergent_targets":32768}]}}'
      ;;
  esac
}

case $mode in
  crash) kill -SEGV $$ ;;
  hang) exec sleep 30 ;;
  garbage) echo 'Segmentation fault in a library that prints'; exit 0 ;;
  ok|refuse|empty|unbalanced|crash-table-*-row-*|trap-table-0-row-1) ;;
  *) echo "fake_instructions: unknown mode $mode" >&2; exit 2 ;;
esac
many=0
case $rows in *,*) many=1 ;; esac
for tr in $(echo "$rows" | tr ',' ' '); do
  t=${tr%%:*} r=${tr#*:} m=$mode
  case $mode in
    crash-table-*-row-*) at=${mode#crash-table-}; at=${at%%-row-*}:${mode##*-row-}
                         [ "$tr" = "$at" ] && kill -SEGV $$; m=ok ;;
    trap-table-0-row-1) m=ok; [ "$tr" = 0:1 ] && [ $many = 1 ] && m=trap ;;
  esac
  answer "$t" "$r" "$m"
done
[ $many = 1 ] && echo '{"done":true,"rows":0,"profiled":0,"phases_ms":{}}'
exit 0
