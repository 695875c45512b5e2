#!/bin/sh
# Fills corpus-binary/ and corpus-xml/ (both gitignored) with seed inputs for the fuzz targets:
# every file under the repository's Fixtures/ and the shared peer suites that starts like a binary
# plist ("bplist") or an XML plist ("<?xml" or "<plist", after an optional UTF-8 byte-order mark).
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
