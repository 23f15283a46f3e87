#!/usr/bin/env bash
# make test's build of the package and its tests: a warning in the project's own Swift sources
# (Sources/, Tests/) fails it, as an error would. Checked in the compiler's output rather than
# with -warnings-as-errors, which would also fail on the dependencies' warnings and, as a flag
# the other targets do not pass, rebuild everything once more.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"${SWIFT:-swift}" build --build-tests "$@" 2>&1 | tee "$log"
root=$(pwd -P)
if grep -E "^($root/)?(Sources|Tests)/[^:]+:[0-9]+:[0-9]+: warning:" "$log" >/dev/null; then
    echo "build-tests: warnings in the project's sources are errors in make test; fix these:" >&2
    grep -E "^($root/)?(Sources|Tests)/[^:]+:[0-9]+:[0-9]+: warning:" "$log" | sort -u >&2
    exit 1
fi
