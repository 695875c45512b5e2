#!/usr/bin/env bash
# `resumedata batch` under real engines (issue 47): Spark local[2] through `rdd.pipe`, a Spark task
# retried (local[2,4], one process made to fail once), and GNU parallel --pipe --keep-order, each
# over one NDJSON file of 200,000 mixed records (every blob kind in Fixtures/, inline and `path`
# records, 10 % bad ones), each compared record for record, by id, with one `resumedata batch`
# process over the same file. Also prints the schema spark.read.json infers for the results and a
# DataFrame query, and the figures: records/s of Spark against `batch --jobs 2`, and the peak RSS
# of the executors' batch processes. Exits non-zero on any difference.
# Installs what it lacks: Java (default-jre-headless), GNU parallel and time from Debian, pyspark
# (pinned) from PyPI into a venv under ~/.cache/resumedata.
# Usage: scripts/spark-integration.sh [path/to/resumedata] [record count]
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
tool="$(realpath "${1:-.build/debug/resumedata}")"
count="${2:-200000}"
partitions=8
pyspark_version=3.5.9   # Spark 3.5 runs on Java 8, 11 and 17
started=$SECONDS
say() { echo "spark-integration: $*"; }
fail() { echo "spark-integration: FAILED: $*" >&2; exit 1; }
[ -x "$tool" ] || fail "no resumedata at $tool"

# What the run needs, installed when missing.
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  # Without fresh package lists the first try fails; the second try's errors are not hidden.
  (apt-get install -y -qq "$@" 2>/dev/null || (apt-get update -qq && apt-get install -y -qq "$@")) >/dev/null
}
missing=()
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
command -v parallel >/dev/null 2>&1 || missing+=(parallel)
[ -x /usr/bin/time ] || missing+=(time)
if [ ${#missing[@]} -gt 0 ]; then say "installing ${missing[*]}"; apt_install "${missing[@]}"; fi
venv="${RESUMEDATA_CACHE:-${HOME:-/root}/.cache/resumedata}/spark-venv"
py="$venv/bin/python"
if ! "$py" -c "import pyspark, sys; sys.exit(pyspark.__version__ != '$pyspark_version')" 2>/dev/null; then
  say "installing pyspark==$pyspark_version into $venv"
  rm -rf "$venv"; mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv" 2>/dev/null || { apt_install python3-venv; python3 -m venv "$venv"; }
  "$py" -m pip install -q --disable-pip-version-check "pyspark==$pyspark_version"
fi

work="$(mktemp -d /tmp/resumedata-spark.XXXXXX)"
# SPARK_INTEGRATION_KEEP=1 keeps the records and results for a look afterwards.
if [ -n "${SPARK_INTEGRATION_KEEP:-}" ]; then trap 'echo "spark-integration: kept $work" >&2' EXIT
else trap 'rm -rf "$work"' EXIT; fi
cat > "$work/log4j2.properties" <<'EOF'
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
EOF
# What each executor runs: the batch process under /usr/bin/time (its peak RSS into LOGDIR, one
# file a process). With MARKER, the first process to create it writes all of its results and then
# exits 3, so that Spark fails that task attempt and runs it again. Spark's pipe gives the process
# an empty environment: every path here is absolute.
cat > "$work/batch-wrapper.sh" <<EOF
#!/bin/sh
# Usage: batch-wrapper.sh LOGDIR [MARKER]
/bin/mkdir -p "\$1"
if [ -n "\${2:-}" ] && /bin/mkdir "\$2" 2>/dev/null; then
  /usr/bin/time -f %M -o "\$1/rss.\$\$" "$tool" batch --jobs 1 --exit-zero --target ios13+
  echo "\$\$" > "\$1/failed-once"
  exit 3
fi
exec /usr/bin/time -f %M -o "\$1/rss.\$\$" "$tool" batch --jobs 1 --exit-zero --target ios13+
EOF
chmod 755 "$work/batch-wrapper.sh"

# The records.
say "$("$py" scripts/make_batch_records.py "$repo/Fixtures" "$work" "$work/records.ndjson" "$count")"
say "records: $(du -m "$work/records.ndjson" | cut -f1) MB"

# The reference: one process over the whole file, two jobs (its results do not depend on --jobs).
t0=$(date +%s.%N)
/usr/bin/time -f %M -o "$work/reference.rss" "$tool" batch --jobs 2 --exit-zero --target ios13+ \
  < "$work/records.ndjson" > "$work/reference.ndjson"
t1=$(date +%s.%N)
ref_s=$("$py" -c "print($t1 - $t0)")
[ "$(wc -l < "$work/reference.ndjson")" -eq "$count" ] || fail "the reference has not $count results"
say "reference: batch --jobs 2, $(printf %.1f "$ref_s") s"

# Spark: local[2], then local[2,4] with one attempt failed. Spark's log (errors only, among them
# the attempt made to fail) goes to a file, shown when the step fails.
spark_t0=$SECONDS
if ! timeout 1800 "$py" scripts/spark_integration.py spark "$work" "$work/records.ndjson" \
  "$work/batch-wrapper.sh" "$partitions" 2> "$work/spark.log"; then
  grep -v '^\s*at ' "$work/spark.log" | tail -n 40 >&2
  fail "the Spark runs"
fi
spark_s=$((SECONDS - spark_t0))
[ -f "$work/rss-retry/failed-once" ] || fail "no task attempt was made to fail"
attempts=$(ls "$work/rss-retry" | grep -c '^rss\.')
spark_parts=$(ls "$work/rss-spark" | grep -c '^rss\.')
[ "$attempts" -eq $((spark_parts + 1)) ] \
  || fail "the retry run started $attempts batch processes, not $((spark_parts + 1))"
say "Spark: one task attempt of $spark_parts exited 3 and was run again ($attempts processes)"
echo "--- the schema spark.read.json infers for the results"; cat "$work/schema.txt"
echo "--- results by generation and finding code (DataFrame query)"; cat "$work/query.txt"

# GNU parallel, the file cut at line ends into 16 MB blocks, two jobs, in input order.
t0=$(date +%s.%N)
timeout 900 parallel --pipe --keep-order --block 16M -j 2 \
  "$tool" batch --target ios13+ --jobs 1 --exit-zero < "$work/records.ndjson" > "$work/parallel.ndjson"
t1=$(date +%s.%N)
par_s=$("$py" -c "print($t1 - $t0)")

# Record for record. First, that a difference is caught at all.
"$py" scripts/spark_integration.py selftest "$work/reference.ndjson" "$work" | sed 's/^/spark-integration: /'
timeout 900 "$py" scripts/spark_integration.py compare "$work/reference.ndjson" \
  "spark=$work/spark-out" "spark-retry=$work/spark-retry-out" "parallel=$work/parallel.ndjson" \
  | sed 's/^/spark-integration: /' || fail "results differ"

# The figures.
read -r pipe_s retry_s startup_s read_s nparts < <("$py" -c "import json; f = json.load(open('$work/spark.json'));
print(f['pipe_s'], f['retry_pipe_s'], f['startup_s'], f['read_json_s'], f['partitions'])")
rss_max=$(for f in "$work"/rss-spark/rss.*; do tail -n 1 "$f"; done | sort -n | tail -n 1)
ref_rss=$(tail -n 1 "$work/reference.rss")
"$py" - "$count" "$ref_s" "$pipe_s" "$retry_s" "$par_s" "$nparts" "$rss_max" "$ref_rss" "$startup_s" "$read_s" \
  "$spark_s" "$((SECONDS - started))" <<'EOF'
import sys
n, ref, spark, retry, par, parts, rss, ref_rss, startup, read, spark_all, total = sys.argv[1:]
n = int(n)
print("spark-integration: all cases passed; %d records: batch --jobs 2 %.0f records/s (%.1f s), "
      "Spark local[2] rdd.pipe over %s partitions %.0f records/s (%.1f s; with a task retried %.1f s), "
      "GNU parallel -j 2 %.0f records/s (%.1f s); peak RSS of an executor's batch process %.1f MiB "
      "(batch --jobs 2 alone %.1f MiB); Spark startup %.1f s, read.json and query %.1f s, Spark part %s s, "
      "whole script %s s"
      % (n, n / float(ref), float(ref), parts, n / float(spark), float(spark), float(retry), n / float(par),
         float(par), int(rss) / 1024, int(ref_rss) / 1024, float(startup), float(read), spark_all, total))
EOF
