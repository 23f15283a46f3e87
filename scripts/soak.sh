#!/usr/bin/env bash
# Usage: scripts/soak.sh [SECONDS]        (`make soak`; not part of `make test` or CI)
# Flat memory, proven: the release `pinkeeper run` (built as `make release` builds it; PINKEEPER=path
# soaks another binary) against the loopback fixture service (Tests/Fixtures/pinserver.py,
# keep-alive), driven pass after pass by SIGUSR1 for SECONDS of passes (default 120: about 1,500
# passes and 150 s in all on a 2-core VM), while
#   - store `flaky` cycles through faults: HTTP 500 and 404, a bad signature, a truncated body, an
#     oversized body, a redirect to a closed port (connection refused), a slow answer, and now and
#     then a timeout (no headers, or a body dripping too slowly);
#   - stores `rotating` and `big` (200 entries) change among a few list variants (entries expiring
#     5 s after they are first served, so that the cached pins stay few), so that passes
#     publish and `on_change` hooks run; `steady` (challenge mode) republishes the same pins and
#     `etag` (static) gets 304s; the metrics file is rewritten after every pass.
# scripts/soak.py drives it and prints fds, threads, anonymous memory (RssAnon, smaps_rollup
# Anonymous) and PSS at the start, a third of the way and at the end, each taken once the daemon's
# short-lived threads (downloads linger 10 s) have ended; it exits non-zero if fds or threads
# grew, or memory grew by more than SOAK_TOLERANCE_KB (default 256 KiB anonymous, 4x that VmRSS),
# after the first third. SOAK_HEAP=1 adds malloc's own bytes in use (mallinfo2 through gdb), which
# tells a leak from fragmentation. Everything lives in .build/soak/ (recreated; the CA is kept while valid).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${1:-120}
work=$root/.build/soak

if [[ -n ${PINKEEPER:-} ]]; then pinkeeper=$PINKEEPER; else
    make --no-print-directory release >&2
    pinkeeper=$root/.build/release/pinkeeper
fi
[[ -x $pinkeeper ]] || { echo "soak: no pinkeeper binary at $pinkeeper" >&2; exit 1; }

mkdir -p "$work"
find "$work" -mindepth 1 -maxdepth 1 ! -name ca -exec rm -rf {} +
bash Tests/Fixtures/make-ca.sh "$work/ca" >/dev/null
routes=$work/routes
mkdir -p "$routes" "$work/cache" "$work/state"
chmod 0755 "$work/cache"  # whatever the umask: the daemon refuses data directories others may write
chmod 0700 "$work/state"

server_pid=
cleanup() {  # the fixture service, by its PID (soak.py stops the daemon it started itself)
    [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    server_pid=
}
trap cleanup EXIT
# soak.py writes every route before the daemon starts; the service re-reads them on each request.
python3 Tests/Fixtures/pinserver.py --keep-alive --routes "$routes" --cert "$work/ca/server.pem" \
    --key "$work/ca/server.key" --port-file "$work/port" 2>"$work/pinserver.log" &
server_pid=$!
for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.1; done
[[ -s $work/port ]] || { echo "soak: pinserver did not start" >&2; cat "$work/pinserver.log" >&2; exit 1; }
base=https://127.0.0.1:$(cat "$work/port")
key=$(cat "$work/ca/signing.pub.b64")
ca=$work/ca/ca.pem

store() {  # store ID MODE [EXTRA-LINE...]
    local id=$1 mode=$2; shift 2
    printf '[stores.%s]\nurl = "%s/%s"\npublic_key = "%s"\nmode = "%s"\nca_file = "%s"\n' "$id" "$base" "$id" "$key" "$mode" "$ca"
    local line
    for line in "$@"; do printf '%s\n' "$line"; done
    printf '\n'
}
{
    printf 'cache_directory = "%s"\nstate_directory = "%s"\nmetrics_file = "%s"\n' "$work/cache" "$work/state" "$work/metrics.prom"
    [[ $EUID -ne 0 ]] || printf 'user = "root"\n'  # as root, pinkeeper keeps root only when told so
    printf '\n'
    # A failed store is retried only when SIGUSR1 asks: no pass starts except the driver's.
    printf '[defaults]\nrequest_timeout = "5s"\nretry_min = "1h"\nretry_max = "1h"\n\n'
    store steady challenge
    store etag static
    store rotating static 'on_change = ["/bin/echo", "rotating changed"]'
    store big static 'on_change = ["/bin/echo", "big changed"]'
    store flaky challenge 'request_timeout = "1s"' 'max_response_size = "64KiB"'
} >"$work/pinkeeper.toml"

python3 scripts/soak.py --binary "$pinkeeper" --config "$work/pinkeeper.toml" --routes "$routes" \
    --signing-key "$work/ca/signing.key" --work "$work" --seconds "$seconds" \
    --tolerance-kb "${SOAK_TOLERANCE_KB:-256}" ${SOAK_HEAP:+--heap}
