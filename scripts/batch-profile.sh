#!/bin/bash
# Counts the instructions `resumedata batch --jobs 1` spends on one record of a benchmark kind, as
# `resumedata-bench batch` counts them: callgrind on a stripped copy of the release binary (valgrind
# 3.19 cannot read its debug info), over N records less a run with no input.
#
# usage: scripts/batch-profile.sh KIND [N]
#   KIND: 1 keyed v5 untouched, 2 v2 XML untouched, 3 keyed repaired for iOS 10.0-10.1,
#         4 Network.framework converted, 5 v2 XML in the $N layout restored for iOS 13+,
#         mix: the benchmark's mix (1, 2, 5 and 4, for ios13+)
#   N: records (400 unless given)
# Needs `swift build -c release` and valgrind. Prints the count and the path of callgrind's output;
# `callgrind_annotate --inclusive=yes --tree=calling FILE` shows where it goes.
set -euo pipefail
kind=$1
count=${2:-400}
root=$(cd "$(dirname "$0")/.." && pwd)
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
work=$(mktemp -d /tmp/batch-profile-XXXX)
cp "$root/.build/release/resumedata" "$work/resumedata"
strip --strip-debug "$work/resumedata"
"$root/.build/release/resumedata-bench" batch-records "$work/records" "$count" >/dev/null
target=ios13+
[ "$kind" = 3 ] && target=ios10.0-10.1
file="$work/records/kind-$kind.ndjson"
[ "$kind" = mix ] && file="$work/records/mix.ndjson"
: >"$work/empty.ndjson"
# Exit status 1 is a run with bad records (the mix has some): the count is still right.
run() {
  valgrind --tool=callgrind --callgrind-out-file="$work/$1.out" "$work/resumedata" batch \
    --target "$target" --jobs 1 "$2" >/dev/null 2>"$work/$1.err" || true
  grep -o 'refs: *[0-9,]*' "$work/$1.err" | tr -dc 0-9
}
empty=$(run empty "$work/empty.ndjson")
full=$(run full "$file")
echo "kind $kind: $(( (full - empty) / count )) instructions a record ($work/full.out)"
