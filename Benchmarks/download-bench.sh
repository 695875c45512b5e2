#!/usr/bin/env bash
# The download benchmark: nginx on 127.0.0.1 serving a 1 GiB and a 4 GiB file, each fetched by curl
# and by `resumedata download` (release build), with wall time, CPU time and peak RSS of each.
# Usage: Benchmarks/download-bench.sh [--sizes "1G 4G"]
set -euo pipefail
cd "$(dirname "$0")/.."
sizes="1G 4G"
[ "${1:-}" = "--sizes" ] && sizes="$2"
command -v nginx >/dev/null || { echo "download-bench: install nginx first" >&2; exit 1; }
swift build -c release --product resumedata >/dev/null
swift build -c release --product resumedata-bench >/dev/null
bin="$(swift build -c release --show-bin-path)"
work="$(mktemp -d /var/tmp/resumedata-dlbench.XXXXXX)"
port=$((20000 + RANDOM % 20000))
cleanup() {
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/www"
chmod 755 "$work" "$work/www"
urls=()
for size in $sizes; do
  # Real bytes, not a sparse file: the digest and the disk see what a real download gives them.
  head -c "$size" /dev/urandom > "$work/www/$size.bin"
  chmod 644 "$work/www/$size.bin"
  urls+=(--url "http://127.0.0.1:$port/$size.bin")
done
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $work/nginx.pid;
error_log $work/error.log;
user root;
events { worker_connections 64; }
http { access_log off; sendfile on; server { listen 127.0.0.1:$port; root $work/www; } }
CONF
nginx -c "$work/nginx.conf" -p "$work"
sleep 0.5
"$bin/resumedata-bench" download "${urls[@]}" --tool "$bin/resumedata" --output-dir "$work/out"
