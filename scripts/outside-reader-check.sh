#!/usr/bin/env bash
# Reads everything `resumedata` writes with readers this project did not write (issue 53): every
# blob in Fixtures/resume and Fixtures/repair through every `repair --target`, every
# `convert --to` with each `--format`, and an `edit`; each output read by Python's plistlib and
# bpylist2 (pinned, from PyPI, in a venv under ~/.cache/resumedata) following only the format
# notes, and compared with `resumedata inspect --json` and with the input
# (scripts/outside_reader_check.py says what is checked). Prints `N passed, M failed`; exits
# non-zero on any failure.
# Usage: scripts/outside-reader-check.sh [path/to/resumedata] [--verbose] [--keep DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
tool="$(realpath "${1:-.build/debug/resumedata}")"
shift || true
say() { echo "outside-reader-check: $*"; }
[ -x "$tool" ] || { say "FAILED: no resumedata at $tool" >&2; exit 1; }
# bpylist2 4.1.1 reads an archive only under `$top.root`, as Apple's secure decoders do;
# nska-deserialize 1.5.1 (any key) is installed beside it for looking at outputs by hand.
requirements="bpylist2==4.1.1 nska-deserialize==1.5.1"
venv="${RESUMEDATA_CACHE:-${HOME:-/root}/.cache/resumedata}/outside-reader-venv"
py="$venv/bin/python"
if ! "$py" -c "import bpylist2, nska_deserialize" 2>/dev/null \
  || [ "$(cat "$venv/requirements" 2>/dev/null)" != "$requirements" ]; then
  say "installing $requirements into $venv"
  rm -rf "$venv"; mkdir -p "$(dirname "$venv")"
  if ! python3 -m venv "$venv" 2>/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    (apt-get install -y -qq python3-venv 2>/dev/null \
      || (apt-get update -qq && apt-get install -y -qq python3-venv)) >/dev/null
    python3 -m venv "$venv"
  fi
  # shellcheck disable=SC2086
  "$py" -m pip install -q --disable-pip-version-check $requirements
  echo "$requirements" >"$venv/requirements"
fi
exec "$py" scripts/outside_reader_check.py --tool "$tool" --fixtures Fixtures "$@"
