#!/usr/bin/env python3
"""Writes every file and host spelling of the conformance table into a directory, as the fuzzer's
first inputs. usage: seed_corpus.py CASES.json DIRECTORY"""

import base64
import json
import os
import sys

table = json.load(open(sys.argv[1], encoding="utf-8"))
os.makedirs(sys.argv[2], exist_ok=True)
seeds = [row["spelling"].encode() for row in table["host_spellings"]]
for case in table["cases"]:
    for prefix in ("cache", "previous_cache", "fallback"):
        if prefix in case:
            seeds.append(json.dumps(case[prefix], ensure_ascii=False).encode())
    if "cache_text" in case:
        seeds.append(case["cache_text"].encode("utf-8", "surrogatepass"))
    if "cache_base64" in case:
        seeds.append(base64.b64decode(case["cache_base64"]))
for index, seed in enumerate(seeds):
    with open(os.path.join(sys.argv[2], "seed-%04d" % index), "wb") as out:
        out.write(seed)
