#!/usr/bin/env bash
# Integration against nginx on 127.0.0.1: a plain download, a download killed and continued, a file
# changed between the kill and the continuation (never spliced), a continuation from resume data
# converted to Apple's v2 layout, a download over 4 connections, and one killed and continued.
# Downloads whose requests the access log is checked for skip the resume check (its ranged
# requests would count as theirs).
# Usage: scripts/nginx-integration.sh [path/to/resumedata]
set -euo pipefail
cd "$(dirname "$0")/.."
tool="${1:-.build/debug/resumedata}"

work="$(mktemp -d /tmp/resumedata-nginx.XXXXXX)"
port=$((20000 + RANDOM % 20000))
. scripts/nginx.sh
trap 'stop_nginx "$work"; rm -rf "$work"' EXIT

mkdir -p "$work/www/slow" "$work/www/slower" "$work/out"
head -c 8000000 /dev/urandom > "$work/www/file.bin"
head -c 8000000 /dev/urandom > "$work/www/slow/file.bin"
head -c 8000000 /dev/urandom > "$work/www/slower/file.bin"
chmod 755 "$work/www/slow" "$work/www/slower"
chmod 644 "$work/www/file.bin" "$work/www/slow/file.bin" "$work/www/slower/file.bin"
start_nginx "$work" "$port" "location /slow/ { limit_rate 2m; } location /slower/ { limit_rate 500k; }"

# Starts a download of /slow/file.bin to OUT with state in STATE, and kills it (SIGKILL) mid-way.
start_and_kill() { # out, state
  "$tool" download "http://127.0.0.1:$port/slow/file.bin" -o "$1" --state-dir "$2" \
    --no-resume-check 2>/dev/null &
  local pid=$!
  sleep 1.5
  kill -9 "$pid"; wait "$pid" 2>/dev/null || true
}

check() { # name, expected file, actual file
  if cmp -s "$2" "$3"; then echo "nginx-integration: ok: $1"; else
    echo "nginx-integration: FAILED: $1" >&2; exit 1; fi
}

# 1. A plain download.
"$tool" download "http://127.0.0.1:$port/file.bin" -o "$work/out/plain.bin" >/dev/null
check "download" "$work/www/file.bin" "$work/out/plain.bin"

# 2. Killed mid-way, then continued from the persisted state.
start_and_kill "$work/out/killed.bin" "$work/state1"
[ -f "$work/state1/killed.bin.resumedata" ] || { echo "nginx-integration: no state after kill" >&2; exit 1; }
"$tool" download "http://127.0.0.1:$port/slow/file.bin" -o "$work/out/killed.bin" \
  --state-dir "$work/state1" >/dev/null 2>&1
check "killed and continued" "$work/www/slow/file.bin" "$work/out/killed.bin"
grep -q '"GET /slow/file.bin HTTP/1.1" 206' "$work/access.log" \
  || { echo "nginx-integration: the continuation was not a 206" >&2; exit 1; }

# 3. The file changes (same size, new ETag) between the kill and the continuation.
start_and_kill "$work/out/changed.bin" "$work/state2"
sleep 1  # a new second, so that nginx's ETag (mtime-size) changes
head -c 8000000 /dev/urandom > "$work/www/slow/new.bin"
chmod 644 "$work/www/slow/new.bin"
mv "$work/www/slow/new.bin" "$work/www/slow/file.bin"
"$tool" download "http://127.0.0.1:$port/slow/file.bin" -o "$work/out/changed.bin" \
  --state-dir "$work/state2" >/dev/null 2>&1
check "changed file started over, not spliced" "$work/www/slow/file.bin" "$work/out/changed.bin"

# 4. Killed, its resume data converted to Apple's v2 layout, continued with `resume`.
start_and_kill "$work/out/apple.bin" "$work/state3"
"$tool" convert "$work/state3/apple.bin.resumedata" --to v2 -o "$work/apple-v2.plist" >/dev/null
"$tool" resume "$work/apple-v2.plist" --temp-dir "$work/state3" -o "$work/out/apple.bin" \
  --state-dir "$work/state4" >/dev/null 2>&1
check "continued from v2 resume data" "$work/www/slow/file.bin" "$work/out/apple.bin"
# 5. Over 4 connections: one probe, then segments, every answer a 206.
"$tool" download "http://127.0.0.1:$port/file.bin" -o "$work/out/segmented.bin" \
  --connections 4 --state-dir "$work/state5" --no-resume-check >/dev/null 2>&1
check "download over 4 connections" "$work/www/file.bin" "$work/out/segmented.bin"
segments=$(awk '$7 == "/file.bin" && $9 == 206' "$work/access.log" | wc -l)
[ "$segments" -ge 4 ] || { echo "nginx-integration: $segments ranged requests, not 4 or more" >&2; exit 1; }

# 6. Over 4 connections (500 KB/s each), killed mid-way, then continued from the persisted map.
"$tool" download "http://127.0.0.1:$port/slower/file.bin" -o "$work/out/segkilled.bin" \
  --connections 4 --state-dir "$work/state6" 2>/dev/null &
pid=$!
sleep 2.5
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
grep -q ResumeDataKitSegments "$work/state6/segkilled.bin.resumedata" \
  || { echo "nginx-integration: no segment map after the kill" >&2; exit 1; }
before=$(awk '$7 == "/slower/file.bin"' "$work/access.log" | wc -l)
"$tool" download "http://127.0.0.1:$port/slower/file.bin" -o "$work/out/segkilled.bin" \
  --connections 4 --state-dir "$work/state6" >/dev/null 2>&1
check "over 4 connections, killed and continued" "$work/www/slower/file.bin" "$work/out/segkilled.bin"
# The continuation asked only for ranges (206), none for the whole file.
awk -v skip="$before" '$7 == "/slower/file.bin" { n++; if (n > skip && $9 != 206) bad++ } END { exit bad > 0 }' \
  "$work/access.log" || { echo "nginx-integration: the continuation was not all 206" >&2; exit 1; }
echo "nginx-integration: all cases passed"
# probe, make and download's resume check against nginx (etag off, gzip, max_ranges 0, two
# upstreams round robin, a 302 to a presigned URL): a script of their own, on nginx of their own.
scripts/nginx-probe-cases.sh "$tool"
