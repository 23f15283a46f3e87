#!/usr/bin/env bash
# Installs what scripts/systemd-test.sh and scripts/package-test.sh need on the host, on top of
# the build and test set-up: debootstrap and the Debian keyring (the root), systemd-container
# (systemd-nspawn) and util-linux (nsenter, unshare, setpriv). Idempotent; needs root.
set -euo pipefail
exec "$(dirname "$0")/install-deps.sh" debootstrap debian-archive-keyring systemd-container util-linux "$@"
