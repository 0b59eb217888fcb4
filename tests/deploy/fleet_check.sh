#!/usr/bin/env bash
# The fleet front (deploy/nginx/divergence-fleet.conf) with real nginx and two
# real servers of two fake GPU models ("Fake GPU A", "Fake GPU B") sharing one
# evidence directory, standing in for the example's GPUs: the example's H200
# pool (8080, 8081) becomes server A (job ids "00..."), its L4 (8082) server B
# (job ids "02..."), and the slugs become fake-gpu-a and fake-gpu-b. Each
# server refreshes its suites into the shared store and GET /evidence/latest
# through the front lists both GPU models. A measurement sent to
# /gpus/fake-gpu-b/measure must be queued on B, its GET /jobs/{id} answered by
# B through the front until done, and one sent to /gpus/fake-gpu-a/measure
# must land on A; unknown GPU models and foreign job ids are 404s at the
# front. Usage: tests/deploy/fleet_check.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
. "$(dirname "$0")/nginx_prefix.sh"
src=$1 build=$2
command -v nginx >/dev/null || { echo "fleet_check: nginx missing (Debian package nginx-light)" >&2; exit 1; }
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -f "$tmp/nginx/nginx.pid" ] && kill "$(cat "$tmp/nginx/nginx.pid")" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "fleet_check: $*" >&2; for f in "$tmp"/*.log "$tmp"/nginx/logs/error.log; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }; done; exit 1; }

start() { # name prefix gpu-name
  FAKE_WORKER_GPU_NAME="$3" "$build/divergence" serve --port 0 --rate-limit 0 --job-id-prefix "$2" --evidence-dir "$tmp/ev" \
    --worker-cmd "$build/tests/fake_worker" --static-dir "$src/static" </dev/null >/dev/null 2>"$tmp/$1.log" &
  pids+=($!)
}
port() {
  for _ in $(seq 100); do grep -q '^listening on' "$tmp/$1.log" 2>/dev/null && break; sleep 0.1; done
  sed -n 's/^listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$tmp/$1.log" | head -n 1
}
start a 00 "Fake GPU A"
start b 02 "Fake GPU B"
pa=$(port a)
pb=$(port b)
[ -n "$pa" ] && [ -n "$pb" ] || fail "the servers did not start"

n=$tmp/nginx
mkdir -p "$n/logs"
front=$(nginx_prefix_port)
sed -e "s/127.0.0.1:8080/127.0.0.1:$pa/g" -e "s/127.0.0.1:8081/127.0.0.1:$pa/g" -e "s/127.0.0.1:8082/127.0.0.1:$pb/g" \
    -e "s/listen 127.0.0.1:8090;/listen 127.0.0.1:$front;/" -e "s/nvidia-h200 /fake-gpu-a /" -e "s/nvidia-l4   /fake-gpu-b /" \
    "$src/deploy/nginx/divergence-fleet.conf" > "$n/fleet.conf"
grep -q "fake-gpu-a divergence_gpu_nvidia_h200" "$n/fleet.conf" && grep -q "fake-gpu-b divergence_gpu_nvidia_l4" "$n/fleet.conf" ||
  fail "the example's slug map changed shape: update this test"
nginx_prefix_conf "$n" "$n/fleet.conf"
nginx -t -q -p "$n" -c "$n/nginx.conf" || fail "nginx -t"
nginx -p "$n" -c "$n/nginx.conf" || fail "nginx did not start"
url=http://127.0.0.1:$front
for _ in $(seq 50); do curl -s -o /dev/null "$url/healthz" && break; sleep 0.1; done

post() { curl -s -X POST -H 'Content-Type: application/json' -d "$2" "$url$1"; }
idof() { sed -n 's/.*"id":"\([0-9a-f]*\)".*/\1/p' <<<"$1"; }
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }

# A refresh on each server into the shared store; the front lists both GPUs.
for p in "$pa" "$pb"; do
  for _ in $(seq 100); do [ "$(code "http://127.0.0.1:$p/readyz")" = 200 ] && break; sleep 0.1; done
  rid=$(curl -s -X POST -H "Content-Type: application/json" "http://127.0.0.1:$p/evidence/refresh" | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' | head -n 1)
  [ -n "$rid" ] || fail "no refresh on port $p"
  for _ in $(seq 100); do
    curl -s "http://127.0.0.1:$p/evidence/refresh/$rid" | grep -m1 '"state"' | grep -q '"done"' && break
    sleep 0.1
  done
done
for _ in $(seq 30); do
  ix=$(curl -s "$url/evidence/latest")
  grep -q '"gpu": *"fake-gpu-a"' <<<"$ix" && grep -q '"gpu": *"fake-gpu-b"' <<<"$ix" && break
  sleep 0.1
done
grep -q '"gpu": *"fake-gpu-a"' <<<"$ix" && grep -q '"gpu": *"fake-gpu-b"' <<<"$ix" ||
  fail "GET /evidence/latest through the front does not list both GPU models: $ix"
echo "GET /evidence/latest through the front lists fake-gpu-a and fake-gpu-b"
r=$(post /gpus/fake-gpu-b/measure '{"part":1,"iterations":101,"budget_ms":100}')
id=$(idof "$r")
[[ $id == 02* ]] || fail "a fake-gpu-b measurement should be queued on B (ids 02...): $r"
echo "POST /gpus/fake-gpu-b/measure -> job $id"
[ "$(code "http://127.0.0.1:$pb/jobs/$id")" = 200 ] || fail "B does not know job $id"
[ "$(code "http://127.0.0.1:$pa/jobs/$id")" = 404 ] || fail "A knows B's job $id"
for _ in $(seq 100); do
  s=$(curl -s "$url/jobs/$id")
  grep -q '"state":"done"' <<<"$s" && break
  sleep 0.1
done
grep -q '"state":"done"' <<<"$s" || fail "GET /jobs/$id through the front never said done: $s"
echo "GET /jobs/$id through the front: done"
r=$(post /gpus/fake-gpu-a/measure '{"part":1,"iterations":102,"budget_ms":100}')
id2=$(idof "$r")
[[ $id2 == 00* ]] || fail "a fake-gpu-a measurement should land on A (ids 00...): $r"
[ "$(code "$url/jobs/$id2")" = 200 ] || fail "GET /jobs/$id2 through the front"
echo "POST /gpus/fake-gpu-a/measure -> job $id2 (server A)"
r=$(post /measure '{"part":1,"iterations":103,"budget_ms":100}')
[[ $(idof "$r") =~ ^0[02] ]] || fail "plain /measure: $r"
[ "$(code -X POST "$url/gpus/nvidia-t4/measure")" = 404 ] || fail "an unknown GPU model is not a 404"
[ "$(code -X POST "$url/gpus/nvidia-h200/measure")" = 404 ] || fail "the renamed example slug still answers"
[ "$(code "$url/jobs/ff0123456789abcdef0123456789abcd")" = 404 ] || fail "a foreign job id is not a 404"
[ "$(code "$url/evidence/latest")" = 200 ] || fail "GET /evidence/latest through the front"
echo "fleet_check: ok"
