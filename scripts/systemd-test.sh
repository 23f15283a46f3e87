#!/usr/bin/env bash
# `make systemd-test`: pinkeeper under a real systemd (pinkeeper(8), SYSTEMD INTEGRATION).
#
# Boots a scratch copy of a cached minimal Debian 12 root (scripts/make-rootfs.sh) with
# systemd-nspawn -b, installs the release binary, systemd/pinkeeper.service and
# systemd/pinkeeper.sysusers into it, points a store at the fixture pinning service running on
# the host's loopback (the container shares the host's network), and proves with the real
# manager: start returns only after READY; StatusText; the sandbox lets the daemon fetch and
# publish a cache file other users can read; reload; a probe of the fixture's own TLS server
# (unpinned, then pinned: journal entries and status); pinkeeper-reload@.path reloads a consumer
# when a store's file is renamed into place; the watchdog restarts a SIGSTOPped daemon;
# journal entries carry the documented fields, and a hostile entry name is logged escaped;
# systemd-analyze security rates the loaded unit
# at most 1.5; stop is clean. Each check prints PASS or FAIL
# with a reason; the script exits 1 if any check failed. systemd never runs on the host itself.
#
# Files: .build/systemd-test/ (logs/ kept after the run; root/ removed unless KEEP_ROOT=1).
# Environment: DEBIAN_MIRROR and PINKEEPER_ROOTFS_DIR (see make-rootfs.sh), KEEP_ROOT=1,
#   SYSTEMD_TEST_OMIT=unit|binary|sysusers  leave that file out, to see the checks fail.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
top=$(pwd -P)
# shellcheck source=scripts/nspawn.sh
source scripts/nspawn.sh

work=$top/.build/systemd-test
root=$work/root
logs=$work/logs
bin=$top/.build/release/pinkeeper
store=fixture           # challenge mode, at start
store2=fixture-static   # static mode, added by the reload
store3=fixture-probed   # probes the fixture's own TLS server, added by a second reload
delay=2                 # the fixture answers the first request after this many seconds
omit=${SYSTEMD_TEST_OMIT:-}

die() { echo "systemd-test: $*" >&2; exit 2; }
step() { printf '\n== %s  (%d s)\n' "$*" "$((SECONDS - t_start))"; }

[[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap, systemd-nspawn)"
[[ -x $bin ]] || die "$bin is missing: run make release (or make systemd-test)"
case $omit in '' | unit | binary | sysusers) ;; *) die "SYSTEMD_TEST_OMIT must be unit, binary or sysusers" ;; esac
t_start=$SECONDS

# ------------------------------------------------------------------ clean-up, first
container_test_traps systemd-test

mkdir -p "$work"
nspawn_reap_stale "$work"
rm -rf "$logs"
mkdir -p "$logs"

# ------------------------------------------------------------------ 1. a clean root
step "host tools and the cached Debian 12 root"
scripts/install-container-deps.sh || die "could not install the host tools"
scripts/make-rootfs.sh --copy "$root" >/dev/null || die "no root (make-rootfs.sh says why above)"

# ------------------------------------------------------------------ 2. fixture service
step "fixture pinning service on the host's loopback"
fixture_start "$work/fixture" "$logs/pinserver.log" || die "the fixture service did not start; log: $logs/pinserver.log"
fp1=$(fixture_fingerprint) fp2=$(fixture_fingerprint) fp3=$(fixture_fingerprint)
fixture_route app/init challenge "$delay" "$fp1" "$fp2"
fixture_route static static 0 "$fp3"
echo "https://localhost:$FIXTURE_PORT (PID $FIXTURE_PID); store $store answers after $delay s"

# ------------------------------------------------------------------ 3. install into the root
step "install pinkeeper into the root (not booted)"
# /bin/kill for ExecReload=, from the root's apt cache (no network).
in_root "$root" apt-get install -y -qq --no-download --no-install-recommends procps >"$logs/procps.log" 2>&1 ||
    die "could not install procps in the root; log: $logs/procps.log"
[[ $omit == binary ]] || install -D -m 0755 "$bin" "$root/usr/bin/pinkeeper"
[[ $omit == unit ]] || install -D -m 0644 systemd/pinkeeper.service "$root/usr/lib/systemd/system/pinkeeper.service"
[[ $omit == sysusers ]] || install -D -m 0644 systemd/pinkeeper.sysusers "$root/usr/lib/sysusers.d/pinkeeper.conf"
for t in pinkeeper-reload@.path pinkeeper-reload@.service; do
    install -D -m 0644 "systemd/$t" "$root/usr/lib/systemd/system/$t"
done
install -D -m 0644 etc/pinkeeper/pinkeeper.toml "$root/etc/pinkeeper/pinkeeper.toml"
install -D -m 0644 etc/pinkeeper/stores.d/README "$root/etc/pinkeeper/stores.d/README"
install -D -m 0644 "$FIXTURE_CA/ca.pem" "$root/etc/pinkeeper/test-ca.pem"
fixture_store_toml "$store" "app/init?appName=$store" challenge /etc/pinkeeper/test-ca.pem \
    >"$root/etc/pinkeeper/stores.d/$store.toml"
# An on_change hook, run by the daemon inside the unit's sandbox; what it prints goes to the journal.
mkdir -p "$root/usr/local/bin"
printf '#!/bin/sh\necho "hook for $PINKEEPER_STORE: $PINKEEPER_PINS pins in $PINKEEPER_CACHE_FILE"\n' >"$root/usr/local/bin/pins-hook"
chmod 0755 "$root/usr/local/bin/pins-hook"
echo 'on_change = ["/usr/local/bin/pins-hook"]' >>"$root/etc/pinkeeper/stores.d/$store.toml"
[[ -n $omit ]] && echo "left out on purpose (SYSTEMD_TEST_OMIT): $omit"

# ------------------------------------------------------------------ 4. boot
step "boot the root with systemd-nspawn"
container_boot_checked

show() { in_container systemctl show pinkeeper --value -p "$1" 2>/dev/null; }
journal_tail() { in_container journalctl -u pinkeeper --no-pager -o cat -n "${1:-5}" 2>/dev/null | sed 's/^/      | /'; }

# ------------------------------------------------------------------ 5. sysusers
step "systemd-sysusers"
in_container systemd-sysusers >"$logs/sysusers.log" 2>&1
if pw=$(in_container getent passwd pinkeeper); then
    check_pass sysusers "user created: $pw"
else
    check_fail sysusers "no user pinkeeper after systemd-sysusers: $(tr '\n' ' ' <"$logs/sysusers.log")"
fi

# ------------------------------------------------------------------ 6. start, READY
step "systemctl enable, then start pinkeeper"
# Enabled, as a package leaves it: multi-user.target's reference also keeps the unit loaded
# once it is stopped, so that its exit status can still be read then.
in_container systemctl enable pinkeeper >"$logs/enable.log" 2>&1 ||
    check_fail enable "systemctl enable pinkeeper: $(tr '\n' ' ' <"$logs/enable.log")"
started=0
t0=$(date +%s%N)
in_container systemctl start pinkeeper >"$logs/start.log" 2>&1
rc=$?
t1=$(date +%s%N)
# Observed the moment start returned: the cache file must already be there (READY comes after
# the first attempt), and the unit active.
cache_at_return=no
[[ -f $root/var/cache/pinkeeper/$store.json ]] && cache_at_return=yes
active=$(show ActiveState)/$(show SubState)
took=$(((t1 - t0) / 1000000))
exec_start=$(show ExecMainStartTimestampMonotonic)
active_enter=$(show ActiveEnterTimestampMonotonic)
ready_after=$(((${active_enter:-0} - ${exec_start:-0}) / 1000))
in_container systemctl status pinkeeper --no-pager -l >"$logs/status-after-start.txt" 2>&1
if ((rc != 0)); then
    check_fail start "systemctl start exited $rc: $(tr '\n' ' ' <"$logs/start.log")"
elif [[ $active != active/running ]]; then
    check_fail start "state after start is $active, not active/running"
elif ! grep -q 'Active: active (running)' "$logs/status-after-start.txt"; then
    check_fail start "systemctl status does not say 'active (running)'"
elif ((ready_after < delay * 1000 - 100)); then
    check_fail start "active ${ready_after} ms after exec, but the first fetch takes ${delay} s: READY came too early"
elif [[ $cache_at_return != yes ]]; then
    check_fail start "no /var/cache/pinkeeper/$store.json when start returned: READY before the first attempt"
else
    started=1
    detail="returned in $took ms; exec → active (READY) took $ready_after ms, covering the fixture's ${delay} s answer"
    check_pass start "$detail; cache already published; $(grep -m1 'Active:' "$logs/status-after-start.txt" | sed 's/^ *//')"
fi
((started)) || journal_tail 15

# ------------------------------------------------------------------ 7. StatusText
status_text=$(show StatusText)
if [[ $status_text =~ ^1\ store:\ 1\ fresh\;\ next\ update\ in\ .+ ]]; then
    check_pass status-text "StatusText=$status_text"
else
    check_fail status-text "StatusText='$status_text', expected '1 store: 1 fresh; next update in …'"
fi

# ------------------------------------------------------------------ 8. the published cache
step "the published cache, through the sandbox"
cache=/var/cache/pinkeeper/$store.json
if ! pins=$(cache_has_pins "$root$cache" "$fp1" "$fp2" 2>&1); then
    check_fail cache "$cache: ${pins:-missing}"
else
    check_pass cache "$cache: $pins"
fi
owner=$(in_container stat -c '%U:%G %a' "$cache" 2>&1)
dir_owner=$(in_container stat -c '%U:%G %a' /var/cache/pinkeeper 2>&1)
if [[ $owner == "pinkeeper:pinkeeper 644" && $dir_owner == "pinkeeper:pinkeeper 755" ]]; then
    check_pass cache-mode "file $owner, directory $dir_owner"
else
    check_fail cache-mode "file '$owner', directory '$dir_owner'; expected pinkeeper:pinkeeper 644 and 755"
fi
if as_nobody=$(in_container setpriv --reuid=nobody --regid=nogroup --clear-groups sha256sum "$cache" 2>&1) &&
    [[ ${as_nobody%% *} == "$(sha256sum <"$root$cache" | cut -d' ' -f1)" ]]; then
    check_pass cache-readable "user nobody reads the same bytes (sha256 ${as_nobody:0:16}…)"
else
    check_fail cache-readable "user nobody cannot read $cache: $as_nobody"
fi

# ------------------------------------------------------------------ 9. reload
step "systemctl reload pinkeeper (adds store $store2)"
fixture_route app/init challenge 0 "$fp1" "$fp2"  # no more delay from here on
pid_before=$(show MainPID)
fixture_store_toml "$store2" static static /etc/pinkeeper/test-ca.pem >"$root/etc/pinkeeper/stores.d/$store2.toml"
t0=$(date +%s%N)
in_container systemctl reload pinkeeper >"$logs/reload.log" 2>&1
rc=$?
took=$((($(date +%s%N) - t0) / 1000000))
for ((i = 0; rc == 0 && i < 100; i++)); do  # the added store is fetched at once
    [[ -f $root/var/cache/pinkeeper/$store2.json && $(show StatusText) == "2 stores: 2 fresh"* ]] && break
    sleep 0.1
done
active=$(show ActiveState)/$(show SubState)
if ((rc != 0)); then
    check_fail reload "systemctl reload exited $rc: $(tr '\n' ' ' <"$logs/reload.log")"
    journal_tail 4
elif [[ $active != active/running || $(show MainPID) != "$pid_before" ]]; then
    check_fail reload "after reload: $active, MainPID $(show MainPID) (was $pid_before)"
elif ! pins=$(cache_has_pins "$root/var/cache/pinkeeper/$store2.json" "$fp3" 2>&1); then
    check_fail reload "the store added by the reload was not published: ${pins:-no file}"
else
    check_pass reload \
        "completed in $took ms, still active (running) as PID $pid_before; added store published ($pins); StatusText=$(show StatusText)"
fi

# ------------------------------------------------------------------ 9b. probes
step "probes: the certificate the fixture serves, against store $store3's pins (through the sandbox)"
# The fixture's own TLS server is the probed host: reached as "localhost" through
# probe_connect_to, trusted through probe_ca_file. Its list first pins another certificate
# for localhost (unpinned), then also the served one (pinned after SIGUSR1's update).
leaf_fp=$(openssl x509 -in "$FIXTURE_CA/server.pem" -outform DER | openssl dgst -sha256 -binary | base64 -w0)
probe_route() {  # FINGERPRINT...: a challenge list pinning each for "localhost"
    local entries='' fp
    for fp in "$@"; do
        entries+="${entries:+, }{\"name\": \"localhost\", \"fingerprint\": \"$fp\", \"expires\": $(($(date +%s) + 200 * 86400))}"
    done
    printf '{"mode": "challenge", "signing_key": "%s", "fingerprints": [%s]}\n' "$FIXTURE_CA/signing.key" "$entries" \
        >"$FIXTURE_ROUTES/probed.json.tmp"
    mv -f "$FIXTURE_ROUTES/probed.json.tmp" "$FIXTURE_ROUTES/probed.json"
}
probe_outcome() {  # the recorded outcome of the one target, or nothing
    python3 -c 'import json, sys
try: print(json.load(open(sys.argv[1]))["targets"][0]["outcome"])
except Exception: pass' "$root/var/lib/pinkeeper/$store3.probes.json"
}
wait_outcome() {  # OUTCOME: up to 30 s
    local i
    for ((i = 0; i < 300; i++)); do [[ $(probe_outcome) == "$1" ]] && return 0; sleep 0.1; done
    return 1
}
probe_journal() {  # MESSAGE_ID PRIORITY OUTCOME: the entry's fields, checked
    in_container journalctl -u pinkeeper "MESSAGE_ID=$1" "PINKEEPER_STORE=$store3" -o json --no-pager 2>/dev/null |
        python3 -c 'import json, sys
want = {"PRIORITY": sys.argv[1], "PINKEEPER_TARGET": "localhost:443", "PINKEEPER_OUTCOME": sys.argv[2],
        "PINKEEPER_LEAF_FINGERPRINT": sys.argv[3]}
entries = [json.loads(l) for l in sys.stdin if l.startswith("{")]
if len(entries) != 1: print(f"{len(entries)} entries"); sys.exit(1)
bad = [f"{k}={entries[0].get(k)!r}" for k, v in want.items() if entries[0].get(k) != v]
if bad: print("wrong " + ", ".join(bad)); sys.exit(1)
print("PRIORITY=%s PINKEEPER_OUTCOME=%s PINKEEPER_LEAF_EXPIRES=%s"
      % (entries[0]["PRIORITY"], sys.argv[2], entries[0].get("PINKEEPER_LEAF_EXPIRES")))' \
            "$2" "$3" "$leaf_fp"
}
probe_route "$(fixture_fingerprint)"
{
    fixture_store_toml "$store3" probed challenge /etc/pinkeeper/test-ca.pem
    printf 'probe = ["localhost"]\nprobe_connect_to = { "localhost" = "127.0.0.1:%s" }\n' "$FIXTURE_PORT"
    printf 'probe_ca_file = "/etc/pinkeeper/test-ca.pem"\n'
} >"$root/etc/pinkeeper/stores.d/$store3.toml"
in_container systemctl reload pinkeeper >"$logs/reload-probe.log" 2>&1
if ! wait_outcome unpinned; then
    check_fail probe "after the reload: outcome '$(probe_outcome)', expected unpinned"
    journal_tail 6
elif ! unpinned=$(probe_journal 8b96f001b28a41cd9c3b4b530a66d0ff 3 unpinned); then
    check_fail probe "probe-unpinned journal entry: $unpinned"
elif in_container pinkeeper status --store "$store3" >"$logs/status-unpinned.txt" 2>&1; then
    check_fail probe "pinkeeper status exited 0 with an unpinned probe"
else
    probe_route "$(fixture_fingerprint)" "$leaf_fp"
    in_container systemctl kill --kill-who=main --signal=SIGUSR1 pinkeeper
    if ! wait_outcome pinned; then
        check_fail probe "after the list pinned the served certificate: outcome '$(probe_outcome)', expected pinned"
        journal_tail 6
    elif ! pinned=$(probe_journal 191e467d9bf74e6e87ad993ba2a7887a 6 pinned); then
        check_fail probe "probe-pinned journal entry: $pinned"
    elif ! in_container pinkeeper status --store "$store3" >"$logs/status-pinned.txt" 2>&1; then
        check_fail probe "pinkeeper status exits non-zero once the probe is pinned: $(tr '\n' ' ' <"$logs/status-pinned.txt")"
    else
        detail="unpinned ($unpinned; status exit 1), then pinned after the list update ($pinned; status exit 0)"
        check_pass probe "$detail; $(grep -m1 'localhost:443' "$logs/status-pinned.txt" | tr -s ' ')"
    fi
fi

# ------------------------------------------------------------------ 9c. the reload path unit
step "pinkeeper-reload@$store.path reloads a consumer when the store's file is renamed into place"
# A stand-in consumer whose ExecReload= counts reloads; the path unit names it in reload.d/.
mkdir -p "$root/etc/pinkeeper/reload.d"
printf 'RELOAD_UNITS=pins-consumer.service\n' >"$root/etc/pinkeeper/reload.d/$store.conf"
cat >"$root/etc/systemd/system/pins-consumer.service" <<'UNIT'
[Service]
ExecStart=sleep infinity
ExecReload=sh -c 'echo reloaded >> /run/pins-consumer.reloads'
UNIT
in_container systemctl daemon-reload
in_container systemctl start pins-consumer.service
in_container systemctl enable --now "pinkeeper-reload@$store.path" >"$logs/reload-path.log" 2>&1
reloads() { in_container cat /run/pins-consumer.reloads 2>/dev/null | wc -l; }
inode_before=$(stat -c %i "$root/var/cache/pinkeeper/$store.json" 2>/dev/null)
before=$(reloads)
fixture_route app/init challenge 0 "$fp1" "$fp2" "$(fixture_fingerprint)"  # a changed list
in_container systemctl kill --kill-who=main --signal=SIGUSR1 pinkeeper  # update every store now
for ((i = 0; i < 100; i++)); do
    (($(reloads) > before)) && break
    sleep 0.1
done
inode_after=$(stat -c %i "$root/var/cache/pinkeeper/$store.json" 2>/dev/null)
path_state=$(in_container systemctl show "pinkeeper-reload@$store.path" --value -p ActiveState)
ran=$(in_container journalctl -u "pinkeeper-reload@$store.service" --no-pager -o cat 2>/dev/null | tr '\n' ';')
if [[ $path_state != active ]]; then
    check_fail reload-path "pinkeeper-reload@$store.path is $path_state: $(tr '\n' ' ' <"$logs/reload-path.log")"
elif [[ -z $inode_before || $inode_before == "$inode_after" ]]; then
    check_fail reload-path "the cache file kept inode ${inode_before:-none}: no rename into place happened"
elif (($(reloads) <= before)); then
    check_fail reload-path "pins-consumer.service was not reloaded within 10 s of the publish; journal: ${ran:-nothing}"
else
    detail="$store.json renamed into place (inode $inode_before → $inode_after)"
    check_pass reload-path "$detail; pins-consumer.service reloaded ($(reloads) time(s)); journal: ${ran%;}"
fi
in_container systemctl stop "pinkeeper-reload@$store.path" pins-consumer.service

# The on_change hook ran under the unit's sandbox for the publishes above (first fetch, changed list).
hook_entries=$(in_container journalctl -u pinkeeper "PINKEEPER_STORE=$store" MESSAGE_ID=989bb80630fe4ce0a6de2fdccc3e008c \
    -o json --no-pager 2>/dev/null | python3 -c 'import json, sys
for line in sys.stdin:
    if line.startswith("{"):
        e = json.loads(line)
        print(e.get("PINKEEPER_EXIT_STATUS"), e.get("PINKEEPER_STDOUT"), sep=" | ")')
if [[ $hook_entries == *"0 | hook for $store: "*" pins in /var/cache/pinkeeper/$store.json\n"* ]]; then
    check_pass hook "hook-finished entries (exit status | stdout): $(tr '\n' ';' <<<"$hook_entries")"
else
    check_fail hook "no hook-finished entry with the hook's output for $store: ${hook_entries:-none}; $(journal_tail 5)"
fi

# ------------------------------------------------------------------ 10. watchdog
step "watchdog: WatchdogSec=4s, then SIGSTOP the daemon"
mkdir -p "$root/etc/systemd/system/pinkeeper.service.d"
printf '[Service]\nWatchdogSec=4s\n' >"$root/etc/systemd/system/pinkeeper.service.d/50-watchdog-test.conf"
in_container systemctl daemon-reload
in_container systemctl restart pinkeeper >"$logs/restart.log" 2>&1
wd=$(show WatchdogUSec)
pid0=$(show MainPID)
n0=$(show NRestarts)
results=''
if [[ $wd != 4s || $(show ActiveState) != active ]]; then
    check_fail watchdog "after the drop-in and restart: WatchdogUSec=$wd, $(show ActiveState)"
else
    in_container systemctl kill --kill-who=main --signal=SIGSTOP pinkeeper
    stopped=$(in_container awk '/^State:/ {print $2 $3}' "/proc/$pid0/status")
    t0=$SECONDS
    restarted=0
    while ((SECONDS - t0 < 40)); do
        r=$(show Result)
        [[ " $results " == *" $r "* ]] || results+=" $r"
        if (($(show NRestarts) > n0)) && [[ $(show MainPID) != "$pid0" && $(show MainPID) != 0 &&
            $(show ActiveState)/$(show SubState) == active/running ]]; then
            restarted=1
            break
        fi
        sleep 0.25
    done
    elapsed=$((SECONDS - t0))
    wd_journal=$(in_container journalctl -u pinkeeper --no-pager -o cat 2>/dev/null |
        grep -E "Watchdog timeout|Failed with result 'watchdog'" | tr '\n' ';')
    if ((!restarted)); then
        check_fail watchdog "PID $pid0 (state $stopped) not restarted within 40 s; NRestarts=$(show NRestarts), results seen:$results"
    elif [[ $wd_journal != *"Failed with result 'watchdog'"* && " $results " != *" watchdog "* ]]; then
        check_fail watchdog "restarted, but not by the watchdog (results seen:$results)"
    else
        detail="PID $pid0 stopped ($stopped); restarted after ${elapsed} s as PID $(show MainPID), NRestarts $n0 → $(show NRestarts)"
        check_pass watchdog "$detail; Result seen:$results; journal: ${wd_journal%;}"
    fi
fi

# ------------------------------------------------------------------ 11. the journal
step "journalctl -u pinkeeper PINKEEPER_STORE=$store -o json"
in_container journalctl -u pinkeeper "PINKEEPER_STORE=$store" -o json --no-pager >"$logs/journal-$store.json" 2>&1
if verdict=$(python3 - "$logs/journal-$store.json" "$store" <<'PY'
import json, re, sys
path, store = sys.argv[1], sys.argv[2]
entries = []
for line in open(path):
    line = line.strip()
    if line.startswith("{"):
        entries.append(json.loads(line))
if not entries:
    print("no entries"); sys.exit(1)
ok = [e for e in entries if e.get("MESSAGE_ID") == "fea0a00742744d54a3c895f02958cb80"]
if not ok:
    print(f"{len(entries)} entries, none with the update-succeeded MESSAGE_ID"); sys.exit(1)
e = ok[0]
want = {"PINKEEPER_STORE": lambda v: v == store, "PINKEEPER_RESULT": lambda v: v == "ok",
        "PINKEEPER_PINS": lambda v: v.isdigit() and int(v) >= 1,
        "PINKEEPER_NEXT_UPDATE": lambda v: re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", v) is not None,
        "SYSLOG_IDENTIFIER": lambda v: v == "pinkeeper", "PRIORITY": lambda v: v == "6",
        "MESSAGE": lambda v: bool(v), "CODE_FILE": lambda v: bool(v), "CODE_LINE": lambda v: v.isdigit(),
        "CODE_FUNC": lambda v: bool(v)}
bad = [k for k, f in want.items() if not isinstance(e.get(k), str) or not f(e[k])]
if bad:
    print("update-succeeded entry lacks or has wrong " + ", ".join(f"{k}={e.get(k)!r}" for k in bad)); sys.exit(1)
print(f"{len(entries)} entries ({len(ok)} update-succeeded); " +
      " ".join(f"{k}={e[k]}" for k in ("MESSAGE_ID", "PRIORITY", "SYSLOG_IDENTIFIER",
                                         "PINKEEPER_RESULT", "PINKEEPER_PINS", "PINKEEPER_NEXT_UPDATE")))
PY
); then
    check_pass journal "$verdict"
else
    check_fail journal "${verdict:-could not read the journal}"
fi

# ------------------------------------------------------------------ 11b. a hostile entry name
step "a static list whose unsigned entry has a hostile name, added by a reload"
# The name reaches the failure reason; in the journal it must be escaped text, never a second
# line, a NUL or an escape sequence (docs/journal.md).
hostile=fixture-hostile
python3 - "$FIXTURE_ROUTES/hostile.json" "$FIXTURE_CA/signing.key" <<'PY'
import base64, json, os, sys, time
path, key = sys.argv[1], sys.argv[2]
entry = {"name": "evil\nINFO: forged\u0000x\u001b[2J", "fingerprint": base64.b64encode(bytes([7]) * 32).decode(),
         "expires": int(time.time()) + 200 * 86400, "signature": ""}
with open(path + ".tmp", "w") as f:
    json.dump({"mode": "static", "signing_key": key, "fingerprints": [entry]}, f)
os.replace(path + ".tmp", path)
PY
fixture_store_toml "$hostile" hostile static /etc/pinkeeper/test-ca.pem >"$root/etc/pinkeeper/stores.d/$hostile.toml"
in_container systemctl reload pinkeeper >"$logs/reload-hostile.log" 2>&1
for ((i = 0; i < 100; i++)); do  # the added store is fetched at once, and fails
    in_container journalctl -u pinkeeper "PINKEEPER_STORE=$hostile" -o json --no-pager >"$logs/journal-$hostile.json" 2>&1
    grep -q 41ed2e1a9bbd459d99ebcaea1209e405 "$logs/journal-$hostile.json" && break
    sleep 0.1
done
in_container journalctl -u pinkeeper -o json --no-pager >"$logs/journal-all.json" 2>&1
if verdict=$(python3 - "$logs/journal-$hostile.json" "$logs/journal-all.json" <<'PY'
import json, sys
def entries(path):
    return [json.loads(l) for l in open(path) if l.strip().startswith("{")]
escaped = r"'evil\nINFO: forged\u{0}x\u{1b}[2J'"
def control(v):
    return not isinstance(v, str) or any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in v)
mine = entries(sys.argv[1])
failed = [e for e in mine if e.get("MESSAGE_ID") == "41ed2e1a9bbd459d99ebcaea1209e405"]
if not failed:
    print(f"{len(mine)} entries for the store, none with the update-failed MESSAGE_ID"); sys.exit(1)
e = failed[0]
for field in ("PINKEEPER_REASON", "MESSAGE"):
    if not isinstance(e.get(field), str) or escaped not in e[field]:
        print(f"{field}={e.get(field)!r} does not hold the escaped name {escaped}"); sys.exit(1)
raw = [f"{k}={v!r}" for x in mine for k, v in x.items() if k.startswith(("MESSAGE", "PINKEEPER_", "CODE_")) and control(v)]
if raw:
    print("fields with control characters or bytes: " + ", ".join(raw)); sys.exit(1)
forged = [x.get("MESSAGE") for x in entries(sys.argv[2]) if "forged" in str(x.get("MESSAGE")) and escaped not in str(x.get("MESSAGE"))]
if forged:
    print(f"entries that look forged: {forged!r}"); sys.exit(1)
print(f"PINKEEPER_REASON={e['PINKEEPER_REASON']}")
PY
); then
    check_pass journal-escaping "$verdict"
else
    check_fail journal-escaping "${verdict:-could not read the journal}"
fi

# ------------------------------------------------------------------ 12. systemd-analyze security
step "systemd-analyze security pinkeeper"
# The same rating as the offline check in make test, but of the unit as the manager loaded it.
in_container systemd-analyze security pinkeeper --no-pager >"$logs/security.txt" 2>&1
score_line=$(grep -m1 'Overall exposure' "$logs/security.txt" | sed 's/^→ //')
score=$(sed -n 's/.*: \([0-9][0-9.]*\) .*/\1/p' <<<"$score_line")
if [[ -n $score ]] && awk -v s="$score" 'BEGIN { exit !(s <= 1.5) }'; then
    check_pass security "systemd-analyze security pinkeeper: $score_line (at most 1.5 wanted)"
else
    check_fail security "systemd-analyze security pinkeeper: ${score_line:-no score, see $logs/security.txt}; at most 1.5 wanted"
fi

# ------------------------------------------------------------------ 13. stop
step "systemctl stop pinkeeper"
t0=$(date +%s%N)
in_container systemctl stop pinkeeper >"$logs/stop.log" 2>&1
rc=$?
took=$((($(date +%s%N) - t0) / 1000000))
after="$(show ActiveState) Result=$(show Result) ExecMainCode=$(show ExecMainCode) ExecMainStatus=$(show ExecMainStatus)"
if ((rc == 0)) && [[ $after == "inactive Result=success ExecMainCode=1 ExecMainStatus=0" ]]; then
    check_pass stop "took $took ms; $after (exited, status 0)"
else
    check_fail stop "systemctl stop exited $rc after $took ms; $after"
fi

# ------------------------------------------------------------------ done
step "power off"
_container_test_cleanup
printf '\nsystemd-test: %d passed, %d failed\n' "$CHECKS_PASSED" "$CHECKS_FAILED"
((CHECKS_FAILED == 0))
