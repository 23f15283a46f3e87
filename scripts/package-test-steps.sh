# shellcheck shell=bash
# Steps both cases of scripts/package-test.sh take (a fresh install, an upgrade): installing a
# .deb in a root that is not booted, adding the fixture store, removing or purging the package in
# the booted container with their checks. Sourced after scripts/nspawn.sh; not a program. They
# act on the scratch root $root, write their logs to $logs and print PASS/FAIL lines.

show() { in_container systemctl show pinkeeper --value -p "$1" 2>/dev/null; }
one_line() { tr '\n' ' ' <"$1" | sed 's/  */ /g; s/ $//'; }
# sha256 of a file of the root, read from the host; empty when it is missing.
root_sum() { sha256sum <"$root$1" 2>/dev/null | cut -d' ' -f1; }
journal_tail() { in_container journalctl -u pinkeeper --no-pager -o cat -n "$1" 2>/dev/null | sed 's/^/      | /'; }

# install_chrooted DEB LOG: `apt-get install DEB` chrooted in $root, which must not be booted
# (systemd not running, as in an image build: the maintainer scripts must cope). The root's
# package lists are refreshed once if they are older than the mirror. Prints dpkg's main lines;
# returns apt-get's status.
install_chrooted() {
    local deb=$1 log=$2 pkg rc
    [[ -e $root/run/systemd/system ]] && die "the root looks booted (/run/systemd/system exists)"
    cp "$deb" "$root/var/tmp/"
    pkg=/var/tmp/$(basename "$deb")
    in_root "$root" apt-get install -y "$pkg" >"$log" 2>&1
    rc=$?
    if ((rc != 0)) && grep -qE 'Unable to fetch|Failed to fetch|has no installation candidate|404' "$log"; then
        echo "the root's package lists are stale: apt-get update, then again"
        in_root "$root" apt-get update -qq >>"$log" 2>&1
        in_root "$root" apt-get install -y "$pkg" >>"$log" 2>&1
        rc=$?
    fi
    sed -n '/^Unpacking pinkeeper\|^Setting up\|^Selecting previously\|^Created symlink\|^Creating\|[Ww]arning\|[Ee]rror/p' "$log" |
        sed 's/^/      | /'
    return "$rc"
}

# add_fixture_store STORE: the fixture service's CA and a stores.d/ drop-in for STORE, served at
# app/init, written into the root as an administrator would.
add_fixture_store() {
    install -m 0644 "$FIXTURE_CA/ca.pem" "$root/etc/pinkeeper/test-ca.pem"
    fixture_store_toml "$1" "app/init?appName=$1" challenge /etc/pinkeeper/test-ca.pem \
        >"$root/etc/pinkeeper/stores.d/$1.toml"
}

# dpkg's state of the package in the container, in words.
package_status() {
    local status
    if status=$(in_container dpkg-query -W -f='${db:Status-Abbrev}${Version}' pinkeeper 2>/dev/null); then
        echo "dpkg status '${status%% *}' ${status##* }"
    else
        echo "dpkg no longer knows the package"
    fi
}

# check_gone_and_stopped CHECK ACTION LEFT PASSED: after apt-get ACTION, LEFT (the paths still
# there) must be empty and pinkeeper.service unknown to systemd and inactive; PASSED says what held.
check_gone_and_stopped() {
    local unit_state
    unit_state="$(show LoadState) $(show ActiveState)"
    if [[ -n $3 ]]; then
        check_fail "$1" "still there after $2: $3"
    elif [[ $unit_state != "not-found inactive" ]]; then
        check_fail "$1" "pinkeeper.service after $2: LoadState/ActiveState $unit_state, expected not-found inactive"
    else
        check_pass "$1" "$4; the service is stopped and $unit_state"
    fi
}

# remove_and_check CACHE KEPT...: `apt-get remove pinkeeper` in the booted container. The service
# must stop and the program and unit go; CACHE and every KEPT path (configuration, state) stay
# byte for byte, and so does the user.
remove_and_check() {
    local cache=$1 rc p left='' changed='' sums=()
    shift
    for p in "$cache" "$@"; do sums+=("$(root_sum "$p")"); done
    in_container apt-get remove -y pinkeeper >"$logs/remove.log" 2>&1
    rc=$?
    sed -n '/^Removing\|[Ww]arning\|[Ee]rror/p' "$logs/remove.log" | sed 's/^/      | /'
    if ((rc != 0)); then
        check_fail remove "apt-get remove exited $rc: $(tail -n 3 "$logs/remove.log" | tr '\n' ' ')"
        return
    fi
    local state
    state=$(package_status)
    if [[ $state != "dpkg status 'rc'"* ]]; then
        check_fail remove "apt-get remove exited 0 but $state, expected rc (removed, configuration kept)"
    else
        check_pass remove "apt-get remove exited 0; $state"
    fi

    for p in /usr/bin/pinkeeper /lib/systemd/system/pinkeeper.service; do
        in_container test -e "$p" && left+="$p "
    done
    check_gone_and_stopped remove-stops remove "$left" "the program and the unit are gone"

    local i=0
    for p in "$cache" "$@"; do
        [[ -n ${sums[i]} && $(root_sum "$p") == "${sums[i]}" ]] || changed+="$p "
        i=$((i + 1))
    done
    if [[ -n $changed ]]; then
        check_fail remove-keeps "gone or changed after remove: $changed"
    elif ! in_container getent passwd pinkeeper >/dev/null; then
        check_fail remove-keeps "the pinkeeper user is gone after remove"
    else
        check_pass remove-keeps "kept byte for byte: $cache $*; the pinkeeper user is kept"
    fi
}

# purge_and_check PACKAGED CACHE: `apt-get purge pinkeeper` in the booted container. Every file
# listed in PACKAGED (dpkg -L, saved while installed), /etc/pinkeeper with whatever the
# administrator added, /var/lib/pinkeeper and the enablement link must be gone and the service
# stopped; CACHE must be kept byte for byte.
purge_and_check() {
    local packaged=$1 cache=$2 cache_sum rc left='' p
    cache_sum=$(root_sum "$cache")
    in_container apt-get purge -y pinkeeper >"$logs/purge.log" 2>&1
    rc=$?
    sed -n '/^Removing\|^Purging\|[Ww]arning\|[Ee]rror/p' "$logs/purge.log" | sed 's/^/      | /'
    if ((rc != 0)); then
        check_fail purge "apt-get purge exited $rc: $(tail -n 3 "$logs/purge.log" | tr '\n' ' ')"
    else
        check_pass purge "apt-get purge exited 0; $(package_status)"
    fi

    while read -r p; do  # the package's own files (directories may be shared)
        [[ -n $p ]] || continue
        in_container test -d "$p" && continue
        in_container test -e "$p" && left+="$p "
    done <"$packaged"
    for p in /etc/pinkeeper /var/lib/pinkeeper /etc/systemd/system/multi-user.target.wants/pinkeeper.service; do
        in_container test -e "$p" && left+="$p "
    done
    check_gone_and_stopped purge-removes purge "$left" \
        "every packaged file, /etc/pinkeeper (with what the administrator added), /var/lib/pinkeeper and the enablement link are gone"

    if [[ -n $cache_sum && $(root_sum "$cache") == "$cache_sum" ]]; then
        check_pass purge-keeps-cache "$cache kept, byte for byte"
    else
        check_fail purge-keeps-cache "$cache is gone or changed after purge"
    fi
    check_info "after purge, user: $(in_container getent passwd pinkeeper || echo 'removed')"
}
