#!/bin/sh
# fake_disassembler.sh -- a stand-in for nvdisasm in the tests of the
# disassembly and its cache (tests/server/jobs/test_disasm.c): `--version`
# says "Copyright ... V1.2.3"; `-c FILE` prints a disassembly whose lines
# name the cubin's size and first bytes, and appends "run SIZE" to
# $FAKE_DISASSEMBLER_LOG when that is set. $FAKE_DISASSEMBLER=fail makes it
# exit 3 with nothing printed.
if [ "$1" = --version ]; then
  echo "fake_disassembler: NVIDIA (R) CUDA disassembler"
  echo "Cuda compilation tools, release 13.0, V1.2.3"
  exit 0
fi
[ "$1" = -c ] && [ -f "$2" ] || { echo "fake_disassembler: expected -c FILE, got $*" >&2; exit 2; }
size=$(wc -c < "$2" | tr -d ' ')
[ -n "$FAKE_DISASSEMBLER_LOG" ] && echo "run $size" >> "$FAKE_DISASSEMBLER_LOG"
[ "$FAKE_DISASSEMBLER" = fail ] && exit 3
echo "	.text._Z3fakev:"
echo "        /*0000*/                   MOV R1, c[0x0][0x28] ;"
echo "        /*0010*/                   EXIT ;  /* $size bytes, starting $(head -c 4 "$2") */"
exit 0
