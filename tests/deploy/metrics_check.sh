#!/usr/bin/env bash
# GET /metrics after a burst of jobs, 429s and a refresh, checked by
# Prometheus' own linter (promtool check metrics) and for the series an
# operator alerts on. The real server, the fake GPU worker.
#
# Usage: tests/deploy/metrics_check.sh SOURCE_DIR BUILD_DIR
# Writes the scrape to BUILD_DIR/test-output/metrics.txt.
set -euo pipefail
src=$1 build=$2
out="$build/test-output"
mkdir -p "$out"
command -v promtool >/dev/null || { echo "metrics_check: promtool missing (Debian package prometheus; make test installs it)" >&2; exit 1; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "metrics_check: $*" >&2; echo "--- server log:" >&2; cat "$tmp/log" >&2; exit 1; }

# A refresh needs a place in the queue for each suite: as many places as
# the build has suites.
nsuites=$("$build/divergence" suites | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["suites"]))')
[ -n "$nsuites" ] || fail "divergence suites listed none"
"$build/divergence" serve --port 0 --queue "$nsuites" --rate-limit 8 --trust-forwarded --evidence-dir "$tmp/ev" \
  --worker-cmd "$build/tests/fake_worker" --static-dir "$src/static" 2>"$tmp/log" &
pid=$!
for _ in $(seq 100); do grep -q "^listening on" "$tmp/log" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$tmp/log" | head -1)
[ -n "$url" ] || fail "the server did not start"
for _ in $(seq 100); do [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/readyz")" = 200 ] && break; sleep 0.1; done

# A burst: slow jobs (the fake worker sleeps 300 ms for 3333 iterations) fill
# the queue of one place a suite (a refresh needs a place for each suite),
# then the rate limit (8 a minute) answers the rest; the refresh comes from
# another (forwarded) address so that the limit leaves it alone.
codes=""
for i in $(seq 12); do
  codes+=" $(curl -s -o /dev/null -w '%{http_code}' -X POST "$url/measure" \
    -H 'Content-Type: application/json' -d "{\"iterations\":3333,\"blocks\":$((8 + i))}")"
done
echo "POST /measure x12: $codes"
n429=$(tr ' ' '\n' <<<"$codes" | grep -c '^429$' || true)
[ "$n429" -ge 3 ] || fail "expected at least three 429s, got: $codes"
sleep "$(python3 -c "print(0.4 + 0.3 * ($nsuites + 1))")" # the accepted jobs finish (queue + 1, 300 ms each)
ref=$(curl -s -X POST -H "Content-Type: application/json" -H "X-Forwarded-For: 192.0.2.7" "$url/evidence/refresh")
rid=$(sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' <<<"$ref" | head -1)
[ -n "$rid" ] || fail "no refresh id in: $ref"
for _ in $(seq 300); do
  # The run's own state is the first "state" member (the suites' follow).
  curl -s "$url/evidence/refresh/$rid" | grep -m1 '"state"' | grep -q '"done"' && break
  sleep 0.1
done
curl -s "$url/metrics" >"$out/metrics.txt"
promtool check metrics <"$out/metrics.txt" || fail "promtool check metrics found problems (scrape in $out/metrics.txt)"
echo "promtool check metrics: clean ($(wc -l <"$out/metrics.txt") lines)"

want() { grep -Eq "$1" "$out/metrics.txt" || fail "no line matching /$1/ in the scrape"; }
rej=$(sed -n 's/^dv_jobs_total{outcome="rejected"} //p' "$out/metrics.txt")
[ "$rej" = "$n429" ] || fail "dv_jobs_total{outcome=\"rejected\"} is $rej, the server answered $n429 429s"
# The request histogram is split by status class: the 202s and the 429s.
n2=$(sed -n 's/^dv_http_request_duration_seconds_count{route="\/measure",status_class="2xx"} //p' "$out/metrics.txt")
n4=$(sed -n 's/^dv_http_request_duration_seconds_count{route="\/measure",status_class="4xx"} //p' "$out/metrics.txt")
[ "${n2:-0}" -gt 0 ] && [ "${n4:-0}" = "$n429" ] && [ $(( n2 + n4 )) = 12 ] ||
  fail "/measure's histogram by status class: 2xx ${n2:-none}, 4xx ${n4:-none}; the server answered $n429 429s of 12"
want '^dv_http_requests_total\{route="/measure",status="429",status_class="4xx"\} [1-9]'
want '^dv_job_queue_wait_seconds_count [1-9]'
want '^dv_job_run_seconds_count\{outcome="done"\} [1-9]'
want '^dv_evidence_last_success_timestamp_seconds\{suite="day22-part1"(,gpu="fake-gpu")?\} [0-9]{10}$'
want '^divergence_build_info\{version="[^"]+",git_revision="[^"]+"\} 1$'
want '^process_resident_memory_bytes [1-9]'
want '^process_cpu_seconds_total '
want '^process_open_fds [1-9]'
want '^process_start_time_seconds [0-9]'
grep '^dv_jobs_total\|^dv_evidence_last\|_count' "$out/metrics.txt"
echo "metrics_check: ok"
