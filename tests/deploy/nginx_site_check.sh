#!/usr/bin/env bash
# deploy/nginx/divergence.conf running: real nginx (TLS with a throwaway
# self-signed certificate) in front of a real server (fake GPU worker). The
# widget comes gzipped with an ETag and answers If-None-Match with 304, JSON
# is gzipped, /metrics and /device answer the allowlisted loopback and are
# refused to any other address (the allowlist with loopback taken out), and
# plain HTTP redirects to HTTPS. Usage: nginx_site_check.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
. "$(dirname "$0")/nginx_prefix.sh"
src=$(cd "$1" && pwd) build=$(cd "$2" && pwd)
for t in nginx openssl curl; do command -v $t >/dev/null || { echo "nginx_site_check: $t missing" >&2; exit 1; }; done
tmp=$(mktemp -d)
pid=
cleanup() {
  [ -f "$tmp/n/nginx.pid" ] && kill "$(cat "$tmp/n/nginx.pid")" 2>/dev/null || true
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "nginx_site_check: $*" >&2; tail -n 20 "$tmp/n/logs/error.log" >&2 2>/dev/null || true; exit 1; }

"$build/divergence" serve --port 0 --rate-limit 0 --trust-forwarded --evidence-dir "$tmp/ev" \
  --worker-cmd "$build/tests/fake_worker" --static-dir "$src/static" </dev/null >/dev/null 2>"$tmp/serve.log" &
pid=$!
for _ in $(seq 100); do grep -q '^listening on' "$tmp/serve.log" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/^listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$tmp/serve.log" | head -n 1)
[ -n "$port" ] || fail "the server did not start"

n=$tmp/n
mkdir -p "$n/logs" "$n/cache"
# nginx's workers (nobody, when started as root) read the files: a world-
# readable copy, wherever the checkout lives.
cp -R "$src/static" "$tmp/static"
chmod 755 "$tmp" && chmod -R a+rX "$tmp/static"
https=$(nginx_prefix_port); http=$(nginx_prefix_port)
while [ "$http" = "$https" ]; do http=$(nginx_prefix_port); done
site() { nginx_prefix_site "$src" "$n" "$tmp/static" "$port" "$https" "$http" "$@"; }
site > "$n/site.conf" || fail "openssl"
nginx_prefix_conf "$n" "$n/site.conf"
nginx -p "$n" -c "$n/nginx.conf" || fail "nginx did not start"
u=https://127.0.0.1:$https
for _ in $(seq 50); do curl -ks -o /dev/null "$u/healthz" && break; sleep 0.1; done
hdr() { curl -ks -D - -o /dev/null "$@" | tr -d '\r'; }

h=$(hdr -H 'Accept-Encoding: gzip' "$u/static/divergence-widget.js")
grep -qi '^content-encoding: gzip' <<<"$h" || fail "the widget is not gzipped: $h"
etag=$(sed -n 's/^[Ee][Tt][Aa][Gg]: //p' <<<"$h")
[ -n "$etag" ] || fail "the widget has no ETag: $h"
grep -qi '^last-modified: ' <<<"$h" || fail "the widget has no Last-Modified"
code=$(curl -ks -o /dev/null -w '%{http_code}' -H 'Accept-Encoding: gzip' -H "If-None-Match: $etag" "$u/static/divergence-widget.js")
[ "$code" = 304 ] || fail "If-None-Match $etag answered $code, not 304"
echo "widget: gzip, ETag $etag, 304 on revalidation"
grep -qi '^content-encoding: gzip' <<<"$(hdr -H 'Accept-Encoding: gzip' "$u/predicates")" || fail "JSON is not gzipped"
echo "JSON: gzip"
for p in /metrics /device; do
  [ "$(curl -ks -o /dev/null -w '%{http_code}' "$u$p")" = 200 ] || fail "$p refused to loopback"
done
# The history: one cache entry per page however its query is written, and
# nothing kept for a query with anything else in it.
cache() { hdr "$u$1" | sed -n 's/^[Xx]-[Cc]ache-[Ss]tatus: //p'; }
code() { curl -ks -o /dev/null -w '%{http_code}' "$u$1"; }
h=/evidence/history/day22-part1
[ "$(cache "$h?limit=5&cursor=2026-01-02")" = MISS ] || fail "the first history page was not a cache miss"
[ "$(cache "$h?cursor=2026-01-02&limit=5")" = HIT ] || fail "the same page written the other way round missed the cache"
for q in 'limit=5&x=1' 'limit=05' 'limit=5&limit=6'; do
  for _ in 1 2; do
    [ "$(code "$h?$q")" = 400 ] || fail "history ?$q was not refused"
    [ "$(cache "$h?$q")" = BYPASS ] || fail "history ?$q went through the cache"
  done
done
[ "$(code "/evidence//history/day22-part1?limit=5&cursor=2026-01-02")" = 200 ] || fail "a merged path lost its page"
echo "history: one cache entry per page (the parameters' order aside); other queries bypass the cache and get 400"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$http/healthz")" = 301 ] || fail "plain HTTP is not redirected"
# The same site with loopback out of the allowlist: now this client is "anyone".
nginx -p "$n" -c "$n/nginx.conf" -s stop 2>/dev/null; sleep 0.3
site -e '/allow 127.0.0.1;/d' -e '/allow ::1;/d' > "$n/site.conf"
nginx -p "$n" -c "$n/nginx.conf" || fail "nginx did not restart"
for _ in $(seq 50); do curl -ks -o /dev/null "$u/healthz" && break; sleep 0.1; done
for p in /metrics /device; do
  [ "$(curl -ks -o /dev/null -w '%{http_code}' "$u$p")" = 403 ] || fail "$p is open to an address off the allowlist"
done
[ "$(curl -ks -o /dev/null -w '%{http_code}' "$u/healthz")" = 200 ] || fail "/healthz should stay public"
echo "/metrics, /device: 200 to the allowlist, 403 to anyone else; plain HTTP: 301"
echo "nginx_site_check: ok"
