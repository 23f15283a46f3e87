#!/usr/bin/env bash
# Usage: scripts/make-rootfs.sh [NAME]          make (or reuse) the pristine root, print its path
#        scripts/make-rootfs.sh --copy DEST [NAME]   ... and copy it to DEST (replacing DEST)
#
# A minimal Debian 12 root for the tests that boot a real systemd with systemd-nspawn
# (scripts/systemd-test.sh, scripts/package-test.sh). Never booted itself: every test copies
# it (cp --reflink=auto) into a scratch root of its own, so each run starts clean and the
# debootstrap (a few minutes) happens once per machine.
#
# The pristine root is DIR/NAME (NAME default: bookworm), DIR being $PINKEEPER_ROOTFS_DIR or else
# /var/cache/pinkeeper-test/rootfs: one per machine, outside every clone, so that a fresh clone
# (CI) reuses the root an earlier run made instead of running debootstrap again, and `make
# clean` keeps it. It is built in a temporary folder beside it, which gets a marker file last
# and is then renamed into place: a root without the marker (an interrupted run) is never
# used. The marker records the recipe (suite, variant, packages); a root made with another
# recipe is rebuilt.
#
# The Debian mirror is the first `deb` source for bookworm in this machine's apt configuration
# (/etc/apt/sources.list, /etc/apt/sources.list.d/*.list and *.sources), or DEBIAN_MIRROR.
# Needs root, debootstrap and the Debian archive keyring (scripts/install-container-deps.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
top=$(pwd -P)

suite=bookworm
variant=minbase
# systemd as PID 1 (systemd-sysv), a system bus for systemctl/journalctl, and the daemon's
# run-time libraries: nothing more, so that package-test sees what the .deb must depend on.
packages=systemd,systemd-sysv,dbus,libcurl4,libssl3,ca-certificates
# Downloaded into the root's apt cache (with what they recommend) but not installed, so that
# a test can install them without the network: procps has /bin/kill (on Debian 12 not in
# util-linux), which the unit's ExecReload= runs; package-test lets apt pull it in only if the
# .deb depends on it.
cached_only=procps
recipe_version=2  # bump to force a rebuild when the steps below change
recipe="suite=$suite variant=$variant packages=$packages cached=$cached_only recipe=$recipe_version"
marker_name=.pinkeeper-rootfs-complete

die() { echo "make-rootfs: $*" >&2; exit 1; }
log() { echo "make-rootfs: $*" >&2; }

copy_to=''
if [[ ${1:-} == --copy ]]; then
    [[ $# -ge 2 ]] || die "usage: $0 --copy DEST [NAME]"
    copy_to=$2
    shift 2
fi
name=${1:-$suite}
[[ $name =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || die "bad root name: $name"

[[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap, and files owned by other users in the root)"

base=${PINKEEPER_ROOTFS_DIR:-/var/cache/pinkeeper-test/rootfs}
[[ $base == /* ]] || base=$top/$base  # a relative DIR is taken from the repository root
root=$base/$name
mkdir -p "$base"

# Unmounts anything left mounted below $1 (an interrupted debootstrap leaves /proc, /sys),
# then removes it without crossing into another file system.
remove_tree() {
    local dir=$1 mp
    [[ -e $dir ]] || return 0
    dir=$(realpath "$dir")
    # Deepest first; mountinfo escapes spaces as \040, which our paths never contain.
    while read -r mp; do
        umount -l "$mp" 2>/dev/null || true
    done < <(awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r)
    rm -rf --one-file-system "$dir"
}

# Runs a command chrooted into root $1, in a private mount and PID namespace with /proc mounted
# (nothing is mounted in the host's namespace). Never boots anything.
in_root() {
    local r=$1
    shift
    unshare --mount --pid --fork --mount-proc="$r/proc" chroot "$r" "$@"
}

# First URI of a `deb` source whose suites include bookworm, from the machine's apt sources.
mirror_from_apt() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -f $f ]] || continue
        # deb [options] URI SUITE COMPONENT...
        awk -v s="$suite" '
            $1 == "deb" {
                i = 2
                if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                if ($(i + 1) == s) { print $i; exit }
            }' "$f"
    done | head -n 1 | grep . && return 0
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f $f ]] || continue
        # deb822 stanzas: Types, URIs, Suites (comment lines start with #).
        awk -v s="$suite" '
            function flush() {
                if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " s " ") && enabled != "no" && uris != "") {
                    split(uris, u, " "); print u[1]; found = 1; exit
                }
                types = ""; uris = ""; suites = ""; enabled = ""
            }
            /^#/ { next }
            /^[ \t]*$/ { flush(); next }
            { key = tolower($1); sub(/:$/, "", key); $1 = ""; sub(/^ +/, "")
              if (key == "types") types = $0
              else if (key == "uris") uris = $0
              else if (key == "suites") suites = $0
              else if (key == "enabled") enabled = tolower($0) }
            END { if (!found) flush() }' "$f"
    done | head -n 1 | grep .
}

build_root() {
    local mirror tmp
    mirror=${DEBIAN_MIRROR:-}
    if [[ -z $mirror ]]; then
        mirror=$(mirror_from_apt) ||
            die "no 'deb' source for $suite in /etc/apt/sources.list{,.d/}: set DEBIAN_MIRROR to a Debian mirror URL"
    fi
    command -v debootstrap >/dev/null || die "debootstrap is missing: run scripts/install-container-deps.sh"

    # Half-made roots of runs that were killed (we hold the lock: no other run is making one).
    local stale
    for stale in "$base/.$name".tmp.*; do
        [[ -d $stale ]] && remove_tree "$stale"
    done
    tmp=$base/.$name.tmp.$$
    # An interrupted run removes its half-made root (and anything debootstrap left mounted).
    trap 'remove_tree "$tmp"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    mkdir -p "$tmp"

    log "debootstrap --variant=$variant $suite from $mirror into $root (once; a few minutes)"
    local started=$SECONDS
    # In a private mount namespace: what debootstrap mounts in the root (/proc, /sys) goes away
    # with it, even if it is killed.
    if ! unshare --mount --propagation private \
        debootstrap --variant="$variant" --include="$packages" "$suite" "$tmp" "$mirror" \
        >"$base/$name.debootstrap.log" 2>&1; then
        tail -n 30 "$base/$name.debootstrap.log" >&2
        die "debootstrap failed; the whole log: $base/$name.debootstrap.log"
    fi

    # Tidy the root for booting in a container: no host name of its own (nspawn sets the
    # machine name), localhost in /etc/hosts (minbase has no netbase), an empty machine-id (a
    # fresh one per boot), no downloaded packages.
    rm -f "$tmp/etc/hostname"
    [[ -s $tmp/etc/hosts ]] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$tmp/etc/hosts"
    : >"$tmp/etc/machine-id"
    rm -f "$tmp"/var/cache/apt/archives/*.deb
    # The package lists (so that apt inside the root resolves a local .deb's dependencies
    # offline) and the cached-only packages. In a private mount namespace, with /proc.
    if ! in_root "$tmp" apt-get update -qq >>"$base/$name.debootstrap.log" 2>&1 ||
        ! in_root "$tmp" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --download-only \
            ${cached_only//,/ } >>"$base/$name.debootstrap.log" 2>&1; then
        tail -n 30 "$base/$name.debootstrap.log" >&2
        die "apt-get in the new root failed; the whole log: $base/$name.debootstrap.log"
    fi

    echo "$recipe" >"$tmp/$marker_name"  # last: marks the root complete
    sync -f "$tmp/$marker_name" 2>/dev/null || true
    remove_tree "$root"
    mv -T "$tmp" "$root"
    trap - EXIT INT TERM
    log "root ready in $((SECONDS - started)) s: $root"
}

# One maker at a time (both tests may start together); re-check under the lock.
exec 8>"$base/.$name.lock"
flock 8
if [[ -f $root/$marker_name && $(<"$root/$marker_name") == "$recipe" ]]; then
    log "reusing the cached root $root"
else
    [[ -e $root ]] && log "the cached root $root is incomplete or of another recipe: rebuilding it"
    build_root
fi

if [[ -n $copy_to ]]; then
    # Copy while still holding the lock, so that no rebuild replaces the root under us.
    started=$SECONDS
    remove_tree "$copy_to"
    mkdir -p "$(dirname "$copy_to")"
    cp -a --reflink=auto "$root" "$copy_to"
    rm -f "$copy_to/$marker_name"
    log "copied to $copy_to in $((SECONDS - started)) s"
    echo "$copy_to"
else
    echo "$root"
fi
