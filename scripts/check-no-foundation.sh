#!/usr/bin/env bash
# Fails when a file under Sources/ imports Foundation: the whole of it (ICU, CoreFoundation,
# FoundationInternationalization) would be linked into the static binary, costing size and RSS
# (docs/performance.md). FoundationEssentials, the standard library and Glibc are fine.
# Run from the repository root: scripts/check-no-foundation.sh
set -euo pipefail

modifiers='^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*((public|package|internal|fileprivate|private)[[:space:]]+)?'
kind='((struct|class|enum|protocol|typealias|func|var|let)[[:space:]]+)?'
module='Foundation([.[:space:]]|$)'
found=$(grep -rnE "${modifiers}import[[:space:]]+${kind}${module}" \
    --include='*.swift' Sources || true)
if [[ -n "$found" ]]; then
    echo "$found" >&2
    why="it links ICU and CoreFoundation into the static binary (size and resident memory)"
    echo "error: import FoundationEssentials (or the standard library, Glibc) instead of Foundation: $why" >&2
    exit 1
fi
