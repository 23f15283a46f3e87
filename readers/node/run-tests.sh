#!/usr/bin/env bash
# Runs the Node.js reader's tests (test/*.test.js, *.test.mjs) with `node`: the conformance
# table through the library and through the command line, the unit tests and the TLS helpers.
# Then again with Debian 12's Node 18, the oldest version the package supports, unpacked under
# .build/node18 without touching the installed node (its libnode and the Debian packages its
# built-in modules load from /usr/share/nodejs).
# Run from anywhere: readers/node/run-tests.sh
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
top="$(cd "$here/../.." && pwd)"
cd "$here"
tests=(test/*.test.js test/*.test.mjs)

echo "with node $(node --version):"
node --test "${tests[@]}"

if node -e 'process.exit(process.versions.node.startsWith("18.") ? 0 : 1)'; then
  exit 0 # node is already 18
fi
root="$top/.build/node18"
skip() { echo "Node 18 not tested: $1"; exit 0; }
if [ ! -x "$root/usr/bin/node" ]; then
  version="$(apt-cache madison nodejs 2>/dev/null | awk '$3 ~ /^18\./ { print $3; exit }')"
  [ -n "$version" ] || skip "apt knows no nodejs 18 (Debian 12's)"
  library="$(apt-cache show "nodejs=$version" | sed -n 's/^Depends:.*\(libnode[0-9]*\) (= .*/\1/p' | head -n 1)"
  rm -rf "$root" && mkdir -p "$root/debs"
  (cd "$root/debs" && apt-get download "nodejs=$version" "$library=$version" >/dev/null) \
    || { rm -rf "$root"; skip "apt-get download failed"; }
  for deb in "$root"/debs/*.deb; do dpkg-deb -x "$deb" "$root"; done
fi
# Its libraries, and the built-in modules it loads from /usr/share/nodejs (fetch's undici among them).
"$top/scripts/install-deps.sh" libc-ares2 libuv1 node-acorn node-cjs-module-lexer node-undici
library_directory="$(dirname "$(find "$root/usr/lib" -name 'libnode.so.*' | head -n 1)")"
export LD_LIBRARY_PATH="$library_directory${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "again with node $("$root/usr/bin/node" --version) (Debian 12):"
"$root/usr/bin/node" --test "${tests[@]}"
