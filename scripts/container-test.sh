#!/usr/bin/env bash
# `make container-test`: the container image under podman (issue 22).
#
#   1. builds the image from the .deb of `make deb` without network (`make image-build` on the
#      local base, scripts/make-container-base.sh) and checks its labels, user, entry point,
#      health check and volumes;
#   2. runs the daemon as the image runs it, with a read-only root and no tmpfs (as Kubernetes'
#      readOnlyRootFilesystem), every capability dropped, no-new-privileges, the image's
#      non-root UID, host networking to reach the fixture pinning service on the host's
#      loopback (Tests/Fixtures/pinserver.py), the cache in a named volume and /etc/pinkeeper a
#      host directory laid out as kubelet lays out a ConfigMap volume (..<timestamp>/, ..data,
#      one symlink per entry), mounted read-only;
#   3. checks: it publishes; a second container with the Python reader reads that volume
#      read-only, without network, and answers `trusted` (and `untrusted` for a pin it lacks);
#      the orphan that a change hook leaves is reaped by tini (and stays a zombie in a control
#      container without tini); the health check (and its failure for a store without pins);
#      a ConfigMap-style swap of ..data that adds a store, in a configuration without the
#      watch_configuration key (the image's CMD watches it), which is then published; the log
#      lines on stderr (podman logs) with their fields; an arbitrary UID (--user 4242, its
#      volumes chowned by an init step); `podman stop` ends the daemon with exit status 0
#      within 2 s.
# Each check prints PASS or FAIL with a reason, then the totals and the time; exits 1 if any
# check failed.
#
# Environment: IMAGE (default localhost/pinkeeper:<version>), KEEP=1 keeps the containers and
# volumes. Files: .build/container-test/ (logs/ kept).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
top=$(pwd -P)
# shellcheck source=scripts/nspawn.sh
source scripts/nspawn.sh  # check_pass/check_fail, fixture_* (the fixture service on the host)

# shellcheck source=scripts/podman-image.sh
source scripts/podman-image.sh  # CONTAINERS_CONF, version, image
reader_image=localhost/pinkeeper-test-reader:latest
work=$top/.build/container-test
logs=$work/logs
config=$work/config          # the ConfigMap-style directory mounted as /etc/pinkeeper
prefix=pinkeeper-test        # every container and volume this test makes
daemon=$prefix-daemon        # the image as it runs, under tini
control=$prefix-no-tini      # the same without tini, and with a store that stays empty
anyuid=$prefix-uid4242       # an arbitrary UID
uid=60917                    # the image's user (packaging/container/pinkeeper.sysusers)

die() { echo "container-test: $*" >&2; exit 2; }
step() { printf '\n== %s  (%d s)\n' "$*" "$((SECONDS - t_start))"; }
one_line() { tr '\n' ' ' | sed 's/  */ /g; s/ $//'; }

[[ $(id -u) -eq 0 ]] || die "must run as root (podman as root, the cached Debian root)"
t_start=$SECONDS

remove_ours() {
    local c v
    for c in $daemon $control $anyuid; do podman rm -f -t 0 "$c" >/dev/null 2>&1; done
    for v in cache state control-cache control-state uid-cache uid-state; do podman volume rm -f "$prefix-$v" >/dev/null 2>&1; done
}
cleanup() {
    trap '' INT TERM
    for c in $daemon $control $anyuid; do podman logs "$c" >"$logs/$c.log" 2>&1 || true; done
    if [[ ${KEEP:-} == 1 ]]; then echo "container-test: containers and volumes kept ($prefix-*)"; else remove_ours; fi
    fixture_stop
    echo "container-test: logs in $logs"
}
trap cleanup EXIT
trap 'echo "container-test: interrupted" >&2; exit 130' INT
trap 'echo "container-test: terminated" >&2; exit 143' TERM

mkdir -p "$work"
rm -rf "$logs" "$config"
mkdir -p "$logs"
remove_ours  # what a killed earlier run left

# ------------------------------------------------------------------ 1. the image
step "build the image without network (make image-build)"
t0=$SECONDS
if make --no-print-directory image-build IMAGE="$image" >"$logs/image-build.log" 2>&1; then
    base=$(podman image inspect --format '{{index .Labels "org.opencontainers.image.base.name"}}' "$image")
    check_pass image-build "$image in $((SECONDS - t0)) s, FROM $base with --network=none; $(tail -n 1 "$logs/image-build.log")"
else
    check_fail image-build "make image-build failed: $(tail -n 5 "$logs/image-build.log" | one_line)"
    die "cannot go on without the image; log: $logs/image-build.log"
fi

fmt='{{.Config.User}}|{{json .Config.Entrypoint}}|{{json .Config.Cmd}}|{{json .Config.Healthcheck.Test}}|{{json .Config.Volumes}}'
IFS='|' read -r user entrypoint cmd health volumes < <(podman image inspect --format "$fmt" "$image")
label() { podman image inspect --format "{{index .Labels \"org.opencontainers.image.$1\"}}" "$image"; }
problems=''
[[ $user == "$uid:$uid" ]] || problems+="User is '$user'; "
[[ $entrypoint == '["/usr/bin/tini","--","pinkeeper"]' ]] || problems+="Entrypoint is $entrypoint; "
[[ $cmd == '["run","--watch-configuration"]' ]] || problems+="Cmd is $cmd; "
[[ $health == *'pinkeeper status'* ]] || problems+="no HEALTHCHECK running pinkeeper status ($health); "
for v in /etc/pinkeeper /var/cache/pinkeeper /var/lib/pinkeeper; do [[ $volumes == *"\"$v\""* ]] || problems+="no volume $v; "; done
[[ $(label version) == "$version" ]] || problems+="label version '$(label version)', not $version; "
[[ -n $(label licenses) && -n $(label title) && -n $(label revision) ]] || problems+="labels licenses/title/revision missing; "
if [[ -z $problems ]]; then
    detail="User $user, Entrypoint $entrypoint, Cmd $cmd, health check, volumes $volumes"
    check_pass image-config "$detail, version $(label version), licenses '$(label licenses)'"
else
    check_fail image-config "$problems"
fi

# ------------------------------------------------------------------ 2. fixture and configuration
step "fixture pinning service on the host's loopback, ConfigMap-style configuration"
fixture_start "$work/fixture" "$logs/pinserver.log" || die "the fixture service did not start; log: $logs/pinserver.log"
fp1=$(fixture_fingerprint) fp2=$(fixture_fingerprint) fp3=$(fixture_fingerprint)
fixture_route app/init challenge 0 "$fp1" "$fp2"
fixture_route static static 0 "$fp3"
echo "https://localhost:$FIXTURE_PORT (PID $FIXTURE_PID)"

# The files of a ConfigMap; configmap_publish lays them out as kubelet does.
staged=$work/configmap
rm -rf "$staged"
mkdir -p "$staged/stores.d"
# Without a watch_configuration key, as a user's own configuration (the README's minimal one)
# mounted over the image's file: the image's CMD (run --watch-configuration) must still watch it.
grep -v '^[[:space:]]*watch_configuration' packaging/container/pinkeeper.toml >"$staged/pinkeeper.toml"
cp "$FIXTURE_CA/ca.pem" "$staged/test-ca.pem"
fixture_store_toml fixture "app/init?appName=fixture" challenge /etc/pinkeeper/test-ca.pem >"$staged/stores.d/fixture.toml"
echo 'on_change = ["/usr/local/bin/orphan-hook"]' >>"$staged/stores.d/fixture.toml"

# kubelet's atomic writer: the files in a new ..<timestamp> directory, a ..data_tmp symlink to
# it renamed over ..data (one atomic step for readers), a symlink per top-level entry into
# ..data, then the old directory and stale entries removed.
configmap_publish() {
    local ts old entry
    ts="..$(date -u +%Y_%m_%d_%H_%M_%S.%N)"
    mkdir -p "$config"
    old=$(readlink "$config/..data" 2>/dev/null) || old=''
    cp -a "$staged" "$config/$ts"
    ln -sfn "$ts" "$config/..data_tmp"
    mv -T "$config/..data_tmp" "$config/..data"
    for entry in "$staged"/*; do
        entry=$(basename "$entry")
        [[ -L $config/$entry ]] || ln -s "..data/$entry" "$config/$entry"
    done
    for entry in "$config"/*; do
        [[ -e $staged/$(basename "$entry") ]] || rm -f "$entry"
    done
    [[ -n $old ]] && rm -rf "${config:?}/$old"
    return 0
}
configmap_publish

# A change hook that leaves an orphan: a new session whose `sleep` outlives the hook.
hook=$work/orphan-hook
printf '#!/bin/sh\nsetsid sleep 8 </dev/null >/dev/null 2>&1 &\necho "left sleep $! behind"\n' >"$hook"
chmod 0755 "$hook"

# The control container's configuration: the same, plus a store whose route answers 404, so
# that it stays empty and its health check must fail.
control_config=$work/control-config
rm -rf "$control_config"
cp -a "$staged" "$control_config"
fixture_store_toml missing "no-such-route" static /etc/pinkeeper/test-ca.pem >"$control_config/stores.d/missing.toml"

# ------------------------------------------------------------------ 3. the containers
step "start the daemon: read-only root, no capabilities, non-root, host network"
# --health-interval=disable: no timer for the health check (podman 4.3 starts those as systemd
# timers, and no systemd runs here; it still logs that it cannot reach one, harmlessly);
# `podman healthcheck run` runs the image's check on demand.
hardened=(--network=host --read-only --read-only-tmpfs=false --cap-drop=all
    --security-opt=no-new-privileges --health-interval=disable)
podman run -d --name "$daemon" "${hardened[@]}" \
    -v "$prefix-cache:/var/cache/pinkeeper" -v "$prefix-state:/var/lib/pinkeeper" \
    -v "$config:/etc/pinkeeper:ro" -v "$hook:/usr/local/bin/orphan-hook:ro" \
    "$image" >"$logs/run-daemon.log" 2>&1 || die "podman run failed: $(one_line <"$logs/run-daemon.log")"
podman run -d --name "$control" "${hardened[@]}" --entrypoint /usr/bin/pinkeeper \
    -v "$prefix-control-cache:/var/cache/pinkeeper" -v "$prefix-control-state:/var/lib/pinkeeper" \
    -v "$control_config:/etc/pinkeeper:ro" -v "$hook:/usr/local/bin/orphan-hook:ro" \
    "$image" run >"$logs/run-control.log" 2>&1 || die "podman run (control) failed: $(one_line <"$logs/run-control.log")"
# An arbitrary UID needs the volumes chowned to it first. podman 4.3's `:U` does not do it on a
# new named volume (it then gives the volume the owner of the image's directory, 60917, after
# chowning it), so a one-off init step does, as the DaemonSet's initContainer: root,
# but with only CAP_CHOWN and CAP_FOWNER.
podman run --rm --network=none --read-only --cap-drop=all --cap-add=CHOWN,FOWNER --health-cmd=none \
    --user 0 --entrypoint /bin/sh \
    -v "$prefix-uid-cache:/var/cache/pinkeeper" -v "$prefix-uid-state:/var/lib/pinkeeper" "$image" \
    -c 'chown 4242:0 /var/cache/pinkeeper /var/lib/pinkeeper && chmod 0755 /var/cache/pinkeeper && chmod 0700 /var/lib/pinkeeper' \
    >"$logs/init-uid4242.log" 2>&1 || die "the init step for UID 4242 failed: $(one_line <"$logs/init-uid4242.log")"
podman run -d --name "$anyuid" "${hardened[@]}" --user 4242 \
    -v "$prefix-uid-cache:/var/cache/pinkeeper" -v "$prefix-uid-state:/var/lib/pinkeeper" \
    -v "$config:/etc/pinkeeper:ro" -v "$hook:/usr/local/bin/orphan-hook:ro" \
    "$image" >"$logs/run-uid4242.log" 2>&1 || die "podman run (--user 4242) failed: $(one_line <"$logs/run-uid4242.log")"

# A container that ended at once (an invalid configuration) ends the test: nothing below could pass.
sleep 1
for c in $daemon $control $anyuid; do
    [[ $(podman inspect --format '{{.State.Running}}' "$c") == true ]] ||
        die "$c exited at once (status $(podman inspect --format '{{.State.ExitCode}}' "$c")): $(podman logs --tail 3 "$c" 2>&1 | one_line)"
done

volume_dir() { podman volume inspect --format '{{.Mountpoint}}' "$prefix-$1"; }
# wait_for_file FILE SECONDS: true once FILE exists.
wait_for_file() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        [[ -f $1 ]] && return 0
        sleep 0.1
    done
    return 1
}
cache=$(volume_dir cache)

# The daemon's host PID: tini's child.
tini_pid=$(podman inspect --format '{{.State.Pid}}' "$daemon")
daemon_pid=$(awk '{print $1}' "/proc/$tini_pid/task/$tini_pid/children" 2>/dev/null)
status_field() { awk -v f="$2:" '$1 == f { $1 = ""; print substr($0, 2) }' "/proc/$1/status" 2>/dev/null; }  # words joined by spaces
if [[ -n $daemon_pid ]]; then
    uids=$(status_field "$daemon_pid" Uid) capeff=$(status_field "$daemon_pid" CapEff)
    capbnd=$(status_field "$daemon_pid" CapBnd) nnp=$(status_field "$daemon_pid" NoNewPrivs)
    comm=$(cat "/proc/$daemon_pid/comm")
    if [[ $comm == pinkeeper && $uids == "$uid $uid $uid $uid" && $capeff == 0000000000000000 && $capbnd == 0000000000000000 \
        && $nnp == 1 ]]; then
        detail="PID 1 is $(cat "/proc/$tini_pid/comm"), its child $comm runs as UID $uid (real, effective, saved, fs)"
        check_pass hardened "$detail, CapEff and CapBnd 0, NoNewPrivs 1"
    else
        check_fail hardened "daemon process $comm: Uid '$uids', CapEff $capeff, CapBnd $capbnd, NoNewPrivs $nnp"
    fi
else
    detail="no child of the container's PID 1 ($tini_pid, $(cat "/proc/$tini_pid/comm" 2>/dev/null))"
    check_fail hardened "$detail: $(podman logs "$daemon" 2>&1 | tail -n 3 | one_line)"
fi
if out=$(podman exec "$daemon" touch /var/tmp/x 2>&1); then
    check_fail read-only "a file could be created in /var/tmp of the container"
elif [[ $out == *"Read-only file system"* ]]; then
    check_pass read-only "the root file system refuses writes: ${out##*: }"
else
    check_fail read-only "touch /var/tmp/x in the container: $out"
fi

step "the daemon publishes into the named volume"
why=''
if wait_for_file "$cache/fixture.json" 30 && why=$(cache_has_pins "$cache/fixture.json" "$fp1" "$fp2"); then
    check_pass publish \
        "$prefix-cache/fixture.json: $why; owner $(stat -c '%u, mode %a' "$cache/fixture.json"), directory $(stat -c '%u %a' "$cache")"
else
    check_fail publish \
        "no fixture.json with the served pins in $cache: ${why:-missing after 30 s}; log: $(podman logs --tail 3 "$daemon" 2>&1 | one_line)"
fi

step "the orphan a change hook leaves"
# ps in the container: pid, parent, state, name of each process.
processes() { podman exec "$1" ps -eo pid=,ppid=,stat=,comm= 2>/dev/null; }
# wait_orphan NAME: waits up to 15 s for the hook's sleep (8 s, from the first publish) to run
# as a child of the container's PID 1, then up to 10 s for it to end; prints what ps showed of it.
wait_orphan() {
    local i seen=''
    for ((i = 0; i < 150; i++)); do
        seen=$(processes "$1" | awk '$4 == "sleep" && $2 == 1')
        [[ -n $seen ]] && break
        sleep 0.1
    done
    [[ -n $seen ]] || return 1
    for ((i = 0; i < 100; i++)); do
        processes "$1" | awk '$4 == "sleep" { print $3 }' | grep -q '^S' || break
        sleep 0.1
    done
    echo "$seen"
}
if seen=$(wait_orphan "$daemon"); then
    sleep 0.5
    left=$(processes "$daemon" | awk '$4 == "sleep" || $3 ~ /^Z/')
    if [[ -z $left ]]; then
        check_pass orphan-reaped \
            "the hook's sleep ran under PID 1 (tini) [$(echo "$seen" | one_line)] and is gone after it ended: no zombie"
    else
        check_fail orphan-reaped "left in the container: $(echo "$left" | one_line)"
    fi
else
    detail="the hook's sleep never ran as a child of PID 1; processes: $(processes "$daemon" | one_line)"
    check_fail orphan-reaped "$detail; hook log: $(podman logs "$daemon" 2>&1 | grep -m1 hook | one_line)"
fi
# The control: with pinkeeper itself as PID 1 nobody reaps the orphan, which proves the check
# above can see a zombie.
if seen=$(wait_orphan "$control"); then
    sleep 0.5
    zombies=$(processes "$control" | awk '$3 ~ /^Z/')
    if [[ -n $zombies ]]; then
        check_pass orphan-control "without tini (pinkeeper as PID 1) the ended sleep stays a zombie: $(echo "$zombies" | one_line)"
    else
        check_fail orphan-control "without tini no zombie was seen, so the check above proves nothing: $(processes "$control" | one_line)"
    fi
else
    check_fail orphan-control "the control container's hook never left a sleep under PID 1: $(processes "$control" | one_line)"
fi

step "the Python reader in a second container, the volume read-only"
# The reader image: python3 and readers/python copied in (no pip, no network).
if podman build --format docker --network=none --build-arg BASE="$(scripts/make-container-base.sh 2>/dev/null)" \
    -f packaging/container/test/Containerfile.reader -t "$reader_image" readers/python/src >"$logs/reader-build.log" 2>&1; then
    validate() {
        podman run --rm --network=none --read-only --cap-drop=all --user 4243 \
            -v "$prefix-cache:/var/cache/pinkeeper:ro" "$reader_image" \
            validate --cache-directory /var/cache/pinkeeper --store fixture --name pin1.test --fingerprint "$1" 2>&1
    }
    answer=$(validate "$fp1") rc=$?
    other=$(validate "$(fixture_fingerprint)") rc_other=$?
    if [[ $rc == 0 && $answer == *trusted* && $answer != *untrusted* && $rc_other == 1 && $other == *untrusted* ]]; then
        detail="python3 -m pinkeeper validate (UID 4243, no network, volume :ro): pin1.test with its pin '$answer' (exit 0)"
        check_pass reader "$detail, with another '$other' (exit 1)"
    else
        check_fail reader "served pin: '$answer' (exit $rc); another pin: '$other' (exit $rc_other)"
    fi
else
    check_fail reader "the reader image did not build: $(tail -n 3 "$logs/reader-build.log" | one_line)"
fi

step "health check"
health=$(podman healthcheck run "$daemon" 2>&1) rc=$?
control_health=$(podman healthcheck run "$control" 2>&1) control_rc=$?
if [[ $rc == 0 && $control_rc != 0 ]]; then
    detail="podman healthcheck run: '${health:-healthy}' (exit 0)"
    check_pass health "$detail; the control container, whose store 'missing' has no pin: '$control_health' (exit $control_rc)"
else
    detail="daemon: '$health' (exit $rc), expected healthy"
    check_fail health "$detail; control with an empty store: '$control_health' (exit $control_rc), expected unhealthy"
fi

step "a ConfigMap update: ..data swapped to a version with one more store"
fixture_store_toml fixture-static static static /etc/pinkeeper/test-ca.pem >"$staged/stores.d/fixture-static.toml"
configmap_publish
why=''
if grep -qE '^[[:space:]]*watch_configuration' "$staged/pinkeeper.toml"; then
    check_fail configmap-swap "the mounted pinkeeper.toml sets watch_configuration, so this proves nothing of the image's CMD"
elif wait_for_file "$cache/fixture-static.json" 20 && why=$(cache_has_pins "$cache/fixture-static.json" "$fp3"); then
    changed=$(podman logs "$daemon" 2>&1 | grep 'msg="configuration changed; reloading"' |
        grep -m1 -E ' file=/etc/pinkeeper/\.\.data( |$)')
    if [[ -n $changed ]]; then
        detail="with no watch_configuration key in the mounted file, after the ..data swap the daemon logged '$changed'"
        check_pass configmap-swap "$detail and published the new store without a signal: $why"
    else
        check_fail configmap-swap "the new store was published, but the log has no 'configuration changed; reloading' for ..data"
    fi
else
    check_fail configmap-swap \
        "no fixture-static.json 20 s after the ..data swap: ${why:-missing}; log: $(podman logs --tail 3 "$daemon" 2>&1 | one_line)"
fi

step "log lines on stderr, in podman logs"
# podman logs writes what the container wrote to stderr on its own stderr.
podman logs "$daemon" 2>"$logs/$daemon.stderr" >"$logs/$daemon.stdout"
# logfmt (the default): the time, the level, the message, then the journal entry's fields.
update_line=$(grep -E '^time=[0-9TZ:.-]+ level=info msg="update succeeded" ' "$logs/$daemon.stderr" |
    grep -E ' message_id=fea0a00742744d54a3c895f02958cb80( |$)' | grep -E ' store=fixture( |$)' |
    grep -E ' pins=2( |$)' | grep -m1 -E ' result=ok( |$)')
reload_line=$(grep -m1 -E '^time=[^ ]+ level=info msg="configuration reloaded" stores=2( |$)' "$logs/$daemon.stderr")
if [[ -n $update_line && -n $reload_line && ! -s $logs/$daemon.stdout ]]; then
    check_pass logs "on stderr, one line per event with its fields: '$update_line'; after the swap: '$reload_line'"
else
    detail="stderr has no logfmt update line with time, level=info, message_id, store=fixture, pins=2, result=ok ('$update_line')"
    detail+=" or reload line with stores=2 ('$reload_line'), or stdout is not empty ($(wc -l <"$logs/$daemon.stdout") lines)"
    check_fail logs "$detail; stderr ends: $(tail -n 3 "$logs/$daemon.stderr" | one_line)"
fi

step "an arbitrary UID: --user 4242, volumes chowned by an init step"
uid_cache=$(volume_dir uid-cache)
why=''
if wait_for_file "$uid_cache/fixture.json" 30 && why=$(cache_has_pins "$uid_cache/fixture.json" "$fp1" "$fp2"); then
    check_pass any-uid "published as $(stat -c '%u' "$uid_cache/fixture.json") into a directory of $(stat -c '%u %a' "$uid_cache"): $why"
else
    check_fail any-uid \
        "no fixture.json from the --user 4242 container: ${why:-missing}; log: $(podman logs --tail 3 "$anyuid" 2>&1 | one_line)"
fi

step "podman stop"
for c in "$daemon" "$anyuid"; do
    t0=$(date +%s%N)
    podman stop -t 10 "$c" >/dev/null 2>&1
    ms=$((($(date +%s%N) - t0) / 1000000))
    exit_code=$(podman inspect --format '{{.State.ExitCode}}' "$c")
    if [[ $exit_code == 0 ]] && ((ms < 2000)); then
        check_pass "stop-$c" "podman stop -t 10 took $ms ms, exit code $exit_code"
    else
        check_fail "stop-$c" \
            "podman stop -t 10 took $ms ms (limit 2000), exit code $exit_code; log: $(podman logs --tail 2 "$c" 2>&1 | one_line)"
    fi
done

printf '\n%d passed, %d failed\n' "$CHECKS_PASSED" "$CHECKS_FAILED"
echo "container-test: $((SECONDS - t_start)) s"
((CHECKS_FAILED == 0))
