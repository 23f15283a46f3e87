"""Why a cache or fallback file cannot be used: one code per cause, the same in every pinkeeper reader
(Tests/Conformance/cases.json, `error_codes`), and the coarser kind each code belongs to."""

from __future__ import annotations

#: Each code and its kind: "unreadable" (what sits at the path, its permissions, I/O) or
#: "invalid" (its content). The command line exits 74 for the first kind and 65 for the second.
ERROR_KINDS = {
    "missing": "unreadable",               # the fallback file does not exist (a missing cache file is no error)
    "symlink": "unreadable",               # the cache path is a symlink, which is never followed
    "not-regular-file": "unreadable",      # a directory, FIFO, socket or device
    "io-error": "unreadable",              # open, stat or read failed (EACCES included)
    "insecure-permissions": "unreadable",  # other users may write the file, or its directory without the sticky bit
    "too-large": "invalid",                # larger than any cache file can be
    "not-json": "invalid",                 # not strict JSON
    "invalid-content": "invalid",          # JSON, but not a valid fingerprint list
    "missing-metadata": "invalid",         # a list without pinkeeper's metadata: not a cache file
    "unsupported-format": "invalid",       # a pinkeeper.format or pinkeeper.mode this version does not read
    "wrong-store": "invalid",              # another store's file
}


class CacheReaderError(Exception):
    """A cache or fallback file that cannot be used: its `code` (a key of ERROR_KINDS, stable from
    one version to the next), `kind` ("unreadable" or "invalid"), `path`, and the `reason` in words
    (which may change)."""

    def __init__(self, code: str, path: str, reason: str):
        if code not in ERROR_KINDS:
            raise ValueError(f"unknown cache reader error code {code!r}")
        super().__init__(f"{path} {reason}")
        self.code, self.kind, self.path, self.reason = code, ERROR_KINDS[code], path, reason
