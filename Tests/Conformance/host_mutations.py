"""Host spellings for differential.py: the table's host_spellings and what a client could hand
over instead (case, dots, brackets, zeros, long and short IPv6, IPv4-mapped forms, Unicode
labels). Each mutation takes a random.Random and a spelling and returns another."""

from __future__ import annotations

import ipaddress

LOOKALIKES = {"a": ["\u0430", "\u00e1", "\uff41"], "e": ["\u00e9", "e\u0301", "\u0435"], "k": ["\u212a"], "s": ["\u017f"],
              "i": ["\u0131", "\u0130"], "o": ["\u00f6", "\u03bf"], "u": ["\u00fc", "\u00dc", "u\u0308"], "c": ["\u0441"]}
INVISIBLE = ["\u200b", "\u00ad", "\u200e", "\ufeff", "\u034f"]
IDNA_DOTS = ["\u3002", "\uff0e", "\uff61"]


def _case(rng, host):
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in host)


def _dots(rng, host):
    choice = rng.randrange(6)
    if choice == 0:
        return host + "."
    if choice == 1:
        return host + ".."
    if choice == 2:
        return "." + host
    if choice == 3:
        return host.replace(".", "..", 1)
    if choice == 4 and "." in host:
        return host.replace(".", rng.choice(IDNA_DOTS), 1)
    return host.rstrip(".")


def _brackets(rng, host):
    inner = host.strip("[]")
    return rng.choice([f"[{inner}]", f"[{inner}", f"{inner}]", f"[[{inner}]]", f"[{inner}]:443", f"{inner}:443", f"[{inner}%25eth0]"])


def _address(host):
    """The address a spelling writes (none with a zone id: ipaddress keeps it and cannot expand it)."""
    try:
        return None if "%" in host else ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _zeros(rng, host):
    address = _address(host)
    if isinstance(address, ipaddress.IPv4Address):
        parts = str(address).split(".")
        index = rng.randrange(4)
        parts[index] = rng.choice(["0", "00", "000"]) + parts[index]
        return ".".join(parts)
    if isinstance(address, ipaddress.IPv6Address):
        groups = address.exploded.split(":")
        return ":".join(group.lstrip("0").rjust(rng.choice([1, 2, 4, 5]), "0") or "0" for group in groups)
    return host.replace("1", "01", 1) if "1" in host else "0" + host


def _ipv6_forms(rng, host):
    address = _address(host)
    if not isinstance(address, ipaddress.IPv6Address):
        address = ipaddress.IPv6Address(rng.choice(["::1", "2001:db8::1", "2001:db8:0:0:1:0:0:1", "fe80::1", "::"]))
    groups = address.exploded.split(":")
    choice = rng.randrange(5)
    if choice == 0:
        return address.exploded
    if choice == 1:
        return ":".join(group.lstrip("0") or "0" for group in groups)
    if choice == 2:
        return str(address).upper()
    if choice == 3:  # a shorter run compressed than RFC 5952's
        short = [group.lstrip("0") or "0" for group in groups]
        for index in range(7):
            if short[index] == short[index + 1] == "0":
                return ":".join(short[:index]) + "::" + ":".join(short[index + 2:])
        return ":".join(short)
    return str(address) + "%" + rng.choice(["eth0", "1", "lo"])


def _mapped(rng, host):
    address = _address(host)
    v4 = address if isinstance(address, ipaddress.IPv4Address) else ipaddress.IPv4Address(rng.choice(["127.0.0.1", "10.0.0.1"]))
    high, low = int(v4) >> 16, int(v4) & 0xFFFF
    return rng.choice([f"::ffff:{v4}", f"::FFFF:{high:x}:{low:x}", f"0:0:0:0:0:ffff:{v4}", f"::{v4}", f"64:ff9b::{v4}",
                       f"::ffff:0:{v4}", f"[::ffff:{v4}]", f"::ffff:{high:04x}:{low:04x}", f"0000:0000:0000:0000:0000:ffff:{v4}"])


def _ipv4_forms(rng, host):
    address = _address(host)
    v4 = address if isinstance(address, ipaddress.IPv4Address) else ipaddress.IPv4Address("127.0.0.1")
    a, b, c, d = str(v4).split(".")
    return rng.choice([f"{a}.{int(v4) & 0xFFFFFF}", f"{int(v4)}", f"0x{int(v4):x}", f"0{int(a):o}.{b}.{c}.{d}", f"{a}.{b}.{c}.{d}.",
                       f"{a}.{b}.{c}", f"{a}.{b}.{c}.{d} ", f"{a}.{b}.{c}.0x{int(d):x}", f"{a}.{b}.{c}.{d}.example"])


def _unicode(rng, host):
    letters = [index for index, c in enumerate(host) if c.lower() in LOOKALIKES]
    if letters and rng.random() < 0.7:
        index = rng.choice(letters)
        return host[:index] + rng.choice(LOOKALIKES[host[index].lower()]) + host[index + 1:]
    index = rng.randrange(len(host) + 1)
    return host[:index] + rng.choice(INVISIBLE) + host[index:]


MUTATIONS = [_case, _dots, _brackets, _zeros, _ipv6_forms, _mapped, _ipv4_forms, _unicode]


def spelling(rng, rows: list[dict]) -> tuple[str, str, list[str]]:
    """(the spelling asked, the host it was made from, what was done): a table row's spelling
    with zero to two mutations."""
    row = rng.choice(rows)
    spelled = row["spelling"]
    done = [f"host_spellings {row['id']}"]
    for _ in range(rng.choice([0, 1, 1, 2])):
        mutation = rng.choice(MUTATIONS)
        spelled = mutation(rng, spelled)
        done.append(mutation.__name__.lstrip("_"))
    base = row["host"] or row["spelling"]
    return spelled.replace("\x00", ""), base, done
