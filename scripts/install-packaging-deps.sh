#!/usr/bin/env bash
# Installs the Debian tools that packaging needs. Idempotent: refreshes the package lists and
# installs only when something is missing. Needs root (or sudo) then.
#
#   scripts/install-packaging-deps.sh        everything `make deb` needs (and `man`)
#   scripts/install-packaging-deps.sh man    only groff, for `make man-check`
#
# The Swift toolchain is not a Debian package: `make deb` expects `swift` on PATH, as every
# other target does.
set -euo pipefail

man_packages=(groff-base)
deb_packages=(
  debhelper            # dh, dh_installsystemd, dh_installsysusers (debhelper-compat 13)
  dpkg-dev             # dpkg-buildpackage, dpkg-shlibdeps, dpkg-deb
  build-essential      # dpkg-buildpackage checks that it is installed
  fakeroot             # dpkg-buildpackage's default root command when not run as root
  lintian              # `make deb` fails on any lintian error
  libcurl4-openssl-dev libssl-dev libsystemd-dev pkg-config   # Build-Depends of the package
)

case "${1:-all}" in
  man) packages=("${man_packages[@]}") ;;
  all) packages=("${man_packages[@]}" "${deb_packages[@]}") ;;
  *) echo "usage: $0 [man]" >&2; exit 64 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

echo "installing: ${missing[*]}"
as_root apt-get update -qq
DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
