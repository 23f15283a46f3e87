"""The shared conformance table (Tests/Conformance/cases.json, format 2) and its files, written the
way the table's README says a runner writes them: a fresh directory of the case's mode, each
version renamed into place with its mode set first, the fallback document beside it."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Optional

CASES_FILE = Path(__file__).resolve().parents[3] / "Tests" / "Conformance" / "cases.json"
STORE = "banking"
TABLE_FORMAT = 2


def load_document() -> dict:
    document = json.loads(CASES_FILE.read_text(encoding="utf-8"))
    assert document["format"] == TABLE_FORMAT, f"{CASES_FILE} is of format {document['format']}, not {TABLE_FORMAT}"
    return document


def load_cases() -> list:
    return load_document()["cases"]


def mode_of(case: dict, member: str, default: int) -> int:
    return int(case[member], 8) if member in case else default


def file_content(case: dict) -> Optional[bytes]:
    """The case's last cache version; None when there is none (no file, or the file deleted)."""
    if "cache" in case:
        return json.dumps(case["cache"]).encode()
    if "cache_text" in case:
        return case["cache_text"].encode()
    if "cache_base64" in case:
        return base64.b64decode(case["cache_base64"], validate=True)
    return None


def replace(path: Path, content: bytes, mode: int = 0o644) -> None:
    """As the daemon does: a temporary file, its mode set, renamed over the cache file (a new inode)."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(content)
    os.chmod(temporary, mode)
    os.rename(temporary, path)


def case_directory(tmp_path: Path, case: dict) -> Path:
    """The store's directory, of the case's `directory_mode` (0755 otherwise)."""
    directory = tmp_path / "cache"
    directory.mkdir()
    os.chmod(directory, mode_of(case, "directory_mode", 0o755))
    return directory


def write_fallback(directory: Path, case: dict, content: Optional[bytes] = None) -> Optional[str]:
    """The path given as the store's fallback file: written beside the cache (`content` in place
    of the case's document, when given), or a path where nothing is for `fallback_missing`."""
    path = directory / "fallback.json"
    if case.get("fallback_missing"):
        return str(path)
    if "fallback" not in case:
        return None
    path.write_bytes(json.dumps(case["fallback"]).encode() if content is None else content)
    os.chmod(path, mode_of(case, "fallback_mode", 0o644))
    return str(path)
