/// The tables of a document while it is read, enforcing TOML 1.0's rules on defining them:
/// no key or table defined twice; `[a]` may still define a table that only `[a.b]` created;
/// dotted keys define their tables, which neither a header nor dotted keys of a later section
/// may reopen; inline tables and arrays written as values are complete as written.
final class TOMLTableNode {
    enum Origin: Equatable {
        /// Created as the parent of a header (`a` of `[a.b]`): a later `[a]` may still define it.
        case implicit
        /// Defined by its own `[header]` (or the document root).
        case header
        /// Created or extended by dotted keys in this section (the headers read before it).
        case dotted(section: Int)
    }

    enum Entry {
        case value(TOMLValue)
        case table(TOMLTableNode)
        case tableArray(TOMLTableArray)
    }

    var origin: Origin
    var entries: [TOMLKey: Entry] = [:]
    /// Tables and arrays between the root (0) and this table, itself included. Bounded by
    /// `TOMLParser.deepestNesting`, which bounds every recursion over the tree: `finished`,
    /// the values it builds, and the release of both.
    let depth: Int

    init(_ origin: Origin, depth: Int) {
        self.origin = origin
        self.depth = depth
    }

    var finished: TOMLTable {
        var table = TOMLTable()
        for (key, entry) in entries {
            switch entry {
            case .value(let value): table[key.text] = value
            case .table(let node): table[key.text] = .table(node.finished)
            case .tableArray(let array): table[key.text] = .array(array.elements.map { .table($0.finished) })
            }
        }
        return table
    }

    /// A new table `levels` below this one (2 for an element of an array of tables, as the
    /// array is a level too); refused beyond the nesting limit before anything deeper exists.
    private func child(_ origin: Origin, levels: Int = 1) throws(TOMLRuleError) -> TOMLTableNode {
        guard depth + levels <= TOMLParser.deepestNesting else { throw TOMLRuleError(TOMLParser.tooDeep) }
        return TOMLTableNode(origin, depth: depth + levels)
    }

    /// `a.b.c = value` in this table, read in `section`.
    func assign(_ path: [String], _ value: TOMLValue, section: Int) throws(TOMLRuleError) {
        var node = self
        for (index, part) in path.dropLast().enumerated() {
            // Only for a message: describing the path on every step would make a long key quadratic.
            var name: String { TOMLTableNode.describe(path[...index]) }
            switch node.entries[TOMLKey(part)] {
            case nil:
                let child = try node.child(.dotted(section: section))
                node.entries[TOMLKey(part)] = .table(child)
                node = child
            case .table(let child):
                switch child.origin {
                case .implicit: child.origin = .dotted(section: section)
                case .dotted(let written) where written == section: break
                case .dotted: throw TOMLRuleError("table \(name) was defined by dotted keys under an earlier header; add keys to it there")
                case .header: throw TOMLRuleError("table \(name) is defined by its own [header]; add keys to it there")
                }
                node = child
            case .tableArray:
                throw TOMLRuleError("\(name) is an array of tables; dotted keys cannot add to it")
            case .value(let existing):
                throw TOMLRuleError(TOMLTableNode.complete(name, existing))
            }
        }
        let last = TOMLKey(path[path.count - 1])
        guard node.entries[last] == nil else {
            throw TOMLRuleError("key \(TOMLTableNode.describe(path[...])) is defined twice")
        }
        node.entries[last] = .value(value)
    }

    /// The parent table of a header's last key: missing tables are created implicitly, an array
    /// of tables leads to its last element.
    func parent(of path: [String]) throws(TOMLRuleError) -> TOMLTableNode {
        var node = self
        for (index, part) in path.dropLast().enumerated() {
            switch node.entries[TOMLKey(part)] {
            case nil:
                let child = try node.child(.implicit)
                node.entries[TOMLKey(part)] = .table(child)
                node = child
            case .table(let child): node = child
            case .tableArray(let array): node = array.elements[array.elements.count - 1]
            case .value(let existing): throw TOMLRuleError(TOMLTableNode.complete(TOMLTableNode.describe(path[...index]), existing))
            }
        }
        return node
    }

    /// `[path]`: the table it defines.
    func defineTable(_ path: [String]) throws(TOMLRuleError) -> TOMLTableNode {
        let parent = try parent(of: path)
        let key = TOMLKey(path[path.count - 1])
        var name: String { TOMLTableNode.describe(path[...]) }
        switch parent.entries[key] {
        case nil:
            let child = try parent.child(.header)
            parent.entries[key] = .table(child)
            return child
        case .table(let child):
            switch child.origin {
            case .implicit:
                child.origin = .header
                return child
            case .header: throw TOMLRuleError("table [\(name)] is defined twice")
            case .dotted: throw TOMLRuleError("table \(name) was already defined by dotted keys")
            }
        case .tableArray: throw TOMLRuleError("\(name) is an array of tables: write [[\(name)]] to add an element")
        case .value(let existing): throw TOMLRuleError(TOMLTableNode.complete(name, existing))
        }
    }

    /// `[[path]]`: the new element it appends.
    func appendTable(_ path: [String]) throws(TOMLRuleError) -> TOMLTableNode {
        let parent = try parent(of: path)
        let key = TOMLKey(path[path.count - 1])
        var name: String { TOMLTableNode.describe(path[...]) }
        let element = try parent.child(.header, levels: 2)
        switch parent.entries[key] {
        case nil: parent.entries[key] = .tableArray(TOMLTableArray(element))
        case .tableArray(let array): array.elements.append(element)
        case .table: throw TOMLRuleError("\(name) is already a table, not an array of tables")
        case .value(let existing): throw TOMLRuleError(TOMLTableNode.complete(name, existing))
        }
        return element
    }

    private static func complete(_ name: String, _ value: TOMLValue) -> String {
        switch value {
        case .table: return "\(name) is an inline table, complete as written; it cannot be extended"
        case .array: return "\(name) is an array value, complete as written; it cannot be extended"
        default: return "\(name) is already a value, not a table"
        }
    }

    /// A key path as written in TOML, quoting the parts that are not bare keys.
    static func describe(_ path: ArraySlice<String>) -> String {
        path.map { part in
            let bare = !part.isEmpty && part.utf8.allSatisfy(TOMLParser.isBareKeyByte)
            if bare { return part }
            var quoted = "\""
            for scalar in part.unicodeScalars {
                switch scalar {
                case "\"": quoted += "\\\""
                case "\\": quoted += "\\\\"
                case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                    quoted += "\\u00" + (scalar.value < 16 ? "0" : "") + String(scalar.value, radix: 16, uppercase: true)
                default: quoted.unicodeScalars.append(scalar)
                }
            }
            return quoted + "\""
        }.joined(separator: ".")
    }
}

/// The elements of `[[name]]`, shared by reference so that each header appends in place
/// (an array inside the enum would be copied whole on every header, quadratic in their number).
final class TOMLTableArray {
    var elements: [TOMLTableNode]

    init(_ first: TOMLTableNode) { elements = [first] }
}
