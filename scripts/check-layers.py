#!/usr/bin/env python3
"""Fails when a folder of Sources/PinKeeperDaemon uses a folder that is not below it.

The folders form layers (docs/architecture.md draws them): each may use only the folders listed
before it in LAYERS, so no two folders use each other and a newcomer can tell which may use
which. "Uses" means the file names a type declared at the top level of another folder's file,
or a member that another folder adds to a type from outside the daemon (`extension Int64`).
Comments and string literals are ignored. Standard library only.

    scripts/check-layers.py [SOURCES_DIR]      (default: Sources/PinKeeperDaemon)
"""

import os
import re
import sys
from collections import defaultdict

# Bottom first.
LAYERS = ["Text", "Core", "Runtime", "Logging", "Systemd", "Crypto", "Config", "TLS", "Fetch", "Publish",
          "Hooks", "Update", "Probe", "Status", "Daemon"]

MODIFIERS = r"(?:(?:public|internal|private|fileprivate|package|final|indirect|nonisolated|@\w+(?:\([^)]*\))?)\s+)*"
DECLARATION = re.compile(r"^" + MODIFIERS + r"(?:struct|enum|class|protocol|actor|typealias)\s+([A-Z]\w*)", re.M)
EXTENSION = re.compile(r"^(" + MODIFIERS + r")extension\s+(\w+)[^{]*\{", re.M)
MEMBER = re.compile(r"\b(?:func|var|let)\s+(\w+)")


def without_comments_and_strings(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r'"""(?:.|\n)*?"""', " ", text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', " ", text)
    return re.sub(r"//[^\n]*", " ", text)


def block_after(text, start):
    """The text of the braces block that opens just before `start`."""
    depth = 1
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return text[start:index]
    return text[start:]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "Sources/PinKeeperDaemon"
    sources = {}
    problems = []
    for directory, _, names in os.walk(root):
        for name in names:
            if not name.endswith(".swift"):
                continue
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root)
            folder = relative.split(os.sep)[0]
            if folder == relative or folder not in LAYERS:
                problems.append(f"{path}: not in a layer; put it in one of {', '.join(LAYERS)} "
                                "(or add its folder to LAYERS in scripts/check-layers.py and docs/architecture.md)")
                continue
            with open(path, encoding="utf-8") as file:
                sources[path] = (folder, without_comments_and_strings(file.read()))

    types = defaultdict(set)  # name → folders declaring it
    for folder, text in sources.values():
        for match in DECLARATION.finditer(text):
            types[match.group(1)].add(folder)
    members = defaultdict(set)  # member added to an outside type → folders adding it
    for folder, text in sources.values():
        for match in EXTENSION.finditer(text):
            # A private extension is the file's own business; one on a daemon type is that type's.
            if "private" not in match.group(1) and match.group(2) not in types:
                for member in MEMBER.findall(block_after(text, match.end())):
                    members[member].add(folder)

    rank = {folder: index for index, folder in enumerate(LAYERS)}
    for path, (folder, text) in sorted(sources.items()):
        used = defaultdict(set)
        for name in set(re.findall(r"\b([A-Z]\w*)\b", text)):
            for owner in types.get(name, ()):
                used[owner].add(name)
        for name in set(re.findall(r"\.(\w+)\b", text)):
            for owner in members.get(name, ()):
                used[owner].add("." + name)
        for owner, names in sorted(used.items()):
            if owner != folder and rank[owner] >= rank[folder]:
                problems.append(f"{path}: {folder} uses {owner} ({', '.join(sorted(names))}), "
                                f"which is not below it ({' → '.join(LAYERS)})")

    for problem in problems:
        print(problem)
    if problems:
        print(f"check-layers: {len(problems)} upward or unplaced use(s)")
        return 1
    print(f"check-layers: {len(sources)} files in {len(set(f for f, _ in sources.values()))} folders, no upward use")
    return 0


if __name__ == "__main__":
    sys.exit(main())
