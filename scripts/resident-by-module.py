#!/usr/bin/env python3
"""Which part of a running pinkeeper's own binary is resident: every page of the executable's
mappings that /proc/PID/pagemap reports present is attributed to its ELF section, and pages of
code and data sections to the module of the symbol at the middle of the page (Swift module from
the mangled name, C++ namespace, or the C library that was linked in statically). For
docs/performance.md; needs root (pagemap), `nm` and `readelf`.

Usage: resident-by-module.py PID
"""

import bisect
import os
import re
import struct
import subprocess
import sys
from collections import Counter

PAGE = os.sysconf("SC_PAGE_SIZE")
SWIFT = re.compile(r"^_?\$s(?:s|(\d+)([A-Za-z_][A-Za-z0-9_]*))")


KNOWN = re.compile(r"\d+(Foundation\w*|PinKeeper\w*|pinkeeper|ArgumentParser\w*|Logging|Dispatch|Synchronization)")


def module(name):
    m = SWIFT.match(name)
    if m:
        return "Swift stdlib" if m.group(1) is None else m.group(2)[: int(m.group(1))]
    if name.startswith(("$s", "_$s")):  # a specialization or extension of a stdlib type: whose?
        k = KNOWN.search(name)
        return k.group(1) if k else "Swift stdlib"
    if "_swift_stdlib_" in name:
        return "Swift stdlib"
    if any(t in name for t in ("propsVectors", "norm2_", "ucase_props", "ubidi_props", "icu", "uchar_props")):
        return "ICU"
    if "CF" in name[:12] or "Plist" in name:
        return "CoreFoundation"
    if name.startswith(("_ZN6icu_", "_ZNK6icu_", "u_", "ucol_", "ures_", "ucnv_", "uloc_", "udat_", "unum_",
                        "icudt", "ubrk_", "utrans_", "uset_", "ustr", "utf8_", "ucal_", "uprv_", "ulist_", "ucase",
                        "uchar", "unorm", "uregex", "usearch", "ucurr", "uenum", "uhash", "umtx", "utext", "ucptrie")):
        return "ICU"
    if name.startswith(("swift", "_swift", "_ZN5swift", "_ZNK5swift", "$ss", "_ZN6__swift")):
        return "Swift runtime"
    if name.startswith(("_dispatch", "dispatch_", "_os_", "_ZN8dispatch")):
        return "libdispatch"
    if name.startswith(("CF", "__CF", "_CF", "kCF")):
        return "CoreFoundation"
    if name.startswith("_ZN"):
        return "other C++"
    return "other C"


def main():
    pid = int(sys.argv[1])
    exe = os.readlink(f"/proc/{pid}/exe")
    symbols = []
    out = subprocess.run(["nm", "-n", "--defined-only", exe], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split(maxsplit=2)
        if len(parts) == 3:
            symbols.append((int(parts[0], 16), parts[2]))
    addresses = [a for a, _ in symbols]
    sections = []
    for line in subprocess.run(["readelf", "-SW", exe], capture_output=True, text=True, check=True).stdout.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m and int(m.group(2), 16):
            sections.append((int(m.group(2), 16), int(m.group(2), 16) + int(m.group(3), 16), m.group(1)))
    by_symbol = {".text", ".rodata", ".data", ".bss", ".tdata", ".tbss", ".data.rel.ro"}
    # The executable's load address: the first mapping of the file, at file offset 0.
    maps = []
    for line in open(f"/proc/{pid}/maps"):
        fields = line.split()
        if len(fields) >= 6 and fields[5] == exe:
            start, end = (int(x, 16) for x in fields[0].split("-"))
            maps.append((start, end, int(fields[2], 16)))
    base = min(s - o for s, _, o in maps)
    totals = Counter()
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for start, end, _ in maps:
            pagemap.seek(start // PAGE * 8)
            entries = pagemap.read((end - start) // PAGE * 8)
            for i in range(0, len(entries), 8):
                (entry,) = struct.unpack("<Q", entries[i:i + 8])
                if not entry >> 63 & 1:
                    continue
                middle = start + (i // 8) * PAGE + PAGE // 2 - base
                section = next((n for s, e, n in sections if s <= middle < e), "(between sections)")
                if section not in by_symbol:
                    totals[f"section {section}"] += PAGE
                    continue
                index = bisect.bisect_right(addresses, middle) - 1
                totals[module(symbols[index][1]) if index >= 0 else "headers"] += PAGE
    for name, size in totals.most_common():
        print(f"{size // 1024:8d} kB  {name}")
    print(f"{sum(totals.values()) // 1024:8d} kB  total resident in {exe}")


if __name__ == "__main__":
    main()
