#!/usr/bin/env python3
"""Fails when a folder of Sources/PinKeeperDaemon uses a folder that is not below it.

The folders form layers (docs/architecture.md draws them): each may use only the folders listed
before it in LAYERS, so no two folders use each other and a newcomer can tell which may use
which. What a folder provides is every declaration of its files that another file can see:

- at the top level, types (and typealiases), free functions and global lets and vars;
- inside `extension X { … }`, the methods, properties (stored or computed), static members,
  nested types and initializers it adds to X, whether X is the daemon's own type or not.

A use is a name in the code of another folder's file (scripts/swift_tokens.py drops comments and
string text, and keeps interpolations): a type name; a bare call or reference to a free function
or global; `X.name`, `self.name` or a bare `name` inside X's body for a member added to X; a
`.name` on any other expression when every declaration of that name is above the file's folder;
`X(label: …)` when only an initializer added to X matches the labels. A name that could also be a
declaration at or below the folder, a local of the file, or the standard library's is ambiguous:
it is not judged, only counted (`--verbose` lists those that could be upward). Private
declarations are their file's own business.

    scripts/check-layers.py [--verbose] [SOURCES_DIR]   (default: Sources/PinKeeperDaemon)
    scripts/check-layers.py --self-test                  (plants each kind of upward use in a copy)
"""

import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from swift_tokens import tokenize  # noqa: E402

# Bottom first.
LAYERS = ["Text", "Core", "Runtime", "Logging", "Systemd", "Crypto", "Config", "TLS", "Fetch", "Publish",
          "Hooks", "Update", "Probe", "Status", "Daemon"]
RANK = {folder: index for index, folder in enumerate(LAYERS)}

MODIFIERS = {"public", "internal", "private", "fileprivate", "package", "open", "final", "static", "class", "override",
             "mutating", "nonmutating", "nonisolated", "indirect", "convenience", "required", "lazy", "weak",
             "unowned", "dynamic", "optional", "consuming", "borrowing", "isolated", "sending", "distributed"}
TYPE_KEYWORDS = {"struct", "class", "enum", "actor", "protocol"}
KEYWORDS = MODIFIERS | TYPE_KEYWORDS | {
    "func", "var", "let", "init", "deinit", "subscript", "extension", "typealias", "case", "import", "return", "if",
    "else", "guard", "for", "in", "while", "repeat", "switch", "default", "do", "catch", "throw", "throws", "try",
    "rethrows", "async", "await", "self", "Self", "super", "nil", "true", "false", "where", "is", "as", "some", "any",
    "inout", "break", "continue", "fallthrough", "defer", "associatedtype", "operator", "precedencegroup", "get",
    "set", "willSet", "didSet", "_"}
# Members of the standard library, Glibc and swift-log (`LogEvent.line`) that the daemon's own declarations may share:
# `something.name` alone cannot say which is meant. Such a name stays judged where it is written `X.name` or
# `self.name`, or bare inside X's body.
OUTSIDE_MEMBERS = {"description", "count", "isEmpty", "first", "last", "value", "rawValue", "hash", "id", "name",
                   "path", "seconds", "milliseconds", "nanoseconds", "bytes", "string", "data", "text", "code",
                   "message", "map", "contains", "next", "run", "close", "read", "write", "start", "stop", "reset",
                   "none", "some", "init", "append", "remove", "load", "store", "wait", "signal", "lock", "unlock",
                   "line", "file", "function", "level", "metadata", "source", "label", "error", "result", "values"}


class Index:
    """Every declaration other files can see, by name, with the folders declaring it."""

    def __init__(self):
        self.types = defaultdict(set)        # top-level type → folders
        self.globals = defaultdict(set)      # top-level func, let or var → folders
        self.added = defaultdict(set)        # (extended type, member) → folders adding it
        self.added_names = defaultdict(set)  # member added by an extension → folders
        self.extended = set()                # types some extension adds a member to
        self.members = defaultdict(set)      # member declared in a type's own body → folders
        self.inits = defaultdict(list)       # type → (folder, parameters, added by an extension)
        self.outside = set()                 # names the reader library declares

    def record(self, declaration, folder):
        kind, name, container, extension, private = declaration[:5]
        if private:
            return
        if kind == "init":
            self.inits[container].append((folder, declaration[5], extension))
        elif container is None:
            (self.types if kind == "type" else self.globals)[name].add(folder)
        elif extension:
            self.added[(container, name)].add(folder)
            self.extended.add(container)
            self.added_names[name].add(folder)
        else:
            self.members[name].add(folder)


class FileScan:
    """One file's tokens walked once: its declarations, the type whose body each token is in, and its locals."""

    def __init__(self, path, folder, text):
        self.path, self.folder = path, folder
        self.tokens = tokenize(text)
        self.declarations = []     # (kind, name, container, added by extension, private[, parameters])
        self.declared = set()      # indices of tokens that name a declaration, not a use
        self.container = {}        # token index → the type (or extended type) whose body it is in
        self.locals = set()        # names declared inside function bodies, parameters and closure parameters
        self._walk()

    def _walk(self):
        tokens = self.tokens
        stack = [("top", None, False)]  # (scope kind, type, private extension)
        pending, modifiers, index = None, set(), 0
        while index < len(tokens):
            token = tokens[index]
            scope, container, private_extension = stack[-1]
            self.container[index] = container
            if token.text == "{":
                stack.append(pending or ("code", container, private_extension))
                pending, modifiers = None, set()
                self._closure_parameters(index)
            elif token.text == "}":
                if len(stack) > 1:
                    stack.pop()
                pending, modifiers = None, set()
            elif scope == "code":
                self._local(index)
            elif token.text == "@" and index + 1 < len(tokens):
                index = self._skip_attribute(index)
                continue
            elif token.kind == "id" and token.text in MODIFIERS and not self._is_type_keyword(index):
                if self.text_at(index + 1) == "(":  # `private(set)` narrows only the setter: the name stays visible
                    index = self.matching(index + 1)
                else:
                    modifiers.add(token.text)
            elif token.kind == "id":
                private = private_extension or bool(modifiers & {"private", "fileprivate"})
                found = self._declaration(index, scope, container, private)
                modifiers = set()
                if found is not None:
                    index, pending = found
                    continue
            else:
                modifiers = set()
            index += 1

    def _is_type_keyword(self, index):
        if self.tokens[index].text != "class":
            return False
        following = self.text_at(index + 1)
        return following not in MODIFIERS and following not in {"func", "var", "let", "subscript", "init"}

    def text_at(self, index):
        return self.tokens[index].text if 0 <= index < len(self.tokens) else ""

    def _skip_attribute(self, index):
        index += 2  # `@` and its name
        if self.text_at(index) == "(":
            index = self.matching(index) + 1
        return index

    def matching(self, index):
        """The index of the bracket that closes the one at `index`."""
        opening = self.tokens[index].text
        closing = {"(": ")", "[": "]", "<": ">", "{": "}"}[opening]
        depth = 0
        for position in range(index, len(self.tokens)):
            text = self.tokens[position].text
            depth += (text == opening) - (text == closing)
            if depth == 0:
                return position
        return len(self.tokens) - 1

    def _declaration(self, index, scope, container, private):
        """Records the declaration whose keyword is at `index`; returns (next index, scope of its braces) or None."""
        keyword, name_index = self.text_at(index), index + 1
        in_extension = scope == "ext"
        if keyword in TYPE_KEYWORDS or keyword == "typealias":
            name = self.text_at(name_index)
            self._add("type", name, name_index, container, in_extension, private)
            nested = name if container is None else container + "." + name
            return name_index + 1, ("type", nested, private)
        if keyword == "extension":
            end = name_index
            while self.text_at(end + 1) == "." and self.tokens[end + 2].kind == "id":
                end += 2
            extended = "".join(token.text for token in self.tokens[name_index:end + 1])
            return end + 1, ("ext", extended, private)
        if keyword == "func":
            if self.tokens[name_index].kind == "punct":  # an operator: `static func == (…)`
                while self.text_at(name_index + 1) not in {"(", "<", ""}:
                    name_index += 1
            self._add("func", self.text_at(name_index), name_index, container, in_extension, private)
            return self._parameters(name_index + 1)[0], None
        if keyword == "init":
            end, parameters = self._parameters(name_index)
            self._add("init", "init", None, container, in_extension, private, parameters)
            return end, None
        if keyword in {"var", "let", "case"}:
            for name_index in self._bound_names(name_index, keyword):
                kind = "case" if keyword == "case" else "var"
                self._add(kind, self.text_at(name_index), name_index, container, in_extension, private)
            return name_index + 1, None
        if keyword == "import":
            return name_index + 1, None
        return None

    def _add(self, kind, name, name_index, container, in_extension, private, parameters=None):
        self.declarations.append((kind, name, container, in_extension, private, parameters))
        if name_index is not None:
            self.declared.add(name_index)
        if private:
            self.locals.add(name)

    def _parameters(self, index):
        """Skips generic parameters; returns (index after the parameter clause, [(label, has default)])."""
        if self.text_at(index) in {"?", "!"}:
            index += 1
        if self.text_at(index) == "<":
            index = self.matching(index) + 1
        if self.text_at(index) != "(":
            return index, []
        close = self.matching(index)
        parameters, start, depth = [], index + 1, 0
        for position in range(index + 1, close + 1):
            text, previous = self.text_at(position), self.tokens[position - 1]
            if position == close or (depth == 0 and text == ","):
                parameters.append(self._parameter(start, position))
                start = position + 1
            # `<` after a name opens generic arguments; `>` closes them unless it ends an arrow (`->`).
            opens = text in "([" or (text == "<" and previous.kind == "id")
            depth += opens - (text in ")]" or (text == ">" and previous.text != "-"))
        return close + 1, [parameter for parameter in parameters if parameter is not None]

    def _parameter(self, start, end):
        if start >= end or self.tokens[start].kind != "id":
            return None
        for position in (start, start + 1):
            if self.tokens[position].kind == "id":
                self.declared.add(position)
                self.locals.add(self.text_at(position))
        has_default = "=" in (token.text for token in self.tokens[start:end])
        return self.text_at(start), has_default

    def _bound_names(self, index, keyword):
        """The indices of the names a `let`, `var` or enum `case` binds (a tuple pattern, or a list after commas)."""
        if self.text_at(index) == "(":
            close = self.matching(index)
            return [position for position in range(index, close) if self.tokens[position].kind == "id"
                    and self.text_at(position + 1) in {",", ")", ":"}]
        names = []
        while index < len(self.tokens) and self.tokens[index].kind == "id":
            names.append(index)
            if keyword != "case":
                break
            index += 1
            if self.text_at(index) == "(":
                index = self.matching(index) + 1
            if self.text_at(index) == "=":
                index += 2
            if self.text_at(index) != ",":
                break
            index += 1
        return names

    def _local(self, index):
        """A name a function body declares (let, var, func, for, catch, case let) shadows any outside one."""
        if self.text_at(index) in {"let", "var", "func", "for"}:
            names = self._bound_names(index + 1, "let")
            self.locals.update(self.text_at(position) for position in names)
            self.declared.update(names)
            if self.text_at(index) == "func":
                self._parameters(index + 2)

    def _closure_parameters(self, index):
        """`{ a, b in` or `{ (a: T) in`: the names before `in` are the closure's own."""
        position = index + 1
        while position < len(self.tokens) and position < index + 24:
            text = self.text_at(position)
            if text == "in":
                for name in range(index + 1, position):
                    if self.tokens[name].kind == "id" and self.text_at(name + 1) in {",", "in", ":", ")"}:
                        self.locals.add(self.text_at(name))
                        self.declared.add(name)
                return
            if text in {"{", "}", "=", "."}:
                return
            position += 1


class UseFinder:
    """The uses one file makes of other folders' declarations: upward ones, and those that cannot be told apart."""

    def __init__(self, scan, index):
        self.scan, self.index = scan, index
        self.upward = {}       # (line, symbol, owner) → message, first use per line
        self.ambiguous = {}

    def find(self):
        tokens = self.scan.tokens
        for position, token in enumerate(tokens):
            if token.kind != "id" or position in self.scan.declared or token.text in KEYWORDS - {"init"}:
                continue
            if self.scan.text_at(position - 1) == ".":
                self._member(position)
            else:
                self._bare(position)
        return self

    def _judge(self, position, symbol, owners, doubtful=False):
        """Records a use of `symbol` declared in `owners`: upward when every reading of it is upward."""
        folder = self.scan.folder
        upward = sorted((owner for owner in owners if RANK[owner] > RANK[folder]), key=RANK.get)
        if not upward:
            return
        line = self.scan.tokens[position].line
        if doubtful or len(upward) < len(owners):
            self.ambiguous[(line, symbol)] = f"{self.scan.path}:{line}: {folder} may use {'/'.join(upward)} ({symbol})"
            return
        for owner in upward:
            self.upward[(line, symbol, owner)] = (f"{self.scan.path}:{line}: {folder} uses {owner} ({symbol}), "
                                                  f"which is not below it ({' → '.join(LAYERS)})")

    def _member(self, position):
        """`X.name`, `self.name` or `something.name`."""
        scan, name = self.scan, self.scan.text_at(position)
        base = scan.text_at(position - 2) if scan.tokens[position - 2].kind == "id" and scan.text_at(position - 3) != "." else ""
        extended = scan.container.get(position) if base in {"self", "Self"} else base
        if name == "init" and scan.text_at(position + 1) == "(" and extended:
            self._initializer(position, extended)
        elif extended and (extended in self.index.types or extended in self.index.extended):
            self._judge(position, f"{extended}.{name}", self.index.added.get((extended, name), ()))
        elif name in self.index.added_names and not base[:1].isupper():
            owners = self.index.added_names[name] | self.index.members[name]
            doubtful = name in OUTSIDE_MEMBERS or name in self.index.outside or name in scan.locals
            self._judge(position, "." + name, owners, doubtful)

    def _bare(self, position):
        """A type, a free function or global, or inside X's body a member added to X."""
        scan, name, index = self.scan, self.scan.text_at(position), self.index
        if name in index.types:
            self._judge(position, name, index.types[name])
            if scan.text_at(position + 1) == "(":
                self._initializer(position, name)
            return
        if scan.text_at(position + 1) == ":":
            return  # an argument label
        container = scan.container.get(position)
        if container and (container, name) in index.added:
            self._judge(position, f"{container}.{name}", index.added[(container, name)], name in scan.locals)
        elif name in index.globals:
            owners = index.globals[name] | index.members[name] | index.added_names[name]
            suffix = "()" if scan.text_at(position + 1) == "(" else ""
            self._judge(position, name + suffix, owners, name in scan.locals)

    def _initializer(self, position, extended):
        """`X(label: …)` or `X.init(…)`: judged when only initializers that extensions add to X match the labels."""
        scan = self.scan
        opening = position + 1 if scan.text_at(position + 1) == "(" else position + 2
        labels, trailing_closure = call_labels(scan, opening)
        matching = [(folder, added) for folder, parameters, added in self.index.inits.get(extended, ())
                    if labels_match(labels, parameters, trailing_closure)]
        if matching and all(added for _, added in matching):
            symbol = f"{extended}.init({''.join(label + ':' for label in labels)})"
            self._judge(position, symbol, {folder for folder, _ in matching})


def call_labels(scan, opening):
    """The argument labels of the call whose `(` is at `opening` (`_` for an unlabelled one), and whether a closure
    follows it."""
    close = scan.matching(opening)
    labels, depth, expecting = [], 0, True
    for position in range(opening + 1, close):
        text = scan.text_at(position)
        if expecting and depth == 0:
            labeled = scan.tokens[position].kind == "id" and scan.text_at(position + 1) == ":"
            labels.append(text if labeled else "_")
            expecting = False
        depth += (text in "([{") - (text in ")]}")
        if depth == 0 and text == ",":
            expecting = True
    return labels, scan.text_at(close + 1) == "{"


def labels_match(labels, parameters, trailing_closure):
    """Whether a call with these labels can call a function with these (label, has default) parameters."""
    if not labels:
        return all(has_default for _, has_default in parameters) or trailing_closure
    if not parameters:
        return False
    (label, has_default), rest = parameters[0], parameters[1:]
    if label == labels[0] and labels_match(labels[1:], rest, trailing_closure):
        return True
    return has_default and labels_match(labels, rest, trailing_closure)


def read_sources(root):
    """{path: folder} for every Swift file under root, and the files not in a layer."""
    sources, problems = {}, []
    for directory, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root)
            folder = relative.split(os.sep)[0]
            if folder == relative or folder not in LAYERS:
                problems.append(f"{path}: not in a layer; put it in one of {', '.join(LAYERS)} "
                                "(or add its folder to LAYERS in scripts/check-layers.py and docs/architecture.md)")
                continue
            sources[path] = folder
    return sources, problems


def library_names(root):
    """Every name the reader library declares, which a `.name` in the daemon may mean."""
    library = os.path.join(os.path.dirname(os.path.abspath(root)), "PinKeeper")  # Sources/PinKeeper
    names = set()
    for directory, _, files in os.walk(library):
        for name in files:
            if name.endswith(".swift"):
                with open(os.path.join(directory, name), encoding="utf-8") as file:
                    declarations = FileScan("", "", file.read()).declarations
                    names.update(declaration[1] for declaration in declarations if not declaration[4])
    return names


def check(root, verbose=False):
    sources, problems = read_sources(root)
    scans = []
    for path, folder in sources.items():
        with open(path, encoding="utf-8") as file:
            scans.append(FileScan(path, folder, file.read()))
    index = Index()
    index.outside = library_names(root)
    for scan in scans:
        for declaration in scan.declarations:
            index.record(declaration, scan.folder)
    ambiguous = []
    for scan in scans:
        found = UseFinder(scan, index).find()
        problems.extend(found.upward[key] for key in sorted(found.upward))
        ambiguous.extend(found.ambiguous[key] for key in sorted(found.ambiguous))
    for problem in problems:
        print(problem)
    if verbose:
        for note in ambiguous:
            print("note: " + note + ", or a declaration at or below it, a local or the standard library's")
    if problems:
        print(f"check-layers: {len(problems)} upward or unplaced use(s)")
        return 1
    print(f"check-layers: {len(scans)} files in {len(set(sources.values()))} folders, no upward use "
          f"({len(ambiguous)} ambiguous use(s) not judged; --verbose lists them)")
    return 0


def main(arguments):
    if arguments[:1] == ["--self-test"]:
        return self_test()
    verbose = "--verbose" in arguments
    paths = [argument for argument in arguments if argument != "--verbose"]
    return check(paths[0] if paths else "Sources/PinKeeperDaemon", verbose)


# The self-test's declarations: a type in the lowest folder, and what a higher folder (Update) adds or declares.
PLANTED_BELOW = ("Text/LayerSelfTestBase.swift",
                 "struct LayerSelfTestBase {\n    init() {}\n    var layerSelfTestShared: Int { 0 }\n}\n")
PLANTED_ABOVE = ("Update/LayerSelfTestAbove.swift", """struct LayerSelfTestType {}
func layerSelfTestFunction(_ value: Int) -> Int { value }
let layerSelfTestGlobal = 1
extension LayerSelfTestBase {
    func layerSelfTestMethod() -> Int { 1 }
    var layerSelfTestProperty: Int { 2 }
    static let layerSelfTestStatic = 3
    init(layerSelfTestLabel: Int) { self.init() }
}
extension Int {
    static var layerSelfTestShared: Int { 1 }
}
""")
# (what a file of Core, below Update, says; the symbol the checker must name, or None when it must pass)
PLANTED_USES = [
    ("let planted = LayerSelfTestType()", "LayerSelfTestType"),
    ("let planted = layerSelfTestFunction(1)", "layerSelfTestFunction()"),
    ("let planted = [1].map(layerSelfTestFunction)", "layerSelfTestFunction"),
    ("let planted = layerSelfTestGlobal + 1", "layerSelfTestGlobal"),
    ("func planted(base: LayerSelfTestBase) -> Int { base.layerSelfTestMethod() }", ".layerSelfTestMethod"),
    ("func planted(base: LayerSelfTestBase) -> Int { base.layerSelfTestProperty }", ".layerSelfTestProperty"),
    ("let planted = LayerSelfTestBase.layerSelfTestStatic", "LayerSelfTestBase.layerSelfTestStatic"),
    ("let planted = LayerSelfTestBase(layerSelfTestLabel: 1)", "LayerSelfTestBase.init(layerSelfTestLabel:)"),
    ("let planted = LayerSelfTestBase.init(layerSelfTestLabel: 1)", "LayerSelfTestBase.init(layerSelfTestLabel:)"),
    ('let planted = "n: \\(layerSelfTestFunction(2))"', "layerSelfTestFunction()"),
    ("extension LayerSelfTestBase {\n    func planted() -> Int { layerSelfTestMethod() }\n}",
     "LayerSelfTestBase.layerSelfTestMethod"),
    ("extension LayerSelfTestBase {\n    func planted() -> Int { Self.layerSelfTestStatic }\n}",
     "LayerSelfTestBase.layerSelfTestStatic"),
    ('let planted = #"n: \\#(layerSelfTestGlobal)"#', "layerSelfTestGlobal"),
    ('let planted = """\n    a "quoted" \\(layerSelfTestGlobal)\n    """', "layerSelfTestGlobal"),
    ("let planted = Int.layerSelfTestShared", "Int.layerSelfTestShared"),
    # Also declared below (by LayerSelfTestBase): ambiguous, so not judged.
    ("func planted(base: LayerSelfTestBase) -> Int { base.layerSelfTestShared }", None),
    ("// layerSelfTestFunction(1) LayerSelfTestType\n/* layerSelfTestGlobal /* nested */ .layerSelfTestMethod */", None),
    ('let planted = "layerSelfTestFunction(1) \\("LayerSelfTestType")"', None),
    ('let planted = #"layerSelfTestGlobal "quoted" \\(layerSelfTestGlobal)"#', None),
    ('let planted = """\n    layerSelfTestFunction(1) "LayerSelfTestType"\n    """', None),
    ("func planted(layerSelfTestGlobal: Int) -> Int { layerSelfTestGlobal }", None),
    ("let planted = LayerSelfTestBase()", None),
]
# Uses of the real tree's own declarations that the checker before this one could not see.
REAL_USES = [
    ("Text", 'let planted = realPath("/")', "realPath()", "Core"),
    ("Config", 'func planted(store: StoreConfig) -> Bool { (try? store.pinReader(cacheDirectory: "/")) != nil }',
     ".pinReader", "Update"),
]


def run_checker(root):
    result = subprocess.run([sys.executable, os.path.abspath(__file__), root], capture_output=True, text=True)
    return result.returncode, result.stdout


def plant(root, relative, text):
    with open(os.path.join(root, relative), "w", encoding="utf-8") as file:
        file.write(text)


def expect(root, folder, line, symbol, owner):
    """A failure: None when the checker names the planted file, its line, the symbol and both folders."""
    path = os.path.join(root, folder, "LayerSelfTestUse.swift")
    status, output = run_checker(root)
    wanted = f"{path}:{line}: {folder} uses {owner} ({symbol}), which is not below it"
    if symbol is None:
        return None if status == 0 else f"a pass was required, got:\n{output}"
    return None if status == 1 and wanted in output else f"wanted `{wanted}` and exit 1, got {status}:\n{output}"


def self_test():
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        sources = os.path.join(scratch, "Sources")
        repository = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        shutil.copytree(os.path.join(repository, "Sources"), sources, ignore=shutil.ignore_patterns(".build"))
        root = os.path.join(sources, "PinKeeperDaemon")
        status, output = run_checker(root)
        if status != 0:
            failures.append(f"the copy of today's tree must pass, got:\n{output}")
        for folder, use, symbol, owner in REAL_USES:
            plant(root, os.path.join(folder, "LayerSelfTestUse.swift"), "\n" + use + "\n")
            failures.append(expect(root, folder, 2, symbol, owner))
            os.remove(os.path.join(root, folder, "LayerSelfTestUse.swift"))
        plant(root, *PLANTED_BELOW)
        plant(root, *PLANTED_ABOVE)
        for use, symbol in PLANTED_USES:
            plant(root, "Core/LayerSelfTestUse.swift", "// planted\n\n" + use + "\n")
            # The use is on the last line naming a planted symbol, after `// planted` and a blank line.
            line = 3 + max(number for number, text in enumerate(use.split("\n")) if "elfTest" in text)
            failure = expect(root, "Core", line, symbol, "Update")
            failures.append(failure and f"{use}: {failure}")
    failures = [failure for failure in failures if failure]
    for failure in failures:
        print("check-layers self-test: " + failure)
    cases = len(REAL_USES) + len(PLANTED_USES) + 1
    print(f"check-layers self-test: {cases - len(failures)} of {cases} cases as required")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
