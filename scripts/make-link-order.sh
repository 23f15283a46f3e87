#!/usr/bin/env bash
# Usage: scripts/make-link-order.sh
# Regenerates packaging/pinkeeper.order, the function order the release link uses
# (lld --symbol-ordering-file, see RELEASE_FLAGS in the Makefile).
#
# Why: the kernel maps a binary's code in 64 KiB runs around each page it faults in, and the
# functions a daemon runs are scattered through the 16 MB of code of a static-stdlib binary. An
# idle `pinkeeper run` kept 9 MiB of code resident for the ~1 MB of functions it had executed.
# Placing those functions side by side cuts resident code, and the page faults of every start.
#
# How: the whole-process workloads of scripts/bench.sh (`idle`: a daemon's start, first pass
# and SIGTERM; `update`: new and unchanged lists; `fingerprint`: validate) run once each with the
# release binary under callgrind; every function of the binary that ran is listed, the daemon's
# first, each group sorted by name. Functions missing from the file (new code) still link, after
# the listed ones, scattered: `make release` runs scripts/check-link-order.py, which fails once
# over 2 % of the listed functions are gone from the binary. Then regenerate, commit the file, and
# compare `scripts/bench.sh idle` (it prints the resident pages by module).
# Needs valgrind (installed here if missing); about two minutes after the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }

make --no-print-directory release LINK_ORDER_CHECK=no >/dev/null
binary=$(swift build -c release --show-bin-path)/pinkeeper
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# valgrind cannot read the DWARF 5 of an lld link; the symbol table is all it needs.
objcopy --strip-debug "$binary" "$work/pinkeeper"
mkdir "$work/traces"
cat >"$work/traced" <<EOF
#!/bin/sh
exec valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/traces/\$1.%p" "$work/pinkeeper" "\$@" 2>>"$work/valgrind.log"
EOF
chmod +x "$work/traced"

PINKEEPER=$work/traced RUNS=1 IDLE_SECONDS=1 scripts/bench.sh idle update fingerprint >"$work/bench.log" 2>&1 ||
    { cat "$work/bench.log" >&2; echo "make-link-order: a workload failed (valgrind's log: kept above)" >&2; exit 1; }

python3 - "$work/pinkeeper" "$work/traces" "$root/packaging/pinkeeper.order" <<'PY'
import os, re, subprocess, sys
binary, traces, out = sys.argv[1:4]
functions = set()
for line in subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout.splitlines():
    parts = line.split(" ", 2)
    if len(parts) == 3 and parts[1] in "tTWw":
        functions.add(parts[2])
# The daemon's functions first, then what only the one-shot commands run. Callgrind lists a
# trace's functions in no stable order (two runs differ in most positions), so each group is
# sorted by name: a regenerated file differs from the last one where the code did, and in a few
# names that ran in one trace and not in another (deinitializers racing SIGTERM, a hash table's
# growth: 3 to 8 of 3,900 between runs on one binary).
rank = {"run": 0, "update": 1, "validate": 2}
first_rank = {}
for trace in os.listdir(traces):
    trace_rank = rank.get(trace.split(".")[0], 3)
    for line in open(os.path.join(traces, trace), errors="replace"):
        # "fn=(id) name" or "cfn=(id) name" names a function the first time callgrind meets it;
        # a recursion depth may follow as 'N.
        match = re.match(r"c?fn=\(\d+\) (\S+?)(?:'\d+)?$", line)
        if match and match.group(1) in functions:
            name = match.group(1)
            first_rank[name] = min(trace_rank, first_rank.get(name, trace_rank))
ordered = sorted(first_rank, key=lambda name: (first_rank[name], name))
if len(ordered) < 500:
    sys.exit(f"make-link-order: only {len(ordered)} functions traced; refusing to write {out}")
with open(out, "w") as f:
    f.write("\n".join(ordered) + "\n")
print(f"{out}: {len(ordered)} functions")
PY
