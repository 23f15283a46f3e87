"""`canonical_host` beyond the table's host_spellings rows, against independent references: the C
library's inet_pton for which IP literals exist and what they are, Python's ipaddress for RFC 5952
compression (where its output is that form), the stdlib Punycode codec, and the plain steps of the
table's README for the regular-expression shortcut."""

from __future__ import annotations

import ipaddress
import random
import socket

import pytest

from pinkeeper import host
from pinkeeper.host import canonical_host

RANDOM = random.Random(20261128)


def ipv6_texts():
    """Spellings near the edge of what inet_pton accepts: random runs of its alphabet, and
    addresses written out then bent (a group too long, a third colon, a dotted tail moved...)."""
    alphabet = "0123456789abcdefABCDEFg:.:::"
    texts = {"".join(RANDOM.choice(alphabet) for _ in range(RANDOM.randint(1, 24))) for _ in range(3000)}
    for _ in range(1500):
        groups = [format(RANDOM.choice([0, 0, 0, 1, 0xFFFF, RANDOM.randrange(65536)]), RANDOM.choice(["x", "04x", "X"]))
                  for _ in range(8)]
        text = ":".join(groups)
        start = RANDOM.randrange(8)
        compressed = ":".join(groups[:start]) + "::" + ":".join(groups[start + RANDOM.randint(0, 8 - start):])
        dotted = ":".join(groups[:6]) + ":" + ".".join(str(RANDOM.choice([0, 1, 127, 255, 256, "01"])) for _ in range(4))
        texts.update({text, compressed, dotted, "::" + dotted.partition(":")[2], text + ":1", "1:" + compressed,
                      compressed.replace("::", ":::"), text.replace(":", "::", 1), "0" + text})
    return sorted(texts)


def inet_pton6(text):
    try:
        return socket.inet_pton(socket.AF_INET6, text)
    except OSError:
        return None


@pytest.mark.parametrize("chunk", range(4))
def test_ipv6_literals_are_what_inet_pton_accepts(chunk):
    texts = ipv6_texts()
    for text in texts[chunk::4]:
        packed = inet_pton6(text)
        groups = host._ipv6_groups(text)
        assert (groups is None) == (packed is None), text
        if packed is not None:
            assert groups == [int.from_bytes(packed[i:i + 2], "big") for i in range(0, 16, 2)], text
            # The one form is another spelling of the same address, and its own one form.
            assert inet_pton6(canonical_host(text)) == packed
            assert canonical_host(canonical_host(text)) == canonical_host(text)


def test_rfc5952_compression_agrees_with_ipaddress():
    # ipaddress writes an IPv4-mapped address in hex (::ffff:7f00:1): only other addresses compared.
    for _ in range(5000):
        groups = [RANDOM.choice([0, 0, 0, 1, RANDOM.randrange(65536)]) for _ in range(8)]
        if groups[:6] == [0, 0, 0, 0, 0, 0xFFFF]:
            continue
        address = ipaddress.IPv6Address(b"".join(group.to_bytes(2, "big") for group in groups))
        assert canonical_host(address.exploded) == address.compressed


def test_ipv4_mapped_addresses_are_written_dotted():
    for _ in range(500):
        packed = bytes(10) + b"\xff\xff" + RANDOM.randbytes(4)
        mapped = ipaddress.IPv6Address(packed)
        assert canonical_host(mapped.exploded) == f"::ffff:{mapped.ipv4_mapped}"


def test_ipv4_literals_are_what_inet_pton_accepts():
    # glibc's inet_pton refuses leading zeros, as the rule does (inet_aton would read them as octal).
    texts = {".".join(RANDOM.choice(["0", "1", "00", "01", "09", "10", "127", "255", "256", "999", "1000", ""])
                      for _ in range(RANDOM.randint(1, 6))) for _ in range(3000)}
    for text in sorted(texts):
        try:
            packed = socket.inet_pton(socket.AF_INET, text)
        except OSError:
            packed = None
        assert (canonical_host(text) is None) == (packed is None), text
        if packed is not None:
            assert canonical_host(text) == socket.inet_ntop(socket.AF_INET, packed) == text


@pytest.mark.parametrize("spelling, one_form", [
    ("api.0x1", None), ("api.0X1", None), ("0x", None), ("api.123.", None), ("1..", None), ("..", None),
    ("[]", None), ("[", None), ("]", "]"), ("a\udcff.example", None), ("api.example.c0m", "api.example.c0m"),
    ("::", "::"), ("1::", "1::"), ("::1.2.3.4", "::102:304"), ("1.2.3.4::", None), ("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"),
    ("[::FFFF:1.2.3.4]", "::ffff:1.2.3.4"), ("\uff11\uff12\uff17.0.0.1", None), ("127\u30020.0.1", None),
    ("ÖL.Example", "xn--" + "Öl".encode("punycode").decode() + ".example"),
])
def test_edges_of_the_steps(spelling, one_form):
    assert canonical_host(spelling) == one_form


def test_labels_are_encoded_as_written():
    for label in ("bücher", "bÜcher", "caf\u00e9", "cafe\u0301", "\u212aelvin", "日本語", "ß", "\U0001F600"):
        folded = label.translate(host._ASCII_LETTERS_FOLDED)
        assert canonical_host(f"{label}.Example") == f"xn--{folded.encode('punycode').decode()}.example"
    # Different scalars stay different names: no mapping, no normalisation.
    assert len({canonical_host(name) for name in ("caf\u00e9", "cafe\u0301", "CAF\u00c9")}) == 3


def plain_steps(name):
    """The steps without the shortcut: what `canonical_host` answers when the expression does not match."""
    if name.startswith("[") or ":" in name:
        return host._ipv6(name[1:-1] if name.startswith("[") and name.endswith("]") else name)
    if host._looks_like_ipv4(name):
        return name if host._ipv4_parts(name) is not None else None
    return host._dns_name(name)


def test_the_shortcut_changes_no_answer():
    alphabet = "abcxyz0129_-..." + "xAZ:[]%\u00fc\u3002"
    names = {"".join(RANDOM.choice(alphabet) for _ in range(RANDOM.randint(1, 12))) for _ in range(20000)}
    names |= {"api.example.com", "0x1", "a.0x1", "a.0xg", "x0.a", "1.2.3.4", "1.2.3.a", "a-.b_", "a..b", ".a", "a."}
    shortcut = [name for name in names if host._ALREADY_ONE_FORM.fullmatch(name)]
    assert len(shortcut) > 500  # both ways are exercised
    for name in sorted(names):
        assert canonical_host(name) == plain_steps(name), name
