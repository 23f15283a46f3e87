#!/usr/bin/env python3
"""Fails when the cache file's members are not known alike by the schema, the table and every reader.

Every reader must know the same members of a cache file with the same types (docs/cache-format.md:
each member has one type, checked by every reader whether or not it uses it), or two readers read
one file differently. This compares, member by member (as a path such as `fingerprints[].depth`):

- docs/cache.schema.json: its properties and their types, `$ref`s followed;
- each decider's parser, read from its source: the member-reading calls of the functions that
  parse each object (the Swift decoder's `switch` over `Key`, the readers' typed accessors such as
  Go's `stringMember(entry, "name", ...)`), the type given by the accessor, or for an accessor
  that only fetches (`optionalMember`), by the check that follows it;
- Tests/Conformance/cases.json: every member a case's cache file uses (`cache`, `previous_cache`,
  and `cache_text` or `cache_base64` when they are JSON);
- the names the Swift encoder writes (Sources/PinKeeper/CacheFile.swift), by name only.

It fails, naming the file and the member, when a reader or the schema knows a member another does
not, when their types differ, when a second list of a reader's (Python's column-by-column fast
path) names other members than its checks, or when no case of the table uses a member the schema
defines. A member the table uses only with a wrong type is printed as a note. Standard library only.

    scripts/check-cache-fields.py [--root DIR] [--verbose]
    scripts/check-cache-fields.py --self-test   (plants disagreements in a scratch copy; each must fail)
"""

import argparse
import base64
import json
import os
import re
import shutil
import sys
import tempfile
from collections import defaultdict

SCHEMA = "docs/cache.schema.json"
CASES = "Tests/Conformance/cases.json"
SWIFT = "Sources/PinKeeper/PinListDecoder.swift"
# Where the decoder's value readers (d.digest(), d.fingerprints(), ...) are declared.
SWIFT_VALUES = "Sources/PinKeeper/PinListDecoder+Values.swift"
ENCODER = "Sources/PinKeeper/CacheFile.swift"
JSON_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "object",
              type(None): "null"}
TYPE_WORDS = {"string": "string", "integer": "integer", "int": "integer", "str": "string", "boolean": "boolean",
              "array": "array", "object": "object", "STRING": "string", "NUMBER": "integer", "TRUE": "boolean",
              "ARRAY": "array", "OBJECT": "object", "String": "string", "Integer": "integer"}

# Where each reader parses each object: (file, the function's first line, {object variable: location}).
# A location is the path of the object whose members the variable holds ("" is the document).
ENTRY, DOMAINS_CONFIG, DOMAIN, METADATA = "fingerprints[]", "domainsConfig", "domainsConfig.domains[]", "pinkeeper"
READERS = {
    "python": {
        "scopes": [
            ("readers/python/src/pinkeeper/pins.py", r"def parse_pin_list\(", {"root": ""}),
            ("readers/python/src/pinkeeper/pins.py", r"def _checked_pin\(", {"entry": ENTRY}),
            ("readers/python/src/pinkeeper/pins.py", r"def _domains_config\(",
             {"config": DOMAINS_CONFIG, "domain": DOMAIN}),
            ("readers/python/src/pinkeeper/cache.py", r"def parse\(cls", {"document": "", "metadata": METADATA}),
        ],
        "call": r'\b(\w+)\((\w+), "(\w+)"',
        "accessors": {"member": None, "optional_member": None, "_string": "string", "_optional_string": "string",
                      "_boolean": "boolean", "_integer": "integer"},
        # The metadata's required members are one table: `for key, kind in (("format", int), ...)`.
        "tables": [("readers/python/src/pinkeeper/cache.py",
                    r"for key, kind in \(((?:\(\"\w+\", \w+\),?\s*)+)\):\s*\n\s*value = member\(metadata, key",
                    r'\("(\w+)", (\w+)\)', METADATA)],
        # The fast path that checks every entry column by column names the entries' members again.
        "name_lists": [("readers/python/src/pinkeeper/pins.py",
                        r'\(dict\.get, entries, repeat\(member\)\)\) for member in \(((?:"\w+",?\s*)+)\)', ENTRY)],
        "not_members": [],
        "checks": [r'PinListError\(f?"(?P<path>[\w.{}]+) is not an? (?P<type>\w+)"'],
    },
    "java": {
        "scopes": [
            ("readers/java/src/main/java/pinkeeper/reader/PinList.java", r"static PinList parse\(JsonNode root\)", {"root": ""}),
            ("readers/java/src/main/java/pinkeeper/reader/PinList.java", r"static Pin entry\(", {"node": ENTRY}),
            ("readers/java/src/main/java/pinkeeper/reader/PinList.java", r"static DomainsConfig domainsConfig\(",
             {"node": DOMAINS_CONFIG, "domain": DOMAIN}),
            ("readers/java/src/main/java/pinkeeper/reader/CacheFile.java", r"static CacheFile parse\(",
             {"root": "", "node": METADATA}),
            ("readers/java/src/main/java/pinkeeper/reader/CacheFile.java", r"static String mode\(", {"metadata": METADATA}),
        ],
        "call": r'\bJsonFields\.(\w+)\((\w+), "(\w+)"',
        "accessors": {"optional": None, "required": None, "string": "string", "optionalString": "string",
                      "integer": "integer", "bool": "boolean", "array": "array"},
        "not_members": ["object"],  # JsonFields.object(node, "pinkeeper") checks the object itself
        "checks": [r"JsonFields\.as(?P<type>String|Integer)\(\w+, (?P<path>[^)]*)\)"],
    },
    "go": {
        "scopes": [
            ("readers/go/pinlist.go", r"^func pinList\(", {"root": ""}),
            ("readers/go/pinlist.go", r"^func pinEntry\(", {"entry": ENTRY}),
            ("readers/go/pinlist.go", r"^func domainsConfig\(", {"object": DOMAINS_CONFIG, "domain": DOMAIN}),
            ("readers/go/cachefile.go", r"^func ParseCacheFile\(", {"root": "", "node": METADATA}),
        ],
        "call": r'\b(\w+)\((\w+), "(\w+)"',
        "accessors": {"optionalMember": None, "requiredMember": None, "stringMember": "string", "optionalString": "string",
                      "integerMember": "integer", "boolMember": "boolean", "arrayMember": "array"},
        "not_members": ["asObject"],
        "checks": [r"\bas(?P<type>String|Integer)\(\w+, (?P<path>[^)]*)\)"],
    },
    "node": {
        "scopes": [
            ("readers/node/lib/pin-list.js", r"^function pinListFromDocument\(", {"root": ""}),
            ("readers/node/lib/pin-list.js", r"^function entry\(", {"object": ENTRY}),
            ("readers/node/lib/pin-list.js", r"^function domainsConfig\(", {"object": DOMAINS_CONFIG, "domain": DOMAIN}),
            ("readers/node/lib/pin-list.js", r"^function readMetadata\(", {"root": "", "metadata": METADATA}),
        ],
        "call": r"\b(\w+)\((\w+), '(\w+)'",
        "accessors": {"member": None, "string": "string", "optionalString": "string", "integer": "integer",
                      "boolean": "boolean", "array": "array"},
        "not_members": ["asObject"],
        "checks": [],
    },
    "c": {
        "scopes": [
            ("readers/c/src/cachefile.c", r"^pk_error \*pk_parse_list\(", {"root": ""}),
            ("readers/c/src/cachefile.c", r"^static pk_error \*pin_entry\(", {"entry": ENTRY}),
            ("readers/c/src/cachefile.c", r"^static pk_error \*pin_depth\(", {"entry": ENTRY}),
            ("readers/c/src/cachefile.c", r"^static pk_error \*domains_config\(", {"config": DOMAINS_CONFIG}),
            ("readers/c/src/cachefile.c", r"^static pk_error \*domain_entry\(", {"entry": DOMAIN}),
            ("readers/c/src/metadata.c", r"^static pk_error \*read_metadata\(", {"root": "", "object": METADATA}),
        ],
        # The JSON kind, where the accessor takes one, is the call's PK_JSON_ argument.
        "call": r'\b(\w+)\((\w+), "(\w+)"(?:[^;]*?PK_JSON_(STRING|NUMBER|TRUE|ARRAY|OBJECT))?',
        "accessors": {"optional_member": None, "pk_json_member_named": None, "required_member": "kind",
                      "member_of_type": "kind", "integer_member": "integer", "integer_of": "integer",
                      "optional_string": "string"},
        "not_members": [],
        "checks": [r"pk_json_(?P<type>integer)\(\w+\.value, (?P<path>\w+)\)",
                   r'"has a (?P<path>pinkeeper\.\w+) that is not an? (?P<type>\w+)"'],
    },
}


class Problems(list):
    """Each problem as `file[:line]: what is wrong`."""

    def add(self, path, message):
        self.append(f"{path}: {message}")


class Known:
    """What one source knows: member path -> (type, file, line)."""

    def __init__(self, name, files):
        self.name, self.files, self.members = name, files, {}

    def add(self, path, json_type, file, line, problems):
        if path in self.members and self.members[path][0] != json_type:
            problems.add(f"{file}:{line}", f"{path} is read as {json_type} here and as {self.members[path][0]} at "
                         f"{self.members[path][1]}:{self.members[path][2]}")
        self.members.setdefault(path, (json_type, file, line))


def joined(location, member):
    return f"{location}.{member}" if location else member


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def function_body(text, header):
    """(offset, text) of the function whose first line matches `header`: up to and including the first
    later line indented no deeper than that one (its closing brace, or Python's next definition)."""
    match = re.search(header, text, re.M)
    if match is None:
        return None
    start = text.rfind("\n", 0, match.start()) + 1
    lines = text[start:].splitlines(keepends=True)
    indent = len(lines[0]) - len(lines[0].lstrip(" \t"))
    length = len(lines[0])
    for line in lines[1:]:
        length += len(line)
        # A brace alone on a line opens the body of a header written over several lines.
        if line.strip() not in ("", "{") and len(line) - len(line.lstrip(" \t")) <= indent:
            break
    return start, text[start:start + length]


def read(root, relative):
    with open(os.path.join(root, relative), encoding="utf-8") as file:
        return file.read()


# MARK: the schema

def schema_members(root, problems):
    schema = json.loads(read(root, SCHEMA))
    known = Known("schema", [SCHEMA])

    def resolve(node):
        while "$ref" in node:
            reference = node["$ref"]
            if not reference.startswith("#/$defs/"):
                problems.add(SCHEMA, f"cannot follow $ref {reference}")
                return {}
            node = {**schema["$defs"][reference[len("#/$defs/"):]], **{k: v for k, v in node.items() if k != "$ref"}}
        return node

    def type_of(node, path):
        if "type" in node:
            return node["type"]
        values = [node["const"]] if "const" in node else node.get("enum", [])
        types = {JSON_TYPES[type(value)] for value in values}
        if len(types) != 1:
            problems.add(SCHEMA, f"{path} has no one type")
            return "?"
        return types.pop()

    def walk(node, location):
        for member, property_node in node.get("properties", {}).items():
            path = joined(location, member)
            property_node = resolve(property_node)
            json_type = type_of(property_node, path)
            known.add(path, json_type, SCHEMA, 0, problems)
            if json_type == "object":
                walk(property_node, path)
            elif json_type == "array":
                walk(resolve(property_node.get("items", {})), path + "[]")

    walk(resolve(schema), "")
    return known


# MARK: the table

def case_members(root):
    """path -> set of the JSON types the table's cache files give it."""
    table = json.loads(read(root, CASES))
    used = defaultdict(set)

    def walk(value, location, depth):
        if depth > 64:  # the deep-nesting cases: no member of the format lies that deep
            return
        if isinstance(value, dict):
            for member, inner in value.items():
                path = joined(location, member)
                used[path].add(JSON_TYPES[type(inner)])
                walk(inner, path, depth + 1)
        elif isinstance(value, list):
            for item in value:
                walk(item, location + "[]", depth + 1)

    documents = [table.get("options_cache", {}).get("cache")]
    documents += [case.get(key) for case in table["cases"] for key in ("cache", "previous_cache")]
    documents += [parsed(case) for case in table["cases"]]
    for document in documents:
        if document is not None:
            walk(document, "", 0)
    return used


def parsed(case):
    """A case's file given as text or bytes, parsed when it is JSON (a repeated member counts once)."""
    text = case.get("cache_text")
    if text is None and "cache_base64" in case:
        text = base64.b64decode(case["cache_base64"]).decode("utf-8", "replace")
    try:
        return None if text is None else json.loads(text)
    except (ValueError, RecursionError):
        return None


# MARK: the Swift decoder

SWIFT_SCOPES = [(r"func document\(\)", ""), (r"func entry\(", ENTRY), (r"func domainsConfig\(\)", DOMAINS_CONFIG),
                (r"func domain\(", DOMAIN), (r"func metadata\(\)", METADATA)]
SWIFT_CASE = re.compile(r"case \.(\w+)(?: where \w+)?:\s+try member\(&\w+, in: \d+\) \{ \(d\) throws\(PinListError\) in try d\.(\w+)\(")
SWIFT_NAME = re.compile(r'equals\("(\w+)"\) \? \.(\w+)')


def swift_members(root, problems):
    """The decoder's `switch try scanner.readKey(Key.identify)` of each object: `case .name: try member(...)
    { ... try d.string(...) }`, the member's spelling taken from `Key.identify` and its type from the
    reading function (`d.string`, or the kind `d.fingerprints()` demands)."""
    text = read(root, SWIFT)
    known = Known("swift", [SWIFT])
    spelling = {case: name for name, case in SWIFT_NAME.findall(text)}
    for header, location in SWIFT_SCOPES:
        found = function_body(text, header)
        if found is None:
            problems.add(SWIFT, f"no function matching {header!r}: update SWIFT_SCOPES in this script")
            continue
        offset, body = found
        # A case whose line ends at its colon (swift format wraps long ones) goes on the next line.
        for match in re.finditer(r"^\s*case \.(\w+)\b(?:.*:\n.*|.*)$", body, re.M):
            if match.group(1) != "other" and not SWIFT_CASE.search(match.group(0)):
                problems.add(f"{SWIFT}:{line_of(text, offset + match.start())}",
                             f"case .{match.group(1)} is not written as this script reads: update SWIFT_CASE")
        for match in SWIFT_CASE.finditer(body):
            case, reader = match.groups()
            line = line_of(text, offset + match.start())
            if case not in spelling:
                problems.add(f"{SWIFT}:{line}", f"Key.{case} has no spelling in Key.identify")
                continue
            json_type = swift_reader_type(text + "\n" + read(root, SWIFT_VALUES), reader)
            if json_type is None:
                problems.add(f"{SWIFT}:{line}", f"cannot tell which JSON type d.{reader}() reads")
                continue
            known.add(joined(location, spelling[case]), json_type, SWIFT, line, problems)
    return known


def swift_reader_type(text, reader):
    if reader in ("string", "integer", "boolean"):
        return reader
    found = function_body(text, rf"func {reader}\(")
    kinds = set(re.findall(r"guard kind == \.(array|object|string) ", found[1])) if found else set()
    return kinds.pop() if len(kinds) == 1 else None


def encoder_names(root, schema, problems):
    """The names `CacheFile.encode` writes (`put(", \\"depth\\": ")`), compared by name only: where each
    goes is the decoder's part, which the writer's tests read back."""
    written = set(re.findall(r'\\"(\w+)\\": ?', read(root, ENCODER)))
    defined = {path.rsplit(".", 1)[-1].removesuffix("[]") for path in schema.members}
    for name in sorted(written - defined):
        problems.add(ENCODER, f"the encoder writes {name}, which the schema does not define")
    for name in sorted(defined - written):
        problems.add(ENCODER, f"the encoder never writes {name}, which the schema defines")


# MARK: the readers

def reader_members(root, name, spec, problems):
    known = Known(name, sorted({file for file, _, _ in spec["scopes"]}))
    untyped = []
    for file, header, variables in spec["scopes"]:
        text = read(root, file)
        found = function_body(text, header)
        if found is None:
            problems.add(file, f"no function matching {header!r}: update READERS in this script")
            continue
        offset, body = found
        for match in re.finditer(spec["call"], body):
            accessor, variable, member = match.group(1, 2, 3)
            line = line_of(text, offset + match.start())
            if accessor in spec["not_members"]:
                continue
            if accessor not in spec["accessors"]:
                problems.add(f"{file}:{line}", f"{accessor}({variable}, {member}) is no accessor this script knows: "
                             "add it to READERS with the type it reads")
                continue
            if variable not in variables:
                problems.add(f"{file}:{line}", f"{accessor}({variable}, {member}) reads an object this script "
                             f"does not place: name {variable}'s location in READERS")
                continue
            json_type = spec["accessors"][accessor]
            if json_type == "kind":
                json_type = TYPE_WORDS.get(match.group(4) or "")
            path = joined(variables[variable], member)
            if json_type is None:
                untyped.append((path, file, line))
            else:
                known.add(path, json_type, file, line, problems)
    for file, table, item, location in spec.get("tables", []):
        match = re.search(table, read(root, file))
        if match is None:
            problems.add(file, f"the member table {table!r} is not there: update READERS in this script")
            continue
        line = line_of(read(root, file), match.start())
        for member, kind in re.findall(item, match.group(1)):
            known.add(joined(location, member), TYPE_WORDS.get(kind, kind), file, line, problems)
    resolve_untyped(root, spec, known, untyped, problems)
    stray_reads(root, spec, problems)
    for file, pattern, location in spec.get("name_lists", []):
        compare_names(root, known, file, pattern, location, problems)
    return known


def stray_reads(root, spec, problems):
    """A member read outside the functions listed in READERS would escape the comparison."""
    covered = defaultdict(list)
    for file, header, _ in spec["scopes"]:
        found = function_body(read(root, file), header)
        if found is not None:
            covered[file].append(range(found[0], found[0] + len(found[1])))
    for file, ranges in covered.items():
        text = read(root, file)
        for match in re.finditer(spec["call"], text):
            if match.group(1) in spec["accessors"] and not any(match.start() in scope for scope in ranges):
                problems.add(f"{file}:{line_of(text, match.start())}", f"{match.group(1)}(..., {match.group(3)}) "
                             "reads a member outside the functions READERS lists: add the function there")


def compare_names(root, known, file, pattern, location, problems):
    """A second list of one object's members (without types) must name the same members."""
    match = re.search(pattern, read(root, file))
    if match is None:
        problems.add(file, f"the member list {pattern!r} is not there: update READERS in this script")
        return
    listed = set(re.findall(r'"(\w+)"', match.group(1)))
    members = {path[len(location) + 1:] for path in known.members if path.startswith(location + ".")}
    where = f"{file}:{line_of(read(root, file), match.start())}"
    for member in sorted(members - listed):
        problems.add(where, f"{known.name} checks {location}.{member} but this list of its members lacks it")
    for member in sorted(listed - members):
        problems.add(where, f"this list names {location}.{member}, which {known.name} does not check")


def resolve_untyped(root, spec, known, untyped, problems):
    """A member fetched without a type: an object or array when the reader reads members inside it,
    otherwise the type of the check that names it (`asInteger(depthValue, path+".depth")`)."""
    paths = set(known.members) | {path for path, _, _ in untyped}
    for path, file, line in untyped:
        if any(other.startswith(path + ".") for other in paths):
            known.add(path, "object", file, line, problems)
            continue
        if any(other.startswith(path + "[].") for other in paths):
            known.add(path, "array", file, line, problems)
            continue
        member = path.rsplit(".", 1)[-1].removesuffix("[]")
        types = set()
        for check in spec["checks"]:
            for match in re.finditer(check, read(root, file)):
                words = re.findall(r"[A-Za-z]\w*", match.group("path"))
                if words and words[-1] == member:
                    types.add(TYPE_WORDS.get(match.group("type"), match.group("type")))
        if len(types) != 1:
            problems.add(f"{file}:{line}", f"cannot tell which type {path} is read as (checks found: "
                         f"{', '.join(sorted(types)) or 'none'}): update READERS in this script")
            continue
        known.add(path, types.pop(), file, line, problems)


# MARK: the comparison

def compare(sources, used, problems):
    schema = sources[0]
    paths = sorted(set().union(*(source.members for source in sources)))
    for path in paths:
        holders = {source.name: source.members[path] for source in sources if path in source.members}
        for source in sources:
            if path not in source.members:
                places = ", ".join(f"{name} ({where[1]}{f':{where[2]}' if where[2] else ''})" for name, where in holders.items())
                problems.add(", ".join(source.files), f"{source.name} does not know {path}, which {places} knows")
        expected = schema.members[path][0] if path in schema.members else None
        types = {json_type for json_type, _, _ in holders.values()}
        if len(types) > 1:
            for name, (json_type, file, line) in holders.items():
                if json_type != expected:
                    problems.add(f"{file}:{line}", f"{name} reads {path} as {json_type}, "
                                 f"others as {', '.join(sorted(types - {json_type}))}")
    notes = []
    for path, (json_type, _, _) in sorted(schema.members.items()):
        if path not in used:
            problems.add(CASES, f"no case's cache file has {path}: add a case that uses it, and one with a wrong "
                         "type (docs/cache-format.md, \"Changing the format\")")
        elif json_type not in used[path]:
            notes.append(f"{CASES}: {path} appears only as {', '.join(sorted(used[path]))}, never as {json_type}")
    return notes


def check(root):
    problems = Problems()
    sources = [schema_members(root, problems), swift_members(root, problems)]
    sources += [reader_members(root, name, spec, problems) for name, spec in READERS.items()]
    encoder_names(root, sources[0], problems)
    notes = compare(sources, case_members(root), problems)
    return sources, problems, notes


def report(root, verbose):
    sources, problems, notes = check(root)
    for note in notes:
        print(f"check-cache-fields: note: {note}")
    if verbose:
        for path in sorted(sources[0].members):
            print(f"{path:45} " + " ".join(f"{s.name}={s.members.get(path, ('-',))[0]}" for s in sources))
    for problem in problems:
        print(f"check-cache-fields: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"cache fields: {len(sources[0].members)} members alike in the schema, the table and "
          f"{', '.join(source.name for source in sources[1:])}")
    return 0


# MARK: the self-test

# Each plants one disagreement in a scratch copy: (what, file, text replaced, its replacement, the
# words the failure must hold). Every occurrence is replaced; a plant whose text is gone fails.
PLANTS = [
    ("a member one reader knows", "readers/go/pinlist.go",
     '\tif err := optionalString(entry, "key", path+".key"); err != nil {',
     '\tif err := optionalString(entry, "planted", path+".planted"); err != nil {\n\t\treturn Pin{}, err\n\t}\n'
     '\tif err := optionalString(entry, "key", path+".key"); err != nil {',
     ["readers/go/pinlist.go", "fingerprints[].planted"]),
    ("a type one reader reads differently", "readers/node/lib/pin-list.js",
     "const expires = integer(object, 'expires',", "const expires = string(object, 'expires',",
     ["readers/node/lib/pin-list.js", "node reads fingerprints[].expires as string"]),
    ("a check that types an optional member differently", "readers/java/src/main/java/pinkeeper/reader/PinList.java",
     "JsonFields.asInteger(depthNode,", "JsonFields.asString(depthNode,",
     ["PinList.java", "java reads fingerprints[].depth as string"]),
    ("a member the Swift decoder forgets", SWIFT,
     "                case .signature: try member(", "                case .other: try member(",
     [SWIFT, "swift does not know fingerprints[].signature"]),
    ("a member the Swift decoder reads in a form the script does not", SWIFT,
     "case .depth: try member(&depth, in: 3) { (d) throws(PinListError) in try d.integer(depth: 3) }",
     "case .depth: try member(&depth, in: 3) { try $0.integer(depth: 3) }",
     [SWIFT, "case .depth is not written as this script reads"]),
    ("a member gone from a reader's table", "readers/python/src/pinkeeper/cache.py",
     '("updated", int), ', "", ["readers/python/src/pinkeeper/cache.py", "python does not know pinkeeper.updated"]),
    ("an optional member read by no reader and in no case", SCHEMA,
     '"nextUpdate": {', '"planted": { "type": "string" },\n        "nextUpdate": {',
     ["does not know pinkeeper.planted", CASES + ": no case's cache file has pinkeeper.planted"]),
    ("a member no case of the table uses", CASES, "signature", "signatureOfOld",
     [CASES + ": no case's cache file has fingerprints[].signature"]),
    ("a member gone from a reader's second list", "readers/python/src/pinkeeper/pins.py",
     '"expires", "depth", "signature", "key"))', '"expires", "depth", "key"))',
     ["readers/python/src/pinkeeper/pins.py", "python checks fingerprints[].signature but this list"]),
    ("a member read outside the functions listed", "readers/node/lib/pin-list.js",
     "function parsePinList(data) {", "function parsePinList(data) {\n  optionalString(data, 'planted', 'planted');",
     ["readers/node/lib/pin-list.js", "optionalString(..., planted) reads a member outside"]),
    ("a member the encoder writes and nobody reads", ENCODER,
     '\\"nextUpdate\\": \\(metadata.nextUpdate)', '\\"planted\\": \\(metadata.nextUpdate)',
     [ENCODER + ": the encoder writes planted", "never writes nextUpdate"]),
    ("a member of a container the C reader reads", "readers/c/src/cachefile.c",
     'field required = required_member(entry, "sslPinningRequired", member, PK_JSON_TRUE);',
     'field required = required_member(entry, "sslPinningRequired", member, PK_JSON_STRING);',
     ["readers/c/src/cachefile.c", "c reads domainsConfig.domains[].sslPinningRequired as string"]),
]


def scratch_copy(root, into):
    files = {SCHEMA, CASES, SWIFT, SWIFT_VALUES, ENCODER} | {file for spec in READERS.values() for file, _, _ in spec["scopes"]}
    files |= {table[0] for spec in READERS.values() for table in spec.get("tables", [])}
    for file in files:
        os.makedirs(os.path.dirname(os.path.join(into, file)), exist_ok=True)
        shutil.copyfile(os.path.join(root, file), os.path.join(into, file))


def self_test(root):
    failures = []
    with tempfile.TemporaryDirectory(prefix="check-cache-fields.") as scratch:
        scratch_copy(root, scratch)
        _, problems, _ = check(scratch)
        if problems:
            failures.append("the unchanged copy fails: " + "; ".join(problems))
        for what, file, old, new, words in PLANTS:
            path = os.path.join(scratch, file)
            original = read(scratch, file)
            if old not in original:
                failures.append(f"{what}: {file} no longer holds {old!r}: update PLANTS")
                continue
            with open(path, "w", encoding="utf-8") as planted:
                planted.write(original.replace(old, new))
            _, problems, _ = check(scratch)
            with open(path, "w", encoding="utf-8") as restored:
                restored.write(original)
            text = "\n".join(problems)
            missing = [word for word in words if word not in text]
            if missing:
                failures.append(f"{what} ({file}) was not reported as {missing}; reported: {text or 'nothing'}")
    for failure in failures:
        print(f"check-cache-fields --self-test: {failure}", file=sys.stderr)
    if not failures:
        print(f"check-cache-fields --self-test: {len(PLANTS)} planted disagreements each reported")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="the repository (default: the one holding this script)")
    parser.add_argument("--verbose", action="store_true", help="print every member and who reads it as what")
    parser.add_argument("--self-test", action="store_true", help="plant disagreements in a scratch copy")
    arguments = parser.parse_args()
    return self_test(arguments.root) if arguments.self_test else report(arguments.root, arguments.verbose)


if __name__ == "__main__":
    sys.exit(main())
