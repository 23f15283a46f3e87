#!/usr/bin/env bash
# Usage: scripts/make-container-base.sh      make (or reuse) the local base image, print its name
#
# `make image` and `make container-test` build packaging/container/Containerfile offline, where no
# container registry is reachable: FROM a local stand-in for debian:bookworm-slim, imported into
# podman from the Debian 12 root that the nspawn tests already cache (scripts/make-rootfs.sh).
#
# The stand-in is that root trimmed to what a slim image has: debootstrap's minbase set (the
# `required` packages and apt) and nothing of what make-rootfs.sh added (systemd, dbus, libcurl4,
# ca-certificates and what they pulled in), so that the image's own layer installs what it must
# install on the real base and has the real size; documentation, man pages and translations
# removed, as the slim images leave them out. Its apt lists stay, and the Debian packages that
# the image and the test's reader image install are downloaded into its apt cache, so that
# `apt-get update && apt-get install …` in a build without network finds everything: apt-get
# update only warns when it cannot reach the mirror.
#
# Made once per machine (the downloads need the Debian mirror, like debootstrap) and kept in
# podman's image store, labelled with its recipe; a base of another recipe is made again.
# Needs root and podman; CONTAINERS_CONF as for the other podman commands (container.mk).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
top=$(pwd -P)
# shellcheck source=scripts/nspawn.sh
source scripts/nspawn.sh

image=localhost/pinkeeper-base:bookworm
# Downloaded, not installed: what the Containerfile installs (tini, a sysusers that needs no
# systemd, the CA store) and what the .deb depends on beyond a slim system; python3 for the
# test's reader image.
cached='tini systemd-standalone-sysusers ca-certificates procps libcurl4 libssl3 python3'
recipe_version=3  # bump to make the base again when the steps below change
recipe="minbase cached=$cached recipe=$recipe_version"
label=org.pinkeeper.base-recipe

die() { echo "make-container-base: $*" >&2; exit 1; }
log() { echo "make-container-base: $*" >&2; }

[[ $(id -u) -eq 0 ]] || die "must run as root (the root's files belong to other users)"
command -v podman >/dev/null || die "podman is missing: run scripts/install-deps.sh podman runc"

work=$top/.build/container-base
mkdir -p "$work"
# One maker per machine, as the image store is the machine's (re-checked under the lock).
lock_dir=/var/cache/pinkeeper-test
mkdir -p "$lock_dir"
exec 9>"$lock_dir/.container-base.lock"
flock 9

if [[ $(podman image inspect --format "{{index .Labels \"$label\"}}" "$image" 2>/dev/null) == "$recipe" ]]; then
    log "reusing $image"
    echo "$image"
    exit 0
fi

root=$work/root
trap 'rm -rf --one-file-system "$root"' EXIT
started=$SECONDS
scripts/make-rootfs.sh --copy "$root" >/dev/null || die "no Debian root (make-rootfs.sh says why above)"

logfile=$work/make.log
: >"$logfile"
# Every package not in minbase goes: all marked as automatically installed but the `required`
# ones and apt, then apt's autoremove, which keeps nothing for being recommended (minbase has
# no recommended package: apt's ca-certificates among them).
trim() {
    # shellcheck disable=SC2016  # expanded by the shell in the root
    in_root "$root" sh -c 'apt-mark auto $(dpkg-query -W -f "\${Package}\n") &&
        apt-mark manual apt $(dpkg-query -W -f "\${Package} \${Priority}\n" | awk "\$2 == \"required\" { print \$1 }") &&
        apt-get autoremove --purge -y -o APT::AutoRemove::RecommendsImportant=false'
}
trim >>"$logfile" 2>&1 || { tail -n 20 "$logfile" >&2; die "trimming the root failed; log: $logfile"; }
# shellcheck disable=SC2086
download() { in_root "$root" apt-get install -y --download-only --no-install-recommends ${cached} >>"$logfile" 2>&1; }
if ! download; then
    log "the root's package lists are older than the mirror: apt-get update, then again"
    in_root "$root" apt-get update -qq >>"$logfile" 2>&1 || true
    download || { tail -n 20 "$logfile" >&2; die "downloading the cached packages failed; log: $logfile"; }
fi
# What a slim image leaves out; the packages' copyright files stay.
find "$root/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete 2>/dev/null || true
rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* \
    "$root"/var/lib/apt/lists/*Translation* "$root"/var/cache/apt/*.bin "$root"/var/log/apt/* "$root"/var/log/dpkg.log
rm -f "$root/.pinkeeper-rootfs-complete"

old=$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null) || old=''
tar -C "$root" --numeric-owner -c . |
    podman import --change "LABEL $label=\"$recipe\"" --change 'CMD ["/bin/bash"]' - "$image" >>"$logfile" 2>&1 ||
    { tail -n 20 "$logfile" >&2; die "podman import failed; log: $logfile"; }
# The base it replaces, now untagged (unless an image still builds on it).
[[ -n $old ]] && podman rmi "$old" >/dev/null 2>&1
size=$(podman image inspect --format '{{.Size}}' "$image" | numfmt --to=iec)
log "$image made in $((SECONDS - started)) s ($size with its cached packages)"
echo "$image"
