#!/usr/bin/env python3
"""The house limits a script can check, over the files git tracks (run by `make test`):

- no line of code over 140 characters (Swift, Python, Go, Java, JavaScript, C, shell, make);
- in Sources/ (the benchmarks aside), no Swift file over 350 lines and no function, initializer
  or closure-bodied accessor over 60 lines, from its declaration to its closing brace;
- no file cites a document a clone does not have: the upstream contract's file names, a path
  outside the repository, or a relative Markdown link to a file that does not exist.

Exit 1 with one line per problem (`path:line: what`), 0 with a summary line otherwise.
`--self-test` plants each kind of problem in a scratch copy and requires each to be found.
"""

import os
import re
import subprocess
import sys
import tempfile

LINE_LIMIT = 140
FILE_LIMIT = 350
FUNCTION_LIMIT = 60
CODE = re.compile(r"(\.(swift|py|go|java|js|mjs|c|h|sh|mk)|(^|/)Makefile)$")
UPSTREAM = re.compile(r"\b(PROTOCOL|PRODUCT|CONSUMERS|STYLE)\.md\b|\.\./shared/")
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")
DECLARATION = re.compile(r"^\s*(@\w+(\([^)]*\))?\s+)*((public|package|internal|private|fileprivate|open|static|final|"
                         r"override|mutating|nonisolated|convenience|required|class)\s+)*(func\s|init[?!]?\s*[(<]|deinit\b)")
STRING = re.compile(r'"(\\.|[^"\\])*"')


def tracked(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True, capture_output=True).stdout
    return [name for name in out.decode().split("\0") if name]


def read_lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")


def long_lines(name, lines):
    # Counted in UTF-8 bytes, as byte-counting tools (awk, editors' rulers) count them: a line
    # within the limit by both measures never differs from one tool to the next.
    return [f"{name}:{n}: {len(line.encode())} characters (at most {LINE_LIMIT})" for n, line in enumerate(lines, 1)
            if len(line.encode()) > LINE_LIMIT]


def function_lengths(name, lines):
    """(line, length) of every declaration whose body runs from its line to its closing brace."""
    problems, in_block_comment = [], False
    code = []
    for line in lines:  # strings and comments removed, so braces in them do not count
        text = STRING.sub('""', line)
        if in_block_comment:
            in_block_comment = "*/" not in text
            text = text.split("*/", 1)[1] if "*/" in text else ""
        if "/*" in text:
            text, in_block_comment = text.split("/*", 1)[0], "*/" not in text.split("/*", 1)[1]
        code.append(text.split("//", 1)[0])
    for start, text in enumerate(code):
        if not DECLARATION.match(text):
            continue
        depth, opened = 0, False
        for end in range(start, len(code)):
            for ch in code[end]:
                if ch == "{":
                    depth, opened = depth + 1, True
                elif ch == "}":
                    depth -= 1
            if opened and depth <= 0:
                length = end - start + 1
                if length > FUNCTION_LIMIT:
                    problems.append(f"{name}:{start + 1}: a function of {length} lines (at most {FUNCTION_LIMIT})")
                break
            if not opened and end > start + 8:
                break  # a protocol requirement: no body
    return problems


def citations(root, name, lines):
    problems = []
    for n, line in enumerate(lines, 1):
        if UPSTREAM.search(line):
            problems.append(f"{name}:{n}: cites a document the repository does not have ({UPSTREAM.search(line).group(0)})")
        if name.endswith(".md"):
            for target, _ in LINK.findall(line):
                if "://" in target or target.startswith("mailto:"):
                    continue
                resolved = os.path.normpath(os.path.join(root, os.path.dirname(name), target))
                if not resolved.startswith(os.path.abspath(root)) or not os.path.exists(resolved):
                    problems.append(f"{name}:{n}: links to {target}, which the repository does not have")
    return problems


def check(root):
    problems, files = [], tracked(root)
    for name in files:
        path = os.path.join(root, name)
        if not os.path.isfile(path) or name.startswith("Tests/Fixtures/vectors/"):
            continue
        lines = read_lines(path)
        if name == "scripts/check-limits.py":
            lines = [line for line in lines if "UPSTREAM = " not in line]
        if CODE.search(name):
            problems += long_lines(name, lines)
        if name.startswith("Sources/") and name.endswith(".swift") and "/PinKeeperBench/" not in name:
            if len(lines) - 1 > FILE_LIMIT:
                problems.append(f"{name}:1: {len(lines) - 1} lines (at most {FILE_LIMIT} in Sources/)")
            problems += function_lengths(name, lines)
        problems += citations(root, name, lines)
    return problems, len(files)


def self_test(root):
    """Each kind of problem planted in a scratch repository must be reported."""
    with tempfile.TemporaryDirectory() as scratch:
        def write(name, text):
            os.makedirs(os.path.dirname(os.path.join(scratch, name)), exist_ok=True)
            with open(os.path.join(scratch, name), "w") as f:
                f.write(text)
        body = "\n".join("        x += 1" for _ in range(FUNCTION_LIMIT))
        write("Sources/A/Long.swift", "struct A {\n    func long() {\n" + body + "\n    }\n}\n")
        write("Sources/A/Init.swift", "struct B {\n    public init(x: Int) {\n" + body + "\n    }\n}\n")
        write("Sources/A/Big.swift", "// line\n" * (FILE_LIMIT + 1))
        write("Sources/A/Wide.swift", "let wide = " + "1 + " * 40 + "1\n")
        write("docs/a.md", "See PROTOCOL" + ".md §4 and [gone](missing.md).\n")
        write("Sources/A/Fine.swift", "struct C {\n    func short() { let s = \"{\"; _ = s }\n}\n")
        subprocess.run(["git", "-C", scratch, "init", "-q"], check=True)
        subprocess.run(["git", "-C", scratch, "add", "-A"], check=True)
        problems, _ = check(scratch)
    expected = ["Long.swift:2: a function", "Init.swift:2: a function", "Big.swift:1: ", "Wide.swift:1: ",
                "a.md:1: cites", "a.md:1: links to missing.md"]
    missing = [e for e in expected if not any(e in p for p in problems)]
    unexpected = [p for p in problems if "Fine.swift" in p]
    for e in missing:
        print(f"check-limits self-test: a planted problem was not found: {e}")
    for p in unexpected:
        print(f"check-limits self-test: a sound file was reported: {p}")
    return 1 if missing or unexpected else 0


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if "--self-test" in sys.argv:
        return self_test(root)
    problems, count = check(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-limits: {len(problems)} problems in {count} files")
        return 1
    print(f"check-limits: {count} files within the limits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
