#!/usr/bin/env bash
# Prints the path of a promtool for `make alert-rules-check`, fetching one first when needed.
#
# A promtool on PATH is used as it is. Otherwise the one from Debian's `prometheus` package is
# unpacked into .build/tools/: installing that package would also enable and start a Prometheus
# server on this machine, which a test run has no business doing. `apt-get download` fetches
# the package through apt as usual (no root needed unless the package lists must be refreshed).
set -euo pipefail

if command -v promtool >/dev/null 2>&1; then
  command -v promtool
  exit 0
fi

top=$(cd "$(dirname "$0")/.." && pwd)
tools="$top/.build/tools"
if [ -x "$tools/promtool" ]; then
  echo "$tools/promtool"
  exit 0
fi

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "fetching promtool from the Debian package prometheus (unpacked, not installed)" >&2
if ! (cd "$work" && apt-get download -qq prometheus >/dev/null 2>&1); then
  as_root apt-get update -qq >&2
  (cd "$work" && apt-get download -qq prometheus >&2)
fi
dpkg-deb --fsys-tarfile "$work"/prometheus_*.deb | tar -x -C "$work" ./usr/bin/promtool
mkdir -p "$tools"
install -m 0755 "$work/usr/bin/promtool" "$tools/promtool"
echo "$tools/promtool"
