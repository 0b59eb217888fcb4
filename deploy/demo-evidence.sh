#!/usr/bin/env bash
# Seeds an empty evidence store with recorded evidence (`make run` passes the
# committed H200 capture, tests/fixtures/evidence), so a machine without a GPU
# shows real numbers. The files are copied unchanged: each names its GPU, date
# and build, and the widget shows them as a recorded measurement with its age.
# A store that already holds any evidence is left alone. The capture is
# made on a GPU by deploy/capture-demo.sh (one command: every suite with the
# witness and the counters), and tests/fixtures/capture_check.py fails when
# the committed one no longer matches the build.
# Usage: demo-evidence.sh SOURCE_STORE TARGET_STORE
set -euo pipefail
src=$1 dst=$2
# Anything at all in it (a date folder, a GPU folder the store made, a lock)
# means it is in use: the store moves a copied date folder under its GPU.
if [ -n "$(ls -A "$dst" 2>/dev/null)" ]; then
  exit 0
fi
mkdir -p "$dst"
cp -R "$src"/. "$dst"/
echo "demo: $dst was empty: it now holds the recorded evidence from $src" \
     "($(ls "$src" | tr '\n' ' ' | sed 's/ $//')); delete $dst to start with an empty store" >&2
