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
[ $# -gt 0 ] || set -- FuzzBinaryPlist FuzzXMLPlist FuzzKeyedArchive FuzzResumeData FuzzSegmentMap FuzzBatch \
  FuzzProbe FuzzOpenStep FuzzCapturedForms
# SwiftPM keeps the plan of a build here, and reuses it without noticing source files added to the
# package it depends on by path (the library itself): a new file's symbols are then missing, or
# worse, an old build of the harness runs. Planned afresh every time: it takes a few seconds.
rm -f .build/*/release/description.json
for product in "$@"; do
  swift build -c release --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address \
    -Xcc -fsanitize=address --product "$product"
done
