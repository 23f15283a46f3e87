#!/usr/bin/env bash
# Installs what scripts/systemd-test.sh and scripts/package-test.sh need on the host:
# debootstrap and the Debian keyring (the root), systemd-container (systemd-nspawn),
# util-linux (nsenter, unshare, setpriv), and python3 + openssl + cryptography for the fixture
# pinning service. Idempotent: does nothing when all of it is there; otherwise runs
# `apt-get update` once, then installs only what is missing. Needs root.
set -euo pipefail

packages=(debootstrap debian-archive-keyring systemd-container util-linux python3 openssl "$@")
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if [ ${#missing[@]} -gt 0 ]; then
    echo "install-container-deps: installing ${missing[*]}"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The fixture service signs lists with Python's `cryptography`.
if ! python3 -c 'import cryptography' 2>/dev/null; then
    echo "install-container-deps: installing the Python cryptography package"
    python3 -m pip install --quiet cryptography || as_root apt-get install -y -qq python3-cryptography >/dev/null
fi
