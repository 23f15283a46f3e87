#!/usr/bin/env bash
# Runs the Python reader's tests (readers/python): the conformance table through the library and
# through its command line (under faketime), the TLS helpers against servers on loopback.
# Then, when a Python 3.13 or newer is on this machine, the same tests again with it: only 3.13+
# gives the verified chain that depth >= 1 pins need (older ones fail closed; both are tested).
# Run from the repository root: scripts/test-python.sh
set -euo pipefail

cd readers/python
python3 -m pytest -q -p no:cacheprovider

newer=""
for candidate in python3.14 python3.13 "$(pyenv root 2>/dev/null)"/versions/3.1[3-9]*/bin/python3; do
  if [ -n "$candidate" ] && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 13))' 2>/dev/null; then
    newer="$candidate"
    break
  fi
done
if [ -z "$newer" ]; then
  echo "no Python 3.13+ here: the verified-chain path (depth >= 1 pins) was not exercised"
  exit 0
fi
if ! "$newer" -c 'import pytest, cryptography, requests, httpx' 2>/dev/null; then
  "$newer" -m pip install --quiet --disable-pip-version-check pytest cryptography requests httpx
fi
echo "again with $("$newer" --version) for the verified chain:"
"$newer" -m pytest -q -p no:cacheprovider --deselect tests/test_install.py
