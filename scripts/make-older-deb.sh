#!/usr/bin/env bash
# Usage: scripts/make-older-deb.sh OLDER_VERSION      (make deb-older)
#
# The tree packaged as an older version, for the upgrade case of `make package-test`: it installs
# this package, then upgrades to the one `make deb` builds. OLDER_VERSION must sort before the
# tree's version for dpkg (packaging.mk passes <version>~older1). The tree (the files git would
# commit, without .build/) is mirrored into .build/older/src/, where these differ:
#
#   Sources/PinKeeperDaemon/Core/Version.swift  `pinkeeper --version` says OLDER_VERSION, so the
#                                               test can tell which binary the service runs
#   packaging/debian/changelog, docs/man/*      the version `make deb` and `make man-check` demand
#   etc/pinkeeper/pinkeeper.toml                one more comment line: the newer package ships a
#                                               changed sample, which is when dpkg asks about a
#                                               conffile the administrator changed
#
# Then `make deb` runs there (its own release build, and lintian). The mirror rewrites only the
# files whose content differs, so an unchanged tree is not compiled again. Prints the .deb's path
# (a copy in .build/older/); the build's output goes to .build/older/deb.log.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
top=$(pwd -P)
older=${1:?usage: $0 OLDER_VERSION}
out=$top/.build/older
mirror=$out/src

die() { echo "make-older-deb: $*" >&2; exit 1; }

version=$(sed -n 's/.*static let string = "\([^"]*\)".*/\1/p' Sources/PinKeeperDaemon/Core/Version.swift)
[[ -n $version ]] || die "no version in Sources/PinKeeperDaemon/Core/Version.swift"
dpkg --compare-versions "$older" lt "$version" || die "$older is not older than $version for dpkg"

# The content the mirror must hold for one file: the tree's, or the tree's with the version
# (or the sample) changed. A rewrite that changes nothing fails, so a moved string cannot
# silently give a package of the wrong version.
patched() {
    local file=$1 tmp=$2
    case $file in
    Sources/PinKeeperDaemon/Core/Version.swift)
        sed "s/static let string = \"$version\"/static let string = \"$older\"/" "$file" >"$tmp" ;;
    packaging/debian/changelog)
        sed "1s/^pinkeeper ($version)/pinkeeper ($older)/" "$file" >"$tmp" ;;
    docs/man/*.[0-9])
        sed "/^\.TH /s/\"pinkeeper $version\"/\"pinkeeper $older\"/" "$file" >"$tmp" ;;
    etc/pinkeeper/pinkeeper.toml)
        sed "1a # (Only in the sample of the older package that make deb-older builds.)" "$file" >"$tmp" ;;
    *) return 1 ;;
    esac
    ! cmp -s "$file" "$tmp" || die "could not put version $older into $file"
}

# ------------------------------------------------------------------ the mirror
mkdir -p "$mirror"
declare -A wanted=()
changed=0
while IFS= read -r -d '' file; do
    [[ -f $file && ! -L $file ]] || continue  # deleted, or a link (the tree has none to keep)
    wanted[$file]=1
    dest=$mirror/$file
    mkdir -p "$(dirname "$dest")"
    tmp=$dest.older-tmp
    if patched "$file" "$tmp"; then
        chmod --reference="$file" "$tmp"
        if cmp -s "$tmp" "$dest"; then rm -f "$tmp"; else mv -f "$tmp" "$dest"; changed=$((changed + 1)); fi
    elif ! cmp -s "$file" "$dest"; then
        cp -p "$file" "$dest"
        changed=$((changed + 1))
    fi
done < <(git ls-files -z --cached --others --exclude-standard)
((${#wanted[@]} > 0)) || die "git ls-files listed no file: is $top a git checkout?"
for file in Sources/PinKeeperDaemon/Core/Version.swift packaging/debian/changelog etc/pinkeeper/pinkeeper.toml; do
    [[ -n ${wanted[$file]:-} ]] || die "$file is not in the tree"
done
# Files the tree no longer has.
while IFS= read -r -d '' file; do
    file=${file#./}
    [[ -n ${wanted[$file]:-} ]] || { rm -f "$mirror/$file"; changed=$((changed + 1)); }
done < <(cd "$mirror" && find . -path ./.build -prune -o -type f -print0)
echo "make-older-deb: $mirror mirrors the tree as version $older ($changed files written)" >&2

# The Swift dependencies the tree has already fetched, so the mirror needs no network for them.
if [[ ! -e $mirror/.build/workspace-state.json && -e $top/.build/workspace-state.json ]]; then
    mkdir -p "$mirror/.build"
    cp -a "$top/.build/workspace-state.json" "$top/.build/checkouts" "$top/.build/repositories" "$mirror/.build/"
fi

# ------------------------------------------------------------------ the package
started=$SECONDS
echo "make-older-deb: make deb in $mirror (log: $out/deb.log)" >&2
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$mirror" deb >"$out/deb.log" 2>&1; then
    tail -n 30 "$out/deb.log" >&2
    die "make deb failed in $mirror; the whole log: $out/deb.log"
fi
deb=$mirror/.build/deb/pinkeeper_${older}_$(dpkg --print-architecture).deb
[[ -f $deb ]] || die "make deb did not build $deb"
rm -f "$out"/pinkeeper_*.deb
cp "$deb" "$out/"
echo "make-older-deb: built in $((SECONDS - started)) s" >&2
echo "$out/$(basename "$deb")"
