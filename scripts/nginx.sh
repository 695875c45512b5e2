# Sourced by the scripts that need nginx on 127.0.0.1: `start_nginx WORK PORT [EXTRA] [HTTP_EXTRA]`
# serves WORK/www on PORT (EXTRA: more server-block directives; HTTP_EXTRA: more http-block ones,
# another server block say), keeps its pid in WORK/nginx.pid, and waits until it answers;
# `stop_nginx WORK` stops it and waits for it to go; `free_ports COUNT` picks ports for it. The
# access log's lines are nginx's combined format followed by the connection's serial number
# (`$connection`), which tells requests on one connection apart.
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
  [ -f "$1/nginx.pid" ] || return 0
  local pid
  pid="$(cat "$1/nginx.pid")"
  kill "$pid" 2>/dev/null || return 0
  # Gone before the next script binds its ports (at most 5 s).
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
}

# Prints a port P (20000-39999) such that P to P+COUNT-1 are free on 127.0.0.1, each bound once as
# nginx binds it (SO_REUSEADDR) and released: a random port that another process holds would
# otherwise fail the run (`bind() ... Address already in use`).
free_ports() {
  python3 - "${1:-1}" <<'PY'
import random, socket, sys
count = int(sys.argv[1])
for _ in range(200):
    base = random.randrange(20000, 40000 - count)
    sockets, free = [], True
    try:
        for port in range(base, base + count):
            held = socket.socket()
            sockets.append(held)
            held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            held.bind(("127.0.0.1", port))
    except OSError:
        free = False
    finally:
        for held in sockets:
            held.close()
    if free:
        print(base)
        sys.exit(0)
sys.exit("no free ports on 127.0.0.1")
PY
}
