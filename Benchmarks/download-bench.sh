#!/usr/bin/env bash
# The download benchmark, every line from one run against nginx on 127.0.0.1, each tool in its own
# process with wall time, CPU time (user + system) and peak RSS from the kernel's accounting (wait4).
# Ours (`resumedata download`, release build) runs on both engines: `ours` is libcurl's multi
# interface (--engine curl, the default on Linux), `oursus` Foundation's URLSession
# (--engine urlsession). Each section also measures what the process costs before it downloads
# anything (`start`: `resumedata --version`, best of five), and gives ours' CPU without it.
# 1. Rate-limited servers, as real downloads are network-bound: nginx holds every connection to
#    1 MB/s (a 16 MiB file) and to 8 MB/s (64 MiB), fetched over one connection by curl,
#    `aria2c -x1`, ours on each engine and a bare URLSession data task that discards every chunk
#    (Benchmarks/urlsession-floor: the floor under anything built on URLSession), curl then
#    `sync FILE` (cursyn) and curl then `openssl dgst -sha256 FILE` and `sync FILE` (curdig: curl
#    handing over what ours does by default, a flushed file and its digest); then over four by
#    `aria2c -x4 -s4` (and `-k 1M`, its pieces as small as ours) and ours.
# 2. A 64 MiB file whose every connection nginx holds to 4 MiB/s (`--rate`), over 4 and 16
#    connections (curl over one beside them).
# 3. Unthrottled 1 GiB (`--sizes`): curl, curl then `sync FILE` (cursyn: the floor under a download
#    that flushes its file to disk before it is done, as ours does), the URLSession floor, the floor
#    writing each chunk to a file (floorw), ours on each engine and ours with `--digest none`
#    (oursnd), and also without its once-a-second state (oursnp: --persist-interval 86400), best of
#    several rounds. The one-connection rate-limited lines run oursnd and oursnp too.
# aria2 (Debian's) is installed when missing.
# Usage: Benchmarks/download-bench.sh [--sizes "1G 4G"] [--rounds N] [--throttled-size 64M]
#                                     [--rate 4m] [--no-throttled] [--no-rates]
set -euo pipefail
cd "$(dirname "$0")/.."
sizes="1G"
rounds=3
rates=1
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
    --no-rates) rates=0; shift ;;
    *) echo "usage: $0 [--sizes \"1G 4G\"] [--rounds N] [--throttled-size 64M] [--rate 4m] [--no-throttled] [--no-rates]" >&2
      exit 64 ;;
  esac
done
if { [ "$throttled" = 1 ] || [ "$rates" = 1 ]; } && ! command -v aria2c >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  (apt-get install -y -qq aria2 2>/dev/null || (apt-get update -qq && apt-get install -y -qq aria2)) >/dev/null
fi
swift build -c release --product resumedata >/dev/null
swift build -c release --product resumedata-bench >/dev/null
bin="$(swift build -c release --show-bin-path)"
work="$(mktemp -d /var/tmp/resumedata-dlbench.XXXXXX)"
swiftc -O Benchmarks/urlsession-floor/main.swift -o "$work/urlsession-floor"
. scripts/nginx.sh
port=$(free_ports 1)
trap 'stop_nginx "$work"; rm -rf "$work"' EXIT
mkdir -p "$work/www/throttled" "$work/www/r1m" "$work/www/r8m"
engines=(--engine curl --engine urlsession)
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
if [ "$rates" = 1 ]; then
  head -c 16M /dev/urandom > "$work/www/r1m/16M.bin"
  head -c 64M /dev/urandom > "$work/www/r8m/64M.bin"
  chmod 755 "$work/www/r1m" "$work/www/r8m"
  chmod 644 "$work/www/r1m/16M.bin" "$work/www/r8m/64M.bin"
fi
# Written back before anything is timed, so that no download competes with the disk doing it.
sync
start_nginx "$work" "$port" \
  "location /throttled/ { limit_rate $rate; } location /r1m/ { limit_rate 1m; } location /r8m/ { limit_rate 8m; }"
if [ "$rates" = 1 ]; then
  for limited in r1m/16M.bin r8m/64M.bin; do
    echo "# rate-limited: nginx limit_rate ${limited%%/*} per connection, ${limited#*/}"
    "$bin/resumedata-bench" download --url "http://127.0.0.1:$port/$limited" --tool "$bin/resumedata" \
      --aria2 "$(command -v aria2c)" --floor "$work/urlsession-floor" "${engines[@]}" --start-cost \
      --sync-floor --rounds 1 --output-dir "$work/out"
    "$bin/resumedata-bench" download --url "http://127.0.0.1:$port/$limited" --tool "$bin/resumedata" \
      --aria2 "$(command -v aria2c)" --connections 4 "${engines[@]}" --start-cost \
      --rounds 1 --output-dir "$work/out"
  done
fi
if [ "$throttled" = 1 ]; then
  throttled_url="http://127.0.0.1:$port/throttled/$throttled_size.bin"
  echo "# throttled: nginx limit_rate $rate per connection"
  for connections in 4 16; do
    "$bin/resumedata-bench" download --url "$throttled_url" --tool "$bin/resumedata" \
      --aria2 "$(command -v aria2c)" --connections "$connections" "${engines[@]}" --start-cost \
      --rounds 1 --output-dir "$work/out"
  done
fi
echo "# unthrottled"
"$bin/resumedata-bench" download "${urls[@]}" --tool "$bin/resumedata" \
  --floor "$work/urlsession-floor" "${engines[@]}" --start-cost --sync-floor --rounds "$rounds" \
  --output-dir "$work/out"
# Requests per download, from nginx's log: curl and the two floors make one a round; ours (on each
# engine, and without its digest) one each, and one more for every continuation; oursck its
# resume check's probe besides.
for size in $sizes; do
  requests=$(awk -v path="/$size.bin" '$7 == path' "$work/access.log" | wc -l)
  echo "download $size.bin requests over $rounds rounds: curl $rounds, cursyn $rounds, floor $rounds, floorw $rounds, ours, oursus, oursck, oursnd and oursnp $((requests - 4 * rounds)) (fewest without oursck's probe: $((4 * rounds)))"
done
