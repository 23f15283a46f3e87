#!/usr/bin/env bash
# Installs the Debian packages (and the Python signer) that building and testing need.
# Idempotent: installs only what is missing. Needs root (or sudo) when something is missing.
set -euo pipefail

packages=(libcurl4-openssl-dev libssl-dev libsystemd-dev pkg-config openssl python3 systemd jq tinyproxy tini "$@")
# faketime: the conformance runners freeze each command's clock at a case's time (validate has no time option).
packages+=(faketime)
# The Java reader (readers/java): Jackson and JUnit 5 jars under /usr/share/java, and a JDK unless one is on PATH.
packages+=(libjackson2-databind-java junit5)
command -v javac >/dev/null 2>&1 || packages+=(default-jdk-headless)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The test fixtures sign lists with Python's `cryptography` (an independent ECDSA implementation);
# the cache schema is checked with `jsonschema`; the Python reader's tests (readers/python) use
# pytest and the HTTP libraries it supports. pip first: python3 may not be Debian's.
for module in cryptography jsonschema pytest requests httpx; do
  if ! python3 -c "import $module" 2>/dev/null; then
    echo "installing the Python $module package"
    python3 -m pip install --quiet "$module" || as_root apt-get install -y -qq "python3-$module" >/dev/null
  fi
done
