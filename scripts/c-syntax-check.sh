#!/bin/bash
# Parses every C file of the package with `clang -fsyntax-only` for the targets the library is
# prepared for but not built on here: arm64-apple-macos13, arm64-apple-ios16 and aarch64-linux-gnu,
# with -Wall -Wextra -Werror. What it checks is our C under each target's predefined macros (no
# __x86_64__, __APPLE__ for two of them): the scalar branches, the declarations they use, the
# preprocessor choices. What it cannot check is the Apple SDKs: none is available here, so Debian's
# aarch64 glibc headers (libc6-dev-arm64-cross) stand in for the C library on all three, and
# Debian's libxml2 and OpenSSL headers for the SDK's. Two adjustments make glibc parse under an
# Apple triple: clang predefines __nonnull there as a nullability keyword (glibc uses it as an
# attribute macro), and ICU's platform.h, which Debian's libxml2 headers pull in, wants Apple's
# TargetConditionals.h unless told its platform.
#
# usage: scripts/c-syntax-check.sh        (installs libc6-dev-arm64-cross when it is missing)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
glibc=/usr/aarch64-linux-gnu/include
if [ ! -f "$glibc/stdio.h" ]; then
  export DEBIAN_FRONTEND=noninteractive
  (apt-get install -y -qq libc6-dev-arm64-cross 2>/dev/null \
    || (apt-get update -qq && apt-get install -y -qq libc6-dev-arm64-cross)) >/dev/null
fi
includes=()
for dir in Sources/*/include; do includes+=(-I "$dir"); done
# libxml2's and OpenSSL's headers after the stand-in C library; OpenSSL's configuration header is
# under the x86-64 multiarch directory, and holds nothing x86-specific for an LP64 target.
after=(-idirafter /usr/include/libxml2 -idirafter /usr/include -idirafter /usr/include/x86_64-linux-gnu)
files=(Sources/*/*.c)
failed=0
for target in arm64-apple-macos13 arm64-apple-ios16 aarch64-linux-gnu; do
  extra=()
  case $target in *apple*) extra=(-U__nonnull -DU_PLATFORM=U_PF_DARWIN) ;; esac
  for file in "${files[@]}"; do
    if ! clang --target="$target" -fsyntax-only -std=gnu11 -Wall -Wextra -Werror "${extra[@]}" \
      "${includes[@]}" -isystem "$glibc" "${after[@]}" "$file"; then
      echo "c-syntax-check: $file does not parse for $target" >&2
      failed=1
    fi
  done
done
[ "$failed" = 0 ] || exit 1
echo "c-syntax-check: ${#files[@]} C files parse for arm64-apple-macos13, arm64-apple-ios16, aarch64-linux-gnu"
