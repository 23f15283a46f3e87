#!/usr/bin/env python3
"""Reads one store's cache file again and again, as a program starting at that moment would,
until SIGTERM; then prints what it saw and exits 1 if any read failed.

Usage: watch-cache-reads.py CACHE_DIRECTORY STORE HOST FINGERPRINT_B64 READY_FILE

Each read is a new CacheReader of the Python reader in this repository (readers/python), which
opens the file without following symlinks and parses it, asked for the verdict on HOST with the
pinned FINGERPRINT. Anything but TRUSTED is a failure, recorded with its time: the file missing,
a version the reader refuses, or pins that no longer match. READY_FILE is written after the
first read. package-test runs it on the host, on the container's cache directory, while a
package upgrade runs inside (a missing file is the same missing file from both sides).
"""

import base64
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "readers", "python", "src"))
from pinkeeper import CacheReader, CacheReaderError, Verdict  # noqa: E402

INTERVAL = 0.002  # seconds between reads


def read_once(directory, store, host, fingerprint):
    """None when a program starting now would trust the pinned peer, else what went wrong."""
    try:
        reader = CacheReader(store, cache_directory=directory)
    except CacheReaderError as error:
        return f"refused: {error}"
    if reader.cache is None:
        return "missing"
    verdict = reader.verdict(host, fingerprint)
    return None if verdict == Verdict.TRUSTED else f"verdict {verdict.name}"


def clock(at):
    return time.strftime("%H:%M:%S", time.localtime(at)) + f".{int(at * 1000) % 1000:03d}"


def main():
    directory, store, host, fingerprint_b64, ready_file = sys.argv[1:6]
    fingerprint = base64.b64decode(fingerprint_b64)
    path = os.path.join(directory, f"{store}.json")
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))

    started = time.time()
    reads, failed, inodes = 0, 0, set()
    failures = {}  # problem -> {"count", "first", "last"} (Unix seconds)
    while not stopping:
        problem = read_once(directory, store, host, fingerprint)
        reads += 1
        if problem is None:
            try:
                inodes.add(os.lstat(path).st_ino)
            except OSError:
                pass  # replaced or removed just now: the next read tells
        else:
            failed += 1
            at = time.time()
            seen = failures.setdefault(problem, {"count": 0, "first": at})
            seen["count"] += 1
            seen["last"] = at
        if reads == 1:
            with open(ready_file, "w") as ready:
                ready.write(f"{os.getpid()}\n")
        time.sleep(INTERVAL)

    seconds = time.time() - started
    print(f"{reads} reads in {seconds:.1f} s (one every {1000 * seconds / max(reads, 1):.1f} ms), {failed} failed, "
          f"{len(inodes)} version(s) of the file seen")
    for problem, seen in failures.items():
        print(f"{seen['count']} x {problem} (from {clock(seen['first'])} to {clock(seen['last'])})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
