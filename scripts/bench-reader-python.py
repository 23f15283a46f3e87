#!/usr/bin/env python3
"""Python reader benchmark (docs/performance.md "How cost grows"): not a test.

A store of 2,000 pins (1,000 common names x 2), as the daemon publishes it. Prints the cost of
one question on an unchanged file (its lstat included) and of the first question after the file
was replaced (lstat, read, parse, index). Usage: scripts/bench-reader-python.py [SECONDS]
"""
import base64
import hashlib
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "readers", "python", "src"))
from pinkeeper import CacheReader, Verdict  # noqa: E402

NAMES = 1000


def digest(i, j):
    return hashlib.sha256(b"cert-%d-%d" % (i, j)).digest()


def cache_file(updated):
    entries = []
    for i in range(NAMES):
        for j in range(2):
            entries.append('    {"name": "host%04d.example.com", "fingerprint": "%s", "expires": %d}'
                           % (i, base64.b64encode(digest(i, j)).decode(), 4102444800 - j * 86400))
    return ('{\n  "fingerprints": [\n' + ",\n".join(entries) + "\n  ],\n"
            '  "pinkeeper": {"format": 1, "store": "bench", "source": "https://pins.example.com/bench", '
            '"updated": %d, "nextUpdate": 4102000000}\n}\n' % updated).encode()


def replace(path, data):
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.rename(path + ".tmp", path)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3
    now = 1763770000
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "bench.json")
        replace(path, cache_file(now))
        reader = CacheReader("bench", path=path)
        questions = []
        for index in range(999):
            i, j = (index * 7) % NAMES, index % 2
            host = "host%04d.example.com" % i
            questions.append([(host, digest(i, j)), (host, b"\xee" * 32),
                              ("unknown-%d.example.com" % index, digest(i, j))][index % 3])
        assert reader.verdict(*questions[0], now=now) == Verdict.TRUSTED
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for host, fingerprint in questions:
                reader.verdict(host, fingerprint, now=now)
            count += len(questions)
        elapsed = time.perf_counter() - start
        print("python: verdict, 2,000 pins, unchanged file (lstat included): %.2f µs per question (goal <= 5)"
              % (elapsed / count * 1e6))
        versions = [cache_file(now + 1), cache_file(now + 2)]
        reloads, spent, start = 0, 0.0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            replace(path, versions[reloads % 2])
            t = time.perf_counter()
            assert reader.verdict(*questions[0], now=now) == Verdict.TRUSTED
            spent += time.perf_counter() - t
            reloads += 1
        print("python: first question after the file was replaced, 2,000 pins: %.2f ms (goal <= 5)"
              % (spent / reloads * 1e3))


if __name__ == "__main__":
    main()
