# shellcheck shell=bash
# The upgrade case of `make package-test` (issue 22: upgrades keep everything). Sourced by
# scripts/package-test.sh, after scripts/nspawn.sh and scripts/package-test-steps.sh; not a program.
#
# upgrade_case OLDER_DEB DEB, on a scratch root of its own ($work/upgrade/root; logs in
# $work/logs/upgrade/), with the fixture service already running and serving pins $fp1 and $fp2
# at app/init without delay:
#   1. installs OLDER_DEB (make deb-older: this tree as an older version, whose sample
#      pinkeeper.toml differs by a comment line) chrooted, then boots the root;
#   2. does what an administrator does: sets request_timeout in /etc/pinkeeper/pinkeeper.toml
#      with sed, adds a CA file and a stores.d/ drop-in, reloads, and waits for the store to be
#      published;
#   3. installs DEB over it with apt-get, non-interactively, keeping changed conffiles
#      (--force-confdef --force-confold), while scripts/watch-cache-reads.py reads the cache file
#      through the Python reader every few milliseconds from the host;
#   4. checks that the administrator's pinkeeper.toml is kept and the new sample is beside it as
#      pinkeeper.toml.dpkg-dist, that the added files, the cache file (same bytes, same inode) and
#      the state file are kept, that no read ever failed, and that the service now runs the new
#      program;
#   5. removes the package (configuration, cache and state stay), then purges it (the purge
#      checks of the fresh install).

upgrade_case() {
    local older_deb=$1 new_deb=$2
    local older new store=fixture toml=/etc/pinkeeper/pinkeeper.toml
    local cache state_file dropin=/etc/pinkeeper/stores.d/fixture.toml ca=/etc/pinkeeper/test-ca.pem
    older=$(dpkg-deb -f "$older_deb" Version)
    new=$(dpkg-deb -f "$new_deb" Version)
    cache=/var/cache/pinkeeper/$store.json
    state_file=/var/lib/pinkeeper/$store.state.json
    root=$work/upgrade/root
    logs=$work/logs/upgrade
    mkdir -p "$logs"
    local case_start=$SECONDS

    # ---------------------------------------------------------------- 1. the older package
    step "upgrade case: a fresh root, pinkeeper $older installed chrooted"
    scripts/make-rootfs.sh --copy "$root" >/dev/null || die "no root (make-rootfs.sh says why above)"
    local out rc
    install_chrooted "$older_deb" "$logs/install-older.log"
    rc=$?
    out=$(in_root "$root" pinkeeper --version 2>&1)
    if ((rc != 0)); then
        check_fail upgrade-from "apt-get install of $older exited $rc: $(tail -n 3 "$logs/install-older.log" | tr '\n' ' ')"
        die "cannot go on without the older package installed; log: $logs/install-older.log"
    elif [[ $out != "$older" ]]; then
        check_fail upgrade-from "pinkeeper --version says '$out' after installing $older"
    else
        check_pass upgrade-from "pinkeeper $older installed; pinkeeper --version: $out"
    fi
    container_boot_checked

    # ---------------------------------------------------------------- 2. the administrator's changes
    step "upgrade case: the administrator edits $toml, adds a store, reloads"
    in_container sed -i 's/^#request_timeout = "30s"/request_timeout = "20s"/' "$toml"
    add_fixture_store "$store"
    local check_config
    check_config=$(in_container pinkeeper check-config 2>&1)
    rc=$?
    if ! grep -q '^request_timeout = "20s"' "$root$toml"; then
        check_fail admin-edit "sed found no '#request_timeout = \"30s\"' line in $toml to change"
    elif ((rc != 0)); then
        check_fail admin-edit "pinkeeper check-config exited $rc: $check_config"
    else
        check_pass admin-edit "request_timeout = \"20s\" in $toml, $dropin and $ca added; check-config: ${check_config%%$'\n'*}"
    fi
    in_container systemctl reload pinkeeper >"$logs/reload.log" 2>&1
    local i
    for ((i = 0; i < 100; i++)); do
        [[ -f $root$cache ]] && break
        sleep 0.2
    done
    local pins
    if pins=$(cache_has_pins "$root$cache" "$fp1" "$fp2" 2>&1); then
        check_pass upgrade-from-publishes "after systemctl reload, pinkeeper $older published $cache: $pins"
    else
        check_fail upgrade-from-publishes "$cache after reload: ${pins:-missing}"
        journal_tail 10
        die "cannot test an upgrade without a published store"
    fi

    # What must survive the upgrade.
    local kept=("$toml" "$dropin" "$ca" "$cache" "$state_file") sums=() p
    for p in "${kept[@]}"; do sums+=("$(root_sum "$p")"); done
    local cache_inode old_pid old_exe requests_before
    cache_inode=$(stat -c %i "$root$cache")
    old_pid=$(show MainPID)
    old_exe=$(in_container "/proc/$old_pid/exe" --version 2>&1)
    requests_before=$(fixture_requests app/init)
    [[ -n ${sums[4]} ]] || check_fail upgrade-keeps "no $state_file before the upgrade"
    check_info "before the upgrade: MainPID $old_pid runs pinkeeper $old_exe; $cache inode $cache_inode"

    # ---------------------------------------------------------------- 3. the upgrade, read meanwhile
    step "upgrade case: apt-get install pinkeeper $new over $older (keeping changed conffiles), the cache read meanwhile"
    cp "$new_deb" "$root/var/tmp/"
    local ready=$work/upgrade/reader.ready watcher
    rm -f "$ready"
    python3 scripts/watch-cache-reads.py "$root/var/cache/pinkeeper" "$store" pin1.test "$fp1" "$ready" \
        >"$logs/reads.txt" 2>"$logs/reads.err" &
    watcher=$!
    for ((i = 0; i < 100; i++)); do
        [[ -s $ready ]] && break
        sleep 0.05
    done
    [[ -s $ready ]] || check_fail upgrade-readers "the reader did not start: $(one_line "$logs/reads.err")"
    local t0 took
    t0=$(date +%s%N)
    in_container env DEBIAN_FRONTEND=noninteractive apt-get install -y \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
        "/var/tmp/$(basename "$new_deb")" >"$logs/upgrade.log" 2>&1
    rc=$?
    took=$((($(date +%s%N) - t0) / 1000000))
    sleep 0.5  # a moment more of reads after the new daemon's READY
    kill -TERM "$watcher" 2>/dev/null
    wait "$watcher"
    local reader_rc=$?
    sed -n '/^Unpacking pinkeeper\|^Setting up\|^Configuration file\|^ ==>\|^Installing new\|[Ww]arning\|[Ee]rror/p' "$logs/upgrade.log" |
        sed 's/^/      | /'

    # ---------------------------------------------------------------- 4. what was kept
    local status
    status=$(package_status)
    if ((rc != 0)); then
        check_fail upgrade "apt-get install exited $rc after $took ms: $(tail -n 3 "$logs/upgrade.log" | tr '\n' ' ')"
        journal_tail 10
    elif ! grep -qF "Unpacking pinkeeper ($new) over ($older)" "$logs/upgrade.log"; then
        check_fail upgrade "apt-get did not unpack $new over $older; $status"
    elif [[ $status != "dpkg status 'ii' $new" ]]; then
        check_fail upgrade "after apt-get install: $status, expected ii $new"
    else
        check_pass upgrade "apt-get install took $took ms: pinkeeper $new unpacked over $older; $status"
    fi

    # The older sample differs, so dpkg had a changed conffile on both sides: it keeps the
    # administrator's (--force-confold) and puts the new sample beside it.
    local new_sample dist_sum others
    new_sample=$(dpkg-deb --fsys-tarfile "$new_deb" | tar -xO ".$toml" | sha256sum | cut -d' ' -f1)
    dist_sum=$(root_sum "$toml.dpkg-dist")
    others=$(cd "$root/etc/pinkeeper" && find . -name '*.dpkg-*' ! -path ./pinkeeper.toml.dpkg-dist | tr '\n' ' ')
    if [[ $(root_sum "$toml") != "${sums[0]}" ]]; then
        check_fail upgrade-conffile "$toml is not the administrator's any more"
    elif [[ $dist_sum != "$new_sample" ]]; then
        check_fail upgrade-conffile "$toml.dpkg-dist is ${dist_sum:-missing}, expected the new package's sample"
    elif [[ -n $others ]]; then
        check_fail upgrade-conffile "other dpkg files in /etc/pinkeeper: $others"
    elif ! grep -qF "Keeping old config file as default" "$logs/upgrade.log"; then
        check_fail upgrade-conffile "dpkg did not say it kept $toml (see $logs/upgrade.log)"
    else
        detail="the administrator's $toml kept, byte for byte; the new sample beside it as $toml.dpkg-dist; dpkg said"
        check_pass upgrade-conffile "$detail: $(grep -A3 "^Configuration file '$toml'" "$logs/upgrade.log" | one_line /dev/stdin)"
    fi

    local changed='' j
    for j in 1 2 3 4; do
        [[ -n ${sums[j]} && $(root_sum "${kept[j]}") == "${sums[j]}" ]] || changed+="${kept[j]} "
    done
    local inode_now
    inode_now=$(stat -c %i "$root$cache" 2>/dev/null)
    if [[ -n $changed ]]; then
        check_fail upgrade-keeps "changed or gone after the upgrade: $changed"
    elif [[ $inode_now != "$cache_inode" ]]; then
        check_fail upgrade-keeps "$cache was replaced (inode $cache_inode, now ${inode_now:-none}) though nothing was fetched"
    else
        detail="byte for byte: $dropin, $ca, $cache (same inode) and $state_file"
        check_pass upgrade-keeps "$detail; fetches during the upgrade: $(($(fixture_requests app/init) - requests_before))"
    fi

    local reads
    reads=$(one_line "$logs/reads.txt")
    if ((reader_rc != 0)) || [[ ! -s $logs/reads.txt ]]; then
        check_fail upgrade-readers "the reader (exit $reader_rc): $reads $(one_line "$logs/reads.err")"
    else
        check_pass upgrade-readers "a new Python CacheReader every read answered TRUSTED for pin1.test throughout: $reads"
    fi

    local new_pid exe_path exe_version exe_inode bin_inode started
    new_pid=$(show MainPID)
    exe_path=$(in_container readlink "/proc/$new_pid/exe" 2>&1)
    exe_version=$(in_container "/proc/$new_pid/exe" --version 2>&1)
    exe_inode=$(in_container stat -L -c %i "/proc/$new_pid/exe" 2>&1)
    bin_inode=$(in_container stat -c %i /usr/bin/pinkeeper 2>&1)
    started=$(in_container journalctl -u pinkeeper "_PID=$new_pid" "PINKEEPER_VERSION=$new" -o cat --no-pager 2>/dev/null |
        grep -c 'pinkeeper started')
    if [[ "$(show ActiveState)/$(show SubState)" != active/running ]]; then
        check_fail upgrade-new-binary "after the upgrade: $(show ActiveState)/$(show SubState), Result=$(show Result)"
        journal_tail 10
    elif [[ $new_pid == "$old_pid" || $exe_version != "$new" ]]; then
        check_fail upgrade-new-binary "MainPID $old_pid -> $new_pid runs '$exe_version' ($exe_path), expected a new process running $new"
    elif [[ $exe_path != /usr/bin/pinkeeper || $exe_inode != "$bin_inode" ]]; then
        check_fail upgrade-new-binary \
            "MainPID $new_pid runs $exe_path (inode $exe_inode), not the installed /usr/bin/pinkeeper (inode $bin_inode)"
    elif ((started < 1)); then
        check_fail upgrade-new-binary "no 'pinkeeper started' entry with PINKEEPER_VERSION=$new from PID $new_pid in the journal"
    else
        detail="restarted by postinst: MainPID $old_pid ($old_exe) -> $new_pid, which runs /usr/bin/pinkeeper (the installed inode)"
        detail+=", --version $exe_version; the journal has its 'pinkeeper started' with PINKEEPER_VERSION=$new"
        check_pass upgrade-new-binary "$detail; StatusText=$(show StatusText)"
    fi

    in_container dpkg -L pinkeeper >"$logs/dpkg-L.txt" 2>&1

    # ---------------------------------------------------------------- 5. remove, then purge
    step "upgrade case: apt-get remove pinkeeper"
    remove_and_check "$cache" "$toml" "$dropin" "$ca" "$state_file"
    step "upgrade case: apt-get purge pinkeeper (removed, configuration left)"
    purge_and_check "$logs/dpkg-L.txt" "$cache"

    step "upgrade case: power off"
    container_finish
    check_info "upgrade case: $((SECONDS - case_start)) s"
}
