#!/usr/bin/env bash
# `resumedata probe`, `make` and `download`'s resume check against real nginx on 127.0.0.1 (issue 54):
# one server block per behaviour, each case's findings (codes, in order) and per-client outcomes
# asserted exactly; curl -C - and wget -c run where the probe says what they do.
# Usage: scripts/nginx-probe-cases.sh [path/to/resumedata]
set -euo pipefail
cd "$(dirname "$0")/.."
tool="${1:-.build/debug/resumedata}"

work="$(mktemp -d /tmp/resumedata-nginx-probe.XXXXXX)"
. scripts/nginx.sh
port=$(free_ports 3)
a=$((port + 1)); b=$((port + 2))
trap 'stop_nginx "$work"; rm -rf "$work"' EXIT

mkdir -p "$work/www" "$work/a" "$work/b" "$work/out"
head -c 300000 /dev/urandom > "$work/www/file.bin"
# Two upstreams with the same bytes and different modification times: different ETags.
cp "$work/www/file.bin" "$work/a/file.bin"; touch -d '2026-01-01 00:00:00' "$work/a/file.bin"
cp "$work/www/file.bin" "$work/b/file.bin"; touch -d '2026-02-01 00:00:00' "$work/b/file.bin"
chmod 755 "$work/a" "$work/b"; chmod 644 "$work"/www/file.bin "$work"/a/file.bin "$work"/b/file.bin
signed="http://127.0.0.1:$port/file.bin?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20991231T000000Z&X-Amz-Expires=3600&X-Amz-Signature=5d41402a"
start_nginx "$work" "$port" "
  location /etag-off/ { etag off; alias $work/www/; }
  location /gzip/ { gzip on; gzip_types text/plain application/octet-stream; gzip_min_length 1; alias $work/www/; }
  location /no-ranges/ { max_ranges 0; alias $work/www/; }
  location /rr/ { proxy_pass http://backends/; }
  location = /signed/file.bin { return 302 '$signed'; }
  }
  upstream backends { server 127.0.0.1:$a; server 127.0.0.1:$b; }
  server { listen 127.0.0.1:$a; root $work/a; }
  server { listen 127.0.0.1:$b; root $work/b; "

fail() { echo "nginx-probe-cases: FAILED: $*" >&2; exit 1; }

# The probe's findings and outcomes (apple network-framework resumedata curl wget), one line each.
summary() { # json on stdin
  python3 -c '
import json, sys
report = json.load(sys.stdin)
print(" ".join(f["code"] for f in report["findings"]) or "-")
print(" ".join(v["outcome"] for v in report["verdicts"]))'
}

probe_case() { # name, path, expected findings, expected outcomes, expected exit status
  local out status=0
  out="$("$tool" probe "http://127.0.0.1:$port$2" --json)" || status=$?
  [ "$status" = "$5" ] || fail "$1: exit status $status, not $5"
  local got; got="$(printf '%s' "$out" | summary)"
  local want; want="$(printf '%s\n%s' "$3" "$4")"
  [ "$got" = "$want" ] || fail "$1: got
$got
expected
$want"
  echo "nginx-probe-cases: ok: $1"
}

probe_case "a static file" /file.bin "-" "resumes resumes resumes resumes resumes" 0
probe_case "etag off" /etag-off/file.bin "last-modified-only" \
  "resumes resumes resumes resumes resumes" 0
probe_case "gzip on with gzip_types" /gzip/file.bin "compressed-for-default-encoding" \
  "restarts-from-zero restarts-from-zero resumes resumes resumes" 1
probe_case "max_ranges 0" /no-ranges/file.bin "ranges-ignored" \
  "restarts-from-zero restarts-from-zero restarts-from-zero fails restarts-from-zero" 1
probe_case "two upstreams with different ETags, round robin" /rr/file.bin "validator-unstable" \
  "restarts-from-zero restarts-from-zero restarts-from-zero resumes resumes" 1
probe_case "a 302 to a presigned URL" /signed/file.bin "signed-url" \
  "resumes-until-expiry resumes-until-expiry resumes-until-expiry resumes resumes" 1

# What the probe says curl and wget do, they do: resume from nginx; where ranges are off, curl
# fails (exit 33) and wget starts the file over.
head -c 100000 "$work/www/file.bin" > "$work/out/curl.part"
curl -s -C - -o "$work/out/curl.part" "http://127.0.0.1:$port/file.bin" \
  && cmp -s "$work/out/curl.part" "$work/www/file.bin" || fail "curl -C - did not resume"
head -c 100000 "$work/www/file.bin" > "$work/out/curl2.part"
status=0; curl -s -C - -o "$work/out/curl2.part" "http://127.0.0.1:$port/no-ranges/file.bin" || status=$?
[ "$status" = 33 ] || fail "curl -C - with max_ranges 0 exited $status, not 33"
if command -v wget >/dev/null; then
  head -c 100000 "$work/www/file.bin" > "$work/out/wget.part"
  wget -q -c -O "$work/out/wget.part" "http://127.0.0.1:$port/no-ranges/file.bin" \
    || fail "wget -c with max_ranges 0 failed"
  cmp -s "$work/out/wget.part" "$work/www/file.bin" || fail "wget -c did not start over"
  head -c 100000 "$work/www/file.bin" > "$work/out/wget2.part"
  wget -q -c -O "$work/out/wget2.part" "http://127.0.0.1:$port/file.bin" \
    && cmp -s "$work/out/wget2.part" "$work/www/file.bin" || fail "wget -c did not resume"
fi
echo "nginx-probe-cases: ok: curl and wget do what the verdicts say"

# make: the first 100,000 bytes, checked against the server, made into a blob that resumes.
etag="$(curl -sI "http://127.0.0.1:$port/file.bin" | tr -d '\r' | awk -F': ' 'tolower($1) == "etag" { print $2 }')"
head -c 100000 "$work/www/file.bin" > "$work/out/model.part"
"$tool" make "http://127.0.0.1:$port/file.bin" --partial "$work/out/model.part" --etag "$etag" \
  --for linux -o "$work/out/model.resumedata" >/dev/null || fail "make refused nginx's file"
"$tool" resume "$work/out/model.resumedata" --temp-dir "$work/out" -o "$work/out/model.bin" \
  >/dev/null 2>&1 || fail "resume from make's blob failed"
cmp -s "$work/out/model.bin" "$work/www/file.bin" || fail "make + resume is not the file"
head -c 100000 "$work/www/file.bin" > "$work/out/gz.part"
status=0
"$tool" make "http://127.0.0.1:$port/gzip/file.bin" --partial "$work/out/gz.part" \
  --trust-server-validator --for ios13+ -o "$work/out/gz.resumedata" >/dev/null 2>&1 || status=$?
[ "$status" = 1 ] && [ ! -e "$work/out/gz.resumedata" ] || fail "make did not refuse gzip for ios13+"
echo "nginx-probe-cases: ok: make + resume byte-identical; gzip refused for ios13+"

# download's note, said once at the start.
note="$("$tool" download "http://127.0.0.1:$port/no-ranges/file.bin" -o "$work/out/nr.bin" 2>&1 >/dev/null)"
[ "$note" = "note: if interrupted, this download cannot resume: it restarts from zero: Range was answered 200 OK (ranges-ignored)" ] \
  || fail "download's note: $note"
cmp -s "$work/out/nr.bin" "$work/www/file.bin" || fail "the download with max_ranges 0"
echo "nginx-probe-cases: all cases passed"
