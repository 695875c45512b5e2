# Sourced by the scripts that need nginx on 127.0.0.1: `start_nginx WORK PORT [EXTRA] [HTTP_EXTRA]`
# serves WORK/www on PORT (EXTRA: more server-block directives; HTTP_EXTRA: more http-block ones,
# another server block say), keeps its pid in WORK/nginx.pid, and waits until it answers;
# `stop_nginx WORK` stops it. The access log's lines are nginx's combined format followed by the
# connection's serial number (`$connection`), which tells requests on one connection apart.
start_nginx() {
  local work="$1" port="$2" extra="${3:-}" http_extra="${4:-}"
  command -v nginx >/dev/null || { echo "nginx is not installed" >&2; return 1; }
  chmod 755 "$work" "$work/www"
  cat > "$work/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $work/nginx.pid;
error_log $work/error.log;
user root;
events { worker_connections 64; }
http {
  log_format withconnection '\$remote_addr - \$remote_user [\$time_local] "\$request" \$status '
    '\$body_bytes_sent "\$http_referer" "\$http_user_agent" \$connection';
  access_log $work/access.log withconnection;
  sendfile on;
  server { listen 127.0.0.1:$port; root $work/www; $extra }
  $http_extra
}
CONF
  nginx -c "$work/nginx.conf" -p "$work"
  for _ in $(seq 50); do
    # Any HTTP answer (even 403 for the bare directory) means it is listening.
    curl -s -o /dev/null "http://127.0.0.1:$port/" && return 0
    sleep 0.1
  done
}

stop_nginx() {
  [ -f "$1/nginx.pid" ] && kill "$(cat "$1/nginx.pid")" 2>/dev/null || true
}
