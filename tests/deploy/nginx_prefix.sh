# nginx_prefix.sh -- sourced by the tests that run nginx on a site of deploy/nginx:
# nginx_prefix_conf DIR SITE writes DIR/nginx.conf, a main configuration
# that keeps every file nginx writes (pid, logs, temp folders) under DIR and
# includes SITE (a file under DIR). Run nginx with -p DIR -c DIR/nginx.conf.
nginx_prefix_conf() {
  local d=$1 site=$2
  mkdir -p "$d/logs"
  cat > "$d/nginx.conf" <<CONF
pid $d/nginx.pid;
error_log $d/logs/error.log;
events { worker_connections 64; }
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
