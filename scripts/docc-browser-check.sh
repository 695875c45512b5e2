#!/usr/bin/env bash
# Loads pages of the DocC site scripts/docc.sh built in a headless Chromium (Debian's, installed
# when missing) and checks that they render: DocC pages are drawn by JavaScript from JSON, so a
# page whose scripts, data or base path are wrong shows only its "requires JavaScript" shell. The
# site is served by python3 -m http.server on 127.0.0.1 (a port the kernel picks), under the
# hosting base path it was built for, and the server is stopped at the end.
#
# Each page's DOM is dumped after its scripts have run (--virtual-time-budget) and must have the
# title, the page's heading in its main content, and text only the rendered page holds. Exits 1
# naming what is missing.
#
# Usage: scripts/docc-browser-check.sh [--site DIR] [--hosting-base-path PATH]
#   (defaults: .build/docs/site and resumedata, as scripts/docc.sh)
set -euo pipefail
repository=$(cd "$(dirname "$0")/.." && pwd)

site=.build/docs/site
base_path=resumedata
while [[ $# -gt 0 ]]; do
  case "$1" in
    --site) site=${2:?--site needs a directory}; site_given=1; shift 2 ;;
    --hosting-base-path) base_path=${2?--hosting-base-path needs a path}; shift 2 ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "docc-browser-check.sh: unknown argument '$1' (see --help)" >&2; exit 64 ;;
  esac
done
# A path given is from the caller's directory; the default is in the repository.
[[ -z "${site_given:-}" || "$site" == /* ]] || site="$PWD/$site"
cd "$repository"
[[ -f "$site/documentation/resumedata/index.html" ]] ||
  { echo "docc-browser-check.sh: no site in $site (run scripts/docc.sh)" >&2; exit 66; }

if ! command -v chromium >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  # As for nginx in .ci/run: without fresh package lists the first try fails, expectedly.
  (apt-get install -y -qq chromium 2>/dev/null ||
    (apt-get update -qq && apt-get install -y -qq chromium)) >/dev/null
fi

scratch=$(mktemp -d)
server=
cleanup() {
  if [[ -n "$server" ]]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT

# The site under its base path, as a host would serve it.
root="$scratch/root"
mkdir -p "$root"
if [[ -n "$base_path" ]]; then
  mkdir -p "$(dirname "$root/$base_path")"
  ln -s "$(realpath "$site")" "$root/$base_path"
  prefix="/$base_path/"
else
  rmdir "$root"
  ln -s "$(realpath "$site")" "$root"
  prefix=/
fi
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$root" >"$scratch/server.log" 2>&1 &
server=$!
port=
for _ in $(seq 1 100); do
  port=$(sed -n 's/.*port \([0-9][0-9]*\).*/\1/p' "$scratch/server.log" | head -n 1)
  [[ -n "$port" ]] && break
  sleep 0.1
done
[[ -n "$port" ]] || { cat "$scratch/server.log" >&2; echo "docc-browser-check.sh: the server did not start" >&2; exit 1; }

failures=0
# check PATH TITLE HEADING TEXT...: the page at PATH (under the base path) must have TITLE as its
# <title>, HEADING as the text of its main content's <h1>, and each TEXT in its main content.
check() {
  local path=$1 title=$2 heading=$3
  shift 3
  local url="http://127.0.0.1:$port$prefix$path"
  local dom="$scratch/dom.html"
  # Root in a container needs --no-sandbox; a profile of its own leaves the home directory alone.
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --user-data-dir="$scratch/profile" --virtual-time-budget=10000 \
    --dump-dom "$url" >"$dom" 2>"$scratch/chromium.log" || true
  if python3 - "$dom" "$title" "$heading" "$@" <<'PY'; then
import html, re, sys

dom_path, title, heading, *texts = sys.argv[1:]
dom = open(dom_path, encoding="utf-8", errors="replace").read()

def text(fragment):
    fragment = re.sub(r"<(script|style|noscript)\b[^>]*>.*?</\1>", " ", fragment, flags=re.S)
    fragment = re.sub(r"<wbr\b[^>]*>", "", fragment)  # DocC breaks long names with <wbr>
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", fragment))).strip()

problems = []
found_title = re.search(r"<title>(.*?)</title>", dom, re.S)
found_title = text(found_title.group(1)) if found_title else None
if found_title != title:
    problems.append(f"title {found_title!r}, expected {title!r}")
main = re.search(r"<main\b.*?</main>", dom, re.S)
if not main:
    problems.append("no <main> element: the page did not render")
else:
    h1 = re.search(r"<h1\b[^>]*>(.*?)</h1>", main.group(0), re.S)
    found_heading = text(h1.group(1)).replace(" ", "") if h1 else None
    if found_heading != heading.replace(" ", ""):
        problems.append(f"heading {found_heading!r}, expected {heading!r}")
    # Compared without white space: the DOM puts elements where the text has none.
    content = text(main.group(0))
    squeezed = content.replace(" ", "")
    problems += [
        f"no {t!r} in the page's content" for t in texts if t.replace(" ", "") not in squeezed
    ]
if problems:
    print("; ".join(problems))
    if main:
        print(f"the content begins: {content[:400]!r}")
    sys.exit(1)
print(f"title {title!r}, heading {heading!r}, " + ", ".join(repr(t) for t in texts))
PY
    echo "docc-browser-check.sh: ok: $url"
  else
    echo "docc-browser-check.sh: FAILED: $url" >&2
    failures=$((failures + 1))
  fi
}

# The site's root sends a visitor to the landing page of the four modules.
check "" "ResumeDataKit | Documentation" "ResumeDataKit" \
  "PropertyList" "KeyedArchive" "ResumeData" "Downloader"
# A module's landing page: its abstract, an article and a symbol from its topics.
check "documentation/resumedata/" "ResumeData | Documentation" "ResumeData" \
  "Read, judge, repair, convert and edit the resume data" \
  "Getting started on Apple platforms" "Repairing blobs" \
  "static func forURLSession(Data, partialFile: PartialFileCheck, limits: KeyedArchiveLimits) -> URLSessionResume"
# A symbol page: its declaration and the summary from its /// comment.
check "documentation/resumedata/resumedata/forurlsession(_:partialfile:limits:)" \
  "forURLSession(_:partialFile:limits:) | Documentation" "forURLSession(_:partialFile:limits:)" \
  "static func forURLSession(_ blob: Data, partialFile: PartialFileCheck, limits: KeyedArchiveLimits = .default) -> URLSessionResume" \
  "The one call for a downloader on an Apple platform"

if [[ $failures -ne 0 ]]; then
  echo "docc-browser-check.sh: $failures page(s) did not render" >&2
  exit 1
fi
echo "docc-browser-check.sh: every page rendered"
