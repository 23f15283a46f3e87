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
flags=(-sanitize=fuzzer,address -O -g -parse-as-library -swift-version 6 -use-ld=lld -I Sources/CLibcrypto -I Sources/CLibssl)

# The reader library's parsing half: the module the daemon imports as PinKeeper.
reader=(Sources/PinKeeper/Pin.swift Sources/PinKeeper/PinList.swift Sources/PinKeeper/DomainsConfig.swift
        Sources/PinKeeper/ListMode.swift Sources/PinKeeper/CacheFile.swift Sources/PinKeeper/FileIdentity.swift
        Sources/PinKeeper/SHA256.swift Sources/PinKeeper/PinListDecoder.swift Sources/PinKeeper/JSONScanner.swift
        Sources/PinKeeper/Base64Digest.swift Sources/PinKeeper/Certificate.swift Sources/PinKeeper/PinName.swift)
# The daemon's untrusted-input path, compiled as module PinKeeperDaemon with the entry point, and
# the JSONDecoder-based list decoder the product used before, which the target compares with.
daemon=(Sources/PinKeeperDaemon/Crypto/PublicKey.swift Sources/PinKeeperDaemon/Crypto/SignatureVerifier.swift
        Sources/PinKeeperDaemon/Update/ListExchange.swift Sources/PinKeeperDaemon/Update/PinMerger.swift
        Sources/PinKeeperDaemon/Core/UpdateResult.swift Sources/PinKeeperDaemon/Core/WallClock.swift Sources/PinKeeperDaemon/Core/RandomSource.swift
        Sources/PinKeeperDaemon/Fetch/HTTPRequest.swift Sources/PinKeeperDaemon/Fetch/ValidatorFields.swift
        Sources/PinKeeperDaemon/Config/Configuration.swift Sources/PinKeeperDaemon/Config/FetchNeutral.swift
        Sources/PinKeeperDaemon/Config/ProxySetting.swift Sources/PinKeeperDaemon/Config/ProbeSettings.swift
        Sources/PinKeeperDaemon/TLS/TLSConnect.swift Sources/PinKeeperDaemon/Runtime/BlockingWork.swift
        Sources/PinKeeperDaemon/Publish/StoreState.swift Sources/PinKeeperDaemon/Publish/AtomicWriter.swift
        Sources/PinKeeperDaemon/Publish/FileSystem.swift Sources/PinKeeperDaemon/Publish/CacheDirectory.swift
        Sources/PinKeeperDaemon/Publish/RegularFile.swift
        Sources/PinKeeperDaemon/Publish/FileMemo.swift Sources/PinKeeperDaemon/Runtime/ParallelLoop.swift
        Sources/PinKeeperDaemon/Runtime/ConditionLock.swift Sources/PinKeeperDaemon/Runtime/StandardError.swift
        Sources/PinKeeperDaemon/Text/StringEdits.swift Sources/PinKeeperDaemon/Core/Saturating.swift
        Sources/PinKeeperDaemon/Core/HostName.swift Sources/PinKeeperDaemon/Core/StoreFiles.swift
        Tests/PinKeeperTests/ReferencePinListDecoder.swift)

newer() { # true when $1 is missing or older than any later argument
    local target=$1; shift
    [[ ! -e $target ]] && return 0
    for f in "$@"; do [[ $f -nt $target ]] && return 0; done
    return 1
}

if newer "$out/pinkeeper-fuzz" "${reader[@]}" "${daemon[@]}" Tests/Fuzz/FuzzTarget.swift Tests/Fuzz/run.sh; then
    echo "fuzz: building $out/pinkeeper-fuzz" >&2
    swiftc "${flags[@]}" -module-name PinKeeper -wmo -emit-module -emit-module-path "$out/PinKeeper.swiftmodule" \
        -c "${reader[@]}" -o "$out/PinKeeper.o"
    swiftc "${flags[@]}" -module-name PinKeeperDaemon -I "$out" "${daemon[@]}" Tests/Fuzz/FuzzTarget.swift \
        "$out/PinKeeper.o" -lssl -lcrypto -o "$out/pinkeeper-fuzz"
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
