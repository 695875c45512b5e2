#!/bin/bash
# Builds, as an app would, a package that depends on the ResumeData product alone
# (scripts/core-only/Sources: `inspect-one` prints what a blob is), in release; runs it on a fixture;
# and fails if its executable links any of Foundation's libraries beyond FoundationEssentials:
# libFoundation, libFoundationNetworking, libFoundationInternationalization, lib_FoundationICU.
# `inspect-one-foundation` is the same program with Foundation imported too; with --measure, the
# script prints both executables' sizes, the instructions of one run (callgrind, stripped copies)
# and their peak RSS.
#
# usage: scripts/core-only-check.sh [--measure]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${CORE_ONLY_DIR:-/tmp/resumedata-core-only}
mkdir -p "$work"
rm -rf "$work/Sources"
cp -R "$root/scripts/core-only/Sources" "$work/Sources"
# A path dependency's identity is its directory's name, whatever the checkout is called.
cat >"$work/Package.swift" <<MANIFEST
// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "CoreOnly",
  dependencies: [.package(path: "$root")],
  targets: [
    .target(
      name: "InspectOne",
      dependencies: [.product(name: "ResumeData", package: "$(basename "$root")")]),
    .executableTarget(name: "inspect-one", dependencies: ["InspectOne"]),
    .executableTarget(name: "inspect-one-foundation", dependencies: ["InspectOne"]),
  ]
)
MANIFEST
swift build -c release --package-path "$work" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
bin="$work/.build/release"
fixture="$root/Fixtures/resume/keyed-v5-response.archive"
"$bin/inspect-one" "$fixture" | tee "$work/output.txt"
grep -q '^generation: keyed$' "$work/output.txt" || { echo "core-only-check: the fixture did not decode" >&2; exit 1; }
needed=$(readelf -d "$bin/inspect-one" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "NEEDED: $(echo $needed)"
if echo "$needed" | grep -E '^(libFoundation|libFoundationNetworking|libFoundationInternationalization|lib_FoundationICU)\.so'; then
  echo "core-only-check: a program using only ResumeData links the whole of Foundation" >&2
  exit 1
fi
echo "core-only-check: inspect-one links none of Foundation's libraries beyond FoundationEssentials"
[ "${1:-}" = --measure ] || exit 0
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
for program in inspect-one inspect-one-foundation; do
  cp "$bin/$program" "$work/$program.stripped"
  strip --strip-debug "$work/$program.stripped"
  size=$(stat -c %s "$bin/$program")
  instructions=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$work/$program.stripped" \
    "$fixture" 2>&1 >/dev/null | grep -o 'refs: *[0-9,]*' | tr -dc 0-9)
  rss=$(/usr/bin/time -f %M "$bin/$program" "$fixture" 2>&1 >/dev/null | tail -1)
  libraries=$(ldd "$bin/$program" | wc -l)
  echo "$program: $size bytes, $instructions instructions a run, $rss KiB peak RSS, $libraries shared libraries loaded"
done
