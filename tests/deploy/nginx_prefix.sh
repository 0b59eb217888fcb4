# nginx_prefix.sh -- sourced by the tests that run nginx on a site of deploy/nginx:
# nginx_prefix_conf DIR SITE writes DIR/nginx.conf, a main configuration
# that keeps every file nginx writes (pid, logs, temp folders) under DIR and
# includes SITE (a file under DIR), with WORKER_CONNECTIONS (default 64) per
# worker. Run nginx with -p DIR -c DIR/nginx.conf.
nginx_prefix_conf() {
  local d=$1 site=$2 wc=${3:-64}
  mkdir -p "$d/logs"
  cat > "$d/nginx.conf" <<CONF
pid $d/nginx.pid;
error_log $d/logs/error.log;
events { worker_connections $wc; }
http {
    access_log off;
    client_body_temp_path $d/body;
    proxy_temp_path $d/proxy;
    fastcgi_temp_path $d/fastcgi;
    uwsgi_temp_path $d/uwsgi;
    scgi_temp_path $d/scgi;
    include $site;
}
CONF
}

# nginx_prefix_port: a loopback port for nginx to listen on, below the
# kernel's ephemeral range (servers started with --port 0 and every outgoing
# connection take theirs from that range, so a port drawn there can be taken
# between the draw and nginx's bind), and with nothing listening on it now.
nginx_prefix_port() {
  local low=32768 p
  read -r low _ < /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  while :; do
    p=$(( 10000 + RANDOM % (low - 10001) ))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}

# nginx_prefix_site SRC DIR STATIC UPSTREAM HTTPS HTTP [sed expressions]:
# deploy/nginx/divergence.conf from the source tree SRC on stdout, made to
# run under DIR: its certificate DIR/cert.pem and key DIR/key.pem (made here
# when missing), its cache in DIR/cache, the static files from STATIC, the
# server on 127.0.0.1:UPSTREAM, TLS on 127.0.0.1:HTTPS and plain HTTP on
# 127.0.0.1:HTTP (no IPv6 listeners); the extra sed expressions after.
nginx_prefix_site() {
  local src=$1 d=$2 static=$3 upstream=$4 https=$5 http=$6
  shift 6
  mkdir -p "$d/cache"
  [ -f "$d/cert.pem" ] || openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=divergence.example.org \
    -keyout "$d/key.pem" -out "$d/cert.pem" >/dev/null 2>&1 || return 1
  sed -e "s|/etc/ssl/certs/divergence.crt|$d/cert.pem|" -e "s|/etc/ssl/private/divergence.key|$d/key.pem|" \
      -e "s|/var/cache/nginx/divergence|$d/cache|" -e "s|/var/www/html|$d|" \
      -e "s|/opt/divergence/share/divergence/static|$static|g" -e "s|server 127.0.0.1:8080;|server 127.0.0.1:$upstream;|" \
      -e "s|listen 443 ssl http2;|listen 127.0.0.1:$https ssl;|" -e "/listen \[::\]:443/d" \
      -e "s|listen 80;|listen 127.0.0.1:$http;|" -e "/listen \[::\]:80;/d" "$@" "$src/deploy/nginx/divergence.conf"
}
