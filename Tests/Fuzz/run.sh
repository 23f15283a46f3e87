#!/usr/bin/env bash
# Usage: Tests/Fuzz/run.sh [SECONDS] [extra libFuzzer flags...]
# Builds the libFuzzer target (swiftc -sanitize=fuzzer,address) from the product sources
# themselves and runs it for SECONDS (default 600) on all cores but one... or one job when the
# machine has two. New inputs go to .build/fuzz/corpus (the committed seeds in Tests/Fuzz/corpus are
# only read); a crash is written to Tests/Fuzz/crashers/ and the run stops.
#   FUZZ_BUILD_ONLY=1 Tests/Fuzz/run.sh    build only
#   Tests/Fuzz/run.sh 0 Tests/Fuzz/crashers/X    replay one input (any path argument replays instead of fuzzing)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-600}
shift || true

out=.build/fuzz
mkdir -p "$out/corpus" Tests/Fuzz/crashers
# One package, as SwiftPM builds it: the modules share their `package` declarations and build
# with the upcoming features that Package.swift turns on.
flags=(-sanitize=fuzzer,address -O -g -parse-as-library -swift-version 6 -use-ld=lld -package-name pinkeeper
       -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault
       -enable-upcoming-feature MemberImportVisibility)

# Every module is compiled from all of its sources, as SwiftPM compiles it, so a file added to the
# product needs no change here. Swift files, sorted so that the list of inputs ($out/inputs) is stable:
sources() { find "$@" -name '*.swift' | LC_ALL=C sort; }
# The reader library, the module the daemon imports as PinKeeper.
reader=($(sources Sources/PinKeeper))
# The whole daemon, compiled as module PinKeeperDaemon with the entry point and the JSONDecoder-based
# list decoder the product used before, which the target compares with.
daemon=($(sources Sources/PinKeeperDaemon) Tests/Fuzz/FuzzTarget.swift Tests/TestSupport/FuzzInput.swift
        Tests/PinKeeperTests/ReferencePinListDecoder.swift)
# The C targets: a directory of Sources/ with a module map (system libraries: at its top; C code:
# under include/, beside the .c files compiled here). Their module maps name the libraries to link.
c_includes=() c_sources=() c_files=()
for dir in Sources/*/; do
    dir=${dir%/}
    if [[ -f $dir/module.modulemap ]]; then
        c_includes+=(-I "$dir")
    elif [[ -f $dir/include/module.modulemap ]]; then
        c_includes+=(-I "$dir/include")
        c_sources+=($(find "$dir" -name '*.c' | LC_ALL=C sort))
    else
        continue
    fi
    c_files+=($(find "$dir" -type f | LC_ALL=C sort))
done
# swift-log, from the checkout SwiftPM resolved (Package.resolved): its Logging module.
swift package resolve >/dev/null
swift_log=$(swift package show-dependencies --format json |
    python3 -c 'import json, sys; print(next(d["path"] for d in json.load(sys.stdin)["dependencies"] if d["identity"] == "swift-log"))')
logging=($(sources "$swift_log/Sources/Logging"))

inputs=("${logging[@]}" "${c_files[@]}" "${reader[@]}" "${daemon[@]}" Tests/Fuzz/run.sh)
newer() { # true when $1 is missing or older than any later argument
    local target=$1; shift
    [[ ! -e $target ]] && return 0
    for f in "$@"; do [[ $f -nt $target ]] && return 0; done
    return 1
}
# Rebuilt when a source changed, or when one was added or removed (the list differs).
if newer "$out/pinkeeper-fuzz" "${inputs[@]}" || ! printf '%s\n' "${inputs[@]}" | cmp -s - "$out/inputs"; then
    echo "fuzz: building $out/pinkeeper-fuzz" >&2
    rm -f "$out/inputs"
    swiftc -O -g -parse-as-library -swift-version 6 -package-name swift_log -module-name Logging -wmo \
        -emit-module -emit-module-path "$out/Logging.swiftmodule" -c "${logging[@]}" -o "$out/Logging.o"
    c_objects=()
    for c in "${c_sources[@]}"; do
        object="$out/$(basename "$c" .c).o"
        clang -O2 -g -fPIC "${c_includes[@]}" -c "$c" -o "$object"
        c_objects+=("$object")
    done
    swiftc "${flags[@]}" "${c_includes[@]}" -module-name PinKeeper -wmo -emit-module \
        -emit-module-path "$out/PinKeeper.swiftmodule" -c "${reader[@]}" -o "$out/PinKeeper.o"
    swiftc "${flags[@]}" "${c_includes[@]}" -j "$(nproc)" -module-name PinKeeperDaemon -I "$out" "${daemon[@]}" \
        "$out/PinKeeper.o" "$out/Logging.o" "${c_objects[@]}" -o "$out/pinkeeper-fuzz"
    printf '%s\n' "${inputs[@]}" >"$out/inputs"
fi
[[ ${FUZZ_BUILD_ONLY:-0} == 1 ]] && exit 0

# Replay mode: any argument that is an existing file.
if [[ $# -gt 0 && -f $1 ]]; then
    exec "$out/pinkeeper-fuzz" "$@"
fi

# The Swift runtime and Foundation keep process-lifetime caches that LeakSanitizer reports at
# exit; leaks are not what this target looks for (ASan still catches every memory error).
exec "$out/pinkeeper-fuzz" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
    -detect_leaks=0 -print_final_stats=1 -artifact_prefix=Tests/Fuzz/crashers/ -dict=Tests/Fuzz/pinkeeper.dict \
    "$@" "$out/corpus" Tests/Fuzz/corpus
