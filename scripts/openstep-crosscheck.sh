#!/bin/sh
# Reads OpenStep files with our reader and with fontTools' openstep_plist (a Cython port of
# CoreFoundation's parser, pinned, from PyPI into a venv under ~/.cache/resumedata), and lists
# where they differ. Usage: scripts/openstep-crosscheck.sh [FILE|DIR...]; without arguments, the
# peer suites' OpenStep files, the OpenStep fixtures and Fuzz/corpus-openstep when it is there.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
peers=${PEER_SUITES:-"$root/../shared/peer-suites"}
version=0.5.2
venv="${RESUMEDATA_CACHE:-${HOME:-/root}/.cache/resumedata}/openstep-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import openstep_plist" 2>/dev/null; then
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "openstep-plist==$version"
fi
(cd "$root" && swift build --product resumedata >/dev/null)
if [ $# -eq 0 ]; then
  set -- "$peers"/libplist/test/data/*.ostep "$peers"/libplist/test/data/test.strings \
    "$peers"/rust-plist/tests/data/ascii-*.plist "$peers"/rust-plist/tests/data/netnewswire.pbxproj \
    "$peers"/libplist/fuzz/oplist-crashes "$peers"/libplist/fuzz/oplist-leaks \
    "$peers"/swift-foundation/Tests/FoundationEssentialsTests/Resources/test_oldStylePlist_getSlashedChars_octal.plist \
    "$root"/Fixtures/plist/animals.strings "$root"/Fixtures/captured/v2.nslog.txt
  if [ -d "$root/Fuzz/corpus-openstep" ]; then set -- "$@" "$root/Fuzz/corpus-openstep"; fi
fi
exec "$venv/bin/python" "$root/scripts/openstep_crosscheck.py" "$root/.build/debug/resumedata" "$@"
