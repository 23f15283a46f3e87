#!/usr/bin/env python3
"""Is packaging/pinkeeper.order still the order of this code? (Run by `make release` after the link.)

The order file lists, by symbol, the functions the daemon and the one-shot commands ran when
scripts/make-link-order.sh traced them; lld packs those side by side, and the idle daemon keeps
fewer code pages resident (docs/performance.md, row 7). When the code changes, functions are
renamed, re-specialized or inlined away, their names vanish from the binary, and the new code
they became links after every listed function, scattered again. A listed name missing from the
binary is the sign that can be read without tracing. Measured on 11-28 (docs/performance.md,
note a): the file of six days of changes before lacked 6.3 % of its names in the new binary, 23 %
of the functions the daemon ran were not in it, and the idle daemon kept 1.1 - 1.4 MiB more of
the binary resident than with a regenerated file: almost half of what the order saves.

Usage: check-link-order.py BINARY [ORDER-FILE]   (ORDER-FILE: packaging/pinkeeper.order)
       check-link-order.py --self-test BINARY
Exit 1 naming the file, the share missing and the fix when more than MISSING_LIMIT of the
listed functions are not in BINARY; 0 with a summary line otherwise.
"""

import os
import subprocess
import sys
import tempfile

# A regenerated file misses none; two regenerations differ by about 3 of 3,900 names (timing).
# 2 % is about 80 functions: a few changed ones pass, the drift of a week of changes does not.
MISSING_LIMIT = 0.02
SMALLEST_FILE = 500  # make-link-order.sh refuses to write fewer: a trace went wrong


def defined_functions(binary):
    """Names of the functions BINARY defines (nm's t, T, W and w), as lld matches them."""
    listing = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    names = set()
    for line in listing.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTWw":
            names.add(parts[2])
    return names


def check(binary, order_file):
    """(sound, the line to print)."""
    with open(order_file) as f:
        listed = [line.strip() for line in f if line.strip()]
    if len(listed) < SMALLEST_FILE:
        return False, (f"check-link-order: {order_file} lists {len(listed)} functions, fewer than {SMALLEST_FILE}: "
                       "regenerate it with scripts/make-link-order.sh")
    defined = defined_functions(binary)
    missing = [name for name in listed if name not in defined]
    share = len(missing) / len(listed)
    summary = f"{len(missing)} of the {len(listed)} functions {order_file} lists ({share:.1%}) are not in {binary}"
    if share > MISSING_LIMIT:
        return False, (f"check-link-order: {summary} (limit {MISSING_LIMIT:.0%}): the code changed since the file was made, "
                       "and the functions the daemon runs now are scattered again. Run scripts/make-link-order.sh "
                       "(valgrind, about two minutes) and commit the file it writes.")
    return True, f"check-link-order: {summary}: within the {MISSING_LIMIT:.0%} limit"


def self_test(binary):
    """An order file of the binary's own functions passes; one with a share over the limit
    renamed, and one too short, fail."""
    names = sorted(defined_functions(binary))[:2000]
    if len(names) < 2000:
        print(f"check-link-order self-test: {binary} defines only {len(names)} functions; give the release binary")
        return 1
    over_limit = int(len(names) * MISSING_LIMIT) + 1
    cases = [("sound", names, True),
             ("within the limit", names[: len(names) - over_limit + 1] + ["gone%d" % i for i in range(over_limit - 1)], True),
             ("stale", names[: len(names) - over_limit] + ["gone%d" % i for i in range(over_limit)], False),
             ("too short", names[: SMALLEST_FILE - 1], False)]
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        for label, listed, expected in cases:
            path = os.path.join(scratch, label.replace(" ", "-") + ".order")
            with open(path, "w") as f:
                f.write("\n".join(listed) + "\n")
            sound, line = check(binary, path)
            if sound != expected:
                failures += 1
                print(f"check-link-order self-test: the {label} file was {'passed' if sound else 'refused'}: {line}")
    print(f"check-link-order self-test: {len(cases) - failures} of {len(cases)} cases as expected")
    return 1 if failures else 0


def main():
    arguments = sys.argv[1:]
    if arguments[:1] == ["--self-test"] and len(arguments) == 2:
        return self_test(arguments[1])
    if len(arguments) not in (1, 2) or arguments[0].startswith("-"):
        print("usage: check-link-order.py BINARY [ORDER-FILE] | --self-test BINARY", file=sys.stderr)
        return 64
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    order_file = arguments[1] if len(arguments) == 2 else os.path.join(root, "packaging", "pinkeeper.order")
    sound, line = check(arguments[0], order_file)
    print(line, file=sys.stdout if sound else sys.stderr)
    return 0 if sound else 1


if __name__ == "__main__":
    sys.exit(main())
