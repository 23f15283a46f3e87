#!/usr/bin/env bash
# Fails when a file under Sources/ imports Foundation: the whole of it (ICU, CoreFoundation,
# FoundationInternationalization) would be linked into the static binary, costing size and RSS
# (docs/performance.md). FoundationEssentials, the standard library and Glibc are fine.
# Run from the repository root: scripts/check-no-foundation.sh
set -euo pipefail

found=$(grep -rnE '^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*((public|package|internal|fileprivate|private)[[:space:]]+)?import[[:space:]]+((struct|class|enum|protocol|typealias|func|var|let)[[:space:]]+)?Foundation([.[:space:]]|$)' \
    --include='*.swift' Sources || true)
if [[ -n "$found" ]]; then
    echo "$found" >&2
    echo "error: import FoundationEssentials (or the standard library, Glibc) instead of Foundation: it links ICU and CoreFoundation into the static binary (size and resident memory)" >&2
    exit 1
fi
