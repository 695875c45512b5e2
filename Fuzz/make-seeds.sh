#!/bin/sh
# Fills corpus-binary/ and corpus-xml/ (both gitignored) with seed inputs for the fuzz targets:
# every file under the repository's Fixtures/ and the shared peer suites that starts like a binary
# plist ("bplist") or an XML plist ("<?xml" or "<plist", after an optional UTF-8 byte-order mark);
# corpus-archive/ with the keyed archives among them, and corpus-segments/ with segment maps (see
# the end of the script).
# Seeds are named by content hash, so running this again adds nothing twice and keeps whatever
# the fuzzer has added. Usage: ./make-seeds.sh [extra directories to scan...]
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
peers=${PEER_SUITES:-"$root/../shared/peer-suites"}
mkdir -p "$here/corpus-binary" "$here/corpus-xml"

list=$(mktemp)
trap 'rm -f "$list"' EXIT
bom=$(printf '\357\273\277')
binary=0
xml=0
for dir in "$root/Fixtures" "$peers" "$@"; do
  [ -d "$dir" ] || { echo "make-seeds: skipping $dir (absent)" >&2; continue; }
  find "$dir" -type f -size -4M >"$list"
  while IFS= read -r file; do
    head=$(head -c 8 "$file" | tr -d '\000')
    case "$head" in
      bplist*) target=corpus-binary ;;
      "<?xml"* | "<plist"* | "$bom<?xml"* | "$bom<plist"*) target=corpus-xml ;;
      *) continue ;;
    esac
    name=$(sha1sum "$file" | cut -c1-40)
    if [ ! -e "$here/$target/$name" ]; then
      cp "$file" "$here/$target/$name"
      if [ "$target" = corpus-binary ]; then binary=$((binary + 1)); else xml=$((xml + 1)); fi
    fi
  done <"$list"
done
echo "make-seeds: added $binary binary and $xml XML seeds" \
  "($(ls "$here/corpus-binary" | wc -l) and $(ls "$here/corpus-xml" | wc -l) in total)"

# corpus-archive/ (for FuzzKeyedArchive): every keyed archive, binary or XML, under
# Fixtures/archive, and Apple's archives from swift-corelibs-foundation's test resources (the
# *.archive fixtures and NSKeyedUnarchiver-*.plist).
mkdir -p "$here/corpus-archive"
archives=0
resources="$peers/swift-corelibs-foundation/Tests/Foundation/Resources"
{
  if [ -d "$root/Fixtures/archive" ]; then find "$root/Fixtures/archive" -type f -size -4M; fi
  if [ -d "$resources" ]; then
    find "$resources" -type f \( -name '*.archive' -o -name 'NSKeyedUnarchiver-*.plist' \)
  else
    echo "make-seeds: skipping $resources (absent)" >&2
  fi
} >"$list"
while IFS= read -r file; do
  head=$(head -c 8 "$file" | tr -d '\000')
  case "$head" in
    bplist* | "<?xml"* | "<plist"* | "$bom<?xml"* | "$bom<plist"*) ;;
    *) continue ;; # the generator scripts beside the fixtures
  esac
  name=$(sha1sum "$file" | cut -c1-40)
  if [ ! -e "$here/corpus-archive/$name" ]; then
    cp "$file" "$here/corpus-archive/$name"
    archives=$((archives + 1))
  fi
done <"$list"
echo "make-seeds: added $archives keyed-archive seeds ($(ls "$here/corpus-archive" | wc -l) in total)"

# corpus-resume/ (for FuzzResumeData): every resume blob under Fixtures/resume, plus the plists of
# Fixtures/plist (resume-shaped dictionaries among them).
mkdir -p "$here/corpus-resume"
resume=0
for file in "$root"/Fixtures/resume/* "$root"/Fixtures/plist/*.plist; do
  [ -f "$file" ] || continue
  name=$(sha1sum "$file" | cut -c1-40)
  if [ ! -e "$here/corpus-resume/$name" ]; then
    cp "$file" "$here/corpus-resume/$name"
    resume=$((resume + 1))
  fi
done
echo "make-seeds: added $resume resume-data seeds ($(ls "$here/corpus-resume" | wc -l) in total)"

# corpus-batch/ (for FuzzBatch): a first byte choosing the mode, then NDJSON records of every resume
# fixture (inline base64), a path record, and lines that are not records.
mkdir -p "$here/corpus-batch"
batch=0
mode=0
for file in "$root"/Fixtures/resume/*; do
  [ -f "$file" ] || continue
  seed=$(mktemp)
  {
    printf '%s' "$(printf "\\$(printf '%03o' $((48 + mode % 4)))")"
    printf '{"id":"%s","blob":"%s"}\n' "$(basename "$file")" "$(base64 -w0 "$file")"
    printf '{"id":[1,{"a":null}],"path":"%s"}\n' "$file"
    printf 'not a record\n{"id":1e5}\n'
  } >"$seed"
  name=$(sha1sum "$seed" | cut -c1-40)
  if [ ! -e "$here/corpus-batch/$name" ]; then
    mv "$seed" "$here/corpus-batch/$name"
    batch=$((batch + 1))
  else
    rm -f "$seed"
  fi
  mode=$((mode + 1))
done
echo "make-seeds: added $batch batch seeds ($(ls "$here/corpus-batch" | wc -l) in total)"

# corpus-segments/: segment maps as the downloader writes them (ResumeDataKitSegments).
mkdir -p "$here/corpus-segments"
for map in 'bytes=/100' 'bytes=0-9/100' 'bytes=0-1048575,2097152-3145727/4194304' \
  'bytes=0-199999,750000-949999,1500000-1699999,2250000-2449999/3000000'; do
  printf '%s' "$map" >"$here/corpus-segments/$(printf '%s' "$map" | sha1sum | cut -c1-40)"
done

# corpus-probe/ (for FuzzProbe): answers a probe meets, written the way the harness reads them (the
# URL the redirects end at, then `KIND STATUS|Name: value|...` a line).
mkdir -p "$here/corpus-probe"
printf '%s\n' 'http://127.0.0.1/f' '0 200|ETag: "v1"|Content-Length: 300' \
  '3 206|Content-Range: bytes 100-199/300|ETag: "v1"' '4 206|Content-Range: bytes 100-199/300' \
  '5 200|ETag: "v1"' '6 200|Content-Encoding: gzip|ETag: W/"v1"' '7 200|ETag: W/"v1"' \
  >"$here/corpus-probe/strong-etag-gzip"
printf '%s\n' \
  'https://b.s3.amazonaws.com/k?X-Amz-Date=20261207T120000Z&X-Amz-Expires=3600&X-Amz-Signature=ab' \
  '0 200|Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT' '3 416|Content-Range: bytes */300' \
  >"$here/corpus-probe/signed-416"
printf '%s\n' 'https://a.blob.core.windows.net/c/k?se=2026-12-08T01:02Z&sig=ab' '0 404' \
  >"$here/corpus-probe/azure-404"
echo "make-seeds: wrote 3 probe seeds"

# corpus-openstep/ (for FuzzOpenStep): the peer suites' OpenStep files and libplist's oplist
# finds, swift-foundation's octal test, and the OpenStep fixtures.
mkdir -p "$here/corpus-openstep"
openstep=0
for file in "$peers"/libplist/test/data/*.ostep "$peers"/libplist/test/data/test.strings \
  "$peers"/rust-plist/tests/data/ascii-*.plist "$peers"/libplist/fuzz/oplist-*/* \
  "$peers"/swift-foundation/Tests/FoundationEssentialsTests/Resources/test_oldStylePlist_*.plist \
  "$root"/Fixtures/plist/animals.strings "$root"/Fixtures/captured/*.txt; do
  [ -f "$file" ] || continue
  name=$(sha1sum "$file" | cut -c1-40)
  if [ ! -e "$here/corpus-openstep/$name" ]; then
    cp "$file" "$here/corpus-openstep/$name"
    openstep=$((openstep + 1))
  fi
done
echo "make-seeds: added $openstep OpenStep seeds ($(ls "$here/corpus-openstep" | wc -l) in total)"

# corpus-captured/ (for FuzzCapturedForms): blobs in their text forms and the documents that
# hold them.
mkdir -p "$here/corpus-captured"
captured=0
for file in "$root"/Fixtures/captured/* "$root"/Fixtures/containers/*.json \
  "$root"/Fixtures/containers/*.plist; do
  [ -f "$file" ] || continue
  case "$file" in *.py) continue ;; esac
  name=$(sha1sum "$file" | cut -c1-40)
  if [ ! -e "$here/corpus-captured/$name" ]; then
    cp "$file" "$here/corpus-captured/$name"
    captured=$((captured + 1))
  fi
done
echo "make-seeds: added $captured captured-form seeds ($(ls "$here/corpus-captured" | wc -l) in total)"
