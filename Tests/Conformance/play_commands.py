#!/usr/bin/env python3
"""Plays cases.json through every reader's `validate` command line (deciders.py lists them).

Each case's last files and question, and each `options` row, are asked of every decider at the
case's time; its exit status and word (README, "A case": expected_command) must be the case's.
One line per failure names the decider and the case; the last line is `N passed, N failed`.

    Tests/Conformance/play_commands.py [--deciders swift,go] [--cases SUBSTRING] [--jobs N]
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # nothing written beside the table

import argparse
import json
import shutil
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import deciders
import scenario

TABLE = Path(__file__).resolve().parent / "cases.json"
# A `@T` clock runs from the command's start: an answer that took a second or more may have
# been given a second late (a pin valid through its expiry second), so it is asked again.
SLOW_ANSWER_SECONDS = 1.0


class Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self._lock = threading.Lock()

    def record(self, failure: str | None):
        with self._lock:
            if failure is None:
                self.passed += 1
            else:
                self.failed += 1
                print(failure, flush=True)


def clock_check(decider: deciders.Decider, table: dict, directory: Path) -> str | None:
    """The options cache's pin is trusted at options_cache.now and gone a second after it
    expires: the decider's clock is the case's (the real one is later than every case)."""
    options_cache = table["options_cache"]
    expires = max(pin["expires"] for pin in options_cache["cache"]["fingerprints"])
    question = ["--name", options_cache["cache"]["fingerprints"][0]["name"],
                "--fingerprint", options_cache["cache"]["fingerprints"][0]["fingerprint"]]
    for now, status in ((options_cache["now"], 0), (expires + 1, 2)):
        files = scenario.Scenario(name="", question=[], now=now, extra_args=question,
                                  cache=json.dumps(options_cache["cache"]).encode("utf-8"))
        where = Path(tempfile.mkdtemp(dir=directory))
        answer = deciders.run(decider, scenario.write(files, where), now, where)
        if answer.status != status:
            return (f"FAIL {decider.name} clock-check: at {now} it answered {answer.describe()} (status {status} expected): "
                    f"its clock is not the case's, or it cannot run ({_first_line(answer.stderr)})")
    return None


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0][:160]


def ask(decider: deciders.Decider, args: list[str], now: int, where: Path, expected: tuple[int, str]) -> deciders.Answer:
    answer = deciders.run(decider, args, now, where)
    for _ in range(2):
        if answer.outcome() == expected or answer.seconds < SLOW_ANSWER_SECONDS:
            break
        answer = deciders.run(decider, args, now, where)
    return answer


def play(label: str, files: scenario.Scenario | str, expected: dict, chosen: list, directory: Path, tally: Tally):
    if isinstance(files, str):
        tally.record(f"FAIL harness {label}: {files}")
        return
    where = Path(tempfile.mkdtemp(dir=directory))
    try:
        args = scenario.write(files, where)
    except OSError as error:  # the harness's own fault: one line, and the run goes on
        tally.record(f"FAIL harness {label}: the files could not be written: {error}")
        return
    wanted = (expected["status"], expected["word"])
    for decider in chosen:
        answer = ask(decider, args, files.now, where, wanted)
        if answer.outcome() == wanted:
            tally.record(None)
        else:
            detail = _first_line(answer.stderr) if answer.status > 2 or answer.status < 0 else _first_line(answer.stdout)
            tally.record(f"FAIL {decider.name} {label}: expected {wanted[0]} {wanted[1]}, got {answer.describe()} ({detail})")


def runs(table: dict, only: str | None, directory: Path):
    """(label, scenario, expected_command) for every case and options row the filter keeps."""
    options_cache = table["options_cache"]
    for row in table["options"]:
        if only is None or only in row["id"]:
            files = scenario.Scenario(name="", question=[], now=options_cache["now"], extra_args=row["args"],
                                      cache=json.dumps(options_cache["cache"], ensure_ascii=False).encode("utf-8"))
            yield f"options:{row['id']}", files, row["expected_command"]
    for case in table["cases"]:
        if only is None or only in case["id"]:
            certificates = Path(tempfile.mkdtemp(dir=directory))
            try:
                yield case["id"], scenario.from_case(case, certificates), case["expected_command"]
            except ValueError as error:  # a question no certificate file can ask
                yield case["id"], str(error), case["expected_command"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deciders", help="comma-separated: " + ",".join(d.name for d in deciders.DECIDERS) + " (all by default)")
    parser.add_argument("--cases", help="only the cases and options rows whose id contains this")
    parser.add_argument("--jobs", type=int, default=3, help="cases played at once (default 3)")
    parser.add_argument("--swift-through-config", action="store_true",
                        help="ask a pinkeeper without the reader options through a configuration file (swift_configuration.py)")
    options = parser.parse_args()
    table = json.loads(TABLE.read_text("utf-8"))
    chosen = deciders.select(options.deciders, options.swift_through_config)
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="pinkeeper-commands-") as top:
        directory = Path(top)
        playable = []
        for decider in chosen:
            problem = deciders.missing_command(decider) or clock_check(decider, table, directory)
            if problem:
                tally.record(problem if problem.startswith("FAIL") else f"FAIL {decider.name} command: {problem}")
            else:
                playable.append(decider)
        with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
            futures = [pool.submit(play, label, files, expected, playable, directory, tally)
                       for label, files, expected in runs(table, options.cases, directory)]
            for future in futures:
                future.result()
        remove_tree(directory)
    print(f"{tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


def remove_tree(directory: Path):
    """Removes what the cases wrote: a case may leave a directory without its owner's write
    permission (directory_mode), which only root could remove as it is."""
    for path in directory.rglob("*"):
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)
    shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
