#!/usr/bin/env bash
# Builds the API documentation as a static site with the toolchain's docc: one archive per library
# module (PropertyList, KeyedArchive, ResumeData, Downloader), from the symbol graphs of the
# package's build and each module's catalog (Sources/<Module>/<Module>.docc), merged into one
# site under a shared landing page. Any docc warning fails the run (--warnings-as-errors where the
# toolchain's docc has it; a `warning:` line in its output either way).
#
# Usage: scripts/docc.sh [--output DIR] [--hosting-base-path PATH]
#   --output DIR              where the site goes (default .build/docs/site), replaced when it
#                             is empty or a site this script made
#   --hosting-base-path PATH  the path the site is served under, e.g. `resumedata` for
#                             https://OWNER.github.io/resumedata/ (default resumedata; '' for /)
#
# The pages are then at DIR/documentation/<module>/ (served as /PATH/documentation/<module>/),
# and DIR/index.html sends a visitor to the landing page. scripts/docc-browser-check.sh serves
# the site on 127.0.0.1 and checks that pages render.
set -euo pipefail
repository=$(cd "$(dirname "$0")/.." && pwd)

output=.build/docs/site
base_path=resumedata
while [[ $# -gt 0 ]]; do
  case "$1" in
    --output) output=${2:?--output needs a directory}; output_given=1; shift 2 ;;
    --hosting-base-path) base_path=${2?--hosting-base-path needs a path}; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "docc.sh: unknown argument '$1' (see --help)" >&2; exit 64 ;;
  esac
done
# A path given is from the caller's directory; the default is in the repository.
[[ -z "${output_given:-}" || "$output" == /* ]] || output="$PWD/$output"
cd "$repository"

# In the order they depend on each other.
modules=(PropertyList KeyedArchive ResumeData Downloader)

docc=$(command -v docc || true)
if [[ -z "$docc" ]]; then
  docc=$(dirname "$(command -v swift)")/docc
fi
[[ -x "$docc" ]] || { echo "docc.sh: no docc next to swift ($(command -v swift))" >&2; exit 1; }

# The output is replaced only when it is empty or a site this script made: a mistyped --output
# must not remove a directory of something else.
if [[ -e "$output" && -n "$(ls -A "$output" 2>/dev/null || echo file)" ]] &&
  ! [[ -f "$output/metadata.json" && -d "$output/documentation" ]]; then
  echo "docc.sh: $output is not a site docc.sh made: not replaced (remove it, or name another)" >&2
  exit 1
fi
work=.build/docs/work
rm -rf "$work" "$output"
mkdir -p "$work" "$(dirname "$output")"

# Public symbols only (SPI is left out, as it is from the API), without the members every
# conformance synthesizes. SwiftPM builds what is missing first (nothing, after swift build).
echo "docc.sh: symbol graphs"
swift package dump-symbol-graph --skip-synthesized-members >"$work/dump.log" 2>&1 ||
  { cat "$work/dump.log"; exit 1; }
graphs=$(sed -n 's/^Files written to //p' "$work/dump.log" | tail -n 1)
[[ -d "$graphs" ]] || { cat "$work/dump.log"; echo "docc.sh: no symbol graph directory" >&2; exit 1; }

strict=()
if "$docc" convert --help 2>&1 | grep -q -- '--warnings-as-errors'; then
  strict=(--warnings-as-errors)
fi

failed=0
archives=()
for module in "${modules[@]}"; do
  # A module's own graph and those of its extensions to other modules (Module@Other).
  mkdir -p "$work/graphs/$module"
  cp "$graphs/$module.symbols.json" "$work/graphs/$module/"
  for extension in "$graphs/$module"@*.symbols.json; do
    [[ -e "$extension" ]] && cp "$extension" "$work/graphs/$module/"
  done
  archive="$work/$module.doccarchive"
  status=0
  "$docc" convert "Sources/$module/$module.docc" \
    --additional-symbol-graph-dir "$work/graphs/$module" \
    --fallback-display-name "$module" --fallback-bundle-identifier "resumedata.$module" \
    --transform-for-static-hosting --hosting-base-path "$base_path" \
    "${strict[@]}" --output-path "$archive" >"$work/$module.log" 2>&1 || status=$?
  count=$(grep -cE '(^|[^a-z])(warning|error): ' "$work/$module.log" || true)
  echo "docc.sh: $module: $count warning(s) or error(s), docc exit $status"
  if [[ $status -ne 0 || $count -ne 0 ]]; then
    grep -E -A8 '(^|[^a-z])(warning|error): ' "$work/$module.log" >&2 || cat "$work/$module.log" >&2
    failed=1
  fi
  archives+=("$archive")
done
[[ $failed -eq 0 ]] || { echo "docc.sh: docc reported warnings (fix them: they fail CI)" >&2; exit 1; }

"$docc" merge "${archives[@]}" --synthesized-landing-page-name ResumeDataKit \
  --synthesized-landing-page-kind Package --output-path "$output" >"$work/merge.log" 2>&1 ||
  { cat "$work/merge.log"; exit 1; }
if grep -E '(^|[^a-z])(warning|error): ' "$work/merge.log" >&2; then
  echo "docc.sh: docc merge reported warnings" >&2
  exit 1
fi

# The site's root is docc's app with no page of its own: send a visitor to the landing page.
cat >"$output/index.html" <<'HTML'
<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>ResumeDataKit documentation</title>
<meta http-equiv="refresh" content="0; url=documentation/"></head>
<body><p><a href="documentation/">ResumeDataKit documentation</a></p></body>
</html>
HTML

echo "docc.sh: site in $output (served under /${base_path:+$base_path/}): ${modules[*]}"
