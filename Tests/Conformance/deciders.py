"""The `validate` command lines the conformance harness plays, in one list, and how one is run.

Every decider is one entry of DECIDERS: its command line (up to and including `validate`), how
its clock is set to a case's time, and what builds it. play_commands.py and differential.py
take the list from here, so a new reader's command line is one more entry.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

REPOSITORY = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_SECONDS = 60

# libfaketime: the wall clock starts at the case's time (`@T`, Unix seconds through FAKETIME_FMT)
# and the monotonic clock is left alone. Debian's libfaketime also rewrites the timed waits of
# glibc 2.34+ on the monotonic clock unless FAKETIME_FORCE_MONOTONIC_FIX=0: a JVM then spends
# three seconds starting instead of a third of one.
FAKETIME_ENVIRONMENT = {"FAKETIME_FMT": "%s", "FAKETIME_DONT_FAKE_MONOTONIC": "1", "FAKETIME_FORCE_MONOTONIC_FIX": "0"}


def swift_binary() -> str:
    """`pinkeeper` as `swift build --product pinkeeper` leaves it; $PINKEEPER_BINARY names another."""
    return os.environ.get("PINKEEPER_BINARY") or str(REPOSITORY / ".build" / "debug" / "pinkeeper")


@dataclass(frozen=True)
class Decider:
    name: str
    command: tuple[str, ...]  # up to and including `validate`
    built_by: str  # what to run when the command is missing
    clock_variable: str | None = None  # an environment variable the command reads "now" from; else faketime
    environment: dict[str, str] = field(default_factory=dict)
    # Rewrites the arguments (and may write files in the directory given) before the command
    # runs: how a command line that takes its store another way is asked the same question.
    adapt: Callable[[list[str], Path], list[str]] | None = None


# The Go command cannot be clocked by libfaketime (Go reads the time through the vDSO, not
# libc): its test-clock build (go build -ldflags "-X main.testClock=PINKEEPER_READER_TEST_NOW",
# see readers/go/cmd/pinkeeper-reader) takes "now" from the variable instead.
DECIDERS = (
    Decider("swift", (swift_binary(), "validate"), "swift build --product pinkeeper"),
    Decider("python", (sys.executable, "-m", "pinkeeper", "validate"), "nothing (readers/python/src)",
            environment={"PYTHONPATH": str(REPOSITORY / "readers" / "python" / "src")}),
    # One compiler tier and the serial collector: a sixth less CPU per start, the same program.
    Decider("java", ("java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar",
                     str(REPOSITORY / ".build" / "java" / "pinkeeper-reader.jar"), "validate"), "make java-reader"),
    Decider("go", (str(REPOSITORY / ".build" / "go" / "pinkeeper-reader-test-clock"), "validate"),
            "make conformance-commands (the Go test-clock build)", clock_variable="PINKEEPER_READER_TEST_NOW"),
    Decider("node", ("node", str(REPOSITORY / "readers" / "node" / "bin" / "pinkeeper-reader.js"), "validate"),
            "nothing (readers/node)"),
    Decider("c", (str(REPOSITORY / ".build" / "c" / "pinkeeper-reader-c"), "validate"), "make c-reader"),
)
REFERENCE = "swift"


def select(names: str | None, swift_through_configuration: bool = False) -> list[Decider]:
    """The deciders named in a comma-separated list (all of them without one), in table order;
    the Swift one asked through a configuration file when its build predates the reader form."""
    known = {decider.name: decider for decider in DECIDERS}
    wanted = [name.strip() for name in (names or ",".join(known)).split(",") if name.strip()]
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise SystemExit(f"unknown decider(s) {', '.join(unknown)}: choose among {', '.join(known)}")
    chosen = [decider for decider in DECIDERS if decider.name in wanted]
    if swift_through_configuration:
        from swift_configuration import through_configuration
        chosen = [replace(decider, adapt=through_configuration) if decider.name == REFERENCE else decider for decider in chosen]
    return chosen


def missing_command(decider: Decider) -> str | None:
    """Why the decider cannot run, or None: a missing file says what builds it."""
    for part in decider.command:
        if os.sep in part and not Path(part).exists():
            return f"{part} is missing: run {decider.built_by}"
    if shutil.which(decider.command[0]) is None:
        return f"{decider.command[0]} is not on PATH"
    if decider.clock_variable is None and shutil.which("faketime") is None:
        return "faketime is missing (apt-get install faketime): it sets the command's clock"
    return None


@dataclass(frozen=True)
class Answer:
    status: int
    word: str
    stdout: str
    stderr: str
    seconds: float

    def outcome(self) -> tuple[int, str]:
        return (self.status, self.word)

    def describe(self) -> str:
        return f"{self.status} {self.word}"


VERDICTS = ("trusted", "untrusted", "empty")


def word_of(status: int, stdout: str, stderr: str) -> str:
    """The README's word: for 0-2 the verdict that starts standard output (followed by the end of
    the line or ':'); otherwise the word after `pinkeeper: ` on standard error's first line. What
    breaks the rule is shown quoted, so that it can never equal an expected word."""
    if 0 <= status <= 2:
        line = stdout.split("\n", 1)[0]
        for verdict in VERDICTS:
            if line == verdict or line.startswith(verdict + ":"):
                return verdict
        return repr(line[:60])
    line = stderr.split("\n", 1)[0]
    match = re.match(r"pinkeeper: ([^\s:]+)(?::|\s|$)", line)
    return match.group(1) if match else repr(line[:60])


def _faketime_did_not_start(status: int, stdout: str, stderr: str) -> bool:
    # The faketime wrapper names a semaphore after its own PID and gives up (status 1, the
    # command not run) when a wrapper that died uncleanly left one of that name behind; on a
    # loaded machine it has also given up with no message at all. Every reader's status 1
    # prints `untrusted…` or a `pinkeeper: …` line, so a silent 1 is the wrapper's, not an answer.
    silent = stdout == "" and not stderr.startswith("pinkeeper: ")
    return status == 1 and (silent or "sem_open: File exists" in stderr)


def run(decider: Decider, args: list[str], now: int, working_directory: Path) -> Answer:
    """`validate args` of the decider, its clock at `now`."""
    environment = dict(os.environ, **decider.environment)
    if decider.adapt is not None:
        args = decider.adapt(args, working_directory)
    command = list(decider.command) + args
    if decider.clock_variable:
        environment[decider.clock_variable] = str(now)
    else:
        environment.update(FAKETIME_ENVIRONMENT)
        command = ["faketime", "-f", f"@{now}"] + command
    for attempt in range(1, 4):
        started = time.monotonic()
        try:
            finished = subprocess.run(command, cwd=working_directory, env=environment, capture_output=True,
                                      timeout=RUN_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            return Answer(-1, "timeout", "", "", RUN_TIMEOUT_SECONDS)
        except OSError as error:
            return Answer(-1, "not-run", "", str(error), 0.0)
        stdout = finished.stdout.decode("utf-8", "replace")
        stderr = finished.stderr.decode("utf-8", "replace")
        if not _faketime_did_not_start(finished.returncode, stdout, stderr) or attempt == 3:
            break
    status = finished.returncode
    return Answer(status, word_of(status, stdout, stderr), stdout, stderr, time.monotonic() - started)
