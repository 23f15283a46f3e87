#!/usr/bin/env bash
# Checks the shipped systemd files with the host's systemd tools (no running
# systemd needed; never boots or talks to PID 1):
#   1. systemd-analyze verify   must print nothing at all (it exits 0 on
#      warnings such as an unknown key, so any output counts as a failure),
#      for the unit and for an instance of the pinkeeper-reload@ templates;
#   2. systemd-analyze security must rate the unit at most 1.5;
#   3. systemd-sysusers must accept pinkeeper.sysusers and create the user
#      the unit runs as.
# Run from the repository root: scripts/check-units.sh
set -euo pipefail

unit=systemd/pinkeeper.service
sysusers=systemd/pinkeeper.sysusers
max_score=1.5
threshold=15 # --threshold counts in tenths: 15 means 1.5
daemon=/usr/bin/pinkeeper

fail() {
    printf 'check-units: %s\n' "$@" >&2
    exit 1
}

for tool in systemd-analyze systemd-sysusers; do
    command -v "$tool" >/dev/null 2>&1 ||
        fail "$tool not found." "Fix: apt-get install systemd (the package only; it need not run as PID 1)."
done
[ -f "$unit" ] || fail "$unit not found." "Fix: run this script from the repository root."
[ -f "$sysusers" ] || fail "$sysusers not found." "Fix: run this script from the repository root."

tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT

# 1. verify. The daemon is usually not installed where this runs, and verify
# rejects an ExecStart= that is not executable. Check a copy, under the same
# unit name, whose ExecStart= points at a stand-in executable; everything else
# (syntax, ExecReload=, dependencies) is checked as shipped. Man pages are
# skipped: they are installed with the package, not on a build host.
mkdir "$tmp/units"
printf '#!/bin/sh\nexit 0\n' >"$tmp/pinkeeper"
chmod 0755 "$tmp/pinkeeper"
grep -q "^ExecStart=$daemon " "$unit" ||
    fail "$unit: no 'ExecStart=$daemon ...' line." "Fix: keep ExecStart=$daemon run, or update \$daemon in $0."
sed "s|^ExecStart=$daemon |ExecStart=$tmp/pinkeeper |" "$unit" >"$tmp/units/pinkeeper.service"

verify_out=$(systemd-analyze verify --man=no "$tmp/units/pinkeeper.service" 2>&1) || true
if [ -n "$verify_out" ]; then
    printf '%s\n' "$verify_out" | sed "s|$tmp/pinkeeper|$daemon|g; s|$tmp/units/|systemd/|g" >&2
    fail "systemd-analyze verify reported the problems above in $unit." \
        "Fix: correct the named keys (see systemd.unit(5), systemd.service(5), systemd.exec(5));" \
        "a correct unit makes verify print nothing."
fi

# 1b. the reload templates, verified as one instance each (a template alone cannot be loaded).
for suffix in path service; do
    sed "s|^ExecStart=systemctl |ExecStart=$tmp/pinkeeper |" "systemd/pinkeeper-reload@.$suffix" \
        >"$tmp/units/pinkeeper-reload@store.$suffix"
done
verify_out=$(systemd-analyze verify --man=no "$tmp/units/pinkeeper-reload@store.path" \
    "$tmp/units/pinkeeper-reload@store.service" 2>&1) || true
if [ -n "$verify_out" ]; then
    printf '%s\n' "$verify_out" | sed "s|$tmp/units/|systemd/|g" >&2
    fail "systemd-analyze verify reported the problems above in systemd/pinkeeper-reload@.path or .service." \
        "Fix: correct the named keys (see systemd.path(5), systemd.service(5))."
fi

# 2. security. --offline reads the file alone; no service manager is asked.
security_rc=0
security_out=$(systemd-analyze security --offline=true --threshold="$threshold" --no-pager "$unit" 2>&1) ||
    security_rc=$?
score=$(printf '%s\n' "$security_out" | sed -n 's/^.*Overall exposure level for [^:]*: \([0-9][0-9.]*\).*$/\1/p')
if [ -z "$score" ]; then
    printf '%s\n' "$security_out" >&2
    fail "systemd-analyze security printed no overall exposure level for $unit." \
        "Fix: run 'systemd-analyze security --offline=true $unit' and correct what it reports."
fi
if [ "$security_rc" -ne 0 ] || LC_ALL=C awk -v s="$score" -v m="$max_score" 'BEGIN { exit !(s > m) }'; then
    # Failing checks start with ✗ (UTF-8 locale) or - (C locale).
    printf '%s\n' "$security_out" | grep -E '^(✗|-) ' >&2 || true
    fail "$unit has exposure level $score; at most $max_score is allowed." \
        "Fix: restore the sandboxing options for the failing lines above (see systemd.exec(5))."
fi

# 3. sysusers. A dry run into an empty root: writes nothing, not even there.
sysusers_out=$(systemd-sysusers --dry-run --root="$tmp" - <"$sysusers" 2>&1) || {
    printf '%s\n' "$sysusers_out" >&2
    fail "systemd-sysusers rejected $sysusers." "Fix: correct the line it names (see sysusers.d(5))."
}
printf '%s\n' "$sysusers_out" | grep -q "^Creating user 'pinkeeper'" || {
    printf '%s\n' "$sysusers_out" >&2
    fail "$sysusers does not create the user 'pinkeeper' that $unit runs as." \
        "Fix: keep a 'u pinkeeper ...' line (see sysusers.d(5))."
}

printf 'check-units: %s: verify clean, exposure level %s (at most %s); %s: ok; pinkeeper-reload@ templates: verify clean\n' \
    "$unit" "$score" "$max_score" "$sysusers"
