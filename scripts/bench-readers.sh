#!/usr/bin/env bash
# Reader benchmarks (docs/performance.md, "Readers"); not a test, nothing is asserted.
#   1. validations per second in-process, CacheReader on a 1,000-entry store (PINS=N: N entries)
#   2. wall time of one `pinkeeper validate --fingerprint` process (release build)
# Usage: [PINS=N] [PINKEEPER=path] scripts/bench-readers.sh [SECONDS-PER-MEASUREMENT]   (default 3)
# Needs: swift, python3; hyperfine is used when installed (apt-get install hyperfine),
# otherwise a timed loop of 100 runs.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3}
pins=${PINS:-1000}
work=$(mktemp -d "${TMPDIR:-/tmp}/pinkeeper-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(swift --version 2>&1 | head -1)"

# PINKEEPER=path measures that binary (e.g. the one scripts/bench.sh built) instead of building one.
if [[ -n ${PINKEEPER:-} ]]; then pinkeeper=$PINKEEPER; else
    echo "== building pinkeeper (release)"
    swift build -c release --product pinkeeper >/dev/null
    pinkeeper=$(swift build -c release --show-bin-path)/pinkeeper
fi

echo "== a store of $pins entries ($((pins / 2)) common names x 2 pins)"
mkdir -p "$work/cache" "$work/state"
chmod 755 "$work/cache" "$work/state"
python3 - "$work" "$pins" <<'PY'
import base64, hashlib, json, sys
work = sys.argv[1]
entries = []
for i in range(int(sys.argv[2]) // 2):
    for j in range(2):
        digest = hashlib.sha256(f"cert-{i}-{j}".encode()).digest()
        entries.append({"name": f"host{i:03d}.example.com", "fingerprint": base64.b64encode(digest).decode(),
                        "expires": 4102444800 - j * 86400})
entries.sort(key=lambda e: (e["name"], -e["expires"]))
lines = ",\n".join("    " + json.dumps(e) for e in entries)
with open(f"{work}/cache/bench.json", "w") as f:
    f.write('{\n  "fingerprints": [\n' + lines + '\n  ],\n  "pinkeeper": {"format": 1, "store": "bench", '
            '"source": "https://pins.example.com/bench", "updated": 1763770000, "nextUpdate": 4102000000}\n}\n')
with open(f"{work}/pinkeeper.toml", "w") as f:
    f.write(f'cache_directory = "{work}/cache"\nstate_directory = "{work}/state"\n[stores.bench]\n'
            'url = "https://pins.example.com/bench"\n'
            'public_key = "BC3kV9OIDnMuVoCdDR9nEA/JidJLTTDLuSA2TSZsGgODSshfbZg31MS90WC/HdbU/A5WL5GmyDkE/iks6INv+XE="\n')
print(hashlib.sha256(b"cert-250-0").digest().hex(), file=open(f"{work}/probe", "w"))
PY
to_base64='import base64,sys; print(base64.b64encode(bytes.fromhex(open(sys.argv[1]).read().strip())).decode())'
fingerprint=$(python3 -c "$to_base64" "$work/probe")
echo "   $(wc -c <"$work/cache/bench.json") bytes"

echo "== in-process: CacheReader (PinKeeper sources + scripts/bench-readers.swift, swiftc -O -wmo)"
swiftc -O -wmo -parse-as-library -module-name BenchReaders -I Sources/CLibcrypto \
    Sources/PinKeeper/*.swift scripts/bench-readers.swift -lcrypto -o "$work/bench-readers"
"$work/bench-readers" "$work/cache/bench.json" "$seconds"

echo "== one process: pinkeeper validate --fingerprint (trusted answer)"
command=("$pinkeeper" validate --config "$work/pinkeeper.toml" --store bench --name host250.example.com --fingerprint "$fingerprint")
"${command[@]}"
if command -v hyperfine >/dev/null 2>&1; then
    hyperfine --warmup 10 --runs 200 -N "${command[*]}"
else
    runs=100
    start=$(date +%s%N)
    for _ in $(seq "$runs"); do "${command[@]}" >/dev/null; done
    end=$(date +%s%N)
    echo "   mean wall time over $runs runs: $(( (end - start) / runs / 1000 )) µs (hyperfine not installed)"
fi
