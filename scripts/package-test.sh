#!/usr/bin/env bash
# `make package-test`: the Debian package on a fresh minimal Debian 12 (issue 6 part 5), then
# an upgrade to it (issue 22).
#
# The fresh install, on a scratch copy of the cached debootstrap root (scripts/make-rootfs.sh):
#   1. installs the .deb with apt while systemd is NOT running (chrooted, as an image build
#      does; the maintainer scripts must cope) and checks the pinkeeper user, the files
#      `dpkg -L` lists, the unit enabled, every program the unit runs, `pinkeeper --version`
#      and `pinkeeper check-config` on the shipped sample configuration;
#   2. boots the root with systemd-nspawn (scripts/nspawn.sh), adds a stores.d/ drop-in for the
#      fixture pinning service on the host's loopback, restarts the packaged service and checks
#      it reaches READY, publishes the store and reloads;
#   3. purges the package in the booted system and checks that everything it installed, its
#      configuration and state are gone while the published cache is kept.
# The upgrade, on a second scratch root: scripts/package-upgrade-test.sh says what it does.
# Each check prints PASS or FAIL with a reason; the script exits 1 if any check failed.
#
# The package: DEB=path, else the newest .build/deb/pinkeeper_*_<arch>.deb (make deb); the one
# the upgrade starts from: OLDER_DEB=path, else .build/older/pinkeeper_*_<arch>.deb (make
# deb-older). Files: .build/package-test/ (logs/ kept; the roots removed unless KEEP_ROOT=1).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
top=$(pwd -P)
# shellcheck source=scripts/nspawn.sh
source scripts/nspawn.sh
# shellcheck source=scripts/package-test-steps.sh
source scripts/package-test-steps.sh
# shellcheck source=scripts/package-upgrade-test.sh
source scripts/package-upgrade-test.sh

work=$top/.build/package-test
root=$work/root
logs=$work/logs
store=fixture
delay=2  # the fixture answers after this many seconds, so READY can be seen to wait for it

die() { echo "package-test: $*" >&2; exit 2; }
step() { printf '\n== %s  (%d s)\n' "$*" "$((SECONDS - t_start))"; }

[[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap, systemd-nspawn)"
arch=$(dpkg --print-architecture)
deb=${DEB:-$(ls -t "$top"/.build/deb/pinkeeper_*_"$arch".deb 2>/dev/null | head -n 1)}
[[ -n $deb && -f $deb ]] || die "no .build/deb/pinkeeper_*_$arch.deb: run make deb (or make package-test), or set DEB"
older_deb=${OLDER_DEB:-$(ls -t "$top"/.build/older/pinkeeper_*_"$arch".deb 2>/dev/null | head -n 1)}
[[ -n $older_deb && -f $older_deb ]] ||
    die "no .build/older/pinkeeper_*_$arch.deb: run make deb-older (or make package-test), or set OLDER_DEB"
t_start=$SECONDS

# ------------------------------------------------------------------ clean-up, first
container_test_traps package-test

mkdir -p "$work"
nspawn_reap_stale "$work"
rm -rf "$logs"
mkdir -p "$logs"
# Copies, so that a `make deb` running meanwhile cannot change the packages under test.
for d in deb older_deb; do
    cp "${!d}" "$logs/" || die "cannot copy ${!d}"
    printf -v "$d" '%s' "$logs/$(basename "${!d}")"
    dpkg-deb --contents "${!d}" >/dev/null 2>&1 || die "${!d} is not a complete package (still being built?)"
done
dpkg --compare-versions "$(dpkg-deb -f "$older_deb" Version)" lt "$(dpkg-deb -f "$deb" Version)" ||
    die "$older_deb is not older than $deb"

# ------------------------------------------------------------------ 1. a clean root
step "host tools and a fresh copy of the cached Debian 12 root"
scripts/install-container-deps.sh || die "could not install the host tools"
scripts/make-rootfs.sh --copy "$root" >/dev/null || die "no root (make-rootfs.sh says why above)"
check_info \
    "package $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version) ($(basename "$deb")); Depends: $(dpkg-deb -f "$deb" Depends)"

# ------------------------------------------------------------------ 2. install, systemd not running
step "apt-get install the .deb, chrooted, systemd not running"
install_chrooted "$deb" "$logs/install.log"
rc=$?
if ((rc == 0)); then
    check_pass install "apt-get install exited 0 with systemd not running"
else
    check_fail install "apt-get install exited $rc: $(tail -n 3 "$logs/install.log" | tr '\n' ' ')"
    die "cannot go on without the package installed; log: $logs/install.log"
fi

if pw=$(in_root "$root" getent passwd pinkeeper) && [[ $pw == *:/var/lib/pinkeeper:/usr/sbin/nologin ]]; then
    check_pass user "$pw"
else
    check_fail user "getent passwd pinkeeper: '${pw:-none}'; expected a system user, home /var/lib/pinkeeper, shell nologin"
fi

in_root "$root" dpkg -L pinkeeper >"$logs/dpkg-L.txt" 2>&1
missing=$(in_root "$root" sh -c 'dpkg -L pinkeeper | while read -r p; do [ -e "$p" ] || echo "$p"; done')
expected=(/usr/bin/pinkeeper /usr/lib/sysusers.d/pinkeeper.conf /etc/pinkeeper/pinkeeper.toml
    /usr/share/man/man8/pinkeeper.8.gz /usr/share/man/man5/pinkeeper.toml.5.gz
    /usr/share/bash-completion/completions/pinkeeper /usr/share/zsh/vendor-completions/_pinkeeper
    /usr/share/fish/vendor_completions.d/pinkeeper.fish /usr/share/pinkeeper/prometheus/pinkeeper.rules.yml)
absent=()
for f in "${expected[@]}"; do grep -qxF "$f" "$logs/dpkg-L.txt" || absent+=("$f"); done
unit_path=$(grep -E '^(/usr)?/lib/systemd/system/pinkeeper\.service$' "$logs/dpkg-L.txt" | head -n 1)
[[ -n $unit_path ]] || absent+=("/lib/systemd/system/pinkeeper.service")
if [[ -n $missing ]]; then
    check_fail files "listed by dpkg -L but not on disk: $(echo "$missing" | tr '\n' ' ')"
elif ((${#absent[@]})); then
    check_fail files "not in the package: ${absent[*]}"
else
    check_pass files "all $(wc -l <"$logs/dpkg-L.txt") paths of dpkg -L exist, among them $unit_path, ${expected[*]}"
fi

conffiles=$(in_root "$root" dpkg-query -W -f='${Conffiles}' pinkeeper | awk 'NF {print $1}' | paste -sd' ')
if [[ " $conffiles " == *" /etc/pinkeeper/pinkeeper.toml "* ]]; then
    check_pass conffiles "$conffiles"
else
    check_fail conffiles "/etc/pinkeeper/pinkeeper.toml is not a conffile (conffiles: ${conffiles:-none})"
fi

if enabled=$(in_root "$root" systemctl is-enabled pinkeeper 2>&1) && [[ $enabled == enabled ]]; then
    check_pass enabled "systemctl is-enabled pinkeeper: $enabled"
else
    check_fail enabled "systemctl is-enabled pinkeeper: $enabled"
fi

# Every program the unit runs must exist: the package's Depends must bring what is not essential.
progs=$(sed -n 's/^Exec[A-Za-z]*=[-@:+!]*\([^ ]*\).*/\1/p' "$root$unit_path" | sort -u)
lacking=''
for p in $progs; do
    in_root "$root" test -x "$p" || lacking+="$p ($(grep -m1 -E "^Exec[A-Za-z]*=[-@:+!]*$p( |$)" "$root$unit_path")) "
done
if [[ -z $progs ]]; then
    check_fail unit-programs "no Exec*= lines in $unit_path"
elif [[ -n $lacking ]]; then
    hint=''
    [[ $lacking == */bin/kill* ]] &&
        hint="; on Debian 12 /bin/kill is in procps, which is not in a minimal system: the package must depend on it"
    check_fail unit-programs "missing in the installed system: $lacking$hint"
else
    check_pass unit-programs "all exist: ${progs//$'\n'/ }"
fi

version=$(dpkg-deb -f "$deb" Version)
if out=$(in_root "$root" pinkeeper --version 2>&1) && [[ $out == *"${version%-*}"* ]]; then
    check_pass version "pinkeeper --version: $out"
else
    check_fail version "pinkeeper --version: '$out'; expected it to contain ${version%-*}"
fi

if in_root "$root" pinkeeper check-config >"$logs/check-config.txt" 2>&1; then
    check_pass check-config "on the shipped /etc/pinkeeper/pinkeeper.toml: $(one_line "$logs/check-config.txt")"
else
    check_fail check-config "exit $? on the shipped /etc/pinkeeper/pinkeeper.toml: $(one_line "$logs/check-config.txt")"
fi

# ------------------------------------------------------------------ 3. boot
step "fixture pinning service on the host's loopback"
fixture_start "$work/fixture" "$logs/pinserver.log" || die "the fixture service did not start; log: $logs/pinserver.log"
fp1=$(fixture_fingerprint) fp2=$(fixture_fingerprint)
fixture_route app/init challenge "$delay" "$fp1" "$fp2"
echo "https://localhost:$FIXTURE_PORT (PID $FIXTURE_PID); store $store answers after $delay s"

step "boot the root with systemd-nspawn"
container_boot_checked

# Enabled by the package, so already started at boot, with the sample configuration (no store).
at_boot="$(show ActiveState)/$(show SubState)"
if [[ $at_boot == active/running ]]; then
    check_pass started-at-boot "active (running) after boot; StatusText=$(show StatusText)"
else
    check_fail started-at-boot "after boot: $at_boot, Result=$(show Result)"
    journal_tail 10
fi

# ------------------------------------------------------------------ 4. a store, restart
step "a stores.d drop-in for the fixture service, systemctl restart pinkeeper"
add_fixture_store "$store"
t0=$(date +%s%N)
in_container systemctl restart pinkeeper >"$logs/restart.log" 2>&1
rc=$?
took=$((($(date +%s%N) - t0) / 1000000))
cache_at_return=no
[[ -f $root/var/cache/pinkeeper/$store.json ]] && cache_at_return=yes
active="$(show ActiveState)/$(show SubState)"
ready_after=$((($(show ActiveEnterTimestampMonotonic) - $(show ExecMainStartTimestampMonotonic)) / 1000))
status_text=$(show StatusText)
if ((rc != 0)); then
    check_fail restart "systemctl restart exited $rc: $(one_line "$logs/restart.log")"
    journal_tail 10
elif [[ $active != active/running ]]; then
    check_fail restart "after restart: $active"
elif ((ready_after < delay * 1000 - 100)) || [[ $cache_at_return != yes ]]; then
    check_fail restart \
        "READY too early: active ${ready_after} ms after exec (the first fetch takes ${delay} s), cache at return: $cache_at_return"
elif [[ ! $status_text =~ ^1\ store:\ 1\ fresh ]]; then
    check_fail restart "StatusText='$status_text', expected '1 store: 1 fresh; …'"
else
    check_pass restart \
        "returned in $took ms, active (running); READY ${ready_after} ms after exec, after the first fetch; StatusText=$status_text"
fi

cache=/var/cache/pinkeeper/$store.json
if ! pins=$(cache_has_pins "$root$cache" "$fp1" "$fp2" 2>&1); then
    check_fail publish "$cache: ${pins:-missing}"
elif ! owner=$(in_container stat -c '%U:%G %a' "$cache") || [[ $owner != "pinkeeper:pinkeeper 644" ]]; then
    check_fail publish "$cache is '$owner', expected pinkeeper:pinkeeper 644"
elif ! in_container setpriv --reuid=nobody --regid=nogroup --clear-groups cat "$cache" >/dev/null 2>&1; then
    check_fail publish "user nobody cannot read $cache"
else
    check_pass publish "$cache: $pins; $owner, readable by nobody"
fi

fixture_route app/init challenge 0 "$fp1" "$fp2"
pid_before=$(show MainPID)
if in_container systemctl reload pinkeeper >"$logs/reload.log" 2>&1 &&
    [[ $(show ActiveState) == active && $(show MainPID) == "$pid_before" ]]; then
    check_pass reload "systemctl reload completed; still active as PID $pid_before"
else
    check_fail reload "systemctl reload: $(one_line "$logs/reload.log"); now $(show ActiveState), MainPID $(show MainPID)"
    journal_tail 4
fi

in_container journalctl -u pinkeeper "PINKEEPER_STORE=$store" PINKEEPER_RESULT=ok -o json --no-pager >"$logs/journal-$store.json" 2>&1
n=$(grep -c '"SYSLOG_IDENTIFIER":"pinkeeper"' "$logs/journal-$store.json")
if ((n >= 1)); then
    check_pass journal "journalctl -u pinkeeper PINKEEPER_STORE=$store PINKEEPER_RESULT=ok: $n entries"
else
    check_fail journal "journalctl -u pinkeeper PINKEEPER_STORE=$store PINKEEPER_RESULT=ok: no entries"
fi

# ------------------------------------------------------------------ 5. purge
step "apt-get purge pinkeeper (booted)"
purge_and_check "$logs/dpkg-L.txt" "$cache"

step "power off"
container_finish

# ------------------------------------------------------------------ 6. the upgrade
upgrade_case "$older_deb" "$deb"
logs=$work/logs  # for the last line (the upgrade case's logs are in logs/upgrade/)

# ------------------------------------------------------------------ done
step "power off"
_container_test_cleanup
printf '\npackage-test: %d passed, %d failed\n' "$CHECKS_PASSED" "$CHECKS_FAILED"
((CHECKS_FAILED == 0))
