#!/usr/bin/env bash
# The download benchmark: nginx on 127.0.0.1 serving a 1 GiB and a 4 GiB file, each fetched by curl,
# by a bare URLSession data task that discards the bytes (Benchmarks/urlsession-floor, the floor for
# anything built on URLSession), by the same task writing each chunk to a file (floorw: the floor for
# a download that keeps the file) and by `resumedata download` (release build; again with
# `--digest none`, as neither floor computes a SHA-256), with wall time, CPU time and peak RSS of
# each, best of several rounds.
# First the throttled lines: a 64 MiB file from a location whose every connection nginx holds to
# 4 MiB/s (`limit_rate`, as servers and paths limit one connection), fetched by curl (one
# connection), by `aria2c -x4 -s4` (Debian's aria2, installed when missing) and by ours with
# `--connections 4`, then by aria2 and ours over 16 connections (for memory).
# Usage: Benchmarks/download-bench.sh [--sizes "1G 4G"] [--rounds N] [--throttled-size 64M]
#                                     [--rate 4m] [--no-throttled]
set -euo pipefail
cd "$(dirname "$0")/.."
sizes="1G 4G"
rounds=3
throttled_size="64M"
rate="4m"
throttled=1
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --throttled-size) throttled_size="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --no-throttled) throttled=0; shift ;;
    *) echo "usage: $0 [--sizes \"1G 4G\"] [--rounds N] [--throttled-size 64M] [--rate 4m] [--no-throttled]" >&2
      exit 64 ;;
  esac
done
if [ "$throttled" = 1 ] && ! command -v aria2c >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  (apt-get install -y -qq aria2 2>/dev/null || (apt-get update -qq && apt-get install -y -qq aria2)) >/dev/null
fi
swift build -c release --product resumedata >/dev/null
swift build -c release --product resumedata-bench >/dev/null
bin="$(swift build -c release --show-bin-path)"
work="$(mktemp -d /var/tmp/resumedata-dlbench.XXXXXX)"
swiftc -O Benchmarks/urlsession-floor/main.swift -o "$work/urlsession-floor"
port=$((20000 + RANDOM % 20000))
. scripts/nginx.sh
trap 'stop_nginx "$work"; rm -rf "$work"' EXIT
mkdir -p "$work/www/throttled"
urls=()
for size in $sizes; do
  # Real bytes, not a sparse file: the digest and the disk see what a real download gives them.
  head -c "$size" /dev/urandom > "$work/www/$size.bin"
  chmod 644 "$work/www/$size.bin"
  urls+=(--url "http://127.0.0.1:$port/$size.bin")
done
if [ "$throttled" = 1 ]; then
  head -c "$throttled_size" /dev/urandom > "$work/www/throttled/$throttled_size.bin"
  chmod 755 "$work/www/throttled"
  chmod 644 "$work/www/throttled/$throttled_size.bin"
fi
# Written back before anything is timed, so that no download competes with the disk doing it.
sync
start_nginx "$work" "$port" "location /throttled/ { limit_rate $rate; }"
if [ "$throttled" = 1 ]; then
  throttled_url="http://127.0.0.1:$port/throttled/$throttled_size.bin"
  echo "# throttled: nginx limit_rate $rate per connection"
  for connections in 4 16; do
    "$bin/resumedata-bench" download --url "$throttled_url" --tool "$bin/resumedata" \
      --aria2 "$(command -v aria2c)" --connections "$connections" --rounds 1 \
      --output-dir "$work/out"
  done
fi
"$bin/resumedata-bench" download "${urls[@]}" --tool "$bin/resumedata" \
  --floor "$work/urlsession-floor" --rounds "$rounds" --output-dir "$work/out"
# Requests per download, from nginx's log: curl and the two floors make one a round; ours (with
# and without its digest) one each, and one more for every continuation.
for size in $sizes; do
  requests=$(awk -v path="/$size.bin" '$7 == path' "$work/access.log" | wc -l)
  echo "download $size.bin requests over $rounds rounds: curl $rounds, floor $rounds, floorw $rounds, ours and oursnd $((requests - 3 * rounds)) (fewest: $((2 * rounds)))"
done
