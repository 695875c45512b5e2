#!/usr/bin/env bash
# The download benchmark: nginx on 127.0.0.1 serving a 1 GiB and a 4 GiB file, each fetched by curl,
# by a bare URLSession data task that discards the bytes (Benchmarks/urlsession-floor, the floor for
# anything built on URLSession) and by `resumedata download` (release build), with wall time, CPU
# time and peak RSS of each, best of several rounds.
# Usage: Benchmarks/download-bench.sh [--sizes "1G 4G"] [--rounds N]
set -euo pipefail
cd "$(dirname "$0")/.."
sizes="1G 4G"
rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    *) echo "usage: $0 [--sizes \"1G 4G\"] [--rounds N]" >&2; exit 64 ;;
  esac
done
swift build -c release --product resumedata >/dev/null
swift build -c release --product resumedata-bench >/dev/null
bin="$(swift build -c release --show-bin-path)"
work="$(mktemp -d /var/tmp/resumedata-dlbench.XXXXXX)"
swiftc -O Benchmarks/urlsession-floor/main.swift -o "$work/urlsession-floor"
port=$((20000 + RANDOM % 20000))
. scripts/nginx.sh
trap 'stop_nginx "$work"; rm -rf "$work"' EXIT
mkdir -p "$work/www"
urls=()
for size in $sizes; do
  # Real bytes, not a sparse file: the digest and the disk see what a real download gives them.
  head -c "$size" /dev/urandom > "$work/www/$size.bin"
  chmod 644 "$work/www/$size.bin"
  urls+=(--url "http://127.0.0.1:$port/$size.bin")
done
# Written back before anything is timed, so that no download competes with the disk doing it.
sync
start_nginx "$work" "$port"
"$bin/resumedata-bench" download "${urls[@]}" --tool "$bin/resumedata" \
  --floor "$work/urlsession-floor" --rounds "$rounds" --output-dir "$work/out"
# Requests per download, from nginx's log: curl and the floor make one a round; ours one more for
# every continuation.
for size in $sizes; do
  requests=$(awk -v path="/$size.bin" '$7 == path' "$work/access.log" | wc -l)
  echo "download $size.bin requests over $rounds rounds: curl $rounds, floor $rounds, ours $((requests - 2 * rounds))"
done
