#!/usr/bin/env python3
"""Writes the committed seed corpus Tests/Fuzz/corpus/ from Tests/Fixtures/vectors (or $VECTORS).
Each seed is one selector byte (see FuzzTarget.swift) followed by the payload. Re-running it
rewrites the same files; the corpus is committed, so the fuzzer needs neither this script nor
the vectors."""
import base64, json, os, sys

here = os.path.dirname(os.path.abspath(__file__))
vectors = os.environ.get("VECTORS", os.path.join(here, "..", "Fixtures", "vectors"))
out = os.path.join(here, "corpus")
os.makedirs(out, exist_ok=True)

def read(rel):
    with open(os.path.join(vectors, rel), "rb") as f:
        return f.read()

def seed(name, selector, payload):
    with open(os.path.join(out, name), "wb") as f:
        f.write(bytes([selector]) + payload)

LIST, CACHE, ENVELOPE, KEY = 0, 1, 2, 3
key_b = read("key-B.public.x963.b64").strip()
key_a = b"BEG6g28LNWRcmdFzexSNTKPBYZnDtKrCyiExFKbktttfKAF7wG4Cx1Nycr5PwCoICG1dRseLyuDxUilAmppPxAo="

# Lists (response bodies and bundled data).
for name, rel in [("list-static-keyB", "generated-static-list.json"),
                  ("list-challenge-v1", "generated-challenge-v1/response-body.json"),
                  ("list-depth-domains", "generated-challenge-v2-depth/response-body.json"),
                  ("list-github-2024", "upstream/ssl-pinning-android/static-list-github-2024.json"),
                  ("list-duplicates", "upstream/ssl-pinning-android/duplicate-entries.json"),
                  ("list-empty", "upstream/ssl-pinning-android/empty-fingerprints.json"),
                  ("list-all-empty", "upstream/ssl-pinning-android/all-empty.json"),
                  ("list-fallback-readme", "upstream/ssl-pinning-ios/fallback-example-readme.json"),
                  ("list-domains-readme", "upstream/ssl-pinning-ios/domainsconfig-example-readme-1.9.json")]:
    seed(name, LIST, read(rel))
fp = base64.b64encode(bytes([1]) * 32).decode()
seed("list-odd-values", LIST, json.dumps({"fingerprints": [
    {"name": "a\"b\\c\u0000\u001f\u00e9\U0001F600", "fingerprint": fp, "expires": 4102444800, "depth": None, "signature": None},
    {"name": "x", "fingerprint": fp, "expires": 1.5},
    {"name": "y", "fingerprint": fp, "expires": 9223372036854775807, "depth": -1},
    {"name": "z", "fingerprint": "AQEB", "expires": -9223372036854775808, "depth": 2}],
    "domainsConfig": {"sslPinningRequiredForUnlisted": False, "domains": []}, "timestamp": 1}).encode())
seed("list-escapes", LIST, b'{"fingerprints":[{"name":"\\ud83d\\ude00\\u0041\\/","fingerprint":"' + fp.encode()
     + b'","expires":4.1e9,"depth":0}]}')

# Cache files as pinkeeper publishes them.
static = json.loads(read("generated-static-list.json"))
entries = ",\n".join('    {"name": %s, "fingerprint": "%s", "expires": %d, "signature": "%s"}'
                     % (json.dumps(e["name"]), e["fingerprint"], e["expires"], e["signature"])
                     for e in sorted(static["fingerprints"], key=lambda e: (e["name"], -e["expires"])))
meta = ('  "pinkeeper": {"format": 1, "store": "demo", "source": "https://127.0.0.1/x", "updated": 1700000000, '
        '"nextUpdate": 1700003600}\n}\n')
seed("cache-static", CACHE, ('{\n  "fingerprints": [\n' + entries + '\n  ],\n' + meta).encode())
seed("cache-domains", CACHE, ('{\n  "fingerprints": [\n'
                              '    {"name": "api.example.com", "fingerprint": "%s", "expires": 4102444800, "depth": 1}\n  ],\n'
                              '  "domainsConfig": {"sslPinningRequiredForUnlisted": true, '
                              '"domains": [{"name": "b.example", "sslPinningRequired": false}]},\n'
                              % fp + meta).encode())
seed("cache-format2", CACHE, b'{"fingerprints": [], "pinkeeper": {"format": 2, "store": "s", "source": "", "updated": 0, "nextUpdate": 0}}')

# Challenge envelopes: STATUS \n CHALLENGE \n SIGNATURE \n RETRY-AFTER \n BODY.
def envelope(status, challenge, signature, retry, body):
    return b"\n".join([status, challenge, signature, retry, body])
for name, d in [("envelope-v1", "generated-challenge-v1"), ("envelope-v2-depth", "generated-challenge-v2-depth")]:
    seed(name, ENVELOPE, envelope(b"200", read(d + "/request-challenge.txt").strip(),
                                  read(d + "/response-signature.b64").strip(), b"", read(d + "/response-body.json")))
for i, case in enumerate(json.loads(read("generated-challenge-v1/negative-cases.json"))[:3]):
    seed("envelope-negative-%d" % i, ENVELOPE, envelope(b"200", case["challenge"].encode(), case["signature"].encode(),
                                                        b"", base64.b64decode(case["body_b64"])))
seed("envelope-503-seconds", ENVELOPE, envelope(b"503", b"AAECAwQFBgcICQoLDA0ODw==", b"", b"120", b"{}"))
seed("envelope-429-date", ENVELOPE, envelope(b"429", b"AAECAwQFBgcICQoLDA0ODw==", b"", b"Wed, 01 Jan 2025 01:00:00 GMT", b""))
seed("envelope-static", ENVELOPE, envelope(b"200", b"", b"", b"", read("generated-static-list.json")))

# Keys and raw signatures.
seed("key-B-entry", KEY, key_b + b"\n" + static["fingerprints"][1]["signature"].encode() + b"\n"
     + ("%s&%s&%d" % (static["fingerprints"][1]["name"], static["fingerprints"][1]["fingerprint"],
                      static["fingerprints"][1]["expires"])).encode())
seed("key-A-garbage-sig", KEY, key_a + b"\nMEUCIQ==\nhello")
seed("key-spki", KEY, base64.b64encode(b"\x30\x59\x30\x13\x06\x07\x2a\x86\x48\xce\x3d\x02\x01"
                                       b"\x06\x08\x2a\x86\x48\xce\x3d\x03\x01\x07\x03\x42\x00"
                                       + base64.b64decode(key_b)) + b"\n\n")
seed("key-off-curve", KEY, base64.b64encode(b"\x04" + b"\x01" * 64) + b"\nAA==\nx")
print("wrote %d seeds to %s" % (len(os.listdir(out)), out))
