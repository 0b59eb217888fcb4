#!/usr/bin/env bash
# evidence_sizes.sh -- the bytes of every evidence form on the wire, identity
# against gzip (curl --compressed), served by a real server from the
# recorded H200 capture (tests/fixtures/evidence): the slim record a page
# loads first, the record as filed (.full.json), the transcript, the chart,
# the tables, the index, a history page and one row's listing.
# Usage: tests/bench/evidence_sizes.sh [BUILD_DIR]   (prints a table)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
tmp=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
cp -R "$repo/tests/fixtures/evidence/." "$tmp/"
"$build/divergence" serve --port 0 --evidence-dir "$tmp" --static-dir "$repo/static" 2>"$tmp/log" &
pid=$!
for _ in $(seq 100); do
  port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$tmp/log" | head -n1)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "${port:-}" ] || { echo "evidence_sizes: the server did not start: $(cat "$tmp/log")" >&2; exit 1; }
base=http://127.0.0.1:$port
listing=$(curl -s "$base/evidence/latest/day22-part2" |
  python3 -c 'import json,sys; d=json.load(sys.stdin); print(next(r["instructions"]["listing_url"] for t in d["document"]["tables"] for r in t["rows"] if r.get("instructions")))')
printf '%-72s %10s %10s\n' form identity gzip
for p in /evidence/latest /evidence/latest/day22-part1 /evidence/latest/day22-part2 \
  /evidence/latest/day22-part2.json /evidence/latest/day22-part2.full.json /evidence/latest/day22-part2.txt \
  /evidence/latest/day22-part2.svg /evidence/latest/day22-part2.md /evidence/latest/day22-part2.csv \
  /evidence/latest/scenarios.md /evidence/latest/scenarios.csv /evidence/2026-12-01/day22-part2.json \
  /evidence/history/day22-part2 "$listing"; do
  id=$(curl -so /dev/null -w '%{size_download}' "$base$p")
  gz=$(curl --compressed -so /dev/null -w '%{size_download}' "$base$p")
  printf '%-72s %10s %10s\n' "$p" "$id" "$gz"
done
