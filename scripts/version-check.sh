#!/usr/bin/env bash
# The version the built tool prints, against the tags of the commit being built.
#
# - `resumedata --version` prints `resumedata VERSION`, VERSION being MAJOR.MINOR.PATCH, with
#   `-dev` between releases (Sources/ResumeDataCLI/Version.swift, the one place it is written).
# - A tag of this commit that looks like a version (digits and dots, `v` before them or not) must
#   be VERSION exactly: no `v`, and never a `-dev` build. SwiftPM resolves dependents by these
#   tags, so a tag that disagrees would hand them a tool that names another version.
#
# Usage: scripts/version-check.sh [path/to/resumedata]   (default .build/debug/resumedata)
set -euo pipefail
cd "$(dirname "$0")/.."
tool=${1:-.build/debug/resumedata}

printed=$("$tool" --version)
version=${printed#resumedata }
if [[ "$printed" != "resumedata $version" ]] ||
  ! [[ "$version" =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-dev)?$ ]]; then
  echo "version-check.sh: '$tool --version' printed '$printed', not 'resumedata MAJOR.MINOR.PATCH[-dev]'" >&2
  exit 1
fi

if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "version-check.sh: $version (not a git checkout: no tags to compare)"
  exit 0
fi
status=0
tags=0
while IFS= read -r tag; do
  [[ "$tag" =~ ^v?[0-9]+(\.[0-9]+)*([-+].*)?$ ]] || continue
  tags=$((tags + 1))
  if [[ "$version" == *-dev ]]; then
    echo "version-check.sh: this commit is tagged '$tag' but is a -dev build ('$version'): a release drops -dev first (docs/releasing.md)" >&2
    status=1
  elif [[ "$tag" != "$version" ]]; then
    echo "version-check.sh: this commit is tagged '$tag' but the tool says '$version' (Sources/ResumeDataCLI/Version.swift; docs/releasing.md)" >&2
    status=1
  fi
done < <(git tag --points-at HEAD)
if [[ $status -eq 0 ]]; then
  if [[ $tags -eq 0 ]]; then
    echo "version-check.sh: $version (no version tag on this commit)"
  else
    echo "version-check.sh: $version, as this commit's tag says"
  fi
fi
exit $status
