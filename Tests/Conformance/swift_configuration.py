"""`pinkeeper validate --config FILE` asked a question of the reader form (`--cache-directory`).

A `pinkeeper` built before its `validate` took `--cache-directory DIR --store ID
[--fallback-file FILE] [--expected-common-name N]...` reads its store from a configuration
instead. --swift-through-config (play_commands.py, differential.py) asks such a build the same
questions: the store options become a configuration file and every other argument is passed on.
That command reconciles the file with the configuration (pins of keys it does not list never
count; a static store's pins need signatures that verify), so files with keys or a static mode
may be answered otherwise: this is a bridge, not the contract.
"""

from __future__ import annotations

import itertools
import json
import threading
from pathlib import Path

# Any valid P-256 point: the configuration needs one, and no case's pin records its key id.
PUBLIC_KEY = "BC3kV9OIDnMuVoCdDR9nEA/JidJLTTDLuSA2TSZsGgODSshfbZg31MS90WC/HdbU/A5WL5GmyDkE/iks6INv+XE="
STORE_OPTIONS = ("--cache-directory", "--fallback-file", "--expected-common-name")
_numbers = itertools.count()
_numbers_lock = threading.Lock()


def _split_store_options(args: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """The store options' values (both `--option value` and `--option=value`) and the rest."""
    given: dict[str, list[str]] = {option: [] for option in STORE_OPTIONS}
    rest: list[str] = []
    index = 0
    while index < len(args):
        option, equals, value = args[index].partition("=")
        if option in STORE_OPTIONS and equals:
            given[option].append(value)
        elif args[index] in STORE_OPTIONS and index + 1 < len(args):
            given[args[index]].append(args[index + 1])
            index += 1
        else:
            rest.append(args[index])
        index += 1
    return given, rest


def _store_mode(cache_directory: Path, store: str) -> str | None:
    """The mode the cache file declares, when it is readable JSON that says "static"."""
    try:
        document = json.loads((cache_directory / f"{store}.json").read_text("utf-8"))
        return "static" if document["pinkeeper"]["mode"] == "static" else None
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None


def _store_of(rest: list[str]) -> str:
    for index, argument in enumerate(rest):
        if argument == "--store" and index + 1 < len(rest):
            return rest[index + 1]
        if argument.startswith("--store="):
            return argument.partition("=")[2]
    return "banking"


def through_configuration(args: list[str], directory: Path) -> list[str]:
    given, rest = _split_store_options(args)
    if not given["--cache-directory"]:
        return args
    cache_directory = Path(given["--cache-directory"][-1])
    store = _store_of(rest)
    lines = [f"cache_directory = {json.dumps(str(cache_directory))}",
             f"state_directory = {json.dumps(str(directory / 'swift-state'))}",
             f"[stores.{json.dumps(store)}]", 'url = "https://pins.example.com/list"', f"public_key = {json.dumps(PUBLIC_KEY)}"]
    if _store_mode(cache_directory, store):
        lines.append('mode = "static"')
    if given["--fallback-file"]:
        lines.append(f"fallback_file = {json.dumps(given['--fallback-file'][-1])}")
    names = given["--expected-common-name"]
    if names:
        # One empty --expected-common-name is the empty list.
        listed = [] if names == [""] else names
        lines.append(f"expected_common_names = [{', '.join(json.dumps(name, ensure_ascii=False) for name in listed)}]")
    with _numbers_lock:
        number = next(_numbers)
    configuration = directory / f"swift-{number}.toml"
    configuration.write_text("\n".join(lines) + "\n", "utf-8")
    return ["--config", str(configuration)] + rest
