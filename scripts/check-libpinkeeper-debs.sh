#!/usr/bin/env bash
# `make deb`'s check of the C reader's packages: libpinkeeper0 and libpinkeeper-dev unpacked into
# a scratch root, the two example programs of docs/examples/c compiled against them with
# `pkg-config --cflags --libs pinkeeper` (the -dev package's .pc file, nothing from the tree),
# and run: with no cache for the store and a port nothing listens on, each prints one line and
# exits 1, which shows the programs link and load the packaged library.
# Usage: scripts/check-libpinkeeper-debs.sh DEB-DIRECTORY VERSION
set -euo pipefail
cd "$(dirname "$0")/.."
debs=${1:?usage: check-libpinkeeper-debs.sh DEB-DIRECTORY VERSION} version=${2:?version}
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
for package in libpinkeeper0 libpinkeeper-dev; do
    dpkg-deb -x "$debs/${package}_${version}_${arch}.deb" "$root"
done
# The package's .pc file read as if the scratch root were /: its /usr paths are moved under it
# (kept, though they are the system's usual ones), and OpenSSL's .pc files come from the system.
export PKG_CONFIG_PATH=$root/usr/lib/$multiarch/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
export PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
flags=$(pkg-config --cflags --libs pinkeeper)
[[ $flags == *"$root"* ]] || { echo "FAIL pkg-config did not take pinkeeper from the package: $flags"; exit 1; }
mkdir -p "$root/cache"
status=0
for example in pinned-get-openssl pinned-get-curl; do
    # The examples call OpenSSL (and libcurl) themselves, as the tests build them (readers/c/c.mk).
    extra="-lssl -lcrypto"
    [[ $example == pinned-get-curl ]] && extra="$extra -lcurl"
    # shellcheck disable=SC2086  # the flags are words
    cc -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -o "$root/$example" "docs/examples/c/$example.c" $flags $extra \
        -Wl,-rpath,"$root/usr/lib/$multiarch"
    set +e
    output=$("$root/$example" --cache-directory "$root/cache" --store demo https://127.0.0.1:9/ 2>&1)
    code=$?
    set -e
    lines=$(printf '%s\n' "$output" | wc -l)
    if [[ $code -eq 1 && $lines -eq 1 ]]; then
        echo "PASS $example, built from the packages: refused with one line: $output"
    else
        echo "FAIL $example, built from the packages: exit $code, $lines lines: $output"
        status=1
    fi
done
exit $status
