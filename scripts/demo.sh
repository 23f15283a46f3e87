#!/usr/bin/env bash
# `make demo`: a local demo pinning service on loopback and the daemon in the foreground.
#
# Everything lives in .build/demo/ of this checkout (git-ignored), recreated on every run except
# .build/demo/ca/ (test CA, TLS server certificate, list-signing keys), which is reused while valid.
# The fixture service is Tests/Fixtures/pinserver.py (see Tests/Fixtures/README.md); it serves
#   store "demo"        challenge mode, like Mobile Utility Server  /app/init?appName=demo
#   store "demo-static" static list signed per entry, with ETag     /demo-static
# Ctrl-C (SIGINT) or SIGTERM stops the daemon and the fixture service, then the script exits 0.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd -P)
bin=$root/.build/debug/pinkeeper
run=$root/.build/demo
ca=$run/ca
routes=$run/routes
config=$run/pinkeeper.toml
port_file=$run/pinserver.port

die() { echo "demo: $*" >&2; exit 1; }

[[ -x $bin ]] || die "$bin is missing; build it first with: make build"
command -v openssl >/dev/null || die "openssl is missing; run: make deps"
python3 -c 'import cryptography' 2>/dev/null ||
    die "python3 with the 'cryptography' package is needed by the fixture service; run: make deps"

# ------------------------------------------------------------------ clean-up, set up first
server_pid='' daemon_pid='' gate=''

# Stops one process we started, by PID: SIGNAL, up to 10 s for it to exit, then SIGKILL; reaps it.
stop_pid() {
    local pid=$1 sig=$2 i
    kill -0 "$pid" 2>/dev/null && kill -"$sig" "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "demo: process $pid did not stop after SIG$sig within 10 s; killing it" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

# Idempotent: the signal traps call it, then the EXIT trap calls it again.
cleanup() {
    local sig=${1:-TERM}
    if [[ -n $daemon_pid ]]; then stop_pid "$daemon_pid" "$sig"; daemon_pid=''; fi
    if [[ -n $server_pid ]]; then stop_pid "$server_pid" TERM; server_pid=''; fi
    if [[ -n $gate ]]; then rm -f "$gate"; gate=''; fi
}

on_signal() {
    trap '' INT TERM  # a second Ctrl-C must not interrupt the clean-up
    echo
    echo "demo: SIG$1 received, stopping the daemon and the demo pinning service"
    cleanup "$1"
    echo "demo: stopped"
    exit 0
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
trap 'cleanup TERM' EXIT

# ------------------------------------------------------------------ 1. fresh state, CA kept
mkdir -p "$run"
find "$run" -mindepth 1 -maxdepth 1 ! -name ca -exec rm -rf {} +

# ------------------------------------------------------------------ 2. CA, server cert, signing key
Tests/Fixtures/make-ca.sh "$ca"

# ------------------------------------------------------------------ 3. the pinned certificates
pinned=$run/pinned
mkdir -p "$pinned"

# NAME DAYS: a self-signed certificate standing in for the server a local client talks to.
make_pinned_cert() {
    if ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 \
        -subj "/CN=$1" -addext "subjectAltName=DNS:$1" -days "$2" \
        -keyout "$pinned/$1.key" -out "$pinned/$1.pem" 2>"$pinned/openssl.log"; then
        cat "$pinned/openssl.log" >&2
        die "openssl could not make the demo certificate for $1"
    fi
    rm -f "$pinned/openssl.log"
}
# Base64 of the SHA-256 of the DER certificate: the Wultra fingerprint (docs/protocol.md §2).
fingerprint() { openssl x509 -in "$1" -outform DER | openssl dgst -sha256 -binary | openssl base64 -A; }
# notAfter as Unix seconds: the entry's "expires", as the SSL Pinning Tool sets it.
not_after() { date -u -d "$(openssl x509 -in "$1" -noout -enddate | cut -d= -f2)" +%s; }

make_pinned_cert api.demo.test 365  # alone, it would leave the schedule at the 7-day period
make_pinned_cert cdn.demo.test 10   # expires within 14 days: next update in 10 d x 0.125 = 30 h
api_fp=$(fingerprint "$pinned/api.demo.test.pem")
api_expires=$(not_after "$pinned/api.demo.test.pem")
cdn_fp=$(fingerprint "$pinned/cdn.demo.test.pem")
cdn_expires=$(not_after "$pinned/cdn.demo.test.pem")

# ------------------------------------------------------------------ 4. routes of the fixture service
# /app/init?appName=demo -> routes/app/init.json (the fixture ignores the query); /demo-static ->
# routes/demo-static.json. Both are re-read on every request: edit them (atomically) to play.
mkdir -p "$routes/app"
entries='[
    {"name": "api.demo.test", "fingerprint": "'"$api_fp"'", "expires": '"$api_expires"'},
    {"name": "cdn.demo.test", "fingerprint": "'"$cdn_fp"'", "expires": '"$cdn_expires"'}
  ]'
cat >"$routes/app/init.json" <<EOF
{
  "_comment": "store demo: challenge mode, signed like Mobile Utility Server /app/init",
  "mode": "challenge",
  "signing_key": "$ca/signing.key",
  "fingerprints": $entries
}
EOF
cat >"$routes/demo-static.json" <<EOF
{
  "_comment": "store demo-static: static list, each entry signed, ETag/If-None-Match answered 304",
  "mode": "static",
  "signing_key": "$ca/signing.key",
  "etag": true,
  "fingerprints": $entries
}
EOF

# ------------------------------------------------------------------ 5. the fixture service
python3 Tests/Fixtures/pinserver.py --routes "$routes" --cert "$ca/server.pem" --key "$ca/server.key" \
    --port 0 --port-file "$port_file" 2>"$run/pinserver.log" &
server_pid=$!
for ((i = 0; i < 100; i++)); do
    [[ -s $port_file ]] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
if [[ ! -s $port_file ]]; then
    cat "$run/pinserver.log" >&2
    die "the demo pinning service (Tests/Fixtures/pinserver.py) did not start within 10 s; its log: $run/pinserver.log"
fi
port=$(<"$port_file")

# ------------------------------------------------------------------ 6. the daemon's configuration
cache=$run/cache
state=$run/state
mkdir -m 0755 "$cache"
mkdir -m 0700 "$state"
chmod 0755 "$cache"  # whatever the umask: the daemon refuses a cache writable by others
chmod 0700 "$state"
public_key=$(<"$ca/signing.pub.b64")

toml() { local s=${1//\\/\\\\}; printf '"%s"' "${s//\"/\\\"}"; }  # a TOML basic string
cat >"$config" <<EOF
# Written by scripts/demo.sh; recreated on every run of \`make demo\`.
cache_directory = $(toml "$cache")
state_directory = $(toml "$state")
$(if [[ $EUID -eq 0 ]]; then
    echo 'user = "root"  # started as root, pinkeeper would work as the cache directory'"'"'s owner: here root, said explicitly'
fi)

# Mobile Utility Server style: a fresh challenge per request, the whole response signed.
[stores.demo]
url = $(toml "https://localhost:$port/app/init?appName=demo")
public_key = $(toml "$public_key")
mode = "challenge"
ca_file = $(toml "$ca/ca.pem")

# A static list (SSL Pinning Tool output) with each entry signed; the server sends an ETag.
[stores.demo-static]
url = $(toml "https://localhost:$port/demo-static")
public_key = $(toml "$public_key")
mode = "static"
ca_file = $(toml "$ca/ca.pem")
EOF

# ------------------------------------------------------------------ 7. banner, then the daemon
# The daemon is started behind a gate so that its PID can be printed before its first log line:
# the subshell waits on a FIFO, then execs the daemon (same PID). It runs as a child we `wait`
# for, rather than a plain foreground command, so that a SIGINT/SIGTERM sent to this script
# alone is handled at once (bash runs traps only between commands) and forwarded to the daemon.
gate=$run/.start-daemon
mkfifo "$gate"
(read -r _ <"$gate"; exec "$bin" run --config "$config") &
daemon_pid=$!

rel=${bin#"$root"/}
later=''  # status and validate are announced only as coming until this build has them
help=$("$bin" --help 2>/dev/null || true)
grep -Eq '^ +status( |$)' <<<"$help" || later='   (coming soon)'
cat <<EOF

================================================================ pinkeeper demo
Demo pinning service  https://localhost:$port  (PID $server_pid, log $run/pinserver.log)
  store demo         challenge mode   /app/init?appName=demo   route $routes/app/init.json
  store demo-static  static + ETag    /demo-static             route $routes/demo-static.json
  pins  api.demo.test  $api_fp  expires $(date -u -d "@$api_expires" +%F)
        cdn.demo.test  $cdn_fp  expires $(date -u -d "@$cdn_expires" +%F)
Daemon  $rel run --config $config  (PID $daemon_pid)
Cache   $cache/demo.json
        $cache/demo-static.json
State   $state

Try in another terminal:
  cat $cache/demo.json
  $bin update --config $config --force
  kill -USR1 $daemon_pid     # update every store now
  kill -HUP $daemon_pid      # reload $config after editing it
  $bin status --config $config$later
  $bin validate --config $config --store demo --name api.demo.test --fingerprint $api_fp$later
Requests the service saw: $routes/requests.log
Press Ctrl-C to stop the daemon and the demo pinning service.
================================================================================

EOF
echo go >"$gate"

status=0
wait "$daemon_pid" || status=$?
daemon_pid=''  # reaped: the EXIT trap must not signal a PID that may be reused
echo "demo: the daemon exited on its own (status $status); stopping the demo pinning service" >&2
exit "$status"
