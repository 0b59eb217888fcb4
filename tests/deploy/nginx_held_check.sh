#!/usr/bin/env bash
# Held requests behind the shipped nginx site (deploy/nginx/divergence.conf)
# with real nginx in front of a real server (fake GPU worker, serve
# --trust-forwarded as the site says): one client (127.0.0.2) opens 40
# long-polls on a running job while 151 other clients (127.0.0.3 and up)
# each ask /healthz once. Every proxied connection reaches the server from
# 127.0.0.1, so without per-client counting the one client would take the
# whole site's share.
#  1. The site as shipped: nginx's limit_conn answers the client's excess
#     (32 of 40) with 429 at once; every other client gets 200.
#  2. The site with limit_conn taken out: all 40 reach the server, which
#     counts them by X-Forwarded-For (the client's own share, its own bound
#     of 8 held requests, the oldest answered early); every other client
#     still gets 200.
# Usage: nginx_held_check.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
. "$(dirname "$0")/nginx_prefix.sh"
src=$(cd "$1" && pwd) build=$(cd "$2" && pwd)
for t in nginx openssl curl; do command -v $t >/dev/null || { echo "nginx_held_check: $t missing" >&2; exit 1; }; done
tmp=$(mktemp -d)
pid=
pollers=()
stop_pollers() {
  local p
  for p in "${pollers[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pollers[@]}"; do wait "$p" 2>/dev/null || true; done
  pollers=()
}
cleanup() {
  stop_pollers
  [ -f "$tmp/n/nginx.pid" ] && kill "$(cat "$tmp/n/nginx.pid")" 2>/dev/null || true
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "nginx_held_check: $*" >&2
  tail -n 20 "$tmp/n/logs/error.log" >&2 2>/dev/null || true
  tail -n 20 "$tmp/serve.log" >&2 2>/dev/null || true
  exit 1
}

# The running job lives 20 s: long enough for both phases (the server then
# waits for it on SIGTERM, bounded by that deadline).
"$build/divergence" serve --port 0 --rate-limit 0 --trust-forwarded --job-deadline-ms 20000 --evidence-dir "$tmp/ev" \
  --worker-cmd "$build/tests/fake_worker" --static-dir "$src/static" </dev/null >/dev/null 2>"$tmp/serve.log" &
pid=$!
for _ in $(seq 100); do grep -q '^listening on' "$tmp/serve.log" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/^listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$tmp/serve.log" | head -n 1)
[ -n "$port" ] || fail "the server did not start"
direct=http://127.0.0.1:$port
for _ in $(seq 100); do [ "$(curl -s -o /dev/null -w '%{http_code}' "$direct/readyz")" = 200 ] && break; sleep 0.1; done

n=$tmp/n
mkdir -p "$n/logs"
mkdir -p "$tmp/static" && chmod 755 "$tmp"
https=$(nginx_prefix_port); http=$(nginx_prefix_port)
while [ "$http" = "$https" ]; do http=$(nginx_prefix_port); done
u=https://127.0.0.1:$https
start_nginx() { # extra sed expressions for the site
  nginx_prefix_site "$src" "$n" "$tmp/static" "$port" "$https" "$http" "$@" > "$n/site.conf" || fail "openssl"
  nginx_prefix_conf "$n" "$n/site.conf" 512
  nginx -p "$n" -c "$n/nginx.conf" || fail "nginx did not start"
  for _ in $(seq 50); do curl -ks -o /dev/null "$u/healthz" && break; sleep 0.1; done
}
stop_nginx() {
  nginx -p "$n" -c "$n/nginx.conf" -s stop 2>/dev/null || true
  for _ in $(seq 50); do [ -f "$n/nginx.pid" ] || break; sleep 0.1; done
}

# A job that hangs until its 20 s deadline, running: what the long-polls
# wait on. A phase needs one with time left: a loaded machine can take long
# enough over the first phase for its job to reach the deadline, and the
# long-polls on a failed job are answered at once, none held.
state_of() { curl -s "$direct/jobs/$1" | sed -n 's/.*"state":"\([a-z]*\)".*/\1/p' | head -n 1; }
running_job() {
  job=$(curl -s -X POST -H 'Content-Type: application/json' -d '{"part": 1, "iterations": 1111, "budget_ms": 100}' \
    "$direct/measure" | sed -n 's/.*"id":"\([0-9a-f]*\)".*/\1/p')
  [ -n "$job" ] || fail "no job id"
  for _ in $(seq 300); do [ "$(state_of "$job")" = running ] && break; sleep 0.1; done
  [ "$(state_of "$job")" = running ] || fail "the job did not start"
  job_start=$(date +%s)
}
# Before a phase: the job, if it has at least 12 s left; else the next one.
fresh_job() {
  if [ $(( $(date +%s) - job_start )) -gt 8 ]; then
    for _ in $(seq 300); do [ "$(state_of "$job")" = running ] || break; sleep 0.1; done
    running_job
  fi
}
running_job

# One phase: 40 long-polls from 127.0.0.2, then 151 /healthz from others.
# Prints "<other clients' failures> <long-polls answered within 2 s> <of
# which 429>".
phase() {
  local i codes
  rm -f "$tmp"/lp.*
  for i in $(seq 40); do
    curl -ks --interface 127.0.0.2 -o /dev/null -w '%{http_code}\n' --max-time 40 \
      "$u/jobs/$job?wait=30" > "$tmp/lp.$i" &
    pollers+=($!)
  done
  sleep 2
  local early=0 tooMany=0 f
  for f in "$tmp"/lp.*; do
    [ -s "$f" ] || continue
    early=$((early + 1))
    [ "$(cat "$f")" = 429 ] && tooMany=$((tooMany + 1))
  done
  local failed=0 code others=()
  rm -f "$tmp"/hz.*
  for i in $(seq 151); do
    curl -ks --interface "127.0.0.$((3 + i % 150))" -o /dev/null -w '%{http_code}' --max-time 5 "$u/healthz" \
      > "$tmp/hz.$i" 2>/dev/null &
    others+=($!)
    [ $((i % 16)) = 0 ] && { wait "${others[@]}" 2>/dev/null || true; others=(); }
  done
  wait "${others[@]}" 2>/dev/null || true
  for i in $(seq 151); do
    code=$(cat "$tmp/hz.$i" 2>/dev/null || true)
    [ "$code" = 200 ] || failed=$((failed + 1))
  done
  stop_pollers
  echo "$failed $early $tooMany"
}

start_nginx
read -r failed early tooMany < <(phase)
echo "shipped site: $failed of 151 other clients failed; the client's 40 long-polls: $early answered at once, $tooMany of them 429"
[ "$failed" = 0 ] || fail "$failed of 151 other clients' /healthz failed behind the shipped site"
[ "$tooMany" = 32 ] || fail "nginx's limit_conn answered $tooMany of the client's 40 long-polls with 429, not 32"
stop_nginx

start_nginx -e '/limit_conn divergence_jobs/d'
fresh_job
read -r failed early tooMany < <(phase)
held=$(curl -s "$direct/metrics" | sed -n 's/^dv_http_held_released_total{reason="address"} //p')
echo "no limit_conn: $failed of 151 other clients failed; the client's 40: $early answered at once ($tooMany 429); the server released $held for its per-client bound"
[ "$failed" = 0 ] || fail "$failed of 151 other clients' /healthz failed with only the server's limits"
[ "$early" -ge 32 ] || fail "only $early of the client's 40 long-polls were answered early: the server did not count it by X-Forwarded-For"
[ "${held:-0}" -ge 24 ] || fail "the server released ${held:-0} held requests for the client's bound, expected at least 24"
echo "nginx_held_check: ok"
