#!/usr/bin/env python3
"""Differential fuzzing of the `validate` command lines against the Swift one.

From a fixed seed, each input is a table case made anew: a case of cases.json whose last cache
file is mutated (file_mutations.py), or a host spelling (host_mutations.py) asked of a file that
pins its host. Every decider (deciders.py) answers it at the case's time; an exit status and
word (README, "A case") other than the Swift command's is a failure line, and a reader that
answers `trusted` where Swift does not is a line of its own starting `SECURITY DIVERGENCE`.
Input I of seed S is the same on every run: `--seed S --first I --inputs 1` plays it again.

    Tests/Conformance/differential.py [--seed S] [--inputs N] [--seconds S] [--save DIR] [--deciders swift,go]
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # nothing written beside the table

import argparse
import base64
import copy
import json
import random
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import deciders
import file_mutations
import host_mutations
import play_commands
import scenario

TABLE = Path(__file__).resolve().parent / "cases.json"
DEFAULT_SEED = 20261128
DEFAULT_INPUTS = 40
SLOW_ANSWER_SECONDS = 1.0  # a `@T` clock runs from the command's start (play_commands.py)
UNPINNED = "AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM="


def file_seeds(table: dict) -> list[dict]:
    """The cases a file mutation starts from: a last file, and a question --fingerprint asks."""
    return [case for case in table["cases"] if scenario.last_version(case) is not None
            and not {"common_name", "verified_chain", "certificate_pem"} & case["question"].keys()]


def file_input(rng: random.Random, seeds: list[dict]) -> dict:
    # Half the time a case answered `trusted`: a mutation a reader misses then shows as trust.
    trusted = [case for case in seeds if case["expected_command"]["status"] == 0]
    origin = rng.choice(trusted if rng.random() < 0.5 else seeds)
    variant = file_mutations.Variant(scenario.last_version(origin), int(origin.get("cache_mode", "0644"), 8),
                                     int(origin.get("directory_mode", "0755"), 8))
    file_mutations.mutate(rng, variant, rng.choice([1, 1, 2, 3]))
    if rng.random() < 0.15:  # the file's or the directory's mode, whatever the content
        variant.done.append(file_mutations.permissions(rng, variant))
    case = {key: copy.deepcopy(value) for key, value in origin.items()
            if key in ("fallback", "fallback_mode", "fallback_missing", "expected_common_names", "now", "question")}
    case.update(_file_members(variant))
    case["description"] = f"{origin['id']}: " + "; ".join(variant.done)
    return case


def _file_members(variant: file_mutations.Variant) -> dict:
    """The table members that give the variant's file: its text when that is UTF-8, else its bytes."""
    members = {}
    try:
        members["cache_text"] = variant.cache.decode("utf-8")
    except UnicodeDecodeError:
        members["cache_base64"] = base64.b64encode(variant.cache).decode("ascii")
    if variant.cache_mode != 0o644:
        members["cache_mode"] = f"{variant.cache_mode:04o}"
    if variant.directory_mode != 0o755:
        members["directory_mode"] = f"{variant.directory_mode:04o}"
    return members


def host_input(rng: random.Random, table: dict) -> dict:
    """A spelling asked of a file that pins its host (and the spelling as written), by a pinned
    or an unpinned certificate; sometimes unlisted hosts need no pins, sometimes the host is the
    store's one expected name."""
    spelled, host, done = host_mutations.spelling(rng, table["host_spellings"])
    cache = copy.deepcopy(table["options_cache"]["cache"])
    template = cache["fingerprints"][0]
    cache["fingerprints"] = [dict(template, name=name) for name in dict.fromkeys([host, spelled, spelled.lower()]) if name]
    case = {"cache": cache, "now": table["options_cache"]["now"],
            "question": {"name": spelled, "fingerprint": template["fingerprint"] if rng.random() < 0.5 else UNPINNED}}
    if rng.random() < 0.35:
        cache["domainsConfig"] = {"sslPinningRequiredForUnlisted": False, "domains": [{"name": host, "sslPinningRequired": True}]}
        done.append("unlisted hosts need no pins")
    if rng.random() < 0.25:
        case["expected_common_names"] = [host]
        done.append("the host expected")
    case["description"] = f"name {spelled!r}: " + ", ".join(done)
    return case


def make_input(seed: int, index: int, table: dict, seeds: list[dict]) -> dict:
    rng = random.Random(f"{seed}:{index}")
    try:
        case = file_input(rng, seeds) if rng.random() < 0.65 else host_input(rng, table)
    except Exception as error:  # the harness's own fault: play() reports it, and the run goes on
        case = {"description": "no input", "harness_error": f"{type(error).__name__}: {error}"}
    case["id"] = f"differential-{seed}-{index}"
    return case


def answers_of(case: dict, chosen: list, directory: Path) -> dict[str, deciders.Answer]:
    """Every decider's answer; one that differs from the reference's after a slow start is asked again."""
    where = Path(tempfile.mkdtemp(dir=directory))
    files = scenario.from_case(case, where)
    args = scenario.write(files, where)
    answers = {decider.name: deciders.run(decider, args, files.now, where) for decider in chosen}
    reference = next(decider for decider in chosen if decider.name == deciders.REFERENCE)
    for decider in chosen:
        for _ in range(2):
            mine, theirs = answers[decider.name], answers[reference.name]
            if mine.outcome() == theirs.outcome() or max(mine.seconds, theirs.seconds) < SLOW_ANSWER_SECONDS:
                break
            answers[reference.name] = deciders.run(reference, args, files.now, where)
            answers[decider.name] = deciders.run(decider, args, files.now, where)
    return answers


def judge(case: dict, answers: dict[str, deciders.Answer]) -> list[str]:
    """The failure lines of one input."""
    reference = answers[deciders.REFERENCE]
    lines = []
    for name, answer in answers.items():
        if answer.outcome() == reference.outcome():
            continue
        said = f"{deciders.REFERENCE} {reference.describe()}, {name} {answer.describe()}"
        if answer.status == 0 and reference.status != 0:
            lines.append(f"SECURITY DIVERGENCE {name} {case['id']}: trusted where {said} [{case['description']}]")
        else:
            lines.append(f"DIFFERS {name} {case['id']}: {said} [{case['description']}]")
    return lines


def saved_case(case: dict, reference: deciders.Answer) -> dict:
    """The input as a case of cases.json, answered as the Swift command answered it."""
    saved = {"id": case["id"], "rule": f"Found by Tests/Conformance/differential.py ({case['description']}); "
             "the answers are the Swift command's: confirm them against docs/protocol.md or docs/cache-format.md, "
             "then name the rule here"}
    saved.update({key: value for key, value in case.items() if key not in ("id", "description")})
    if reference.status <= 2:
        saved["expected"] = reference.word
    else:  # a refused file with no good version before it: no cached pins
        saved["expected"] = "untrusted" if reference.status == 64 else "empty"
        if reference.status != 64:
            saved["expected_error"] = reference.word
    saved["expected_command"] = {"status": reference.status, "word": reference.word}
    return saved


def play(case: dict, chosen: list, directory: Path, save: Path | None) -> list[str]:
    try:
        if "harness_error" in case:
            raise RuntimeError(case["harness_error"])
        answers = answers_of(case, chosen, directory)
    except Exception as error:  # the harness's own fault: one line, and the run goes on
        return [f"HARNESS ERROR {case['id']}: {type(error).__name__}: {error} [{case['description']}]"]
    failures = judge(case, answers)
    if failures and save is not None:
        save.mkdir(parents=True, exist_ok=True)
        text = json.dumps(saved_case(case, answers[deciders.REFERENCE]), ensure_ascii=False, indent=2)
        (save / f"{case['id']}.json").write_text(text + "\n", "utf-8")
        (save / f"{case['id']}.answers.txt").write_text("\n".join(failures) + "\n", "utf-8")
    return failures


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--first", type=int, default=0, help="the first input's number (default 0)")
    parser.add_argument("--inputs", type=int, help=f"how many inputs (default {DEFAULT_INPUTS}; no limit with --seconds)")
    parser.add_argument("--seconds", type=float, help="keep making inputs this long (the long run)")
    parser.add_argument("--save", type=Path, help="write each failing input here as a case of cases.json")
    parser.add_argument("--deciders", help="comma-separated; swift, the reference, is always asked")
    parser.add_argument("--jobs", type=int, default=3, help="inputs played at once (default 3)")
    parser.add_argument("--swift-through-config", action="store_true",
                        help="ask a pinkeeper without the reader options through a configuration file (swift_configuration.py)")
    return parser.parse_args()


def main() -> int:
    options = arguments()
    table = json.loads(TABLE.read_text("utf-8"))
    names = options.deciders and ",".join({deciders.REFERENCE, *options.deciders.split(",")})
    chosen = deciders.select(names, options.swift_through_config)
    problems = [f"{decider.name}: {problem}" for decider in chosen for problem in [deciders.missing_command(decider)] if problem]
    with tempfile.TemporaryDirectory(prefix="pinkeeper-differential-") as directory:
        problems += [problem for decider in ([] if problems else chosen)
                     for problem in [play_commands.clock_check(decider, table, Path(directory))] if problem]
    if problems:
        print("\n".join(problems) + "\ncannot run", flush=True)
        return 1
    limit = options.inputs if options.inputs is not None else (None if options.seconds else DEFAULT_INPUTS)
    deadline = time.monotonic() + options.seconds if options.seconds else None
    played, failed, security = _run(options, table, chosen, limit, deadline)
    print(f"{played} inputs (seed {options.seed}): {played - failed} agreed, {failed} disagreed, {security} security divergences")
    return 1 if failed else 0


def _run(options, table, chosen, limit, deadline) -> tuple[int, int, int]:
    seeds = file_seeds(table)
    played = failed = security = 0
    with tempfile.TemporaryDirectory(prefix="pinkeeper-differential-") as top, ThreadPoolExecutor(max(1, options.jobs)) as pool:
        pending = []
        index = options.first
        while True:
            more = (limit is None or index < options.first + limit) and (deadline is None or time.monotonic() < deadline)
            if more and len(pending) < 2 * max(1, options.jobs):
                pending.append(pool.submit(play, make_input(options.seed, index, table, seeds), chosen, Path(top), options.save))
                index += 1
                continue
            if not pending:
                break
            lines = pending.pop(0).result()
            played += 1
            failed += bool(lines)
            security += any(line.startswith("SECURITY") for line in lines)
            for line in lines:
                print(line, flush=True)
        play_commands.remove_tree(Path(top))
    return played, failed, security


if __name__ == "__main__":
    sys.exit(main())
