#!/usr/bin/env bash
# Seeds an empty evidence store with recorded evidence (`make run` passes the
# committed H200 capture, tests/fixtures/evidence), so a machine without a GPU
# shows real numbers. The files are copied unchanged: each names its GPU, date
# and build, and the widget shows them as a recorded measurement with its age.
# A store that already holds any evidence is left alone.
# Usage: demo-evidence.sh SOURCE_STORE TARGET_STORE
set -euo pipefail
src=$1 dst=$2
if compgen -G "$dst/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]" >/dev/null; then
  exit 0
fi
mkdir -p "$dst"
cp -R "$src"/. "$dst"/
echo "demo: $dst was empty: it now holds the recorded evidence from $src" \
     "($(ls "$src" | tr '\n' ' ' | sed 's/ $//')); delete $dst to start with an empty store" >&2
