#!/usr/bin/env bash
# The peers benchmark: ours beside libplist (Debian's libplist-dev 2.2, installed when missing) and
# Python's plistlib (the interpreter's standard library, nothing installed), on the same bytes in
# one run. Builds the release products, compiles Benchmarks/peers/plist-peer.c against libplist,
# prints the machine and the versions, then runs `resumedata-bench peers`, which prints a line per
# measurement and peer: ours, the peer, the ratio (see `resumedata-bench peers --help`).
#   plist: the four inputs of `resumedata-bench plist` (small-4KB, large-10MB; binary, XML),
#          decoded and encoded by ours, libplist and plistlib; instructions on small-4KB.
#   batch: `resumedata batch --target ios13+ --jobs 1` and Benchmarks/peers/plistlib_pipeline.py
#          on the same NDJSON files (healthy keyed v5 and v2 XML blobs); records/s, CPU, peak
#          RSS, instructions per record.
# Instructions are counted by callgrind when valgrind is installed (Debian's valgrind 3.19 here); without
# it, wall and CPU time only.
# Usage: Benchmarks/peers-bench.sh [--python PATH] [any option of `resumedata-bench peers`]
set -euo pipefail
cd "$(dirname "$0")/.."
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3)
arguments=()
while [ $# -gt 0 ]; do
  case "$1" in
    --python) python="$2"; shift 2 ;;
    --libplist) echo "peers-bench.sh compiles the libplist peer itself" >&2; exit 64 ;;
    *) arguments+=("$1"); shift ;;
  esac
done
if ! pkg-config --exists libplist-2.0 2>/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  # Without fresh package lists the first try fails: that failure is expected and silent.
  (apt-get install -y -qq libplist-dev 2>/dev/null || (apt-get update -qq && apt-get install -y -qq libplist-dev)) >/dev/null
fi
swift build -c release --product resumedata >/dev/null
swift build -c release --product resumedata-bench >/dev/null
bin="$(swift build -c release --show-bin-path)"
work="$(mktemp -d /tmp/resumedata-peers.XXXXXX)"
trap 'rm -rf "$work"' EXIT
gcc -O2 -Wall -Wextra -Werror -o "$work/plist-peer" Benchmarks/peers/plist-peer.c \
  $(pkg-config --cflags --libs libplist-2.0) -lm
# The interpreter itself, not a launcher script (callgrind would count the launcher).
python=$("$python" -c 'import sys; print(sys.executable)')
cpu() { sed -n "s/^$1[[:space:]]*: //p" /proc/cpuinfo | head -1; }
echo "# machine: $(cpu 'model name') (family $(cpu 'cpu family'), model $(cpu model)), $(nproc) cores," \
  "$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -sr)"
echo "# versions: libplist $(pkg-config --modversion libplist-2.0) (Debian $(dpkg-query -W -f '${Version}' libplist-dev 2>/dev/null || echo '?')," \
  "gcc -O2), $("$python" -c 'import platform; print(platform.python_implementation(), platform.python_version())')" \
  "($python), $(swift --version 2>&1 | head -1 | sed 's/ (.*//'), valgrind $(valgrind --version 2>/dev/null | sed 's/valgrind-//' || echo 'not installed')"
echo "# commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Benchmarks 2>/dev/null || echo ' (with local changes)')"
"$bin/resumedata-bench" peers --libplist "$work/plist-peer" --python "$python" \
  --peers-dir "$PWD/Benchmarks/peers" --tool "$bin/resumedata" ${arguments[@]+"${arguments[@]}"}
