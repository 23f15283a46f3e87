#!/usr/bin/env python3
"""Reads a corpus of TOML documents with Python's tomllib (an independent TOML 1.0 reader)
and prints, per document, one line: its canonical JSON or "error".

Input (the file named by argv[1]): records of "<decimal byte count>\n<bytes>".
The canonical form tags every scalar, like toml-test, so that 1, 1.0 and the four date
kinds stay apart; the Swift test (TOMLDifferentialTests) prints our reader's result the
same way. Floats are compared bit for bit (nan as "nan"); times to the microsecond, as far
as Python's datetime keeps them.
"""
import datetime
import json
import struct
import sys
import tomllib


class OutOfRange(Exception):
    pass


def canonical(value):
    if isinstance(value, dict):
        return {key: canonical(item) for key, item in value.items()}
    if isinstance(value, list):
        return [canonical(item) for item in value]
    if isinstance(value, bool):
        return {"type": "bool", "value": "true" if value else "false"}
    if isinstance(value, int):
        # TOML 1.0, Integer: "If an integer cannot be represented losslessly [in 64 bits], an
        # error must be thrown." tomllib returns Python's unbounded int instead.
        if not -2**63 <= value < 2**63:
            raise OutOfRange()
        return {"type": "integer", "value": str(value)}
    if isinstance(value, float):
        if value != value:
            text = "nan"
        elif value in (float("inf"), float("-inf")):
            text = "+inf" if value > 0 else "-inf"
        else:
            text = struct.pack(">d", value).hex()
        return {"type": "float", "value": text}
    if isinstance(value, str):
        return {"type": "string", "value": value}
    if isinstance(value, datetime.datetime):
        text = (f"{value.year:04}-{value.month:02}-{value.day:02}T{value.hour:02}:{value.minute:02}:"
                f"{value.second:02}.{value.microsecond:06}")
        if value.tzinfo is None:
            return {"type": "datetime-local", "value": text}
        minutes = int(value.utcoffset().total_seconds()) // 60
        sign = "-" if minutes < 0 else "+"
        minutes = abs(minutes)
        return {"type": "datetime", "value": f"{text}{sign}{minutes // 60:02}:{minutes % 60:02}"}
    if isinstance(value, datetime.date):
        return {"type": "date-local", "value": f"{value.year:04}-{value.month:02}-{value.day:02}"}
    if isinstance(value, datetime.time):
        return {"type": "time-local",
                "value": f"{value.hour:02}:{value.minute:02}:{value.second:02}.{value.microsecond:06}"}
    raise TypeError(type(value))


def read(document):
    # TOML 1.0 says nothing of a byte order mark; our reader skips one (as toml++ did before),
    # tomllib refuses it. Not a TOML rule either way: compared without it.
    if document.startswith(b"\xef\xbb\xbf"):
        document = document[3:]
    try:
        return json.dumps(canonical(tomllib.loads(document.decode("utf-8"))),
                          ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, OutOfRange, RecursionError):
        return "error"


def main():
    data = open(sys.argv[1], "rb").read()
    position = 0
    out = []
    while position < len(data):
        newline = data.index(b"\n", position)
        length = int(data[position:newline])
        out.append(read(data[newline + 1:newline + 1 + length]))
        position = newline + 1 + length
    sys.stdout.write("\n".join(out) + "\n")


main()
