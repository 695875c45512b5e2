#!/usr/bin/env bash
# Integration against nginx on 127.0.0.1: a plain download, a download killed and continued, a file
# changed between the kill and the continuation (never spliced), a continuation from resume data
# converted to Apple's v2 layout, a download over 4 connections, and one killed and continued; a
# server without ranges (Python's http.server) answering the probe of 4 connections with the whole
# file (kept: one request); a 404 (nothing left behind); and HTTPS with HTTP/2 from a certificate
# authority the script makes with openssl: trusted with --ca-cert, refused without it (nothing left
# behind), over 4 connections, killed and continued.
# The engine is $RESUMEDATA_ENGINE (curl, the default on Linux, or urlsession; CI runs both). URLSession
# on Linux cannot trust a CA of one's own: with it the HTTPS cases check that --ca-cert is refused.
# Downloads whose requests the access log is checked for skip the resume check (its ranged
# requests would count as theirs).
# Usage: scripts/nginx-integration.sh [path/to/resumedata]
set -euo pipefail
cd "$(dirname "$0")/.."
tool="${1:-.build/debug/resumedata}"
export RESUMEDATA_ENGINE="${RESUMEDATA_ENGINE:-curl}"
engine="$RESUMEDATA_ENGINE"
echo "nginx-integration: engine $engine"

work="$(mktemp -d /tmp/resumedata-nginx.XXXXXX)"
. scripts/nginx.sh
port=$(free_ports 3)
tls_port=$((port + 1))
python_port=$((port + 2))
python_pid=""
trap 'stop_nginx "$work"; [ -n "$python_pid" ] && kill "$python_pid" 2>/dev/null; rm -rf "$work"' EXIT

mkdir -p "$work/www/slow" "$work/www/slower" "$work/out"
head -c 8000000 /dev/urandom > "$work/www/file.bin"
head -c 8000000 /dev/urandom > "$work/www/slow/file.bin"
head -c 8000000 /dev/urandom > "$work/www/slower/file.bin"
chmod 755 "$work/www/slow" "$work/www/slower"
chmod 644 "$work/www/file.bin" "$work/www/slow/file.bin" "$work/www/slower/file.bin"
# A certificate authority of our own and a certificate it signs for 127.0.0.1 and localhost.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/ca.key" -out "$work/ca.pem" -days 2 \
  -subj "/CN=resumedata integration CA" -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$work/server.key" -out "$work/server.csr" \
  -subj "/CN=127.0.0.1" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
  > "$work/server.ext"
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial \
  -out "$work/server.pem" -days 2 -extfile "$work/server.ext" 2>/dev/null
start_nginx "$work" "$port" "location /slow/ { limit_rate 2m; } location /slower/ { limit_rate 500k; }" \
  "server { listen 127.0.0.1:$tls_port ssl http2; root $work/www;
    ssl_certificate $work/server.pem; ssl_certificate_key $work/server.key;
    location /slow/ { limit_rate 2m; } location /slower/ { limit_rate 500k; } }"

# Starts a download of /slow/file.bin to OUT with state in STATE, and kills it (SIGKILL) mid-way
# (BASE: the server, plain http by default; more options after it).
start_and_kill() { # out, state, [base, options...]
  local out="$1" state="$2" base="${3:-http://127.0.0.1:$port}"
  shift 2; [ $# -gt 0 ] && shift
  "$tool" download "$base/slow/file.bin" -o "$out" --state-dir "$state" --no-resume-check "$@" \
    2>/dev/null &
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

# 7. A server that ignores ranges (Python's http.server) asked for 4 connections: its 200 to the
# probe is the file, kept as it streams: one request, never two.
python3 -m http.server "$python_port" --bind 127.0.0.1 --directory "$work/www" \
  >/dev/null 2>"$work/python.log" &
python_pid=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$python_port/" && break; sleep 0.1; done
"$tool" download "http://127.0.0.1:$python_port/file.bin" -o "$work/out/noranges.bin" \
  --connections 4 --state-dir "$work/state7" --no-resume-check 2>"$work/noranges.err" >/dev/null
check "no ranges, 4 connections asked: the probe's 200 kept" "$work/www/file.bin" "$work/out/noranges.bin"
gets=$(grep -c '"GET /file.bin' "$work/python.log" || true)
[ "$gets" = 1 ] || { echo "nginx-integration: $gets GETs of the file, not 1" >&2; exit 1; }
grep -q "its answer is kept" "$work/noranges.err" \
  || { echo "nginx-integration: no note that the 200 was kept" >&2; exit 1; }

# 8. A 404 before the first byte leaves nothing behind: no partial file, no resume data.
mkdir -p "$work/state8"
if "$tool" download "http://127.0.0.1:$port/missing.bin" -o "$work/out/missing.bin" \
  --state-dir "$work/state8" >/dev/null 2>&1; then
  echo "nginx-integration: a 404 succeeded" >&2; exit 1
fi
[ -z "$(ls -A "$work/state8")" ] \
  || { echo "nginx-integration: a 404 left $(ls "$work/state8")" >&2; exit 1; }
echo "nginx-integration: ok: a 404 leaves nothing behind"

# 9. HTTPS over HTTP/2 from a certificate authority of our own.
https="https://127.0.0.1:$tls_port"
if [ "$engine" = urlsession ]; then
  # FoundationNetworking has no way to trust it: refused as a usage error, before any request.
  status=0
  "$tool" download "$https/file.bin" -o "$work/out/tls.bin" --ca-cert "$work/ca.pem" \
    >/dev/null 2>&1 || status=$?
  [ "$status" = 64 ] || { echo "nginx-integration: --ca-cert with urlsession gave $status, not 64" >&2; exit 1; }
  echo "nginx-integration: ok: --ca-cert refused with urlsession on Linux (exit 64)"
else
  "$tool" download "$https/file.bin" -o "$work/out/tls.bin" --ca-cert "$work/ca.pem" \
    --state-dir "$work/state9" >/dev/null 2>&1
  check "https with --ca-cert" "$work/www/file.bin" "$work/out/tls.bin"
  grep -q '"GET /file.bin HTTP/2.0" 200' "$work/access.log" \
    || { echo "nginx-integration: the https download did not speak HTTP/2" >&2; exit 1; }
  # Without it the server is not trusted: a failure before the first byte, nothing left behind.
  mkdir -p "$work/state10"
  if "$tool" download "$https/file.bin" -o "$work/out/untrusted.bin" --state-dir "$work/state10" \
    >/dev/null 2>"$work/untrusted.err"; then
    echo "nginx-integration: an untrusted server was trusted" >&2; exit 1
  fi
  [ -z "$(ls -A "$work/state10")" ] \
    || { echo "nginx-integration: an untrusted server left $(ls "$work/state10")" >&2; exit 1; }
  # Not retried: a certificate does not become trusted by asking again.
  grep -q "^Error: untrusted-server: " "$work/untrusted.err" \
    || { echo "nginx-integration: not an untrusted-server failure: $(cat "$work/untrusted.err")" >&2; exit 1; }
  echo "nginx-integration: ok: without --ca-cert refused ($(head -c 120 "$work/untrusted.err"))"
  # Over 4 connections (2 MB/s each, so that all four are open at once): every segment on a TCP
  # connection of its own, not streams of one.
  before=$(wc -l < "$work/access.log")
  "$tool" download "$https/slow/file.bin" -o "$work/out/tls4.bin" --ca-cert "$work/ca.pem" \
    --connections 4 --state-dir "$work/state11" --no-resume-check >/dev/null 2>&1
  check "https over HTTP/2, 4 connections" "$work/www/slow/file.bin" "$work/out/tls4.bin"
  connections=$(tail -n +"$((before + 1))" "$work/access.log" \
    | awk '$7 == "/slow/file.bin" && $9 == 206 { print $NF }' | sort -u | wc -l)
  [ "$connections" -ge 4 ] \
    || { echo "nginx-integration: 4 segments over $connections connections" >&2; exit 1; }
  # Killed over HTTPS, continued.
  start_and_kill "$work/out/tlskilled.bin" "$work/state12" "$https" --ca-cert "$work/ca.pem"
  "$tool" download "$https/slow/file.bin" -o "$work/out/tlskilled.bin" --state-dir "$work/state12" \
    --ca-cert "$work/ca.pem" >/dev/null 2>&1
  check "https killed and continued" "$work/www/slow/file.bin" "$work/out/tlskilled.bin"
fi
echo "nginx-integration: all cases passed ($engine)"
# probe, make and download's resume check against nginx (etag off, gzip, max_ranges 0, two
# upstreams round robin, a 302 to a presigned URL): a script of their own, on nginx of their own.
# The probe speaks URLSession whatever the engine: run once, with the default one.
if [ "$engine" = curl ]; then scripts/nginx-probe-cases.sh "$tool"; fi
