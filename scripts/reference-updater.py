#!/usr/bin/env python3
"""A straightforward pinning-list updater in Python: the reference scripts/bench.sh compares
`pinkeeper update` with (docs/performance.md). Not part of the product.

Same work as one `pinkeeper update --force` pass: for every store, fetch the list over HTTPS
(urllib; the store's CA file, or the system store), verify it with `cryptography` (static: every
entry's ECDSA P-256 signature; challenge: the response signature over `challenge&body`), drop
expired entries, write the cache file atomically (temporary file, fsync, rename, fsync of the
directory). Each store runs on a thread of its own, so N stores cost about one round trip.

Usage: reference-updater.py STORES.json
  STORES.json: [{"id": ..., "url": ..., "mode": "static"|"challenge", "public_key": base64 of the 65-byte point,
                 "ca_file": path or null, "out": cache file path}, ...]
"""

import base64
import json
import os
import ssl
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec


def verify(key, signature_b64, data):
    try:
        key.verify(base64.b64decode(signature_b64), data, ec.ECDSA(hashes.SHA256()))
        return True
    except InvalidSignature:
        return False


def update(store):
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), base64.b64decode(store["public_key"]))
    context = ssl.create_default_context(cafile=store.get("ca_file"))
    request = urllib.request.Request(store["url"], headers={"Accept": "application/json"})
    challenge = None
    if store["mode"] == "challenge":
        challenge = base64.b64encode(os.urandom(16)).decode()
        request.add_header("X-Cert-Pinning-Challenge", challenge)
    with urllib.request.urlopen(request, context=context, timeout=20) as response:
        body = response.read()
        signature = response.headers.get("X-Cert-Pinning-Signature")
    if challenge is not None and not (signature and verify(key, signature, challenge.encode() + b"&" + body)):
        raise ValueError(f"{store['id']}: bad response signature")
    now = int(time.time())
    pins = []
    for entry in json.loads(body)["fingerprints"]:
        if entry["expires"] <= now:
            continue
        if challenge is None:
            signed = f"{entry['name']}&{entry['fingerprint']}&{entry['expires']}".encode()
            if not verify(key, entry.get("signature", ""), signed):
                raise ValueError(f"{store['id']}: bad signature on {entry['name']}")
        pins.append({k: entry[k] for k in ("name", "fingerprint", "expires")})
    out = store["out"]
    directory = os.path.dirname(out) or "."
    os.makedirs(directory, exist_ok=True)
    temporary = f"{out}.tmp{os.getpid()}"
    with open(temporary, "wb") as f:
        f.write(json.dumps({"store": store["id"], "updated": now, "fingerprints": pins}).encode())
        f.flush()
        os.fsync(f.fileno())
    os.rename(temporary, out)
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return len(pins)


def main():
    stores = json.load(open(sys.argv[1]))
    with ThreadPoolExecutor(max_workers=max(1, len(stores))) as pool:
        counts = list(pool.map(update, stores))
    print(f"reference-updater: {len(stores)} stores, {sum(counts)} pins")


if __name__ == "__main__":
    main()
