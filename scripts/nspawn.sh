# shellcheck shell=bash
# Helpers to boot a Debian root with a real systemd in a systemd-nspawn container and drive it
# from the host. Sourced by scripts/systemd-test.sh and scripts/package-test.sh; not a program.
#
# systemd only ever runs as PID 1 of the container (its own PID and mount namespaces, on a root
# of its own): never in the host's root or mount namespace, where its boot-time clean-up would
# empty the host's /tmp. The container shares the host's network (no --private-network), so it
# reaches services on the host's loopback. One container at a time per shell:
#
#   nspawn_boot ROOT STATE_DIR     start it in the background; sets NSPAWN_PID and NSPAWN_PID1
#   nspawn_wait_running [SECONDS]  until `systemctl is-system-running` says running or degraded
#   in_container CMD...            run CMD inside (nsenter into all of PID 1's namespaces)
#   nspawn_poweroff [SECONDS]      systemctl poweroff, then SIGTERM, then SIGKILL, by PID
#   in_root ROOT CMD...            run CMD chrooted into a root that is NOT booted (private
#                                  mount and PID namespaces, /proc mounted there only)
#   nspawn_reap_stale STATE_DIR    kill a container an interrupted earlier run left behind
#
# The process ids go to STATE_DIR/nspawn.pid and STATE_DIR/pid1, the console to
# STATE_DIR/console.log.

NSPAWN_PID=''
NSPAWN_PID1=''
NSPAWN_STATE=''
NSPAWN_ROOT=''
# Seconds one command inside the container may take before it is killed.
NSPAWN_CMD_TIMEOUT=${NSPAWN_CMD_TIMEOUT:-120}

nspawn_log() { echo "nspawn: $*" >&2; }

nspawn_alive() { [[ -n $NSPAWN_PID ]] && kill -0 "$NSPAWN_PID" 2>/dev/null; }

# The last field of NSpid in /proc/PID/status: the process's PID in its own PID namespace.
_nspawn_inner_pid() { awk '$1 == "NSpid:" { print $NF }' "/proc/$1/status" 2>/dev/null; }

# The container's PID 1 as seen from the host: a descendant of the nspawn process that is PID 1
# in its own namespace and runs systemd. Prints nothing until it has exec'd systemd.
_nspawn_find_pid1() {
    local queue=("$NSPAWN_PID") p c
    while [[ ${#queue[@]} -gt 0 ]]; do
        p=${queue[0]}
        queue=("${queue[@]:1}")
        for c in $(cat "/proc/$p/task/"*/children 2>/dev/null); do
            if [[ $(_nspawn_inner_pid "$c") == 1 && $(cat "/proc/$c/comm" 2>/dev/null) == systemd ]]; then
                echo "$c"
                return 0
            fi
            queue+=("$c")
        done
    done
    return 1
}

# nspawn_boot ROOT STATE_DIR: boots ROOT (systemd-nspawn -b) in the background and waits for
# its PID 1 to be systemd. Returns non-zero if nspawn exits or no systemd appears in 60 s.
nspawn_boot() {
    local root=$1 state=$2 i
    NSPAWN_ROOT=$(realpath "$root")
    NSPAWN_STATE=$state
    mkdir -p "$state"
    [[ -x $NSPAWN_ROOT/lib/systemd/systemd ]] || { nspawn_log "$NSPAWN_ROOT has no systemd"; return 1; }
    # --keep-unit --register=no: no host systemd or machined is involved (there may be none).
    # --link-journal=no: the container's journal stays inside its root.
    systemd-nspawn --quiet --keep-unit --register=no --link-journal=no --console=read-only \
        --timezone=off --machine="pinkeeper-$(basename "$(dirname "$NSPAWN_ROOT")")" -D "$NSPAWN_ROOT" -b \
        </dev/null >"$state/console.log" 2>&1 &
    NSPAWN_PID=$!
    echo "$NSPAWN_PID" >"$state/nspawn.pid"
    for ((i = 0; i < 600; i++)); do
        NSPAWN_PID1=$(_nspawn_find_pid1) && break
        if ! nspawn_alive; then
            nspawn_log "systemd-nspawn exited during start-up; its console: $state/console.log"
            tail -n 20 "$state/console.log" >&2
            wait "$NSPAWN_PID" 2>/dev/null || true
            NSPAWN_PID=''
            return 1
        fi
        sleep 0.1
    done
    if [[ -z $NSPAWN_PID1 ]]; then
        nspawn_log "no systemd became the container's PID 1 within 60 s"
        return 1
    fi
    echo "$NSPAWN_PID1" >"$state/pid1"
}

# in_container CMD...: runs CMD in the container's namespaces (as its root user), with a clean
# environment and a time limit; its exit status is CMD's (124 on timeout).
in_container() {
    [[ -n $NSPAWN_PID1 ]] || { nspawn_log "no container is running"; return 125; }
    timeout --kill-after=5 "$NSPAWN_CMD_TIMEOUT" \
        nsenter --target "$NSPAWN_PID1" --all \
        env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        LANG=C.UTF-8 TERM=dumb SYSTEMD_PAGER='' SYSTEMD_COLORS=0 "$@"
}

# nspawn_wait_running [SECONDS]: waits for the boot to finish (running, or degraded when some
# unit failed, which the tests report themselves). Prints the state reached.
nspawn_wait_running() {
    local limit=${1:-90} state='' start=$SECONDS
    while ((SECONDS - start < limit)); do
        nspawn_alive || { nspawn_log "the container stopped while booting"; return 1; }
        state=$(NSPAWN_CMD_TIMEOUT=10 in_container systemctl is-system-running 2>/dev/null) || true
        case $state in
        running | degraded) echo "$state"; return 0 ;;
        esac
        sleep 0.5
    done
    nspawn_log "the container did not finish booting within $limit s (state: ${state:-unknown})"
    return 1
}

# Waits up to $1 seconds for the nspawn process to exit; true if it did.
_nspawn_wait_exit() {
    local i
    for ((i = 0; i < $1 * 10; i++)); do
        nspawn_alive || return 0
        sleep 0.1
    done
    ! nspawn_alive
}

# nspawn_poweroff [SECONDS]: powers the container off, escalating by PID: systemctl poweroff,
# then SIGTERM to nspawn (which asks the container's systemd to halt), then SIGKILL to the
# container's PID 1 (which ends every process of its PID namespace) and to nspawn. Returns
# non-zero if a clean power-off did not happen in time. Idempotent.
nspawn_poweroff() {
    local limit=${1:-30} clean=0
    if nspawn_alive; then
        NSPAWN_CMD_TIMEOUT=10 in_container systemctl poweroff --no-block >/dev/null 2>&1 || true
        if ! _nspawn_wait_exit "$limit"; then
            clean=1
            nspawn_log "the container did not power off within $limit s: SIGTERM to systemd-nspawn ($NSPAWN_PID)"
            kill -TERM "$NSPAWN_PID" 2>/dev/null || true
            if ! _nspawn_wait_exit 10; then
                nspawn_log "still running: SIGKILL to the container's PID 1 ($NSPAWN_PID1) and systemd-nspawn ($NSPAWN_PID)"
                [[ -n $NSPAWN_PID1 ]] && kill -KILL "$NSPAWN_PID1" 2>/dev/null
                _nspawn_wait_exit 5 || kill -KILL "$NSPAWN_PID" 2>/dev/null || true
            fi
        fi
    fi
    if [[ -n $NSPAWN_PID ]]; then
        wait "$NSPAWN_PID" 2>/dev/null || true
    fi
    NSPAWN_PID='' NSPAWN_PID1=''
    [[ -n $NSPAWN_STATE ]] && rm -f "$NSPAWN_STATE/nspawn.pid" "$NSPAWN_STATE/pid1"
    return "$clean"
}

# nspawn_reap_stale STATE_DIR: a run that was SIGKILLed may have left its container running.
# Kills it only if the recorded PID is still a systemd-nspawn process on a root inside
# STATE_DIR, so an unrelated process that got the PID back is never touched.
nspawn_reap_stale() {
    local state=$1 pid i
    [[ -f $state/nspawn.pid ]] || return 0
    pid=$(<"$state/nspawn.pid")
    if [[ $pid =~ ^[0-9]+$ && $(cat "/proc/$pid/comm" 2>/dev/null) == systemd-nspawn ]] &&
        tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "-D $(realpath "$state")/"; then
        nspawn_log "killing the container a previous run left running (systemd-nspawn PID $pid)"
        if [[ -f $state/pid1 ]]; then
            local pid1
            pid1=$(<"$state/pid1")
            [[ $pid1 =~ ^[0-9]+$ && $(cat "/proc/$pid1/comm" 2>/dev/null) == systemd ]] &&
                kill -KILL "$pid1" 2>/dev/null
        fi
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < 100; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$state/nspawn.pid" "$state/pid1"
}

# in_root ROOT CMD...: CMD chrooted into ROOT, which must not be booted, in private mount and
# PID namespaces with /proc mounted (unmounted with the namespace). systemd is not running
# there, as during an image build or a debootstrap: maintainer scripts must cope with that.
in_root() {
    local r=$1
    shift
    timeout --kill-after=5 "$NSPAWN_CMD_TIMEOUT" \
        unshare --mount --pid --fork --mount-proc="$r/proc" \
        chroot "$r" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive "$@"
}

# ---------------------------------------------------------------------------------------------
# Shared by the two tests: check reporting, and the fixture pinning service on the host.

CHECKS_PASSED=0
CHECKS_FAILED=0
check_pass() { printf 'PASS  %s: %s\n' "$1" "$2"; CHECKS_PASSED=$((CHECKS_PASSED + 1)); }
check_fail() { printf 'FAIL  %s: %s\n' "$1" "$2"; CHECKS_FAILED=$((CHECKS_FAILED + 1)); }
check_info() { printf 'INFO  %s\n' "$*"; }

FIXTURE_PID=''
FIXTURE_PORT=''
FIXTURE_CA=''
FIXTURE_ROUTES=''
FIXTURE_PUBKEY=''

# fixture_start DIR LOG: the fixture pinning service (Tests/Fixtures/pinserver.py) on the host's
# loopback, with its CA and keys in DIR/ca (kept while valid) and its routes in DIR/routes
# (recreated). The container shares the host's network, so it reaches https://localhost:PORT.
fixture_start() {
    local dir=$1 log=$2 i top old
    top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
    FIXTURE_CA=$dir/ca
    FIXTURE_ROUTES=$dir/routes
    # One that a killed earlier run left behind: only if that PID still runs pinserver.py on
    # these routes.
    if [[ -f $dir/pid ]]; then
        old=$(<"$dir/pid")
        if [[ $old =~ ^[0-9]+$ ]] && tr '\0' ' ' <"/proc/$old/cmdline" 2>/dev/null |
            grep -qF -- "pinserver.py --routes $FIXTURE_ROUTES "; then
            nspawn_log "stopping the fixture service a previous run left running (PID $old)"
            kill -TERM "$old" 2>/dev/null
            sleep 0.5
            kill -KILL "$old" 2>/dev/null
        fi
        rm -f "$dir/pid"
    fi
    rm -rf "$FIXTURE_ROUTES" "$dir/port" "$dir/http-port"
    mkdir -p "$FIXTURE_ROUTES"
    "$top/Tests/Fixtures/make-ca.sh" "$FIXTURE_CA" >/dev/null || return 1
    FIXTURE_PUBKEY=$(<"$FIXTURE_CA/signing.pub.b64")
    python3 "$top/Tests/Fixtures/pinserver.py" --routes "$FIXTURE_ROUTES" \
        --cert "$FIXTURE_CA/server.pem" --key "$FIXTURE_CA/server.key" \
        --port 0 --port-file "$dir/port" --http-port-file "$dir/http-port" </dev/null 2>"$log" &
    FIXTURE_PID=$!
    echo "$FIXTURE_PID" >"$dir/pid"
    for ((i = 0; i < 100; i++)); do
        [[ -s $dir/port ]] && break
        kill -0 "$FIXTURE_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [[ ! -s $dir/port ]]; then
        tail -n 20 "$log" >&2
        return 1
    fi
    FIXTURE_PORT=$(<"$dir/port")
}

# fixture_stop: SIGTERM to the fixture service, SIGKILL after 5 s; by PID. Idempotent.
fixture_stop() {
    local i
    [[ -n $FIXTURE_PID ]] || return 0
    kill -TERM "$FIXTURE_PID" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        kill -0 "$FIXTURE_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$FIXTURE_PID" 2>/dev/null || true
    wait "$FIXTURE_PID" 2>/dev/null || true
    FIXTURE_PID=''
    rm -f "$FIXTURE_ROUTES/../pid"
}

# A made-up pin: base64 of 32 random bytes (the daemon never sees the certificate itself).
fixture_fingerprint() { head -c 32 /dev/urandom | base64 -w0; }

# fixture_route PATH MODE DELAY FINGERPRINT...: serves GET /PATH from routes/PATH.json, a list
# with one pin per FINGERPRINT (names pin1.test, pin2.test... expiring in 200, 201... days),
# signed with the fixture's key in MODE (challenge or static), answered after DELAY seconds.
# Written atomically; the service re-reads it on every request.
fixture_route() {
    local path=$1 mode=$2 delay=$3 entries='' n=0 fp now
    shift 3
    now=$(date +%s)
    for fp in "$@"; do
        n=$((n + 1))
        entries+="${entries:+, }{\"name\": \"pin$n.test\", \"fingerprint\": \"$fp\", \"expires\": $((now + (199 + n) * 86400))}"
    done
    mkdir -p "$(dirname "$FIXTURE_ROUTES/$path")"
    cat >"$FIXTURE_ROUTES/$path.json.tmp" <<JSON
{"mode": "$mode", "signing_key": "$FIXTURE_CA/signing.key", "delay": $delay, "fingerprints": [$entries]}
JSON
    mv -f "$FIXTURE_ROUTES/$path.json.tmp" "$FIXTURE_ROUTES/$path.json"
}

# fixture_store_toml ID PATH MODE CA_FILE: a stores.d/ drop-in for store ID served at /PATH.
fixture_store_toml() {
    cat <<TOML
# Written by the test: store $1 on the fixture pinning service on the host's loopback.
[stores.$1]
url = "https://localhost:$FIXTURE_PORT/$2"
public_key = "$FIXTURE_PUBKEY"
mode = "$3"
ca_file = "$4"
TOML
}

# fixture_requests PATH: how many requests the service has seen for /PATH (any query).
fixture_requests() {
    [[ -f $FIXTURE_ROUTES/requests.log ]] || { echo 0; return; }
    python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) if l.strip() and json.loads(l)["path"].split("?")[0] == "/" + sys.argv[2]))' \
        "$FIXTURE_ROUTES/requests.log" "$1"
}

# cache_has_pins FILE FINGERPRINT...: FILE is a cache document holding every FINGERPRINT;
# prints what is wrong otherwise.
cache_has_pins() {
    python3 - "$@" <<'PY'
import json, sys
path, want = sys.argv[1], sys.argv[2:]
try:
    doc = json.load(open(path))
except Exception as e:
    print(f"not a JSON document: {e}"); sys.exit(1)
have = {e.get("fingerprint") for e in doc.get("fingerprints", [])}
missing = [fp for fp in want if fp not in have]
if missing:
    print(f"{len(missing)} of {len(want)} pins missing (the file has {len(have)})"); sys.exit(1)
meta = doc.get("pinkeeper", {})
print(f"{len(have)} pins, store {meta.get('store')!r}, nextUpdate {meta.get('nextUpdate')}")
PY
}

# The EXIT/INT/TERM handling both container tests share: finish the container (below), stop the
# fixture service. Usage: container_test_traps NAME (after $logs and $root are set).
container_test_traps() {
    _ct_name=$1
    _ct_cleaning=0
    trap _container_test_cleanup EXIT
    trap 'echo "$_ct_name: interrupted" >&2; exit 130' INT
    trap 'echo "$_ct_name: terminated" >&2; exit 143' TERM
}

_container_test_cleanup() {
    ((_ct_cleaning)) && return
    _ct_cleaning=1
    trap '' INT TERM
    container_finish
    fixture_stop
    echo "$_ct_name: logs in $logs"
}

# container_finish: keeps the container's journal in $logs, powers the container off and removes
# the scratch root $root (unless KEEP_ROOT=1). Idempotent; a test that boots a second root calls
# it before setting $root and $logs to the next ones.
container_finish() {
    if nspawn_alive; then
        NSPAWN_CMD_TIMEOUT=20 in_container journalctl -b --no-pager -o short-precise >"$logs/journal.txt" 2>&1 || true
        if nspawn_poweroff 30; then
            echo "$_ct_name: container powered off"
        else
            echo "$_ct_name: the container had to be killed"
        fi
    fi
    if [[ ${KEEP_ROOT:-} == 1 ]]; then
        [[ -d $root ]] && echo "$_ct_name: root kept in $root"
    elif [[ -d $root ]] && ! grep -qF " $root" /proc/self/mountinfo; then
        rm -rf --one-file-system "$root"
    fi
}

# Boots $root (scratch files in $work), waits for systemd and records the "boot" check; a
# container that does not boot ends the test (die). The console log is kept in $logs.
container_boot_checked() {
    nspawn_boot "$root" "$work" || die "the container did not boot; console: $work/console.log"
    echo "systemd-nspawn PID $NSPAWN_PID, container PID 1 = host PID $NSPAWN_PID1"
    if state=$(nspawn_wait_running 90); then
        check_pass boot "systemctl is-system-running: $state"
        [[ $state == degraded ]] &&
            check_info "failed units: $(in_container systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')"
    else
        check_fail boot "the container's systemd did not finish booting"
        die "cannot go on without a booted container; console: $work/console.log"
    fi
    cp "$work/console.log" "$logs/console.log" 2>/dev/null
}
