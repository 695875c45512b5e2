#!/bin/sh
# Builds the fuzz targets (all, or those named) with libFuzzer and AddressSanitizer.
#
# The flags are spelled this way on purpose. swiftc keeps only the last `-sanitize=` option, and
# `swift build --sanitize=fuzzer --sanitize=address` hands it two (in no fixed order), so one of the
# two silently goes missing. `--sanitize=fuzzer` is still needed so that SwiftPM links libFuzzer's
# `main` instead of the target's own; the `-Xswiftc` option comes last and wins; `-Xcc` instruments
# the C shim around libxml2 as well.
set -eu
cd "$(dirname "$0")"
[ $# -gt 0 ] || set -- FuzzBinaryPlist FuzzXMLPlist FuzzKeyedArchive FuzzResumeData FuzzSegmentMap FuzzBatch
for product in "$@"; do
  swift build -c release --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address \
    -Xcc -fsanitize=address --product "$product"
done
